//! `ADAPTIVE_KERNEL_MODE=frozen` (or `config::set_mode(Mode::Frozen)`): routing by
//! the saved table only, the same decisions in every run, nothing written, and
//! the cold-start prior, said once, where the table has no decision.
//!
//! Each run is a child process (this test binary again, on the ignored `child`
//! entry point), because the mode and the history file are chosen once per process.

mod common;

use std::fs;
use std::path::Path;
use std::time::SystemTime;

use std::sync::atomic::{AtomicUsize, Ordering};

use adaptive_kernel::config::{Mode, ENV_MODE};
use adaptive_kernel::{adaptive_kernel, Backend, Kernel, KernelSpec, OpComplexity};
use common::*;

/// Calls of [`off_by_one`]'s Scalar variant (its body) and of its SIMD variant.
static SCALAR_CALLS: AtomicUsize = AtomicUsize::new(0);
static SIMD_CALLS: AtomicUsize = AtomicUsize::new(0);

/// A kernel whose SIMD variant disagrees with Scalar, checked by `verify` on every
/// timed call of another variant: a learning run would exclude SIMD at once.
#[adaptive_kernel(complexity = "Medium", verify, simd = off_by_one_simd)]
fn off_by_one(x: &[f32]) -> f32 {
    SCALAR_CALLS.fetch_add(1, Ordering::Relaxed);
    x[0]
}

fn off_by_one_simd(x: &[f32]) -> f32 {
    SIMD_CALLS.fetch_add(1, Ordering::Relaxed);
    x[0] + 1.0
}

/// Where [`off_by_one`] settled on SIMD (by injected timings, no call compared).
const VERIFIED: usize = 4_096;

