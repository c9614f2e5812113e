//! Plain-loop reductions, Scalar variant against SIMD variant: what the
//! attribute's reassociation (issue #16) buys for code written without `ops::`
//! (figures and their reading: BENCHMARKS.md, "Plain-loop reductions").
//!
//! Groups (criterion medians, `target/criterion/reductions_*/…`):
//! - `reductions_dot`: an index-loop `f32` dot product at 10K, 100K and 1M
//!   elements, and the same kernel with `exact` (its SIMD variant keeps the
//!   source order: what the SIMD variant ran before the rewrite);
//! - `reductions_matvec`: an index-loop matrix–vector product at the shapes of
//!   a stories15M layer (288×288, 768×288) and of its classifier (32000×288);
//! - `reductions_chain`: `zip`–`map`–`sum` and `fold(f32::max)` at 100K;
//! - `reductions_kmeans`: the assignment step of k-means as usually written
//!   (rows as sub-slices, the distance loop nested in loops that branch and
//!   store), 4,096 points, 16 centroids, 4 to 100 dimensions (issue #23);
//! - `reductions_rows`: a short reduction inside a loop over 4,096 rows of 16
//!   to 100 values, the SIMD variant (which jams the rows: several at a time)
//!   against the same kernel with its row loop labelled (one row at a time,
//!   the reduction still in lanes): a mean squared distance in `f32` and
//!   `f64`, and a cosine similarity (two accumulators);
//! - `reductions_nbody`: the force loop of an n-body step as usually written
//!   (tuple lets, three accumulators, `sqrt` and a division per pair), 256
//!   and 2,048 bodies (issue #23).
//!
//! The last two compare four builds: `scalar`; `simd` (the rewrite);
//! `simd_exact`, the same body with `exact` (the body as written compiled for
//! this CPU: what the SIMD variant ran before these shapes were recognised);
//! and `hand`, the loop written with explicit lanes by hand (`as_chunks`, a
//! pairwise fold), also run as an `exact` kernel's SIMD variant so that it is
//! compiled for the same instruction set.
//!
//! `elementwise_blur` and `elementwise_index` (issue 23: element-wise index
//! loops in chunks, bit for bit): the programs bench's 3×3 blur at 64×64,
//! 640×480 and 3,840×2,160 as `scalar`, `simd` (the rewrite), `hand` (16
//! explicit lanes, one thread), `parallel` (the rows split across rayon's
//! threads, each chunk's interior in lanes, calls back to back) and
//! `parallel_1_thread` (the same in a one-thread scope: one chunk, on the
//! calling thread, where SIMD's speed is expected); three loops LLVM
//! vectorises as written (an in-place `y[i] += 0.5 * x[i]`, a ReLU storing
//! under a condition, a fold with branches) at 100, 1K and 100K as
//! `scalar`, `simd` and `simd_as_written` (the loop labelled, which the
//! rewrite leaves alone: the body as written compiled for this CPU).
//!
//! `cargo bench --bench reductions`; about three minutes
//! (`-- elementwise` for the element-wise groups alone).

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]
#![allow(clippy::needless_range_loop)]

mod common;
#[path = "programs/mod.rs"]
mod programs;

use std::hint::black_box;
use std::time::Duration;

use adaptive_kernel::adaptive_kernel;
use common::Xorshift;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use programs::blur::annotated::box_blur as blur;

#[adaptive_kernel(complexity = "Medium")]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

