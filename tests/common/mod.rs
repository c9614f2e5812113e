//! Shared set-up for integration tests.
#![allow(dead_code)]

use std::time::Duration;

use adaptive_kernel::config::HistorySetting;
use adaptive_kernel::{Backend, DecisionKind, Kernel, OpComplexity, Work};

/// Set to `1`, the GPU tests skip (saying so) instead of failing where no device is usable.
pub(crate) const SKIP_GPU_VAR: &str = "ADAPTIVE_KERNEL_SKIP_GPU_TESTS";

/// True when a GPU test should run. Fails the test when there is no usable device (the tests
/// expect Mesa's lavapipe with `ADAPTIVE_KERNEL_GPU=software` on a machine without a GPU),
/// unless [`SKIP_GPU_VAR`]`=1`, which skips it and says so.
pub(crate) fn gpu_or_skip() -> bool {
    if std::env::var(SKIP_GPU_VAR).as_deref() == Ok("1") {
        eprintln!("skipped: {SKIP_GPU_VAR}=1");
        return false;
    }
    assert!(
        adaptive_kernel::ops::gpu::is_available(),
        "no usable GPU device ({}); run with ADAPTIVE_KERNEL_GPU=software and Mesa's lavapipe \
         (apt-get install mesa-vulkan-drivers), or set {SKIP_GPU_VAR}=1 to skip the GPU tests",
        adaptive_kernel::ops::gpu::health()
    );
    true
}

/// Keeps tests away from the user's history file (unless a test chose a file first).
pub(crate) fn no_history() {
    adaptive_kernel::set_history(HistorySetting::Off);
}

/// Fixed cost-model figures: SIMD 10× Scalar's throughput, a GPU 100× SIMD's behind a
/// 100 µs launch, a bus half as fast as memory, and two threads behind a 20 µs
/// fork–join. Tests that depend on the model's
/// judgement install these, since calibration in a debug build measures unoptimised
/// code (Scalar and SIMD alike) against a native-speed GPU driver.
pub(crate) const FIGURES: adaptive_kernel::CostParams = adaptive_kernel::CostParams {
    scalar_flops: 1e9,
    simd_flops: 1e10,
    mem_bandwidth: 2e10,
    gpu_flops: 1e12,
    transfer_bandwidth: 1e10,
    gpu_latency: 1e-4,
    cpu_call_latency: 1e-8,
    gpu_available: true,
    parallel_threads: 2.0,
    fork_join_latency: 20e-6,
};

/// No history, and the cost model fixed at [`FIGURES`]; asserts the figures took (no kernel ran before).
pub(crate) fn fixed_model() {
    no_history();
    adaptive_kernel::cost::install_global(FIGURES);
    assert_eq!(adaptive_kernel::cost::global().params(), FIGURES, "installed before any kernel ran");
}

/// Drives `kernel`'s bucket of `size` with injected timings until it settles;
/// returns the backends it asked for, in order. The calls claim almost no work,
/// so the cost model never rules a backend out: only the injected timings count.
pub(crate) fn settle_with(kernel: &'static Kernel, size: usize, time: impl Fn(Backend) -> Duration) -> Vec<Backend> {
    settle_with_work(kernel, size, Work { size, flops: 1, bytes: 1 }, time)
}

/// [`settle_with`] for calls that claim `work`.
pub(crate) fn settle_with_work(
    kernel: &'static Kernel,
    size: usize,
    work: Work,
    time: impl Fn(Backend) -> Duration,
) -> Vec<Backend> {
    let mut asked = Vec::new();
    for _ in 0..200 {
        let route = kernel.route(size, || work);
        let b = route.backend();
        drop(route);
        if settled(kernel, size).is_some() {
            return asked;
        }
        asked.push(b);
        kernel.observe(size, b, time(b));
    }
    panic!("{} never settled at size {size}; asked for {asked:?}", kernel.name());
}

/// Makes `calls` routed calls of `size`, each running as a variant taking `cost(backend)`
/// (as a program's calls would: a settled bucket times a sample of them at the rate they
/// come, and may re-time an alternative); returns the backend each call was routed to.
pub(crate) fn route_with(
    kernel: &'static Kernel,
    size: usize,
    calls: usize,
    cost: impl Fn(Backend) -> Duration,
) -> Vec<Backend> {
    (0..calls).map(|_| call_spinning(kernel, size, &cost).0).collect()
}

/// The settled backend of `size`'s bucket, if settled.
pub(crate) fn settled(kernel: &'static Kernel, size: usize) -> Option<Backend> {
    kernel.table().row_for(size).and_then(|r| r.chosen)
}

/// How `size`'s bucket was decided.
pub(crate) fn decided_by(kernel: &'static Kernel, size: usize) -> Option<DecisionKind> {
    kernel.table().row_for(size).map(|r| r.decided_by)
}

/// Microseconds.
pub(crate) fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// Injected timings for [`settle_with`]: 10 µs on `winner`, 100 µs on every other backend.
pub(crate) fn wins(winner: Backend) -> impl Fn(Backend) -> Duration {
    move |b| if b == winner { us(10) } else { us(100) }
}

