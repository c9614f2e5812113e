//! A settled decision corrects itself: a choice taken while the machine was
//! busy is replaced within seconds of normal running, and a right one stays.
//! Variants here busy-wait a known time, so the figures are real measurements.

mod common;

use std::time::{Duration, Instant};

use adaptive_kernel::{Backend, Kernel, OpComplexity};
use common::{call_spinning, cpu_spec, no_history, settle_with, settled, us};

static BUSY: Kernel = Kernel::new(cpu_spec("self_correction::busy", OpComplexity::Medium));
static RIGHT: Kernel = Kernel::new(cpu_spec("self_correction::right", OpComplexity::Medium));

const SIZE: usize = 5_000;

#[test]
fn a_decision_taken_under_load_is_corrected_within_five_seconds() {
    no_history();
    // Exploration ran while Scalar was slowed by another load: 160 µs against SIMD's 100.
    settle_with(&BUSY, SIZE, |b| if b == Backend::Scalar { us(160) } else { us(100) });
    assert_eq!(settled(&BUSY, SIZE), Some(Backend::Simd));
    // Normal running: Scalar really takes 30 µs.
    let real = |b| if b == Backend::Scalar { us(30) } else { us(100) };
    let start = Instant::now();
    while settled(&BUSY, SIZE) != Some(Backend::Scalar) {
        assert!(start.elapsed() < Duration::from_secs(5), "not corrected in 5 s:\n{}", BUSY.table());
        for _ in 0..100 {
            call_spinning(&BUSY, SIZE, real);
        }
    }
    // And calls now go there.
    assert_eq!(call_spinning(&BUSY, SIZE, real).0, Backend::Scalar);
}

#[test]
fn a_right_decision_stays_put_and_re_timing_stays_within_budget() {
    no_history();
    let real = |b| if b == Backend::Scalar { us(60) } else { us(30) };
    // Settle from real calls.
    for _ in 0..50 {
        call_spinning(&RIGHT, SIZE, real);
    }
    assert_eq!(settled(&RIGHT, SIZE), Some(Backend::Simd), "{}", RIGHT.table());
    let scalar_before = RIGHT.table().row_for(SIZE).and_then(|r| r.backend(Backend::Scalar)).map_or(0, |s| s.count);
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < Duration::from_millis(1_500) {
        call_spinning(&RIGHT, SIZE, real);
        calls += 1;
        assert_eq!(settled(&RIGHT, SIZE), Some(Backend::Simd), "flapped after {calls} calls:\n{}", RIGHT.table());
    }
    let scalar_after = RIGHT.table().row_for(SIZE).and_then(|r| r.backend(Backend::Scalar)).map_or(0, |s| s.count);
    let probes = scalar_after - scalar_before;
    assert!(probes > 0, "the alternative was never re-timed");
    // Each re-timed call costs 30 µs beyond SIMD; the budget is 1% of the bucket's time.
    let extra = probes as f64 * 30e-6;
    let total = calls as f64 * 30e-6;
    assert!(extra <= 0.02 * total + 30e-6 * 8.0, "{probes} probes in {calls} calls cost {extra:.4} s of {total:.3} s");
}
