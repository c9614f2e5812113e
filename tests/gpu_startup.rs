//! GPU start-up off the caller's thread, a quiet instance, and no start-up at
//! all for a program whose kernels have no GPU variant.
//!
//! Start-up state is per process, so every scenario runs in a child process:
//! this binary re-runs itself with the ignored `child` test and a role in
//! `ADAPTIVE_KERNEL_TEST_ROLE`. Scenarios that need a device FAIL without one
//! (see `tests/ops_gpu.rs`), unless `ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1`.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicUsize, Ordering};

use adaptive_kernel::ops::gpu::{self, GpuHealth};
use adaptive_kernel::ops::{par, scalar};
use adaptive_kernel::{adaptive_kernel, ops, Backend};
use common::thread_names;

const SKIP_VAR: &str = "ADAPTIVE_KERNEL_SKIP_GPU_TESTS";
const ROLE_VAR: &str = "ADAPTIVE_KERNEL_TEST_ROLE";
/// How long start-up sleeps in the scenarios that watch it run.
const DELAY: Duration = Duration::from_millis(300);
/// Far below [`DELAY`]: a call that took this long waited for start-up.
const PROMPT: Duration = Duration::from_millis(100);

fn skip_gpu() -> bool {
    let skip = std::env::var(SKIP_VAR).as_deref() == Ok("1");
    if skip {
        eprintln!("skipped: {SKIP_VAR}=1");
    }
    skip
}

/// Runs `role` in a child process of this test binary with `env` (`None`
/// removes a variable); returns its stderr and stdout, after asserting it succeeded.
fn run(role: &str, env: &[(&str, Option<&str>)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary path"));
    cmd.args(["--ignored", "--exact", "child", "--nocapture", "--test-threads=1"])
        .env(ROLE_VAR, role)
        .env("ADAPTIVE_KERNEL_HISTORY", "off")
        .env_remove("ADAPTIVE_KERNEL_BACKEND");
    for (name, value) in env {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
    let out = cmd.output().expect("spawn child test process");
    let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child `{role}` failed ({}):\n{text}", out.status);
    text
}

fn operands() -> (Vec<f32>, Vec<f32>) {
    let a = (0..10_000).map(|i| (i % 17) as f32 - 8.0).collect();
    let b = (0..10_000).map(|i| (i % 5) as f32 * 0.25).collect();
    (a, b)
}

fn assert_ready_on_device() {
    let health = gpu::health();
    assert!(
        health.is_ready(),
        "no usable GPU device ({health}); run with ADAPTIVE_KERNEL_GPU=software and Mesa's lavapipe, \
         or set {SKIP_VAR}=1 to skip the GPU tests"
    );
}

#[test]
fn start_returns_at_once_and_the_device_follows() {
    if !skip_gpu() {
        eprintln!("{}", run("background", &[]));
    }
}

#[test]
fn an_op_called_during_start_up_waits_and_runs_on_the_device() {
    if !skip_gpu() {
        eprintln!("{}", run("op-waits", &[]));
    }
}

#[test]
fn start_up_prints_nothing_without_a_display_session() {
    if skip_gpu() {
        return;
    }
    for xdg in [None, Some("")] {
        let text = run("quiet", &[("XDG_RUNTIME_DIR", xdg)]);
        assert!(text.contains("child quiet: on the device"), "{text}");
        let noise: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("error:")).collect();
        assert!(noise.is_empty(), "XDG_RUNTIME_DIR={xdg:?}: start-up wrote errors:\n{}", noise.join("\n"));
    }
}

/// Exiting while the driver loads aborted or crashed the process (LLVM's
/// static state torn down under the loading thread) in about 1.5% of runs
/// that exited 1–20 ms after `start`. With the guard removed, 40 exits spread
/// over that window failed this test in 2 of 6 runs; it makes 60.
#[test]
fn parallel_variants_wait_for_the_driver_to_load() {
    if !skip_gpu() {
        eprintln!("{}", run("parallel-waits", &[]));
    }
}

/// Calls of [`halve_threaded`], the Parallel variant of [`halve`].
static THREADED_CALLS: AtomicUsize = AtomicUsize::new(0);

/// A kernel with a hand-written Parallel variant that starts a thread per call.
#[adaptive_kernel(complexity = "Low", parallel = halve_threaded)]
fn halve(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v * 0.5).collect()
}

fn halve_threaded(x: &[f32]) -> Vec<f32> {
    THREADED_CALLS.fetch_add(1, Ordering::Relaxed);
    let (a, b) = x.split_at(x.len() / 2);
    let half = |s: &[f32]| s.iter().map(|v| v * 0.5).collect::<Vec<f32>>();
    let mut out = std::thread::scope(|s| s.spawn(|| half(a)).join().expect("halve thread"));
    out.extend(half(b));
    out
}

#[test]
fn a_process_may_end_while_start_up_runs() {
    for i in 0..60u64 {
        let pause = (i * 333).to_string();
        let text = run("exit-early", &[("ADAPTIVE_KERNEL_TEST_PAUSE_US", Some(&pause))]);
        assert!(!text.contains("LLVM ERROR"), "{text}");
    }
}

