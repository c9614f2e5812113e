//! Loops with libm calls on `f32` values, as numerical code writes them (a
//! softmax over rows and over one vector, GELU and SiLU activations, a
//! log-likelihood, an oscillator bank, gamma correction, distances with
//! `hypot`): the SIMD and Parallel variants compute them in lanes with the
//! runtime's formulas (`adaptive_kernel::math`) and agree with the Scalar
//! variant, which keeps libm, within the tolerance `verify` uses; each
//! kernel's report names the replaced calls; `exact` keeps libm everywhere.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use adaptive_kernel::compare::{Comparable, Tolerance};
use adaptive_kernel::{adaptive_kernel, math, Kernel, OpComplexity};
use proptest::prelude::*;

/// Each row of `scores` (rows of `cols`) replaced by its softmax.
#[adaptive_kernel(complexity = "Medium", size = scores.len())]
fn softmax_rows(scores: &mut [f32], cols: usize) {
    for row in scores.chunks_mut(cols) {
        let mut max = f32::NEG_INFINITY;
        for &v in row.iter() {
            if v > max {
                max = v;
            }
        }
        let mut sum = 0.0f32;
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            sum += *v;
        }
        for v in row.iter_mut() {
            *v /= sum;
        }
    }
}

/// `x = softmax(x)` with index loops, as llama2.c writes it.
#[adaptive_kernel(complexity = "Medium")]
fn softmax_indexed(x: &mut [f32]) {
    let size = x.len();
    let mut max_val = x[0];
    for i in 1..size {
        if x[i] > max_val {
            max_val = x[i];
        }
    }
    let mut sum = 0.0f32;
    for i in 0..size {
        x[i] = (x[i] - max_val).exp();
        sum += x[i];
    }
    for i in 0..size {
        x[i] /= sum;
    }
}

/// GELU, tanh approximation, into `out`.
#[adaptive_kernel(complexity = "Low")]
fn gelu(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        let v = x[i];
        out[i] = 0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044_715 * v * v * v)).tanh());
    }
}

/// SwiGLU's gate: `h = silu(h) · g`, in place.
#[adaptive_kernel(complexity = "Low")]
fn swiglu(h: &mut [f32], g: &[f32]) {
    for (hi, gi) in h.iter_mut().zip(g) {
        let v = *hi;
        *hi = v / (1.0 + (-v).exp()) * gi;
    }
}

/// The negative log-likelihood of probabilities `p`.
#[adaptive_kernel(complexity = "Medium")]
fn nll(p: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for &q in p {
        s -= q.ln();
    }
    s
}

/// A bank of damped oscillators sampled at `t`: `a·e^(−d·t)·sin(ω·t + φ)`, summed.
#[adaptive_kernel(complexity = "Medium")]
fn oscillators(amp: &[f32], damp: &[f32], omega: &[f32], phase: &[f32], t: f32) -> f32 {
    let mut s = 0.0f32;
    for i in 0..amp.len() {
        s += amp[i] * (-damp[i] * t).exp() * (omega[i] * t + phase[i]).sin();
    }
    s
}

/// A rotation of 2-D points by per-point angles.
#[adaptive_kernel(complexity = "Low")]
fn rotate(x: &[f32], y: &[f32], angle: &[f32], rx: &mut [f32], ry: &mut [f32]) {
    for i in 0..x.len() {
        let (c, s) = (angle[i].cos(), angle[i].sin());
        rx[i] = x[i] * c - y[i] * s;
        ry[i] = x[i] * s + y[i] * c;
    }
}

const GAMMA: f32 = 1.0 / 2.2;

/// Gamma-encode linear intensities; the `log2` of the brightest.
#[adaptive_kernel(complexity = "Low")]
fn gamma_encode(linear: &mut [f32]) -> f32 {
    for v in linear.iter_mut() {
        *v = v.powf(GAMMA);
    }
    let mut brightest = 0.0f32;
    for &v in linear.iter() {
        brightest = brightest.max(v.log2());
    }
    brightest
}

/// Lengths of 2-D vectors and `2^x` of the lengths.
#[adaptive_kernel(complexity = "Low")]
fn lengths(x: &[f32], y: &[f32], len: &mut [f32], scaled: &mut [f32]) {
    for i in 0..x.len() {
        len[i] = x[i].hypot(y[i]);
        scaled[i] = len[i].exp2();
    }
}

