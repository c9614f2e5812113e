//! A machine whose fingerprint has no entry starts from the nearest one: a
//! history holding another machine's entry (another CPU model, the same SIMD
//! features) gives a warm start whose first decisions are that machine's, marked
//! as such in the table, re-timed before they are trusted, and re-explored where
//! this machine disagrees; only what this machine confirmed or measured is saved
//! as its own. Each run is a child process (history is read once per process);
//! the variants busy-wait known times, so the figures are real measurements.

mod common;

use std::path::Path;
use std::time::Duration;

use adaptive_kernel::{
    bucket_of, bucket_range, Backend, Fingerprint, HistoryStatus, Kernel, NearestRule, OpComplexity,
};
use common::{call_spinning, child_ok, child_role, cpu_spec, settled, us};
use serde_json::{json, Value};

static K: Kernel = Kernel::new(cpu_spec("nearest_fingerprint::k", OpComplexity::Medium));

/// There: SIMD 99 µs, Scalar 900 µs. Here: SIMD 100 µs, Scalar 1 ms. Confirmed.
const AGREE: usize = 5_000;
/// There: SIMD 99 µs, Scalar 140 µs (close enough to re-time). Here Scalar takes 30 µs: re-explored.
const RANKED: usize = 20_000;
/// There: SIMD 20 µs. Here it takes 100 µs: re-explored.
const SLOWER: usize = 80_000;
/// Settled on SIMD there, never called here.
const UNUSED: usize = 320_000;

/// The other machine's samples, in nanoseconds; each ends in 7, so none is a measurement of this one.
const THERE: [(usize, u64, u64); 4] =
    [(AGREE, 900_007, 99_007), (RANKED, 140_007, 99_007), (SLOWER, 1_000_007, 20_007), (UNUSED, 900_007, 99_007)];

/// What each variant really costs here.
fn real(size: usize, b: Backend) -> Duration {
    match (size, b) {
        (RANKED, Backend::Scalar) => us(30),
        (_, Backend::Simd) => us(100),
        _ => us(1_000),
    }
}

fn other_cpu() -> String {
    format!("{} Another CPU model", std::env::consts::ARCH)
}

/// Calls `size` `n` times; whether its bucket was seen exploring after any call.
fn explored_during(size: usize, n: usize) -> bool {
    let mut explored = false;
    for _ in 0..n {
        call_spinning(&K, size, |b| real(size, b));
        explored |= settled(&K, size).is_none();
    }
    explored
}

/// The machine entry the decisions of `size`'s row came from, by CPU, while unconfirmed.
fn from(size: usize) -> Option<String> {
    K.table().row_for(size).and_then(|r| r.from.as_ref()).map(|f| f.cpu.clone())
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    match child_role().expect("run by run_child").as_str() {
        "borrow" => {
            let status = adaptive_kernel::history_status();
            let HistoryStatus::Nearest { from: entry, kernels } = &status else { panic!("status: {status}") };
            assert_eq!(
                (entry.cpu.as_str(), entry.rule, *kernels),
                (other_cpu().as_str(), NearestRule::SameFeatures, 1)
            );
            for size in [AGREE, RANKED, SLOWER, UNUSED] {
                assert_eq!(settled(&K, size), Some(Backend::Simd), "size {size} starts from the other decision");
                assert_eq!(from(size), Some(other_cpu()), "size {size} is marked:\n{}", K.table());
            }
            let text = K.table().to_string();
            let marker = format!("historical, from {} (same CPU features), not yet confirmed here", other_cpu());
            assert_eq!(text.matches(&marker).count(), 4, "{text}");
            // The first calls go where the other machine decided, and are timed: re-checked before trusted.
            for size in [AGREE, RANKED, SLOWER] {
                assert_eq!(call_spinning(&K, size, |b| real(size, b)), (Backend::Simd, true), "size {size}");
            }
            assert!(!explored_during(AGREE, 60), "agreed, yet re-explored:\n{}", K.table());
            assert!(explored_during(RANKED, 60), "Scalar is faster here, yet kept SIMD:\n{}", K.table());
            assert!(explored_during(SLOWER, 60), "5x off the other figure, yet kept:\n{}", K.table());
            let now = K.table();
            for (size, chosen) in [(AGREE, Backend::Simd), (RANKED, Backend::Scalar), (SLOWER, Backend::Simd)] {
                assert_eq!(settled(&K, size), Some(chosen), "size {size}:\n{now}");
                assert_eq!(from(size), None, "size {size} is this machine's decision now:\n{now}");
            }
            assert_eq!(from(UNUSED), Some(other_cpu()), "never called, never confirmed:\n{now}");
            adaptive_kernel::flush().unwrap();
        }
        "again" => {
            let status = adaptive_kernel::history_status();
            assert!(matches!(status, HistoryStatus::Loaded { kernels: 1, .. }), "status: {status}");
            for (size, chosen) in [(AGREE, Backend::Simd), (RANKED, Backend::Scalar), (SLOWER, Backend::Simd)] {
                assert_eq!((settled(&K, size), from(size)), (Some(chosen), None), "size {size}:\n{}", K.table());
            }
            assert_eq!(from(UNUSED), Some(other_cpu()), "a size this entry lacks still starts from the other");
        }
        "fresh" => {
            let status = adaptive_kernel::history_status();
            assert_eq!(status, HistoryStatus::NoEntry, "{status}");
            assert!(K.table().rows.is_empty(), "nothing borrowed:\n{}", K.table());
        }
        other => panic!("unknown role {other}"),
    }
}

