//! A warm start costs nothing (issue 44): a workload of three kernels over eight sizes,
//! each with an alternative that loses by far at small sizes (a variant that forks two
//! threads per call, a `sin` table built per call, a matmul with a GPU variant present),
//! timed as a whole against the oracle (each call on its size's fastest variant, known
//! in hindsight), in trials of two processes: **cold**, starting from an empty history
//! file, and **warm**, a second process starting from the file the cold one saved.
//!
//! ```text
//! cargo bench --bench warm_start                      # 3 cold and 3 warm trials
//! cargo bench --bench warm_start -- --trials 3 --rounds 2 --against before=PATH
//! ```
//!
//! `--against LABEL=PATH` adds another build of this bench (`scripts/bench-against`
//! builds one from another commit); each round runs every build's trials, the builds
//! alternating (`common/builds.rs`).
//!
//! The workload: 12,240 calls in one shuffled order (fixed seed), the largest size of each
//! kernel 16 times, each size below twice as often, at most 2,048. Each build first
//! measures each variant's median at each size (a `calibrate` process). A trial is four
//! processes, each running the workload as the first thing it does, so each pays the
//! same first-touch costs: the **oracle** (each call on its size's fastest variant by
//! those medians, called directly), **cold**, **warm**, and the oracle again. A ratio is
//! the routed process's wall time over the mean of the two oracles'; per kernel, the
//! sums of its calls. A routed call *explored* when the router decided it on the cold path
//! by anything but the bucket's decision (its `route` event); what exploring cost is each
//! such call beyond its size's best median (as a share of the oracle's time). Exploring
//! calls over 10× that median are counted twice over: by the call's own time (which, at
//! sizes that take a tenth of a microsecond, the router's cold path alone exceeds), and by
//! the median of the candidate it ran (the issue's bound: no candidate explored that is
//! 10× slower than the best), each with the worst one. Results:
//! stdout and `target/warm_start.json`. Smoke run (`-- --test`): one trial of one call per size.
//! To see why a routed process lost time: `WARM_START_DUMP=Affine:1024` (a kernel as `K`
//! names it, and an `n`) makes each routed process print its kernels' tables and that
//! pair's calls in order (ns; `*` for an exploring call) on stderr.

#[path = "../common/builds.rs"]
mod builds;
mod kernels;
#[path = "../common/sine_table.rs"]
mod sine_table;
#[path = "../common/smoke.rs"]
mod smoke;
mod trial;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::builds::{builds, command, count_arg, order, Build};
use crate::kernels::KERNELS;

const CHILD: &str = "--warm-start-trial";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == CHILD) {
        return trial::run(&args[i + 1], Path::new(&args[i + 2]), Path::new(&args[i + 3]));
    }
    let builds = builds();
    let trials = count_arg("trials", smoke::pick(3, 1));
    let rounds = count_arg("rounds", 1);
    let dir = tempfile::tempdir().expect("temp dir");
    println!(
        "warm_start: CPU {}, ADAPTIVE_KERNEL_GPU={:?}; {} calls per trial; builds: {}",
        cpu_model(),
        std::env::var("ADAPTIVE_KERNEL_GPU").unwrap_or_default(),
        trial::order(&trial::pairs()).len(),
        builds.iter().map(|b| format!("{} ({})", b.label, b.exe.display())).collect::<Vec<_>>().join(", ")
    );
    let calibrations: Vec<PathBuf> = builds
        .iter()
        .map(|b| {
            let file = dir.path().join(format!("{}-calibration.json", b.label));
            run_child(b, "calibrate", &file, &file, None);
            file
        })
        .collect();
    // results[build][round] = the trials' figures.
    let mut results: Vec<Vec<Vec<Trial>>> = vec![Vec::new(); builds.len()];
    for round in 0..rounds {
        for r in &mut results {
            r.push(Vec::new());
        }
        for t in 0..trials {
            for b in order(&builds, round * trials + t) {
                let bi = builds.iter().position(|x| x.label == b.label).expect("a build");
                let cal = &calibrations[bi];
                let history = dir.path().join(format!("{}-{round}-{t}.json", b.label));
                let out = |mode: &str| dir.path().join(format!("{}-{mode}.json", b.label));
                let oracle1 = run_child(b, "oracle", cal, &out("oracle"), None);
                let cold = run_child(b, "cold", cal, &out("cold"), Some(&history));
                let warm = run_child(b, "warm", cal, &out("warm"), Some(&history));
                let oracle2 = run_child(b, "oracle", cal, &out("oracle"), None);
                let trial = Trial::new(cold, warm, [oracle1, oracle2]);
                println!(
                    "  round {round} trial {t} {:<10} cold {:.3}x (exploring {:.1}%, worst exploring call {:.1}x)  warm {:.3}x (exploring {:.1}%)  oracle {:.3} s",
                    b.label,
                    trial.ratio("cold"),
                    100.0 * trial.exploration("cold"),
                    f(&trial.cold["worst_exploring_call"]["ratio"]),
                    trial.ratio("warm"),
                    100.0 * trial.exploration("warm"),
                    trial.oracle_s,
                );
                results[bi].last_mut().expect("this round's").push(trial);
            }
        }
    }
    let report = summarise(&builds, &results);
    let path = out_path();
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&report).expect("json")).expect("write the report");
    println!("wrote {}", path.display());
}

