//! What is known about one size bucket of one kernel ([`BucketState`]) and
//! where it stands ([`Phase`]).
//!
//! A bucket is in one of three phases, and each holds only what that phase
//! needs:
//!
//! - [`Exploring`]: candidates are being measured; which were pruned this round,
//!   which the exploration budget deferred, what the round's calls cost, and how
//!   long the round waited for a candidate that could not run yet.
//! - [`Confirming`]: a decision loaded from history that is re-timed before it is
//!   trusted (a GPU decision, or another machine's); the figure it was saved with,
//!   and for another machine's decision the alternatives to re-time against it.
//!   Calls already go to its backend.
//! - [`Settled`]: the chosen backend, how it was decided (and whether it was
//!   loaded from this machine's history), the candidates exploration deferred, and
//!   the budget of re-timing alternatives.
//!
//! The figures per backend ([`BackendStats`]), the exclusions by `verify` and
//! the typical size belong to the bucket whatever its phase. The rules that move
//! a bucket between phases are `policy`'s, applied by `policy::step`; the
//! methods here are the moves themselves.

use super::spec::DecisionKind;
use super::stats::BackendStats;
#[cfg(test)]
use crate::backend::Backend;
use crate::candidate::{Candidate, CandidateSet, PerCandidate};

/// Everything known about one size bucket of one kernel.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BucketState {
    /// Per-backend samples.
    pub(crate) stats: PerCandidate<BackendStats>,
    /// A size seen in this bucket (the first), to scale predictions between buckets.
    pub(crate) typical_size: usize,
    /// The threads of the pool its calls were made with, the last time one was routed
    /// or timed (0 before): what its narrower Parallel candidates' widths meant
    /// (`Candidate::narrow_threads`), in its table and its saved records.
    pub(crate) pool: usize,
    /// Backends whose result disagreed with Scalar's here (`verify`): never candidates again.
    pub(crate) excluded: PerCandidate<Option<Exclusion>>,
    /// Backends whose result was compared with Scalar's here in this process.
    pub(crate) compared: CandidateSet,
    /// Where the bucket stands.
    pub(crate) phase: Phase,
}

/// Where a bucket stands (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Phase {
    /// Still measuring candidates.
    Exploring(Exploring),
    /// Calls go to a decision loaded from history, re-timed before it is trusted.
    Confirming(Confirming),
    /// Decided; calls go to the chosen backend and only a sample is timed.
    Settled(Settled),
}

/// An exploration round.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Exploring {
    /// Each backend's sample count when the round began.
    pub(crate) base: Counts,
    /// Backends ruled out for the round (predicted or measured too slow).
    pub(crate) pruned: CandidateSet,
    /// Calls of the round that waited for a candidate that could not run yet.
    pub(crate) waited: u32,
    /// The run of consecutive calls the round is making on one candidate, if any yet.
    pub(crate) run: Option<Run>,
    /// When the round's last timed call ended (process clock, nanoseconds), if any did.
    pub(crate) last_end_ns: Option<u64>,
    /// What the round's calls took, and what calls on candidates other than the best known
    /// cost beyond it (`policy::explore`'s budget).
    pub(crate) budget: Budget,
    /// Candidates the budget could not afford to measure (yet), with the estimate (ns) that
    /// made them too dear; they are measured after settling, by re-timing.
    pub(crate) deferred: Deferred,
}

/// Candidates the exploration budget deferred (see `policy::explore`), each with the
/// estimate in nanoseconds that made it too dear (NaN: none), and the kernel's
/// Scalar-to-SIMD ratio where one was known, so that a deferred Scalar's estimate follows
/// SIMD's figures once SIMD is measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Deferred {
    estimates: PerCandidate<Option<f64>>,
    /// The kernel's own Scalar-to-SIMD time ratio (`policy::Predictions::scalar_per_simd`).
    pub(crate) scalar_per_simd: Option<f64>,
}

