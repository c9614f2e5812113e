//! Plain-loop kernels whose top-level loops the GPU variant runs on the device
//! (lavapipe here, `ADAPTIVE_KERNEL_GPU=software`): every loop is reported on
//! the GPU, ran on the device (its run counter says so, not its host fallback),
//! and the GPU variant agrees with Scalar within the precision contract of the
//! macro crate's `shader` docs, every case at each of the sizes 0, 1, 3, 63, 64,
//! 65, 257 (past two dispatches: the limit is lowered to 128 invocations for
//! this file) and one drawn below 400, with NaN and ±∞ where the body passes them.
//! What Rust panics on panics here too, after no GPU result was copied back;
//! what the device cannot take (a wrong type guess, a `usize` over `u32`) runs on
//! the host with the right result.
//!
//! These tests need a device; without one they FAIL, unless
//! `ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1` asks to skip them.
//!
//! # Bounds
//! ε is `f32::EPSILON`; `ulps(n)` means within n units in the last place of
//! Scalar's result (NaN matches NaN, an infinity the same infinity, values within
//! `f32::MIN_POSITIVE` of each other agree: a GPU may flush subnormals).
//!
//! | kernel | bound | why |
//! | --- | --- | --- |
//! | `rust_rules` | exact | `max`/`min`/`clamp`/`abs`/`floor`/`ceil`/`round`, casts: Rust's rules, no rounding |
//! | `response` | ε·Σ\|terms\| | products of `powi` in LLVM's order; the sum may fuse multiply-adds |
//! | `functions` | 8 ULP (`powf` 3 + 2·\|y·ln x\|), and 2⁻²⁴·\|x\| absolute for `sin`/`cos` | the shader's range-reduced formulas |
//! | `stats` | (n + 8)·ε·Σ\|terms\| for the sum; exact for max, min and the count | regrouped per workgroup |
//! | `softmax_rows`, `gravity`, `assign`, `jacobi` | as in `tests/programs.rs` | sums in the body's order, maybe fused |
#![deny(warnings)]
// Most kernels here are called through their variants, not routed.
#![allow(dead_code, clippy::needless_range_loop)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use adaptive_kernel::__private::gpu_loop;
use adaptive_kernel::kernel::KernelSpec;
use adaptive_kernel::ops::gpu;
use adaptive_kernel::{adaptive_kernel, Backend};
use proptest::prelude::*;

mod common;

const EPS: f64 = f32::EPSILON as f64;

/// [`common::gpu_or_skip`]; every dispatch then covers at most 128 invocations, so that
/// the loops' tests cross dispatch boundaries.
fn gpu_or_skip() -> bool {
    let run = common::gpu_or_skip();
    if run {
        gpu_loop::__set_dispatch_limit_for_tests(128);
    }
    run
}

/// How often `spec`'s first loop has run on the device so far.
fn on_device(spec: &KernelSpec) -> u64 {
    gpu_loop::runs(file!(), spec.gpu_loops[0].line).on_device
}

fn on_host(spec: &KernelSpec) -> u64 {
    gpu_loop::runs(file!(), spec.gpu_loops[0].line).on_host
}

/// Every top-level loop of `spec` is reported on the GPU.
fn all_on_gpu(spec: &KernelSpec) {
    assert!(spec.has_gpu, "{}", spec.name);
    for l in spec.gpu_loops {
        assert!(l.on_gpu(), "{}: line {} stays on the host ({})", spec.name, l.line, l.reason);
    }
}

/// Runs `call` and asserts it ran `spec`'s first loop on the device (when it has units).
fn ran_on_device<R>(spec: &KernelSpec, units: usize, call: impl FnOnce() -> R) -> R {
    let before = on_device(spec);
    let out = call();
    if units > 0 {
        assert!(on_device(spec) > before, "{}: the loop did not run on the device ({})", spec.name, gpu::health());
    }
    out
}

/// Runs `call` and asserts it ran `spec`'s first loop on the device, or on the host because a
/// NaN or an infinity was among its values (the GPU contract: the host computes those calls).
/// For drawn inputs, which hold special values.
fn ran_on_device_unless_special<R>(spec: &KernelSpec, units: usize, call: impl FnOnce() -> R) -> R {
    let runs = || gpu_loop::runs(file!(), spec.gpu_loops[0].line);
    let before = runs();
    let out = call();
    let after = runs();
    if units > 0 {
        assert!(
            after.on_device > before.on_device || after.special > before.special,
            "{}: the loop ran neither on the device nor on the host for a special value ({})",
            spec.name,
            gpu::health()
        );
    }
    out
}

