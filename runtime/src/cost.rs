//! The predictive cost model: how long one call would take on each backend,
//! from a handful of throughput and latency figures measured on *this* machine.
//!
//! The MoE table and the 5× rule in `selector` use fixed constants (an A100 and
//! PCIe 4.0); this model replaces them with [`CostParams`] calibrated at start-up
//! by [`CostModel::calibrate`] (or loaded from the history file and installed with
//! [`install_global`]). The router uses it as the cold-start prior and to prune
//! hopeless exploration; it is never on the per-call path of a settled bucket.
//!
//! # The model
//!
//! For a call doing `F` floating-point operations and moving `B` bytes
//! ([`Work::flops`], [`Work::bytes`]), in seconds:
//!
//! | backend | predicted time |
//! | --- | --- |
//! | Scalar | `cpu_call_latency + max(F / scalar_flops, B / mem_bandwidth)` |
//! | SIMD | `cpu_call_latency + max(F / simd_flops, B / mem_bandwidth)` |
//! | GPU | `gpu_latency + B / transfer_bandwidth + F / gpu_flops` (∞ when no GPU is available) |
//!
//! The CPU rows are a roofline: a call is bound either by arithmetic or by
//! memory traffic. The GPU row adds its terms because the data crosses the bus
//! before and after the kernel runs. The GPU beats SIMD once the work is large
//! enough to pay for the launch and the transfer; [`CostModel::gpu_worth_it`] is
//! that comparison.
//!
//! # Calibration
//!
//! [`CostModel::calibrate`] times a few realistic calls of the real ops, each a
//! median of at most five repetitions after one dropped warm-up, stopping early
//! once a probe has used its 25 ms budget (a probe whose single call is longer,
//! as in a debug build, is timed once):
//!
//! | figure | probe |
//! | --- | --- |
//! | `cpu_call_latency` | `add` of one element, batches of 64 calls; the larger of Scalar and SIMD |
//! | `scalar_flops` | `ops::scalar::matmul`, 64×64×64 |
//! | `simd_flops` | `ops::simd::matmul`, 128×128×128 |
//! | `mem_bandwidth` | `add` of 2²⁰ elements (4 MiB per array, 12 MiB moved, STREAM's count); the faster of Scalar and SIMD |
//! | `gpu_latency` | `ops::gpu::add` of one element |
//! | `transfer_bandwidth` | `ops::gpu::add` of 2²⁰ elements, net of `gpu_latency` |
//! | `gpu_flops` | `ops::gpu::matmul` from 128³, doubling up to 1024³ until compute is at least a quarter of the call, net of latency and transfer |
//!
//! Every throughput is computed net of its fixed latency, so the model reproduces
//! the probe's own time. A net time lost in timer noise is floored at a tenth of
//! the call, which under-estimates that throughput (the conservative side). The
//! budget bounds each probe to its warm-up, 25 ms and one more call; the GPU
//! probes run only when [`ops::gpu::is_available`] says a usable GPU exists.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::error::Error;
use crate::ops;
use crate::site::Work;

/// The machine figures the cost model predicts from. Every number must be finite
/// and positive ([`CostParams::validate`]).
///
/// Serialized as a flat JSON object with these field names (the history file
/// caches it so a restart need not recalibrate).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostParams {
    /// Throughput of the Scalar backend, in FLOP/s.
    pub scalar_flops: f64,
    /// Throughput of the SIMD backend, in FLOP/s.
    pub simd_flops: f64,
    /// Host memory bandwidth seen by a streaming CPU op, in bytes per second.
    pub mem_bandwidth: f64,
    /// Throughput of the GPU backend once the data is on the device, in FLOP/s.
    pub gpu_flops: f64,
    /// Host↔device bandwidth, upload and readback together, in bytes per second.
    pub transfer_bandwidth: f64,
    /// Fixed cost of one GPU dispatch and readback, in seconds.
    pub gpu_latency: f64,
    /// Fixed cost of one CPU op call (call, allocation of the result), in seconds.
    pub cpu_call_latency: f64,
    /// Whether a usable GPU existed when these figures were taken. When false, the
    /// GPU figures are not measurements and every GPU prediction is infinite.
    pub gpu_available: bool,
}

