//! Real programs, three builds each, in one run (issue #23, item 4): an
//! n-body step, a k-means assignment, a layer norm, a row-wise softmax, a 3×3
//! blur, a histogram and a Jacobi sweep (issue 43), each written the way its
//! author writes it (`benches/programs/*.rs`), built **plain** (unannotated),
//! **annotated** (the same source under one `#[adaptive_kernel(…)]`, stamped
//! by the same `macro_rules!`) and **hand**-optimised (explicit lanes, a
//! run-time CPU-feature clone, rayon).
//!
//! Part 1, per call: per program and size, the annotated kernel is first
//! called until its router has settled the size's bucket (then for another
//! half second, so a decision taken under a burst of load is re-checked), then
//! rounds interleave the three builds in a rotating order. A sample is a batch
//! of calls of one build (about [`SAMPLE`] of that build's work), preceded by
//! one untimed call of the same build when the batch has several calls (so
//! every build starts warm: caches filled, rayon's threads awake); each
//! build's figure is the median over rounds, each ratio the median of the
//! per-round ratios (both sides of a ratio saw the same load).
//!
//! Part 1 also times three of the programs written with ndarray (`programs/arrays.rs`,
//! issue 42: k-means assignment, layer norm, a 5-point stencil), in four builds: plain,
//! annotated, **twin** (the same program written over slices, annotated) and hand (an
//! ndarray twin handing `as_slice()` to hand-written lanes, rayon over rows), interleaved
//! the same way, in a table of their own. Target (issue 42): each annotated ndarray
//! program ≥ 0.9× its twin and ≥ its hand twin, once the attribute rewrites ndarray's
//! shapes (the second part of the issue); until then the table is the "before".
//!
//! Part 2, whole runs from a cold start: per program, a realistic run
//! (`WholeRun`: e.g. 20 steps of a 4,096-body simulation) in a fresh child
//! process with `ADAPTIVE_KERNEL_HISTORY=off` (nothing loaded: the router
//! explores from scratch, inside the run), for each build, [`RUN_REPEATS`]
//! times interleaved. The run's time is measured in the child from its
//! `main` (the router's start-up, exploration and calibration thread
//! included); the process's wall time, measured by the parent, is printed too.
//!
//! The **GPU** column (issue 32) times the annotated kernel with its calls
//! forced onto its GPU variant (`with_backend`: forced calls teach the router
//! nothing), interleaved with the three builds in the same rounds, when the
//! kernel has a GPU variant and a device is usable (`-` otherwise); `GPU ×
//! annotated` is the median per-round speed ratio of the GPU variant over the
//! routed build, and "routed to" says where the router left each size. With
//! `ADAPTIVE_KERNEL_GPU=software` lavapipe counts as a device: a CPU running the
//! shaders, which the router should leave wherever it loses.
//!
//! The **resident GPU** column (issue 43) times the same forced GPU calls through
//! the kernel's `resident` entry on `Resident` handles, where the program has one
//! (the Jacobi sweep: both grids; k-means: the points and labels, the centroids
//! staying host data as a Lloyd iteration updates them on the host): after the
//! first call nothing but status words and results crosses the bus. `resident ×
//! annotated` is its median per-round speed ratio over the routed build.
//!
//! Targets (issue #23): annotated ≥ 0.8× hand for the pairwise interactions,
//! ≥ 0.9× hand for the others; every whole run ≥ 0.98× plain. The histogram,
//! split with private copies since: ≥ 0.5× hand.
//!
//! Run (about 7 minutes here; record figures only with no other build or
//! bench running on the machine):
//!
//! ```sh
//! cargo bench --bench programs
//! ```
//!
//! `cargo bench --bench programs -- --quick` runs the smallest size of each
//! program and one whole run each (a minute; for trying changes, not for
//! figures); `-- --only k-means` keeps the cases and runs whose names
//! contain `k-means` (`-- --only ndarray`: the ndarray programs alone). History and the GPU are off unless `ADAPTIVE_KERNEL_HISTORY` /
//! `ADAPTIVE_KERNEL_GPU` say otherwise (`ADAPTIVE_KERNEL_GPU=software` for the GPU
//! column on a machine without a GPU).
//!
//! Smoke run (CI: `scripts/bench-smoke`): `cargo bench --bench programs -- --test`
//! runs what `--quick` does with one sample of one call per build, one round and
//! no re-check (`common/smoke.rs`). A case, column or whole run added here is
//! covered by it as long as its counts and durations go through `smoke::pick`, as
//! [`SAMPLE`], [`RECHECK`] and the rounds do in `measure`. Figures: BENCHMARKS.md, "Issue 23
//! programs, baseline" (before the issue's work) and "Issue 23: plain loops
//! split across threads, the programs at the end".

