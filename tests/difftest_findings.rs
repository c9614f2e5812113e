//! The four classes of defect the differential tester (`difftest/`, issue 40) found, each
//! by its minimal kernel: the GPU dropping NaN and ∞, a generated shader that did not
//! validate, the Parallel variant replacing libm calls it did not report, and generated
//! code that warned; then what the long runs found after those fixes (seed 206, `k72`: a
//! quotient the driver folds before the NaN test) and the `mul_add` case of the GPU
//! contract. This file compiles under `#![deny(warnings)]`: a warning in any expansion
//! below fails the build.
//!
//! The GPU tests need a device (lavapipe with `ADAPTIVE_KERNEL_GPU=software`); without
//! one they FAIL, unless `ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1` asks to skip them.
#![deny(warnings)]
// The kernels are called through their variants, not routed; `a[i] != a[i]` and `big - big` are
// the findings' NaN and infinity cases, written so on purpose.
#![allow(dead_code, clippy::needless_range_loop, clippy::eq_op)]

use adaptive_kernel::__private::gpu_loop;
use adaptive_kernel::{adaptive_kernel, Backend};
use common::gpu_or_skip;

mod common;

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

#[adaptive_kernel(complexity = "Low")]
fn times_zero(a: &[f32], out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = a[i] * 0.0;
    }
}

#[adaptive_kernel(complexity = "Low")]
fn not_itself(a: &[f32], out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = if a[i] != a[i] { 1.0 } else { 0.0 };
    }
}

/// Finite inputs whose products overflow: the ∞ arises in the shader.
#[adaptive_kernel(complexity = "Low")]
fn overflow_then_zero(a: &[f32], out: &mut [f32]) {
    for i in 0..out.len() {
        let big = a[i] * 1e30;
        out[i] = (big - big) * 0.0 + 1.0;
    }
}

/// Class 1: `[NaN, ∞, −∞, 1] × 0` on the GPU gave `[0, 0, 0, 0]`; Scalar gives `[NaN, NaN, NaN, 0]`.
#[test]
fn the_gpu_keeps_nan_and_infinities() {
    if !gpu_or_skip() {
        return;
    }
    let a = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.0];
    let (mut scalar, mut on_gpu) = ([9.0; 4], [9.0; 4]);
    times_zero::scalar(&a, &mut scalar);
    times_zero::gpu(&a, &mut on_gpu);
    assert!(scalar[..3].iter().all(|x| x.is_nan()) && scalar[3] == 0.0);
    assert!(same_bits(&on_gpu, &scalar), "GPU {on_gpu:?}, Scalar {scalar:?}");

    let (mut scalar, mut on_gpu) = ([9.0; 4], [9.0; 4]);
    not_itself::scalar(&a, &mut scalar);
    not_itself::gpu(&a, &mut on_gpu);
    assert_eq!(scalar, [1.0, 0.0, 0.0, 0.0]);
    assert!(same_bits(&on_gpu, &scalar), "GPU {on_gpu:?}, Scalar {scalar:?}");

    // Finite inputs, ∞ and NaN inside: the call runs on the host and gives Rust's NaN.
    let a = [3e30f32, 1.0, -2e10, 0.5];
    let (mut scalar, mut on_gpu) = ([9.0; 4], [9.0; 4]);
    overflow_then_zero::scalar(&a, &mut scalar);
    overflow_then_zero::gpu(&a, &mut on_gpu);
    assert!(scalar[0].is_nan() && scalar[2].is_nan() && scalar[1] == 1.0);
    assert!(same_bits(&on_gpu, &scalar), "GPU {on_gpu:?}, Scalar {scalar:?}");

    // Finite values all through: on the device, with the same values (the sign of a zero
    // is the one thing the device may change: lavapipe folds `-3.0 * 0.0` to `+0.0`).
    let a: Vec<f32> = (0..200).map(|i| i as f32 * 0.25 - 20.0).collect();
    let before = gpu_loop::runs(file!(), times_zero::KERNEL.spec().gpu_loops[0].line).on_device;
    let (mut scalar, mut on_gpu) = (vec![0.0; 200], vec![0.0; 200]);
    times_zero::scalar(&a, &mut scalar);
    times_zero::gpu(&a, &mut on_gpu);
    assert_eq!(on_gpu, scalar);
    assert!(
        gpu_loop::runs(file!(), times_zero::KERNEL.spec().gpu_loops[0].line).on_device > before,
        "ran on the device"
    );
}

