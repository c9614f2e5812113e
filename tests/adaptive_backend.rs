//! `AdaptiveBackend`, the seed's string-keyed selector: heuristic rules and their
//! precedence, running averages per size bucket, best-backend choice, the
//! hot-path window under an injected clock, reset, and concurrent recording.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use adaptive_kernel::{ops, AdaptiveBackend, Backend, PerfStats};

use Backend::{Gpu, Scalar, Simd};

/// What `select` returns where the seed would say GPU: SIMD on a machine without one.
fn gpu_or_simd() -> Backend {
    if ops::gpu::is_available() {
        Gpu
    } else {
        Simd
    }
}

#[test]
fn heuristic_follows_the_seed_rules_in_order() {
    let ab = AdaptiveBackend::new();
    let h = |op: &str, n: usize| ab.select_heuristic(op, n);

    // 1. random → Scalar, before every other rule.
    assert_eq!(h("random_normal", 5_000_000), Scalar);
    assert_eq!(h("random_matrix", 50_000), Scalar, "random beats matrix");
    // 2. small → Scalar, strictly below 1000.
    assert_eq!(h("matrix_multiply", 999), Scalar, "size beats matrix");
    assert_eq!(h("dot_product", 999), Scalar);
    assert_eq!(h("dot_product", 1000), Simd);
    // 3. matrix above 10,000 → GPU, strictly.
    assert_eq!(h("matrix_multiply", 10_000), Simd);
    assert_eq!(h("matrix_multiply", 10_001), Gpu);
    assert_eq!(h("sparse_matrix_solve", usize::MAX), Gpu);
    // 4. the seed's SIMD list, and everything else.
    for op in ["dot_product", "vector_add", "vector_scale", "softmax", ""] {
        assert_eq!(h(op, 1_000_000), Simd, "{op}");
    }
    // Names match case-sensitively, as in the seed.
    assert_eq!(h("Random_walk", 5_000), Simd);
    assert_eq!(h("MATRIX_multiply", 50_000), Simd);
}

#[test]
fn select_uses_the_heuristic_without_history_and_never_an_absent_gpu() {
    let ab = AdaptiveBackend::new();
    assert_eq!(ab.select("vector_add", 10), Scalar);
    assert_eq!(ab.select("vector_add", 100_000), Simd);
    assert_eq!(ab.select("random_uniform", 100_000), Scalar);
    assert_eq!(ab.select_heuristic("matrix_multiply", 20_000), Gpu, "the rule itself stays pure");
    assert_eq!(ab.select("matrix_multiply", 20_000), gpu_or_simd());
}

#[test]
fn running_average_per_backend() {
    let ab = AdaptiveBackend::new();
    assert_eq!(ab.performance("sum", 5000, Simd), None);
    for us in [100, 200, 600] {
        ab.record_performance("sum", 5000, Simd, us);
    }
    ab.record_performance("sum", 5000, Scalar, 7);
    assert_eq!(ab.performance("sum", 5000, Simd), Some(PerfStats { samples: 3, mean_us: 300.0 }));
    assert_eq!(ab.performance("sum", 5000, Scalar), Some(PerfStats { samples: 1, mean_us: 7.0 }));
    assert_eq!(ab.performance("sum", 5000, Gpu), None);
    assert_eq!(ab.performance("mean", 5000, Simd), None, "ops do not share");

    // Large durations do not overflow the sum.
    ab.record_performance("huge", 5000, Gpu, u64::MAX);
    ab.record_performance("huge", 5000, Gpu, u64::MAX);
    assert_eq!(ab.performance("huge", 5000, Gpu), Some(PerfStats { samples: 2, mean_us: u64::MAX as f64 }));
}

#[test]
fn best_backend_is_the_lowest_average_and_none_without_history() {
    let ab = AdaptiveBackend::new();
    assert_eq!(ab.get_best_backend("dot_product", 4096), None);

    ab.record_performance("dot_product", 4096, Scalar, 80);
    assert_eq!(ab.get_best_backend("dot_product", 4096), Some(Scalar), "one measured backend is the best");
    ab.record_performance("dot_product", 4096, Simd, 10);
    ab.record_performance("dot_product", 4096, Simd, 110);
    assert_eq!(ab.get_best_backend("dot_product", 4096), Some(Simd), "average 60 beats 80");
    ab.record_performance("dot_product", 4096, Simd, 140);
    assert_eq!(ab.get_best_backend("dot_product", 4096), Some(Scalar), "average 86.7 loses to 80");

    assert_eq!(ab.get_best_backend("dot_product", 100_000), None, "another bucket");
    assert_eq!(ab.get_best_backend("vector_add", 4096), None, "another op");

    // History beats the heuristic: a `random` op measured faster on SIMD goes to SIMD.
    assert_eq!(ab.select("random_walk", 5000), Scalar);
    ab.record_performance("random_walk", 5000, Scalar, 50);
    ab.record_performance("random_walk", 5000, Simd, 20);
    assert_eq!(ab.select("random_walk", 5000), Simd);
}