#[test]
fn the_off_policy_starts_nothing() {
    run("off", &[("ADAPTIVE_KERNEL_GPU", Some("off"))]);
}

/// A program whose kernels have no GPU variant, run where a GPU is usable (lavapipe
/// here, under `ADAPTIVE_KERNEL_GPU=software`): it settles, calibrates and saves its
/// history, and never loads a Vulkan library nor starts a GPU thread. The control child
/// routes a kernel with a GPU variant and finds the driver mapped, so the inspection
/// can see what it looks for.
#[test]
fn a_program_without_gpu_kernels_never_loads_the_driver() {
    if skip_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history.json");
    let history = Some(history.to_str().unwrap());
    let text = run("cpu-only", &[("ADAPTIVE_KERNEL_GPU", Some("software")), ("ADAPTIVE_KERNEL_HISTORY", history)]);
    assert!(text.contains("child cpu-only: settled"), "{text}");
    let text = run("gpu-kernel", &[("ADAPTIVE_KERNEL_GPU", Some("software"))]);
    assert!(text.contains("child gpu-kernel: driver mapped"), "{text}");
}

/// The lines of this process's memory map that name a Vulkan loader or driver library.
fn driver_mappings() -> Vec<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    let mut found: Vec<String> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|path| ["libvulkan", "libnvidia", "_icd"].iter().any(|name| path.contains(name)))
        .map(str::to_owned)
        .collect();
    found.dedup();
    found
}

/// A kernel with a GPU variant (through `ops`), for the control child.
#[adaptive_kernel(complexity = "Medium")]
fn energy(x: &[f32]) -> f32 {
    ops::dot(x, x)
}

/// The settled backend of [`halve`]'s bucket for `size`.
fn row_settled(size: usize) -> Option<Backend> {
    halve::KERNEL.table().row_for(size).and_then(|r| r.chosen)
}

