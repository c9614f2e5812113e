//! What [`step`](super::step) is told ([`Event`], with the inputs the site
//! gathered for it) and what it answers ([`Outcome`]: what the site publishes).

use super::predictions::Predictions;
use crate::candidate::Candidate;
use crate::candidate::CandidateSet;
use crate::kernel::spec::{Decision, DecisionKind};

/// Something that happened to a bucket, with what the policy needs to know about it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event<'a> {
    /// A call found no cached decision: which backend runs it (the call is timed).
    Call(&'a CallInputs),
    /// A call in frozen mode found no cached decision: the bucket's decision, or
    /// `prior` for good (a backend not in `candidates` becomes Scalar).
    FrozenCall {
        /// The cold-start prior for the call.
        prior: Decision,
        /// The backends that may run here.
        candidates: CandidateSet,
    },
    /// A call of a bucket with a decision was picked for timing: time the chosen
    /// backend, or re-time an alternative.
    SampledCall {
        /// The backends that may run now, not excluded here.
        candidates: CandidateSet,
        /// What predicts each candidate's time at the bucket's typical size (neighbouring
        /// buckets, the kernel's Scalar-to-SIMD ratio, the cost model).
        predicted: &'a Predictions,
        /// Now, on the process clock.
        now_ns: u64,
        /// What the process's exploration budget has left, in nanoseconds (negative: in debt).
        process_left_ns: f64,
    },
    /// A timed call finished.
    Timed(Sample),
    /// A GPU call found the device failed: the GPU runs nothing any more.
    GpuFailed,
    /// `verify` compared `candidate`'s result with Scalar's on a call of `size`.
    Compared {
        /// The candidate compared.
        candidate: Candidate,
        /// The call's size.
        size: usize,
        /// The largest difference from Scalar's result when they disagreed; `None` when they agreed.
        disagreement: Option<f64>,
    },
}

/// What a call that found no cached decision needs decided, gathered by the site.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CallInputs {
    /// The backends that may run, now or [`later`](Self::later), not excluded here.
    pub(crate) candidates: CandidateSet,
    /// Candidates that may run, but not yet (Parallel while a GPU driver loads).
    pub(crate) later: CandidateSet,
    /// The cold-start prior for this call.
    pub(crate) prior: Decision,
    /// Predicted times of this call.
    pub(crate) predicted: Predictions,
    /// What the process's exploration budget has left, in nanoseconds (negative: in debt).
    pub(crate) process_left_ns: f64,
}

/// One timed call: `ns` on `candidate`, taken at `now_ns` on the process clock;
/// `interval` is how many calls this sample stands for (the sampling interval
/// of a settled bucket, 1 while exploring).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sample {
    pub(crate) candidate: Candidate,
    pub(crate) ns: u64,
    pub(crate) now_ns: u64,
    pub(crate) interval: f64,
    /// The first sample of this backend in this process: not kept (page faults,
    /// pipeline compilation, caches), but a warm-up already far slower than the
    /// best measured prunes its backend for the round (see `explore::prunes`).
    pub(crate) warmup: bool,
}

/// What [`step`](super::step) changed, for the site to publish: the decision
/// byte, a telemetry event, the history file.
#[derive(Clone, Copy, Debug, PartialEq)]
#[must_use = "an outcome is applied by the site's `publish`"]
pub(crate) struct Outcome {
    /// The backend the call that raised the event runs on ([`Event::Call`],
    /// [`Event::FrozenCall`], [`Event::SampledCall`]); `None` when the event routes no
    /// call, or the bucket has no decision to time.
    pub(crate) run: Option<Candidate>,
    /// What the bucket's decision byte becomes.
    pub(crate) publish: Publish,
    /// What to report.
    pub(crate) tell: Option<Tell>,
    /// The bucket's decision changed in a way worth saving.
    pub(crate) dirty: bool,
    /// What a timed call adds to the process's exploration budget.
    pub(crate) charge: Charge,
}

