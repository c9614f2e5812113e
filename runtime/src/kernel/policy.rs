//! How a bucket's decision is reached: the cold-start prior, exploration with
//! pruning, settling, and re-exploration on drift.
//!
//! Decision order: forced > settled history > exploration > cold-start prior.
//! (Forcing is handled by the site before it gets here.) Everything in this file
//! is a pure function of a [`BucketState`] and numbers handed in, with no
//! clocks, locks or I/O, so every rule is tested with injected timings.
//!
//! - **Prior**: the MoE table for the kernel's complexity and size; a GPU choice
//!   is vetoed (→ SIMD) when the kernel has no GPU variant, no usable GPU exists,
//!   or the cost model predicts SIMD to be faster; a SIMD choice becomes
//!   Parallel where the kernel has that variant, two or more threads exist and
//!   the cost model predicts it faster (the MoE table itself never says Parallel).
//! - **Exploration**: candidates in order: the prior first, then by predicted
//!   time. Each gets [`Policy::samples`] kept samples. A candidate whose estimate
//!   (its own samples if any, else a prediction) exceeds [`Policy::prune_factor`]
//!   × the best centre measured so far is skipped for the round. A prediction
//!   from a neighbouring bucket prunes only when that bucket's sizes are within
//!   [`Policy::prune_reach`] of this one's: scaled across decades, a fixed cost
//!   measured at small sizes looks like a per-element one; a ratio does not, so a
//!   smaller bucket's Scalar-to-SIMD ratio predicts one from the other within
//!   [`Policy::ratio_reach`] (see `Predictions::by_ratio`). A CPU candidate's own
//!   figure under [`Policy::measure_below_ns`] (its warm-up, its first sample)
//!   prunes nothing: one preempted or page-faulting call must not decide.
//! - **Settling**: the lowest centre wins; every candidate within
//!   [`Policy::tolerance`] of it ties, and ties go to the incumbent, then to the
//!   simplest backend (Scalar < SIMD < Parallel < GPU), so decisions do not flap.
//! - **Replacing a settled decision needs more than noise.** Two variants that
//!   run the same code (below its grain `ops::par` runs the SIMD kernel) have
//!   medians that differ by a few percent either way on every look; a rule on
//!   centres alone switched between them, and re-explored, over and over. So
//!   a settled backend is replaced only by one that *beats* it: the upper end of
//!   the challenger's confidence interval ([`BackendStats::half_width`]), raised by
//!   the margin, lies below the lower end of the chosen one's.
//! - **Drift**: once at least [`Policy::drift_samples`] samples were taken since
//!   settling, a chosen backend beaten by another's recent figures with
//!   [`Policy::drift_band`] as the margin starts a new round. The centre is a
//!   median, so an outlier alone never triggers this; old figures (another run,
//!   or older than [`Policy::stale_ns`]) are re-timed by probes, not compared with.
//! - **Self-correction** ([`probe`]): a settled bucket's sampled calls
//!   alternate between timing the chosen backend and, within an explicit budget
//!   ([`Policy::probe_budget`] of the bucket's time, counted as what the
//!   alternative took *beyond* the chosen backend's current pace, on a ledger whose
//!   two sides halve every [`Policy::budget_half_life_ns`] so that an old overrun is
//!   forgotten; one whose optimistic estimate is no slower than the chosen backend
//!   costs nothing beyond it and is re-timed whatever the ledger says), re-timing an
//!   alternative that
//!   is not hopeless and whose figures are few ([`Policy::confident`]) or whose
//!   confidence interval still overlaps the chosen one's (until it holds a full
//!   window of fresh samples: then it is a tie, and more samples would only test
//!   it again until noise separates it once), or whose figures are old
//!   ([`Policy::stale_ns`], or from another run) even if they call it hopeless
//!   (figures taken under a transient load must not exclude it for good). When
//!   the chosen backend runs faster now (its [pace](BackendStats::pace)) than when
//!   an alternative's figures were taken (when the bucket settled, or when they
//!   were last re-timed) by more than [`Policy::drift_band`], the machine was busy
//!   then: those figures count as old too, scaled by the same factor for the
//!   budget, and the first sample taken now replaces them. Likewise the chosen
//!   backend's own window drops its older samples when its pace is faster than
//!   its centre by more than the band, so fresh figures are compared with fresh
//!   ones. As
//!   intervals separate, probing stops: the cost decays with confidence. An
//!   alternative with [`Policy::switch_after`] fresh samples that beats the
//!   chosen one with [`Policy::tolerance`] as the margin takes over (no new
//!   exploration round); so does a simpler one with [`Policy::confident`] fresh
//!   samples whose centre is within [`Policy::tolerance`] of the chosen one's
//!   (the settling tie-break, applied once the figures are firm). A switch the
//!   other way needs the full margin, so a tie settles on the simpler backend
//!   and stays there.
//! - **Warm start** ([`Verify`]): a decision loaded from history is re-timed on
//!   its first sampled calls; once [`Policy::verify_samples`] fresh samples
//!   exist, figures off the saved centre by more than [`Policy::verify_factor`]
//!   start a new exploration round: slower when even the fastest fresh sample is
//!   (a busy machine only slows calls down, so one quick call is enough to keep
//!   the decision), faster when the fresh centre is.
//! - **Another machine's decision** (the nearest entry's, `persist::nearest`) is
//!   verified more strictly: its figures order nothing here (they predict no
//!   neighbouring bucket and are replaced by the first sample taken here), and
//!   before it is confirmed every alternative its figures put within
//!   [`Policy::prune_factor`] of the chosen backend ([`contenders`]) is re-timed
//!   [`Policy::samples`] times, alternating with the chosen one, outside the probe
//!   budget (it is exploration's cost, paid once). Besides the figure check above,
//!   a contender measured faster than the chosen backend by more than
//!   [`Policy::tolerance`] starts a new exploration round: this machine disagrees.
//!   Alternatives it called hopeless are re-timed later, as old figures are.

use super::spec::{Decision, DecisionKind, KernelSpec};
#[cfg(test)]
use super::stats::Verify;
use super::stats::{BackendStats, BucketState, Phase, ProbeBudget, PACE, WINDOW};
use crate::backend::Backend;
use crate::cost::Work;
use crate::moe::moe;
use crate::per_backend::{BackendSet, PerBackend};

/// The router's tuning constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Policy {
    /// Kept samples each candidate needs before a bucket settles.
    pub(crate) samples: u64,
    /// A candidate estimated slower than this multiple of the best measured centre is skipped.
    pub(crate) prune_factor: f64,
    /// A neighbouring bucket's measurement prunes a candidate unmeasured here only when
    /// its typical size is within this factor of the call's (either way).
    pub(crate) prune_reach: f64,
    /// A smaller bucket's Scalar-to-SIMD ratio predicts one of the two from the other
    /// (to order and prune candidates) when the bucket's typical size is within this
    /// factor of the call's.
    pub(crate) ratio_reach: f64,
    /// A CPU candidate not yet measured in this round whose predicted time is below this
    /// (nanoseconds) is measured rather than pruned: a sample costs less than a misprediction
    /// (a neighbour dominated by fixed costs scales badly to a bigger size).
    pub(crate) measure_below_ns: f64,
    /// Centres within this fraction of the best tie (and the tie-break decides); a settled
    /// choice is replaced only by a backend faster by more than this beyond both intervals.
    pub(crate) tolerance: f64,
    /// A settled choice beaten by another backend's recent figures by more than this fraction
    /// (beyond both confidence intervals) re-explores.
    pub(crate) drift_band: f64,
    /// Samples of the chosen backend needed since settling before drift is judged.
    pub(crate) drift_samples: u64,
    /// Share of a settled bucket's time that re-timing alternatives may cost on top.
    pub(crate) probe_budget: f64,
    /// The probe budget's memory (nanoseconds of wall time): both sides of its ledger
    /// halve this often, so it holds over any stretch of a few half-lives, and a few
    /// probes that ran long (a preempted call) do not stop re-timing for minutes in a
    /// bucket called a few times a second.
    pub(crate) budget_half_life_ns: u64,
    /// Fresh samples of an alternative after which only an overlapping interval or age re-times it.
    pub(crate) confident: u32,
    /// Figures older than this (nanoseconds) are re-timed.
    pub(crate) stale_ns: u64,
    /// Fresh samples an alternative needs before it can replace the chosen backend.
    pub(crate) switch_after: u32,
    /// Fresh samples of a loaded decision's backend before it is judged.
    pub(crate) verify_samples: u32,
    /// A loaded decision whose fresh centre is off the saved one by more than this factor re-explores.
    pub(crate) verify_factor: f64,
    /// Exploring calls a bucket spends waiting for candidates that may run only later
    /// (see [`explore`]) before it measures them anyway.
    pub(crate) wait_calls: u32,
}

impl Policy {
    /// The defaults: 3 samples, prune at 4× (by a neighbour's figure only within 4× in
    /// size, by the kernel's Scalar-to-SIMD ratio within 64×; a CPU candidate predicted
    /// under 50 µs is measured instead), 5% tolerance, 25% drift band judged on 9
    /// samples; probes cost at most 1% of a bucket's time (a ledger with a 5 s half-life), an alternative is trusted
    /// after 8 fresh samples and re-timed after 30 s, takes over after 3; a loaded
    /// decision is judged on 5 fresh samples and re-explored when 2× off; a candidate
    /// that may run only later is waited for during at most 64 calls.
    pub(crate) const DEFAULT: Policy = Policy {
        samples: 3,
        prune_factor: 4.0,
        prune_reach: 4.0,
        ratio_reach: 64.0,
        measure_below_ns: 50_000.0,
        tolerance: 0.05,
        drift_band: 0.25,
        drift_samples: 9,
        probe_budget: 0.01,
        budget_half_life_ns: 5_000_000_000,
        confident: 8,
        stale_ns: 30_000_000_000,
        switch_after: 3,
        verify_samples: 5,
        verify_factor: 2.0,
        wait_calls: 64,
    };
}

