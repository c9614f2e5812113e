//! The routing rules: how a bucket's decision is reached, checked and
//! replaced. This is the one place they are described; each rule names the
//! function that implements it.
//!
//! A bucket ([`BucketState`]) is exploring, confirming a decision loaded from
//! history (a GPU decision, another machine's), or settled (its
//! [`Phase`](crate::kernel::bucket_state::Phase)). It
//! changes only through [`step`]: a pure function of the bucket, an [`Event`]
//! (with the inputs the site gathered for it under the kernel's lock) and the
//! tuning constants ([`Policy`]), with no clocks, locks or I/O, so every rule is
//! tested with injected timings. It returns an [`Outcome`]: the backend a call
//! runs on and what the site publishes (the decision byte, a report, whether the
//! history is worth saving).
//!
//! Decision order: forced > a decision (settled, loaded, or loaded and being
//! confirmed) > exploration > cold-start prior. Forcing is the site's, before it gets here.
//!
//! - **Prior** ([`prior`]): the MoE table for the kernel's complexity and size; a
//!   GPU choice is vetoed (→ SIMD) when the kernel has no GPU variant, no usable GPU
//!   exists, or the cost model predicts SIMD to be faster; a SIMD choice becomes
//!   Parallel where the kernel has that variant, two or more threads exist and the
//!   cost model predicts it faster (the MoE table itself never says Parallel). In
//!   frozen mode a bucket with no saved decision settles on it for good.
//! - **Exploration** (`explore::explore`): candidates in order: the prior first,
//!   then by predicted time. Each is called in a *run* of consecutive calls until it
//!   has [`Policy::samples`] kept samples; the first [`Policy::run_warmup`] timed calls
//!   of a Parallel candidate's run are not kept (`explore::timed`) where the bucket's
//!   calls come back to back (no longer apart than [`Policy::run_gap_ns`] or a call's
//!   own time), so what is measured is the variant called back to back, not a call that
//!   finds the pool asleep after another candidate's calls (such a call may still
//!   prune, as a warm-up does). Where the calls come between other work, every call
//!   finds the pool as the program leaves it, and none is dropped. Other candidates have
//!   no threads to wake and keep their run's first call: an extra call of each would
//!   cost the first run of a program more than it tells (the routing-quality bench's
//!   cold pass: 1.15× the oracle against 1.08× without it). The process's first call of
//!   each backend is dropped as well (its page faults). A candidate is pruned for the
//!   round (`explore::prunes`) when a figure of its own here (the centre of its samples,
//!   or a warm-up's time) exceeds [`Policy::prune_factor`] × the best centre measured so
//!   far, however cheap: a candidate measured far slower than the best gets no more
//!   calls, so the run of calls is kept for the candidate it is for and not paid by one
//!   that loses on its first call; a warm-up that prunes is kept as the candidate's
//!   figure, so the next bucket predicts from it rather than paying a first call of its
//!   own. A Parallel candidate's warm-up (its run's first call,
//!   which may have woken the pool) prunes it only beyond [`Policy::call_cap`] × the
//!   best. A prediction prunes beyond [`Policy::call_cap`] × the best, or beyond
//!   [`Policy::prune_factor`] × the best unless it is a CPU figure under
//!   [`Policy::measure_below_ns`] (one call costs less there than a misprediction). A
//!   prediction from a neighbouring bucket counts only when that bucket's sizes are
//!   within [`Policy::prune_reach`] of this one's: scaled across decades, a fixed cost
//!   measured at small sizes looks like a per-element one; a ratio does not, so a
//!   smaller bucket's Scalar-to-SIMD ratio predicts one from the other within
//!   [`Policy::ratio_reach`]. A candidate that may run only later (Parallel while a GPU
//!   driver loads) is waited for during at most [`Policy::wait_calls`] calls.
//! - **Exploration budget** (`explore::affordable`, `settled::probe`): the time calls on
//!   candidates other than the best known take beyond the best known's centre is bounded
//!   as a share of the time the calls took: per bucket, [`Policy::explore_share`] (10%)
//!   while the bucket is new, [`Policy::probe_budget`] (1%) once settled; per process,
//!   [`Policy::explore_share`] of every routed call's time (`kernel::budget`, one ledger
//!   over all buckets). A candidate whose remaining calls of the round (each at its
//!   estimate beyond the best centre: its own samples' centre, else a prediction) do not
//!   fit in what the bucket and the process have left is *deferred*: the round goes on
//!   without it, and settles without it. One estimated no slower than the best costs
//!   nothing. One that nothing estimates (nothing measured, no prediction, or one too
//!   cheap to trust) gets its first call: that call tells what the next would cost (such
//!   calls come one per candidate and bucket, before the cost model's calibration ends,
//!   and are charged to the process's ledger; holding them back on the process's debt
//!   made one kernel's first decisions wait on another's exploration). After settling, the deferred candidates are re-timed
//!   by the self-correction below, within its [`Policy::probe_budget`], until each has
//!   [`Policy::samples`] samples or is estimated hopeless: the exploration already judged
//!   them dear, and measuring them at a new bucket's share cost a program's second pass
//!   more than it saved its first (BENCHMARKS.md, issue 44). Both sides of every ledger
//!   halve every
//!   [`Policy::budget_half_life_ns`], so a budget holds over any few half-lives and an
//!   overrun is forgotten.
//! - **Call cap**: no exploring call, and no re-timing, goes to a candidate estimated
//!   beyond [`Policy::call_cap`] (10×) the best measured, whatever the budget says and
//!   however old its figures are; only a candidate nothing estimates can exceed it, on
//!   its one first call.
//! - **Widths** (`crate::candidate`): what a bucket measures and chooses between are
//!   candidates, a backend and for Parallel a width of the pool: the whole pool, and
//!   in pools of 4 or more threads half of it, in pools of 8 or more a quarter (at
//!   least 2 threads each). Each width is explored, predicted (the cost model's
//!   Parallel figure on that many threads, its fork–join term weighing against
//!   fewer), pruned, settled on and saved like a backend; on 2 or 3 threads only the
//!   whole pool exists and nothing changes.
//! - **Settling** (`explore::fastest`): the lowest centre wins; every candidate
//!   within [`Policy::tolerance`] of it ties, and ties go to the simplest candidate
//!   (Scalar < SIMD < Parallel on fewer threads < Parallel < GPU), so decisions do
//!   not flap.
//! - **Replacing a settled decision needs more than noise** (`settled::timed`).
//!   Two variants that run the same code (below its grain `ops::par` runs the SIMD
//!   kernel) have medians that differ by a few percent either way on every look; a
//!   rule on centres alone would switch between them over and over. So a settled
//!   backend is replaced only by one that *beats* it: the upper end of the
//!   challenger's confidence interval ([`BackendStats::half_width`](crate::kernel::stats::BackendStats::half_width)), raised by the
//!   margin, lies below the lower end of the chosen one's. An alternative with
//!   [`Policy::switch_after`] fresh samples that beats the chosen one with
//!   [`Policy::tolerance`] as the margin takes over (no new exploration round); so
//!   does a simpler one with [`Policy::confident`] fresh samples whose centre is
//!   within [`Policy::tolerance`] of the chosen one's (the settling tie-break,
//!   applied once the figures are firm). A switch the other way needs the full
//!   margin, so a tie settles on the simpler backend and stays there.
//! - **Drift** (`settled::drifted`): once at least [`Policy::drift_samples`] samples
//!   were taken since settling, a chosen backend beaten by another's recent figures
//!   with [`Policy::drift_band`] as the margin starts a new round. The centre is a
//!   median, so an outlier alone never triggers this; old figures (another run, or
//!   older than [`Policy::stale_ns`]) are re-timed by probes, not compared with.
//! - **Self-correction** (`settled::probe`): a settled bucket's sampled calls
//!   alternate between timing the chosen backend and, within an explicit budget
//!   ([`Policy::probe_budget`] of the bucket's time, counted as what the alternative took
//!   *beyond* the chosen backend's current pace, on a ledger whose two sides
//!   halve every [`Policy::budget_half_life_ns`] so that an old overrun is forgotten;
//!   the process's budget bounds it too; one whose optimistic estimate is no slower than
//!   the chosen backend costs nothing beyond it and is re-timed whatever the ledgers say),
//!   re-timing an alternative that is not hopeless and whose figures are few
//!   ([`Policy::confident`]) or whose
//!   confidence interval still overlaps the chosen one's (until it holds a full
//!   window of fresh samples: then it is a tie, and more samples would only test it
//!   again until noise separates it once), or whose figures are old
//!   ([`Policy::stale_ns`], or from another run) even if they call it hopeless
//!   (figures taken under a transient load must not exclude it for good), or whose
//!   figures are fewer than [`Policy::samples`] and contradicted by a prediction (a
//!   first call's page faults must not exclude it), but never one beyond the call cap.
//!   When the
//!   chosen backend runs faster now (its [pace](crate::kernel::stats::BackendStats::pace)) than when an
//!   alternative's figures were taken (when the bucket settled, or when they were
//!   last re-timed) by more than [`Policy::drift_band`], the machine was busy then:
//!   those figures count as old too, scaled by the same factor for the budget, and
//!   the first sample taken now replaces them. Likewise the chosen backend's own
//!   window drops its older samples when its pace is faster than its centre by more
//!   than the band, so fresh figures are compared with fresh ones. As intervals
//!   separate, probing stops: the cost decays with confidence.
//! - **Warm start** (`crate::kernel::snapshot`): a CPU decision loaded from this
//!   machine's history for this kernel (same fingerprint, same token hash) is trusted:
//!   the bucket starts settled, and the ordinary sampling re-checks it. Its first timed
//!   call replaces the saved figure of the chosen backend (figures from another run are
//!   old); the alternatives' saved figures are old too, so those within reach are
//!   re-timed within the 1% budget and the call cap, and one that beats the decision
//!   takes over. Nothing re-explores it: for a loaded decision, drift makes the
//!   alternative that beats it the decision (`settled::drifted`), with no new round. A
//!   kernel whose tokens changed loads nothing and explores; a machine whose fingerprint
//!   has no entry starts from another machine's (below).
//! - **A loaded GPU decision** (`confirm::judge_loaded_decision`) is confirmed before it
//!   is trusted, as the GPU adapter is not part of the fingerprint (it is known only once
//!   the GPU has started). Every call of its bucket is timed meanwhile, and it is not
//!   replaced by one alternative's figures: once
//!   [`Policy::confirm_samples`] fresh samples exist, figures off the saved centre by
//!   more than [`Policy::confirm_factor`] start a new exploration round: slower when
//!   even the fastest fresh sample is (a busy machine only slows calls down, so one
//!   quick call is enough to keep the decision), faster when the fresh centre is.
//! - **Another machine's decision** (the nearest entry's, `persist::nearest`) is
//!   confirmed more strictly: its figures order nothing here (they predict no
//!   neighbouring bucket and are replaced by the first sample taken here), and
//!   before it is confirmed every alternative its figures put within
//!   [`Policy::prune_factor`] of the chosen backend ([`contenders`]) is re-timed
//!   [`Policy::samples`] times, alternating with the chosen one
//!   (`confirm::next_contender`), outside the probe budget (it is exploration's
//!   cost, paid once). Besides the figure check above, a contender measured faster
//!   than the chosen backend by more than [`Policy::tolerance`] starts a new
//!   exploration round: this machine disagrees. Alternatives it called hopeless are
//!   re-timed later, as old figures are.
//! - **A failed GPU** ([`Event::GpuFailed`]): the GPU is pruned from an exploring
//!   bucket's round; a bucket whose decision is the GPU explores again, keeping its
//!   figures, with the GPU pruned.
//! - **A variant that disagrees with Scalar** ([`Event::Compared`], `verify`): it is
//!   excluded from the bucket for good; a bucket whose decision it was explores again.

