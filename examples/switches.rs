//! What each switch does, counted: the figures of RELIABILITY.md's "Switches" section.
//!
//! ```sh
//! ADAPTIVE_KERNEL_GPU=software cargo run --example switches
//! ```
//!
//! Kernels with hand-written variants that count their calls, a private history file,
//! and one child process per phase (this program again, with the phase as its argument),
//! as a user would check a switch. It asserts nothing and prints `FIGURES …` lines, so
//! the same program measures any version of the crate: forcing against a saved decision
//! (`ADAPTIVE_KERNEL_BACKEND`, `Kernel::force`), what forced calls add to the table and
//! the file, `exact` bodies' distance from Scalar in ulp, a frozen run with `verify`, and
//! the threads an all-`serial` program starts.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use adaptive_kernel::kernel::Work;
use adaptive_kernel::{adaptive_kernel, ops, with_backend, Backend, Kernel};

/// Calls of the variants of [`twice`] and [`lone`]: Scalar, SIMD, Parallel.
static CALLS: [AtomicUsize; 3] = [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)];

fn count(i: usize) {
    CALLS[i].fetch_add(1, Ordering::Relaxed);
}

fn calls() -> [usize; 3] {
    CALLS.each_ref().map(|c| c.load(Ordering::Relaxed))
}

fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Twice the sum: Scalar (the body) and Parallel take 100 µs, SIMD 10 µs.
#[adaptive_kernel(complexity = "Medium", simd = twice_simd, parallel = twice_parallel)]
fn twice(x: &[f32]) -> f32 {
    count(0);
    spin(Duration::from_micros(100));
    x.iter().sum::<f32>() * 2.0
}

fn twice_simd(x: &[f32]) -> f32 {
    count(1);
    spin(Duration::from_micros(10));
    x.iter().sum::<f32>() * 2.0
}

fn twice_parallel(x: &[f32]) -> f32 {
    count(2);
    spin(Duration::from_micros(100));
    x.iter().sum::<f32>() * 2.0
}

/// [`twice`] without a Parallel variant.
#[adaptive_kernel(complexity = "Medium", simd = twice_simd, serial)]
fn lone(x: &[f32]) -> f32 {
    count(0);
    spin(Duration::from_micros(100));
    x.iter().sum::<f32>() * 2.0
}

#[adaptive_kernel(complexity = "Medium", exact)]
fn exact_sum(x: &[f32]) -> f32 {
    ops::sum(x)
}

#[adaptive_kernel(complexity = "Medium", exact)]
fn exact_dot(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b)
}

/// A kernel whose SIMD variant disagrees with Scalar, checked by `verify`.
#[adaptive_kernel(complexity = "Medium", verify, simd = off_by_one_simd)]
fn off_by_one(x: &[f32]) -> f32 {
    count(0);
    x[0]
}

fn off_by_one_simd(x: &[f32]) -> f32 {
    count(1);
    x[0] + 1.0
}

/// An all-`serial` program's kernel.
#[adaptive_kernel(complexity = "Medium", serial)]
fn energy(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b) + ops::sum(a)
}

/// Where the kernels are settled (below Medium's MoE threshold: the prior says Scalar).
const SIZE: usize = 4_096;

/// Settles `kernel`'s bucket of [`SIZE`] on SIMD by injected timings (no variant runs).
fn settle_on_simd(kernel: &'static Kernel) {
    for _ in 0..500 {
        let route = kernel.route(SIZE, || Work { size: SIZE, flops: 1, bytes: 1 });
        let b = route.backend();
        drop(route);
        if chosen(kernel).is_some() {
            return;
        }
        kernel.observe(SIZE, b, Duration::from_micros(if b == Backend::Simd { 10 } else { 100 }));
    }
}

fn chosen(kernel: &'static Kernel) -> Option<Backend> {
    kernel.table().row_for(SIZE).and_then(|r| r.chosen)
}

/// Samples in the table at [`SIZE`], per backend.
fn samples(kernel: &'static Kernel) -> Vec<(Backend, u64)> {
    kernel.table().row_for(SIZE).map(|r| r.backends.iter().map(|b| (b.backend, b.count)).collect()).unwrap_or_default()
}