impl Default for Policy {
    fn default() -> Self {
        Policy::DEFAULT
    }
}

/// The cold-start prior for a call of `work` (see the module docs): the MoE
/// table's backend, its GPU choice vetoed when the GPU may not run
/// (`candidates`) or `predict` (seconds per backend) says SIMD is faster; and a
/// SIMD choice upgraded to Parallel where that may run and `predict` says it pays.
pub(crate) fn prior(
    spec: &KernelSpec,
    work: &Work,
    candidates: BackendSet,
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

/// The best (lowest) centre among backends sampled in the current round, other than `except`.
fn best_centre(state: &BucketState, except: Option<Backend>) -> Option<(Backend, f64)> {
    best_of(&round_centres(state), except)
}

/// The best (lowest) of `centres` ([`round_centres`]), other than `except`.
fn best_of(centres: &PerBackend<Option<f64>>, except: Option<Backend>) -> Option<(Backend, f64)> {
    Backend::ALL
        .into_iter()
        .filter(|&b| Some(b) != except)
        .filter_map(|b| centres[b].map(|c| (b, c)))
        .min_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)))
}

/// The centre of every backend sampled in the current round and not pruned.
fn round_centres(state: &BucketState) -> PerBackend<Option<f64>> {
    PerBackend::from_fn(|b| {
        let sampled = !state.pruned.contains(b) && state.round_samples(b) > 0;
        sampled.then(|| state.of(b).centre()).flatten()
    })
}

/// Predicted time of a backend for the call being routed, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Predictions {
    /// From the nearest bucket where the backend was measured, scaled by the complexity's growth.
    pub(crate) neighbours: PerBackend<Option<f64>>,
    /// How far each neighbour is: the ratio (≥ 1) between its typical size and the call's.
    pub(crate) reach: PerBackend<f64>,
    /// From the cost model, where it has measured figures.
    pub(crate) model: PerBackend<Option<f64>>,
    /// This kernel's own Scalar-to-SIMD time ratio, measured on this machine in the
    /// nearest smaller bucket where both ran, and how far that bucket is (its size
    /// factor, ≥ 1).
    pub(crate) scalar_per_simd: Option<(f64, f64)>,
}

impl Predictions {
    /// A neighbouring bucket's measurement of `b` within [`Policy::prune_reach`] (a size factor).
    fn near(&self, b: Backend, policy: &Policy) -> Option<f64> {
        self.neighbours[b].filter(|_| self.reach[b] <= policy.prune_reach)
    }

    /// Scalar's time from SIMD's (or SIMD's from Scalar's) by this kernel's own ratio
    /// between the two ([`Predictions::scalar_per_simd`], from a smaller bucket within
    /// [`Policy::ratio_reach`]): the other's centre measured in this round (`here`), else
    /// its near neighbour's figure. A ratio carries across sizes where an absolute
    /// figure does not (both variants pay the same call and memory costs), and it is
    /// this kernel's, where the model's is a matmul probe's: `conv2d`'s Scalar is 8× its
    /// SIMD, which the model put at 2–15× from one fresh process to the next. From a
    /// smaller bucket only: fixed costs weigh more there, so the ratio is nearer 1 than at
    /// this size and errs towards measuring.
    fn by_ratio(&self, b: Backend, here: &PerBackend<Option<f64>>, policy: &Policy) -> Option<f64> {
        let (ratio, reach) = self.scalar_per_simd?;
        if reach > policy.ratio_reach || !(ratio > 0.0 && ratio.is_finite()) {
            return None;
        }
        let (other, factor) = match b {
            Backend::Scalar => (Backend::Simd, ratio),
            Backend::Simd => (Backend::Scalar, 1.0 / ratio),
            _ => return None,
        };
        here[other].or_else(|| self.near(other, policy)).map(|ns| ns * factor)
    }

    /// The estimate candidates are ordered by, in this order: a near neighbour's
    /// measurement; the kernel's own Scalar-to-SIMD ratio ([`Predictions::by_ratio`]);
    /// the cost model's figure where there is one; a farther neighbour's. Scaled across
    /// decades, a fixed cost measured at small sizes looks like a per-element one, so a
    /// far neighbour ranks the simplest variant first at sizes where it is many times
    /// slower (Scalar's `conv2d` of 2048², 42 ms against SIMD's 5 ms, was tried first on
    /// the strength of 8×8 figures), and the model's absolute figure is no yardstick for
    /// a neighbour's measurement (it put that Scalar call at 8.9 ms, below SIMD's 9.2 ms
    /// scaled from 1024²).
    fn for_order(&self, b: Backend, here: &PerBackend<Option<f64>>, policy: &Policy) -> Option<f64> {
        self.near(b, policy)
            .or_else(|| self.by_ratio(b, here, policy))
            .or_else(|| self.model[b].filter(|&m| m > 0.0))
            .or(self.neighbours[b])
            .or(self.model[b])
    }

    /// The estimate pruning compares with `prune_factor × anchor_ns`, where `anchor` is
    /// the best backend measured in this bucket, in this order: a near neighbour's
    /// measurement, as it is; the kernel's own Scalar-to-SIMD ratio
    /// ([`Predictions::by_ratio`]); the cost model's figure, also relative to the anchor:
    /// Scalar and SIMD share the host's memory and call costs, so the model's error on
    /// the measured one applies to the other, and the lower of the absolute and the
    /// relative figure is used, so a model that is off in absolute terms does not prune
    /// a backend it cannot really tell apart. Farther neighbours are not used.
    fn for_pruning(
        &self,
        b: Backend,
        (anchor, anchor_ns): (Backend, f64),
        here: &PerBackend<Option<f64>>,
        policy: &Policy,
    ) -> Option<f64> {
        if let Some(ns) = self.near(b, policy).or_else(|| self.by_ratio(b, here, policy)) {
            return Some(ns);
        }
        let raw = self.model[b]?;
        let both_cpu = b != Backend::Gpu && anchor != Backend::Gpu;
        match self.model[anchor] {
            Some(anchor_model) if both_cpu && anchor_model > 0.0 && anchor_model.is_finite() => {
                Some(raw.min(raw * anchor_ns / anchor_model))
            }
            _ => Some(raw),
        }
    }
}

/// The next backend to call in an exploring bucket, or the settled decision once
/// every candidate is measured or pruned.
///
/// `candidates[i]` says whether backend `i` may run at all; `later[i]` that it may,
/// but not now (the site defers Parallel while a GPU driver loads): it is measured
/// once it may, and the bucket does not settle without it. Meanwhile calls go to the
/// fastest candidate measured so far (their samples count), else to the first that
/// can run now; after [`Policy::wait_calls`] such calls the bucket stops waiting.
///
/// Candidates are tried
/// prior first, then by predicted time; but when every candidate was measured in a
/// neighbouring bucket, the predictions alone order them and the prior is not special
/// (a neighbour within [`Policy::prune_reach`] predicts by its measurement, a farther
/// one only where the model has no figure: see `Predictions::for_order`).
pub(crate) fn explore(
    state: &mut BucketState,
    candidates: BackendSet,
    later: BackendSet,
    prior: Decision,
    predicted: &Predictions,
    policy: &Policy,
) -> Decision {
    let later = if state.waited < policy.wait_calls { later } else { BackendSet::EMPTY };
    let mut waiting = false;
    let mut order: Vec<Backend> = candidates.iter().collect();
    let informed = order.iter().all(|&b| predicted.neighbours[b].is_some());
    let measured = round_centres(state);
    // A candidate with no estimate at all is ordered as a free one: measured before any known to cost something.
    let estimate = |b: Backend| predicted.for_order(b, &measured, policy).unwrap_or(0.0);
    order.sort_by(|&a, &b| {
        let prior_first =
            if informed { std::cmp::Ordering::Equal } else { (a != prior.backend).cmp(&(b != prior.backend)) };
        prior_first.then(estimate(a).total_cmp(&estimate(b))).then(a.cmp(&b))
    });
    for &b in &order {
        if state.pruned.contains(b) || state.round_samples(b) >= policy.samples {
            continue;
        }
        // Measured so far, less what this loop has pruned.
        let measured = round_centres(state);
        if let Some((best_b, best)) = best_of(&measured, Some(b)) {
            let predict = || predicted.for_pruning(b, (best_b, best), &measured, policy);
            let estimate = match state.round_samples(b) {
                0 => predict(),
                _ => state.of(b).centre().or_else(predict),
            };
            if best_b != b && estimate.is_some_and(|e| figure_prunes(b, e, best, policy)) {
                state.pruned.insert(b);
                continue;
            }
        }
        if later.contains(b) {
            waiting = true;
            continue;
        }
        let kind = if !state.has_history() && b == prior.backend { prior.kind } else { DecisionKind::Exploring };
        return Decision { backend: b, kind };
    }
    if waiting {
        state.waited += 1;
        let now = |b: &Backend| candidates.minus(later).contains(*b);
        let measured = best_centre(state, None).map(|(b, _)| b).filter(now);
        let backend = measured.or_else(|| order.iter().copied().find(now)).unwrap_or(Backend::Scalar);
        return Decision { backend, kind: DecisionKind::Exploring };
    }
    settle(state, candidates, policy)
}

/// Settles the bucket on the best measured candidate (see the module docs for the band and tie-break).
fn settle(state: &mut BucketState, candidates: BackendSet, policy: &Policy) -> Decision {
    let incumbent = state.settled();
    let measured: Vec<(Backend, f64)> = Backend::ALL
        .into_iter()
        .filter(|&b| candidates.contains(b) && !state.pruned.contains(b))
        .filter_map(|b| state.of(b).centre().map(|c| (b, c)))
        .collect();
    let best = measured.iter().map(|m| m.1).fold(f64::INFINITY, f64::min);
    let in_band = |b: Backend| measured.iter().any(|&(x, c)| x == b && c <= best * (1.0 + policy.tolerance));
    let backend = match incumbent {
        Some(b) if in_band(b) => b,
        _ => measured
            .iter()
            .map(|m| m.0)
            .find(|&b| in_band(b))
            // Nothing measured (every candidate pruned before a sample): fall back to the cheapest allowed.
            .or_else(|| candidates.iter().next())
            .unwrap_or(Backend::Scalar),
    };
    state.settle_on(backend, DecisionKind::Historical);
    Decision { backend, kind: DecisionKind::Historical }
}