impl CostParams {
    /// Low-end figures for when calibration cannot run, GPU unavailable:
    ///
    /// | field | value |
    /// | --- | --- |
    /// | `scalar_flops` | 1e9 FLOP/s |
    /// | `simd_flops` | 4e9 FLOP/s |
    /// | `mem_bandwidth` | 5e9 B/s |
    /// | `gpu_flops` | 1e12 FLOP/s |
    /// | `transfer_bandwidth` | 8e9 B/s |
    /// | `gpu_latency` | 100 µs |
    /// | `cpu_call_latency` | 100 ns |
    ///
    /// A single core of an old laptop beats these; the GPU figures only matter
    /// if a caller sets `gpu_available` itself.
    pub const fn conservative() -> CostParams {
        CostParams {
            scalar_flops: 1e9,
            simd_flops: 4e9,
            mem_bandwidth: 5e9,
            gpu_flops: 1e12,
            transfer_bandwidth: 8e9,
            gpu_latency: 100e-6,
            cpu_call_latency: 100e-9,
            gpu_available: false,
        }
    }

    /// Checks that every figure is finite and positive; the error names the first
    /// one that is not. Use it on figures read from a file before installing them.
    pub fn validate(&self) -> Result<(), Error> {
        let mut copy = *self;
        let invalid =
            copy.figures_mut().into_iter().map(|(name, value)| (name, *value)).find(|&(_, v)| !is_valid_figure(v));
        match invalid {
            Some((name, value)) => Err(Error::InvalidParameter { name, value }),
            None => Ok(()),
        }
    }

    /// The numeric fields with their names, in declaration order.
    fn figures_mut(&mut self) -> [(&'static str, &mut f64); 7] {
        [
            ("scalar_flops", &mut self.scalar_flops),
            ("simd_flops", &mut self.simd_flops),
            ("mem_bandwidth", &mut self.mem_bandwidth),
            ("gpu_flops", &mut self.gpu_flops),
            ("transfer_bandwidth", &mut self.transfer_bandwidth),
            ("gpu_latency", &mut self.gpu_latency),
            ("cpu_call_latency", &mut self.cpu_call_latency),
        ]
    }

    /// `self` with every figure that fails [`validate`](Self::validate) replaced by
    /// its [`conservative`](Self::conservative) value, and the names replaced.
    fn sanitized(mut self) -> (CostParams, Vec<&'static str>) {
        let mut fallback = CostParams::conservative();
        let mut replaced = Vec::new();
        for ((name, value), (_, default)) in self.figures_mut().into_iter().zip(fallback.figures_mut()) {
            if !is_valid_figure(*value) {
                *value = *default;
                replaced.push(name);
            }
        }
        (self, replaced)
    }
}

fn is_valid_figure(value: f64) -> bool {
    value.is_finite() && value > 0.0
}

impl Default for CostParams {
    /// [`CostParams::conservative`].
    fn default() -> Self {
        CostParams::conservative()
    }
}

/// Predicts a call's time on each backend from [`CostParams`]; see the
/// [module docs](self) for the formulas and how the figures are measured.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::{Backend, CostModel, CostParams, Work};
/// let model = CostModel::from_params(CostParams { gpu_available: true, ..CostParams::conservative() });
/// let tiny = Work { size: 4, flops: 4, bytes: 48 };
/// let big = Work { size: 2 << 20, flops: 2 << 30, bytes: 12 << 20 };
/// assert!(!model.gpu_worth_it(&tiny));
/// assert!(model.gpu_worth_it(&big));
/// assert_eq!(model.fastest(&tiny, &Backend::ALL), Some(Backend::Scalar));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    params: CostParams,
}

impl CostModel {
    /// A model over `params`. Figures that are not finite and positive are replaced
    /// by their [`CostParams::conservative`] value (with a `tracing` warning), so a
    /// model never predicts NaN; check with [`CostParams::validate`] first to
    /// reject such figures instead.
    pub fn from_params(params: CostParams) -> CostModel {
        let (params, replaced) = params.sanitized();
        if !replaced.is_empty() {
            tracing::warn!(target: "adaptive_kernel", ?replaced, "invalid cost figures replaced by conservative ones");
        }
        CostModel { params }
    }

    /// Measures this machine (see the [module docs](self)) and builds a model over
    /// the result: six CPU probes, plus three or more GPU probes when a GPU is
    /// available, each bounded by its budget. Emits a `debug` event (target
    /// `adaptive_kernel`) with the figures and the time calibration took.
    pub fn calibrate() -> CostModel {
        let started = Instant::now();
        let params = measure(&Probes::ops());
        let model = CostModel::from_params(params);
        let p = model.params;
        tracing::debug!(
            target: "adaptive_kernel",
            scalar_flops = p.scalar_flops,
            simd_flops = p.simd_flops,
            mem_bandwidth = p.mem_bandwidth,
            gpu_flops = p.gpu_flops,
            transfer_bandwidth = p.transfer_bandwidth,
            gpu_latency = p.gpu_latency,
            cpu_call_latency = p.cpu_call_latency,
            gpu_available = p.gpu_available,
            elapsed_ms = started.elapsed().as_secs_f64() * 1e3,
            "calibrated cost model"
        );
        model
    }

