//! The learning router, driven with injected timings through hand-declared kernel sites.

mod common;

use std::time::Duration;

use adaptive_kernel::{Backend, DecisionKind, Kernel, OpComplexity, Work};
use common::*;

#[test]
fn explores_the_prior_first_then_settles_on_the_fastest() {
    static K: Kernel = Kernel::new(cpu_spec("router::fastest", OpComplexity::High));
    fixed_model();
    let asked = settle_with(&K, 5_000, |b| match b {
        Backend::Scalar => us(300),
        _ => us(100),
    });
    assert_eq!(asked[0], Backend::Simd, "MoE prior for High at 5,000 is SIMD");
    assert_eq!(settled(&K, 5_000), Some(Backend::Simd));
    assert_eq!(decided_by(&K, 5_000), Some(DecisionKind::Historical));
    // 3 kept samples each, plus one dropped warm-up per backend.
    assert_eq!(asked.iter().filter(|&&b| b == Backend::Simd).count(), 4, "{asked:?}");
    assert!(!asked.contains(&Backend::Gpu), "no GPU variant: never asked for");
}

#[test]
fn a_settled_bucket_is_served_from_the_cache_and_only_sampled() {
    static K: Kernel = Kernel::new(cpu_spec("router::sampled", OpComplexity::Low));
    fixed_model();
    settle_with(&K, 100, |b| if b == Backend::Scalar { us(1) } else { us(2) });
    let timed = (0..1_000).filter(|_| K.route(100, || unreachable!("no decision needed")).is_timed()).count();
    assert!(timed <= 1_000 / 16 + 1, "{timed} of 1000 settled calls were timed");
    assert_eq!(K.route(100, || unreachable!()).backend(), Backend::Scalar);
}

#[test]
fn a_candidate_measured_far_slower_is_dropped_after_one_sample() {
    static K: Kernel = Kernel::new(cpu_spec("router::prune_measured", OpComplexity::High));
    fixed_model();
    // Warm both backends up elsewhere so every sample below is kept.
    K.observe(10, Backend::Scalar, us(1));
    K.observe(10, Backend::Simd, us(1));
    let asked = settle_with(&K, 5_000, |b| if b == Backend::Scalar { us(10_000) } else { us(100) });
    assert_eq!(asked.iter().filter(|&&b| b == Backend::Scalar).count(), 1, "{asked:?}");
    let row = K.table().row_for(5_000).cloned().unwrap();
    assert_eq!(row.chosen, Some(Backend::Simd));
}

#[test]
fn a_hopeless_scalar_matmul_is_never_run() {
    // 4096² inputs of a High kernel: the cost model predicts Scalar takes minutes.
    static K: Kernel = Kernel::new(cpu_spec("router::prune_predicted", OpComplexity::High));
    fixed_model();
    let size = 2 * 4096 * 4096;
    let work = Work::estimate(OpComplexity::High, size, Some(2 * 4096u64.pow(3)), None);
    let asked = settle_with_work(&K, size, work, |_| Duration::from_millis(500));
    assert!(!asked.contains(&Backend::Scalar), "{asked:?}");
    assert_eq!(settled(&K, size), Some(Backend::Simd));
}

/// Settles `kernel` at `small` elements on the given Scalar and SIMD times (µs), then at
/// 64,000 elements, where Scalar takes 3.2 ms and SIMD 0.3 ms; what the second bucket asked for.
fn asked_at_64_000_after(kernel: &'static Kernel, small: usize, (scalar, simd): (u64, u64)) -> Vec<Backend> {
    fixed_model();
    settle_with(kernel, small, |b| if b == Backend::Scalar { us(scalar) } else { us(simd) });
    let asked = settle_with(kernel, 64_000, |b| if b == Backend::Scalar { us(3_200) } else { us(300) });
    assert_eq!(settled(kernel, 64_000), Some(Backend::Simd));
    asked
}

#[test]
fn neighbouring_buckets_predict_by_the_complexity_s_growth() {
    static K: Kernel = Kernel::new(cpu_spec("router::prune_neighbour", OpComplexity::Low));
    // At 16,000 elements Scalar is 10× slower than SIMD; Low work grows linearly. At 64,000
    // (4× larger: near enough) Scalar is predicted 3.2 ms; SIMD measures 0.3 ms, so Scalar
    // is hopeless.
    let asked = asked_at_64_000_after(&K, 16_000, (800, 80));
    assert!(!asked.contains(&Backend::Scalar), "{asked:?}");
}

