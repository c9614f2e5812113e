//! Loops with `exp`, `ln`, `sin`, `cos`, `powf` and short reductions over
//! many items, written from the attribute's documentation only (not from the
//! macro's source), the way statistics, signal and ML code writes them: a
//! log-sum-exp, a softplus, a Gaussian kernel density (an `exp` inside a
//! reduction per query, stored per query), a DFT's bin powers (`sin` and `cos`
//! in two accumulators per bin), a log-likelihood argmax over rows, a nearest
//! centroid whose ties go to the last one (`<=`), and calls the SIMD variant
//! must leave to libm: `exp` of an `f64` computed from `f32` data, a variable
//! exponent, `log10`, and `exp` of a type of the user's own. Every variant
//! compiles warning-free and agrees with `main`'s own loops.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use adaptive_kernel::adaptive_kernel;

/// `log Σ exp(x)`, stable: shift by the maximum first.
#[adaptive_kernel(complexity = "Medium")]
fn log_sum_exp(x: &[f32]) -> f32 {
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let s: f32 = x.iter().map(|&v| (v - m).exp()).sum();
    m + s.ln()
}

/// `ln(1 + eˣ)`, element by element.
#[adaptive_kernel(complexity = "Low")]
fn softplus(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        out[i] = (1.0 + x[i].exp()).ln();
    }
}

/// A Gaussian kernel density estimate at each query point.
#[adaptive_kernel(complexity = "High", size = queries.len() * samples.len())]
fn density(queries: &[f32], samples: &[f32], bandwidth: f32, out: &mut [f32]) {
    let inv = 1.0 / (2.0 * bandwidth * bandwidth);
    for q in 0..queries.len() {
        let mut acc = 0.0f32;
        for s in 0..samples.len() {
            let u = queries[q] - samples[s];
            acc += (-u * u * inv).exp();
        }
        out[q] = acc / samples.len() as f32;
    }
}

/// The power in each of `power.len()` DFT bins of a real signal.
#[adaptive_kernel(complexity = "High", size = x.len() * power.len())]
fn dft_power(x: &[f32], power: &mut [f32]) {
    let n = x.len();
    let w = 2.0 * std::f32::consts::PI / n as f32;
    for k in 0..power.len() {
        let mut re = 0.0f32;
        let mut im = 0.0f32;
        for t in 0..n {
            let a = w * (k * t % n) as f32;
            re += x[t] * a.cos();
            im -= x[t] * a.sin();
        }
        power[k] = re * re + im * im;
    }
}

/// The row (a model's per-feature probabilities) with the highest log-likelihood.
#[adaptive_kernel(complexity = "High", size = probs.len())]
fn most_likely(probs: &[f32], d: usize) -> usize {
    let mut best = 0;
    let mut best_ll = f32::NEG_INFINITY;
    for r in 0..probs.len() / d {
        let mut ll = 0.0f32;
        for j in 0..d {
            ll += probs[r * d + j].ln();
        }
        if ll > best_ll {
            best_ll = ll;
            best = r;
        }
    }
    best
}

/// The nearest centroid, the last one of equals winning (`<=`), 7 centroids of 5 coordinates.
#[adaptive_kernel(complexity = "High", size = centroids.len())]
fn nearest_last(p: &[f32], centroids: &[f32]) -> usize {
    let d = p.len();
    let mut best = usize::MAX;
    let mut best_dist = f32::INFINITY;
    for c in 0..centroids.len() / d {
        let mut dist = 0.0f32;
        for (a, b) in p.iter().zip(&centroids[c * d..(c + 1) * d]) {
            dist += (a - b) * (a - b);
        }
        if dist <= best_dist {
            best_dist = dist;
            best = c;
        }
    }
    best
}

/// Decibels (`log10` stays libm's), `f64` exponentials of `f32` data, a per-element exponent.
#[adaptive_kernel(complexity = "Low")]
fn mixed(x: &[f32], e: &[f32], db: &mut [f32], wide: &mut [f64], pw: &mut [f32]) {
    for i in 0..x.len() {
        db[i] = 20.0 * x[i].abs().max(1e-6).log10() + x[i].exp2();
        let t = f64::from(x[i]);
        wide[i] = t.exp() + (t * 0.5).sin();
        pw[i] = x[i].abs().powf(e[i]) + x[i].abs().sqrt();
    }
}

/// A number type of the user's own with an `exp` method.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Dual {
    v: f32,
    d: f32,
}

impl Dual {
    fn exp(self) -> Dual {
        let e = self.v.exp();
        Dual { v: e, d: self.d * e }
    }
}

/// `exp` of dual numbers: the user's method, not `f32::exp`.
#[adaptive_kernel(complexity = "Low")]
fn dual_exp(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        let y = Dual { v: x[i], d: 1.0 }.exp();
        out[i] = y.v + y.d;
    }
}

fn near(got: f32, want: f32, rel: f32) -> bool {
    (got - want).abs() <= rel * want.abs().max(1.0)
}

