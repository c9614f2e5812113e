//! Kernels of several shapes, written once with `#[adaptive_kernel]`: every
//! variant (`k::scalar`, `k::simd`, `k::gpu`) computes what the Scalar variant
//! computes, and so does the routed call `k(..)`.
//!
//! Plain-loop bodies perform the same IEEE operations in the same order in
//! every variant (Rust never contracts `a * b + c` into an FMA, nor reorders a
//! float sum), so their variants agree bit for bit, NaN and infinities
//! included; the one exception, float reductions that the SIMD variant
//! reassociates, is `tests/reductions.rs`, and `dot` here opts out of it with
//! `exact`. Bodies that call `ops::`, and hand-written `simd =`/`gpu =`
//! variants, sum in other orders and agree within a relative tolerance.

use adaptive_kernel::{adaptive_kernel, ops};
use proptest::prelude::*;

// ---- kernels -----------------------------------------------------------------------------------

/// `alpha·x + y` into a new vector: a plain loop with an output allocation.
#[adaptive_kernel(complexity = "Low")]
fn scale_add(alpha: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    assert_eq!(x.len(), y.len(), "scale_add: x and y differ in length");
    let mut out = Vec::with_capacity(x.len());
    for i in 0..x.len() {
        out.push(alpha * x[i] + y[i]);
    }
    out
}

/// `y += alpha·x` in place.
#[adaptive_kernel(complexity = "Low")]
fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// A scalar result with an early exit; `exact`: summed in source order by every variant.
#[adaptive_kernel(complexity = "Medium", exact)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    if a.is_empty() {
        return 0.0;
    }
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

/// C = A·B through the op set.
#[adaptive_kernel(complexity = "High", size = m * k + k * n, flops = 2 * m * n * k)]
fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    ops::matmul(a, b, m, n, k)
}

/// Two ops and a tuple result.
#[adaptive_kernel(complexity = "Medium")]
fn add_then_sum(a: &[f32], b: &[f32]) -> (Vec<f32>, f32) {
    let c = ops::add(a, b);
    let total = ops::sum(&c);
    (c, total)
}

/// Σ x² over eight independent lanes, as a hand-vectorised loop would.
fn sum_sq_lanes(x: &[f32]) -> f32 {
    let mut lanes = [0.0_f32; 8];
    let chunks = x.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().map(|v| v * v).sum();
    for c in chunks {
        for (l, v) in lanes.iter_mut().zip(c) {
            *l += v * v;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// Σ x² by pairwise halving, as a GPU reduction would.
fn sum_sq_pairwise(x: &[f32]) -> f32 {
    match x.len() {
        0 => 0.0,
        1 => x[0] * x[0],
        n => sum_sq_pairwise(&x[..n / 2]) + sum_sq_pairwise(&x[n / 2..]),
    }
}

/// Hand-written SIMD and GPU variants beside a plain body.
#[adaptive_kernel(complexity = "Medium", simd = sum_sq_lanes, gpu = sum_sq_pairwise)]
fn sum_sq(x: &[f32]) -> f32 {
    let mut s = 0.0;
    for v in x {
        s += v * v;
    }
    s
}

// ---- comparisons -------------------------------------------------------------------------------

/// Equal bit for bit, or both NaN (a NaN's payload is not part of the contract).
fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same_all(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(*x, *y))
}

/// Whether two f32 sums of the same `n` terms, added in different orders, agree: each is
/// within (n−1)·ε/2 · Σ|terms| of the exact sum (recursive summation's error bound), so they
/// are within n·ε · `magnitude` of each other, where `magnitude` bounds Σ|terms|.
/// NaN matches NaN and an infinity matches itself.
fn same_sum(a: f32, b: f32, n: usize, magnitude: f32) -> bool {
    same(a, b) || (a - b).abs() <= n as f32 * f32::EPSILON * magnitude
}

fn values() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![8 => -100.0_f32..100.0, 1 => Just(0.0), 1 => Just(-0.0)]
}

fn special() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![4 => values(), 1 => Just(f32::NAN), 1 => Just(f32::INFINITY), 1 => Just(f32::NEG_INFINITY)]
}