/// `g` agrees with `s` within `ulps` units in the last place (see the module docs).
fn within_ulps(g: f32, s: f32, ulps: u32) -> bool {
    if g.to_bits() == s.to_bits() || (g.is_nan() && s.is_nan()) {
        return true;
    }
    if g.is_infinite() || s.is_infinite() || g.is_nan() || s.is_nan() {
        return false;
    }
    if (g - s).abs() <= f32::MIN_POSITIVE {
        return true;
    }
    let ordered = |x: f32| if x.is_sign_negative() { -(x.abs().to_bits() as i64) } else { x.to_bits() as i64 };
    (ordered(g) - ordered(s)).unsigned_abs() <= u64::from(ulps)
}

fn close(what: &str, g: &[f32], s: &[f32], bound: impl Fn(usize) -> f64) {
    assert_eq!(g.len(), s.len(), "{what}: length");
    for (i, (&a, &b)) in g.iter().zip(s).enumerate() {
        let ok = a.to_bits() == b.to_bits()
            || (a.is_nan() && b.is_nan())
            || (a.is_finite() && b.is_finite() && f64::from((a - b).abs()) <= bound(i) + f64::from(f32::MIN_POSITIVE));
        assert!(ok, "{what}: element {i}: GPU {a} vs Scalar {b} (allowed {:e})", bound(i));
    }
}

/// The largest size a case draws, and the length of the inputs drawn for one.
const MAX: usize = 400;

/// The sizes every case runs at: empty, one, a few, around the workgroup (64), past two
/// dispatches of 128, and `drawn` (below [`MAX`]).
fn sizes(drawn: usize) -> [usize; 8] {
    [0, 1, 3, 63, 64, 65, 257, drawn]
}

/// A size below [`MAX`], for [`sizes`].
fn size() -> impl Strategy<Value = usize> {
    0..MAX
}

/// Floats with NaN, ±∞, zeros of both signs and magnitudes up to `max`.
fn special_up_to(max: f32) -> impl Strategy<Value = f32> {
    prop_oneof![
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(-0.0f32),
        6 => -max..max,
    ]
}

fn special() -> impl Strategy<Value = f32> {
    special_up_to(1e4)
}

// ---- kernels ------------------------------------------------------------------------------------

/// Rust's rules for NaN, infinities, rounding and casts, item by item (`max` then `min` on
/// purpose: unlike `clamp`, they drop a NaN).
#[adaptive_kernel(complexity = "Low")]
#[allow(clippy::manual_clamp)]
fn rust_rules(x: &[f32], out: &mut [f32], codes: &mut [i32]) {
    for ((o, c), &v) in out.iter_mut().zip(codes.iter_mut()).zip(x) {
        let bounded = v.max(-100.0).min(100.0) + v.clamp(-2.0, 2.0) + v.abs();
        *o = bounded + v.floor() + v.ceil() + v.round() + (v as i32) as f32 + (v as u32) as f32;
        *c = (v * 1e6) as i32;
    }
}

/// A clamped polynomial.
#[adaptive_kernel(complexity = "Low")]
fn response(x: &[f32], out: &mut [f32], gain: f32) {
    for i in 0..x.len() {
        let t = x[i] * gain;
        out[i] = (0.5 + 1.5 * t - 0.25 * t.powi(3) + 0.01 * t.powi(-2)).clamp(-1e6, 1e6);
    }
}

/// The transcendental functions, one output each.
#[adaptive_kernel(complexity = "Low")]
fn functions(x: &[f32], exp: &mut [f32], ln: &mut [f32], sin: &mut [f32], cos: &mut [f32], rest: &mut [f32]) {
    for i in 0..x.len() {
        let v = x[i];
        exp[i] = (v * 0.01).exp();
        ln[i] = v.ln();
        sin[i] = v.sin();
        cos[i] = v.cos();
        rest[i] = v.tanh() + v.abs().sqrt() + v.abs().powf(0.75) + v.recip();
    }
}

