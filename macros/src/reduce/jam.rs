//! Unroll-and-jam: a loop over independent items `c` whose body is a short
//! reduction over `j` computes several consecutive items at once, each with its
//! own lane accumulators, so that every element the items share is loaded once
//! for all of them and their horizontal sums are finished together
//! (LoopVectorization.jl's `@turbo` does this to plain Julia loops).
//!
//! ```text
//! for c in 0..k {                                // the item loop
//!     let q = &cent[c * d..(c + 1) * d];         // prefix: pure lets, per item
//!     let mut dist = 0.0f32;
//!     for j in 0..d {                            // the reduction, rewritten in lanes
//!         let t = p[j] - q[j];
//!         dist += t * t;
//!     }
//!     if dist < best_dist {                      // suffix: runs in the original order
//!         best_dist = dist;
//!         best = c;
//!     }
//! }
//! ```
//!
//! becomes, for `U` items at a time (names per item renamed, hidden):
//!
//! ```text
//! {
//!     let mut c0: usize = 0;
//!     let end: usize = k;
//!     while end.saturating_sub(c0) >= U {
//!         let (i0, i1, …) = (c0, c0 + 1, …);
//!         let q0 = &cent[i0 * d..(i0 + 1) * d]; let mut dist0 = 0.0f32;   // each prefix
//!         let q1 = …;
//!         for j in 0..d { { let t = p[j] - q0[j]; dist0 += t * t; } { … q1 … dist1 … } … }
//!                                                // one reduction over the U bodies, in lanes:
//!                                                // p's chunk is read once for all of them
//!         { if dist0 < best_dist { best_dist = dist0; best = i0; } }   // each suffix, in order
//!         { if dist1 < best_dist { … } }
//!         c0 += U;
//!     }
//!     for c in c0..end { … }                     // the rest one by one, as before
//! }
//! ```
//!
//! Each item's reduction is the reassociated sum the SIMD variant computes
//! anyway (within `adaptive_kernel::tolerance` of the source order), and the
//! suffixes run in the original order, so a compare-and-keep (an argmin, an
//! argmax) selects as written among those sums, ties resolved as written.
//!
//! **What is jammed**: a `for c in start..end` loop over `usize` whose body is
//! pure `let`s (the prefix), one `for` loop the reduction rewrite takes, over a
//! range that does not depend on the item, with accumulators the prefix
//! declares, and any statements after it (the suffix) that do not write
//! anything the prefixes or reductions read (`carried` otherwise: an argmin's
//! running best, a store into the item's own slot are fine; a method call
//! counts as a write to its receiver, except `len()` and `is_empty()` of a
//! name known to be a slice), with no loop,
//! `break`, `continue`, `return`, `?`, macro or struct literal in the suffix.
//! The reduction's body may not hold a `continue` guard (it would skip all the
//! items' elements at once: such a loop is not taken, and not reported).
//! Reported under the idiom `for range jam`.
//!
//! The jammed part runs only where the reduction is short (its range is the
//! same for every item, so it is measured once): below the length at which
//! the loop as rewritten for one item takes its wide lanes (128 `f32`, 64
//! `f64`), divided by the number of accumulators. A longer reduction runs
//! well one item at a time, and its items run one by one, as before.
//!
//! A panic in an item's prefix or reduction (an out-of-range row) now comes
//! before the suffixes of up to `U − 1` earlier items have run: the kernel
//! panics either way, only the partial writes a caller could see after
//! catching it differ.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, ExprForLoop, Stmt};

use super::emit::{hidden, rewritten_loop, WIDE_AFTER_CHUNKS};
use super::recognise::{analyse_loop, Source, Verdict as Reduction};
use crate::body::{
    continue_guard, method_writes, pat_names, plain_ident, root, whole_use_writes, Env, ForLoop, Holds, Int, Ty, Write,
};
use crate::reason::Reason;

/// The idiom jammed loops are reported under.
pub(crate) const IDIOM: &str = "for range jam";

