//! Top-level loops with independent iterations split across threads: the
//! transformation that gives a plain-loop body its Parallel variant (numba's
//! `prange`, OpenMP's `parallel for`, decided by the macro).
//!
//! Each `for` statement of the body's outermost block is checked on its own
//! (`body.rs`): a loop whose iterations write only their own item or row of
//! a slice and otherwise only read (carrying, at most, reductions) is cut
//! into chunks over its range or its items (`shape.rs`), run as one closure
//! per chunk (`emit.rs`). The cut is expressed with safe APIs (`split_at_mut`
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

mod body;
mod emit;
mod names;
mod offset;
mod scatter;
mod scope;
mod shape;

use proc_macro2::Span;
use syn::{Block, Expr, ExprForLoop, Pat, Signature, Stmt};

use crate::reason::Reason;
use body::Loop;
pub(crate) use body::{Carried, Facts, Stride, Target, Value};
pub(crate) use scope::{Kind, Scope};
pub(crate) use shape::{Chain, Space, Stream};

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

/// One top-level `for` loop of a body, analysed once: what every rewrite that
/// works on whole loops reads (the split here, the GPU variant's shader in
/// `crate::shader`), so that they agree on which loops have independent
/// iterations and why the others do not.
pub(crate) struct TopLoop {
    /// Its position among the statements of the body's outermost block.
    pub stmt: usize,
    /// The line of its `for`.
    pub line: u32,
    /// What it walks: `for range`, `for iter_mut.zip`, `for chunks_mut.enumerate`, …
    pub idiom: String,
    /// Its iteration space and body facts when its iterations are independent, or the
    /// word for why not. No opt-out (`serial`, `parallel = path`) is applied here: that
    /// is each rewrite's own business.
    pub verdict: Result<Independent, Reason>,
    /// The names in scope before it.
    pub scope: Scope,
}

/// A loop whose iterations are proved independent.
pub(crate) struct Independent {
    pub space: Space,
    pub facts: Facts,
}

/// Every top-level `for` loop of `block` (a body of signature `sig`), analysed.
/// `exact`: the kernel keeps its float reductions as written, so a loop carrying
/// one does not have independent iterations for any rewrite.
pub(crate) fn analyse_loops(block: &Block, sig: &Signature, exact: bool) -> Vec<TopLoop> {
    let mut scope = Scope::of(sig);
    let mut loops = Vec::new();
    for (stmt, s) in block.stmts.iter().enumerate() {
        match s {
            Stmt::Local(local) => scope.bind_local(local),
            Stmt::Expr(Expr::ForLoop(f), _) => {
                let idiom = Space::idiom(&f.expr);
                let line = u32::try_from(f.for_token.span.start().line).unwrap_or(u32::MAX);
                let verdict = if sig.unsafety.is_some() {
                    // An `unsafe fn`'s body may do without an `unsafe` block what a chunk must not.
                    Err(Reason::Unsafe)
                } else {
                    analyse(f, &scope, exact).map(|(space, facts)| Independent { space, facts })
                };
                loops.push(TopLoop { stmt, line, idiom, verdict, scope: scope.clone() });
            }
            _ => {}
        }
    }
    loops
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
    split_analysed(block, &analyse_loops(block, sig, exact), opt_out)
}

/// `block` with each of its analysed top-level `loops` that can be split replaced by
/// its split form, and a report per top-level loop.
pub(crate) fn split_analysed(block: &Block, loops: &[TopLoop], opt_out: Option<OptOut>) -> (Block, Vec<SplitReport>) {
    let mut out = block.clone();
    let mut reports = Vec::new();
    for l in loops {
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

/// The iteration space and the body's facts of a loop that can be split, or the word for why not.
fn analyse(f: &ExprForLoop, scope: &Scope, exact: bool) -> Result<(Space, Facts), Reason> {
    let space = Space::of(&f.expr, scope).ok_or(Reason::Source)?;
    let pattern = crate::reduce::pat_names(&f.pat);
    let label = f.label.as_ref().map(|l| &l.name);
    match &space {
        Space::Range { start, end } => {
            let index = match &*f.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => Some(&p.ident),
                Pat::Wild(_) => None,
                _ => return Err(Reason::Source),
            };
            let the_loop = Loop { index, label, streams: Vec::new(), pattern, exact };
            let facts = body::check(&f.body, &the_loop, scope)?;
            // The index must be a `usize`, as the chunks' bounds are: said by a bound, or by a
            // write through it (a slice index is a `usize`).
            if !(scope.is_usize(start) || scope.is_usize(end) || !facts.targets.is_empty()) {
                return Err(Reason::Source);
            }
            Ok((space, facts))
        }
        Space::Chain(chain) => {
            let streams: Vec<String> =
                chain.streams().iter().filter(|s| s.mutable).map(|s| s.slice.to_string()).collect();
            let mut distinct = streams.clone();
            distinct.sort();
            distinct.dedup();
            if distinct.len() != streams.len() {
                return Err(Reason::Overlap);
            }
            let the_loop = Loop { index: None, label, streams, pattern, exact };
            let facts = body::check(&f.body, &the_loop, scope)?;
            Ok((space, facts))
        }
    }
}

#[cfg(test)]
mod tests;