/// Two vectors of one length, 0 to 300 (odd lengths and empty included).
fn pair(elem: impl Strategy<Value = f32> + Clone) -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    (0usize..300)
        .prop_flat_map(move |n| (prop::collection::vec(elem.clone(), n), prop::collection::vec(elem.clone(), n)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn plain_loop_variants_agree_bit_for_bit(alpha in special(), (x, y) in pair(special())) {
        let want = scale_add::scalar(alpha, &x, &y);
        prop_assert!(same_all(&scale_add::simd(alpha, &x, &y), &want));
        prop_assert!(same_all(&scale_add(alpha, &x, &y), &want));

        let mut by_scalar = y.clone();
        saxpy::scalar(alpha, &x, &mut by_scalar);
        prop_assert!(same_all(&by_scalar, &want), "saxpy in place computes scale_add");
        let mut by_simd = y.clone();
        saxpy::simd(alpha, &x, &mut by_simd);
        prop_assert!(same_all(&by_simd, &want));
        let mut routed = y.clone();
        saxpy(alpha, &x, &mut routed);
        prop_assert!(same_all(&routed, &want));

        let d = dot::scalar(&x, &y);
        prop_assert!(same(dot::simd(&x, &y), d));
        prop_assert!(same(dot(&x, &y), d));
    }

    #[test]
    fn ops_variants_agree_with_scalar(m in 0usize..10, n in 0usize..10, k in 0usize..10, seed in values()) {
        let a: Vec<f32> = (0..m * k).map(|i| seed + i as f32 * 0.25).collect();
        let b: Vec<f32> = (0..k * n).map(|i| 1.0 - i as f32 * 0.125).collect();
        let want = matmul::scalar(&a, &b, m, n, k);
        // Each entry sums k products, each at most max|a|·max|b|.
        let max_abs = |v: &[f32]| v.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
        let magnitude = k as f32 * max_abs(&a) * max_abs(&b);
        for got in [matmul::simd(&a, &b, m, n, k), matmul::gpu(&a, &b, m, n, k), matmul(&a, &b, m, n, k)] {
            prop_assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                prop_assert!(same_sum(*g, *w, k, magnitude), "{} vs {}", g, w);
            }
        }
    }

    #[test]
    fn ops_variants_handle_special_values((a, b) in pair(special())) {
        let (want, want_total) = add_then_sum::scalar(&a, &b);
        let magnitude: f32 = want.iter().map(|v| v.abs()).sum();
        for (got, total) in [add_then_sum::simd(&a, &b), add_then_sum::gpu(&a, &b), add_then_sum(&a, &b)] {
            prop_assert!(same_all(&got, &want), "element-wise addition is exact in every backend");
            prop_assert!(same_sum(total, want_total, want.len(), magnitude), "{} vs {}", total, want_total);
        }
    }

    #[test]
    fn explicit_variants_agree_with_the_body((x, _) in pair(values())) {
        // The terms are squares, so the exact sum is Σ|terms|; `want` is within a hair of it.
        let want = sum_sq::scalar(&x);
        let magnitude = want * 1.001;
        prop_assert!(same_sum(sum_sq::simd(&x), want, x.len(), magnitude));
        prop_assert!(same_sum(sum_sq::gpu(&x), want, x.len(), magnitude));
        prop_assert!(same_sum(sum_sq(&x), want, x.len(), magnitude));
    }
}

#[test]
fn explicit_variants_are_the_named_functions() {
    // Squares 1e8, 1, 1, …: the body adds each 1 to 1e8 and loses it (f32 spacing there is 8);
    // the lanes first sum the ones (7 lanes × 8) and keep them. The results differ, which shows
    // `simd`/`gpu` run the named functions, not the body.
    let mut x = vec![1.0_f32; 64];
    x[0] = 1e4;
    assert_eq!(sum_sq::scalar(&x), 1e8);
    assert_eq!(sum_sq_lanes(&x), 1e8 + 56.0);
    assert_eq!(sum_sq::simd(&x).to_bits(), sum_sq_lanes(&x).to_bits());
    assert_eq!(sum_sq::gpu(&x).to_bits(), sum_sq_pairwise(&x).to_bits());
    assert_ne!(sum_sq::scalar(&x).to_bits(), sum_sq_lanes(&x).to_bits());
}

#[test]
fn routed_call_above_the_simd_threshold_agrees() {
    // 2 × 600,000 elements: above Low's SIMD threshold of 1,000,000.
    let n = 600_000;
    let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32 - 48.0).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.5).collect();
    let want = scale_add::scalar(0.75, &x, &y);
    assert!(same_all(&scale_add(0.75, &x, &y), &want));
}

#[test]
fn gpu_variants_exist_for_ops_bodies_explicit_paths_and_loops_the_gpu_runs() {
    // A loop that pushes to a `Vec` has no independent iterations; `exact` keeps a loop off the GPU.
    assert!(!scale_add::KERNEL.has_gpu());
    assert!(!dot::KERNEL.has_gpu());
    assert_eq!(scale_add::KERNEL.spec().gpu_loops[0].reason, "writes");
    assert_eq!(dot::KERNEL.spec().gpu_loops[0].reason, "exact");
    // Independent iterations in the subset: the loop runs on the GPU.
    assert!(saxpy::KERNEL.has_gpu() && saxpy::KERNEL.spec().gpu_loops[0].on_gpu());
    assert!(matmul::KERNEL.has_gpu());
    assert!(add_then_sum::KERNEL.has_gpu());
    assert!(sum_sq::KERNEL.has_gpu());
}

#[test]
fn kernels_know_their_spec() {
    use adaptive_kernel::OpComplexity;
    assert_eq!(saxpy::KERNEL.name(), "macro_kernels::saxpy");
    assert_eq!(saxpy::KERNEL.complexity(), OpComplexity::Low);
    assert_eq!(matmul::KERNEL.complexity(), OpComplexity::High);
    // Different code, different fingerprint (the history key of an edited kernel).
    assert_ne!(saxpy::KERNEL.spec().token_hash, scale_add::KERNEL.spec().token_hash);
}
