//! A kernel written as a plain index loop, with no `ops::` call, is routed to
//! its SIMD variant on real timings: the SIMD variant computes the float
//! reduction in lanes, so it is faster than the loop as written, and the
//! router, timing both, settles on it above a few thousand elements.
//!
//! The timings are this machine's, measured by the router itself: the test
//! only calls the kernel. The cost model is installed with fixed figures (it
//! prunes nothing here: neither variant is predicted hopeless) and history is
//! off; the kernel's GPU variant (its loop as a shader) is kept out by the GPU
//! policy `off`, set in code for this process, and, being `serial`, it has no
//! Parallel one (its loop would split across threads: `tests/split_routing.rs`
//! routes that), so Scalar and SIMD are the only candidates whatever
//! `ADAPTIVE_KERNEL_GPU` says. Against a transient
//! load (other processes on a shared machine), the test keeps calling after the
//! bucket first settles: the router re-times a settled choice whose confidence
//! interval overlaps an alternative's, so what it holds after many calls is
//! what the medians say. One sample taken while the process was preempted can
//! still measure SIMD far slower than Scalar, and the router then rightly calls
//! it no more until its figure is old (30 s): each size gets up to three
//! attempts from a forgotten kernel (`Kernel::reset`), and must settle on SIMD
//! in one of them.
//!
//! The claim is about optimised code: unoptimised, the lanes cost more than
//! they save (measured here in a debug build: Scalar 36 µs, SIMD 64 µs at 4,096
//! elements), and the router rightly keeps Scalar. So the test runs in release
//! builds only; `scripts/test` runs it so (`cargo test --release --test
//! plain_loop_routing`).

// The kernel is written as an index loop on purpose: that is the code under test.
#![allow(clippy::needless_range_loop)]

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use adaptive_kernel::config::{GpuPolicy, Settings};
use adaptive_kernel::{adaptive_kernel, Backend};
use common::{fixed_model, settled};

/// `Σ aᵢ·bᵢ`, as people write it.
#[adaptive_kernel(complexity = "Medium", serial)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

/// How long calls go on after the bucket first settles, so that a decision taken under a
/// burst of load is re-checked: a settled bucket times a few dozen calls a second, and
/// an alternative replaces the chosen backend after a few re-timings.
const RECHECK: Duration = Duration::from_millis(500);

/// Calls `dot` on `n` elements until its bucket settles, then for [`RECHECK`]; the choice then.
fn settle(n: usize) -> Option<Backend> {
    let a: Vec<f32> = (0..n).map(|i| ((i * 37) % 101) as f32 * 0.01).collect();
    let b: Vec<f32> = (0..n).map(|i| ((i * 53) % 97) as f32 * 0.02).collect();
    let size = 2 * n; // the default size: both slices' elements
    let mut calls = 0;
    while settled(&dot::KERNEL, size).is_none() {
        black_box(dot(black_box(&a), black_box(&b)));
        calls += 1;
        assert!(calls < 10_000, "the bucket of {n} elements never settled:\n{}", dot::KERNEL.table());
    }
    let start = Instant::now();
    while start.elapsed() < RECHECK {
        black_box(dot(black_box(&a), black_box(&b)));
    }
    settled(&dot::KERNEL, size)
}

#[test]
#[cfg_attr(debug_assertions, ignore = "timings of unoptimised code; run with --release (scripts/test does)")]
fn a_plain_dot_product_settles_on_simd_above_a_few_thousand_elements() {
    Settings::application().gpu(GpuPolicy::Off).apply().expect("before any kernel runs");
    fixed_model();
    assert!(dot::KERNEL.spec().loops[0].rewritten(), "{:?}", dot::KERNEL.spec().loops);
    assert!(!dot::KERNEL.spec().has_parallel && !adaptive_kernel::ops::gpu::is_available());
    for n in [4_096, 16_384, 65_536] {
        let mut chosen = settle(n);
        for _ in 1..3 {
            if chosen == Some(Backend::Simd) {
                break;
            }
            eprintln!("n = {n}: settled on {chosen:?}, attempting again:\n{}", dot::KERNEL.table());
            dot::KERNEL.reset();
            chosen = settle(n);
        }
        let table = dot::KERNEL.table();
        let row = table.row_for(2 * n).expect("the bucket was called");
        let (scalar, simd) = (row.backend(Backend::Scalar), row.backend(Backend::Simd));
        // SIMD was timed; at the first size Scalar too, so the choice is a measured one, not the MoE
        // table's prior (which says Scalar below 10,000 elements). Larger sizes may skip Scalar as
        // hopeless from that measurement.
        assert!(simd.is_some_and(|s| s.count > 0), "{table}");
        if n == 4_096 {
            assert!(scalar.is_some_and(|s| s.count > 0), "{table}");
        }
        assert_eq!(chosen, Some(Backend::Simd), "n = {n}:\n{table}");
    }
}
