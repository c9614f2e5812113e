//! Totals per strategy against the oracle, stalls, and how the router's decisions compare.

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::Instant;

use adaptive_kernel::{Backend, BackendSelector};
use serde_json::{json, Value};

use crate::calls::{usable, BACKENDS, NONE, SLOTS, TRUENO};
use crate::kernels::{K, KERNELS};
use crate::pass::{median, Item, Measured};
use crate::trace::Via;
use crate::workload::Pair;

/// How one call is routed, for the totals: a variant always, a stateless rule, trueno's
/// dispatch, the router, or the oracle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// This variant for every call (where the kernel has it).
    Always(Backend),
    /// `BackendSelector::select_with_moe`.
    Moe,
    /// `BackendSelector::select_backend(bytes, flops)`.
    FiveX,
    /// trueno's own dispatching entry point.
    Trueno,
    /// The routed wrapper.
    Adaptive,
    /// Per pair, the variant with the lowest median.
    Oracle,
}

impl Strategy {
    pub(crate) fn label(self) -> String {
        match self {
            Strategy::Always(b) => format!("always {}", b.name()),
            Strategy::Moe => "MoE table alone".to_owned(),
            Strategy::FiveX => "5x rule alone".to_owned(),
            Strategy::Trueno => "trueno auto".to_owned(),
            Strategy::Adaptive => "adaptive".to_owned(),
            Strategy::Oracle => "oracle".to_owned(),
        }
    }
}

pub(crate) const STRATEGIES: [Strategy; 9] = [
    Strategy::Always(Backend::Scalar),
    Strategy::Always(Backend::Simd),
    Strategy::Always(Backend::Parallel),
    Strategy::Always(Backend::Gpu),
    Strategy::Moe,
    Strategy::FiveX,
    Strategy::Trueno,
    Strategy::Adaptive,
    Strategy::Oracle,
];

/// A pass's medians per pair and variant (falling back to earlier passes for dropped variants).
pub(crate) fn medians(items: &[Item], m: &Measured, npairs: usize) -> Vec<[Option<f64>; SLOTS]> {
    let mut per: Vec<[Vec<u64>; SLOTS]> = (0..npairs).map(|_| Default::default()).collect();
    for it in items {
        for (samples, &t) in per[it.pair].iter_mut().zip(&it.t) {
            if t != NONE {
                samples.push(t);
            }
        }
    }
    (0..npairs).map(|p| std::array::from_fn(|j| median(&per[p][j]).or_else(|| median(&m.samples[p][j])))).collect()
}

/// The variant with the lowest median among those the router may run.
pub(crate) fn oracle_of(meds: &[Option<f64>; SLOTS], k: K, gpu: bool) -> usize {
    (0..BACKENDS)
        .filter(|&j| usable(k, j, gpu) && meds[j].is_some())
        .min_by(|&a, &b| meds[a].unwrap().total_cmp(&meds[b].unwrap()))
        .unwrap_or(1)
}

/// A stateless rule's answer as the variant index it runs.
pub(crate) fn veto(b: Backend, k: K, gpu: bool) -> usize {
    match b {
        b if !usable(k, b.index(), gpu) => Backend::Simd.index(),
        b => b.index(),
    }
}

pub(crate) struct Ctx {
    pub(crate) gpu: bool,
    pub(crate) moe_ns: f64,
    pub(crate) fivex_ns: f64,
}

#[derive(Default, Clone, Copy)]
pub(crate) struct Tally {
    pub(crate) total: f64,
    pub(crate) oracle: f64,
    pub(crate) extrapolated: f64,
    pub(crate) trimmed: f64,
    pub(crate) trimmed_oracle: f64,
    pub(crate) calls: usize,
    /// The router's exploring calls beyond the oracle's time for them.
    pub(crate) exploring: f64,
}

impl Tally {
    pub(crate) fn json(&self) -> Value {
        json!({
            "total_s": self.total / 1e9, "oracle_s": self.oracle / 1e9,
            "ratio": self.total / self.oracle, "trimmed_ratio": self.trimmed / self.trimmed_oracle,
            "extrapolated_share": self.extrapolated / self.total,
            "calls": self.calls, "exploring_share": self.exploring / self.oracle,
        })
    }
}

