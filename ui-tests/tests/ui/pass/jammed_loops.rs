//! Short reductions inside loops over many items, as people write them: a
//! k-means assignment (the nearest centroid: an argmin), a retrieval by
//! cosine similarity (an argmax, two accumulators per item), a matrix–vector
//! product (a store into each row's own slot), distances to every centroid
//! with a running total, mean distances (a slice's length read after the
//! sum), item counts that leave a remainder (13 centroids, 3
//! rows), `f64` rows, and loops the SIMD variant must leave as they are (an
//! item whose result the next one reads). Every variant compiles
//! warning-free; selections equal `main`'s own loops where no two candidates
//! are close, sums agree within their rounding.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use adaptive_kernel::adaptive_kernel;

/// The nearest of `k` centroids to each of the points (rows of `d`).
#[adaptive_kernel(complexity = "High", size = points.len() / d * centroids.len())]
fn assign(points: &[f32], centroids: &[f32], d: usize, labels: &mut [usize]) {
    let k = centroids.len() / d;
    for i in 0..points.len() / d {
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
    }
}

/// The document most similar to the query (cosine similarity), documents as rows.
#[adaptive_kernel(complexity = "High")]
fn most_similar(query: &[f32], docs: &[f32]) -> usize {
    let d = query.len();
    let mut best = usize::MAX;
    let mut best_score = f32::NEG_INFINITY;
    for r in 0..docs.len() / d {
        let (mut dot, mut norm) = (0.0f32, 0.0f32);
        for j in 0..d {
            dot += query[j] * docs[r * d + j];
            norm += docs[r * d + j] * docs[r * d + j];
        }
        let score = dot / norm.sqrt();
        if score > best_score {
            best_score = score;
            best = r;
        }
    }
    best
}

/// `y = A·x` for a row-major `A` of `y.len()` rows.
#[adaptive_kernel(complexity = "High", size = a.len())]
fn matvec(a: &[f64], x: &[f64], y: &mut [f64]) {
    let n = x.len();
    for i in 0..y.len() {
        let mut acc = 0.0;
        for j in 0..n {
            acc += a[i * n + j] * x[j];
        }
        y[i] = acc;
    }
}

/// Squared distances of `p` to every row, and their sum.
#[adaptive_kernel(complexity = "High", size = rows.len())]
fn distances(p: &[f32], rows: &[f32], out: &mut [f32]) -> f32 {
    let d = p.len();
    let mut total = 0.0f32;
    for r in 0..out.len() {
        let row = &rows[r * d..(r + 1) * d];
        let mut s = 0.0f32;
        for j in 0..d {
            s += (p[j] - row[j]) * (p[j] - row[j]);
        }
        out[r] = s;
        total += s;
    }
    total
}

/// Each row's mean squared distance to `p`: a slice's length read after the reduction.
#[adaptive_kernel(complexity = "High", size = rows.len())]
fn mean_distances(p: &[f32], rows: &[f32], out: &mut [f32]) {
    let d = p.len();
    for r in 0..out.len() {
        let row = &rows[r * d..(r + 1) * d];
        let mut s = 0.0f32;
        for j in 0..d {
            s += (p[j] - row[j]) * (p[j] - row[j]);
        }
        if !p.is_empty() {
            out[r] = s / p.len() as f32;
        }
    }
}

/// Each row's dot with the previous row's result added: an item reads what the one before wrote.
#[adaptive_kernel(complexity = "High", size = a.len())]
fn chained(a: &[f32], x: &[f32], y: &mut [f32]) {
    let n = x.len();
    let mut carry = 0.0f32;
    for i in 0..y.len() {
        let mut acc = carry;
        for j in 0..n {
            acc += a[i * n + j] * x[j];
        }
        y[i] = acc;
        carry = acc * 0.5;
    }
}

fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s % 2000) as f32 / 100.0 - 10.0
        })
        .collect()
}

fn main() {
    // Points scattered around 13 well-separated centroids: no two distances are close.
    let (d, k) = (19, 13);
    let centroids: Vec<f32> = (0..k * d).map(|i| ((i / d) * 40) as f32 + (i % d) as f32).collect();
    let noise = values(101 * d, 7);
    let points: Vec<f32> = (0..101 * d).map(|i| centroids[((i / d) % k) * d + i % d] + noise[i] * 0.1).collect();
    let want: Vec<usize> = (0..101).map(|i| i % k).collect();
    for f in [assign, assign::scalar, assign::simd, assign::parallel] {
        let mut labels = vec![usize::MAX; 101];
        f(&points, &centroids, d, &mut labels);
        assert_eq!(labels, want);
    }

    let docs = values(37 * 24, 3);
    let query: Vec<f32> = docs[29 * 24..30 * 24].iter().map(|v| v * 3.0).collect();
    for f in [most_similar, most_similar::scalar, most_similar::simd] {
        assert_eq!(f(&query, &docs), 29);
    }

    let (rows, n) = (3, 300);
    let a: Vec<f64> = values(rows * n, 11).iter().map(|&v| f64::from(v)).collect();
    let x: Vec<f64> = values(n, 5).iter().map(|&v| f64::from(v)).collect();
    let want: Vec<f64> = (0..rows).map(|i| (0..n).map(|j| a[i * n + j] * x[j]).sum()).collect();
    for f in [matvec, matvec::scalar, matvec::simd, matvec::parallel] {
        let mut y = vec![0.0; rows];
        f(&a, &x, &mut y);
        for (g, w) in y.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-12 * 1000.0);
        }
    }

    let p = values(33, 9);
    let rows_f: Vec<f32> = values(21 * 33, 13);
    let want: Vec<f32> = (0..21).map(|r| (0..33).map(|j| (p[j] - rows_f[r * 33 + j]).powi(2)).sum()).collect();
    for f in [distances, distances::scalar, distances::simd, distances::parallel] {
        let mut out = vec![0.0; 21];
        let total = f(&p, &rows_f, &mut out);
        for (g, w) in out.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0));
        }
        assert!((total - want.iter().sum::<f32>()).abs() <= 1e-3 * total.abs());
    }
    for f in [mean_distances, mean_distances::scalar, mean_distances::simd, mean_distances::parallel] {
        let mut out = vec![0.0; 21];
        f(&p, &rows_f, &mut out);
        for (g, w) in out.iter().zip(&want) {
            assert!((g - w / 33.0).abs() <= 1e-4 * (w / 33.0).abs().max(1.0));
        }
    }

    let a = values(9 * 40, 17);
    let x = values(40, 19);
    let mut want = vec![0.0f32; 9];
    let mut carry = 0.0f32;
    for i in 0..9 {
        let mut acc = carry;
        for j in 0..40 {
            acc += a[i * 40 + j] * x[j];
        }
        want[i] = acc;
        carry = acc * 0.5;
    }
    for f in [chained, chained::scalar, chained::simd] {
        let mut y = vec![0.0; 9];
        f(&a, &x, &mut y);
        for (g, w) in y.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-3 * w.abs().max(1.0));
        }
    }
    let jam = |loops: &[adaptive_kernel::kernel::LoopRewrite]| loops.iter().find(|l| l.idiom == "for range jam").copied();
    for spec in [
        assign::KERNEL.spec(),
        most_similar::KERNEL.spec(),
        matvec::KERNEL.spec(),
        distances::KERNEL.spec(),
        mean_distances::KERNEL.spec(),
    ] {
        assert!(jam(spec.loops).is_some_and(|l| l.rewritten()), "{}", spec.name);
    }
    assert_eq!(jam(chained::KERNEL.spec().loops).map(|l| l.reason), Some("carried"));
}
