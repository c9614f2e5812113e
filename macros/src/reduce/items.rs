//! Items in lanes: a loop over items whose body loops over other items and,
//! inside, a short reduction over each item's own row (a k-means assignment:
//! for each point, for each centroid, the squared distance over the point's
//! coordinates) runs `L` items at once, one item per lane, as a hand-written
//! kernel transposes its points. Unroll-and-jam of the outer loop by `L` with
//! the jammed copies in lanes: the reduction's rows are read a chunk of items
//! at a time from a transposed copy, what all items share (a centroid's
//! coordinate) is read once for the `L` of them, and no horizontal sum is
//! needed, since each lane's sum is its own item's.
//!
//! ```text
//! for i in 0..n {                                    // the items
//!     let p = &points[i * d..(i + 1) * d];           // the item's row
//!     let mut best = 0;                              // the item's state
//!     let mut best_dist = f32::INFINITY;
//!     for c in 0..k {                                // a loop all items run alike
//!         let q = &cent[c * d..(c + 1) * d];         // shared
//!         let mut dist = 0.0f32;                     // the item's, per c
//!         for j in 0..d {                            // over the row
//!             let t = p[j] - q[j];
//!             dist += t * t;
//!         }
//!         if dist < best_dist { best_dist = dist; best = c; }
//!     }
//!     labels[i] = best as u32;                       // after: item by item, in order
//!     inertia += best_dist;
//! }
//! ```
//!
//! becomes (for `L` items at a time, while `d` fits the transposed copy):
//!
//! ```text
//! {
//!     let mut i0: usize = 0; let end: usize = n; let width: usize = d;
//!     if width <= MAX_ROW {
//!         let mut t0 = [[0.0f32; L]; MAX_ROW];
//!         while end.saturating_sub(i0) >= L {
//!             for l in 0..L {                        // the rows, as written, transposed
//!                 let i: usize = i0 + l;
//!                 let p = &points[i * d..(i + 1) * d];
//!                 for j in 0..p.len() { t0[j][l] = p[j]; }
//!             }
//!             let mut best = [0; L];
//!             let mut best_dist = [f32::INFINITY; L];
//!             for c in 0..k {
//!                 let q = &cent[c * d..(c + 1) * d];
//!                 let mut dist = [0.0f32; L];
//!                 for j in 0..d {
//!                     for l in 0..L { let t = t0[j][l] - q[j]; dist[l] += t * t; }
//!                 }
//!                 for l in 0..L { if dist[l] < best_dist[l] { best_dist[l] = dist[l]; best[l] = c; } }
//!             }
//!             for l in 0..L {
//!                 let i: usize = i0 + l;
//!                 let p = &points[i * d..(i + 1) * d];
//!                 labels[i] = best[l] as u32;
//!                 inertia += best_dist[l];
//!             }
//!             i0 += L;
//!         }
//!     }
//!     for i in i0..end { … }                         // the rest, as before
//! }
//! ```
//!
//! Two refinements of that middle loop:
//!
//! - **Four centroids per pass** ([`JAM`]): where the inner loop and the
//!   middle loop's `let`s read none of the items' state ([`jammable`]), the
//!   middle loop runs four iterations at once: their `let`s (names renamed
//!   per copy, `q` → `__adaptive_q_0` … `__adaptive_q_3`), then one inner loop
//!   whose lanes run the four copies' statements (four independent sums, each
//!   row element read once for the four), then the four copies' statements
//!   after it, in the centroids' order; the centroids left over one at a time.
//! - **Shared rows read whole**: a row the items share, read at `q[j]`, is
//!   taken as `q.get(..width)` before the inner loop, so that its reads need
//!   no bounds check; where it is shorter than `width`, the inner loop runs as
//!   written, and panics where the loop as written panics.
//!
//! Each lane runs its item's statements in their order, so every value an
//! item computes is the Scalar variant's bit for bit: the reduction is not
//! regrouped, a compare-and-keep selects exactly as written, and the
//! statements after the inner loops run item by item in the original order
//! (a running total keeps its order too). What changes is when: all `L`
//! items' rows are taken, and their inner loops run, before the first of
//! them finishes, so a panic in a later item's row or inner loops comes
//! before an earlier item's last statements ran.
//!
//! **What is taken**: `for i in start..end` over `usize` whose body is `let`s
//! (each item's rows, `let p = &x[i * d..(i + 1) * d];` of a shared float
//! slice, all of one width `d`, a name or a literal; and pure state, `let mut
//! best = 0;`), then one `for c in ..` over a range the items share, then any
//! statements that write nothing the loops read (as a jam's). The middle
//! loop's body is `let`s, one `for j in 0..d` (or `0..p.len()`) and
//! statements after it; those and the inner loop's body hold only pure `let`s,
//! assignments to the items' names, `if`s and top-level `continue` guards,
//! and read rows only as `p[j]`. Reported as `for range items`. Anything
//! else is left to the other rewrites (its middle loop may still be jammed).

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, ExprForLoop, Pat, RangeLimits, Stmt};