fn main() {
    let x: Vec<f32> = (0..301).map(|i| ((i * 37) % 101) as f32 * 0.11 - 5.0).collect();

    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let want = m + x.iter().map(|&v| (v - m).exp()).sum::<f32>().ln();
    for f in [log_sum_exp, log_sum_exp::scalar, log_sum_exp::simd] {
        assert!(near(f(&x), want, 1e-5), "{} vs {want}", f(&x));
    }

    let want: Vec<f32> = x.iter().map(|v| (1.0 + v.exp()).ln()).collect();
    for f in [softplus, softplus::scalar, softplus::simd, softplus::parallel] {
        let mut out = vec![0.0; x.len()];
        f(&x, &mut out);
        assert!(out.iter().zip(&want).all(|(g, w)| near(*g, *w, 1e-5)));
    }

    let queries: Vec<f32> = (0..23).map(|i| i as f32 * 0.4 - 4.0).collect();
    let want: Vec<f32> = queries
        .iter()
        .map(|q| x.iter().map(|s| (-(q - s) * (q - s) / 0.5).exp()).sum::<f32>() / x.len() as f32)
        .collect();
    for f in [density, density::scalar, density::simd, density::parallel] {
        let mut out = vec![0.0; queries.len()];
        f(&queries, &x, 0.5, &mut out);
        assert!(out.iter().zip(&want).all(|(g, w)| near(*g, *w, 1e-4)), "{out:?} vs {want:?}");
    }

    // Two tones, in bins 3 and 10 of 64: their powers stand out by orders of magnitude.
    let n = 64;
    let signal: Vec<f32> = (0..n)
        .map(|t| {
            let a = 2.0 * std::f32::consts::PI * t as f32 / n as f32;
            (3.0 * a).cos() + 0.5 * (10.0 * a).sin()
        })
        .collect();
    for f in [dft_power, dft_power::scalar, dft_power::simd, dft_power::parallel] {
        let mut power = vec![0.0; 13];
        f(&signal, &mut power);
        assert!(near(power[3], 1024.0, 1e-3) && near(power[10], 256.0, 1e-3), "{power:?}");
        assert!(power.iter().enumerate().all(|(k, &p)| k == 3 || k == 10 || p < 1e-3), "{power:?}");
    }

    // 11 rows of 6 probabilities; row 8 is the likeliest by far.
    let d = 6;
    let probs: Vec<f32> = (0..11 * d).map(|i| if i / d == 8 { 0.9 } else { 0.1 + (i % 5) as f32 * 0.05 }).collect();
    for f in [most_likely, most_likely::scalar, most_likely::simd] {
        assert_eq!(f(&probs, d), 8);
    }

    // Centroids 2 and 6 are the same point, at distance 0 from `p`: the last one wins.
    let p = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    let mut centroids: Vec<f32> = (0..7 * 5).map(|i| i as f32 * 3.0).collect();
    centroids[2 * 5..3 * 5].copy_from_slice(&p);
    centroids[6 * 5..7 * 5].copy_from_slice(&p);
    for f in [nearest_last, nearest_last::scalar, nearest_last::simd] {
        assert_eq!(f(&p, &centroids), 6);
    }

    let e: Vec<f32> = (0..x.len()).map(|i| (i % 7) as f32 * 0.3).collect();
    let mut want = (vec![0.0; x.len()], vec![0.0; x.len()], vec![0.0; x.len()]);
    for i in 0..x.len() {
        want.0[i] = 20.0 * x[i].abs().max(1e-6).log10() + x[i].exp2();
        let t = f64::from(x[i]);
        want.1[i] = t.exp() + (t * 0.5).sin();
        want.2[i] = x[i].abs().powf(e[i]) + x[i].abs().sqrt();
    }
    for f in [mixed, mixed::scalar, mixed::simd, mixed::parallel] {
        let mut got = (vec![0.0; x.len()], vec![0.0; x.len()], vec![0.0; x.len()]);
        f(&x, &e, &mut got.0, &mut got.1, &mut got.2);
        assert!(got.0.iter().zip(&want.0).all(|(g, w)| near(*g, *w, 1e-5)));
        assert_eq!(got.1, want.1, "f64 keeps libm");
        assert_eq!(got.2, want.2, "a variable exponent keeps libm");
    }

    let want: Vec<f32> = x.iter().map(|&v| 2.0 * v.exp()).collect();
    for f in [dual_exp, dual_exp::scalar, dual_exp::simd, dual_exp::parallel] {
        let mut out = vec![0.0; x.len()];
        f(&x, &mut out);
        assert!(out.iter().zip(&want).all(|(g, w)| near(*g, *w, 1e-6)));
    }

    // What the reports say: the `f32` calls in lanes, libm kept for the rest, the bins and rows jammed.
    let math = |spec: &adaptive_kernel::kernel::KernelSpec| -> Vec<&'static str> {
        spec.loops.iter().filter(|l| l.rewritten()).flat_map(|l| l.vector_math.iter().copied()).collect()
    };
    assert_eq!(math(softplus::KERNEL.spec()), ["exp", "ln"]);
    assert_eq!(math(dft_power::KERNEL.spec()), ["cos", "sin"]);
    assert_eq!(math(most_likely::KERNEL.spec()), ["ln"]);
    assert_eq!(math(mixed::KERNEL.spec()), ["exp2"]);
    assert_eq!(math(dual_exp::KERNEL.spec()), Vec::<&str>::new());
    for spec in [dft_power::KERNEL.spec(), most_likely::KERNEL.spec()] {
        assert!(spec.loops.iter().any(|l| l.idiom == "for range jam" && l.rewritten()), "{}", spec.name);
    }
}
