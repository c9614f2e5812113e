//! A process exits cleanly whatever the runtime's threads are doing: the GPU
//! probes inside a GPU call, the CPU calibration, a history save.
//!
//! On an NVIDIA GPU a program whose last work was correct died with SIGSEGV at
//! exit while the cost model's GPU probes were still inside the driver. Here
//! each scenario runs in a child process (this binary again, on the ignored
//! `child` entry point) that returns from `main` while a runtime thread is busy;
//! the test asserts the child exited with status 0 and, where the exit must
//! wait, that the work in flight finished first. The GPU scenarios need a device
//! (lavapipe under `ADAPTIVE_KERNEL_GPU=software`, as `scripts/test` runs them)
//! and FAIL without one, unless `ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1`.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use adaptive_kernel::ops::{gpu, scalar};
use adaptive_kernel::{adaptive_kernel, Kernel, KernelSpec, OpComplexity, Work};
use common::{child_role, run_child};

const SKIP_VAR: &str = "ADAPTIVE_KERNEL_SKIP_GPU_TESTS";
/// How long each GPU call of the in-flight scenario holds the device (the test hook).
const IN_FLIGHT: Duration = Duration::from_millis(400);
/// What the test hook prints when a GPU call finishes after exit began.
const FINISHED: &str = "a GPU call in flight at exit finished";

fn skip_gpu() -> bool {
    let skip = std::env::var(SKIP_VAR).as_deref() == Ok("1");
    if skip {
        eprintln!("skipped: {SKIP_VAR}=1");
    }
    skip
}

/// Runs `role`, with the GPU on lavapipe and no history unless `env` says otherwise;
/// asserts it exited with status 0 and returns its output.
fn exits_cleanly(role: &str, env: &[(&str, &str)]) -> String {
    let mut all = vec![("ADAPTIVE_KERNEL_GPU", "software"), ("ADAPTIVE_KERNEL_HISTORY", "off")];
    all.extend_from_slice(env);
    let (ok, out) = run_child("child", role, &all);
    assert!(ok, "child `{role}` did not exit cleanly:\n{out}");
    out
}

/// The probes' first GPU call is held inside the device for 400 ms when `main`
/// returns: the exit waits for it (the hook's line is printed, after the child's
/// last one) and the process exits with 0.
#[test]
fn exit_waits_for_the_gpu_probes_call_in_flight() {
    if skip_gpu() {
        return;
    }
    let out = exits_cleanly("probes-in-flight", &[]);
    let returned = out.find("child probes-in-flight: returning").unwrap_or_else(|| panic!("{out}"));
    let finished = out.find(FINISHED).unwrap_or_else(|| panic!("the exit did not wait for the GPU call:\n{out}"));
    assert!(finished > returned, "{out}");
}

/// The original crash's shape: GPU probes started, `main` returns at once, no delay
/// injected. Ten times; every exit status must be 0.
#[test]
fn returning_right_after_the_probes_start_exits_cleanly() {
    if skip_gpu() {
        return;
    }
    let seen = (0..10).filter(|_| exits_cleanly("probes-started", &[]).contains("probes running: true")).count();
    assert!(seen > 0, "the probes never ran when the child returned");
}

/// The CPU calibration starts with the first routed call; `main` returns at once.
#[test]
fn returning_while_the_calibration_runs_exits_cleanly() {
    for _ in 0..10 {
        exits_cleanly("calibrating", &[("ADAPTIVE_KERNEL_GPU", "off")]);
    }
}

/// A history save held for 400 ms is in progress when `main` returns: the exit lets
/// it finish (the file is complete, with the kernel) and leaves no temporary file.
#[test]
fn exit_lets_a_history_save_in_progress_finish() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let out =
        exits_cleanly("saving", &[("ADAPTIVE_KERNEL_GPU", "off"), ("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap())]);
    assert!(out.contains("child saving: returning"), "{out}");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("no history file ({e}):\n{out}"));
    let json: serde_json::Value = serde_json::from_str(&text).expect("a complete history file");
    assert!(text.contains("clean_exit::halve"), "the save is not the kernel's: {json}");
    assert_eq!(leftovers(dir.path()), Vec::<String>::new(), "files other than the history and its lock");
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name != "history.json" && name != "history.json.lock")
        .collect()
}

/// Routed, never computed on the GPU: its calls run on the CPU whatever the route
/// says, so that the only GPU calls are the cost model's probes.
static ROUTED: Kernel = Kernel::new(KernelSpec {
    name: "clean_exit::routed",
    complexity: OpComplexity::Medium,
    has_gpu: true,
    has_parallel: false,
    token_hash: 1,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

/// A plain loop: no GPU variant.
#[adaptive_kernel(complexity = "Low", name = "clean_exit::halve")]
fn halve(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v * 0.5).collect()
}

/// Whether a thread named for the GPU probes runs in this process.
fn probes_running() -> bool {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .any(|name| name.trim_end() == "ak-gpu-probes")
}

/// Routes [`ROUTED`] until the GPU probes run (true) or 20 s pass (false).
fn route_until_the_probes_run(x: &[f32]) -> bool {
    let began = Instant::now();
    while !probes_running() && began.elapsed() < Duration::from_secs(20) {
        let route = ROUTED.route(x.len(), || Work::estimate(OpComplexity::Medium, x.len(), None, None));
        route.run(|| scalar::sum(x));
    }
    probes_running()
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    let x: Vec<f32> = (0..4096).map(|i| (i % 7) as f32).collect();
    match child_role().expect("run by run_child").as_str() {
        "probes-in-flight" => {
            gpu::__delay_calls_for_tests(IN_FLIGHT);
            assert!(gpu::wait_ready(Duration::from_secs(60)), "no usable GPU: {}", gpu::health());
            assert!(route_until_the_probes_run(&x), "the GPU probes never started");
            // The probes' first call now holds the device for IN_FLIGHT.
            std::thread::sleep(IN_FLIGHT / 4);
            eprintln!("child probes-in-flight: returning");
        }
        "probes-started" => {
            assert!(gpu::wait_ready(Duration::from_secs(60)), "no usable GPU: {}", gpu::health());
            let running = route_until_the_probes_run(&x);
            eprintln!("child probes-started: probes running: {running}");
        }
        "calibrating" => {
            assert_eq!(halve(&x), scalar::scale(&x, 0.5));
        }
        "saving" => {
            adaptive_kernel::history::__delay_saves_for_tests(IN_FLIGHT);
            let began = Instant::now();
            while !adaptive_kernel::history::__saving_for_tests() && began.elapsed() < Duration::from_secs(30) {
                assert_eq!(halve(&x), scalar::scale(&x, 0.5));
            }
            assert!(adaptive_kernel::history::__saving_for_tests(), "no save began in 30 s");
            eprintln!("child saving: returning");
        }
        other => panic!("unknown role {other}"),
    }
}