use super::emit::hidden;
use super::jam::{holds_loop, suffix_problem};
use super::recognise::{source, Source};
use crate::body::{
    continue_guard, forbidden, holds_expr, is_compound, let_names, pat_names, plain_ident, row_range, Access, Elem,
    Env, ForLoop, Int, Ty, Width, Write,
};
use crate::tokens::{mentions, strip};

/// The idiom loops taken this way are reported under.
pub(crate) const IDIOM: &str = "for range items";

/// The longest row the transposed copy holds: `MAX_ROW × L` elements on the stack (4 KiB
/// for `f32`). Longer rows leave the loop to the other rewrites, which suit them.
const MAX_ROW: usize = 64;

/// Centroids per pass over the rows (the middle loop unrolled and jammed, see [`jammable`]):
/// four independent sums per lane, each row element read once for the four. One sum per
/// pass waited on the latency of its own additions: a hand-written model of the 16-point
/// block ran 388 → 278 µs at 16 dimensions and 6.6 → 3.2 ms at 39 (16,384 points, 32 and 256
/// centroids), with the same labels and inertia bit for bit.
const JAM: usize = 4;

/// Items per block: one 512-bit vector of the rows' elements.
fn lanes(width: Width) -> usize {
    match width {
        Width::F64 => 8,
        _ => 16,
    }
}

/// An item's row: `let p = &x[i * d..(i + 1) * d];`.
struct Row {
    name: String,
    width: Width,
}

