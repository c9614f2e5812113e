//! The GPU op backend agrees with the scalar reference, op by op.
//!
//! Every `_into` form gives its returning form's bits, over all of a stale
//! `out`, and an `out` of the wrong length panics with Scalar's message.
//!
//! These tests need a device: on a machine without a GPU run them with
//! `ADAPTIVE_KERNEL_GPU=software` and Mesa's lavapipe installed (what
//! `scripts/test` does). Without a usable device they FAIL, naming the
//! reason, unless `ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1` asks to skip them.
//!
//! # Tolerances
//! The bounds are the ones the `ops::gpu` docs promise ("Precision"), op by
//! op. ε is `f32::EPSILON` (2⁻²³), `TINY` is `f32::MIN_POSITIVE` (2⁻¹²⁶), `s` the
//! scalar result, `g` the GPU result. In every case NaN must match NaN and
//! an infinity the same infinity. WGSL lets a GPU flush subnormal inputs and
//! results to zero, so a result also passes when it matches the reference
//! computed on the inputs with subnormals flushed, and results within `TINY`
//! of each other are equal. `axpy` is checked by `fusion::agrees`: the device
//! may fuse `y + α·x`, which gives +∞ where Scalar gives NaN (α·x overflowing
//! to −∞ beside y = +∞) and a finite value where Scalar gives ∞.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::Command;

use adaptive_kernel::config::{self, GpuPolicy};
use adaptive_kernel::fusion;
use adaptive_kernel::ops::gpu::{self, GpuHealth};
use adaptive_kernel::ops::scalar;
use common::{gpu_or_skip, SKIP_GPU_VAR as SKIP_VAR};
use proptest::prelude::*;

mod common;

const EPS: f64 = f32::EPSILON as f64;
const TINY: f64 = f32::MIN_POSITIVE as f64;

/// Panics unless the device is still healthy: a failed call would have run
/// on SIMD and proven nothing about the GPU.
fn assert_still_on_device() {
    let health = gpu::health();
    assert!(health.is_ready(), "the GPU backend fell back: {health}");
}

// ---------------------------------------------------------------- comparison

fn ftz(v: &[f32]) -> Vec<f32> {
    v.iter().map(|&x| if x.is_subnormal() { 0.0f32.copysign(x) } else { x }).collect()
}

fn has_subnormal(v: &[f32]) -> bool {
    v.iter().any(|x| x.is_subnormal())
}

/// `g` is within `tol` of `s`, with NaN and infinities matching exactly.
fn close(g: f32, s: f32, tol: f64) -> bool {
    if s.is_nan() || g.is_nan() {
        return s.is_nan() && g.is_nan();
    }
    if s.is_infinite() || g.is_infinite() {
        return s == g;
    }
    (f64::from(g) - f64::from(s)).abs() <= tol + TINY
}

/// Element-wise agreement with either reference, each element with its own tolerance.
fn assert_all_close(what: &str, g: &[f32], refs: &[Vec<f32>], tol: impl Fn(usize, f32) -> f64) {
    assert_eq!(g.len(), refs[0].len(), "{what}: length");
    for i in 0..g.len() {
        let ok = refs.iter().any(|r| close(g[i], r[i], tol(i, r[i])));
        assert!(
            ok,
            "{what}: element {i}: gpu {:e}, scalar {:e} (tolerance {:e})",
            g[i],
            refs[0][i],
            tol(i, refs[0][i])
        );
    }
}

fn assert_one_close(what: &str, g: f32, refs: &[f32], tol: f64) {
    assert!(refs.iter().any(|&s| close(g, s, tol)), "{what}: gpu {g:e}, scalar {:e} (tolerance {tol:e})", refs[0]);
}

fn abs_sum(terms: impl Iterator<Item = f64>) -> f64 {
    terms.map(f64::abs).filter(|t| t.is_finite()).sum()
}

/// The bound for a reordered sum of `n` terms whose magnitudes add to `abs`.
fn sum_tol(n: usize, abs: f64) -> f64 {
    (n as f64 + 8.0) * EPS * abs + n as f64 * TINY
}

fn ulps(k: f64, s: f32) -> f64 {
    k * EPS * f64::from(s).abs()
}

// ---------------------------------------------------------------- strategies

