//! The op set, SIMD against Scalar, with the machine's limits measured in the
//! same run (figures and their reading: BENCHMARKS.md, "ops: SIMD vs Scalar").
//!
//! Groups:
//! - `ops/<op>`: `scalar/<size>` and `simd/<size>` for every op at 1K, 64K, 1M
//!   and 16M elements (matrix ops on square shapes of that many elements;
//!   `conv2d` with a 3×3 kernel; `matmul` at 64, 256 and 1024 per side);
//! - `limits`: at 16M elements, a plain copy and a `b + s·c` triad into a
//!   preallocated buffer (the bandwidth ceiling), the triad into a fresh `Vec`
//!   with and without transparent huge pages (what allocating an output
//!   costs), and `add`, Scalar and SIMD; `limits_recycled` repeats them with
//!   glibc told to keep freed memory, so fresh outputs skip the page faults;
//! - `matmul512`: SIMD (trueno's GEMM) against `matrixmultiply::sgemm`;
//! - `isa`: one or more ops per op class at every instruction set this CPU
//!   runs, to choose each class's level;
//! - `trueno_direct` (x86_64 with AVX2): our kernels against trueno's AVX2
//!   kernels called directly, where we chose not to use them.
//!
//! Sample counts and times are small so the whole run takes a few minutes on
//! two cores: `cargo bench --bench ops`; medians are in
//! `target/criterion/<group>/<id>/new/estimates.json`.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

mod common;

use std::hint::black_box;
use std::time::Duration;

use adaptive_kernel::ops::simd::{At, OpClass};
use common::Xorshift;
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};

const SIZES: [(&str, usize); 4] = [("1K", 1 << 10), ("64K", 1 << 16), ("1M", 1 << 20), ("16M", 1 << 24)];
const N16M: usize = 1 << 24;

/// `n` pseudo-random values in [−2, 2): finite, no denormals, fine for `exp`.
fn data(n: usize, seed: u32) -> Vec<f32> {
    Xorshift::new(seed).uniform(n, -2.0, 2.0)
}

/// A group whose sampling suits `n`-element inputs: flat sampling and the
/// minimum of 10 samples for the large ones, short windows for the small.
fn group<'a>(c: &'a mut Criterion, name: &str, n: usize) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10).warm_up_time(Duration::from_millis(50)).nresamples(10_000);
    if n >= 1 << 20 {
        g.sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_millis(400));
    } else {
        g.measurement_time(Duration::from_millis(200));
    }
    g
}

/// Benchmarks `$call` twice, with `$ops` bound to `ops::scalar` and to `ops::simd`.
macro_rules! scalar_vs_simd {
    ($g:expr, $label:expr, |$ops:ident| $call:expr) => {{
        {
            use adaptive_kernel::ops::scalar as $ops;
            $g.bench_function(BenchmarkId::new("scalar", $label), |bencher| bencher.iter(|| black_box($call)));
        }
        {
            use adaptive_kernel::ops::simd as $ops;
            $g.bench_function(BenchmarkId::new("simd", $label), |bencher| bencher.iter(|| black_box($call)));
        }
    }};
}

