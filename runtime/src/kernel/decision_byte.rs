//! The decision byte: what a settled bucket caches for the fast path, in one
//! `AtomicU8` per bucket, so a settled call costs one relaxed load.
//!
//! | bits | meaning |
//! | --- | --- |
//! | 7 | a decision is cached (the fast path may use it) |
//! | 6 | wrap calls in a tracing span (slow calls on a site that is not hot) |
//! | 2..=5 | the sampling interval N (one call in N is timed), as a code: see [`SHIFTS`] |
//! | 0..=1 | the backend's [`Backend::index`] |

use crate::backend::Backend;

/// Nothing cached: the call takes the cold path.
pub(super) const UNDECIDED: u8 = 0;
/// A decision is cached.
pub(super) const CACHED: u8 = 0x80;
/// Calls are wrapped in a span.
pub(super) const SPAN: u8 = 0x40;
const SHIFT_MASK: u8 = 0x3c;
const BACKEND_MASK: u8 = 0x03;

/// The sampling interval a bucket starts with once settled, before its call rate is
/// known: one call in 2^4 = 16.
pub(super) const MIN_SHIFT: u8 = 4;
/// The longest sampling interval: one call in 2^17 = 131,072, so a bucket keeps its
/// target rate (about 50 samples a second) up to about 6.5 million calls a second.
pub(super) const MAX_SHIFT: u8 = 17;

/// The interval exponents the four shift bits can name, by code. Rare buckets need
/// short intervals (every call while a loaded decision is verified, or while a bucket
/// is called less than ~100 times a second) and busy ones long ones, which is more
/// than 16 exponents; the low end, where oversampling costs nothing measurable,
/// skips 1 and 3.
pub(super) const SHIFTS: [u8; 16] = [0, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, MAX_SHIFT];

/// Per code, what one call spends of the fast path's sampling allowance: `2^(MAX_SHIFT - shift)`.
const SPEND: [i32; 16] = {
    let mut t = [0; 16];
    let mut i = 0;
    while i < 16 {
        t[i] = 1 << (MAX_SHIFT - SHIFTS[i]);
        i += 1;
    }
    t
};

/// How many timed samples per second a settled bucket aims for.
pub(super) const TARGET_SAMPLES_PER_SEC: f64 = 50.0;

/// The interval exponent for a bucket called `calls_per_sec` times a second (0 when
/// not known yet: [`MIN_SHIFT`]): the power of two nearest to `calls_per_sec /`
/// [`TARGET_SAMPLES_PER_SEC`], so a bucket gets 35–71 samples a second up to
/// [`MAX_SHIFT`]; a rare bucket times every call, or every fourth, so a wrong decision
/// in it corrects within a few calls.
pub(super) fn shift_for_rate(calls_per_sec: f64) -> u8 {
    if !calls_per_sec.is_finite() || calls_per_sec <= 0.0 {
        return MIN_SHIFT;
    }
    let ideal = (calls_per_sec / TARGET_SAMPLES_PER_SEC).log2().round();
    ideal.clamp(0.0, f64::from(MAX_SHIFT)) as u8
}

/// The code of the longest representable interval not longer than `2^shift`.
fn code_of(shift: u8) -> u8 {
    let shift = shift.min(MAX_SHIFT);
    SHIFTS.iter().rposition(|&s| s <= shift).unwrap_or(0) as u8
}

/// The byte caching `backend`, timing one call in `2^shift` (or more often, where
/// [`SHIFTS`] has no such exponent), spanned or not.
pub(super) fn encode(backend: Backend, shift: u8, span: bool) -> u8 {
    CACHED | if span { SPAN } else { 0 } | (code_of(shift) << 2) | backend.index() as u8
}

/// The backend a byte (or a route's flags, which share its layout) names.
#[inline]
pub(super) fn backend(byte: u8) -> Backend {
    Backend::from_index((byte & BACKEND_MASK) as usize).unwrap_or(Backend::Scalar)
}

/// log2 of the sampling interval a byte names.
#[inline]
pub(super) fn shift(byte: u8) -> u8 {
    SHIFTS[usize::from((byte & SHIFT_MASK) >> 2)]
}

/// What a call of a bucket with this byte spends of the sampling allowance: `2^(MAX_SHIFT - shift)`.
#[inline]
pub(super) fn spend(byte: u8) -> i32 {
    SPEND[usize::from((byte & SHIFT_MASK) >> 2)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_backend_and_shift() {
        for b in Backend::ALL {
            for s in SHIFTS {
                for span in [false, true] {
                    let byte = encode(b, s, span);
                    assert_eq!((backend(byte), shift(byte), byte & SPAN != 0), (b, s, span));
                    assert_eq!(spend(byte), 1 << (MAX_SHIFT - s));
                    assert_ne!(byte & CACHED, 0);
                }
            }
        }
    }

    /// Samples a second a bucket called `rate` times a second gets.
    fn samples_per_sec(rate: f64) -> f64 {
        rate / f64::from(1u32 << shift(encode(Backend::Simd, shift_for_rate(rate), false)))
    }

    #[test]
    fn a_busy_bucket_keeps_its_target_rate_up_to_millions_of_calls_a_second() {
        for rate in [800.0, 5_000.0, 40_000.0, 1e6, 2.6e6, 3.1e6, 6e6] {
            let got = samples_per_sec(rate);
            assert!(
                (TARGET_SAMPLES_PER_SEC / 2.0..=TARGET_SAMPLES_PER_SEC * 2.0).contains(&got),
                "{rate} calls/s gives {got} samples/s"
            );
        }
    }

    #[test]
    fn a_rare_bucket_times_most_of_its_calls_and_an_unknown_rate_starts_at_16() {
        assert_eq!(shift(encode(Backend::Simd, shift_for_rate(20.0), false)), 0);
        assert_eq!(shift(encode(Backend::Simd, shift_for_rate(120.0), false)), 0);
        assert_eq!(shift(encode(Backend::Simd, shift_for_rate(150.0), false)), 2, "every fourth call");
        assert_eq!(shift(encode(Backend::Simd, shift_for_rate(400.0), false)), 2);
        assert_eq!(shift_for_rate(0.0), MIN_SHIFT);
        assert_eq!(shift_for_rate(f64::NAN), MIN_SHIFT);
    }

    #[test]
    fn every_interval_from_16_to_the_longest_is_named_and_shorter_ones_round_down() {
        for s in MIN_SHIFT..=MAX_SHIFT {
            assert_eq!(shift(encode(Backend::Simd, s, false)), s);
        }
        assert_eq!(shift(encode(Backend::Simd, 1, false)), 0);
        assert_eq!(shift(encode(Backend::Simd, 3, false)), 2);
        assert_eq!(shift(encode(Backend::Simd, 40, false)), MAX_SHIFT);
    }
}
