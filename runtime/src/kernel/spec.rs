//! The kernel layer's vocabulary: what the macro records about a kernel
//! ([`KernelSpec`], [`LoopRewrite`], [`LoopSplit`], [`LoopGpu`]) and what routing decides ([`Decision`], [`DecisionKind`]).
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
    /// Whether the kernel has a real GPU variant (its body calls `ops::`, a top-level loop
    /// of it runs on the GPU, or `gpu = path` was given).
    pub has_gpu: bool,
    /// Whether the kernel has a real Parallel variant (its body calls `ops::`, a
    /// top-level loop of it is split across threads, or `parallel = path` was
    /// given). The router offers it only on two or more threads.
    pub has_parallel: bool,
    /// A hash of the function's tokens: an edited kernel does not trust old timings.
    pub token_hash: u64,
    /// What the SIMD variant did to each float reduction of the body, in source
    /// order: reassociated into independent lanes, or left as written and why.
    /// Empty when the body has none, or when `simd = path` names the SIMD variant.
    pub loops: &'static [LoopRewrite],
    /// What the Parallel variant did to each top-level `for` loop of the body, in
    /// source order: split across threads, or left on one thread and why.
    pub splits: &'static [LoopSplit],
    /// What the GPU variant does with each top-level `for` loop of the body, in
    /// source order: runs it on the GPU, or leaves it on the host and why.
    pub gpu_loops: &'static [LoopGpu],
}

impl KernelSpec {
    /// The roundings the loops its GPU variant runs on the device may add over
    /// Scalar's, summed ([`LoopGpu::roundings`]): `verify` widens its bound for the GPU by these.
    pub fn gpu_roundings(&self) -> usize {
        self.gpu_loops.iter().filter(|l| l.on_gpu()).map(|l| l.roundings as usize).sum()
    }
}

/// One float reduction of a kernel's body (a `for` loop accumulating into a
/// float, or an iterator chain ending in `.sum()`, `.product()` or `.fold(..)`)
/// and what the attribute did to it.
///
/// A rewritten reduction is computed in independent lanes combined at the end:
/// the same terms in another grouping, within the bound of
/// [`tolerance`](crate::tolerance) of the Scalar variant. The Scalar (and GPU)
/// variants always keep the body as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopRewrite {
    /// The source line of its `for`, or of its `sum`/`product`/`fold`.
    pub line: u32,
    /// Its shape: the form (`for`, `.sum()`, `.fold(max)`, …), the source it
    /// walks (`range`, `iter`, `zip`, `?` when not recognised) and the
    /// operator (`+=`, `*=`, `max`, `min`); e.g. `for range +=`, `zip.sum()`.
    pub idiom: &'static str,
    /// The variants that compute it in lanes: [`Backend::Simd`], and
    /// [`Backend::Parallel`] when the kernel's Parallel variant is its body
    /// (it calls `ops::` and names no `parallel = path`). Empty when it is left
    /// as written.
    pub variants: &'static [Backend],
    /// Why it was left as written, in one word; empty when rewritten. The words
    /// and what they mean: [`LOOP_REASONS`](crate::LOOP_REASONS).
    pub reason: &'static str,
    /// The libm functions (`exp`, `sin`, …) whose calls on `f32` values the variants
    /// that put it in lanes compute with the runtime's branch-free formulas
    /// ([`math`](crate::math)), each within its bound in
    /// [`ULP_BOUNDS`](crate::math::ULP_BOUNDS); empty when none.
    pub vector_math: &'static [&'static str],
}

impl LoopRewrite {
    /// Whether some variant computes it in lanes.
    pub const fn rewritten(&self) -> bool {
        !self.variants.is_empty()
    }
}

impl KernelSpec {
    /// The largest [`ULP_BOUNDS`](crate::math::ULP_BOUNDS) entry among the functions its
    /// loops compute with the runtime's formulas ([`LoopRewrite::vector_math`]), 0 when
    /// none: how far, beyond rounding, a variant that puts them in lanes may be from the
    /// Scalar variant, which calls libm. `verify` allows for it.
    pub fn vector_math_ulps(&self) -> u32 {
        self.loops
            .iter()
            .filter(|l| l.rewritten())
            .flat_map(|l| l.vector_math)
            .map(|name| crate::math::ulp_bound(name).unwrap_or(0))
            .max()
            .unwrap_or(0)
    }
}

/// One top-level `for` loop of a kernel's body and whether the Parallel variant
/// splits it across threads.
///
/// A split loop's iterations run in chunks on the pool `ops::par` uses, each
/// chunk compiled like the SIMD variant; element-wise results are the loop's,
/// bit for bit, and a reduction it carries is combined from one partial result
/// per chunk, in chunk order (within the bound of
/// [`tolerance`](crate::tolerance), the same numbers on every run at a given
/// thread count). The Scalar, SIMD and GPU variants keep the loop on one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopSplit {
    /// The source line of its `for`.
    pub line: u32,
    /// What it walks: `for range`, `for iter_mut.zip`, `for chunks_mut.enumerate`, …
    pub idiom: &'static str,
    /// Why it was not split, in one word; empty when it was. The words and what
    /// they mean: [`LOOP_REASONS`](crate::LOOP_REASONS).
    pub reason: &'static str,
}

impl LoopSplit {
    /// Whether the Parallel variant splits it across threads.
    pub const fn is_split(&self) -> bool {
        self.reason.is_empty()
    }
}

/// One top-level `for` loop of a kernel's body and whether the GPU variant runs
/// it on the device.
///
/// A loop whose iterations the split's analysis proves independent, written in
/// the subset the macro translates, runs one iteration per GPU invocation (the
/// rest of the body runs on the host as written). Its results differ from
/// Scalar's within the precision contract of the macro crate's `shader` docs:
/// fused multiply-adds, regrouped reductions, a few ULP for the transcendental
/// functions. A call the device cannot take as Rust means it (a size over
/// `u32`, an index out of bounds, no usable device) runs the loop on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopGpu {
    /// The source line of its `for`.
    pub line: u32,
    /// What it walks: `for range`, `for iter_mut.zip`, `for chunks_mut.enumerate`, …
    pub idiom: &'static str,
    /// Why it stays on the host, in one word; empty when it runs on the GPU. The
    /// words and what they mean: [`LOOP_REASONS`](crate::LOOP_REASONS).
    pub reason: &'static str,
    /// The roundings its constructs may add over Scalar's (a division 3, a square
    /// root 5, an `exp` 4, …; the macro's precision contract), 0 when it stays on the host.
    pub roundings: u32,
}

impl LoopGpu {
    /// Whether the GPU variant runs it on the device.
    pub const fn on_gpu(&self) -> bool {
        self.reason.is_empty()
    }
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
