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
//! - `reductions_chain`: `zip`–`map`–`sum` and `fold(f32::max)` at 100K.
//!
//! `cargo bench --bench reductions`; about a minute.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]
#![allow(clippy::needless_range_loop)]

mod common;

use std::hint::black_box;
use std::time::Duration;

use adaptive_kernel::adaptive_kernel;
use common::Xorshift;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

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

/// The routed calls, once each: they exist for users, and an unused kernel warns.
fn routed(_: &mut Criterion) {
    let (a, b) = (data(64, 7), data(64, 8));
    let mut out = vec![0.0; 8];
    black_box((dot(&a, &b), dot_exact(&a, &b), dot_chain(&a, &b), peak(&a)));
    matvec(&mut out, &a[..8], &b, 8, 8);
}

criterion_group!(benches, bench_dot, bench_matvec, bench_chain, routed);
criterion_main!(benches);
