//! Numerical code as it is usually written, with plain loops: every float
//! reduction in it is put in lanes by the SIMD variant (the report says so),
//! each compiles warning-free, and its SIMD variant agrees with its Scalar
//! variant to a few ulps of the magnitudes summed.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use adaptive_kernel::adaptive_kernel;

/// Nearest centroid of each point (k-means' assignment step); points and centroids are rows of `d`.
#[adaptive_kernel(complexity = "High", size = n * k * d)]
fn assign_clusters(points: &[f32], centroids: &[f32], labels: &mut [usize], n: usize, k: usize, d: usize) {
    for i in 0..n {
        let p = &points[i * d..(i + 1) * d];
        let mut best = f32::MAX;
        let mut best_c = 0;
        for c in 0..k {
            let q = &centroids[c * d..(c + 1) * d];
            let mut dist = 0.0;
            for j in 0..d {
                let t = p[j] - q[j];
                dist += t * t;
            }
            if dist < best {
                best = dist;
                best_c = c;
            }
        }
        labels[i] = best_c;
    }
}

/// Softened gravitational accelerations of `n` bodies, O(n²).
#[adaptive_kernel(complexity = "High", size = x.len() * x.len())]
#[allow(clippy::too_many_arguments)]
fn accelerations(
    x: &[f32],
    y: &[f32],
    z: &[f32],
    mass: &[f32],
    ax: &mut [f32],
    ay: &mut [f32],
    az: &mut [f32],
    softening: f32,
) {
    let n = x.len();
    for i in 0..n {
        let (xi, yi, zi) = (x[i], y[i], z[i]);
        let (mut fx, mut fy, mut fz) = (0.0f32, 0.0f32, 0.0f32);
        for j in 0..n {
            if i == j {
                continue;
            }
            let dx = x[j] - xi;
            let dy = y[j] - yi;
            let dz = z[j] - zi;
            let r2 = dx * dx + dy * dy + dz * dz + softening;
            let inv_r3 = 1.0 / (r2 * r2.sqrt());
            fx += dx * inv_r3 * mass[j];
            fy += dy * inv_r3 * mass[j];
            fz += dz * inv_r3 * mass[j];
        }
        ax[i] = fx;
        ay[i] = fy;
        az[i] = fz;
    }
}

/// Lennard-Jones-style pair energy with a cutoff, in `f64`.
#[adaptive_kernel(complexity = "High", size = pos.len() * pos.len())]
fn pair_energy(pos: &[f64], cutoff: f64) -> f64 {
    let n = pos.len();
    let mut energy: f64 = 0.0;
    for i in 0..n {
        let pi = pos[i];
        let mut e_i = 0.0;
        for j in i + 1..n {
            let r = (pos[j] - pi).abs() + 0.5;
            if r > cutoff {
                continue;
            }
            let s6 = (1.0 / r).powi(6);
            e_i += 4.0 * (s6 * s6 - s6);
        }
        energy += e_i;
    }
    energy
}

/// Gravitational potential of each body in one dimension, skipping itself.
#[adaptive_kernel(complexity = "High", size = x.len() * x.len())]
fn potentials(x: &[f64], mass: &[f64], phi: &mut [f64]) {
    for (i, p) in phi.iter_mut().enumerate() {
        let mut acc = 0.0;
        for (j, &xj) in x.iter().enumerate() {
            if i == j {
                continue;
            }
            acc -= mass[j] / (xj - x[i]).abs().max(1e-3);
        }
        *p = acc;
    }
}

/// Layer normalisation of each row of `d`.
#[adaptive_kernel(complexity = "Medium")]
fn layer_norm(x: &[f32], out: &mut [f32], d: usize, eps: f32) {
    for (row, out_row) in x.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
        let mut mean = 0.0;
        for v in row {
            mean += v;
        }
        mean /= d as f32;
        let mut var = 0.0;
        for v in row.iter() {
            let c = v - mean;
            var += c * c;
        }
        var /= d as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for (o, v) in out_row.iter_mut().zip(row) {
            *o = (v - mean) * inv;
        }
    }
}