#[test]
fn a_far_neighbour_is_measured_against_not_trusted() {
    static K: Kernel = Kernel::new(cpu_spec("router::far_neighbour", OpComplexity::Low));
    // Measured 32× lower in size, Scalar scales to 3.2 ms at 64,000, but a fixed cost
    // scaled across decades is no prediction: it does not rule Scalar out. Its ratio to
    // SIMD at 2,000 (2.5×) carries and makes it too dear for the new bucket's budget, so
    // the bucket settles on SIMD and re-times Scalar once its calls have paid for it:
    // Scalar is timed there once, then dropped.
    let asked = asked_at_64_000_after(&K, 2_000, (100, 40));
    let later = route_with(&K, 64_000, 1_000, |b| if b == Backend::Scalar { us(3_200) } else { us(300) });
    let scalar = asked.iter().chain(&later).filter(|&&b| b == Backend::Scalar).count();
    assert_eq!(scalar, 1, "{asked:?} then {later:?}");
    assert_eq!(settled(&K, 64_000), Some(Backend::Simd));
}

#[test]
fn a_smaller_bucket_s_scalar_to_simd_ratio_carries_to_a_larger_one() {
    static K: Kernel = Kernel::new(cpu_spec("router::ratio", OpComplexity::Low));
    // Scalar is 10× SIMD at 2,000 elements. At 64,000, 32× larger, SIMD measures 300 µs:
    // Scalar, predicted at 3 ms from that ratio, is not called (it would take 3.2 ms).
    let asked = asked_at_64_000_after(&K, 2_000, (100, 10));
    assert!(asked.contains(&Backend::Simd) && !asked.contains(&Backend::Scalar), "{asked:?}");
}

#[test]
fn near_ties_go_to_the_cheaper_backend_deterministically() {
    static K: Kernel = Kernel::new(cpu_spec("router::tie", OpComplexity::High));
    fixed_model();
    settle_with(&K, 5_000, |b| if b == Backend::Scalar { us(103) } else { us(100) });
    assert_eq!(settled(&K, 5_000), Some(Backend::Scalar), "3% apart is within the 5% band");
}

#[test]
fn one_preempted_sample_does_not_flip_a_decision() {
    static K: Kernel = Kernel::new(cpu_spec("router::outlier", OpComplexity::High));
    fixed_model();
    settle_with(&K, 5_000, |b| if b == Backend::Scalar { us(200) } else { us(100) });
    for _ in 0..15 {
        K.observe(5_000, Backend::Simd, us(100));
    }
    K.observe(5_000, Backend::Simd, us(10_000));
    K.observe(5_000, Backend::Simd, us(100));
    assert_eq!(settled(&K, 5_000), Some(Backend::Simd));
    assert_eq!(decided_by(&K, 5_000), Some(DecisionKind::Historical));
}

#[test]
fn a_degraded_choice_is_replaced() {
    static K: Kernel = Kernel::new(cpu_spec("router::drift", OpComplexity::High));
    fixed_model();
    settle_with(&K, 5_000, |b| if b == Backend::Scalar { us(200) } else { us(100) });
    assert_eq!(settled(&K, 5_000), Some(Backend::Simd));
    // SIMD becomes 4× slower for good (say, another process took the vector units): the
    // re-timed Scalar beats it (a switch, or a new round its figures decide).
    let asked = route_with(&K, 5_000, 2_000, |b| if b == Backend::Scalar { us(200) } else { us(400) });
    assert_eq!(settled(&K, 5_000), Some(Backend::Scalar), "{}", K.table());
    assert_eq!(decided_by(&K, 5_000), Some(DecisionKind::Historical));
    assert_eq!(asked.last(), Some(&Backend::Scalar));
}

#[test]
fn the_table_reports_what_was_learned() {
    static K: Kernel = Kernel::new(cpu_spec("router::table", OpComplexity::Medium));
    fixed_model();
    settle_with(&K, 3_000, |b| if b == Backend::Scalar { us(50) } else { us(20) });
    let table = K.table();
    assert_eq!(table.kernel, "router::table");
    let row = table.row_for(3_000).unwrap();
    assert!(row.sizes.contains(&3_000) && row.sizes.contains(&2_048) && !row.sizes.contains(&4_096));
    let simd = row.backend(Backend::Simd).unwrap();
    assert_eq!(simd.count, 3);
    assert_eq!(simd.centre, Some(us(20)));
    assert_eq!(simd.spread, Some(Duration::ZERO));
    assert_eq!(row.chosen, Some(Backend::Simd));
    let text = table.to_string();
    assert!(text.contains("router::table (Medium)") && text.contains("historical"), "{text}");
}