#[adaptive_kernel(complexity = "Medium", exact)]
fn dot_exact(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

#[adaptive_kernel(complexity = "High", size = w.len())]
fn matvec(out: &mut [f32], x: &[f32], w: &[f32], n: usize, d: usize) {
    for i in 0..d {
        let mut val = 0.0f32;
        for j in 0..n {
            val += w[i * n + j] * x[j];
        }
        out[i] = val;
    }
}

#[adaptive_kernel(complexity = "Medium")]
fn dot_chain(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[adaptive_kernel(complexity = "Medium")]
fn peak(x: &[f32]) -> f32 {
    x.iter().copied().fold(f32::NEG_INFINITY, f32::max)
}

/// The k-means assignment step as usually written, under `#[adaptive_kernel]` (plus an optional
/// key such as `exact`): nearest centroid of each of `n` points; points and centroids are rows of `d`.
macro_rules! kmeans_kernel {
    ($name:ident $(, $key:ident)?) => {
        #[adaptive_kernel(complexity = "High", size = n * k * d $(, $key)?)]
        fn $name(pts: &[f32], cent: &[f32], assign: &mut [usize], n: usize, k: usize, d: usize) {
            for i in 0..n {
                let p = &pts[i * d..(i + 1) * d];
                let mut best = f32::MAX;
                let mut bi = 0;
                for c in 0..k {
                    let q = &cent[c * d..(c + 1) * d];
                    let mut dist = 0.0;
                    for j in 0..d {
                        let t = p[j] - q[j];
                        dist += t * t;
                    }
                    if dist < best {
                        best = dist;
                        bi = c;
                    }
                }
                assign[i] = bi;
            }
        }
    };
}

kmeans_kernel!(kmeans);
kmeans_kernel!(kmeans_exact, exact);

/// `kmeans` with its distance in 8 explicit lanes (one 256-bit vector), folded pairwise.
#[adaptive_kernel(complexity = "High", size = n * k * d, exact)]
fn kmeans_hand(pts: &[f32], cent: &[f32], assign: &mut [usize], n: usize, k: usize, d: usize) {
    for i in 0..n {
        let p = &pts[i * d..(i + 1) * d];
        let (pc, pr) = p.as_chunks::<8>();
        let mut best = f32::MAX;
        let mut bi = 0;
        for c in 0..k {
            let q = &cent[c * d..(c + 1) * d];
            let (qc, qr) = q.as_chunks::<8>();
            let mut acc = [0.0f32; 8];
            for (a, b) in pc.iter().zip(qc) {
                for l in 0..8 {
                    let t = a[l] - b[l];
                    acc[l] += t * t;
                }
            }
            let mut dist = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
            for (a, b) in pr.iter().zip(qr) {
                let t = a - b;
                dist += t * t;
            }
            if dist < best {
                best = dist;
                bi = c;
            }
        }
        assign[i] = bi;
    }
}

/// The force loop of an n-body step as usually written, under `#[adaptive_kernel]` (plus an
/// optional key): softened accelerations of `x.len()` bodies, all pairs.
macro_rules! nbody_kernel {
    ($name:ident $(, $key:ident)?) => {
        #[adaptive_kernel(complexity = "High", size = x.len() * x.len() $(, $key)?)]
        #[allow(clippy::too_many_arguments)]
        fn $name(x: &[f32], y: &[f32], z: &[f32], m: &[f32], ax: &mut [f32], ay: &mut [f32], az: &mut [f32], eps: f32) {
            let n = x.len();
            for i in 0..n {
                let (xi, yi, zi) = (x[i], y[i], z[i]);
                let (mut fx, mut fy, mut fz) = (0.0f32, 0.0f32, 0.0f32);
                for j in 0..n {
                    let dx = x[j] - xi;
                    let dy = y[j] - yi;
                    let dz = z[j] - zi;
                    let r2 = dx * dx + dy * dy + dz * dz + eps;
                    let inv = 1.0 / (r2 * r2.sqrt());
                    fx += dx * inv * m[j];
                    fy += dy * inv * m[j];
                    fz += dz * inv * m[j];
                }
                ax[i] = fx;
                ay[i] = fy;
                az[i] = fz;
            }
        }
    };
}

nbody_kernel!(nbody);
nbody_kernel!(nbody_exact, exact);

/// `nbody` with its force loop in 16 explicit lanes per component, folded pairwise.
#[adaptive_kernel(complexity = "High", size = x.len() * x.len(), exact)]
#[allow(clippy::too_many_arguments)]
fn nbody_hand(x: &[f32], y: &[f32], z: &[f32], m: &[f32], ax: &mut [f32], ay: &mut [f32], az: &mut [f32], eps: f32) {
    const L: usize = 16;
    fn fold(mut a: [f32; L]) -> f32 {
        let mut w = L;
        while w > 1 {
            w /= 2;
            for l in 0..w {
                a[l] += a[l + w];
            }
        }
        a[0]
    }
    let n = x.len();
    let (xc, _) = x[..n].as_chunks::<L>();
    let (yc, _) = y[..n].as_chunks::<L>();
    let (zc, _) = z[..n].as_chunks::<L>();
    let (mc, _) = m[..n].as_chunks::<L>();
    let whole = xc.len() * L;
    for i in 0..n {
        let (xi, yi, zi) = (x[i], y[i], z[i]);
        let (mut fx, mut fy, mut fz) = ([0.0f32; L], [0.0f32; L], [0.0f32; L]);
        for c in 0..xc.len() {
            let (xs, ys, zs, ms) = (&xc[c], &yc[c], &zc[c], &mc[c]);
            for l in 0..L {
                let dx = xs[l] - xi;
                let dy = ys[l] - yi;
                let dz = zs[l] - zi;
                let r2 = dx * dx + dy * dy + dz * dz + eps;
                let inv = 1.0 / (r2 * r2.sqrt());
                fx[l] += dx * inv * ms[l];
                fy[l] += dy * inv * ms[l];
                fz[l] += dz * inv * ms[l];
            }
        }
        let (mut sx, mut sy, mut sz) = (fold(fx), fold(fy), fold(fz));
        for j in whole..n {
            let dx = x[j] - xi;
            let dy = y[j] - yi;
            let dz = z[j] - zi;
            let r2 = dx * dx + dy * dy + dz * dz + eps;
            let inv = 1.0 / (r2 * r2.sqrt());
            sx += dx * inv * m[j];
            sy += dy * inv * m[j];
            sz += dz * inv * m[j];
        }
        ax[i] = sx;
        ay[i] = sy;
        az[i] = sz;
    }
}

/// The programs bench's blur (`benches/programs/blur.rs`) with its interior in 16 explicit lanes
/// (nine 16-wide loads, the same sums in the same order, the same division: Scalar's results
/// bit for bit), on one thread, compiled as the SIMD variant of a kernel (whose loops the macro
/// leaves as written: the lanes are a local array, the remaining pixels' loop is labelled).
#[adaptive_kernel(complexity = "Medium", size = src.len())]
#[allow(unused_labels)]
fn blur_hand(src: &[f32], dst: &mut [f32], w: usize) {
    const L: usize = 16;
    let h = src.len() / w;
    for (y, out) in dst.chunks_exact_mut(w).enumerate() {
        let row = &src[y * w..(y + 1) * w];
        if y == 0 || y == h - 1 {
            out.copy_from_slice(row);
            continue;
        }
        let up = &src[(y - 1) * w..y * w];
        let down = &src[(y + 1) * w..(y + 2) * w];
        out[0] = row[0];
        out[w - 1] = row[w - 1];
        let mut x0 = 1;
        while x0 + L < w {
            let (u, r, d) = (&up[x0 - 1..x0 + L + 1], &row[x0 - 1..x0 + L + 1], &down[x0 - 1..x0 + L + 1]);
            let mut lanes = [0.0f32; L];
            for l in 0..L {
                let sum = u[l] + u[l + 1] + u[l + 2] + r[l] + r[l + 1] + r[l + 2] + d[l] + d[l + 1] + d[l + 2];
                lanes[l] = sum / 9.0;
            }
            out[x0..x0 + L].copy_from_slice(&lanes);
            x0 += L;
        }
        'pixels: for x in x0..w - 1 {
            let sum =
                up[x - 1] + up[x] + up[x + 1] + row[x - 1] + row[x] + row[x + 1] + down[x - 1] + down[x] + down[x + 1];
            out[x] = sum / 9.0;
        }
    }
}

/// An element-wise index loop `for i in 0..y.len() { body }` over `x` and `y`, twice: as a kernel
/// (`$name`) and with the loop labelled (`$as_written`), which the SIMD variant leaves as written.
/// The bodies below are ones LLVM vectorises as written already (their accesses fail together):
/// the rewrite must not lose there.
macro_rules! index_kernels {
    ($name:ident, $as_written:ident, |$i:ident, $x:ident, $y:ident| $body:block) => {
        #[adaptive_kernel(complexity = "Low")]
        fn $name($x: &[f32], $y: &mut [f32]) {
            for $i in 0..$y.len() $body
        }

        #[adaptive_kernel(complexity = "Low")]
        #[allow(unused_labels)]
        fn $as_written($x: &[f32], $y: &mut [f32]) {
            'elements: for $i in 0..$y.len() $body
        }
    };
}

index_kernels!(axpy, axpy_as_written, |i, x, y| {
    y[i] += 0.5 * x[i];
});
// A store under a condition: vectorised with masked stores, or not at all.
index_kernels!(relu, relu_as_written, |i, x, y| {
    if x[i] > 0.0 {
        y[i] = x[i];
    }
});
// Branches on a local, then a store that reads the element it writes.
index_kernels!(fold_blend, fold_blend_as_written, |i, x, y| {
    let mut v = x[i];
    if v < -0.5 {
        v = -1.0 - v;
    } else if v > 0.5 {
        v = 1.0 - v;
    }
    y[i] = v * 2.0 - y[i];
});

/// A short reduction inside a loop over items, twice: as a kernel (`$jammed`, whose SIMD variant
/// takes several rows at a time) and with the loop over rows labelled (`$one_by_one`, which the
/// jam leaves alone: one row at a time, its reduction still in lanes). `$body` is the row loop's
/// body, over `p` (of `d` values), the row `q` and `out[r]`.
macro_rules! row_kernels {
    ($jammed:ident, $one_by_one:ident, $t:ty, |$p:ident, $d:ident, $q:ident, $r:ident, $out:ident| { $($body:tt)* }) => {
        #[adaptive_kernel(complexity = "High", size = rows.len())]
        fn $jammed($p: &[$t], rows: &[$t], $out: &mut [$t]) {
            let $d = $p.len();
            for $r in 0..$out.len() {
                let $q = &rows[$r * $d..($r + 1) * $d];
                $($body)*
            }
        }

        #[adaptive_kernel(complexity = "High", size = rows.len())]
        #[allow(unused_labels)]
        fn $one_by_one($p: &[$t], rows: &[$t], $out: &mut [$t]) {
            let $d = $p.len();
            'rows: for $r in 0..$out.len() {
                let $q = &rows[$r * $d..($r + 1) * $d];
                $($body)*
            }
        }
    };
}