/// Seed 206, kernel `k72`: `(s - s) / x` is `0 / 0 = NaN` for `x = 0`, which `max` ignores.
#[adaptive_kernel(complexity = "Low")]
fn folded_quotient(a: &[f32], b: &[f32], out: &mut [f32], s: f32) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o *= (y.ceil() as i32 as f32).max((s - s) / x);
    }
}

/// Class 1, found again after its fix (seed 206, `k72`): lavapipe folded the quotient
/// `(s - s) / x` to a constant before the shader's NaN test could see `0 / 0`, and the GPU
/// gave `-0.0` where Scalar gives `0.8125` (`-0.8125 · max(-1, NaN)`). A zero divisor now runs the call on the host.
#[test]
fn a_quotient_the_driver_folds_keeps_its_nan() {
    assert!(folded_quotient::KERNEL.spec().gpu_loops[0].on_gpu());
    if !gpu_or_skip() {
        return;
    }
    let line = folded_quotient::KERNEL.spec().gpu_loops[0].line;
    let n = 200;
    let a: Vec<f32> = (0..n).map(|i| if i % 7 == 3 { 0.0 } else { 0.5 + i as f32 }).collect();
    // ceil(b) = -1: max(-1, NaN) is -1, max(-1, 0) would be 0.
    let b: Vec<f32> = (0..n).map(|i| -1.3125 - (i % 5) as f32 * 0.125).collect();
    let before = gpu_loop::runs(file!(), line);
    let (mut scalar, mut on_gpu) = (vec![-0.8125f32; n], vec![-0.8125f32; n]);
    folded_quotient::scalar(&a, &b, &mut scalar, 1.5);
    folded_quotient::gpu(&a, &b, &mut on_gpu, 1.5);
    assert_eq!(scalar[3], 0.8125, "-0.8125 · max(-1, NaN)");
    assert!(same_bits(&on_gpu, &scalar), "GPU {on_gpu:?}, Scalar {scalar:?}");
    let after = gpu_loop::runs(file!(), line);
    assert!(after.special > before.special, "the zero divisor sent the call to the host");

    // No zero divisor: the device computes it, with the same values.
    let a: Vec<f32> = (0..n).map(|i| 0.5 + i as f32).collect();
    let (mut scalar, mut on_gpu) = (vec![-0.8125f32; n], vec![-0.8125f32; n]);
    folded_quotient::scalar(&a, &b, &mut scalar, 1.5);
    folded_quotient::gpu(&a, &b, &mut on_gpu, 1.5);
    assert_eq!(on_gpu, scalar);
    assert!(gpu_loop::runs(file!(), line).on_device > after.on_device, "ran on the device");
}

/// The issue's `mul_add` chain: Scalar's `+∞` for `a = −3.4e38`, `b = ∞`, `s = 2`.
#[adaptive_kernel(complexity = "Low")]
fn mul_add_chain(a: &[f32], b: &[f32], out: &mut [f32], s: f32) {
    for i in 0..out.len() {
        out[i] = (-b[i]).mul_add(-a[i].mul_add(s, b[i] * b[i]), 1.0);
    }
}

/// The GPU contract lets `mul_add` round its product (WGSL's `fma`), which would turn
/// Scalar's `+∞` into NaN here and which `fusion::results_agree` (so `verify`) does not
/// excuse. The device never meets it: an infinite input, or a product that overflows
/// when rounded (`-3e38 · 2`, where the fused `-3e38 · 2 + 3.24e38` is finite), runs
/// the call on the host, so the classes are Scalar's; finite values stay on the device.
#[test]
fn a_gpu_mul_add_keeps_scalars_classes() {
    assert!(mul_add_chain::KERNEL.spec().gpu_loops[0].on_gpu());
    if !gpu_or_skip() {
        return;
    }
    let line = mul_add_chain::KERNEL.spec().gpu_loops[0].line;
    for (a, b) in [(-3.4e38f32, f32::INFINITY), (-3e38, 1.8e19)] {
        let (a, b) = (vec![a; 100], vec![b; 100]);
        let (mut scalar, mut on_gpu) = (vec![9.0; 100], vec![9.0; 100]);
        let before = gpu_loop::runs(file!(), line).on_device;
        mul_add_chain::scalar(&a, &b, &mut scalar, 2.0);
        mul_add_chain::gpu(&a, &b, &mut on_gpu, 2.0);
        assert!(!scalar[0].is_finite(), "{}", scalar[0]);
        assert!(same_bits(&on_gpu, &scalar), "a = {}, b = {}: GPU {}, Scalar {}", a[0], b[0], on_gpu[0], scalar[0]);
        assert_eq!(gpu_loop::runs(file!(), line).on_device, before, "ran on the host");
    }
    let a: Vec<f32> = (0..100).map(|i| i as f32 * 0.37 - 11.0).collect();
    let b: Vec<f32> = (0..100).map(|i| 1.5 - i as f32 * 0.021).collect();
    let before = gpu_loop::runs(file!(), line).on_device;
    let (mut scalar, mut on_gpu) = (vec![0.0; 100], vec![0.0; 100]);
    mul_add_chain::scalar(&a, &b, &mut scalar, 2.0);
    mul_add_chain::gpu(&a, &b, &mut on_gpu, 2.0);
    assert!(gpu_loop::runs(file!(), line).on_device > before, "ran on the device");
    for (g, s) in on_gpu.iter().zip(&scalar) {
        // The inner product rounded (½ ulp of a·s ≤ 2⁻²⁴·|a·s|), carried through the outer one.
        assert!((g - s).abs() <= 1e-5 * (1.0 + s.abs()), "GPU {g}, Scalar {s}");
    }
}