mod confirm;
mod event;
mod explore;
mod predictions;
mod settled;
#[cfg(test)]
mod tests;
mod tuning;

pub(crate) use confirm::contenders;
pub(crate) use event::{CallInputs, Charge, Event, Outcome, Pick, Publish, Sample, Sampling, Tell};
pub(crate) use explore::prior;
pub(crate) use predictions::Predictions;
pub(crate) use tuning::Policy;

use super::bucket_state::{BucketState, Budget, Exclusion, Phase};
use super::spec::{Decision, DecisionKind};
use super::stats::WINDOW;
use crate::candidate::{Candidate, CandidateSet};
use confirm::Verdict;
use explore::Next;
use settled::Timed;

/// Applies `event` to `bucket` by the rules above: the one way a bucket changes
/// phase or figures. Returns what the site publishes.
pub(crate) fn step(bucket: &mut BucketState, event: Event<'_>, policy: &Policy) -> Outcome {
    match event {
        Event::Call(inputs) => call(bucket, inputs, policy),
        Event::FrozenCall { prior, candidates } => frozen_call(bucket, prior, candidates),
        Event::SampledCall { candidates, predicted, now_ns, process_left_ns } => {
            let stats = &bucket.stats;
            let (chosen, next, sampling) = match &mut bucket.phase {
                Phase::Exploring(_) => return Outcome::NOTHING,
                Phase::Confirming(c) => {
                    (c.settled.chosen, confirm::next_contender(stats, c, candidates, policy), Sampling::EveryCall)
                }
                Phase::Settled(s) => {
                    let when = (now_ns, process_left_ns);
                    (s.chosen, settled::probe(stats, s, candidates, predicted, when, policy), Sampling::ByRate)
                }
            };
            Outcome {
                run: Some(next.unwrap_or(chosen)),
                publish: Publish::Cache { candidate: chosen, sampling },
                ..Outcome::NOTHING
            }
        }
        Event::Timed(sample) => timed(bucket, sample, policy),
        Event::GpuFailed => gpu_failed(bucket),
        Event::Compared { candidate, size, disagreement } => compared(bucket, candidate, size, disagreement),
    }
}

