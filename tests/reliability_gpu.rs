//! Reliability: GPU faults and concurrent GPU use (RELIABILITY.md, "GPU faults").
//!
//! Each fault is injected by the GPU backend's own test hook
//! (`ops::gpu::__inject_fault_for_tests`: start-up finds no adapter, the device
//! is destroyed, a buffer allocation fails), in a child process of its own since
//! a fault is final for the process. Routing goes through a real kernel with a
//! GPU variant: every call returns the right result, the router stops choosing
//! the GPU, and the fault is reported once.
//!
//! Needs the software adapter (Mesa's lavapipe, `ADAPTIVE_KERNEL_GPU=software`,
//! set here for the children); without a usable device these tests FAIL unless
//! `ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1`.

mod common;

use std::time::Duration;

use adaptive_kernel::ops::gpu::{self, GpuFault, GpuHealth};
use adaptive_kernel::ops::{par, scalar, simd};
use adaptive_kernel::{Backend, Kernel, KernelSpec, OpComplexity};
use common::*;

static ADD: Kernel = Kernel::new(KernelSpec {
    name: "reliability_gpu::add",
    complexity: OpComplexity::High,
    has_gpu: true,
    has_parallel: false,
    token_hash: 1,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

const SIZE: usize = 20_000;
const CALLS: usize = 3_000;

fn skip() -> bool {
    let skip = std::env::var("ADAPTIVE_KERNEL_SKIP_GPU_TESTS").as_deref() == Ok("1");
    if skip {
        eprintln!("skipped: ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1");
    }
    skip
}

/// One routed call of `add` (what the macro's wrapper does); returns the backend and the sum.
fn routed_add(a: &[f32], b: &[f32]) -> (Backend, Vec<f32>) {
    let route = ADD.route(a.len() + b.len(), || adaptive_kernel::Work { size: a.len(), flops: 1, bytes: 1 });
    let backend = route.backend();
    let out = route.run(|| match backend {
        Backend::Scalar => scalar::add(a, b),
        Backend::Simd => simd::add(a, b),
        Backend::Parallel => par::add(a, b),
        Backend::Gpu => gpu::add(a, b),
    });
    (backend, out)
}

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    ((0..n).map(|i| (i % 97) as f32 * 0.5 - 3.0).collect(), (0..n).map(|i| (i % 13) as f32 + 0.25).collect())
}

/// Calls `add` `CALLS` times after the fault: every result right; the GPU is chosen
/// for no call once the router has seen the failure. Returns how many calls went to the GPU.
fn calls_after_fault() -> usize {
    let (a, b) = inputs(SIZE / 2);
    let expected = scalar::add(&a, &b);
    let mut on_gpu = 0;
    let mut last_gpu = None;
    for i in 0..CALLS {
        let (backend, out) = routed_add(&a, &b);
        assert_eq!(out, expected, "call {i} on {backend:?} computed a wrong result");
        if backend == Backend::Gpu {
            on_gpu += 1;
            last_gpu = Some(i);
        }
    }
    // A settled bucket learns of the failure at its next timed call (1 in 16 at most).
    assert!(last_gpu.is_none_or(|i| i < 200), "GPU still chosen at call {last_gpu:?}:\n{}", ADD.table());
    assert_ne!(settled(&ADD, SIZE), Some(Backend::Gpu), "{}", ADD.table());
    assert!(!gpu::is_ready() && !gpu::is_available());
    // Another size never starts on the GPU.
    let (a, b) = inputs(SIZE * 4);
    for _ in 0..50 {
        let (backend, out) = routed_add(&a, &b);
        assert_ne!(backend, Backend::Gpu);
        assert_eq!(out, scalar::add(&a, &b));
    }
    on_gpu
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    // The cost model's fixed figures count a GPU in (a debug build's calibration may not).
    fixed_model();
    adaptive_kernel::init_logging();
    let role = child_role().expect("run by run_child");
    if role == "no_adapter" {
        gpu::__inject_fault_for_tests(GpuFault::NoAdapter);
        assert!(!gpu::wait_ready(Duration::from_secs(60)));
        let GpuHealth::Unavailable { reason } = gpu::health() else { panic!("{}", gpu::health()) };
        assert!(reason.contains("no Vulkan, Metal or DX12 adapter"), "{reason}");
        // The GPU is never a candidate: the bucket settles on the CPU even though GPU "would" be fastest.
        let asked = settle_with(&ADD, SIZE, |b| if b == Backend::Gpu { us(1) } else { us(100) });
        assert!(!asked.contains(&Backend::Gpu), "{asked:?}");
        let on_gpu = calls_after_fault();
        assert_eq!(on_gpu, 0);
        let (a, b) = inputs(1000);
        assert_eq!(gpu::add(&a, &b), scalar::add(&a, &b), "a direct GPU op falls back to SIMD");
        eprintln!("FIGURES no_adapter calls={CALLS} on_gpu={on_gpu}");
        return;
    }
    assert!(gpu::wait_ready(Duration::from_secs(60)), "no usable GPU: {}", gpu::health());
    // Settle the bucket on the GPU, then break it.
    settle_with(&ADD, SIZE, |b| if b == Backend::Gpu { us(10) } else { us(100) });
    assert_eq!(settled(&ADD, SIZE), Some(Backend::Gpu), "{}", ADD.table());
    let (a, b) = inputs(SIZE / 2);
    assert_eq!(routed_add(&a, &b).1, scalar::add(&a, &b));
    let fault = match role.as_str() {
        "device_lost" => GpuFault::DeviceLost,
        "out_of_memory" => GpuFault::OutOfMemory,
        other => panic!("unknown role {other}"),
    };
    gpu::__inject_fault_for_tests(fault);
    let on_gpu = calls_after_fault();
    let GpuHealth::Failed { reason } = gpu::health() else { panic!("{}", gpu::health()) };
    if fault == GpuFault::OutOfMemory {
        assert!(reason.contains("out of memory"), "{reason}");
    }
    eprintln!("FIGURES {role} calls={CALLS} on_gpu={on_gpu}");
}

fn run_fault(role: &str) -> String {
    let (ok, out) = run_child("child", role, &[("ADAPTIVE_KERNEL_GPU", "software"), ("ADAPTIVE_KERNEL_LOG", "info")]);
    assert!(ok, "child {role} failed:\n{out}");
    figures(&out);
    out
}

/// Passes a child's `FIGURES` lines on (RELIABILITY.md quotes them).
fn figures(out: &str) {
    for line in out.lines().filter_map(|l| l.split_once("FIGURES ").map(|(_, f)| f)) {
        eprintln!("FIGURES {line}");
    }
}

#[test]
fn a_lost_device_keeps_results_right_and_the_router_off_the_gpu() {
    if skip() {
        return;
    }
    let out = run_fault("device_lost");
    assert_eq!(out.matches("adaptive-kernel: GPU backend failed").count(), 1, "reported once:\n{out}");
}

#[test]
fn a_failed_allocation_keeps_results_right_and_the_router_off_the_gpu() {
    if skip() {
        return;
    }
    let out = run_fault("out_of_memory");
    assert_eq!(out.matches("adaptive-kernel: GPU backend failed").count(), 1, "reported once:\n{out}");
    assert!(out.contains("out of memory allocating"), "{out}");
}

#[test]
fn no_adapter_means_no_gpu_choice_and_right_results() {
    // Needs no device: the fault hides any adapter.
    let out = run_fault("no_adapter");
    assert_eq!(out.matches("no usable GPU; GPU ops run on SIMD").count(), 1, "reported once:\n{out}");
    assert!(!out.contains("GPU backend failed"), "absence is not a failure:\n{out}");
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn threads_child() {
    no_history();
    assert!(gpu::wait_ready(Duration::from_secs(60)), "no usable GPU: {}", gpu::health());
    const THREADS: usize = 4;
    const ROUNDS: usize = 40;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                for r in 0..ROUNDS {
                    let n = 1000 + 257 * (t * ROUNDS + r);
                    let (a, b) = inputs(n);
                    assert_eq!(gpu::add(&a, &b), scalar::add(&a, &b), "thread {t} round {r}");
                    assert_eq!(gpu::mul(&a, &b), scalar::mul(&a, &b), "thread {t} round {r}");
                    assert_eq!(gpu::max(&a), scalar::max(&a));
                    let m = 16 + t;
                    let got = gpu::matmul(&a[..m * m], &b[..m * m], m, m, m);
                    let want = scalar::matmul(&a[..m * m], &b[..m * m], m, m, m);
                    for (g, w) in got.iter().zip(&want) {
                        assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "matmul {g} vs {w}");
                    }
                }
            });
        }
    });
    assert!(gpu::health().is_ready(), "no call failed: {}", gpu::health());
    eprintln!("FIGURES gpu_threads threads={THREADS} calls={}", THREADS * ROUNDS * 4);
}

#[test]
fn gpu_ops_from_four_threads_at_once_are_right() {
    if skip() {
        return;
    }
    let (ok, out) = run_child("threads_child", "threads", &[("ADAPTIVE_KERNEL_GPU", "software")]);
    assert!(ok, "{out}");
    figures(&out);
}
