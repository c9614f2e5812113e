//! Element-wise index loops put in lanes: the SIMD variant's rewrite of a
//! `for i in start..end` loop that writes `out[i + c]` from reads such as
//! `a[i - 1]`, `a[i]`, `a[row * w + i]` (a stencil, an image row, `y = a·x + y`).
//!
//! LLVM vectorises such a loop only when it can prove that no access panics
//! part-way: each `a[i - 1]` may fail at a different element, and a panic must
//! leave the elements before it written and those after it not, so a blur's
//! ten bounds-checked accesses keep it one element at a time. The rewrite
//! takes every access a chunk of `L` elements at a time, as `&[T; L]` (a
//! written slice as `&mut [T; L]`), bounds-checked once per chunk, and runs
//! the body as written for each lane in order with the accesses replaced by
//! the chunk's elements: nothing is reordered, regrouped or fused, so the
//! results are the Scalar variant's bit for bit, and only the bounds checks
//! moved. Where a chunk is not available (an access out of bounds, such as
//! `row[x - 1]` at `x = 0` behind an `if x > 0`, index arithmetic that would
//! overflow, the last elements) a few elements run as written, which panic (or
//! wrap) exactly where the original does, and the chunks resume after them.
//!
//! ```text
//! {                                          // for x in 1..w - 1 { out[x] = (row[x - 1] + row[x + 1]) / 2.0; }
//!     let mut k: usize = 1;
//!     let end: usize = w - 1;
//!     loop {
//!         if end.saturating_sub(k) >= 4 {
//!             while end.saturating_sub(k) >= LANES {     // LANES = 64, then the same with 16, and 4
//!                 // each access's index at the chunk's first and last lane, computed without overflow
//!                 let (Some(b0), Some(b1), Some(b2)) = (
//!                     span::<LANES>(index_sub(Some(k), Some(1)), index_sub(Some(k + LANES - 1), Some(1))),
//!                     span::<LANES>(index_add(Some(k), Some(1)), index_add(Some(k + LANES - 1), Some(1))),
//!                     span::<LANES>(Some(k), Some(k + LANES - 1)),
//!                 ) else { break };
//!                 let (Some(h0), Some(h1), Some(h2)) =
//!                     (chunk(&row[..], b0, 0), chunk(&row[..], b1, 0), chunk_mut(&mut out[..], b2, 0)) else { break };
//!                 let (h0, h1) = (*h0, *h1);             // read chunks by value (vector loads)
//!                 for l in 0..LANES {
//!                     let x: usize = k + l;
//!                     h2[l] = (h0[l] + h1[l]) / 2.0;     // the body, its accesses replaced
//!                 }
//!                 k += LANES;
//!             }
//!         }
//!         // 4 elements as written (or the rest), then chunks again
//!         let stop: usize = if end.saturating_sub(k) >= 4 { k + 4 } else { end };
//!         for x in k..stop { out[x] = (row[x - 1] + row[x + 1]) / 2.0; }
//!         if stop >= end { break; }
//!         k = stop;
//!     }
//! }
//! ```
//!
//! When every access stays in its slice over the whole range (checked once, before the
//! loop), the chunks come instead from **windows**, each access's elements over the range
//! taken once (`row[x - 1]` for `x` in `1..w - 1` is `row[0..w - 2]`), so that every chunk
//! checks the same bounds; see [`rewritten`].
//!
//! **What is rewritten.** A loop over a `usize` range whose pattern is a plain
//! name, with no nested loop, whose body
//!
//! * writes (`=`, `+=`, …) only elements `out[e]` of slices from outside the
//!   loop, each slice at one index `e` that moves with the loop, and reads a
//!   written slice only there (`out[i] = out[i] * s + a[i]`; never `out[i - 1]`,
//!   a loop-carried dependency: `overlap`);
//! * reads other float slices from outside at indices that move with the
//!   loop (`a[i + c]`, `a[i - c]`, `a[base + i + c]`), or at indices that do
//!   not (`a[0]`, `a[j]`: read as written, in each lane);
//! * otherwise holds only `let`s of pure expressions, assignments to its own
//!   `let mut` names, `if`s over pure conditions and a top-level
//!   [`continue_guard`] (pure as
//!   [`types`](crate::body::Ty) says: no call that may have an effect, no `&mut`).
//!
//! An index that moves with the loop is a sum and difference of the loop
//! index, once and added, and of terms computed before the loop that cannot
//! change in it: integer literals, `usize` names from outside the loop,
//! `x.len()` of a slice, `n as usize`, their `+`, `-` and `*` (`row * w + x`,
//! `(i - lo)`). The rewrite evaluates it for a chunk's first and last lane
//! with checked arithmetic (it grows by one per lane in between, so that
//! every lane's evaluation succeeds when both ends' do) and takes the chunk
//! only when both succeed; an invariant part that could panic (a division,
//! an element) is not accepted, since evaluating it ahead of the lanes could
//! panic where the loop as written would not yet, or at all.
//!
//! **Generic and integer elements** are left as written (`type`). Taking their
//! chunks would be sound (the body runs for each element in order whatever
//! `T` is; only bounds checks move), but the body's operations on them (`+`
//! on a `T: Add`, an integer overflow) are what the macro cannot see to be
//! pure, and a slice of `u8` is not a type [`types`](crate::body::Ty) tracks.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{quote, ToTokens};
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{BinOp, Block, Expr, ExprIndex, Lit, Stmt};

use super::emit::{helper, hidden, Lanes};
use super::recognise::Source;
use crate::body::{
    continue_guard, is_compound, moves_with, plain_ident, Access, Elem, Env, ForLoop, Int, Ty, Walk, Write,
};
use crate::reason::Reason;
use crate::tokens::{mentions, strip};

/// The idiom element-wise loops are reported under.
pub(crate) const IDIOM: &str = "for range =";

/// The chunk sizes, widest first: 64 elements while at least 64 remain, then 16, then 4 (so
/// that at most 3 elements of a loop run as written, when every chunk is available).
///
/// The widest is 64 whatever the element type, because what matters is whether LLVM unrolls
/// the lanes' loop completely before its loop vectoriser sees it. At 16 or 32 lanes it does,
/// and a body that stores under a condition (`if x[i] > 0.0 { out[i] = x[i]; }`) is then left
/// to the SLP vectoriser, which cannot mask stores: lane by lane with branches, up to 9×
/// slower than the loop as written, which LLVM does vectorise when its accesses fail together.
/// At 64 the loop vectoriser keeps it and masks the stores; a body without branches runs as
/// fast at 64 as at 16. The narrower levels take short loops and the rest of long ones: each
/// runs at most three times per loop, so their cost there is bounded. (Figures: BENCHMARKS.md,
/// issue 23, element-wise loops.)
const LEVELS: [usize; 3] = [64, 16, 4];