/// Any f32 class: ordinary, zero, huge, tiny, subnormal, ±∞, NaN.
fn any_value() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![
        8 => -100.0f32..100.0,
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
        1 => -3.0e38f32..3.0e38,
        1 => -1.0e-30f32..1.0e-30,
        1 => (-1.0e-38f32..1.0e-38).prop_map(|x| x * 1e-3),
        1 => prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY)],
    ]
}

/// Values whose sums cannot overflow at the lengths used here (|x| ≤ 1e15),
/// plus zeros, tiny values, subnormals and the non-finite ones.
fn sum_value() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![
        8 => -100.0f32..100.0,
        1 => Just(0.0f32),
        1 => -1.0e15f32..1.0e15,
        1 => -1.0e-30f32..1.0e-30,
        1 => (-1.0e-38f32..1.0e-38).prop_map(|x| x * 1e-3),
        1 => prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY)],
    ]
}

/// Lengths: 0, 1, small odd ones, and ones past several workgroups (256),
/// rarely a multiple of one.
fn length() -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(0usize), 1 => Just(1usize), 3 => 2..300usize, 3 => 300..3000usize]
}

/// Lengths for reductions: also past one reduction block (4,096), so that
/// a second pass over the partials runs.
fn reduction_length() -> impl Strategy<Value = usize> {
    prop_oneof![3 => length(), 1 => 4097..9000usize]
}

fn vec_of(value: impl Strategy<Value = f32> + Clone) -> impl Strategy<Value = Vec<f32>> {
    length().prop_flat_map(move |n| prop::collection::vec(value.clone(), n))
}

fn pair_of(value: impl Strategy<Value = f32> + Clone) -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    length().prop_flat_map(move |n| (prop::collection::vec(value.clone(), n), prop::collection::vec(value.clone(), n)))
}

fn long_vec_of(value: impl Strategy<Value = f32> + Clone) -> impl Strategy<Value = Vec<f32>> {
    reduction_length().prop_flat_map(move |n| prop::collection::vec(value.clone(), n))
}

fn long_pair_of(value: impl Strategy<Value = f32> + Clone) -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    reduction_length()
        .prop_flat_map(move |n| (prop::collection::vec(value.clone(), n), prop::collection::vec(value.clone(), n)))
}

