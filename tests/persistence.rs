//! History ("wisdom") across processes: warm starts, invalidation, merging, bad files.
//!
//! Each scenario runs in child processes (this test binary again, on the ignored
//! `child` entry point) because the history file is chosen once per process.

mod common;

use std::fs;
use std::path::Path;
use std::time::Duration;

use adaptive_kernel::{Backend, DecisionKind, HistoryError, Kernel, KernelSpec, OpComplexity};
use common::*;

const fn spec(name: &'static str, token_hash: u64) -> KernelSpec {
    KernelSpec {
        name,
        complexity: OpComplexity::High,
        has_gpu: false,
        has_parallel: false,
        token_hash,
        loops: &[],
        splits: &[],
        gpu_loops: &[],
    }
}

static K: Kernel = Kernel::new(spec("persist::k", 1));
static K_EDITED: Kernel = Kernel::new(spec("persist::k", 2));
static OTHER: Kernel = Kernel::new(spec("persist::other", 1));

const SIZE: usize = 5_000;

fn learn(k: &'static Kernel) {
    settle_with(k, SIZE, |b| if b == Backend::Scalar { us(300) } else { us(100) });
    assert_eq!(settled(k, SIZE), Some(Backend::Simd));
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    let role = child_role().expect("run by run_child");
    match role.as_str() {
        "learn" => {
            learn(&K);
            adaptive_kernel::flush().unwrap();
        }
        "status" => {
            println!(
                "STATUS {:?} {}",
                adaptive_kernel::history::history_status(),
                adaptive_kernel::history::history_status()
            );
            println!("FILE {:?}", adaptive_kernel::history::history_file());
        }
        "learn_other" => {
            learn(&OTHER);
            adaptive_kernel::flush().unwrap();
        }
        "learn_and_exit_without_flush" => {
            learn(&K);
            // The background saver writes shortly after a bucket settles.
            std::thread::sleep(Duration::from_millis(1_500));
        }
        "expect_settled" => {
            // The table is read before any call: it must come from the file.
            assert_eq!(settled(&K, SIZE), Some(Backend::Simd));
            assert_eq!(decided_by(&K, SIZE), Some(DecisionKind::Historical));
            let route = K.route(SIZE, || unreachable!("a loaded bucket needs no decision"));
            assert_eq!(route.backend(), Backend::Simd);
        }
        "expect_fresh" => assert!(K.table().rows.is_empty(), "{}", K.table()),
        "expect_cached_calibration" => {
            // Loading the history (any kernel's first use) installs the saved figures ...
            assert!(K.table().rows.len() == 1);
            let saved: adaptive_kernel::CostParams =
                serde_json::from_str(&std::env::var("EXPECTED_CALIBRATION").unwrap()).unwrap();
            // ... so the process-wide model is those figures, not a new calibration.
            assert_eq!(adaptive_kernel::cost::global().params(), saved);
        }
        "expect_fresh_edited" => assert!(K_EDITED.table().rows.is_empty(), "{}", K_EDITED.table()),
        "expect_refused" => {
            learn(&K);
            assert!(matches!(adaptive_kernel::flush(), Err(HistoryError::Refused { .. })));
        }
        other => panic!("unknown role {other}"),
    }
}

fn json(file: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(file).unwrap()).unwrap()
}

fn kernels_in(file: &Path) -> Vec<String> {
    let v = json(file);
    let machines = v["machines"].as_object().unwrap();
    machines.values().flat_map(|m| m["kernels"].as_object().unwrap().keys().cloned()).collect()
}

#[test]
fn a_second_run_starts_settled() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nested/dir/history.json");
    child_ok("learn", &file);
    assert_eq!(json(&file)["format"], "adaptive-kernel-history");
    child_ok("expect_settled", &file);
}

#[test]
fn the_calibration_is_saved_and_reused_instead_of_measured_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);
    let v = json(&file);
    let machine = v["machines"].as_object().unwrap().values().next().unwrap().clone();
    let calibration = &machine["calibration"];
    assert!(calibration["simd_flops"].as_f64().unwrap() > 0.0, "{calibration}");
    let env = [
        ("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()),
        ("ADAPTIVE_KERNEL_GPU", "off"),
        ("EXPECTED_CALIBRATION", &calibration.to_string()),
    ];
    let (ok, out) = run_child("child", "expect_cached_calibration", &env);
    assert!(ok, "{out}");
}

#[test]
fn the_background_saver_writes_without_an_explicit_flush() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn_and_exit_without_flush", &file);
    child_ok("expect_settled", &file);
}

#[test]
fn an_edited_kernel_does_not_trust_old_timings() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);
    child_ok("expect_fresh_edited", &file);
}