/// What a recorded sample changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// Nothing about the decision.
    None,
    /// The bucket was settled and explores again (drift, or a loaded decision far off).
    Reexplore,
    /// A re-timed alternative beat the chosen backend and is now chosen.
    Switched(Backend),
}

/// One timed call: `ns` on `backend`, taken at `now_ns` on the process clock;
/// `interval` is how many calls this sample stands for (the sampling interval
/// of a settled bucket, 1 while exploring).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sample {
    pub(crate) backend: Backend,
    pub(crate) ns: u64,
    pub(crate) now_ns: u64,
    pub(crate) interval: f64,
    /// The first sample of this backend in this process: not kept (page faults,
    /// pipeline compilation, caches), but a warm-up already far slower than the
    /// best measured prunes its backend for the round (see `figure_prunes`).
    pub(crate) warmup: bool,
}

/// The alternatives a decision from another machine must be re-timed against before it
/// is confirmed (see the module docs): those that may run here (`candidates`) whose
/// figures in `state` are within [`Policy::prune_factor`] of `chosen`'s.
pub(crate) fn contenders(state: &BucketState, chosen: Backend, candidates: BackendSet, policy: &Policy) -> BackendSet {
    let reach = state.of(chosen).centre().map_or(f64::INFINITY, |c| policy.prune_factor * c);
    let allowed = state.allowed(candidates).without(chosen);
    BackendSet::from_fn(|b| allowed.contains(b) && state.of(b).centre().is_some_and(|c| c <= reach))
}

/// Whether an estimate of `backend` while exploring (a prediction, its warm-up, or the
/// centre of its samples so far) prunes it for the round against the `best` centre
/// measured: when it is over [`Policy::prune_factor`] × `best`, unless it is a CPU
/// figure under [`Policy::measure_below_ns`]. Measuring such a candidate costs less than
/// a misprediction or one preempted or page-faulting call deciding for it: a plain-loop kernel's
/// first SIMD call at 8,192 elements took 29–42 µs (a warm-up) against Scalar's 3.8 µs
/// and a steady 0.5 µs, and pruned the fastest variant.
fn figure_prunes(backend: Backend, ns: f64, best: f64, policy: &Policy) -> bool {
    ns > policy.prune_factor * best && (backend == Backend::Gpu || ns >= policy.measure_below_ns)
}

/// Records one sample (see the module docs for what it may change).
pub(crate) fn record(state: &mut BucketState, sample: Sample, policy: &Policy) -> Change {
    let Sample { backend, ns, now_ns, interval, warmup } = sample;
    if warmup {
        if matches!(state.phase, Phase::Exploring) {
            if let Some((_, best)) = best_centre(state, Some(backend)) {
                if figure_prunes(backend, ns as f64, best, policy) {
                    state.pruned.insert(backend);
                }
            }
        }
        return Change::None;
    }
    state.drop_foreign(backend);
    let chosen = match state.phase {
        Phase::Exploring => {
            state.stats[backend].record(ns, now_ns);
            if let (Some((_, best)), Some(mine)) = (best_centre(state, Some(backend)), state.of(backend).centre()) {
                if figure_prunes(backend, mine, best, policy) {
                    state.pruned.insert(backend);
                }
            }
            return Change::None;
        }
        Phase::Settled { backend: chosen, .. } => chosen,
    };
    state.budget.age(now_ns, policy.budget_half_life_ns);
    // Figures from another run or long ago describe another moment: a fresh sample replaces them.
    if state.stats[backend].is_stale(now_ns, policy.stale_ns) {
        state.stats[backend].keep_recent(0);
    }
    if backend == chosen {
        let mine = &mut state.stats[backend];
        mine.record(ns, now_ns);
        // Running faster now than over its window by more than the drift band: the
        // window's older figures are from a busier moment, and comparing a fresh
        // alternative with them would favour it by as much.
        if let (Some(centre), Some(pace)) = (mine.centre(), mine.pace()) {
            if mine.recent_ns.len() > PACE && centre > pace * (1.0 + policy.drift_band) {
                mine.keep_recent(PACE);
            }
        }
        state.budget.calls_ns += ns as f64 * interval.max(1.0);
        if verified_wrong(state, chosen, policy) {
            return Change::Reexplore;
        }
        return if drifted(state, chosen, now_ns, policy) { Change::Reexplore } else { Change::None };
    }
    // A re-timed alternative. Its figures from a busier moment describe another machine.
    let mine = state.of(chosen);
    let (busier, chosen_centre, pace) =
        (from_a_busier_moment(calmer_since(&state.stats[backend], mine, policy), policy), mine.centre(), mine.pace());
    if busier {
        state.stats[backend].keep_recent(0);
    }
    state.stats[backend].record(ns, now_ns);
    state.stats[backend].against_ns = pace;
    if let Some(c) = chosen_centre {
        // What the chosen backend would have taken now, not over its window: a probe
        // during a load is charged beyond the chosen backend's pace under that load.
        state.budget.extra_ns += (ns as f64 - pace.unwrap_or(c)).max(0.0);
        let (alt, mine) = (state.of(backend), state.of(chosen));
        let faster = alt.fresh >= policy.switch_after && beats(alt, mine, policy.tolerance);
        let simpler_tie = backend < chosen
            && alt.fresh >= policy.confident
            && alt.centre().is_some_and(|a| a <= c * (1.0 + policy.tolerance));
        // While a loaded decision is verified, the verdict decides (below), not one alternative.
        if (faster || simpler_tie) && state.verify.is_none() {
            state.settle_on(backend, DecisionKind::Historical);
            return Change::Switched(backend);
        }
    }
    if verified_wrong(state, chosen, policy) {
        return Change::Reexplore;
    }
    Change::None
}

/// Judges a loaded decision once enough was re-timed (see the module docs' warm start):
/// `true` when it starts a new exploration round. Until then, and once it is
/// confirmed, `false`.
fn verified_wrong(state: &mut BucketState, chosen: Backend, policy: &Policy) -> bool {
    let Some(v) = state.verify else { return false };
    let fresh = state.of(chosen);
    let pending = |c: BackendSet| c.iter().any(|b| u64::from(state.of(b).fresh) < policy.samples);
    if fresh.fresh < policy.verify_samples || v.foreign.is_some_and(pending) {
        return false;
    }
    let saved = v.saved_centre.max(1.0);
    let fastest = fresh.recent_ns.iter().min().map_or(saved, |&f| f as f64);
    let centre = fresh.centre().unwrap_or(saved);
    let off = fastest / saved > policy.verify_factor || centre / saved < 1.0 / policy.verify_factor;
    let beaten = v.foreign.is_some_and(|c| {
        c.iter().any(|b| {
            state.excluded[b].is_none() && state.of(b).centre().is_some_and(|a| a < centre * (1.0 - policy.tolerance))
        })
    });
    state.verify = None;
    if off || beaten {
        state.restart_round(0);
        return true;
    }
    if v.foreign.is_some() {
        // Confirmed here. What re-timing the contenders cost was exploration's, not the probes'.
        state.foreign = false;
        state.budget = ProbeBudget::default();
    }
    false
}

/// Whether `fast`'s figures beat `slow`'s by more than their noise and `margin`: the
/// upper end of `fast`'s confidence interval ([`BackendStats::half_width`]), raised by
/// `margin`, lies below the lower end of `slow`'s. False with fewer than two samples
/// on either side (an interval is infinite until then).
fn beats(fast: &BackendStats, slow: &BackendStats, margin: f64) -> bool {
    match (fast.centre(), slow.centre()) {
        (Some(f), Some(s)) => (f + fast.half_width()) * (1.0 + margin) < s - slow.half_width(),
        _ => false,
    }
}

