//! What routing costs: a routed call on a settled bucket against a direct call of
//! the same variant, the amortised sampling overhead on a ~1 µs kernel, and how
//! many calls a bucket takes to settle, and what `verify` adds to exploration.
//!
//! Run with `cargo bench --bench dispatch`; figures go to BENCHMARKS.md. With
//! `--features otlp` the same is measured with OTLP export of decisions on. The
//! settled-call groups are meant to be run once per `ADAPTIVE_KERNEL_MODE`
//! (`learn`, `frozen`, `verify`): `tiny` and `micro` can verify, so in `verify`
//! mode their wrappers carry the check.
//!
//! Smoke run (CI: `scripts/bench-smoke`): `cargo bench --bench dispatch -- --test`
//! runs each criterion routine once, settles each bucket with fewer calls, and
//! times one round of `verify_cost` (`common/smoke.rs`).

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

#[path = "common/smoke.rs"]
mod smoke;

use std::hint::black_box;
use std::time::{Duration, Instant};

use adaptive_kernel::config::HistorySetting;
use adaptive_kernel::{adaptive_kernel, ops, Backend, Kernel, KernelSpec, OpComplexity};
use criterion::{criterion_group, criterion_main, Criterion};

/// A tiny kernel: the routing cost dominates.
#[adaptive_kernel(complexity = "Low")]
fn tiny(x: &[f32]) -> f32 {
    x[0] + x[x.len() - 1]
}

/// `tiny` generic over its element type: routed through `tiny_generic::kernel::<T>()`.
#[adaptive_kernel(complexity = "Low")]
fn tiny_generic<T: Copy + std::ops::Add<Output = T>>(x: &[T]) -> T {
    x[0] + x[x.len() - 1]
}

/// A type with `tiny` as a method: routed through the kernel family inside it.
struct Tiny;

impl Tiny {
    #[adaptive_kernel(complexity = "Low")]
    fn tiny(&self, x: &[f32]) -> f32 {
        x[0] + x[x.len() - 1]
    }
}

/// About a microsecond of work on this machine (a 1,024-element dot product, scalar loop).
#[adaptive_kernel(complexity = "Low")]
fn micro(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        acc += x * y;
    }
    acc
}

fn settle(mut call: impl FnMut()) {
    // Enough calls for any bucket to explore, settle and reach its steady sampling interval
    // (in a smoke run, to settle).
    for _ in 0..smoke::pick(200_000, 5_000) {
        call();
    }
}

fn dispatch(c: &mut Criterion) {
    adaptive_kernel::set_history(HistorySetting::Off);
    // With the `otlp` feature, measure with export on (to `OTEL_EXPORTER_OTLP_ENDPOINT`,
    // or the default endpoint: with no collector there it warns once and drops spans).
    #[cfg(feature = "otlp")]
    let _otlp = adaptive_kernel::telemetry::init_otlp().expect("OTLP export set up");
    let x = vec![1.0f32; 16];
    settle(|| {
        black_box(tiny(black_box(&x)));
    });
    let mut g = c.benchmark_group("settled_call");
    g.measurement_time(Duration::from_secs(3));
    let chosen = tiny::KERNEL.table().row_for(16).and_then(|r| r.chosen).expect("settled");
    g.bench_function("direct", |bench| {
        bench.iter(|| match chosen {
            Backend::Scalar => tiny::scalar(black_box(&x)),
            _ => tiny::simd(black_box(&x)),
        })
    });
    g.bench_function("routed", |bench| bench.iter(|| tiny(black_box(&x))));
    g.finish();

    // The same body as a generic kernel and as a method; direct: the free kernel's
    // settled variant (the same code, called without routing).
    settle(|| {
        black_box(tiny_generic(black_box(&x)));
        black_box(Tiny.tiny(black_box(&x)));
    });
    let generic = tiny_generic::kernel::<f32>().table().row_for(16).and_then(|r| r.chosen).expect("settled");
    let mut g = c.benchmark_group("settled_call_generic_and_method");
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("direct", |bench| {
        bench.iter(|| match generic {
            Backend::Scalar => tiny_generic::scalar::<f32>(black_box(&x)),
            _ => tiny_generic::simd::<f32>(black_box(&x)),
        })
    });
    g.bench_function("routed_generic", |bench| bench.iter(|| tiny_generic::<f32>(black_box(&x))));
    g.bench_function("routed_method", |bench| bench.iter(|| Tiny.tiny(black_box(&x))));
    g.finish();

    let (a, b) = (vec![0.5f32; 1024], vec![2.0f32; 1024]);
    settle(|| {
        black_box(micro(black_box(&a), black_box(&b)));
    });
    let chosen = micro::KERNEL.table().row_for(2048).and_then(|r| r.chosen).expect("settled");
    let mut g = c.benchmark_group("one_microsecond_kernel");
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("direct", |bench| {
        bench.iter(|| match chosen {
            Backend::Scalar => micro::scalar(black_box(&a), black_box(&b)),
            _ => micro::simd(black_box(&a), black_box(&b)),
        })
    });
    g.bench_function("routed", |bench| bench.iter(|| micro(black_box(&a), black_box(&b))));
    g.finish();
}

