//! Child processes: warm start, stale history, fresh-process stalls.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use adaptive_kernel::config::HistorySetting;
use adaptive_kernel::{ops, Backend};
use serde_json::{json, Value};

use crate::calls::{call, How, BACKENDS, NONE, SLOTS};
use crate::kernels::KERNELS;
use crate::pass::{pass, Measured, PassCfg};
use crate::report::rows_json;
use crate::tally::{judge, medians, stalls, tally, Ctx};
use crate::trace::{install_recorder, Track, Via};
use crate::workload::{build_pairs, workload, Pair};

pub(crate) const CHILD: &str = "--routing-quality-child";

/// A fresh process's first direct call of each CPU variant of each pair, in workload
/// order (Scalar, SIMD, then Parallel on a pair's first occurrence): what a variant's
/// first call costs without the router (page faults of fresh outputs, cold caches), so
/// the fresh routed process is charged only for time beyond it.
pub(crate) fn first_direct_calls(out: &Path) {
    let mut pairs = build_pairs(false);
    let order = workload(&pairs);
    let mut first = vec![[None::<u64>; BACKENDS]; pairs.len()];
    for &pi in &order {
        if first[pi][0].is_some() {
            continue;
        }
        let parallel = pairs[pi].k.kernel().has_parallel();
        for (j, how) in [How::Scalar, How::Simd, How::Parallel].into_iter().enumerate() {
            if j < 2 || parallel {
                first[pi][j] = Some(call(&mut pairs[pi], how));
            }
        }
    }
    std::fs::write(out, serde_json::to_vec(&json!({ "first_direct_ns": first })).expect("json")).expect("write");
}

pub(crate) fn child_main(mode: &str, history: &str, out: &Path) {
    if mode == "fresh-direct" {
        return first_direct_calls(out);
    }
    install_recorder();
    let setting = if history == "off" { HistorySetting::Off } else { HistorySetting::Path(history.into()) };
    assert!(adaptive_kernel::set_history(setting), "history set before first use");
    let fresh = mode == "fresh";
    // A fresh process must not wait for the GPU before its first call; the others measure it.
    let gpu = !fresh && ops::gpu::is_available();
    let mut pairs = build_pairs(false);
    let order = workload(&pairs);
    let mut m = Measured::new(pairs.len());
    let mut track = Track::new(&pairs);
    let cfg = PassCfg { direct: !fresh, trueno: false, routed: true, gpu };
    let (items, wall) = pass(&mut pairs, &order, &mut m, cfg, &mut track);
    let per_pair: Vec<Value> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let name = |c: Option<usize>| c.map(|j| Backend::ALL[j].name());
            // Per (pair, attribution) the slowest routed call: the parent charges it against its medians.
            let mut slowest = serde_json::Map::new();
            for it in items.iter().filter(|it| it.pair == i && it.routed != NONE) {
                let key = match it.via {
                    Via::Traced(b) => format!("traced:{b}"),
                    Via::Settled(b) => format!("settled:{b}"),
                    Via::Unknown => "unknown".to_owned(),
                };
                // Calls that took the cold path are kept apart (see `stalls`).
                let key = if it.cold { format!("cold/{key}") } else { key };
                let e = slowest.entry(key).or_insert(json!(0));
                *e = json!(e.as_u64().unwrap_or(0).max(it.routed));
            }
            json!({
                "kernel": p.k.label(), "n": p.n,
                "start_chosen": name(track.start_chosen[i]), "end_chosen": name(track.chosen[i]),
                "first_explore_s": track.first_explore[i], "last_settle_s": track.last_settle[i],
                "reexplores": track.reexplores[i], "corrections": track.corrections[i],
                "slowest_ns": slowest,
            })
        })
        .collect();
    let mut result = json!({ "mode": mode, "wall_s": wall, "gpu": gpu, "pairs": per_pair });
    if !fresh {
        let meds = medians(&items, &m, pairs.len());
        let ctx = Ctx { gpu, moe_ns: 0.0, fivex_ns: 0.0 };
        let rows = tally(&pairs, &items, &meds, &ctx);
        let mis: Vec<Value> =
            judge(&pairs, &meds, gpu).0.into_iter().map(|i| json!([pairs[i].k.label(), pairs[i].n])).collect();
        result["policies"] = rows_json(&rows);
        result["mismatched_at_end"] = json!(mis);
        result["stall"] = stalls(&pairs, &items, &meds);
    } else {
        let routed: u64 = items.iter().map(|it| it.routed).sum();
        result["routed_total_s"] = json!(routed as f64 / 1e9);
    }
    std::fs::write(out, serde_json::to_vec_pretty(&result).expect("json")).expect("write child result");
}

pub(crate) fn spawn_child(mode: &str, history: &str, out: &Path) -> Option<Value> {
    let exe = std::env::current_exe().ok()?;
    let t = Instant::now();
    let status =
        crate::smoke::pass_to(&mut Command::new(exe)).arg(CHILD).arg(mode).arg(history).arg(out).status().ok()?;
    if !status.success() {
        eprintln!("routing_quality: {mode} child failed: {status}");
        return None;
    }
    let mut v: Value = serde_json::from_slice(&std::fs::read(out).ok()?).ok()?;
    v["process_wall_s"] = json!(t.elapsed().as_secs_f64());
    Some(v)
}

/// A copy of `warm` whose every bucket claims the slowest CPU variant (per `meds`) is 4×
/// faster than the true best: a stale file that should be caught by verification.
pub(crate) fn write_stale(
    warm: &Path,
    stale: &Path,
    pairs: &[Pair],
    meds: &[[Option<f64>; SLOTS]],
) -> Vec<(usize, usize)> {
    let mut file: Value = serde_json::from_slice(&std::fs::read(warm).expect("warm history")).expect("history json");
    let mut doctored = Vec::new();
    for machine in file["machines"].as_object_mut().expect("machines").values_mut() {
        for (name, kernel) in machine["kernels"].as_object_mut().expect("kernels").iter_mut() {
            let Some(k) = KERNELS.into_iter().find(|k| k.kernel().name() == name) else { continue };
            for bucket in kernel["buckets"].as_array_mut().expect("buckets") {
                let (lo, hi) = (bucket["sizes"][0].as_u64().unwrap_or(0), bucket["sizes"][1].as_u64().unwrap_or(0));
                let Some(pi) = pairs.iter().position(|p| p.k == k && (lo..=hi).contains(&(p.size as u64))) else {
                    continue;
                };
                let m = &meds[pi];
                let (Some(s), Some(v)) = (m[0], m[1]) else { continue };
                let best = (0..BACKENDS).filter_map(|j| m[j]).fold(f64::INFINITY, f64::min);
                let wrong = if s >= v { 0 } else { 1 };
                if s.max(v) <= 1.10 * best {
                    continue;
                }
                let backend = serde_json::to_value(Backend::ALL[wrong]).expect("backend");
                let timings = bucket["timings"].as_array_mut().expect("timings");
                timings.retain(|t| t["backend"] != backend);
                let claimed = (best / 4.0).max(1.0) as u64;
                timings.push(json!({ "backend": backend, "count": 3, "recent_ns": [claimed, claimed, claimed] }));
                bucket["chosen"] = backend;
                doctored.push((pi, wrong));
            }
        }
    }
    std::fs::write(stale, serde_json::to_vec_pretty(&file).expect("json")).expect("write stale history");
    doctored
}
