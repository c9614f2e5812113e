//! Routing quality (issue #9): whether the router delivers, in numbers.
//!
//! One workload, shuffled with a fixed seed: nine kernels at sizes over five
//! decades (64 … 4M elements, matmul sides 8 … 512), small sizes called more
//! often than large ones. Every strategy runs on it in the same process:
//!
//! - **always Scalar / SIMD / Parallel / GPU**: `k::scalar(..)`, `k::simd(..)`,
//!   `k::parallel(..)`, `k::gpu(..)` called directly (Parallel only where the kernel has a
//!   Parallel variant: the `ops` kernels, `poly` and `saxpy`; GPU only where it has a GPU
//!   variant and a GPU is usable);
//! - **MoE table** (`BackendSelector::select_with_moe`) and **5× rule**
//!   (`BackendSelector::select_backend(bytes, flops)`): stateless; a GPU answer for a
//!   kernel without a GPU variant, or without a usable GPU, runs SIMD (the router's veto);
//! - **trueno auto**: trueno's own dispatching entry points (`Vector::add`, `dot`, `sum`,
//!   `softmax`, `sin`; `Matrix::matmul`, `convolve2d`), inputs prebuilt outside the timing;
//! - **adaptive cold / warm**: the routed wrapper `k(..)`, first with nothing learned,
//!   then in a second pass with the tables the first pass learned (same process);
//! - **oracle**: per (kernel, size), the variant with the lowest median in that pass, among
//!   every variant the router may run (Parallel included).
//!
//! Each item of the workload calls every measured strategy once, in a random order,
//! so all of them see the same machine load; a stateless rule's cost per call is the
//! time of the variant it picks in that item plus its own measured selection cost.
//! A variant found hopeless and slow within its first 8 calls at a (kernel, size) (after 6
//! calls, a median over 4× the best variant's and over 1 ms, or over 16× and 0.1 ms; or one
//! call over 16× and 50 ms) is not called again there: its remaining calls count at its
//! median ("extrapolated").
//! The router's calls are never extrapolated.
//!
//! Child processes of this binary measure a warm start from the history file the
//! cold pass wrote, a stale history file, and the stalls of a fresh process (a routed
//! call's time beyond its variant's median; reported over all calls, over those that
//! took the cold path, where one-time work could hide, and over settled ones; a
//! variant's first call is charged only beyond what its first direct call took in
//! another fresh process, since faulting in a fresh output is the kernel's own cost); the
//! parent then measures recovery from a busy machine and the sampling rate. The recovery
//! runs routed calls only, where large inputs meet cold caches, so its decisions are judged
//! twice: against the warm pass's medians, and against direct calls timed afterwards in the
//! recovery's own loop.
//! Results go to stdout and `target/routing_quality.json`; figures in BENCHMARKS.md.
//!
//! `cargo bench --bench routing_quality` (prefix `ADAPTIVE_KERNEL_GPU=software`
//! to count lavapipe as a GPU). `ROUTING_QUALITY_TOP_CALLS` (default 32) sets
//! the calls of the largest size of each kernel; each size below gets twice as many, at most 4,096.
//!
//! The router's figures, per kernel and in total: cold (pass 1), warm (pass 2) and warm
//! start (the child), each with what its *exploring* calls cost beyond the oracle's time
//! for them (a call the router decided on its cold path by anything but the bucket's
//! decision), as a share of the oracle's time.
//!
//! `-- --quick` measures only those three (no stale history, fresh process, busy machine or
//! sampling rate: half the time). `-- --against LABEL=PATH [--rounds N]` compares this
//! build with another build of this bench (`scripts/bench-against COMMIT routing_quality`
//! builds one against another commit's runtime): each round runs one measurement of each
//! build in a process of its own, the builds alternating (`common/builds.rs`), and the
//! per-round figures and their medians are printed and written to
//! `target/routing_quality_against.json`.
//!
//! At start-up every kernel's arms in `calls::call` are held to the variants it has
//! (`calls::check_arms`): a kernel that gains a Parallel or GPU variant needs the arm
//! that calls it. Smoke run (CI: `scripts/bench-smoke`): `cargo bench --bench
//! routing_quality -- --test` runs every part, children included, with one call of
//! each kernel's largest size and the busy-machine and sampling loops cut to a
//! fraction of a second (`common/smoke.rs`).
//!
//! | module | holds |
//! | --- | --- |
//! | `kernels` | the nine kernels and [`kernels::K`], which names them |
//! | `workload` | the (kernel, size) pairs with their inputs, and the shuffled order of their calls |
//! | `calls` | one timed call of a variant, of trueno's dispatch or of the routed wrapper |
//! | `trace` | which backend a routed call ran, from the router's decision events |
//! | `pass` | a pass over the workload, and the direct calls' samples (medians by the crate's own `median`) |
//! | `tally` | totals per strategy against the oracle, stalls, the router's decisions judged |
//! | `children` | the child processes: warm start, stale history, a fresh process |
//! | `busy` | a busy machine while exploring and the recovery after it; the sampling rate |
//! | `report` | printing and writing the results |