// The mean squared distance to each row: one accumulator, `f32` and `f64`.
row_kernels!(distances, distances_one_by_one, f32, |p, d, q, r, out| {
    let mut s = 0.0f32;
    for j in 0..d {
        s += (p[j] - q[j]) * (p[j] - q[j]);
    }
    out[r] = s / d as f32;
});
row_kernels!(distances_f64, distances_f64_one_by_one, f64, |p, d, q, r, out| {
    let mut s = 0.0f64;
    for j in 0..d {
        s += (p[j] - q[j]) * (p[j] - q[j]);
    }
    out[r] = s / d as f64;
});
// The cosine similarity to each row: two accumulators.
row_kernels!(cosines, cosines_one_by_one, f32, |p, d, q, r, out| {
    let (mut dot, mut norm) = (0.0f32, 0.0f32);
    for j in 0..d {
        dot += p[j] * q[j];
        norm += q[j] * q[j];
    }
    out[r] = dot / norm.sqrt();
});

/// `n` pseudo-random values in [−1, 1).
fn data(n: usize, seed: u32) -> Vec<f32> {
    Xorshift::new(seed).uniform(n, -1.0, 1.0)
}

fn settings<'a>(c: &'a mut Criterion, name: &str) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(20).warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_millis(500));
    g
}

