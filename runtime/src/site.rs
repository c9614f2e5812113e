//! A kernel's static call site: what the `#[adaptive_kernel]` macro puts in
//! `k::KERNEL`, the per-call fast path, and the cold path that decides.
//!
//! Shaped after tracing-core's callsites: a `static` with a `const fn new`; per
//! size bucket one byte holding the cached decision, read with one relaxed load;
//! and a `#[cold] #[inline(never)]` slow path that may lock, allocate, log and
//! touch files. A settled call costs that load, a check that no scoped override
//! is active and a thread-local countdown that picks every Nth call for timing
//! (N adapts to the call rate: see [`Kernel::route`]).

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::backend::{Backend, OpComplexity};
use crate::bucket::{bucket_of, BUCKETS};
use crate::history::{BucketState, Phase};
use crate::overrides;
use crate::report::{BackendReport, BucketReport, KernelTable};
use crate::router::{self, Decision, DecisionKind, Policy};
use crate::{config, cost, persist, registry, telemetry};

/// What the macro knows about a kernel at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    /// Identity in history and traces: `module_path!()::fn_name`, or the attribute's `name`.
    pub name: &'static str,
    /// The complexity class from the attribute.
    pub complexity: OpComplexity,
    /// Whether the kernel has a real GPU variant (its body calls `ops::` or `gpu = path` was given).
    pub has_gpu: bool,
    /// A hash of the function's tokens: an edited kernel does not trust old timings.
    pub token_hash: u64,
}

/// The work one call does, for the cost model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    /// The size the call is bucketed by (elements, by default).
    pub size: usize,
    /// Floating-point operations the call performs.
    pub flops: u64,
    /// Bytes the call reads and writes (what a GPU variant must transfer).
    pub bytes: u64,
}

impl Work {
    /// The work of a call of `size` elements, with explicit `flops`/`bytes` where the
    /// attribute gave them and estimates from the complexity otherwise:
    ///
    /// | complexity | default flops | default bytes |
    /// | --- | --- | --- |
    /// | Low | `size` | `8 · size` (f32 in and out) |
    /// | Medium | `4 · size` | `4 · size` |
    /// | High | `2 · size^1.5` (a square matmul with `size = 2n²` does `2n³ ≈ 0.7 · size^1.5`; rounded up) | `6 · size` |
    ///
    /// All arithmetic saturates.
    pub fn estimate(complexity: OpComplexity, size: usize, flops: Option<u64>, bytes: Option<u64>) -> Work {
        let s = size as u64;
        let flops = flops.unwrap_or_else(|| match complexity {
            OpComplexity::Low => s,
            OpComplexity::Medium => s.saturating_mul(4),
            // `as` saturates for floats out of range.
            OpComplexity::High => (2.0 * (s as f64).powf(1.5)) as u64,
        });
        let bytes = bytes.unwrap_or_else(|| match complexity {
            OpComplexity::Low => s.saturating_mul(8),
            OpComplexity::Medium => s.saturating_mul(4),
            OpComplexity::High => s.saturating_mul(6),
        });
        Work { size, flops, bytes }
    }
}

// The decision byte of a bucket:
// bit 7: a decision is cached (the fast path may use it)
// bit 6: wrap calls in a tracing span (slow calls on a site that is not hot)
// bits 2..=5: log2 of the sampling interval N
// bits 0..=1: 1 + backend index
const UNDECIDED: u8 = 0;
const CACHED: u8 = 0x80;
const SPAN: u8 = 0x40;
const SHIFT_MASK: u8 = 0x3c;
const BACKEND_MASK: u8 = 0x03;

/// Sampling interval bounds, as powers of two: every 2^4 = 16th call at most, every 2^15 = 32,768th at least.
const MIN_SHIFT: u8 = 4;
const MAX_SHIFT: u8 = 15;
/// How many timed samples per second a settled bucket aims for.
const TARGET_SAMPLES_PER_SEC: f64 = 50.0;
/// Calls slower than this many nanoseconds get a span, on sites that are not hot (default 100 µs).
static SPAN_THRESHOLD_NS: AtomicU64 = AtomicU64::new(100_000);
/// A site above this many calls per second is hot: no per-call spans.
const HOT_CALLS_PER_SEC: f64 = 10_000.0;

fn encode(backend: Backend, shift: u8, span: bool) -> u8 {
    CACHED | if span { SPAN } else { 0 } | (shift.min(MAX_SHIFT) << 2) | (1 + backend.index() as u8)
}