/// The references for `f` on `inputs`: as given and, when any input holds a
/// subnormal, with subnormals flushed.
fn refs<T>(inputs: &[&[f32]], f: impl Fn(&[&[f32]]) -> T) -> Vec<T> {
    let mut out = vec![f(inputs)];
    if inputs.iter().any(|v| has_subnormal(v)) {
        let flushed: Vec<Vec<f32>> = inputs.iter().map(|v| ftz(v)).collect();
        let views: Vec<&[f32]> = flushed.iter().map(Vec::as_slice).collect();
        out.push(f(&views));
    }
    out
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

// ---------------------------------------------------------------- element-wise

type Binary = fn(&[f32], &[f32]) -> Vec<f32>;
type Unary = fn(&[f32]) -> Vec<f32>;

fn check_binary(name: &str, g: Binary, s: Binary, ulp: f64, a: &[f32], b: &[f32]) {
    let out = g(a, b);
    assert_still_on_device();
    assert_all_close(name, &out, &refs(&[a, b], |v| s(v[0], v[1])), |_, r| ulps(ulp, r));
}

/// `g` is `y + alpha·x` under the contract: each element rounded twice (Scalar) or fused,
/// special values included (`fusion::agrees`).
fn assert_axpy(g: &[f32], alpha: f32, x: &[f32], y: &[f32]) {
    let mut s = y.to_vec();
    scalar::axpy(alpha, x, &mut s);
    assert_eq!(g.len(), s.len(), "axpy: length");
    for i in 0..g.len() {
        assert!(
            fusion::agrees(g[i], alpha, x[i], y[i], 0.0),
            "axpy: element {i}: gpu {:e}, scalar {:e}, neither y + alpha·x rounded twice nor fused \
             (alpha {alpha:e}, x {:e}, y {:e})",
            g[i],
            s[i],
            x[i],
            y[i]
        );
    }
}

/// Without a device: the axpy check accepts a simulated device that fuses (`mul_add`),
/// where the product overflows on its own too, and refuses a wrong special value.
#[test]
fn the_axpy_check_accepts_a_fused_device_and_refuses_a_wrong_one() {
    let fused = |alpha: f32, x: &[f32], y: &[f32]| -> Vec<f32> {
        x.iter().zip(y).map(|(&x, &y)| alpha.mul_add(x, y)).collect()
    };
    let cases: [(f32, [f32; 3], [f32; 3]); 2] =
        [(1e20, [-1e20, 2.0, 1e-39], [f32::INFINITY, 0.5, -1.0]), (2e19, [2e19, -3.0, 0.0], [-3e38, 1e30, f32::NAN])];
    for (alpha, x, y) in cases {
        let g = fused(alpha, &x, &y);
        let mut s = y.to_vec();
        scalar::axpy(alpha, &x, &mut s);
        assert!(g[0].to_bits() != s[0].to_bits(), "the first element differs in class: {} vs {}", g[0], s[0]);
        assert_axpy(&g, alpha, &x, &y);
        assert_axpy(&s, alpha, &x, &y);
        let mut wrong = g.clone();
        wrong[0] = if s[0].is_nan() { 0.0 } else { f32::NEG_INFINITY };
        let refused = catch_unwind(AssertUnwindSafe(|| assert_axpy(&wrong, alpha, &x, &y)));
        assert!(refused.is_err(), "{} accepted for alpha {alpha:e}, x {:e}, y {:e}", wrong[0], x[0], y[0]);
    }
}

fn check_unary(name: &str, g: Unary, s: Unary, tol: impl Fn(f32, f32) -> f64, a: &[f32]) {
    let out = g(a);
    assert_still_on_device();
    assert_all_close(name, &out, &refs(&[a], |v| s(v[0])), |i, r| tol(a[i], r));
}

proptest! {
    #![proptest_config(config(32))]

    #[test]
    fn add_sub_mul_are_exact((a, b) in pair_of(any_value())) {
        if !gpu_or_skip() { return Ok(()); }
        check_binary("add", gpu::add, scalar::add, 0.0, &a, &b);
        check_binary("sub", gpu::sub, scalar::sub, 0.0, &a, &b);
        check_binary("mul", gpu::mul, scalar::mul, 0.0, &a, &b);
    }

    #[test]
    fn div_is_within_wgsl_bound((a, b) in pair_of(any_value())) {
        if !gpu_or_skip() { return Ok(()); }
        check_binary("div", gpu::div, scalar::div, 2.5, &a, &b);
    }

    #[test]
    fn scale_is_exact(a in vec_of(any_value()), s in any_value()) {
        if !gpu_or_skip() { return Ok(()); }
        let out = gpu::scale(&a, s);
        assert_still_on_device();
        let refs = refs(&[&a, &[s]], |v| scalar::scale(v[0], v[1][0]));
        assert_all_close("scale", &out, &refs, |_, _| 0.0);
    }

    #[test]
    fn axpy_is_y_plus_alpha_x_rounded_twice_or_fused((x, y) in pair_of(any_value()), alpha in any_value()) {
        if !gpu_or_skip() { return Ok(()); }
        let mut g = y.clone();
        gpu::axpy(alpha, &x, &mut g);
        assert_still_on_device();
        assert_axpy(&g, alpha, &x, &y);
    }

    #[test]
    fn activations_are_within_a_few_ulp(a in vec_of(any_value())) {
        if !gpu_or_skip() { return Ok(()); }
        check_unary("relu", gpu::relu, scalar::relu, |_, _| 0.0, &a);
        check_unary("exp", gpu::exp, scalar::exp, |_, s| ulps(8.0, s), &a);
        check_unary("sigmoid", gpu::sigmoid, scalar::sigmoid, |_, s| ulps(8.0, s), &a);
        check_unary("tanh", gpu::tanh, scalar::tanh, |_, s| ulps(8.0, s), &a);
        check_unary("gelu", gpu::gelu, scalar::gelu, |x, s| ulps(8.0, s) + 4.0 * EPS * f64::from(x).abs(), &a);
    }
}

// ---------------------------------------------------------------- reductions

proptest! {
    #![proptest_config(config(32))]

    #[test]
    fn sum_mean_norm_agree(a in long_vec_of(sum_value())) {
        if !gpu_or_skip() { return Ok(()); }
        let n = a.len();
        let abs = abs_sum(a.iter().map(|&x| f64::from(x)));
        let (sum, mean, norm) = (gpu::sum(&a), gpu::mean(&a), gpu::norm_l2(&a));
        assert_still_on_device();
        assert_one_close("sum", sum, &refs(&[&a], |v| scalar::sum(v[0])), sum_tol(n, abs));
        assert_one_close("mean", mean, &refs(&[&a], |v| scalar::mean(v[0])), sum_tol(n, abs) / n.max(1) as f64);
        let s = scalar::norm_l2(&a);
        assert_one_close("norm_l2", norm, &refs(&[&a], |v| scalar::norm_l2(v[0])), (n as f64 + 8.0) * EPS * f64::from(s));
    }

    #[test]
    fn dot_agrees((a, b) in long_pair_of(sum_value())) {
        if !gpu_or_skip() { return Ok(()); }
        let g = gpu::dot(&a, &b);
        assert_still_on_device();
        let abs = abs_sum(a.iter().zip(&b).map(|(&x, &y)| f64::from(x) * f64::from(y)));
        assert_one_close("dot", g, &refs(&[&a, &b], |v| scalar::dot(v[0], v[1])), sum_tol(a.len(), abs));
    }

    #[test]
    fn max_min_are_exact_and_propagate_nan(a in long_vec_of(any_value())) {
        if !gpu_or_skip() { return Ok(()); }
        let (mx, mn) = (gpu::max(&a), gpu::min(&a));
        assert_still_on_device();
        assert_one_close("max", mx, &refs(&[&a], |v| scalar::max(v[0])), 0.0);
        assert_one_close("min", mn, &refs(&[&a], |v| scalar::min(v[0])), 0.0);
    }

    #[test]
    fn softmax_agrees(a in long_vec_of(sum_value())) {
        if !gpu_or_skip() { return Ok(()); }
        let g = gpu::softmax(&a);
        assert_still_on_device();
        let n = a.len() as f64;
        assert_all_close("softmax", &g, &refs(&[&a], |v| scalar::softmax(v[0])), |_, s| (2.0 * n + 32.0) * EPS * f64::from(s));
    }
}

#[test]
fn nan_anywhere_makes_max_and_min_nan() {
    if !gpu_or_skip() {
        return;
    }
    for n in [1, 2, 255, 256, 257, 4096, 4097, 9000] {
        for at in [0, n / 2, n - 1] {
            let mut a: Vec<f32> = (0..n).map(|i| i as f32 - 100.0).collect();
            a[at] = f32::NAN;
            assert!(gpu::max(&a).is_nan() && gpu::min(&a).is_nan(), "n = {n}, NaN at {at}");
        }
    }
    assert_still_on_device();
}

// ---------------------------------------------------------------- matrices

fn dims(max: usize) -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(0usize), 1 => Just(1usize), 4 => 2..max]
}