/// [`softmax_indexed`] under `exact`: libm in every variant.
#[adaptive_kernel(complexity = "Medium", exact)]
fn softmax_exact(x: &mut [f32]) {
    let size = x.len();
    let mut sum = 0.0f32;
    for i in 0..size {
        x[i] = x[i].exp();
        sum += x[i];
    }
    for i in 0..size {
        x[i] /= sum;
    }
}

/// The tolerance `verify` holds the kernel to at `size`.
fn tolerance(kernel: &Kernel, size: usize) -> Tolerance {
    Tolerance::for_call(kernel.complexity(), size, None).with_vector_math(kernel.spec().vector_math_ulps())
}

fn agree<R: Comparable + std::fmt::Debug>(what: &str, mine: &R, scalar: &R, t: Tolerance) {
    let a = mine.compare(scalar, t);
    assert!(a.agrees, "{what}: {mine:?} vs Scalar {scalar:?} (largest error {:e}, {t:?})", a.largest_error);
}

/// The functions each kernel's loops compute with the runtime's formulas, in order.
fn replaced(kernel: &Kernel) -> Vec<&'static str> {
    kernel.spec().loops.iter().filter(|l| l.rewritten()).flat_map(|l| l.vector_math.iter().copied()).collect()
}

#[test]
fn reports_name_the_replaced_calls_and_their_bounds() {
    assert_eq!(replaced(&softmax_rows::KERNEL), ["exp"]);
    assert_eq!(replaced(&softmax_indexed::KERNEL), ["exp"]);
    assert_eq!(replaced(&gelu::KERNEL), ["tanh"]);
    assert_eq!(replaced(&swiglu::KERNEL), ["exp"]);
    assert_eq!(replaced(&nll::KERNEL), ["ln"]);
    assert_eq!(replaced(&oscillators::KERNEL), ["exp", "sin"]);
    assert_eq!(replaced(&rotate::KERNEL), ["cos", "sin"]);
    assert_eq!(replaced(&gamma_encode::KERNEL), ["powf", "log2"]);
    assert_eq!(replaced(&lengths::KERNEL), ["hypot", "exp2"]);
    assert_eq!(replaced(&softmax_exact::KERNEL), Vec::<&str>::new());
    // Every loop of the softmaxes is in lanes: the maximum, the exponentials with their sum, the division.
    for kernel in [&softmax_rows::KERNEL, &softmax_indexed::KERNEL] {
        let report = adaptive_kernel::report::LoopSummary::new("", kernel.spec().loops).to_string();
        assert!(kernel.spec().loops.iter().filter(|l| !l.reason.is_empty()).count() == 0, "{report}");
        let exp = math::ulp_bound("exp").unwrap();
        assert!(report.contains(&format!("exp in lanes, ≤ {exp} ULP")), "{report}");
    }
    assert_eq!(softmax_rows::KERNEL.spec().vector_math_ulps(), math::ulp_bound("exp").unwrap());
    assert_eq!(softmax_exact::KERNEL.spec().vector_math_ulps(), 0);
    assert_eq!(gelu::KERNEL.complexity(), OpComplexity::Low);
}