    /// The figures this model predicts from.
    pub fn params(&self) -> CostParams {
        self.params
    }

    /// Predicted seconds for `work` on `backend`; `f64::INFINITY` for the GPU when
    /// none is available. Never NaN; non-decreasing in `work.flops` and `work.bytes`.
    pub fn predict(&self, backend: Backend, work: &Work) -> f64 {
        let p = &self.params;
        let flops = work.flops as f64;
        let bytes = work.bytes as f64;
        match backend {
            Backend::Scalar => p.cpu_call_latency + (flops / p.scalar_flops).max(bytes / p.mem_bandwidth),
            Backend::Simd => p.cpu_call_latency + (flops / p.simd_flops).max(bytes / p.mem_bandwidth),
            Backend::Gpu if !p.gpu_available => f64::INFINITY,
            Backend::Gpu => p.gpu_latency + bytes / p.transfer_bandwidth + flops / p.gpu_flops,
        }
    }

    /// The candidate with the lowest predicted time for `work`; equal predictions go
    /// to the earlier backend in [`Backend::ALL`] (Scalar, then SIMD, then GPU),
    /// whatever the order of `candidates`. Candidates predicted infinite (the GPU
    /// when none is available) are skipped; `None` when no candidate is left.
    pub fn fastest(&self, work: &Work, candidates: &[Backend]) -> Option<Backend> {
        cheapest(candidates.iter().map(|&b| (self.predict(b, work), b)).filter(|(t, _)| t.is_finite()))
    }

    /// Whether the GPU is predicted strictly faster than SIMD for `work`: the
    /// cold-start veto on the MoE table's GPU choice. False when no GPU is available.
    pub fn gpu_worth_it(&self, work: &Work) -> bool {
        self.predict(Backend::Gpu, work) < self.predict(Backend::Simd, work)
    }
}

/// The backend with the lowest cost; equal costs go to the earlier backend in
/// [`Backend::ALL`], so the answer does not depend on the iteration order.
pub(crate) fn cheapest(costs: impl Iterator<Item = (f64, Backend)>) -> Option<Backend> {
    costs.min_by(|(ta, a), (tb, b)| ta.total_cmp(tb).then(a.cmp(b))).map(|(_, b)| b)
}

static GLOBAL: OnceLock<CostModel> = OnceLock::new();

/// The process-wide model: the one [`install_global`] put there, or else one
/// calibrated ([`CostModel::calibrate`]) on first use. Racing first calls
/// calibrate once; the others wait for it.
pub fn global() -> &'static CostModel {
    global_in(&GLOBAL)
}

/// Makes `params` the process-wide model, so [`global`] does not calibrate (the
/// history file's cached figures, installed at load). Returns false, changing
/// nothing, when the model was already set, by an earlier install or a first
/// [`global`] call. Invalid figures are replaced as in [`CostModel::from_params`].
pub fn install_global(params: CostParams) -> bool {
    install_in(&GLOBAL, params)
}

/// The process-wide model's figures if it has been calibrated or installed; `None`
/// before first use (never calibrates). What the history file caches.
pub fn calibrated() -> Option<CostParams> {
    GLOBAL.get().map(CostModel::params)
}

fn global_in(cell: &OnceLock<CostModel>) -> &CostModel {
    cell.get_or_init(CostModel::calibrate)
}

fn install_in(cell: &OnceLock<CostModel>, params: CostParams) -> bool {
    let installed = cell.set(CostModel::from_params(params)).is_ok();
    if installed {
        tracing::debug!(target: "adaptive_kernel", ?params, "installed cost model figures");
    }
    installed
}

// ---------------------------------------------------------------------------
// Calibration
// ---------------------------------------------------------------------------

type BinaryOp = fn(&[f32], &[f32]) -> Vec<f32>;
type MatmulOp = fn(&[f32], &[f32], usize, usize, usize) -> Vec<f32>;

