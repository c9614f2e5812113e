//! Forcing a backend is absolute and leaves no trace: a `with_backend` scope, then
//! `Kernel::force`, then the process-wide setting (`ADAPTIVE_KERNEL_BACKEND` or
//! `config::Settings::backend`), then a saved or learned decision; forced calls are
//! never timed, compared, recorded or saved, and a forced backend a kernel lacks runs
//! its fallback and says so once.
//!
//! The kernels have hand-written variants that count their calls and take a known
//! time (SIMD 10 µs, the others 100 µs), so what ran is counted, not inferred. Each
//! phase that must start from a saved file is a child process (this test binary again,
//! on the ignored `child` entry point) on a private history file.

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use adaptive_kernel::config::{HistorySetting, Settings};
use adaptive_kernel::{adaptive_kernel, last_route, with_backend, Backend};
use common::*;
use rayon::prelude::*;

/// Calls of each variant of [`twice`] and [`lone`]: Scalar, SIMD, Parallel.
static CALLS: [AtomicUsize; 3] = [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)];

fn count(i: usize) {
    CALLS[i].fetch_add(1, Ordering::Relaxed);
}

/// `[Scalar, SIMD, Parallel]` calls so far.
fn calls() -> [usize; 3] {
    CALLS.each_ref().map(|c| c.load(Ordering::Relaxed))
}

/// Twice the sum, in three hand-counted variants: Scalar (the body) and Parallel take
/// 100 µs, SIMD 10 µs, so a router that measures settles on SIMD.
#[adaptive_kernel(complexity = "Medium", simd = twice_simd, parallel = twice_parallel)]
fn twice(x: &[f32]) -> f32 {
    count(0);
    spin(us(100));
    x.iter().sum::<f32>() * 2.0
}

fn twice_simd(x: &[f32]) -> f32 {
    count(1);
    spin(us(10));
    x.iter().sum::<f32>() * 2.0
}

fn twice_parallel(x: &[f32]) -> f32 {
    count(2);
    spin(us(100));
    x.iter().sum::<f32>() * 2.0
}

/// Like [`twice`] without a Parallel variant (`serial`).
#[adaptive_kernel(complexity = "Medium", simd = twice_simd, serial)]
fn lone(x: &[f32]) -> f32 {
    count(0);
    spin(us(100));
    x.iter().sum::<f32>() * 2.0
}

/// Below the MoE table's SIMD threshold for Medium (10,000): the prior says Scalar, the
/// saved decision SIMD.
const SIZE: usize = 4_096;

fn input() -> Vec<f32> {
    vec![0.5; SIZE]
}

/// The kernel's learned rows: sizes, counts, centres, decisions.
fn table_of(kernel: &'static adaptive_kernel::Kernel) -> String {
    format!("{:?}", kernel.table().rows)
}

