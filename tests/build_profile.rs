//! The kind of build is part of the history's key: a debug build (`cargo test`,
//! `cargo run`) neither reads nor overwrites a release build's table, and the other way
//! round. The test moves a learned table to the other kind's key, as a run of the other
//! build would have saved it, and checks that a run of this build starts fresh, keeps
//! that entry as it was, and saves its own beside it. (This binary is one kind of
//! build; `cargo test --release` runs the same test the other way round.)

mod common;

use std::path::Path;

use adaptive_kernel::history::{BuildProfile, Fingerprint, HistoryStatus};
use adaptive_kernel::{Backend, Kernel, OpComplexity};
use common::*;

static K: Kernel = Kernel::new(cpu_spec("build_profile::k", OpComplexity::Medium));

const SIZE: usize = 5_000;

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    match child_role().expect("run by run_child").as_str() {
        "learn" => {
            settle_with(&K, SIZE, wins(Backend::Scalar));
            adaptive_kernel::flush().unwrap();
        }
        "other_build_saved" => {
            let status = adaptive_kernel::history::history_status();
            assert_eq!(status, HistoryStatus::NoEntry, "the other build's entry is neither own nor near");
            assert_eq!(K.table().row_for(SIZE), None, "the other build's table was loaded:\n{}", K.table());
            settle_with(&K, SIZE, wins(Backend::Simd));
            adaptive_kernel::flush().unwrap();
        }
        other => panic!("unknown role {other}"),
    }
}

fn other(profile: BuildProfile) -> BuildProfile {
    match profile {
        BuildProfile::Release => BuildProfile::Debug,
        _ => BuildProfile::Release,
    }
}

fn read(file: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

#[test]
fn another_kind_of_build_neither_reads_nor_overwrites_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    child_ok("learn", &file);

    let mut saved = read(&file);
    let here = Fingerprint::current();
    let machines = saved["machines"].as_object_mut().unwrap();
    let mut entry = machines.remove(&here.key()).expect("this build's entry, under its key");
    assert_eq!(entry["fingerprint"]["profile"], BuildProfile::current().name(), "the entry records its build");
    // The same entry as the other kind of build on this machine would have saved it.
    let there = Fingerprint { profile: other(here.profile), ..here.clone() };
    entry["fingerprint"] = serde_json::to_value(&there).unwrap();
    machines.insert(there.key(), entry.clone());
    std::fs::write(&file, serde_json::to_vec_pretty(&saved).unwrap()).unwrap();

    child_ok("other_build_saved", &file);
    let after = read(&file);
    assert_eq!(after["machines"][there.key()], entry, "the other build's entry was overwritten");
    let own = &after["machines"][here.key()];
    assert_eq!(own["fingerprint"]["profile"], BuildProfile::current().name());
    let chosen = &own["kernels"]["build_profile::k"]["buckets"][0]["chosen"];
    assert_eq!(chosen, "Simd", "this build's own table, saved beside the other's");
}