#![allow(missing_docs)]

mod common;
#[path = "programs/mod.rs"]
mod programs;
#[path = "common/smoke.rs"]
mod smoke;

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use adaptive_kernel::{with_backend, Backend};
use programs::{arrays, blur, histogram, jacobi, kmeans, layernorm, nbody, softmax, Build, Case, WholeRun};

/// Every program's whole run (here, not in `programs/`: that folder's files import
/// its `mod.rs`, which so imports none of them).
const WHOLE_RUNS: [WholeRun; 7] = [
    nbody::WHOLE_RUN,
    kmeans::WHOLE_RUN,
    layernorm::WHOLE_RUN,
    softmax::WHOLE_RUN,
    blur::WHOLE_RUN,
    histogram::WHOLE_RUN,
    jacobi::WHOLE_RUN,
];

/// The work in one timed sample.
const SAMPLE: Duration = Duration::from_millis(40);
/// Time given to each case's rounds (all three builds together).
const CASE_BUDGET: Duration = Duration::from_secs(20);
/// Rounds per case: at least, at most.
const ROUNDS: (usize, usize) = (7, 61);
/// Calls after the annotated bucket first settles, for this long.
const RECHECK: Duration = Duration::from_millis(500);
/// Whole runs per program and build.
const RUN_REPEATS: usize = 9;
/// The flag that makes this binary a whole-run child.
const CHILD: &str = "--programs-child";

/// Every case of part 1, smallest first per program.
fn cases(quick: bool) -> Vec<Box<dyn Case>> {
    let mut all: Vec<Vec<Box<dyn Case>>> = vec![
        vec![
            Box::new(nbody::Accelerations::new(1_024)),
            Box::new(nbody::Accelerations::new(4_096)),
            Box::new(nbody::Accelerations::new(16_384)),
        ],
        vec![Box::new(kmeans::Assignment::new(16_384, 32, 16)), Box::new(kmeans::Assignment::new(16_384, 256, 39))],
        vec![Box::new(layernorm::LayerNorm::new(512, 768)), Box::new(layernorm::LayerNorm::new(8_192, 1_024))],
        vec![Box::new(softmax::Softmax::new(12 * 256, 256)), Box::new(softmax::Softmax::new(64, 32_000))],
        vec![Box::new(blur::Blur::new(640, 480)), Box::new(blur::Blur::new(3_840, 2_160))],
        vec![Box::new(histogram::Histogram::new(1 << 20, 256)), Box::new(histogram::Histogram::new(1 << 24, 4_096))],
        vec![Box::new(jacobi::Sweep::new(256)), Box::new(jacobi::Sweep::new(2_048))],
    ];
    if quick {
        all.iter_mut().for_each(|program| program.truncate(1));
    }
    all.into_iter().flatten().collect()
}

