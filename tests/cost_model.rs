//! The calibrated cost model: the formulas' shape, the tie-break, the GPU
//! crossover in closed form, calibration sanity and the process-wide model.

use std::time::{Duration, Instant};

use adaptive_kernel::{cost, ops, Backend, CostModel, CostParams, Work};

/// Hand-set figures, all powers of two or simple decimals so crossovers are easy to write down.
fn params() -> CostParams {
    CostParams {
        scalar_flops: 1e9,
        simd_flops: 16e9,
        mem_bandwidth: 20e9,
        gpu_flops: 10e12,
        transfer_bandwidth: 12e9,
        gpu_latency: 47e-6,
        cpu_call_latency: 80e-9,
        gpu_available: true,
        parallel_threads: 1.0,
        fork_join_latency: 50e-6,
    }
}

fn work(flops: u64, bytes: u64) -> Work {
    Work { size: 0, flops, bytes }
}

#[test]
fn predictions_follow_the_documented_formulas() {
    let p = params();
    let m = CostModel::from_params(p);
    let w = work(3_000_000, 400_000);
    let (f, b) = (3e6, 4e5);
    assert_eq!(m.predict(Backend::Scalar, &w), p.cpu_call_latency + (f / p.scalar_flops).max(b / p.mem_bandwidth));
    assert_eq!(m.predict(Backend::Simd, &w), p.cpu_call_latency + (f / p.simd_flops).max(b / p.mem_bandwidth));
    assert_eq!(m.predict(Backend::Gpu, &w), p.gpu_latency + b / p.transfer_bandwidth + f / p.gpu_flops);
    // Memory-bound on the CPU: SIMD is no faster than Scalar.
    let streaming = work(1_000, 1_000_000_000);
    assert_eq!(m.predict(Backend::Scalar, &streaming), m.predict(Backend::Simd, &streaming));
    assert_eq!(m.params(), p);
}

#[test]
fn predictions_are_monotone_in_flops_and_bytes() {
    for p in [params(), CostParams { gpu_available: true, ..CostParams::conservative() }] {
        let m = CostModel::from_params(p);
        let steps: Vec<u64> = (0..64).map(|i| (1u64 << i) - 1).chain([u64::MAX]).collect();
        for backend in Backend::ALL {
            for fixed in [0, 1 << 10, 1 << 30] {
                let by_flops: Vec<f64> = steps.iter().map(|&f| m.predict(backend, &work(f, fixed))).collect();
                let by_bytes: Vec<f64> = steps.iter().map(|&b| m.predict(backend, &work(fixed, b))).collect();
                for series in [&by_flops, &by_bytes] {
                    assert!(series.iter().all(|t| t.is_finite() && *t > 0.0), "{backend}: {series:?}");
                    assert!(series.windows(2).all(|w| w[0] <= w[1]), "{backend} not monotone: {series:?}");
                }
                // And strictly growing once the growing term dominates.
                assert!(by_flops[63] > by_flops[20], "{backend}");
                assert!(by_bytes[63] > by_bytes[20], "{backend}");
            }
        }
    }
}

#[test]
fn gpu_is_infinite_and_never_fastest_when_unavailable() {
    let m = CostModel::from_params(CostParams { gpu_available: false, ..params() });
    for w in [work(0, 0), work(u64::MAX, 0), work(1 << 40, 1 << 20)] {
        assert_eq!(m.predict(Backend::Gpu, &w), f64::INFINITY);
        assert!(!m.gpu_worth_it(&w));
        assert_ne!(m.fastest(&w, &Backend::ALL), Some(Backend::Gpu));
        assert_eq!(m.fastest(&w, &[Backend::Gpu]), None);
    }
    // The conservative fallback has no GPU.
    assert!(!CostParams::conservative().gpu_available);
    assert_eq!(CostModel::from_params(CostParams::conservative()).predict(Backend::Gpu, &work(1, 1)), f64::INFINITY);
}