/// A history file holding only `there`'s entry, with the table of [`THERE`].
fn write_history(file: &Path, there: &Fingerprint) {
    let buckets: Vec<Value> = THERE
        .iter()
        .map(|&(size, scalar, simd)| {
            let range = bucket_range(bucket_of(size)).unwrap();
            json!({
                "sizes": [range.start(), range.end()], "typical_size": size, "chosen": "Simd",
                "timings": [
                    { "backend": "Scalar", "count": 5, "recent_ns": vec![scalar; 5] },
                    { "backend": "Simd", "count": 40, "recent_ns": vec![simd; 5] },
                ],
            })
        })
        .collect();
    let kernel =
        json!({ "token_hash": format!("{:016x}", K.spec().token_hash), "complexity": "Medium", "buckets": buckets });
    let doc = json!({
        "format": "adaptive-kernel-history", "version": 2,
        "machines": { there.key(): { "fingerprint": there, "kernels": { K.name(): kernel } } },
    });
    std::fs::write(file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

#[test]
fn another_machines_entry_is_the_prior_verified_and_re_explored_where_this_machine_disagrees() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let here = Fingerprint::current();
    let there = Fingerprint { cpu: other_cpu(), gpu: None, ..here.clone() };
    write_history(&file, &there);
    let before = adaptive_kernel::read_history(&file).unwrap().unwrap();

    child_ok("borrow", &file);

    let after = adaptive_kernel::read_history(&file).unwrap().unwrap();
    assert_eq!(
        after.machines.get(&there.key()),
        before.machines.get(&there.key()),
        "the other entry is kept as it was"
    );
    let own = &after.machines.get(&here.key()).expect("this machine's entry").kernels[K.name()];
    let starts: Vec<usize> = own.buckets.iter().map(|b| b.sizes[0]).collect();
    let expected: Vec<usize> = [AGREE, RANKED, SLOWER].map(|s| *bucket_range(bucket_of(s)).unwrap().start()).to_vec();
    assert_eq!(starts, expected, "confirmed or re-decided buckets only, not the unconfirmed one");
    let theirs: Vec<u64> = THERE.iter().flat_map(|&(_, scalar, simd)| [scalar, simd]).collect();
    for b in &own.buckets {
        for t in &b.timings {
            assert!(
                t.recent_ns.iter().all(|ns| !theirs.contains(ns)),
                "the other machine's figures saved as ours: {b:?}"
            );
        }
    }

    child_ok("again", &file);
}

#[test]
fn an_entry_with_other_simd_features_is_not_near() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let here = Fingerprint::current();
    let mut features = here.cpu_features.clone();
    features.push("sve2".to_owned());
    write_history(&file, &Fingerprint { cpu: other_cpu(), cpu_features: features, gpu: None, ..here });
    child_ok("fresh", &file);
}
