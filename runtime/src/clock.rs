//! The runtime's one clock: every timing and every age the router uses is read
//! here, so a platform without `std::time::Instant` needs one change.
//!
//! On `wasm32-unknown-unknown` (browsers, Node) `std::time::Instant::now()`
//! panics ("time not implemented on this platform"); there the clock is
//! `web_time::Instant`, which reads `performance.now()`. Elsewhere, WASI
//! included, it is `std::time::Instant`. Browsers coarsen `performance.now()`
//! (Chromium: 100 µs, or 5 µs on a cross-origin-isolated page), so a call much
//! shorter than that reads as 0 or one tick there: the router still settles (a
//! tie keeps the deterministic tie-break), but only sizes well above the
//! resolution are routed by what they measure. Node's clock is not coarsened.

use std::sync::OnceLock;
use std::time::Duration;

/// The monotonic instant type of this target: `std::time::Instant`, or
/// `web_time::Instant` (`performance.now()`) on `wasm32-unknown-unknown`.
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
pub(crate) use std::time::Instant;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
pub(crate) use web_time::Instant;

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