/// One trial's processes: cold, warm, and the two oracles around them.
#[derive(Clone)]
struct Trial {
    cold: Value,
    warm: Value,
    /// The mean of the oracles' wall times, in seconds.
    oracle_s: f64,
    /// The mean of the oracles' time per kernel, in seconds.
    oracle_per_kernel: Vec<f64>,
}

impl Trial {
    fn new(cold: Value, warm: Value, oracles: [Value; 2]) -> Trial {
        let oracle_s = oracles.iter().map(|o| f(&o["wall_s"])).sum::<f64>() / 2.0;
        let oracle_per_kernel = KERNELS
            .iter()
            .map(|k| oracles.iter().map(|o| f(&o["per_kernel_s"][k.label()])).sum::<f64>() / 2.0)
            .collect();
        Trial { cold, warm, oracle_s, oracle_per_kernel }
    }

    fn of(&self, mode: &str) -> &Value {
        if mode == "cold" {
            &self.cold
        } else {
            &self.warm
        }
    }

    /// The routed process's wall time over the oracles'.
    fn ratio(&self, mode: &str) -> f64 {
        f(&self.of(mode)["wall_s"]) / self.oracle_s
    }

    /// What exploring cost, as a share of the oracles' time.
    fn exploration(&self, mode: &str) -> f64 {
        f(&self.of(mode)["exploration_s"]) / self.oracle_s
    }

    fn kernel_ratio(&self, mode: &str, ki: usize) -> f64 {
        f(&self.of(mode)["per_kernel_s"][KERNELS[ki].label()]) / self.oracle_per_kernel[ki]
    }

    fn json(&self) -> Value {
        json!({ "cold": self.cold, "warm": self.warm, "oracle_s": self.oracle_s,
            "ratio_cold": self.ratio("cold"), "ratio_warm": self.ratio("warm") })
    }
}

