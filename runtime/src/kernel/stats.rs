//! Timing history: what has been measured per (size bucket, backend), and the
//! robust statistics decisions are made from.
//!
//! Each backend keeps its most recent [`WINDOW`] kept samples. The *centre* is
//! their median and the *spread* their median absolute deviation, so a single
//! preempted sample 100× the others moves neither. This module is plain data:
//! no locks, clocks or I/O, which is what lets the router be tested with
//! injected timings. (The history file has record types of its own, in
//! `crate::persist`; `kernel::snapshot` converts between the two.)

use super::spec::DecisionKind;
use crate::backend::Backend;
use crate::numeric::median;
use crate::per_backend::{BackendSet, PerBackend};

/// How many recent samples per (bucket, backend) the statistics are computed from.
pub(crate) const WINDOW: usize = 16;

/// How many of a backend's newest samples say how fast the machine runs it at the
/// moment ([`BackendStats::pace`]): few enough to follow a load that comes and goes
/// within a second, a median so one preempted call does not count.
pub(crate) const PACE: usize = 5;

/// Samples of one backend in one bucket.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct BackendStats {
    /// Samples kept over this entry's whole life (warm-ups excluded).
    pub(crate) count: u64,
    /// The most recent samples in nanoseconds, oldest first, at most [`WINDOW`].
    pub(crate) recent_ns: Vec<u64>,
    /// Samples kept since the bucket last settled (or was loaded): how much is known *now*.
    pub(crate) fresh: u32,
    /// When the newest sample was taken, on the process clock (`clock::now_ns`);
    /// 0 for samples from another run (loaded history) or none.
    pub(crate) last_ns: u64,
    /// The samples are another machine's (its entry was the nearest one): they order
    /// and judge nothing here beyond the loaded decision's check, are replaced by the
    /// first sample this process keeps, and are never saved as this machine's.
    pub(crate) foreign: bool,
    /// The settled backend's pace ([`BackendStats::pace`]) when this backend's newest
    /// sample was taken (or, for figures from exploration, when the bucket settled), in
    /// nanoseconds: how loaded the machine was when these figures were taken, measured
    /// on the backend they are compared with. `None` for the settled backend itself and
    /// while no decision stands.
    pub(crate) against_ns: Option<f64>,
}

impl BackendStats {
    /// Adds one sample taken at `now_ns` (process clock).
    pub(crate) fn record(&mut self, ns: u64, now_ns: u64) {
        self.count = self.count.saturating_add(1);
        self.fresh = self.fresh.saturating_add(1);
        self.last_ns = now_ns;
        if self.recent_ns.len() >= WINDOW {
            self.recent_ns.remove(0);
        }
        self.recent_ns.push(ns);
    }

    /// Whether any sample is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.recent_ns.is_empty()
    }

    /// Median of the recent samples, in nanoseconds.
    pub(crate) fn centre(&self) -> Option<f64> {
        median(&mut self.recent_ns.iter().map(|&x| x as f64).collect::<Vec<_>>())
    }

    /// Median of the newest [`PACE`] samples (fewer if fewer are held), in nanoseconds:
    /// how fast this backend runs at the moment, where [`BackendStats::centre`] says how
    /// fast it ran over its whole window.
    pub(crate) fn pace(&self) -> Option<f64> {
        let from = self.recent_ns.len().saturating_sub(PACE);
        median(&mut self.recent_ns[from..].iter().map(|&x| x as f64).collect::<Vec<_>>())
    }

    /// Median absolute deviation of the recent samples from their median, in nanoseconds.
    pub(crate) fn spread(&self) -> Option<f64> {
        let c = self.centre()?;
        median(&mut self.recent_ns.iter().map(|&x| (x as f64 - c).abs()).collect::<Vec<_>>())
    }

    /// Drops all but the most recent `keep` samples (used when a bucket re-explores).
    pub(crate) fn keep_recent(&mut self, keep: usize) {
        let drop = self.recent_ns.len().saturating_sub(keep);
        self.recent_ns.drain(..drop);
    }

    /// Half-width of an approximate 95% confidence interval of the centre, in
    /// nanoseconds: `2 × 1.4826 × MAD × 1.253 / √n` (the MAD scaled to a standard
    /// deviation, the median's efficiency, `n` samples). Infinite with fewer than
    /// two samples: nothing is known yet.
    pub(crate) fn half_width(&self) -> f64 {
        let n = self.recent_ns.len();
        match self.spread() {
            Some(mad) if n >= 2 => 2.0 * 1.4826 * 1.253 * mad / (n as f64).sqrt(),
            _ => f64::INFINITY,
        }
    }

    /// Whether these figures are old: from another run, or not refreshed for `stale_ns`.
    pub(crate) fn is_stale(&self, now_ns: u64, stale_ns: u64) -> bool {
        self.last_ns == 0 || now_ns.saturating_sub(self.last_ns) > stale_ns
    }

    /// Keeps only well-formed data: at most [`WINDOW`] samples (used on data read from disk).
    pub(crate) fn sanitize(&mut self) {
        self.keep_recent(WINDOW);
        self.count = self.count.max(self.recent_ns.len() as u64);
    }
}