#[test]
fn equal_averages_go_to_the_earlier_backend() {
    let ab = AdaptiveBackend::new();
    // Recorded in reverse order; the averages are equal as rationals (100/1 = 300/3).
    ab.record_performance("norm", 3000, Gpu, 100);
    for us in [50, 100, 150] {
        ab.record_performance("norm", 3000, Simd, us);
    }
    assert_eq!(ab.get_best_backend("norm", 3000), Some(Simd));
    ab.record_performance("norm", 3000, Scalar, 100);
    assert_eq!(ab.get_best_backend("norm", 3000), Some(Scalar));
}

#[test]
fn measured_gpu_is_chosen_only_when_a_gpu_exists() {
    let ab = AdaptiveBackend::new();
    ab.record_performance("matrix_multiply", 50_000, Gpu, 10);
    // Only the GPU measured: without one, select falls back to the (vetoed) heuristic.
    assert_eq!(ab.select("matrix_multiply", 50_000), gpu_or_simd());
    ab.record_performance("matrix_multiply", 50_000, Scalar, 900);
    assert_eq!(ab.get_best_backend("matrix_multiply", 50_000), Some(Gpu), "history is reported as recorded");
    let expected = if ops::gpu::is_available() { Gpu } else { Scalar };
    assert_eq!(ab.select("matrix_multiply", 50_000), expected, "next best measured without a GPU");
}

#[test]
fn sizes_in_one_bucket_share_averages() {
    let ab = AdaptiveBackend::new();
    ab.record_performance("conv", 1500, Simd, 30);
    ab.record_performance("conv", 1600, Simd, 50);
    assert_eq!(ab.performance("conv", 1500, Simd), Some(PerfStats { samples: 2, mean_us: 40.0 }));
    assert_eq!(ab.performance("conv", 2047, Simd), ab.performance("conv", 1024, Simd));
    assert_eq!(ab.performance("conv", 2048, Simd), None, "power-of-two edge");
    assert_eq!(ab.performance("conv", 1023, Simd), None);

    // The MoE threshold 1,000 splits its power-of-two range.
    ab.record_performance("conv", 1000, Scalar, 5);
    assert!(ab.performance("conv", 513, Scalar).is_some());
    assert_eq!(ab.performance("conv", 1001, Scalar), None);
}

/// `n` selects of `op` at `at`.
fn calls(ab: &AdaptiveBackend, op: &str, n: u64, at: Instant) {
    for _ in 0..n {
        ab.select_at(op, 64, at);
    }
}

#[test]
fn hot_path_above_ten_thousand_calls_in_the_last_second() {
    let ab = AdaptiveBackend::new();
    let t0 = Instant::now();
    assert!(!ab.is_hot_path_at("axpy", t0), "never called");

    calls(&ab, "axpy", 10_000, t0);
    assert_eq!(ab.recent_calls_at("axpy", t0), 10_000);
    assert!(!ab.is_hot_path_at("axpy", t0), "exactly 10,000 is not more than 10,000");
    calls(&ab, "axpy", 1, t0);
    assert!(ab.is_hot_path_at("axpy", t0));
    assert!(!ab.is_hot_path_at("gemm", t0), "per op");

    // Still counted a little less than a second later (the edge is exact to 10 ms)…
    assert!(ab.is_hot_path_at("axpy", t0 + Duration::from_millis(980)));
    // …and gone once a full second has passed.
    assert!(!ab.is_hot_path_at("axpy", t0 + Duration::from_secs(1)));
    assert_eq!(ab.recent_calls_at("axpy", t0 + Duration::from_secs(1)), 0);
}