fn bench_dot(c: &mut Criterion) {
    let mut g = settings(c, "reductions_dot");
    for (label, n) in [("10K", 10_000), ("100K", 100_000), ("1M", 1_000_000)] {
        let (a, b) = (data(n, 1), data(n, 2));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("scalar", label), |bench| bench.iter(|| dot::scalar(black_box(&a), &b)));
        g.bench_function(BenchmarkId::new("simd", label), |bench| bench.iter(|| dot::simd(black_box(&a), &b)));
        g.bench_function(BenchmarkId::new("simd_exact", label), |bench| {
            bench.iter(|| dot_exact::simd(black_box(&a), &b))
        });
    }
    g.finish();
}

fn bench_matvec(c: &mut Criterion) {
    let mut g = settings(c, "reductions_matvec");
    for (d, n) in [(288, 288), (768, 288), (32_000, 288)] {
        let (x, w) = (data(n, 3), data(n * d, 4));
        let mut out = vec![0.0; d];
        let label = format!("{d}x{n}");
        g.throughput(Throughput::Elements((n * d) as u64));
        g.bench_function(BenchmarkId::new("scalar", &label), |bench| {
            bench.iter(|| matvec::scalar(&mut out, black_box(&x), &w, n, d))
        });
        g.bench_function(BenchmarkId::new("simd", &label), |bench| {
            bench.iter(|| matvec::simd(&mut out, black_box(&x), &w, n, d))
        });
    }
    g.finish();
}

