//! Numerical code that calls `exp`, `ln`, `tanh`, `sin`, `cos` and friends in
//! its loops, as people write it: numpy-style (`np.exp(x - x.max())`, a
//! log-likelihood, `np.hypot`), activations (sigmoid, tanh, GELU, SiLU),
//! signal code (a chirp, a rotation, a damped sum), image code (gamma with
//! `powf`), information (`-p·log2 p`), each function once at least, written
//! both as methods and as `f32::` paths, in `f32` and in `f64`. Every variant
//! compiles warning-free and agrees with `main`'s own loops (libm, in order)
//! within a few ulps of the largest result.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use adaptive_kernel::adaptive_kernel;

/// `np.exp(x - x.max()) / sum(...)`, as a numpy user writes it in Rust.
#[adaptive_kernel(complexity = "Medium")]
fn softmax(x: &[f32]) -> Vec<f32> {
    let mut m = f32::NEG_INFINITY;
    for &v in x {
        m = m.max(v);
    }
    let mut e: Vec<f32> = x.to_vec();
    let mut z = 0.0f32;
    for v in e.iter_mut() {
        *v = (*v - m).exp();
        z += *v;
    }
    for v in e.iter_mut() {
        *v /= z;
    }
    e
}

/// Mean negative log-likelihood of the labelled classes' probabilities.
#[adaptive_kernel(complexity = "Medium")]
fn nll(p: &[f32]) -> f32 {
    let mut s = 0.0;
    for i in 0..p.len() {
        s -= p[i].ln();
    }
    s / p.len() as f32
}

/// Sigmoid and tanh activations, into two outputs.
#[adaptive_kernel(complexity = "Low")]
fn activations(x: &[f32], sig: &mut [f32], th: &mut [f32]) {
    for i in 0..x.len() {
        sig[i] = 1.0 / (1.0 + f32::exp(-x[i]));
        th[i] = x[i].tanh();
    }
}

/// GELU (tanh form), in place.
#[adaptive_kernel(complexity = "Low")]
fn gelu(x: &mut [f32]) {
    const C: f32 = 0.797_884_6;
    for v in x.iter_mut() {
        let u = *v;
        *v = 0.5 * u * (1.0 + (C * (u + 0.044_715 * u * u * u)).tanh());
    }
}

/// SiLU into `out`.
#[adaptive_kernel(complexity = "Low")]
fn silu(x: &[f32], out: &mut [f32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v / (1.0 + (-v).exp());
    }
}

/// A linear chirp: `sin(2π(f0·t + k·t²/2))` at the sample times `t`.
#[adaptive_kernel(complexity = "Low")]
fn chirp(t: &[f32], out: &mut [f32], f0: f32, k: f32) {
    let two_pi = 2.0 * std::f32::consts::PI;
    for i in 0..t.len() {
        let ti = t[i];
        out[i] = (two_pi * (f0 * ti + 0.5 * k * ti * ti)).sin();
    }
}

/// Rotates points by their own angles: `cos` and `sin` of one argument.
#[adaptive_kernel(complexity = "Low")]
fn rotate(x: &[f32], y: &[f32], a: &[f32], out_x: &mut [f32], out_y: &mut [f32]) {
    for i in 0..x.len() {
        let (c, s) = (a[i].cos(), f32::sin(a[i]));
        out_x[i] = c * x[i] - s * y[i];
        out_y[i] = s * x[i] + c * y[i];
    }
}

/// Gamma-encodes linear light (`x^(1/2.2)`) and squares the result back (`powf(2.0)`).
#[adaptive_kernel(complexity = "Low")]
fn gamma(linear: &[f32], encoded: &mut [f32], squared: &mut [f32]) {
    const INV_GAMMA: f32 = 1.0 / 2.2;
    for i in 0..linear.len() {
        encoded[i] = linear[i].powf(INV_GAMMA);
        squared[i] = encoded[i].powf(2.0);
    }
}

/// `np.hypot(re, im)`, and the magnitudes' `2^x`.
#[adaptive_kernel(complexity = "Low")]
fn magnitudes(re: &[f32], im: &[f32], out: &mut [f32]) {
    for i in 0..re.len() {
        out[i] = re[i].hypot(im[i]).exp2();
    }
}

/// Shannon entropy in bits.
#[adaptive_kernel(complexity = "Medium")]
fn entropy(p: &[f32]) -> f32 {
    p.iter().map(|&q| -q * q.log2()).sum::<f32>()
}

/// The same entropy in `f64`: libm in every variant.
#[adaptive_kernel(complexity = "Medium")]
fn entropy_f64(p: &[f64]) -> f64 {
    let mut h = 0.0f64;
    for &q in p {
        h -= q * q.log2();
    }
    h
}