impl Deferred {
    /// Defers `candidate`, estimated at `estimate` ns (`None`: nothing estimates it).
    pub(crate) fn insert(&mut self, candidate: Candidate, estimate: Option<f64>) {
        self.estimates[candidate] = Some(estimate.unwrap_or(f64::NAN));
    }

    /// `candidate` is deferred no more.
    pub(crate) fn remove(&mut self, candidate: Candidate) {
        self.estimates[candidate] = None;
    }

    /// Whether `candidate` is deferred.
    pub(crate) fn contains(&self, candidate: Candidate) -> bool {
        self.estimates[candidate].is_some()
    }

    /// The deferred candidates.
    pub(crate) fn set(&self) -> CandidateSet {
        CandidateSet::from_fn(|c| self.contains(c))
    }

    /// A deferred candidate's estimate (ns), given the bucket's figures: the one it was
    /// deferred with, or for Scalar, the kernel's ratio times SIMD's figure (measured, or
    /// as deferred) where that is higher. `None` for one not deferred or not estimated.
    pub(crate) fn estimate(&self, candidate: Candidate, stats: &PerCandidate<BackendStats>) -> Option<f64> {
        let own = self.estimates[candidate].filter(|e| e.is_finite());
        let simd = || stats[Candidate::Simd].centre().or(self.estimates[Candidate::Simd].filter(|e| e.is_finite()));
        let by_ratio = match (candidate, self.scalar_per_simd) {
            (Candidate::Scalar, Some(r)) if self.contains(candidate) => simd().map(|s| s * r),
            _ => None,
        };
        match (own, by_ratio) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Consecutive exploring calls of one candidate (see `policy::explore`): its first timed
/// calls ran after another candidate's, on a sleeping pool or cold caches, and are its
/// warm-up, not its figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    /// The candidate.
    pub(crate) candidate: Candidate,
    /// Its timed calls in this run so far.
    pub(crate) timed: u32,
}

impl Exploring {
    /// A round that begins with `base` counts.
    pub(crate) fn new(base: Counts) -> Exploring {
        Exploring {
            base,
            pruned: CandidateSet::EMPTY,
            waited: 0,
            run: None,
            last_end_ns: None,
            budget: Budget::default(),
            deferred: Deferred::default(),
        }
    }
}

/// A decision in force.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Settled {
    /// The chosen candidate.
    pub(crate) chosen: Candidate,
    /// How it was decided.
    pub(crate) by: DecisionKind,
    /// Each backend's sample count when the bucket settled.
    pub(crate) base: Counts,
    /// What re-timing alternatives has cost (see `policy::settled::probe`).
    pub(crate) budget: Budget,
    /// Candidates the exploration deferred and that are still to be measured, with their
    /// estimates (ns): re-timed within the settled bucket's budget.
    pub(crate) deferred: Deferred,
    /// The decision was loaded from this machine's history for this kernel: it is trusted
    /// (re-timed by the ordinary sampling; an alternative that beats it takes over, no new
    /// exploration round).
    pub(crate) loaded: bool,
}

/// A decision loaded from history, awaiting confirmation (see `policy::confirm`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Confirming {
    /// The decision, as it will stand once confirmed.
    pub(crate) settled: Settled,
    /// The chosen backend's centre as saved, in nanoseconds.
    pub(crate) saved_ns: f64,
    /// For a decision from another machine's entry: the alternatives its figures put
    /// within reach of the chosen backend, each re-timed here before the decision is
    /// confirmed. `None` for this machine's own history.
    pub(crate) contenders: Option<CandidateSet>,
}

/// Each backend's sample count at one moment (a round's start, a settling), to
/// count the samples taken since.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Counts(PerCandidate<u64>);

impl Counts {
    /// The counts of `stats` now.
    pub(crate) fn of(stats: &PerCandidate<BackendStats>) -> Counts {
        Counts(stats.map_ref(|s| s.count))
    }

