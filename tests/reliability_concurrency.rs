//! Reliability: many threads and several processes at once (RELIABILITY.md, "Concurrency").
//!
//! - 8 threads × 100,000 routed calls over three kernels and four sizes each,
//!   while a ninth thread saves history in a loop and the background saver runs:
//!   no deadlock (the whole run is bounded by a timeout), every call computes
//!   right, the calls add up, and the saved file agrees with the live tables.
//! - Four processes started together, sharing one history file, each settling
//!   its own kernel and saving repeatedly: afterwards the file holds every
//!   kernel's buckets.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use adaptive_kernel::config::HistorySetting;
use adaptive_kernel::ops::{scalar, simd};
use adaptive_kernel::{Backend, Kernel, OpComplexity, Work};
use common::*;

static LOW: Kernel = Kernel::new(cpu_spec("reliability_concurrency::low", OpComplexity::Low));
static MEDIUM: Kernel = Kernel::new(cpu_spec("reliability_concurrency::medium", OpComplexity::Medium));
static HIGH: Kernel = Kernel::new(cpu_spec("reliability_concurrency::high", OpComplexity::High));
static KERNELS: [&Kernel; 3] = [&LOW, &MEDIUM, &HIGH];

/// Sizes the calls are routed by (the data summed is small: the test is about routing).
const SIZES: [usize; 4] = [100, 3_000, 40_000, 700_000];
const THREADS: usize = 8;
const CALLS_PER_THREAD: usize = 100_000;
/// Far above the run's normal time (about 10 s in a debug build on 2 shared cores).
const TIMEOUT: Duration = Duration::from_secs(100);

/// One routed call: the sum of `data` on the chosen backend.
fn call(k: &'static Kernel, size: usize, data: &[f32]) -> (Backend, f32) {
    let route = k.route(size, || Work { size, flops: size as u64, bytes: 4 * size as u64 });
    let backend = route.backend();
    let sum = route.run(|| match backend {
        Backend::Scalar => scalar::sum(data),
        _ => simd::sum(data),
    });
    (backend, sum)
}

#[test]
fn eight_threads_route_while_history_is_saved_in_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    assert!(adaptive_kernel::set_history(HistorySetting::Path(file.clone())));
    let (done_tx, done_rx) = mpsc::channel();
    let began = Instant::now();
    std::thread::spawn(move || {
        let stop = AtomicBool::new(false);
        let saves = AtomicU64::new(0);
        let per_thread: Vec<BTreeMap<Backend, u64>> = std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    adaptive_kernel::flush().expect("a save under load");
                    saves.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(5));
                }
            });
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    s.spawn(move || {
                        let data: Vec<f32> = (0..64).map(|i| ((i * 7 + t) % 11) as f32).collect();
                        let expected: f32 = data.iter().sum();
                        let mut by_backend = BTreeMap::new();
                        for i in 0..CALLS_PER_THREAD {
                            let k = KERNELS[(i + t) % KERNELS.len()];
                            let size = SIZES[(i / KERNELS.len() + t) % SIZES.len()];
                            let (backend, sum) = call(k, size, &data);
                            assert_eq!(sum, expected, "thread {t} call {i} on {backend:?}");
                            *by_backend.entry(backend).or_insert(0u64) += 1;
                        }
                        by_backend
                    })
                })
                .collect();
            let counts = workers.into_iter().map(|w| w.join().expect("a worker panicked")).collect();
            stop.store(true, Ordering::Relaxed);
            counts
        });
        done_tx.send((per_thread, saves.into_inner())).unwrap();
    });
    let (per_thread, saves) = done_rx
        .recv_timeout(TIMEOUT)
        .unwrap_or_else(|_| panic!("no result within {TIMEOUT:?}: a deadlock, or a worker died (see its panic above)"));
    let elapsed = began.elapsed();

    // The calls add up.
    let total: u64 = per_thread.iter().flat_map(|m| m.values()).sum();
    assert_eq!(total, (THREADS * CALLS_PER_THREAD) as u64);
    assert!(saves > 0);

    // A bucket may be re-exploring at the moment the run ends (8 threads on a loaded
    // machine make noisy timings): let it settle, then save and compare.
    let data = [1.0f32; 64];
    for k in KERNELS {
        for size in SIZES {
            for _ in 0..20_000 {
                if settled(k, size).is_some() {
                    break;
                }
                call(k, size, &data);
            }
        }
    }
    adaptive_kernel::flush().unwrap();
    let saved = adaptive_kernel::read_history(&file).unwrap().expect("saved");
    assert_eq!(saved.machines.len(), 1);
    let entry = saved.machines.values().next().unwrap();
    let mut timed = 0;
    for k in KERNELS {
        let table = k.table();
        let record = &entry.kernels[k.name()];
        for size in SIZES {
            let row = table.row_for(size).unwrap_or_else(|| panic!("{} never routed {size}", k.name()));
            let chosen = row.chosen.unwrap_or_else(|| panic!("not settled after the run:\n{table}"));
            let bucket = record.buckets.iter().find(|b| b.sizes[0] <= size && size <= b.sizes[1]).unwrap();
            assert_eq!(bucket.chosen, Some(chosen), "{} at {size}: file and table disagree", k.name());
            for b in &row.backends {
                let saved = bucket.timings.iter().find(|t| t.backend == b.backend).map_or(0, |t| t.count);
                assert_eq!(saved, b.count, "{} at {size} {:?}: saved count", k.name(), b.backend);
                timed += b.count;
            }
        }
    }
    assert!(timed > 0 && timed < total, "{timed} timed of {total}");
    eprintln!(
        "FIGURES concurrency threads={THREADS} calls={total} saves={saves} timed_samples={timed} elapsed={:.1}s",
        elapsed.as_secs_f64()
    );
}

