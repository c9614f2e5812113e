//! Noise in the parent: a busy machine while exploring, the recovery after it, the sampling rate.

use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use adaptive_kernel::Backend;
use serde_json::{json, Value};

use crate::calls::{call, usable, How, BACKENDS, DIRECT, SLOTS};
use crate::kernels::{dot, sum, K, KERNELS};
use crate::pass::median;
use crate::report::letter;
use crate::smoke;
use crate::tally::{decisions, judge, judge_decisions, oracle_of};
use crate::workload::{Data, Pair};

/// Seconds the recovery after the busy period is followed (a smoke run: half a second).
fn recovery_s() -> f64 {
    smoke::pick(10.0, 0.5)
}

/// `snapshots` of the decisions (seconds after the load stopped, one decision per pair),
/// each judged against `meds`: the pairs wrong then with the snapshot's series entry
/// (`[s, wrong pairs, excess]`), and from when on the excess stayed within 2 points of
/// `baseline` (`None`: not by the last snapshot).
pub(crate) fn recovery(
    pairs: &[Pair],
    snapshots: &[(f64, Vec<Option<usize>>)],
    meds: &[[Option<f64>; SLOTS]],
    gpu: bool,
    baseline: f64,
) -> (Vec<(BTreeSet<usize>, Value)>, Option<f64>) {
    let mut recovered = None;
    let judged = snapshots
        .iter()
        .map(|(at, d)| {
            let (wrong, excess) = judge_decisions(pairs, d, meds, gpu);
            if excess > baseline + 0.02 {
                recovered = None;
            } else if recovered.is_none() {
                recovered = Some(*at);
            }
            let entry = json!([at, wrong.len(), (excess * 1e3).round() / 1e3]);
            (wrong, entry)
        })
        .collect();
    (judged, recovered)
}

