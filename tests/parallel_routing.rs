//! The Parallel backend is a candidate like the others: `k::parallel` exists
//! for kernels with the variant, the router settles on it where it is fastest,
//! never offers it without the variant or on one thread, and
//! `ADAPTIVE_KERNEL_BACKEND=parallel` forces it.

mod common;

use adaptive_kernel::{adaptive_kernel, ops, Backend, Kernel, KernelSpec, OpComplexity};
use common::{fixed_model, run_child, settle_with, settled, us};

/// Σ xᵢ·yᵢ through the op set: every variant, Parallel included.
#[adaptive_kernel(complexity = "Medium")]
fn dot(x: &[f32], y: &[f32]) -> f32 {
    ops::dot(x, y)
}

static WITH: Kernel = Kernel::new(KernelSpec {
    name: "parallel_routing::with",
    complexity: OpComplexity::Medium,
    has_gpu: false,
    has_parallel: true,
    token_hash: 1,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});
static WITHOUT: Kernel = Kernel::new(KernelSpec {
    name: "parallel_routing::without",
    complexity: OpComplexity::Medium,
    has_gpu: false,
    has_parallel: false,
    token_hash: 2,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});
static ONE_THREAD: Kernel = Kernel::new(KernelSpec {
    name: "parallel_routing::one_thread",
    complexity: OpComplexity::Medium,
    has_gpu: false,
    has_parallel: true,
    token_hash: 3,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

const SIZE: usize = 500_000;

fn parallel_fastest(b: Backend) -> std::time::Duration {
    match b {
        Backend::Parallel => us(100),
        Backend::Simd => us(300),
        _ => us(3_000),
    }
}

#[test]
fn every_variant_of_an_ops_kernel_agrees() {
    // Every test of this binary installs the fixed model first: a routed call would calibrate one.
    fixed_model();
    let x: Vec<f32> = (0..10_000).map(|i| (i % 7) as f32).collect();
    let want = dot::scalar(&x, &x);
    assert!(dot::KERNEL.has_parallel());
    for got in [dot::simd(&x, &x), dot::parallel(&x, &x), dot(&x, &x)] {
        assert!((got - want).abs() <= 1e-3 * want.abs(), "{got} vs {want}");
    }
}

#[test]
fn the_router_settles_on_parallel_where_it_is_fastest() {
    fixed_model();
    assert!(ops::par::threads() >= 2, "this test needs two or more threads");
    let asked = settle_with(&WITH, SIZE, parallel_fastest);
    assert!(asked.contains(&Backend::Parallel), "{asked:?}");
    assert_eq!(settled(&WITH, SIZE), Some(Backend::Parallel), "{}", WITH.table());
}

#[test]
fn without_the_variant_or_on_one_thread_parallel_is_never_asked_for() {
    fixed_model();
    let asked = settle_with(&WITHOUT, SIZE, parallel_fastest);
    assert!(!asked.contains(&Backend::Parallel), "{asked:?}");
    let asked = ops::par::with_threads(1, || settle_with(&ONE_THREAD, SIZE, parallel_fastest));
    assert!(!asked.contains(&Backend::Parallel), "{asked:?}");
}

#[test]
#[ignore = "entry point of the child process the test below starts"]
fn child() {
    assert_eq!(common::child_role().as_deref(), Some("forced"));
    let x = vec![1.0f32; 64];
    let route =
        dot::KERNEL.route(x.len(), || adaptive_kernel::Work::estimate(OpComplexity::Medium, x.len(), None, None));
    assert_eq!(route.backend(), Backend::Parallel);
    drop(route);
    assert_eq!(dot(&x, &x), 64.0);
}

#[test]
fn the_environment_can_force_parallel() {
    let (ok, out) =
        run_child("child", "forced", &[("ADAPTIVE_KERNEL_BACKEND", "parallel"), ("ADAPTIVE_KERNEL_HISTORY", "off")]);
    assert!(ok, "{out}");
}
