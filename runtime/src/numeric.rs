//! Small numeric helpers several layers share: the median every statistic and
//! calibration probe is taken with, the "finite and positive" check every
//! tuning figure must pass, and sizes written for people (also by the
//! `adaptive-kernel` command and the tour, so all three print them alike).

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

/// `1234567` as `1,234,567`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes as people read them: `512 B`, `4.0 KiB`, `8.0 MiB`, `1.50 GiB`.
pub fn bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = n as f64;
    if n < 1024 {
        format!("{n} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else if b < KIB * KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else {
        format!("{:.2} GiB", b / (KIB * KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(2_097_152), "2,097,152");
    }

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

    #[test]
    fn bytes_pick_a_unit() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(4096), "4.0 KiB");
        assert_eq!(bytes(8 << 20), "8.0 MiB");
        assert_eq!(bytes(3 << 29), "1.50 GiB");
    }
}
