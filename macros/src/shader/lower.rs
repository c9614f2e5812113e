//! The loop body read into the shader's IR: every construct of the subset
//! (see the module docs of `crate::shader`) typed and placed, anything else the
//! word for why the loop stays on the host.
//!
//! Every local of the body becomes a fresh shader local (so Rust's shadowing
//! and block scopes need no counterpart in WGSL); values a statement needs
//! computed first (an `if` used as a value, a sub-slice) go to the statements
//! before it, in order.

use proc_macro2::Ident;
use syn::{BinOp, Expr, ExprForLoop, Pat, RangeLimits, Stmt, UnOp};

use super::ir::{Acc, AccOp, Arg, ArgSource, Bin, Binding, Func, Place, Un, Var, View, ViewId, E, S};
use super::outer::{Held, Outer};
use super::ty::{Class, Tv, Ty, Types};
use crate::body::{self, plain_ident, pure, Carried, Chain, How, Kind, Scopes, Space, Stream, Target, Value, Walk};
use crate::reason::Reason;

/// Why a loop stays on the host, in a word.
pub(super) type R<T> = Result<T, Reason>;

/// A loop body, lowered.
#[derive(Default)]
pub(super) struct Lowered {
    pub types: Types,
    /// Each local's type.
    pub vars: Vec<Tv>,
    pub views: Vec<View>,
    pub bindings: Vec<Binding>,
    pub args: Vec<Arg>,
    pub accs: Vec<Acc>,
    /// What each invocation binds before the body: its index or items.
    pub header: Vec<S>,
    pub body: Vec<S>,
    /// The body leaves an iteration early (a `continue` of the loop itself): it runs
    /// inside a loop of one pass, whose `break` that `continue` becomes.
    pub wrapped: bool,
    /// Roundings the body may add over Scalar's, for `verify`'s bound.
    pub roundings: u32,
}

/// What a name of the body stands for.
#[derive(Clone, Copy, Debug)]
pub(super) enum Local {
    /// A scalar.
    Val(Var),
    /// A slice, a row, a sub-slice.
    View(ViewId),
    /// A `&mut` element: `*o` reads and writes it.
    Elem(ViewId, Var),
    /// A carried reduction's accumulator.
    Acc(usize),
}

/// A value of the body.
#[derive(Clone, Debug)]
pub(super) enum Val {
    Scalar(E, Tv),
    View(ViewId),
    Elem(ViewId, Var),
}

/// What the items of an iterator are.
#[derive(Clone, Debug)]
enum Item {
    /// An element's value (`&T` or a copy).
    Value(ViewId),
    /// An element to write (`&mut T`).
    Mut(ViewId),
    /// `enumerate`'s index.
    Index,
    /// A row of a slice, `width` wide (the top-level loop's width argument, or an inner
    /// loop's `chunks` width evaluated once before it).
    Row {
        parent: ViewId,
        width: E,
        exact: bool,
    },
    Pair(Box<Item>, Box<Item>),
}

pub(super) struct Lower<'a> {
    pub(super) out: Lowered,
    /// The body's names, each standing for a shader local, a view, an element or an accumulator.
    pub(super) scopes: Scopes<Local>,
    pub(super) outer: &'a Outer<'a>,
    /// The whole view of each binding.
    pub(super) whole: Vec<ViewId>,
    /// The loop's own label.
    pub(super) label: Option<String>,
    /// Inner loops around the point being read.
    pub(super) depth: usize,
    /// Statements the current statement needs first.
    pub(super) pending: Vec<S>,
    /// Inside a short-circuit operand or a `while` condition: nothing may be computed first.
    pub(super) no_prelude: usize,
    /// The slices the loop may write: its targets (a range loop) or written streams (a chain).
    pub(super) writable: Vec<String>,
}

