//! Small numeric helpers several layers share: the median every statistic and
//! calibration probe is taken with, and the "finite and positive" check every
//! tuning figure must pass.

/// The median of `values` (the mean of the two middle ones for an even count),
/// ordering by [`f64::total_cmp`]; `None` when empty. Reorders `values`.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 })
}

/// Whether `value` can be a throughput, bandwidth, latency or ratio: finite and above zero.
pub(crate) fn is_positive_finite(value: f64) -> bool {
    value.is_finite() && value > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }

    #[test]
    fn positive_finite() {
        assert!(is_positive_finite(1e-9));
        assert!(!is_positive_finite(0.0));
        assert!(!is_positive_finite(f64::NAN));
        assert!(!is_positive_finite(f64::INFINITY));
        assert!(!is_positive_finite(-1.0));
    }
}
