//! Reliability: bad history files (RELIABILITY.md, "History files").
//!
//! Each case runs a child process (history is opened once per process) that
//! learns a kernel, checks that it computes right, and saves. Whatever is in the
//! file's place, the child keeps working, one warning names the file and what was
//! done (kept aside, refused, replaced), and nothing of other kernels is lost.
//! `tests/persistence.rs` covers the cases it already had (truncated, foreign
//! JSON, a newer version, over the size cap); a fuzz-style property test runs
//! the loader over arbitrary and mutated bytes.

mod common;

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use adaptive_kernel::ops::{scalar, simd};
use adaptive_kernel::{Backend, HistoryError, Kernel, OpComplexity};
use common::*;
use proptest::prelude::*;

static K: Kernel = Kernel::new(cpu_spec("reliability_history::k", OpComplexity::High));
static OTHER: Kernel = Kernel::new(cpu_spec("reliability_history::other", OpComplexity::High));

const SIZE: usize = 5_000;
/// Every warning about the file starts so.
const WARNING: &str = "adaptive-kernel: history file";

fn learn(k: &'static Kernel) {
    settle_with(k, SIZE, |b| if b == Backend::Scalar { us(300) } else { us(100) });
    assert_eq!(settled(k, SIZE), Some(Backend::Simd));
    let a: Vec<f32> = (0..999).map(|i| i as f32 * 0.25).collect();
    assert_eq!(simd::add(&a, &a), scalar::add(&a, &a), "still computing right");
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    let role = child_role().expect("run by run_child");
    let kernel = if role.starts_with("other") { &OTHER } else { &K };
    learn(kernel);
    if role.ends_with("wait") {
        // Lets the background saver run (and report) before the explicit save.
        std::thread::sleep(std::time::Duration::from_millis(700));
    }
    match adaptive_kernel::flush() {
        Ok(()) => println!("FLUSH ok"),
        Err(HistoryError::Refused { .. }) => println!("FLUSH refused"),
        Err(e) => println!("FLUSH failed: {e}"),
    }
    println!("STATUS {}", adaptive_kernel::history_status());
}

fn child_with(role: &str, env: &[(&str, &str)]) -> String {
    let mut all = vec![("ADAPTIVE_KERNEL_GPU", "off")];
    all.extend_from_slice(env);
    let (ok, out) = run_child("child", role, &all);
    assert!(ok, "child {role} failed:\n{out}");
    out
}

fn child_on(role: &str, file: &Path) -> String {
    child_with(role, &[("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap())])
}

/// The one warning about `file` in `out`, which must say `what`.
fn one_warning(out: &str, file: &Path, what: &str) {
    let lines: Vec<&str> = out.lines().filter(|l| l.contains(WARNING) || l.contains("saving history failed")).collect();
    assert_eq!(lines.len(), 1, "one warning expected:\n{out}");
    assert!(lines[0].contains(&file.display().to_string()), "the warning names the file: {}", lines[0]);
    assert!(lines[0].contains(what), "the warning says `{what}`: {}", lines[0]);
}

fn kernels_in(file: &Path) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&fs::read(file).unwrap()).unwrap();
    let mut names: Vec<String> = v["machines"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|m| m["kernels"].as_object().unwrap().keys().cloned())
        .collect();
    names.sort();
    names
}

/// A file of ours holding `OTHER`, as another run left it.
fn file_with_other(dir: &Path) -> PathBuf {
    let file = dir.join("history.json");
    child_on("other", &file);
    assert_eq!(kernels_in(&file), ["reliability_history::other"]);
    file
}

/// `content` in the file's place is refused: the child works, warns once, writes nothing.
fn refused(content: &[u8], what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    fs::write(&file, content).unwrap();
    let out = child_on("k", &file);
    one_warning(&out, &file, what);
    assert!(out.contains("FLUSH refused"), "{out}");
    assert_eq!(fs::read(&file).unwrap(), content, "never overwritten");
}

#[test]
fn random_bytes_are_refused_and_kept() {
    let mut bytes = vec![0u8; 4096];
    let mut x = 0x2545_f491u32;
    for b in &mut bytes {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = x as u8;
    }
    refused(&bytes, "not an adaptive-kernel history file");
}

#[test]
fn json_of_another_shape_is_refused_and_kept() {
    refused(br#"[{"name": "my-app"}, 1, 2]"#, "not an adaptive-kernel history file");
    refused(br#"{"format": 7, "version": "two"}"#, "not an adaptive-kernel history file");
}

#[test]
fn json_naming_our_format_in_another_shape_is_kept_aside_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let content = br#"{"format": "adaptive-kernel-history", "version": 2, "machines": [1, 2]}"#;
    fs::write(&file, content).unwrap();
    let out = child_on("k", &file);
    one_warning(&out, &file, "it will be replaced (the old one kept as .corrupt)");
    assert_eq!(fs::read(dir.path().join("history.json.corrupt")).unwrap(), content);
    assert_eq!(kernels_in(&file), ["reliability_history::k"]);
}

#[test]
fn an_empty_file_is_replaced_and_kept_aside() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    fs::write(&file, b"").unwrap();
    let out = child_on("k", &file);
    one_warning(&out, &file, "it is empty; it will be replaced (the old one kept as .corrupt)");
    assert!(out.contains("FLUSH ok"), "{out}");
    assert_eq!(kernels_in(&file), ["reliability_history::k"]);
    assert!(dir.path().join("history.json.corrupt").exists());
}

#[test]
fn a_directory_in_the_file_s_place_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    fs::create_dir(&file).unwrap();
    fs::write(file.join("keep.txt"), b"x").unwrap();
    let out = child_on("k", &file);
    one_warning(&out, &file, "it is a directory, not a file; it will not be written either");
    assert!(out.contains("FLUSH refused"), "{out}");
    assert_eq!(fs::read(file.join("keep.txt")).unwrap(), b"x");
}