#[path = "../common/builds.rs"]
mod builds;
mod busy;
mod calls;
mod children;
mod kernels;
mod pass;
mod report;
#[path = "../common/sine_table.rs"]
mod sine_table;
#[path = "../common/smoke.rs"]
mod smoke;
mod tally;
mod trace;
mod workload;

use std::path::Path;
use std::time::Instant;

use adaptive_kernel::config::HistorySetting;
use adaptive_kernel::{ops, Backend};
use serde_json::{json, Value};

use crate::busy::{busy_exploration, reset_all, sampling_rate};
use crate::calls::{check_arms, GPU, PARALLEL, TRUENO};
use crate::children::{child_main, spawn_child, write_stale, CHILD};
use crate::kernels::KERNELS;
use crate::pass::{pass, Measured, PassCfg};
use crate::report::{cpu_model, letter, loadavg, out_path, print_per_kernel, print_router, print_rows, rows_json};
use crate::tally::{
    judge, medians, oracle_of, per_pair, selector_costs, stall_ns, stalls, tally, Ctx, Strategy, STRATEGIES,
};
use crate::trace::{install_recorder, Track, Via};
use crate::workload::{build_pairs, top_calls, workload, SEED};

/// Runs one measurement in this process and writes its report to the path that follows.
const RUN: &str = "--routing-quality-run";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == CHILD) {
        child_main(&args[i + 1], &args[i + 2], Path::new(&args[i + 3]));
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(i) = args.iter().position(|a| a == RUN) {
        return measure(quick, Path::new(&args[i + 1]));
    }
    let builds = builds::builds();
    let rounds = builds::count_arg("rounds", 1);
    if builds.len() == 1 && rounds == 1 {
        return measure(quick, &out_path("routing_quality.json"));
    }
    against(&builds, rounds, quick);
}