/// What a bucket loaded from history publishes before its first call: its decision,
/// every call timed while it is confirmed; `None` for a bucket that explores.
pub(crate) fn loaded(bucket: &BucketState) -> Option<Publish> {
    let sampling = if bucket.confirming().is_some() { Sampling::EveryCall } else { Sampling::First };
    bucket.chosen().map(|candidate| Publish::Cache { candidate, sampling })
}

/// A call that found no cached decision: the bucket's decision, else exploration's next call.
fn call(bucket: &mut BucketState, inputs: &CallInputs, policy: &Policy) -> Outcome {
    let has_history = bucket.has_history();
    let (decision, settled_now) = match &mut bucket.phase {
        Phase::Exploring(round) => match explore::explore(&bucket.stats, round, inputs, has_history, policy) {
            Next::Run(pick) => (pick, false),
            Next::Settle { chosen, deferred } => {
                bucket.settle_on(chosen, DecisionKind::Historical);
                bucket.defer(deferred);
                (Pick { candidate: chosen, kind: DecisionKind::Historical }, true)
            }
        },
        Phase::Confirming(_) | Phase::Settled(_) => {
            let candidate = bucket.chosen().unwrap_or(Candidate::Scalar);
            (Pick { candidate, kind: DecisionKind::Historical }, false)
        }
    };
    let publish = match bucket.chosen() {
        Some(candidate) => Publish::Cache { candidate, sampling: Sampling::First },
        None => Publish::Keep,
    };
    Outcome {
        run: Some(decision.candidate),
        publish,
        tell: Some(Tell::Decision { decision, has_history }),
        // Only a new decision is worth saving; re-caching one changes nothing.
        dirty: settled_now,
        charge: Charge::NONE,
    }
}