/// Calls until a fresh bucket settles, for real ops at a few sizes (printed, not timed by criterion).
fn calls_to_settle(_: &mut Criterion) {
    let sizes = [1_000usize, 100_000, 4_000_000];
    println!("\ncalls_to_settle (Medium-complexity `sum` kernel, fresh site per size):");
    for &n in &sizes {
        let kernel: &'static Kernel = Box::leak(Box::new(Kernel::new(KernelSpec {
            name: "bench::sum",
            complexity: OpComplexity::Medium,
            has_gpu: true,
            has_parallel: false,
            token_hash: n as u64,
            loops: &[],
            splits: &[],
            gpu_loops: &[],
        })));
        let x = vec![1.0f32; n];
        let start = Instant::now();
        let mut calls = 0;
        while kernel.table().row_for(n).and_then(|r| r.chosen).is_none() && calls < 1_000 {
            let r = kernel.route(n, || adaptive_kernel::Work::estimate(OpComplexity::Medium, n, None, None));
            black_box(match r.backend() {
                Backend::Scalar => r.run(|| ops::scalar::sum(&x)),
                Backend::Simd => r.run(|| ops::simd::sum(&x)),
                Backend::Parallel => r.run(|| ops::par::sum(&x)),
                Backend::Gpu => r.run(|| ops::gpu::sum(&x)),
            });
            calls += 1;
        }
        let row = kernel.table().row_for(n).cloned().expect("called");
        let kept: Vec<String> = row.backends.iter().map(|b| format!("{} kept {}", b.backend, b.count)).collect();
        println!(
            "  n = {n:>9}: {calls:>3} calls, {:>8.2} ms, settled on {:?} ({})",
            start.elapsed().as_secs_f64() * 1e3,
            row.chosen,
            kept.join(", ")
        );
    }
}

/// A dot product through `ops`, checked against Scalar while exploring.
#[adaptive_kernel(complexity = "Medium", verify = true, name = "bench::dot_checked")]
fn dot_checked(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b)
}

/// The same kernel, never checked.
#[adaptive_kernel(complexity = "Medium", verify = false, name = "bench::dot_unchecked")]
fn dot_unchecked(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b)
}

/// Time for a fresh bucket to settle with and without `verify`, interleaved, medians
/// of 15 rounds (printed, not timed by criterion).
fn verify_cost(_: &mut Criterion) {
    println!(
        "
verify_cost (Medium `ops::dot`, time and calls until a fresh bucket settles, median of 15):"
    );
    for n in [1_000usize, 100_000] {
        let (a, b) = (vec![0.5f32; n], vec![2.0f32; n]);
        let mut runs: [Vec<(f64, usize)>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..smoke::pick(15, 1) {
            for (i, (kernel, f)) in [
                (&dot_checked::KERNEL, dot_checked as fn(&[f32], &[f32]) -> f32),
                (&dot_unchecked::KERNEL, dot_unchecked as fn(&[f32], &[f32]) -> f32),
            ]
            .into_iter()
            .enumerate()
            {
                kernel.reset();
                let start = Instant::now();
                let mut calls = 0;
                // The kernels' size is both slices' lengths (the default size), so their bucket is 2n's.
                while kernel.table().row_for(2 * n).and_then(|r| r.chosen).is_none() && calls < 1_000 {
                    black_box(f(black_box(&a), black_box(&b)));
                    calls += 1;
                }
                runs[i].push((start.elapsed().as_secs_f64() * 1e3, calls));
            }
        }
        let median = |v: &mut Vec<(f64, usize)>| {
            v.sort_by(|x, y| x.0.total_cmp(&y.0));
            v[v.len() / 2]
        };
        let (checked, unchecked) = (median(&mut runs[0]), median(&mut runs[1]));
        // A bucket still open after the cap measures the cap, not settling: say so rather than print it.
        assert!(checked.1 < 1_000 && unchecked.1 < 1_000, "verify_cost: a bucket did not settle in 1,000 calls");
        println!(
            "  n = {n:>7}: verify {:>7.3} ms ({} calls), without {:>7.3} ms ({} calls): {:.2}x",
            checked.0,
            checked.1,
            unchecked.0,
            unchecked.1,
            checked.0 / unchecked.0
        );
    }
}

criterion_group!(benches, dispatch, calls_to_settle, verify_cost);
criterion_main!(benches);