#[test]
fn another_machine_s_history_is_kept_but_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);
    // Pretend the file was written on another machine, with other SIMD features (with
    // the same ones it would be the nearest entry: tests/nearest_fingerprint.rs).
    let mut v = json(&file);
    let machines = v["machines"].as_object_mut().unwrap();
    let (_, mut entry) = machines.iter().next().map(|(k, e)| (k.clone(), e.clone())).unwrap();
    entry["fingerprint"]["cpu"] = "x86_64 Some Other CPU".into();
    entry["fingerprint"]["cpu_features"].as_array_mut().unwrap().push("sve2".into());
    machines.clear();
    machines.insert("0123456789abcdef".into(), entry);
    fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();

    child_ok("expect_fresh", &file);
    child_ok("learn", &file);
    let v = json(&file);
    assert_eq!(v["machines"].as_object().unwrap().len(), 2, "both machines' entries are kept");
}

#[test]
fn two_processes_sharing_a_file_keep_each_other_s_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);
    child_ok("learn_other", &file);
    let mut names = kernels_in(&file);
    names.sort();
    assert_eq!(names, ["persist::k", "persist::other"]);
}

#[test]
fn a_truncated_file_is_reported_once_set_aside_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);
    let good = fs::read(&file).unwrap();
    fs::write(&file, &good[..good.len() / 2]).unwrap();
    let out = child_ok("learn", &file);
    assert_eq!(out.matches("adaptive-kernel: history file").count(), 1, "reported once:\n{out}");
    assert_eq!(fs::read(dir.path().join("history.json.corrupt")).unwrap(), &good[..good.len() / 2]);
    child_ok("expect_settled", &file);
}

fn assert_left_alone(content: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    fs::write(&file, content).unwrap();
    let out = child_ok("expect_refused", &file);
    assert_eq!(out.matches("adaptive-kernel: history file").count(), 1, "reported once:\n{out}");
    assert_eq!(fs::read(&file).unwrap(), content, "the file must not be overwritten");
}

#[test]
fn a_foreign_file_is_never_overwritten() {
    assert_left_alone(br#"{"name": "my-app", "version": 3}"#);
    assert_left_alone(b"important notes, not JSON at all\n");
}

#[test]
fn a_file_from_a_newer_version_is_never_overwritten() {
    assert_left_alone(br#"{"format": "adaptive-kernel-history", "version": 99, "machines": {}}"#);
}

#[test]
fn an_oversized_file_is_not_read_or_overwritten() {
    let mut big = br#"{"format": "adaptive-kernel-history", "version": 1, "machines": {}}"#.to_vec();
    big.resize(17 << 20, b' ');
    assert_left_alone(&big);
}

#[test]
fn the_default_file_is_under_the_xdg_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().to_str().unwrap();
    let (ok, out) = run_child("child", "learn", &[("ADAPTIVE_KERNEL_GPU", "off"), ("XDG_CACHE_HOME", cache)]);
    assert!(ok, "{out}");
    assert_eq!(kernels_in(&dir.path().join("adaptive-kernel/history.json")), ["persist::k"]);
}

/// Without `HOME` and `XDG_CACHE_HOME` (a service, a Windows-like environment) history
/// is still kept: the default location comes from the platform's cache directory, which
/// on Linux falls back to the user database's home directory. And when history is off,
/// the status says who turned it off.
#[test]
fn without_home_the_default_file_is_still_found_and_off_says_why() {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--ignored", "--exact", "child", "--nocapture", "--test-threads=1"])
        .env("ADAPTIVE_KERNEL_TEST_ROLE", "status")
        .env("ADAPTIVE_KERNEL_GPU", "off")
        .env_remove("ADAPTIVE_KERNEL_HISTORY")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HOME");
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("adaptive-kernel/history.json\")"), "a default file: {text}");
    assert!(!text.contains("STATUS Off"), "{text}");
    let (ok, off) = run_child("child", "status", &[("ADAPTIVE_KERNEL_HISTORY", "off"), ("ADAPTIVE_KERNEL_GPU", "off")]);
    assert!(ok, "{off}");
    assert!(
        off.contains("STATUS Off off: nothing is loaded or saved (turned off by ADAPTIVE_KERNEL_HISTORY=off"),
        "{off}"
    );
    assert!(off.contains("FILE None"), "{off}");
}

#[test]
fn history_off_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().to_str().unwrap();
    let env = [("ADAPTIVE_KERNEL_HISTORY", "off"), ("ADAPTIVE_KERNEL_GPU", "off"), ("XDG_CACHE_HOME", cache)];
    let (ok, out) = run_child("child", "learn", &env);
    assert!(ok, "{out}");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}