/// What to do with one `for` loop that is not a reduction.
pub(crate) enum Verdict {
    /// Not an element-wise index loop: not reported.
    NotElementWise,
    /// An element-wise loop left as written, and why in a word.
    LeftAlone(Reason),
    Rewrite(Box<Plan>),
}

/// How to rewrite one element-wise loop.
pub(crate) struct Plan {
    start: Box<Expr>,
    end: Box<Expr>,
    index: Ident,
    body: Block,
    chunks: Vec<Chunk>,
    /// The libm functions whose calls in the body became the runtime's formulas
    /// ([`math`](super::math)).
    pub math: Vec<&'static str>,
}

/// A slice taken a chunk at a time at one index expression of the loop index.
struct Chunk {
    slice: Ident,
    /// The index as written: `x - 1`, `row * w + x`, `(i - lo)`.
    at: Expr,
    /// The slice is written in the loop: its chunk is `&mut`.
    written: bool,
    /// Its elements' type.
    elem: Elem,
    /// The `x[..]` expressions the chunk's element replaces, as tokens.
    keys: Vec<String>,
}

/// Decides about `for pat in expr { body }` (which is not a reduction); `env` holds the names
/// in scope before the loop. `vector_math`: calls of libm functions on `f32` values become the
/// runtime's formulas (not under `exact`, which keeps every operation as written).
pub(crate) fn analyse(l: &ForLoop, env: &Env, vector_math: bool) -> Verdict {
    if !is_candidate(l) {
        return Verdict::NotElementWise;
    }
    match plan(l, env, vector_math) {
        Ok(plan) => Verdict::Rewrite(Box::new(plan)),
        Err(reason) => Verdict::LeftAlone(reason),
    }
}