/// A sum, a maximum, a minimum and a count, carried by one loop.
#[adaptive_kernel(complexity = "Medium")]
fn stats(x: &[f32]) -> (f32, f32, f32, usize) {
    let mut sum = 0.0f32;
    let mut hi = f32::NEG_INFINITY;
    let mut lo = f32::INFINITY;
    let mut big = 0usize;
    for &v in x {
        sum += v;
        hi = hi.max(v);
        lo = lo.min(v);
        if v.abs() > 100.0 {
            big += 1;
        }
    }
    (sum, hi, lo, big)
}

/// Softmax of each row; the last row may be short.
#[adaptive_kernel(complexity = "Medium")]
fn softmax_rows(x: &mut [f32], cols: usize) {
    for row in x.chunks_mut(cols) {
        let mut max = f32::NEG_INFINITY;
        for &v in row.iter() {
            if v > max {
                max = v;
            }
        }
        let mut total = 0.0f32;
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            total += *v;
        }
        for v in row.iter_mut() {
            *v /= total;
        }
    }
}

const SOFT: f32 = 1e-2;

/// Pairwise accelerations with softening, and the potential energy.
#[adaptive_kernel(complexity = "High", size = x.len() * x.len())]
fn gravity(x: &[f32], y: &[f32], m: &[f32], ax: &mut [f32], ay: &mut [f32]) -> f32 {
    let n = x.len();
    let mut energy = 0.0f32;
    for i in 0..n {
        let (mut fx, mut fy) = (0.0f32, 0.0f32);
        for j in 0..n {
            let dx = x[j] - x[i];
            let dy = y[j] - y[i];
            let r2 = dx * dx + dy * dy + SOFT;
            let inv = 1.0 / (r2 * r2.sqrt());
            fx += dx * inv * m[j];
            fy += dy * inv * m[j];
            energy -= m[i] * m[j] / r2.sqrt();
        }
        ax[i] = fx;
        ay[i] = fy;
    }
    energy
}

/// k-means assignment: each point's nearest centroid, and the inertia.
#[adaptive_kernel(complexity = "High", size = points.len() * centroids.len())]
fn assign(points: &[f32], centroids: &[f32], d: usize, labels: &mut [usize]) -> f32 {
    let n = points.len() / d;
    let k = centroids.len() / d;
    let mut inertia = 0.0f32;
    for i in 0..n {
        let p = &points[i * d..(i + 1) * d];
        let mut best = 0;
        let mut best_dist = f32::INFINITY;
        for c in 0..k {
            let q = &centroids[c * d..(c + 1) * d];
            let mut dist = 0.0f32;
            for j in 0..d {
                let t = p[j] - q[j];
                dist += t * t;
            }
            if dist < best_dist {
                best_dist = dist;
                best = c;
            }
        }
        labels[i] = best;
        inertia += best_dist;
    }
    inertia
}

/// A 5-point stencil over whole rows, borders copied.
#[adaptive_kernel(complexity = "Medium", size = src.len())]
fn jacobi(src: &[f32], dst: &mut [f32], w: usize) {
    let h = src.len() / w;
    for (y, row) in dst.chunks_exact_mut(w).enumerate() {
        for x in 0..w {
            let at = y * w + x;
            if y == 0 || y + 1 == h || x == 0 || x + 1 == w {
                row[x] = src[at];
            } else {
                row[x] = 0.25 * (src[at - 1] + src[at + 1] + src[at - w] + src[at + w]);
            }
        }
    }
}

/// A 5-point stencil over interior rows, border pixels written in the same loop (the
/// split proves `w - 1` stays in the row for `w >= 1`, which the launch checks).
#[adaptive_kernel(complexity = "Medium", size = src.len())]
fn stencil(src: &[f32], dst: &mut [f32], w: usize, h: usize) {
    for r in 1..h - 1 {
        dst[r * w] = src[r * w];
        dst[r * w + w - 1] = src[r * w + w - 1];
        for c in 1..w - 1 {
            let at = r * w + c;
            dst[r * w + c] = (src[at] + src[at - 1] + src[at + 1] + src[at - w] + src[at + w]) / 5.0;
        }
    }
}

