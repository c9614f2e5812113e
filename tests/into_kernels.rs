//! An annotated kernel whose body writes through the op set's `_into` forms
//! routes and learns like any other: every variant (Scalar, SIMD, Parallel,
//! GPU) writes what Scalar writes into the caller's buffers, the default size
//! counts the output slices too, and routed calls settle the size's bucket on
//! measured timings.

mod common;

use adaptive_kernel::{adaptive_kernel, ops};
use common::{fixed_model, settled};

/// One step of a recurrent cell, `h = tanh(W·x + b)` (W is `b.len()` × `x.len()`),
/// through the caller's buffers: `pre` holds `W·x + b` afterwards.
#[adaptive_kernel(complexity = "Medium")]
fn cell(w: &[f32], x: &[f32], b: &[f32], pre: &mut [f32], h: &mut [f32]) {
    ops::matvec_into(w, x, b.len(), x.len(), h);
    ops::add_into(h, b, pre);
    ops::tanh_into(pre, h);
}

/// 30×30 weights: the slices hold 900 + 30 + 30 inputs and 30 + 30 outputs.
const M: usize = 30;

/// Inputs whose products and sums are exact in f32 in any order (multiples of
/// 1/128 and 1/8 below 2), so that every variant computes the same `W·x + b`,
/// which stays within ±2 (tanh not saturated).
fn inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let eighths = |n: usize, seed: usize| (0..n).map(move |i| ((i * 7 + seed) % 31) as f32 / 8.0 - 1.875);
    (eighths(M * M, 1).map(|v| v / 16.0).collect(), eighths(M, 2).collect(), eighths(M, 3).map(|v| v / 4.0).collect())
}

/// A variant of `cell`.
type Cell = fn(&[f32], &[f32], &[f32], &mut [f32], &mut [f32]);

#[test]
fn every_variant_writes_what_scalar_writes() {
    fixed_model();
    assert!(cell::KERNEL.has_gpu() && cell::KERNEL.has_parallel(), "a body of `ops::` calls has both variants");
    let (w, x, b) = inputs();
    let run = |f: Cell| {
        // Stale values in the outputs: the ops must overwrite them.
        let (mut pre, mut h) = (vec![f32::NAN; M], vec![f32::NAN; M]);
        f(&w, &x, &b, &mut pre, &mut h);
        (pre, h)
    };
    let (want_pre, want_h) = run(cell::scalar);
    assert!(want_h.iter().all(|v| v.abs() < 1.0 && *v != 0.0), "{want_h:?}");
    for (name, f) in [("simd", cell::simd as Cell), ("parallel", cell::parallel), ("gpu", cell::gpu), ("routed", cell)]
    {
        let (pre, h) = run(f);
        assert_eq!(pre, want_pre, "{name}: W·x + b is exact in every order");
        for (i, (g, s)) in h.iter().zip(&want_h).enumerate() {
            // tanh within a few ulp (the GPU's within 8; tests/ops_gpu.rs).
            assert!((g - s).abs() <= 8.0 * f32::EPSILON, "{name}: h[{i}] = {g}, Scalar's {s}");
        }
    }
}

#[test]
fn the_default_size_counts_the_outputs_and_routed_calls_learn() {
    fixed_model();
    let (w, x, b) = inputs();
    let (mut pre, mut h) = (vec![0.0; M], vec![0.0; M]);
    // The default size is every slice's elements, outputs included: 1,020, in the bucket
    // above the MoE split at 1,000; the inputs alone (960) would fall below it.
    let (size, inputs_only) = (w.len() + x.len() + b.len() + pre.len() + h.len(), w.len() + x.len() + b.len());
    assert_eq!((size, inputs_only), (1020, 960));
    let mut calls = 0;
    while settled(&cell::KERNEL, size).is_none() {
        cell(&w, &x, &b, &mut pre, &mut h);
        calls += 1;
        assert!(calls < 20_000, "the bucket of size {size} never settled:\n{}", cell::KERNEL.table());
    }
    let table = cell::KERNEL.table();
    let row = table.row_for(size).expect("the bucket that was called");
    assert!(row.sizes.contains(&size) && !row.sizes.contains(&inputs_only), "{table}");
    assert_eq!(table.rows.len(), 1, "only the bucket of {size} was called:\n{table}");
    let measured = row.backends.iter().filter(|r| r.count > 0).count();
    assert!(measured >= 2, "settled after measuring {measured} backend(s):\n{table}");
}