/// Which backend a settled bucket's sampled call should time: an alternative to
/// re-time (see the module docs), or `None` for the chosen backend.
///
/// `candidates[i]`: backend `i` may run now; `predicted[i]`: its predicted time
/// in nanoseconds (for a backend never measured here, e.g. a GPU that became
/// ready after the bucket settled).
pub(crate) fn probe(
    state: &mut BucketState,
    candidates: BackendSet,
    predicted: PerBackend<Option<f64>>,
    now_ns: u64,
    policy: &Policy,
) -> Option<Backend> {
    let Phase::Settled { backend: chosen, .. } = state.phase else { return None };
    if let Some(v) = &mut state.verify {
        // A loaded decision is re-timed first; one from another machine alternates with
        // its contenders (those that can still run), fewest fresh samples first.
        let contenders = v.foreign.as_mut()?;
        let stats = &state.stats;
        *contenders = contenders.and(candidates);
        let next = contenders
            .iter()
            .filter(|&b| u64::from(stats[b].fresh) < policy.samples)
            .min_by_key(|&b| (stats[b].fresh, b))?;
        return (stats[next].fresh < stats[chosen].fresh).then_some(next);
    }
    if std::mem::take(&mut state.budget.last_was_probe) {
        return None;
    }
    state.budget.age(now_ns, policy.budget_half_life_ns);
    let chosen_stats = state.of(chosen);
    let c = chosen_stats.centre()?;
    let c_hi = c + chosen_stats.half_width();
    let budget_left = policy.probe_budget * state.budget.calls_ns - state.budget.extra_ns;
    let pick = Backend::ALL
        .into_iter()
        .filter(|&b| b != chosen && candidates.contains(b))
        .filter_map(|b| {
            let s = state.of(b);
            // Figures taken on a busier machine are as much too slow as the chosen backend was then.
            let calm = calmer_since(s, chosen_stats, policy);
            let then = from_a_busier_moment(calm, policy);
            let estimate = s.centre().map(|e| e / calm).or(predicted[b])?;
            let stale = !s.is_empty() && (then || s.is_stale(now_ns, policy.stale_ns));
            // Hopeless by fresh figures or by prediction; stale figures are re-timed (within the budget).
            if !estimate.is_finite() || (estimate > policy.prune_factor * c && !stale) {
                return None;
            }
            let few = s.fresh < policy.confident;
            let old = s.is_empty() || stale;
            // A full window of fresh figures that still overlaps is a tie: more samples
            // cannot narrow a window's interval, only test it again and again until noise
            // separates it once. It is re-timed when its figures are old.
            let overlaps = s.fresh < WINDOW as u32 && estimate - s.half_width() <= c_hi;
            // Charged optimistically (the low end of its interval, UCB-style): figures
            // taken under load are wide and high, and the budget counts what the
            // probe really costs once it ran, so the 1% holds over time. Not for the GPU:
            // a GPU call is made only when its figure fits the budget.
            let optimistic = b != Backend::Gpu && s.recent_ns.len() >= 2;
            let low = if optimistic { (estimate - s.half_width()).max(0.0) } else { estimate };
            let extra = (low - c).max(0.0);
            // One no slower than the chosen backend costs nothing beyond it: no debt stops
            // it (a debt only shrinks by half-lives, and that one may be the faster).
            let affordable = extra == 0.0 || extra <= budget_left;
            ((few || old || overlaps) && affordable).then_some((s.fresh, b))
        })
        .min();
    let (_, b) = pick?;
    state.budget.last_was_probe = true;
    Some(b)
}

/// How many times faster the settled backend (`chosen`) runs now than when `alt`'s
/// figures were taken (at least 1): its pace then ([`BackendStats::against_ns`]) over
/// its pace now ([`BackendStats::pace`], once it has [`Policy::samples`] samples since
/// the bucket settled). Above 1 by more than [`Policy::drift_band`], the machine was
/// busier then (a competing load while exploring, or while an alternative was
/// re-timed), and `alt`'s figures are too slow by about as much: [`probe`] scales them
/// by it and re-times them (even ones that looked hopeless), and [`record`] replaces
/// them with the first sample taken now.
fn calmer_since(alt: &BackendStats, chosen: &BackendStats, policy: &Policy) -> f64 {
    match (alt.against_ns, chosen.pace()) {
        (Some(then), Some(now)) if u64::from(chosen.fresh) >= policy.samples && now > 0.0 => (then / now).max(1.0),
        _ => 1.0,
    }
}

/// Whether figures were taken on a machine busier than now by more than
/// [`Policy::drift_band`], given how much calmer it is now (`calm`, from [`calmer_since`]).
fn from_a_busier_moment(calm: f64, policy: &Policy) -> bool {
    calm > 1.0 + policy.drift_band
}

