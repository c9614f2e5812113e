//! The model of one body, built once per kernel ([`Body`], in `crate::kernel_def`):
//! the names its signature binds, the type of its value, and its top-level `for`
//! loops, each analysed once: what each walks, and whether its iterations are
//! independent (the facts a rewrite that works on
//! whole loops needs: the slices it writes at its own item or row, the
//! reductions it carries, the slices it updates at slots chosen by data), or
//! the word for why not. The Parallel variant's split and the GPU variant's
//! shader read the same records, so they agree on which loops are independent.

use syn::{Block, Expr, ExprForLoop, Pat, Signature, Stmt};

use super::independence::{self, Facts, Loop};
use super::names::Env;
use super::space::Space;
use super::types::{Ty, Width};
use crate::reason::Reason;

/// The model of one body, as every rewrite reads it.
pub(crate) struct Body {
    /// The names the signature binds (the parameters, typed; a receiver), with a scope above
    /// them for the body's own.
    pub params: Env,
    /// The function's return type when it is a float: the body's value and a `return` have it.
    pub ret: Option<Width>,
    /// Each top-level `for` loop, analysed.
    pub loops: Vec<TopLoop>,
}

impl Body {
    /// The model of `block`, the body of a function of signature `sig`. `exact`: the kernel keeps
    /// its float reductions as written, so a loop carrying one does not have independent
    /// iterations for any rewrite.
    pub(crate) fn new(block: &Block, sig: &Signature, exact: bool) -> Body {
        let ret = match &sig.output {
            syn::ReturnType::Type(_, ty) => match Ty::of_type(ty) {
                Ty::Float(w) => Some(w),
                _ => None,
            },
            syn::ReturnType::Default => None,
        };
        Body { params: Env::of_signature(sig), ret, loops: analyse_loops(block, sig, exact) }
    }
}

/// One top-level `for` loop of a body, analysed once: what every rewrite that
/// works on whole loops reads (the Parallel variant's split, the GPU variant's
/// shader), so that they agree on which loops have independent iterations and
/// why the others do not.
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
    pub scope: Env,
}

/// A loop whose iterations are proved independent.
pub(crate) struct Independent {
    pub space: Space,
    pub facts: Facts,
}

/// Every top-level `for` loop of `block` (a body of signature `sig`), analysed.
fn analyse_loops(block: &Block, sig: &Signature, exact: bool) -> Vec<TopLoop> {
    let mut scope = Env::of_signature(sig);
    let mut loops = Vec::new();
    for (stmt, s) in block.stmts.iter().enumerate() {
        match s {
            Stmt::Local(local) => scope.bind_let(local),
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

/// The iteration space and the body's facts of a loop that can be split, or the word for why not.
fn analyse(f: &ExprForLoop, scope: &Env, exact: bool) -> Result<(Space, Facts), Reason> {
    let space = Space::of(&f.expr, scope).ok_or(Reason::Source)?;
    let pattern = super::names::pat_names(&f.pat);
    let label = f.label.as_ref().map(|l| &l.name);
    match &space {
        Space::Range { start, end } => {
            let index = match &*f.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => Some(&p.ident),
                Pat::Wild(_) => None,
                _ => return Err(Reason::Source),
            };
            let the_loop = Loop { index, label, streams: Vec::new(), pattern, exact };
            let facts = independence::check(&f.body, &the_loop, scope)?;
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
            let facts = independence::check(&f.body, &the_loop, scope)?;
            Ok((space, facts))
        }
    }
}
