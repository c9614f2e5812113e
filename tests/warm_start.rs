//! A warm start is verified, not trusted: a decision loaded from history is
//! re-timed on its first calls and re-explored when its saved figure is far
//! off; a decision this process changed is saved, and the next process starts
//! from it. Each run is a child process (history is read once per process).

mod common;

use std::path::Path;

use adaptive_kernel::{Backend, Kernel, OpComplexity};
use common::{call_spinning, child_ok, child_role, cpu_spec, settle_with, settled, us};

static K: Kernel = Kernel::new(cpu_spec("warm_start::k", OpComplexity::Medium));

const SIZE: usize = 5_000;

/// Real costs: SIMD 100 µs, Scalar 1 ms (hopeless: re-timed only once its figures are stale, within the budget).
fn real(b: Backend) -> std::time::Duration {
    if b == Backend::Simd {
        us(100)
    } else {
        us(1_000)
    }
}

/// Calls `n` times; whether the bucket was seen exploring after any call.
fn explored_during(n: usize, cost: impl Fn(Backend) -> std::time::Duration) -> bool {
    let mut explored = false;
    for _ in 0..n {
        call_spinning(&K, SIZE, &cost);
        explored |= settled(&K, SIZE).is_none();
    }
    explored
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
            assert!(!explored_during(20, real), "a confirmed decision re-explored:\n{}", K.table());
        }
        "doubt" => {
            assert_eq!(settled(&K, SIZE), Some(Backend::Simd), "loaded as saved");
            assert!(explored_during(20, real), "a decision 5x off its saved figure was kept:\n{}", K.table());
            assert_eq!(settled(&K, SIZE), Some(Backend::Simd), "re-explored and settled again");
        }
        "change_mind" => {
            assert_eq!(settled(&K, SIZE), Some(Backend::Simd));
            // Scalar is really 30 µs: re-timing it corrects the loaded decision.
            let fast_scalar = |b| if b == Backend::Scalar { us(30) } else { us(100) };
            let start = std::time::Instant::now();
            while start.elapsed() < std::time::Duration::from_secs(5) {
                call_spinning(&K, SIZE, fast_scalar);
                if settled(&K, SIZE) == Some(Backend::Scalar) {
                    break;
                }
            }
            assert_eq!(settled(&K, SIZE), Some(Backend::Scalar), "{}", K.table());
            adaptive_kernel::flush().unwrap();
        }
        "expect_scalar" => assert_eq!(settled(&K, SIZE), Some(Backend::Scalar), "{}", K.table()),
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

#[test]
fn a_loaded_decision_that_matches_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);
    child_ok("trust", &file);
}

#[test]
fn a_stale_history_re_opens_exploration() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);
    // The file now claims SIMD takes 20 µs; it takes 100.
    scale_saved(&file, "Simd", 0.2);
    child_ok("doubt", &file);
}

#[test]
fn a_decision_changed_in_one_process_is_where_the_next_starts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn_close", &file);
    child_ok("change_mind", &file);
    child_ok("expect_scalar", &file);
}
