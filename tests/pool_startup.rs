//! A program whose kernels have no Parallel variant (all `serial`, as a real-time
//! callback's must be) starts no thread pool: no `ak-par` thread (the dedicated pool
//! `ADAPTIVE_KERNEL_THREADS` asks for), no worker of rayon's global pool, and no
//! fork–join calibration (the cost model's Parallel terms stay unmeasured). The control
//! child routes a kernel with a Parallel variant and finds the pool started, so the
//! inspection can see what it looks for.
//!
//! Start-up state is per process, so each scenario runs in a child process (as
//! `tests/gpu_startup.rs` does for the GPU).

mod common;

use std::time::{Duration, Instant};

use adaptive_kernel::{adaptive_kernel, ops};
use common::{child_role, run_child, thread_names};

/// A body of `ops::` calls, kept on the calling thread.
#[adaptive_kernel(complexity = "Medium", serial)]
fn energy(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b) + ops::sum(a)
}

/// A loop the Parallel variant would split, kept on the calling thread.
#[adaptive_kernel(complexity = "Low", serial)]
fn gain(g: f32, x: &mut [f32]) {
    for v in x.iter_mut() {
        *v *= g;
    }
}

/// [`energy`] without `serial`: it has a Parallel variant.
#[adaptive_kernel(complexity = "Medium")]
fn energy_anywhere(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b) + ops::sum(a)
}

/// The threads not started by the runtime under a name of its own (`ak-…`): the test
/// harness's, and the unnamed workers of rayon's global pool, had it been started.
fn other_threads() -> usize {
    thread_names().iter().filter(|t| !t.starts_with("ak-")).count()
}

/// Waits (at most 30 s) until the cost model's CPU figures exist and its calibration thread is gone.
fn calibrated() -> adaptive_kernel::cost::CostParams {
    let began = Instant::now();
    loop {
        let gone = !thread_names().iter().any(|t| t == "ak-calibrate");
        if let (Some(figures), true) = (adaptive_kernel::cost::calibrated(), gone) {
            return figures;
        }
        assert!(began.elapsed() < Duration::from_secs(30), "the calibration never finished");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    let n = 1 << 20;
    let (a, b) = (vec![0.5f32; n], vec![2.0f32; n]);
    let mut x = vec![1.0f32; n];
    let before = other_threads();
    match child_role().expect("run by run_child").as_str() {
        "serial" => {
            assert!(!energy::KERNEL.has_parallel() && !gain::KERNEL.has_parallel());
            for _ in 0..500 {
                assert_eq!(energy(&a, &b), n as f32 * 1.5);
                gain(1.0, &mut x);
            }
            let figures = calibrated();
            assert_eq!(figures.parallel_threads, 1.0, "the Parallel terms were measured: {figures:?}");
            let threads = thread_names();
            assert!(!threads.iter().any(|t| t.starts_with("ak-par")), "a pool thread runs: {threads:?}");
            assert_eq!(other_threads(), before, "a thread was started: {threads:?}");
            eprintln!("child serial: threads {threads:?}");
        }
        "parallel" => {
            assert!(energy_anywhere::KERNEL.has_parallel());
            for _ in 0..200 {
                assert_eq!(energy_anywhere(&a, &b), n as f32 * 1.5);
            }
            let threads = thread_names();
            let started = threads.iter().any(|t| t.starts_with("ak-par")) || other_threads() > before;
            assert!(started, "no pool thread seen: {threads:?}");
            eprintln!("child parallel: threads {threads:?}");
        }
        other => panic!("unknown role {other}"),
    }
}

fn run(role: &str, threads: Option<&str>) -> String {
    let mut env = vec![("ADAPTIVE_KERNEL_HISTORY", "off"), ("ADAPTIVE_KERNEL_GPU", "off")];
    env.extend(threads.map(|t| ("ADAPTIVE_KERNEL_THREADS", t)));
    let (ok, out) = run_child("child", role, &env);
    assert!(ok, "child {role} (threads {threads:?}) failed:\n{out}");
    out
}

#[test]
fn a_program_without_parallel_variants_starts_no_pool_thread() {
    // A dedicated pool (its threads named `ak-par-…`), then rayon's global pool.
    for threads in [Some("2"), None] {
        run("serial", threads);
        run("parallel", threads);
    }
}
