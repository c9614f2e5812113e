//! A bucket with a decision: what its sampled calls time ([`probe`]), what a
//! timed call changes ([`timed`]: the figures, the probe budget, whether an
//! alternative takes over), and when the decision has degraded ([`drifted`]).
//! The rules are in the module docs of `policy`.

use super::event::{Charge, Sample};
use super::predictions::Predictions;
use super::tuning::Policy;
use crate::candidate::{Candidate, CandidateSet, PerCandidate};
use crate::kernel::bucket_state::Settled;
use crate::kernel::stats::{BackendStats, PACE, WINDOW};

/// What a timed call of a bucket with a decision was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timed {
    /// A call of the chosen backend.
    Chosen,
    /// A re-timed alternative; `takes_over`: its fresh figures now replace the chosen
    /// backend (it beats it, or ties it and is simpler).
    Alternative {
        /// Whether it replaces the chosen backend.
        takes_over: bool,
    },
}

/// Applies a kept sample of a bucket with a decision (the chosen backend's, or a
/// re-timed alternative's) to its figures and its probe budget; returns what it was, and
/// its charge to the process's budget. A deferred alternative is no longer deferred once
/// it has [`Policy::samples`] fresh samples, or figures over [`Policy::prune_factor`] ×
/// the chosen backend's.
pub(super) fn timed(
    stats: &mut PerCandidate<BackendStats>,
    s: &mut Settled,
    sample: Sample,
    policy: &Policy,
) -> (Timed, Charge) {
    let Sample { candidate: backend, ns, now_ns, interval, .. } = sample;
    let chosen = s.chosen;
    s.budget.age(now_ns, policy.budget_half_life_ns);
    // Figures from another run or long ago describe another moment: a fresh sample replaces them.
    if stats[backend].is_stale(now_ns, policy.stale_ns) {
        stats[backend].keep_recent(0);
    }
    if backend == chosen {
        let mine = &mut stats[backend];
        mine.push(ns, now_ns);
        // Running faster now than over its window by more than the drift band: the
        // window's older figures are from a busier moment, and comparing a fresh
        // alternative with them would favour it by as much.
        if let (Some(centre), Some(pace)) = (mine.centre(), mine.pace()) {
            if mine.recent_ns.len() > PACE && centre > pace * (1.0 + policy.drift_band) {
                mine.keep_recent(PACE);
            }
        }
        let calls_ns = ns as f64 * interval.max(1.0);
        s.budget.calls_ns += calls_ns;
        return (Timed::Chosen, Charge { calls_ns, extra_ns: 0.0 });
    }
    // A re-timed alternative. Its figures from a busier moment describe another machine.
    let mine = &stats[chosen];
    let (busier, chosen_centre, pace) =
        (from_a_busier_moment(calmer_since(&stats[backend], mine, policy), policy), mine.centre(), mine.pace());
    if busier {
        stats[backend].keep_recent(0);
    }
    stats[backend].push(ns, now_ns);
    stats[backend].against_ns = pace;
    let Some(c) = chosen_centre else { return (Timed::Alternative { takes_over: false }, Charge::NONE) };
    // What the chosen backend would have taken now, not over its window: a probe
    // during a load is charged beyond the chosen backend's pace under that load.
    let extra_ns = (ns as f64 - pace.unwrap_or(c)).max(0.0);
    s.budget.extra_ns += extra_ns;
    let (alt, mine) = (&stats[backend], &stats[chosen]);
    let measured = u64::from(alt.fresh) >= policy.samples || alt.centre().is_some_and(|a| a > policy.prune_factor * c);
    if measured {
        s.deferred.remove(backend);
    }
    let faster = alt.fresh >= policy.switch_after && beats(alt, mine, policy.tolerance);
    let simpler_tie = backend < chosen
        && alt.fresh >= policy.confident
        && alt.centre().is_some_and(|a| a <= c * (1.0 + policy.tolerance));
    (Timed::Alternative { takes_over: faster || simpler_tie }, Charge { calls_ns: 0.0, extra_ns })
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
/// re-time (see the module docs of `policy`), or `None` for the chosen backend.
///
/// `candidates`: the backends that may run now; `predicted`: what predicts a backend not
/// measured here (a GPU that became ready after the bucket settled, a candidate the
/// exploration deferred in another process), read as exploring reads it
/// (`Predictions::for_pruning`); a candidate the exploration deferred here has the
/// estimate it was deferred with. One with neither figures nor an estimate is re-timed only if it was
/// deferred and both budgets are in credit; one estimated over [`Policy::call_cap`] × the
/// chosen backend's centre never is. The budget is [`Policy::probe_budget`] of the
/// bucket's time; the process's (`process_left_ns`) bounds it too.
pub(super) fn probe(
    stats: &PerCandidate<BackendStats>,
    s: &mut Settled,
    candidates: CandidateSet,
    predicted: &Predictions,
    (now_ns, process_left_ns): (u64, f64),
    policy: &Policy,
) -> Option<Candidate> {
    let chosen = s.chosen;
    if std::mem::take(&mut s.budget.last_was_probe) {
        return None;
    }
    s.budget.age(now_ns, policy.budget_half_life_ns);
    let chosen_stats = &stats[chosen];
    let c = chosen_stats.centre()?;
    let c_hi = c + chosen_stats.half_width();
    // A deferred candidate that can no longer run, or is estimated hopeless, is not waited for.
    for b in s.deferred.set().iter() {
        let hopeless = s.deferred.estimate(b, stats).is_some_and(|e| e > policy.prune_factor * c);
        if !candidates.contains(b) || hopeless || b == chosen {
            s.deferred.remove(b);
        }
    }
    let budget_left = s.budget.left(policy.probe_budget).min(process_left_ns);
    // What exploring would predict of each alternative, against the chosen backend's centre.
    let here = stats.map_ref(BackendStats::centre);
    let predict = |b: Candidate| predicted.for_pruning(b, (chosen, c), &here, policy);
    let pick = candidates
        .without(chosen)
        .iter()
        .filter_map(|b| {
            let alt = &stats[b];
            let deferred = s.deferred.contains(b);
            // Figures taken on a busier machine are as much too slow as the chosen backend was then.
            let calm = calmer_since(alt, chosen_stats, policy);
            let then = from_a_busier_moment(calm, policy);
            let known = s.deferred.estimate(b, stats).or_else(|| predict(b));
            // Fewer figures than exploring takes (a warm-up that pruned it, say) that a
            // prediction contradicts are judged by the prediction: a first call's page
            // faults must not exclude it.
            let thin = (alt.recent_ns.len() as u64) < policy.samples;
            let contradicted = |e: f64| if thin { predict(b).map_or(e, |p| p.min(e)) } else { e };
            let Some(estimate) = alt.centre().map(|e| contradicted(e / calm)).or(known) else {
                // Deferred with nothing to tell its cost: once, while the budgets are in credit.
                return (deferred && budget_left >= 0.0).then_some((alt.fresh, b));
            };
            let stale = !alt.is_empty() && (then || alt.is_stale(now_ns, policy.stale_ns));
            // Hopeless by fresh figures or by prediction; stale figures are re-timed (within the
            // budget), unless even they are beyond the call cap.
            let hopeless = estimate > policy.prune_factor * c && !stale;
            // The cap judges the figure as measured unless the machine was busier then by more
            // than the drift band: within it, the chosen backend's pace is noise.
            let capped = if then { estimate } else { alt.centre().unwrap_or(estimate) };
            if !estimate.is_finite() || hopeless || capped > policy.call_cap * c {
                return None;
            }
            let few = alt.fresh < policy.confident;
            let old = alt.is_empty() || stale;
            // A full window of fresh figures that still overlaps is a tie: more samples
            // cannot narrow a window's interval, only test it again and again until noise
            // separates it once. It is re-timed when its figures are old.
            let overlaps = alt.fresh < WINDOW as u32 && estimate - alt.half_width() <= c_hi;
            // Charged optimistically (the low end of its interval, UCB-style): figures
            // taken under load are wide and high, and the budget counts what the
            // probe really costs once it ran, so the 1% holds over time. Not for the GPU:
            // a GPU call is made only when its figure fits the budget.
            let optimistic = b != Candidate::Gpu && alt.recent_ns.len() >= 2;
            let low = if optimistic { (estimate - alt.half_width()).max(0.0) } else { estimate };
            let extra = (low - c).max(0.0);
            // One no slower than the chosen backend costs nothing beyond it: no debt stops
            // it (a debt only shrinks by half-lives, and that one may be the faster).
            let affordable = extra == 0.0 || extra <= budget_left;
            ((few || old || overlaps) && affordable).then_some((alt.fresh, b))
        })
        .min();
    let (_, b) = pick?;
    s.budget.last_was_probe = true;
    Some(b)
}

/// How many times faster the settled backend (`chosen`) runs now than when `alt`'s
/// figures were taken (at least 1): its pace then ([`BackendStats::against_ns`]) over
/// its pace now ([`BackendStats::pace`], once it has [`Policy::samples`] samples since
/// the bucket settled). Above 1 by more than [`Policy::drift_band`], the machine was
/// busier then (a competing load while exploring, or while an alternative was
/// re-timed), and `alt`'s figures are too slow by about as much: [`probe`] scales them
/// by it and re-times them (even ones that looked hopeless), and [`timed`] replaces
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

/// Whether the chosen backend has degraded past the drift band against another
/// backend's recent figures (see [`beats`]), once it has [`Policy::drift_samples`]
/// samples since the bucket settled: the fastest such backend, if any. Then the bucket
/// re-explores, or, for a decision loaded from history, that backend takes over. Old
/// figures (from another run, or older than [`Policy::stale_ns`]) are not compared with:
/// [`probe`] re-times them first.
pub(super) fn drifted(
    stats: &PerCandidate<BackendStats>,
    s: &Settled,
    now_ns: u64,
    policy: &Policy,
) -> Option<Candidate> {
    if s.base.since(stats, s.chosen) < policy.drift_samples {
        return None;
    }
    let mine = &stats[s.chosen];
    stats
        .iter()
        .filter(|&(b, other)| b != s.chosen && !other.is_empty() && !other.is_stale(now_ns, policy.stale_ns))
        .filter(|(_, other)| beats(other, mine, policy.drift_band))
        .filter_map(|(b, other)| other.centre().map(|c| (b, c)))
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .map(|(b, _)| b)
}
