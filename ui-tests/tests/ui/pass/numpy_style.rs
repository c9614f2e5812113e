//! Array code as people port it from numpy: element-wise updates over slices
//! (`iter_mut`, `enumerate`, `zip` of mutable items with shared reads, index
//! loops writing `out[i]`), reductions with `let` temporaries and several
//! accumulators, and a matrix–vector product. Each routed call, and each
//! variant called directly, is checked against the same computation written
//! out in `main`: element-wise results bit for bit, reductions within a
//! relative 1e-4 (the SIMD variant may regroup float sums).
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;

/// `out = a * x + y`, numpy's `a * x + y` into a preallocated array.
#[adaptive_kernel(complexity = "Low")]
fn axpy(a: f32, x: &[f32], y: &[f32], out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = a * x[i] + y[i];
    }
}

/// `np.clip(x, lo, hi)` in place.
#[adaptive_kernel(complexity = "Low")]
fn clip(x: &mut [f32], lo: f32, hi: f32) {
    for v in x.iter_mut() {
        if *v < lo {
            *v = lo;
        } else if *v > hi {
            *v = hi;
        }
    }
}

/// `out[i] = i * step + start`, numpy's `arange` times a step, with `enumerate`.
#[adaptive_kernel(complexity = "Low")]
fn linspace_into(out: &mut [f32], start: f32, step: f32) {
    for (i, v) in out.iter_mut().enumerate() {
        *v = start + i as f32 * step;
    }
}

/// `out = np.where(mask > 0, a, b) * scale`, a zip of one mutable and three shared slices.
#[adaptive_kernel(complexity = "Low")]
fn select_scaled(out: &mut [f32], mask: &[f32], a: &[f32], b: &[f32], scale: f32) {
    for (o, ((m, x), y)) in out.iter_mut().zip(mask.iter().zip(a).zip(b)) {
        let picked = if *m > 0.0 { *x } else { *y };
        *o = picked * scale;
    }
}

/// Mean and variance in one pass (two accumulators), as `x.mean()`, `x.var()`.
#[adaptive_kernel(complexity = "Medium")]
fn mean_var(x: &[f32]) -> (f32, f32) {
    let mut sum = 0.0f32;
    let mut sum_sq = 0.0f32;
    for &v in x {
        sum += v;
        sum_sq += v * v;
    }
    let n = x.len() as f32;
    let mean = sum / n;
    (mean, sum_sq / n - mean * mean)
}

/// Weighted squared error with a `let` temporary, as `((p - t) ** 2 * w).sum()`.
#[adaptive_kernel(complexity = "Medium")]
fn weighted_sse(pred: &[f32], target: &[f32], weight: &[f32]) -> f32 {
    let mut total = 0.0;
    for i in 0..pred.len() {
        let err = pred[i] - target[i];
        total += weight[i] * err * err;
    }
    total
}

/// `np.abs(x).max()` and `np.abs(x).sum()` with iterator adaptors.
#[adaptive_kernel(complexity = "Medium")]
fn norms(x: &[f32]) -> (f32, f32) {
    let inf = x.iter().map(|v| v.abs()).fold(0.0f32, f32::max);
    let one: f32 = x.iter().map(|v| v.abs()).sum();
    (inf, one)
}

/// `out = A @ x` for a row-major `rows × cols` matrix, each row a sub-slice.
#[adaptive_kernel(complexity = "High", size = a.len())]
fn matvec(a: &[f32], x: &[f32], cols: usize, out: &mut [f32]) {
    for i in 0..out.len() {
        let row = &a[i * cols..(i + 1) * cols];
        let mut acc = 0.0f32;
        for j in 0..cols {
            acc += row[j] * x[j];
        }
        out[i] = acc;
    }
}

/// k-means' assignment step: `labels[i]` = the nearest centroid to point `i`; the inertia.
#[adaptive_kernel(complexity = "High", size = points.len() / d * centroids.len())]
fn assign(points: &[f32], centroids: &[f32], d: usize, labels: &mut [usize]) -> f32 {
    let n = points.len() / d;
    let k = centroids.len() / d;
    let mut inertia = 0.0;
    for i in 0..n {
        let p = &points[i * d..(i + 1) * d];
        let (mut best, mut best_dist) = (0, f32::MAX);
        for c in 0..k {
            let q = &centroids[c * d..(c + 1) * d];
            let mut dist = 0.0f32;
            for j in 0..d {
                let t = p[j] - q[j];
                dist += t * t;
            }
            if dist < best_dist {
                best = c;
                best_dist = dist;
            }
        }
        labels[i] = best;
        inertia += best_dist;
    }
    inertia
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| (((i as u32).wrapping_mul(2_654_435_761) ^ seed) % 1000) as f32 / 500.0 - 1.0).collect()
}