/// A frozen-mode call that found no cached decision: the bucket's decision, else the
/// prior, settled for good (never timed, never saved).
fn frozen_call(bucket: &mut BucketState, prior: Decision, candidates: CandidateSet) -> Outcome {
    let decision = match bucket.chosen() {
        Some(candidate) => Pick { candidate, kind: DecisionKind::Historical },
        None => {
            let mut d = Pick::from(prior);
            if !candidates.contains(d.candidate) {
                // `verify` excluded the prior's choice here; Scalar is never excluded.
                d.candidate = Candidate::Scalar;
            }
            bucket.settle_on(d.candidate, d.kind);
            d
        }
    };
    Outcome {
        run: Some(decision.candidate),
        publish: Publish::Cache { candidate: decision.candidate, sampling: Sampling::First },
        tell: Some(Tell::Decision { decision, has_history: false }),
        dirty: false,
        charge: Charge::NONE,
    }
}

/// A timed call: its sample applied to the bucket's figures, and what that decides.
fn timed(bucket: &mut BucketState, sample: Sample, policy: &Policy) -> Outcome {
    if !sample.warmup {
        bucket.drop_borrowed(sample.candidate);
    }
    let stats = &mut bucket.stats;
    match &mut bucket.phase {
        Phase::Exploring(round) => {
            let charge = explore::timed(stats, round, sample, policy);
            Outcome::NOTHING.charging(charge)
        }
        Phase::Settled(_) | Phase::Confirming(_) if sample.warmup => Outcome::NOTHING,
        Phase::Settled(s) => {
            let (timed, charge) = settled::timed(stats, s, sample, policy);
            let outcome = match timed {
                Timed::Chosen => match settled::drifted(stats, s, sample.now_ns, policy) {
                    // A loaded decision is trusted: what beats it takes over, no new round.
                    Some(to) if s.loaded => switch(bucket, to),
                    Some(_) => reexplore(bucket, 0),
                    None => Outcome::NOTHING,
                },
                Timed::Alternative { takes_over: true } => switch(bucket, sample.candidate),
                Timed::Alternative { takes_over: false } => Outcome::NOTHING,
            };
            outcome.charging(charge)
        }
        Phase::Confirming(c) => {
            // While a loaded decision is confirmed, the verdict decides, not one alternative.
            let (timed, charge) = settled::timed(stats, &mut c.settled, sample, policy);
            let outcome = match confirm::judge_loaded_decision(stats, &bucket.excluded, c, policy) {
                Verdict::Pending => Outcome::NOTHING,
                Verdict::Wrong => return reexplore(bucket, 0).charging(charge),
                Verdict::Confirmed => confirmed(bucket),
            };
            let drifted = |s| settled::drifted(&bucket.stats, s, sample.now_ns, policy).is_some();
            if timed == Timed::Chosen && bucket.decision().is_some_and(drifted) {
                return reexplore(bucket, 0).charging(charge);
            }
            outcome.charging(charge)
        }
    }
}

