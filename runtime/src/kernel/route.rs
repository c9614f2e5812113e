//! The per-call fast path: [`Kernel::route`] reads a bucket's decision byte
//! with one relaxed load, picks which settled calls are timed, and hands the
//! generated wrapper a [`Route`]; [`Route::run`] calls the chosen variant and
//! times it when picked. Everything that may lock, allocate or log is behind
//! `#[cold]` calls into [`super::cold`].

use std::cell::Cell;

use super::decision_byte::{DecisionByte, RouteFlags, MAX_SHIFT};
use super::site::Kernel;
use super::{registry, telemetry};
use crate::backend::Backend;
use crate::bucket::bucket_of;
use crate::candidate::{Candidate, Width};
use crate::clock;
use crate::cost::{Transfers, Work};

thread_local! {
    /// This thread's sampling allowance. Each settled call spends `2^(MAX_SHIFT - shift)`
    /// of it (`shift` from its bucket's byte); the call that overdraws it is timed and
    /// the allowance is refilled by a random amount averaging `2^MAX_SHIFT`, the debt
    /// forgiven where the refill does not cover it: a debt carried over would time the
    /// next call of whatever bucket comes next, so a bucket timing every call would make
    /// its neighbours on the thread pay for it. So a call of a bucket with interval `2^shift` is timed
    /// with probability `2^-shift` (every call at interval 1) whatever other kernels,
    /// buckets or rates share the thread, and the random refill keeps periodic call
    /// patterns from aliasing with the samples.
    static ALLOWANCE: Cell<i32> = const { Cell::new(0) };
    /// The refill's generator (xorshift32), touched only on timed calls.
    static REFILL: Cell<u32> = const { Cell::new(0x9e37_79b9) };
    /// The last call [`Route::run`] finished on this thread: its kernel and route flags.
    static LAST: Cell<Option<(&'static Kernel, RouteFlags)>> = const { Cell::new(None) };
}

/// What the last routed call on this thread ran: see [`last_route`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct LastRoute {
    /// The kernel called (its [`Kernel::name`], its table, …).
    pub kernel: &'static Kernel,
    /// The variant that ran. A forced backend the kernel lacks shows as the fallback that
    /// ran in its place (SIMD); a GPU call that failed inside its op and fell back there
    /// still shows as the GPU.
    pub backend: Backend,
    /// For a Parallel call on fewer threads than its whole pool, how many; `None` otherwise.
    pub threads: Option<usize>,
    /// Whether the call was timed (and its timing recorded). Never for a forced call
    /// (a scope, [`Kernel::force`], the process-wide setting) nor in frozen mode.
    pub timed: bool,
}

/// What the last routed call made on this thread ran, once it returned: which kernel,
/// which variant, and whether it was timed; `None` before the thread's first. For tests
/// that check where a call went, e.g. that a forced backend was obeyed:
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::{last_route, with_backend, Backend, Kernel, KernelSpec, OpComplexity, Work};
///
/// static SUM: Kernel = Kernel::new(KernelSpec {
///     name: "docs::last_route", complexity: OpComplexity::Medium, has_gpu: false, has_parallel: false,
///     token_hash: 1, loops: &[], splits: &[], gpu_loops: &[],
/// });
/// # adaptive_kernel::set_history(adaptive_kernel::config::HistorySetting::Off);
/// with_backend(Backend::Scalar, || SUM.route(8, || Work::estimate(OpComplexity::Medium, 8, None, None)).run(|| ()));
/// let last = last_route().expect("a routed call ran on this thread");
/// assert_eq!((last.kernel.name(), last.backend, last.timed), ("docs::last_route", Backend::Scalar, false));
/// ```
///
/// A routed call is one made through a kernel's wrapper (`k(..)`) or [`Kernel::route`]
/// and [`Route::run`]; calling a variant directly (`k::simd(..)`) is not. It is per
/// thread: a kernel called inside a Parallel variant's chunks, on the pool's workers,
/// is not the calling thread's last call; a kernel whose body calls another kernel
/// returns after it, so the outer one is the last. The record costs a store of two
/// words per call.
pub fn last_route() -> Option<LastRoute> {
    let (kernel, flags) = LAST.with(Cell::get)?;
    let candidate = flags.candidate();
    let threads = candidate.is_narrow().then(|| candidate.narrow_threads(crate::ops::par::pool_threads())).flatten();
    Some(LastRoute { kernel, backend: candidate.backend(), threads, timed: flags.is_timed() })
}