/// Totals per strategy, overall and per kernel, over the items each strategy covers.
pub(crate) fn tally(
    pairs: &[Pair],
    items: &[Item],
    meds: &[[Option<f64>; SLOTS]],
    ctx: &Ctx,
) -> Vec<(Strategy, Tally, Vec<Tally>)> {
    let sel = BackendSelector::new();
    let oracle: Vec<usize> = pairs.iter().enumerate().map(|(i, p)| oracle_of(&meds[i], p.k, ctx.gpu)).collect();
    // (time, extrapolated, time capped at 3× its variant's median: one preempted call moves it little)
    let value = |it: &Item, j: usize| -> Option<(f64, bool, f64)> {
        let m = meds[it.pair][j];
        if it.t[j] != NONE {
            let t = it.t[j] as f64;
            Some((t, false, m.map_or(t, |m| t.min(3.0 * m))))
        } else {
            m.map(|m| (m, true, m))
        }
    };
    let mut out = Vec::new();
    for pol in STRATEGIES {
        let mut all = Tally::default();
        let mut per = vec![Tally::default(); KERNELS.len()];
        for it in items {
            let p = &pairs[it.pair];
            let choice = match pol {
                Strategy::Always(b) => usable(p.k, b.index(), ctx.gpu).then_some(b.index()),
                Strategy::Moe => Some(veto(sel.select_with_moe(p.k.kernel().complexity(), p.size), p.k, ctx.gpu)),
                Strategy::FiveX => Some(veto(sel.select_backend(p.work.bytes as usize, p.work.flops), p.k, ctx.gpu)),
                Strategy::Trueno => p.k.trueno().map(|_| TRUENO),
                Strategy::Adaptive | Strategy::Oracle => None,
            };
            let got = match pol {
                Strategy::Adaptive => (it.routed != NONE).then(|| {
                    let t = it.routed as f64;
                    (t, false, expected_ns(it.via, &meds[it.pair]).map_or(t, |m| t.min(3.0 * m)))
                }),
                Strategy::Oracle => value(it, oracle[it.pair]),
                _ => choice.and_then(|j| value(it, j)),
            };
            let (Some((ns, extrapolated, trimmed)), Some((o, _, o_trimmed))) = (got, value(it, oracle[it.pair])) else {
                continue;
            };
            let select = match pol {
                Strategy::Moe => ctx.moe_ns,
                Strategy::FiveX => ctx.fivex_ns,
                _ => 0.0,
            };
            let (ns, trimmed) = (ns + select, trimmed + select);
            let ki = KERNELS.iter().position(|&k| k == p.k).expect("kernel");
            for t in [&mut all, &mut per[ki]] {
                t.total += ns;
                t.oracle += o;
                t.trimmed += trimmed;
                t.trimmed_oracle += o_trimmed;
                t.calls += 1;
                if extrapolated {
                    t.extrapolated += ns;
                }
                if pol == Strategy::Adaptive && it.exploring {
                    t.exploring += (ns - o).max(0.0);
                }
            }
        }
        if all.calls > 0 {
            out.push((pol, all, per));
        }
    }
    out
}

/// What a routed call should take: the median of the variant it ran. A call on a settled
/// bucket's fast path is charged against the slowest variant within 4× of the chosen one
/// (it may have been an untraced probe of it); an unknown one against the slowest variant.
pub(crate) fn expected_ns(via: Via, meds: &[Option<f64>; SLOTS]) -> Option<f64> {
    let m = |j: usize| meds[j];
    match via {
        Via::Traced(b) => m(b),
        Via::Settled(c) => {
            let c = m(c)?;
            Some((0..BACKENDS).filter_map(m).filter(|&x| x <= 4.0 * c).fold(c, f64::max))
        }
        Via::Unknown => (0..BACKENDS).filter_map(m).reduce(f64::max),
    }
}

/// A routed call's stall: its time beyond [`expected_ns`].
pub(crate) fn stall_ns(via: Via, ns: u64, meds: &[Option<f64>; SLOTS]) -> Option<f64> {
    Some(ns as f64 - expected_ns(via, meds)?)
}

/// The longest stall of a routed call, over all of them and separately over the calls that
/// took the cold path (could do one-time work: the ≤ 10 ms target is about these) and the
/// settled ones (a preempted large call is not the router's doing).
pub(crate) fn stalls(pairs: &[Pair], items: &[Item], meds: &[[Option<f64>; SLOTS]]) -> Value {
    let mut all = longest_stall(pairs, items.iter(), meds);
    all["cold_path"] = longest_stall(pairs, items.iter().filter(|it| it.cold), meds);
    all["settled"] = longest_stall(pairs, items.iter().filter(|it| !it.cold), meds);
    all
}

pub(crate) fn longest_stall<'a>(
    pairs: &[Pair],
    items: impl Iterator<Item = &'a Item>,
    meds: &[[Option<f64>; SLOTS]],
) -> Value {
    let mut worst: Option<(f64, usize, Via, u64)> = None;
    let mut over_10ms = 0;
    for it in items.filter(|it| it.routed != NONE) {
        if let Some(s) = stall_ns(it.via, it.routed, &meds[it.pair]) {
            over_10ms += usize::from(s > 10e6);
            if worst.is_none_or(|w| s > w.0) {
                worst = Some((s, it.pair, it.via, it.routed));
            }
        }
    }
    match worst {
        None => json!(null),
        Some((s, p, via, ns)) => json!({
            "max_stall_ms": s / 1e6, "kernel": pairs[p].k.label(), "n": pairs[p].n,
            "via": format!("{via:?}"), "call_ms": ns as f64 / 1e6, "calls_over_10ms_stall": over_10ms,
        }),
    }
}