#[test]
fn a_fifo_in_the_file_s_place_is_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let made = std::process::Command::new("mkfifo").arg(&file).status().expect("mkfifo");
    assert!(made.success());
    let out = child_on("k", &file);
    one_warning(&out, &file, "it is not a regular file");
}

#[test]
fn an_unreadable_file_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = file_with_other(dir.path());
    let before = fs::read(&file).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&file).is_ok() {
        // Running as root, permissions do not stop a read: use a file whose read fails for anyone.
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        file = PathBuf::from("/proc/self/mem");
    }
    let out = child_on("k", &file);
    one_warning(&out, &file, "cannot be read");
    assert!(out.contains("FLUSH refused"), "{out}");
    fs::set_permissions(dir.path().join("history.json"), fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(fs::read(dir.path().join("history.json")).unwrap(), before, "other kernels kept");
}

#[test]
fn a_read_only_directory_costs_one_warning_and_learning_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    fs::create_dir(&ro).unwrap();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
    let file = if fs::write(ro.join("probe"), b"").is_ok() {
        // Root writes anyway: /proc/self is a directory nobody can create files in.
        PathBuf::from("/proc/self/adaptive-kernel-history.json")
    } else {
        ro.join("history.json")
    };
    let out = child_on("k_wait", &file);
    one_warning(&out, &file, "learning goes on in memory and later saves try again");
    assert!(out.contains("FLUSH failed"), "an explicit save says why:\n{out}");
    assert!(!file.exists());
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_symlink_to_a_foreign_file_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("notes.json");
    fs::write(&foreign, br#"{"todo": ["buy milk"]}"#).unwrap();
    let link = dir.path().join("history.json");
    symlink(&foreign, &link).unwrap();
    let out = child_on("k", &link);
    one_warning(&out, &link, "not an adaptive-kernel history file");
    assert!(out.contains("FLUSH refused"), "{out}");
    assert_eq!(fs::read(&foreign).unwrap(), br#"{"todo": ["buy milk"]}"#);
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
}

#[test]
fn a_symlink_to_our_file_is_written_through_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let target = file_with_other(&dir.path().join("dotfiles"));
    let link = dir.path().join("history.json");
    // Relative, as a dotfile manager would make it.
    symlink("dotfiles/history.json", &link).unwrap();
    let out = child_on("k", &link);
    assert!(!out.contains(WARNING), "{out}");
    assert!(out.contains("FLUSH ok"), "{out}");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is kept");
    assert_eq!(kernels_in(&target), ["reliability_history::k", "reliability_history::other"]);
    let mut names: Vec<String> =
        fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["dotfiles", "history.json"], "lock and temporary files are beside the target");
}

