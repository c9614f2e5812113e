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
//!   or the cost model predicts SIMD to be faster.
//! - **Exploration**: candidates in order: the prior first, then by predicted
//!   time. Each gets [`Policy::samples`] kept samples. A candidate whose estimate
//!   (its own samples if any, else a prediction) exceeds [`Policy::prune_factor`]
//!   × the best centre measured so far is skipped for the round.
//! - **Settling**: the lowest centre wins; every candidate within
//!   [`Policy::tolerance`] of it ties, and ties go to the incumbent, then to the
//!   cheapest backend to launch (Scalar < SIMD < GPU), so decisions do not flap.
//! - **Drift**: once at least [`Policy::drift_samples`] samples were taken since
//!   settling, a chosen backend whose centre exceeds another's by more than
//!   [`Policy::drift_band`] starts a new round. The centre is a median, so an
//!   outlier alone never triggers this.

use super::spec::{Decision, DecisionKind, KernelSpec};
use super::stats::{BucketState, Phase};
use crate::backend::Backend;
use crate::cost::Work;
use crate::moe::moe;

/// The router's tuning constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Policy {
    /// Kept samples each candidate needs before a bucket settles.
    pub(crate) samples: u64,
    /// A candidate estimated slower than this multiple of the best measured centre is skipped.
    pub(crate) prune_factor: f64,
    /// Centres within this fraction of the best tie (and the tie-break decides).
    pub(crate) tolerance: f64,
    /// A settled choice slower than another measured backend by more than this fraction re-explores.
    pub(crate) drift_band: f64,
    /// Samples of the chosen backend needed since settling before drift is judged.
    pub(crate) drift_samples: u64,
}

impl Policy {
    /// The defaults: 3 samples, prune at 4×, 5% tolerance, 25% drift band judged on 9 samples.
    pub(crate) const DEFAULT: Policy =
        Policy { samples: 3, prune_factor: 4.0, tolerance: 0.05, drift_band: 0.25, drift_samples: 9 };
}

impl Default for Policy {
    fn default() -> Self {
        Policy::DEFAULT
    }
}

/// The cold-start prior for a call of `work` (see the module docs).
pub(crate) fn prior(spec: &KernelSpec, work: &Work, gpu_usable: bool, model: impl FnOnce() -> bool) -> Decision {
    match moe(spec.complexity, work.size) {
        Backend::Gpu if spec.has_gpu && gpu_usable && model() => {
            Decision { backend: Backend::Gpu, kind: DecisionKind::MoeThreshold }
        }
        Backend::Gpu => Decision { backend: Backend::Simd, kind: DecisionKind::CostModel },
        other => Decision { backend: other, kind: DecisionKind::MoeThreshold },
    }
}

/// The best (lowest) centre among backends sampled in the current round, other than `except`.
fn best_centre(state: &BucketState, except: Option<Backend>) -> Option<(Backend, f64)> {
    Backend::ALL
        .into_iter()
        .filter(|&b| Some(b) != except && !state.pruned[b.index()] && state.round_samples(b) > 0)
        .filter_map(|b| state.of(b).centre().map(|c| (b, c)))
        .min_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)))
}

/// Predicted time of a backend for the call being routed, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Predictions {
    /// From the nearest bucket where the backend was measured, scaled by the complexity's growth.
    pub(crate) neighbours: [Option<f64>; 3],
    /// From the cost model.
    pub(crate) model: [f64; 3],
}

impl Predictions {
    /// Measurements nearby where there are some, else the cost model.
    fn of(&self, b: Backend) -> f64 {
        self.neighbours[b.index()].unwrap_or(self.model[b.index()])
    }