/// `f`'s body (a loop of `space` writing `targets` and carrying `carried`) lowered for one
/// invocation per unit.
pub(super) fn lower(
    f: &ExprForLoop,
    space: &Space,
    targets: &[Target],
    carried: &[Carried],
    outer: &Outer,
) -> R<Lowered> {
    let writable = match space {
        Space::Range { .. } => targets.iter().map(|t| t.name.to_string()).collect(),
        Space::Chain(chain) => chain.streams().iter().filter(|s| s.mutable).map(|s| s.slice.to_string()).collect(),
    };
    let mut l = Lower {
        out: Lowered::default(),
        scopes: Scopes::default(),
        outer,
        whole: Vec::new(),
        label: f.label.as_ref().map(|l| l.name.ident.to_string()),
        depth: 0,
        pending: Vec::new(),
        no_prelude: 0,
        writable,
    };
    for c in carried {
        let class = match c.value {
            Value::Float(body::Width::F32) => Class::Known(Ty::F32),
            Value::Float(body::Width::F64) => return Err(Reason::F64),
            Value::Float(body::Width::Any) => Class::Float,
            Value::Int => Class::Int,
        };
        let op = match c.op {
            body::Op::Sum => AccOp::Sum,
            body::Op::Product => AccOp::Product,
            body::Op::Max => AccOp::Max,
            body::Op::Min => AccOp::Min,
        };
        let tv = l.out.types.fresh(class);
        // What the accumulator's declaration says (`let mut n = 0usize;`).
        if let Some((Held::Scalar(declared), _)) = outer.get(&c.ident.to_string()) {
            let known = l.out.types.fresh(declared);
            l.unify(tv, known)?;
        }
        let acc = l.out.accs.len();
        l.out.accs.push(Acc { name: c.ident.clone(), op, tv });
        l.bind(c.ident.to_string(), Local::Acc(acc));
    }
    let mut header = Vec::new();
    let unit = l.var(Class::Known(Ty::Usize));
    header.push(S::Decl(unit, Some(E::Raw("lp_g"))));
    match space {
        Space::Range { .. } => match &*f.pat {
            Pat::Ident(p) => {
                let index = l.var(Class::Known(Ty::Usize));
                header.push(S::Decl(index, Some(E::Raw("(lp_start() + lp_g)"))));
                l.bind(p.ident.to_string(), Local::Val(index));
            }
            Pat::Wild(_) => {}
            _ => return Err(Reason::Value),
        },
        Space::Chain(chain) => {
            let mut widths = 0;
            let item = l.chain_item(chain, &mut widths)?;
            l.bind_item(&f.pat, &item, unit, &mut header)?;
        }
    }
    l.out.header = header;
    l.out.body = l.stmts(&f.body.stmts)?;
    Ok(l.out)
}

