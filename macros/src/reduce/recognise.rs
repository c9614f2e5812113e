//! Which loops and iterator chains are float reductions the SIMD variant may
//! reassociate, and the [`Plan`] that rewrites one; or, for a reduction left
//! as written, the one word that says why.
//!
//! A rewritable reduction has
//!
//! * a **source** whose elements can be taken in fixed-size chunks: a `usize`
//!   range (`for i in 0..n`), or one or two known float slices (`x.iter()`,
//!   `x.iter().copied()`, `&x`, a shared slice `x`, `a.iter().zip(b)`), also
//!   `.enumerate()`d; a slice may be a parameter or a local row of one
//!   (`let p = &x[a..b];`, `split_at`, `for row in x.chunks(d)`, see
//!   [`types`](super::types));
//! * a **body** with no effect but the accumulation: `let` bindings of pure
//!   expressions (tuple patterns included), `if` over pure conditions,
//!   [`continue_guard`]s (`if i == j { continue; }` at the top level), and
//!   accumulation statements `acc += t`, `acc -= t`, `acc *= t`,
//!   `acc = acc.max(t)`, `acc = f32::min(acc, t)` (also in the iterator forms
//!   `.sum()`, `.product()`, `.fold(init, f32::max)`, `.fold(init, |a, x| a + t)`,
//!   after an optional `.map(|x| t)`), where every `t` is a pure float
//!   expression (see [`types`](super::types)) that does not read any
//!   accumulator;
//! * **accumulators** that are mutable locals of a known float type (declared
//!   type, a float literal initialiser such as `let mut acc = 0.0`, one part of
//!   a tuple `let (mut fx, mut fy) = (0.0f32, 0.0f32)`), each combined by one
//!   operator. An unsuffixed accumulator takes the width of its terms. `max`/`min`
//!   need the width (`f32` or `f64`) known, since a method call on an
//!   unsuffixed literal does not compile.
//!
//! A reduction nested in a loop that is not one (a k-means distance inside the
//! loops that compare and store it) is rewritten on its own: the walk in
//! [`reduce`](super) visits every loop.

use proc_macro2::Ident;
use quote::ToTokens;
use syn::visit::Visit;
use syn::{BinOp, Block, Expr, ExprMethodCall, Pat, Stmt, UnOp};

use crate::body::{
    accumulation, continue_guard, extremum_of, keep, let_names, pat_names, plain_ident, unit_base, Access, Env, Fold,
    ForLoop, How, Int, Op, Ty, TyValue as Value, Walk, Width, Write,
};
use crate::reason::Reason;
use crate::tokens::{mentions, strip};

/// One accumulator of a rewritten reduction.
pub(crate) struct Acc {
    pub ident: Ident,
    pub fold: Fold,
}

/// Where a reduction's elements come from.
pub(crate) enum Source {
    /// `start..end` over `usize`.
    Range { start: Box<Expr>, end: Box<Expr> },
    /// One slice (`x.iter()`), or two zipped (`a.iter().zip(b)`), truncated to the shorter;
    /// `indexed`: `.enumerate()`d, each item paired with its index.
    Slices { items: Vec<SliceItem>, indexed: bool },
}

impl Source {
    fn word(&self) -> &'static str {
        match self {
            Source::Range { .. } => "range",
            Source::Slices { indexed: true, .. } => "enumerate",
            Source::Slices { items, .. } if items.len() == 2 => "zip",
            Source::Slices { items, .. } if items.iter().any(|s| s.mutable) => "iter_mut",
            Source::Slices { .. } => "iter",
        }
    }
}

/// One slice of a [`Source::Slices`].
pub(crate) struct SliceItem {
    /// The slice-like local (`&[T]`, `Vec<T>`, `[T; N]`, ...).
    pub slice: Ident,
    pub width: Width,
    /// `.copied()`/`.cloned()`: elements by value rather than `&T`.
    pub by_value: bool,
    /// `.iter_mut()`: elements as `&mut T`, which the body may store through (`*v = t`).
    pub mutable: bool,
}

impl SliceItem {
    /// `x.iter()`: elements as `&T`.
    fn shared(slice: Ident, width: Width) -> SliceItem {
        SliceItem { slice, width, by_value: false, mutable: false }
    }
}

/// A slice element read at `index`, `base + index` or `index + base` in a
/// range loop: read a chunk at a time, bounds-checked once per chunk.
pub(crate) struct Hoist {
    pub slice: Ident,
    pub base: Option<Expr>,
    /// The body also stores into these elements (`x[i] = t`): a mutable chunk.
    pub mutable: bool,
}