/// Row-wise softmax, in place.
#[adaptive_kernel(complexity = "Medium")]
fn softmax_rows(x: &mut [f32], d: usize) {
    for row in x.chunks_mut(d) {
        let mut max = f32::NEG_INFINITY;
        for &v in row.iter() {
            max = max.max(v);
        }
        let mut sum = 0.0f32;
        for i in 0..row.len() {
            sum += (row[i] - max).exp();
        }
        for v in row.iter_mut() {
            *v = (*v - max).exp() / sum;
        }
    }
}

/// Cosine similarity: three sums in one pass.
#[adaptive_kernel(complexity = "Medium")]
fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// Weighted mean and variance, in `f64`.
#[adaptive_kernel(complexity = "Medium")]
fn weighted_stats(x: &[f64], w: &[f64]) -> (f64, f64) {
    let n = x.len().min(w.len());
    let mut sw: f64 = 0.0;
    let mut swx: f64 = 0.0;
    for i in 0..n {
        sw += w[i];
        swx += w[i] * x[i];
    }
    let mean = swx / sw;
    let mut swd = 0.0;
    for i in 0..n {
        let dev = x[i] - mean;
        swd += w[i] * dev * dev;
    }
    (mean, swd / sw)
}

/// Correlation of a signal's first half with its second half.
#[adaptive_kernel(complexity = "Medium")]
fn half_correlation(signal: &[f32]) -> f32 {
    let half = signal.len() / 2;
    let (left, right) = signal.split_at(half);
    let mut corr = 0.0;
    for i in 0..half {
        corr += left[i] * right[i];
    }
    corr
}

/// Moving average over windows of `w`.
#[adaptive_kernel(complexity = "Medium")]
fn moving_average(x: &[f32], out: &mut [f32], w: usize) {
    for i in 0..out.len() {
        let window = &x[i..i + w];
        let mut s = 0.0;
        for v in window {
            s += v;
        }
        out[i] = s / w as f32;
    }
}

/// Gaussian kernel density estimate at each query point, in `f64`.
#[adaptive_kernel(complexity = "High", size = queries.len() * data.len())]
fn density(queries: &[f64], data: &[f64], bandwidth: f64, out: &mut [f64]) {
    let norm = 1.0 / (data.len() as f64 * bandwidth * (2.0 * std::f64::consts::PI).sqrt());
    for (q, o) in queries.iter().zip(out.iter_mut()) {
        let mut dens = 0.0;
        for &xi in data.iter() {
            let u = (q - xi) / bandwidth;
            dens += (-0.5 * u * u).exp();
        }
        *o = dens * norm;
    }
}

/// C = A·B, the textbook triple loop (A is m×k, B is k×n, row-major).
#[adaptive_kernel(complexity = "High", size = m * k * n)]
fn matmul_naive(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for p in 0..k {
                acc += a[i * k + p] * b[p * n + j];
            }
            c[i * n + j] = acc;
        }
    }
}

/// L1 and L∞ distances between rows, and the largest element, with typed and untyped accumulators.
#[adaptive_kernel(complexity = "Medium")]
fn norms(x: &[f32], y: &[f32]) -> (f32, f32, f32) {
    let mut l1 = 0.0;
    let mut linf: f32 = 0.0;
    let mut top = f32::MIN;
    for i in 0..x.len() {
        let diff = (x[i] - y[i]).abs();
        l1 += diff;
        linf = linf.max(diff);
        top = f32::max(top, x[i]);
    }
    (l1, linf, top)
}

/// A dot product accumulated in `f64`, skipping non-finite pairs.
#[adaptive_kernel(complexity = "Medium")]
fn robust_dot(a: &[f32], b: &[f32]) -> f64 {
    let mut total = 0.0_f64;
    for (x, y) in a.iter().zip(b.iter()) {
        if x.is_finite() && y.is_finite() {
            total += f64::from(*x) * f64::from(*y);
        }
    }
    total
}

