//! The runtime's vector math (`adaptive_kernel::math`), measured: how far each
//! formula is from the correctly rounded result over **every** `f32` (the
//! bound `math::ULP_BOUNDS` states, and the tests check on dense samples
//! only), and how fast a loop of it runs in a SIMD variant against the same
//! loop calling libm.
//!
//! The reference is libm's `f64` function of the argument, rounded to `f32`:
//! within 2⁻²⁹ ulp of the exact result, so a distance it reports is the
//! formula's, but for arguments whose exact result lies within that of a
//! rounding boundary. Each line prints the largest distance in ulps (`ulp`),
//! the largest in fractions of an ulp against the unrounded `f64` (`exact`),
//! and the argument where it occurs.
//!
//! Run: `cargo bench --bench vector_math` (about 5 minutes on 2 vCPUs: every
//! `f32` for each of 7 functions and 3 exponents of `powf`, 10⁸ pairs for
//! `hypot`); `-- --quick` checks every 4,096th `f32` instead (seconds, for CI
//! and for trying changes). Figures: BENCHMARKS.md, "Vector math in lanes".
//!
//! Smoke run (CI: `scripts/bench-smoke`): `cargo bench --bench vector_math -- --test`
//! checks every 2²⁰th `f32` and times each loop once (`common/smoke.rs`).

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use adaptive_kernel::{adaptive_kernel, math};
use rayon::prelude::*;

#[path = "common/smoke.rs"]
mod smoke;

/// The order of `x` among `f32`s (−0 and +0 adjacent, ∞ after `MAX`).
fn order(x: f32) -> i64 {
    let b = x.to_bits() as i32;
    i64::from(if b < 0 { i32::MIN.wrapping_sub(b) } else { b })
}

/// (ulps from `reference` rounded to `f32`, ulps from `reference` itself); NaN must meet NaN.
fn error(ours: f32, reference: f64) -> (u64, f64) {
    let correct = reference as f32;
    if correct.is_nan() || ours.is_nan() {
        return if correct.is_nan() && ours.is_nan() { (0, 0.0) } else { (u64::MAX, f64::INFINITY) };
    }
    let distance = order(ours).abs_diff(order(correct));
    if !correct.is_finite() || !ours.is_finite() {
        return (distance, distance as f64);
    }
    let a = correct.abs();
    let ulp = if a < f32::MIN_POSITIVE { 2f64.powi(-149) } else { 2f64.powi(((a.to_bits() >> 23) as i32) - 150) };
    (distance, (f64::from(ours) - reference).abs() / ulp)
}

/// The worst of `f` over every `stride`-th `f32`: (ulps, fraction, the argument's bits).
fn worst(f: &(dyn Fn(f32) -> f32 + Sync), reference: &(dyn Fn(f64) -> f64 + Sync), stride: u64) -> (u64, f64, u32) {
    (0..(1u64 << 32) / stride)
        .into_par_iter()
        .fold(
            || (0u64, 0.0f64, 0u32),
            |w, n| {
                let bits = (n * stride) as u32;
                let x = f32::from_bits(bits);
                let (d, e) = error(f(x), reference(f64::from(x)));
                if (d, e) > (w.0, w.1) {
                    (d, e, bits)
                } else {
                    w
                }
            },
        )
        .reduce(|| (0, 0.0, 0), |a, b| if (b.0, b.1) > (a.0, a.1) { b } else { a })
}

fn report(name: &str, (ulps, exact, bits): (u64, f64, u32), bound: u32, seconds: f64) {
    let verdict = if ulps <= u64::from(bound) { "within" } else { "OVER" };
    println!(
        "| {name} | {ulps} | {exact:.3} | {:e} (`{bits:#010x}`) | {bound} ({verdict}) | {seconds:.0} s |",
        f32::from_bits(bits)
    );
}

/// A loop of each function, written as users write it: the Scalar variant calls libm, the
/// SIMD variant the runtime's formula.
macro_rules! loops {
    ($($name:ident: |$x:ident| $body:expr;)*) => {$(
        #[adaptive_kernel(complexity = "Low")]
        fn $name(input: &[f32], out: &mut [f32]) {
            for i in 0..input.len() {
                let $x = input[i];
                out[i] = $body;
            }
        }
    )*};
}

loops! {
    exp_loop: |x| x.exp();
    exp2_loop: |x| x.exp2();
    ln_loop: |x| x.ln();
    log2_loop: |x| x.log2();
    tanh_loop: |x| x.tanh();
    sin_loop: |x| x.sin();
    cos_loop: |x| x.cos();
    powf_loop: |x| x.powf(2.2);
    hypot_loop: |x| x.hypot(1.5);
}

type Loop = fn(&[f32], &mut [f32]);

