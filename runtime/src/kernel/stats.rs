//! Timing statistics: what has been measured of one backend in one size
//! bucket ([`BackendStats`]), and the robust figures decisions are made from.
//!
//! Each backend keeps its most recent [`WINDOW`] kept samples. The *centre* is
//! their median and the *spread* their median absolute deviation, so a single
//! preempted sample 100× the others moves neither. This module is plain data:
//! no locks, clocks or I/O, which is what lets the router be tested with
//! injected timings. (A bucket's phases are in `bucket_state`; the history file
//! has record types of its own, in `crate::persist`; `kernel::snapshot`
//! converts between the two.)

use crate::numeric::median;

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
    pub(crate) borrowed: bool,
    /// The settled backend's pace ([`BackendStats::pace`]) when this backend's newest
    /// sample was taken (or, for figures from exploration, when the bucket settled), in
    /// nanoseconds: how loaded the machine was when these figures were taken, measured
    /// on the backend they are compared with. `None` for the settled backend itself and
    /// while no decision stands.
    pub(crate) against_ns: Option<f64>,
}

impl BackendStats {
    /// Adds one sample taken at `now_ns` (process clock).
    pub(crate) fn push(&mut self, ns: u64, now_ns: u64) {
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

    /// Drops all but the most recent `keep` samples.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_mad_resist_one_outlier() {
        let mut s = BackendStats::default();
        for x in [100, 102, 98, 101, 99] {
            s.push(x, 1);
        }
        s.push(10_000, 1);
        assert_eq!(s.centre(), Some(100.5));
        assert!(s.spread().unwrap() < 3.0);
    }

    #[test]
    fn window_keeps_the_most_recent() {
        let mut s = BackendStats::default();
        for x in 0..(WINDOW as u64 + 5) {
            s.push(x, 1);
        }
        assert_eq!(s.recent_ns.len(), WINDOW);
        assert_eq!(s.recent_ns[0], 5);
        assert_eq!(s.count, WINDOW as u64 + 5);
    }
}