/// Seed 311, kernel `k215`: `s + x` rounds away `s` for a large `x`.
#[adaptive_kernel(complexity = "Low")]
fn cancelled(a: &[f32], out: &mut [f32], s: f32) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = -x + (s + x);
    }
}

/// The second long run (seed 311, `k215`): lavapipe reassociated `-x + (s + x)` into `s`, so the
/// GPU gave `0.1` where each operation rounded as WGSL promises gives `0` (`x = 1e8`) or
/// `0.099999905`. Every float result now goes through an operation the driver cannot see
/// through (`lp_fin`), so each is rounded as written.
#[test]
fn the_driver_does_not_reassociate() {
    assert!(cancelled::KERNEL.spec().gpu_loops[0].on_gpu());
    if !gpu_or_skip() {
        return;
    }
    let line = cancelled::KERNEL.spec().gpu_loops[0].line;
    let a: Vec<f32> =
        (0..256).map(|i| if i % 2 == 0 { 1e8 + i as f32 * 64.0 } else { 3.0 + i as f32 * 0.37 }).collect();
    let before = gpu_loop::runs(file!(), line).on_device;
    let (mut scalar, mut on_gpu) = (vec![0.0; 256], vec![0.0; 256]);
    cancelled::scalar(&a, &mut scalar, 0.1);
    cancelled::gpu(&a, &mut on_gpu, 0.1);
    assert_eq!(scalar[0], 0.0, "0.1 + 1e8 rounds to 1e8");
    assert!(same_bits(&on_gpu, &scalar), "GPU {:?}, Scalar {:?}", &on_gpu[..4], &scalar[..4]);
    assert!(gpu_loop::runs(file!(), line).on_device > before, "ran on the device");
}

#[adaptive_kernel(complexity = "Low")]
fn if_in_cond(a: &[f32], out: &mut [f32], s: f32) {
    for i in 0..out.len() {
        if (if a[i] > 0.0 { a[i] } else { s }) < 0.5 {
            out[i] = 1.0;
        }
    }
}

/// Class 2: an `if` value inside an `if` condition gave a shader naga refused
/// (`no definition in scope for identifier v2`), and the loop ran on the host unseen.
#[test]
fn an_if_value_in_a_condition_runs_on_the_device() {
    assert!(if_in_cond::KERNEL.spec().gpu_loops[0].on_gpu());
    if !gpu_or_skip() {
        return;
    }
    let a: Vec<f32> = (0..300).map(|i| (i as f32 - 150.0) * 0.01).collect();
    let line = if_in_cond::KERNEL.spec().gpu_loops[0].line;
    let before = gpu_loop::runs(file!(), line).on_device;
    let (mut scalar, mut on_gpu) = (vec![0.0; 300], vec![0.0; 300]);
    if_in_cond::scalar(&a, &mut scalar, 0.3);
    if_in_cond::gpu(&a, &mut on_gpu, 0.3);
    assert_eq!(on_gpu, scalar);
    assert!(gpu_loop::runs(file!(), line).on_device > before, "the shader validated and ran on the device");
}

#[adaptive_kernel(complexity = "Low")]
fn sat_tanh(a: &[f32], out: &mut [f32]) {
    for i in 0..out.len().saturating_sub(1) {
        out[i] = a[i].tanh();
    }
}

