//! Exploring a bucket: the cold-start [`prior`], the order candidates are
//! measured in (in runs of consecutive calls), pruning the hopeless ones, the
//! budget that defers the dear ones, and settling on the fastest (the rules are in
//! the module docs of `policy`).

use super::event::{CallInputs, Charge, Pick, Sample};
use super::tuning::Policy;
use crate::backend::Backend;
use crate::candidate::{Candidate, CandidateSet, PerCandidate};
use crate::cost::Work;
use crate::kernel::bucket_state::{Deferred, Exploring, Run};
use crate::kernel::spec::{Decision, DecisionKind, KernelSpec};
use crate::kernel::stats::BackendStats;
use crate::moe::moe;

/// The cold-start prior for a call of `work`: the MoE table's backend, its GPU choice
/// vetoed when the GPU may not run (`candidates`) or `predict` (seconds per backend)
/// says SIMD is faster; and a SIMD choice upgraded to Parallel where that may run and
/// `predict` says it pays.
pub(crate) fn prior(
    spec: &KernelSpec,
    work: &Work,
    candidates: CandidateSet,
    predict: impl Fn(Backend) -> f64,
) -> Decision {
    let table = match moe(spec.complexity, work.size) {
        Backend::Gpu if candidates.contains(Backend::Gpu) && predict(Backend::Gpu) < predict(Backend::Simd) => {
            Decision { backend: Backend::Gpu, kind: DecisionKind::MoeThreshold }
        }
        Backend::Gpu => Decision { backend: Backend::Simd, kind: DecisionKind::CostModel },
        other => Decision { backend: other, kind: DecisionKind::MoeThreshold },
    };
    let parallel_pays = table.backend == Backend::Simd
        && candidates.contains(Backend::Parallel)
        && predict(Backend::Parallel) < predict(Backend::Simd);
    if parallel_pays {
        Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel }
    } else {
        table
    }
}

/// What an exploring bucket does with a call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Next {
    /// Run (and time) the call on this candidate.
    Run(Pick),
    /// Every candidate is measured, pruned or deferred by the budget: settle on `chosen`,
    /// leaving the `deferred` ones to re-timing.
    Settle {
        /// The candidate to settle on.
        chosen: Candidate,
        /// The candidates the budget deferred, with their estimates.
        deferred: Deferred,
    },
}

/// The next candidate to call in an exploring bucket, or the one to settle on
/// once every candidate is measured or pruned. `has_history`: the bucket had any
/// figure before this call (a first call carries the prior's kind).
///
/// `inputs.later` are candidates that may run, but not now (the site defers
/// Parallel while a GPU driver loads): such a one is measured once it may, and the
/// bucket does not settle without it. Meanwhile calls go to the fastest candidate
/// measured so far (their samples count), else to the first that can run now; after
/// [`Policy::wait_calls`] such calls the bucket stops waiting.
///
/// Candidates are tried prior first, then by predicted time; but when every
/// candidate was measured in a neighbouring bucket, the predictions alone order them
/// and the prior is not special (a neighbour within [`Policy::prune_reach`] predicts
/// by its measurement, a farther one only where the model has no figure: see
/// `Predictions::for_order`).
///
/// A candidate whose remaining calls the budget cannot afford ([`affordable`]) is
/// deferred: the round goes on without it, and settles without it, leaving it to
/// re-timing (`settled::probe`).
pub(super) fn explore(
    stats: &PerCandidate<BackendStats>,
    round: &mut Exploring,
    inputs: &CallInputs,
    has_history: bool,
    policy: &Policy,
) -> Next {
    let CallInputs { candidates, later, prior, ref predicted, process_left_ns } = *inputs;
    round.deferred = Deferred::default();
    round.deferred.scalar_per_simd =
        predicted.scalar_per_simd.filter(|&(_, reach)| reach <= policy.ratio_reach).map(|(ratio, _)| ratio);
    let later = if round.waited < policy.wait_calls { later } else { CandidateSet::EMPTY };
    let mut waiting = false;
    let mut order: Vec<Candidate> = candidates.iter().collect();
    let prior = Pick::from(prior);
    let informed = order.iter().all(|&b| predicted.neighbours[b].is_some());
    let measured = round_centres(stats, round);
    // A candidate with no estimate at all is ordered as a free one: measured before any known to cost something.
    let estimate = |b: Candidate| predicted.for_order(b, &measured, policy).unwrap_or(0.0);
    order.sort_by(|&a, &b| {
        let prior_first =
            if informed { std::cmp::Ordering::Equal } else { (a != prior.candidate).cmp(&(b != prior.candidate)) };
        prior_first.then(estimate(a).total_cmp(&estimate(b))).then(a.cmp(&b))
    });
    for &b in &order {
        if round.pruned.contains(b) || round.base.since(stats, b) >= policy.samples {
            continue;
        }
        // Measured so far, less what this loop has pruned.
        let measured = round_centres(stats, round);
        let best = best_of(&measured, Some(b));
        let mut estimate = None;
        if let Some((best_b, best)) = best {
            let predict = || predicted.for_pruning(b, (best_b, best), &measured, policy);
            let kept = if round.base.since(stats, b) > 0 { stats[b].centre() } else { None };
            let (figure, e) = match kept {
                Some(centre) => (Figure::Measured, Some(centre)),
                None => (Figure::Predicted, predict()),
            };
            if best_b != b && e.is_some_and(|e| prunes(b, e, best, figure, policy)) {
                round.pruned.insert(b);
                continue;
            }
            // A prediction that may not prune (see `prunes`) does not defer either: the
            // candidate's first call measures it (unless it says the call costs nothing).
            let trusted = figure == Figure::Measured || b == Candidate::Gpu;
            estimate = e.filter(|&e| trusted || e >= policy.measure_below_ns || e <= best);
        }
        if later.contains(b) {
            waiting = true;
            continue;
        }
        if let Some((_, best)) = best {
            if !affordable(b, stats, round, (estimate, best), process_left_ns, policy) {
                round.deferred.insert(b, estimate);
                continue;
            }
        }
        let kind = if !has_history && b == prior.candidate { prior.kind } else { DecisionKind::Exploring };
        continue_run(round, b);
        return Next::Run(Pick { candidate: b, kind });
    }
    if waiting {
        round.waited += 1;
        let now = |b: &Candidate| candidates.minus(later).contains(*b);
        let measured = best_of(&round_centres(stats, round), None).map(|(b, _)| b).filter(now);
        let candidate = measured.or_else(|| order.iter().copied().find(now)).unwrap_or(Candidate::Scalar);
        continue_run(round, candidate);
        return Next::Run(Pick { candidate, kind: DecisionKind::Exploring });
    }
    let chosen = fastest(stats, round, candidates, policy);
    let mut deferred = round.deferred;
    deferred.remove(chosen);
    Next::Settle { chosen, deferred }
}