#[inline]
fn decode_backend(byte: u8) -> Backend {
    match byte & BACKEND_MASK {
        1 => Backend::Scalar,
        2 => Backend::Simd,
        _ => Backend::Gpu,
    }
}

thread_local! {
    /// Calls left before this thread times one (shared by every kernel the thread calls).
    static COUNTDOWN: Cell<u32> = const { Cell::new(0) };
}

/// Counts one settled call down; `true` when this call is to be timed.
#[inline]
fn sample_tick(byte: u8) -> bool {
    COUNTDOWN.with(|c| match c.get() {
        0 => {
            c.set((1u32 << ((byte & SHIFT_MASK) >> 2)) - 1);
            true
        }
        n => {
            c.set(n - 1);
            false
        }
    })
}

/// When a settled bucket was last sampled, to estimate its call rate.
#[derive(Clone, Copy, Debug)]
struct SampleClock {
    last: Instant,
    shift: u8,
    calls_per_sec: f64,
}

/// The cold-path state of a kernel, behind its mutex.
#[derive(Debug)]
pub(crate) struct KernelState {
    registered: bool,
    pub(crate) buckets: BTreeMap<usize, BucketState>,
    /// Buckets with data recorded by this process (what a save must not drop).
    pub(crate) touched: BTreeSet<usize>,
    warmed: [bool; 3],
    clocks: BTreeMap<usize, SampleClock>,
    forced: Option<Backend>,
    warned_unavailable: bool,
}

impl KernelState {
    const fn new() -> Self {
        KernelState {
            registered: false,
            buckets: BTreeMap::new(),
            touched: BTreeSet::new(),
            warmed: [false; 3],
            clocks: BTreeMap::new(),
            forced: None,
            warned_unavailable: false,
        }
    }
}

/// Sets how slow a call must be (its bucket's median) to be wrapped in a `kernel_call`
/// tracing span; default 100 µs. Spans are never emitted on sites called more than
/// 10,000 times a second. Takes effect as buckets are next sampled.
pub fn set_span_threshold(threshold: Duration) {
    let ns = u64::try_from(threshold.as_nanos()).unwrap_or(u64::MAX);
    SPAN_THRESHOLD_NS.store(ns, Ordering::Relaxed);
}

/// A kernel's static handle (`k::KERNEL`): its spec and its routing state.
///
/// Generated by `#[adaptive_kernel]`; it can also be declared by hand to route
/// code that does not use the macro:
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::{Backend, Kernel, KernelSpec, OpComplexity, Work};
///
/// static SUM: Kernel = Kernel::new(KernelSpec {
///     name: "docs::sum",
///     complexity: OpComplexity::Medium,
///     has_gpu: false,
///     token_hash: 1,
/// });
///
/// let x = vec![1.0f32; 4096];
/// let route = SUM.route(x.len(), || Work::estimate(OpComplexity::Medium, x.len(), None, None));
/// let total = match route.backend() {
///     Backend::Scalar => route.run(|| adaptive_kernel::ops::scalar::sum(&x)),
///     _ => route.run(|| adaptive_kernel::ops::simd::sum(&x)),
/// };
/// assert_eq!(total, 4096.0);
/// ```
pub struct Kernel {
    spec: KernelSpec,
    decisions: [AtomicU8; BUCKETS],
    state: Mutex<KernelState>,
}

impl Kernel {
    /// A kernel with nothing decided yet. `const`, so it can initialise a `static`.
    pub const fn new(spec: KernelSpec) -> Kernel {
        Kernel { spec, decisions: [const { AtomicU8::new(UNDECIDED) }; BUCKETS], state: Mutex::new(KernelState::new()) }
    }

    /// What the macro recorded about this kernel.
    pub const fn spec(&self) -> &KernelSpec {
        &self.spec
    }