/// Cold start with every core busy for the first quarter of the workload; then, polling every
/// 100 ms while the workload goes on for 10 s (a smoke run: 0.5 s), from when on the decisions cost no more than
/// 2 points above what the quiet warm tables cost (`baseline`), and which stay wrong.
pub(crate) fn busy_exploration(
    pairs: &mut [Pair],
    order: &[usize],
    meds: &[[Option<f64>; SLOTS]],
    gpu: bool,
    (quiet_wrong, baseline): (&BTreeSet<usize>, f64),
) -> Value {
    let quiet_decisions = decisions(pairs);
    reset_all();
    let stop = Arc::new(AtomicBool::new(false));
    let spinners = std::thread::available_parallelism().map_or(2, |n| n.get());
    let handles: Vec<_> = (0..spinners)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let busy_calls = order.len() / 4;
    let t0 = Instant::now();
    for &pi in &order[..busy_calls] {
        call(&mut pairs[pi], How::Routed);
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("spinner");
    }
    let busy_s = t0.elapsed().as_secs_f64();
    let (wrong_at_stop, excess_at_stop) = judge(pairs, meds, gpu);
    let t1 = Instant::now();
    let mut next = 0.0;
    // The decisions every 100 ms (judged afterwards, so the loop only calls and looks).
    let mut snapshots: Vec<(f64, Vec<Option<usize>>)> = Vec::new();
    let mut i = busy_calls;
    while t1.elapsed().as_secs_f64() < recovery_s() {
        let el = t1.elapsed().as_secs_f64();
        if el >= next {
            next += 0.1;
            snapshots.push(((el * 10.0).round() / 10.0, decisions(pairs)));
        }
        let pi = order[i % order.len()];
        call(&mut pairs[pi], How::Routed);
        i += 1;
    }
    let (left, excess_end) = judge(pairs, meds, gpu);
    let end_decisions = decisions(pairs);
    let (judged, recovered) = recovery(pairs, &snapshots, meds, gpu, baseline);
    let series: Vec<Value> = judged.iter().map(|j| j.1.clone()).collect();
    // Each bucket wrong at the stop: from when on it stayed right, and its share of the excess then.
    let fixed_at: BTreeMap<usize, Option<f64>> = wrong_at_stop
        .iter()
        .map(|&p| {
            let wrong_since = judged.iter().rposition(|(wrong, _)| wrong.contains(&p));
            let right_from = match wrong_since {
                Some(k) => judged.get(k + 1),
                None => judged.first(),
            };
            (p, right_from.map(|j| j.1[0].as_f64().unwrap_or(0.0)))
        })
        .collect();
    // The same decisions judged against the variants' times in this loop's own conditions.
    let lm = loop_medians(pairs, order, i, meds, gpu, smoke::pick((4.0, 5), (0.2, 1)));
    let (_, loop_baseline) = judge_decisions(pairs, &quiet_decisions, &lm, gpu);
    let (loop_judged, loop_recovered) = recovery(pairs, &snapshots, &lm, gpu, loop_baseline);
    let loop_series: Vec<Value> = loop_judged.into_iter().map(|j| j.1).collect();
    let (loop_wrong_end, loop_excess_end) = judge_decisions(pairs, &end_decisions, &lm, gpu);
    let loop_wrong_end: Vec<Value> = loop_wrong_end
        .iter()
        .map(|&p| {
            json!({ "kernel": pairs[p].k.label(), "n": pairs[p].n, "chosen": end_decisions[p].map(letter).map(String::from),
                "loop_medians_us": lm[p][..BACKENDS].iter().map(|m| m.map(|x| x / 1e3)).collect::<Vec<_>>() })
        })
        .collect();
    let left: BTreeSet<usize> = left.difference(quiet_wrong).copied().collect();
    let names = |s: &BTreeSet<usize>| s.iter().map(|&p| json!([pairs[p].k.label(), pairs[p].n])).collect::<Vec<_>>();
    // What the router holds for the buckets still wrong: per backend, kept samples and centre.
    let rows: Vec<Value> = left
        .iter()
        .map(|&p| {
            let table = pairs[p].k.kernel().table();
            let row = table.row_for(pairs[p].size);
            json!({
                "kernel": pairs[p].k.label(), "n": pairs[p].n,
                "chosen": row.and_then(|r| r.chosen).map(Backend::name),
                "decided_by": row.map(|r| r.decided_by.name()),
                "backends": row.map(|r| r.backends.iter().map(|b| json!([b.backend.name(), b.count,
                    b.centre.map(|c| c.as_secs_f64() * 1e6), b.spread.map(|c| c.as_secs_f64() * 1e6)])).collect::<Vec<_>>()),
                "oracle_medians_us": meds[p].map(|m| m.map(|x| x / 1e3)),
            })
        })
        .collect();
    let fixed: Vec<Value> = fixed_at
        .iter()
        .map(|(&p, at)| {
            let cost = |j: usize| meds[p][j].unwrap_or(0.0) * pairs[p].calls as f64;
            json!({ "kernel": pairs[p].k.label(), "n": pairs[p].n, "right_from_s": at,
                "oracle_cost_s": cost(oracle_of(&meds[p], pairs[p].k, gpu)) / 1e9 })
        })
        .collect();
    json!({
        "fixed_after_stop": fixed,
        "spinning_threads": spinners, "busy_calls": busy_calls, "busy_s": busy_s,
        "baseline_excess": baseline, "excess_at_stop": excess_at_stop, "excess_end": excess_end,
        "wrong_at_stop": names(&wrong_at_stop), "wrong_end": names(&left), "wrong_end_tables": rows,
        "recovered_after_s": recovered, "series_s_wrong_excess": series, "calls_after_stop": i - busy_calls,
        "loop_oracle": { "baseline_excess": loop_baseline, "recovered_after_s": loop_recovered,
            "excess_end": loop_excess_end, "wrong_end": loop_wrong_end, "series_s_wrong_excess": loop_series },
    })
}