/// Integer arithmetic: wrapping `i32`, `u32` division and remainder, checked `usize`.
#[adaptive_kernel(complexity = "Low")]
fn integers(a: &[i32], b: &[i32], q: &mut [i32], u: &mut [u32], idx: &mut [usize]) {
    for i in 0..a.len() {
        q[i] = a[i].wrapping_add(0) / b[i] + a[i] % b[i];
        u[i] = (a[i] as u32) / 3 + (a[i] as u32) % 7 + ((a[i] as u32) << 3);
        idx[i] = i * 3 + (b[i].unsigned_abs() as usize) / 2;
    }
}

/// Integer arithmetic of the subset alone: wrapping `i32`, `u32` division and remainder, checked `usize`
/// (`abs` on purpose: `unsigned_abs` is not in the subset), and an `i32` and a `u32` sum carried.
#[adaptive_kernel(complexity = "Low")]
#[allow(clippy::cast_abs_to_unsigned)]
fn integer_ops(a: &[i32], b: &[i32], q: &mut [i32], u: &mut [u32], idx: &mut [usize]) -> (i32, u32) {
    let mut signed = 0i32;
    let mut unsigned = 0u32;
    for i in 0..a.len() {
        q[i] = a[i] * 3 - a[i] / b[i] + a[i] % b[i];
        u[i] = (a[i] as u32) / 3 + (a[i] as u32) % 7 + ((a[i] as u32 & 0xffff) << 3) + (b[i] as u32 >> 4);
        idx[i] = i * 3 + (b[i].abs() as usize) / 2;
        signed += a[i] % 1000;
        unsigned += b[i] as u32 & 0xff;
    }
    (signed, unsigned)
}

/// A read past the end on the last item: Scalar panics, so must the GPU variant.
#[adaptive_kernel(complexity = "Low")]
fn shifted(x: &[f32], out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = x[i + 1] * 2.0;
    }
}

/// A buffer whose element type the macro guesses (`vec![0.0; n]`) and the body then makes `f64`.
#[adaptive_kernel(complexity = "Low")]
fn guessed(x: &[f32], out: &mut [f32]) {
    let mut scale = vec![0.0; 1];
    scale[0] = 2.0f64;
    for i in 0..out.len() {
        out[i] = x[i] * scale.len() as f32;
    }
    let _ = scale;
}

/// A sine, for a huge argument.
#[adaptive_kernel(complexity = "Low")]
fn sine(x: &[f32], out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = x[i].sin();
    }
}

/// A `usize` the device cannot hold.
#[adaptive_kernel(complexity = "Low")]
fn far(x: &[f32], out: &mut [f32], offset: usize) {
    for i in 0..out.len() {
        out[i] = x[i] + ((i + offset) % 7) as f32;
    }
}

// ---- tests --------------------------------------------------------------------------------------