/// Runs `rounds` measurements of each build, alternating, each in a process of its own;
/// prints their cold, warm and warm-start ratios and exploring shares, and their medians.
fn against(builds: &[builds::Build], rounds: usize, quick: bool) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut runs: Vec<Vec<Value>> = vec![Vec::new(); builds.len()];
    let figures = |v: &Value| -> [f64; 5] {
        let all = |pass: &str| &v[pass]["policies"]["adaptive"]["all"];
        let get = |x: &Value| x.as_f64().unwrap_or(f64::NAN);
        let start = &v["warm_start_child"]["policies"]["adaptive"]["all"];
        [
            get(&all("pass1_cold")["ratio"]),
            get(&all("pass2_warm")["ratio"]),
            get(&start["ratio"]),
            get(&all("pass1_cold")["exploring_share"]),
            get(&start["exploring_share"]),
        ]
    };
    println!("routing_quality against other builds: {} rounds{}", rounds, if quick { ", --quick" } else { "" });
    println!(
        "  {:<6} {:<10} {:>8} {:>8} {:>8} {:>13} {:>13}",
        "round", "build", "cold", "warm", "w.start", "explore cold", "explore w.st"
    );
    for round in 0..rounds {
        for b in builds::order(builds, round) {
            let bi = builds.iter().position(|x| x.label == b.label).expect("a build");
            let out = dir.path().join(format!("{}-{round}.json", b.label));
            let mut cmd = builds::command(b);
            cmd.arg("--bench").arg(RUN).arg(&out).stdout(std::process::Stdio::null());
            if quick {
                cmd.arg("--quick");
            }
            let status = cmd.status().unwrap_or_else(|e| panic!("cannot start {}: {e}", b.exe.display()));
            assert!(status.success(), "{} failed: {status}", b.label);
            let v: Value = serde_json::from_slice(&std::fs::read(&out).expect("its report")).expect("json");
            let [c, w, s, ec, es] = figures(&v);
            println!(
                "  {round:<6} {:<10} {c:>7.3}x {w:>7.3}x {s:>7.3}x {:>12.1}% {:>12.1}%",
                b.label,
                100.0 * ec,
                100.0 * es
            );
            runs[bi].push(v);
        }
    }
    println!(
        "
medians over the rounds:"
    );
    let mut report = serde_json::Map::new();
    for (b, runs) in builds.iter().zip(&runs) {
        let per: Vec<[f64; 5]> = runs.iter().map(&figures).collect();
        let med = |i: usize| {
            adaptive_kernel::__private::median(&mut per.iter().map(|f| f[i]).collect::<Vec<_>>()).unwrap_or(f64::NAN)
        };
        println!(
            "  {:<17} {:>7.3}x {:>7.3}x {:>7.3}x {:>12.1}% {:>12.1}%",
            b.label,
            med(0),
            med(1),
            med(2),
            100.0 * med(3),
            100.0 * med(4)
        );
        report.insert(
            b.label.clone(),
            json!({ "exe": b.exe, "cold": per.iter().map(|f| f[0]).collect::<Vec<_>>(),
                "warm": per.iter().map(|f| f[1]).collect::<Vec<_>>(), "warm_start": per.iter().map(|f| f[2]).collect::<Vec<_>>(),
                "exploring_cold": per.iter().map(|f| f[3]).collect::<Vec<_>>(), "exploring_warm_start": per.iter().map(|f| f[4]).collect::<Vec<_>>(),
                "median": { "cold": med(0), "warm": med(1), "warm_start": med(2), "exploring_cold": med(3), "exploring_warm_start": med(4) },
                "runs": runs }),
        );
    }
    let path = out_path("routing_quality_against.json");
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&json!({ "cpu": cpu_model(), "builds": report })).expect("json"))
        .expect("write the report");
    println!("wrote {}", path.display());
}

