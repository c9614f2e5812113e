//! Calibration: the cost model's figures, measured on this machine.
//!
//! The probes, budgets and derivations are described in the `cost` module docs
//! (its Calibration section); this file implements them.

use std::hint::black_box;
use std::time::Duration;

use super::model::{CostModel, CostParams};
use crate::clock::Instant;
use crate::ops;

impl CostModel {
    /// Measures this machine (see the [`cost`](crate::cost) module docs) and builds a
    /// model over the result: the CPU probes, then the GPU probes when a usable GPU
    /// exists (this waits for GPU start-up). Emits a `debug` event (target
    /// `adaptive_kernel`) with the figures and the time calibration took.
    pub fn calibrate() -> CostModel {
        let started = Instant::now();
        let model = CostModel::from_params(with_gpu(cpu(true)));
        log(&model, started, "calibrated cost model");
        model
    }
}

/// The CPU figures, measured now within a few milliseconds; GPU figures conservative and
/// unavailable. `parallel`: also the Parallel terms (the pool's threads and a fork–join,
/// which starts the pool's threads); without, they stay conservative (1 thread).
pub(super) fn cpu(parallel: bool) -> CostParams {
    measure_cpu(&Probes::cpu_ops(), parallel)
}

/// The Parallel terms measured now: the pool's threads and one fork–join's seconds.
pub(super) fn parallel() -> (f64, f64) {
    measure_parallel(&Probes::cpu_ops())
}

/// `params` with GPU figures measured now, when a usable GPU exists (waits for GPU start-up).
pub(super) fn with_gpu(params: CostParams) -> CostParams {
    match Probes::ops().gpu {
        Some(gpu) => add_gpu(params, &gpu),
        None => params,
    }
}

/// Emits the figures of `model` as a `debug` event.
pub(super) fn log(model: &CostModel, started: Instant, what: &'static str) {
    let p = model.params();
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
        "{what}"
    );
}

type BinaryOp = fn(&[f32], &[f32]) -> Vec<f32>;
type MatmulOp = fn(&[f32], &[f32], usize, usize, usize) -> Vec<f32>;

/// The ops calibration times; real ones from [`Probes::ops`], others in tests.
struct Probes {
    scalar_add: BinaryOp,
    simd_add: BinaryOp,
    scalar_matmul: MatmulOp,
    simd_matmul: MatmulOp,
    fork_join: fn(),
    parallel_threads: fn() -> usize,
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
    /// The real CPU ops, no GPU probes (asking whether a GPU exists waits for its start-up).
    fn cpu_ops() -> Probes {
        Probes {
            scalar_add: ops::scalar::add,
            simd_add: ops::simd::add,
            scalar_matmul: ops::scalar::matmul,
            simd_matmul: ops::simd::matmul,
            fork_join: ops::par::fork_join,
            parallel_threads: ops::par::threads,
            gpu: None,
        }
    }

    /// The real ops, with the GPU's when a usable GPU exists.
    fn ops() -> Probes {
        Probes {
            gpu: ops::gpu::is_available().then_some(GpuProbes {
                add: ops::gpu::add,
                matmul: ops::gpu::matmul,
                still_available: ops::gpu::is_available,
            }),
            ..Probes::cpu_ops()
        }
    }
}

/// At most this many timed repetitions per probe (after one dropped warm-up).
const REPS: usize = 5;
/// At least this many, whatever the budget: one preempted call alone must not be the figure.
const MIN_REPS: usize = 3;
/// A probe stops repeating once it has spent this long (after at least [`MIN_REPS`] calls).
const PROBE_BUDGET: Duration = Duration::from_millis(25);
/// The budget of each CPU probe: all of them together stay within a few milliseconds
/// (on a background thread; a target without threads does not measure them).
const CPU_PROBE_BUDGET: Duration = Duration::from_millis(1);
/// Calls per timed batch when measuring a per-call latency (amortises `Instant::now`).
const LATENCY_BATCH: usize = 64;
/// Elements per array of the bandwidth probes: 4 MiB of f32.
const STREAM_LEN: usize = 1 << 20;
/// Elements per array of the CPU bandwidth probe: 1 MiB of f32 (3 MiB moved),
/// past the per-core caches, small enough to time in well under a millisecond.
const CPU_STREAM_LEN: usize = 1 << 18;
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