/// Every case of the ndarray programs (issue 42), smallest first per program: the sizes of
/// their slice-written twins' cases.
fn array_cases(quick: bool) -> Vec<Box<dyn Case>> {
    let mut all: Vec<Vec<Box<dyn Case>>> = vec![
        vec![Box::new(arrays::assign::Case::new(16_384, 32, 16)), Box::new(arrays::assign::Case::new(16_384, 256, 39))],
        vec![Box::new(arrays::norm::Case::new(512, 768)), Box::new(arrays::norm::Case::new(8_192, 1_024))],
        vec![Box::new(arrays::heat::Case::new(512, 512)), Box::new(arrays::heat::Case::new(2_048, 2_048))],
    ];
    if quick {
        all.iter_mut().for_each(|program| program.truncate(1));
    }
    all.into_iter().flatten().collect()
}

/// The seconds per call of one sample: `reps` calls of `build`, after one untimed call when
/// `warm` and the batch has several calls (a single call of [`SAMPLE`] or more pays any
/// wake-up in a small fraction of itself).
fn sample(case: &mut dyn Case, build: Build, reps: usize, warm: bool) -> f64 {
    if warm && reps > 1 {
        case.call(build);
    }
    let start = Instant::now();
    for _ in 0..reps {
        case.call(black_box(build));
    }
    start.elapsed().as_secs_f64() / reps as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn time(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.1} µs", seconds * 1e6)
    }
}

/// One case's figures.
struct Row {
    label: String,
    target: &'static str,
    /// The case's builds, in table order, and each one's seconds per call, every round.
    builds: &'static [Build],
    per_build: Vec<Vec<f64>>,
    hand_rate: String,
    chosen: String,
    rounds: usize,
    /// The annotated kernel forced onto its GPU variant: median seconds per call and the
    /// median per-round speed ratio over the routed build; `None` without a GPU variant or device.
    gpu: Option<(f64, f64)>,
    /// The same through its `resident` entry on data kept on the device; `None` where the
    /// program has none, or without a device.
    resident: Option<(f64, f64)>,
}

impl Row {
    fn at(&self, build: Build) -> &[f64] {
        let b = self.builds.iter().position(|&x| x == build).expect("a build of the case");
        &self.per_build[b]
    }

    /// The median seconds per call of `build`.
    fn median(&self, build: Build) -> f64 {
        median(self.at(build).to_vec())
    }

    /// The median of the per-round speed ratios of `fast` over `slow` (`slow`'s time over `fast`'s).
    fn speed(&self, fast: Build, slow: Build) -> f64 {
        median(self.at(slow).iter().zip(self.at(fast)).map(|(s, f)| s / f).collect())
    }
}

/// Whether `case`'s annotated kernel can run on the GPU here (a GPU variant and a usable device).
fn has_gpu(case: &dyn Case) -> bool {
    case.routed().0.has_gpu() && adaptive_kernel::ops::gpu::is_available()
}

/// One sample of `case`'s annotated kernel forced onto its GPU variant.
fn gpu_sample(case: &mut dyn Case, reps: usize) -> f64 {
    with_backend(Backend::Gpu, || sample(case, Build::Annotated, reps, true))
}

/// One sample of `case`'s annotated kernel forced onto its GPU variant through its
/// `resident` entry (data kept on the device), after one untimed call.
fn resident_sample(case: &mut dyn Case, reps: usize) -> f64 {
    with_backend(Backend::Gpu, || {
        case.call_resident();
        let start = Instant::now();
        for _ in 0..reps {
            case.call_resident();
        }
        start.elapsed().as_secs_f64() / reps as f64
    })
}