/// One measurement (see the module docs), its report written to `path`; `quick`: the passes
/// and the warm-start child only.
fn measure(quick: bool, path: &Path) {
    let started = Instant::now();
    let load_before = loadavg();
    install_recorder();
    let dir = tempfile::tempdir().expect("temp dir");
    let history = dir.path().join("history.json");
    // A fresh, empty history file: nothing to load (a cold start), and the cold pass's
    // tables can be flushed for the warm-start child.
    assert!(adaptive_kernel::set_history(HistorySetting::Path(history.clone())), "history set before first use");
    let gpu = ops::gpu::is_available();
    let gpu_env = std::env::var("ADAPTIVE_KERNEL_GPU").unwrap_or_default();
    println!(
        "routing_quality: CPU {} ({:?}), ADAPTIVE_KERNEL_GPU={gpu_env:?}, GPU usable: {gpu} ({})",
        cpu_model(),
        adaptive_kernel::simd_level(),
        ops::gpu::health()
    );
    let mut pairs = build_pairs(true);
    check_arms(&mut pairs);
    let order = workload(&pairs);
    let (moe_ns, fivex_ns) = selector_costs(&pairs);
    println!(
        "workload: {} calls over {} (kernel, size) pairs, seed {SEED:#x}; selection costs: MoE {moe_ns:.1} ns, 5x {fivex_ns:.1} ns",
        order.len(),
        pairs.len()
    );
    let ctx = Ctx { gpu, moe_ns, fivex_ns };
    let mut m = Measured::new(pairs.len());
    reset_all();
    let cfg = PassCfg { direct: true, trueno: true, routed: true, gpu };

    // Pass 1: the router cold.
    let mut track = Track::new(&pairs);
    let (items1, wall1) = pass(&mut pairs, &order, &mut m, cfg, &mut track);
    let meds1 = medians(&items1, &m, pairs.len());
    let rows1 = tally(&pairs, &items1, &meds1, &ctx);
    let stall1 = stalls(&pairs, &items1, &meds1);
    let (wrong1, excess1) = judge(&pairs, &meds1, gpu);
    let flushed = adaptive_kernel::flush();
    let warm_file = dir.path().join("warm.json");
    let warm_ok = flushed.is_ok() && std::fs::copy(&history, &warm_file).is_ok();

    // Pass 2: the same workload again, tables learned.
    let (items2, wall2) = pass(&mut pairs, &order, &mut m, cfg, &mut track);
    let meds2 = medians(&items2, &m, pairs.len());
    let rows2 = tally(&pairs, &items2, &meds2, &ctx);
    let (wrong2, excess2) = judge(&pairs, &meds2, gpu);

    println!("\npass 1 (adaptive cold) {wall1:.1} s, pass 2 (adaptive warm: same process, tables learned in pass 1) {wall2:.1} s");
    println!(
        "  {:<22} {:>5}  {:>11}  {:>11}  {:>8}  {:>8}  {:>6}",
        "policy", "kern.", "total", "oracle", "ratio", "trimmed", "extrap"
    );
    print_rows("cold", &rows1, &STRATEGIES);
    print_rows("warm", &rows2, &[Strategy::Adaptive]);
    if !quick {
        println!("\nratio to oracle per kernel, pass 1 (adaptive = cold):");
        print_per_kernel(&rows1);
        println!("ratio to oracle per kernel, pass 2 (adaptive = warm):");
        print_per_kernel(&rows2);
    }
    println!("\noracle's variant per size (S Scalar, V SIMD, P Parallel, G GPU), pass 2; router's choice after pass 2 in brackets where it differs:");
    let mut choices = serde_json::Map::new();
    for k in KERNELS {
        let table = k.kernel().table();
        let mut line = String::new();
        let mut js = Vec::new();
        for (i, p) in pairs.iter().enumerate().filter(|(_, p)| p.k == k) {
            let o = oracle_of(&meds2[i], k, gpu);
            let r = table.row_for(p.size).and_then(|r| r.chosen).map(Backend::index);
            line.push_str(&format!(" {}:{}", p.n, letter(o)));
            if r != Some(o) {
                line.push_str(&format!("[{}]", r.map_or('?', letter)));
            }
            let med = |j: usize| meds2[i][j].map(|x| x / 1e3);
            js.push(json!({ "n": p.n, "calls": p.calls, "oracle": letter(o).to_string(), "router": r.map(|j| letter(j).to_string()),
                "median_us": { "scalar": med(0), "simd": med(1), "parallel": med(PARALLEL), "gpu": med(GPU), "trueno": med(TRUENO) } }));
        }
        println!("  {:<15}{line}", k.label());
        choices.insert(k.label().to_owned(), json!(js));
    }

    // Children: a real warm start, a stale history, a fresh process's stalls.
    let stale_file = dir.path().join("stale.json");
    let (warm_child, stale_child, doctored) = if warm_ok {
        let w = spawn_child("warm", warm_file.to_str().expect("utf-8 path"), &dir.path().join("warm-out.json"));
        if quick {
            (w, None, Vec::new())
        } else {
            let doctored = write_stale(&warm_file, &stale_file, &pairs, &meds1);
            let s = spawn_child("stale", stale_file.to_str().expect("utf-8 path"), &dir.path().join("stale-out.json"));
            (w, s, doctored)
        }
    } else {
        eprintln!("routing_quality: no history written ({flushed:?}); warm-start and stale children skipped");
        (None, None, Vec::new())
    };
    let fresh =
        |mode: &str| (!quick).then(|| spawn_child(mode, "off", &dir.path().join(format!("{mode}-out.json")))).flatten();
    let fresh_child = fresh("fresh");
    let first_direct = fresh("fresh-direct");
    let first_direct_ns = |pi: usize, b: usize| -> Option<f64> {
        first_direct.as_ref().and_then(|c| c["first_direct_ns"][pi][b].as_u64()).map(|ns| ns as f64)
    };

    println!("\nthe router against the oracle (cold: pass 1; warm: pass 2; warm start: a second process from pass 1's history), and its exploring calls beyond the oracle, as a share of the oracle's time:");
    let child_policies = warm_child.as_ref().map(|c| &c["policies"]);
    print_router(&rows_json(&rows1), &rows_json(&rows2), child_policies);
    println!("\nchild processes (each its own oracle, same workload; direct calls and routed calls interleaved):");
    for (label, child) in [("warm start (history from pass 1)", &warm_child), ("stale history", &stale_child)] {
        if let Some(c) = child {
            let a = &c["policies"]["adaptive"]["all"];
            println!(
                "  {label:<34} adaptive {:.3} s / oracle {:.3} s = {:.3}x; re-explored buckets: {}; corrected: {}; wrong at end: {}",
                a["total_s"].as_f64().unwrap_or(f64::NAN),
                a["oracle_s"].as_f64().unwrap_or(f64::NAN),
                a["ratio"].as_f64().unwrap_or(f64::NAN),
                buckets_with(c, "reexplores"),
                buckets_with(c, "corrections"),
                c["mismatched_at_end"].as_array().map_or(0, Vec::len),
            );
        }
    }
    let stale_report = stale_child.as_ref().map(|c| {
        let ps = c["pairs"].as_array().cloned().unwrap_or_default();
        let rows: Vec<Value> = doctored
            .iter()
            .map(|&(pi, wrong)| {
                let p = &ps[pi];
                // Left by a new round, or (a trusted decision) by a re-timed alternative taking over.
                let corrected = p["corrections"].as_u64().unwrap_or(0) > 0;
                let left = if p["first_explore_s"].is_null() && corrected { &p["last_settle_s"] } else { &p["first_explore_s"] };
                json!({ "kernel": pairs[pi].k.label(), "n": pairs[pi].n, "stale_choice": Backend::ALL[wrong].name(),
                    "left_stale_at_s": left, "resettled_at_s": p["last_settle_s"], "end_chosen": p["end_chosen"],
                    "reexplores": p["reexplores"], "corrections": p["corrections"] })
            })
            .collect();
        let left = rows.iter().filter(|r| !r["left_stale_at_s"].is_null()).count();
        let last = rows.iter().filter_map(|r| r["left_stale_at_s"].as_f64()).fold(0.0, f64::max);
        let stuck = rows.iter().filter(|r| r["end_chosen"] == r["stale_choice"]).count();
        println!(
            "  stale history: {} buckets claimed a wrong backend; {left} left it, re-explored or corrected (the last {last:.2} s into the run); {stuck} still on the stale choice at the end",
            rows.len()
        );
        json!({ "doctored": rows.len(), "reexplored": left, "last_reexplore_s": last, "still_stale": stuck, "buckets": rows })
    });
    let fresh_report = fresh_child.as_ref().map(|c| {
        // Charge each of the fresh process's slowest routed calls against pass 1's medians.
        let mut found = Vec::new();
        for (pi, p) in c["pairs"].as_array().cloned().unwrap_or_default().iter().enumerate() {
            for (key, ns) in p["slowest_ns"].as_object().cloned().unwrap_or_default() {
                let (cold, attributed) = match key.strip_prefix("cold/") {
                    Some(rest) => (true, rest),
                    None => (false, key.as_str()),
                };
                let via = match attributed.split_once(':') {
                    Some(("traced", b)) => Via::Traced(b.parse().unwrap_or(0)),
                    Some(("settled", b)) => Via::Settled(b.parse().unwrap_or(0)),
                    _ => Via::Unknown,
                };
                let ns = ns.as_u64().unwrap_or(0);
                // A first call is charged only beyond the same variant's first direct call.
                let mut expected = meds1[pi];
                if let (true, Via::Traced(b)) = (cold, via) {
                    expected[b] = expected[b].map(|m| first_direct_ns(pi, b).map_or(m, |f| f.max(m)));
                }
                if let Some(s) = stall_ns(via, ns, &expected) {
                    let at = json!({ "stall_ms": s / 1e6, "kernel": pairs[pi].k.label(), "n": pairs[pi].n,
                        "via": key, "call_ms": ns as f64 / 1e6 });
                    found.push((s, cold, at));
                }
            }
        }
        found.sort_by(|a, b| b.0.total_cmp(&a.0));
        let top = |keep: &dyn Fn(bool) -> bool| -> Value {
            json!(found.iter().filter(|f| keep(f.1)).take(3).map(|f| f.2.clone()).collect::<Vec<_>>())
        };
        let (all, cold, settled) = (top(&|_| true), top(&|c| c), top(&|c| !c));
        println!("  fresh process (history off, routed calls only), longest stalls: {all}");
        println!("    on calls that took the cold path (first calls, exploring; a first call charged beyond the same variant's first direct call in a fresh process; target <= 10 ms): {cold}");
        println!("    on settled calls (preemption of a call that does no one-time work): {settled}");
        json!({ "routed_total_s": c["routed_total_s"], "longest_stalls": all,
            "longest_cold_path_stalls": cold, "longest_settled_stalls": settled })
    });

    if quick {
        let report = json!({
            "machine": { "cpu": cpu_model(), "adaptive_kernel_gpu": gpu_env, "gpu_usable": gpu,
                "loadavg_before": load_before, "loadavg_after": loadavg() },
            "pass1_cold": { "wall_s": wall1, "policies": rows_json(&rows1), "pairs": per_pair(&pairs, &items1, &meds1, gpu) },
            "pass2_warm": { "wall_s": wall2, "policies": rows_json(&rows2), "pairs": per_pair(&pairs, &items2, &meds2, gpu) },
            "warm_start_child": warm_child, "quick": true, "total_wall_s": started.elapsed().as_secs_f64(),
        });
        return write_report(path, &report, started, &load_before);
    }
    // Noise in this process.
    let busy = busy_exploration(&mut pairs, &order, &meds2, gpu, (&wrong2, excess2));
    println!(
        "\nbusy machine: {} spinning threads for the first {} calls ({:.2} s); at stop {} buckets wrong, workload +{:.1}% over the oracle (quiet warm tables: +{:.1}%); within 2 points from {} on (target <= 5 s); wrong after 10 s (not wrong after pass 2): {}",
        busy["spinning_threads"],
        busy["busy_calls"],
        busy["busy_s"].as_f64().unwrap_or(0.0),
        busy["wrong_at_stop"].as_array().map_or(0, Vec::len),
        100.0 * busy["excess_at_stop"].as_f64().unwrap_or(0.0),
        100.0 * excess2,
        busy["recovered_after_s"].as_f64().map_or("never within 10 s".to_owned(), |s| format!("{s:.1} s")),
        busy["wrong_end"],
    );
    println!("  wrong at the stop, right from (s after the stop): {}", busy["fixed_after_stop"]);
    let lo = &busy["loop_oracle"];
    println!(
        "  judged by direct calls timed in the recovery's own loop (cold caches; quiet warm tables: +{:.1}%): within 2 points from {} on; +{:.1}% after 10 s; wrong then: {}",
        100.0 * lo["baseline_excess"].as_f64().unwrap_or(0.0),
        lo["recovered_after_s"].as_f64().map_or("never within 10 s".to_owned(), |s| format!("{s:.1} s")),
        100.0 * lo["excess_end"].as_f64().unwrap_or(0.0),
        lo["wrong_end"],
    );
    let sampling: Vec<Value> = [1024, 65536].into_iter().map(|n| sampling_rate(&pairs, n)).collect();
    for s in &sampling {
        println!(
            "sampling, dot and sum on {} elements interleaved for 2 s ({:.0} calls/s each): {:.1} and {:.1} samples/s (target 25-100)",
            s["n"],
            s["calls_per_s_each"].as_f64().unwrap_or(0.0),
            s["dot_samples_per_s"].as_f64().unwrap_or(0.0),
            s["sum_samples_per_s"].as_f64().unwrap_or(0.0)
        );
    }
    println!("longest stall in pass 1 (interleaved with direct calls): {stall1}");
    println!(
        "decisions off the oracle by > 10%: {} after pass 1 (workload +{:.1}%), {} after pass 2 (+{:.1}%)",
        wrong1.len(),
        100.0 * excess1,
        wrong2.len(),
        100.0 * excess2
    );

    let report = json!({
        "machine": { "cpu": cpu_model(), "simd_level": format!("{:?}", adaptive_kernel::simd_level()),
            "adaptive_kernel_gpu": gpu_env, "gpu_usable": gpu, "gpu_health": ops::gpu::health().to_string(),
            "loadavg_before": load_before, "loadavg_after": loadavg() },
        "workload": { "seed": SEED, "calls": order.len(), "pairs": pairs.len(), "top_calls": top_calls(),
            "selection_ns": { "moe": moe_ns, "fivex": fivex_ns },
            "trueno_entry_points": KERNELS.iter().filter_map(|k| k.trueno().map(|t| json!([k.label(), t]))).collect::<Vec<_>>() },
        "pass1_cold": { "wall_s": wall1, "policies": rows_json(&rows1), "stall": stall1, "wrong": wrong1.len(), "excess": excess1,
            "pairs": per_pair(&pairs, &items1, &meds1, gpu) },
        "pass2_warm": { "wall_s": wall2, "policies": rows_json(&rows2), "wrong": wrong2.len(), "excess": excess2, "choices": choices,
            "pairs": per_pair(&pairs, &items2, &meds2, gpu) },
        "warm_start_child": warm_child, "stale_history": stale_report, "stale_child": stale_child,
        "fresh_process": fresh_report, "busy_exploration": busy, "sampling": sampling,
        "total_wall_s": started.elapsed().as_secs_f64(),
    });
    write_report(path, &report, started, &load_before);
}

/// How many of a child's pairs have a non-zero `key` (`reexplores`, `corrections`).
fn buckets_with(child: &Value, key: &str) -> usize {
    child["pairs"].as_array().map_or(0, |ps| ps.iter().filter(|p| p[key].as_u64().unwrap_or(0) > 0).count())
}

fn write_report(path: &Path, report: &Value, started: Instant, load_before: &str) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(path, serde_json::to_vec_pretty(report).expect("json")) {
        Ok(()) => println!(
            "\nwrote {} ({:.0} s in all; load average {} before, {} after)",
            path.display(),
            started.elapsed().as_secs_f64(),
            load_before,
            loadavg()
        ),
        Err(e) => eprintln!("routing_quality: cannot write {}: {e}", path.display()),
    }
}