    /// The kernel's name in history and traces.
    pub const fn name(&self) -> &'static str {
        self.spec.name
    }

    /// The kernel's complexity class.
    pub const fn complexity(&self) -> OpComplexity {
        self.spec.complexity
    }

    /// Whether the kernel has a real GPU variant.
    pub const fn has_gpu(&self) -> bool {
        self.spec.has_gpu
    }

    /// Routes one call of `size`; `work` is evaluated only when a decision must be made.
    ///
    /// A settled bucket returns its cached backend; one call in N (per thread) is
    /// timed to keep the history current, with N a power of two between 16 and
    /// 32,768 chosen so a bucket gets about 50 samples a second. Everything else
    /// goes through the cold path.
    #[inline]
    pub fn route(&'static self, size: usize, work: impl FnOnce() -> Work) -> Route {
        let bucket = bucket_of(size);
        // Relaxed: the byte is the entire message (no other data is published with
        // it); a stale read only sends this call through the cold path once more.
        let byte = self.decisions[bucket].load(Ordering::Relaxed);
        if byte & CACHED != 0 && !overrides::any_active() {
            return self.cached_route(byte, size);
        }
        self.route_cold(bucket, work())
    }

    #[inline]
    fn cached_route(&'static self, byte: u8, size: usize) -> Route {
        let timed = if sample_tick(byte) { TIMED } else { 0 };
        Route { kernel: self, size, flags: (byte & !CACHED) | timed }
    }

    fn lock(&'static self) -> MutexGuard<'static, KernelState> {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if !st.registered {
            st.registered = true;
            registry::register(self);
            persist::load_into(&self.spec, &mut st);
            // Buckets loaded settled are published now, so the first call takes the fast path.
            for (&b, bs) in &st.buckets {
                if let Some(backend) = bs.settled() {
                    self.decisions[b].store(encode(backend, MIN_SHIFT, false), Ordering::Relaxed);
                }
            }
        }
        st
    }

    #[cold]
    #[inline(never)]
    fn route_cold(&'static self, bucket: usize, work: Work) -> Route {
        if let Some(b) = overrides::scoped() {
            let mut st = self.lock();
            let d = self.resolve_forced(&mut st, b);
            drop(st);
            telemetry::decision(&self.spec, work.size, bucket, d, false);
            return Route::new(self, d.backend, work.size, false);
        }
        let mut st = self.lock();
        let byte = self.decisions[bucket].load(Ordering::Relaxed);
        if byte & CACHED != 0 {
            // Cached meanwhile, or we came here only because another thread holds a scoped override.
            drop(st);
            return self.cached_route(byte, work.size);
        }
        if let Some(b) = st.forced.or_else(config::forced_backend) {
            let d = self.resolve_forced(&mut st, b);
            self.decisions[bucket].store(encode(d.backend, MIN_SHIFT, false), Ordering::Relaxed);
            drop(st);
            telemetry::decision(&self.spec, work.size, bucket, d, false);
            return Route::new(self, d.backend, work.size, false);
        }
        let gpu_usable = self.spec.has_gpu && crate::ops::gpu::is_available();
        let mut guard = st;
        let st = &mut *guard;
        let neighbours = predict_from_neighbours(&st.buckets, bucket, self.spec.complexity, work.size);
        let bs = st.buckets.entry(bucket).or_insert_with(|| BucketState::new(work.size));
        let has_history = bs.has_history();
        let was_settled = bs.settled().is_some();
        let d = match bs.settled() {
            Some(backend) => Decision { backend, kind: DecisionKind::Historical },
            None => {
                let prior = router::prior(&self.spec, &work, gpu_usable, || cost::global().gpu_worth_it(&work));
                let candidates = [true, true, gpu_usable];
                // The cost model is consulted only once something was measured to compare with.
                let model =
                    if has_history { Backend::ALL.map(|b| cost::global().predict(b, &work) * 1e9) } else { [0.0; 3] };
                let predicted = router::Predictions { neighbours, model };
                router::explore(bs, candidates, prior, &predicted, &Policy::DEFAULT)
            }
        };
        if bs.settled().is_some() {
            let shift = st.clocks.get(&bucket).map_or(MIN_SHIFT, |c| c.shift);
            self.decisions[bucket].store(encode(d.backend, shift, false), Ordering::Relaxed);
            // Only a new decision is worth saving; re-caching a settled bucket changes nothing.
            if !was_settled {
                persist::note_changed();
            }
        }
        drop(guard);
        telemetry::decision(&self.spec, work.size, bucket, d, has_history);
        // Every exploring call is timed; a bucket that just settled starts sampling.
        Route::new(self, d.backend, work.size, true)
    }

    /// The backend a forced choice really runs on: GPU without a GPU variant or a
    /// usable device falls back to SIMD, and says why once.
    fn resolve_forced(&'static self, st: &mut KernelState, b: Backend) -> Decision {
        if b != Backend::Gpu {
            return Decision { backend: b, kind: DecisionKind::Forced };
        }
        let why = if !self.spec.has_gpu {
            Some("the kernel has no GPU variant (its body calls no `ops::` function and no `gpu = path` was given)")
        } else if !crate::ops::gpu::is_available() {
            Some("no usable GPU adapter (see `ops::gpu::health()` and ADAPTIVE_KERNEL_GPU)")
        } else {
            None
        };
        match why {
            None => Decision { backend: Backend::Gpu, kind: DecisionKind::Forced },
            Some(why) => {
                if !std::mem::replace(&mut st.warned_unavailable, true) {
                    telemetry::forced_fallback(self.spec.name, why);
                }
                Decision { backend: Backend::Simd, kind: DecisionKind::Forced }
            }
        }
    }

    /// Records that a call of `size` on `backend` took `elapsed`: what [`Route::run`]
    /// does for timed calls. Public so timings measured elsewhere can be fed in.
    ///
    /// The first sample of each backend after the process starts is a warm-up
    /// and is not kept (it pays for page faults, pipeline compilation, caches).
    pub fn observe(&'static self, size: usize, backend: Backend, elapsed: Duration) {
        self.record(bucket_of(size), backend, size, elapsed);
    }

    #[cold]
    #[inline(never)]
    fn record(&'static self, bucket: usize, backend: Backend, size: usize, elapsed: Duration) {
        let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let mut st = self.lock();
        let st = &mut *st;
        let warmup = !std::mem::replace(&mut st.warmed[backend.index()], true);
        let bs = st.buckets.entry(bucket).or_insert_with(|| BucketState::new(size));
        let mut reexplore = router::record(bs, backend, ns, warmup, &Policy::DEFAULT);
        if backend == Backend::Gpu && !crate::ops::gpu::is_available() {
            // The device failed: GPU calls now fall back inside the op; stop choosing it.
            bs.pruned[Backend::Gpu.index()] = true;
            if bs.settled() == Some(Backend::Gpu) {
                bs.restart_round(crate::history::WINDOW);
                reexplore = true;
            }
        }
        if !warmup {
            st.touched.insert(bucket);
        }
        let settled = st.buckets.get(&bucket).and_then(BucketState::settled);
        match settled {
            Some(chosen) if chosen == backend && !warmup => {
                let now = Instant::now();
                let clock =
                    st.clocks.entry(bucket).or_insert(SampleClock { last: now, shift: MIN_SHIFT, calls_per_sec: 0.0 });
                let dt = now.duration_since(clock.last).as_secs_f64();
                if dt > 0.0 {
                    clock.calls_per_sec = f64::from(1u32 << clock.shift) / dt;
                    let wanted = (clock.calls_per_sec / TARGET_SAMPLES_PER_SEC).max(1.0).log2().floor() as u8;
                    clock.shift = wanted.clamp(MIN_SHIFT, MAX_SHIFT);
                }
                clock.last = now;
                let shift = clock.shift;
                let site_rate: f64 = st.clocks.values().map(|c| c.calls_per_sec).sum();
                let centre = st.buckets[&bucket].of(chosen).centre().unwrap_or(0.0);
                let threshold = SPAN_THRESHOLD_NS.load(Ordering::Relaxed) as f64;
                let span = centre > threshold && site_rate <= HOT_CALLS_PER_SEC;
                if st.forced.is_none() {
                    self.decisions[bucket].store(encode(chosen, shift, span), Ordering::Relaxed);
                }
            }
            None if reexplore => {
                self.decisions[bucket].store(UNDECIDED, Ordering::Relaxed);
                telemetry::reexplore(&self.spec, size, bucket);
            }
            _ => {}
        }
    }

    /// Forces every call of this kernel onto `backend` (`None` lifts it), overriding
    /// history but not a scoped [`crate::with_backend`]. A forced GPU on a kernel
    /// without a usable GPU variant runs SIMD and says why once.
    pub fn force(&'static self, backend: Option<Backend>) {
        let mut st = self.lock();
        st.forced = backend;
        // Under the lock, so no cold path can store a decision made under the old setting after this.
        for d in &self.decisions {
            d.store(UNDECIDED, Ordering::Relaxed);
        }
    }

    /// The backend this kernel is forced to by [`Kernel::force`], if any.
    pub fn forced(&'static self) -> Option<Backend> {
        self.lock().forced
    }

    /// The learned per-bucket table: sizes, per-backend count/centre/spread, the
    /// chosen backend and how it was decided.
    pub fn table(&'static self) -> KernelTable {
        let st = self.lock();
        let rows = st
            .buckets
            .iter()
            .map(|(&bucket, bs)| BucketReport {
                bucket,
                sizes: crate::bucket::bucket_range(bucket).unwrap_or(0..=0),
                backends: Backend::ALL
                    .into_iter()
                    .filter(|&b| bs.of(b).count > 0)
                    .map(|b| {
                        let s = bs.of(b);
                        BackendReport {
                            backend: b,
                            count: s.count,
                            centre: s.centre().map(|c| Duration::from_nanos(c as u64)),
                            spread: s.spread().map(|c| Duration::from_nanos(c as u64)),
                            pruned: bs.pruned[b.index()] && bs.settled().is_none(),
                        }
                    })
                    .collect(),
                chosen: bs.settled(),
                decided_by: match bs.phase {
                    Phase::Settled { by, .. } => by,
                    Phase::Exploring => DecisionKind::Exploring,
                },
            })
            .collect();
        KernelTable { kernel: self.spec.name, complexity: self.spec.complexity, forced: st.forced, rows }
    }

    /// Forgets everything learned for this kernel in this process (the history file is untouched until the next save).
    pub fn reset(&'static self) {
        let mut st = self.lock();
        st.buckets.clear();
        st.clocks.clear();
        st.touched.clear();
        for d in &self.decisions {
            d.store(UNDECIDED, Ordering::Relaxed);
        }
    }

    /// Runs `f` on the locked cold-path state (persistence snapshots and merges).
    pub(crate) fn with_state<R>(&'static self, f: impl FnOnce(&mut KernelState) -> R) -> R {
        f(&mut self.lock())
    }
}

