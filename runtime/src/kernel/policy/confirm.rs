//! Confirming a decision loaded from history that is not trusted as it is (a GPU
//! decision, another machine's; the warm start's other decisions are): which
//! alternatives another machine's decision is re-timed against
//! ([`contenders`]), which one a sampled call re-times ([`next_contender`]), and
//! the rule that keeps the decision or re-explores the bucket
//! ([`judge_loaded_decision`]). The rules are in the module docs of `policy`.

use super::tuning::Policy;
use crate::candidate::{Candidate, CandidateSet, PerCandidate};
use crate::kernel::bucket_state::{BucketState, Confirming, Exclusion};
use crate::kernel::stats::BackendStats;

/// The alternatives a decision from another machine must be re-timed against before it
/// is confirmed: those that may run here (`candidates`) and are not excluded, whose
/// figures in `bucket` are within [`Policy::prune_factor`] of `chosen`'s.
pub(crate) fn contenders(
    bucket: &BucketState,
    chosen: Candidate,
    candidates: CandidateSet,
    policy: &Policy,
) -> CandidateSet {
    let reach = bucket.of(chosen).centre().map_or(f64::INFINITY, |c| policy.prune_factor * c);
    let allowed = bucket.allowed(candidates).without(chosen);
    CandidateSet::from_fn(|b| allowed.contains(b) && bucket.of(b).centre().is_some_and(|c| c <= reach))
}

/// The contender a sampled call of a bucket confirming another machine's decision
/// re-times, or `None` for the chosen backend: of the contenders that can still run
/// (`candidates`; the others are dropped for good), the one with the fewest fresh
/// samples while it has fewer than [`Policy::samples`] and fewer than the chosen
/// backend, so the two alternate. A decision of this machine's own has no contenders.
pub(super) fn next_contender(
    stats: &PerCandidate<BackendStats>,
    c: &mut Confirming,
    candidates: CandidateSet,
    policy: &Policy,
) -> Option<Candidate> {
    let contenders = c.contenders.as_mut()?;
    *contenders = contenders.and(candidates);
    let next = contenders
        .iter()
        .filter(|&b| u64::from(stats[b].fresh) < policy.samples)
        .min_by_key(|&b| (stats[b].fresh, b))?;
    (stats[next].fresh < stats[c.settled.chosen].fresh).then_some(next)
}

/// Where a loaded decision stands after a timed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Not enough was re-timed yet.
    Pending,
    /// This machine's figures agree: the decision stands.
    Confirmed,
    /// This machine's figures disagree: the bucket explores again.
    Wrong,
}

/// The rule that re-explores a loaded decision: once its backend has
/// [`Policy::confirm_samples`] fresh samples (and each contender of another
/// machine's decision [`Policy::samples`]), the decision is wrong when even the
/// fastest fresh sample is more than [`Policy::confirm_factor`] slower than the saved
/// centre (a busy machine only slows calls down, so one quick call is enough to keep
/// it), when the fresh centre is that much faster, or when a contender not excluded
/// here measured faster than the chosen backend by more than [`Policy::tolerance`]
/// (this machine ranks them otherwise). Else it is confirmed.
pub(super) fn judge_loaded_decision(
    stats: &PerCandidate<BackendStats>,
    excluded: &PerCandidate<Option<Exclusion>>,
    c: &Confirming,
    policy: &Policy,
) -> Verdict {
    let fresh = &stats[c.settled.chosen];
    let pending = |contenders: CandidateSet| contenders.iter().any(|b| u64::from(stats[b].fresh) < policy.samples);
    if fresh.fresh < policy.confirm_samples || c.contenders.is_some_and(pending) {
        return Verdict::Pending;
    }
    let saved = c.saved_ns.max(1.0);
    let fastest = fresh.recent_ns.iter().min().map_or(saved, |&f| f as f64);
    let centre = fresh.centre().unwrap_or(saved);
    let off = fastest / saved > policy.confirm_factor || centre / saved < 1.0 / policy.confirm_factor;
    let beaten = c.contenders.is_some_and(|contenders| {
        contenders
            .iter()
            .any(|b| excluded[b].is_none() && stats[b].centre().is_some_and(|a| a < centre * (1.0 - policy.tolerance)))
    });
    if off || beaten {
        Verdict::Wrong
    } else {
        Verdict::Confirmed
    }
}