/// Class 3: the Parallel variant computed `tanh` with the runtime's formula in a loop the
/// SIMD variant could not take (`source`), and the report said nothing of it.
#[test]
fn a_replaced_libm_call_is_reported_for_the_variant_that_replaces_it() {
    let spec = sat_tanh::KERNEL.spec();
    let a: Vec<f32> = (0..1000).map(|i| (i as f32 - 500.0) * 0.013).collect();
    let (mut scalar, mut parallel, mut simd) = (vec![0.0; 1000], vec![0.0; 1000], vec![0.0; 1000]);
    sat_tanh::scalar(&a, &mut scalar);
    sat_tanh::simd(&a, &mut simd);
    sat_tanh::parallel(&a, &mut parallel);
    let replaced = |v: Backend| spec.loops.iter().any(|l| l.variants.contains(&v) && l.vector_math.contains(&"tanh"));
    for (v, got) in [(Backend::Simd, &simd), (Backend::Parallel, &parallel)] {
        if same_bits(got, &scalar) {
            continue;
        }
        assert!(replaced(v), "{v:?} differs from Scalar but its report names no replaced call: {:?}", spec.loops);
        let ulps = adaptive_kernel::math::ulp_bound("tanh").expect("a bound") + 1;
        for (g, s) in got.iter().zip(&scalar) {
            let diff = (g.to_bits() as i64 - s.to_bits() as i64).unsigned_abs();
            assert!(diff <= u64::from(ulps), "{v:?}: {g} against {s}");
        }
    }
    // The Parallel variant does replace it here (its chunks take the loop's plain range).
    assert!(replaced(Backend::Parallel), "{:?}", spec.loops);
}

#[adaptive_kernel(complexity = "Low")]
fn fold_paren(a: &[f32], s: f32) -> f32 {
    a.iter().fold(0.0f32, |acc, &x| acc + (x - s))
}

/// Class 4: `acc + (x - s)` in a fold became `acc += (x - s)` in the expansion, an
/// `unused_parens` error under `#![deny(warnings)]` (this file's first line).
#[test]
fn a_folds_parentheses_do_not_warn() {
    let a: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
    let scalar = fold_paren::scalar(&a, 1.0);
    assert_eq!(scalar, a.iter().fold(0.0f32, |acc, &x| acc + (x - 1.0)));
    let simd = fold_paren::simd(&a, 1.0);
    assert!((simd - scalar).abs() <= 1e-3 * scalar.abs().max(1.0), "{simd} against {scalar}");
    assert!(fold_paren::KERNEL.spec().loops[0].rewritten(), "the fold is still put in lanes");
}

/// Seed 710, kernel `k36`: a root of a subnormal.
#[adaptive_kernel(complexity = "Low")]
fn root_of_tiny(a: &[f32], out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = a[i].powf(0.5);
    }
}

/// Seed 710, kernel `k36`: `(-s).powf(0.5)` with `s = -1e-40` gave `7.7e-20` on lavapipe,
/// where Scalar gives `1e-20`: the shader's `ln` took the subnormal's exponent from `frexp`,
/// which read it as 2^-127. A subnormal argument of `ln` (and so of `powf`) now runs the call
/// on the host; a normal one stays on the device.
#[test]
fn a_power_of_a_subnormal_is_the_hosts() {
    assert!(root_of_tiny::KERNEL.spec().gpu_loops[0].on_gpu());
    if !gpu_or_skip() {
        return;
    }
    let line = root_of_tiny::KERNEL.spec().gpu_loops[0].line;
    let n = 200;
    let mut a: Vec<f32> = (0..n).map(|i| 1.0 + i as f32).collect();
    a[3] = 1e-40;
    let before = gpu_loop::runs(file!(), line);
    let (mut scalar, mut on_gpu) = (vec![0.0f32; n], vec![0.0f32; n]);
    root_of_tiny::scalar(&a, &mut scalar);
    root_of_tiny::gpu(&a, &mut on_gpu);
    assert!((9.99e-21..1.001e-20).contains(&scalar[3]), "{}", scalar[3]);
    assert!(same_bits(&on_gpu, &scalar), "GPU {:?}, Scalar {:?}", &on_gpu[..4], &scalar[..4]);
    let after = gpu_loop::runs(file!(), line);
    assert!(after.special > before.special, "the subnormal sent the call to the host");

    // Normal arguments: on the device, within `powf`'s bound.
    a[3] = 4.0;
    let (mut scalar, mut on_gpu) = (vec![0.0f32; n], vec![0.0f32; n]);
    root_of_tiny::scalar(&a, &mut scalar);
    root_of_tiny::gpu(&a, &mut on_gpu);
    for (g, c) in on_gpu.iter().zip(&scalar) {
        assert!((g - c).abs() <= 8.0 * f32::EPSILON * c.abs(), "GPU {g}, Scalar {c}");
    }
    assert!(gpu_loop::runs(file!(), line).on_device > after.on_device, "ran on the device");
}