#[test]
fn sizes_across_an_moe_threshold_never_share_a_decision() {
    static K: Kernel = Kernel::new(cpu_spec("router::moe_split", OpComplexity::High));
    fixed_model();
    let first = |size: usize| K.route(size, || Work::estimate(OpComplexity::High, size, None, None)).backend();
    assert_eq!(first(1_000), Backend::Scalar);
    assert_eq!(first(1_001), Backend::Simd);
}

#[test]
fn a_kernel_can_be_forced_and_released() {
    static K: Kernel = Kernel::new(cpu_spec("router::force", OpComplexity::High));
    fixed_model();
    settle_with(&K, 5_000, |b| if b == Backend::Scalar { us(200) } else { us(100) });
    K.force(Some(Backend::Scalar));
    assert_eq!(K.forced(), Some(Backend::Scalar));
    assert_eq!(K.route(5_000, || Work::estimate(OpComplexity::High, 5_000, None, None)).backend(), Backend::Scalar);
    assert_eq!(K.table().forced, Some(Backend::Scalar));
    K.force(None);
    assert_eq!(K.route(5_000, || Work::estimate(OpComplexity::High, 5_000, None, None)).backend(), Backend::Simd);
}

#[test]
fn forcing_gpu_on_a_kernel_without_one_runs_simd() {
    static K: Kernel = Kernel::new(cpu_spec("router::force_gpu", OpComplexity::High));
    fixed_model();
    K.force(Some(Backend::Gpu));
    assert_eq!(K.route(10, || Work::estimate(OpComplexity::High, 10, None, None)).backend(), Backend::Simd);
    K.force(None);
}

#[test]
fn scoped_overrides_nest_and_restore_even_on_panic() {
    use adaptive_kernel::with_backend;
    static K: Kernel = Kernel::new(cpu_spec("router::scoped", OpComplexity::Low));
    fixed_model();
    let pick = || K.route(10, || Work::estimate(OpComplexity::Low, 10, None, None)).backend();
    assert_eq!(pick(), Backend::Scalar);
    with_backend(Backend::Simd, || {
        assert_eq!(pick(), Backend::Simd);
        with_backend(Backend::Scalar, || assert_eq!(pick(), Backend::Scalar));
        assert_eq!(pick(), Backend::Simd);
    });
    let caught = std::panic::catch_unwind(|| with_backend(Backend::Simd, || panic!("inside")));
    assert!(caught.is_err());
    assert_eq!(pick(), Backend::Scalar, "scope restored after a panic");
}

#[test]
fn eight_threads_lose_no_samples() {
    static K: Kernel = Kernel::new(cpu_spec("router::threads", OpComplexity::Low));
    fixed_model();
    K.observe(1 << 20, Backend::Scalar, us(1)); // the warm-up
    std::thread::scope(|s| {
        for t in 0..8u64 {
            s.spawn(move || {
                for i in 0..1_000u64 {
                    K.observe(3_000_000, Backend::Scalar, us(1 + (t * 1_000 + i) % 7));
                }
            });
        }
    });
    let row = K.table().row_for(3_000_000).cloned().unwrap();
    assert_eq!(row.backend(Backend::Scalar).unwrap().count, 8_000);
}

#[test]
fn eight_threads_routing_real_calls_all_get_right_answers() {
    static K: Kernel = Kernel::new(cpu_spec("router::threads_real", OpComplexity::Medium));
    fixed_model();
    let x: Vec<f32> = (0..20_000).map(|i| (i % 10) as f32).collect();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..200 {
                    let r = K.route(x.len(), || Work::estimate(OpComplexity::Medium, x.len(), None, None));
                    let total = match r.backend() {
                        Backend::Scalar => r.run(|| adaptive_kernel::ops::scalar::sum(&x)),
                        _ => r.run(|| adaptive_kernel::ops::simd::sum(&x)),
                    };
                    assert_eq!(total, 90_000.0);
                }
            });
        }
    });
    assert!(settled(&K, x.len()).is_some(), "1,600 calls settle a bucket");
}