/// Where a bucket stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Still measuring candidates.
    Exploring,
    /// Decided; calls go to `backend` and only a sample is timed.
    Settled {
        /// The chosen backend.
        backend: Backend,
        /// How it was decided.
        by: DecisionKind,
    },
}

/// Everything known about one size bucket of one kernel.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BucketState {
    /// Per-backend samples.
    pub(crate) stats: PerBackend<BackendStats>,
    /// Exploring or settled.
    pub(crate) phase: Phase,
    /// A size seen in this bucket (the first), to scale predictions between buckets.
    pub(crate) typical_size: usize,
    /// Backends ruled out in the current exploration round (predicted or measured too slow).
    pub(crate) pruned: BackendSet,
    /// `stats[i].count` when the current exploration round began.
    pub(crate) round_base: PerBackend<u64>,
    /// What self-correction spends while settled (see `policy::probe`).
    pub(crate) budget: ProbeBudget,
    /// Set for a decision loaded from history until its chosen backend has been re-timed.
    pub(crate) verify: Option<Verify>,
    /// The decision came from another machine's entry and this process has not
    /// confirmed it yet (shown in the table; such a bucket is not saved).
    pub(crate) foreign: bool,
    /// Backends whose result disagreed with Scalar's here (`verify`): never candidates again.
    pub(crate) excluded: PerBackend<Option<Exclusion>>,
    /// Backends whose result was compared with Scalar's here in this process.
    pub(crate) checked: BackendSet,
    /// Exploring calls this round spent waiting for a candidate that could not run yet.
    pub(crate) waited: u32,
}

/// Why a backend is excluded from a bucket: a call whose result disagreed with Scalar's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Exclusion {
    /// The call's size.
    pub(crate) size: usize,
    /// The largest difference from the Scalar result.
    pub(crate) largest_error: f64,
}

/// The time a settled bucket's calls took and what re-timing alternatives cost on top.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ProbeBudget {
    /// Estimated time of all calls since the bucket settled, in nanoseconds
    /// (each timed call of the chosen backend stands for the calls it samples).
    pub(crate) calls_ns: f64,
    /// Time re-timed alternatives took beyond what the chosen backend would have, in nanoseconds.
    pub(crate) extra_ns: f64,
    /// The last sampled call re-timed an alternative (the next one times the chosen backend).
    pub(crate) last_was_probe: bool,
    /// When both sides of the ledger last halved (process clock, nanoseconds; 0: not yet).
    pub(crate) aged_ns: u64,
}

impl ProbeBudget {
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

/// A loaded decision awaiting confirmation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Verify {
    /// The chosen backend's centre as saved, in nanoseconds.
    pub(crate) saved_centre: f64,
    /// For a decision from another machine's entry: the alternatives its figures put
    /// within reach of the chosen backend, each re-timed here before the decision is
    /// confirmed (see `policy`'s warm start). `None` for this machine's own history.
    pub(crate) foreign: Option<BackendSet>,
}

