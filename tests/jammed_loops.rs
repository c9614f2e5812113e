//! Loops over items around a short reduction, which the SIMD variant takes
//! several items at a time (unroll-and-jam), against the Scalar variant (the
//! loops as written): an argmin (k-means assignment), an argmax, a store per
//! item (a matrix–vector product) with a running total, and a reduction
//! with two accumulators per item, at item counts that leave every
//! remainder, dimensions from 0 up to past the wide lanes, in the SIMD and
//! the Parallel variant.
//!
//! Sums agree within `adaptive_kernel::tolerance`'s bound for their terms;
//! a selection is Scalar's wherever no other candidate's sum is within the
//! two sums' bounds of the selected one (where two are that close, either
//! order of rounding may pick either, and both are right).
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use adaptive_kernel::{adaptive_kernel, tolerance};
use proptest::prelude::*;

const EPS: f64 = f32::EPSILON as f64;

/// Nearest centroid per point; the inertia (the sum of the nearest distances).
#[adaptive_kernel(complexity = "High", size = points.len() / d.max(1) * centroids.len())]
fn assign(points: &[f32], centroids: &[f32], d: usize, labels: &mut [usize]) -> f32 {
    let (n, k) = (points.len() / d, centroids.len() / d);
    let mut inertia = 0.0f32;
    for i in 0..n {
        let p = &points[i * d..(i + 1) * d];
        let mut best = usize::MAX;
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

/// The row with the largest dot product with `x`, and each row's dot (a store per row).
#[adaptive_kernel(complexity = "High", size = rows.len())]
fn argmax_dot(rows: &[f32], x: &[f32], dots: &mut [f32]) -> usize {
    let n = x.len();
    let mut best = usize::MAX;
    let mut best_dot = f32::NEG_INFINITY;
    for r in 0..dots.len() {
        let mut s = 0.0f32;
        for j in 0..n {
            s += rows[r * n + j] * x[j];
        }
        dots[r] = s;
        if s > best_dot {
            best_dot = s;
            best = r;
        }
    }
    best
}

/// Per row: the sum and the sum of squares (two accumulators per item).
#[adaptive_kernel(complexity = "High", size = rows.len())]
fn moments(rows: &[f64], d: usize, out: &mut [f64]) {
    for r in 0..out.len() / 2 {
        let row = &rows[r * d..(r + 1) * d];
        let (mut s, mut ss) = (0.0f64, 0.0f64);
        for j in 0..d {
            s += row[j];
            ss += row[j] * row[j];
        }
        out[2 * r] = s;
        out[2 * r + 1] = ss;
    }
}

#[test]
fn the_points_run_in_lanes_and_the_rest_are_jammed() {
    // The points' loop, whose body holds a loop over centroids around a distance: points in
    // lanes, in SIMD and Parallel; the points left over take the centroids 8 at a time.
    let loops = assign::KERNEL.spec().loops;
    let idioms: Vec<(&str, usize)> = loops.iter().map(|l| (l.idiom, l.variants.len())).collect();
    assert_eq!(idioms, [("for range items", 2), ("for range jam", 2), ("for range +=", 2)], "{loops:?}");
}

#[test]
fn the_loops_over_items_are_jammed() {
    for (spec, variants) in [(assign::KERNEL.spec(), 2), (argmax_dot::KERNEL.spec(), 1), (moments::KERNEL.spec(), 2)] {
        let jam = spec.loops.iter().find(|l| l.idiom == "for range jam");
        assert!(jam.is_some_and(|l| l.variants.len() == variants), "{}: {:?}", spec.name, spec.loops);
    }
}

/// The bound within which an `f32` sum of `terms` may differ from another order of it.
fn sum_bound(terms: impl Iterator<Item = f64>, n: usize) -> f64 {
    let abs: f64 = terms.map(f64::abs).sum();
    tolerance::sum_bound(n + 1, abs, EPS)
}

/// `n` values in [-8, 8) from a seed, some repeated so that ties occur.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) % 64) as f32 / 4.0 - 8.0
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn argmin_and_inertia_agree_with_scalar(n in 0usize..40, k in 1usize..30, d in 1usize..80, seed in any::<u64>()) {
        let points = values(n * d, seed);
        let centroids = values(k * d, seed ^ 0x5eed);
        let run = |f: fn(&[f32], &[f32], usize, &mut [usize]) -> f32| {
            let mut labels = vec![0; n];
            let inertia = f(&points, &centroids, d, &mut labels);
            (labels, inertia)
        };
        let (want, inertia) = run(assign::scalar);
        // Point i's distance to centroid c in f64, and the bound of its f32 sum.
        let terms = |i: usize, c: usize| -> Vec<f64> {
            (0..d).map(|j| (f64::from(points[i * d + j]) - f64::from(centroids[c * d + j])).powi(2)).collect()
        };
        let dist = |i: usize, c: usize| terms(i, c).iter().sum::<f64>();
        let bound = |i: usize, c: usize| sum_bound(terms(i, c).into_iter(), d);
        for (variant, (labels, got)) in [("SIMD", run(assign::simd)), ("Parallel", run(assign::parallel)), ("routed", run(assign))] {
            for i in 0..n {
                let w = want[i];
                // Another centroid within the two sums' bounds of Scalar's choice: either may win.
                let close = (0..k).any(|c| c != w && (dist(i, c) - dist(i, w)).abs() <= bound(i, c) + bound(i, w));
                if !close {
                    prop_assert_eq!(labels[i], w, "{} point {}", variant, i);
                }
            }
            let all: f64 = (0..n).map(|i| (0..d).map(|j| f64::from(points[i * d + j]).powi(2) + 256.0).sum::<f64>()).sum();
            let allowed = tolerance::sum_bound(n * d + n + 1, 4.0 * all, EPS);
            prop_assert!((f64::from(got) - f64::from(inertia)).abs() <= allowed, "{} inertia {} vs {}", variant, got, inertia);
        }
    }

    #[test]
    fn argmax_and_stores_agree_with_scalar(rows in 0usize..30, n in 0usize..300, seed in any::<u64>()) {
        let a = values(rows * n, seed);
        let x = values(n, !seed);
        let run = |f: fn(&[f32], &[f32], &mut [f32]) -> usize| {
            let mut dots = vec![0.0; rows];
            let best = f(&a, &x, &mut dots);
            (best, dots)
        };
        let (want, want_dots) = run(argmax_dot::scalar);
        // (The row loop keeps two values per row: no Parallel variant.)
        for (variant, (best, dots)) in [("SIMD", run(argmax_dot::simd)), ("routed", run(argmax_dot))] {
            let bound = |r: usize| sum_bound((0..n).map(|j| f64::from(a[r * n + j]) * f64::from(x[j])), n);
            for r in 0..rows {
                prop_assert!(f64::from((dots[r] - want_dots[r]).abs()) <= 2.0 * bound(r), "{} row {}", variant, r);
            }
            if rows > 0 {
                let close = (0..rows).any(|r| r != want && f64::from((want_dots[r] - want_dots[want]).abs()) <= 2.0 * (bound(r) + bound(want)));
                if !close {
                    prop_assert_eq!(best, want, "{}", variant);
                }
            } else {
                prop_assert_eq!(best, usize::MAX);
            }
        }
    }

    #[test]
    fn moments_agree_with_scalar(rows in 0usize..20, d in 0usize..90, seed in any::<u64>()) {
        let data: Vec<f64> = values(rows * d, seed).into_iter().map(f64::from).collect();
        let run = |f: fn(&[f64], usize, &mut [f64])| {
            let mut out = vec![0.0; 2 * rows];
            f(&data, d, &mut out);
            out
        };
        let want = run(moments::scalar);
        for (variant, got) in [("SIMD", run(moments::simd)), ("Parallel", run(moments::parallel)), ("routed", run(moments))] {
            for r in 0..rows {
                let row = &data[r * d..(r + 1) * d];
                let b1 = tolerance::sum_bound(d + 1, row.iter().map(|v| v.abs()).sum(), f64::EPSILON);
                let b2 = tolerance::sum_bound(d + 1, row.iter().map(|v| v * v).sum(), f64::EPSILON);
                prop_assert!((got[2 * r] - want[2 * r]).abs() <= b1, "{} row {} sum", variant, r);
                prop_assert!((got[2 * r + 1] - want[2 * r + 1]).abs() <= b2, "{} row {} squares", variant, r);
            }
        }
    }
}