static PROCESS_KERNELS: [Kernel; 4] = [
    Kernel::new(cpu_spec("reliability_concurrency::p0", OpComplexity::Medium)),
    Kernel::new(cpu_spec("reliability_concurrency::p1", OpComplexity::Medium)),
    Kernel::new(cpu_spec("reliability_concurrency::p2", OpComplexity::Medium)),
    Kernel::new(cpu_spec("reliability_concurrency::p3", OpComplexity::Medium)),
];
const PROCESS_SIZES: [usize; 3] = [2_000, 30_000, 500_000];

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn process() {
    let i: usize = child_role().expect("run by run_children_together").parse().unwrap();
    let k = &PROCESS_KERNELS[i];
    wait_for_start();
    let start = epoch_ms();
    for round in 0..10 {
        let size = PROCESS_SIZES[round % PROCESS_SIZES.len()];
        if settled(k, size).is_none() {
            settle_with(k, size, |b| if b == Backend::Simd { us(10) } else { us(50) });
        }
        adaptive_kernel::flush().unwrap();
    }
    println!("WINDOW {start} {}", epoch_ms());
}

#[test]
fn four_processes_sharing_one_file_keep_every_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let env = [("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()), ("ADAPTIVE_KERNEL_GPU", "off")];
    let roles: Vec<String> = (0..PROCESS_KERNELS.len()).map(|i| i.to_string()).collect();
    let outs = run_children_together("process", &roles, &env);
    for (ok, out) in &outs {
        assert!(ok, "{out}");
    }
    assert_windows_overlap(&outs);
    let saved = adaptive_kernel::read_history(&file).unwrap().expect("saved");
    let entry = saved.machines.values().next().unwrap();
    for k in &PROCESS_KERNELS {
        let record = entry.kernels.get(k.name()).unwrap_or_else(|| panic!("{} lost", k.name()));
        for size in PROCESS_SIZES {
            let bucket = record.buckets.iter().find(|b| b.sizes[0] <= size && size <= b.sizes[1]);
            assert_eq!(bucket.and_then(|b| b.chosen), Some(Backend::Simd), "{} at {size}", k.name());
        }
    }
    eprintln!("FIGURES processes=4 kernels=4 buckets_each={} saves_each=10", PROCESS_SIZES.len());
}