/// The scenarios, one per child process (see the module docs).
#[test]
#[ignore = "a child process of the other tests in this file"]
fn child() {
    let role = std::env::var(ROLE_VAR).expect("run by the tests in this file");
    let (a, b) = operands();
    match role.as_str() {
        "background" => {
            gpu::__delay_start_for_tests(DELAY);
            assert_eq!(gpu::health(), GpuHealth::Uninitialized);
            let began = Instant::now();
            gpu::start();
            let start = began.elapsed();
            let asked = Instant::now();
            let ready = gpu::is_ready();
            let is_ready = asked.elapsed();
            assert!(!ready, "ready before a start-up delayed by {DELAY:?}");
            assert_eq!(gpu::health(), GpuHealth::Starting);
            assert!(start < PROMPT && is_ready < PROMPT, "start took {start:?}, is_ready {is_ready:?}");
            let asked = Instant::now();
            (0..1000).for_each(|_| gpu::start());
            let start_again = asked.elapsed() / 1000;
            let asked = Instant::now();
            (0..1000).for_each(|_| assert!(!std::hint::black_box(gpu::is_ready()) || began.elapsed() >= DELAY));
            let is_ready_again = asked.elapsed() / 1000;
            assert!(gpu::wait_ready(Duration::from_secs(5)), "not ready after 5 s: {}", gpu::health());
            let waited = began.elapsed();
            assert!(waited >= DELAY, "ready after {waited:?}, before the delay ended");
            assert!(gpu::is_ready());
            assert_ready_on_device();
            assert_eq!(gpu::add(&a, &b), scalar::add(&a, &b));
            assert_ready_on_device();
            eprintln!(
                "child background: start {start:?}, first is_ready {is_ready:?}; later start {start_again:?}, \
                 is_ready {is_ready_again:?}; ready after {waited:?} (delay {DELAY:?})"
            );
        }
        "op-waits" => {
            gpu::__delay_start_for_tests(DELAY);
            let began = Instant::now();
            gpu::start();
            assert_eq!(gpu::health(), GpuHealth::Starting);
            assert_eq!(gpu::mul(&a, &b), scalar::mul(&a, &b));
            let took = began.elapsed();
            // It returned only once start-up had finished, and it ran on the device.
            assert!(took >= DELAY, "the op returned after {took:?}, before start-up could finish");
            assert_ready_on_device();
            assert!(gpu::is_ready() && gpu::is_available());
        }
        "parallel-waits" => {
            // Parallel must be a candidate worth waiting for: the router calls none predicted far
            // slower than the best (a thread spawned per call on 1 µs of work would be), so the
            // model here predicts its fork-join nearly free.
            let cheap_forks = adaptive_kernel::CostParams { fork_join_latency: 1e-9, ..common::FIGURES };
            assert!(adaptive_kernel::cost::install_global(cheap_forks), "installed before any kernel ran");
            // Two threads whatever the machine has, so Parallel is a candidate.
            par::with_threads(2, || {
                gpu::__delay_start_for_tests(DELAY);
                gpu::start();
                let began = Instant::now();
                // Fewer calls than a bucket waits for (64), all within the delay.
                let mut calls = 0;
                while calls < 30 && began.elapsed() < DELAY / 2 {
                    assert_eq!(halve(&a), scalar::scale(&a, 0.5));
                    calls += 1;
                    std::thread::sleep(Duration::from_millis(2));
                }
                let row = halve::KERNEL.table().row_for(a.len()).cloned().expect("a row for the size called");
                assert_eq!(
                    THREADED_CALLS.load(Ordering::Relaxed),
                    0,
                    "Parallel ran during start-up:\n{}",
                    halve::KERNEL.table()
                );
                assert_eq!(row.chosen, None, "settled without measuring Parallel:\n{}", halve::KERNEL.table());
                assert!(gpu::wait_ready(Duration::from_secs(5)), "{}", gpu::health());
                while row_settled(a.len()).is_none() && began.elapsed() < Duration::from_secs(10) {
                    assert_eq!(halve(&a), scalar::scale(&a, 0.5));
                    calls += 1;
                }
                let chosen = row_settled(a.len());
                assert!(chosen.is_some(), "not settled after {calls} calls:\n{}", halve::KERNEL.table());
                assert!(
                    THREADED_CALLS.load(Ordering::Relaxed) > 0,
                    "Parallel never measured:\n{}",
                    halve::KERNEL.table()
                );
                eprintln!("child parallel-waits: {calls} calls, settled on {chosen:?}");
            });
        }
        "quiet" => {
            assert!(gpu::wait_ready(Duration::from_secs(10)), "{}", gpu::health());
            assert_eq!(gpu::add(&a, &b), scalar::add(&a, &b));
            assert_ready_on_device();
            eprintln!("child quiet: on the device");
        }
        "cpu-only" => {
            // A plain loop, no `ops::` call: Scalar, SIMD and Parallel, no GPU variant.
            assert!(!halve::KERNEL.has_gpu());
            let began = Instant::now();
            let mut calls = 0;
            while row_settled(a.len()).is_none() && began.elapsed() < Duration::from_secs(20) {
                assert_eq!(halve(&a), scalar::scale(&a, 0.5));
                calls += 1;
            }
            let chosen = row_settled(a.len());
            assert!(chosen.is_some(), "not settled after {calls} calls:\n{}", halve::KERNEL.table());
            // The cost model's calibration finished, and the history was saved.
            while adaptive_kernel::cost::calibrated().is_none() && began.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert!(adaptive_kernel::cost::calibrated().is_some(), "the calibration never finished");
            adaptive_kernel::flush().expect("history saved");
            assert_eq!(gpu::health(), GpuHealth::Uninitialized, "something started the GPU");
            let mapped = driver_mappings();
            assert!(mapped.is_empty(), "a Vulkan library is mapped: {mapped:?}");
            // The runtime's threads are named `ak-…`, its GPU threads `ak-gpu-…`.
            let threads = thread_names();
            assert!(threads.iter().any(|t| t.starts_with("ak-")), "no runtime thread seen: {threads:?}");
            assert!(!threads.iter().any(|t| t.starts_with("ak-gpu")), "a GPU thread runs: {threads:?}");
            eprintln!("child cpu-only: settled on {chosen:?} after {calls} calls; threads {threads:?}");
        }
        "gpu-kernel" => {
            assert!(energy::KERNEL.has_gpu());
            assert!(driver_mappings().is_empty(), "mapped before anything asked: {:?}", driver_mappings());
            assert_eq!(energy(&a), scalar::dot(&a, &a), "routed");
            assert!(gpu::wait_ready(Duration::from_secs(60)), "{}", gpu::health());
            let mapped = driver_mappings();
            assert!(mapped.iter().any(|m| m.contains("libvulkan")), "no Vulkan library mapped: {mapped:?}");
            eprintln!("child gpu-kernel: driver mapped: {mapped:?}");
        }
        "exit-early" => {
            let pause: u64 = std::env::var("ADAPTIVE_KERNEL_TEST_PAUSE_US").map_or(0, |v| v.parse().unwrap());
            gpu::start();
            std::thread::sleep(Duration::from_micros(pause));
        }
        "off" => {
            gpu::start();
            assert!(!gpu::is_ready());
            let began = Instant::now();
            assert!(!gpu::wait_ready(Duration::from_secs(5)));
            assert!(began.elapsed() < PROMPT, "waited {:?} for a start-up that never began", began.elapsed());
            let GpuHealth::Unavailable { reason } = gpu::health() else { panic!("{}", gpu::health()) };
            assert!(reason.contains("ADAPTIVE_KERNEL_GPU=off"), "{reason}");
            assert!(!gpu::is_available() && gpu::adapter().is_none());
            assert_eq!(gpu::add(&a, &b), scalar::add(&a, &b));
        }
        other => panic!("unknown role {other}"),
    }
}