/// Predicted time (ns) per backend for `size` from the nearest bucket where that backend
/// was measured, scaled by the complexity's growth (`size^1` for Low/Medium, `size^1.5` for High).
fn predict_from_neighbours(
    buckets: &BTreeMap<usize, BucketState>,
    bucket: usize,
    complexity: OpComplexity,
    size: usize,
) -> [Option<f64>; 3] {
    let exponent = if complexity == OpComplexity::High { 1.5 } else { 1.0 };
    let mut out = [None; 3];
    for b in Backend::ALL {
        let nearest = buckets
            .iter()
            .filter(|(&i, bs)| i != bucket && bs.typical_size > 0 && !bs.of(b).is_empty())
            .min_by_key(|(&i, _)| i.abs_diff(bucket));
        if let Some((_, bs)) = nearest {
            let centre = bs.of(b).centre().unwrap_or(0.0);
            out[b.index()] = Some(centre * (size.max(1) as f64 / bs.typical_size as f64).powf(exponent));
        }
    }
    out
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel").field("spec", &self.spec).finish_non_exhaustive()
    }
}

/// Where one call goes, handed from [`Kernel::route`] to the generated wrapper.
///
/// Kept to three words passed by value, so the fast path keeps it in registers:
/// `flags` is the bucket's decision byte, with its "cached" bit reused to mean
/// "time this call".
#[derive(Debug)]
#[must_use = "a route does nothing until `run` calls the chosen variant"]
pub struct Route {
    kernel: &'static Kernel,
    size: usize,
    flags: u8,
}