/// Per pair: the router's total and median against the oracle's, and how its calls were attributed.
pub(crate) fn per_pair(pairs: &[Pair], items: &[Item], meds: &[[Option<f64>; SLOTS]], gpu: bool) -> Vec<Value> {
    let mut routed: Vec<Vec<u64>> = vec![Vec::new(); pairs.len()];
    let mut oracle = vec![0.0; pairs.len()];
    let mut on = vec![[0u32; BACKENDS]; pairs.len()];
    let mut exploring = vec![0.0; pairs.len()];
    for it in items.iter().filter(|it| it.routed != NONE) {
        routed[it.pair].push(it.routed);
        let o = oracle_of(&meds[it.pair], pairs[it.pair].k, gpu);
        let o_ns = if it.t[o] != NONE { it.t[o] as f64 } else { meds[it.pair][o].unwrap_or(0.0) };
        oracle[it.pair] += o_ns;
        if it.exploring {
            exploring[it.pair] += (it.routed as f64 - o_ns).max(0.0);
        }
        if let Via::Traced(b) | Via::Settled(b) = it.via {
            on[it.pair][b] += 1;
        }
    }
    pairs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let total: u64 = routed[i].iter().sum();
            json!({ "kernel": p.k.label(), "n": p.n, "calls": routed[i].len(),
                "adaptive_ms": total as f64 / 1e6, "oracle_ms": oracle[i] / 1e6, "exploring_ms": exploring[i] / 1e6,
                "adaptive_median_us": median(&routed[i]).map(|x| x / 1e3),
                "oracle_median_us": meds[i][oracle_of(&meds[i], p.k, gpu)].map(|x| x / 1e3),
                "calls_on_scalar_simd_gpu": on[i] })
        })
        .collect()
}

pub(crate) fn selector_costs(pairs: &[Pair]) -> (f64, f64) {
    let sel = BackendSelector::new();
    let reps = 1_000_000;
    let t = Instant::now();
    for r in 0..reps {
        let p = &pairs[r % pairs.len()];
        black_box(sel.select_with_moe(black_box(p.k.kernel().complexity()), black_box(p.size)));
    }
    let moe = t.elapsed().as_nanos() as f64 / reps as f64;
    let t = Instant::now();
    for r in 0..reps {
        let p = &pairs[r % pairs.len()];
        black_box(sel.select_backend(black_box(p.work.bytes as usize), black_box(p.work.flops)));
    }
    (moe, t.elapsed().as_nanos() as f64 / reps as f64)
}

/// Each pair's current decision (the variant index), `None` while its bucket explores.
pub(crate) fn decisions(pairs: &[Pair]) -> Vec<Option<usize>> {
    pairs.iter().map(|p| p.k.kernel().table().row_for(p.size).and_then(|r| r.chosen).map(Backend::index)).collect()
}

/// The kernels' current decisions against the oracle (from `meds`); see [`judge_decisions`].
pub(crate) fn judge(pairs: &[Pair], meds: &[[Option<f64>; SLOTS]], gpu: bool) -> (BTreeSet<usize>, f64) {
    judge_decisions(pairs, &decisions(pairs), meds, gpu)
}

/// Decisions (`chosen`, per pair) against the oracle (from `meds`): the pairs whose decision is
/// not within 10% of the oracle's median (or not decided), and the workload's extra cost under
/// these decisions as a share of the oracle's (an undecided bucket counts at its slowest variant).
pub(crate) fn judge_decisions(
    pairs: &[Pair],
    chosen: &[Option<usize>],
    meds: &[[Option<f64>; SLOTS]],
    gpu: bool,
) -> (BTreeSet<usize>, f64) {
    let (mut wrong, mut extra, mut base) = (BTreeSet::new(), 0.0, 0.0);
    for (i, p) in pairs.iter().enumerate() {
        let best = meds[i][oracle_of(&meds[i], p.k, gpu)].unwrap_or(0.0);
        let cost = chosen[i]
            .and_then(|c| meds[i][c])
            .unwrap_or_else(|| (0..BACKENDS).filter_map(|j| meds[i][j]).fold(best, f64::max));
        if chosen[i].is_none() || cost > 1.10 * best {
            wrong.insert(i);
        }
        extra += p.calls as f64 * (cost - best);
        base += p.calls as f64 * best;
    }
    (wrong, extra / base)
}
