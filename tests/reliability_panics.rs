//! Reliability: kernel bodies that panic (RELIABILITY.md, "Panics").
//!
//! The caller catches the panic (`catch_unwind`); the router must go on routing
//! and computing right (no poisoned lock turns into a crash), and the panicking
//! call's time must not become a sample: a timed call that unwinds never reaches
//! `observe`. Checked while exploring, when settled (where a share of calls is
//! timed), on every backend, and inside a `with_backend` scope.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use adaptive_kernel::ops::{gpu, par, scalar, simd};
use adaptive_kernel::{with_backend, Backend, Kernel, KernelSpec, OpComplexity, Work};
use common::*;

static SUM: Kernel = Kernel::new(KernelSpec {
    name: "reliability_panics::sum",
    complexity: OpComplexity::Medium,
    has_gpu: true,
    has_parallel: true,
    token_hash: 1,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

const SIZE: usize = 50_000;

/// One routed call of the kernel; its body panics when `data` holds a negative value.
fn sum(data: &[f32]) -> f32 {
    let route = SUM.route(SIZE, || Work { size: SIZE, flops: 1, bytes: 1 });
    let backend = route.backend();
    if route.is_timed() && data.iter().any(|&x| x < 0.0) {
        TIMED_PANICS.fetch_add(1, Ordering::Relaxed);
    }
    route.run(|| {
        assert!(data.iter().all(|&x| x >= 0.0), "negative input on {backend:?}");
        match backend {
            Backend::Scalar => scalar::sum(data),
            Backend::Simd => simd::sum(data),
            Backend::Parallel => par::sum(data),
            Backend::Gpu => gpu::sum(data),
        }
    })
}

/// Samples the table holds, per backend.
fn counts() -> Vec<(Backend, u64)> {
    SUM.table().row_for(SIZE).map(|r| r.backends.iter().map(|b| (b.backend, b.count)).collect()).unwrap_or_default()
}

static PANICS: AtomicUsize = AtomicUsize::new(0);
/// Panicking calls the router picked for timing (so a recorded panic would have shown).
static TIMED_PANICS: AtomicUsize = AtomicUsize::new(0);

fn panicking_call() {
    let bad = [1.0, -1.0, 2.0];
    let caught = catch_unwind(AssertUnwindSafe(|| sum(&bad)));
    let message = caught.expect_err("the body panics");
    let text = message.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.starts_with("negative input on"), "{text}");
    PANICS.fetch_add(1, Ordering::Relaxed);
}

#[test]
fn panics_never_become_samples_and_routing_goes_on() {
    no_history();
    // Hundreds of expected panics: keep their reports off the output, and any other one on it.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let expected = info.payload().downcast_ref::<String>().is_some_and(|m| m.starts_with("negative input on"));
        if !expected {
            default(info);
        }
    }));
    let good: Vec<f32> = (0..1000).map(|i| (i % 10) as f32).collect();
    let expected: f32 = good.iter().sum();

    // Exploring: every call is timed, so a recorded panic would show at once.
    panicking_call();
    assert!(counts().iter().all(|&(_, n)| n == 0), "the panicking call became a sample: {:?}", counts());
    let mut calls = 0;
    while settled(&SUM, SIZE).is_none() {
        assert_eq!(sum(&good), expected);
        let before = counts();
        panicking_call();
        assert_eq!(counts(), before, "a panicking exploring call became a sample");
        calls += 1;
        assert!(calls < 500, "never settled:\n{}", SUM.table());
    }

    // Settled: a share of calls is timed (some re-time an alternative); panic until at
    // least 5 panicking calls were picked for timing, so a recorded panic would show.
    let before = counts();
    let timed_before = TIMED_PANICS.load(Ordering::Relaxed);
    let start = std::time::Instant::now();
    while TIMED_PANICS.load(Ordering::Relaxed) < timed_before + 5 {
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "no settled call was timed");
        panicking_call();
    }
    let timed_settled = TIMED_PANICS.load(Ordering::Relaxed) - timed_before;
    assert_eq!(counts(), before, "a timed panicking settled call became a sample");
    for _ in 0..2_000 {
        assert_eq!(sum(&good), expected);
    }

    // Every backend, forced; and a scope left by a panic is restored.
    for backend in Backend::ALL {
        SUM.force(Some(backend));
        panicking_call();
        assert_eq!(sum(&good), expected, "{backend:?} after a panic");
        let in_scope = catch_unwind(|| with_backend(backend, || sum(&[-1.0])));
        assert!(in_scope.is_err());
        PANICS.fetch_add(1, Ordering::Relaxed);
    }
    SUM.force(None);
    assert_eq!(sum(&good), expected);
    assert_ne!(settled(&SUM, SIZE), None, "the learned table survived:\n{}", SUM.table());
    let _ = std::panic::take_hook();
    eprintln!(
        "FIGURES panics caught={} timed_when_settled={timed_settled} then right results",
        PANICS.load(Ordering::Relaxed)
    );
}