/// Whether a settled call is timed (see [`ALLOWANCE`]).
#[inline]
fn sample(byte: DecisionByte) -> bool {
    ALLOWANCE.with(|a| {
        let left = a.get() - byte.spend();
        a.set(left);
        left < 0 && refill(a, left)
    })
}

/// Refills an overdrawn allowance by a uniform amount in `1..=2^(MAX_SHIFT+1)`; when that
/// does not cover the debt, the allowance is the fresh draw alone (see [`ALLOWANCE`]);
/// always `true`.
#[cold]
#[inline(never)]
fn refill(a: &Cell<i32>, left: i32) -> bool {
    let r = REFILL.with(|g| {
        let mut x = g.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        g.set(x);
        x
    });
    let span = 2u32 << MAX_SHIFT;
    let draw = 1 + (r % span) as i32;
    // A debt larger than the draw is forgiven: the next call starts from a fresh draw.
    a.set(if left + draw >= 1 { left + draw } else { draw });
    true
}

impl Kernel {
    /// Routes one call of `size`; `work` is evaluated only when a decision must be made.
    ///
    /// A bucket with a decision returns its cached backend, and times a sample of its
    /// calls: about 50 a second, never so many that timing costs more than 1% of the
    /// bucket's own time; every call while a decision loaded from history is being
    /// confirmed. A timed call may re-time an alternative instead, within a small
    /// budget, so a wrong decision corrects itself. Every call of a bucket without a
    /// decision goes through the cold path and is timed. (The rules: the module docs
    /// of `kernel::policy`.)
    #[inline]
    pub fn route(&'static self, size: usize, work: impl FnOnce() -> Work) -> Route {
        self.route_with(size, || {
            let work = work();
            (work, Transfers::host(&work))
        })
    }

    /// Routes one call of `size` as [`route`](Self::route) does, for a call whose data
    /// may already be on the device: `transfers` (evaluated, like `work`, only when a
    /// decision must be made) says what it would move between host and device by where
    /// it runs, and the cost model charges that instead of `work.bytes` (see
    /// [`CostModel::predict_placed`](crate::CostModel::predict_placed)). What a kernel's
    /// generated `k::resident` entry calls, on its own handle `k::RESIDENT`: the decisions
    /// of calls on resident data are not those of calls on host data.
    #[inline]
    pub fn route_placed(
        &'static self,
        size: usize,
        work: impl FnOnce() -> Work,
        transfers: impl FnOnce() -> Transfers,
    ) -> Route {
        self.route_with(size, || (work(), transfers()))
    }

    #[inline]
    fn route_with(&'static self, size: usize, placed: impl FnOnce() -> (Work, Transfers)) -> Route {
        let bucket = bucket_of(size);
        let byte = self.decision(bucket).load();
        if byte.is_cached() && !super::overrides::any_active() {
            if !sample(byte) {
                return Route { kernel: self, size, flags: RouteFlags::untimed(byte) };
            }
            let (candidate, timed) = self.route_sampled(bucket, byte);
            return Route::new(self, candidate, size, timed);
        }
        registry::register(self);
        let (work, transfers) = placed();
        let (backend, timed) = self.route_cold(bucket, work, transfers);
        Route::new(self, backend, size, timed)
    }

    /// The route of a call that found `byte` cached (the cold path's view of the fast path).
    pub(super) fn cached_route(&'static self, byte: DecisionByte, size: usize) -> Route {
        if !sample(byte) {
            return Route { kernel: self, size, flags: RouteFlags::untimed(byte) };
        }
        let (candidate, timed) = self.route_sampled(bucket_of(size), byte);
        Route::new(self, candidate, size, timed)
    }
}

/// Where one call goes, handed from [`Kernel::route`] to the generated wrapper.
///
/// Kept to three words passed by value, so the fast path keeps it in registers:
/// `flags` are the bucket's candidate (a backend, and for Parallel a width of the
/// pool) and span bits and whether this call is timed (`RouteFlags`).
#[derive(Debug)]
#[must_use = "a route does nothing until `run` calls the chosen variant"]
pub struct Route {
    kernel: &'static Kernel,
    size: usize,
    flags: RouteFlags,
}

impl Route {
    fn new(kernel: &'static Kernel, candidate: Candidate, size: usize, timed: bool) -> Route {
        Route { kernel, size, flags: RouteFlags::new(candidate, timed) }
    }

    /// The variant to call.
    #[inline]
    pub fn backend(&self) -> Backend {
        self.flags.candidate().backend()
    }