fn ops_vs_scalar(c: &mut Criterion) {
    for (label, n) in SIZES {
        let (a, b) = (data(n, 1), data(n, 2));
        let side = (n as f64).sqrt() as usize;
        let mut y = data(n, 3);
        let kernel = data(9, 4);
        let elems = Throughput::Elements(n as u64);
        macro_rules! op {
            ($name:literal, |$ops:ident| $call:expr) => {{
                let mut g = group(c, concat!("ops/", $name), n);
                g.throughput(elems.clone());
                scalar_vs_simd!(g, label, |$ops| $call);
                g.finish();
            }};
        }
        op!("add", |ops| ops::add(&a, &b));
        op!("sub", |ops| ops::sub(&a, &b));
        op!("mul", |ops| ops::mul(&a, &b));
        op!("div", |ops| ops::div(&a, &b));
        op!("scale", |ops| ops::scale(&a, 1.5));
        op!("relu", |ops| ops::relu(&a));
        op!("axpy", |ops| ops::axpy(1e-3, &a, &mut y));
        op!("exp", |ops| ops::exp(&a));
        op!("sigmoid", |ops| ops::sigmoid(&a));
        op!("tanh", |ops| ops::tanh(&a));
        op!("gelu", |ops| ops::gelu(&a));
        op!("softmax", |ops| ops::softmax(&a));
        op!("sum", |ops| ops::sum(&a));
        op!("dot", |ops| ops::dot(&a, &b));
        op!("max", |ops| ops::max(&a));
        op!("min", |ops| ops::min(&a));
        op!("mean", |ops| ops::mean(&a));
        op!("norm_l2", |ops| ops::norm_l2(&a));
        op!("matvec", |ops| ops::matvec(&a[..side * side], &b[..side], side, side));
        op!("transpose", |ops| ops::transpose(&a[..side * side], side, side));
        op!("conv2d", |ops| ops::conv2d(&a[..side * side], &kernel, side, side, 3, 3));
    }
    for side in [64usize, 256, 1024] {
        let n = side * side;
        let (a, b) = (data(n, 5), data(n, 6));
        let mut g = group(c, "ops/matmul", if side >= 256 { 1 << 20 } else { n });
        g.throughput(Throughput::Elements((2 * side * side * side) as u64)); // FLOP
        scalar_vs_simd!(g, side, |ops| ops::matmul(&a, &b, side, side, side));
        g.finish();
    }
}

/// `out[i] = b[i] + s·c[i]`, compiled for AVX2 like the SIMD ops it is compared with.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn triad_avx2(out: &mut [f32], b: &[f32], c: &[f32], s: f32) {
    for ((o, &x), &y) in out.iter_mut().zip(b).zip(c) {
        *o = x + s * y;
    }
}

fn triad(out: &mut [f32], b: &[f32], c: &[f32], s: f32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: AVX2 and FMA were detected just above.
        return unsafe { triad_avx2(out, b, c, s) };
    }
    for ((o, &x), &y) in out.iter_mut().zip(b).zip(c) {
        *o = x + s * y;
    }
}