/// Whether the budget affords `b`'s remaining calls in the round: each is expected to cost
/// its estimate (its kept samples' centre, else a prediction that may prune) beyond the
/// `best` centre measured, and together they must fit in what the round has left at
/// [`Policy::explore_share`] of its calls' time ([`Exploring::budget`]) and in what the
/// process has left (`process_left_ns`). One estimated no slower than the best costs
/// nothing; one nothing estimates (or only a prediction too cheap to trust) is called:
/// its first call tells what the next would cost.
fn affordable(
    b: Candidate,
    stats: &PerCandidate<BackendStats>,
    round: &Exploring,
    (estimate, best): (Option<f64>, f64),
    process_left_ns: f64,
    policy: &Policy,
) -> bool {
    // Its first call tells what the next would cost. (Not held back by the process's debt:
    // such calls come one per candidate, and a kernel's first calls would wait on another's.)
    let Some(estimate) = estimate.filter(|e| e.is_finite()) else { return true };
    let per_call = (estimate - best).max(0.0);
    if per_call == 0.0 {
        return true;
    }
    let in_run = round.run.is_some_and(|r| r.candidate == b);
    let warmup = if b.backend() == Backend::Parallel && !in_run { u64::from(policy.run_warmup) } else { 0 };
    let calls = policy.samples.saturating_sub(round.base.since(stats, b)) + warmup;
    let cost = per_call * calls as f64;
    cost <= round.budget.left(policy.explore_share) && cost <= process_left_ns
}

/// The candidate an exploration round settles on: the lowest centre wins; every
/// candidate within [`Policy::tolerance`] of it ties, and ties go to the simplest
/// candidate (Scalar < SIMD < Parallel on fewer threads < Parallel < GPU). With nothing measured (every candidate
/// pruned before a sample), the simplest candidate.
fn fastest(
    stats: &PerCandidate<BackendStats>,
    round: &Exploring,
    candidates: CandidateSet,
    policy: &Policy,
) -> Candidate {
    let measured: Vec<(Candidate, f64)> =
        candidates.minus(round.pruned).iter().filter_map(|b| stats[b].centre().map(|c| (b, c))).collect();
    let best = measured.iter().map(|m| m.1).fold(f64::INFINITY, f64::min);
    measured
        .iter()
        .find(|&&(_, c)| c <= best * (1.0 + policy.tolerance))
        .map(|m| m.0)
        .or_else(|| candidates.iter().next())
        .unwrap_or(Candidate::Scalar)
}

/// The round's next call goes to `candidate`: the run goes on, or a new one starts.
fn continue_run(round: &mut Exploring, candidate: Candidate) {
    if round.run.is_none_or(|r| r.candidate != candidate) {
        round.run = Some(Run { candidate, timed: 0 });
    }
}