#[test]
fn fastest_breaks_ties_by_backend_order_whatever_the_candidate_order() {
    // Equal throughputs and latencies: every backend predicts the same for empty work.
    let p = CostParams { simd_flops: 1e9, scalar_flops: 1e9, gpu_latency: 1e-6, cpu_call_latency: 1e-6, ..params() };
    let m = CostModel::from_params(p);
    let empty = work(0, 0);
    assert_eq!(m.predict(Backend::Scalar, &empty), m.predict(Backend::Gpu, &empty));
    assert!(!m.gpu_worth_it(&empty), "a tie is not worth a dispatch");
    use Backend::{Gpu, Scalar, Simd};
    assert_eq!(m.fastest(&empty, &[Gpu, Simd, Scalar]), Some(Scalar));
    assert_eq!(m.fastest(&empty, &[Gpu, Simd]), Some(Simd));
    assert_eq!(m.fastest(&empty, &[Simd, Gpu, Simd]), Some(Simd));
    assert_eq!(m.fastest(&empty, &[Gpu]), Some(Gpu));
    assert_eq!(m.fastest(&empty, &[]), None);

    // Without a tie the cheapest wins, wherever it stands.
    let m = CostModel::from_params(params());
    let big = work(1 << 40, 1 << 20);
    assert_eq!(m.fastest(&big, &[Scalar, Simd, Gpu]), Some(Gpu));
    assert_eq!(m.fastest(&big, &[Scalar, Simd]), Some(Simd));
    let m = CostModel::from_params(CostParams { scalar_flops: 32e9, ..params() });
    assert_eq!(m.fastest(&work(1 << 20, 0), &[Gpu, Simd, Scalar]), Some(Scalar));
}

/// Asserts `gpu_worth_it` is false up to `floor(x*)` and true from `ceil(x*)`, for the work `work_at(x)`.
fn assert_crossover(m: &CostModel, x_star: f64, work_at: impl Fn(u64) -> Work) {
    assert!(
        x_star > 2.0 && x_star.fract() > 1e-3 && x_star.fract() < 1.0 - 1e-3,
        "pick figures with x* off an integer: {x_star}"
    );
    let below = x_star.floor() as u64;
    let above = x_star.ceil() as u64;
    for x in [below / 2, below - 1, below] {
        assert!(!m.gpu_worth_it(&work_at(x)), "{:?}, crossover at {x_star}", work_at(x));
    }
    for x in [above, above + 1, above * 2] {
        assert!(m.gpu_worth_it(&work_at(x)), "{:?}, crossover at {x_star}", work_at(x));
    }
}

#[test]
fn gpu_worth_it_flips_at_the_closed_form_crossover() {
    let p = params();
    let m = CostModel::from_params(p);

    // Compute only (no bytes): c + F/s = L + F/g  ⇔  F* = (L − c) / (1/s − 1/g).
    let f_star = (p.gpu_latency - p.cpu_call_latency) / (1.0 / p.simd_flops - 1.0 / p.gpu_flops);
    assert_crossover(&m, f_star, |f| work(f, 0));

    // One byte per FLOP over a faster bus (compute-bound on the CPU since simd_flops < mem_bandwidth):
    // c + F/s = L + F/T + F/g  ⇔  F* = (L − c) / (1/s − 1/T − 1/g).
    let fast_bus = CostParams { transfer_bandwidth: 64e9, ..p };
    let f_star = (p.gpu_latency - p.cpu_call_latency)
        / (1.0 / p.simd_flops - 1.0 / fast_bus.transfer_bandwidth - 1.0 / p.gpu_flops);
    assert_crossover(&CostModel::from_params(fast_bus), f_star, |f| work(f, f));

    // Streaming work (no FLOPs): the GPU never wins while the bus is slower than host memory…
    assert!(p.transfer_bandwidth < p.mem_bandwidth);
    for b in [0, 1 << 10, 1 << 20, 1 << 40, u64::MAX] {
        assert!(!m.gpu_worth_it(&work(0, b)), "{b} bytes");
    }
    // …and wins past B* = (L − c) / (1/bw − 1/T) when it is faster.
    let p = fast_bus;
    let m = CostModel::from_params(p);
    let b_star = (p.gpu_latency - p.cpu_call_latency) / (1.0 / p.mem_bandwidth - 1.0 / p.transfer_bandwidth);
    assert_crossover(&m, b_star, |b| work(0, b));
}