/// Settles the annotated kernel on `case` (and its twin's), then times its builds interleaved.
fn measure(case: &mut dyn Case) -> Row {
    let builds = case.builds();
    // Settle the annotated build's bucket, and the twin's.
    let settle_start = Instant::now();
    let mut calls = 0;
    while programs::settled(case).is_none() && settle_start.elapsed() < Duration::from_secs(60) {
        case.call(Build::Annotated);
        calls += 1;
    }
    if let Some((twin, size)) = case.twin() {
        let start = Instant::now();
        while programs::settled_at(twin, size).is_none() && start.elapsed() < Duration::from_secs(60) {
            case.call(Build::Twin);
        }
    }
    let settled_after = settle_start.elapsed();
    let recheck = Instant::now();
    while recheck.elapsed() < smoke::pick(RECHECK, Duration::ZERO) {
        case.call(Build::Annotated);
        calls += 1;
    }
    // Batch sizes per build, from each build's second call (the first pays page faults): every
    // sample is about `SAMPLE` of its build's work, so that a build on several threads keeps
    // them busy for most of its sample (an idle pool here wakes in up to a few ms, and a
    // batch sized by the plain build's calls would be a fraction of a millisecond of it).
    let reps: Vec<usize> = builds
        .iter()
        .map(|&build| {
            case.call(build);
            let once = sample(case, build, 1, false);
            ((smoke::pick(SAMPLE, Duration::ZERO).as_secs_f64() / once).ceil() as usize).max(1)
        })
        .collect();
    let gpu_reps = has_gpu(case).then(|| {
        gpu_sample(case, 1);
        ((smoke::pick(SAMPLE, Duration::ZERO).as_secs_f64() / gpu_sample(case, 1)).ceil() as usize).max(1)
    });
    // The first resident call uploads the handles; the samples time the calls after it.
    let resident_reps = (has_gpu(case) && with_backend(Backend::Gpu, || case.call_resident())).then(|| {
        ((smoke::pick(SAMPLE, Duration::ZERO).as_secs_f64() / resident_sample(case, 1)).ceil() as usize).max(1)
    });
    let mut gpu_times = Vec::new();
    let mut resident_times = Vec::new();
    eprintln!(
        "{}: annotated settled on {:?} after {calls} calls ({:.2} s); samples of {reps:?} calls",
        case.label(),
        programs::settled(case),
        settled_after.as_secs_f64()
    );
    // Rounds: as many as fit the budget, judged from one round.
    let n = builds.len();
    let mut per_build: Vec<Vec<f64>> = vec![Vec::new(); n];
    let round_start = Instant::now();
    for (b, &build) in builds.iter().enumerate() {
        per_build[b].push(sample(case, build, reps[b], true));
    }
    if let Some(g) = gpu_reps {
        gpu_times.push(gpu_sample(case, g));
    }
    if let Some(r) = resident_reps {
        resident_times.push(resident_sample(case, r));
    }
    let round = round_start.elapsed().as_secs_f64();
    let rounds = smoke::pick(((CASE_BUDGET.as_secs_f64() / round) as usize).clamp(ROUNDS.0, ROUNDS.1), 1);
    for r in 1..rounds {
        // The GPU's sample takes its turn in the rotation, after the build `r` names.
        for k in 0..n {
            let b = (r + k) % n;
            per_build[b].push(sample(case, builds[b], reps[b], true));
            if let (Some(g), 0) = (gpu_reps, k) {
                gpu_times.push(gpu_sample(case, g));
            }
            if let (Some(r), 1) = (resident_reps, k) {
                resident_times.push(resident_sample(case, r));
            }
        }
    }
    let (kernel, size) = case.routed();
    let chosen = match kernel.table().row_for(size).and_then(|row| row.chosen) {
        Some(backend) => format!("{backend:?}"),
        None => "exploring".to_owned(),
    };
    let annotated = per_build[builds.iter().position(|&b| b == Build::Annotated).expect("an annotated build")].clone();
    let hand = median(per_build[builds.iter().position(|&b| b == Build::Hand).expect("a hand build")].clone());
    Row {
        label: case.label(),
        target: case.target(),
        builds,
        per_build,
        hand_rate: case.work().rate(hand),
        chosen,
        rounds,
        gpu: gpu_reps.map(|_| {
            let ratio = median(annotated.iter().zip(&gpu_times).map(|(a, g)| a / g).collect());
            (median(gpu_times.clone()), ratio)
        }),
        resident: resident_reps.map(|_| {
            let ratio = median(annotated.iter().zip(&resident_times).map(|(a, r)| a / r).collect());
            (median(resident_times.clone()), ratio)
        }),
    }
}