/// The ops calibration times; real ones from [`Probes::ops`], others in tests.
struct Probes {
    scalar_add: BinaryOp,
    simd_add: BinaryOp,
    scalar_matmul: MatmulOp,
    simd_matmul: MatmulOp,
    gpu: Option<GpuProbes>,
}

struct GpuProbes {
    add: BinaryOp,
    matmul: MatmulOp,
    /// Asked after the GPU probes: a GPU that failed during them fell back to
    /// SIMD, so its timings are not the GPU's.
    still_available: fn() -> bool,
}

impl Probes {
    fn ops() -> Probes {
        Probes {
            scalar_add: ops::scalar::add,
            simd_add: ops::simd::add,
            scalar_matmul: ops::scalar::matmul,
            simd_matmul: ops::simd::matmul,
            gpu: ops::gpu::is_available().then_some(GpuProbes {
                add: ops::gpu::add,
                matmul: ops::gpu::matmul,
                still_available: ops::gpu::is_available,
            }),
        }
    }
}

/// At most this many timed repetitions per probe (after one dropped warm-up).
const REPS: usize = 5;
/// A probe stops repeating once it has spent this long (but times at least one call).
const PROBE_BUDGET: Duration = Duration::from_millis(25);
/// Calls per timed batch when measuring a per-call latency (amortises `Instant::now`).
const LATENCY_BATCH: usize = 64;
/// Elements per array of the bandwidth probes: 4 MiB of f32.
const STREAM_LEN: usize = 1 << 20;
/// Side of the Scalar matmul probe.
const SCALAR_MATMUL_N: usize = 64;
/// Side of the SIMD matmul probe.
const SIMD_MATMUL_N: usize = 128;
/// Sides tried for the GPU matmul probe, smallest first.
const GPU_MATMUL_N: [usize; 4] = [128, 256, 512, 1024];
/// The GPU matmul probe grows until compute is at least this share of the call.
const GPU_COMPUTE_SHARE: f64 = 0.25;
/// A net time is floored at this share of the whole call (noise could make it ≤ 0).
const MIN_NET_SHARE: f64 = 0.1;

/// Median seconds of one `f()` call: a dropped warm-up, then up to [`REPS`] timed
/// calls, fewer once [`PROBE_BUDGET`] is spent.
fn median_secs(mut f: impl FnMut()) -> f64 {
    f();
    let mut times = Vec::with_capacity(REPS);
    let started = Instant::now();
    while times.len() < REPS {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64());
        if started.elapsed() >= PROBE_BUDGET {
            break;
        }
    }
    median(&mut times)
}

fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    let mid = times.len() / 2;
    if times.len() % 2 == 1 {
        times[mid]
    } else {
        (times[mid - 1] + times[mid]) / 2.0
    }
}

/// `t - overhead`, floored at [`MIN_NET_SHARE`] of `t` (and at 1 ns).
fn net(t: f64, overhead: f64) -> f64 {
    (t - overhead).max(t * MIN_NET_SHARE).max(1e-9)
}

/// Square matmul probe inputs of side `n`: FLOPs done and bytes moved (A, B in, C out).
fn matmul_work(n: usize) -> (f64, f64) {
    let n = n as f64;
    (2.0 * n * n * n, 12.0 * n * n)
}

/// Bytes an `add` of `len` elements moves: two arrays in, one out (STREAM's count).
fn add_bytes(len: usize) -> f64 {
    12.0 * len as f64
}

fn time_add(op: BinaryOp, len: usize) -> f64 {
    let a = vec![1.0f32; len];
    let b = vec![2.0f32; len];
    median_secs(|| {
        black_box(op(black_box(&a), black_box(&b)));
    })
}

fn time_matmul(op: MatmulOp, n: usize) -> f64 {
    let a = vec![0.5f32; n * n];
    let b = vec![0.25f32; n * n];
    median_secs(|| {
        black_box(op(black_box(&a), black_box(&b), n, n, n));
    })
}

/// Seconds per call of `op` on one element, from batches of [`LATENCY_BATCH`] calls.
fn time_call(op: BinaryOp) -> f64 {
    let (a, b) = ([1.0f32], [2.0f32]);
    median_secs(|| {
        for _ in 0..LATENCY_BATCH {
            black_box(op(black_box(&a), black_box(&b)));
        }
    }) / LATENCY_BATCH as f64
}

/// Raw probe timings of the CPU backends, in seconds.
#[derive(Clone, Copy, Debug)]
struct CpuTimings {
    call: f64,
    scalar_matmul: f64,
    simd_matmul: f64,
    scalar_add: f64,
    simd_add: f64,
}

