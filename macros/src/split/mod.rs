//! Top-level loops with independent iterations split across threads: the
//! transformation that gives a plain-loop body its Parallel variant (numba's
//! `prange`, OpenMP's `parallel for`, decided by the macro).
//!
//! Each `for` statement of the body's outermost block is checked on its own,
//! once, by the body model (`crate::body::loops`, `crate::body::independence`):
//! a loop whose iterations write only their own item or row of a slice and
//! otherwise only read (carrying, at most, reductions) is cut here into chunks
//! over its range or its items (`crate::body::walk`), run as one closure per
//! chunk (`emit.rs`); a slice updated at slots chosen by data gets a private
//! copy per chunk (`scatter.rs`). The cut is expressed with safe APIs (`split_at_mut`
//! parts, a closure that must be `Fn`), so the borrow checker, not this
//! analysis, rules out data races; the analysis only has to make sure the
//! generated code compiles and computes what the loop as written computes:
//!
//! * element-wise results are the loop's, bit for bit (each item is computed
//!   by the same code, compiled for the same instruction set);
//! * a reduction the loop carries is computed as one partial result per chunk,
//!   combined in chunk order: a reassociation like the SIMD variant's, within
//!   the same tolerance, and the same numbers on every run at a given thread
//!   count (chunks depend on the range and the thread count only);
//! * side effects of calls (logging) may run in another order, or at once.
//!
//! Each chunk runs the SIMD variant's code: the split body is what the
//! `reduce` rewrite then works on, and a chunk runs inside the
//! `#[target_feature]` clone of this CPU (`simd_run`). Every top-level `for`
//! loop is reported: split, or the word for why not (`SplitReport`).

mod chunk;
mod emit;
mod scatter;

use proc_macro2::Span;
#[cfg(test)]
use syn::Signature;
use syn::{Block, Expr, Stmt};

use crate::body::{Body, Independent};
use crate::reason::Reason;

/// What happened to one top-level `for` loop of a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SplitReport {
    /// The line of its `for`.
    pub line: u32,
    /// What it walks: `for range`, `for iter_mut.zip`, `for chunks_mut.enumerate`, …
    pub idiom: String,
    /// Why it was not split; `None` when it was.
    pub reason: Option<Reason>,
}

/// Why no loop of a kernel is split, whatever its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OptOut {
    /// `serial`: the kernel forbids splitting.
    Serial,
    /// `parallel = path`: the Parallel variant is the kernel's own.
    Parallel,
}

impl OptOut {
    pub(crate) fn reason(self) -> Reason {
        match self {
            OptOut::Serial => Reason::Serial,
            OptOut::Parallel => Reason::Parallel,
        }
    }
}

/// `block` (a body of signature `sig`) with every top-level loop that can be
/// split replaced by its split form, and a report per top-level loop. `exact`:
/// the kernel keeps its float reductions as written, so a loop carrying one
/// is not split.
#[cfg(test)]
pub(crate) fn split_loops(
    block: &Block,
    sig: &Signature,
    exact: bool,
    opt_out: Option<OptOut>,
) -> (Block, Vec<SplitReport>) {
    split(block, &Body::new(block, sig, exact), opt_out)
}

/// `block` (whose model is `model`) with each top-level loop that can be split replaced by
/// its split form, and a report per top-level loop.
pub(crate) fn split(block: &Block, model: &Body, opt_out: Option<OptOut>) -> (Block, Vec<SplitReport>) {
    let mut out = block.clone();
    let mut reports = Vec::new();
    for l in &model.loops {
        let (line, idiom) = (l.line, l.idiom.clone());
        let verdict = match (opt_out, &l.verdict) {
            (Some(o), _) => Err(o.reason()),
            (None, Err(reason)) => Err(*reason),
            (None, Ok(found)) => Ok(found),
        };
        match verdict {
            Ok(Independent { space, facts }) => {
                let Stmt::Expr(Expr::ForLoop(f), _) = &block.stmts[l.stmt] else {
                    unreachable!("a top-level loop is a `for` statement")
                };
                let split = emit::split_loop(f, space, facts, &l.scope);
                out.stmts[l.stmt] = Stmt::Expr(split, Some(syn::Token![;](Span::call_site())));
                reports.push(SplitReport { line, idiom, reason: None });
            }
            Err(reason) => reports.push(SplitReport { line, idiom, reason: Some(reason) }),
        }
    }
    (out, reports)
}

#[cfg(test)]
mod tests;