/// Runs one process of a trial of `build` (see `trial::run`), history in `history` (off for
/// none), and reads what it wrote to `out`.
fn run_child(build: &Build, mode: &str, calibration: &Path, out: &Path, history: Option<&Path>) -> Value {
    let status = command(build)
        .arg(CHILD)
        .arg(mode)
        .arg(calibration)
        .arg(out)
        .env("ADAPTIVE_KERNEL_HISTORY", history.map_or("off".into(), |h| h.as_os_str().to_owned()))
        .status()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", build.exe.display()));
    assert!(status.success(), "{} {mode} process failed: {status}", build.label);
    serde_json::from_slice(&std::fs::read(out).expect("the process's figures")).expect("json")
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn median(xs: &mut [f64]) -> f64 {
    adaptive_kernel::__private::median(xs).unwrap_or(f64::NAN)
}

/// Prints and returns, per build: each trial's ratios, their medians, how many warm
/// trials are within 1.05× the oracle, per-round medians (for interleaved pairs),
/// per-kernel medians, and the worst exploring call of all.
fn summarise(builds: &[Build], results: &[Vec<Vec<Trial>>]) -> Value {
    println!("\nper build: median ratio to the oracle (all trials), warm trials within 1.05x, per-round medians (cold / warm)");
    let mut out = serde_json::Map::new();
    for (b, rounds) in builds.iter().zip(results) {
        let all: Vec<&Trial> = rounds.iter().flatten().collect();
        let ratios = |mode: &str, trials: &[&Trial]| trials.iter().map(|t| t.ratio(mode)).collect::<Vec<f64>>();
        let (mut cold, mut warm) = (ratios("cold", &all), ratios("warm", &all));
        let within = warm.iter().filter(|&&r| r <= 1.05).count();
        let per_round: Vec<(f64, f64)> = rounds
            .iter()
            .map(|r| {
                let r: Vec<&Trial> = r.iter().collect();
                (median(&mut ratios("cold", &r)), median(&mut ratios("warm", &r)))
            })
            .collect();
        let mut explore_cold: Vec<f64> = all.iter().map(|t| t.exploration("cold")).collect();
        let mut explore_warm: Vec<f64> = all.iter().map(|t| t.exploration("warm")).collect();
        let processes = || all.iter().flat_map(|t| [&t.cold, &t.warm]);
        let worst = processes()
            .filter(|p| p["worst_exploring_call"].is_object())
            .max_by(|x, y| f(&x["worst_exploring_call"]["ratio"]).total_cmp(&f(&y["worst_exploring_call"]["ratio"])))
            .map(|p| p["worst_exploring_call"].clone());
        let over_10x: u64 = processes().map(|p| p["exploring_calls_over_10x"].as_u64().unwrap_or(0)).sum();
        let candidates_over_10x: u64 =
            processes().map(|p| p["exploring_candidates_over_10x"].as_u64().unwrap_or(0)).sum();
        let worst_candidate = processes()
            .filter(|p| p["worst_exploring_candidate"].is_object())
            .max_by(|x, y| {
                f(&x["worst_exploring_candidate"]["ratio"]).total_cmp(&f(&y["worst_exploring_candidate"]["ratio"]))
            })
            .map(|p| p["worst_exploring_candidate"].clone());
        let (mc, mw) = (median(&mut cold), median(&mut warm));
        println!(
            "  {:<10} cold {mc:.3}x  warm {mw:.3}x  (exploring {:.1}% / {:.1}% of the oracle)  warm within 1.05x: {within} of {}  rounds: {}",
            b.label,
            100.0 * median(&mut explore_cold),
            100.0 * median(&mut explore_warm),
            warm.len(),
            per_round.iter().map(|(c, w)| format!("{c:.3}/{w:.3}")).collect::<Vec<_>>().join(" ")
        );
        let mut kernels = serde_json::Map::new();
        for (ki, k) in KERNELS.iter().enumerate() {
            let mut c: Vec<f64> = all.iter().map(|t| t.kernel_ratio("cold", ki)).collect();
            let mut w: Vec<f64> = all.iter().map(|t| t.kernel_ratio("warm", ki)).collect();
            let (kc, kw) = (median(&mut c), median(&mut w));
            println!("    {:<22} cold {kc:.3}x  warm {kw:.3}x", k.label());
            kernels.insert(k.label().to_owned(), json!({ "cold": kc, "warm": kw }));
        }
        println!(
            "    exploring calls over 10x their size's best: {over_10x}; worst: {}",
            worst.clone().unwrap_or(Value::Null)
        );
        println!(
            "    of them on a candidate whose median is over 10x the best: {candidates_over_10x}; worst: {}",
            worst_candidate.clone().unwrap_or(Value::Null)
        );
        out.insert(
            b.label.clone(),
            json!({ "exe": b.exe, "cold": cold, "warm": warm, "median_cold": mc, "median_warm": mw,
                "warm_within_1_05": within, "per_round": per_round, "per_kernel": kernels,
                "exploring_calls_over_10x": over_10x, "worst_exploring_call": worst,
                "exploring_candidates_over_10x": candidates_over_10x, "worst_exploring_candidate": worst_candidate,
                "trials": all.iter().map(|t| t.json()).collect::<Vec<_>>() }),
        );
    }
    json!({ "cpu": cpu_model(), "builds": out })
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_default()
}

fn out_path() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("warm_start.json")
}