#[test]
fn hot_path_window_slides_rather_than_resets() {
    let ab = AdaptiveBackend::new();
    let t0 = Instant::now();
    // 6,000 calls spread over the first 300 ms, then 5,000 at 600 ms: 11,000 within one second.
    for i in 0..6_000u64 {
        ab.select_at("scale", 64, t0 + Duration::from_micros(i * 50));
    }
    let t1 = t0 + Duration::from_millis(600);
    calls(&ab, "scale", 5_000, t1);
    assert_eq!(ab.recent_calls_at("scale", t1), 11_000);
    assert!(ab.is_hot_path_at("scale", t1));
    // A query about a moment before the newest call counts the calls up to that moment.
    assert_eq!(ab.recent_calls_at("scale", t0 + Duration::from_millis(400)), 6_000);
    // At t0 + 1.31 s every call of the first burst is over a second old; the second burst remains.
    let t2 = t0 + Duration::from_millis(1_310);
    assert_eq!(ab.recent_calls_at("scale", t2), 5_000);
    assert!(!ab.is_hot_path_at("scale", t2));
}

#[test]
fn hot_path_with_the_real_clock() {
    let ab = AdaptiveBackend::new();
    let started = Instant::now();
    for _ in 0..10_001 {
        ab.select("tight_loop", 8);
    }
    let hot = ab.is_hot_path("tight_loop");
    let elapsed = started.elapsed();
    assert!(ab.recent_calls("tight_loop") <= 10_001);
    // Every call is younger than `elapsed`; under 0.99 s all of them must be counted.
    if elapsed < Duration::from_millis(990) {
        assert!(hot, "10,001 calls in {elapsed:?}");
    } else {
        eprintln!("10,001 selects took {elapsed:?}; too slow a machine to check the real clock");
    }
}

#[test]
fn reset_forgets_timings_but_not_call_counts() {
    let ab = AdaptiveBackend::new();
    let t0 = Instant::now();
    ab.record_performance("vector_add", 5000, Scalar, 1);
    ab.record_performance("vector_add", 5000, Simd, 9);
    assert_eq!(ab.select_at("vector_add", 5000, t0), Scalar);
    calls(&ab, "vector_add", 10_000, t0);

    ab.reset_history();
    assert_eq!(ab.get_best_backend("vector_add", 5000), None);
    assert_eq!(ab.performance("vector_add", 5000, Scalar), None);
    assert_eq!(ab.select_at("vector_add", 5000, t0), Simd, "back to the heuristic");
    assert_eq!(ab.recent_calls_at("vector_add", t0), 10_002);
    assert!(ab.is_hot_path_at("vector_add", t0));
}

#[test]
fn concurrent_recording_loses_no_update() {
    const THREADS: u64 = 8;
    const PER_THREAD: u64 = 2_000;
    let ab = Arc::new(AdaptiveBackend::default());
    let t0 = Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let ab = Arc::clone(&ab);
            thread::spawn(move || {
                for i in 0..PER_THREAD {
                    // Thread t records durations t·PER_THREAD + i on its own backend and on a shared one.
                    let us = t * PER_THREAD + i;
                    ab.record_performance("shared", 5000, Simd, us);
                    ab.record_performance("shared", 5000, [Scalar, Simd, Gpu][(t % 3) as usize], us);
                    ab.select_at("shared", 5000, t0);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }

    // The shared backend saw every duration 0..THREADS·PER_THREAD exactly once.
    let n = THREADS * PER_THREAD;
    let simd_own: u64 = (0..THREADS).filter(|t| t % 3 == 1).count() as u64 * PER_THREAD;
    let simd = ab.performance("shared", 5000, Simd).unwrap();
    assert_eq!(simd.samples, n + simd_own);
    let own_sum = |residue: u64| -> u64 {
        (0..THREADS).filter(|t| t % 3 == residue).flat_map(|t| (0..PER_THREAD).map(move |i| t * PER_THREAD + i)).sum()
    };
    let all_sum = n * (n - 1) / 2;
    assert_eq!(simd.mean_us, (all_sum + own_sum(1)) as f64 / (n + simd_own) as f64);
    for (backend, residue) in [(Scalar, 0), (Gpu, 2)] {
        let stats = ab.performance("shared", 5000, backend).unwrap();
        let samples = (0..THREADS).filter(|t| t % 3 == residue).count() as u64 * PER_THREAD;
        assert_eq!(stats, PerfStats { samples, mean_us: own_sum(residue) as f64 / samples as f64 }, "{backend}");
    }
    assert_eq!(ab.recent_calls_at("shared", t0), n);
    assert!(ab.is_hot_path_at("shared", t0));
}
