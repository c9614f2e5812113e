//! Loops whose iterations depend on each other, or that touch state no
//! thread may share, as people write them: a histogram (scattered
//! `hist[bin] += 1`: split with a private copy per chunk), a prefix sum (`out[i] = out[i - 1] + x[i]`), loops that
//! leave early (`break`, `return`, `?`), loops that read or bump a `Cell`,
//! `RefCell` or `Rc` value, a generic element type, `&mut Vec<T>`
//! parameters, and methods of an `impl` block. Each must compile as written
//! and give, in every variant, exactly what the loop computes in source order
//! (these results are checked bit for bit against `main`'s own loops).
#![deny(warnings)]

use adaptive_kernel::{adaptive_kernel, with_backend, Backend};
use std::cell::{Cell, RefCell};
use std::ops::{Add, Mul};
use std::rc::Rc;

/// Counts per bin over `[0, 1)`.
#[adaptive_kernel(complexity = "Low", size = x.len())]
fn histogram(x: &[f32], hist: &mut [u32]) {
    let bins = hist.len();
    for &v in x {
        let bin = ((v * bins as f32) as usize).min(bins - 1);
        hist[bin] += 1;
    }
}

/// Running sum, each element from the one before.
#[adaptive_kernel(complexity = "Low")]
fn prefix_sum(x: &[f32], out: &mut [f32]) {
    out[0] = x[0];
    for i in 1..x.len() {
        out[i] = out[i - 1] + x[i];
    }
}

/// Exponential smoothing: a recurrence through the output.
#[adaptive_kernel(complexity = "Low")]
fn smooth(x: &[f32], alpha: f32, out: &mut [f32]) {
    let mut s = x[0];
    for (o, &v) in out.iter_mut().zip(x) {
        s = alpha * v + (1.0 - alpha) * s;
        *o = s;
    }
}

/// The sum up to the first negative value.
#[adaptive_kernel(complexity = "Low")]
fn sum_until_negative(x: &[f32]) -> f32 {
    let mut total = 0.0;
    for &v in x {
        if v < 0.0 {
            break;
        }
        total += v;
    }
    total
}

/// The index of the first value above `limit`, if any.
#[adaptive_kernel(complexity = "Low")]
fn first_above(x: &[f32], limit: f32) -> Option<usize> {
    for i in 0..x.len() {
        if x[i] > limit {
            return Some(i);
        }
    }
    None
}

/// Parses and sums numbers, failing on the first bad one.
#[adaptive_kernel(complexity = "Low", size = fields.len())]
fn parse_sum(fields: &[&str]) -> Result<f32, std::num::ParseFloatError> {
    let mut total = 0.0f32;
    for field in fields {
        total += field.trim().parse::<f32>()?;
    }
    Ok(total)
}

/// Scales by a factor read from a `Cell` on every iteration, counting calls in a `RefCell`.
#[adaptive_kernel(complexity = "Low")]
fn scaled(x: &[f32], factor: &Cell<f32>, calls: &RefCell<Vec<usize>>, out: &mut [f32]) {
    for i in 0..x.len() {
        out[i] = x[i] * factor.get();
        calls.borrow_mut().push(i);
    }
}

/// Weighted sum with the weights behind an `Rc`, shared with the caller.
#[adaptive_kernel(complexity = "Low")]
fn weighted(x: &[f32], weights: Rc<Vec<f32>>, out: &mut [f32]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = x[i] * weights[i % weights.len()];
    }
}

/// A dot product over any element type that adds and multiplies.
#[adaptive_kernel(complexity = "Low")]
fn generic_dot<T: Copy + Add<Output = T> + Mul<Output = T>>(a: &[T], b: &[T], zero: T) -> T {
    let mut acc = zero;
    for i in 0..a.len() {
        acc = acc + a[i] * b[i];
    }
    acc
}

/// Element-wise scaling of a `&mut Vec<T>`, generic.
#[adaptive_kernel(complexity = "Low")]
fn scale_vec<T: Copy + Mul<Output = T>>(v: &mut Vec<T>, s: T) {
    for x in v.iter_mut() {
        *x = *x * s;
    }
}

/// Appends the positive values to `out`, a growing `&mut Vec<f32>`.
#[adaptive_kernel(complexity = "Low")]
fn keep_positive(x: &[f32], out: &mut Vec<f32>) {
    for &v in x {
        if v > 0.0 {
            out.push(v);
        }
    }
}

/// A 1-D heat rod, updated by a method.
struct Rod {
    t: Vec<f32>,
    next: Vec<f32>,
    k: f32,
}

impl Rod {
    /// One explicit step of `t += k·(t[i−1] − 2t[i] + t[i+1])`, ends fixed.
    #[adaptive_kernel(complexity = "Low", size = self.t.len())]
    fn step(&mut self) {
        let n = self.t.len();
        for i in 1..n - 1 {
            self.next[i] = self.t[i] + self.k * (self.t[i - 1] - 2.0 * self.t[i] + self.t[i + 1]);
        }
        self.next[0] = self.t[0];
        self.next[n - 1] = self.t[n - 1];
        std::mem::swap(&mut self.t, &mut self.next);
    }

    /// Total heat, a reduction over a field.
    #[adaptive_kernel(complexity = "Low", size = self.t.len())]
    fn total(&self) -> f32 {
        let mut s = 0.0f32;
        for v in &self.t {
            s += v;
        }
        s
    }
}