proptest! {
    #![proptest_config(config(32))]

    #[test]
    fn matmul_agrees((m, n, k) in (dims(40), dims(40), dims(40)), seed in any::<u64>()) {
        if !gpu_or_skip() { return Ok(()); }
        let a = values(m * k, seed);
        let b = values(k * n, seed.rotate_left(17));
        let g = gpu::matmul(&a, &b, m, n, k);
        assert_still_on_device();
        let tol = |i: usize, _| {
            let (r, c) = (i / n, i % n);
            sum_tol(k, abs_sum((0..k).map(|p| f64::from(a[r * k + p]) * f64::from(b[p * n + c]))))
        };
        assert_all_close("matmul", &g, &[scalar::matmul(&a, &b, m, n, k)], tol);
    }

    #[test]
    fn matvec_agrees((m, n) in (dims(300), dims(300)), seed in any::<u64>()) {
        if !gpu_or_skip() { return Ok(()); }
        let a = values(m * n, seed);
        let x = values(n, seed.rotate_left(9));
        let g = gpu::matvec(&a, &x, m, n);
        assert_still_on_device();
        let tol = |r: usize, _| sum_tol(n, abs_sum((0..n).map(|j| f64::from(a[r * n + j]) * f64::from(x[j]))));
        assert_all_close("matvec", &g, &[scalar::matvec(&a, &x, m, n)], tol);
    }

    #[test]
    fn transpose_is_exact((rows, cols) in (dims(90), dims(90)), seed in any::<u64>()) {
        if !gpu_or_skip() { return Ok(()); }
        let a = values(rows * cols, seed);
        let g = gpu::transpose(&a, rows, cols);
        assert_still_on_device();
        assert_all_close("transpose", &g, &[scalar::transpose(&a, rows, cols)], |_, _| 0.0);
    }

    #[test]
    fn conv2d_agrees((rows, cols, krows, kcols) in (dims(40), dims(40), 1..6usize, 1..6usize), seed in any::<u64>()) {
        if !gpu_or_skip() { return Ok(()); }
        let input = values(rows * cols, seed);
        let kernel = values(krows * kcols, seed.rotate_left(5));
        let g = gpu::conv2d(&input, &kernel, rows, cols, krows, kcols);
        assert_still_on_device();
        let ocols = (cols + 1).saturating_sub(kcols);
        let tol = |o: usize, _| {
            let (i, j) = (o / ocols, o % ocols);
            let terms = (0..krows).flat_map(|p| (0..kcols).map(move |q| (p, q)));
            let abs = abs_sum(terms.map(|(p, q)| f64::from(input[(i + p) * cols + j + q]) * f64::from(kernel[p * kcols + q])));
            sum_tol(krows * kcols, abs)
        };
        assert_all_close("conv2d", &g, &[scalar::conv2d(&input, &kernel, rows, cols, krows, kcols)], tol);
    }
}