#[test]
fn an_empty_history_variable_is_reported_once_and_means_the_default_file() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().to_str().unwrap();
    let out = child_with("k", &[("ADAPTIVE_KERNEL_HISTORY", ""), ("XDG_CACHE_HOME", cache)]);
    let said = "ADAPTIVE_KERNEL_HISTORY=\"\" is not understood; expected a history file path, or `off` to keep no history (the variable is ignored)";
    assert_eq!(out.matches(said).count(), 1, "{out}");
    assert_eq!(kernels_in(&dir.path().join("adaptive-kernel/history.json")), ["reliability_history::k"]);
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn writer() {
    let role = child_role().expect("run by run_children_together");
    let kernel = if role == "k" { &K } else { &OTHER };
    wait_for_start();
    let start = epoch_ms();
    learn(kernel);
    for _ in 0..20 {
        adaptive_kernel::flush().unwrap();
    }
    println!("WINDOW {start} {}", epoch_ms());
}

#[test]
fn two_processes_writing_at_once_keep_both_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let env = [("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()), ("ADAPTIVE_KERNEL_GPU", "off")];
    let outs = run_children_together("writer", &["k".to_owned(), "other".to_owned()], &env);
    for (ok, out) in &outs {
        assert!(ok, "{out}");
        assert!(!out.contains(WARNING), "{out}");
    }
    assert_windows_overlap(&outs);
    assert_eq!(kernels_in(&file), ["reliability_history::k", "reliability_history::other"]);
}

/// A valid file of ours with one kernel, for mutation.
const VALID: &str = r#"{"format":"adaptive-kernel-history","version":2,"machines":{"m":{
  "fingerprint":{"cpu":"x","cpu_features":["avx2"],"gpu":null,"crate_version":"0.1.0"},
  "kernels":{"k":{"token_hash":"00000000000000ff","complexity":"Medium","buckets":[
    {"sizes":[8192,16383],"typical_size":10000,"chosen":"Simd",
     "timings":[{"backend":"Scalar","count":3,"recent_ns":[10,11,12]}]}]}}}}}"#;

fn load(bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.json");
    fs::write(&file, bytes).unwrap();
    match adaptive_kernel::read_history(&file) {
        Ok(Some(f)) => assert_eq!(f.format, "adaptive-kernel-history"),
        Ok(None) => panic!("the file exists"),
        Err(HistoryError::Corrupt { .. } | HistoryError::Refused { .. }) => {}
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// Runs `load` on `cases` inputs from `strategy`; returns how many ran.
fn fuzz<S: Strategy>(cases: u32, strategy: S, bytes: impl Fn(S::Value) -> Vec<u8>) -> usize {
    let ran = AtomicUsize::new(0);
    let config = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    runner
        .run(&strategy, |value| {
            load(&bytes(value));
            ran.fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    ran.into_inner()
}

#[test]
fn the_loader_survives_arbitrary_and_mutated_bytes() {
    let arbitrary = fuzz(2_000, proptest::collection::vec(any::<u8>(), 0..512), |b| b);
    let mutations = (0..VALID.len(), proptest::collection::vec((0..VALID.len(), any::<u8>()), 0..4));
    let mutated = fuzz(2_000, mutations, |(cut, flips)| {
        let mut bytes = VALID.as_bytes().to_vec();
        for (at, byte) in flips {
            bytes[at] = byte;
        }
        bytes.truncate(cut.max(1) + VALID.len() / 2);
        bytes
    });
    assert!(arbitrary >= 2_000 && mutated >= 2_000, "{arbitrary} + {mutated}");
    eprintln!("FIGURES loader fuzzed: {arbitrary} arbitrary + {mutated} mutated inputs, none crashed");
}

#[test]
fn the_loader_survives_known_hostile_inputs() {
    let deep = "[".repeat(100_000);
    let inputs: [&[u8]; 6] = [
        deep.as_bytes(),
        b"\xff\xfe\x00\x00",
        br#"{"format":"adaptive-kernel-history","version":4294967296,"machines":{}}"#,
        br#"{"format":"adaptive-kernel-history","version":2,"machines":{"m":{"fingerprint":{},"kernels":{}}}}"#,
        br#"{"format":"adaptive-kernel-history","version":1,"machines":{"m":{"fingerprint":{"cpu":"x","cpu_features":[],"gpu":null,"crate_version":"1"},"kernels":{"k":{"token_hash":"1","complexity":"Low","buckets":{"99999":{"stats":[{"count":1,"recent_ns":[1]},{"count":0,"recent_ns":[]},{"count":0,"recent_ns":[]}],"phase":{"state":"exploring"},"typical_size":1}}}}}}}"#,
        VALID.as_bytes(),
    ];
    for bytes in inputs {
        load(bytes);
    }
}
