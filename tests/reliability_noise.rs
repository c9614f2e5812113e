//! Reliability: timing noise (RELIABILITY.md, "Timing noise").
//!
//! Outliers injected into a settled bucket's samples must not flip its decision;
//! a chosen variant that slowly degrades past the alternative must be replaced
//! and the new choice must hold; and a busy period during exploration that makes
//! the wrong variant win must be corrected once it passes (the re-timing
//! mechanism of `tests/self_correction.rs`, here with the busy period on the
//! variant that really is faster).

mod common;

use std::time::{Duration, Instant};

use adaptive_kernel::{Backend, Kernel, OpComplexity};
use common::*;

static OUTLIERS: Kernel = Kernel::new(cpu_spec("reliability_noise::outliers", OpComplexity::Medium));
static DEGRADING: Kernel = Kernel::new(cpu_spec("reliability_noise::degrading", OpComplexity::Medium));
static BUSY: Kernel = Kernel::new(cpu_spec("reliability_noise::busy", OpComplexity::Medium));

const SIZE: usize = 5_000;

/// Routes one call and records `time(backend)` for it as its measurement; returns the backend.
fn step(k: &'static Kernel, time: impl Fn(Backend) -> Duration) -> Backend {
    let route = k.route(SIZE, || adaptive_kernel::Work { size: SIZE, flops: 1, bytes: 1 });
    let b = route.backend();
    drop(route);
    k.observe(SIZE, b, time(b));
    b
}

#[test]
fn injected_outliers_do_not_flip_a_decision() {
    no_history();
    let normal = |b| if b == Backend::Simd { us(50) } else { us(100) };
    settle_with(&OUTLIERS, SIZE, normal);
    assert_eq!(settled(&OUTLIERS, SIZE), Some(Backend::Simd));
    let mut injected = 0;
    for i in 0..2_000 {
        // One SIMD sample in five is a 1,000× preemption spike.
        let spike = i % 5 == 0;
        step(&OUTLIERS, |b| if b == Backend::Simd && spike { us(50_000) } else { normal(b) });
        injected += usize::from(spike);
        assert_eq!(settled(&OUTLIERS, SIZE), Some(Backend::Simd), "flipped after {i} samples:\n{}", OUTLIERS.table());
    }
    eprintln!("FIGURES noise outliers samples=2000 spikes={injected} flips=0");
}

#[test]
fn a_slowly_degrading_variant_is_replaced_and_the_new_choice_holds() {
    no_history();
    settle_with(&DEGRADING, SIZE, |b| if b == Backend::Simd { us(50) } else { us(100) });
    assert_eq!(settled(&DEGRADING, SIZE), Some(Backend::Simd));
    // SIMD slows by 0.5% per call: it passes Scalar's 100 µs after ~140 calls.
    let mut simd_ns = 50_000.0f64;
    let mut switched_at = None;
    for i in 0..20_000 {
        let simd = Duration::from_nanos(simd_ns as u64);
        step(&DEGRADING, |b| if b == Backend::Simd { simd } else { us(100) });
        simd_ns = (simd_ns * 1.005).min(400_000.0);
        if settled(&DEGRADING, SIZE) == Some(Backend::Scalar) {
            switched_at = Some(i);
            break;
        }
    }
    let at = switched_at.unwrap_or_else(|| panic!("never left the degraded SIMD:\n{}", DEGRADING.table()));
    // Holds: SIMD stays slow.
    for _ in 0..2_000 {
        step(&DEGRADING, |b| if b == Backend::Simd { us(400) } else { us(100) });
    }
    assert_eq!(settled(&DEGRADING, SIZE), Some(Backend::Scalar), "{}", DEGRADING.table());
    eprintln!("FIGURES noise degrading switched_after_calls={at} crossing_at_call=139");
}

#[test]
fn a_busy_period_during_exploration_is_corrected_once_it_passes() {
    no_history();
    // During exploration SIMD (really 30 µs) was slowed to 90 µs by another load.
    settle_with(&BUSY, SIZE, |b| if b == Backend::Simd { us(90) } else { us(60) });
    assert_eq!(settled(&BUSY, SIZE), Some(Backend::Scalar));
    let real = |b| if b == Backend::Simd { us(30) } else { us(60) };
    let start = Instant::now();
    let mut calls = 0;
    while settled(&BUSY, SIZE) != Some(Backend::Simd) {
        assert!(start.elapsed() < Duration::from_secs(10), "not corrected in 10 s:\n{}", BUSY.table());
        call_spinning(&BUSY, SIZE, real);
        calls += 1;
    }
    let corrected_after = start.elapsed();
    // And settles there: no flapping back for a second of normal running.
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1) {
        call_spinning(&BUSY, SIZE, real);
        assert_eq!(settled(&BUSY, SIZE), Some(Backend::Simd), "{}", BUSY.table());
    }
    eprintln!("FIGURES noise busy corrected_after={:.2}s calls={calls}", corrected_after.as_secs_f64());
}