/// Calls `kernel` `n` times; asserts each call, as `last_route` saw it, ran `backend` untimed.
fn forced_calls(n: usize, call: impl Fn(), backend: Backend) {
    for i in 0..n {
        call();
        let last = last_route().expect("a routed call ran on this thread");
        assert_eq!((last.backend, last.timed), (backend, false), "call {i}: {last:?}");
    }
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    let x = input();
    let role = child_role().expect("run by run_child");
    match role.as_str() {
        "learn" => {
            settle_with(&twice::KERNEL, SIZE, wins(Backend::Simd));
            settle_with(&lone::KERNEL, SIZE, wins(Backend::Simd));
            assert_eq!(settled(&twice::KERNEL, SIZE), Some(Backend::Simd));
            adaptive_kernel::flush().unwrap();
        }
        // The control: without forcing, the saved decision runs.
        "unforced" => {
            for _ in 0..100 {
                twice(&x);
            }
            assert!(
                calls()[1] >= 90,
                "the saved SIMD decision did not run: {:?}\n{}",
                calls(),
                table_of(&twice::KERNEL)
            );
        }
        // ADAPTIVE_KERNEL_BACKEND=scalar or =parallel, or the same through `Settings`.
        "variable" | "settings" => {
            let forced = match std::env::var("FORCED").as_deref() {
                Ok("parallel") => Backend::Parallel,
                _ => Backend::Scalar,
            };
            if role == "settings" {
                Settings::application().backend(Some(forced)).apply().expect("before any kernel ran");
            }
            let before = table_of(&twice::KERNEL);
            assert_eq!(settled(&twice::KERNEL, SIZE), Some(Backend::Simd), "the saved decision was loaded");
            forced_calls(100, || assert_eq!(twice(&x), SIZE as f32), forced);
            let index = if forced == Backend::Scalar { 0 } else { 2 };
            assert_eq!(calls()[index], 100, "{forced:?}: {:?}", calls());
            assert_eq!(calls().iter().sum::<usize>(), 100, "{:?}", calls());
            // The pool's workers are forced too (a scope would not reach them).
            let on_workers: Vec<f32> = (0..8).into_par_iter().map(|_| twice(&x)).collect();
            assert_eq!(on_workers, vec![SIZE as f32; 8]);
            assert_eq!(calls()[index], 108, "on the pool's workers: {:?}", calls());
            // 100 more, then nothing learned: the table is as loaded.
            forced_calls(100, || assert_eq!(twice(&x), SIZE as f32), forced);
            assert_eq!(table_of(&twice::KERNEL), before, "forced calls were recorded");
            adaptive_kernel::flush().unwrap();
            println!("COUNTS {:?}", calls());
        }
        // `Kernel::force` beats the process-wide setting (ADAPTIVE_KERNEL_BACKEND=simd here),
        // a scope beats both, and lifting the force finds the saved decision.
        "force" => {
            let before = table_of(&twice::KERNEL);
            twice::KERNEL.force(Some(Backend::Scalar));
            forced_calls(200, || assert_eq!(twice(&x), SIZE as f32), Backend::Scalar);
            assert_eq!(calls(), [200, 0, 0]);
            with_backend(Backend::Parallel, || {
                forced_calls(10, || assert_eq!(twice(&x), SIZE as f32), Backend::Parallel)
            });
            assert_eq!(calls(), [200, 0, 10]);
            assert_eq!(table_of(&twice::KERNEL), before, "200 forced calls were recorded");
            twice::KERNEL.force(None);
            // The process-wide setting again (SIMD), then nothing forced leaves the table as loaded.
            forced_calls(10, || assert_eq!(twice(&x), SIZE as f32), Backend::Simd);
            assert_eq!(calls(), [200, 10, 10]);
            assert_eq!(table_of(&twice::KERNEL), before);
            adaptive_kernel::flush().unwrap();
        }
        // ADAPTIVE_KERNEL_BACKEND=parallel on a kernel without a Parallel variant.
        "lacking" => {
            let before = table_of(&lone::KERNEL);
            assert!(!lone::KERNEL.has_parallel());
            forced_calls(200, || assert_eq!(lone(&x), SIZE as f32), Backend::Simd);
            assert_eq!(calls(), [0, 200, 0], "the SIMD fallback ran every call");
            assert_eq!(table_of(&lone::KERNEL), before, "the fallback's calls were recorded");
            adaptive_kernel::flush().unwrap();
        }
        other => panic!("unknown role {other}"),
    }
}

fn run(role: &str, file: &Path, env: &[(&str, &str)]) -> String {
    let mut all = vec![("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()), ("ADAPTIVE_KERNEL_GPU", "off")];
    all.extend_from_slice(env);
    let (ok, out) = run_child("child", role, &all);
    assert!(ok, "child {role} failed:\n{out}");
    out
}

/// The history file as JSON.
fn saved(file: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

/// A history file in which `twice` and `lone` settled on SIMD at [`SIZE`].
fn learned() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    run("learn", &file, &[]);
    (dir, file)
}

#[test]
fn the_variable_and_settings_beat_a_saved_decision_and_learn_nothing() {
    let (_dir, file) = learned();
    run("unforced", &file, &[]);
    let before = saved(&file);
    for (role, forced) in
        [("variable", "scalar"), ("variable", "parallel"), ("settings", "scalar"), ("settings", "parallel")]
    {
        let env: &[(&str, &str)] = if role == "variable" {
            &[("ADAPTIVE_KERNEL_BACKEND", forced), ("FORCED", forced)]
        } else {
            &[("FORCED", forced)]
        };
        let out = run(role, &file, env);
        assert!(out.contains("COUNTS"), "{out}");
        assert_eq!(saved(&file), before, "{role} {forced}: the saved file changed");
    }
}

#[test]
fn kernel_force_beats_the_setting_a_scope_beats_both_and_nothing_is_recorded() {
    let (_dir, file) = learned();
    let before = saved(&file);
    run("force", &file, &[("ADAPTIVE_KERNEL_BACKEND", "simd")]);
    assert_eq!(saved(&file), before, "the saved file changed");
}

#[test]
fn a_forced_backend_the_kernel_lacks_runs_its_fallback_says_so_once_and_records_nothing() {
    let (_dir, file) = learned();
    let before = saved(&file);
    let out = run("lacking", &file, &[("ADAPTIVE_KERNEL_BACKEND", "parallel")]);
    assert_eq!(out.matches("Parallel forced but the kernel has no Parallel variant").count(), 1, "{out}");
    assert_eq!(saved(&file), before, "the saved file changed");
}

#[test]
fn settings_backend_is_refused_once_fixed_and_named() {
    adaptive_kernel::set_history(HistorySetting::Off);
    // Fixed by its first read (the first kernel's first call reads it).
    let fixed = adaptive_kernel::config::forced_backend();
    let other = if fixed == Some(Backend::Simd) { Some(Backend::Scalar) } else { Some(Backend::Simd) };
    let err = Settings::application().backend(other).apply().unwrap_err();
    assert_eq!(err.settings, ["backend"]);
    assert!(Settings::library().backend(fixed).apply().is_ok(), "the value in use is no change");
}