/// The triad into a fresh `Vec`, optionally advised to use transparent huge pages first.
fn triad_fresh(b: &[f32], c: &[f32], s: f32, huge_pages: bool) -> Vec<f32> {
    let mut out = vec![0.0f32; b.len()];
    #[cfg(target_os = "linux")]
    if huge_pages {
        let start = (out.as_ptr() as usize).next_multiple_of(4096);
        let end = (out.as_ptr() as usize + 4 * out.len()) & !4095;
        // SAFETY: the range is the whole-page interior of `out`, which nothing else uses yet;
        // MADV_HUGEPAGE changes only how its pages will be backed, not their contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end.saturating_sub(start), libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = huge_pages;
    triad(&mut out, b, c, s);
    out
}

fn limits(c: &mut Criterion) {
    let n = N16M;
    let (a, b) = (data(n, 7), data(n, 8));
    let mut out = vec![0.0f32; n];
    let mut g = group(c, "limits", n);
    // The headline ratios: twice the samples of the other groups, for a steadier median.
    g.sample_size(20);
    g.throughput(Throughput::Bytes((8 * n) as u64));
    g.bench_function("copy_prealloc", |bench| bench.iter(|| out.copy_from_slice(black_box(&a))));
    g.throughput(Throughput::Bytes((12 * n) as u64));
    g.bench_function("triad_prealloc", |bench| bench.iter(|| triad(&mut out, black_box(&a), &b, 1.5)));
    g.bench_function("triad_fresh", |bench| bench.iter(|| triad_fresh(black_box(&a), &b, 1.5, false)));
    g.bench_function("triad_fresh_hugepages", |bench| bench.iter(|| triad_fresh(black_box(&a), &b, 1.5, true)));
    g.bench_function("add_scalar", |bench| bench.iter(|| adaptive_kernel::ops::scalar::add(black_box(&a), &b)));
    g.bench_function("add_simd", |bench| bench.iter(|| adaptive_kernel::ops::simd::add(black_box(&a), &b)));
    g.finish();
}

/// `limits` again after telling glibc to keep freed memory (`mallopt`), as
/// caching allocators do: fresh outputs then reuse pages that are already
/// mapped, which separates the ops' own speed from the kernel's cost of
/// supplying new zeroed pages. It changes the process's allocator, so it runs last.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn limits_recycled(c: &mut Criterion) {
    // SAFETY: mallopt only changes glibc's thresholds for later allocations; no other
    // thread allocates concurrently with this call in the bench process.
    let tuned = unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30) == 1 && libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30) == 1
    };
    assert!(tuned, "mallopt failed");
    let n = N16M;
    let (a, b) = (data(n, 7), data(n, 8));
    let mut out = vec![0.0f32; n];
    let mut g = group(c, "limits_recycled", n);
    // The headline ratios: twice the samples of the other groups, for a steadier median.
    g.sample_size(20);
    g.throughput(Throughput::Bytes((12 * n) as u64));
    g.bench_function("triad_prealloc", |bench| bench.iter(|| triad(&mut out, black_box(&a), &b, 1.5)));
    g.bench_function("triad_fresh", |bench| bench.iter(|| triad_fresh(black_box(&a), &b, 1.5, false)));
    g.bench_function("add_scalar", |bench| bench.iter(|| adaptive_kernel::ops::scalar::add(black_box(&a), &b)));
    g.bench_function("add_simd", |bench| bench.iter(|| adaptive_kernel::ops::simd::add(black_box(&a), &b)));
    g.finish();
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn limits_recycled(_: &mut Criterion) {}

fn matmul_vs_matrixmultiply(c: &mut Criterion) {
    let side = 512;
    let (a, b) = (data(side * side, 9), data(side * side, 10));
    let mut g = group(c, "matmul512", 1 << 20);
    // The headline ratios: twice the samples of the other groups, for a steadier median.
    g.sample_size(20);
    g.throughput(Throughput::Elements((2 * side * side * side) as u64)); // FLOP
    g.bench_function("simd", |bench| {
        bench.iter(|| adaptive_kernel::ops::simd::matmul(black_box(&a), &b, side, side, side))
    });
    g.bench_function("matrixmultiply", |bench| {
        bench.iter(|| {
            // Same contract as ours: a fresh zeroed C, then C = A·B.
            let mut c = vec![0.0f32; side * side];
            let s = side as isize;
            // SAFETY: A, B and C are row-major side×side buffers of exactly side² elements,
            // described by row stride `side` and column stride 1; C is not aliased.
            unsafe {
                matrixmultiply::sgemm(
                    side,
                    side,
                    side,
                    1.0,
                    black_box(&a).as_ptr(),
                    s,
                    1,
                    b.as_ptr(),
                    s,
                    1,
                    0.0,
                    c.as_mut_ptr(),
                    s,
                    1,
                );
            }
            c
        })
    });
    g.bench_function("scalar", |bench| {
        bench.iter(|| adaptive_kernel::ops::scalar::matmul(black_box(&a), &b, side, side, side))
    });
    g.finish();
}