/// `len` matrix entries drawn from a seed: mostly |x| ≤ 10, some zeros, |x| ≤ 1e15,
/// NaN and ∞ (proptest picks the shape; a seeded stream fills it without a
/// nested strategy).
fn values(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let unit = (state >> 40) as f32 / (1u64 << 24) as f32;
            match state % 64 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 | 3 => 0.0,
                4 | 5 => (unit - 0.5) * 2e15,
                _ => (unit - 0.5) * 20.0,
            }
        })
        .collect()
}

// ---------------------------------------------------------------- the `_into` forms

/// A signalling NaN: arithmetic only ever makes quiet ones, and the inputs hold none.
const STALE: u32 = 0x7FA5_A5A5;

/// `into` over a stale `out` of `want`'s length writes `want`'s bits, twice in a row.
fn assert_twin(what: &str, want: Vec<f32>, into: impl Fn(&mut [f32])) {
    let mut out = vec![f32::from_bits(STALE); want.len()];
    for call in ["first", "second"] {
        into(&mut out);
        for (i, (w, g)) in want.iter().zip(&out).enumerate() {
            assert!(w.to_bits() == g.to_bits(), "{what} ({call} call): [{i}] returning {w:e}, _into {g:e}");
        }
    }
}

proptest! {
    #![proptest_config(config(16))]

    #[test]
    fn into_forms_give_the_returning_forms_bits((a, b) in pair_of(any_value()), s in any_value()) {
        if !gpu_or_skip() { return Ok(()); }
        assert_twin("add", gpu::add(&a, &b), |o| gpu::add_into(&a, &b, o));
        assert_twin("sub", gpu::sub(&a, &b), |o| gpu::sub_into(&a, &b, o));
        assert_twin("mul", gpu::mul(&a, &b), |o| gpu::mul_into(&a, &b, o));
        assert_twin("div", gpu::div(&a, &b), |o| gpu::div_into(&a, &b, o));
        assert_twin("scale", gpu::scale(&a, s), |o| gpu::scale_into(&a, s, o));
        assert_twin("relu", gpu::relu(&a), |o| gpu::relu_into(&a, o));
        assert_twin("exp", gpu::exp(&a), |o| gpu::exp_into(&a, o));
        assert_twin("sigmoid", gpu::sigmoid(&a), |o| gpu::sigmoid_into(&a, o));
        assert_twin("tanh", gpu::tanh(&a), |o| gpu::tanh_into(&a, o));
        assert_twin("gelu", gpu::gelu(&a), |o| gpu::gelu_into(&a, o));
        assert_twin("softmax", gpu::softmax(&a), |o| gpu::softmax_into(&a, o));
        assert_still_on_device();
    }

    #[test]
    fn matrix_into_forms_give_the_returning_forms_bits((m, n, k) in (dims(40), dims(40), dims(40)), seed in any::<u64>()) {
        if !gpu_or_skip() { return Ok(()); }
        let a = values(m * k, seed);
        let b = values(k * n, seed.rotate_left(17));
        let x = values(k, seed.rotate_left(9));
        assert_twin("matmul", gpu::matmul(&a, &b, m, n, k), |o| gpu::matmul_into(&a, &b, m, n, k, o));
        assert_twin("matvec", gpu::matvec(&a, &x, m, k), |o| gpu::matvec_into(&a, &x, m, k, o));
        assert_twin("transpose", gpu::transpose(&a, m, k), |o| gpu::transpose_into(&a, m, k, o));
        let (krows, kcols) = ((n % 4).max(1), (k % 3).max(1));
        let kernel = values(krows * kcols, seed.rotate_left(5));
        assert_twin("conv2d", gpu::conv2d(&a, &kernel, m, k, krows, kcols), |o| {
            gpu::conv2d_into(&a, &kernel, m, k, krows, kcols, o)
        });
        assert_still_on_device();
    }
}