/// Euclidean distance, iterator style with a block in the closure.
#[adaptive_kernel(complexity = "Medium")]
fn euclidean(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let d = x - y;
            d * d
        })
        .sum::<f32>()
        .sqrt()
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

/// Within `1e-4` of the larger magnitude (these sums have at most a few thousand terms of like size).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 * a.abs().max(b.abs()).max(1.0)
}

fn close_all(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| close(f64::from(*x), f64::from(*y)))
}

fn main() {
    // Every reduction of every kernel is in lanes, except the sum of the energies around a loop.
    let none: &[&str] = &[];
    for (loops, left_alone) in [
        (assign_clusters::KERNEL.spec().loops, none),
        (accelerations::KERNEL.spec().loops, none),
        (pair_energy::KERNEL.spec().loops, &["effect"]),
        (potentials::KERNEL.spec().loops, none),
        (layer_norm::KERNEL.spec().loops, none),
        (softmax_rows::KERNEL.spec().loops, none),
        (cosine::KERNEL.spec().loops, none),
        (weighted_stats::KERNEL.spec().loops, none),
        (half_correlation::KERNEL.spec().loops, none),
        (moving_average::KERNEL.spec().loops, none),
        (density::KERNEL.spec().loops, none),
        (matmul_naive::KERNEL.spec().loops, none),
        (norms::KERNEL.spec().loops, none),
        (robust_dot::KERNEL.spec().loops, none),
        (euclidean::KERNEL.spec().loops, none),
    ] {
        let reasons: Vec<&str> = loops.iter().filter(|l| !l.rewritten()).map(|l| l.reason).collect();
        assert_eq!(reasons, left_alone, "{loops:?}");
        assert!(loops.iter().any(|l| l.rewritten()), "{loops:?}");
    }
    assert_eq!(layer_norm::KERNEL.spec().loops.len(), 2);
    // The maximum and the sum of exponentials, and the division loop for its `exp`.
    assert_eq!(softmax_rows::KERNEL.spec().loops.len(), 3);
    assert_eq!(weighted_stats::KERNEL.spec().loops.len(), 2);

    let (n, k, d) = (50, 7, 19);
    let (points, centroids) = (data(n * d, 1), data(k * d, 2));
    let (mut simd, mut scalar) = (vec![0; n], vec![0; n]);
    assign_clusters::simd(&points, &centroids, &mut simd, n, k, d);
    assign_clusters::scalar(&points, &centroids, &mut scalar, n, k, d);
    // Distances may round differently; a label may differ only where two centroids tie that closely.
    let dist = |i: usize, c: usize| -> f32 { (0..d).map(|j| (points[i * d + j] - centroids[c * d + j]).powi(2)).sum() };
    for i in 0..n {
        assert!(close(f64::from(dist(i, simd[i])), f64::from(dist(i, scalar[i]))));
    }
    assign_clusters(&points, &centroids, &mut simd, n, k, d);

    let bodies = 300;
    let (x, y, z, m) = (data(bodies, 3), data(bodies, 4), data(bodies, 5), data(bodies, 6));
    let mut a = [vec![0.0; bodies], vec![0.0; bodies], vec![0.0; bodies]];
    let mut b = a.clone();
    let [ax, ay, az] = &mut a;
    accelerations::simd(&x, &y, &z, &m, ax, ay, az, 0.01);
    let [bx, by, bz] = &mut b;
    accelerations::scalar(&x, &y, &z, &m, bx, by, bz, 0.01);
    // Terms of both signs: compare against the sum of magnitudes, not the result.
    for (s, r) in a.iter().zip(&b) {
        for (p, q) in s.iter().zip(r) {
            assert!((p - q).abs() <= 1e-3 * (1.0 + p.abs()), "{p} {q}");
        }
    }
    let [ax, ay, az] = &mut a;
    accelerations(&x, &y, &z, &m, ax, ay, az, 0.01);

    let pos: Vec<f64> = data(200, 7).iter().map(|v| f64::from(*v) * 10.0).collect();
    assert!(close(pair_energy::simd(&pos, 3.0), pair_energy::scalar(&pos, 3.0)));
    let _ = pair_energy(&pos, 3.0);

    let (s, r) = (&mut vec![0.0; pos.len()], &mut vec![0.0; pos.len()]);
    let masses: Vec<f64> = pos.iter().map(|p| p.abs() + 1.0).collect();
    potentials::simd(&pos, &masses, s);
    potentials::scalar(&pos, &masses, r);
    assert!(s.iter().zip(r.iter()).all(|(p, q)| close(*p, *q)));
    potentials(&pos, &masses, s);

    let rows = data(37 * 45, 8);
    let (mut s, mut r) = (vec![0.0; rows.len()], vec![0.0; rows.len()]);
    layer_norm::simd(&rows, &mut s, 45, 1e-5);
    layer_norm::scalar(&rows, &mut r, 45, 1e-5);
    assert!(close_all(&s, &r));
    layer_norm(&rows, &mut s, 45, 1e-5);

    let (mut s, mut r) = (rows.clone(), rows.clone());
    softmax_rows::simd(&mut s, 45);
    softmax_rows::scalar(&mut r, 45);
    assert!(close_all(&s, &r));
    softmax_rows(&mut s, 45);

    let (u, v) = (data(1001, 9), data(1001, 10));
    assert!(close(f64::from(cosine::simd(&u, &v)), f64::from(cosine::scalar(&u, &v))));
    let _ = cosine(&u, &v);

    let xs: Vec<f64> = u.iter().map(|v| f64::from(*v)).collect();
    let ws: Vec<f64> = v.iter().map(|v| f64::from(*v) + 1.5).collect();
    let (sm, sv) = weighted_stats::simd(&xs, &ws);
    let (rm, rv) = weighted_stats::scalar(&xs, &ws);
    assert!(close(sm, rm) && close(sv, rv));
    let _ = weighted_stats(&xs, &ws);

    assert!(close(f64::from(half_correlation::simd(&u)), f64::from(half_correlation::scalar(&u))));
    let _ = half_correlation(&u);

    let (mut s, mut r) = (vec![0.0; 900], vec![0.0; 900]);
    moving_average::simd(&u, &mut s, 101);
    moving_average::scalar(&u, &mut r, 101);
    assert!(close_all(&s, &r));
    moving_average(&u, &mut s, 101);

    let queries: Vec<f64> = xs.iter().take(40).copied().collect();
    let (mut s, mut r) = (vec![0.0; 40], vec![0.0; 40]);
    density::simd(&queries, &xs, 0.3, &mut s);
    density::scalar(&queries, &xs, 0.3, &mut r);
    assert!(s.iter().zip(&r).all(|(p, q)| close(*p, *q)));
    density(&queries, &xs, 0.3, &mut s);

    let (mm, kk, nn) = (9, 70, 11);
    let (ma, mb) = (data(mm * kk, 11), data(kk * nn, 12));
    let (mut s, mut r) = (vec![0.0; mm * nn], vec![0.0; mm * nn]);
    matmul_naive::simd(&ma, &mb, &mut s, mm, kk, nn);
    matmul_naive::scalar(&ma, &mb, &mut r, mm, kk, nn);
    assert!(s.iter().zip(&r).all(|(p, q)| (p - q).abs() <= 1e-4 * kk as f32));
    matmul_naive(&ma, &mb, &mut s, mm, kk, nn);

    let (s1, s2, s3) = norms::simd(&u, &v);
    let (r1, r2, r3) = norms::scalar(&u, &v);
    assert!(close(f64::from(s1), f64::from(r1)) && s2 == r2 && s3 == r3);
    let _ = norms(&u, &v);

    let mut w = u.clone();
    w[3] = f32::NAN;
    w[500] = f32::INFINITY;
    assert!(close(robust_dot::simd(&w, &v), robust_dot::scalar(&w, &v)));
    let _ = robust_dot(&w, &v);
    assert!(close(f64::from(euclidean::simd(&u, &v)), f64::from(euclidean::scalar(&u, &v))));
    let _ = euclidean(&u, &v);
}