/// Within `ulps` units of the largest magnitude of `want` (the SIMD variant's formulas
/// are within 1 ulp of each result; sums regroup).
fn close(got: &[f32], want: &[f32], ulps: f32) {
    let scale = want.iter().fold(1.0f32, |m, w| m.max(w.abs()));
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= ulps * f32::EPSILON * scale || (g.is_nan() && w.is_nan()), "{g} vs {w}");
    }
}

fn main() {
    let x: Vec<f32> = (0..333).map(|i| ((i * 71) % 97) as f32 * 0.13 - 6.0).collect();
    let p: Vec<f32> = x.iter().map(|v| 1.0 / (1.0 + v * v)).collect();

    let m = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let e: Vec<f32> = x.iter().map(|v| (v - m).exp()).collect();
    let z: f32 = e.iter().sum();
    let want: Vec<f32> = e.iter().map(|v| v / z).collect();
    for f in [softmax, softmax::scalar, softmax::simd] {
        close(&f(&x), &want, 8.0);
    }

    let want = p.iter().map(|q| -q.ln()).sum::<f32>() / p.len() as f32;
    for f in [nll, nll::scalar, nll::simd] {
        close(&[f(&p)], &[want], 64.0);
    }

    let sig: Vec<f32> = x.iter().map(|v| 1.0 / (1.0 + (-v).exp())).collect();
    let th: Vec<f32> = x.iter().map(|v| v.tanh()).collect();
    for f in [activations, activations::scalar, activations::simd] {
        let (mut s, mut t) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        f(&x, &mut s, &mut t);
        close(&s, &sig, 4.0);
        close(&t, &th, 4.0);
    }

    let want: Vec<f32> = x.iter().map(|&u| 0.5 * u * (1.0 + (0.797_884_6 * (u + 0.044_715 * u * u * u)).tanh())).collect();
    for f in [gelu, gelu::scalar, gelu::simd] {
        let mut y = x.clone();
        f(&mut y);
        close(&y, &want, 8.0);
    }

    let want: Vec<f32> = x.iter().map(|&v| v / (1.0 + (-v).exp())).collect();
    for f in [silu, silu::scalar, silu::simd] {
        let mut out = vec![0.0; x.len()];
        f(&x, &mut out);
        close(&out, &want, 4.0);
    }

    let t: Vec<f32> = (0..500).map(|i| i as f32 / 500.0).collect();
    let want: Vec<f32> = t.iter().map(|&ti| (2.0 * std::f32::consts::PI * (3.0 * ti + 0.5 * 40.0 * ti * ti)).sin()).collect();
    for f in [chirp, chirp::scalar, chirp::simd] {
        let mut out = vec![0.0; t.len()];
        f(&t, &mut out, 3.0, 40.0);
        close(&out, &want, 4.0);
    }

    let (wx, wy): (Vec<f32>, Vec<f32>) =
        x.iter().zip(&p).map(|(&a, &b)| (a.cos() * a - a.sin() * b, a.sin() * a + a.cos() * b)).unzip();
    for f in [rotate, rotate::scalar, rotate::simd] {
        let (mut ox, mut oy) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        f(&x, &p, &x, &mut ox, &mut oy);
        close(&ox, &wx, 8.0);
        close(&oy, &wy, 8.0);
    }

    let enc: Vec<f32> = p.iter().map(|v| v.powf(1.0 / 2.2)).collect();
    let sq: Vec<f32> = enc.iter().map(|v| v * v).collect();
    for f in [gamma, gamma::scalar, gamma::simd] {
        let (mut a, mut b) = (vec![0.0; p.len()], vec![0.0; p.len()]);
        f(&p, &mut a, &mut b);
        close(&a, &enc, 4.0);
        close(&b, &sq, 8.0);
    }

    let want: Vec<f32> = x.iter().zip(&p).map(|(a, b)| a.hypot(*b).exp2()).collect();
    for f in [magnitudes, magnitudes::scalar, magnitudes::simd] {
        let mut out = vec![0.0; x.len()];
        f(&x, &p, &mut out);
        close(&out, &want, 8.0);
    }

    let want: f32 = p.iter().map(|&q| -q * q.log2()).sum();
    for f in [entropy, entropy::scalar, entropy::simd] {
        close(&[f(&p)], &[want], 64.0);
    }
    let p64: Vec<f64> = p.iter().map(|&q| f64::from(q)).collect();
    let want = p64.iter().fold(0.0, |h, q| h - q * q.log2());
    for f in [entropy_f64, entropy_f64::scalar] {
        assert_eq!(f(&p64).to_bits(), want.to_bits());
    }
    assert!(entropy_f64::KERNEL.spec().loops.iter().all(|l| l.vector_math.is_empty()));
    assert!((entropy_f64::simd(&p64) - want).abs() <= 1e-12 * want.abs());
}