impl Lower<'_> {
    pub(super) fn var(&mut self, class: Class) -> Var {
        let tv = self.out.types.fresh(class);
        self.var_of(tv)
    }

    pub(super) fn var_of(&mut self, tv: Tv) -> Var {
        self.out.vars.push(tv);
        self.out.vars.len() - 1
    }

    pub(super) fn known(&mut self, ty: Ty) -> Tv {
        self.out.types.known(ty)
    }

    pub(super) fn bind(&mut self, name: String, local: Local) {
        self.scopes.bind(name, local);
    }

    pub(super) fn lookup(&self, name: &str) -> Option<Local> {
        self.scopes.lookup(name).copied()
    }

    pub(super) fn unify(&mut self, a: Tv, b: Tv) -> R<()> {
        self.out.types.unify(a, b)
    }

    pub(super) fn require(&mut self, v: Tv, ty: Ty) -> R<()> {
        self.out.types.require(v, ty)
    }

    /// The captured slice `name` (holding `held`), bound once; its whole view.
    pub(super) fn binding(&mut self, name: &Ident, held: Held) -> R<ViewId> {
        let elem = match held {
            Held::Slice(elem) => elem?,
            Held::Scalar(_) => return Err(Reason::Value),
            Held::Opaque(word) => return Err(word),
        };
        if let Some(b) = self.out.bindings.iter().position(|b| b.name == *name) {
            return Ok(self.whole[b]);
        }
        self.out.bindings.push(Binding { name: name.clone(), elem, written: false });
        self.out.views.push(View { binding: self.out.bindings.len() - 1, base: None, len: None });
        self.whole.push(self.out.views.len() - 1);
        Ok(self.out.views.len() - 1)
    }

    /// A loop argument from the host, once per source.
    pub(super) fn arg(&mut self, source: ArgSource, class: Class) -> (E, Tv) {
        let key = |s: &ArgSource| match s {
            ArgSource::Name(n) => format!("name {n}"),
            ArgSource::Path(p) => format!("path {}", quote::ToTokens::to_token_stream(p)),
            ArgSource::Width(k) => format!("width {k}"),
        };
        let k = key(&source);
        if let Some(at) = self.out.args.iter().position(|a| key(&a.source) == k) {
            return (E::Arg(at), self.out.args[at].tv);
        }
        let tv = self.out.types.fresh(class);
        self.out.args.push(Arg { source, tv });
        (E::Arg(self.out.args.len() - 1), tv)
    }

    pub(super) fn elem_tv(&mut self, view: ViewId) -> Tv {
        let ty = self.out.bindings[self.out.views[view].binding].elem.ty();
        self.known(ty)
    }

    pub(super) fn load(&mut self, view: ViewId, index: E) -> Val {
        let tv = self.elem_tv(view);
        Val::Scalar(E::Load(view, Box::new(index)), tv)
    }

    /// The item of the top-level loop's chain, its streams bound in order.
    fn chain_item(&mut self, chain: &Chain, widths: &mut usize) -> R<Item> {
        Ok(match chain {
            Chain::Leaf(s) => self.stream_item(s, widths)?,
            Chain::Zip(a, b) => {
                let a = self.chain_item(a, widths)?;
                Item::Pair(Box::new(a), Box::new(self.chain_item(b, widths)?))
            }
            Chain::Enumerate(c) => Item::Pair(Box::new(Item::Index), Box::new(self.chain_item(c, widths)?)),
        })
    }

    fn stream_item(&mut self, s: &Stream, widths: &mut usize) -> R<Item> {
        let (held, _) = self.outer.get(&s.slice.to_string()).ok_or(Reason::Type)?;
        let view = self.binding(&s.slice, held)?;
        if s.mutable {
            let b = self.out.views[view].binding;
            self.out.bindings[b].written = true;
        }
        Ok(match &s.rows {
            Some(rows) => {
                if !pure(&rows.width) {
                    return Err(Reason::Syntax);
                }
                let k = *widths;
                *widths += 1;
                let class = Class::Known(Ty::Usize);
                let (E::Arg(width), _) = self.arg(ArgSource::Width(k), class) else { unreachable!("an argument") };
                Item::Row { parent: view, width: E::Arg(width), exact: rows.exact }
            }
            None if s.mutable => Item::Mut(view),
            None => Item::Value(view),
        })
    }

    /// Binds `pat` to the item `item` at index `at`.
    fn bind_item(&mut self, pat: &Pat, item: &Item, at: Var, out: &mut Vec<S>) -> R<()> {
        match (pat, item) {
            (Pat::Paren(p), item) => self.bind_item(&p.pat, item, at, out),
            (Pat::Wild(_), _) => Ok(()),
            (Pat::Reference(r), Item::Value(_)) if r.mutability.is_none() => self.bind_item(&r.pat, item, at, out),
            (Pat::Tuple(t), Item::Pair(a, b)) if t.elems.len() == 2 => {
                self.bind_item(&t.elems[0], a, at, out)?;
                self.bind_item(&t.elems[1], b, at, out)
            }
            (Pat::Ident(p), item) if p.by_ref.is_none() && p.subpat.is_none() => {
                let name = p.ident.to_string();
                match item {
                    Item::Value(view) => {
                        let Val::Scalar(e, tv) = self.load(*view, E::Local(at)) else { unreachable!("a load") };
                        let v = self.var_of(tv);
                        out.push(S::Decl(v, Some(e)));
                        self.bind(name, Local::Val(v));
                    }
                    Item::Mut(view) => self.bind(name, Local::Elem(*view, at)),
                    Item::Index => {
                        let tv = self.out.vars[at];
                        let v = self.var_of(tv);
                        out.push(S::Decl(v, Some(E::Local(at))));
                        self.bind(name, Local::Val(v));
                    }
                    Item::Row { parent, width, exact } => {
                        let row = self.sub_view(*parent);
                        let width = width.clone();
                        out.push(S::Row { view: row, parent: *parent, unit: E::Local(at), width, exact: *exact });
                        self.bind(name, Local::View(row));
                    }
                    Item::Pair(..) => return Err(Reason::Value),
                }
                Ok(())
            }
            _ => Err(Reason::Value),
        }
    }

    /// A new view of `parent`'s binding with a base and length of its own.
    pub(super) fn sub_view(&mut self, parent: ViewId) -> ViewId {
        let binding = self.out.views[parent].binding;
        let base = self.var(Class::Known(Ty::Usize));
        let len = self.var(Class::Known(Ty::Usize));
        self.out.views.push(View { binding, base: Some(base), len: Some(len) });
        self.out.views.len() - 1
    }

    /// `stmts` in a scope of their own.
    pub(super) fn stmts(&mut self, stmts: &[Stmt]) -> R<Vec<S>> {
        self.scopes.push();
        let mut out = Vec::new();
        let result = stmts.iter().try_for_each(|s| self.stmt(s, &mut out));
        self.scopes.pop();
        result.map(|()| out)
    }

    pub(super) fn flush(&mut self, out: &mut Vec<S>) {
        out.append(&mut self.pending);
    }

    pub(super) fn stmt(&mut self, s: &Stmt, out: &mut Vec<S>) -> R<()> {
        match s {
            Stmt::Local(local) => self.local(local, out),
            Stmt::Expr(e, _) => self.expr_stmt(e, out),
            Stmt::Item(_) => Err(Reason::Syntax),
            Stmt::Macro(_) => Err(Reason::Macro),
        }
    }

    fn local(&mut self, local: &syn::Local, out: &mut Vec<S>) -> R<()> {
        let Some(init) = local.init.as_ref().filter(|i| i.diverge.is_none()) else { return Err(Reason::Syntax) };
        match (&local.pat, &*init.expr) {
            (Pat::Tuple(pats), Expr::Tuple(values)) if pats.elems.len() == values.elems.len() => {
                // Every value first, then every name: `let (a, b) = (b, a)` swaps.
                let mut vals = Vec::new();
                for v in &values.elems {
                    vals.push(self.value(v)?);
                }
                self.flush(out);
                for (pat, val) in pats.elems.iter().zip(vals) {
                    self.bind_value(pat, val, None, out)?;
                }
                Ok(())
            }
            (Pat::Type(t), init) => {
                let declared = Ty::of_type(&t.ty)?;
                let val = self.value(init)?;
                self.flush(out);
                self.bind_value(&t.pat, val, Some(declared), out)
            }
            (pat, init) => {
                let val = self.value(init)?;
                self.flush(out);
                self.bind_value(pat, val, None, out)
            }
        }
    }

    /// Binds `pat` (a name or `_`) to `val`, a copy for a scalar.
    fn bind_value(&mut self, pat: &Pat, val: Val, declared: Option<Ty>, out: &mut Vec<S>) -> R<()> {
        match (pat, val) {
            (Pat::Wild(_), Val::Scalar(e, _)) => {
                out.push(S::Eval(e));
                Ok(())
            }
            (Pat::Wild(_), _) => Ok(()),
            (Pat::Ident(p), val) if p.by_ref.is_none() && p.subpat.is_none() => {
                let name = p.ident.to_string();
                match val {
                    Val::Scalar(e, tv) => {
                        if let Some(t) = declared {
                            self.require(tv, t)?;
                        }
                        let v = self.var_of(tv);
                        out.push(S::Decl(v, Some(e)));
                        self.bind(name, Local::Val(v));
                    }
                    Val::View(view) if declared.is_none() => self.bind(name, Local::View(view)),
                    Val::Elem(view, at) if declared.is_none() => self.bind(name, Local::Elem(view, at)),
                    _ => return Err(Reason::Value),
                }
                Ok(())
            }
            _ => Err(Reason::Value),
        }
    }

    fn expr_stmt(&mut self, e: &Expr, out: &mut Vec<S>) -> R<()> {
        if let Some((acc, _, term)) = body::accumulation(e) {
            if let Some(Local::Acc(k)) = self.lookup(&acc.to_string()) {
                let (value, tv) = self.scalar(term)?;
                let acc_tv = self.out.accs[k].tv;
                self.unify(tv, acc_tv)?;
                self.count_op(tv, 1);
                let subtract = matches!(e, Expr::Binary(b) if matches!(b.op, BinOp::SubAssign(_)));
                self.flush(out);
                out.push(S::Acc { acc: k, value, subtract });
                return Ok(());
            }
        }
        match e {
            Expr::Paren(p) => self.expr_stmt(&p.expr, out),
            Expr::Group(g) => self.expr_stmt(&g.expr, out),
            Expr::Assign(a) => {
                let (place, ptv) = self.place(&a.left)?;
                let (value, tv) = self.scalar(&a.right)?;
                self.unify(ptv, tv)?;
                self.flush(out);
                out.push(S::Assign(place, value));
                Ok(())
            }
            Expr::Binary(b) if compound(&b.op).is_some() => {
                let op = compound(&b.op).expect("checked in the guard");
                let (place, ptv) = self.place(&b.left)?;
                let (value, tv) = self.scalar(&b.right)?;
                if !matches!(op, Bin::Shl | Bin::Shr) {
                    self.unify(ptv, tv)?;
                }
                self.count_op(ptv, if op == Bin::Div { 3 } else { 1 });
                self.flush(out);
                out.push(S::Compound(place, op, value, ptv));
                Ok(())
            }
            Expr::If(i) => {
                let s = self.if_stmt(i)?;
                self.flush(out);
                out.push(s);
                Ok(())
            }
            Expr::ForLoop(f) => self.for_loop(f, out),
            Expr::While(w) => {
                if w.label.is_some() {
                    return Err(Reason::Label);
                }
                self.no_prelude += 1;
                let cond = self.bool_of(&w.cond);
                self.no_prelude -= 1;
                let cond = cond?;
                self.depth += 1;
                let body = self.stmts(&w.body.stmts);
                self.depth -= 1;
                let mut all =
                    vec![S::If(E::Unary(Un::Not, Box::new(cond), self.known(Ty::Bool)), vec![S::Break], vec![])];
                all.extend(body?);
                out.push(S::Loop { body: all, next: Vec::new(), until: None });
                Ok(())
            }
            Expr::Loop(l) => {
                if l.label.is_some() {
                    return Err(Reason::Label);
                }
                self.depth += 1;
                let body = self.stmts(&l.body.stmts);
                self.depth -= 1;
                out.push(S::Loop { body: body?, next: Vec::new(), until: None });
                Ok(())
            }
            Expr::Block(b) if b.label.is_none() => {
                let inner = self.stmts(&b.block.stmts)?;
                out.extend(inner);
                Ok(())
            }
            Expr::Break(b) => {
                if b.label.is_some() {
                    return Err(Reason::Label);
                }
                if b.expr.is_some() {
                    return Err(Reason::Syntax);
                }
                if self.depth == 0 {
                    return Err(Reason::Break);
                }
                out.push(S::Break);
                Ok(())
            }
            Expr::Continue(c) => {
                let own = c.label.as_ref().is_some_and(|l| Some(l.ident.to_string()) == self.label);
                if c.label.is_some() && !(own && self.depth == 0) {
                    return Err(Reason::Label);
                }
                if self.depth == 0 {
                    self.out.wrapped = true;
                    out.push(S::Break);
                } else {
                    out.push(S::Continue);
                }
                Ok(())
            }
            Expr::Macro(_) => Err(Reason::Macro),
            e => {
                let val = self.value(e)?;
                self.flush(out);
                if let Val::Scalar(e, _) = val {
                    out.push(S::Eval(e));
                }
                Ok(())
            }
        }
    }

    fn if_stmt(&mut self, i: &syn::ExprIf) -> R<S> {
        let cond = self.bool_of(&i.cond)?;
        // What the condition needs first (an `if` value's local, `if (if a { x } else { y }) < s`)
        // runs before the `if`, which the caller flushes: not at the top of the first branch,
        // where the condition could not see it (naga: "no definition in scope").
        let before = std::mem::take(&mut self.pending);
        let branches = self.branches(i);
        self.pending.splice(0..0, before);
        let (then, els) = branches?;
        Ok(S::If(cond, then, els))
    }

    /// The two branches of `if`, as statements.
    fn branches(&mut self, i: &syn::ExprIf) -> R<(Vec<S>, Vec<S>)> {
        let then = self.stmts(&i.then_branch.stmts)?;
        let els = match &i.else_branch {
            None => Vec::new(),
            Some((_, e)) => match &**e {
                Expr::Block(b) => self.stmts(&b.block.stmts)?,
                Expr::If(inner) => {
                    // The inner condition's statements run only on this branch.
                    let saved = std::mem::take(&mut self.pending);
                    let s = self.if_stmt(inner);
                    let mut branch = std::mem::replace(&mut self.pending, saved);
                    branch.push(s?);
                    branch
                }
                _ => return Err(Reason::Syntax),
            },
        };
        Ok((then, els))
    }

    /// An inner `for`: over a range, or over slices (their items, zipped and enumerated).
    fn for_loop(&mut self, f: &ExprForLoop, out: &mut Vec<S>) -> R<()> {
        if f.label.is_some() {
            return Err(Reason::Label);
        }
        self.scopes.push();
        let result = self.for_loop_scoped(f, out);
        self.scopes.pop();
        result
    }

    fn for_loop_scoped(&mut self, f: &ExprForLoop, out: &mut Vec<S>) -> R<()> {
        let mut head = Vec::new();
        let (counter, end, inclusive) = match &*f.expr {
            Expr::Range(r) => {
                let (Some(start), Some(end)) = (&r.start, &r.end) else { return Err(Reason::Syntax) };
                let (start, stv) = self.scalar(start)?;
                let (end, etv) = self.scalar(end)?;
                self.unify(stv, etv)?;
                let (c, e) = (self.var_of(stv), self.var_of(stv));
                self.flush(out);
                out.push(S::Decl(c, Some(start)));
                out.push(S::Decl(e, Some(end)));
                match &*f.pat {
                    Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                        let j = self.var_of(stv);
                        head.push(S::Decl(j, Some(E::Local(c))));
                        self.bind(p.ident.to_string(), Local::Val(j));
                    }
                    Pat::Wild(_) => {}
                    _ => return Err(Reason::Value),
                }
                (c, e, matches!(r.limits, RangeLimits::Closed(_)))
            }
            iterable => {
                let item = self.items(&Walk::of(iterable, true))?;
                let usize_tv = self.known(Ty::Usize);
                let mut counts = Vec::new();
                walks(&item, usize_tv, &mut counts);
                let count =
                    counts.into_iter().reduce(|a, b| E::Call(Func::Min, vec![a, b], usize_tv)).ok_or(Reason::Syntax)?;
                let (c, e) = (self.var_of(usize_tv), self.var_of(usize_tv));
                self.flush(out);
                out.push(S::Decl(c, Some(E::Int(0, usize_tv))));
                out.push(S::Decl(e, Some(count)));
                self.bind_item(&f.pat, &item, c, &mut head)?;
                (c, e, false)
            }
        };
        self.depth += 1;
        let body = self.stmts(&f.body.stmts);
        self.depth -= 1;
        let tv = self.out.vars[counter];
        let bool_tv = self.known(Ty::Bool);
        let (c, e) = (Box::new(E::Local(counter)), Box::new(E::Local(end)));
        if inclusive {
            let last = self.var_of(bool_tv);
            let mut all = head;
            all.extend(body?);
            let next = vec![S::Decl(last, Some(E::Binary(Bin::Eq, c.clone(), e.clone(), tv))), S::Step(counter)];
            let lp = S::Loop { body: all, next, until: Some(E::Local(last)) };
            out.push(S::If(E::Binary(Bin::Le, c, e, tv), vec![lp], vec![]));
        } else {
            let mut all = vec![S::If(E::Binary(Bin::Ge, c, e, tv), vec![S::Break], vec![])];
            all.extend(head);
            all.extend(body?);
            out.push(S::Loop { body: all, next: vec![S::Step(counter)], until: None });
        }
        Ok(())
    }

    /// The items of an iterable over slices: `x`, `&x`, `&mut x`, `x.iter()`,
    /// `x.iter().copied()`, `x.iter_mut()`, `&x[a..b]`, `.zip(..)`, `.enumerate()`: what the
    /// shader takes of the model's grammar of walks ([`Walk`]).
    fn items(&mut self, walk: &Walk) -> R<Item> {
        match walk {
            Walk::Enumerate(a) => Ok(Item::Pair(Box::new(Item::Index), Box::new(self.items(a)?))),
            Walk::Zip(a, b) => {
                let a = self.items(a)?;
                Ok(Item::Pair(Box::new(a), Box::new(self.items(b)?)))
            }
            Walk::Copied(a, _) => match self.items(a)? {
                Item::Value(v) => Ok(Item::Value(v)),
                _ => Err(Reason::Call),
            },
            Walk::Items { of, how: How::Iter } => Ok(Item::Value(self.view_of(of)?)),
            // Rows of a whole captured slice read in an inner loop, `w` evaluated once.
            Walk::Items { of, how: How::Rows { method, width, mutable: false } }
                if self.no_prelude == 0 && (*method == "chunks" || *method == "chunks_exact") =>
            {
                let parent = self.view_of(of)?;
                if self.out.views[parent].base.is_some() {
                    return Err(Reason::Call);
                }
                let (width, tv) = self.scalar(width)?;
                self.require(tv, Ty::Usize)?;
                let w = self.var_of(tv);
                self.pending.push(S::Decl(w, Some(width)));
                Ok(Item::Row { parent, width: E::Local(w), exact: *method == "chunks_exact" })
            }
            Walk::Items { of, how: How::IterMut } => {
                let view = self.view_of(of)?;
                self.written(view)?;
                Ok(Item::Mut(view))
            }
            Walk::Items { of, how: How::Whole(Some(mutable)) } => {
                let view = match of {
                    // `&x[a..b]`: a sub-slice.
                    Expr::Index(i) if matches!(&*i.index, Expr::Range(_)) => match self.sub_slice(i, *mutable)? {
                        Val::View(v) => v,
                        _ => return Err(Reason::Call),
                    },
                    inner => self.view_of(inner)?,
                };
                if *mutable {
                    self.written(view)?;
                    Ok(Item::Mut(view))
                } else {
                    Ok(Item::Value(view))
                }
            }
            Walk::Items { of, how: How::Whole(None) } => {
                let name = plain_ident(of);
                let view = self.view_of(of)?;
                // A `&mut [T]` iterated itself yields `&mut T`.
                let mutable = name.is_some_and(|n| {
                    self.lookup(&n.to_string()).is_none()
                        && self.outer.get(&n.to_string()).is_some_and(|(_, k)| k == Kind::MutSlice)
                });
                if mutable {
                    self.written(view)?;
                    Ok(Item::Mut(view))
                } else {
                    Ok(Item::Value(view))
                }
            }
            _ => Err(Reason::Call),
        }
    }

    /// Marks `view`'s slice written: one the split proved each iteration writes only at its
    /// own item or row (a target, a written stream). Any other write could race between
    /// invocations, so it keeps the loop on the host.
    pub(super) fn written(&mut self, view: ViewId) -> R<()> {
        let b = self.out.views[view].binding;
        let name = self.out.bindings[b].name.to_string();
        if !self.writable.contains(&name) {
            return Err(Reason::Writes);
        }
        self.out.bindings[b].written = true;
        Ok(())
    }

    pub(super) fn view_of(&mut self, e: &Expr) -> R<ViewId> {
        match self.value(e)? {
            Val::View(v) => Ok(v),
            _ => Err(Reason::Call),
        }
    }

    pub(super) fn bool_of(&mut self, e: &Expr) -> R<E> {
        let (e, tv) = self.scalar(e)?;
        self.require(tv, Ty::Bool)?;
        Ok(e)
    }

    /// A place an assignment writes, and its type.
    pub(super) fn place(&mut self, e: &Expr) -> R<(Place, Tv)> {
        match e {
            Expr::Paren(p) => self.place(&p.expr),
            Expr::Group(g) => self.place(&g.expr),
            Expr::Path(_) => {
                let name = plain_ident(e).ok_or(Reason::Syntax)?;
                match self.lookup(&name.to_string()) {
                    Some(Local::Val(v)) => Ok((Place::Local(v), self.out.vars[v])),
                    Some(Local::Acc(_)) => Err(Reason::Reads),
                    Some(_) => Err(Reason::Value),
                    None => Err(Reason::Writes),
                }
            }
            Expr::Index(i) => {
                let view = self.view_of(&i.expr)?;
                let (index, tv) = self.scalar(&i.index)?;
                self.require(tv, Ty::Usize)?;
                self.written(view)?;
                let etv = self.elem_tv(view);
                Ok((Place::Elem(view, index), etv))
            }
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => match self.value(&u.expr)? {
                Val::Elem(view, at) => {
                    self.written(view)?;
                    let etv = self.elem_tv(view);
                    Ok((Place::Elem(view, E::Local(at)), etv))
                }
                _ => Err(Reason::Value),
            },
            _ => Err(Reason::Syntax),
        }
    }
}