static K: Kernel = Kernel::new(KernelSpec {
    name: "frozen::k",
    complexity: OpComplexity::High,
    has_gpu: false,
    has_parallel: false,
    token_hash: 3,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

/// Learned: Scalar here although the MoE table says SIMD (High, above 1,000).
const LEARNED_SCALAR: usize = 5_000;
/// Learned: SIMD.
const LEARNED_SIMD: usize = 300;
/// Never learned: the prior decides (SIMD, then Scalar by the MoE table).
const UNKNOWN: [usize; 2] = [70_000, 40];
const MARKER: &str = "frozen: no saved decision";

/// Routes every size many times, feeding timings that would flip any learning router,
/// and prints one line per size: size, backend, how it was decided.
fn route_and_print() {
    let mut lines = Vec::new();
    for size in [LEARNED_SCALAR, LEARNED_SIMD, UNKNOWN[0], UNKNOWN[1]] {
        let mut seen = Vec::new();
        let counts = || -> Vec<u64> {
            K.table().row_for(size).map(|r| r.backends.iter().map(|b| b.count).collect()).unwrap_or_default()
        };
        let loaded = counts();
        for _ in 0..300 {
            let route = K.route(size, || adaptive_kernel::Work { size, flops: 1, bytes: 1 });
            let b = route.backend();
            route.run(|| ());
            // What a learning router would take as proof that the other backend is 100× faster.
            K.observe(size, b, us(1_000));
            K.observe(size, if b == Backend::Scalar { Backend::Simd } else { Backend::Scalar }, us(10));
            seen.push(b);
        }
        assert_eq!(counts(), loaded, "size {size}: a frozen run keeps no timing");
        seen.dedup();
        assert_eq!(seen.len(), 1, "size {size}: decisions changed within the run: {seen:?}");
        let row = K.table().row_for(size).cloned().expect("a row per routed size");
        lines.push(format!("DECISION {size} {} {}", seen[0].name(), row.decided_by));
    }
    adaptive_kernel::flush().expect("a frozen flush succeeds, writing nothing");
    println!("{}", lines.join("\n"));
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    match child_role().expect("run by run_child").as_str() {
        "learn" => {
            settle_with(&K, LEARNED_SCALAR, |b| if b == Backend::Scalar { us(100) } else { us(300) });
            settle_with(&K, LEARNED_SIMD, |b| if b == Backend::Scalar { us(300) } else { us(100) });
            assert_eq!(settled(&K, LEARNED_SCALAR), Some(Backend::Scalar));
            adaptive_kernel::flush().unwrap();
        }
        "frozen_by_env" => route_and_print(),
        "frozen_in_code" => {
            assert!(adaptive_kernel::config::set_mode(Mode::Frozen));
            route_and_print();
        }
        "learn_verified" => {
            settle_with(&off_by_one::KERNEL, VERIFIED, |b| if b == Backend::Simd { us(10) } else { us(100) });
            assert_eq!(settled(&off_by_one::KERNEL, VERIFIED), Some(Backend::Simd));
            adaptive_kernel::flush().unwrap();
        }
        "frozen_verified" => {
            let x = vec![1.0f32; VERIFIED];
            let before = off_by_one::KERNEL.table().to_string();
            let mut timed = 0;
            for _ in 0..300_000 {
                assert_eq!(off_by_one(&x), 2.0, "the saved SIMD decision, not Scalar's result");
                timed += usize::from(adaptive_kernel::last_route().expect("routed").timed);
            }
            let after = off_by_one::KERNEL.table();
            assert_eq!(after.to_string(), before, "a frozen run changed its table");
            assert!(after.rows.iter().all(|r| r.excluded.is_empty()), "{after}");
            println!(
                "FROZEN timed {timed} simd {} scalar {}",
                SIMD_CALLS.load(Ordering::Relaxed),
                SCALAR_CALLS.load(Ordering::Relaxed)
            );
        }
        other => panic!("unknown role {other}"),
    }
}

fn run(role: &str, file: &Path, mode: Option<&str>) -> String {
    let mut env = vec![("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()), ("ADAPTIVE_KERNEL_GPU", "off")];
    if let Some(m) = mode {
        env.push((ENV_MODE, m));
    }
    let (ok, out) = run_child("child", role, &env);
    assert!(ok, "child {role} failed:\n{out}");
    out
}

fn decisions(out: &str) -> Vec<&str> {
    out.lines().filter_map(|l| l.find("DECISION ").map(|at| &l[at..])).collect()
}

/// Names and modification times of everything in `dir`.
fn listing(dir: &Path) -> Vec<(String, SystemTime, Vec<u8>)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().modified().unwrap(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn frozen_runs_route_by_the_table_decide_alike_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    run("learn", &file, None);
    let before = listing(dir.path());
    // Far enough apart that a rewrite of the file would show in its mtime on any filesystem.
    std::thread::sleep(std::time::Duration::from_millis(20));

    let first = run("frozen_by_env", &file, Some("frozen"));
    let second = run("frozen_in_code", &file, None);
    assert_eq!(
        decisions(&first),
        [
            "DECISION 5000 Scalar historical",
            "DECISION 300 SIMD historical",
            "DECISION 70000 SIMD cost_model",
            "DECISION 40 Scalar moe_threshold",
        ],
        "saved decisions, then the prior where nothing was saved:\n{first}"
    );
    assert_eq!(decisions(&first), decisions(&second), "the same table, the same decisions");
    for out in [&first, &second] {
        assert_eq!(out.matches(MARKER).count(), 1, "the prior is announced once per kernel:\n{out}");
        assert!(out.contains("frozen::k"), "{out}");
    }
    assert_eq!(listing(dir.path()), before, "no file written, created or touched");
}

/// With `verify` on the attribute, a frozen run times nothing, compares nothing and
/// excludes nothing: the saved SIMD decision runs every call, although SIMD disagrees
/// with Scalar (a learning run would exclude it on its first timed call).
#[test]
fn frozen_runs_time_nothing_and_verify_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    run("learn_verified", &file, None);
    let before = listing(dir.path());
    let out = run("frozen_verified", &file, Some("frozen"));
    assert!(out.contains("FROZEN timed 0 simd 300000 scalar 0"), "{out}");
    assert_eq!(listing(dir.path()), before, "no file written");
}

#[test]
fn a_bad_mode_is_reported_and_means_learn() {
    assert_eq!(adaptive_kernel::config::parse_mode(" Frozen "), Ok(Mode::Frozen));
    let err = adaptive_kernel::config::parse_mode("frozzen").unwrap_err();
    assert_eq!(
        err.to_string(),
        "ADAPTIVE_KERNEL_MODE=\"frozzen\" is not understood; expected `learn`, `frozen` or `verify` (the variable is ignored)"
    );
}