/// Decides about `f` (neither a reduction rewritten as a whole nor element-wise); `env` holds
/// the names in scope before it. `Some((jammed, rest))`: the part that takes `L` items at a
/// time (a block of its own, which the walk does not enter) and the loop as written over
/// the items left, for the walk to rewrite as usual.
pub(crate) fn analyse(l: &ForLoop, env: &Env) -> Option<(TokenStream, ExprForLoop)> {
    let f = l.f;
    let Some(Source::Range { start, end }) = Source::of(&l.walk, env) else { return None };
    let index = l.index.clone()?;
    if f.label.is_some() {
        return None;
    }
    let stmts = &f.body.stmts;
    let [at] = *loop_positions(stmts).as_slice() else { return None };
    let (prefix, middle, suffix) = (&stmts[..at], &stmts[at], &stmts[at + 1..]);
    let Stmt::Expr(Expr::ForLoop(middle), _) = middle else { return None };
    if prefix.iter().chain(suffix).any(holds_loop) || middle.label.is_some() {
        return None;
    }

    // The prefix: rows and the items' state.
    let mut item_env = env.clone();
    item_env.push();
    item_env.bind(index.to_string(), Ty::Int(Int::Usize), false);
    let mut rows: Vec<Row> = Vec::new();
    let mut width_expr: Option<Expr> = None;
    let mut state: Vec<Binding> = Vec::new();
    for stmt in prefix {
        let Stmt::Local(l) = stmt else { return None };
        let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
        match row(&l.pat, &init.expr, &index, env) {
            Some((row, width)) => {
                let same = width_expr.as_ref().is_none_or(|w| tokens(w) == tokens(&width));
                if !same {
                    return None;
                }
                width_expr = Some(width);
                rows.push(row);
            }
            None => {
                let (name, mutable) = binding(&l.pat)?;
                if !item_env.value(&init.expr).known() {
                    return None;
                }
                state.push(Binding { name, mutable, init: (*init.expr).clone() });
            }
        }
        item_env.bind_let(l);
    }
    let width = width_expr?;
    let row_names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    let elem = rows[0].width;
    let elem_name = elem.name()?;
    if rows.iter().any(|r| r.width != elem) {
        return None;
    }

    // The middle loop: over a range the items share.
    let Some(Source::Range { start: c_start, end: c_end }) = source(&middle.expr, &item_env, true) else {
        return None;
    };
    let c_index = plain_pat(&middle.pat)?;
    let mut varying: Vec<String> = vec![index.to_string()];
    varying.extend(state.iter().map(|b| b.name.to_string()));
    let shared_names: Vec<String> = varying.iter().chain(&row_names).cloned().collect();
    if mentions(c_start.to_token_stream(), &shared_names) || mentions(c_end.to_token_stream(), &shared_names) {
        return None;
    }
    let mut c_env = item_env.clone();
    c_env.push();
    c_env.bind(c_index.to_string(), Ty::Int(Int::Usize), false);
    let c_stmts = &middle.body.stmts;
    let [inner_at] = *loop_positions(c_stmts).as_slice() else { return None };
    let (c_prefix, inner, c_suffix) = (&c_stmts[..inner_at], &c_stmts[inner_at], &c_stmts[inner_at + 1..]);
    let Stmt::Expr(Expr::ForLoop(inner), _) = inner else { return None };
    if c_prefix.iter().chain(c_suffix).any(holds_loop) || inner.label.is_some() || holds_loop_in(&inner.body) {
        return None;
    }
    // The middle loop's lets: the items' own where they are assigned later or read an item's.
    let assigned = assigned_names(&inner.body.stmts, c_suffix);
    let mut c_varying: Vec<String> = Vec::new();
    let mut c_lets: Vec<CLet> = Vec::new();
    for stmt in c_prefix {
        let Stmt::Local(l) = stmt else { return None };
        let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
        if !c_env.value(&init.expr).known() {
            return None;
        }
        let names = pat_names(&l.pat);
        let all: Vec<String> = varying.iter().chain(&c_varying).chain(&row_names).cloned().collect();
        let reads_item = mentions(init.expr.to_token_stream(), &all);
        if reads_item || names.iter().any(|n| assigned.contains(n)) {
            let (name, mutable) = binding(&l.pat)?;
            if mentions(init.expr.to_token_stream(), &row_names) {
                return None;
            }
            c_varying.push(name.to_string());
            c_lets.push(CLet::Item(Binding { name, mutable, init: (*init.expr).clone() }));
        } else {
            c_lets.push(CLet::Shared(stmt.clone()));
        }
        c_env.bind_let(l);
    }
    varying.extend(c_varying.iter().cloned());
    let shared_rows: Vec<Ident> = c_lets
        .iter()
        .filter_map(|c| match c {
            CLet::Shared(Stmt::Local(l)) => plain_pat(&l.pat),
            _ => None,
        })
        .filter(|name| matches!(c_env.lookup(&name.to_string()), Some((Ty::Slice { access: Access::Shared, .. }, _))))
        .collect();

    // The inner loop: over the row, `0..d` or `0..p.len()`.
    let j = plain_pat(&inner.pat)?;
    let syn::Expr::Range(range) = strip(&inner.expr) else { return None };
    let from_zero =
        matches!(range.start.as_deref().map(strip), Some(Expr::Lit(l)) if tokens(&Expr::Lit(l.clone())) == "0");
    let to_width =
        range.end.as_deref().is_some_and(|e| tokens(e) == tokens(&width) || row_names.iter().any(|r| is_len_of(e, r)));
    if !from_zero || !to_width || !matches!(range.limits, RangeLimits::HalfOpen(_)) {
        return None;
    }

    let shared_rows: Vec<Ident> = shared_rows.into_iter().filter(|r| read_at(&inner.body, r, &j)).collect();

    // The statements run in lanes: pure, assigning only the items' names, rows read at `[j]`.
    let mut j_env = c_env.clone();
    j_env.push();
    j_env.bind(j.to_string(), Ty::Int(Int::Usize), false);
    let lane_names: Vec<String> = varying.clone();
    if !lane_stmts(&inner.body.stmts, &mut j_env, &lane_names, &row_names, Some(&j), true)
        || !lane_stmts(c_suffix, &mut c_env.clone(), &lane_names, &row_names, None, true)
    {
        return None;
    }
    // Names the lanes' statements bind must not hide an item's.
    let mut bound = let_names(&inner.body.stmts);
    bound.extend(let_names(c_suffix));
    if bound.iter().any(|b| varying.contains(b) || row_names.contains(b)) {
        return None;
    }
    // The statements after the loops: item by item, writing nothing the loops read.
    let per_item: Vec<String> = varying.iter().chain(&row_names).cloned().collect();
    if suffix_problem(prefix, middle, suffix, &per_item, &item_env).is_some() {
        return None;
    }
    if forbidden(&Block { brace_token: Default::default(), stmts: suffix.to_vec() }).is_some() {
        return None;
    }
    // Names the statements after the loops bind (a `let`, a closure's parameter) must not hide
    // an item's: its uses would become lane reads of what is not an array.
    if suffix.iter().any(|s| binds_any(s, &per_item)) {
        return None;
    }

    let jam = jammable(&state, &c_lets, inner, c_suffix, &c_index).then_some((&*c_start, &*c_end));
    let elem = (elem, elem_name);
    Some((
        emit(
            f,
            &index,
            &start,
            &end,
            &width,
            &rows,
            elem,
            &state,
            Middle { middle, c_lets: &c_lets, shared_rows: &shared_rows, jam },
            inner,
            c_suffix,
            suffix,
            &varying,
        ),
        {
            let mut rest = f.clone();
            let (i0, iend) = (hidden("__adaptive_i"), hidden("__adaptive_iend"));
            *rest.expr = syn::parse2(quote!(#i0..#iend)).expect("a range is an expression");
            rest
        },
    ))
}

/// A `let` of one of the items' names: the name, whether it is `mut`, its initialiser.
struct Binding {
    name: Ident,
    mutable: bool,
    init: Expr,
}

/// A `let` of the middle loop's body: as written (a value all items share), or the items'.
enum CLet {
    Shared(Stmt),
    Item(Binding),
}

impl CLet {
    /// The names the `let` binds.
    fn names(&self) -> Vec<Ident> {
        match self {
            CLet::Shared(Stmt::Local(l)) => {
                pat_names(&l.pat).iter().map(|n| Ident::new(n, Span::call_site())).collect()
            }
            CLet::Shared(_) => Vec::new(),
            CLet::Item(b) => vec![b.name.clone()],
        }
    }
}

/// The middle loop, its `let`s and shared rows (see [`emit`]), and the range it is jammed over
/// (`start`, `end`) where [`jammable`] says so.
struct Middle<'a> {
    middle: &'a ExprForLoop,
    c_lets: &'a [CLet],
    shared_rows: &'a [Ident],
    jam: Option<(&'a Expr, &'a Expr)>,
}

/// Whether the middle loop may run [`JAM`] of its iterations at once: their `let`s and inner
/// loops first, in iteration order, then the statements after each inner loop, in iteration
/// order. Each iteration then computes what it computes as written, bit for bit, where its
/// `let`s and inner loop read nothing the statements after an earlier iteration's inner loop
/// may change: none of the items' state (`best_dist`), only the rows, the index, what the
/// iteration binds and what the loop does not write. The copies' names are renamed, so
/// nothing in the middle loop's body may bind one of its names again, and it holds no closure
/// or macro (whose contents the renaming would not see).
fn jammable(state: &[Binding], c_lets: &[CLet], inner: &ExprForLoop, c_suffix: &[Stmt], c: &Ident) -> bool {
    let state: Vec<String> = state.iter().map(|b| b.name.to_string()).collect();
    let item_inits = c_lets.iter().filter_map(|l| match l {
        CLet::Item(b) => Some(b.init.to_token_stream()),
        CLet::Shared(_) => None,
    });
    let reads_state = item_inits.chain([inner.body.to_token_stream()]).any(|t| mentions(t, &state));
    let mut names: Vec<String> = vec![c.to_string()];
    names.extend(c_lets.iter().flat_map(CLet::names).map(|n| n.to_string()));
    let mut bound = let_names(&inner.body.stmts);
    bound.extend(let_names(c_suffix));
    let rebinds = bound.iter().any(|b| names.contains(b));
    let opaque = {
        let mut find = Opaque(false);
        find.visit_block(&inner.body);
        c_suffix.iter().for_each(|s| find.visit_stmt(s));
        c_lets.iter().for_each(|l| match l {
            CLet::Shared(stmt) => find.visit_stmt(stmt),
            CLet::Item(b) => find.visit_expr(&b.init),
        });
        find.0
    };
    !reads_state && !rebinds && !opaque
}

/// Finds a closure or a macro.
struct Opaque(bool);

impl<'ast> Visit<'ast> for Opaque {
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {
        self.0 = true;
    }
    fn visit_macro(&mut self, _: &'ast syn::Macro) {
        self.0 = true;
    }
}

/// The middle loop's names (its index, its `let`s') renamed for one of [`JAM`]'s copies, or
/// left as they are.
#[derive(Clone)]
struct Renamed {
    names: Vec<(String, Ident)>,
}

impl Renamed {
    fn none() -> Renamed {
        Renamed { names: Vec::new() }
    }

    /// Copy `n`'s names: `__adaptive_<name>_<n>`, in the name's span.
    fn copy(n: usize, names: &[Ident]) -> Renamed {
        let names =
            names.iter().map(|i| (i.to_string(), Ident::new(&format!("__adaptive_{i}_{n}"), i.span()))).collect();
        Renamed { names }
    }

    fn ident(&self, name: &Ident) -> Ident {
        self.names.iter().find(|(n, _)| name == n).map_or_else(|| name.clone(), |(_, i)| i.clone())
    }

    fn name(&self, name: &str) -> String {
        self.names.iter().find(|(n, _)| n == name).map_or_else(|| name.to_string(), |(_, i)| i.to_string())
    }
}

impl VisitMut for Renamed {
    fn visit_expr_path_mut(&mut self, p: &mut syn::ExprPath) {
        if let Some(name) = p.path.get_ident() {
            if p.qself.is_none() {
                let renamed = self.ident(name);
                p.path = renamed.into();
            }
        }
    }

    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        p.ident = self.ident(&p.ident);
        syn::visit_mut::visit_pat_ident_mut(self, p);
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `x`, `mut x`, `x: T`, `mut x: T`: the name and whether it is `mut`.
fn binding(pat: &Pat) -> Option<(Ident, bool)> {
    match pat {
        Pat::Ident(p) if p.attrs.is_empty() && p.by_ref.is_none() && p.subpat.is_none() => {
            Some((p.ident.clone(), p.mutability.is_some()))
        }
        Pat::Type(t) => binding(&t.pat),
        _ => None,
    }
}

fn plain_pat(pat: &Pat) -> Option<Ident> {
    match pat {
        Pat::Ident(p) if p.attrs.is_empty() && p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
            Some(p.ident.clone())
        }
        _ => None,
    }
}

fn tokens(e: &Expr) -> String {
    strip(e).to_token_stream().to_string()
}

/// Whether `e` is `r.len()`. Compared as syntax, not as printed tokens: the compiler prints
/// `p.len()` where proc-macro2's own printer (the unit tests', the golden expansions') prints
/// `p . len ()`, so a comparison of strings held in tests and failed in real builds.
fn is_len_of(e: &Expr, r: &str) -> bool {
    matches!(strip(e), Expr::MethodCall(m) if m.method == "len" && m.args.is_empty()
        && plain_ident(&m.receiver).is_some_and(|i| i == r))
}

/// The positions of the `for` statements of a block.
fn loop_positions(stmts: &[Stmt]) -> Vec<usize> {
    stmts.iter().enumerate().filter(|(_, s)| matches!(s, Stmt::Expr(Expr::ForLoop(_), _))).map(|(n, _)| n).collect()
}

fn holds_loop_in(block: &Block) -> bool {
    block.stmts.iter().any(holds_loop)
}

/// `let p = &x[i * d..(i + 1) * d]` (or `d * i`, `d * (i + 1)`) of a shared float slice `x`,
/// `d` a name or an integer literal: the row and `d`.
fn row(pat: &Pat, init: &Expr, index: &Ident, env: &Env) -> Option<(Row, Expr)> {
    let name = plain_pat(pat)?;
    let Expr::Reference(r) = strip(init) else { return None };
    if r.mutability.is_some() {
        return None;
    }
    let Expr::Index(ix) = strip(&r.expr) else { return None };
    let slice = plain_ident(&ix.expr)?;
    let width = match env.lookup(&slice.to_string()) {
        Some((Ty::Slice { elem: Elem::Float(width), access: Access::Shared }, _)) if width != Width::Any => width,
        _ => return None,
    };
    let Expr::Range(range) = strip(&ix.index) else { return None };
    let is_index = |e: &Expr| plain_ident(e).is_some_and(|i| i == *index);
    let w = row_range(range, &is_index)?;
    let invariant = match strip(&w) {
        Expr::Lit(l) => matches!(&l.lit, syn::Lit::Int(i) if matches!(i.suffix(), "" | "usize")),
        e => plain_ident(e)
            .is_some_and(|w| w != *index && matches!(env.lookup(&w.to_string()), Some((Ty::Int(Int::Usize), _)))),
    };
    invariant.then(|| (Row { name: name.to_string(), width }, w))
}

/// Whether a pattern anywhere in `stmt` binds one of `names`.
fn binds_any(stmt: &Stmt, names: &[String]) -> bool {
    struct Binds<'a>(&'a [String], bool);
    impl<'ast> Visit<'ast> for Binds<'_> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.1 |= self.0.iter().any(|n| p.ident == n);
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut binds = Binds(names, false);
    binds.visit_stmt(stmt);
    binds.1
}