/// Raw probe timings of the GPU backend, in seconds; `matmul` at side `matmul_n`.
#[derive(Clone, Copy, Debug)]
struct GpuTimings {
    call: f64,
    add: f64,
    matmul: f64,
    matmul_n: usize,
}

fn measure(probes: &Probes) -> CostParams {
    let cpu = CpuTimings {
        call: time_call(probes.scalar_add).max(time_call(probes.simd_add)),
        scalar_matmul: time_matmul(probes.scalar_matmul, SCALAR_MATMUL_N),
        simd_matmul: time_matmul(probes.simd_matmul, SIMD_MATMUL_N),
        scalar_add: time_add(probes.scalar_add, STREAM_LEN),
        simd_add: time_add(probes.simd_add, STREAM_LEN),
    };
    let mut params = cpu_params(&cpu);
    if let Some(gpu) = &probes.gpu {
        let timings = measure_gpu(gpu);
        if (gpu.still_available)() {
            params = with_gpu_params(params, &timings);
        }
    }
    params
}

/// The CPU figures from `t`; GPU figures stay [`CostParams::conservative`], unavailable.
fn cpu_params(t: &CpuTimings) -> CostParams {
    let lat = t.call.max(1e-9);
    let (scalar_mm_flops, _) = matmul_work(SCALAR_MATMUL_N);
    let (simd_mm_flops, _) = matmul_work(SIMD_MATMUL_N);
    let stream = add_bytes(STREAM_LEN);
    CostParams {
        scalar_flops: scalar_mm_flops / net(t.scalar_matmul, lat),
        simd_flops: simd_mm_flops / net(t.simd_matmul, lat),
        mem_bandwidth: (stream / net(t.scalar_add, lat)).max(stream / net(t.simd_add, lat)),
        cpu_call_latency: lat,
        ..CostParams::conservative()
    }
}

fn measure_gpu(gpu: &GpuProbes) -> GpuTimings {
    let call = time_add(gpu.add, 1);
    let add = time_add(gpu.add, STREAM_LEN);
    let mut timings = GpuTimings { call, add, matmul: 0.0, matmul_n: 0 };
    for n in GPU_MATMUL_N {
        let t = time_matmul(gpu.matmul, n);
        timings.matmul = t;
        timings.matmul_n = n;
        if t - timings.matmul_overhead() >= GPU_COMPUTE_SHARE * t || t >= PROBE_BUDGET.as_secs_f64() {
            break;
        }
    }
    timings
}

impl GpuTimings {
    fn latency(&self) -> f64 {
        self.call.max(1e-9)
    }

    /// Bytes per second of the large `add`, net of the launch.
    fn transfer_bandwidth(&self) -> f64 {
        add_bytes(STREAM_LEN) / net(self.add, self.latency())
    }

    /// The part of the matmul probe that is not compute: launch and transfer.
    fn matmul_overhead(&self) -> f64 {
        let (_, bytes) = matmul_work(self.matmul_n);
        self.latency() + bytes / self.transfer_bandwidth()
    }
}

