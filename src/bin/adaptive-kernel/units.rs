//! Numbers for people: sizes with thousands separators, times and bytes in a fitting unit.
//! Shared with `examples/tour.rs` (which includes this file), so the tour and
//! `report` print the same way.

/// `1234567` as `1,234,567` (the runtime's, which its crossover sentences use too).
pub(crate) use adaptive_kernel::__private::thousands;

/// Bytes in a fitting unit (the runtime's, which its tables use too).
pub(crate) use adaptive_kernel::__private::bytes;

/// Nanoseconds in the unit that keeps three significant digits readable.
pub(crate) fn duration(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(duration(512.0), "512 ns");
        assert_eq!(duration(1_500.0), "1.50 µs");
        assert_eq!(duration(2_250_000.0), "2.25 ms");
        assert_eq!(duration(3e9), "3.00 s");
    }
}