// ---------------------------------------------------------------- conventions

#[test]
fn empty_inputs_give_the_conventions() {
    let e: &[f32] = &[];
    assert!(gpu::add(e, e).is_empty() && gpu::sub(e, e).is_empty() && gpu::mul(e, e).is_empty());
    assert!(gpu::div(e, e).is_empty() && gpu::scale(e, 2.0).is_empty() && gpu::relu(e).is_empty());
    assert!(gpu::sigmoid(e).is_empty() && gpu::tanh(e).is_empty() && gpu::gelu(e).is_empty() && gpu::exp(e).is_empty());
    assert!(gpu::softmax(e).is_empty() && gpu::transpose(e, 0, 7).is_empty());
    let mut y: Vec<f32> = Vec::new();
    gpu::axpy(2.0, e, &mut y);
    assert_eq!((gpu::sum(e), gpu::dot(e, e), gpu::norm_l2(e)), (0.0, 0.0, 0.0));
    assert_eq!((gpu::max(e), gpu::min(e)), (f32::NEG_INFINITY, f32::INFINITY));
    assert!(gpu::mean(e).is_nan());
    assert_eq!(gpu::matmul(&[], &[], 2, 3, 0), vec![0.0; 6]);
    assert_eq!(gpu::matmul(&[], &[1.0, 2.0], 0, 2, 1), Vec::<f32>::new());
    assert_eq!(gpu::matvec(&[], &[], 3, 0), vec![0.0; 3]);
    assert!(gpu::conv2d(&[1.0; 4], &[1.0; 9], 2, 2, 3, 3).is_empty());
    let mut none: [f32; 0] = [];
    gpu::add_into(e, e, &mut none);
    gpu::softmax_into(e, &mut none);
    gpu::conv2d_into(&[1.0; 4], &[1.0; 9], 2, 2, 3, 3, &mut none);
    let mut c = [7.0f32; 6];
    gpu::matmul_into(&[], &[], 2, 3, 0, &mut c);
    assert_eq!(c, [0.0; 6], "k = 0 writes zeros");
    let mut y = [7.0f32; 3];
    gpu::matvec_into(&[], &[], 3, 0, &mut y);
    assert_eq!(y, [0.0; 3], "n = 0 writes zeros");
}

fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    err.downcast_ref::<String>().cloned().or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string())).unwrap()
}

/// Calls `gpu::$op` or `scalar::$op` with the same arguments, discarding the result.
macro_rules! either {
    ($gpu:ident, $op:ident($($arg:expr),*)) => {
        if $gpu {
            let _ = gpu::$op($($arg),*);
        } else {
            let _ = scalar::$op($($arg),*);
        }
    };
}

/// A call that runs the GPU op (`true`) or the scalar one (`false`).
type EitherCall<'a> = Box<dyn Fn(bool) + 'a>;