fn bench_chain(c: &mut Criterion) {
    let mut g = settings(c, "reductions_chain");
    let n = 100_000;
    let (a, b) = (data(n, 5), data(n, 6));
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("zip_map_sum/scalar", |bench| bench.iter(|| dot_chain::scalar(black_box(&a), &b)));
    g.bench_function("zip_map_sum/simd", |bench| bench.iter(|| dot_chain::simd(black_box(&a), &b)));
    g.bench_function("fold_max/scalar", |bench| bench.iter(|| peak::scalar(black_box(&a))));
    g.bench_function("fold_max/simd", |bench| bench.iter(|| peak::simd(black_box(&a))));
    g.finish();
}

fn bench_kmeans(c: &mut Criterion) {
    let mut g = settings(c, "reductions_kmeans");
    let (n, k) = (4096, 16);
    for d in [4, 16, 32, 100] {
        let (pts, cent) = (data(n * d, 9), data(k * d, 10));
        let mut assign = vec![0; n];
        g.throughput(Throughput::Elements((n * k * d) as u64));
        let label = format!("d{d}");
        g.bench_function(BenchmarkId::new("scalar", &label), |bench| {
            bench.iter(|| kmeans::scalar(black_box(&pts), &cent, &mut assign, n, k, d))
        });
        g.bench_function(BenchmarkId::new("simd", &label), |bench| {
            bench.iter(|| kmeans::simd(black_box(&pts), &cent, &mut assign, n, k, d))
        });
        g.bench_function(BenchmarkId::new("simd_exact", &label), |bench| {
            bench.iter(|| kmeans_exact::simd(black_box(&pts), &cent, &mut assign, n, k, d))
        });
        g.bench_function(BenchmarkId::new("hand", &label), |bench| {
            bench.iter(|| kmeans_hand::simd(black_box(&pts), &cent, &mut assign, n, k, d))
        });
    }
    g.finish();
}

/// A kernel of `row_kernels!`: `(p, rows, out)`.
type Rows<T> = fn(&[T], &[T], &mut [T]);

/// `v` in `f64`.
fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

/// Asserts that each pair's first kernel computes what its second does over `rows`, within `tol`
/// relative to the larger of the result and 1.
fn assert_agree<T: Copy + Default + Into<f64> + std::fmt::Debug>(
    pairs: &[(Rows<T>, Rows<T>)],
    p: &[T],
    rows: &[T],
    tol: f64,
) {
    for (got_by, want_by) in pairs {
        let (mut got, mut want) = (vec![T::default(); rows.len() / p.len()], vec![T::default(); rows.len() / p.len()]);
        got_by(p, rows, &mut got);
        want_by(p, rows, &mut want);
        let close = |g: T, w: T| (g.into() - w.into()).abs() <= tol * w.into().abs().max(1.0);
        assert!(got.iter().zip(&want).all(|(&g, &w)| close(g, w)), "{got:?} {want:?}");
    }
}

/// Measures each of `kernels` on `p` and `rows` under `name/label`.
fn bench_kernels<T: Copy + Default>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    label: &str,
    kernels: &[(&str, Rows<T>)],
    p: &[T],
    rows: &[T],
) {
    let mut out = vec![T::default(); rows.len() / p.len()];
    for &(name, f) in kernels {
        g.bench_function(BenchmarkId::new(name, label), |bench| bench.iter(|| f(black_box(p), rows, &mut out)));
    }
}

