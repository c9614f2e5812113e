//! The GPU variant of a plain-loop body: each top-level loop whose iterations
//! the body model proves independent (`crate::body::analyse_loops`, the
//! one analysis every rewrite reads) becomes a compute shader with one
//! invocation per iteration, and the loop runs on the device; every other loop,
//! and everything around the loops, runs on the host as written.
//!
//! # Types: a checked subset with its own inference
//! A proc macro sees tokens, not types. CubeCL's `#[cube]` answers that by
//! emitting Rust that builds the kernel through typed builders at run time, so
//! rustc checks the types; but then a body whose types the builders do not
//! expect (a `u8`, a user's `Meters`, an `f64` in one corner) is a compile
//! error, and the worst defect this macro can have is generated code that does
//! not compile for a valid body. So the macro infers, over a subset it checks
//! itself (`ty.rs`, `lower.rs`): declared types of parameters and `let`s,
//! literal suffixes, `vec![v; n]`, and rustc's rule that primitive operators,
//! assignments and these methods take operands of one type. The WGSL is
//! written at compile time; the generated Rust only hands values over, through
//! probes that compile for any type (`ops::gpu::loops::probe` in the runtime).
//! Where the inference had to guess (a `let` without a declared type, a
//! constant from outside), the probes check the real type at run time, and a
//! wrong guess runs the loop on the host. A construct outside the subset, or a
//! type the inference cannot place, leaves the loop on the host with a reason
//! word, reported in `KernelSpec::gpu_loops`; never a compile error.
//!
//! # The subset
//! * Loops: the split's (`iter_mut`/`zip`/`enumerate`, `chunks(_exact)(_mut)`,
//!   ranges writing at `[i]`, `[i*W+c]`, `[i*w+j]`, row `i`), with the reductions
//!   they carry (`+=`, `-=`, `*=`, `max`, `min` of `f32`; `+=` of integers), as
//!   per-workgroup partials (a tree in workgroup memory) combined on the device
//!   (a `usize` sum's on the host, in 64 bits).
//! * Values: `f32`, `i32`, `u32`, `usize` (as `u32`, checked), `bool`; the body's
//!   locals, captured scalars and constants (uniforms, evaluated on the host),
//!   elements of captured slices (read by computed index, written at the
//!   iteration's own slot), `.len()`, sub-slices `&a[lo..hi]`, rows.
//! * Statements: `let` (also of tuples), `let mut`, assignments and compound
//!   assignments, `if`/`else` (also as values), blocks, inner `for` over ranges
//!   and over captured slices or their sub-slices (`iter`, `iter_mut`, `copied`,
//!   `zip`, `enumerate`) or the rows of a captured slice (`chunks`,
//!   `chunks_exact`), `while`, `loop`, `break`/`continue` of inner loops,
//!   `continue` of the loop itself.
//! * Operators: arithmetic, comparisons, `&&`/`||`, bit operations, `as` between
//!   the types above; `f32::INFINITY`/`MAX`/`MIN`/`EPSILON` and other constants by
//!   path; the methods `sqrt`, `abs`, `exp`, `ln`, `sin`, `cos`, `tanh`, `powi`,
//!   `powf`, `min`, `max`, `clamp`, `mul_add`, `floor`, `ceil`, `round`, `recip`,
//!   `is_nan`, `is_finite`, `is_infinite` (also as `f32::sqrt(x)`).
//!
//! The words for what is left out: `f64` (an `f64` value), `call` (a function
//! or method outside the list), `type` (a type it cannot place), `value` (an
//! array, tuple, struct, field or reference it cannot hold), `size` (a 64-bit
//! integer, or a constant beyond `u32`), `syntax` (another construct: `match`,
//! a closure, float `%`, …), `macro`, `label`, and the split's own words for a
//! loop whose iterations are not independent; `exact` and `gpu` for kernels that
//! opted out.
//!
//! # Precision contract
//! What the device computes differs from Scalar within these bounds (the
//! `roundings` a loop reports widen `verify`'s tolerance by its constructs'):
//! `+ − ×` are IEEE-rounded, but `a·b + c` may be fused (WGSL allows the
//! contraction) and subnormals may flush to zero; `/` and `recip` within 2.5 ULP;
//! `sqrt` within WGSL's bound (inherited from `inverseSqrt`); `exp` and `tanh`
//! range-reduced, within a few ULP over all of `f32`; `ln`, `sin` and `cos`
//! after Cephes, within a few ULP (`sin`/`cos` of an argument beyond 8192 run on
//! the host); `powf` within 3 + 2·|y·ln x| ULP, its special cases exact; `powi`
//! multiplies in the order LLVM's does (exact); `mul_add` may round its product;
//! `min`, `max`, `clamp`, `abs`, `floor`, `ceil`, `round` and the casts are
//! exact (Rust's NaN, saturation and rounding rules), but for an integer above
//! 2²⁴ cast to `f32`, which WGSL may round either way; integer `+ − ×` wrap as in
//! a release build; reductions are regrouped (a tree per workgroup, then a tree
//! over the workgroups' partials).
//! What would panic in Rust (an index out of bounds, an integer division by
//! zero, `clamp` with min > max) or what the device cannot compute as the host
//! does (a `usize` beyond `u32`) makes the loop run on the host instead, before
//! any result is copied back. An `exact` kernel has no generated GPU variant.
//!
//! `serial` forbids CPU threads, not the GPU (whose run forks none): a `serial`
//! kernel's loops still run on the device.
//!
//! Files: `ty.rs` (types and their inference), `outer.rs` (what names from
//! outside the loop hold), `ir.rs`, `lower.rs` (the body's loops and
//! statements read into the IR), `expr.rs` (its expressions),
//! `wgsl.rs` (the IR printed as WGSL), `tile.rs` (the slices every invocation walks,
//! kept in workgroup memory), `params.rs` (the kernel's slice parameters), `emit.rs` (the Rust around one loop),
//! `group.rs` (the loops grouped into submissions, and host uses of resident data).

