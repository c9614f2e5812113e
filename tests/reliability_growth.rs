//! Reliability: bounded growth (RELIABILITY.md, "Bounded growth").
//!
//! The bound: a kernel holds at most `BUCKETS` buckets (130 on 64-bit targets),
//! each with at most one timing per backend of at most 16 recent samples, so one
//! kernel's state and its history record are bounded whatever the run's length;
//! the file grows only with kernels and machines, and a save never writes more
//! than the loader reads (16 MiB): past that it drops data (`persist::trim`).

mod common;

use std::fs;

use adaptive_kernel::config::HistorySetting;
use adaptive_kernel::BUCKETS;
use adaptive_kernel::{Backend, Kernel, OpComplexity, Work};
use common::*;

/// The loader's cap (`MAX_FILE_BYTES`).
const CAP: u64 = 16 << 20;
/// Recent samples kept per backend and bucket.
const WINDOW: usize = 16;

/// A kernel made at run time, as many as a test wants.
fn leaked_kernel(name: String) -> &'static Kernel {
    let name: &'static str = Box::leak(name.into_boxed_str());
    Box::leak(Box::new(Kernel::new(cpu_spec(name, OpComplexity::Medium))))
}

/// One size in each bucket: 0, then both halves of every power of two.
fn one_size_per_bucket() -> Vec<usize> {
    let mut sizes = vec![0usize, 1];
    for shift in 1..usize::BITS {
        let lo = 1usize << shift;
        sizes.push(lo);
        sizes.push(lo + lo / 2);
    }
    sizes.push(usize::MAX);
    sizes
}

/// Drives every bucket of `k` to settle, then `extra` more samples each.
fn fill(k: &'static Kernel, extra: usize) {
    for size in one_size_per_bucket() {
        settle_with_work(
            k,
            size,
            Work { size, flops: 1, bytes: 1 },
            |b| if b == Backend::Simd { us(5) } else { us(9) },
        );
        for i in 0..extra {
            k.observe(size, Backend::Simd, us(5 + (i % 3) as u64));
        }
    }
}

#[test]
fn state_and_file_stay_within_the_stated_bound() {
    // Not a temporary directory: the background saver may still write after the test ends.
    let file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("reliability_growth_history.json");
    let _ = fs::remove_file(&file);
    assert!(adaptive_kernel::set_history(HistorySetting::Path(file.clone())));
    const KERNELS: usize = 12;
    let kernels: Vec<_> = (0..KERNELS).map(|i| leaked_kernel(format!("reliability_growth::k{i}"))).collect();
    for (round, k) in kernels.iter().enumerate() {
        fill(k, 20);
        if round % 4 == 0 {
            adaptive_kernel::flush().unwrap();
        }
    }
    adaptive_kernel::flush().unwrap();
    // In memory: at most BUCKETS rows per kernel, whatever was called.
    for k in &kernels {
        let rows = k.table().rows.len();
        assert!(rows > BUCKETS / 2 && rows <= BUCKETS, "{rows} rows");
    }
    // On disk: at most WINDOW samples per timing, every bucket recorded once.
    let saved = adaptive_kernel::read_history(&file).unwrap().unwrap();
    let entry = saved.machines.values().next().unwrap();
    assert_eq!(entry.kernels.len(), KERNELS);
    for record in entry.kernels.values() {
        assert!(record.buckets.len() <= BUCKETS);
        for b in &record.buckets {
            assert!(b.timings.len() <= Backend::COUNT);
            assert!(b.timings.iter().all(|t| t.recent_ns.len() <= WINDOW), "{b:?}");
        }
    }
    let bytes = fs::metadata(&file).unwrap().len();
    let per_kernel = bytes / KERNELS as u64;
    // The worst case of one kernel: every bucket, every backend, WINDOW samples of 20 digits.
    let worst = worst_kernel_bytes();
    assert!(per_kernel <= worst, "{per_kernel} bytes per kernel > the bound {worst}");
    eprintln!(
        "FIGURES growth kernels={KERNELS} buckets_each={} file_bytes={bytes} per_kernel={per_kernel} bound_per_kernel={worst} kernels_at_cap={}",
        kernels[0].table().rows.len(),
        CAP / worst
    );
}

