//! Routing decisions. Decision order: forced > settled history > exploration >
//! cold-start prior.

use std::fmt;

use crate::backend::Backend;
use crate::selector::{moe, BackendSelector};
use crate::site::{KernelSpec, Work};

/// How a decision was reached; the `decision` field of trace events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// An override (scope, `KERNEL.force`, `ADAPTIVE_KERNEL_BACKEND`) chose it.
    Forced,
    /// Settled from recorded timings.
    Historical,
    /// Being timed to learn which variant is fastest.
    Exploring,
    /// The cost model vetoed the MoE table's choice.
    CostModel,
    /// The MoE table's choice, unvetoed.
    MoeThreshold,
}

impl fmt::Display for DecisionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            DecisionKind::Forced => "forced",
            DecisionKind::Historical => "historical",
            DecisionKind::Exploring => "exploring",
            DecisionKind::CostModel => "cost_model",
            DecisionKind::MoeThreshold => "moe_threshold",
        })
    }
}

/// A backend and why it was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The chosen backend.
    pub backend: Backend,
    /// Why.
    pub kind: DecisionKind,
}

/// The cold-start prior: the MoE table for the kernel's complexity and size, with
/// GPU vetoed when the kernel has no GPU variant, no usable GPU exists, or the
/// cost model says the transfer is not worth it.
pub(crate) fn cold_start(spec: &KernelSpec, work: &Work) -> Decision {
    let moe_choice = moe(spec.complexity, work.size);
    if moe_choice != Backend::Gpu {
        return Decision { backend: moe_choice, kind: DecisionKind::MoeThreshold };
    }
    let gpu_ok = spec.has_gpu
        && crate::ops::gpu::is_available()
        && BackendSelector::new().select_backend(usize::try_from(work.bytes).unwrap_or(usize::MAX), work.flops)
            == Backend::Gpu;
    if gpu_ok {
        Decision { backend: Backend::Gpu, kind: DecisionKind::MoeThreshold }
    } else {
        Decision { backend: Backend::Simd, kind: DecisionKind::CostModel }
    }
}
