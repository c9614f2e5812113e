//! The decision byte: what a settled bucket caches for the fast path, in one
//! `AtomicU8` per bucket, so a settled call costs one relaxed load.
//!
//! | bits | meaning |
//! | --- | --- |
//! | 7 | a decision is cached (the fast path may use it) |
//! | 6 | wrap calls in a tracing span (slow calls on a site that is not hot) |
//! | 2..=5 | log2 of the sampling interval N: one call in N is timed |
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

/// Sampling interval bounds, as powers of two: every 2^4 = 16th call at most, every 2^15 = 32,768th at least.
pub(super) const MIN_SHIFT: u8 = 4;
/// See [`MIN_SHIFT`].
pub(super) const MAX_SHIFT: u8 = 15;

/// The byte caching `backend`, timing one call in `2^shift`, spanned or not.
pub(super) fn encode(backend: Backend, shift: u8, span: bool) -> u8 {
    CACHED | if span { SPAN } else { 0 } | (shift.min(MAX_SHIFT) << 2) | backend.index() as u8
}

/// The backend a byte (or a route's flags, which share its layout) names.
#[inline]
pub(super) fn backend(byte: u8) -> Backend {
    Backend::from_index((byte & BACKEND_MASK) as usize).unwrap_or(Backend::Scalar)
}

/// log2 of the sampling interval a byte names.
#[inline]
pub(super) fn shift(byte: u8) -> u8 {
    (byte & SHIFT_MASK) >> 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_backend_and_shift() {
        for b in Backend::ALL {
            for s in MIN_SHIFT..=MAX_SHIFT {
                for span in [false, true] {
                    let byte = encode(b, s, span);
                    assert_eq!((backend(byte), shift(byte), byte & SPAN != 0), (b, s, span));
                    assert_ne!(byte & CACHED, 0);
                }
            }
        }
    }
}
