//! Float reductions of a body reassociated, so that they vectorise: the
//! transformation the SIMD variant (and later the Parallel one) applies to its
//! copy of the body. The Scalar variant keeps the body as written.
//!
//! LLVM never reorders float additions, so `acc += a[i] * b[i]` compiles to a
//! chain of dependent adds even with AVX2 enabled. Julia's `@simd` and
//! OpenMP's `simd reduction(+:acc)` give the compiler licence to regroup;
//! here the macro regroups the source itself: each reduction it can prove
//! safe (see [`recognise`]) gets independent partial results per lane
//! ([`emit`]). What it cannot prove (the types are unknown to a proc macro,
//! which sees tokens) stays as written, and every reduction-shaped loop or
//! chain is reported with what happened to it ([`LoopReport`]).
//!
//! Reassociation is the only licence taken: no fused multiply-add is formed,
//! no operation is dropped or added, `max`/`min` keep `f32::max`'s NaN rule.
//! A sum or product regrouped this way differs from the source order only by
//! rounding, within the bound `adaptive_kernel::tolerance` states.
//!
//! The same walk takes element-wise index loops (`out[i] = a[i - 1] + a[i + 1]`)
//! a chunk at a time ([`elementwise`]): no licence at all, only bounds checks
//! moved, so that the compiler vectorises them; reported as `for range =`.

mod elementwise;
mod emit;
mod items;
mod jam;
mod math;
mod recognise;

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Stmt};

use crate::body::{Body, Env, ForLoop, Int, Ty, Width};
use crate::reason::Reason;
use recognise::Verdict;

/// What happened to one reduction-shaped loop or iterator chain of a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LoopReport {
    /// The line of its `for`, or of its `sum`/`product`/`fold`.
    pub line: u32,
    /// Its shape: `for range +=`, `zip.sum()`, `iter.fold(max)`, …
    pub idiom: String,
    pub rewritten: bool,
    /// Why it was left as written; `None` when rewritten.
    pub reason: Option<Reason>,
    /// The libm functions whose calls it computes with the runtime's formulas, in lanes.
    pub math: Vec<&'static str>,
}

/// `block` (a body, or the Parallel variant's form of it, whose model is `model`) with its provable
/// float reductions reassociated and its element-wise index loops in chunks,
/// and a report per reduction and element-wise loop found. With an `opt_out`
/// word (`exact`: the kernel opted out; `simd`: its SIMD variant is the user's
/// own), no reduction is rewritten and each that would have been is reported
/// left alone for that reason; element-wise loops are left alone for `simd`
/// only (`exact` keeps the order of float operations, which they keep too).
pub(crate) fn reassociate(block: &Block, model: &Body, opt_out: Option<Reason>) -> (Block, Vec<LoopReport>) {
    let ret = model.ret;
    let mut walker = Walker { env: model.params.clone(), opt_out, reports: Vec::new(), ret };
    let mut block = block.clone();
    walker.poison_items(&block.stmts);
    let last = block.stmts.len().checked_sub(1);
    for (n, stmt) in block.stmts.iter_mut().enumerate() {
        match stmt {
            // The body's value: its type is the return type.
            Stmt::Expr(e, None) if Some(n) == last => walker.reduce(e, ret),
            stmt => walker.visit_stmt_mut(stmt),
        }
    }
    (block, walker.reports)
}