/// What to do with one loop over items.
pub(crate) enum Verdict {
    /// Not a loop around one reduction: not reported.
    NotAJam,
    /// A loop around a reduction that cannot be jammed, and why in a word.
    LeftAlone(Reason),
    /// The jammed loop: its first part takes `U` items at a time (a block of its own, which
    /// the rest of the walk does not enter); `rest` is the loop as written over the items
    /// left, for the walk to rewrite its reduction as usual.
    Jam { jammed: TokenStream, rest: ExprForLoop },
}

/// How many items at a time, by the number of accumulators of the reduction: enough
/// accumulators to share each element's load widely, few enough to stay in registers.
fn items_for(accumulators: usize) -> Option<usize> {
    match accumulators {
        1 => Some(8),
        2 => Some(4),
        // Three or more (an n-body's forces): two items at a time measured slower than one.
        _ => None,
    }
}

/// Decides about the loop `l`, `for pat in expr { body }` (neither a reduction nor
/// element-wise); `env` holds the names in scope before the loop.
pub(crate) fn analyse(l: &ForLoop, env: &Env) -> Verdict {
    let f = l.f;
    // The shape: a range over a plain index, and one loop in its body at the top level.
    let Some(Source::Range { start, end }) = Source::of(&l.walk, env) else { return Verdict::NotAJam };
    let Some(index) = l.index.clone() else { return Verdict::NotAJam };
    let stmts = &f.body.stmts;
    let loops: Vec<usize> = stmts
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Stmt::Expr(Expr::ForLoop(_), _)))
        .map(|(n, _)| n)
        .collect();
    let [at] = loops.as_slice() else { return Verdict::NotAJam };
    let (prefix, inner, suffix) = (&stmts[..*at], &stmts[*at], &stmts[at + 1..]);
    let Stmt::Expr(Expr::ForLoop(inner), _) = inner else { return Verdict::NotAJam };
    if prefix.iter().chain(suffix).any(holds_loop) {
        return Verdict::NotAJam;
    }
    // The environment at the reduction, in an item: the index and the prefix's lets, each
    // checked to be pure where it is bound.
    let mut item_env = env.clone();
    item_env.push();
    item_env.bind(index.to_string(), Ty::Int(Int::Usize), false);
    let mut pure_prefix = true;
    for stmt in prefix {
        match stmt {
            Stmt::Local(l) => {
                let init = l.init.as_ref().filter(|i| i.diverge.is_none());
                pure_prefix &= init.is_some_and(|i| item_env.value(&i.expr).known());
                item_env.bind_let(l);
            }
            _ => pure_prefix = false,
        }
    }
    let inner_loop = ForLoop::new(inner);
    let Reduction::Rewrite { plan, .. } = analyse_loop(&inner_loop, &item_env) else { return Verdict::NotAJam };
    // A `continue` guard would skip an element for every item at once (an n-body's self-skip):
    // not a shape to jam, and nothing to say about it.
    if plan.body.stmts.iter().any(|s| continue_guard(s).is_some()) {
        return Verdict::NotAJam;
    }
    let Some(items) = items_for(plan.accs.len()) else { return Verdict::NotAJam };
    // A reduction to jam: from here on, every reason is reported.
    if f.label.is_some() {
        return Verdict::LeftAlone(Reason::Label);
    }
    if let Some(reason) = l.exits {
        return Verdict::LeftAlone(reason);
    }
    if !pure_prefix {
        return Verdict::LeftAlone(Reason::Effect);
    }
    // Per item: the index and every name the prefix binds.
    let mut per_item = vec![index.to_string()];
    for stmt in prefix {
        if let Stmt::Local(l) = stmt {
            per_item.extend(pat_names(&l.pat));
        }
    }
    if plan.accs.iter().any(|a| !per_item.contains(&a.ident.to_string())) {
        return Verdict::LeftAlone(Reason::Carried);
    }
    let Some(Source::Range { start: j_start, end: j_end }) = Source::of(&inner_loop.walk, &item_env) else {
        return Verdict::NotAJam;
    };
    if mentions_any(&j_start, &per_item) || mentions_any(&j_end, &per_item) {
        return Verdict::LeftAlone(Reason::Source);
    }
    if let Some(reason) = suffix_problem(prefix, inner, suffix, &per_item, &item_env) {
        return Verdict::LeftAlone(reason);
    }

    // The items' copies, their names renamed per item.
    let renamed: Vec<Vec<(String, Ident)>> = (0..items)
        .map(|u| per_item.iter().map(|n| (n.clone(), hidden(&format!("__adaptive_{n}_{u}")))).collect())
        .collect();
    let mut jam_env = env.clone();
    jam_env.push();
    let mut lets = TokenStream::new();
    let first = hidden("__adaptive_c");
    for (u, names) in renamed.iter().enumerate() {
        let i = &names[0].1;
        let offset = proc_macro2::Literal::usize_unsuffixed(u);
        let value = if u == 0 { quote!(#first) } else { quote!(#first + #offset) };
        lets.extend(quote!(#[allow(unused_variables)] let #i: usize = #value;));
        jam_env.bind(i.to_string(), Ty::Int(Int::Usize), false);
    }
    for names in &renamed {
        for stmt in prefix {
            let Stmt::Local(mut l) = stmt.clone() else { unreachable!("the prefix holds only lets") };
            Rename(names).visit_local_mut(&mut l);
            jam_env.bind_let(&l);
            lets.extend(quote!(#[allow(unused_variables, unused_mut)] #l));
        }
    }
    let copies = renamed.iter().map(|names| {
        let mut body = inner.body.clone();
        Rename(names).visit_block_mut(&mut body);
        body
    });
    let (pat, range) = (&inner.pat, &inner.expr);
    let jammed_loop: ExprForLoop = match syn::parse2(quote!(for #pat in #range { #(#copies)* })) {
        Ok(l) => l,
        Err(_) => return Verdict::LeftAlone(Reason::Effect),
    };
    // Only short reductions (a distance over tens of coordinates) gain: their folds and reloads
    // are what the jam shares. From the length at which one item's loop takes its wide lanes
    // (4 chunks of 32 `f32` or 16 `f64`), one item at a time runs as fast or faster, and two
    // accumulators per item halve that length (BENCHMARKS.md, "Jammed reductions"; a matrix–
    // vector product's rows of hundreds, 8 streams at once, measured 0.83× at 288 × 4,000).
    let short = plan.lanes * WIDE_AFTER_CHUNKS / plan.accs.len();
    let combined = match analyse_loop(&ForLoop::new(&jammed_loop), &jam_env) {
        Reduction::Rewrite { mut plan, .. } => {
            // Each item's lanes a quarter of a 256-bit vector (4 `f32`, 2 `f64`), in one level:
            // with 8-lane chunks a jammed k-means distance measured 0.19–0.25 of its twin, with
            // 4-lane ones 0.41–0.46; a wide level of 16 `f32` lanes per item, from 64 elements,
            // ran at 0.80–0.96 of the items one by one, the 4 lanes alone at 1.3–1.5×.
            plan.narrow = plan.lanes / 8;
            plan.lanes = plan.narrow;
            plan.fold_together = true;
            rewritten_loop(&plan)
        }
        Reduction::LeftAlone { reason, .. } => return Verdict::LeftAlone(reason),
        Reduction::NotAReduction | Reduction::InPlace { .. } => return Verdict::LeftAlone(Reason::Effect),
    };
    let suffixes = renamed.iter().map(|names| {
        let mut block = Block { brace_token: Default::default(), stmts: suffix.to_vec() };
        Rename(names).visit_block_mut(&mut block);
        block
    });
    let end_var = hidden("__adaptive_cend");
    let count = proc_macro2::Literal::usize_unsuffixed(items);
    let (short, length) = (Literal::usize_unsuffixed(short), hidden("__adaptive_length"));
    let jammed = quote!(
        let mut #first: usize = #start;
        let #end_var: usize = #end;
        let #length: usize = (#j_end).saturating_sub(#j_start);
        if #length < #short {
            while #end_var.saturating_sub(#first) >= #count {
                #lets
                #combined
                #(#suffixes)*
                #first += #count;
            }
        }
    );
    let mut rest = f.clone();
    *rest.expr = syn::parse2(quote!(#first..#end_var)).expect("a range is an expression");
    Verdict::Jam { jammed, rest }
}

/// Whether a statement holds a loop (or a closure or item, whose bodies run elsewhere).
pub(super) fn holds_loop(stmt: &Stmt) -> bool {
    Holds::of(std::slice::from_ref(stmt)).any()
}

fn mentions_any(e: &Expr, names: &[String]) -> bool {
    crate::tokens::mentions(e.to_token_stream(), names)
}

/// Why the suffix may not run after the next items' prefixes and reductions, if so: it
/// writes a name they read (`carried`), or holds what the renaming cannot follow. `env`
/// holds the names in scope at the reduction.
pub(super) fn suffix_problem(
    prefix: &[Stmt],
    inner: &ExprForLoop,
    suffix: &[Stmt],
    per_item: &[String],
    env: &Env,
) -> Option<Reason> {
    struct Writes<'e> {
        names: Vec<String>,
        structs: bool,
        env: &'e Env,
    }
    impl<'ast> Visit<'ast> for Writes<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            // What the statement writes, by the one rule of what counts as a write.
            let written = match Write::of(e) {
                Some(Write::Method { receiver, method }) => {
                    root(receiver).filter(|r| method_writes(self.env.binding(&r.to_string()), &method.to_string()))
                }
                Some(w) => root(w.place()),
                None => None,
            };
            self.names.extend(written.map(|n| n.to_string()));
            match e {
                // An argument that holds a `&mut` may be written through by the callee.
                Expr::Call(c) => {
                    for a in &c.args {
                        let whole = plain_ident(a)
                            .filter(|n| self.env.binding(&n.to_string()).is_none_or(|b| whole_use_writes(b.ty)));
                        self.names.extend(whole.map(|n| n.to_string()));
                    }
                }
                Expr::Struct(_) => self.structs = true,
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut writes = Writes { names: Vec::new(), structs: false, env };
    for stmt in suffix {
        writes.visit_stmt(stmt);
    }
    if writes.structs {
        return Some(Reason::Effect);
    }
    let read: TokenStream = prefix.iter().map(ToTokens::to_token_stream).chain([inner.to_token_stream()]).collect();
    let carried: Vec<&String> = writes.names.iter().filter(|n| !per_item.contains(n)).collect();
    crate::tokens::mentions(read, &carried).then_some(Reason::Carried)
}

/// Renames the names of one item (`names`: written name → its hidden name) wherever they
/// are bound or used: consistently, so shadowing inside keeps its meaning.
struct Rename<'a>(&'a [(String, Ident)]);

impl Rename<'_> {
    fn renamed(&self, ident: &Ident) -> Option<Ident> {
        self.0.iter().find(|(n, _)| ident == n).map(|(_, to)| {
            let mut to = to.clone();
            to.set_span(Span::mixed_site());
            to
        })
    }
}

impl VisitMut for Rename<'_> {
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        if let Some(to) = self.renamed(&p.ident) {
            p.ident = to;
        }
        syn::visit_mut::visit_pat_ident_mut(self, p);
    }

    fn visit_expr_path_mut(&mut self, p: &mut syn::ExprPath) {
        let single = p.qself.is_none() && p.path.leading_colon.is_none() && p.path.segments.len() == 1;
        if single && p.path.segments[0].arguments.is_empty() {
            if let Some(to) = self.renamed(&p.path.segments[0].ident) {
                p.path.segments[0].ident = to;
            }
        }
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