/// A range loop with no loop inside that stores into an indexed element: what the report
/// lists. (A loop with a loop inside is an outer loop; the inner one is judged on its own.)
fn is_candidate(l: &ForLoop) -> bool {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_expr(&mut self, e: &'ast Expr) {
            if let Some((place, _)) = Write::of(e).and_then(Write::store) {
                self.0 |= is_element(place);
            }
            // A closure's body runs when it is called: not this loop's store.
            if !matches!(e, Expr::Closure(_)) {
                syn::visit::visit_expr(self, e);
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut find = Find(false);
    find.visit_block(&l.f.body);
    matches!(l.walk, Walk::Range { .. }) && find.0 && !l.holds.loops
}

fn is_element(place: &Expr) -> bool {
    matches!(strip(place), Expr::Index(_))
}

/// Checks an element-wise loop and plans its rewrite, or says why not.
fn plan(l: &ForLoop, env: &Env, vector_math: bool) -> Result<Plan, Reason> {
    let f = l.f;
    if f.label.is_some() {
        return Err(Reason::Label);
    }
    if let Some(reason) = l.exits {
        return Err(reason);
    }
    if let Some(reason) = borrows_mutably(&f.body) {
        return Err(reason);
    }
    let lets = l.lets.clone();
    let written = written(&f.body)?;
    // A written slice of integers or of a generic `T`: said before the range, whose bounds
    // (`0..out.len()`) are then unknown too.
    let float_slice = |name: &String| {
        env.lookup(name).and_then(|(ty, _)| ty.float_slice()).is_some_and(|(_, access)| access != Access::Shared)
    };
    if written.iter().any(|(name, _)| !lets.contains(name) && !float_slice(name)) {
        return Err(Reason::Type);
    }
    let Some(Source::Range { start, end }) = Source::of(&l.walk, env) else { return Err(Reason::Source) };
    let Some(index) = l.index.clone() else { return Err(Reason::Source) };
    if lets.iter().any(|l| index == l) {
        return Err(Reason::Shadow);
    }
    let mut check = Check { index: index.clone(), env: env.clone(), lets, written, chunks: Vec::new() };
    check.env.push();
    check.env.bind(index.to_string(), Ty::Int(Int::Usize), false);
    let start_env = check.env.clone();
    check.stmts(&f.body.stmts, true)?;
    check.used_only_as_elements(&f.body)?;
    let mut body = f.body.clone();
    let math = if vector_math { super::math::replace(&mut body, &start_env) } else { Vec::new() };
    Ok(Plan { start, end, index, body, chunks: check.chunks, math })
}

/// `&mut` anywhere in the body, or a method that may take it (`split_at_mut`): a chunk holds
/// a borrow of each slice it reads across the lanes, so the body may borrow nothing mutably.
fn borrows_mutably(body: &Block) -> Option<Reason> {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            self.0 |= r.mutability.is_some();
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            self.0 |= m.method.to_string().ends_with("_mut");
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut find = Find(false);
    find.visit_block(body);
    find.0.then_some(Reason::Effect)
}

/// The slices the body stores into, each with the index it stores at (as tokens); `overlap`
/// when one is stored into at two different indices.
fn written(body: &Block) -> Result<Vec<(String, String)>, Reason> {
    struct Stores(Vec<(String, String)>, bool);
    impl Stores {
        fn place(&mut self, place: &Expr) {
            let Expr::Index(ix) = strip(place) else { return };
            let Some(slice) = plain_ident(&ix.expr) else { return };
            let (slice, at) = (slice.to_string(), ix.index.to_token_stream().to_string());
            match self.0.iter().find(|(s, _)| *s == slice) {
                Some((_, seen)) => self.1 |= *seen != at,
                None => self.0.push((slice, at)),
            }
        }
    }
    impl<'ast> Visit<'ast> for Stores {
        fn visit_expr(&mut self, e: &'ast Expr) {
            if let Some((place, _)) = Write::of(e).and_then(Write::store) {
                self.place(place);
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut stores = Stores(Vec::new(), false);
    stores.visit_block(body);
    if stores.1 {
        return Err(Reason::Overlap);
    }
    Ok(stores.0)
}

/// The walk of an element-wise loop's body, in order, with the names in scope.
struct Check {
    index: Ident,
    env: Env,
    /// [`let_names`](crate::body::let_names) of the body.
    lets: Vec<String>,
    /// [`written`] of the body.
    written: Vec<(String, String)>,
    chunks: Vec<Chunk>,
}

impl Check {
    fn stmts(&mut self, stmts: &[Stmt], top: bool) -> Result<(), Reason> {
        for stmt in stmts {
            if let Some(cond) = continue_guard(stmt).filter(|_| top) {
                self.condition(cond)?;
                continue;
            }
            match stmt {
                Stmt::Local(local) => {
                    let Some(init) = local.init.as_ref().filter(|i| i.diverge.is_none()) else {
                        return Err(Reason::Effect);
                    };
                    if !self.env.value(&init.expr).known() {
                        return Err(Reason::Effect);
                    }
                    self.reads(&init.expr)?;
                    self.env.bind_let(local);
                }
                Stmt::Expr(e, _) => self.statement(e)?,
                Stmt::Item(_) => return Err(Reason::Effect),
                Stmt::Macro(_) => return Err(Reason::Macro),
            }
        }
        Ok(())
    }

    fn statement(&mut self, e: &Expr) -> Result<(), Reason> {
        match e {
            Expr::Assign(a) if a.attrs.is_empty() => {
                self.value(&a.right)?;
                self.store(&a.left)
            }
            Expr::Binary(b) if b.attrs.is_empty() && is_compound(&b.op) => {
                self.value(&b.right)?;
                self.store(&b.left)
            }
            Expr::If(i) => self.branches(i),
            Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => self.block(&b.block),
            _ => Err(Reason::Effect),
        }
    }

    fn branches(&mut self, i: &syn::ExprIf) -> Result<(), Reason> {
        if !i.attrs.is_empty() {
            return Err(Reason::Effect);
        }
        self.condition(&i.cond)?;
        self.block(&i.then_branch)?;
        match i.else_branch.as_ref().map(|(_, e)| &**e) {
            None => Ok(()),
            Some(Expr::If(i)) => self.branches(i),
            Some(Expr::Block(b)) if b.attrs.is_empty() && b.label.is_none() => self.block(&b.block),
            Some(_) => Err(Reason::Effect),
        }
    }

    fn block(&mut self, block: &Block) -> Result<(), Reason> {
        self.env.push();
        let checked = self.stmts(&block.stmts, false);
        self.env.pop();
        checked
    }

    fn condition(&mut self, e: &Expr) -> Result<(), Reason> {
        if self.env.ty(e) != Ty::Bool {
            return Err(Reason::Effect);
        }
        self.reads(e)
    }

    /// A stored value: pure, its reads checked.
    fn value(&mut self, e: &Expr) -> Result<(), Reason> {
        if !self.env.ty(e).is_known() {
            return Err(Reason::Effect);
        }
        self.reads(e)
    }

    /// The place a statement stores into: an element of a float slice from outside, or a
    /// name the body declared.
    fn store(&mut self, place: &Expr) -> Result<(), Reason> {
        match place {
            Expr::Paren(p) => self.store(&p.expr),
            Expr::Index(ix) if ix.attrs.is_empty() => {
                let Some(slice) = plain_ident(&ix.expr) else { return Err(Reason::Source) };
                match self.env.lookup(&slice.to_string()).and_then(|(ty, _)| ty.float_slice()) {
                    Some((_, Access::Mut | Access::Owned)) => self.access(ix),
                    _ => Err(Reason::Type),
                }
            }
            place => match plain_ident(place) {
                Some(name) if self.lets.iter().any(|l| name == l) => Ok(()),
                _ => Err(Reason::Effect),
            },
        }
    }

    /// Every element access in a pure expression.
    fn reads(&mut self, e: &Expr) -> Result<(), Reason> {
        struct Reads<'c> {
            check: &'c mut Check,
            found: Result<(), Reason>,
        }
        impl<'ast> Visit<'ast> for Reads<'_> {
            fn visit_expr_index(&mut self, ix: &'ast ExprIndex) {
                syn::visit::visit_expr_index(self, ix);
                if self.found.is_ok() {
                    self.found = self.check.access(ix);
                }
            }
        }
        let mut reads = Reads { check: self, found: Ok(()) };
        reads.visit_expr(e);
        reads.found
    }

    /// One element access `x[at]`: a chunk's element when `at` moves with the loop, as
    /// written when it does not (and `x` is not written).
    fn access(&mut self, ix: &ExprIndex) -> Result<(), Reason> {
        let at = &*ix.index;
        let at_text = at.to_token_stream().to_string();
        let mut moving_names = self.lets.clone();
        moving_names.push(self.index.to_string());
        let moves = mentions(at.to_token_stream(), &moving_names);
        let Some(slice) = plain_ident(&ix.expr) else {
            return if moves { Err(Reason::Source) } else { Ok(()) };
        };
        let name = slice.to_string();
        let written = self.written.iter().find(|(s, _)| *s == name).map(|(_, at)| at.clone());
        match &written {
            Some(stored_at) if *stored_at != at_text || !mentions(at.to_token_stream(), &[self.index.to_string()]) => {
                return Err(Reason::Overlap)
            }
            None if !moves => return Ok(()),
            _ => {}
        }
        if self.lets.contains(&name) {
            return Err(Reason::Shadow);
        }
        if self.offset(at) != Some(true) {
            return Err(Reason::Source);
        }
        let Some((Ty::Slice { elem, .. }, _)) = self.env.lookup(&name) else {
            return Err(Reason::Type);
        };
        let key = ix.to_token_stream().to_string();
        match self.chunks.iter_mut().find(|c| c.slice == name && c.at.to_token_stream().to_string() == at_text) {
            Some(chunk) if chunk.keys.contains(&key) => {}
            Some(chunk) => chunk.keys.push(key),
            None => {
                self.chunks.push(Chunk { slice, at: at.clone(), written: written.is_some(), elem, keys: vec![key] })
            }
        }
        Ok(())
    }

    /// Whether a part of an index expression holds the loop index (added, once); `None` when
    /// it is not of the shape the rewrite can evaluate ahead of the lanes (see the module docs).
    fn offset(&self, e: &Expr) -> Option<bool> {
        moves_with(e, &|leaf| self.term(leaf))
    }

    /// One term of an index expression ([`Check::offset`]): the loop index (`true`), or a
    /// value the rewrite can evaluate ahead of the lanes (`false`).
    fn term(&self, e: &Expr) -> Option<bool> {
        match e {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) if l.attrs.is_empty() && matches!(i.suffix(), "" | "usize") => Some(false),
                _ => None,
            },
            Expr::Path(_) => {
                let name = plain_ident(e)?;
                if name == self.index {
                    return Some(true);
                }
                (self.invariant(&name) && matches!(self.env.ty(e), Ty::Int(Int::Usize | Int::Lit))).then_some(false)
            }
            Expr::MethodCall(m) if m.method == "len" && m.args.is_empty() && m.turbofish.is_none() => {
                let name = plain_ident(&m.receiver)?;
                let slice = matches!(self.env.lookup(&name.to_string()), Some((Ty::Slice { .. }, _)));
                (self.invariant(&name) && slice).then_some(false)
            }
            Expr::Cast(c) if c.attrs.is_empty() && Ty::of_type(&c.ty) == Ty::Int(Int::Usize) => {
                let integer = matches!(self.env.ty(&c.expr), Ty::Int(_));
                let plain = match &*c.expr {
                    Expr::Lit(_) => true,
                    e => plain_ident(e).is_some_and(|n| self.invariant(&n) && n != self.index),
                };
                (integer && plain).then_some(false)
            }
            _ => None,
        }
    }

    /// A name from outside the loop that the loop cannot change: not the index, not declared
    /// in the body, not a slice it writes.
    fn invariant(&self, name: &Ident) -> bool {
        let name = name.to_string();
        self.index != name && !self.lets.contains(&name) && !self.written.iter().any(|(s, _)| *s == name)
    }

    /// A written slice is named only as `out[at]`: anything else (`out.len()`, `&out`) would
    /// use it while its chunk holds it mutably (`overlap`).
    fn used_only_as_elements(&self, body: &Block) -> Result<(), Reason> {
        struct Uses<'a> {
            written: &'a [(String, String)],
            other: bool,
        }
        impl<'ast> Visit<'ast> for Uses<'_> {
            fn visit_expr_index(&mut self, ix: &'ast ExprIndex) {
                let written = plain_ident(&ix.expr).is_some_and(|s| self.written.iter().any(|(w, _)| s == w));
                if written {
                    self.visit_expr(&ix.index);
                } else {
                    syn::visit::visit_expr_index(self, ix);
                }
            }
            fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
                let name = p.path.get_ident().map(ToString::to_string);
                self.other |= name.is_some_and(|n| self.written.iter().any(|(w, _)| *w == n));
            }
        }
        let mut uses = Uses { written: &self.written, other: false };
        uses.visit_block(body);
        if uses.other {
            return Err(Reason::Overlap);
        }
        Ok(())
    }
}