fn bench_rows(c: &mut Criterion) {
    // What the two columns compare: the jam, and the same loop left one row at a time.
    let jam = |loops: &[adaptive_kernel::kernel::LoopRewrite]| {
        loops.iter().find(|l| l.idiom == "for range jam").map(|l| (l.rewritten(), l.reason))
    };
    for (jammed, one_by_one) in [
        (distances::KERNEL.spec(), distances_one_by_one::KERNEL.spec()),
        (distances_f64::KERNEL.spec(), distances_f64_one_by_one::KERNEL.spec()),
        (cosines::KERNEL.spec(), cosines_one_by_one::KERNEL.spec()),
    ] {
        assert_eq!(jam(jammed.loops), Some((true, "")), "{} is not jammed", jammed.name);
        assert_eq!(jam(one_by_one.loops), Some((false, "label")), "{} is jammed", one_by_one.name);
    }
    // And each computes what the other's Scalar variant does (routed calls: whatever variant the
    // router picks), within a few roundings of a sum of 100.
    let (p, rows) = (data(100, 17), data(37 * 100, 18));
    let f32_pairs: [(Rows<f32>, Rows<f32>); 4] = [
        (distances, distances_one_by_one::scalar),
        (distances_one_by_one, distances::scalar),
        (cosines, cosines_one_by_one::scalar),
        (cosines_one_by_one, cosines::scalar),
    ];
    assert_agree(&f32_pairs, &p, &rows, 1e-4);
    let f64_pairs: [(Rows<f64>, Rows<f64>); 2] =
        [(distances_f64, distances_f64_one_by_one::scalar), (distances_f64_one_by_one, distances_f64::scalar)];
    assert_agree(&f64_pairs, &widen(&p), &widen(&rows), 1e-12);

    let mut g = settings(c, "reductions_rows");
    let n = 4096;
    for d in [16, 48, 64, 100] {
        let (p, rows) = (data(d, 15), data(n * d, 16));
        g.throughput(Throughput::Elements((n * d) as u64));
        let label = format!("d{d}");
        let f32_kernels: [(&str, Rows<f32>); 4] = [
            ("distances", distances::simd),
            ("distances_one_by_one", distances_one_by_one::simd),
            ("cosines", cosines::simd),
            ("cosines_one_by_one", cosines_one_by_one::simd),
        ];
        bench_kernels(&mut g, &label, &f32_kernels, &p, &rows);
        let f64_kernels: [(&str, Rows<f64>); 2] =
            [("distances_f64", distances_f64::simd), ("distances_f64_one_by_one", distances_f64_one_by_one::simd)];
        bench_kernels(&mut g, &label, &f64_kernels, &widen(&p), &widen(&rows));
    }
    g.finish();
}

fn bench_nbody(c: &mut Criterion) {
    let mut g = settings(c, "reductions_nbody");
    for n in [256, 2048] {
        let (x, y, z, m) = (data(n, 11), data(n, 12), data(n, 13), data(n, 14));
        let (mut ax, mut ay, mut az) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        g.throughput(Throughput::Elements((n * n) as u64));
        g.bench_function(BenchmarkId::new("scalar", n), |bench| {
            bench.iter(|| nbody::scalar(black_box(&x), &y, &z, &m, &mut ax, &mut ay, &mut az, 0.01))
        });
        g.bench_function(BenchmarkId::new("simd", n), |bench| {
            bench.iter(|| nbody::simd(black_box(&x), &y, &z, &m, &mut ax, &mut ay, &mut az, 0.01))
        });
        g.bench_function(BenchmarkId::new("simd_exact", n), |bench| {
            bench.iter(|| nbody_exact::simd(black_box(&x), &y, &z, &m, &mut ax, &mut ay, &mut az, 0.01))
        });
        g.bench_function(BenchmarkId::new("hand", n), |bench| {
            bench.iter(|| nbody_hand::simd(black_box(&x), &y, &z, &m, &mut ax, &mut ay, &mut az, 0.01))
        });
    }
    g.finish();
}