/// The pretty-printed size of the largest possible kernel record.
fn worst_kernel_bytes() -> u64 {
    let timing = serde_json::json!({"backend": "Parallel", "count": u64::MAX, "recent_ns": vec![u64::MAX; WINDOW]});
    let bucket = serde_json::json!({
        "sizes": [usize::MAX, usize::MAX], "typical_size": usize::MAX, "chosen": "Parallel",
        "timings": vec![timing; Backend::COUNT],
    });
    let kernel = serde_json::json!({
        "token_hash": "ffffffffffffffff", "complexity": "Medium", "buckets": vec![bucket; BUCKETS],
    });
    // Nested four levels deep in the file: each line is indented by 8 more spaces there.
    let pretty = serde_json::to_string_pretty(&serde_json::json!({"k": kernel})).unwrap();
    (pretty.len() + 8 * pretty.lines().count()) as u64
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    let k = leaked_kernel("reliability_growth::mine".into());
    fill(k, 0);
    adaptive_kernel::flush().unwrap();
}

/// Other machines' entries filling `file` to `CAP - slack` bytes.
fn nearly_full_file(file: &std::path::Path, slack: u64) -> usize {
    let bucket = serde_json::json!({"sizes": [8192, 16383], "typical_size": 10000, "chosen": "Simd",
        "timings": [{"backend": "Simd", "count": 16, "recent_ns": vec![123_456_789_u64; 16]}]});
    let machine = |i: usize, pad: usize| {
        serde_json::json!({
            "fingerprint": {"cpu": format!("other cpu {i}{}", "x".repeat(pad)), "cpu_features": [], "gpu": null, "crate_version": "0.1.0"},
            "kernels": {"k": {"token_hash": "00000000000000ff", "complexity": "Medium", "buckets": vec![bucket.clone(); 40]}},
        })
    };
    let size = |m: &serde_json::Map<String, serde_json::Value>| {
        let v = serde_json::json!({"format": "adaptive-kernel-history", "version": 2, "machines": m});
        serde_json::to_vec_pretty(&v).unwrap()
    };
    let with = |n: usize| (0..n).map(|i| (format!("{i:016x}"), machine(i, 0))).collect();
    let (one, two) = (size(&with(1)).len() as u64, size(&with(2)).len() as u64);
    let n = ((CAP - slack - one) / (two - one)) as usize;
    let mut machines = with(n);
    // The last machine's CPU name takes up the gap, byte for byte.
    let gap = CAP - slack - size(&machines).len() as u64;
    machines.insert(format!("{:016x}", n - 1), machine(n - 1, gap as usize));
    let bytes = size(&machines);
    assert_eq!(bytes.len() as u64, CAP - slack);
    fs::write(file, &bytes).unwrap();
    n
}

#[test]
fn a_save_never_writes_a_file_the_loader_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let others = nearly_full_file(&file, 4_000);
    let (ok, out) = run_child(
        "child",
        "fill",
        &[("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()), ("ADAPTIVE_KERNEL_GPU", "off")],
    );
    assert!(ok, "{out}");
    let bytes = fs::metadata(&file).unwrap().len();
    assert!(bytes <= CAP, "wrote {bytes} bytes, over the {CAP}-byte cap");
    assert_eq!(out.matches("adaptive-kernel: history file").count(), 1, "said once:\n{out}");
    assert!(out.contains("dropped 1 other machines' entries"), "{out}");
    let saved = adaptive_kernel::read_history(&file).unwrap().expect("the next run can read it");
    assert_eq!(saved.machines.len(), others, "one other machine made room (of {others})");
    assert!(saved.machines.values().any(|m| m.kernels.contains_key("reliability_growth::mine")));
    eprintln!("FIGURES growth cap={CAP} before=nearly_full after={bytes} other_machines={others}");
}