fn values(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7_919) % 1_000) as f32 / 1_000.0).collect()
}

fn main() {
    let x = values(1_001);
    let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits());

    let mut want = vec![0u32; 10];
    for &v in &x {
        want[((v * 10.0) as usize).min(9)] += 1;
    }
    for f in [histogram, histogram::scalar, histogram::simd, histogram::parallel] {
        let mut hist = vec![0u32; 10];
        f(&x, &mut hist);
        assert_eq!(hist, want);
    }

    let mut want = vec![0.0f32; x.len()];
    want[0] = x[0];
    for i in 1..x.len() {
        want[i] = want[i - 1] + x[i];
    }
    for f in [prefix_sum, prefix_sum::scalar, prefix_sum::simd] {
        let mut out = vec![0.0; x.len()];
        f(&x, &mut out);
        assert!(same(&out, &want));
    }

    let mut s = x[0];
    let want: Vec<f32> = x
        .iter()
        .map(|&v| {
            s = 0.3 * v + 0.7 * s;
            s
        })
        .collect();
    for f in [smooth, smooth::scalar, smooth::simd] {
        let mut out = vec![0.0; x.len()];
        f(&x, 0.3, &mut out);
        assert!(same(&out, &want));
    }

    let mut with_negative = x.clone();
    with_negative[500] = -1.0;
    let mut want = 0.0f32;
    for &v in &with_negative[..500] {
        want += v;
    }
    for f in [sum_until_negative, sum_until_negative::scalar, sum_until_negative::simd] {
        assert_eq!(f(&with_negative).to_bits(), want.to_bits());
    }

    for f in [first_above, first_above::scalar, first_above::simd] {
        assert_eq!(f(&x, 0.995), x.iter().position(|&v| v > 0.995));
        assert_eq!(f(&x, 2.0), None);
    }

    for f in [parse_sum, parse_sum::scalar, parse_sum::simd] {
        assert_eq!(f(&["1.5", " 2", "0.25"]), Ok(3.75));
        assert!(f(&["1", "x", "2"]).is_err());
    }

    for f in [scaled, scaled::scalar, scaled::simd] {
        let (factor, calls) = (Cell::new(2.0f32), RefCell::new(Vec::new()));
        let mut out = vec![0.0; x.len()];
        f(&x, &factor, &calls, &mut out);
        assert!(same(&out, &x.iter().map(|v| v * 2.0).collect::<Vec<_>>()));
        assert_eq!(*calls.borrow(), (0..x.len()).collect::<Vec<_>>(), "every iteration, in order");
    }

    let w = Rc::new(vec![1.0f32, -1.0, 0.5]);
    let want: Vec<f32> = x.iter().enumerate().map(|(i, v)| v * w[i % 3]).collect();
    for f in [weighted, weighted::scalar, weighted::simd] {
        let mut out = vec![0.0; x.len()];
        f(&x, Rc::clone(&w), &mut out);
        assert!(same(&out, &want));
    }
    assert_eq!(Rc::strong_count(&w), 1, "every clone dropped");

    let ints: Vec<i64> = (0..100).collect();
    assert_eq!(generic_dot(&ints, &ints, 0), 328_350);
    assert_eq!(generic_dot::scalar(&ints, &ints, 0), 328_350);
    let mut want = 0.0f64;
    for v in &x {
        want += f64::from(*v) * f64::from(*v);
    }
    let xs: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    assert_eq!(generic_dot::simd(&xs, &xs, 0.0).to_bits(), want.to_bits());

    let mut v: Vec<f32> = x.clone();
    scale_vec(&mut v, 0.5);
    scale_vec::scalar(&mut v, 2.0);
    scale_vec::simd(&mut v, 4.0);
    assert!(same(&v, &x.iter().map(|a| a * 0.5 * 2.0 * 4.0).collect::<Vec<_>>()));

    let signed: Vec<f32> = x.iter().map(|v| v - 0.5).collect();
    let want: Vec<f32> = signed.iter().copied().filter(|&v| v > 0.0).collect();
    for f in [keep_positive, keep_positive::scalar, keep_positive::simd] {
        let mut out = vec![9.0];
        f(&signed, &mut out);
        assert_eq!(out[0], 9.0);
        assert!(same(&out[1..], &want));
    }

    let start: Vec<f32> = (0..50).map(|i| if i == 25 { 100.0 } else { 0.0 }).collect();
    let mut want = start.clone();
    for _ in 0..10 {
        let t = want.clone();
        for i in 1..49 {
            want[i] = t[i] + 0.25 * (t[i - 1] - 2.0 * t[i] + t[i + 1]);
        }
    }
    let mut total = 0.0f32;
    for v in &want {
        total += v;
    }
    for backend in [None, Some(Backend::Scalar), Some(Backend::Simd)] {
        let mut rod = Rod { t: start.clone(), next: vec![0.0; 50], k: 0.25 };
        let run = |rod: &mut Rod| {
            for _ in 0..10 {
                rod.step();
            }
            rod.total()
        };
        let heat = match backend {
            None => run(&mut rod),
            Some(b) => with_backend(b, || run(&mut rod)),
        };
        assert!(same(&rod.t, &want), "{backend:?}");
        // A sum over 50 values: regrouping may move it by a few ulp.
        assert!((heat - total).abs() <= 1e-5 * total, "{backend:?}: {heat} vs {total}");
    }
}