#[test]
fn invalid_figures_are_rejected_by_validate_and_never_reach_a_prediction() {
    assert!(params().validate().is_ok());
    assert!(CostParams::conservative().validate().is_ok());
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let p = CostParams { transfer_bandwidth: bad, ..params() };
        let err = p.validate().unwrap_err();
        assert!(err.to_string().contains("transfer_bandwidth"), "{err}");
        let m = CostModel::from_params(p);
        assert_eq!(m.params().transfer_bandwidth, CostParams::conservative().transfer_bandwidth);
        for backend in Backend::ALL {
            assert!(m.predict(backend, &work(1 << 20, 1 << 20)).is_finite());
        }
    }
}

#[test]
fn cost_params_round_trip_through_json() {
    for p in [params(), CostParams::conservative(), CostParams { gpu_latency: 1.0 / 3.0, ..params() }] {
        let json = serde_json::to_string(&p).unwrap();
        let back: CostParams = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p, "{json}");
    }
    let json = serde_json::to_value(params()).unwrap();
    for field in [
        "scalar_flops",
        "simd_flops",
        "mem_bandwidth",
        "gpu_flops",
        "transfer_bandwidth",
        "gpu_latency",
        "cpu_call_latency",
        "gpu_available",
    ] {
        assert!(json.get(field).is_some(), "{field} missing from {json}");
    }
}

#[test]
fn calibration_is_short_and_gives_sane_figures() {
    // Bringing up the GPU device is a one-time cost of the process, not of calibration.
    let gpu_available = ops::gpu::is_available();
    let started = Instant::now();
    let p = CostModel::calibrate().params();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(2), "calibration took {elapsed:?}");
    assert!(p.validate().is_ok(), "{p:?}");
    for (name, flops) in [("scalar_flops", p.scalar_flops), ("simd_flops", p.simd_flops)] {
        assert!(1e6 < flops && flops < 1e13, "{name} = {flops:e} FLOP/s");
    }
    assert!(1e6 < p.mem_bandwidth && p.mem_bandwidth < 1e13, "mem_bandwidth = {:e} B/s", p.mem_bandwidth);
    assert!(p.cpu_call_latency < 1e-3, "cpu_call_latency = {:e} s", p.cpu_call_latency);
    assert_eq!(p.gpu_available, gpu_available);
    if p.gpu_available {
        assert!(1e6 < p.gpu_flops && p.gpu_flops < 1e16, "gpu_flops = {:e}", p.gpu_flops);
        assert!(1e6 < p.transfer_bandwidth && p.transfer_bandwidth < 1e13, "{:e} B/s", p.transfer_bandwidth);
        assert!(p.gpu_latency < 0.1, "gpu_latency = {:e} s", p.gpu_latency);
    } else {
        let c = CostParams::conservative();
        assert_eq!(
            (p.gpu_flops, p.transfer_bandwidth, p.gpu_latency),
            (c.gpu_flops, c.transfer_bandwidth, c.gpu_latency)
        );
    }
    // Expected but noisy on a shared machine, so reported rather than asserted.
    if p.simd_flops < p.scalar_flops {
        eprintln!("note: SIMD calibrated slower than Scalar ({:e} < {:e} FLOP/s)", p.simd_flops, p.scalar_flops);
    }
}

/// The only test in this binary that touches the process-wide model.
#[test]
fn installed_figures_become_the_global_model_and_only_once() {
    let p = params();
    assert!(cost::install_global(p));
    assert_eq!(cost::global().params(), p);
    assert!(!cost::install_global(CostParams::conservative()));
    assert_eq!(cost::global().params(), p);
    assert_eq!(cost::global(), cost::global());
}