impl BucketState {
    /// A bucket nothing is known about yet.
    pub(crate) fn new(typical_size: usize) -> Self {
        BucketState {
            stats: Default::default(),
            phase: Phase::Exploring,
            typical_size,
            pruned: BackendSet::EMPTY,
            round_base: PerBackend::default(),
            budget: ProbeBudget::default(),
            verify: None,
            foreign: false,
            excluded: PerBackend::default(),
            checked: BackendSet::EMPTY,
            waited: 0,
        }
    }

    /// Samples of `backend` in this bucket.
    pub(crate) fn of(&self, backend: Backend) -> &BackendStats {
        &self.stats[backend]
    }

    /// Samples of `backend` taken since the current exploration round began.
    pub(crate) fn round_samples(&self, backend: Backend) -> u64 {
        self.stats[backend].count.saturating_sub(self.round_base[backend])
    }

    /// Starts a new exploration round: every backend must be measured afresh, and
    /// only the newest few old samples are kept so stale figures fade quickly (another
    /// machine's are dropped: from now on this machine decides).
    pub(crate) fn restart_round(&mut self, keep: usize) {
        for s in self.stats.values_mut() {
            if s.foreign {
                *s = BackendStats::default();
            }
            s.keep_recent(keep);
        }
        self.round_base = self.stats.map_ref(|s| s.count);
        self.pruned = BackendSet::EMPTY;
        self.waited = 0;
        self.phase = Phase::Exploring;
        self.verify = None;
        self.foreign = false;
    }

    /// Drops `backend`'s samples if they are another machine's (before this process keeps one of its own).
    pub(crate) fn drop_foreign(&mut self, backend: Backend) {
        if self.stats[backend].foreign {
            // The round's count stays what it was: only the other machine's samples go.
            self.round_base[backend] = self.round_base[backend].saturating_sub(self.stats[backend].count);
            self.stats[backend] = BackendStats::default();
        }
    }

    /// Settles on `backend`: what is known from now on counts as fresh, the probe budget
    /// starts over, and the other backends' figures are marked as taken at `backend`'s
    /// current pace ([`BackendStats::against_ns`]).
    pub(crate) fn settle_on(&mut self, backend: Backend, by: DecisionKind) {
        self.phase = Phase::Settled { backend, by };
        self.round_base = self.stats.map_ref(|s| s.count);
        let pace = self.stats[backend].pace();
        for (b, s) in Backend::ALL.into_iter().zip(self.stats.values_mut()) {
            s.fresh = 0;
            s.against_ns = if b == backend || s.is_empty() { None } else { pace };
        }
        self.budget = ProbeBudget::default();
    }

    /// The settled backend, if any.
    pub(crate) fn settled(&self) -> Option<Backend> {
        match self.phase {
            Phase::Settled { backend, .. } => Some(backend),
            Phase::Exploring => None,
        }
    }

    /// `candidates` without the backends excluded here.
    pub(crate) fn allowed(&self, candidates: BackendSet) -> BackendSet {
        BackendSet::from_fn(|b| candidates.contains(b) && self.excluded[b].is_none())
    }

    /// Whether any backend has any sample here.
    pub(crate) fn has_history(&self) -> bool {
        self.stats.values().any(|s| !s.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_mad_resist_one_outlier() {
        let mut s = BackendStats::default();
        for x in [100, 102, 98, 101, 99] {
            s.record(x, 1);
        }
        s.record(10_000, 1);
        assert_eq!(s.centre(), Some(100.5));
        assert!(s.spread().unwrap() < 3.0);
    }

    #[test]
    fn window_keeps_the_most_recent() {
        let mut s = BackendStats::default();
        for x in 0..(WINDOW as u64 + 5) {
            s.record(x, 1);
        }
        assert_eq!(s.recent_ns.len(), WINDOW);
        assert_eq!(s.recent_ns[0], 5);
        assert_eq!(s.count, WINDOW as u64 + 5);
    }
}