    /// The estimate pruning compares with `prune_factor × anchor_ns`, where `anchor` is
    /// the best backend measured in this bucket. Neighbouring measurements are used as
    /// they are. A cost-model figure is also tried relative to the anchor: Scalar and
    /// SIMD share the host's memory and call costs, so the model's error on the
    /// measured one applies to the other, and the lower of the absolute and the
    /// relative figure is used, so a model that is off in absolute terms does not
    /// prune a backend it cannot really tell apart.
    fn for_pruning(&self, b: Backend, anchor: Backend, anchor_ns: f64) -> f64 {
        if let Some(n) = self.neighbours[b.index()] {
            return n;
        }
        let raw = self.model[b.index()];
        let anchor_model = self.model[anchor.index()];
        let both_cpu = b != Backend::Gpu && anchor != Backend::Gpu;
        if both_cpu && anchor_model > 0.0 && anchor_model.is_finite() {
            raw.min(raw * anchor_ns / anchor_model)
        } else {
            raw
        }
    }
}

/// The next backend to call in an exploring bucket, or the settled decision once
/// every candidate is measured or pruned.
///
/// `candidates[i]` says whether backend `i` may run at all. Candidates are tried
/// prior first, then by predicted time; but when every candidate was measured in a
/// neighbouring bucket, those measurements order them and the prior is not special.
pub(crate) fn explore(
    state: &mut BucketState,
    candidates: [bool; 3],
    prior: Decision,
    predicted: &Predictions,
    policy: &Policy,
) -> Decision {
    let mut order: Vec<Backend> = Backend::ALL.into_iter().filter(|b| candidates[b.index()]).collect();
    let informed = order.iter().all(|b| predicted.neighbours[b.index()].is_some());
    order.sort_by(|&a, &b| {
        let prior_first =
            if informed { std::cmp::Ordering::Equal } else { (a != prior.backend).cmp(&(b != prior.backend)) };
        prior_first.then(predicted.of(a).total_cmp(&predicted.of(b))).then(a.cmp(&b))
    });
    for &b in &order {
        let i = b.index();
        if state.pruned[i] || state.round_samples(b) >= policy.samples {
            continue;
        }
        if let Some((best_b, best)) = best_centre(state, Some(b)) {
            let estimate = match state.round_samples(b) {
                0 => predicted.for_pruning(b, best_b, best),
                _ => state.of(b).centre().unwrap_or_else(|| predicted.for_pruning(b, best_b, best)),
            };
            if best_b != b && estimate > policy.prune_factor * best {
                state.pruned[i] = true;
                continue;
            }
        }
        let kind = if !state.has_history() && b == prior.backend { prior.kind } else { DecisionKind::Exploring };
        return Decision { backend: b, kind };
    }
    settle(state, candidates, policy)
}

/// Settles the bucket on the best measured candidate (see the module docs for the band and tie-break).
fn settle(state: &mut BucketState, candidates: [bool; 3], policy: &Policy) -> Decision {
    let incumbent = state.settled();
    let measured: Vec<(Backend, f64)> = Backend::ALL
        .into_iter()
        .filter(|b| candidates[b.index()] && !state.pruned[b.index()])
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
            .or_else(|| Backend::ALL.into_iter().find(|b| candidates[b.index()]))
            .unwrap_or(Backend::Scalar),
    };
    state.phase = Phase::Settled { backend, by: DecisionKind::Historical };
    state.round_base = [state.stats[0].count, state.stats[1].count, state.stats[2].count];
    Decision { backend, kind: DecisionKind::Historical }
}

/// Records one sample of `backend` taking `ns`. A `warmup` sample is not kept, but a
/// warm-up already far slower than the best measured prunes its backend for the round.
///
/// Returns `true` when the bucket's phase changed (it settled earlier and now re-explores).
pub(crate) fn record(state: &mut BucketState, backend: Backend, ns: u64, warmup: bool, policy: &Policy) -> bool {
    let i = backend.index();
    if warmup {
        if matches!(state.phase, Phase::Exploring) {
            if let Some((_, best)) = best_centre(state, Some(backend)) {
                if ns as f64 > policy.prune_factor * best {
                    state.pruned[i] = true;
                }
            }
        }
        return false;
    }
    state.stats[i].record(ns);
    match state.phase {
        Phase::Exploring => {
            if let (Some((_, best)), Some(mine)) = (best_centre(state, Some(backend)), state.of(backend).centre()) {
                if mine > policy.prune_factor * best {
                    state.pruned[i] = true;
                }
            }
            false
        }
        Phase::Settled { backend: chosen, .. } if chosen == backend => drifted(state, backend, policy),
        Phase::Settled { .. } => false,
    }
}

