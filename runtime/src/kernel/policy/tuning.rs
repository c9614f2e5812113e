//! [`Policy`]: the router's tuning constants, in one place. What each governs
//! is said where it is used (the files of `policy`); the values are
//! [`Policy::DEFAULT`].

/// The router's tuning constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Policy {
    /// Kept samples each candidate needs before a bucket settles.
    pub(crate) samples: u64,
    /// Timed calls at the start of each run of an exploring Parallel candidate that are its
    /// warm-up, not kept (`explore::timed`).
    pub(crate) run_warmup: u32,
    /// The longest pause (nanoseconds) between a bucket's calls, or the call's own time if
    /// longer, after which they still come back to back: only then does a run's first call
    /// follow another candidate's closely enough to find a pool that the other left asleep
    /// where the later ones do not.
    pub(crate) run_gap_ns: u64,
    /// A candidate estimated slower than this multiple of the best measured centre is skipped.
    pub(crate) prune_factor: f64,
    /// A neighbouring bucket's measurement prunes a candidate unmeasured here only when
    /// its typical size is within this factor of the call's (either way).
    pub(crate) prune_reach: f64,
    /// A smaller bucket's Scalar-to-SIMD ratio predicts one of the two from the other
    /// (to order and prune candidates) when the bucket's typical size is within this
    /// factor of the call's.
    pub(crate) ratio_reach: f64,
    /// A CPU candidate *predicted* below this (nanoseconds) and within [`Policy::call_cap`]
    /// of the best is measured rather than pruned: a sample costs less than a misprediction.
    pub(crate) measure_below_ns: f64,
    /// No exploring call or re-timing goes to a candidate estimated slower than this multiple
    /// of the best measured; a Parallel candidate's wake-up call (a run's first, or the
    /// process's first) is pruned only beyond it.
    pub(crate) call_cap: f64,
    /// Share of an exploring bucket's time (and of the process's) that calls on candidates
    /// other than the best known may cost beyond it.
    pub(crate) explore_share: f64,
    /// Centres within this fraction of the best tie (and the tie-break decides); a settled
    /// choice is replaced only by a backend faster by more than this beyond both intervals.
    pub(crate) tolerance: f64,
    /// A settled choice beaten by another backend's recent figures by more than this fraction
    /// (beyond both confidence intervals) re-explores; figures taken while the chosen backend
    /// ran slower than now by more than this are from a busier moment.
    pub(crate) drift_band: f64,
    /// Samples of the chosen backend needed since settling before drift is judged.
    pub(crate) drift_samples: u64,
    /// Share of a settled bucket's time that re-timing alternatives (those the exploration
    /// deferred included) may cost on top.
    pub(crate) probe_budget: f64,
    /// The budgets' memory (nanoseconds of wall time): both sides of a ledger (a bucket's,
    /// the process's) halve this often, so a budget holds over any stretch of a few
    /// half-lives, and a few probes that ran long (a preempted call) do not stop re-timing
    /// for minutes in a bucket called a few times a second.
    pub(crate) budget_half_life_ns: u64,
    /// Fresh samples of an alternative after which only an overlapping interval or age re-times it.
    pub(crate) confident: u32,
    /// Figures older than this (nanoseconds) are re-timed.
    pub(crate) stale_ns: u64,
    /// Fresh samples an alternative needs before it can replace the chosen backend.
    pub(crate) switch_after: u32,
    /// Fresh samples of a confirmed decision's backend (a GPU decision, another machine's)
    /// before it is judged.
    pub(crate) confirm_samples: u32,
    /// A confirmed decision whose fresh figures are off the saved one by more than this factor re-explores.
    pub(crate) confirm_factor: f64,
    /// Exploring calls a bucket spends waiting for candidates that may run only later
    /// before it measures them anyway.
    pub(crate) wait_calls: u32,
    /// Timed calls in a row whose split loops ran on fewer threads than they had chunks for
    /// (a pool still waking) that are not kept as samples (`Kernel::observe_cold`).
    pub(crate) wake_samples: u32,
}

impl Policy {
    /// The values the router runs with.
    pub(crate) const DEFAULT: Policy = Policy {
        samples: 3,
        run_warmup: 1,
        run_gap_ns: 50_000,
        prune_factor: 4.0,
        prune_reach: 4.0,
        ratio_reach: 64.0,
        measure_below_ns: 50_000.0,
        call_cap: 10.0,
        explore_share: 0.10,
        tolerance: 0.05,
        drift_band: 0.25,
        drift_samples: 9,
        probe_budget: 0.01,
        budget_half_life_ns: 5_000_000_000,
        confident: 8,
        stale_ns: 30_000_000_000,
        switch_after: 3,
        confirm_samples: 5,
        confirm_factor: 2.0,
        wait_calls: 64,
        wake_samples: 8,
    };
}
