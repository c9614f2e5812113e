//! The runtime's one clock: every timing and every age the router uses is read
//! here, so a platform without `std::time::Instant` needs one change.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A point in time on the runtime's clock (monotonic).
pub(crate) type Stamp = Instant;

/// Now.
#[inline]
pub(crate) fn now() -> Stamp {
    Instant::now()
}

/// Time since `start`.
#[inline]
pub(crate) fn since(start: Stamp) -> Duration {
    start.elapsed()
}

/// Nanoseconds since the runtime first read the clock; never 0 (0 means "never"
/// in the router's records), saturating.
pub(crate) fn now_ns() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX).max(1)
}
