//! [`AdaptiveBackend`]: a string-keyed selector, for code that routes
//! calls by hand instead of through `#[adaptive_kernel]`.
//!
//! The caller names an operation, asks [`AdaptiveBackend::select`] for a
//! backend, runs it, and reports the time with
//! [`AdaptiveBackend::record_performance`]; later calls of the same op and size
//! bucket go to the backend with the lowest average. Before any timing exists
//! a name-and-size heuristic decides.
//!
//! It is shaped for clarity, not for a hot path: state sits behind a `Mutex`
//! and an `RwLock` around `HashMap`s keyed by op name, so one `select` costs two
//! lock acquisitions and two string hashes, and threads selecting at once take
//! turns. Generated kernels do not use it; their call sites (`Kernel`) cost one
//! atomic load per call.
//!
//! The `*_at` methods take the runtime clock's instant: `std::time::Instant`,
//! or `web_time::Instant` (`performance.now()`) on `wasm32-unknown-unknown`,
//! where `std::time::Instant::now()` panics.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Duration;

use crate::backend::Backend;
use crate::bucket::bucket_of;
use crate::candidate::PerCandidate;
use crate::clock::Instant;
use crate::cost::cheapest;
use crate::ops;

/// Width of one call-rate slot.
const SLOT: Duration = Duration::from_millis(10);
/// Slots in the call-rate window: 100 × 10 ms = one second.
const SLOTS: usize = 100;

/// Learns, per operation name and size bucket, which backend is fastest.
///
/// `Send + Sync` and `Default`: share one (in a `static` with `LazyLock`, or an
/// `Arc`) between threads; every method takes `&self`.
///
/// # Buckets, not sizes
///
/// Timings are kept per size *bucket* ([`crate::bucket_of`]: ranges at most 2×
/// wide, split at the MoE thresholds), not per exact size:
/// sizes 1500 and 1600 share one average, so a timing of one informs the other,
/// while 1000 and 1001 do not (1,000 is a threshold).
///
/// # Decision order of [`select`](Self::select)
///
/// 1. The backend with the lowest average time recorded for this op and bucket
///    ([`get_best_backend`](Self::get_best_backend)).
/// 2. Otherwise the name-and-size rules ([`select_heuristic`](Self::select_heuristic)).
///
/// `select` never returns [`Backend::Gpu`] when
/// [`ops::gpu::is_available`] is false: GPU timings are then ignored, and a GPU
/// heuristic choice becomes [`Backend::Simd`] (what the GPU ops would fall back
/// to anyway). It asks only when the answer would be the GPU, so a selector
/// that never answers GPU never starts it. `get_best_backend` and
/// `select_heuristic` stay pure and report what was recorded and what the
/// rules say.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::{AdaptiveBackend, Backend};
/// let ab = AdaptiveBackend::new();
/// assert_eq!(ab.select("sum", 500), Backend::Scalar); // heuristic: small
/// ab.record_performance("sum", 5000, Backend::Scalar, 40);
/// ab.record_performance("sum", 5000, Backend::Simd, 12);
/// assert_eq!(ab.select("sum", 5000), Backend::Simd); // measured
/// assert_eq!(ab.get_best_backend("sum", 6000), Some(Backend::Simd)); // same bucket
/// ```
#[derive(Debug)]
pub struct AdaptiveBackend {
    /// Timings: op name → size bucket → per-backend totals.
    history: RwLock<HashMap<String, HashMap<usize, PerCandidate<Timing>>>>,
    /// Call counts for [`AdaptiveBackend::is_hot_path`]: op name → its last second.
    calls: Mutex<HashMap<String, CallWindow>>,
    /// Time zero of the call-rate slots.
    epoch: Instant,
}

// The documented promise: shareable between threads, constructible by `Default`.
const _: () = {
    const fn assert_send_sync_default<T: Send + Sync + Default>() {}
    assert_send_sync_default::<AdaptiveBackend>();
};

/// What was recorded for one backend at one op and size bucket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerfStats {
    /// How many timings were recorded.
    pub samples: u64,
    /// Their mean, in microseconds (exact to `f64` rounding: the sum is kept as an integer).
    pub mean_us: f64,
}

/// Integer totals, so concurrent updates commute and the mean is order-independent.
#[derive(Clone, Copy, Debug, Default)]
struct Timing {
    samples: u64,
    total_us: u128,
}

impl Timing {
    fn stats(self) -> Option<PerfStats> {
        (self.samples > 0)
            .then(|| PerfStats { samples: self.samples, mean_us: self.total_us as f64 / self.samples as f64 })
    }
}

impl Default for AdaptiveBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl AdaptiveBackend {
    /// An op is on a hot path when it was called more than this many times in the
    /// last second.
    pub const HOT_PATH_CALLS: u64 = 10_000;

    /// A selector with no history.
    pub fn new() -> Self {
        AdaptiveBackend { history: RwLock::default(), calls: Mutex::default(), epoch: Instant::now() }
    }

