//! Timing history: what has been measured per (size bucket, backend), and the
//! robust statistics decisions are made from.
//!
//! Each backend keeps its most recent [`WINDOW`] kept samples. The *centre* is
//! their median and the *spread* their median absolute deviation, so a single
//! preempted sample 100× the others moves neither. This module is plain data:
//! no locks, clocks or I/O, which is what lets the router be tested with
//! injected timings and the history be saved as JSON.

use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::router::DecisionKind;

/// How many recent samples per (bucket, backend) the statistics are computed from.
pub const WINDOW: usize = 16;

/// Samples of one backend in one bucket.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendStats {
    /// Samples kept over this entry's whole life (warm-ups excluded).
    pub count: u64,
    /// The most recent samples in nanoseconds, oldest first, at most [`WINDOW`].
    pub recent_ns: Vec<u64>,
}

impl BackendStats {
    /// Adds one sample.
    pub fn record(&mut self, ns: u64) {
        self.count = self.count.saturating_add(1);
        if self.recent_ns.len() >= WINDOW {
            self.recent_ns.remove(0);
        }
        self.recent_ns.push(ns);
    }

    /// Whether any sample is held.
    pub fn is_empty(&self) -> bool {
        self.recent_ns.is_empty()
    }

    /// Median of the recent samples, in nanoseconds.
    pub fn centre(&self) -> Option<f64> {
        median(self.recent_ns.iter().map(|&x| x as f64).collect())
    }

    /// Median absolute deviation of the recent samples from their median, in nanoseconds.
    pub fn spread(&self) -> Option<f64> {
        let c = self.centre()?;
        median(self.recent_ns.iter().map(|&x| (x as f64 - c).abs()).collect())
    }

    /// Drops all but the most recent `keep` samples (used when a bucket re-explores).
    pub fn keep_recent(&mut self, keep: usize) {
        let drop = self.recent_ns.len().saturating_sub(keep);
        self.recent_ns.drain(..drop);
    }

    /// Keeps only well-formed data: at most [`WINDOW`] samples (used on data read from disk).
    pub(crate) fn sanitize(&mut self) {
        self.keep_recent(WINDOW);
        self.count = self.count.max(self.recent_ns.len() as u64);
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 })
}

/// Where a bucket stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Phase {
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketState {
    /// Per-backend samples, indexed by [`Backend::index`].
    pub stats: [BackendStats; 3],
    /// Exploring or settled.
    pub phase: Phase,
    /// A size seen in this bucket (the first), to scale predictions between buckets.
    pub typical_size: usize,
    /// Backends ruled out in the current exploration round (predicted or measured too slow).
    #[serde(default)]
    pub pruned: [bool; 3],
    /// `stats[i].count` when the current exploration round began.
    #[serde(default)]
    pub round_base: [u64; 3],
}

impl BucketState {
    /// A bucket nothing is known about yet.
    pub fn new(typical_size: usize) -> Self {
        BucketState {
            stats: Default::default(),
            phase: Phase::Exploring,
            typical_size,
            pruned: [false; 3],
            round_base: [0; 3],
        }
    }

    /// Samples of `backend` in this bucket.
    pub fn of(&self, backend: Backend) -> &BackendStats {
        &self.stats[backend.index()]
    }

    /// Samples of `backend` taken since the current exploration round began.
    pub fn round_samples(&self, backend: Backend) -> u64 {
        let i = backend.index();
        self.stats[i].count.saturating_sub(self.round_base[i])
    }

    /// Starts a new exploration round: every backend must be measured afresh, and
    /// only the newest few old samples are kept so stale figures fade quickly.
    pub fn restart_round(&mut self, keep: usize) {
        for s in &mut self.stats {
            s.keep_recent(keep);
        }
        self.round_base = [self.stats[0].count, self.stats[1].count, self.stats[2].count];
        self.pruned = [false; 3];
        self.phase = Phase::Exploring;
    }

    /// The settled backend, if any.
    pub fn settled(&self) -> Option<Backend> {
        match self.phase {
            Phase::Settled { backend, .. } => Some(backend),
            Phase::Exploring => None,
        }
    }

    /// Whether any backend has any sample here.
    pub fn has_history(&self) -> bool {
        self.stats.iter().any(|s| !s.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_mad_resist_one_outlier() {
        let mut s = BackendStats::default();
        for x in [100, 102, 98, 101, 99] {
            s.record(x);
        }
        s.record(10_000);
        assert_eq!(s.centre(), Some(100.5));
        assert!(s.spread().unwrap() < 3.0);
    }

    #[test]
    fn window_keeps_the_most_recent() {
        let mut s = BackendStats::default();
        for x in 0..(WINDOW as u64 + 5) {
            s.record(x);
        }
        assert_eq!(s.recent_ns.len(), WINDOW);
        assert_eq!(s.recent_ns[0], 5);
        assert_eq!(s.count, WINDOW as u64 + 5);
    }
}