fn bench_elementwise(c: &mut Criterion) {
    let mut g = settings(c, "elementwise_blur");
    for (w, h) in [(64, 64), (640, 480), (3_840, 2_160)] {
        let src = data(w * h, 15);
        let mut dst = vec![0.0; w * h];
        g.throughput(Throughput::Elements((w * h) as u64));
        let label = format!("{w}x{h}");
        g.bench_function(BenchmarkId::new("scalar", &label), |bench| {
            bench.iter(|| blur::scalar(black_box(&src), &mut dst, w))
        });
        g.bench_function(BenchmarkId::new("simd", &label), |bench| {
            bench.iter(|| blur::simd(black_box(&src), &mut dst, w))
        });
        g.bench_function(BenchmarkId::new("hand", &label), |bench| {
            bench.iter(|| blur_hand::simd(black_box(&src), &mut dst, w))
        });
        g.bench_function(BenchmarkId::new("parallel", &label), |bench| {
            bench.iter(|| blur::parallel(black_box(&src), &mut dst, w))
        });
        g.bench_function(BenchmarkId::new("parallel_1_thread", &label), |bench| {
            adaptive_kernel::ops::par::with_threads(1, || bench.iter(|| blur::parallel(black_box(&src), &mut dst, w)))
        });
    }
    g.finish();
    let mut g = settings(c, "elementwise_index");
    type Kernel = fn(&[f32], &mut [f32]);
    let kernels: [(&str, Kernel, Kernel, Kernel); 3] = [
        ("axpy", axpy::scalar, axpy::simd, axpy_as_written::simd),
        ("relu", relu::scalar, relu::simd, relu_as_written::simd),
        ("fold_blend", fold_blend::scalar, fold_blend::simd, fold_blend_as_written::simd),
    ];
    for (name, scalar, simd, as_written) in kernels {
        for n in [100, 1_000, 100_000] {
            let x = data(n, 16);
            let mut y = data(n, 17);
            g.throughput(Throughput::Elements(n as u64));
            let label = format!("{name}/{n}");
            g.bench_function(BenchmarkId::new("scalar", &label), |bench| bench.iter(|| scalar(black_box(&x), &mut y)));
            g.bench_function(BenchmarkId::new("simd", &label), |bench| bench.iter(|| simd(black_box(&x), &mut y)));
            g.bench_function(BenchmarkId::new("simd_as_written", &label), |bench| {
                bench.iter(|| as_written(black_box(&x), &mut y))
            });
        }
    }
    g.finish();
}

/// The routed calls, once each: they exist for users, and an unused kernel warns.
fn routed(_: &mut Criterion) {
    let (a, b) = (data(64, 7), data(64, 8));
    let mut out = vec![0.0; 8];
    black_box((dot(&a, &b), dot_exact(&a, &b), dot_chain(&a, &b), peak(&a)));
    matvec(&mut out, &a[..8], &b, 8, 8);
    let mut assign = vec![0; 4];
    kmeans(&a[..16], &b[..8], &mut assign, 4, 2, 4);
    kmeans_exact(&a[..16], &b[..8], &mut assign, 4, 2, 4);
    kmeans_hand(&a[..16], &b[..8], &mut assign, 4, 2, 4);
    let (mut ax, mut ay, mut az) = (vec![0.0; 16], vec![0.0; 16], vec![0.0; 16]);
    nbody(&a[..16], &a[16..32], &a[32..48], &b[..16], &mut ax, &mut ay, &mut az, 0.01);
    nbody_exact(&a[..16], &a[16..32], &a[32..48], &b[..16], &mut ax, &mut ay, &mut az, 0.01);
    nbody_hand(&a[..16], &a[16..32], &a[32..48], &b[..16], &mut ax, &mut ay, &mut az, 0.01);
    let mut img = vec![0.0; 64];
    blur(&a, &mut img, 8);
    let (simd, hand) = (img.clone(), {
        blur_hand(&a, &mut img, 8);
        img.clone()
    });
    assert!(simd.iter().zip(&hand).all(|(p, q)| p.to_bits() == q.to_bits()), "the hand blur is the blur");
    for f in [axpy, axpy_as_written, relu, relu_as_written, fold_blend, fold_blend_as_written] {
        f(&a, &mut img);
    }
}

criterion_group!(
    benches,
    bench_dot,
    bench_matvec,
    bench_chain,
    bench_kmeans,
    bench_rows,
    bench_nbody,
    bench_elementwise,
    routed
);
criterion_main!(benches);