/// Whether the settled `chosen` backend has degraded past the drift band against
/// another backend's recent figures (see [`beats`]); if so the bucket re-explores.
/// Old figures (from another run, or older than [`Policy::stale_ns`]) are not
/// compared with: [`probe`] re-times them first.
fn drifted(state: &mut BucketState, chosen: Backend, now_ns: u64, policy: &Policy) -> bool {
    if state.round_samples(chosen) < policy.drift_samples {
        return false;
    }
    let mine = state.of(chosen);
    let beaten = Backend::ALL
        .into_iter()
        .filter(|&b| b != chosen)
        .map(|b| state.of(b))
        .filter(|other| !other.is_empty() && !other.is_stale(now_ns, policy.stale_ns))
        .any(|other| beats(other, mine, policy.drift_band));
    if beaten {
        state.restart_round(0);
    }
    beaten
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::OpComplexity;

    /// Scalar, SIMD and GPU; Parallel has its own tests.
    const ALL: BackendSet = BackendSet::of(&[Backend::Scalar, Backend::Simd, Backend::Gpu]);
    /// Every candidate may run now.
    const NOW: BackendSet = BackendSet::EMPTY;
    const SCALAR_SIMD: BackendSet = BackendSet::of(&[Backend::Scalar, Backend::Simd]);
    const P: Policy = Policy::DEFAULT;
    /// Every neighbour at the call's own size.
    const NEAR: PerBackend<f64> = PerBackend::new([1.0; Backend::COUNT]);
    /// No prediction of any backend.
    const UNKNOWN: PerBackend<Option<f64>> = PerBackend::new([None; Backend::COUNT]);
    const NONE: Predictions = Predictions { neighbours: UNKNOWN, reach: NEAR, model: UNKNOWN, scalar_per_simd: None };

    /// The cost model's figures (ns; 0: none).
    const fn model(ns: [f64; Backend::COUNT]) -> PerBackend<Option<f64>> {
        let mut out = [None; Backend::COUNT];
        let mut i = 0;
        while i < Backend::COUNT {
            if ns[i] != 0.0 {
                out[i] = Some(ns[i]);
            }
            i += 1;
        }
        PerBackend::new(out)
    }

    /// Records a sample at t = 1 s standing for one call; whether the decision changed.
    fn rec(state: &mut BucketState, backend: Backend, ns: u64, warmup: bool) -> bool {
        let sample = Sample { backend, ns, now_ns: 1_000_000_000, interval: 1.0, warmup };
        record(state, sample, &P) != Change::None
    }

    fn simd_prior() -> Decision {
        Decision { backend: Backend::Simd, kind: DecisionKind::MoeThreshold }
    }

    /// Drives a bucket to a decision, answering each exploring call with `time(backend)`.
    fn run_to_settle(state: &mut BucketState, prior: Decision, time: impl Fn(Backend) -> u64) -> Vec<Backend> {
        let mut calls = Vec::new();
        for _ in 0..100 {
            let d = explore(state, ALL, NOW, prior, &NONE, &P);
            if d.kind == DecisionKind::Historical {
                return calls;
            }
            calls.push(d.backend);
            rec(state, d.backend, time(d.backend), false);
        }
        panic!("never settled: {calls:?}");
    }

    #[test]
    fn explores_prior_first_then_settles_on_fastest() {
        let mut s = BucketState::new(5000);
        let calls = run_to_settle(&mut s, simd_prior(), |b| match b {
            Backend::Scalar => 300,
            Backend::Simd => 100,
            Backend::Gpu => 250,
            Backend::Parallel => unreachable!("not a candidate here"),
        });
        assert_eq!(calls[0], Backend::Simd);
        assert_eq!(calls.iter().filter(|&&b| b == Backend::Simd).count(), 3);
        assert_eq!(s.settled(), Some(Backend::Simd));
    }

    #[test]
    fn a_candidate_for_later_is_waited_for_not_run_and_not_skipped() {
        let time = |b: Backend| match b {
            Backend::Scalar => 300,
            Backend::Simd => 200,
            Backend::Parallel => 100,
            Backend::Gpu => unreachable!("not a candidate here"),
        };
        let mut s = BucketState::new(5000);
        let mut calls = Vec::new();
        for _ in 0..20 {
            let d = explore(&mut s, CPU, PAR_LATER, simd_prior(), &NONE, &P);
            assert_ne!(d.kind, DecisionKind::Historical, "settled before Parallel could run: {calls:?}");
            calls.push(d.backend);
            rec(&mut s, d.backend, time(d.backend), false);
        }
        assert!(!calls.contains(&Backend::Parallel), "{calls:?}");
        // Once the others are measured, the waiting calls go to the fastest of them.
        assert!(calls[6..].iter().all(|&b| b == Backend::Simd), "{calls:?}");
        // It may run now: measured, and it wins.
        let mut settled = None;
        for _ in 0..10 {
            let d = explore(&mut s, CPU, NOW, simd_prior(), &NONE, &P);
            if d.kind == DecisionKind::Historical {
                settled = Some(d.backend);
                break;
            }
            assert_eq!(d.backend, Backend::Parallel);
            rec(&mut s, d.backend, time(d.backend), false);
        }
        assert_eq!(settled, Some(Backend::Parallel));
    }

    #[test]
    fn an_unmeasured_bucket_tries_the_predicted_fastest_after_the_prior() {
        // conv2d 2048², first calls: the prior (Parallel) must wait for the GPU driver; the
        // cost model predicts Scalar at 8× SIMD. SIMD runs, not the simplest variant.
        let prior = Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel };
        let model = Predictions { model: model([40e6, 5e6, 3e6, 0.0]), ..NONE };
        let mut s = BucketState::new(1 << 22);
        assert_eq!(explore(&mut s, CPU, PAR_LATER, prior, &model, &P).backend, Backend::Simd);
        // Without figures (still calibrating) nothing orders them: the simplest goes first.
        assert_eq!(explore(&mut s, CPU, PAR_LATER, prior, &NONE, &P).backend, Backend::Scalar);
    }

    #[test]
    fn far_neighbours_do_not_order_a_bucket_the_model_can() {
        // conv2d 2048²: only 8×8 was measured (256× smaller), where Scalar beat SIMD on
        // fixed costs; the model predicts Scalar at 8× SIMD here.
        let predicted = Predictions {
            neighbours: PerBackend::new([Some(300.0), Some(500.0), None, None]),
            reach: PerBackend::new([256.0; Backend::COUNT]),
            model: model([40e6, 5e6, 0.0, 0.0]),
            scalar_per_simd: None,
        };
        let mut s = BucketState::new(1 << 22);
        let mut calls = Vec::new();
        loop {
            let d = explore(&mut s, SCALAR_SIMD, NOW, simd_prior(), &predicted, &P);
            if d.kind == DecisionKind::Historical {
                assert_eq!(d.backend, Backend::Simd);
                break;
            }
            calls.push(d.backend);
            rec(&mut s, d.backend, if d.backend == Backend::Simd { 5_000_000 } else { 40_000_000 }, false);
        }
        assert_eq!(calls, [Backend::Simd; 3], "Scalar was pruned by the model, never called");
    }

    #[test]
    fn a_bucket_waits_for_a_later_candidate_only_so_many_calls() {
        let mut s = BucketState::new(5000);
        let mut calls = Vec::new();
        for _ in 0..200 {
            let d = explore(&mut s, CPU, PAR_LATER, simd_prior(), &NONE, &P);
            if d.kind == DecisionKind::Historical {
                break;
            }
            calls.push(d.backend);
            rec(&mut s, d.backend, if d.backend == Backend::Parallel { 100 } else { 200 }, false);
        }
        let first_parallel = calls.iter().position(|&b| b == Backend::Parallel).expect("Parallel measured");
        assert_eq!(first_parallel, 6 + P.wait_calls as usize, "{calls:?}");
        assert_eq!(s.settled(), Some(Backend::Parallel));
    }

    #[test]
    fn prunes_a_candidate_measured_far_slower_after_one_sample() {
        // Scalar's one sample costs more than `measure_below_ns`: the rest are not worth taking.
        let mut s = BucketState::new(5000);
        let calls = run_to_settle(&mut s, simd_prior(), |b| match b {
            Backend::Scalar => 200_000,
            Backend::Simd => 2_000,
            Backend::Gpu => 3_000,
            Backend::Parallel => unreachable!("not a candidate here"),
        });
        assert_eq!(calls.iter().filter(|&&b| b == Backend::Scalar).count(), 1, "{calls:?}");
        assert!(s.pruned.contains(Backend::Scalar));
        assert_eq!(s.settled(), Some(Backend::Simd));
    }

    #[test]
    fn skips_a_candidate_predicted_hopeless_without_running_it() {
        let mut s = BucketState::new(1 << 25);
        let mut calls = Vec::new();
        loop {
            let p = Predictions { model: model([1e12, 1e6, f64::INFINITY, 1e6]), ..NONE };
            let d = explore(&mut s, ALL, NOW, simd_prior(), &p, &P);
            if d.kind == DecisionKind::Historical {
                break;
            }
            calls.push(d.backend);
            rec(&mut s, d.backend, 1_000_000, false);
        }
        assert!(!calls.contains(&Backend::Scalar), "{calls:?}");
    }

    #[test]
    fn ties_within_tolerance_go_to_the_cheaper_backend() {
        let mut s = BucketState::new(5000);
        run_to_settle(&mut s, simd_prior(), |b| match b {
            Backend::Scalar => 103,
            Backend::Simd => 100,
            Backend::Gpu => 101,
            Backend::Parallel => unreachable!("not a candidate here"),
        });
        assert_eq!(s.settled(), Some(Backend::Scalar), "3% slower is a tie; Scalar is cheapest to launch");
    }

    #[test]
    fn first_call_carries_the_prior_kind() {
        let mut s = BucketState::new(10);
        let d = explore(&mut s, ALL, NOW, simd_prior(), &NONE, &P);
        assert_eq!(d, simd_prior());
    }

    #[test]
    fn one_outlier_does_not_trigger_drift_but_sustained_degradation_does() {
        let mut s = BucketState::new(5000);
        run_to_settle(&mut s, simd_prior(), |b| if b == Backend::Simd { 100 } else { 200 });
        for _ in 0..20 {
            assert!(!rec(&mut s, Backend::Simd, 100, false));
        }
        assert!(!rec(&mut s, Backend::Simd, 10_000, false), "one preempted sample");
        assert_eq!(s.settled(), Some(Backend::Simd));
        let mut changed = false;
        for _ in 0..20 {
            changed |= rec(&mut s, Backend::Simd, 400, false);
        }
        assert!(changed);
        assert_eq!(s.phase, Phase::Exploring);
    }

    #[test]
    fn neighbour_measurements_outrank_the_prior() {
        let mut s = BucketState::new(64_000);
        let p = Predictions {
            neighbours: PerBackend::new([Some(3_200.0), Some(320.0), None, Some(300.0)]),
            reach: NEAR,
            model: UNKNOWN,
            scalar_per_simd: None,
        };
        let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
        let d = explore(&mut s, ALL, NOW, scalar_prior, &p, &P);
        assert_eq!(d, Decision { backend: Backend::Gpu, kind: DecisionKind::Exploring });
    }

    #[test]
    fn a_cost_model_off_in_absolute_terms_does_not_prune_a_cpu_backend() {
        // The model predicts 1.6 µs for both CPU backends; Scalar measures 0.3 µs.
        // Absolutely, SIMD looks 5× slower than the best; relative to Scalar's error, it ties.
        let mut s = BucketState::new(2_000);
        let p = Predictions {
            neighbours: UNKNOWN,
            reach: NEAR,
            model: model([1_600.0, 1_600.0, f64::INFINITY, f64::INFINITY]),
            scalar_per_simd: None,
        };
        let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
        let two = SCALAR_SIMD;
        for _ in 0..3 {
            let d = explore(&mut s, two, NOW, scalar_prior, &p, &P);
            assert_eq!(d.backend, Backend::Scalar);
            rec(&mut s, Backend::Scalar, 300, false);
        }
        assert_eq!(explore(&mut s, two, NOW, scalar_prior, &p, &P).backend, Backend::Simd);
    }

    #[test]
    fn the_relative_model_still_prunes_what_it_can_tell_apart() {
        // Scalar is modelled at 10× SIMD; SIMD measures 1 ms, so Scalar is estimated at 10 ms.
        let mut s = BucketState::new(1 << 25);
        let p = Predictions {
            neighbours: UNKNOWN,
            reach: NEAR,
            model: model([1e8, 1e7, f64::INFINITY, f64::INFINITY]),
            scalar_per_simd: None,
        };
        let simd_prior = simd_prior();
        for _ in 0..3 {
            let d = explore(&mut s, SCALAR_SIMD, NOW, simd_prior, &p, &P);
            assert_eq!(d.backend, Backend::Simd);
            rec(&mut s, Backend::Simd, 1_000_000, false);
        }
        assert_eq!(explore(&mut s, SCALAR_SIMD, NOW, simd_prior, &p, &P).kind, DecisionKind::Historical);
        assert!(s.pruned.contains(Backend::Scalar));
    }

    #[test]
    fn the_kernel_s_own_scalar_to_simd_ratio_prunes_where_the_model_s_would_not() {
        // conv2d 2048² in a fresh process: Parallel (the prior) 3 ms, SIMD 5 ms measured here;
        // the model's matmul probe puts Scalar at only 2× SIMD, while 512² (16× smaller)
        // measured this kernel's Scalar at 8× its SIMD. Scalar (42 ms) is not called.
        let figures = model([10e6, 5e6, 3e6, 0.0]);
        let run = |scalar_per_simd| {
            let p = Predictions { model: figures, scalar_per_simd, ..NONE };
            let prior = Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel };
            let mut s = BucketState::new(1 << 22);
            let mut calls = Vec::new();
            loop {
                let d = explore(&mut s, CPU, NOW, prior, &p, &P);
                if d.kind == DecisionKind::Historical {
                    return calls;
                }
                calls.push(d.backend);
                let ns = [42_000_000, 5_000_000, 3_000_000, 0][d.backend.index()];
                rec(&mut s, d.backend, ns, false);
            }
        };
        assert!(!run(Some((8.0, 16.0))).contains(&Backend::Scalar));
        assert!(run(None).contains(&Backend::Scalar), "the model alone does not prune it");
        assert!(run(Some((8.0, 256.0))).contains(&Backend::Scalar), "too far to carry");
        assert!(run(Some((1.5, 16.0))).contains(&Backend::Scalar), "a ratio that says it is close");
    }

    #[test]
    fn the_kernel_s_ratio_orders_scalar_after_simd_from_simd_s_near_neighbour() {
        // conv2d 2048² with the GPU: Parallel (the prior) measured at 5.4 ms. The model's
        // absolute figure put Scalar at 8.9 ms, below SIMD's 9.2 ms scaled from 1024², so
        // Scalar (40 ms) ran next. By the kernel's ratio (11× at 256²) it is 100 ms away.
        let p = Predictions {
            neighbours: PerBackend::new([Some(350e6), Some(9.2e6), Some(25e6), None]),
            reach: PerBackend::new([64.0, 4.0, 4.0, f64::INFINITY]),
            model: model([8.9e6, 2.5e6, 1.4e6, f64::INFINITY]),
            scalar_per_simd: Some((11.0, 16.0)),
        };
        let prior = Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel };
        let every = BackendSet::ALL;
        let mut s = BucketState::new(1 << 22);
        for _ in 0..P.samples {
            assert_eq!(explore(&mut s, every, NOW, prior, &p, &P).backend, Backend::Parallel);
            rec(&mut s, Backend::Parallel, 5_400_000, false);
        }
        assert_eq!(explore(&mut s, every, NOW, prior, &p, &P).backend, Backend::Simd);
        // SIMD measures 5.5 ms, so Scalar is predicted at 60 ms: pruned without a call.
        loop {
            let d = explore(&mut s, every, NOW, prior, &p, &P);
            if d.kind == DecisionKind::Historical {
                break;
            }
            assert_eq!(d.backend, Backend::Simd);
            rec(&mut s, Backend::Simd, 5_500_000, false);
        }
        assert!(s.pruned.contains(Backend::Scalar) && s.of(Backend::Scalar).is_empty());
        assert_eq!(s.settled(), Some(Backend::Simd), "within 5% of Parallel: the simpler");
    }

    #[test]
    fn a_slow_first_call_of_a_cheap_cpu_candidate_does_not_prune_it() {
        // A plain-loop dot product of 8,192 elements: Scalar 3.8 µs; SIMD's first call in
        // the process 34 µs (a warm-up), then 0.5 µs. It is measured, and it wins.
        let two = SCALAR_SIMD;
        let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
        let mut s = BucketState::new(8192);
        for _ in 0..P.samples {
            assert_eq!(explore(&mut s, two, NOW, scalar_prior, &NONE, &P).backend, Backend::Scalar);
            rec(&mut s, Backend::Scalar, 3_800, false);
        }
        assert_eq!(explore(&mut s, two, NOW, scalar_prior, &NONE, &P).backend, Backend::Simd);
        rec(&mut s, Backend::Simd, 34_000, true);
        assert!(!s.pruned.contains(Backend::Simd));
        // Its first kept sample preempted too: still measured to the end.
        rec(&mut s, Backend::Simd, 40_000, false);
        for _ in 1..P.samples {
            assert_eq!(explore(&mut s, two, NOW, scalar_prior, &NONE, &P).backend, Backend::Simd);
            rec(&mut s, Backend::Simd, 500, false);
        }
        let d = explore(&mut s, two, NOW, scalar_prior, &NONE, &P);
        assert_eq!((d.backend, d.kind), (Backend::Simd, DecisionKind::Historical));

        // A warm-up beyond that costs more than it could save: pruned, as a GPU's always is.
        for (backend, ns) in [(Backend::Simd, P.measure_below_ns as u64 * 2), (Backend::Gpu, 34_000)] {
            let mut s = BucketState::new(8192);
            for _ in 0..P.samples {
                rec(&mut s, Backend::Scalar, 3_800, false);
            }
            rec(&mut s, backend, ns, true);
            assert!(s.pruned.contains(backend), "{backend:?}");
        }
    }

    #[test]
    fn warmup_is_not_kept() {
        let mut s = BucketState::new(5000);
        rec(&mut s, Backend::Simd, 999, true);
        assert!(s.of(Backend::Simd).is_empty());
    }

    #[test]
    fn prior_vetoes_gpu_without_a_variant_a_device_or_a_case() {
        let spec = KernelSpec {
            name: "k",
            complexity: OpComplexity::High,
            has_gpu: true,
            has_parallel: false,
            token_hash: 0,
            loops: &[],
        };
        let w = Work { size: 20_000, flops: 1, bytes: 1 };
        let gpu_fast = |b: Backend| if b == Backend::Gpu { 1.0 } else { 2.0 };
        let gpu_slow = |b: Backend| if b == Backend::Gpu { 3.0 } else { 2.0 };
        let no_gpu = SCALAR_SIMD;
        assert_eq!(prior(&spec, &w, ALL, gpu_fast).backend, Backend::Gpu);
        assert_eq!(
            prior(&spec, &w, no_gpu, gpu_fast),
            Decision { backend: Backend::Simd, kind: DecisionKind::CostModel }
        );
        assert_eq!(prior(&spec, &w, ALL, gpu_slow).kind, DecisionKind::CostModel);
        let small = Work { size: 500, ..w };
        assert_eq!(
            prior(&spec, &small, ALL, gpu_fast),
            Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold }
        );
    }

    #[test]
    fn prior_takes_parallel_only_where_the_model_says_it_pays() {
        let spec = KernelSpec {
            name: "k",
            complexity: OpComplexity::Medium,
            has_gpu: false,
            has_parallel: true,
            token_hash: 0,
            loops: &[],
        };
        let w = Work { size: 50_000, flops: 1, bytes: 1 };
        let cpu = CPU;
        let pays = |b: Backend| if b == Backend::Parallel { 1.0 } else { 2.0 };
        let costs = |b: Backend| if b == Backend::Parallel { 3.0 } else { 2.0 };
        assert_eq!(prior(&spec, &w, cpu, pays), Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel });
        assert_eq!(prior(&spec, &w, cpu, costs).backend, Backend::Simd);
        assert_eq!(prior(&spec, &w, SCALAR_SIMD, pays).backend, Backend::Simd, "one thread: not a candidate");
        let small = Work { size: 5_000, ..w };
        assert_eq!(prior(&spec, &small, cpu, pays).backend, Backend::Scalar, "the table says Scalar: kept");
    }

    /// A bucket settled on `chosen` after exploration measured these times (ns).
    fn settled_on(times: [u64; Backend::COUNT]) -> BucketState {
        let mut s = BucketState::new(5000);
        run_to_settle(&mut s, simd_prior(), |b| times[b.index()]);
        s
    }

    fn sample(backend: Backend, ns: u64, at_s: u64, interval: f64) -> Sample {
        Sample { backend, ns, now_ns: at_s * 1_000_000_000, interval, warmup: false }
    }

    /// Runs `calls` sampled calls through `probe` and `record` with the true times `truth`.
    fn run_settled(
        s: &mut BucketState,
        truth: [u64; Backend::COUNT],
        calls: usize,
        at_s: u64,
    ) -> (usize, Option<Backend>) {
        let mut probes = 0;
        for _ in 0..calls {
            let chosen = s.settled().unwrap();
            let b = probe(s, ALL, UNKNOWN, at_s * 1_000_000_000, &P).unwrap_or(chosen);
            probes += usize::from(b != chosen);
            if let Change::Switched(to) = record(s, sample(b, truth[b.index()], at_s, 16.0), &P) {
                return (probes, Some(to));
            }
        }
        (probes, None)
    }

    #[test]
    fn a_decision_taken_under_load_is_corrected_by_probes() {
        // Exploration saw Scalar at 160 (busy machine); it really takes 60, SIMD 100.
        let mut s = settled_on([160, 100, 1_000_000, 10_000]);
        assert_eq!(s.settled(), Some(Backend::Simd));
        let (probes, switched) = run_settled(&mut s, [60, 100, 1_000_000, 10_000], 200, 2);
        assert_eq!(switched, Some(Backend::Scalar));
        assert!((3..=10).contains(&probes), "{probes} probes");
        assert_eq!(s.settled(), Some(Backend::Scalar));
    }

    #[test]
    fn a_right_decision_stays_and_probing_decays_within_budget() {
        // SIMD 100 is right; Scalar 130 is close enough to be re-timed, GPU far off is never probed.
        let mut s = settled_on([130, 100, 1_000_000, 10_000]);
        let (probes, switched) = run_settled(&mut s, [130, 100, 1_000_000, 10_000], 4_000, 2);
        assert_eq!(switched, None);
        assert!(probes >= P.confident as usize, "{probes}: few figures are re-timed");
        assert_eq!(s.of(Backend::Gpu).fresh, 0, "a hopeless alternative is never probed");
        assert!(s.budget.extra_ns <= P.probe_budget * s.budget.calls_ns, "{:?}", s.budget);
        // Once confident and apart, nothing more is probed.
        let (later, _) = run_settled(&mut s, [130, 100, 1_000_000, 10_000], 1_000, 3);
        assert_eq!(later, 0);
    }

    /// Noisy timings from a fixed seed: the true time ±20% (uniform), one call in 16
    /// preempted (5×): what a µs-scale kernel looks like on a shared machine.
    struct Noise(u32);

    impl Noise {
        fn time(&mut self, truth: u64) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            self.0 = x;
            let jitter = 0.8 + 0.4 * f64::from(x % 1_000) / 1_000.0;
            let preempted = if (x >> 10).is_multiple_of(16) { 5.0 } else { 1.0 };
            (truth as f64 * jitter * preempted) as u64
        }
    }

    const CPU: BackendSet = BackendSet::of(&[Backend::Scalar, Backend::Simd, Backend::Parallel]);
    /// Parallel may run, but only later (a GPU driver is loading).
    const PAR_LATER: BackendSet = BackendSet::of(&[Backend::Parallel]);

    /// Runs `calls` timed calls (50 a second from t = 1 s) of a bucket with noisy true times
    /// `truth`: probes and records while settled, explores when re-opened. Returns how many
    /// calls re-timed an alternative and every change of decision.
    fn run_noisy(
        s: &mut BucketState,
        truth: [u64; Backend::COUNT],
        calls: u64,
        noise: &mut Noise,
    ) -> (usize, Vec<Change>) {
        let (mut probes, mut changes) = (0, Vec::new());
        for k in 0..calls {
            let now_ns = 1_000_000_000 + k * 20_000_000;
            let b = match s.settled() {
                Some(chosen) => {
                    let b = probe(s, CPU, UNKNOWN, now_ns, &P).unwrap_or(chosen);
                    probes += usize::from(b != chosen);
                    b
                }
                None => explore(s, CPU, NOW, simd_prior(), &NONE, &P).backend,
            };
            let interval = if s.settled().is_some() { 16.0 } else { 1.0 };
            let sample = Sample { backend: b, ns: noise.time(truth[b.index()]), now_ns, interval, warmup: false };
            let change = record(s, sample, &P);
            if change != Change::None {
                changes.push(change);
            }
        }
        (probes, changes)
    }

    /// A bucket settled, from noise-free exploration, on SIMD (Scalar 200, SIMD 100, Parallel `parallel`).
    fn settled_among_cpu(parallel: u64) -> BucketState {
        let mut s = BucketState::new(5000);
        run_to_settle_on(&mut s, CPU, |b| [200, 100, parallel, 0][b.index()]);
        s
    }

    #[test]
    fn equal_backends_do_not_flap_under_noise() {
        // SIMD and Parallel run the same code (below the parallel grain): 100 ns each, noisy.
        let mut s = settled_among_cpu(102);
        assert_eq!(s.settled(), Some(Backend::Simd));
        let (probes, changes) = run_noisy(&mut s, [200, 100, 100, 0], 20_000, &mut Noise(0x5EED));
        assert!(probes >= P.confident as usize, "the alternative was re-timed ({probes} probes)");
        assert_eq!(changes, [], "a tie flapped");
        assert_eq!(s.settled(), Some(Backend::Simd));
    }

    #[test]
    fn figures_from_a_busier_moment_are_re_timed_and_a_wrong_settle_corrected() {
        // Explored while a competing load ran: everything 2× slow, Parallel (its threads
        // competing too) 20× slow: 6× SIMD, beyond noise from the 4× prune factor, so it
        // looked hopeless.
        let mut s = BucketState::new(5000);
        run_to_settle_on(&mut s, CPU, |b| [400, 200, 1_200, 0][b.index()]);
        assert_eq!(s.settled(), Some(Backend::Simd));
        // The load is gone: SIMD takes 100, Parallel 60. Within 200 sampled calls (4 s
        // at 50 a second) the bucket re-times Parallel and moves to it (a switch, or a new
        // round that the fresh figures decide), once.
        let (probes, changes) = run_noisy(&mut s, [200, 100, 60, 0], 200, &mut Noise(0x5EED));
        assert_eq!(changes.len(), 1, "{changes:?} after {probes} probes");
        assert_eq!(s.settled(), Some(Backend::Parallel), "{changes:?} after {probes} probes");
        assert!(s.budget.extra_ns <= P.probe_budget * s.budget.calls_ns + 1_000.0, "{:?}", s.budget);
        // The same exploration on a machine as busy now as then: nothing changes.
        let mut s = BucketState::new(5000);
        run_to_settle_on(&mut s, CPU, |b| [400, 200, 1_200, 0][b.index()]);
        let (_, changes) = run_noisy(&mut s, [400, 200, 1_200, 0], 200, &mut Noise(0x5EED));
        assert_eq!(changes, []);
        assert_eq!(s.of(Backend::Parallel).fresh, 0, "the hopeless one was re-timed");
    }

    #[test]
    fn figures_re_timed_during_a_load_are_re_timed_again_once_it_is_gone() {
        // Explored and settled under a competing load, which then lasted 2 s more: SIMD
        // 2× slow, Parallel (its threads competing too) 4× slow, and re-timed while it
        // lasted, so its figures are fresh ones from a busy moment.
        let mut s = BucketState::new(5000);
        let busy = [400, 200, 240, 0];
        run_to_settle_on(&mut s, CPU, |b| busy[b.index()]);
        let (probes, changes) = run_noisy(&mut s, busy, 100, &mut Noise(0xFEED));
        assert_eq!((changes, s.settled()), (vec![], Some(Backend::Simd)));
        assert!(s.of(Backend::Parallel).fresh > 0, "Parallel was re-timed under the load ({probes} probes)");
        // The load is gone: SIMD takes 100, Parallel 60. Within 5 s at 50 sampled calls
        // a second the bucket moves to Parallel, once, within the probe budget.
        let (probes, changes) = run_noisy(&mut s, [200, 100, 60, 0], 250, &mut Noise(0x5EED));
        assert_eq!(changes.len(), 1, "{changes:?} after {probes} probes");
        assert_eq!(s.settled(), Some(Backend::Parallel), "{changes:?} after {probes} probes");
        assert!(s.budget.extra_ns <= P.probe_budget * s.budget.calls_ns + 1_000.0, "{:?}", s.budget);
    }

    #[test]
    fn a_tie_settled_on_the_more_complex_backend_moves_to_the_simpler_once() {
        let mut s = settled_among_cpu(95);
        assert_eq!(s.settled(), Some(Backend::Parallel));
        let (_, changes) = run_noisy(&mut s, [200, 100, 100, 0], 20_000, &mut Noise(0xBEEF));
        assert_eq!(changes, [Change::Switched(Backend::Simd)]);
    }

    #[test]
    fn a_clear_improvement_still_switches_under_the_same_noise() {
        // Exploration saw SIMD and Parallel alike; SIMD really takes 130, Parallel 100.
        let mut s = settled_among_cpu(102);
        assert_eq!(s.settled(), Some(Backend::Simd));
        let (_, changes) = run_noisy(&mut s, [200, 130, 100, 0], 250, &mut Noise(0x5EED));
        assert_eq!(changes.first(), Some(&Change::Switched(Backend::Parallel)), "within 5 s at 50 samples/s");
        assert_eq!(s.settled(), Some(Backend::Parallel));
    }

    #[test]
    fn a_degraded_choice_is_not_judged_against_old_figures() {
        // Settled at t = 1 s; at t = 100 s the chosen SIMD takes 400, twice Scalar's 40 s old figure.
        let mut s = settled_on([200, 100, 1_000_000, 10_000]);
        for _ in 0..P.drift_samples + 8 {
            assert_eq!(record(&mut s, sample(Backend::Simd, 400, 100, 16.0), &P), Change::None);
        }
        // Re-timed now, Scalar's figure counts.
        let mut changes = Vec::new();
        for _ in 0..4 {
            changes.push(record(&mut s, sample(Backend::Scalar, 200, 100, 16.0), &P));
            changes.push(record(&mut s, sample(Backend::Simd, 400, 100, 16.0), &P));
        }
        assert!(changes.iter().any(|&c| c != Change::None), "{changes:?}");
    }

    #[test]
    fn old_figures_are_re_timed() {
        let mut s = settled_on([130, 100, 1_000_000, 10_000]);
        run_settled(&mut s, [130, 100, 1_000_000, 10_000], 4_000, 2);
        let (probes, _) = run_settled(&mut s, [130, 100, 1_000_000, 10_000], 100, 2 + 31);
        assert!(probes > 0, "figures older than stale_ns are re-timed");
    }

    #[test]
    fn figures_that_call_an_alternative_hopeless_are_re_timed_once_stale() {
        // Exploration under load measured Scalar at 1,000 (10× SIMD); it really takes 60.
        let mut s = settled_on([1_000, 100, 1_000_000, 10_000]);
        assert_eq!(s.settled(), Some(Backend::Simd));
        let truth = [60, 100, 1_000_000, 10_000];
        let (probes, switched) = run_settled(&mut s, truth, 500, 2);
        assert_eq!((probes, switched), (0, None), "fresh hopeless figures are not re-timed");
        // Past stale_ns the old figures are re-timed (within the budget): the fresh Scalar figure
        // either takes over or, beating SIMD by more than the drift band, re-opens exploration.
        let at = 2 + P.stale_ns / 1_000_000_000 + 1;
        let mut change = Change::None;
        for _ in 0..500 {
            let chosen = s.settled().expect("settled until a change");
            let b = probe(&mut s, ALL, UNKNOWN, at * 1_000_000_000, &P).unwrap_or(chosen);
            change = record(&mut s, sample(b, truth[b.index()], at, 16.0), &P);
            if change != Change::None {
                break;
            }
        }
        assert_ne!(change, Change::None, "the stale figures were never re-timed");
        assert_eq!(s.of(Backend::Gpu).fresh, 0, "a stale GPU figure over the budget is still not re-timed");
        if s.settled().is_none() {
            run_to_settle(&mut s, simd_prior(), |b| truth[b.index()]);
        }
        assert_eq!(s.settled(), Some(Backend::Scalar));
    }

    #[test]
    fn a_far_neighbour_does_not_prune_a_candidate_never_measured_here() {
        // SIMD's fixed cost, measured 256× lower in size, scaled up predicts 66 ms against Scalar's 11 ms.
        let explore_after_scalar = |reach: f64| {
            let mut s = BucketState::new(1 << 20);
            let p = Predictions {
                neighbours: PerBackend::new([None, Some(66e6), None, None]),
                reach: PerBackend::new([1.0, reach, 1.0, 1.0]),
                model: UNKNOWN,
                scalar_per_simd: None,
            };
            let two = SCALAR_SIMD;
            let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
            for _ in 0..P.samples {
                let d = explore(&mut s, two, NOW, scalar_prior, &p, &P);
                assert_eq!(d.backend, Backend::Scalar);
                rec(&mut s, Backend::Scalar, 11_000_000, false);
            }
            explore(&mut s, two, NOW, scalar_prior, &p, &P)
        };
        assert_eq!(explore_after_scalar(256.0).backend, Backend::Simd, "measured here before judging");
        let near = explore_after_scalar(2.0);
        assert_eq!((near.backend, near.kind), (Backend::Scalar, DecisionKind::Historical), "a near one prunes");
    }

    #[test]
    fn a_cheap_candidate_is_measured_rather_than_pruned_by_a_neighbour() {
        // matmul 16³: SIMD's 8³ neighbour (fixed cost) scaled up predicts 6.9 µs against Scalar's
        // measured 0.9 µs; one sample costs less than trusting that, so SIMD is measured.
        let explore_after_scalar = |predicted: f64| {
            let mut s = BucketState::new(768);
            let p = Predictions {
                neighbours: PerBackend::new([None, Some(predicted), None, None]),
                reach: PerBackend::new([1.0, 2.0, 1.0, 1.0]),
                model: UNKNOWN,
                scalar_per_simd: None,
            };
            let two = SCALAR_SIMD;
            let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
            for _ in 0..P.samples {
                assert_eq!(explore(&mut s, two, NOW, scalar_prior, &p, &P).backend, Backend::Scalar);
                rec(&mut s, Backend::Scalar, 900, false);
            }
            explore(&mut s, two, NOW, scalar_prior, &p, &P).backend
        };
        assert_eq!(explore_after_scalar(6_900.0), Backend::Simd, "a 7 µs sample is cheaper than a wrong prune");
        assert_eq!(explore_after_scalar(P.measure_below_ns * 2.0), Backend::Scalar, "an expensive one is pruned");
    }

    #[test]
    fn no_probe_without_budget() {
        let mut s = settled_on([300, 100, 1_000_000, 10_000]);
        // Nothing was spent on the chosen backend yet: a 3× slower alternative costs more than 1% of nothing.
        assert_eq!(probe(&mut s, ALL, UNKNOWN, 1, &P), None);
    }

    #[test]
    fn an_overrun_of_the_budget_is_forgotten_after_a_few_half_lives() {
        // Scalar at 120 is worth re-timing (few fresh figures; 20 ns beyond SIMD a probe),
        // but earlier probes ran long: 10 µs beyond the chosen backend, the budget of 62
        // sampled calls (each standing for 160 calls of 100 ns).
        let mut s = settled_on([120, 100, 1_000_000, 10_000]);
        assert_eq!(s.settled(), Some(Backend::Simd));
        for _ in 0..P.samples {
            record(&mut s, sample(Backend::Simd, 100, 1, 160.0), &P);
        }
        s.budget.extra_ns = 10_000.0;
        let probe_at = |s: &mut BucketState, at_s: u64| {
            s.budget.last_was_probe = false;
            probe(s, ALL, UNKNOWN, at_s * 1_000_000_000, &P)
        };
        assert_eq!(probe_at(&mut s, 1), None, "in debt");
        record(&mut s, sample(Backend::Simd, 100, 2, 160.0), &P);
        assert_eq!(probe_at(&mut s, 2), None, "one sampled call does not repay it");
        // Seven half-lives later the overrun weighs 1/128 as much; one sampled call repays it.
        record(&mut s, sample(Backend::Simd, 100, 36, 160.0), &P);
        assert_eq!(probe_at(&mut s, 36), Some(Backend::Scalar));
    }

    #[test]
    fn an_alternative_no_slower_than_the_chosen_backend_is_re_timed_even_in_debt() {
        // Scalar (105 ns) and SIMD (100 ns) tie, so Scalar is chosen; probes under a load
        // left the ledger deep in debt. Re-timing SIMD costs nothing beyond Scalar's pace,
        // so the debt does not stop it: a router in `add`'s 16,384-element bucket kept
        // Scalar at 8.5 µs for the 10 s after a load with SIMD measured at 3.7 µs.
        let mut s = settled_on([105, 100, 1_000_000, 10_000]);
        assert_eq!(s.settled(), Some(Backend::Scalar));
        for _ in 0..P.samples {
            record(&mut s, sample(Backend::Scalar, 105, 1, 16.0), &P);
        }
        s.budget.extra_ns = 1e9;
        s.budget.last_was_probe = false;
        assert_eq!(probe(&mut s, ALL, UNKNOWN, 1_000_000_000, &P), Some(Backend::Simd));
    }

    #[test]
    fn an_unmeasured_backend_is_probed_from_its_prediction() {
        let mut s = BucketState::new(5000);
        run_to_settle_on(&mut s, SCALAR_SIMD, |b| if b == Backend::Simd { 100 } else { 1_000 });
        for _ in 0..50 {
            record(&mut s, sample(Backend::Simd, 100, 1, 16.0), &P);
        }
        // The GPU joined after the bucket settled; predicted 90 ns, it is worth a look.
        let got =
            (0..4).filter_map(|_| probe(&mut s, ALL, PerBackend::new([None, None, None, Some(90.0)]), 1, &P)).next();
        assert_eq!(got, Some(Backend::Gpu));
    }

    fn run_to_settle_on(s: &mut BucketState, candidates: BackendSet, time: impl Fn(Backend) -> u64) {
        for _ in 0..100 {
            let d = explore(s, candidates, NOW, simd_prior(), &NONE, &P);
            if d.kind == DecisionKind::Historical {
                return;
            }
            rec(s, d.backend, time(d.backend), false);
        }
        panic!("never settled");
    }

    #[test]
    fn a_loaded_decision_timed_on_a_busy_machine_stays_when_one_call_matches() {
        let mut s = settled_on([300, 100, 1_000_000, 10_000]);
        s.verify = Some(Verify { saved_centre: 100.0, foreign: None });
        for st in s.stats.values_mut() {
            st.last_ns = 0;
        }
        // Preempted calls 3–6× the saved figure, one undisturbed call among them.
        let mut changes = Vec::new();
        for ns in [400, 600, 110, 350, 500] {
            changes.push(record(&mut s, sample(Backend::Simd, ns, 1, 1.0), &P));
        }
        assert!(!changes.contains(&Change::Reexplore), "{changes:?}");
        assert_eq!((s.verify, s.settled()), (None, Some(Backend::Simd)));
    }

    #[test]
    fn a_loaded_decision_far_off_re_explores_and_a_close_one_stays() {
        for (real, reexplores) in [(500, true), (120, false), (40, true)] {
            let mut s = settled_on([300, 100, 1_000_000, 10_000]);
            s.verify = Some(Verify { saved_centre: 100.0, foreign: None });
            for st in s.stats.values_mut() {
                st.last_ns = 0; // as loaded: figures from another run
            }
            let mut changes = Vec::new();
            for _ in 0..P.verify_samples {
                assert_eq!(probe(&mut s, ALL, UNKNOWN, 1, &P), None, "no probes before verification");
                changes.push(record(&mut s, sample(Backend::Simd, real, 1, 1.0), &P));
            }
            assert_eq!(changes.contains(&Change::Reexplore), reexplores, "real {real}: {changes:?}");
            assert_eq!(s.verify, None);
        }
    }

    /// A bucket as borrowed from another machine's entry: settled on SIMD, these
    /// figures (ns, 5 samples each; 0: none) marked foreign, its contenders computed.
    fn borrowed(figures: [u64; Backend::COUNT]) -> BucketState {
        let mut s = BucketState::new(5000);
        for b in Backend::ALL.into_iter().filter(|b| figures[b.index()] > 0) {
            let st = &mut s.stats[b];
            st.recent_ns = vec![figures[b.index()]; 5];
            st.count = 5;
            st.foreign = true;
        }
        s.settle_on(Backend::Simd, DecisionKind::Historical);
        let contenders = contenders(&s, Backend::Simd, ALL, &P);
        s.verify = Some(Verify { saved_centre: figures[Backend::Simd.index()] as f64, foreign: Some(contenders) });
        s.foreign = true;
        s
    }

    /// Sampled calls of a borrowed bucket with the true times `truth`, until its decision
    /// changes or `calls` have run; the backends timed, and the change.
    fn verify_borrowed(s: &mut BucketState, truth: [u64; Backend::COUNT], calls: usize) -> (Vec<Backend>, Change) {
        let mut timed = Vec::new();
        for _ in 0..calls {
            let chosen = s.settled().expect("settled until a change");
            let b = probe(s, ALL, UNKNOWN, 1, &P).unwrap_or(chosen);
            timed.push(b);
            let change = record(s, sample(b, truth[b.index()], 1, 1.0), &P);
            if change != Change::None {
                return (timed, change);
            }
        }
        (timed, Change::None)
    }

    #[test]
    fn another_machines_decision_re_explores_where_this_machine_ranks_otherwise() {
        // There: SIMD 100, Scalar 140 (a contender), GPU hopeless. Here SIMD matches, but Scalar takes 60.
        let mut s = borrowed([140, 100, 0, 1_000_000]);
        assert_eq!(s.verify.unwrap().foreign, Some(BackendSet::of(&[Backend::Scalar])), "only Scalar is within reach");
        let (timed, change) = verify_borrowed(&mut s, [60, 100, 0, 1_000_000], 40);
        assert_eq!(timed[0], Backend::Simd, "the first call goes where the other machine decided");
        assert_eq!(change, Change::Reexplore, "{timed:?}");
        assert_eq!(timed.iter().filter(|&&b| b == Backend::Scalar).count() as u64, P.samples, "{timed:?}");
        assert!(!timed.contains(&Backend::Gpu), "a hopeless alternative is not re-timed: {timed:?}");
        assert!(!s.foreign && s.stats.values().all(|st| !st.foreign), "this machine decides from now on");
        // Its own figure for the chosen backend alone would have kept the decision.
        let mut own = borrowed([140, 100, 0, 1_000_000]);
        own.verify = Some(Verify { saved_centre: 100.0, foreign: None });
        assert_eq!(verify_borrowed(&mut own, [60, 100, 0, 1_000_000], P.verify_samples as usize).1, Change::None);
    }

    #[test]
    fn another_machines_decision_is_confirmed_where_this_machine_agrees() {
        let mut s = borrowed([140, 100, 0, 1_000_000]);
        let (timed, change) = verify_borrowed(&mut s, [150, 100, 0, 1_000_000], 40);
        assert_eq!(change, Change::None, "{timed:?}");
        assert_eq!((s.verify, s.foreign, s.settled()), (None, false, Some(Backend::Simd)), "confirmed");
        let scalar = s.of(Backend::Scalar);
        assert!(!scalar.foreign && scalar.recent_ns.iter().all(|&ns| ns == 150), "{scalar:?}: measured here only");
        assert_eq!(scalar.count, P.samples, "the other machine's count is not carried");
        assert!(s.of(Backend::Gpu).foreign, "never re-timed: still the other machine's");
        assert_eq!(s.budget.extra_ns, 0.0, "re-timing contenders spent no probe budget");
    }

    #[test]
    fn another_machines_figure_far_off_re_explores_and_its_figures_predict_nothing() {
        // There SIMD took 20; here 100: the same check as a warm start's.
        let mut s = borrowed([1_000, 20, 0, 0]);
        assert_eq!(s.verify.unwrap().foreign, Some(BackendSet::EMPTY));
        let (timed, change) = verify_borrowed(&mut s, [1_000, 100, 0, 0], 40);
        assert_eq!((timed.len() as u32, change), (P.verify_samples, Change::Reexplore));
    }

    #[test]
    fn a_contender_that_can_no_longer_run_is_not_waited_for() {
        let mut s = borrowed([140, 100, 0, 110]);
        assert_eq!(s.verify.unwrap().foreign, Some(BackendSet::of(&[Backend::Scalar, Backend::Gpu])));
        let no_gpu = SCALAR_SIMD;
        for _ in 0..20 {
            let b = probe(&mut s, no_gpu, UNKNOWN, 1, &P).unwrap_or(Backend::Simd);
            assert_ne!(b, Backend::Gpu);
            record(&mut s, sample(b, [150, 100, 0, 90][b.index()], 1, 1.0), &P);
        }
        assert_eq!((s.verify, s.foreign), (None, false), "confirmed without the GPU");
    }
}