#[test]
fn shape_mismatches_panic_like_scalar() {
    let (a, b) = (vec![1.0f32; 3], vec![1.0f32; 4]);
    let cases: Vec<(&str, EitherCall<'_>)> = vec![
        ("add", Box::new(|g| either!(g, add(&a, &b)))),
        ("sub", Box::new(|g| either!(g, sub(&a, &b)))),
        ("mul", Box::new(|g| either!(g, mul(&a, &b)))),
        ("div", Box::new(|g| either!(g, div(&a, &b)))),
        ("dot", Box::new(|g| either!(g, dot(&a, &b)))),
        ("axpy", Box::new(|g| either!(g, axpy(1.0, &a, &mut b.clone())))),
        ("matmul a", Box::new(|g| either!(g, matmul(&a, &b, 2, 2, 2)))),
        ("matmul b", Box::new(|g| either!(g, matmul(&b, &a, 2, 2, 2)))),
        ("matmul overflow", Box::new(|g| either!(g, matmul(&[], &[], usize::MAX, usize::MAX, 0)))),
        ("matvec a", Box::new(|g| either!(g, matvec(&a, &b, 2, 2)))),
        ("matvec x", Box::new(|g| either!(g, matvec(&b, &a, 2, 2)))),
        ("transpose", Box::new(|g| either!(g, transpose(&a, 2, 2)))),
        ("conv2d input", Box::new(|g| either!(g, conv2d(&a, &b, 2, 2, 2, 2)))),
        ("conv2d kernel", Box::new(|g| either!(g, conv2d(&b, &a, 2, 2, 2, 2)))),
        ("conv2d empty kernel", Box::new(|g| either!(g, conv2d(&b, &[], 2, 2, 0, 3)))),
    ];
    for (what, call) in &cases {
        let (g, s) = (panic_message(|| call(true)), panic_message(|| call(false)));
        assert_eq!(g, s, "{what}");
        assert!(g.contains(what.split(' ').next().unwrap()), "{what}: {g}");
    }
}

#[test]
fn wrong_out_lengths_panic_like_scalar() {
    let (a, m) = (vec![1.0f32; 6], vec![1.0f32; 6]);
    let out = |n: usize| vec![0.0f32; n];
    let cases: Vec<(&str, EitherCall<'_>)> = vec![
        ("add out", Box::new(|g| either!(g, add_into(&a, &a, &mut out(5))))),
        ("sub out", Box::new(|g| either!(g, sub_into(&a, &a, &mut out(7))))),
        ("mul out", Box::new(|g| either!(g, mul_into(&a, &a, &mut out(0))))),
        ("div out", Box::new(|g| either!(g, div_into(&a, &a, &mut out(12))))),
        ("scale out", Box::new(|g| either!(g, scale_into(&a, 2.0, &mut out(5))))),
        ("relu out", Box::new(|g| either!(g, relu_into(&a, &mut out(5))))),
        ("exp out", Box::new(|g| either!(g, exp_into(&a, &mut out(5))))),
        ("sigmoid out", Box::new(|g| either!(g, sigmoid_into(&a, &mut out(5))))),
        ("tanh out", Box::new(|g| either!(g, tanh_into(&a, &mut out(5))))),
        ("gelu out", Box::new(|g| either!(g, gelu_into(&a, &mut out(5))))),
        ("softmax out", Box::new(|g| either!(g, softmax_into(&a, &mut out(5))))),
        ("softmax out of an empty input", Box::new(|g| either!(g, softmax_into(&[], &mut out(1))))),
        ("matmul out", Box::new(|g| either!(g, matmul_into(&a, &m, 2, 2, 3, &mut out(5))))),
        ("matmul out, k = 0", Box::new(|g| either!(g, matmul_into(&[], &[], 2, 2, 0, &mut out(3))))),
        ("matvec out", Box::new(|g| either!(g, matvec_into(&a, &m[..3], 2, 3, &mut out(3))))),
        ("transpose out", Box::new(|g| either!(g, transpose_into(&a, 2, 3, &mut out(5))))),
        ("conv2d out", Box::new(|g| either!(g, conv2d_into(&a, &m[..4], 2, 3, 2, 2, &mut out(3))))),
    ];
    for (what, call) in &cases {
        let (g, s) = (panic_message(|| call(true)), panic_message(|| call(false)));
        assert_eq!(g, s, "{what}");
        assert!(g.starts_with(&format!("{}: ", what.split(' ').next().unwrap())), "{what}: {g}");
    }
}