fn isa(c: &mut Criterion) {
    let levels = At::available();
    for class in OpClass::ALL {
        eprintln!("isa: {class:?} runs at {:?} on this CPU", At::for_class(class).level());
    }
    for (label, n) in [("64K", 1usize << 16), ("1M", 1 << 20)] {
        let (a, b) = (data(n, 11), data(n, 12));
        let side = (n as f64).sqrt() as usize;
        let kernel = data(9, 13);
        let mut g = group(c, "isa", n);
        g.throughput(Throughput::Elements(n as u64));
        for &at in &levels {
            let level = format!("{:?}", at.level());
            let id = |op: &str| BenchmarkId::new(format!("{op}_{label}"), &level);
            g.bench_function(id("stream_add"), |bench| bench.iter(|| at.add(black_box(&a), &b)));
            g.bench_function(id("stream_relu"), |bench| bench.iter(|| at.relu(black_box(&a))));
            g.bench_function(id("transcendental_exp"), |bench| bench.iter(|| at.exp(black_box(&a))));
            g.bench_function(id("transcendental_tanh"), |bench| bench.iter(|| at.tanh(black_box(&a))));
            g.bench_function(id("reduction_sum"), |bench| bench.iter(|| at.sum(black_box(&a))));
            g.bench_function(id("reduction_dot"), |bench| bench.iter(|| at.dot(black_box(&a), &b)));
            g.bench_function(id("reduction_max"), |bench| bench.iter(|| at.max(black_box(&a))));
            g.bench_function(id("matrix_matvec"), |bench| {
                bench.iter(|| at.matvec(black_box(&a[..side * side]), &b[..side], side, side))
            });
            g.bench_function(id("matrix_conv2d"), |bench| {
                bench.iter(|| at.conv2d(black_box(&a[..side * side]), &kernel, side, side, 3, 3))
            });
        }
        g.finish();
    }
}

#[cfg(target_arch = "x86_64")]
fn trueno_direct(c: &mut Criterion) {
    use adaptive_kernel_runtime::trueno::backends::avx2::Avx2Backend;
    use adaptive_kernel_runtime::trueno::backends::VectorBackend;
    if !(std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")) {
        return;
    }
    for (label, n) in [("64K", 1usize << 16), ("1M", 1 << 20), ("16M", N16M)] {
        let (a, b) = (data(n, 14), data(n, 15));
        let mut g = group(c, "trueno_direct", n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("add_simd", label), |bench| {
            bench.iter(|| adaptive_kernel::ops::simd::add(black_box(&a), &b))
        });
        g.bench_function(BenchmarkId::new("add_trueno_avx2_into_zeroed", label), |bench| {
            bench.iter(|| {
                let mut out = vec![0.0f32; n];
                // SAFETY: AVX2 was detected above; `a`, `b` and `out` all have `n` elements.
                unsafe { Avx2Backend::add(black_box(&a), &b, &mut out) };
                out
            })
        });
        if n == 1 << 16 {
            g.bench_function(BenchmarkId::new("exp_simd", label), |bench| {
                bench.iter(|| adaptive_kernel::ops::simd::exp(black_box(&a)))
            });
            g.bench_function(BenchmarkId::new("exp_trueno_avx2_into_zeroed", label), |bench| {
                bench.iter(|| {
                    let mut out = vec![0.0f32; n];
                    // SAFETY: AVX2 was detected above; `a` and `out` both have `n` elements.
                    unsafe { Avx2Backend::exp(black_box(&a), &mut out) };
                    out
                })
            });
            g.bench_function(BenchmarkId::new("max_simd", label), |bench| {
                bench.iter(|| adaptive_kernel::ops::simd::max(black_box(&a)))
            });
            g.bench_function(BenchmarkId::new("max_trueno_avx2", label), |bench| {
                // SAFETY: AVX2 was detected above; `a` is not empty.
                bench.iter(|| unsafe { Avx2Backend::max(black_box(&a)) })
            });
        }
        g.finish();
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn trueno_direct(_: &mut Criterion) {}

fn config() -> Criterion {
    Criterion::default().without_plots().configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = limits, matmul_vs_matrixmultiply, isa, trueno_direct, ops_vs_scalar, limits_recycled
}
criterion_main!(benches);