#[test]
fn every_kernel_here_runs_its_loops_on_the_gpu_or_says_why_not() {
    for spec in [
        rust_rules::KERNEL.spec(),
        response::KERNEL.spec(),
        functions::KERNEL.spec(),
        stats::KERNEL.spec(),
        softmax_rows::KERNEL.spec(),
        gravity::KERNEL.spec(),
        assign::KERNEL.spec(),
        jacobi::KERNEL.spec(),
        stencil::KERNEL.spec(),
        integer_ops::KERNEL.spec(),
        shifted::KERNEL.spec(),
        guessed::KERNEL.spec(),
        far::KERNEL.spec(),
    ] {
        all_on_gpu(spec);
    }
    // `wrapping_add` and `unsigned_abs` are not in the subset.
    assert_eq!(integers::KERNEL.spec().gpu_loops[0].reason, "call");
    // `a.len()` of an `i32` slice is a `usize` to every rewrite (issue 41): the SIMD rewrite reads
    // the range, and leaves the loop for its `i32` accumulator (it said `for ?` and `source`).
    let sums = &integer_ops::KERNEL.spec().loops[0];
    assert_eq!((sums.idiom, sums.reason), ("for range +=", "type"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4))]

    #[test]
    fn rust_rules_hold_on_the_device(all in prop::collection::vec(special(), MAX), drawn in size()) {
        if !gpu_or_skip() {
            return Ok(());
        }
        for n in sizes(drawn) {
            let x = &all[..n];
            let (mut og, mut os, mut cg, mut cs) = (vec![0.0; n], vec![0.0; n], vec![0; n], vec![0; n]);
            ran_on_device_unless_special(rust_rules::KERNEL.spec(), n, || rust_rules::gpu(x, &mut og, &mut cg));
            rust_rules::scalar(x, &mut os, &mut cs);
            prop_assert_eq!(&cg, &cs, "n = {}", n);
            for i in 0..n {
                prop_assert!(within_ulps(og[i], os[i], 0), "{}: {} vs {}", x[i], og[i], os[i]);
            }
        }
    }

    #[test]
    fn a_polynomial_agrees(all in prop::collection::vec(-30.0f32..30.0, MAX), drawn in size(), gain in 0.1f32..3.0) {
        if !gpu_or_skip() {
            return Ok(());
        }
        for n in sizes(drawn) {
            let x = &all[..n];
            let (mut og, mut os) = (vec![0.0; n], vec![0.0; n]);
            ran_on_device_unless_special(response::KERNEL.spec(), n, || response::gpu(x, &mut og, gain));
            response::scalar(x, &mut os, gain);
            let terms = |i: usize| {
                let t = f64::from(x[i] * gain);
                0.5 + (1.5 * t).abs() + (0.25 * t.powi(3)).abs() + (0.01 * t.powi(-2)).abs()
            };
            close("response", &og, &os, |i| 8.0 * EPS * terms(i));
        }
    }

    #[test]
    fn transcendental_functions_agree(all in prop::collection::vec(special_up_to(8192.0), MAX), drawn in size()) {
        if !gpu_or_skip() {
            return Ok(());
        }
        for n in sizes(drawn) {
            let x = &all[..n];
            let mut g = [vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]];
            let mut s = g.clone();
            {
                let [e, l, si, c, r] = &mut g;
                ran_on_device_unless_special(functions::KERNEL.spec(), n, || functions::gpu(x, e, l, si, c, r));
                let [e, l, si, c, r] = &mut s;
                functions::scalar(x, e, l, si, c, r);
            }
            for i in 0..n {
                prop_assert!(within_ulps(g[0][i], s[0][i], 8), "exp({}): {} vs {}", x[i], g[0][i], s[0][i]);
                prop_assert!(within_ulps(g[1][i], s[1][i], 8), "ln({}): {} vs {}", x[i], g[1][i], s[1][i]);
                for (k, what) in [(2, "sin"), (3, "cos")] {
                    let ok = within_ulps(g[k][i], s[k][i], 8)
                        || (g[k][i] - s[k][i]).abs() <= 2.0 * f32::EPSILON * (1.0 + x[i].abs()) * 0.25;
                    prop_assert!(ok, "{}({}): {} vs {}", what, x[i], g[k][i], s[k][i]);
                }
                let v = f64::from(x[i]);
                let sum = v.tanh().abs() + v.abs().sqrt() + v.abs().powf(0.75) + v.recip().abs();
                let powf_ulps = 3.0 + 2.0 * (0.75 * v.abs().ln()).abs();
                let bound = (16.0 + powf_ulps) * EPS * sum;
                let (a, b) = (g[4][i], s[4][i]);
                prop_assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) || f64::from((a - b).abs()) <= bound,
                    "rest({}): {} vs {} (allowed {:e})", x[i], a, b, bound
                );
            }
        }
    }

    #[test]
    fn reductions_agree(all in prop::collection::vec(special(), MAX), drawn in size()) {
        if !gpu_or_skip() {
            return Ok(());
        }
        for n in sizes(drawn) {
            let x = &all[..n];
            let g = ran_on_device_unless_special(stats::KERNEL.spec(), n, || stats::gpu(x));
            let s = stats::scalar(x);
            prop_assert_eq!((g.1.to_bits(), g.2.to_bits(), g.3), (s.1.to_bits(), s.2.to_bits(), s.3), "n = {}", n);
            let magnitude: f64 = x.iter().map(|v| f64::from(v.abs())).sum();
            close("sum", &[g.0], &[s.0], |_| (n + 8) as f64 * EPS * magnitude);
        }
    }

    #[test]
    fn softmax_rows_agree(drawn in size(), cols in 1usize..20, short in 0usize..20, seed in 0u32..1000) {
        if !gpu_or_skip() {
            return Ok(());
        }
        for rows in sizes(drawn) {
            // The last row `short` items short, when there is one and it keeps an item.
            let n = rows * cols - if rows > 0 { short % cols } else { 0 };
            let x: Vec<f32> =
                (0..n).map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f32 * 0.01 - 5.0).collect();
            let (mut g, mut s) = (x.clone(), x.clone());
            ran_on_device_unless_special(softmax_rows::KERNEL.spec(), n, || softmax_rows::gpu(&mut g, cols));
            softmax_rows::scalar(&mut s, cols);
            close("softmax", &g, &s, |i| (2 * cols + 32) as f64 * EPS * f64::from(s[i]));
        }
    }

    #[test]
    fn gravity_agrees(drawn in size(), seed in 0u32..1000) {
        if !gpu_or_skip() {
            return Ok(());
        }
        for n in sizes(drawn) {
            let f = |k: u32| ((k.wrapping_mul(2654435761) ^ seed) % 2000) as f32 * 0.001 - 1.0;
            let (x, y): (Vec<f32>, Vec<f32>) = (0..n as u32).map(|i| (f(2 * i), f(2 * i + 1))).unzip();
            let m: Vec<f32> = (0..n as u32).map(|i| 0.5 + f(3 * i).abs()).collect();
            let (mut gx, mut gy, mut sx, mut sy) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            let eg = ran_on_device_unless_special(gravity::KERNEL.spec(), n, || gravity::gpu(&x, &y, &m, &mut gx, &mut gy));
            let es = gravity::scalar(&x, &y, &m, &mut sx, &mut sy);
            // Per body, Σ|terms| of its force along one axis; the energy's n² terms likewise.
            let magnitude = |along_x: bool, i: usize| {
                (0..n).map(|j| {
                    let (dx, dy) = (f64::from(x[j] - x[i]), f64::from(y[j] - y[i]));
                    let r2 = dx * dx + dy * dy + f64::from(SOFT);
                    let d = if along_x { dx } else { dy };
                    (d / (r2 * r2.sqrt()) * f64::from(m[j])).abs()
                }).sum::<f64>()
            };
            close("gravity x", &gx, &sx, |i| 2.0 * (n + 16) as f64 * EPS * magnitude(true, i));
            close("gravity y", &gy, &sy, |i| 2.0 * (n + 16) as f64 * EPS * magnitude(false, i));
            let energy: f64 = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| {
                let (dx, dy) = (f64::from(x[j] - x[i]), f64::from(y[j] - y[i]));
                f64::from(m[i] * m[j]) / (dx * dx + dy * dy + f64::from(SOFT)).sqrt()
            }).sum();
            close("energy", &[eg], &[es], |_| 2.0 * (n * n + 16) as f64 * EPS * energy);
        }
    }

    #[test]
    fn kmeans_assignment_agrees(drawn in size(), d in 1usize..5, k in 1usize..6, seed in 0u32..1000) {
        if !gpu_or_skip() {
            return Ok(());
        }
        for n in sizes(drawn) {
            let f = |i: usize| ((i as u32).wrapping_mul(2654435761) ^ seed) % 997;
            let points: Vec<f32> = (0..n * d).map(|i| f(i) as f32 * 0.01).collect();
            let centroids: Vec<f32> = (0..k * d).map(|i| f(i + 7919) as f32 * 0.01).collect();
            let (mut lg, mut ls) = (vec![0usize; n], vec![0usize; n]);
            let ig = ran_on_device_unless_special(assign::KERNEL.spec(), n, || assign::gpu(&points, &centroids, d, &mut lg));
            let is = assign::scalar(&points, &centroids, d, &mut ls);
            // Distances are exact sums of a few squares here only up to rounding: a tie may break
            // the other way, so a differing label must be (nearly) as near.
            for i in 0..n {
                if lg[i] != ls[i] {
                    let dist =
                        |c: usize| (0..d).map(|j| (points[i * d + j] - centroids[c * d + j]).powi(2)).sum::<f32>();
                    prop_assert!((dist(lg[i]) - dist(ls[i])).abs() <= 1e-4 * (1.0 + dist(ls[i])));
                }
            }
            close("inertia", &[ig], &[is], |_| (n + 8) as f64 * 4.0 * EPS * f64::from(is.abs()) + 1e-3);
        }
    }

    /// The centroids every invocation walks are kept in workgroup memory when they fit the
    /// tile (3,520 words beside one reduction's tree) and read from global memory when they
    /// do not: the same labels either way, around the limit too.
    #[test]
    fn centroids_in_workgroup_memory_or_not_give_the_same_labels(
        n in 1usize..300, d in prop_oneof![Just(16usize), Just(11)], extra in 0usize..3, seed in 0u32..1000,
    ) {
        if !gpu_or_skip() {
            return Ok(());
        }
        for k in [2, 3520 / d, 3520 / d + 1 + extra, 400] {
            let f = |i: usize| ((i as u32).wrapping_mul(2654435761) ^ seed) % 997;
            let points: Vec<f32> = (0..n * d).map(|i| f(i) as f32 * 0.01).collect();
            let centroids: Vec<f32> = (0..k * d).map(|i| f(i + 7919) as f32 * 0.01).collect();
            let (mut lg, mut ls) = (vec![0usize; n], vec![0usize; n]);
            let ig = ran_on_device(assign::KERNEL.spec(), n, || assign::gpu(&points, &centroids, d, &mut lg));
            let is = assign::scalar(&points, &centroids, d, &mut ls);
            // lavapipe sums each distance in the body's order, as the host does: the same labels.
            prop_assert_eq!(&lg, &ls, "k = {} ({} centroid values)", k, k * d);
            close("inertia", &[ig], &[is], |_| (n + 8) as f64 * 4.0 * EPS * f64::from(is.abs()) + 1e-3);
        }
    }

    #[test]
    fn a_stencil_over_rows_agrees(drawn in size(), w in 1usize..40, seed in 0u32..1000) {
        if !gpu_or_skip() {
            return Ok(());
        }
        for h in sizes(drawn) {
            let src: Vec<f32> = (0..h * w).map(|i| (((i as u32).wrapping_mul(40503) ^ seed) % 256) as f32).collect();
            let (mut g, mut s) = (vec![0.0; h * w], vec![0.0; h * w]);
            ran_on_device_unless_special(jacobi::KERNEL.spec(), h, || jacobi::gpu(&src, &mut g, w));
            jacobi::scalar(&src, &mut s, w);
            close("jacobi", &g, &s, |i| 4.0 * EPS * f64::from(s[i].abs()));
        }
    }

    #[test]
    fn a_stencil_with_border_writes_agrees(drawn in size(), w in 1usize..40, seed in 0u32..1000) {
        if !gpu_or_skip() {
            return Ok(());
        }
        // `interior` rows between the first and the last.
        for interior in sizes(drawn) {
            let h = interior + 2;
            let src: Vec<f32> = (0..h * w).map(|i| (((i as u32).wrapping_mul(40503) ^ seed) % 256) as f32).collect();
            let (mut g, mut s) = (vec![-1.0; h * w], vec![-1.0; h * w]);
            ran_on_device_unless_special(stencil::KERNEL.spec(), interior, || stencil::gpu(&src, &mut g, w, h));
            stencil::scalar(&src, &mut s, w, h);
            close("stencil", &g, &s, |i| 6.0 * EPS * f64::from(s[i].abs()));
        }
    }

    #[test]
    fn integer_arithmetic_is_rusts(drawn in size(), seed in 0i32..1000) {
        if !gpu_or_skip() {
            return Ok(());
        }
        for n in sizes(drawn) {
            let a: Vec<i32> =
                (0..n as i32).map(|i| i.wrapping_mul(7919).wrapping_add(seed) % 100_000 - 50_000).collect();
            let b: Vec<i32> = (0..n as i32).map(|i| if i % 5 == 0 { -3 } else { i % 13 + 1 }).collect();
            let (mut qg, mut ug, mut ig) = (vec![0; n], vec![0u32; n], vec![0usize; n]);
            let (mut qs, mut us, mut is) = (vec![0; n], vec![0u32; n], vec![0usize; n]);
            let sums = ran_on_device_unless_special(integer_ops::KERNEL.spec(), n, || integer_ops::gpu(&a, &b, &mut qg, &mut ug, &mut ig));
            prop_assert_eq!(sums, integer_ops::scalar(&a, &b, &mut qs, &mut us, &mut is), "n = {}", n);
            prop_assert_eq!((qg, ug, ig), (qs, us, is), "n = {}", n);
        }
    }
}