    /// The candidate: the variant, and for Parallel its width of the pool.
    pub(crate) fn candidate(&self) -> Candidate {
        self.flags.candidate()
    }

    /// Whether this call will be timed and recorded.
    #[inline]
    pub fn is_timed(&self) -> bool {
        self.flags.is_timed()
    }

    /// Calls `variant` (the chosen backend's function) and returns its result,
    /// timing it when this call was picked for measurement. A Parallel call on a
    /// narrower width than the whole pool computes on that many threads
    /// ([`crate::ops::par::threads`] says so inside it).
    ///
    /// `variant` has one call site, so it is compiled once, inlined into the
    /// wrapper and specialized on the caller's constants whether or not the call
    /// is timed: a timed call runs the same code as an untimed one (a separate
    /// timed copy ran unspecialized, and a bucket called rarely, which times
    /// most of its calls, then ran that slower copy most of the time).
    ///
    /// Once the variant returns, the call is this thread's [`last_route`].
    #[inline]
    pub fn run<R>(self, variant: impl FnOnce() -> R) -> R {
        let last = (self.kernel, self.flags);
        let observed = if self.flags.is_plain() { None } else { Some(Observed::start(self)) };
        let out = variant();
        if let Some(observed) = observed {
            observed.finish();
        }
        LAST.with(|l| l.set(Some(last)));
        out
    }
}

/// A call being timed, spanned, narrowed to a width of the pool, or all three: what
/// [`Route::run`] keeps around the variant.
struct Observed {
    kernel: &'static Kernel,
    size: usize,
    candidate: Candidate,
    _span: Option<tracing::span::EnteredSpan>,
    /// The narrower width in force during the call (restored when dropped, panics included).
    _width: Option<crate::ops::par::Narrowed>,
    /// When the variant started; `None` when the call is not timed.
    start: Option<clock::Stamp>,
}

impl Observed {
    #[cold]
    #[inline(never)]
    fn start(route: Route) -> Observed {
        let candidate = route.flags.candidate();
        let backend = candidate.backend();
        let _span = route.flags.spans().then(|| telemetry::call_span(route.kernel.name(), backend, route.size));
        // Only a narrower Parallel candidate asks for the pool's size (asking builds the pool).
        let _width = candidate
            .is_narrow()
            .then(|| candidate.narrow_threads(crate::ops::par::pool_threads()))
            .flatten()
            .map(crate::ops::par::Narrowed::to);
        // What the call's split loops will say of their width, not an earlier call's.
        let _ = crate::ops::par::loops::take_width();
        let start = route.flags.is_timed().then(clock::now);
        Observed { kernel: route.kernel, size: route.size, candidate, _span, _width, start }
    }

    #[cold]
    #[inline(never)]
    fn finish(self) {
        if let Some(start) = self.start {
            let elapsed = clock::since(start);
            let partial = crate::ops::par::loops::take_width() == Some(false);
            registry::register(self.kernel);
            self.kernel.observe_cold(bucket_of(self.size), self.candidate, self.size, elapsed, partial);
        }
    }
}

impl Kernel {
    /// Records that a call of `size` on `backend` took `elapsed`: what [`Route::run`]
    /// does for timed calls. Public so timings measured elsewhere can be fed in.
    ///
    /// The first sample of each backend after the process starts is a warm-up
    /// and is not kept (it pays for page faults, pipeline compilation, caches).
    /// A Parallel timing counts for the variant on the whole pool ([`Kernel::observe_parallel`]
    /// records one on fewer threads).
    pub fn observe(&'static self, size: usize, backend: Backend, elapsed: std::time::Duration) {
        registry::register(self);
        self.observe_cold(bucket_of(size), Candidate::of(backend), size, elapsed, false);
    }

    /// Records that a call of `size` on the Parallel variant computing on `threads`
    /// threads took `elapsed`, as [`Kernel::observe`] does for a backend. `threads` must be
    /// one of the widths the router explores in the pool a call made here would use (all of
    /// its threads, half or a quarter of them, at least 2, each narrower than the last:
    /// 16, 8 and 4 in a pool of 16; only 2 in a pool of 2); returns whether it was, and so
    /// whether the timing was recorded.
    pub fn observe_parallel(&'static self, size: usize, threads: usize, elapsed: std::time::Duration) -> bool {
        let Some(width) = Width::of_threads(threads, crate::ops::par::pool_threads()) else { return false };
        registry::register(self);
        self.observe_cold(bucket_of(size), Candidate::parallel(width), size, elapsed, false);
        true
    }
}