mod emit;
mod expr;
mod group;
mod ir;
mod lower;
mod outer;
mod params;
mod tile;
mod ty;
mod wgsl;

use std::collections::BTreeMap;

use proc_macro2::Ident;
use syn::{Block, Expr, Signature, Stmt};

use self::params::ParamSlices;
use crate::body::{Body, Independent, TopLoop};
use crate::reason::Reason;

/// What the GPU variant does with one top-level loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GpuReport {
    /// The line of its `for`.
    pub line: u32,
    /// What it walks (the split's words).
    pub idiom: String,
    /// Why it stays on the host; `None` when it runs on the GPU.
    pub reason: Option<Reason>,
    /// Roundings its constructs may add over Scalar's (see the precision contract).
    pub roundings: u32,
}

/// The GPU variant's body, and what the `k::resident` entry needs to know of it.
pub(crate) struct GpuBody {
    /// The body with its GPU loops replaced by their runs, grouped into submissions.
    pub block: Block,
    /// What the GPU variant does with each top-level loop.
    pub reports: Vec<GpuReport>,
    /// The `&[T]` parameters whose data host code reads: the `k::resident` entry makes a
    /// resident handle passed there current in host memory first. `None` when the body was
    /// left as written (an opt-out): nothing then may be stale.
    pub host_reads: Option<Vec<Ident>>,
}

/// `block` (a body of signature `sig`, whose model is `model`) with each
/// loop that can run on the GPU replaced by its GPU run, the runs grouped into
/// submissions (`group.rs`), and a report per loop. `opt_out`: the word for why no
/// loop does (`exact`, `gpu`); the body is then left as written.
pub(crate) fn gpu_loops(block: &Block, sig: &Signature, model: &Body, opt_out: Option<Reason>) -> GpuBody {
    let params = ParamSlices::of(sig);
    let mut codes = BTreeMap::new();
    let mut reports = Vec::new();
    for l in &model.loops {
        let verdict = match (opt_out, &l.verdict) {
            (Some(word), _) => Err(word),
            (None, Err(word)) => Err(*word),
            (None, Ok(found)) => translate(block, l, found, &params),
        };
        let (reason, roundings) = match verdict {
            Ok((code, roundings)) => {
                codes.insert(l.stmt, code);
                (None, roundings)
            }
            Err(word) => (Some(word), 0),
        };
        reports.push(GpuReport { line: l.line, idiom: l.idiom.clone(), reason, roundings });
    }
    if opt_out.is_some() {
        return GpuBody { block: block.clone(), reports, host_reads: None };
    }
    let assembled = group::assemble(block, codes, &params);
    GpuBody { block: assembled.block, reports, host_reads: Some(assembled.host_reads) }
}

/// The GPU run of the independent loop `l` of `block`, and its roundings.
fn translate(
    block: &Block,
    l: &TopLoop,
    found: &Independent,
    params: &ParamSlices,
) -> Result<(emit::LoopCode, u32), Reason> {
    let Stmt::Expr(Expr::ForLoop(f), _) = &block.stmts[l.stmt] else { unreachable!("a top-level loop is a `for`") };
    let outer = outer::Outer::new(&l.scope);
    let facts = &found.facts;
    let mut lowered = lower::lower(f, &found.space, &facts.targets, &facts.carried, &outer)?;
    let shader = wgsl::print(&mut lowered)?;
    let batch = emit::hidden("__adaptive_batch");
    let code = emit::gpu_loop(f, found, &lowered, &shader, (l.line, l.stmt), &batch, params);
    Ok((code, lowered.roundings))
}

#[cfg(test)]
mod tests;