    /// Counts a call of `op` (see [`is_hot_path`](Self::is_hot_path)) and picks its
    /// backend: the best measured one for `op` at this size's bucket, else
    /// [`select_heuristic`](Self::select_heuristic); never the GPU when none is
    /// available (see the [type docs](Self)).
    pub fn select(&self, op: &str, input_size: usize) -> Backend {
        self.select_at(op, input_size, Instant::now())
    }

    /// [`select`](Self::select) for a call made at `now`: the clock is a parameter
    /// so tests and replays are deterministic. Instants before this selector was
    /// created count as its creation time.
    pub fn select_at(&self, op: &str, input_size: usize, now: Instant) -> Backend {
        self.count_call(op, now);
        // Asked only when the answer would be the GPU: a selector that never answers
        // GPU never starts it (asking waits for its start-up).
        let gpu = std::cell::OnceCell::new();
        let gpu_usable = || *gpu.get_or_init(ops::gpu::is_available);
        self.best_measured(op, input_size, |b| b != Backend::Gpu || gpu_usable()).unwrap_or_else(|| {
            match self.select_heuristic(op, input_size) {
                Backend::Gpu if !gpu_usable() => Backend::Simd,
                b => b,
            }
        })
    }

    /// Adds one timing of `op` on `backend` at `input_size`'s bucket. Averages are
    /// kept as an integer sum and a count, so no update is lost or reordered by
    /// concurrent callers.
    pub fn record_performance(&self, op: &str, input_size: usize, backend: Backend, duration_us: u64) {
        let mut history = self.history.write().unwrap_or_else(PoisonError::into_inner);
        let buckets = match history.get_mut(op) {
            Some(buckets) => buckets,
            None => history.entry(op.to_owned()).or_default(),
        };
        let timing = &mut buckets.entry(bucket_of(input_size)).or_default()[backend];
        timing.samples = timing.samples.saturating_add(1);
        timing.total_us += u128::from(duration_us);
    }

    /// What was recorded for `backend` running `op` at `input_size`'s bucket;
    /// `None` when nothing was.
    pub fn performance(&self, op: &str, input_size: usize, backend: Backend) -> Option<PerfStats> {
        let history = self.history.read().unwrap_or_else(PoisonError::into_inner);
        history.get(op)?.get(&bucket_of(input_size))?[backend].stats()
    }

    /// The backend with the lowest average time for `op` at `input_size`'s bucket;
    /// equal averages go to the earlier backend in [`Backend::ALL`]. `None` when
    /// nothing was recorded there.
    pub fn get_best_backend(&self, op: &str, input_size: usize) -> Option<Backend> {
        self.best_measured(op, input_size, |_| true)
    }

    fn best_measured(&self, op: &str, input_size: usize, allowed: impl Fn(Backend) -> bool) -> Option<Backend> {
        let history = self.history.read().unwrap_or_else(PoisonError::into_inner);
        let timings = history.get(op)?.get(&bucket_of(input_size))?;
        cheapest(
            Backend::ALL.into_iter().filter(|&b| allowed(b)).filter_map(|b| Some((timings[b].stats()?.mean_us, b))),
        )
    }

    /// The name-and-size rules, first match wins:
    ///
    /// 1. `op` contains `random` → Scalar (keeps random streams reproducible);
    /// 2. `input_size < 1000` → Scalar;
    /// 3. `op` contains `matrix` and `input_size > 10_000` → GPU;
    /// 4. otherwise SIMD.
    ///
    /// Names match case-sensitively. The rule is pure: it says GPU
    /// even when no GPU is available ([`select`](Self::select) applies that veto).
    pub fn select_heuristic(&self, op: &str, input_size: usize) -> Backend {
        if op.contains("random") || input_size < 1000 {
            Backend::Scalar
        } else if op.contains("matrix") && input_size > 10_000 {
            Backend::Gpu
        } else {
            Backend::Simd
        }
    }

    /// Whether `op` was [`select`](Self::select)ed more than
    /// [`HOT_PATH_CALLS`](Self::HOT_PATH_CALLS) (10,000) times in the last second.
    ///
    /// Calls are counted in 100 slots of 10 ms, so the window's old edge is exact
    /// to 10 ms: every counted call is less than 1 s old, and every call less
    /// than 0.99 s old is counted. A `true` is therefore never wrong; a `false`
    /// may miss calls made between 0.99 s and 1 s ago.
    pub fn is_hot_path(&self, op: &str) -> bool {
        self.is_hot_path_at(op, Instant::now())
    }

    /// [`is_hot_path`](Self::is_hot_path) as seen at `now`.
    pub fn is_hot_path_at(&self, op: &str, now: Instant) -> bool {
        self.recent_calls_at(op, now) > Self::HOT_PATH_CALLS
    }