/// Two settled kernels (`dot` and `sum` on `n` elements) called alternately from one thread
/// for 2 s (a smoke run: 0.1 s): timed samples per second each (the table's counts before and after).
pub(crate) fn sampling_rate(pairs: &[Pair], n: usize) -> Value {
    let find = |k: K| pairs.iter().find(|p| p.k == k && p.n == n).expect("a workload size");
    let (pd, ps) = (find(K::Dot), find(K::Sum));
    let (Data::Two { a, b, .. }, Data::One { x, .. }) = (&pd.data, &ps.data) else { unreachable!() };
    let count = |k: K, size: usize| -> (u64, bool) {
        let t = k.kernel().table();
        let row = t.row_for(size);
        (row.map_or(0, |r| r.backends.iter().map(|b| b.count).sum()), row.is_some_and(|r| r.chosen.is_some()))
    };
    for _ in 0..10_000 {
        if count(K::Dot, pd.size).1 && count(K::Sum, ps.size).1 {
            break;
        }
        for _ in 0..10 {
            black_box(dot(a, b));
            black_box(sum(x));
        }
    }
    let (d0, s0) = (count(K::Dot, pd.size).0, count(K::Sum, ps.size).0);
    let t = Instant::now();
    let mut calls = 0u64;
    while t.elapsed() < smoke::pick(Duration::from_secs(2), Duration::from_millis(100)) {
        for _ in 0..16 {
            black_box(dot(black_box(a), black_box(b)));
            black_box(sum(black_box(x)));
        }
        calls += 16;
    }
    let secs = t.elapsed().as_secs_f64();
    let (d1, s1) = (count(K::Dot, pd.size).0, count(K::Sum, ps.size).0);
    json!({
        "n": n, "seconds": secs, "calls_per_s_each": calls as f64 / secs,
        "dot_samples_per_s": (d1 - d0) as f64 / secs, "sum_samples_per_s": (s1 - s0) as f64 / secs,
    })
}

/// Each pair's variants timed by direct calls in the busy-machine test's own loop: the
/// workload's order with nothing else between the calls, as the recovery ran (each item
/// calls one variant of its pair, in turn), for `secs` and at least until every pair has
/// `min` samples of each variant worth timing. Large inputs meet cold caches there, which
/// the passes' medians do not show (an item of a pass calls every strategy on the same
/// inputs), so the recovery is judged against these. A variant over 4× the pass's best
/// median (`meds`) is not timed: it cannot be the oracle here either.
pub(crate) fn loop_medians(
    pairs: &mut [Pair],
    order: &[usize],
    from: usize,
    meds: &[[Option<f64>; SLOTS]],
    gpu: bool,
    (secs, min): (f64, usize),
) -> Vec<[Option<f64>; SLOTS]> {
    let worth: Vec<Vec<usize>> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let best = meds[i][oracle_of(&meds[i], p.k, gpu)].unwrap_or(f64::INFINITY);
            (0..BACKENDS).filter(|&j| usable(p.k, j, gpu) && meds[i][j].is_some_and(|m| m <= 4.0 * best)).collect()
        })
        .collect();
    let mut samples: Vec<[Vec<u64>; SLOTS]> = (0..pairs.len()).map(|_| Default::default()).collect();
    let mut turn = vec![0usize; pairs.len()];
    let t = Instant::now();
    let enough =
        |s: &[[Vec<u64>; SLOTS]]| worth.iter().enumerate().all(|(i, w)| w.iter().all(|&j| s[i][j].len() >= min));
    let mut i = from;
    while t.elapsed().as_secs_f64() < secs || (!enough(&samples) && t.elapsed().as_secs_f64() < 4.0 * secs) {
        let pi = order[i % order.len()];
        i += 1;
        let w = &worth[pi];
        if w.is_empty() {
            continue;
        }
        let j = w[turn[pi] % w.len()];
        turn[pi] += 1;
        samples[pi][j].push(call(&mut pairs[pi], DIRECT[j]));
    }
    samples.iter().map(|s| std::array::from_fn(|j| median(&s[j]))).collect()
}

pub(crate) fn reset_all() {
    for k in KERNELS {
        k.kernel().reset();
    }
}