/// Values spread like logits or activations, with the special values mixed in.
fn values(raw: &[(u8, f32)]) -> Vec<f32> {
    raw.iter()
        .map(|&(kind, v)| match kind % 16 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => 0.0,
            4 => -0.0,
            5 => v * 1e-30,
            6 => v * 60.0,
            _ => v,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn softmaxes_agree_with_scalar(raw in prop::collection::vec((any::<u8>(), -12.0f32..12.0), 1..300), cols in 1usize..70) {
        let x: Vec<f32> = raw.iter().map(|&(_, v)| v).collect();
        let t = tolerance(&softmax_rows::KERNEL, x.len());
        let run = |f: fn(&mut [f32], usize)| { let mut y = x.clone(); f(&mut y, cols); y };
        let scalar = run(softmax_rows::scalar);
        agree("softmax_rows SIMD", &run(softmax_rows::simd), &scalar, t);
        agree("softmax_rows Parallel", &run(softmax_rows::parallel), &scalar, t);
        let x = values(&raw);
        let run = |f: fn(&mut [f32])| { let mut y = x.clone(); f(&mut y); y };
        let t = tolerance(&softmax_indexed::KERNEL, x.len());
        let scalar = run(softmax_indexed::scalar);
        agree("softmax_indexed SIMD", &run(softmax_indexed::simd), &scalar, t);
        let exact = run(softmax_exact::simd);
        prop_assert_eq!(exact.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            run(softmax_exact::scalar).iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    }

    #[test]
    fn activations_agree_with_scalar(raw in prop::collection::vec((any::<u8>(), -9.0f32..9.0), 0..300)) {
        let x = values(&raw);
        let g: Vec<f32> = x.iter().rev().copied().collect();
        let n = x.len();
        let t = tolerance(&gelu::KERNEL, n);
        let mut outs = [vec![0.0; n], vec![0.0; n]];
        gelu::scalar(&x, &mut outs[0]);
        gelu::simd(&x, &mut outs[1]);
        agree("gelu", &outs[1], &outs[0], t);
        let mut h = [x.clone(), x.clone(), x.clone()];
        swiglu::scalar(&mut h[0], &g);
        swiglu::simd(&mut h[1], &g);
        swiglu::parallel(&mut h[2], &g);
        let t = tolerance(&swiglu::KERNEL, n);
        agree("swiglu SIMD", &h[1], &h[0], t);
        agree("swiglu Parallel", &h[2], &h[0], t);
    }

    #[test]
    fn reductions_with_calls_agree_with_scalar(raw in prop::collection::vec((any::<u8>(), 0.001f32..20.0), 0..400), t in 0.0f32..10.0) {
        let p: Vec<f32> = raw.iter().map(|&(_, v)| v).collect();
        let tol = tolerance(&nll::KERNEL, p.len());
        agree("nll", &nll::simd(&p), &nll::scalar(&p), tol);
        let q: Vec<f32> = p.iter().map(|v| v * 0.37).collect();
        let tol = tolerance(&oscillators::KERNEL, p.len());
        agree("oscillators", &oscillators::simd(&p, &q, &p, &q, t), &oscillators::scalar(&p, &q, &p, &q, t), tol);
        let n = p.len();
        let (mut a, mut b) = ([vec![0.0; n], vec![0.0; n]], [vec![0.0; n], vec![0.0; n]]);
        {
            let [a0, a1] = &mut a;
            let [b0, b1] = &mut b;
            rotate::scalar(&p, &q, &p, a0, b0);
            rotate::simd(&p, &q, &p, a1, b1);
        }
        let tol = tolerance(&rotate::KERNEL, n);
        agree("rotate x", &a[1], &a[0], tol);
        agree("rotate y", &b[1], &b[0], tol);
        let mut lin = [p.clone(), p.clone()];
        let m = [gamma_encode::scalar(&mut lin[0]), gamma_encode::simd(&mut lin[1])];
        let tol = tolerance(&gamma_encode::KERNEL, n);
        agree("gamma", &lin[1], &lin[0], tol);
        agree("gamma max", &m[1], &m[0], tol);
        let (mut l, mut s) = ([vec![0.0; n], vec![0.0; n]], [vec![0.0; n], vec![0.0; n]]);
        {
            let [l0, l1] = &mut l;
            let [s0, s1] = &mut s;
            lengths::scalar(&p, &q, l0, s0);
            lengths::simd(&p, &q, l1, s1);
        }
        let tol = tolerance(&lengths::KERNEL, n);
        agree("hypot", &l[1], &l[0], tol);
        agree("exp2", &s[1], &s[0], tol);
    }
}

#[test]
fn routed_calls_run_a_variant_within_the_tolerance() {
    adaptive_kernel::history::set_history(adaptive_kernel::config::HistorySetting::Off);
    let x: Vec<f32> = (0..1000).map(|i| ((i * 37) % 101) as f32 * 0.1 - 5.0).collect();
    let pos: Vec<f32> = x.iter().map(|v| v.abs() + 0.01).collect();
    for _ in 0..20 {
        let mut a = x.clone();
        softmax_rows(&mut a, 100);
        let mut b = x.clone();
        softmax_rows::scalar(&mut b, 100);
        agree("softmax_rows", &a, &b, tolerance(&softmax_rows::KERNEL, x.len()));
        let (mut a, mut b) = (x.clone(), x.clone());
        softmax_indexed(&mut a);
        softmax_exact(&mut b);
        let mut out = vec![0.0; x.len()];
        gelu(&x, &mut out);
        let mut h = x.clone();
        swiglu(&mut h, &x);
        assert!(nll(&pos).is_finite());
        assert!(oscillators(&x, &pos, &x, &pos, 0.5).is_finite());
        let (mut rx, mut ry) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        rotate(&x, &x, &x, &mut rx, &mut ry);
        let mut lin = pos.clone();
        assert!(gamma_encode(&mut lin).is_finite());
        let (mut l, mut s) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        lengths(&x, &x, &mut l, &mut s);
    }
}