/// The plain names assigned (`=`, `op=`) anywhere in `a` and `b`.
fn assigned_names(a: &[Stmt], b: &[Stmt]) -> Vec<String> {
    struct Assigned(Vec<String>);
    impl<'ast> Visit<'ast> for Assigned {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let place = Write::of(e).and_then(Write::store).map(|(place, _)| place);
            if let Some(name) = place.and_then(plain_ident) {
                self.0.push(name.to_string());
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut assigned = Assigned(Vec::new());
    a.iter().chain(b).for_each(|s| assigned.visit_stmt(s));
    assigned.0
}

/// Whether `stmts` may run in lanes: pure `let`s, assignments (`=`, `op=`) of pure values to
/// the items' names (`lanes`), `if`s over pure conditions around such statements, and (at the
/// top, `guards`) `continue` guards; rows read only as `p[j]` (`j` the inner index, or not at
/// all where there is none).
fn lane_stmts(
    stmts: &[Stmt],
    env: &mut Env,
    lanes: &[String],
    rows: &[String],
    j: Option<&Ident>,
    guards: bool,
) -> bool {
    env.push();
    let ok = stmts.iter().all(|stmt| {
        if let Some(cond) = continue_guard(stmt).filter(|_| guards) {
            return env.ty(cond) == Ty::Bool && rows_read_at(cond, rows, j);
        }
        match stmt {
            Stmt::Local(l) => {
                let Some(init) = l.init.as_ref().filter(|i| i.diverge.is_none()) else { return false };
                let ok = env.value(&init.expr).known() && rows_read_at(&init.expr, rows, j);
                env.bind_let(l);
                ok
            }
            Stmt::Expr(e, _) => lane_expr(e, env, lanes, rows, j),
            _ => false,
        }
    });
    env.pop();
    ok
}

fn lane_expr(e: &Expr, env: &mut Env, lanes: &[String], rows: &[String], j: Option<&Ident>) -> bool {
    match e {
        Expr::If(i) if i.attrs.is_empty() => {
            let cond = env.ty(&i.cond) == Ty::Bool && rows_read_at(&i.cond, rows, j);
            let then = lane_stmts(&i.then_branch.stmts, env, lanes, rows, j, false);
            let otherwise = match i.else_branch.as_ref().map(|(_, e)| &**e) {
                None => true,
                Some(Expr::Block(b)) if b.attrs.is_empty() && b.label.is_none() => {
                    lane_stmts(&b.block.stmts, env, lanes, rows, j, false)
                }
                Some(e @ Expr::If(_)) => lane_expr(e, env, lanes, rows, j),
                Some(_) => false,
            };
            cond && then && otherwise
        }
        Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => {
            lane_stmts(&b.block.stmts, env, lanes, rows, j, false)
        }
        Expr::Assign(a) if a.attrs.is_empty() => assignment(&a.left, &a.right, env, lanes, rows, j),
        Expr::Binary(b) if b.attrs.is_empty() && is_compound(&b.op) => {
            // `x op= t` is pure where `x op t` is.
            assignment(&b.left, &b.right, env, lanes, rows, j) && env.ty(&b.left).is_known()
        }
        _ => false,
    }
}

fn assignment(place: &Expr, value: &Expr, env: &Env, lanes: &[String], rows: &[String], j: Option<&Ident>) -> bool {
    let target = plain_ident(place).is_some_and(|p| lanes.iter().any(|l| p == l));
    target && env.ty(value).is_known() && rows_read_at(value, rows, j)
}

/// Whether `e` names rows only as `p[j]`.
fn rows_read_at(e: &Expr, rows: &[String], j: Option<&Ident>) -> bool {
    struct Reads<'a> {
        rows: &'a [String],
        j: Option<&'a Ident>,
        other: bool,
    }
    impl<'ast> Visit<'ast> for Reads<'_> {
        fn visit_expr_index(&mut self, ix: &'ast syn::ExprIndex) {
            let row = plain_ident(&ix.expr).is_some_and(|r| self.rows.iter().any(|n| r == n));
            let at_j = plain_ident(&ix.index).is_some_and(|i| self.j.is_some_and(|j| i == *j));
            if row && at_j {
                return;
            }
            syn::visit::visit_expr_index(self, ix);
        }
        fn visit_ident(&mut self, i: &'ast Ident) {
            self.other |= self.rows.iter().any(|r| i == r);
        }
    }
    let mut reads = Reads { rows, j, other: false };
    reads.visit_expr(e);
    !reads.other
}