/// Median seconds per call of `f` on `input`, over interleaved rounds with `other`.
fn time_pair(a: Loop, b: Loop, input: &[f32], rounds: usize) -> (f64, f64) {
    let mut out = vec![0.0f32; input.len()];
    let mut times = (Vec::new(), Vec::new());
    for r in 0..rounds {
        for (k, f) in [(r % 2, [a, b][r % 2]), (1 - r % 2, [a, b][1 - r % 2])] {
            let start = Instant::now();
            for _ in 0..20 {
                f(black_box(input), &mut out);
            }
            let t = start.elapsed().as_secs_f64() / 20.0;
            if k == 0 {
                times.0.push(t);
            } else {
                times.1.push(t);
            }
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(times.0), median(times.1))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // Every `f32`, 10⁸ `hypot` pairs and 15 timing rounds; `--quick` thins them out, a smoke
    // run (unoptimised, in CI) further still.
    let (stride, pairs, rounds): (u64, u64, usize) = if quick && !smoke::on() {
        (4096, 1 << 20, 3)
    } else {
        (smoke::pick(1, 1 << 20), smoke::pick(100_000_000, 1 << 12), smoke::pick(15, 1))
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpu
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .unwrap_or(": unknown")
        .trim_start_matches([' ', '\t', ':']);
    println!("vector_math: {model}; {} threads; every {stride}. f32", rayon::current_num_threads());
    println!("\n| function | ulp | exact | at | bound | time |\n|---|---|---|---|---|---|");
    let bound = |name: &str| math::ulp_bound(name).expect("a listed function");
    type Pair = (&'static str, fn(f32) -> f32, fn(f64) -> f64);
    let unary: [Pair; 7] = [
        ("exp", math::exp, f64::exp),
        ("exp2", math::exp2, f64::exp2),
        ("ln", math::ln, f64::ln),
        ("log2", math::log2, f64::log2),
        ("tanh", math::tanh, f64::tanh),
        ("sin", math::sin, f64::sin),
        ("cos", math::cos, f64::cos),
    ];
    for (name, f, reference) in unary {
        let start = Instant::now();
        let w = worst(&f, &reference, stride);
        report(name, w, bound(name), start.elapsed().as_secs_f64());
    }
    for y in [2.2f32, 1.0 / 2.4, -1.5] {
        let start = Instant::now();
        let w = worst(&|x| math::powf(x, y), &|x| x.powf(f64::from(y)), stride);
        report(&format!("powf(x, {y})"), w, bound("powf"), start.elapsed().as_secs_f64());
    }
    let start = Instant::now();
    let w = (0..pairs)
        .into_par_iter()
        .map(|n| {
            let mut s = n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xdead_beef;
            s ^= s >> 29;
            let (a, b) = (f32::from_bits(s as u32), f32::from_bits((s >> 32) as u32));
            let (d, e) = error(math::hypot(a, b), f64::from(a).hypot(f64::from(b)));
            (d, e, a.to_bits())
        })
        .reduce(|| (0, 0.0, 0), |a, b| if (b.0, b.1) > (a.0, a.1) { b } else { a });
    report("hypot", w, bound("hypot"), start.elapsed().as_secs_f64());

    // Speed: a loop of 64K values in a meaningful range, SIMD variant (formula, in lanes)
    // against the Scalar variant (libm), both on one thread.
    println!("\n| loop over 65,536 `f32` | Scalar (libm) | SIMD (formula) | SIMD × Scalar |\n|---|---|---|---|");
    let input: Vec<f32> = (0..1 << 16).map(|i| (i as f32 / 65_536.0) * 20.0 - 10.0).collect();
    let positive: Vec<f32> = input.iter().map(|v| v.abs() + 1e-3).collect();
    let loops: [(&str, Loop, Loop, &[f32]); 9] = [
        ("exp", exp_loop::scalar, exp_loop::simd, &input),
        ("exp2", exp2_loop::scalar, exp2_loop::simd, &input),
        ("ln", ln_loop::scalar, ln_loop::simd, &positive),
        ("log2", log2_loop::scalar, log2_loop::simd, &positive),
        ("tanh", tanh_loop::scalar, tanh_loop::simd, &input),
        ("sin", sin_loop::scalar, sin_loop::simd, &input),
        ("cos", cos_loop::scalar, cos_loop::simd, &input),
        ("powf(x, 2.2)", powf_loop::scalar, powf_loop::simd, &positive),
        ("hypot(x, 1.5)", hypot_loop::scalar, hypot_loop::simd, &input),
    ];
    for (name, scalar, simd, data) in loops {
        let (s, v) = time_pair(scalar, simd, data, rounds);
        println!("| {name} | {:.1} µs | {:.1} µs | {:.1} |", s * 1e6, v * 1e6, s / v);
    }
    // The routed functions exist too; touch them so that they are not dead code.
    let mut out = vec![0.0; 4];
    for f in [exp_loop, exp2_loop, ln_loop, log2_loop, tanh_loop, sin_loop, cos_loop, powf_loop, hypot_loop] {
        f(&positive[..4], &mut out);
    }
}