/// A settled bucket's decision moves to `to` (a re-timed alternative that beat it): no
/// new round; the change is reported and saved.
fn switch(bucket: &mut BucketState, to: Candidate) -> Outcome {
    let from = bucket.chosen().unwrap_or(Candidate::Scalar);
    bucket.settle_on(to, DecisionKind::Historical);
    Outcome {
        run: None,
        publish: Publish::Cache { candidate: to, sampling: Sampling::Unchanged },
        tell: Some(Tell::Corrected { from, to }),
        dirty: true,
        charge: Charge::NONE,
    }
}

/// A loaded decision confirmed: the bucket settles on it. Another machine's decision
/// is now this machine's, worth saving, and what re-timing its contenders cost was
/// exploration's, not the probes'.
fn confirmed(bucket: &mut BucketState) -> Outcome {
    let Phase::Confirming(c) = bucket.phase else { return Outcome::NOTHING };
    let mut settled = c.settled;
    let outcome = if c.contenders.is_some() {
        settled.budget = Budget::default();
        Outcome { tell: Some(Tell::Confirmed(settled.chosen)), dirty: true, ..Outcome::NOTHING }
    } else {
        Outcome::NOTHING
    };
    bucket.phase = Phase::Settled(settled);
    outcome
}

/// The GPU failed: it runs nothing any more (see the module docs).
fn gpu_failed(bucket: &mut BucketState) -> Outcome {
    let outcome = match bucket.chosen() {
        Some(Candidate::Gpu) => reexplore(bucket, WINDOW),
        _ => Outcome::NOTHING,
    };
    if let Phase::Exploring(round) = &mut bucket.phase {
        round.pruned.insert(Candidate::Gpu);
    }
    outcome
}

/// `verify` compared `candidate` with Scalar: one that disagreed is excluded for good.
fn compared(bucket: &mut BucketState, candidate: Candidate, size: usize, disagreement: Option<f64>) -> Outcome {
    bucket.compared.insert(candidate);
    let Some(largest_error) = disagreement else { return Outcome::NOTHING };
    bucket.excluded[candidate] = Some(Exclusion { size, largest_error });
    let publish = if bucket.chosen() == Some(candidate) {
        bucket.restart_round(0);
        Publish::Clear
    } else {
        Publish::Keep
    };
    Outcome {
        run: None,
        publish,
        tell: Some(Tell::Excluded { candidate, largest_error }),
        dirty: true,
        charge: Charge::NONE,
    }
}

/// Starts a new exploration round keeping `keep` samples per backend.
fn reexplore(bucket: &mut BucketState, keep: usize) -> Outcome {
    bucket.restart_round(keep);
    Outcome::REEXPLORE
}