#[test]
fn what_panics_in_rust_panics_on_the_gpu_too_and_nothing_is_copied_back() {
    if !gpu_or_skip() {
        return;
    }
    let x = vec![1.0f32; 200];
    let mut out = vec![-1.0f32; 200];
    let host_before = on_host(shifted::KERNEL.spec());
    let panicked = catch_unwind(AssertUnwindSafe(|| shifted::gpu(&x, &mut out)));
    assert!(panicked.is_err(), "the read past the end panicked on the host, as Scalar's does");
    assert_eq!(on_host(shifted::KERNEL.spec()), host_before + 1);
    // What the host wrote before it panicked is Scalar's; nothing of the device's came back.
    let mut scalar_out = vec![-1.0f32; 200];
    assert!(catch_unwind(AssertUnwindSafe(|| shifted::scalar(&x, &mut scalar_out))).is_err());
    assert_eq!(out, scalar_out);

    // An integer division by zero likewise.
    let (a, b) = (vec![1i32; 70], vec![0i32; 70]);
    let (mut q, mut u, mut i) = (vec![0; 70], vec![0u32; 70], vec![0usize; 70]);
    assert!(catch_unwind(AssertUnwindSafe(|| integer_ops::gpu(&a, &b, &mut q, &mut u, &mut i))).is_err());
    // And the loop still runs on the device for inputs that do not panic.
    let x = vec![2.0f32; 201];
    let mut out = vec![0.0f32; 200];
    ran_on_device(shifted::KERNEL.spec(), 200, || shifted::gpu(&x, &mut out));
    assert_eq!(out, vec![4.0; 200]);
}