    /// How many calls of `op` the hot-path window holds now (see
    /// [`is_hot_path`](Self::is_hot_path) for its precision).
    pub fn recent_calls(&self, op: &str) -> u64 {
        self.recent_calls_at(op, Instant::now())
    }

    /// [`recent_calls`](Self::recent_calls) as seen at `now`.
    pub fn recent_calls_at(&self, op: &str, now: Instant) -> u64 {
        let tick = self.tick(now);
        self.lock_calls().get_mut(op).map_or(0, |w| w.count(tick))
    }

    /// Forgets every recorded timing, so selection starts again from the
    /// heuristic. Call counts are kept: they age out of their one-second window on
    /// their own, and a reset should not make a busy op look cold.
    pub fn reset_history(&self) {
        self.history.write().unwrap_or_else(PoisonError::into_inner).clear();
    }

    fn count_call(&self, op: &str, now: Instant) {
        let tick = self.tick(now);
        let mut calls = self.lock_calls();
        match calls.get_mut(op) {
            Some(window) => window.record(tick),
            None => calls.entry(op.to_owned()).or_insert_with(|| CallWindow::new(tick)).record(tick),
        }
    }

    /// The slot number of `now`: whole [`SLOT`]s since `epoch`.
    fn tick(&self, now: Instant) -> u64 {
        let nanos = now.saturating_duration_since(self.epoch).as_nanos() / SLOT.as_nanos();
        u64::try_from(nanos).unwrap_or(u64::MAX)
    }

    /// The call counters; a panic elsewhere cannot leave them half-updated, so a
    /// poisoned lock is used as is.
    fn lock_calls(&self) -> MutexGuard<'_, HashMap<String, CallWindow>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One op's calls in its last [`SLOTS`] slots: a ring indexed by `tick % SLOTS`
/// holding, for every tick in `(head − SLOTS, head]`, its call count, plus their
/// running total.
#[derive(Debug)]
struct CallWindow {
    counts: [u64; SLOTS],
    head: u64,
    total: u64,
}

impl CallWindow {
    fn new(tick: u64) -> Self {
        CallWindow { counts: [0; SLOTS], head: tick, total: 0 }
    }

    fn slot(tick: u64) -> usize {
        (tick % SLOTS as u64) as usize
    }

    /// Moves the newest slot to `tick`, emptying the slots that fall out.
    fn advance(&mut self, tick: u64) {
        if tick <= self.head {
            return;
        }
        if tick - self.head >= SLOTS as u64 {
            self.counts = [0; SLOTS];
            self.total = 0;
        } else {
            for t in self.head + 1..=tick {
                let i = Self::slot(t);
                self.total -= self.counts[i];
                self.counts[i] = 0;
            }
        }
        self.head = tick;
    }

    /// Counts one call at `tick`. A call stamped before a newer one (threads race
    /// between reading the clock and taking the lock) still lands in its own slot;
    /// one already outside the window is dropped.
    fn record(&mut self, tick: u64) {
        self.advance(tick);
        if self.head - tick < SLOTS as u64 {
            self.counts[Self::slot(tick)] += 1;
            self.total += 1;
        }
    }

    /// Calls in the ticks `(tick − SLOTS, tick]`.
    fn count(&mut self, tick: u64) -> u64 {
        if tick >= self.head {
            self.advance(tick);
            return self.total;
        }
        // Asked about a moment before the newest call: add up the slots that are
        // in both that moment's window and the one held.
        let first =
            (tick + 1).saturating_sub(SLOTS as u64).max(self.head.saturating_add(1).saturating_sub(SLOTS as u64));
        (first..=tick).map(|t| self.counts[Self::slot(t)]).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_slides_slot_by_slot() {
        let mut w = CallWindow::new(0);
        for tick in 0..SLOTS as u64 {
            w.record(tick);
        }
        assert_eq!(w.count(99), 100);
        assert_eq!(w.count(100), 99, "tick 0 left");
        assert_eq!(w.count(150), 49);
        assert_eq!(w.count(199), 0);
        assert_eq!(w.total, 0);
    }

    #[test]
    fn late_calls_land_in_their_slot_or_are_dropped() {
        let mut w = CallWindow::new(0);
        w.record(500);
        w.record(450); // late, still inside (401, 500]
        w.record(401);
        w.record(400); // late, outside
        assert_eq!(w.count(500), 3);
        assert_eq!(w.count(450), 2, "a moment before the newest call sees ticks up to it");
        assert_eq!(w.count(420), 1);
        assert_eq!(w.count(300), 0);
        assert_eq!(w.count(501), 2, "tick 401 left");
    }

    #[test]
    fn a_jump_longer_than_the_window_empties_it() {
        let mut w = CallWindow::new(7);
        w.record(7);
        w.record(8);
        w.record(7 + SLOTS as u64 + 1);
        assert_eq!(w.count(7 + SLOTS as u64 + 1), 1);
        assert_eq!(w.count(u64::MAX), 0);
    }
}