fn close(got: f32, want: f32) -> bool {
    (got - want).abs() <= 1e-4 * want.abs().max(1.0)
}

fn main() {
    let n = 1_003;
    let (x, y, m) = (data(n, 1), data(n, 2), data(n, 3));
    let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits());

    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| 2.5 * a + b).collect();
    for f in [axpy, axpy::scalar, axpy::simd] {
        let mut out = vec![0.0; n];
        f(2.5, &x, &y, &mut out);
        assert!(same(&out, &want));
    }

    let want: Vec<f32> = x.iter().map(|v| v.clamp(-0.5, 0.25)).collect();
    for f in [clip, clip::scalar, clip::simd] {
        let mut v = x.clone();
        f(&mut v, -0.5, 0.25);
        assert!(same(&v, &want));
    }

    let want: Vec<f32> = (0..n).map(|i| 1.0 + i as f32 * 0.5).collect();
    for f in [linspace_into, linspace_into::scalar, linspace_into::simd] {
        let mut out = vec![0.0; n];
        f(&mut out, 1.0, 0.5);
        assert!(same(&out, &want));
    }

    let want: Vec<f32> = (0..n).map(|i| if m[i] > 0.0 { x[i] } else { y[i] } * 3.0).collect();
    for f in [select_scaled, select_scaled::scalar, select_scaled::simd] {
        let mut out = vec![0.0; n];
        f(&mut out, &m, &x, &y, 3.0);
        assert!(same(&out, &want));
    }

    let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
    let var = x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() / n as f64 - mean * mean;
    for f in [mean_var, mean_var::scalar, mean_var::simd] {
        let (m, v) = f(&x);
        assert!(close(m, mean as f32) && close(v, var as f32), "{m} {v} vs {mean} {var}");
    }

    let sse: f64 = (0..n).map(|i| f64::from(m[i]) * (f64::from(x[i]) - f64::from(y[i])).powi(2)).sum();
    for f in [weighted_sse, weighted_sse::scalar, weighted_sse::simd] {
        assert!(close(f(&x, &y, &m), sse as f32));
    }

    let inf = x.iter().fold(0.0f32, |a, v| a.max(v.abs()));
    let one: f64 = x.iter().map(|v| f64::from(v.abs())).sum();
    for f in [norms, norms::scalar, norms::simd] {
        let (i, o) = f(&x);
        assert!(i == inf && close(o, one as f32), "{i} {o}");
    }

    // Points near 5 well-separated centres (no near-ties), 24 dimensions.
    let (d, k) = (24, 5);
    let centroids: Vec<f32> = (0..k * d).map(|i| if i % d == i / d { 10.0 } else { 0.0 }).collect();
    let points: Vec<f32> = data(n * d, 6).iter().enumerate().map(|(i, v)| v + centroids[(i / d % k) * d + i % d]).collect();
    let want: Vec<usize> = (0..n).map(|i| i % k).collect();
    let inertia: f64 = (0..n)
        .map(|i| (0..d).map(|j| (f64::from(points[i * d + j]) - f64::from(centroids[(i % k) * d + j])).powi(2)).sum::<f64>())
        .sum();
    for f in [assign, assign::scalar, assign::simd] {
        let mut labels = vec![0; n];
        assert!(close(f(&points, &centroids, d, &mut labels), inertia as f32));
        assert_eq!(labels, want);
    }

    let (rows, cols) = (37, 203);
    let a = data(rows * cols, 4);
    let v = data(cols, 5);
    let want: Vec<f64> =
        (0..rows).map(|i| (0..cols).map(|j| f64::from(a[i * cols + j]) * f64::from(v[j])).sum()).collect();
    for f in [matvec, matvec::scalar, matvec::simd] {
        let mut out = vec![0.0; rows];
        f(&a, &v, cols, &mut out);
        assert!(out.iter().zip(&want).all(|(g, w)| close(*g, *w as f32)), "{out:?}");
    }
}
