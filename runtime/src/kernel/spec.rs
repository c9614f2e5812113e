//! The kernel layer's vocabulary: what the macro records about a kernel
//! ([`KernelSpec`]) and what routing decides ([`Decision`], [`DecisionKind`]).
//! Behaviour modules (policy, site, report, telemetry) import these; this file
//! imports none of them.

use std::fmt;

use crate::backend::{Backend, OpComplexity};

/// What the macro knows about a kernel at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    /// Identity in history and traces: `module_path!()::fn_name`, or the attribute's `name`.
    pub name: &'static str,
    /// The complexity class from the attribute.
    pub complexity: OpComplexity,
    /// Whether the kernel has a real GPU variant (its body calls `ops::` or `gpu = path` was given).
    pub has_gpu: bool,
    /// A hash of the function's tokens: an edited kernel does not trust old timings.
    pub token_hash: u64,
}

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
    /// The cost model (or the lack of a usable GPU) vetoed the MoE table's GPU choice.
    CostModel,
    /// The MoE table's choice, unvetoed.
    MoeThreshold,
}

impl DecisionKind {
    /// The name used in traces and tables (`forced`, `historical`, `exploring`, `cost_model`, `moe_threshold`).
    pub const fn name(self) -> &'static str {
        match self {
            DecisionKind::Forced => "forced",
            DecisionKind::Historical => "historical",
            DecisionKind::Exploring => "exploring",
            DecisionKind::CostModel => "cost_model",
            DecisionKind::MoeThreshold => "moe_threshold",
        }
    }
}

impl fmt::Display for DecisionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
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