/// How to rewrite one reduction.
pub(crate) struct Plan {
    pub source: Source,
    /// The element pattern (the loop's, or the `map`/`fold` closure's).
    pub pat: Pat,
    /// The body run per element, with its accumulation statements.
    pub body: Block,
    pub accs: Vec<Acc>,
    /// Range and `enumerate` loops only: the chunked slice reads at the index, and the
    /// `Expr::Index`es each replaces.
    pub hoists: Vec<(Hoist, Vec<Expr>)>,
    /// Independent partial results per accumulator in the wide level (32 when every
    /// accumulator is `f32`, else 16); the narrow level has a quarter as many.
    pub lanes: usize,
    /// The narrow level's lanes (a quarter of `lanes` unless a jam asks for fewer).
    pub narrow: usize,
    /// Whether the accumulators' lanes are folded together (all sums: one copy of all the
    /// lanes, then the halvings of all of them side by side) rather than one by one.
    pub fold_together: bool,
    /// The libm functions whose calls in the body became the runtime's formulas
    /// ([`math`](super::math)), in order of first appearance.
    pub math: Vec<&'static str>,
}

/// What to do with one loop or iterator chain.
pub(crate) enum Verdict {
    /// No accumulation in sight: not a reduction, not reported.
    NotAReduction,
    /// A reduction left as written: its idiom and why, in a word.
    LeftAlone { idiom: String, reason: Reason },
    /// A reduction to rewrite as `plan` says; `init`: the hidden accumulator of an iterator chain.
    Rewrite { idiom: String, plan: Box<Plan>, init: Option<Init> },
    /// An element-wise loop over `iter_mut()` items (no accumulator) whose body calls libm
    /// functions on `f32` values: the loop as written with `body`, where those calls are the
    /// runtime's formulas (`math`), which the compiler then vectorises on its own.
    InPlace { idiom: String, body: Block, math: Vec<&'static str> },
}

/// The hidden accumulator an iterator reduction starts from.
pub(crate) enum Init {
    /// `.sum::<T>()`: `Sum::sum` of nothing (`-0.0` today), typed.
    Sum(Width),
    /// `.product::<T>()`: `Product::product` of nothing (`1.0`), typed.
    Product(Width),
    /// `.fold(init, ..)`: the user's `init`, typed when the width is known.
    Fold(Box<Expr>, Width),
}

/// The accumulators a loop body updates, in order of first update, with the
/// fold of each update (statements of the body and of its `if` branches).
fn accumulations(stmts: &[Stmt], out: &mut Vec<(Ident, Fold)>) {
    for stmt in stmts {
        let Stmt::Expr(e, _) = stmt else { continue };
        if let Some((acc, fold, _)) = keep(e) {
            out.push((acc, fold));
            continue;
        }
        match e {
            Expr::If(i) => {
                accumulations(&i.then_branch.stmts, out);
                let mut otherwise = i.else_branch.as_ref().map(|(_, e)| &**e);
                while let Some(e) = otherwise {
                    otherwise = match e {
                        Expr::If(i) => {
                            accumulations(&i.then_branch.stmts, out);
                            i.else_branch.as_ref().map(|(_, e)| &**e)
                        }
                        Expr::Block(b) => {
                            accumulations(&b.block.stmts, out);
                            None
                        }
                        _ => None,
                    };
                }
            }
            Expr::Block(b) => accumulations(&b.block.stmts, out),
            e => {
                if let Some((acc, op, _)) = accumulation(e) {
                    out.push((acc, Fold::Op(op)));
                }
            }
        }
    }
}

/// The source of `for pat in expr` (`into_iter`: a slice itself is allowed) or of an
/// iterator chain's receiver (an iterator is needed): what this rewrite takes of the
/// model's grammar of walks ([`Walk`]).
pub(super) fn source(e: &Expr, env: &Env, into_iter: bool) -> Option<Source> {
    Source::of(&Walk::of(e, into_iter), env)
}

impl Source {
    /// A `usize` range, or one or two float slices (zipped) walked by element, `enumerate`d or not.
    pub(super) fn of(walk: &Walk, env: &Env) -> Option<Source> {
        match walk {
            Walk::Range { start: Some(start), end: Some(end), closed: false } => match (env.ty(start), env.ty(end)) {
                (Ty::Int(a), Ty::Int(b))
                    if (a == Int::Usize || b == Int::Usize)
                        && !matches!(a, Int::Other(_))
                        && !matches!(b, Int::Other(_)) =>
                {
                    Some(Source::Range { start: Box::new((*start).clone()), end: Box::new((*end).clone()) })
                }
                _ => None,
            },
            Walk::Zip(a, b) => {
                let Some(Source::Slices { items: mut left, indexed: false }) = Source::of(a, env) else { return None };
                let right = SliceItem::of(b, env)?;
                (left.len() == 1).then(|| {
                    left.push(right);
                    Source::Slices { items: left, indexed: false }
                })
            }
            Walk::Enumerate(a) => match Source::of(a, env)? {
                Source::Slices { items, indexed: false } => Some(Source::Slices { items, indexed: true }),
                _ => None,
            },
            walk => SliceItem::of(walk, env).map(|s| Source::Slices { items: vec![s], indexed: false }),
        }
    }
}

impl SliceItem {
    /// `x.iter()`, `x.iter_mut()`, `x.iter().copied()`, `x.iter().cloned()`, and (where a
    /// slice itself is walked: a `for` source or a `zip` argument) `&x` or a shared slice `x`,
    /// of a float slice `x`.
    fn of(walk: &Walk, env: &Env) -> Option<SliceItem> {
        let slice = |e: &Expr| -> Option<(Ident, Width, bool)> {
            let ident = plain_ident(e)?;
            let (width, access) = env.lookup(&ident.to_string())?.0.float_slice()?;
            Some((ident, width, access == Access::Shared))
        };
        match walk {
            Walk::Items { of, how: How::Iter | How::Whole(Some(false)) } => {
                slice(of).map(|(slice, width, _)| SliceItem::shared(slice, width))
            }
            Walk::Items { of, how: How::IterMut } => match slice(of)? {
                (slice, width, false) => Some(SliceItem { slice, width, by_value: false, mutable: true }),
                _ => None,
            },
            Walk::Items { of, how: How::Whole(None) } => match slice(of)? {
                (slice, width, true) => Some(SliceItem::shared(slice, width)),
                _ => None,
            },
            Walk::Copied(inner, _) => match SliceItem::of(inner, env)? {
                SliceItem { by_value: false, mutable: false, slice, width } => {
                    Some(SliceItem { slice, width, by_value: true, mutable: false })
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// What one element of `source` is: an index, a float or a reference to one, a pair of them
/// (`zip`), or an index paired with either (`enumerate`).
fn item_value(source: &Source) -> Value {
    match source {
        Source::Range { .. } => Value::One(Ty::Int(Int::Usize)),
        Source::Slices { items, indexed } => {
            let ty = |s: &SliceItem| Value::One(if s.by_value { Ty::Float(s.width) } else { Ty::FloatRef(s.width) });
            let item = match items.as_slice() {
                [one] => ty(one),
                items => Value::Tuple(items.iter().map(ty).collect()),
            };
            match indexed {
                true => Value::Tuple(vec![Value::One(Ty::Int(Int::Usize)), item]),
                false => item,
            }
        }
    }
}

/// The index an element pattern binds: a range loop's `i`, an `enumerate`d loop's `(j, _)`.
fn index_ident(pat: &Pat, source: &Source) -> Option<Ident> {
    match (source, pat) {
        (Source::Range { .. }, pat) => pat_ident(pat),
        (Source::Slices { indexed: true, .. }, Pat::Tuple(t)) if t.elems.len() == 2 => pat_ident(&t.elems[0]),
        _ => None,
    }
}

/// What a reduction's body may store into besides its accumulators: the elements it is
/// given to update.
#[derive(Default)]
struct Stores {
    /// The `iter_mut()` items the element pattern binds: `*v = t`.
    items: Vec<String>,
    /// In a range loop over `index`, the slices it stores into, each at `x[index]` only.
    slices: Vec<String>,
    index: Option<Ident>,
}

impl Stores {
    /// Whether the body may store into `place`: `*v` of an item, `x[index]` of a written slice.
    fn allow(&self, place: &Expr) -> bool {
        match strip(place) {
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => {
                plain_ident(&u.expr).is_some_and(|v| self.items.iter().any(|i| v == i))
            }
            Expr::Index(ix) if ix.attrs.is_empty() => {
                let slice = plain_ident(&ix.expr).is_some_and(|x| self.slices.iter().any(|s| x == s));
                slice && self.index.as_ref().is_some_and(|i| plain_ident(&ix.index).is_some_and(|j| j == *i))
            }
            _ => false,
        }
    }
}

/// `place = t` or `place op= t` (any compound assignment: `crate::body::Write`): the place and `t`.
fn store(e: &Expr) -> Option<(&Expr, &Expr)> {
    let attrs = match e {
        Expr::Assign(a) => &a.attrs,
        Expr::Binary(b) => &b.attrs,
        _ => return None,
    };
    if !attrs.is_empty() {
        return None;
    }
    Write::of(e)?.store()
}

/// The walk of a reduction's body: only pure `let`s, pure `if`s, accumulations of pure
/// float terms that read no accumulator, stores of such terms into the elements the body
/// is given ([`Stores`]), and (in a loop's own body) pure [`continue_guard`]s. Records
/// each term's width against its accumulator.
struct Check<'a> {
    env: Env,
    accs: &'a mut [(Ident, Fold, Width)],
    names: Vec<String>,
    stores: &'a Stores,
}

impl Check<'_> {
    fn reads(&self, e: &Expr) -> bool {
        mentions(e.to_token_stream(), &self.names)
    }

    fn stmts(&mut self, stmts: &[Stmt], guards: bool) -> Result<(), Reason> {
        for stmt in stmts {
            if let Some(cond) = continue_guard(stmt).filter(|_| guards) {
                if self.reads(cond) {
                    return Err(Reason::Reads);
                }
                if self.env.ty(cond) != Ty::Bool {
                    return Err(Reason::Effect);
                }
                continue;
            }
            match stmt {
                Stmt::Local(local) => {
                    let Some(init) = &local.init else { return Err(Reason::Effect) };
                    if init.diverge.is_some() {
                        return Err(Reason::Effect);
                    }
                    if self.reads(&init.expr) {
                        return Err(Reason::Reads);
                    }
                    if pat_names(&local.pat).iter().any(|n| self.names.contains(n)) {
                        return Err(Reason::Shadow);
                    }
                    if !self.env.value(&init.expr).known() {
                        return Err(Reason::Effect);
                    }
                    self.env.bind_let(local);
                }
                Stmt::Expr(e, _) => self.expr(e)?,
                Stmt::Item(_) => return Err(Reason::Effect),
                Stmt::Macro(_) => return Err(Reason::Macro),
            }
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr) -> Result<(), Reason> {
        if let Some((acc, fold, term)) = keep(e) {
            return self.term(acc, fold, term);
        }
        match e {
            Expr::If(i) => {
                if self.reads(&i.cond) {
                    return Err(Reason::Reads);
                }
                if self.env.ty(&i.cond) != Ty::Bool {
                    return Err(Reason::Effect);
                }
                self.block(&i.then_branch)?;
                match i.else_branch.as_ref().map(|(_, e)| &**e) {
                    None => Ok(()),
                    Some(e) => self.expr(e),
                }
            }
            Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => self.block(&b.block),
            e => {
                if let Some((acc, op, term)) = accumulation(e) {
                    return self.term(acc, Fold::Op(op), term);
                }
                match store(e) {
                    Some((place, term)) if self.stores.allow(place) => {
                        if self.reads(term) {
                            return Err(Reason::Reads);
                        }
                        self.env.ty(term).float_width().map(|_| ()).ok_or(Reason::Type)
                    }
                    _ => Err(Reason::Effect),
                }
            }
        }
    }

    /// One accumulation of `term` into `acc` by `fold`.
    fn term(&mut self, acc: Ident, fold: Fold, term: &Expr) -> Result<(), Reason> {
        if self.reads(term) {
            return Err(Reason::Reads);
        }
        let width = self.env.ty(term).float_width().ok_or(Reason::Type);
        let Some(entry) = self.accs.iter_mut().find(|(a, ..)| *a == acc) else { return Err(Reason::Effect) };
        if entry.1 != fold {
            return Err(Reason::Mixed);
        }
        entry.2 = entry.2.unify(width?).ok_or(Reason::Type)?;
        Ok(())
    }

    fn block(&mut self, block: &Block) -> Result<(), Reason> {
        self.env.push();
        let checked = self.stmts(&block.stmts, false);
        self.env.pop();
        checked
    }
}

/// Decides about the loop `l`, `for pat in expr { body }`; `env` holds the names in scope
/// before the loop.
pub(crate) fn analyse_loop(l: &ForLoop, env: &Env) -> Verdict {
    let f = l.f;
    let mut found = Vec::new();
    accumulations(&f.body.stmts, &mut found);
    // A compare-and-keep of a name the body declares (`let mut v = ..; if v < lo { v = lo; }`)
    // is a clamp, not a reduction.
    found.retain(|(acc, fold)| {
        matches!(fold, Fold::Op(_)) || !l.lets.contains(&acc.to_string()) || env.lookup(&acc.to_string()).is_some()
    });
    let Some(&(_, first)) = found.first() else { return in_place(l, env) };
    let source = Source::of(&l.walk, env);
    let idiom = format!("for {} {}", source.as_ref().map_or("?", Source::word), first.word());
    let left = |reason| Verdict::LeftAlone { idiom: idiom.clone(), reason };
    if f.label.is_some() {
        return left(Reason::Label);
    }
    if let Some(reason) = l.exits {
        return left(reason);
    }
    let Some(source) = source else { return left(Reason::Source) };
    let mut accs: Vec<(Ident, Fold, Width)> = Vec::new();
    for (ident, fold) in found {
        if let Some(seen) = accs.iter().find(|(a, ..)| *a == ident) {
            if seen.1 != fold {
                return left(Reason::Mixed);
            }
            continue;
        }
        match env.lookup(&ident.to_string()) {
            Some((Ty::Float(width), true)) => accs.push((ident, fold, width)),
            _ => return left(Reason::Type),
        }
    }
    match plan(source, f.pat.as_ref().clone(), f.body.clone(), accs, env) {
        Ok(plan) => Verdict::Rewrite { idiom, plan: Box::new(plan), init: None },
        Err(reason) => left(reason),
    }
}

/// A loop without accumulators: an element-wise loop over `iter_mut()` items (alone or
/// zipped with shared slices) whose body calls libm functions on `f32` values is
/// [`Verdict::InPlace`] when its body is pure but for stores through its items, and
/// reported left alone when not; any other is not a reduction.
fn in_place(l: &ForLoop, env: &Env) -> Verdict {
    let f = l.f;
    let source = Source::of(&l.walk, env);
    let mutable = matches!(&source, Some(Source::Slices { items, .. }) if items.iter().any(|s| s.mutable));
    // A loop with a loop inside is an outer loop: the inner one is judged on its own.
    if !mutable || !super::math::calls_any(&f.body) || l.holds.any() {
        return Verdict::NotAReduction;
    }
    let source = source.expect("checked above");
    let idiom = format!("for {} =", source.word());
    let left = |reason| Verdict::LeftAlone { idiom: idiom.clone(), reason };
    if f.label.is_some() {
        return left(Reason::Label);
    }
    if let Some(reason) = l.exits {
        return left(reason);
    }
    let stores = Stores { items: mutable_items(&f.pat, &source), ..Stores::default() };
    let mut start = env.clone();
    start.push();
    start.bind_value(&f.pat, item_value(&source));
    let mut check = Check { env: start.clone(), accs: &mut [], names: Vec::new(), stores: &stores };
    if let Err(reason) = check.stmts(&f.body.stmts, true) {
        return left(reason);
    }
    let mut body = f.body.clone();
    let math = super::math::replace(&mut body, &start);
    if math.is_empty() {
        return Verdict::NotAReduction;
    }
    Verdict::InPlace { idiom, body, math }
}

/// The names an element pattern binds to `iter_mut()` items: `v` of `for v in x.iter_mut()`,
/// `o` of `for (o, a) in out.iter_mut().zip(a)`, also under `.enumerate()`.
fn mutable_items(pat: &Pat, source: &Source) -> Vec<String> {
    let Source::Slices { items, indexed } = source else { return Vec::new() };
    let pat = match (indexed, pat) {
        (false, pat) => pat,
        (true, Pat::Tuple(t)) if t.elems.len() == 2 => &t.elems[1],
        (true, _) => return Vec::new(),
    };
    let named = |pat: &Pat, item: &SliceItem| pat_ident(pat).filter(|_| item.mutable).map(|i| i.to_string());
    match (items.as_slice(), pat) {
        ([one], pat) => named(pat, one).into_iter().collect(),
        ([a, b], Pat::Tuple(t)) if t.elems.len() == 2 => {
            named(&t.elems[0], a).into_iter().chain(named(&t.elems[1], b)).collect()
        }
        _ => Vec::new(),
    }
}

/// Decides about an iterator chain ending in `.sum()`, `.product()` or `.fold(init, f)`.
/// `expected` is the result type the context declares (`let s: f32 = …`, the function's
/// return type), `acc` the hidden accumulator a rewrite would use.
pub(crate) fn analyse_call(m: &ExprMethodCall, env: &Env, expected: Option<Width>, acc: &Ident) -> Verdict {
    let method = m.method.to_string();
    match (method.as_str(), m.args.len()) {
        ("sum" | "product", 0) | ("fold", 2) => {}
        _ => return Verdict::NotAReduction,
    }
    let (chain, map) = match &*m.receiver {
        Expr::MethodCall(r) if r.method == "map" && r.args.len() == 1 && r.turbofish.is_none() => {
            (&*r.receiver, Some(&r.args[0]))
        }
        e => (e, None),
    };
    let source = source(chain, env, false);
    let word = source.as_ref().map_or("?", Source::word);
    let idiom = match method.as_str() {
        "fold" => format!("{word}.fold({})", fold_op(&m.args[1]).map_or("?", Op::word)),
        _ => format!("{word}.{method}()"),
    };
    let left = |reason| Verdict::LeftAlone { idiom: idiom.clone(), reason };
    let Some(source) = source else { return left(Reason::Source) };
    // The element pattern and the value the chain reduces, before any `fold` closure.
    let item = Ident::new("__adaptive_x", proc_macro2::Span::mixed_site());
    let (pat, value): (Pat, Expr) = match map {
        None => (syn::parse_quote!(#item), syn::parse_quote!(#item)),
        Some(Expr::Closure(c)) => match closure(c, 1) {
            Some((mut params, body)) => (params.remove(0), body),
            None => return left(Reason::Effect),
        },
        Some(_) => return left(Reason::Effect),
    };
    let planned = match method.as_str() {
        "sum" | "product" => {
            let width = match &m.turbofish {
                Some(t) => match t.args.iter().collect::<Vec<_>>().as_slice() {
                    [syn::GenericArgument::Type(ty)] => match Ty::of_type(ty) {
                        Ty::Float(w) => Some(w),
                        _ => None,
                    },
                    _ => None,
                },
                None => expected,
            };
            let Some(width) = width.filter(|w| *w != Width::Any) else { return left(Reason::Type) };
            let (op, init, body): (Op, Init, Block) = if method == "sum" {
                (Op::Sum, Init::Sum(width), syn::parse_quote!({ #acc += #value; }))
            } else {
                (Op::Product, Init::Product(width), syn::parse_quote!({ #acc *= #value; }))
            };
            plan(source, pat, body, vec![(acc.clone(), Fold::Op(op), width)], env).map(|p| (p, init))
        }
        _ => {
            let init = &m.args[0];
            let Some(init_width) = env.ty(init).float_width() else { return left(Reason::Type) };
            // The update of the hidden accumulator: a closure's element pattern is bound to `value`
            // first (`let x = value; acc += t(x);`), a path (`f32::max`) takes `value` itself.
            let (op, width, body): (Op, Width, Block) = match &m.args[1] {
                Expr::Closure(c) => {
                    let Some((params, body)) = closure(c, 2).filter(|(_, b)| !matches!(b, Expr::Block(_))) else {
                        return left(Reason::Effect);
                    };
                    let Some(a) = pat_ident(&params[0]) else { return left(Reason::Effect) };
                    let Some((op, term)) = fold_body(&body, &a) else { return left(Reason::Op) };
                    let (element, update) = (&params[1], update(acc, op, term));
                    (op, Width::Any, syn::parse_quote!({ let #element = #value; #update; }))
                }
                f => match path_extremum(f) {
                    Some((op, width)) => {
                        let update = update(acc, op, &value);
                        (op, width, syn::parse_quote!({ #update; }))
                    }
                    None => return left(Reason::Op),
                },
            };
            let Some(width) = init_width.unify(width) else { return left(Reason::Type) };
            plan(source, pat, body, vec![(acc.clone(), Fold::Op(op), width)], env)
                .map(|p| (p, Init::Fold(Box::new(init.clone()), width)))
        }
    };
    match planned {
        Ok((plan, init)) => Verdict::Rewrite { idiom, plan: Box::new(plan), init: Some(init) },
        Err(reason) => left(reason),
    }
}

/// `acc op= term` (or `acc = acc.max(term)`) for the hidden accumulator. A fold's term
/// loses its outer parentheses: needed in `|acc, &x| acc + (x - s)`, they would be
/// `unused_parens` in `acc += (x - s)`, an error under `#![deny(warnings)]`.
fn update(acc: &Ident, op: Op, term: &Expr) -> Expr {
    let term = strip(term);
    match op {
        Op::Sum => syn::parse_quote!(#acc += #term),
        Op::Product => syn::parse_quote!(#acc *= #term),
        Op::Max => syn::parse_quote!(#acc = #acc.max(#term)),
        Op::Min => syn::parse_quote!(#acc = #acc.min(#term)),
    }
}

/// The operator of a `fold`'s function, for the idiom's name.
fn fold_op(f: &Expr) -> Option<Op> {
    match f {
        Expr::Closure(c) if c.inputs.len() == 2 => {
            let acc = pat_ident(&c.inputs[0])?;
            fold_body(closure_body(&c.body)?, &acc).map(|(op, _)| op)
        }
        f => path_extremum(f).map(|(op, _)| op),
    }
}

/// `f32::max`, `f64::min`, …: the operator and width.
fn path_extremum(f: &Expr) -> Option<(Op, Width)> {
    let Expr::Path(p) = f else { return None };
    let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
    let width = Width::of_name(segments.first()?)?;
    match (p.qself.is_none() && p.path.segments.iter().all(|s| s.arguments.is_empty()), segments.as_slice()) {
        (true, [_, op]) if op == "max" => Some((Op::Max, width)),
        (true, [_, op]) if op == "min" => Some((Op::Min, width)),
        _ => None,
    }
}

/// The body of `|a, x| …` as an accumulation of `a`: `a + t`, `t + a`, `a * t`, `t * a`,
/// `a.max(t)`, `f32::min(t, a)`, …, with `t` not reading `a`.
fn fold_body<'e>(body: &'e Expr, acc: &Ident) -> Option<(Op, &'e Expr)> {
    let is_acc = |e: &Expr| plain_ident(e).is_some_and(|i| i == *acc);
    let (op, term) = match body {
        Expr::Binary(b) => {
            let op = match b.op {
                BinOp::Add(_) => Op::Sum,
                BinOp::Mul(_) => Op::Product,
                _ => return None,
            };
            match (is_acc(&b.left), is_acc(&b.right)) {
                (true, false) => (op, &*b.right),
                (false, true) => (op, &*b.left),
                _ => return None,
            }
        }
        Expr::Paren(p) => return fold_body(&p.expr, acc),
        e => extremum_of(e, acc)?,
    };
    (!mentions(term.to_token_stream(), &[acc.to_string()])).then_some((op, term))
}

/// A plain closure with `n` parameters: its parameter patterns and its body expression.
fn closure(c: &syn::ExprClosure, n: usize) -> Option<(Vec<Pat>, Expr)> {
    let plain = c.attrs.is_empty()
        && c.lifetimes.is_none()
        && c.constness.is_none()
        && c.movability.is_none()
        && c.asyncness.is_none()
        && matches!(c.output, syn::ReturnType::Default);
    if !plain || c.inputs.len() != n {
        return None;
    }
    Some((c.inputs.iter().cloned().collect(), closure_body(&c.body)?.clone()))
}

/// A closure's body as one expression: `x * x`, or `{ x * x }` unwrapped; a block of
/// several statements stays a block (a value only if its lets are pure, see `types`).
fn closure_body(body: &Expr) -> Option<&Expr> {
    match body {
        Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => match b.block.stmts.as_slice() {
            [Stmt::Expr(e, None)] => Some(e),
            _ => Some(body),
        },
        e => Some(e),
    }
}

/// `a` or `a: T` (or `mut a`): the identifier.
fn pat_ident(p: &Pat) -> Option<Ident> {
    match p {
        Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => Some(i.ident.clone()),
        Pat::Type(t) => pat_ident(&t.pat),
        _ => None,
    }
}

/// The narrow level's lanes: a quarter of the wide level's, one 256-bit vector (8 `f32`, 4 `f64`).
const NARROW_DIVISOR: usize = 4;

/// Checks a reduction's body against its source and accumulators and plans its rewrite.
fn plan(
    source: Source,
    pat: Pat,
    mut body: Block,
    mut accs: Vec<(Ident, Fold, Width)>,
    env: &Env,
) -> Result<Plan, Reason> {
    if matches!(source, Source::Range { .. }) && !matches!(&pat, Pat::Wild(_)) && pat_ident(&pat).is_none() {
        return Err(Reason::Source);
    }
    let names: Vec<String> = accs.iter().map(|(i, ..)| i.to_string()).collect();
    if pat_names(&pat).iter().any(|n| names.contains(n)) {
        return Err(Reason::Shadow);
    }
    let stores = match (&source, pat_ident(&pat)) {
        (Source::Range { .. }, Some(index)) => {
            Stores { slices: written_slices(&body, &index, &pat, env)?, index: Some(index), ..Stores::default() }
        }
        _ => Stores { items: mutable_items(&pat, &source), ..Stores::default() },
    };
    let mut start = env.clone();
    start.push();
    start.bind_value(&pat, item_value(&source));
    let mut check = Check { env: start.clone(), accs: &mut accs, names, stores: &stores };
    check.stmts(&body.stmts, true)?;
    if accs.iter().any(|(_, fold, w)| matches!(fold, Fold::Op(Op::Max | Op::Min)) && *w == Width::Any) {
        return Err(Reason::Type);
    }
    let math = super::math::replace(&mut body, &start);
    let mut hoists = match index_ident(&pat, &source) {
        Some(index) => hoists(&body, &index, &pat, env),
        None => Vec::new(),
    };
    for (h, _) in &mut hoists {
        h.mutable = stores.slices.iter().any(|s| h.slice == s);
    }
    let lanes = if accs.iter().all(|(_, _, w)| *w == Width::F32) { 32 } else { 16 };
    let accs = accs.into_iter().map(|(ident, fold, _)| Acc { ident, fold }).collect();
    Ok(Plan { source, pat, body, accs, hoists, lanes, narrow: lanes / NARROW_DIVISOR, fold_together: false, math })
}

/// The slices a range loop's body over `index` stores into: each a mutable float slice from
/// outside the loop, named only as `x[index]` in the body (`overlap` otherwise: a store at
/// another index, or another use, would reach elements of other iterations).
fn written_slices(body: &Block, index: &Ident, pat: &Pat, env: &Env) -> Result<Vec<String>, Reason> {
    struct Places(Vec<String>);
    impl<'ast> Visit<'ast> for Places {
        fn visit_expr(&mut self, e: &'ast Expr) {
            if let Some((place, _)) = store(e) {
                if let Expr::Index(ix) = strip(place) {
                    if let Some(slice) = plain_ident(&ix.expr) {
                        self.0.push(slice.to_string());
                    }
                }
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut places = Places(Vec::new());
    places.visit_block(body);
    let mut written: Vec<String> = Vec::new();
    for slice in places.0 {
        if !written.contains(&slice) {
            written.push(slice);
        }
    }
    if written.is_empty() {
        return Ok(written);
    }
    let mut locals = pat_names(pat);
    locals.extend(let_names(&body.stmts));
    for slice in &written {
        if locals.contains(slice) {
            return Err(Reason::Shadow);
        }
        if !env.lookup(slice).and_then(|(ty, _)| ty.float_slice()).is_some_and(|(_, access)| access != Access::Shared) {
            return Err(Reason::Type);
        }
    }
    // Every mention of a written slice is `x[index]`.
    struct Uses<'a> {
        written: &'a [String],
        index: &'a Ident,
        other: bool,
    }
    impl<'ast> Visit<'ast> for Uses<'_> {
        fn visit_expr_index(&mut self, ix: &'ast syn::ExprIndex) {
            let at_index = plain_ident(&ix.index).is_some_and(|i| i == *self.index);
            match plain_ident(&ix.expr) {
                Some(s) if at_index && self.written.iter().any(|w| s == w) => {}
                _ => syn::visit::visit_expr_index(self, ix),
            }
        }
        fn visit_ident(&mut self, i: &'ast Ident) {
            self.other |= self.written.iter().any(|w| i == w);
        }
    }
    let mut uses = Uses { written: &written, index, other: false };
    uses.visit_block(body);
    if uses.other {
        return Err(Reason::Overlap);
    }
    Ok(written)
}

/// The reads `x[i]`, `x[base + i]`, `x[i + base]` of a loop's body over `index` (bound by
/// the element pattern `pat`), where `x` is a float slice from outside the loop and `base`
/// an integer expression of names from outside the loop: grouped by slice and base. None
/// when the body rebinds `index`.
fn hoists(body: &Block, index: &Ident, pat: &Pat, env: &Env) -> Vec<(Hoist, Vec<Expr>)> {
    struct Reads<'a> {
        index: &'a Ident,
        env: &'a Env,
        locals: Vec<String>,
        found: Vec<(Hoist, String, Vec<Expr>)>,
    }
    impl<'ast> Visit<'ast> for Reads<'_> {
        fn visit_expr_index(&mut self, e: &'ast syn::ExprIndex) {
            syn::visit::visit_expr_index(self, e);
            let Some(slice) = plain_ident(&e.expr) else { return };
            let name = slice.to_string();
            if self.locals.contains(&name) || !matches!(self.env.lookup(&name), Some((Ty::Slice { .. }, _))) {
                return;
            }
            let is_index = |e: &Expr| plain_ident(e).is_some_and(|i| i == *self.index);
            let invariant = |e: &Expr| {
                !mentions(e.to_token_stream(), &self.locals) && matches!(self.env.ty(e), Ty::Int(Int::Usize | Int::Lit))
            };
            let Some(base) = unit_base(&e.index, &is_index, &invariant) else { return };
            let base = base.cloned();
            let key = format!("{name}[{}]", base.as_ref().map_or(String::new(), |b| b.to_token_stream().to_string()));
            match self.found.iter_mut().find(|(_, k, _)| *k == key) {
                Some((_, _, reads)) => reads.push(Expr::Index(e.clone())),
                None => self.found.push((Hoist { slice, base, mutable: false }, key, vec![Expr::Index(e.clone())])),
            }
        }
    }
    let lets = let_names(&body.stmts);
    // A `let` that rebinds the index (`let i = n - 1 - i;`): `x[i]` may not be the element at the
    // loop's index, and the replacement is by tokens, so nothing is read in chunks.
    if lets.iter().any(|l| *index == l.as_str()) {
        return Vec::new();
    }
    let mut locals = pat_names(pat);
    locals.push(index.to_string());
    locals.extend(lets);
    let mut reads = Reads { index, env, locals, found: Vec::new() };
    reads.visit_block(body);
    reads.found.into_iter().map(|(hoist, _, exprs)| (hoist, exprs)).collect()
}