/// How many items each stream of `item` yields (`tv`: `usize`): the loop's count is the least.
/// `chunks(w)` yields ⌈len / w⌉ rows, `chunks_exact(w)` ⌊len / w⌋; a zero `w` panics in
/// Rust, and its division on the device sends the call to the host, which panics as Rust does.
fn walks(item: &Item, tv: Tv, out: &mut Vec<E>) {
    match item {
        Item::Value(v) | Item::Mut(v) => out.push(E::Len(*v)),
        Item::Index => {}
        Item::Row { parent, width, exact } => {
            let len = || Box::new(E::Len(*parent));
            let whole = E::Binary(Bin::Div, len(), Box::new(width.clone()), tv);
            out.push(if *exact {
                whole
            } else {
                let rest = E::Binary(Bin::Rem, len(), Box::new(width.clone()), tv);
                let partial = E::Call(Func::Min, vec![rest, E::Int(1, tv)], tv);
                E::Binary(Bin::Add, Box::new(whole), Box::new(partial), tv)
            });
        }
        Item::Pair(a, b) => {
            walks(a, tv, out);
            walks(b, tv, out);
        }
    }
}

/// The operator of a compound assignment.
fn compound(op: &BinOp) -> Option<Bin> {
    Some(match op {
        BinOp::AddAssign(_) => Bin::Add,
        BinOp::SubAssign(_) => Bin::Sub,
        BinOp::MulAssign(_) => Bin::Mul,
        BinOp::DivAssign(_) => Bin::Div,
        BinOp::RemAssign(_) => Bin::Rem,
        BinOp::BitXorAssign(_) => Bin::BitXor,
        BinOp::BitAndAssign(_) => Bin::BitAnd,
        BinOp::BitOrAssign(_) => Bin::BitOr,
        BinOp::ShlAssign(_) => Bin::Shl,
        BinOp::ShrAssign(_) => Bin::Shr,
        _ => return None,
    })
}