/// Seconds of one `f()` call: the fastest of [`MIN_REPS`] to [`REPS`] timed calls after
/// a dropped warm-up, fewer than [`REPS`] once `budget` is spent. The fastest, not the
/// median: another thread can only slow a call down, and on a machine with few cores
/// a probe often shares them (with GPU start-up, with the program), so the quickest
/// call is the one nearest to what the machine can do.
fn fastest_secs(budget: Duration, mut f: impl FnMut()) -> f64 {
    f();
    let mut fastest = f64::INFINITY;
    let started = Instant::now();
    for rep in 1..=REPS {
        let t = Instant::now();
        f();
        fastest = fastest.min(t.elapsed().as_secs_f64());
        if rep >= MIN_REPS && started.elapsed() >= budget {
            break;
        }
    }
    fastest
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

fn time_add(op: BinaryOp, len: usize, budget: Duration) -> f64 {
    let a = vec![1.0f32; len];
    let b = vec![2.0f32; len];
    fastest_secs(budget, || {
        black_box(op(black_box(&a), black_box(&b)));
    })
}

fn time_matmul(op: MatmulOp, n: usize, budget: Duration) -> f64 {
    let a = vec![0.5f32; n * n];
    let b = vec![0.25f32; n * n];
    fastest_secs(budget, || {
        black_box(op(black_box(&a), black_box(&b), n, n, n));
    })
}

/// Seconds per call of `op` on one element, from batches of [`LATENCY_BATCH`] calls.
fn time_call(op: BinaryOp) -> f64 {
    let (a, b) = ([1.0f32], [2.0f32]);
    fastest_secs(CPU_PROBE_BUDGET, || {
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
    /// One fork–join of the Parallel backend with no work.
    fork_join: f64,
    /// The threads it computes on (a count, not a time).
    parallel_threads: f64,
}

/// Raw probe timings of the GPU backend, in seconds; `matmul` at side `matmul_n`.
#[derive(Clone, Copy, Debug)]
struct GpuTimings {
    call: f64,
    add: f64,
    matmul: f64,
    matmul_n: usize,
}

#[cfg(test)]
fn measure(probes: &Probes) -> CostParams {
    let params = measure_cpu(probes, true);
    match &probes.gpu {
        Some(gpu) => add_gpu(params, gpu),
        None => params,
    }
}

fn measure_cpu(probes: &Probes, parallel: bool) -> CostParams {
    let conservative = CostParams::conservative();
    let (parallel_threads, fork_join) = if parallel {
        measure_parallel(probes)
    } else {
        (conservative.parallel_threads, conservative.fork_join_latency)
    };
    let cpu = CpuTimings {
        call: time_call(probes.scalar_add).max(time_call(probes.simd_add)),
        scalar_matmul: time_matmul(probes.scalar_matmul, SCALAR_MATMUL_N, CPU_PROBE_BUDGET),
        simd_matmul: time_matmul(probes.simd_matmul, SIMD_MATMUL_N, CPU_PROBE_BUDGET),
        scalar_add: time_add(probes.scalar_add, CPU_STREAM_LEN, CPU_PROBE_BUDGET),
        simd_add: time_add(probes.simd_add, CPU_STREAM_LEN, CPU_PROBE_BUDGET),
        fork_join,
        parallel_threads,
    };
    cpu_params(&cpu)
}

/// The pool's threads and one fork–join's seconds, as `probes` measure them.
fn measure_parallel(probes: &Probes) -> (f64, f64) {
    ((probes.parallel_threads)() as f64, fastest_secs(CPU_PROBE_BUDGET, probes.fork_join))
}

/// `params` with the GPU figures `gpu` measures, unless the GPU failed meanwhile.
fn add_gpu(params: CostParams, gpu: &GpuProbes) -> CostParams {
    let timings = measure_gpu(gpu);
    if (gpu.still_available)() {
        with_gpu_params(params, &timings)
    } else {
        params
    }
}

/// The CPU figures from `t`; GPU figures stay [`CostParams::conservative`], unavailable.
fn cpu_params(t: &CpuTimings) -> CostParams {
    let lat = t.call.max(1e-9);
    let (scalar_mm_flops, _) = matmul_work(SCALAR_MATMUL_N);
    let (simd_mm_flops, _) = matmul_work(SIMD_MATMUL_N);
    let stream = add_bytes(CPU_STREAM_LEN);
    CostParams {
        scalar_flops: scalar_mm_flops / net(t.scalar_matmul, lat),
        simd_flops: simd_mm_flops / net(t.simd_matmul, lat),
        mem_bandwidth: (stream / net(t.scalar_add, lat)).max(stream / net(t.simd_add, lat)),
        cpu_call_latency: lat,
        parallel_threads: t.parallel_threads,
        fork_join_latency: t.fork_join.max(1e-9),
        ..CostParams::conservative()
    }
}

fn measure_gpu(gpu: &GpuProbes) -> GpuTimings {
    let call = time_add(gpu.add, 1, PROBE_BUDGET);
    let add = time_add(gpu.add, STREAM_LEN, PROBE_BUDGET);
    let mut timings = GpuTimings { call, add, matmul: 0.0, matmul_n: 0 };
    for n in GPU_MATMUL_N {
        let t = time_matmul(gpu.matmul, n, PROBE_BUDGET);
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
    use crate::backend::Backend;
    use crate::cost::Work;

    #[test]
    fn one_preempted_call_is_not_the_figure() {
        // The first timed call is preempted for 20 ms, past the whole budget; the others take
        // microseconds. One call alone was the figure before: 20 ms for a 0.1 ms probe.
        let mut calls = 0;
        let secs = fastest_secs(Duration::from_millis(1), || {
            calls += 1;
            if calls == 2 {
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        assert!(secs < 0.005, "{secs} s");
        assert_eq!(calls, 1 + MIN_REPS, "a dropped warm-up, then the minimum once the budget is spent");
    }

    fn params() -> CostParams {
        super::super::model::TEST_FIGURES
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
            scalar_add: m.predict(Backend::Scalar, &add(CPU_STREAM_LEN)),
            simd_add: m.predict(Backend::Simd, &add(CPU_STREAM_LEN)),
            fork_join: p.fork_join_latency,
            parallel_threads: p.parallel_threads,
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
}
