//! A warm start is trusted: a decision loaded from this machine's history for this
//! kernel is re-timed by the ordinary sampling, not by a new exploration round, even
//! when its saved figure is far off; a wrong one is corrected by re-timing the
//! alternative that beats it; the next process starts from the corrected decision. An
//! edited kernel starts fresh, and another machine's decision is checked before it is
//! trusted. Each run is a child process (history is read once per process); the
//! variants busy-wait known times, so the figures are real measurements.

mod common;

use std::path::Path;

use adaptive_kernel::{Backend, Kernel, KernelSpec, OpComplexity};
use common::{call_spinning, child_ok, child_role, cpu_spec, settle_with, settled, us};

static K: Kernel = Kernel::new(cpu_spec("warm_start::k", OpComplexity::Medium));

/// `K` after an edit of its body: the same name, another token hash.
static EDITED: Kernel = Kernel::new(KernelSpec { token_hash: 8, ..cpu_spec("warm_start::k", OpComplexity::Medium) });

const SIZE: usize = 5_000;

/// Real costs: SIMD 100 µs, Scalar 1 ms (hopeless: re-timed only once its figures are stale, within the budget).
fn real(b: Backend) -> std::time::Duration {
    if b == Backend::Simd {
        us(100)
    } else {
        us(1_000)
    }
}

/// Calls `kernel` `n` times; whether the bucket was seen exploring after any call.
fn explored_during(kernel: &'static Kernel, n: usize, cost: impl Fn(Backend) -> std::time::Duration) -> bool {
    let mut explored = false;
    for _ in 0..n {
        call_spinning(kernel, SIZE, &cost);
        explored |= settled(kernel, SIZE).is_none();
    }
    explored
}

/// The centre of `backend`'s figures in `SIZE`'s bucket, in microseconds.
fn centre_us(backend: Backend) -> f64 {
    let table = K.table();
    let row = table.row_for(SIZE).expect("a row");
    row.backend(backend).and_then(|b| b.centre).expect("a figure").as_secs_f64() * 1e6
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    match child_role().expect("run by run_child").as_str() {
        "learn" => {
            settle_with(&K, SIZE, |b| if b == Backend::Simd { us(100) } else { us(1_000) });
            adaptive_kernel::flush().unwrap();
        }
        "learn_close" => {
            // Scalar measured 150 µs (a busy moment): close enough to be re-timed later.
            settle_with(&K, SIZE, |b| if b == Backend::Simd { us(100) } else { us(150) });
            adaptive_kernel::flush().unwrap();
        }
        "trust" => {
            assert_eq!(settled(&K, SIZE), Some(Backend::Simd));
            assert!(!explored_during(&K, 20, real), "a loaded decision re-explored:\n{}", K.table());
        }
        "trust_far_off" => {
            assert_eq!(settled(&K, SIZE), Some(Backend::Simd), "loaded as saved");
            assert!((centre_us(Backend::Simd) - 20.0).abs() < 1.0, "the file's figure:\n{}", K.table());
            assert!(!explored_during(&K, 1_000, real), "a loaded decision re-explored:\n{}", K.table());
            assert_eq!(settled(&K, SIZE), Some(Backend::Simd));
            let fresh = centre_us(Backend::Simd);
            assert!((90.0..200.0).contains(&fresh), "this run's figures replace the file's: {fresh} µs\n{}", K.table());
        }
        "change_mind" => {
            assert_eq!(settled(&K, SIZE), Some(Backend::Simd));
            // Scalar is really 30 µs: re-timing it corrects the loaded decision, with no new round.
            let fast_scalar = |b| if b == Backend::Scalar { us(30) } else { us(100) };
            let start = std::time::Instant::now();
            while start.elapsed() < std::time::Duration::from_secs(5) {
                call_spinning(&K, SIZE, fast_scalar);
                assert!(settled(&K, SIZE).is_some(), "a loaded decision re-explored:\n{}", K.table());
                if settled(&K, SIZE) == Some(Backend::Scalar) {
                    break;
                }
            }
            assert_eq!(settled(&K, SIZE), Some(Backend::Scalar), "{}", K.table());
            adaptive_kernel::flush().unwrap();
        }
        "expect_scalar" => assert_eq!(settled(&K, SIZE), Some(Backend::Scalar), "{}", K.table()),
        "edited" => {
            assert_eq!(settled(&EDITED, SIZE), None, "an edited kernel trusts nothing saved:\n{}", EDITED.table());
            assert!(explored_during(&EDITED, 1, real), "{}", EDITED.table());
        }
        "other_machine" => {
            assert_eq!(settled(&K, SIZE), Some(Backend::Simd), "starts from the other machine's decision");
            assert!(
                explored_during(&K, 20, real),
                "a decision 5x off another machine's figure was kept:\n{}",
                K.table()
            );
            assert_eq!(settled(&K, SIZE), Some(Backend::Simd), "re-explored and settled again");
        }
        other => panic!("unknown role {other}"),
    }
}

/// Scales every saved timing of `backend` in the history file by `factor`.
fn scale_saved(file: &Path, backend: &str, factor: f64) {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    for m in v["machines"].as_object_mut().unwrap().values_mut() {
        for k in m["kernels"].as_object_mut().unwrap().values_mut() {
            for b in k["buckets"].as_array_mut().unwrap() {
                for t in b["timings"].as_array_mut().unwrap() {
                    if t["backend"] == backend {
                        for ns in t["recent_ns"].as_array_mut().unwrap() {
                            *ns = ((ns.as_f64().unwrap() * factor) as u64).into();
                        }
                    }
                }
            }
        }
    }
    std::fs::write(file, serde_json::to_vec(&v).unwrap()).unwrap();
}

/// Makes the file's one machine entry another machine's: another CPU model, the same
/// SIMD features (so it is this machine's nearest entry).
fn move_to_another_machine(file: &Path) {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let machines = v["machines"].as_object_mut().unwrap();
    let (_, mut entry) = machines.iter().next().map(|(k, e)| (k.clone(), e.clone())).unwrap();
    entry["fingerprint"]["cpu"] = format!("{} Another CPU model", std::env::consts::ARCH).into();
    machines.clear();
    machines.insert("0123456789abcdef".into(), entry);
    std::fs::write(file, serde_json::to_vec(&v).unwrap()).unwrap();
}

#[test]
fn a_loaded_decision_that_matches_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);
    child_ok("trust", &file);
}

#[test]
fn a_loaded_decision_is_not_re_explored_in_the_first_1000_calls_even_far_off_its_saved_figure() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);
    // The file now claims SIMD takes 20 µs; it takes 100. Still the fastest: nothing to explore.
    scale_saved(&file, "Simd", 0.2);
    child_ok("trust_far_off", &file);
}

#[test]
fn a_wrong_loaded_decision_is_corrected_by_re_timing_and_the_next_process_starts_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn_close", &file);
    child_ok("change_mind", &file);
    child_ok("expect_scalar", &file);
}

#[test]
fn an_edited_kernel_explores_and_another_machine_s_decision_is_checked_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);
    child_ok("edited", &file);
    // Another machine saw SIMD at 20 µs: here it takes 100, so its decision is explored again.
    scale_saved(&file, "Simd", 0.2);
    move_to_another_machine(&file);
    child_ok("other_machine", &file);
}