/// In a lane's copy of the statements: each item's name `x` → `x[l]`, the index `i` →
/// `(i0 + l)` (unless the copy binds `i` itself: `index` is `None`), a row's `p[j]` → its
/// transposed copy's `t[j][l]`.
#[derive(Clone, Copy)]
struct InLane<'a> {
    lanes: &'a [String],
    index: Option<&'a Ident>,
    rows: &'a [(String, Ident)],
    lane: &'a Ident,
    first: &'a Ident,
}

impl VisitMut for InLane<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let (l, first) = (self.lane, self.first);
        if let Expr::Index(ix) = e {
            if let Some((_, tile)) = plain_ident(&ix.expr).and_then(|r| self.rows.iter().find(|(n, _)| r == n)) {
                let at = &ix.index;
                *e = syn::parse2(quote!(#tile[#at][#l])).expect("an index is an expression");
                return;
            }
        }
        if let Some(name) = plain_ident(e) {
            if self.index.is_some_and(|i| name == *i) {
                *e = syn::parse2(quote!((#first + #l))).expect("a sum is an expression");
                return;
            }
            if self.lanes.iter().any(|n| name == n) {
                *e = syn::parse2(quote!(#name[#l])).expect("an index is an expression");
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

#[allow(clippy::too_many_arguments)]
fn emit(
    f: &ExprForLoop,
    index: &Ident,
    start: &Expr,
    end: &Expr,
    width: &Expr,
    rows: &[Row],
    (elem, elem_name): (Width, &str),
    state: &[Binding],
    Middle { middle, c_lets, shared_rows, jam }: Middle<'_>,
    inner: &ExprForLoop,
    c_suffix: &[Stmt],
    suffix: &[Stmt],
    varying: &[String],
) -> TokenStream {
    let (first, iend, row_width, l) =
        (hidden("__adaptive_i"), hidden("__adaptive_iend"), hidden("__adaptive_width"), hidden("__adaptive_l"));
    let lanes = Literal::usize_unsuffixed(lanes(elem));
    let max_row = Literal::usize_unsuffixed(MAX_ROW);
    let ty = Ident::new(elem_name, Span::call_site());
    let tiles: Vec<(String, Ident)> =
        rows.iter().enumerate().map(|(n, r)| (r.name.clone(), hidden(&format!("__adaptive_t{n}")))).collect();
    let tile_vars = tiles.iter().map(|(_, t)| t);
    let row_lets: Vec<&Stmt> = f.body.stmts.iter().filter(|s| is_row_let(s, rows)).collect();
    let fills = rows.iter().zip(&tiles).map(|(r, (_, t))| {
        let name = Ident::new(&r.name, Span::call_site());
        let jj = hidden("__adaptive_jj");
        quote!(for #jj in 0..#name.len() { #t[#jj][#l] = #name[#jj]; })
    });
    // The items' names, the index aside (it is `i0 + l`, or the copy's own `let`).
    let names: Vec<String> = varying.iter().filter(|n| index != n.as_str()).cloned().collect();
    let in_lane = InLane { lanes: &names, index: Some(index), rows: &tiles, lane: &l, first: &first };
    // The items' names: `[init; L]` of a value the items share, else each lane's own.
    let lane_let = |b: &Binding, in_lane: InLane<'_>, varying: &[String]| {
        let (name, init) = (&b.name, &b.init);
        let mutability = b.mutable.then(|| quote!(mut));
        if mentions(init.to_token_stream(), varying) {
            let mut init = init.clone();
            InLane { ..in_lane }.visit_expr_mut(&mut init);
            quote!(#[allow(unused_mut)] let #mutability #name: [_; #lanes] = ::core::array::from_fn(|#l| #init);)
        } else {
            quote!(#[allow(unused_mut)] let #mutability #name = [#init; #lanes];)
        }
    };
    let states: Vec<TokenStream> = state.iter().map(|b| lane_let(b, InLane { ..in_lane }, varying)).collect();
    let (c_pat, c_range, j_pat) = (&middle.pat, &middle.expr, &inner.pat);
    // One centroid's part of the middle loop's body (its `let`s, its inner loop over the row,
    // the statements after that), for the centroid `c` as written, or for a copy of it with the
    // middle loop's names renamed by `renamed`.
    let lane_loop = |stmts: TokenStream| quote!(#[allow(unused_variables, clippy::all)] for #l in 0..#lanes { #stmts });
    let part = |renamed: &Renamed| -> (TokenStream, TokenStream, TokenStream, Vec<Ident>) {
        let names: Vec<String> = names.iter().map(|n| renamed.name(n)).collect();
        let varying: Vec<String> = varying.iter().map(|n| renamed.name(n)).collect();
        let in_lane = InLane { lanes: &names, ..in_lane };
        let in_lanes = |stmts: &[Stmt]| -> TokenStream {
            let mut block = Block { brace_token: Default::default(), stmts: stmts.to_vec() };
            renamed.clone().visit_block_mut(&mut block);
            InLane { ..in_lane }.visit_block_mut(&mut block);
            let stmts = &block.stmts;
            quote!(#(#stmts)*)
        };
        let lets = c_lets.iter().map(|c| match c {
            CLet::Shared(stmt) => {
                let mut stmt = stmt.clone();
                renamed.clone().visit_stmt_mut(&mut stmt);
                stmt.to_token_stream()
            }
            CLet::Item(b) => {
                let mut init = b.init.clone();
                renamed.clone().visit_expr_mut(&mut init);
                let b = Binding { name: renamed.ident(&b.name), mutable: b.mutable, init };
                lane_let(&b, InLane { ..in_lane }, &varying)
            }
        });
        let rows: Vec<Ident> = shared_rows.iter().map(|r| renamed.ident(r)).collect();
        (quote!(#(#lets)*), in_lanes(&inner.body.stmts), lane_loop(in_lanes(c_suffix)), rows)
    };
    // A row the items share (a centroid's), read at `[j]`, taken as its first `width` elements
    // where it has them, so that its reads need no bounds check: without that, where the row's
    // length is not the items' rows' own (an ndarray matrix's columns, checked per call), each
    // read was checked, and an ndarray k-means' Parallel variant ran at 0.7× its slice twin's.
    // Where a row is shorter, the loop as written runs, and panics as written.
    let over_row = |rows: &[Ident], lanes: &[TokenStream]| -> TokenStream {
        match rows.is_empty() {
            true => quote!(for #j_pat in 0..#row_width { #(#lanes)* }),
            false => quote!(
                match (#(#rows.get(..#row_width),)*) {
                    (#(::core::option::Option::Some(#rows),)*) => {
                        for #j_pat in 0..#row_width { #(#lanes)* }
                    }
                    #[allow(unreachable_patterns)]
                    _ => for #j_pat in 0..#row_width { #(#lanes)* },
                }
            ),
        }
    };
    let (one_lets, inner_lanes, c_suffix_lanes, one_rows) = part(&Renamed::none());
    let inner_loop = over_row(&one_rows, &[lane_loop(inner_lanes)]);
    let one_centroid = quote!(
        #one_lets
        #inner_loop
        #c_suffix_lanes
    );
    let middle_loop = match jam {
        None => quote!(for #c_pat in #c_range { #one_centroid }),
        Some((c_start, c_end)) => {
            let (c0, c_stop) = (hidden("__adaptive_c"), hidden("__adaptive_cend"));
            let c_name = plain_pat(c_pat).expect("a plain name: `analyse` checked");
            let mut renamed: Vec<Ident> = vec![c_name.clone()];
            renamed.extend(c_lets.iter().flat_map(CLet::names));
            let copies: Vec<Renamed> = (0..JAM).map(|n| Renamed::copy(n, &renamed)).collect();
            let mut lets = Vec::new();
            let (mut inners, mut suffixes, mut all_rows) = (Vec::new(), Vec::new(), Vec::new());
            for (n, copy) in copies.iter().enumerate() {
                let c = copy.ident(&c_name);
                let at = match n {
                    0 => quote!(#c0),
                    n => {
                        let n = Literal::usize_unsuffixed(n);
                        quote!(#c0 + #n)
                    }
                };
                let (copy_lets, inner, suffix, copy_rows) = part(copy);
                lets.push(quote!(let #c: usize = #at; #copy_lets));
                inners.push(inner);
                suffixes.push(suffix);
                all_rows.extend(copy_rows);
            }
            // The copies' inner statements in one loop over the lanes, each in a block of its own
            // (its `let`s its own), where none of them `continue`s (which would skip the copies
            // after it): LLVM vectorised four loops over the lanes, one per copy, with the first
            // copy's sum split in two halves and two single lanes where they ran in the
            // Parallel variant or over an ndarray matrix (one pass at 0.6× the speed of the
            // others).
            let inners = match holds_expr(&inner.body, |e| matches!(e, Expr::Continue(_))) {
                true => inners.into_iter().map(lane_loop).collect(),
                false => vec![lane_loop(quote!(#({ #inners })*))],
            };
            let inner_loop = over_row(&all_rows, &inners);
            let jam_lit = Literal::usize_unsuffixed(JAM);
            quote!(
                let mut #c0: usize = #c_start;
                let #c_stop: usize = #c_end;
                while #c_stop.saturating_sub(#c0) >= #jam_lit {
                    #(#lets)*
                    #inner_loop
                    #(#suffixes)*
                    #c0 += #jam_lit;
                }
                for #c_pat in #c0..#c_stop { #one_centroid }
            )
        }
    };
    // After the loops, item by item: the item's index and rows bound as written, its names indexed.
    let mut after = Block { brace_token: Default::default(), stmts: suffix.to_vec() };
    InLane { index: None, rows: &[], ..in_lane }.visit_block_mut(&mut after);
    let suffix_stmts = after.stmts.iter();
    // The rows again where the statements after the loops read them (as written: the copies
    // are the inner loops').
    let row_names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    let reads_rows = suffix.iter().any(|s| mentions(s.to_token_stream(), &row_names));
    let suffix_rows = row_lets.iter().filter(|_| reads_rows);
    quote!(
        let mut #first: usize = #start;
        let #iend: usize = #end;
        let #row_width: usize = #width;
        if #row_width <= #max_row {
            #(let mut #tile_vars = [[0.0 as #ty; #lanes]; #max_row];)*
            while #iend.saturating_sub(#first) >= #lanes {
                for #l in 0..#lanes {
                    let #index: usize = #first + #l;
                    #(#row_lets)*
                    #(#fills)*
                }
                #(#states)*
                #middle_loop
                for #l in 0..#lanes {
                    #[allow(unused_variables)]
                    let #index: usize = #first + #l;
                    #(#suffix_rows)*
                    #(#suffix_stmts)*
                }
                #first += #lanes;
            }
        }
    )
}

/// Whether `body` reads `row[j]`.
fn read_at(body: &Block, row: &Ident, j: &Ident) -> bool {
    let is = |e: &Expr, name: &Ident| plain_ident(e).is_some_and(|i| i == *name);
    holds_expr(body, |e| matches!(e, Expr::Index(ix) if is(&ix.expr, row) && is(&ix.index, j)))
}

fn is_row_let(stmt: &Stmt, rows: &[Row]) -> bool {
    matches!(stmt, Stmt::Local(l) if pat_names(&l.pat).first().is_some_and(|n| rows.iter().any(|r| r.name == *n)))
}