/// What a timed call adds to an exploration budget's ledger, in nanoseconds: the time of
/// the calls it stands for, and what it took beyond the best known candidate's time when
/// it ran another one (an exploring call, a warm-up, a re-timed alternative).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Charge {
    pub(crate) calls_ns: f64,
    pub(crate) extra_ns: f64,
}

impl Charge {
    /// Nothing.
    pub(crate) const NONE: Charge = Charge { calls_ns: 0.0, extra_ns: 0.0 };
}

/// What a bucket's decision byte becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Publish {
    /// It stays as it is.
    Keep,
    /// No decision: calls take the cold path (the bucket explores).
    Clear,
    /// Calls go to `candidate`, a sample of them timed as `sampling` says.
    Cache {
        /// The candidate.
        candidate: Candidate,
        /// How often its calls are timed.
        sampling: Sampling,
    },
}

/// How often a cached decision's calls are timed; the site turns it into an interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sampling {
    /// The interval a decision starts with, before the bucket's call rate is known.
    First,
    /// Every call: a decision loaded from history is being confirmed.
    EveryCall,
    /// The interval the bucket's call rate and the cost of timing ask for.
    ByRate,
    /// The interval the byte has now.
    Unchanged,
}

/// What to report of a change (the site adds the kernel, size and bucket).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Tell {
    /// A call was routed by a decision made on the cold path.
    Decision {
        /// The decision.
        decision: Pick,
        /// Whether the bucket had any figure before it.
        has_history: bool,
    },
    /// A bucket with a decision explores again.
    Reexplore,
    /// A re-timed alternative beat the chosen backend and replaced it.
    Corrected {
        /// The candidate chosen before.
        from: Candidate,
        /// The candidate chosen now.
        to: Candidate,
    },
    /// Another machine's decision was confirmed by this machine's timings.
    Confirmed(Candidate),
    /// `verify` excluded `backend` from the bucket: its result disagreed with Scalar's.
    Excluded {
        /// The candidate.
        candidate: Candidate,
        /// The largest difference from Scalar's result.
        largest_error: f64,
    },
}

/// A candidate picked to run a call, and why: a [`Decision`] with a width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pick {
    /// The candidate.
    pub(crate) candidate: Candidate,
    /// Why.
    pub(crate) kind: DecisionKind,
}

impl Pick {
    /// The decision as it is reported: its backend, and why.
    pub(crate) fn decision(self) -> Decision {
        Decision { backend: self.candidate.backend(), kind: self.kind }
    }
}

impl From<Decision> for Pick {
    /// A decision's backend's candidate (Parallel on the whole pool).
    fn from(d: Decision) -> Pick {
        Pick { candidate: Candidate::of(d.backend), kind: d.kind }
    }
}

impl Outcome {
    /// Nothing to publish.
    pub(crate) const NOTHING: Outcome =
        Outcome { run: None, publish: Publish::Keep, tell: None, dirty: false, charge: Charge::NONE };

    /// The bucket explores again: its byte is cleared, the change reported and saved.
    pub(crate) const REEXPLORE: Outcome =
        Outcome { run: None, publish: Publish::Clear, tell: Some(Tell::Reexplore), dirty: true, charge: Charge::NONE };

    /// This outcome with `charge` for the process's budget.
    pub(crate) fn charging(self, charge: Charge) -> Outcome {
        Outcome { charge, ..self }
    }

    /// This outcome followed by `later`'s, for two events of one call: the later one's
    /// byte and report win where it has any.
    pub(crate) fn then(self, later: Outcome) -> Outcome {
        Outcome {
            run: later.run.or(self.run),
            publish: if later.publish == Publish::Keep { self.publish } else { later.publish },
            tell: later.tell.or(self.tell),
            dirty: self.dirty || later.dirty,
            charge: Charge {
                calls_ns: self.charge.calls_ns + later.charge.calls_ns,
                extra_ns: self.charge.extra_ns + later.charge.extra_ns,
            },
        }
    }
}