// ---------------------------------------------------------------- large inputs

/// 16M + 5 elements is 65,537 workgroups of 256: more than a dispatch
/// dimension allows, so these take 2-D grids; and `sum` takes three passes
/// (4,097 blocks of 4,096 → 2 → 1).
#[test]
fn sixteen_million_elements_use_two_dimensional_grids() {
    if !gpu_or_skip() {
        return;
    }
    let n = (16 << 20) + 5;
    // Small integers whose running sums stay small: every order of summation is exact.
    let mut a: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
    assert_eq!(gpu::add(&a, &b), scalar::add(&a, &b));
    assert_eq!(gpu::sum(&a), scalar::sum(&a));
    assert_eq!(gpu::sum(&a), -3.0);
    assert_eq!(gpu::max(&a), 3.0);
    a[n - 1] = f32::NAN;
    assert!(gpu::min(&a).is_nan(), "a NaN in the last block must reach the result");
    assert_still_on_device();
}

#[test]
fn large_matrices_use_two_dimensional_grids_and_several_dispatches() {
    if !gpu_or_skip() {
        return;
    }
    // 4099 × 4097 = 16.8M elements: 65,600 workgroups of trueno's transpose shader.
    let (rows, cols) = (4099, 4097);
    let a: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    assert_eq!(gpu::transpose(&a, rows, cols), scalar::transpose(&a, rows, cols));
    // 1 × 1,048,592 output: 65,537 column tiles, one more than a dispatch covers.
    let n = 65_537 * 16;
    let b: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    assert_eq!(gpu::matmul(&[2.0], &b, 1, n, 1), scalar::matmul(&[2.0], &b, 1, n, 1));
    // 70,000 rows: more workgroups than one dimension holds.
    let m = 70_000;
    let a: Vec<f32> = (0..m * 3).map(|i| (i % 11) as f32).collect();
    assert_eq!(gpu::matvec(&a, &[1.0, 2.0, 3.0], m, 3), scalar::matvec(&a, &[1.0, 2.0, 3.0], m, 3));
    assert_still_on_device();
}

// ---------------------------------------------------------------- the device

#[test]
fn device_is_ready_and_reports_its_adapter() {
    if !gpu_or_skip() {
        return;
    }
    let GpuHealth::Ready(summary) = gpu::health() else { panic!("health is {}", gpu::health()) };
    assert_eq!(gpu::adapter().as_ref(), Some(&summary));
    assert!(!summary.name.is_empty());
    if config::gpu_policy() != GpuPolicy::Software {
        assert!(!summary.device_type.is_software(), "{summary} is a software adapter but the policy is hardware-only");
    }
    eprintln!("GPU tests ran on {summary}");
    eprintln!("GPU adapter: {}; driver: {} {}", summary.name, summary.driver, summary.driver_info);
}

/// The guard above is what keeps GPU tests from passing vacuously: run the
/// device test again in a child process with the GPU policy `off` (as on a
/// machine with no adapter), once plain and once with the skip variable.
#[test]
fn gpu_tests_fail_without_a_device_unless_skipped_on_purpose() {
    let run = |skip: bool| {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["device_is_ready_and_reports_its_adapter", "--exact", "--nocapture", "--test-threads=1"]);
        cmd.env("ADAPTIVE_KERNEL_GPU", "off").env_remove(SKIP_VAR);
        if skip {
            cmd.env(SKIP_VAR, "1");
        }
        cmd.output().unwrap()
    };
    let failed = run(false);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    let stdout = String::from_utf8_lossy(&failed.stdout);
    assert!(!failed.status.success(), "without a device the GPU test must fail; it passed:\n{stdout}\n{stderr}");
    assert!(stderr.contains("no usable GPU device") && stderr.contains(SKIP_VAR), "{stderr}");
    let skipped = run(true);
    let stderr = String::from_utf8_lossy(&skipped.stderr);
    assert!(skipped.status.success(), "with {SKIP_VAR}=1 the GPU test must skip:\n{stderr}");
    assert!(stderr.contains("skipped"), "a skip must say so: {stderr}");
}