    /// Samples of `candidate` in `stats` taken since.
    pub(crate) fn since(&self, stats: &PerCandidate<BackendStats>, candidate: Candidate) -> u64 {
        stats[candidate].count.saturating_sub(self.0[candidate])
    }
}

/// Why a backend is excluded from a bucket: a call whose result disagreed with Scalar's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Exclusion {
    /// The call's size.
    pub(crate) size: usize,
    /// The largest difference from the Scalar result.
    pub(crate) largest_error: f64,
}

/// The time a bucket's calls took and what calls on candidates other than the best known
/// cost on top: an exploration round's (each call is timed), or a settled bucket's
/// (re-timed alternatives).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Budget {
    /// Estimated time of all calls since the round began or the bucket settled, in
    /// nanoseconds (each timed call of a settled bucket stands for the calls it samples).
    pub(crate) calls_ns: f64,
    /// Time calls on other candidates than the best known took beyond what it would have, in nanoseconds.
    pub(crate) extra_ns: f64,
    /// The last sampled call re-timed an alternative (the next one times the chosen backend).
    pub(crate) last_was_probe: bool,
    /// When both sides of the ledger last halved (process clock, nanoseconds; 0: not yet).
    pub(crate) aged_ns: u64,
}

impl Budget {
    /// What is left to spend at `share` of the calls' time (negative: in debt).
    pub(crate) fn left(&self, share: f64) -> f64 {
        share * self.calls_ns - self.extra_ns
    }

    /// Halves both sides of the ledger once per `half_life_ns` elapsed up to `now_ns`: the
    /// budget holds over any stretch of a few half-lives, and an old overrun is forgotten.
    pub(crate) fn age(&mut self, now_ns: u64, half_life_ns: u64) {
        if self.aged_ns == 0 || half_life_ns == 0 {
            self.aged_ns = now_ns;
            return;
        }
        let halvings = now_ns.saturating_sub(self.aged_ns) / half_life_ns;
        if halvings > 0 {
            let f = 0.5f64.powi(halvings.min(64) as i32);
            self.calls_ns *= f;
            self.extra_ns *= f;
            self.aged_ns += halvings * half_life_ns;
        }
    }
}

impl BucketState {
    /// A bucket nothing is known about yet.
    pub(crate) fn new(typical_size: usize) -> Self {
        BucketState {
            stats: PerCandidate::default(),
            typical_size,
            pool: 0,
            excluded: PerCandidate::default(),
            compared: CandidateSet::EMPTY,
            phase: Phase::Exploring(Exploring::new(Counts::default())),
        }
    }

    /// Samples of `candidate` in this bucket.
    pub(crate) fn of(&self, candidate: impl Into<Candidate>) -> &BackendStats {
        &self.stats[candidate.into()]
    }

    /// The candidate calls go to: the settled one, or the loaded one being confirmed.
    pub(crate) fn chosen(&self) -> Option<Candidate> {
        self.decision().map(|s| s.chosen)
    }

    /// The backend of [`BucketState::chosen`].
    #[cfg(test)]
    pub(crate) fn chosen_backend(&self) -> Option<Backend> {
        self.chosen().map(Candidate::backend)
    }

    /// The decision calls go to: settled, or loaded and being confirmed.
    pub(crate) fn decision(&self) -> Option<&Settled> {
        match &self.phase {
            Phase::Exploring(_) => None,
            Phase::Confirming(c) => Some(&c.settled),
            Phase::Settled(s) => Some(s),
        }
    }

    /// How the bucket was decided ([`DecisionKind::Exploring`] while it is not).
    pub(crate) fn decided_by(&self) -> DecisionKind {
        self.decision().map_or(DecisionKind::Exploring, |s| s.by)
    }

    /// Whether `candidate` is ruled out in the current exploration round.
    pub(crate) fn is_pruned(&self, candidate: impl Into<Candidate>) -> bool {
        let candidate = candidate.into();
        matches!(&self.phase, Phase::Exploring(round) if round.pruned.contains(candidate))
    }