/// Whether the settled `chosen` backend has degraded past the drift band; if so the bucket re-explores.
fn drifted(state: &mut BucketState, chosen: Backend, policy: &Policy) -> bool {
    if state.round_samples(chosen) < policy.drift_samples {
        return false;
    }
    let Some(mine) = state.of(chosen).centre() else { return false };
    let beaten = Backend::ALL
        .into_iter()
        .filter(|&b| b != chosen)
        .filter_map(|b| state.of(b).centre())
        .any(|other| mine > other * (1.0 + policy.drift_band));
    if beaten {
        state.restart_round(0);
    }
    beaten
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::OpComplexity;

    const ALL: [bool; 3] = [true, true, true];
    const P: Policy = Policy::DEFAULT;
    const NONE: Predictions = Predictions { neighbours: [None; 3], model: [0.0; 3] };

    fn simd_prior() -> Decision {
        Decision { backend: Backend::Simd, kind: DecisionKind::MoeThreshold }
    }

    /// Drives a bucket to a decision, answering each exploring call with `time(backend)`.
    fn run_to_settle(state: &mut BucketState, prior: Decision, time: impl Fn(Backend) -> u64) -> Vec<Backend> {
        let mut calls = Vec::new();
        for _ in 0..100 {
            let d = explore(state, ALL, prior, &NONE, &P);
            if d.kind == DecisionKind::Historical {
                return calls;
            }
            calls.push(d.backend);
            record(state, d.backend, time(d.backend), false, &P);
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
        });
        assert_eq!(calls[0], Backend::Simd);
        assert_eq!(calls.iter().filter(|&&b| b == Backend::Simd).count(), 3);
        assert_eq!(s.settled(), Some(Backend::Simd));
    }

    #[test]
    fn prunes_a_candidate_measured_far_slower_after_one_sample() {
        let mut s = BucketState::new(5000);
        let calls = run_to_settle(&mut s, simd_prior(), |b| match b {
            Backend::Scalar => 10_000,
            Backend::Simd => 100,
            Backend::Gpu => 150,
        });
        assert_eq!(calls.iter().filter(|&&b| b == Backend::Scalar).count(), 1, "{calls:?}");
        assert!(s.pruned[Backend::Scalar.index()]);
        assert_eq!(s.settled(), Some(Backend::Simd));
    }

    #[test]
    fn skips_a_candidate_predicted_hopeless_without_running_it() {
        let mut s = BucketState::new(1 << 25);
        let mut calls = Vec::new();
        loop {
            let p = Predictions { neighbours: [None; 3], model: [1e12, 1e6, 1e6] };
            let d = explore(&mut s, ALL, simd_prior(), &p, &P);
            if d.kind == DecisionKind::Historical {
                break;
            }
            calls.push(d.backend);
            record(&mut s, d.backend, 1_000_000, false, &P);
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
        });
        assert_eq!(s.settled(), Some(Backend::Scalar), "3% slower is a tie; Scalar is cheapest to launch");
    }

    #[test]
    fn first_call_carries_the_prior_kind() {
        let mut s = BucketState::new(10);
        let d = explore(&mut s, ALL, simd_prior(), &NONE, &P);
        assert_eq!(d, simd_prior());
    }

    #[test]
    fn one_outlier_does_not_trigger_drift_but_sustained_degradation_does() {
        let mut s = BucketState::new(5000);
        run_to_settle(&mut s, simd_prior(), |b| if b == Backend::Simd { 100 } else { 200 });
        for _ in 0..20 {
            assert!(!record(&mut s, Backend::Simd, 100, false, &P));
        }
        assert!(!record(&mut s, Backend::Simd, 10_000, false, &P), "one preempted sample");
        assert_eq!(s.settled(), Some(Backend::Simd));
        let mut changed = false;
        for _ in 0..20 {
            changed |= record(&mut s, Backend::Simd, 400, false, &P);
        }
        assert!(changed);
        assert_eq!(s.phase, Phase::Exploring);
    }

    #[test]
    fn neighbour_measurements_outrank_the_prior() {
        let mut s = BucketState::new(64_000);
        let p = Predictions { neighbours: [Some(3_200.0), Some(320.0), Some(300.0)], model: [0.0; 3] };
        let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
        let d = explore(&mut s, ALL, scalar_prior, &p, &P);
        assert_eq!(d, Decision { backend: Backend::Gpu, kind: DecisionKind::Exploring });
    }

    #[test]
    fn a_cost_model_off_in_absolute_terms_does_not_prune_a_cpu_backend() {
        // The model predicts 1.6 µs for both CPU backends; Scalar measures 0.3 µs.
        // Absolutely, SIMD looks 5× slower than the best; relative to Scalar's error, it ties.
        let mut s = BucketState::new(2_000);
        let p = Predictions { neighbours: [None; 3], model: [1_600.0, 1_600.0, f64::INFINITY] };
        let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
        let two = [true, true, false];
        for _ in 0..3 {
            let d = explore(&mut s, two, scalar_prior, &p, &P);
            assert_eq!(d.backend, Backend::Scalar);
            record(&mut s, Backend::Scalar, 300, false, &P);
        }
        assert_eq!(explore(&mut s, two, scalar_prior, &p, &P).backend, Backend::Simd);
    }

    #[test]
    fn the_relative_model_still_prunes_what_it_can_tell_apart() {
        // Scalar is modelled at 10× SIMD; SIMD measures 1 ms, so Scalar is estimated at 10 ms.
        let mut s = BucketState::new(1 << 25);
        let p = Predictions { neighbours: [None; 3], model: [1e8, 1e7, f64::INFINITY] };
        let simd_prior = simd_prior();
        for _ in 0..3 {
            let d = explore(&mut s, [true, true, false], simd_prior, &p, &P);
            assert_eq!(d.backend, Backend::Simd);
            record(&mut s, Backend::Simd, 1_000_000, false, &P);
        }
        assert_eq!(explore(&mut s, [true, true, false], simd_prior, &p, &P).kind, DecisionKind::Historical);
        assert!(s.pruned[Backend::Scalar.index()]);
    }

    #[test]
    fn warmup_is_not_kept() {
        let mut s = BucketState::new(5000);
        record(&mut s, Backend::Simd, 999, true, &P);
        assert!(s.of(Backend::Simd).is_empty());
    }

    #[test]
    fn prior_vetoes_gpu_without_a_variant_a_device_or_a_case() {
        let spec =
            |has_gpu| KernelSpec { name: "k", complexity: OpComplexity::High, has_gpu, token_hash: 0, loops: &[] };
        let w = Work { size: 20_000, flops: 1, bytes: 1 };
        assert_eq!(prior(&spec(true), &w, true, || true).backend, Backend::Gpu);
        assert_eq!(prior(&spec(false), &w, true, || true).kind, DecisionKind::CostModel);
        assert_eq!(prior(&spec(true), &w, false, || true).backend, Backend::Simd);
        assert_eq!(prior(&spec(true), &w, true, || false).kind, DecisionKind::CostModel);
        let small = Work { size: 500, ..w };
        assert_eq!(
            prior(&spec(true), &small, true, || true),
            Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold }
        );
    }
}