/// The body with each access the plan takes in chunks replaced by element `l` of `vars`
/// (a chunk's, or a window's).
fn body_over(plan: &Plan, vars: &[Ident], l: &Ident) -> Block {
    let mut body = plan.body.clone();
    Lanes {
        accs: Vec::new(),
        reads: plan
            .chunks
            .iter()
            .zip(vars)
            .flat_map(|(c, var)| {
                let place = quote!(#var[#l]);
                c.keys.iter().map(move |key| (key.clone(), place.clone()))
            })
            .collect(),
    }
    .visit_block_mut(&mut body);
    body
}

/// The levels of the windows' path (see [`rewritten`]): below the narrowest, elements one at
/// a time from the windows.
const WINDOW_LEVELS: [usize; 2] = [64, 16];

/// The widest level of the windows' path whose read chunks are copied (see [`windows`]).
const COPIED_UP_TO: usize = 16;

/// The rewritten loop: a block expression of type `()`.
///
/// First the **windows**: each access's elements over the whole range (`a[i + c]` for `i` in
/// `start..end` is `a[start + c..end + c]`), each taken once, before the lanes, when every
/// one is in bounds; the chunks are then taken from the windows, whose bounds are those of
/// the range, so that what a chunk checks is the same for every access. Taking the chunks
/// from the slices themselves at a flattened index (a 5-point stencil's `u[(i - 1) * w + j]`)
/// ran the stencil's SIMD variant at 0.74–0.81× of the windows' speed from 256² to 2,048²
/// (BENCHMARKS.md, "ndarray programs with element-wise windows"). Where an access leaves its slice
/// somewhere in the range (a border read behind an `if`), the loop runs the chunks taken one
/// by one from the slices, as below. That path runs out of line, through the runtime's
/// `simd_cold`, so that its code does not slow the windows' loops beside it; the windows'
/// loops take the windows as a closure's parameters ([`windows`]).
pub(crate) fn rewritten(plan: &Plan) -> Expr {
    let (k, l, end) = (hidden("__adaptive_k"), hidden("__adaptive_l"), hidden("__adaptive_end"));
    let vars: Vec<Ident> = (0..plan.chunks.len()).map(|n| hidden(&format!("__adaptive_h{n}"))).collect();
    let bases: Vec<Ident> = (0..plan.chunks.len()).map(|n| hidden(&format!("__adaptive_b{n}"))).collect();
    let lane_body = body_over(plan, &vars, &l);
    let lane_stmts = &lane_body.stmts;
    let index = &plan.index;
    let (span, chunk, chunk_mut) = (helper("span"), helper("chunk"), helper("chunk_mut"));
    let some = quote!(::core::option::Option::Some);

    // Each read chunk is copied (a vector load) before the lanes run. Where the slices reach the
    // loop through a closure's captures (a split loop's chunk in the Parallel variant), LLVM no
    // longer knows that they do not overlap the written chunk, and compiled the lanes behind
    // run-time overlap checks, with spills: the Parallel variant on one thread ran the blur at
    // half the SIMD variant's speed (BENCHMARKS.md, issue 23). The copy reads what the lanes
    // would: a read slice is a shared `f32`/`f64` slice (no interior mutability), so nothing
    // writes it while the loop runs, and a slice the loop also writes is read through its
    // written chunk, which is not copied.
    let copies = read_chunks(plan, &vars);
    let level = |lanes: usize| {
        let lanes_lit = Literal::usize_unsuffixed(lanes);
        let last_lane = Literal::usize_unsuffixed(lanes - 1);
        let (first, last) = (k.to_token_stream(), quote!((#k + #last_lane)));
        let spans = plan.chunks.iter().map(|c| {
            let (first, last) = (checked(&c.at, index, &first), checked(&c.at, index, &last));
            quote!(#span::<#lanes_lit>(#first, #last))
        });
        let takes = plan.chunks.iter().zip(&bases).map(|(c, b)| {
            let slice = &c.slice;
            match c.written {
                true => quote!(#chunk_mut::<_, #lanes_lit>(&mut #slice[..], #b, 0)),
                false => quote!(#chunk::<_, #lanes_lit>(&#slice[..], #b, 0)),
            }
        });
        // Lints about the lanes' copy of the body (`y[i] = a * x[i] + y[i]` is clippy's
        // `assign_op_pattern`) are the body's own, said once, at the Scalar variant's copy.
        quote!(
            #[allow(clippy::all, clippy::pedantic, clippy::nursery, clippy::restriction)]
            while #end.saturating_sub(#k) >= #lanes_lit {
                let (#(#some(#bases),)*) = (#(#spans,)*) else { break; };
                let (#(#some(#vars),)*) = (#(#takes,)*) else { break; };
                // The read chunks by value: see `copies`.
                #(let #copies: [_; #lanes_lit] = *#copies;)*
                for #l in 0..#lanes_lit {
                    #[allow(unused_variables)]
                    let #index: usize = #k + #l;
                    #(#lane_stmts)*
                }
                #k += #lanes_lit;
            }
        )
    };
    let levels = LEVELS.map(level);
    let narrow_lit = Literal::usize_unsuffixed(LEVELS[LEVELS.len() - 1]);
    let (start, last, body) = (&plan.start, &plan.end, &plan.body);
    let stop = hidden("__adaptive_stop");
    let (windows, done) = (windows(plan, &k, &end, &vars, lane_stmts), hidden("__adaptive_done"));
    let simd_cold = quote!(::adaptive_kernel::__private::simd_cold);
    Expr::Verbatim(quote!({
        let mut #k: usize = #start;
        let #end: usize = #last;
        #[allow(clippy::all, clippy::pedantic, clippy::nursery, clippy::restriction)]
        let #done: bool = #windows;
        // The slices' path, out of line: see `simd_cold`.
        if !#done {
            #simd_cold(#[inline(always)] || loop {
                if #end.saturating_sub(#k) >= #narrow_lit {
                    #(#levels)*
                }
                let #stop: usize = if #end.saturating_sub(#k) >= #narrow_lit { #k + #narrow_lit } else { #end };
                for #index in #k..#stop #body
                if #stop >= #end {
                    break;
                }
                #k = #stop;
            });
        }
    }))
}

/// The windows' path of [`rewritten`]: a `bool` expression, `true` when it ran the loop
/// (every window in bounds), `false` when it did nothing. `k` and `end` are the range's
/// bounds, evaluated once; `vars` the chunks' names and `lane_stmts` the body over them,
/// the slices' path's own.
fn windows(plan: &Plan, k: &Ident, end: &Ident, vars: &[Ident], lane_stmts: &[Stmt]) -> TokenStream {
    let (l, n, at) = (hidden("__adaptive_l"), hidden("__adaptive_n"), hidden("__adaptive_at"));
    let wins: Vec<Ident> = (0..plan.chunks.len()).map(|n| hidden(&format!("__adaptive_w{n}"))).collect();
    let (window, window_mut, chunk, chunk_mut) =
        (helper("window"), helper("window_mut"), helper("chunk"), helper("chunk_mut"));
    let some = quote!(::core::option::Option::Some);
    let index = &plan.index;
    let (first, last) = (k.to_token_stream(), quote!((#end - 1)));
    let takes = plan.chunks.iter().map(|c| {
        let slice = &c.slice;
        let (first, last) = (checked(&c.at, index, &first), checked(&c.at, index, &last));
        match c.written {
            true => quote!(#window_mut(&mut #slice[..], #first, #last, #n)),
            false => quote!(#window(&#slice[..], #first, #last, #n)),
        }
    });
    // The read chunks of the widest level are not copied, as the slices' path copies them
    // (`rewritten`'s `copies`): with six windows live, LLVM kept 64-element copies on the stack,
    // and a 512 × 512 stencil ran at 0.8× of the speed it has without them. LLVM vectorises that
    // level's loop behind run-time overlap checks. It unrolled the 16-element level whole instead,
    // and without copies could not prove the lanes independent: their 62 of each 510-element row
    // ran one element at a time, and the SIMD variant of a 512 × 512 stencil took 51–55 µs. With
    // that level's read chunks copied (one vector each), 43–44 µs (BENCHMARKS.md, "ndarray
    // programs: four centroids per pass, narrow windows copied").
    let copies = read_chunks(plan, vars);
    let level = |lanes: usize| {
        let lanes_lit = Literal::usize_unsuffixed(lanes);
        let chunks = plan.chunks.iter().zip(&wins).map(|(c, w)| match c.written {
            true => quote!(#chunk_mut::<_, #lanes_lit>(#w, #at, 0)),
            false => quote!(#chunk::<_, #lanes_lit>(#w, #at, 0)),
        });
        let copies = match lanes <= COPIED_UP_TO {
            true => copies.clone(),
            false => Vec::new(),
        };
        quote!(
            #[allow(clippy::all, clippy::pedantic, clippy::nursery, clippy::restriction)]
            while #n - #at >= #lanes_lit {
                let (#(#some(#vars),)*) = (#(#chunks,)*) else { break; };
                #(let #copies: [_; #lanes_lit] = *#copies;)*
                for #l in 0..#lanes_lit {
                    #[allow(unused_variables)]
                    let #index: usize = #k + #at + #l;
                    #(#lane_stmts)*
                }
                #at += #lanes_lit;
            }
        )
    };
    let levels = WINDOW_LEVELS.map(level);
    let narrow_lit = Literal::usize_unsuffixed(WINDOW_LEVELS[WINDOW_LEVELS.len() - 1]);
    let rest_body = body_over(plan, &wins, &l);
    let rest_stmts = &rest_body.stmts;
    let lanes = quote!({
        let mut #at: usize = 0;
        #(#levels)*
        #[allow(clippy::all, clippy::pedantic, clippy::nursery, clippy::restriction)]
        for #l in #at..#n {
            #[allow(unused_variables)]
            let #index: usize = #k + #l;
            #(#rest_stmts)*
        }
    });
    // The windows as a closure's parameters, where their element types have names: a
    // function's `&mut [T]` parameter overlaps no other, and LLVM keeps that knowledge when it
    // inlines the call. Views' slices (`as_slice_mut()`) do not carry it, and the loops
    // compiled behind run-time overlap checks: with it, the SIMD variant of a 512 × 512 ndarray
    // stencil took 31.9–32.9 µs instead of 33.7–34.7 in three runs of four (BENCHMARKS.md,
    // "The 512² stencil at the hand stencil's speed"). A parameter's type is written out, `&[f32]`, because `&[_]` would
    // leave a method call on an element (`w0[l].abs()`) without a type when the closure's
    // body is checked.
    let types: Option<Vec<TokenStream>> = plan
        .chunks
        .iter()
        .map(|c| {
            let elem = Ident::new(c.elem.name()?, proc_macro2::Span::call_site());
            Some(match c.written {
                true => quote!(&mut [#elem]),
                false => quote!(&[#elem]),
            })
        })
        .collect();
    let run = match types {
        Some(types) => {
            let lanes_fn = hidden("__adaptive_lanes");
            quote!({
                let #lanes_fn = { #[inline(always)] |#(#wins: #types,)*| #lanes };
                #lanes_fn(#(#wins,)*);
            })
        }
        None => lanes,
    };
    quote!({
        let #n: usize = #end.saturating_sub(#k);
        #n >= #narrow_lit && match (#(#takes,)*) {
            (#(#some(#wins),)*) => {
                #run
                true
            }
            #[allow(unreachable_patterns)]
            _ => false,
        }
    })
}

/// The names, among `vars` (one per chunk of `plan`), of the chunks the loop only reads: the
/// ones copied by value before the lanes run.
fn read_chunks<'a>(plan: &Plan, vars: &'a [Ident]) -> Vec<&'a Ident> {
    plan.chunks.iter().zip(vars).filter(|(c, _)| !c.written).map(|(_, v)| v).collect()
}

/// An index expression accepted by [`Check::offset`] with the loop index at `at`, in checked
/// arithmetic: an `Option<usize>`, `None` where the expression as written would overflow.
fn checked(e: &Expr, index: &Ident, at: &TokenStream) -> TokenStream {
    match e {
        Expr::Paren(p) => checked(&p.expr, index, at),
        Expr::Group(g) => checked(&g.expr, index, at),
        Expr::Binary(b) => {
            let op = match b.op {
                BinOp::Add(_) => helper("index_add"),
                BinOp::Sub(_) => helper("index_sub"),
                _ => helper("index_mul"),
            };
            let (left, right) = (checked(&b.left, index, at), checked(&b.right, index, at));
            quote!(#op(#left, #right))
        }
        e if plain_ident(e).is_some_and(|n| n == *index) => quote!(::core::option::Option::Some(#at)),
        e => quote!(::core::option::Option::Some(#e)),
    }
}

#[cfg(test)]
mod tests {
    //! Which element-wise loops are rewritten and which are left alone, one case per shape and
    //! per reason. That the rewritten code computes what Scalar computes, bit for bit, and
    //! panics where it panics, is `tests/elementwise_lanes.rs`; that user-shaped code compiles
    //! warning-free, `ui-tests/tests/ui/pass/elementwise_lanes.rs`.

    use super::super::reassociate;
    use crate::reason::{word, Reason};
    use proc_macro2::TokenStream;
    use quote::{quote, ToTokens};

    /// The reports of `f`'s body as (idiom, rewritten, reason), and the rewritten body.
    fn all(f: TokenStream, opt_out: Option<Reason>) -> (Vec<(String, bool, &'static str)>, String) {
        let f: syn::ItemFn = syn::parse2(f).unwrap();
        let (block, reports) = reassociate(&f.block, &crate::body::Body::new(&f.block, &f.sig, false), opt_out);
        (
            reports.into_iter().map(|r| (r.idiom, r.rewritten, word(r.reason))).collect(),
            block.into_token_stream().to_string(),
        )
    }

    fn yes() -> Vec<(String, bool, &'static str)> {
        vec![(super::IDIOM.to_string(), true, "")]
    }

    /// `f`'s one loop is rewritten: the rewritten body.
    fn rewritten(f: TokenStream) -> String {
        let (reports, body) = all(f, None);
        assert_eq!(reports, yes(), "{body}");
        body
    }

    /// `f`'s one loop is left alone for `reason`, untouched.
    fn left(f: TokenStream, reason: &str) {
        let (reports, body) = all(f.clone(), None);
        assert_eq!(reports, [(super::IDIOM.to_string(), false, reason)], "{body}");
        let original: syn::ItemFn = syn::parse2(f).unwrap();
        assert_eq!(body, original.block.into_token_stream().to_string(), "left alone means untouched");
    }

    /// `fn k(a: &[f32], b: &[f32], out: &mut [f32], n: usize, s: f32) { for i in 0..n { <body> } }`.
    fn range_loop(body: TokenStream) -> TokenStream {
        quote!(fn k(a: &[f32], b: &[f32], out: &mut [f32], n: usize, s: f32) {
            for i in 0..n {
                #body
            }
        })
    }

    fn count(body: &str, what: &str) -> usize {
        body.matches(what).count()
    }

    #[test]
    fn blur_interior_inside_the_rows_loop() {
        let (reports, body) = all(
            quote!(
                fn box_blur(src: &[f32], dst: &mut [f32], w: usize) {
                    let h = src.len() / w;
                    for (y, out) in dst.chunks_exact_mut(w).enumerate() {
                        let row = &src[y * w..(y + 1) * w];
                        if y == 0 || y == h - 1 {
                            out.copy_from_slice(row);
                            continue;
                        }
                        let up = &src[(y - 1) * w..y * w];
                        let down = &src[(y + 1) * w..(y + 2) * w];
                        out[0] = row[0];
                        out[w - 1] = row[w - 1];
                        for x in 1..w - 1 {
                            let sum = up[x - 1]
                                + up[x]
                                + up[x + 1]
                                + row[x - 1]
                                + row[x]
                                + row[x + 1]
                                + down[x - 1]
                                + down[x]
                                + down[x + 1];
                            out[x] = sum / 9.0;
                        }
                    }
                }
            ),
            None,
        );
        // The rows loop stores `out[0]`, but holds a loop: not element-wise, not reported.
        assert_eq!(reports, yes(), "{body}");
        // Nine reads and one write per chunk: first from the nine windows and the written one
        // (each access over the whole range) at 64 lanes, then 16; where a window is out of
        // bounds, from the slices at 64 lanes, then 16, then 4.
        assert_eq!(count(&body, "reduce :: window (& "), 9, "{body}");
        assert_eq!(count(&body, "reduce :: window_mut (& mut out [..]"), 1, "{body}");
        assert_eq!(count(&body, "reduce :: chunk :: < _ , 64 > (__adaptive_w"), 9, "{body}");
        assert_eq!(count(&body, "reduce :: chunk_mut :: < _ , 64 > (__adaptive_w9"), 1, "{body}");
        assert_eq!(count(&body, "reduce :: chunk :: < _ , 64 >"), 18, "{body}");
        assert_eq!(count(&body, "reduce :: chunk_mut :: < _ , 64 >"), 2, "{body}");
        assert_eq!(count(&body, "reduce :: chunk :: < _ , 16 >"), 18, "{body}");
        assert_eq!(count(&body, "reduce :: chunk_mut :: < _ , 16 >"), 2, "{body}");
        assert_eq!(count(&body, "reduce :: chunk :: < _ , 4 >"), 9, "{body}");
        assert_eq!(count(&body, "reduce :: chunk_mut :: < _ , 4 >"), 1, "{body}");
        // Below 16 lanes the windows' elements one at a time.
        assert!(
            body.contains("let x : usize = __adaptive_k + __adaptive_l ; let sum = __adaptive_w0 [__adaptive_l]"),
            "{body}"
        );
        assert!(body.contains("chunk_mut :: < _ , 16 > (& mut out [..] , __adaptive_b9 , 0)"), "{body}");
        // `x - 1` at the chunk's first and last lane, without overflow.
        assert!(body.contains("index_sub (:: core :: option :: Option :: Some (__adaptive_k) , :: core :: option :: Option :: Some (1))"), "{body}");
        assert!(body.contains("let x : usize = __adaptive_k + __adaptive_l ;"), "{body}");
        assert!(body.contains("__adaptive_h9 [__adaptive_l] = sum / 9.0"), "{body}");
        // In the slices' path the nine read chunks are copied before the lanes run, at every
        // level; the written one is not. The windows' path copies them at 16 lanes, not at 64.
        assert!(body.contains("let __adaptive_h0 : [_ ; 64] = * __adaptive_h0 ;"), "{body}");
        assert_eq!(count(&body, ": [_ ; 64] = *"), 9, "{body}");
        assert_eq!(count(&body, ": [_ ; 16] = *"), 18, "{body}");
        assert_eq!(count(&body, ": [_ ; 4] = *"), 9, "{body}");
        assert_eq!(count(&body, "let __adaptive_h9 : [_"), 0, "{body}");
        // Where no chunk is taken, the body as written.
        assert!(body.contains("for x in __adaptive_k .. __adaptive_stop { let sum = up [x - 1]"), "{body}");
        // The windows' lanes run in a closure that takes the windows as parameters, called once;
        // the slices' path runs out of line, through `simd_cold`.
        let params: Vec<String> = (0..9).map(|n| format!("__adaptive_w{n} : & [f32] ,")).collect();
        let closure = format!("# [inline (always)] | {} __adaptive_w9 : & mut [f32] , |", params.join(" "));
        assert_eq!(count(&body, &closure), 1, "{body}");
        let args: Vec<String> = (0..10).map(|n| format!("__adaptive_w{n} ,")).collect();
        assert_eq!(count(&body, &format!("__adaptive_lanes ({}) ;", args.join(" "))), 1, "{body}");
        assert_eq!(count(&body, "__private :: simd_cold (# [inline (always)] || loop {"), 1, "{body}");
    }

    #[test]
    fn in_place_updates_read_the_written_element() {
        let body = rewritten(range_loop(quote!(out[i] = out[i] * s + a[i];)));
        // `out[i]` read and written: one mutable chunk; `a[i]`: one shared (in each path).
        assert_eq!(count(&body, ":: chunk_mut :: < _ , 16 >"), 2, "{body}");
        assert_eq!(count(&body, ":: chunk :: < _ , 16 >"), 2, "{body}");
        assert!(
            body.contains(
                "__adaptive_h0 [__adaptive_l] = __adaptive_h0 [__adaptive_l] * s + __adaptive_h1 [__adaptive_l]"
            ),
            "{body}"
        );
        rewritten(range_loop(quote!(out[i] += s * a[i];)));
        rewritten(range_loop(quote!(out[i] /= b[i];)));
    }

    #[test]
    fn f64_elements_take_the_same_chunks() {
        let body = rewritten(quote!(
            fn k(x: &[f64], y: &mut Vec<f64>, alpha: f64) {
                for i in 0..y.len() {
                    y[i] = alpha * x[i] + y[i];
                }
            }
        ));
        for lanes in [64, 16, 4] {
            assert!(body.contains(&format!(":: chunk_mut :: < _ , {lanes} >")), "{body}");
        }
        assert!(body.contains("| __adaptive_w0 : & [f64] , __adaptive_w1 : & mut [f64] , |"), "{body}");
    }

    #[test]
    fn windows_whose_element_type_has_no_name_run_without_the_closure() {
        // `vec![0.0; n]` holds floats of either width, as inference decides: the closure's
        // parameter could not be written out (and `&mut [_]` would leave the body's method
        // calls on its elements without a type).
        let body = rewritten(quote!(
            fn k(a: &[f32], out: &mut [f32]) {
                let mut tmp = vec![0.0; a.len()];
                for i in 0..a.len() {
                    tmp[i] = a[i] * 2.0;
                }
                out[0] = tmp[0];
            }
        ));
        assert_eq!(count(&body, "reduce :: window_mut (& mut tmp [..]"), 1, "{body}");
        assert!(!body.contains("__adaptive_lanes"), "{body}");
        assert_eq!(count(&body, "__private :: simd_cold"), 1, "{body}");
    }

    #[test]
    fn two_dimensional_indices_with_an_invariant_row() {
        let (reports, body) = all(
            quote!(
                fn scale_rows(a: &[f32], out: &mut [f32], w: usize, h: usize, s: &[f32]) {
                    for row in 0..h {
                        for x in 0..w {
                            out[row * w + x] = a[row * w + x] * s[row] + a[(row + 1) * w + x - 1];
                        }
                    }
                }
            ),
            None,
        );
        assert_eq!(reports, yes(), "{body}");
        // `row * w + x` at the first lane: `row * w` and the lane's index, each step checked.
        assert!(body.contains("index_add (:: adaptive_kernel :: __private :: reduce :: index_mul (:: core :: option :: Option :: Some (row) , :: core :: option :: Option :: Some (w)) , :: core :: option :: Option :: Some (__adaptive_k))"), "{body}");
        // `s[row]` does not move with the loop: read as written in each lane.
        assert!(body.contains("* s [row] +"), "{body}");
        assert_eq!(count(&body, ":: chunk :: < _ , 16 >"), 4, "{body}");
    }

    #[test]
    fn branches_locals_guards_and_casts() {
        rewritten(range_loop(quote!(if a[i] > s {
            out[i] = a[i];
        } else if a[i].is_nan() {
            out[i] = 0.0;
        } else {
            out[i] = b[i + 2];
        })));
        rewritten(range_loop(quote!(
            let mut v = a[i] * 2.0;
            if v < s {
                v = s;
            }
            out[i] = v.sqrt() + i as f32;
        )));
        rewritten(range_loop(quote!(
            if b[i] == 0.0 {
                continue;
            }
            out[i] = a[i] / b[i];
        )));
        rewritten(range_loop(quote!(out[i + 1] = a[i + n] + b[n as usize + i] + a[b.len() - 1 + i];)));
        // A constant read at an index that does not move: as written.
        let body = rewritten(range_loop(quote!(out[i] = a[i] - a[0];)));
        assert!(body.contains("- a [0]"), "{body}");
    }

    #[test]
    fn written_slices_used_elsewhere_overlap() {
        for body in [
            quote!(out[i] = out[i - 1] + a[i];),
            quote!(out[i] = a[i]; out[i + 1] = 0.0;),
            quote!(out[i] = a[i] + out.len() as f32;),
            quote!(out[0] = a[i];),
            quote!(out[i] = a[i]; let t = out[n]; let _ = t;),
        ] {
            left(range_loop(body), "overlap");
        }
    }

    #[test]
    fn indices_that_cannot_be_chunked() {
        for body in [
            quote!(out[i] = a[2 * i];),
            quote!(out[i] = a[n - i];),
            quote!(out[i] = a[i / 2];),
            quote!(out[i] = a[i + n / 2];),
            quote!(out[i] = a[i * 1];),
            quote!(out[i * 2] = a[i];),
            quote!(let j = i + 1; out[i] = a[j];),
            quote!(out[i] = a[i..][0];),
        ] {
            left(range_loop(body), "source");
        }
        left(
            quote!(
                fn k(a: &[f32], out: &mut [f32], n: usize) {
                    for i in 0..=n {
                        out[i] = a[i];
                    }
                }
            ),
            "source",
        );
        left(
            quote!(
                fn k(a: &[f32], out: &mut [f32], n: u32) {
                    for i in 0..n {
                        out[i as usize] = a[i as usize];
                    }
                }
            ),
            "source",
        );
    }

    #[test]
    fn effects_and_control_flow() {
        for (body, reason) in [
            (quote!(out[i] = f(a[i]);), "effect"),
            (quote!(out[i] = a[i]; n = i;), "effect"),
            (quote!(let m = &mut b; out[i] = a[i];), "effect"),
            (quote!(let (p, q) = out.split_at_mut(1); p[0] = q[0];), "effect"),
            (quote!(out[i] = match i { 0 => 1.0, _ => a[i] };), "effect"),
            (quote!(if a[i] < 0.0 { break; } out[i] = a[i];), "break"),
            (quote!(if a[i] < 0.0 { out[i] = 0.0; continue; } out[i] = a[i];), "continue"),
            (quote!(debug_assert!(a[i] >= 0.0); out[i] = a[i];), "macro"),
            (quote!(let i = i + 1; out[i] = a[i];), "shadow"),
            (quote!(let a = &b[1..]; out[i] = a[i];), "shadow"),
        ] {
            left(range_loop(body), reason);
        }
        left(
            quote!(
                fn k(a: &[f32], out: &mut [f32], n: usize) {
                    'rows: for i in 0..n {
                        out[i] = a[i];
                    }
                }
            ),
            "label",
        );
    }

    #[test]
    fn elements_of_unknown_or_integer_type() {
        left(
            quote!(
                fn k<T: Copy + core::ops::Add<Output = T>>(a: &[T], out: &mut [T]) {
                    for i in 0..out.len() {
                        out[i] = a[i] + a[i];
                    }
                }
            ),
            "type",
        );
        left(
            quote!(
                fn k(a: &[u8], out: &mut [u8]) {
                    for i in 0..out.len() {
                        out[i] = a[i] / 2;
                    }
                }
            ),
            "type",
        );
    }

    #[test]
    fn every_compound_assignment_stores() {
        // Disagreement resolved: this rewrite knew five compound assignments (`+=` … `%=`), the
        // reductions' stores four; a loop storing with `^=` was not element-wise at all here and
        // went unreported. Every one of the ten stores (`crate::body::access`), so the loop is
        // reported, left for its integer elements.
        left(
            quote!(
                fn k(a: &[u32], out: &mut [u32]) {
                    for i in 0..out.len() {
                        out[i] ^= a[i];
                    }
                }
            ),
            "type",
        );
    }

    #[test]
    fn integer_elements_are_read_in_lanes() {
        // Disagreement resolved: an element of an integer slice (`counts[k]` of a `vec![0u32; n]`,
        // `labels[i]` of a `&[usize]`) was of no known type to this rewrite, though the split and
        // the GPU variant knew it; its value is known now, so it is read in lanes like a float's.
        let body = rewritten(quote!(
            fn means(totals: &[f32], means: &mut [f32]) {
                let counts = vec![0u32; 256];
                for k in 0..means.len() {
                    means[k] = if counts[k] > 0 { totals[k] / counts[k] as f32 } else { 0.0 };
                }
            }
        ));
        assert!(body.contains("chunk :: < _ , 64 > (& counts [..] , __adaptive_b"), "{body}");
        // A gather (`x[idx[i]]`) is no longer an effect but an index that does not move with the loop's.
        left(
            quote!(
                fn gather(x: &[f32], idx: &[usize], out: &mut [f32]) {
                    for i in 0..out.len() {
                        out[i] = x[idx[i]];
                    }
                }
            ),
            "source",
        );
    }

    #[test]
    fn what_is_not_element_wise_is_not_reported() {
        for f in [
            // An iterator walk: no bounds checks to hoist.
            quote!(
                fn k(a: &[f32], out: &mut [f32]) {
                    for (o, x) in out.iter_mut().zip(a) {
                        *o = x * 2.0;
                    }
                }
            ),
            // A reversed range is not a range expression.
            quote!(
                fn k(a: &[f32], out: &mut [f32], n: usize) {
                    for i in (0..n).rev() {
                        out[i] = a[i];
                    }
                }
            ),
            // No store into an element.
            quote!(
                fn k(a: &[f32], n: usize) {
                    for i in 0..n {
                        let t = a[i];
                        let _ = t;
                    }
                }
            ),
            // A store only inside a closure.
            quote!(
                fn k(out: &mut [f32], n: usize) {
                    for i in 0..n {
                        let mut f = |v| out[i] = v;
                        f(1.0);
                    }
                }
            ),
        ] {
            assert_eq!(all(f, None).0, []);
        }
    }

    #[test]
    fn opt_outs() {
        // `exact` keeps every float operation's order, which the rewrite does too.
        let (reports, _) = all(range_loop(quote!(out[i] = a[i] * s;)), Some(Reason::Exact));
        assert_eq!(reports, yes());
        let (reports, body) = all(range_loop(quote!(out[i] = a[i] * s;)), Some(Reason::Simd));
        assert_eq!(reports, [(super::IDIOM.to_string(), false, "simd")], "{body}");
        assert!(!body.contains("__adaptive"), "{body}");
    }

    #[test]
    fn the_parallel_variants_chunk_loops_are_rewritten_too() {
        // What the split makes of a range loop's writes (`o0[(i - lo)]`) and of a rows walk
        // (`zip((lo..), o0.chunks_exact_mut(w))`): the element-wise loops inside are rewritten.
        let (reports, body) = all(
            quote!(
                fn k(a: &[f32], out: &mut [f32], w: usize) {
                    let lo: usize = 3;
                    let hi: usize = 9;
                    let o0: &mut [f32] = out;
                    for i in lo..hi {
                        o0[(i - lo)] = a[i] * 2.0;
                    }
                    for (y, row) in ::core::iter::Iterator::zip((lo..), o0.chunks_exact_mut(w)) {
                        for x in 0..w {
                            row[x] = a[y * w + x];
                        }
                    }
                }
            ),
            None,
        );
        assert_eq!(reports, [yes(), yes()].concat(), "{body}");
    }
}