/// A kernel spec without a GPU variant.
pub(crate) const fn cpu_spec(name: &'static str, complexity: OpComplexity) -> adaptive_kernel::KernelSpec {
    adaptive_kernel::KernelSpec {
        name,
        complexity,
        has_gpu: false,
        has_parallel: false,
        token_hash: 7,
        loops: &[],
        splits: &[],
        gpu_loops: &[],
    }
}

/// Runs this test binary's ignored test `entry` in a child process with `role` in
/// `ADAPTIVE_KERNEL_TEST_ROLE` and the given environment; returns (success, stderr).
pub(crate) fn run_child(entry: &str, role: &str, env: &[(&str, &str)]) -> (bool, String) {
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["--ignored", "--exact", entry, "--nocapture", "--test-threads=1"])
        .env("ADAPTIVE_KERNEL_TEST_ROLE", role)
        .env_remove("ADAPTIVE_KERNEL_HISTORY")
        .env_remove("ADAPTIVE_KERNEL_BACKEND");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("spawn child test process");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    (out.status.success(), stderr)
}

/// Runs this test binary's ignored test `child` as `role` on the history file `file`,
/// with the GPU off; returns its output, and fails the test with it when the child fails.
pub(crate) fn child_ok(role: &str, file: &std::path::Path) -> String {
    let (ok, out) = run_child(
        "child",
        role,
        &[("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()), ("ADAPTIVE_KERNEL_GPU", "off")],
    );
    assert!(ok, "child {role} failed:\n{out}");
    out
}

/// The role this process was started with by [`run_child`], if any.
pub(crate) fn child_role() -> Option<String> {
    std::env::var("ADAPTIVE_KERNEL_TEST_ROLE").ok()
}

/// Busy-waits `d` (a variant with a known cost, immune to sleep granularity).
pub(crate) fn spin(d: Duration) {
    let start = std::time::Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Routes one call of `size` and runs it as a variant taking `cost(backend)`; returns the route's backend and whether it was timed.
pub(crate) fn call_spinning(
    kernel: &'static Kernel,
    size: usize,
    cost: impl Fn(Backend) -> Duration,
) -> (Backend, bool) {
    let route = kernel.route(size, || Work { size, flops: 1, bytes: 1 });
    let (b, timed) = (route.backend(), route.is_timed());
    route.run(|| spin(cost(b)));
    (b, timed)
}

/// Starts this test binary's ignored test `entry` once per role, all at the same
/// time, with `env` and `ADAPTIVE_KERNEL_START_AT` (a wall-clock instant in
/// milliseconds since the epoch, a moment after the last one is spawned) for
/// [`wait_for_start`]; returns each child's (success, output), in `roles` order.
pub(crate) fn run_children_together(entry: &str, roles: &[String], env: &[(&str, &str)]) -> Vec<(bool, String)> {
    let exe = std::env::current_exe().expect("test binary path");
    let start_at = (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap()
        + Duration::from_millis(1_500))
    .as_millis()
    .to_string();
    let children: Vec<_> = roles
        .iter()
        .map(|role| {
            let mut cmd = std::process::Command::new(&exe);
            cmd.args(["--ignored", "--exact", entry, "--nocapture", "--test-threads=1"])
                .env("ADAPTIVE_KERNEL_TEST_ROLE", role)
                .env("ADAPTIVE_KERNEL_START_AT", &start_at)
                .env_remove("ADAPTIVE_KERNEL_HISTORY")
                .env_remove("ADAPTIVE_KERNEL_BACKEND")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            for (k, v) in env {
                cmd.env(k, v);
            }
            cmd.spawn().expect("spawn child test process")
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().expect("wait for child test process");
            let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
            (out.status.success(), text)
        })
        .collect()
}

/// Milliseconds since the epoch, now.
pub(crate) fn epoch_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()
}

/// In a child of [`run_children_together`]: sleeps until the shared start instant.
pub(crate) fn wait_for_start() {
    let at: u128 = std::env::var("ADAPTIVE_KERNEL_START_AT").expect("started together").parse().unwrap();
    while epoch_ms() < at {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// From children's outputs holding `WINDOW <start_ms> <end_ms>` lines: asserts that
/// every child's window overlaps every other's (they really ran at the same time).
pub(crate) fn assert_windows_overlap(outputs: &[(bool, String)]) {
    let windows: Vec<(u128, u128)> = outputs
        .iter()
        .map(|(_, out)| {
            let line = out
                .lines()
                .find_map(|l| l.split_once("WINDOW ").map(|(_, w)| w))
                .unwrap_or_else(|| panic!("no window:\n{out}"));
            let mut it = line.split_whitespace().map(|v| v.parse::<u128>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect();
    let latest_start = windows.iter().map(|w| w.0).max().unwrap();
    let earliest_end = windows.iter().map(|w| w.1).min().unwrap();
    assert!(latest_start < earliest_end, "the children did not overlap: {windows:?}");
}

/// The names of this process's threads (Linux keeps 15 bytes of each).
pub(crate) fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .collect()
}