/// In a [`Route`]'s flags: this call is timed.
const TIMED: u8 = CACHED;

impl Route {
    fn new(kernel: &'static Kernel, backend: Backend, size: usize, timed: bool) -> Route {
        Route { kernel, size, flags: encode(backend, 0, false) & !CACHED | if timed { TIMED } else { 0 } }
    }

    /// The variant to call.
    #[inline]
    pub fn backend(&self) -> Backend {
        decode_backend(self.flags)
    }

    /// Whether this call will be timed and recorded.
    #[inline]
    pub fn is_timed(&self) -> bool {
        self.flags & TIMED != 0
    }

    /// Calls `variant` (the chosen backend's function) and returns its result,
    /// timing it when this call was picked for measurement.
    #[inline]
    pub fn run<R>(self, variant: impl FnOnce() -> R) -> R {
        if self.flags & (TIMED | SPAN) == 0 {
            variant()
        } else {
            run_observed(self.kernel, self.size, self.flags, variant)
        }
    }
}

/// A call that is timed, spanned or both (fields by value: nothing forces the route into memory).
#[inline(never)]
fn run_observed<R>(kernel: &'static Kernel, size: usize, flags: u8, variant: impl FnOnce() -> R) -> R {
    let backend = decode_backend(flags);
    let _span = (flags & SPAN != 0).then(|| telemetry::call_span(kernel.name(), backend, size));
    if flags & TIMED == 0 {
        return variant();
    }
    let start = Instant::now();
    let out = variant();
    kernel.record(bucket_of(size), backend, size, start.elapsed());
    out
}