/// Applies a timed call of an exploring bucket: a kept sample counts for the round;
/// a warm-up (the process's first call of the backend, or one of the first
/// [`Policy::run_warmup`] calls of a Parallel candidate's run, when the bucket's calls come
/// back to back: [`Policy::run_gap_ns`]) is not kept. Either prunes its backend for the
/// round when its figure (the warm-up's time, or the centre of the round's samples) is
/// far over the best other backend's ([`prunes`]). The call is charged to the round's
/// budget, and returned as the process's charge: its time, and what it took beyond the
/// best other centre measured.
pub(super) fn timed(
    stats: &mut PerCandidate<BackendStats>,
    round: &mut Exploring,
    sample: Sample,
    policy: &Policy,
) -> Charge {
    let Sample { candidate, ns, now_ns, warmup, .. } = sample;
    let best_other = best_of(&round_centres(stats, round), Some(candidate)).map(|(_, c)| c);
    let charge = Charge { calls_ns: ns as f64, extra_ns: best_other.map_or(0.0, |best| (ns as f64 - best).max(0.0)) };
    round.budget.age(now_ns, policy.budget_half_life_ns);
    round.budget.calls_ns += charge.calls_ns;
    round.budget.extra_ns += charge.extra_ns;
    // A call of the current run: its first ones followed another candidate's calls, and a
    // Parallel one may have found the pool asleep where the calls come back to back (in a
    // program that calls the kernel between other work every call finds it so: nothing to drop).
    let started = now_ns.saturating_sub(ns);
    // The round's first call: what came before it is not known here; taken as close.
    let back_to_back = round.last_end_ns.is_none_or(|end| started.saturating_sub(end) <= ns.max(policy.run_gap_ns));
    round.last_end_ns = Some(now_ns);
    let run_start = match &mut round.run {
        Some(run) if run.candidate == candidate => {
            run.timed = run.timed.saturating_add(1);
            run.timed <= policy.run_warmup && candidate.backend() == Backend::Parallel && back_to_back
        }
        _ => false,
    };
    // A Parallel candidate's warm-up (its run's first call, or the process's first) may
    // have woken its pool: only a figure beyond the call cap says it cannot win.
    let figure = match (warmup || run_start, candidate.backend()) {
        (true, Backend::Parallel) => Figure::WakeUp,
        _ => Figure::Measured,
    };
    let mine = if warmup || run_start {
        Some(ns as f64)
    } else {
        stats[candidate].push(ns, now_ns);
        stats[candidate].centre()
    };
    if let (Some((_, best)), Some(mine)) = (best_of(&round_centres(stats, round), Some(candidate)), mine) {
        if prunes(candidate, mine, best, figure, policy) {
            round.pruned.insert(candidate);
            // A warm-up that prunes is kept as the candidate's figure: the next bucket's
            // prediction starts from it, so one call pays for a candidate that loses by
            // far, not one per size (where a prediction contradicts one such figure, the
            // settled bucket re-times it: `settled::probe`).
            if warmup || run_start {
                stats[candidate].push(ns, now_ns);
            }
        }
    }
    charge
}

/// The best (lowest) of `centres` ([`round_centres`]), other than `except`.
fn best_of(centres: &PerCandidate<Option<f64>>, except: Option<Candidate>) -> Option<(Candidate, f64)> {
    centres
        .iter()
        .filter(|&(b, _)| Some(b) != except)
        .filter_map(|(b, c)| c.map(|c| (b, c)))
        .min_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)))
}

/// The centre of every backend sampled in the round and not pruned.
fn round_centres(stats: &PerCandidate<BackendStats>, round: &Exploring) -> PerCandidate<Option<f64>> {
    PerCandidate::from_fn(|b| {
        let sampled = !round.pruned.contains(b) && round.base.since(stats, b) > 0;
        sampled.then(|| stats[b].centre()).flatten()
    })
}

/// What an estimate of a candidate while exploring is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Figure {
    /// A prediction (a neighbouring bucket's, the kernel's own ratio, the cost model's).
    Predicted,
    /// Measured here: the centre of the round's samples, or a warm-up's time.
    Measured,
    /// A Parallel candidate's warm-up call, which may have paid for waking its pool.
    WakeUp,
}

/// Whether an estimate of `candidate` while exploring (`ns`, a [`Figure`]) prunes it for the
/// round against the `best` centre measured:
///
/// - a measured figure over [`Policy::prune_factor`] × `best`: a candidate measured far
///   slower than the best gets no more calls, however cheap;
/// - a Parallel wake-up over [`Policy::call_cap`] × `best`;
/// - a prediction over [`Policy::call_cap`] × `best`, or over [`Policy::prune_factor`] ×
///   `best` unless it is a CPU figure under [`Policy::measure_below_ns`] (one call costs
///   less there than a misprediction deciding against the fastest variant).
pub(super) fn prunes(candidate: Candidate, ns: f64, best: f64, figure: Figure, policy: &Policy) -> bool {
    match figure {
        Figure::Measured => ns > policy.prune_factor * best,
        Figure::WakeUp => ns > policy.call_cap * best,
        Figure::Predicted => {
            ns > policy.call_cap * best
                || (ns > policy.prune_factor * best && (candidate == Candidate::Gpu || ns >= policy.measure_below_ns))
        }
    }
}