/// What a whole-run child reports.
struct RunResult {
    /// Seconds from the child's `main` to the end of the run.
    run_s: f64,
    /// Seconds from spawning the child to its exit.
    process_s: f64,
    checksum: f64,
}

/// Runs `program` in `build` in a fresh process; `None` (reported) if it failed.
fn spawn_run(program: &str, build: Build) -> Option<RunResult> {
    let exe = std::env::current_exe().ok()?;
    let start = Instant::now();
    let out = smoke::pass_to(&mut Command::new(exe))
        .args([CHILD, program, build.name()])
        .env("ADAPTIVE_KERNEL_HISTORY", "off")
        .env("ADAPTIVE_KERNEL_GPU", std::env::var("ADAPTIVE_KERNEL_GPU").unwrap_or_else(|_| "off".into()))
        .output()
        .ok()?;
    let process_s = start.elapsed().as_secs_f64();
    if !out.status.success() {
        eprintln!("programs: child {program} {} failed: {}", build.name(), String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut fields = text.split_whitespace().map(str::parse::<f64>);
    let (Some(Ok(run_s)), Some(Ok(checksum))) = (fields.next(), fields.next()) else {
        eprintln!("programs: child {program} {} printed {text:?}", build.name());
        return None;
    };
    Some(RunResult { run_s, process_s, checksum })
}

/// The child's `main`: one whole run; prints its seconds and checksum.
fn child_main(program: &str, build: &str) {
    let start = Instant::now();
    let (Some(run), Some(build)) = (WHOLE_RUNS.iter().find(|r| r.name == program), Build::parse(build)) else {
        eprintln!("programs: unknown program {program:?} or build {build:?}");
        std::process::exit(2);
    };
    let checksum = (run.run)(build);
    println!("{} {checksum:e}", start.elapsed().as_secs_f64());
}

/// The yardstick for the memory-bound programs: GB/s (bytes read plus bytes written) of a
/// 64 MiB copy on rayon's threads and of a 1 MiB copy on one, medians of 11.
fn copy_bandwidth() -> (f64, f64) {
    use rayon::prelude::*;
    let rate = |len: usize, parallel: bool| {
        let src = vec![1.0f32; len];
        let mut dst = vec![0.0f32; len];
        let times: Vec<f64> = (0..12)
            .map(|_| {
                let start = Instant::now();
                if parallel {
                    dst.par_chunks_mut(1 << 16).zip(src.par_chunks(1 << 16)).for_each(|(d, s)| d.copy_from_slice(s));
                } else {
                    dst.copy_from_slice(&src);
                }
                black_box(&mut dst);
                start.elapsed().as_secs_f64()
            })
            .skip(1)
            .collect();
        8.0 * len as f64 / median(times) / 1e9
    };
    (rate(16 << 20, true), rate(256 << 10, false))
}

/// The CPU model, its vector features, and the threads rayon uses.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned()))
        .unwrap_or_else(|| "unknown CPU".to_owned());
    #[cfg(target_arch = "x86_64")]
    let features = [
        ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
        ("avx2", std::arch::is_x86_feature_detected!("avx2")),
        ("fma", std::arch::is_x86_feature_detected!("fma")),
    ]
    .iter()
    .filter(|(_, has)| *has)
    .map(|(name, _)| *name)
    .collect::<Vec<_>>()
    .join(", ");
    #[cfg(not(target_arch = "x86_64"))]
    let features = String::from("(not x86-64)");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    format!(
        "{model}; {features}; {} logical CPUs; rayon threads {}; load average {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        rayon::current_num_threads(),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == CHILD) {
        child_main(&args[i + 1], &args[i + 2]);
        return;
    }
    let quick = args.iter().any(|a| a == "--quick") || smoke::on();
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).cloned().unwrap_or_default();
    // Before any kernel runs: no history (cold means cold), no GPU (every build on the CPU).
    for (variable, default) in [("ADAPTIVE_KERNEL_HISTORY", "off"), ("ADAPTIVE_KERNEL_GPU", "off")] {
        if std::env::var_os(variable).is_none() {
            std::env::set_var(variable, default);
        }
    }
    let started = Instant::now();
    println!("programs: {}", machine());
    let (dram, cache) = copy_bandwidth();
    println!("copy (read + write): 64 MiB on rayon's threads {dram:.1} GB/s; 1 MiB on one thread {cache:.1} GB/s");

    println!("\n## Per call (median time per call; ratios: medians of per-round speed ratios)\n");
    let mut cases = cases(quick);
    cases.retain(|c| c.label().contains(only.as_str()));
    let mut rows = Vec::new();
    for case in &mut cases {
        let row = measure(case.as_mut());
        eprintln!(
            "  plain {}, annotated {}, hand {} ({}); {} rounds",
            time(row.median(Build::Plain)),
            time(row.median(Build::Annotated)),
            time(row.median(Build::Hand)),
            row.hand_rate,
            row.rounds
        );
        rows.push(row);
    }
    println!("| program, size | plain | annotated | hand | GPU | resident GPU | hand reaches | annotated × hand | annotated × plain | hand × plain | GPU × annotated | resident × annotated | routed to | target | rounds |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let cell = |figure: Option<(f64, f64)>| match figure {
        Some((t, ratio)) => (time(t), format!("{ratio:.2}")),
        None => ("-".to_owned(), "-".to_owned()),
    };
    for r in &rows {
        let ((gpu, gpu_ratio), (resident, resident_ratio)) = (cell(r.gpu), cell(r.resident));
        println!(
            "| {} | {} | {} | {} | {gpu} | {resident} | {} | {:.2} | {:.2} | {:.2} | {gpu_ratio} | {resident_ratio} | {} | {} | {} |",
            r.label,
            time(r.median(Build::Plain)),
            time(r.median(Build::Annotated)),
            time(r.median(Build::Hand)),
            r.hand_rate,
            r.speed(Build::Annotated, Build::Hand),
            r.speed(Build::Annotated, Build::Plain),
            r.speed(Build::Hand, Build::Plain),
            r.chosen,
            r.target,
            r.rounds
        );
    }

    println!("\n## The programs written with ndarray (issue 42; same rules; twin: the same program over slices, annotated)\n");
    let mut array_cases = array_cases(quick);
    array_cases.retain(|c| c.label().contains(only.as_str()));
    let mut array_rows = Vec::new();
    for case in &mut array_cases {
        let row = measure(case.as_mut());
        eprintln!(
            "  plain {}, annotated {}, twin {}, hand {}; {} rounds",
            time(row.median(Build::Plain)),
            time(row.median(Build::Annotated)),
            time(row.median(Build::Twin)),
            time(row.median(Build::Hand)),
            row.rounds
        );
        array_rows.push(row);
    }
    println!("| program, size | plain | annotated | twin | hand | hand reaches | annotated × twin | annotated × hand | annotated × plain | twin × hand | routed to | target | rounds |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &array_rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {} | {} |",
            r.label,
            time(r.median(Build::Plain)),
            time(r.median(Build::Annotated)),
            time(r.median(Build::Twin)),
            time(r.median(Build::Hand)),
            r.hand_rate,
            r.speed(Build::Annotated, Build::Twin),
            r.speed(Build::Annotated, Build::Hand),
            r.speed(Build::Annotated, Build::Plain),
            r.speed(Build::Twin, Build::Hand),
            r.chosen,
            r.target,
            r.rounds
        );
    }

    let repeats = if quick { 1 } else { RUN_REPEATS };
    println!("\n## Whole runs from a cold start (fresh process, history off; {repeats} runs per build, interleaved)\n");
    let n = WHOLE_RUNS.len();
    let mut results: Vec<[Vec<RunResult>; 3]> = (0..n).map(|_| Default::default()).collect();
    for rep in 0..repeats {
        for (p, run) in WHOLE_RUNS.iter().enumerate().filter(|(_, r)| r.describe.contains(only.as_str())) {
            for k in 0..3 {
                let b = (rep + p + k) % 3;
                if let Some(r) = spawn_run(run.name, Build::ALL[b]) {
                    results[p][b].push(r);
                }
            }
        }
    }
    println!("| run | plain | annotated | hand | annotated × plain | hand × plain | process: annotated × plain | checksums (annotated, hand vs plain) |");
    println!("|---|---|---|---|---|---|---|---|");
    for (p, run) in WHOLE_RUNS.iter().enumerate().filter(|(_, r)| r.describe.contains(only.as_str())) {
        let r = &results[p];
        let med = |b: usize, f: fn(&RunResult) -> f64| median(r[b].iter().map(f).collect());
        // Per-repeat ratios: the runs of one repeat ran next to each other.
        let ratio = |num: usize, den: usize, f: fn(&RunResult) -> f64| {
            median(r[num].iter().zip(&r[den]).map(|(n, d)| f(n) / f(d)).collect())
        };
        let rel = |b: usize| match (r[b].first(), r[0].first()) {
            (Some(x), Some(p)) => format!("{:+.1e}", (x.checksum - p.checksum) / p.checksum.abs().max(1e-30)),
            _ => "-".to_owned(),
        };
        println!(
            "| {} | {} | {} | {} | {:.3} | {:.2} | {:.3} | {}, {} |",
            run.describe,
            time(med(0, |x| x.run_s)),
            time(med(1, |x| x.run_s)),
            time(med(2, |x| x.run_s)),
            ratio(0, 1, |x| x.run_s),
            ratio(0, 2, |x| x.run_s),
            ratio(0, 1, |x| x.process_s),
            rel(1),
            rel(2)
        );
    }

    println!("\nwhat the annotated builds' variants did to each loop:");
    for (name, kernel) in [
        ("nbody::accelerations", &nbody::annotated::accelerations::KERNEL),
        ("kmeans::assign", &kmeans::annotated::assign::KERNEL),
        ("layernorm::layer_norm", &layernorm::annotated::layer_norm::KERNEL),
        ("softmax::softmax_rows", &softmax::annotated::softmax_rows::KERNEL),
        ("blur::box_blur", &blur::annotated::box_blur::KERNEL),
        ("histogram::histogram", &histogram::annotated::histogram::KERNEL),
        ("arrays::assign", &arrays::assign::annotated::assign::KERNEL),
        ("arrays::norm::layer_norm", &arrays::norm::annotated::layer_norm::KERNEL),
        ("arrays::heat::heat_step", &arrays::heat::annotated::heat_step::KERNEL),
        ("stencil::heat_step (twin)", &programs::stencil::annotated::heat_step::KERNEL),
        ("jacobi::sweep", &jacobi::annotated::sweep::KERNEL),
    ] {
        let spec = kernel.spec();
        println!("  {name} (Parallel variant: {})", if spec.has_parallel { "yes" } else { "no" });
        print!("{}", adaptive_kernel::LoopSummary::of("    ", spec));
    }
    println!("\nwhat their routers learned (part 1's process):");
    for kernel in [
        &nbody::annotated::accelerations::KERNEL,
        &kmeans::annotated::assign::KERNEL,
        &layernorm::annotated::layer_norm::KERNEL,
        &softmax::annotated::softmax_rows::KERNEL,
        &blur::annotated::box_blur::KERNEL,
        &histogram::annotated::histogram::KERNEL,
        &arrays::assign::annotated::assign::KERNEL,
        &arrays::norm::annotated::layer_norm::KERNEL,
        &arrays::heat::annotated::heat_step::KERNEL,
        &programs::stencil::annotated::heat_step::KERNEL,
        &jacobi::annotated::sweep::KERNEL,
        &kmeans::annotated::assign::RESIDENT,
        &jacobi::annotated::sweep::RESIDENT,
    ] {
        println!("{}", kernel.table());
    }
    println!("\nmachine after the run: {}", machine());
    println!("total: {:.0} s", started.elapsed().as_secs_f64());
}
