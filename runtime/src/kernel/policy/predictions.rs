//! [`Predictions`]: what is known of a call's time on each backend before it
//! is measured here (a neighbouring bucket's figure, the kernel's own
//! Scalar-to-SIMD ratio, the cost model), and which of them orders the
//! candidates of an exploration round and which may prune one.

use super::tuning::Policy;
use crate::candidate::{Candidate, PerCandidate};

/// Predicted time of each backend for the call being routed, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Predictions {
    /// From the nearest bucket where the backend was measured, scaled by the complexity's growth.
    pub(crate) neighbours: PerCandidate<Option<f64>>,
    /// How far each neighbour is: the ratio (≥ 1) between its typical size and the call's.
    pub(crate) reach: PerCandidate<f64>,
    /// From the cost model, where it has measured figures.
    pub(crate) model: PerCandidate<Option<f64>>,
    /// This kernel's own Scalar-to-SIMD time ratio, measured on this machine in the
    /// nearest smaller bucket where both ran, and how far that bucket is (its size
    /// factor, ≥ 1).
    pub(crate) scalar_per_simd: Option<(f64, f64)>,
}

impl Predictions {
    /// A neighbouring bucket's measurement of `b` within [`Policy::prune_reach`] (a size factor).
    fn near(&self, b: Candidate, policy: &Policy) -> Option<f64> {
        self.neighbours[b].filter(|_| self.reach[b] <= policy.prune_reach)
    }

    /// Scalar's time from SIMD's (or SIMD's from Scalar's) by this kernel's own ratio
    /// between the two ([`Predictions::scalar_per_simd`], from a smaller bucket within
    /// [`Policy::ratio_reach`]): the other's centre measured in this round (`here`), else
    /// its near neighbour's figure. A ratio carries across sizes where an absolute
    /// figure does not (both variants pay the same call and memory costs), and it is
    /// this kernel's, where the model's is a matmul probe's and may be far off for
    /// another kernel. From a smaller bucket only: fixed costs weigh more there, so the
    /// ratio is nearer 1 than at this size and errs towards measuring.
    fn by_ratio(&self, b: Candidate, here: &PerCandidate<Option<f64>>, policy: &Policy) -> Option<f64> {
        let (ratio, reach) = self.scalar_per_simd?;
        if reach > policy.ratio_reach || !(ratio > 0.0 && ratio.is_finite()) {
            return None;
        }
        let (other, factor) = match b {
            Candidate::Scalar => (Candidate::Simd, ratio),
            Candidate::Simd => (Candidate::Scalar, 1.0 / ratio),
            _ => return None,
        };
        here[other].or_else(|| self.near(other, policy)).map(|ns| ns * factor)
    }

    /// The estimate candidates are ordered by, in this order: a near neighbour's
    /// measurement; the kernel's own Scalar-to-SIMD ratio ([`Predictions::by_ratio`]);
    /// the cost model's figure where there is one; a farther neighbour's. Scaled across
    /// decades, a fixed cost measured at small sizes looks like a per-element one, so a
    /// far neighbour would rank the simplest variant first at sizes where it is many
    /// times slower, and the model's absolute figure is no yardstick for a neighbour's
    /// measurement.
    pub(super) fn for_order(&self, b: Candidate, here: &PerCandidate<Option<f64>>, policy: &Policy) -> Option<f64> {
        self.near(b, policy)
            .or_else(|| self.by_ratio(b, here, policy))
            .or_else(|| self.model[b].filter(|&m| m > 0.0))
            .or(self.neighbours[b])
            .or(self.model[b])
    }

    /// The estimate pruning compares with `prune_factor × anchor_ns`, where `anchor` is
    /// the best backend measured in this bucket, in this order: a near neighbour's
    /// measurement, as it is; the kernel's own Scalar-to-SIMD ratio
    /// ([`Predictions::by_ratio`]); the cost model's figure, also relative to the anchor:
    /// Scalar and SIMD share the host's memory and call costs, so the model's error on
    /// the measured one applies to the other, and the lower of the absolute and the
    /// relative figure is used, so a model that is off in absolute terms does not prune
    /// a backend it cannot really tell apart. Farther neighbours are not used.
    pub(crate) fn for_pruning(
        &self,
        b: Candidate,
        (anchor, anchor_ns): (Candidate, f64),
        here: &PerCandidate<Option<f64>>,
        policy: &Policy,
    ) -> Option<f64> {
        if let Some(ns) = self.near(b, policy).or_else(|| self.by_ratio(b, here, policy)) {
            return Some(ns);
        }
        let raw = self.model[b]?;
        let both_cpu = b != Candidate::Gpu && anchor != Candidate::Gpu;
        match self.model[anchor] {
            Some(anchor_model) if both_cpu && anchor_model > 0.0 && anchor_model.is_finite() => {
                Some(raw.min(raw * anchor_ns / anchor_model))
            }
            _ => Some(raw),
        }
    }
}