/// What the walk does with one `for` loop.
enum Action {
    /// Replace the loop by `expr` (a reduction or an element-wise loop in lanes).
    Replace { idiom: String, math: Vec<&'static str>, expr: Expr },
    /// Keep the loop with `body` (its libm calls the runtime's formulas).
    Body { idiom: String, math: Vec<&'static str>, body: Block },
    /// Items several at a time: `jammed`, then the loop `rest` over the items left.
    Jam { idiom: &'static str, jammed: TokenStream, rest: syn::ExprForLoop },
    /// Left as written, and why; its body is walked.
    Left { idiom: String, reason: Reason },
    /// Not a loop any rewrite takes: its body is walked.
    Walk,
}

/// Walks a body in order, keeping track of the names in scope.
struct Walker {
    env: Env,
    /// Why nothing is rewritten, if so (see [`reassociate`]).
    opt_out: Option<Reason>,
    reports: Vec<LoopReport>,
    /// The function's float return width, for `return expr`; `None` inside closures.
    ret: Option<Width>,
}

impl Walker {
    /// Item names of a block are visible in all of it, before their declaration too.
    fn poison_items(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            let ident = match stmt {
                Stmt::Item(syn::Item::Fn(f)) => &f.sig.ident,
                Stmt::Item(syn::Item::Const(c)) => &c.ident,
                Stmt::Item(syn::Item::Static(s)) => &s.ident,
                _ => continue,
            };
            self.env.poison(ident.to_string());
        }
    }

    /// A macro's tokens may bind any identifier they contain (except the standard
    /// macros, which bind none the caller sees).
    fn poison_macro(&mut self, mac: &syn::Macro) {
        if crate::std_macros::known(&mac.path).is_some() {
            return;
        }
        fn idents(tokens: TokenStream, out: &mut Vec<String>) {
            for tt in tokens {
                match tt {
                    TokenTree::Ident(i) => out.push(i.to_string()),
                    TokenTree::Group(g) => idents(g.stream(), out),
                    _ => {}
                }
            }
        }
        let mut names = Vec::new();
        idents(mac.tokens.clone(), &mut names);
        for name in names {
            self.env.poison(name);
        }
    }

    /// A reduction (or element-wise loop) left as written, and why.
    fn left(&mut self, span: Span, idiom: String, reason: Reason) {
        self.push(span, idiom, Some(reason), Vec::new());
    }

    /// A reduction (or element-wise loop) rewritten, with the libm functions it computes in lanes.
    fn rewritten(&mut self, span: Span, idiom: String, math: Vec<&'static str>) {
        self.push(span, idiom, None, math);
    }

    fn push(&mut self, span: Span, idiom: String, reason: Option<Reason>, math: Vec<&'static str>) {
        let line = u32::try_from(span.start().line).unwrap_or(u32::MAX);
        self.reports.push(LoopReport { line, idiom, rewritten: reason.is_none(), reason, math });
    }

    /// Rewrites `e` when it is a reducing iterator chain whose result type is
    /// declared (`expected`) or named (`.sum::<f32>()`); otherwise walks into it.
    fn reduce(&mut self, e: &mut Expr, expected: Option<Width>) {
        let Expr::MethodCall(m) = e else { return self.visit_expr_mut(e) };
        let acc = proc_macro2::Ident::new("__adaptive_acc", Span::mixed_site());
        match (recognise::analyse_call(m, &self.env, expected, &acc), self.opt_out) {
            (Verdict::Rewrite { idiom, plan, init: Some(init) }, None) => {
                self.rewritten(m.method.span(), idiom, plan.math.clone());
                *e = emit::rewritten_expr(&plan, &init);
            }
            // An iterator chain's verdict always carries its hidden accumulator.
            (Verdict::Rewrite { init: None, .. }, None) => syn::visit_mut::visit_expr_mut(self, e),
            (Verdict::Rewrite { idiom, .. }, Some(why)) => {
                self.left(m.method.span(), idiom, why);
                syn::visit_mut::visit_expr_mut(self, e);
            }
            (Verdict::LeftAlone { idiom, reason }, _) => {
                self.left(m.method.span(), idiom, reason);
                syn::visit_mut::visit_expr_mut(self, e);
            }
            (Verdict::NotAReduction | Verdict::InPlace { .. }, _) => syn::visit_mut::visit_expr_mut(self, e),
        }
    }

    /// A `for` loop: rewritten whole, or walked with its pattern in scope.
    fn for_loop(&mut self, e: &mut Expr) {
        let Expr::ForLoop(f) = e else { return };
        let span = f.for_token.span;
        // Decided on the loop's record (`crate::body::ForLoop`, read once by every analysis)
        // before anything of it changes.
        match self.decide(&ForLoop::new(f)) {
            Action::Replace { idiom, math, expr } => {
                self.rewritten(span, idiom, math);
                *e = expr;
            }
            Action::Body { idiom, math, body } => {
                self.rewritten(span, idiom, math);
                f.body = body;
            }
            Action::Jam { idiom, jammed, rest } => self.jam(e, span, idiom, jammed, rest),
            Action::Left { idiom, reason } => {
                self.left(span, idiom, reason);
                self.walk_for(f);
            }
            Action::Walk => self.walk_for(f),
        }
    }

    /// What to do with the loop `l`: a reduction, a loop of `exp`s in place, an element-wise
    /// loop, items in lanes or a jam, in that order of preference, or nothing.
    fn decide(&self, l: &ForLoop) -> Action {
        let (env, opt_out) = (&self.env, self.opt_out);
        // Several items at once: in lanes, else jammed; else left for `why` (the reduction's own
        // word, when there is one), or for the jam's.
        let several = |why: Option<(String, Reason)>| -> Action {
            if opt_out.is_none() {
                if let Some((jammed, rest)) = items::analyse(l, env) {
                    return Action::Jam { idiom: items::IDIOM, jammed, rest };
                }
            }
            let idiom = jam::IDIOM.to_string();
            match (jam::analyse(l, env), opt_out, why) {
                (jam::Verdict::Jam { jammed, rest }, None, _) => Action::Jam { idiom: jam::IDIOM, jammed, rest },
                (_, _, Some((idiom, reason))) => Action::Left { idiom, reason },
                (jam::Verdict::Jam { .. }, Some(why), None) => Action::Left { idiom, reason: why },
                (jam::Verdict::LeftAlone(reason), _, None) => Action::Left { idiom, reason },
                (jam::Verdict::NotAJam, _, None) => Action::Walk,
            }
        };
        match (recognise::analyse_loop(l, env), opt_out) {
            (Verdict::Rewrite { idiom, plan, .. }, None) => {
                Action::Replace { idiom, math: plan.math.clone(), expr: emit::rewritten_loop(&plan) }
            }
            (Verdict::InPlace { idiom, body, math }, None) => Action::Body { idiom, math, body },
            (Verdict::Rewrite { idiom, .. } | Verdict::InPlace { idiom, .. }, Some(why)) => {
                Action::Left { idiom, reason: why }
            }
            // An accumulation after a reduction in the loop (`total += dist`) is no obstacle to a jam.
            (Verdict::LeftAlone { idiom, reason }, _) => several(Some((idiom, reason))),
            (Verdict::NotAReduction, _) => {
                let idiom = elementwise::IDIOM.to_string();
                // `exact` keeps the order of float operations, which the element-wise rewrite keeps
                // too; but libm's calls too, so no vector math there.
                let vector_math = opt_out.is_none();
                match (elementwise::analyse(l, env, vector_math), opt_out.filter(|why| *why != Reason::Exact)) {
                    (elementwise::Verdict::Rewrite(plan), None) => {
                        Action::Replace { idiom, math: plan.math.clone(), expr: elementwise::rewritten(&plan) }
                    }
                    (elementwise::Verdict::Rewrite(_), Some(why)) => Action::Left { idiom, reason: why },
                    (elementwise::Verdict::LeftAlone(reason), _) => Action::Left { idiom, reason },
                    (elementwise::Verdict::NotElementWise, _) => several(None),
                }
            }
        }
    }

    /// Replaces `e`, a loop over items, by its jammed form (`jam::Verdict::Jam`, or the items
    /// in lanes of `items`), and walks the loop over the items left, whose loops are rewritten
    /// and reported as usual.
    fn jam(&mut self, e: &mut Expr, span: Span, idiom: &str, jammed: TokenStream, mut rest: syn::ExprForLoop) {
        self.rewritten(span, idiom.to_string(), Vec::new());
        self.env.push();
        for name in ["__adaptive_c", "__adaptive_cend", "__adaptive_i", "__adaptive_iend"] {
            self.env.bind(name.to_string(), Ty::Int(Int::Usize), false);
        }
        self.walk_for(&mut rest);
        self.env.pop();
        *e = Expr::Verbatim(quote::quote!({ #jammed #rest }));
    }

    /// Walks a `for` loop's iterable, then its body with its pattern in scope.
    fn walk_for(&mut self, f: &mut syn::ExprForLoop) {
        self.visit_expr_mut(&mut f.expr);
        self.env.push();
        self.env.bind_for(&f.pat, &f.expr);
        self.visit_block_mut(&mut f.body);
        self.env.pop();
    }
}

impl VisitMut for Walker {
    fn visit_block_mut(&mut self, block: &mut Block) {
        self.env.push();
        self.poison_items(&block.stmts);
        for stmt in &mut block.stmts {
            self.visit_stmt_mut(stmt);
        }
        self.env.pop();
    }

    fn visit_local_mut(&mut self, local: &mut syn::Local) {
        // The pattern is not in scope in its own initialiser: walk that first, then bind the
        // pattern as the initialiser as written is typed (a rewritten one is a block the
        // inference cannot read).
        let written = local.clone();
        let declared = match &local.pat {
            syn::Pat::Type(t) => match Ty::of_type(&t.ty) {
                Ty::Float(w) => Some(w),
                _ => None,
            },
            _ => None,
        };
        if let Some(init) = &mut local.init {
            self.reduce(&mut init.expr, declared);
            if let Some((_, diverge)) = &mut init.diverge {
                self.visit_expr_mut(diverge);
            }
        }
        self.env.bind_let(&written);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::ForLoop(_) => self.for_loop(e),
            Expr::MethodCall(_) => self.reduce(e, None),
            Expr::Return(r) => {
                if let Some(value) = &mut r.expr {
                    let ret = self.ret;
                    self.reduce(value, ret);
                }
            }
            Expr::Closure(c) => {
                self.env.push();
                for input in &c.inputs {
                    self.env.poison_pat(input);
                }
                let ret = self.ret.take();
                self.visit_expr_mut(&mut c.body);
                self.ret = ret;
                self.env.pop();
            }
            Expr::Async(a) => {
                let ret = self.ret.take();
                self.visit_block_mut(&mut a.block);
                self.ret = ret;
            }
            Expr::Let(l) => {
                self.visit_expr_mut(&mut l.expr);
                // Conservative: the names stay unknown to the end of the enclosing block.
                self.env.poison_pat(&l.pat);
            }
            Expr::Macro(m) => self.poison_macro(&m.mac),
            e => syn::visit_mut::visit_expr_mut(self, e),
        }
    }

    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        self.env.push();
        self.env.poison_pat(&arm.pat);
        if let Some((_, guard)) = &mut arm.guard {
            self.visit_expr_mut(guard);
        }
        self.visit_expr_mut(&mut arm.body);
        self.env.pop();
    }

    fn visit_stmt_macro_mut(&mut self, m: &mut syn::StmtMacro) {
        self.poison_macro(&m.mac);
    }

    /// Nested items are functions of their own: left as written.
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

#[cfg(test)]
mod tests {
    //! What is rewritten and what is left alone: one case per idiom and per
    //! reason. That the rewritten code computes the same (within the tolerance)
    //! is `tests/reductions.rs`; that each left-alone shape compiles warning-free
    //! is `ui-tests/tests/ui/pass/reductions_left_alone.rs`.

    use super::*;
    use quote::{quote, ToTokens};

    fn rewrite(f: TokenStream, enabled: bool) -> (String, Vec<LoopReport>) {
        let f: syn::ItemFn = syn::parse2(f).unwrap();
        let (block, reports) =
            reassociate(&f.block, &Body::new(&f.block, &f.sig, false), (!enabled).then_some(Reason::Exact));
        (block.into_token_stream().to_string(), reports)
    }

    /// The one report of `f`'s body, as (idiom, rewritten, reason), and the rewritten body.
    fn only(f: TokenStream) -> ((String, bool, &'static str), String) {
        let (body, reports) = rewrite(f, true);
        assert_eq!(reports.len(), 1, "{reports:?}");
        let r = &reports[0];
        ((r.idiom.clone(), r.rewritten, crate::reason::word(r.reason)), body)
    }

    fn rewritten(f: TokenStream, idiom: &str) -> String {
        let (report, body) = only(f);
        assert_eq!(report, (idiom.to_string(), true, ""), "{body}");
        assert!(body.contains("__adaptive_lanes0"), "{body}");
        body
    }

    fn left(f: TokenStream, idiom: &str, reason: &str) {
        let (report, body) = only(f.clone());
        assert_eq!(report, (idiom.to_string(), false, reason), "{body}");
        let original: syn::ItemFn = syn::parse2(f).unwrap();
        assert_eq!(body, original.block.into_token_stream().to_string(), "left alone means untouched");
    }

    #[test]
    fn index_loop_sum_with_chunked_reads() {
        let body = rewritten(
            quote!(
                fn dot(a: &[f32], b: &[f32]) -> f32 {
                    let mut s = 0.0;
                    for i in 0..a.len() {
                        s += a[i] * b[i];
                    }
                    s
                }
            ),
            "for range +=",
        );
        // Both reads become chunk reads, at both levels; f32 gets 32 lanes, then 8.
        assert_eq!(body.matches(":: chunk ::").count(), 4, "{body}");
        assert!(body.contains("sum_lanes :: < _ , 32 >") && body.contains("sum_lanes :: < _ , 8 >"), "{body}");
        assert!(body.contains(">= 128") && body.contains(">= 8"), "{body}");
        assert!(body.contains("__adaptive_h0 [__adaptive_l] * __adaptive_h1 [__adaptive_l]"), "{body}");
    }

    #[test]
    fn matvec_inner_loop_reads_rows_at_an_invariant_base() {
        let (body, reports) = rewrite(
            quote!(
                fn matvec(out: &mut [f32], x: &[f32], w: &[f32], n: usize, d: usize) {
                    for i in 0..d {
                        let mut val = 0.0f32;
                        for j in 0..n {
                            val += w[i * n + j] * x[j];
                        }
                        out[i] = val;
                    }
                }
            ),
            true,
        );
        // The outer loop stores: not a reduction, not reported.
        // The outer loop stores each row's sum into its own slot: jammed, 8 rows at a time.
        let reports: Vec<_> = reports.iter().map(|r| (r.idiom.as_str(), r.rewritten)).collect();
        assert_eq!(reports, [("for range jam", true), ("for range +=", true)]);
        assert!(body.contains("chunk :: < _ , 4 > (& w [..] , __adaptive_i_7 * n , __adaptive_k)"), "{body}");
        // The rows left, one at a time.
        assert!(body.contains("chunk :: < _ , 32 > (& w [..] , i * n , __adaptive_k)"), "{body}");
    }

    #[test]
    fn slice_and_zip_loops() {
        rewritten(
            quote!(
                fn sq(x: &[f64]) -> f64 {
                    let mut s: f64 = 0.0;
                    for v in x {
                        s += v * v;
                    }
                    s
                }
            ),
            "for iter +=",
        );
        rewritten(
            quote!(
                fn dot(a: &[f32], b: &Vec<f32>) -> f32 {
                    let mut s = 0.0;
                    for (x, y) in a.iter().zip(b) {
                        s -= x * y;
                    }
                    -s
                }
            ),
            "for zip +=",
        );
    }

    #[test]
    fn several_accumulators_and_conditions() {
        let stats = |decl: TokenStream| {
            quote!(fn stats(x: &[f32]) -> (f32, f32, f32) {
                #decl
                let mut m = f32::NEG_INFINITY;
                for &v in x.iter() {
                    let t = v * 2.0;
                    if t > 0.0 {
                        s += t;
                    } else if t < -1.0 {
                        s -= 1.0;
                    }
                    q += v * v;
                    m = m.max(v);
                }
                (s, q, m)
            })
        };
        let body = rewritten(stats(quote!(let mut s = 0.0f32; let mut q: f32 = 0.0;)), "for iter +=");
        assert!(body.contains("__adaptive_lanes1") && body.contains("__adaptive_lanes2"), "{body}");
        assert!(body.contains("extremum_lanes"), "{body}");
        // However the accumulators are declared.
        for decl in [
            quote!(let (mut s, mut q) = (0.0f32, 0.0f32);),
            quote!(let (mut s, mut q): (f32, f32) = (0.0, 0.0);),
            quote!(let (mut s, mut q) = (0.0, 0.0);),
            quote!(let mut s: f32 = 0.0; let mut q = 0.0;),
        ] {
            rewritten(stats(decl), "for iter +=");
        }
        // A tuple pattern with `..`, or one that does not match its initialiser, binds nothing known.
        left(stats(quote!(let (mut s, mut q, ..) = (0.0f32, 0.0f32, 1);)), "for iter +=", "type");
        left(stats(quote!(let (mut s, mut q) = pair();)), "for iter +=", "type");
    }

    #[test]
    fn an_accumulator_takes_the_width_of_what_it_accumulates() {
        // `0.0` alone is `{float}`; `+= v` of `&f32` makes it `f32`, so it gets 32 lanes.
        let body = rewritten(
            quote!(
                fn total(x: &[f32]) -> f32 {
                    let mut s = 0.0;
                    for v in x {
                        s += v;
                    }
                    s
                }
            ),
            "for iter +=",
        );
        assert!(body.contains("sum_lanes :: < _ , 32 >"), "{body}");
        let body = rewritten(
            quote!(
                fn total(x: &[f64], n: usize) -> f64 {
                    let mut s = 0.0;
                    for i in 0..n {
                        s += x[i];
                    }
                    s
                }
            ),
            "for range +=",
        );
        assert!(body.contains("sum_lanes :: < _ , 16 >") && body.contains("sum_lanes :: < _ , 4 >"), "{body}");
    }

    #[test]
    fn temporaries_from_sub_slices_and_float_methods() {
        // Rows as sub-slices, bound by `let`, `split_at`, `chunks` and `chunks_exact`.
        for (outer, row) in [
            (quote!(for i in 0..n), quote!(let r = &x[i * d..(i + 1) * d];)),
            (quote!(for i in 0..n), quote!(let r = &x[i * d..][..d];)),
            (quote!(for (i, r) in x.chunks_exact(d).enumerate()), quote!()),
            (quote!(for (i, r) in x.chunks(d).take(n).enumerate()), quote!()),
        ] {
            let f = quote!(fn rows(x: &[f32], w: &[f32], out: &mut [f32], n: usize, d: usize) {
                #outer {
                    #row
                    let mut s = 0.0;
                    for j in 0..d {
                        let t = r[j] * w[j];
                        s += t;
                    }
                    out[i] = s;
                }
            });
            let (reports, body) = all(f);
            // A range over the rows is jammed; rows from an iterator are not.
            match reports.as_slice() {
                [jam, sum] => assert_eq!([jam, sum], [&yes("for range jam"), &yes("for range +=")], "{body}"),
                reports => assert_eq!(reports, [yes("for range +=")], "{body}"),
            }
            assert!(body.contains("chunk :: < _ , 32 > (& r [..] , 0 , __adaptive_k)"), "{body}");
        }
        rewritten(
            quote!(
                fn halves(x: &[f64], m: usize) -> f64 {
                    let (lo, hi) = x.split_at(m);
                    let mut s = 0.0f64;
                    for (a, b) in lo.iter().zip(hi) {
                        s += (a - b).abs();
                    }
                    s
                }
            ),
            "for zip +=",
        );
        rewritten(
            quote!(
                fn rest(x: &[f32], k: usize) -> f32 {
                    let tail = &x[k..];
                    tail.iter().map(|v| v * v).sum::<f32>()
                }
            ),
            "iter.sum()",
        );
        // Softmax's denominator: a temporary from `exp` of a known value.
        rewritten(
            quote!(
                fn denominator(x: &[f32], n: usize) -> f32 {
                    let m = x[0];
                    let mut z = 0.0;
                    for i in 0..n {
                        let e = (x[i] - m).exp();
                        z += e;
                    }
                    z
                }
            ),
            "for range +=",
        );
        // Predicates in conditions, `f64::from` widening, a block with lets in a `map`.
        rewritten(
            quote!(
                fn finite_total(x: &[f32], y: &[f32]) -> f64 {
                    let mut s = 0.0f64;
                    for i in 0..x.len() {
                        if x[i].is_finite() && !y[i].is_nan() {
                            s += f64::from(x[i]) * f64::from(y[i]);
                        }
                    }
                    s
                }
            ),
            "for range +=",
        );
        rewritten(
            quote!(
                fn sq_dist(a: &[f32], b: &[f32]) -> f32 {
                    a.iter()
                        .zip(b)
                        .map(|(x, y)| {
                            let d = x - y;
                            d * d
                        })
                        .sum()
                }
            ),
            "zip.sum()",
        );
        left(
            quote!(
                fn k(x: &[f32]) -> f32 {
                    x.iter().fold(0.0f32, |a, v| {
                        let t = v * 2.0;
                        a + t
                    })
                }
            ),
            "iter.fold(?)",
            "effect",
        );
        // A temporary from a call stays unknown.
        left(
            quote!(
                fn k(x: &[f32]) -> f32 {
                    let mut s = 0.0f32;
                    for v in x {
                        let t = g(*v);
                        s += t;
                    }
                    s
                }
            ),
            "for iter +=",
            "effect",
        );
    }

    #[test]
    fn enumerated_slices_with_reads_at_the_index() {
        let body = rewritten(
            quote!(
                fn potential(x: &[f32], m: &[f32], i: usize) -> f32 {
                    let xi = x[i];
                    let mut phi = 0.0f32;
                    for (j, &xj) in x.iter().enumerate() {
                        if j == i {
                            continue;
                        }
                        phi -= m[j] / (xj - xi).abs();
                    }
                    phi
                }
            ),
            "for enumerate +=",
        );
        // The slice a chunk at a time, and `m[j]` read a chunk at a time beside it.
        assert!(body.contains("chunk :: < _ , 32 > (__adaptive_s0 , 0 , __adaptive_k)"), "{body}");
        assert!(body.contains("chunk :: < _ , 32 > (& m [..] , 0 , __adaptive_k)"), "{body}");
        assert!(body.contains("(__adaptive_k .. __adaptive_end) . zip"), "{body}");
        rewritten(
            quote!(
                fn k(a: &[f64], b: &[f64]) -> f64 {
                    let mut s = 0.0;
                    for (j, (x, y)) in a.iter().zip(b.iter()).enumerate() {
                        s += (x - y) * j as f64;
                    }
                    s
                }
            ),
            "for enumerate +=",
        );
        rewritten(
            quote!(
                fn k(a: &[f32]) -> f32 {
                    a.iter().copied().enumerate().map(|(j, v)| v * j as f32).sum::<f32>()
                }
            ),
            "enumerate.sum()",
        );
        // Not over a slice, or `zip` after `enumerate` (a pair of pairs): not taken in chunks.
        left(
            quote!(
                fn k(a: &[f32], n: usize) -> f32 {
                    let mut s = 0.0f32;
                    for (j, i) in (0..n).enumerate() {
                        s += a[i] * j as f32;
                    }
                    s
                }
            ),
            "for ? +=",
            "source",
        );
        left(
            quote!(
                fn k(a: &[f32], b: &[f32]) -> f32 {
                    let mut s = 0.0f32;
                    for ((j, x), y) in a.iter().enumerate().zip(b) {
                        s += x * y * j as f32;
                    }
                    s
                }
            ),
            "for ? +=",
            "source",
        );
    }

    #[test]
    fn continue_guards() {
        let guarded = |stmts: TokenStream| {
            quote!(fn k(x: &[f32], y: &[f32], n: usize, skip: usize) -> f32 {
                let mut s = 0.0f32;
                for j in 0..n {
                    #stmts
                }
                s
            })
        };
        // First or later, at the top level of the body: rewritten.
        let body =
            rewritten(guarded(quote!(if j == skip { continue; } let t = x[j] - y[j]; s += t * t;)), "for range +=");
        assert!(body.contains("continue"), "{body}");
        rewritten(guarded(quote!(let t = x[j] - y[j]; if t > 4.0 { continue } s += t * t;)), "for range +=");
        // Anywhere else, with an `else`, or on the accumulator: left alone.
        for (stmts, reason) in [
            (quote!(if x[j] > 0.0 { s += 1.0; continue; } s += x[j];), "continue"),
            (
                quote!(if j == skip {
                    continue;
                } else {
                    s += x[j];
                }),
                "continue",
            ),
            (quote!(let t = if j == skip { continue } else { x[j] }; s += t;), "continue"),
            (
                quote!(if x[j] > 0.0 {
                    if j == skip {
                        continue;
                    }
                    s += x[j];
                }),
                "continue",
            ),
            (quote!(if s > 1.0 { continue; } s += x[j];), "reads"),
            (quote!(if check(j) { continue; } s += x[j];), "effect"),
        ] {
            left(guarded(stmts), "for range +=", reason);
        }
    }

    /// The reports of `f`'s body as (idiom, rewritten, reason), and the rewritten body.
    fn all(f: TokenStream) -> (Vec<(String, bool, &'static str)>, String) {
        let (body, reports) = rewrite(f, true);
        (reports.into_iter().map(|r| (r.idiom, r.rewritten, crate::reason::word(r.reason))).collect(), body)
    }

    fn yes(idiom: &str) -> (String, bool, &'static str) {
        (idiom.to_string(), true, "")
    }

    #[test]
    fn k_means_distance_inside_loops_that_store_and_branch() {
        let (reports, body) = all(quote!(
            fn assign(pts: &[f32], cent: &[f32], assign: &mut [usize], n: usize, k: usize, d: usize) {
                for i in 0..n {
                    let p = &pts[i * d..(i + 1) * d];
                    let mut best = f32::MAX;
                    let mut bi = 0;
                    for c in 0..k {
                        let q = &cent[c * d..(c + 1) * d];
                        let mut dist = 0.0;
                        for j in 0..d {
                            let t = p[j] - q[j];
                            dist += t * t;
                        }
                        if dist < best {
                            best = dist;
                            bi = c;
                        }
                    }
                    assign[i] = bi;
                }
            }
        ));
        // The points in lanes (see `points_in_lanes_…`); in the points left over, the centroid
        // loop keeps the nearest: jammed, 8 centroids at a time.
        assert_eq!(reports, [yes("for range items"), yes("for range jam"), yes("for range +=")], "{body}");
        // Both rows are read a chunk at a time; in the jammed part, the point's row once for 8 centroids.
        assert!(body.contains("chunk :: < _ , 32 > (& p [..] , 0 , __adaptive_k)"), "{body}");
        assert!(body.contains("chunk :: < _ , 32 > (& q [..] , 0 , __adaptive_k)"), "{body}");
        assert_eq!(body.matches("chunk :: < _ , 4 > (& p [..] , 0 , __adaptive_k)").count(), 1, "{body}");
        assert!(body.contains("chunk :: < _ , 4 > (& __adaptive_q_7 [..] , 0 , __adaptive_k)"), "{body}");
        // Their lanes folded together, in the jam's one level (no 16-lane level before it).
        assert_eq!(body.matches("reduce :: sum_all (").count(), 1, "{body}");
        assert!(!body.contains("chunk :: < _ , 16 >"), "{body}");
        // Jammed while the distance is shorter than one centroid's wide lanes take.
        assert!(body.contains("if __adaptive_length < 128 {"), "{body}");
        // The keep runs item by item, in order, with each item's index.
        let keeps: Vec<usize> = (0..8).map(|u| body.find(&format!("bi = __adaptive_c_{u} ;")).unwrap()).collect();
        assert!(keeps.windows(2).all(|w| w[0] < w[1]), "{body}");
    }

    #[test]
    // `G` is a constant of the module: it takes the type of the number it multiplies.
    fn n_body_forces_with_tuple_lets_and_a_self_skip() {
        let forces = |guard: TokenStream| {
            quote!(fn forces(x: &[f32], y: &[f32], z: &[f32], m: &[f32], ax: &mut [f32], ay: &mut [f32], az: &mut [f32], eps: f32) {
                let n = x.len();
                for i in 0..n {
                    let (xi, yi, zi) = (x[i], y[i], z[i]);
                    let (mut fx, mut fy, mut fz) = (0.0f32, 0.0f32, 0.0f32);
                    for j in 0..n {
                        #guard
                        let dx = x[j] - xi;
                        let dy = y[j] - yi;
                        let dz = z[j] - zi;
                        let r2 = dx * dx + dy * dy + dz * dz + eps;
                        let inv = 1.0 / (r2 * r2.sqrt()) * G;
                        fx += dx * inv * m[j];
                        fy += dy * inv * m[j];
                        fz += dz * inv * m[j];
                    }
                    ax[i] = fx;
                    ay[i] = fy;
                    az[i] = fz;
                }
            })
        };
        for guard in [
            quote!(),
            quote!(if i == j {
                continue;
            }),
        ] {
            let (reports, body) = all(forces(guard));
            // Three accumulators: the bodies are not jammed (two at a time measured slower), and
            // the report says nothing of the outer loop.
            assert_eq!(reports, [yes("for range +=")], "{body}");
            assert!(body.contains("__adaptive_lanes2") && !body.contains("__adaptive_cend"), "{body}");
            assert!(body.contains("__adaptive_lanes2"), "{body}");
            // x, y, z and m: four chunked reads.
            assert!(body.contains("__adaptive_h3") && !body.contains("__adaptive_h4"), "{body}");
        }
    }

    #[test]
    fn an_index_rebound_in_the_body_is_not_read_in_chunks() {
        let body = rewritten(
            quote!(
                fn reversed_dot(x: &[f32], y: &[f32], n: usize) -> f32 {
                    let mut s = 0.0f32;
                    for i in 0..n {
                        let a = y[i];
                        let i = n - 1 - i;
                        s += a * x[i];
                    }
                    s
                }
            ),
            "for range +=",
        );
        assert!(!body.contains(":: chunk ::"), "{body}");
    }

    #[test]
    fn loop_max_and_min() {
        rewritten(
            quote!(
                fn peak(x: &[f32], n: usize) -> f32 {
                    let mut m = f32::NEG_INFINITY;
                    for i in 0..n {
                        m = m.max(x[i]);
                    }
                    m
                }
            ),
            "for range max",
        );
        rewritten(
            quote!(
                fn low(x: &[f64]) -> f64 {
                    let mut m = x[0];
                    for v in x.iter().copied() {
                        m = f64::min(m, v.abs());
                    }
                    m
                }
            ),
            "for iter min",
        );
    }

    #[test]
    fn iterator_sums_and_products() {
        rewritten(
            quote!(
                fn a(x: &[f32]) -> f32 {
                    x.iter().map(|v| v * v).sum::<f32>().sqrt()
                }
            ),
            "iter.sum()",
        );
        rewritten(
            quote!(
                fn b(x: &[f64]) -> f64 {
                    let s: f64 = x.iter().sum();
                    s
                }
            ),
            "iter.sum()",
        );
        rewritten(
            quote!(
                fn c(x: &[f32]) -> f32 {
                    x.iter().copied().product()
                }
            ),
            "iter.product()",
        );
        rewritten(
            quote!(
                fn d(x: &[f32]) -> f32 {
                    return x.iter().sum();
                }
            ),
            "iter.sum()",
        );
        let body = rewritten(
            quote!(
                fn dot(a: &[f32], b: &[f32]) -> f32 {
                    a.iter().zip(b.iter()).map(|(x, y)| x * y).sum()
                }
            ),
            "zip.sum()",
        );
        assert!(body.contains(":: core :: iter :: Sum > :: sum"), "starts where `Sum` starts: {body}");
        rewritten(
            quote!(
                fn e(a: &[f32], b: &[f32], n: usize) -> f32 {
                    (0..n).map(|i| a[i] * b[i]).sum::<f32>()
                }
            ),
            "range.sum()",
        );
    }

    #[test]
    fn folds() {
        rewritten(
            quote!(
                fn a(x: &[f32]) -> f32 {
                    x.iter().copied().fold(f32::NEG_INFINITY, f32::max)
                }
            ),
            "iter.fold(max)",
        );
        rewritten(
            quote!(
                fn b(x: &[f32]) -> f32 {
                    x.iter().fold(f32::INFINITY, |m, &v| m.min(v))
                }
            ),
            "iter.fold(min)",
        );
        rewritten(
            quote!(
                fn c(x: &[f64]) -> f64 {
                    x.iter().fold(0.0, |s, v| s + v * v)
                }
            ),
            "iter.fold(+=)",
        );
        rewritten(
            quote!(
                fn d(x: &[f32]) -> f32 {
                    x.iter().map(|v| v.abs()).fold(0.0f32, |m, v| v.max(m))
                }
            ),
            "iter.fold(max)",
        );
    }

    #[test]
    fn what_is_not_a_reduction_is_not_reported() {
        let f = quote!(
            fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
                for (yi, xi) in y.iter_mut().zip(x) {
                    *yi += a * xi;
                }
                let v: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
            }
        );
        assert_eq!(rewrite(f, true).1, []);
    }

    /// `fn k(x: &[f32]) -> f32 { let mut s = 0.0; <stmts> s }`.
    fn loop_with(stmts: TokenStream) -> TokenStream {
        quote!(fn k(x: &[f32], out: &mut [f32]) -> Result<f32, ()> {
            let mut s = 0.0;
            #stmts
            Ok(s)
        })
    }

    #[test]
    fn control_flow_leaves_a_loop_alone() {
        for (stmt, reason) in [
            (
                quote!(if *v < 0.0 {
                    break;
                }),
                "break",
            ),
            (
                quote!(if *v < 0.0 {
                    s -= 1.0;
                    continue;
                }),
                "continue",
            ),
            (
                quote!(if *v < 0.0 {
                    return Err(());
                }),
                "return",
            ),
            (quote!(let w: f32 = Some(*v).ok_or(())?;), "try"),
            (quote!(debug_assert!(v.is_finite());), "macro"),
        ] {
            left(loop_with(quote!(for v in x { #stmt s += v; })), "for iter +=", reason);
        }
        left(
            loop_with(quote!('rows: for v in x {
                s += v;
            })),
            "for iter +=",
            "label",
        );
        // An inner loop's own `continue` is not the outer loop's: the inner loop is what rules it out.
        let (reports, body) = all(loop_with(quote!(for v in x {
            let mut t = 0.0f32;
            for w in x {
                if *w > *v {
                    continue;
                }
                t += w;
            }
            s += t;
        })));
        assert_eq!(reports, [("for iter +=".to_string(), false, "effect"), yes("for iter +=")], "{body}");
    }

    #[test]
    fn effects_reads_and_types_leave_a_loop_alone() {
        for (body, reason) in [
            (quote!(s += v * s;), "reads"),
            (
                quote!(if s > 1.0 {
                    s += v;
                }),
                "reads",
            ),
            (quote!(out[0] = *v; s += v;), "effect"),
            (quote!(s += f(v);), "type"),
            (quote!(s += v; s *= v;), "mixed"),
            (quote!(let s = 1.0; s += v;), "shadow"),
        ] {
            left(loop_with(quote!(for v in x { #body })), "for iter +=", reason);
        }
        left(
            loop_with(quote!(for v in x.iter().rev() {
                s += v;
            })),
            "for ? +=",
            "source",
        );
        left(
            quote!(
                fn k(x: &[f32]) -> usize {
                    let mut c = 0usize;
                    for v in x {
                        c += v.to_bits() as usize;
                    }
                    c
                }
            ),
            "for iter +=",
            "type",
        );
        left(
            quote!(
                fn k(x: &[f32]) -> f32 {
                    let mut s = start();
                    for v in x {
                        s += v;
                    }
                    s
                }
            ),
            "for iter +=",
            "type",
        );
        left(
            quote!(
                fn k(x: &[u32]) -> u32 {
                    let mut s = 0;
                    for v in x {
                        s += v;
                    }
                    s
                }
            ),
            "for ? +=",
            "source",
        );
    }

    #[test]
    fn iterator_chains_left_alone() {
        left(
            quote!(
                fn k(x: &[f32]) -> Total {
                    x.iter().sum()
                }
            ),
            "iter.sum()",
            "type",
        );
        left(
            quote!(
                fn k(x: &[f32]) -> f32 {
                    x.iter().map(|v| g(v)).sum()
                }
            ),
            "iter.sum()",
            "type",
        );
        left(
            quote!(
                fn k(x: &[f32]) -> f32 {
                    x.iter().rev().sum()
                }
            ),
            "?.sum()",
            "source",
        );
        left(
            quote!(
                fn k(x: &[f32]) -> f32 {
                    x.iter().fold(0.0f32, |a, v| a - v)
                }
            ),
            "iter.fold(?)",
            "op",
        );
        left(
            quote!(
                fn k(x: &[u64]) -> u64 {
                    x.iter().sum()
                }
            ),
            "?.sum()",
            "source",
        );
    }

    #[test]
    fn compare_and_keep_is_a_reduction() {
        let body = rewritten(
            quote!(
                fn peak(row: &[f32]) -> f32 {
                    let mut max = f32::NEG_INFINITY;
                    for &v in row.iter() {
                        if v > max {
                            max = v;
                        }
                    }
                    max
                }
            ),
            "for iter keep max",
        );
        assert!(body.contains("keep_lanes :: < _ , 32 > (& max)") && body.contains("keep_greater (max ,"), "{body}");
        rewritten(
            quote!(
                fn low(x: &[f32], lo: f32) -> f32 {
                    let mut m = lo;
                    for i in 0..x.len() {
                        if m > x[i] {
                            m = x[i];
                        }
                    }
                    m
                }
            ),
            "for range keep min",
        );
        // A clamp of the body's own name, and a keep of another value, are no reductions.
        let (reports, _) = all(quote!(
            fn k(x: &[f32], out: &mut [f32], lo: f32) -> f32 {
                let mut best = 0.0f32;
                for i in 0..x.len() {
                    let mut v = x[i];
                    if v < lo {
                        v = lo;
                    }
                    out[i] = v;
                }
                for i in 0..x.len() {
                    if x[i] > best {
                        best = x[i] * 2.0;
                    }
                }
                best
            }
        ));
        assert_eq!(reports, [yes("for range =")]);
    }

    #[test]
    fn reductions_may_store_into_their_own_elements() {
        // A softmax's exponentials: stored through `iter_mut` and summed, `exp` in lanes.
        let (report, body) = only(quote!(
            fn exps(row: &mut [f32], max: f32) -> f32 {
                let mut sum = 0.0f32;
                for v in row.iter_mut() {
                    *v = (*v - max).exp();
                    sum += *v;
                }
                sum
            }
        ));
        assert_eq!(report, ("for iter_mut +=".to_string(), true, ""), "{body}");
        assert!(body.contains("chunk_mut :: < _ , 32 > (& mut __adaptive_s0 [..] , 0 , __adaptive_k)"), "{body}");
        assert!(body.contains("let v = & mut __adaptive_c0 [__adaptive_l]"), "{body}");
        assert!(body.contains("math :: exp (* v - max)"), "{body}");
        // The same with an index: `x[i]` taken as a mutable chunk, read and written through it.
        let (report, body) = only(quote!(
            fn exps(x: &mut [f32], m: f32) -> f32 {
                let mut sum = 0.0f32;
                for i in 0..x.len() {
                    x[i] = (x[i] - m).exp();
                    sum += x[i];
                }
                sum
            }
        ));
        assert_eq!(report, ("for range +=".to_string(), true, ""), "{body}");
        assert!(body.contains("chunk_mut :: < _ , 32 > (& mut x [..] , 0 , __adaptive_k)"), "{body}");
        assert!(body.contains("__adaptive_h0 [__adaptive_l] = :: adaptive_kernel :: __private :: math :: exp (__adaptive_h0 [__adaptive_l] - m)"), "{body}");
        // Elements of other iterations, or the slice whole: `overlap`.
        for stmts in [
            quote!(x[i] = x[i + 1] * 2.0; s += x[i];),
            quote!(x[i + 1] = 1.0; s += y[i];),
            quote!(x[i] = 1.0; s += x.len() as f32;),
        ] {
            left(
                quote!(fn k(x: &mut [f32], y: &[f32]) -> f32 {
                    let mut s = 0.0f32;
                    for i in 0..y.len() {
                        #stmts
                    }
                    s
                }),
                "for range +=",
                "overlap",
            );
        }
    }

    #[test]
    fn iterator_loops_with_libm_calls_call_the_formulas() {
        let (report, body) = only(quote!(
            fn silu(x: &[f32], out: &mut [f32]) {
                for (o, &v) in out.iter_mut().zip(x) {
                    *o = v / (1.0 + (-v).exp());
                }
            }
        ));
        assert_eq!(report, ("for zip =".to_string(), true, ""), "{body}");
        assert!(body.contains("for (o , & v) in out . iter_mut () . zip (x)"), "the loop stays: {body}");
        assert!(body.contains("math :: exp (- v)"), "{body}");
        // Without such a call, or in `f64`: not reported, untouched.
        for f in [
            quote!(
                fn k(x: &[f32], out: &mut [f32]) {
                    for (o, v) in out.iter_mut().zip(x) {
                        *o = v * 2.0;
                    }
                }
            ),
            quote!(
                fn k(x: &[f64], out: &mut [f64]) {
                    for (o, v) in out.iter_mut().zip(x) {
                        *o = v.exp();
                    }
                }
            ),
        ] {
            assert_eq!(rewrite(f, true).1, []);
        }
        // A store elsewhere: left alone, untouched.
        left(
            quote!(
                fn k(x: &[f32], out: &mut [f32], last: &mut f32) {
                    for (o, v) in out.iter_mut().zip(x) {
                        *o = v.exp();
                        *last = *o;
                    }
                }
            ),
            "for zip =",
            "effect",
        );
    }

    /// `fn k(..) { for c in 0..k { <body> } }` over k-means-like inputs.
    fn items(body: TokenStream) -> TokenStream {
        quote!(fn k(p: &[f32], cent: &[f32], out: &mut [f32], d: usize, k: usize, best: &mut usize) {
            let mut nearest = f32::INFINITY;
            let mut total = 0.0f32;
            for c in 0..k {
                #body
            }
        })
    }

    #[test]
    fn loops_around_a_reduction_that_cannot_be_jammed() {
        let dist = quote!(for j in 0..d {
            let t = p[j] - q[j];
            dist += t * t;
        });
        for (body, reason) in [
            // The suffix writes what the next items read.
            (quote!(let q = &cent[c * d..(c + 1) * d]; let mut dist = nearest; #dist nearest = dist;), "carried"),
            // The accumulator is not the item's own.
            (quote!(let q = &cent[c * d..(c + 1) * d]; for j in 0..d { total += q[j]; }), "carried"),
            // The reduction's range depends on the item.
            (
                quote!(let q = &cent[c..]; let mut dist = 0.0f32; for j in 0..q.len() { dist += q[j]; } out[c] = dist;),
                "source",
            ),
            // A prefix that is not a pure `let`.
            (
                quote!(let q = &cent[c..]; let mut dist = 0.0f32; out[c] = 0.0; for j in 0..d { dist += q[j]; } out[c] = dist;),
                "effect",
            ),
            // Control flow in the suffix.
            (quote!(let q = &cent[c * d..(c + 1) * d]; let mut dist = 0.0f32; #dist if dist < 1.0 { break; }), "break"),
        ] {
            let (reports, text) = all(items(body));
            assert_eq!(reports.first(), Some(&("for range jam".to_string(), false, reason)), "{text}");
            assert!(!text.contains("__adaptive_cend"), "{text}");
        }
    }

    #[test]
    fn an_f64_distance_is_jammed_below_its_wide_lanes() {
        let (reports, text) = all(quote!(
            fn k(p: &[f64], rows: &[f64], out: &mut [f64], d: usize) {
                for r in 0..out.len() {
                    let q = &rows[r * d..(r + 1) * d];
                    let mut s = 0.0f64;
                    for j in 0..d {
                        s += (p[j] - q[j]) * (p[j] - q[j]);
                    }
                    out[r] = s;
                }
            }
        ));
        assert_eq!(reports.first(), Some(&yes("for range jam")), "{text}");
        // One item's loop goes 16 lanes wide from 64 elements: the jam runs below, 2 lanes an item.
        assert!(text.contains("if __adaptive_length < 64 {"), "{text}");
        assert!(text.contains("chunk :: < _ , 2 > (& p [..] , 0 , __adaptive_k)"), "{text}");
        assert!(!text.contains("chunk :: < _ , 8 >"), "{text}");
    }

    #[test]
    fn a_slice_s_length_in_the_suffix_is_a_read() {
        let dist = quote!(for j in 0..d {
            let t = p[j] - q[j];
            dist += t * t;
        });
        // `len` and `is_empty` of a shared slice, and of the `&mut` slice the suffix stores into.
        for suffix in [
            quote!(out[c] = dist / p.len() as f32;),
            quote!(if !cent.is_empty() {
                out[c] = dist * out.len() as f32;
            }),
            // A length passed to a function is a number, not a place the function could write.
            quote!(out[c] = scale(dist, p.len());),
        ] {
            let body = quote!(let q = &cent[c * d..(c + 1) * d]; let mut dist = 0.0f32; #dist #suffix);
            let (reports, text) = all(items(body));
            assert_eq!(reports.first(), Some(&yes("for range jam")), "{text}");
        }
        // Disagreement resolved: every other method was a write to the jam, though the split read
        // the sixteen of `READ_ONLY` and any method of a shared slice. One rule now (`crate::body::
        // access`): a method of a shared slice reads it, so does a read-only one of a `&mut` slice.
        for suffix in [
            quote!(if cent.contains(&dist) {
                out[c] = dist;
            }),
            quote!(out[c] = dist + *cent.first().unwrap();),
            quote!(out[c] = dist; let _ = out.first();),
        ] {
            let body = quote!(let q = &cent[c * d..(c + 1) * d]; let mut dist = cent[c]; #dist #suffix);
            let (reports, text) = all(items(body));
            assert_eq!(reports.first(), Some(&yes("for range jam")), "{text}");
        }
        // A method that may write a slice the items read (`reverse` of a `&mut` slice) is a write.
        // (A method of a name bound without `mut` and holding no `&mut`, `d.len()` of a `usize`
        // from a user's trait, cannot take `&mut self`: a read.)
        let writes = |body: TokenStream| {
            quote!(fn k(p: &[f32], cent: &mut [f32], out: &mut [f32], d: usize, k: usize) {
                for c in 0..k {
                    #body
                }
            })
        };
        for (suffix, word) in
            [(quote!(cent.reverse(); out[c] = dist;), "carried"), (quote!(out[c] = dist + d.len() as f32;), "")]
        {
            let body = quote!(let q = &cent[c * d..(c + 1) * d]; let mut dist = cent[c]; #dist #suffix);
            let (reports, text) = all(writes(body));
            assert_eq!(reports.first().map(|r| r.2), Some(word), "{text}");
        }
    }

    #[test]
    fn jams_with_an_argmax_a_store_and_several_accumulators() {
        let body = quote!(
            let q = &cent[c * d..(c + 1) * d];
            let (mut dot, mut norm) = (0.0f32, 0.0f32);
            for j in 0..d {
                dot += p[j] * q[j];
                norm += q[j] * q[j];
            }
            let score = dot / norm.sqrt();
            out[c] = score;
            if score > nearest {
                nearest = score;
                *best = c;
            }
            total += score;
        );
        let (reports, text) = all(items(body));
        assert_eq!(reports, [yes("for range jam"), yes("for range +=")], "{text}");
        // Two accumulators: four items at a time; each suffix keeps its own names; jammed below
        // half the length one accumulator would be.
        assert!(text.contains("__adaptive_norm_3") && !text.contains("__adaptive_norm_4"), "{text}");
        assert!(text.contains("if __adaptive_length < 64 {"), "{text}");
        assert!(
            text.contains(
                "{ let score = __adaptive_dot_3 / __adaptive_norm_3 . sqrt () ; out [__adaptive_c_3] = score ;"
            ),
            "{text}"
        );
        // Under `exact`: nothing jammed, said once per loop.
        let f: syn::ItemFn =
            syn::parse2(items(quote!(let mut s = 0.0f32; for j in 0..d { s += p[j]; } out[c] = s;))).unwrap();
        let (_, reports) = reassociate(&f.block, &Body::new(&f.block, &f.sig, true), Some(Reason::Exact));
        let why: Vec<(&str, bool, &str)> =
            reports.iter().map(|r| (r.idiom.as_str(), r.rewritten, crate::reason::word(r.reason))).collect();
        assert_eq!(why, [("for range jam", false, "exact"), ("for range +=", false, "exact")]);
    }

    /// A nearest-centroid search over points, `<middle>` being the centroid loop's body.
    fn nearest(row: TokenStream, middle: TokenStream, after: TokenStream) -> TokenStream {
        quote!(fn assign(points: &[f32], cent: &[f32], labels: &mut [u32], out: &mut [f32], n: usize, k: usize, d: usize) -> f32 {
            let mut inertia = 0.0f32;
            for i in 0..n {
                #row
                let mut best = 0;
                let mut best_dist = f32::INFINITY;
                for c in 0..k {
                    #middle
                }
                #after
            }
            inertia
        })
    }

    /// The centroid loop's body of [`nearest`]: the distance to one centroid, the nearest kept.
    fn nearest_centroid() -> TokenStream {
        quote!(
            let q = &cent[c * d..(c + 1) * d];
            let mut dist = 0.0f32;
            for j in 0..d {
                let t = p[j] - q[j];
                dist += t * t;
            }
            if dist < best_dist {
                best_dist = dist;
                best = c;
            }
        )
    }

    #[test]
    fn points_in_lanes_for_a_nearest_centroid_search() {
        let middle = nearest_centroid();
        let (reports, body) = all(nearest(
            quote!(let p = &points[i * d..(i + 1) * d];),
            middle.clone(),
            quote!(labels[i] = best as u32; inertia += best_dist;),
        ));
        assert_eq!(reports, [yes("for range items"), yes("for range jam"), yes("for range +=")], "{body}");
        // 16 points per block, their rows transposed, each lane its point's distance and keep.
        assert!(body.contains("__adaptive_t0 [__adaptive_jj] [__adaptive_l] = p [__adaptive_jj]"), "{body}");
        assert!(
            body.contains("let t = __adaptive_t0 [j] [__adaptive_l] - q [j] ; dist [__adaptive_l] += t * t"),
            "{body}"
        );
        assert!(body.contains("let mut best_dist = [f32 :: INFINITY ; 16]"), "{body}");
        assert!(body.contains("if dist [__adaptive_l] < best_dist [__adaptive_l]"), "{body}");
        // After the loops, point by point in order, the point's index its own.
        assert!(body.contains("let i : usize = __adaptive_i + __adaptive_l ; labels [i] = best [__adaptive_l] as u32 ; inertia += best_dist [__adaptive_l]"), "{body}");
        assert!(body.contains("if __adaptive_width <= 64"), "{body}");
        // The centroid's row, read at `[j]`, is taken as its first `width` elements where it has
        // them (its reads then need no bounds check); where it is shorter, the loop as written.
        assert!(
            body.contains("match (q . get (.. __adaptive_width) ,) { (:: core :: option :: Option :: Some (q) ,) => { for j in 0 .. __adaptive_width {"),
            "{body}"
        );
        assert_eq!(body.matches("let t = __adaptive_t0 [j] [__adaptive_l] - q [j]").count(), 2, "{body}");

        // Shapes that keep the points out of lanes (their centroid loop may still be jammed).
        for (row, middle, after) in [
            // A row of a slice the loop writes.
            (quote!(let p = &out[i * d..(i + 1) * d];), middle.clone(), quote!(labels[i] = best as u32;)),
            // A row read at another index than the inner loop's.
            (
                quote!(let p = &points[i * d..(i + 1) * d];),
                quote!(let mut dist = 0.0f32; for j in 0..d { dist += p[d - 1 - j]; } if dist < best_dist { best_dist = dist; best = c; }),
                quote!(labels[i] = best as u32;),
            ),
            // An inner loop over another length than the row's.
            (
                quote!(let p = &points[i * d..(i + 1) * d];),
                quote!(let mut dist = 0.0f32; for j in 0..k { dist += cent[j]; } if dist < best_dist { best_dist = dist; best = c; }),
                quote!(labels[i] = best as u32;),
            ),
            // A middle loop over a range of the point's.
            (
                quote!(let p = &points[i * d..(i + 1) * d];),
                quote!(let mut dist = 0.0f32; for j in 0..d { dist += p[j]; } best_dist = dist;),
                quote!(labels[i] = best as u32; for _ in 0..i {}),
            ),
            // A name after the loops that hides the point's.
            (
                quote!(let p = &points[i * d..(i + 1) * d];),
                middle.clone(),
                quote!(let best = best + 1; labels[i] = best as u32;),
            ),
            // After the loops, a write the next points read.
            (
                quote!(let p = &points[i * d..(i + 1) * d];),
                quote!(let mut dist = inertia; for j in 0..d { dist += p[j]; } if dist < best_dist { best_dist = dist; best = c; }),
                quote!(labels[i] = best as u32; inertia += best_dist;),
            ),
        ] {
            let (reports, body) = all(nearest(row, middle, after));
            assert!(!reports.iter().any(|r| r.0 == "for range items"), "{body}");
        }
    }

    #[test]
    fn four_centroids_per_pass_over_the_points_rows() {
        let (_, body) = all(nearest(
            quote!(let p = &points[i * d..(i + 1) * d];),
            nearest_centroid(),
            quote!(labels[i] = best as u32; inertia += best_dist;),
        ));
        // Four centroids at a time, each with its own names: its row, its sums, its index.
        assert!(body.contains("while __adaptive_cend . saturating_sub (__adaptive_c) >= 4 {"), "{body}");
        assert!(body.contains("let __adaptive_c_0 : usize = __adaptive_c ;"), "{body}");
        assert!(body.contains("let __adaptive_c_3 : usize = __adaptive_c + 3 ;"), "{body}");
        assert!(
            body.contains("let __adaptive_q_3 = & cent [__adaptive_c_3 * d .. (__adaptive_c_3 + 1) * d] ;"),
            "{body}"
        );
        assert!(body.contains("let mut __adaptive_dist_3 = [0.0f32 ; 16] ;"), "{body}");
        // Their sums in one loop over the lanes, each copy's statements in a block of their own.
        assert!(
            body.contains(
                "for __adaptive_l in 0 .. 16 { { let t = __adaptive_t0 [j] [__adaptive_l] - __adaptive_q_0 [j] ; \
                 __adaptive_dist_0 [__adaptive_l] += t * t ; } { let t = __adaptive_t0 [j] [__adaptive_l] - __adaptive_q_1 [j] ;"
            ),
            "{body}"
        );
        // Then each centroid's compare-and-keep, in the centroids' order.
        let keeps: Vec<usize> = (0..4)
            .map(|n| body.find(&format!("if __adaptive_dist_{n} [__adaptive_l] < best_dist [__adaptive_l] {{ best_dist [__adaptive_l] = __adaptive_dist_{n} [__adaptive_l] ; best [__adaptive_l] = __adaptive_c_{n} ;")).unwrap_or_else(|| panic!("copy {n}: {body}")))
            .collect();
        assert!(keeps.windows(2).all(|w| w[0] < w[1]), "{keeps:?}");
        // The centroids left, one at a time, as before.
        assert!(body.contains("for c in __adaptive_c .. __adaptive_cend {"), "{body}");

        // A `continue` in the sums: each copy in a loop over the lanes of its own, so that one
        // copy's `continue` skips only its own lane's statements.
        let guarded = quote!(
            let q = &cent[c * d..(c + 1) * d];
            let mut dist = 0.0f32;
            for j in 0..d {
                if q[j] == 0.0 {
                    continue;
                }
                let t = p[j] - q[j];
                dist += t * t;
            }
            if dist < best_dist {
                best_dist = dist;
                best = c;
            }
        );
        let (reports, body) =
            all(nearest(quote!(let p = &points[i * d..(i + 1) * d];), guarded, quote!(labels[i] = best as u32;)));
        assert_eq!(reports.first(), Some(&yes("for range items")), "{body}");
        assert!(body.contains("__adaptive_dist_3"), "{body}");
        assert!(!body.contains("for __adaptive_l in 0 .. 16 { {"), "{body}");

        // Sums that read the items' state (changed by an earlier centroid's keep), or a middle
        // loop that binds one of its names again: one centroid at a time.
        for middle in [
            quote!(let q = &cent[c * d..(c + 1) * d]; let mut dist = 0.0f32; for j in 0..d { let t = p[j] - q[j]; dist += t * t + best_dist * 0.0; } if dist < best_dist { best_dist = dist; best = c; }),
            quote!(let q = &cent[c * d..(c + 1) * d]; let mut dist = 0.0f32; for j in 0..d { let t = p[j] - q[j]; dist += t * t; } let q = dist; if q < best_dist { best_dist = q; best = c; }),
            quote!(let q = &cent[c * d..(c + 1) * d]; let mut dist = best_dist; for j in 0..d { let t = p[j] - q[j]; dist += t * t; } if dist < best_dist { best_dist = dist; best = c; }),
        ] {
            let (reports, body) =
                all(nearest(quote!(let p = &points[i * d..(i + 1) * d];), middle, quote!(labels[i] = best as u32;)));
            assert_eq!(reports.first(), Some(&yes("for range items")), "{body}");
            // (The points left after the blocks are jammed by `jam.rs`, with names of their own.)
            let lanes = ["let mut __adaptive_dist_0 = [", "let mut __adaptive_dist_0 : [_ ; 16]"];
            assert!(!lanes.iter().any(|l| body.contains(l)), "{body}");
            assert!(body.contains("for c in 0 .. k { let q = & cent [c * d .. (c + 1) * d] ;"), "{body}");
        }
    }

    #[test]
    fn a_zip_spelled_as_a_path_is_a_zip() {
        // Disagreement resolved: the typer read `Iterator::zip(a, b)` (how a split loop's chunk
        // spells `a.zip(b)`) as a zip, this rewrite's own grammar did not: a zip reduction ran one
        // element at a time in the Parallel variant's chunks. One grammar of walks (`body/walk.rs`).
        rewritten(
            quote!(
                fn dot(a: &[f32], b: &[f32]) -> f32 {
                    let mut s = 0.0f32;
                    for (x, y) in ::core::iter::Iterator::zip(a.iter(), b) {
                        s += x * y;
                    }
                    s
                }
            ),
            "for zip +=",
        );
    }

    #[test]
    fn a_remainder_store_beside_a_reduction() {
        // Disagreement resolved: the reductions' stores were `=`, `+=`, `-=`, `*=`, `/=`, so a
        // `%=` through an `iter_mut` item made the loop an `effect`; every compound assignment is
        // a store (`crate::body::access`).
        rewritten(
            quote!(
                fn k(x: &[f32], out: &mut [f32]) -> f32 {
                    let mut s = 0.0f32;
                    for (o, v) in out.iter_mut().zip(x) {
                        *o %= 2.0;
                        s += v;
                    }
                    s
                }
            ),
            "for zip +=",
        );
    }

    #[test]
    fn the_length_of_any_slice_is_a_usize() {
        // Disagreement resolved: `a.len()` of a slice of integers was of no known type to this
        // rewrite (a `for ? +=` left for its `source`), though the split took it for a `usize`.
        // The range is known now, and what is left is the accumulator's type.
        left(
            quote!(
                fn k(a: &[i32]) -> i32 {
                    let mut s = 0i32;
                    for i in 0..a.len() {
                        s += a[i];
                    }
                    s
                }
            ),
            "for range +=",
            "type",
        );
        // And a name bound to a cast (`let n = len as usize;`) is a `usize` whatever it casts.
        rewritten(
            quote!(
                fn k(x: &[f32], m: &Meta) -> f32 {
                    let n = m.len as usize;
                    let mut s = 0.0f32;
                    for i in 0..n {
                        s += x[i];
                    }
                    s
                }
            ),
            "for range +=",
        );
    }

    #[test]
    fn a_row_is_one_shape_to_every_rewrite() {
        // Disagreement resolved: the split took `&x[i * d..i * d + d]` and `&x[i * d..(1 + i) * d]`
        // for the index's row, the items in lanes only `&x[i * d..(i + 1) * d]`. One shape of a
        // row (`body/interval.rs`, `row_range`).
        let middle = nearest_centroid();
        for row in [quote!(let p = &points[i * d..i * d + d];), quote!(let p = &points[d * i..(1 + i) * d];)] {
            let (reports, body) = all(nearest(row, middle.clone(), quote!(labels[i] = best as u32;)));
            assert_eq!(reports.first(), Some(&yes("for range items")), "{body}");
        }
    }

    #[test]
    fn exact_rewrites_nothing_and_says_so() {
        let f = quote!(
            fn k(x: &[f32]) -> f32 {
                let mut s = 0.0;
                for v in x {
                    s += v;
                }
                s + x.iter().sum::<f32>()
            }
        );
        let (body, reports) = rewrite(f.clone(), false);
        let original: syn::ItemFn = syn::parse2(f).unwrap();
        assert_eq!(body, original.block.into_token_stream().to_string());
        let why: Vec<(&str, bool, &str)> =
            reports.iter().map(|r| (r.idiom.as_str(), r.rewritten, crate::reason::word(r.reason))).collect();
        assert_eq!(why, [("for iter +=", false, "exact"), ("iter.sum()", false, "exact")]);
    }

    #[test]
    fn reports_carry_source_lines() {
        let f: syn::ItemFn = syn::parse_str(
            "fn k(x: &[f32]) -> f32 {\n    let mut s = 0.0;\n    for v in x {\n        s += v;\n    }\n    s\n}",
        )
        .unwrap();
        let (_, reports) = reassociate(&f.block, &Body::new(&f.block, &f.sig, false), None);
        assert_eq!(reports[0].line, 3);
    }
}