#[test]
fn what_the_device_cannot_take_runs_on_the_host_with_the_right_result() {
    if !gpu_or_skip() {
        return;
    }
    let x: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let (mut g, mut s) = (vec![0.0; 100], vec![0.0; 100]);
    // The macro guessed the buffer's element type; the run-time check saw `f64`.
    let (device, host) = (on_device(guessed::KERNEL.spec()), on_host(guessed::KERNEL.spec()));
    guessed::gpu(&x, &mut g);
    guessed::scalar(&x, &mut s);
    assert_eq!(g, s);
    assert_eq!((on_device(guessed::KERNEL.spec()), on_host(guessed::KERNEL.spec())), (device, host + 1));

    // A sine of an argument beyond the device's argument reduction.
    {
        // A kernel of its own: the proptests call `functions` at the same time.
        let big = vec![1e5f32; 3];
        let (mut g, mut s) = (vec![0.0; 3], vec![0.0; 3]);
        let host = on_host(sine::KERNEL.spec());
        sine::gpu(&big, &mut g);
        sine::scalar(&big, &mut s);
        assert_eq!(g, s);
        assert_eq!(on_host(sine::KERNEL.spec()), host + 1);
        let small = vec![0.5f32; 3];
        ran_on_device(sine::KERNEL.spec(), 3, || sine::gpu(&small, &mut g));
    }

    // A `usize` over `u32::MAX`.
    if usize::BITS > 32 {
        let offset = (u32::MAX as usize) + 5;
        let host = on_host(far::KERNEL.spec());
        far::gpu(&x, &mut g, offset);
        far::scalar(&x, &mut s, offset);
        assert_eq!(g, s);
        assert_eq!(on_host(far::KERNEL.spec()), host + 1);
        ran_on_device(far::KERNEL.spec(), 100, || far::gpu(&x, &mut g, 5));
        far::scalar(&x, &mut s, 5);
        assert_eq!(g, s);
    }
}

#[test]
fn a_routed_call_forced_onto_the_gpu_runs_the_loop_there() {
    if !gpu_or_skip() {
        return;
    }
    // From 0.01: `t.powi(-2)` of 0 is an infinity, which the host computes.
    let x: Vec<f32> = (1..=500).map(|i| i as f32 * 0.01).collect();
    response::KERNEL.force(Some(Backend::Gpu));
    let mut out = vec![0.0; 500];
    ran_on_device(response::KERNEL.spec(), 500, || response(&x, &mut out, 1.5));
    response::KERNEL.force(None);
    let table = response::KERNEL.table().to_string();
    assert!(table.contains("gpu: 1 of 1 top-level loop on the GPU"), "{table}");
    assert!(table.contains(": on the GPU"), "{table}");
}