/// `params` with the GPU figures derived from `t`, marked available.
fn with_gpu_params(params: CostParams, t: &GpuTimings) -> CostParams {
    let (flops, _) = matmul_work(t.matmul_n);
    CostParams {
        gpu_flops: flops / net(t.matmul, t.matmul_overhead()),
        transfer_bandwidth: t.transfer_bandwidth(),
        gpu_latency: t.latency(),
        gpu_available: true,
        ..params
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> CostParams {
        CostParams {
            scalar_flops: 2e9,
            simd_flops: 3e10,
            mem_bandwidth: 2e10,
            gpu_flops: 5e12,
            transfer_bandwidth: 1.2e10,
            gpu_latency: 40e-6,
            cpu_call_latency: 60e-9,
            gpu_available: true,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
    }

    fn matmul(n: usize) -> Work {
        let (flops, bytes) = matmul_work(n);
        Work { size: 2 * n * n, flops: flops as u64, bytes: bytes as u64 }
    }

    fn add(len: usize) -> Work {
        Work { size: 2 * len, flops: len as u64, bytes: add_bytes(len) as u64 }
    }

    /// Timings the model itself predicts for the probes; deriving figures from them must give the figures back.
    #[test]
    fn derivation_inverts_the_model() {
        let p = params();
        let m = CostModel::from_params(p);
        let cpu = CpuTimings {
            call: p.cpu_call_latency,
            scalar_matmul: m.predict(Backend::Scalar, &matmul(SCALAR_MATMUL_N)),
            simd_matmul: m.predict(Backend::Simd, &matmul(SIMD_MATMUL_N)),
            // Both adds are memory-bound under these figures.
            scalar_add: m.predict(Backend::Scalar, &add(STREAM_LEN)),
            simd_add: m.predict(Backend::Simd, &add(STREAM_LEN)),
        };
        let got = cpu_params(&cpu);
        assert!(close(got.scalar_flops, p.scalar_flops), "{got:?}");
        assert!(close(got.simd_flops, p.simd_flops), "{got:?}");
        assert!(close(got.mem_bandwidth, p.mem_bandwidth), "{got:?}");
        assert_eq!(got.cpu_call_latency, p.cpu_call_latency);
        assert!(!got.gpu_available);

        let n = 1024;
        let gpu = GpuTimings {
            call: p.gpu_latency,
            // The add probe's FLOPs are counted as transfer: drop them from the synthetic time.
            add: p.gpu_latency + add_bytes(STREAM_LEN) / p.transfer_bandwidth,
            matmul: m.predict(Backend::Gpu, &matmul(n)),
            matmul_n: n,
        };
        let got = with_gpu_params(got, &gpu);
        assert!(got.gpu_available);
        assert_eq!(got.gpu_latency, p.gpu_latency);
        assert!(close(got.transfer_bandwidth, p.transfer_bandwidth), "{got:?}");
        assert!(close(got.gpu_flops, p.gpu_flops), "{got:?}");
    }

    #[test]
    fn unresolved_net_time_is_floored_not_negative() {
        // A matmul no slower than its latency plus transfer: compute lost in the noise.
        let gpu = GpuTimings { call: 1e-4, add: 2e-4, matmul: 1e-4, matmul_n: 128 };
        let got = with_gpu_params(CostParams::conservative(), &gpu);
        let (flops, _) = matmul_work(128);
        assert!(close(got.gpu_flops, flops / (MIN_NET_SHARE * 1e-4)), "{got:?}");
        assert!(got.validate().is_ok(), "{got:?}");
        assert_eq!(net(0.0, 1.0), 1e-9);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [7.0]), 7.0);
    }

    fn fake_gpu_available() -> bool {
        true
    }

    fn fake_gpu_lost() -> bool {
        false
    }

    /// The GPU branch of calibration, run with the scalar ops standing in for the GPU.
    #[test]
    fn gpu_probes_give_gpu_figures_unless_the_gpu_was_lost() {
        let probes = |still_available| Probes {
            gpu: Some(GpuProbes { add: ops::scalar::add, matmul: ops::scalar::matmul, still_available }),
            ..Probes::ops()
        };
        let got = measure(&probes(fake_gpu_available));
        assert!(got.gpu_available);
        assert!(got.validate().is_ok(), "{got:?}");
        let conservative = CostParams::conservative();
        assert_ne!(
            (got.gpu_flops, got.transfer_bandwidth, got.gpu_latency),
            (conservative.gpu_flops, conservative.transfer_bandwidth, conservative.gpu_latency)
        );

        let got = measure(&probes(fake_gpu_lost));
        assert!(!got.gpu_available);
        assert_eq!(got.gpu_flops, conservative.gpu_flops);
    }

    #[test]
    fn global_calibrates_once_unless_figures_were_installed() {
        let cell = OnceLock::new();
        let first = global_in(&cell) as *const CostModel;
        assert_eq!(global_in(&cell) as *const CostModel, first, "calibrated once");
        assert!(!install_in(&cell, params()), "too late to install");
        assert_ne!(global_in(&cell).params(), params());

        let cell = OnceLock::new();
        assert!(install_in(&cell, params()));
        assert!(!install_in(&cell, CostParams::conservative()));
        assert_eq!(global_in(&cell).params(), params());
    }

    #[test]
    fn invalid_figures_are_replaced_by_conservative_ones() {
        let bad = CostParams { simd_flops: f64::NAN, gpu_latency: -1.0, mem_bandwidth: 0.0, ..params() };
        assert!(matches!(bad.validate(), Err(Error::InvalidParameter { name: "simd_flops", .. })));
        let got = CostModel::from_params(bad).params();
        let c = CostParams::conservative();
        assert_eq!(
            got,
            CostParams {
                simd_flops: c.simd_flops,
                gpu_latency: c.gpu_latency,
                mem_bandwidth: c.mem_bandwidth,
                ..params()
            }
        );
    }
}