fn added(before: &[(Backend, u64)], after: &[(Backend, u64)]) -> u64 {
    let total = |s: &[(Backend, u64)]| s.iter().map(|(_, n)| n).sum::<u64>();
    total(after) - total(before)
}

/// Positive values of mixed magnitudes: every third 1e4, the others between 0.1 and 3.1
/// (any other order of the additions rounds differently).
fn mixed(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| {
            let h = (i ^ seed).wrapping_mul(2_654_435_761);
            if i % 3 == 0 {
                1e4
            } else {
                (h >> 8) as f32 / (1 << 24) as f32 * 3.0 + 0.1
            }
        })
        .collect()
}

/// The distance in ulp between two positive floats.
fn ulp(a: f32, b: f32) -> u32 {
    a.to_bits().abs_diff(b.to_bits())
}

fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks
                .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .map(|n| n.trim_end().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// One phase, in a child process.
fn phase(role: &str) {
    let x = vec![0.5f32; SIZE];
    match role {
        "learn" => {
            for k in [&twice::KERNEL, &lone::KERNEL, &off_by_one::KERNEL] {
                settle_on_simd(k);
            }
            adaptive_kernel::flush().expect("saved");
        }
        "forced" => {
            let (kernel, call): (&'static Kernel, fn(&[f32]) -> f32) = match std::env::var("KERNEL").as_deref() {
                Ok("lone") => (&lone::KERNEL, lone),
                _ => (&twice::KERNEL, twice),
            };
            if std::env::var("FORCE").is_ok() {
                kernel.force(Some(Backend::Scalar));
            }
            let before = samples(kernel);
            for _ in 0..100 {
                call(&x);
            }
            let first = calls();
            for _ in 0..100 {
                call(&x);
            }
            let after = samples(kernel);
            adaptive_kernel::flush().expect("saved");
            println!(
                "PHASE first 100 calls Scalar/SIMD/Parallel {:?}; samples added by 200 calls {}; table {:?}",
                first,
                added(&before, &after),
                after
            );
        }
        "exact" => {
            let (a, b) = (mixed(1 << 20, 1), mixed(1 << 20, 2));
            let sum = exact_sum::scalar(&a);
            let dot = exact_dot::scalar(&a, &b);
            let forced = |backend| {
                let s = with_backend(backend, || exact_sum(&a));
                let d = with_backend(backend, || exact_dot(&a, &b));
                (ulp(s, sum), ulp(d, dot))
            };
            for backend in [Backend::Simd, Backend::Parallel, Backend::Gpu] {
                let (s, d) = forced(backend);
                println!("PHASE exact {} forced: sum {s} ulp, dot {d} ulp", backend.name());
            }
            let (mut s, mut d) = (0, 0);
            for _ in 0..200 {
                s = s.max(ulp(exact_sum(&a), sum));
                d = d.max(ulp(exact_dot(&a, &b), dot));
            }
            println!("PHASE exact routed (200 calls, largest): sum {s} ulp, dot {d} ulp");
        }
        "frozen" => {
            let x = vec![1.0f32; SIZE];
            let before = off_by_one::KERNEL.table().row_for(SIZE).cloned();
            for _ in 0..300_000 {
                off_by_one(&x);
            }
            let after = off_by_one::KERNEL.table().row_for(SIZE).cloned();
            let [scalar, simd, _] = calls();
            println!(
                "PHASE frozen 300,000 calls: SIMD {simd}, Scalar {scalar} (comparisons included); chosen {:?} -> {:?}; \
                 excluded {:?}",
                before.as_ref().and_then(|r| r.chosen),
                after.as_ref().and_then(|r| r.chosen),
                after.map(|r| r.excluded).unwrap_or_default()
            );
        }
        "serial" => {
            let n = 1 << 20;
            let (a, b) = (vec![0.5f32; n], vec![2.0f32; n]);
            let before = thread_names().len();
            for _ in 0..1_000 {
                energy(&a, &b);
            }
            let began = Instant::now();
            while (adaptive_kernel::cost::calibrated().is_none() || thread_names().iter().any(|t| t == "ak-calibrate"))
                && began.elapsed() < Duration::from_secs(30)
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            let names = thread_names();
            let pool = names.iter().filter(|t| t.starts_with("ak-par")).count();
            let parallel_threads = adaptive_kernel::cost::calibrated().map(|p| p.parallel_threads);
            println!(
                "PHASE serial 1,000 calls: {pool} ak-par threads, {} threads more than before; the cost model's \
                 parallel_threads {parallel_threads:?}",
                names.len() - before
            );
        }
        other => panic!("unknown phase {other}"),
    }
}

/// Runs `role` in a child process with `env`; returns its `PHASE` lines.
fn child(role: &str, env: &[(&str, &str)]) -> Vec<String> {
    let mut cmd = Command::new(std::env::current_exe().expect("this program"));
    cmd.arg(role).env_remove("ADAPTIVE_KERNEL_BACKEND").env_remove("ADAPTIVE_KERNEL_MODE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("a child process");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "phase {role} failed:\n{text}");
    text.lines().filter_map(|l| l.strip_prefix("PHASE ").map(str::to_owned)).collect()
}

/// The saved record of `kernel`'s bucket of [`SIZE`]: chosen backend and sample counts.
fn saved(file: &Path, kernel: &str) -> String {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(file).expect("the file")).expect("JSON");
    let Some(machine) = v["machines"].as_object().and_then(|m| m.values().next()) else { return "none".into() };
    let buckets = machine["kernels"][kernel]["buckets"].as_array().cloned().unwrap_or_default();
    let Some(b) = buckets
        .iter()
        .find(|b| b["sizes"][0].as_u64() <= Some(SIZE as u64) && b["sizes"][1].as_u64() >= Some(SIZE as u64))
    else {
        return "none".into();
    };
    let counts: Vec<String> =
        b["timings"].as_array().into_iter().flatten().map(|t| format!("{} ×{}", t["backend"], t["count"])).collect();
    format!("chosen {} ({})", b["chosen"], counts.join(", "))
}

fn main() {
    if let Some(role) = std::env::args().nth(1) {
        return phase(&role);
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("history.json");
    let history = file.to_str().expect("a UTF-8 path").to_owned();
    let learn = || {
        let _ = std::fs::remove_file(&file);
        child("learn", &[("ADAPTIVE_KERNEL_HISTORY", &history), ("ADAPTIVE_KERNEL_GPU", "off")]);
    };
    let forced = |kernel: &str, env: &[(&str, &str)], label: &str| {
        learn();
        let mut all =
            vec![("ADAPTIVE_KERNEL_HISTORY", history.as_str()), ("ADAPTIVE_KERNEL_GPU", "off"), ("KERNEL", kernel)];
        all.extend_from_slice(env);
        for line in child("forced", &all) {
            println!("FIGURES {label}: {line}");
        }
        println!("FIGURES {label}: saved then {}", saved(&file, &format!("switches::{kernel}")));
    };
    forced("twice", &[], "saved SIMD, nothing forced");
    forced("twice", &[("ADAPTIVE_KERNEL_BACKEND", "scalar")], "saved SIMD, ADAPTIVE_KERNEL_BACKEND=scalar");
    forced("twice", &[("ADAPTIVE_KERNEL_BACKEND", "parallel")], "saved SIMD, ADAPTIVE_KERNEL_BACKEND=parallel");
    forced("twice", &[("FORCE", "1")], "saved SIMD, KERNEL.force(Some(Scalar))");
    forced("lone", &[("ADAPTIVE_KERNEL_BACKEND", "parallel")], "no Parallel variant, ADAPTIVE_KERNEL_BACKEND=parallel");

    for line in child("exact", &[("ADAPTIVE_KERNEL_HISTORY", "off")]) {
        println!("FIGURES {line}");
    }

    learn();
    let frozen = [
        ("ADAPTIVE_KERNEL_HISTORY", history.as_str()),
        ("ADAPTIVE_KERNEL_GPU", "off"),
        ("ADAPTIVE_KERNEL_MODE", "frozen"),
    ];
    for line in child("frozen", &frozen) {
        println!("FIGURES saved SIMD (wrong), verify on the attribute, {line}");
    }

    for threads in ["2", ""] {
        let env =
            [("ADAPTIVE_KERNEL_HISTORY", "off"), ("ADAPTIVE_KERNEL_GPU", "off"), ("ADAPTIVE_KERNEL_THREADS", threads)];
        for line in child("serial", &env) {
            println!("FIGURES ADAPTIVE_KERNEL_THREADS={threads:?}, {line}");
        }
    }
}