    /// The loaded decision awaiting confirmation, if any.
    pub(crate) fn confirming(&self) -> Option<&Confirming> {
        match &self.phase {
            Phase::Confirming(c) => Some(c),
            _ => None,
        }
    }

    /// Whether the decision came from another machine's entry and this process has
    /// not confirmed it yet (shown in the table; such a bucket is not saved).
    pub(crate) fn is_borrowed(&self) -> bool {
        self.confirming().is_some_and(|c| c.contenders.is_some())
    }

    /// `candidates` without the backends excluded here.
    pub(crate) fn allowed(&self, candidates: CandidateSet) -> CandidateSet {
        CandidateSet::from_fn(|b| candidates.contains(b) && self.excluded[b].is_none())
    }

    /// Whether any backend has any sample here.
    pub(crate) fn has_history(&self) -> bool {
        self.stats.values().any(|s| !s.is_empty())
    }

    /// Starts a new exploration round: every backend must be measured afresh, and
    /// only the newest `keep` old samples of each are kept so stale figures fade
    /// quickly (another machine's are dropped: from now on this machine decides).
    pub(crate) fn restart_round(&mut self, keep: usize) {
        for s in self.stats.values_mut() {
            if s.borrowed {
                *s = BackendStats::default();
            }
            s.keep_recent(keep);
        }
        let base = Counts::of(&self.stats);
        self.phase = Phase::Exploring(Exploring::new(base));
    }

    /// Settles on `chosen`: what is known from now on counts as fresh, the probe budget
    /// starts over, and the other candidates' figures are marked as taken at `chosen`'s
    /// current pace ([`BackendStats::against_ns`]). Nothing is deferred (see [`BucketState::defer`]).
    pub(crate) fn settle_on(&mut self, chosen: Candidate, by: DecisionKind) {
        let pace = self.stats[chosen].pace();
        for (c, s) in Candidate::ALL.into_iter().zip(self.stats.values_mut()) {
            s.fresh = 0;
            s.against_ns = if c == chosen || s.is_empty() { None } else { pace };
        }
        let base = Counts::of(&self.stats);
        let settled =
            Settled { chosen, by, base, budget: Budget::default(), deferred: Deferred::default(), loaded: false };
        self.phase = Phase::Settled(settled);
    }

    /// Leaves `deferred` candidates (with their estimates) to be measured by re-timing after
    /// settling. Nothing changes unless settled.
    pub(crate) fn defer(&mut self, deferred: Deferred) {
        if let Phase::Settled(s) = &mut self.phase {
            s.deferred = deferred;
        }
    }

    /// Marks the settled decision as loaded from this machine's history, and trusted.
    /// Nothing changes unless settled.
    pub(crate) fn trust_loaded(&mut self) {
        if let Phase::Settled(s) = &mut self.phase {
            s.loaded = true;
        }
    }

    /// Makes the settled decision one loaded from history, confirmed only once re-timed
    /// (`saved_ns`: its backend's centre as saved; `contenders`, for another machine's
    /// decision, the alternatives to re-time against it). Nothing changes unless settled.
    pub(crate) fn await_confirmation(&mut self, saved_ns: f64, contenders: Option<CandidateSet>) {
        if let Phase::Settled(settled) = self.phase {
            self.phase = Phase::Confirming(Confirming { settled, saved_ns, contenders });
        }
    }

    /// Drops `candidate`'s samples if they are another machine's (before this process keeps one of its own).
    pub(crate) fn drop_borrowed(&mut self, candidate: Candidate) {
        if self.stats[candidate].borrowed {
            // The count since the round began (or the bucket settled) stays what it
            // was: only the other machine's samples go.
            let count = self.stats[candidate].count;
            let base = match &mut self.phase {
                Phase::Exploring(round) => &mut round.base,
                Phase::Confirming(c) => &mut c.settled.base,
                Phase::Settled(s) => &mut s.base,
            };
            base.0[candidate] = base.0[candidate].saturating_sub(count);
            self.stats[candidate] = BackendStats::default();
        }
    }
}
