//! The loop body read into the shader's IR: every construct of the subset
//! (see the module docs of `crate::shader`) typed and placed, anything else the
//! word for why the loop stays on the host.
//!
//! Every local of the body becomes a fresh shader local (so Rust's shadowing
//! and block scopes need no counterpart in WGSL); values a statement needs
//! computed first (an `if` used as a value, a sub-slice) go to the statements
//! before it, in order.

use proc_macro2::Ident;
use syn::{BinOp, Block, Expr, ExprForLoop, Lit, Pat, RangeLimits, Stmt, UnOp};

use super::ir::{Acc, AccOp, Arg, ArgSource, Bin, Binding, Func, Place, Un, Var, View, ViewId, E, S};
use super::outer::{Held, Outer};
use super::ty::{Class, Tv, Ty, Types};
use crate::reduce::{self, plain_ident};
use crate::split::{Carried, Chain, Kind, Space, Stream, Target, Value};

/// Why a loop stays on the host, in a word.
pub(super) type R<T> = Result<T, &'static str>;

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
enum Local {
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
enum Val {
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
    /// A row of a slice: its `k`-th width argument wide.
    Row {
        parent: ViewId,
        width: usize,
        exact: bool,
    },
    Pair(Box<Item>, Box<Item>),
}

struct Lower<'a> {
    out: Lowered,
    scopes: Vec<Vec<(String, Local)>>,
    outer: &'a Outer<'a>,
    /// The whole view of each binding.
    whole: Vec<ViewId>,
    /// The loop's own label.
    label: Option<String>,
    /// Inner loops around the point being read.
    depth: usize,
    /// Statements the current statement needs first.
    pending: Vec<S>,
    /// Inside a short-circuit operand or a `while` condition: nothing may be computed first.
    no_prelude: usize,
    /// The slices the loop may write: its targets (a range loop) or written streams (a chain).
    writable: Vec<String>,
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
        scopes: vec![Vec::new()],
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
            Value::Float(reduce::Width::F32) => Class::Known(Ty::F32),
            Value::Float(reduce::Width::F64) => return Err("f64"),
            Value::Float(reduce::Width::Any) => Class::Float,
            Value::Int => Class::Int,
        };
        let op = match c.op {
            reduce::Op::Sum => AccOp::Sum,
            reduce::Op::Product => AccOp::Product,
            reduce::Op::Max => AccOp::Max,
            reduce::Op::Min => AccOp::Min,
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
            _ => return Err("value"),
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
    fn var(&mut self, class: Class) -> Var {
        let tv = self.out.types.fresh(class);
        self.var_of(tv)
    }

    fn var_of(&mut self, tv: Tv) -> Var {
        self.out.vars.push(tv);
        self.out.vars.len() - 1
    }

    fn known(&mut self, ty: Ty) -> Tv {
        self.out.types.known(ty)
    }

    fn bind(&mut self, name: String, local: Local) {
        self.scopes.last_mut().expect("a scope").push((name, local));
    }

    fn lookup(&self, name: &str) -> Option<Local> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, l)| *l)
    }

    fn unify(&mut self, a: Tv, b: Tv) -> R<()> {
        self.out.types.unify(a, b)
    }

    fn require(&mut self, v: Tv, ty: Ty) -> R<()> {
        self.out.types.require(v, ty)
    }

    /// The captured slice `name` (holding `held`), bound once; its whole view.
    fn binding(&mut self, name: &Ident, held: Held) -> R<ViewId> {
        let elem = match held {
            Held::Slice(elem) => elem?,
            Held::Scalar(_) => return Err("value"),
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
    fn arg(&mut self, source: ArgSource, class: Class) -> (E, Tv) {
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

    fn elem_tv(&mut self, view: ViewId) -> Tv {
        let ty = self.out.bindings[self.out.views[view].binding].elem.ty();
        self.known(ty)
    }

    fn load(&mut self, view: ViewId, index: E) -> Val {
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
        let (held, _) = self.outer.get(&s.slice.to_string()).ok_or("type")?;
        let view = self.binding(&s.slice, held)?;
        if s.mutable {
            let b = self.out.views[view].binding;
            self.out.bindings[b].written = true;
        }
        Ok(match &s.rows {
            Some(rows) => {
                if !pure(&rows.width) {
                    return Err("syntax");
                }
                let k = *widths;
                *widths += 1;
                let class = Class::Known(Ty::Usize);
                let (E::Arg(width), _) = self.arg(ArgSource::Width(k), class) else { unreachable!("an argument") };
                Item::Row { parent: view, width, exact: rows.exact }
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
                        let width = E::Arg(*width);
                        out.push(S::Row { view: row, parent: *parent, unit: E::Local(at), width, exact: *exact });
                        self.bind(name, Local::View(row));
                    }
                    Item::Pair(..) => return Err("value"),
                }
                Ok(())
            }
            _ => Err("value"),
        }
    }

    /// A new view of `parent`'s binding with a base and length of its own.
    fn sub_view(&mut self, parent: ViewId) -> ViewId {
        let binding = self.out.views[parent].binding;
        let base = self.var(Class::Known(Ty::Usize));
        let len = self.var(Class::Known(Ty::Usize));
        self.out.views.push(View { binding, base: Some(base), len: Some(len) });
        self.out.views.len() - 1
    }

    /// `stmts` in a scope of their own.
    fn stmts(&mut self, stmts: &[Stmt]) -> R<Vec<S>> {
        self.scopes.push(Vec::new());
        let mut out = Vec::new();
        let result = stmts.iter().try_for_each(|s| self.stmt(s, &mut out));
        self.scopes.pop();
        result.map(|()| out)
    }

    fn flush(&mut self, out: &mut Vec<S>) {
        out.append(&mut self.pending);
    }

    fn stmt(&mut self, s: &Stmt, out: &mut Vec<S>) -> R<()> {
        match s {
            Stmt::Local(local) => self.local(local, out),
            Stmt::Expr(e, _) => self.expr_stmt(e, out),
            Stmt::Item(_) => Err("syntax"),
            Stmt::Macro(_) => Err("macro"),
        }
    }

    fn local(&mut self, local: &syn::Local, out: &mut Vec<S>) -> R<()> {
        let Some(init) = local.init.as_ref().filter(|i| i.diverge.is_none()) else { return Err("syntax") };
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
                    _ => return Err("value"),
                }
                Ok(())
            }
            _ => Err("value"),
        }
    }

    fn expr_stmt(&mut self, e: &Expr, out: &mut Vec<S>) -> R<()> {
        if let Some((acc, _, term)) = reduce::accumulation(e) {
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
                    return Err("label");
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
                    return Err("label");
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
                    return Err("label");
                }
                if b.expr.is_some() {
                    return Err("syntax");
                }
                if self.depth == 0 {
                    return Err("break");
                }
                out.push(S::Break);
                Ok(())
            }
            Expr::Continue(c) => {
                let own = c.label.as_ref().is_some_and(|l| Some(l.ident.to_string()) == self.label);
                if c.label.is_some() && !(own && self.depth == 0) {
                    return Err("label");
                }
                if self.depth == 0 {
                    self.out.wrapped = true;
                    out.push(S::Break);
                } else {
                    out.push(S::Continue);
                }
                Ok(())
            }
            Expr::Macro(_) => Err("macro"),
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
                _ => return Err("syntax"),
            },
        };
        Ok(S::If(cond, then, els))
    }

    /// An inner `for`: over a range, or over slices (their items, zipped and enumerated).
    fn for_loop(&mut self, f: &ExprForLoop, out: &mut Vec<S>) -> R<()> {
        if f.label.is_some() {
            return Err("label");
        }
        self.scopes.push(Vec::new());
        let result = self.for_loop_scoped(f, out);
        self.scopes.pop();
        result
    }

    fn for_loop_scoped(&mut self, f: &ExprForLoop, out: &mut Vec<S>) -> R<()> {
        let mut head = Vec::new();
        let (counter, end, inclusive) = match &*f.expr {
            Expr::Range(r) => {
                let (Some(start), Some(end)) = (&r.start, &r.end) else { return Err("syntax") };
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
                    _ => return Err("value"),
                }
                (c, e, matches!(r.limits, RangeLimits::Closed(_)))
            }
            iterable => {
                let item = self.items(iterable, true)?;
                let mut lens = Vec::new();
                leaves(&item, &mut lens);
                let usize_tv = self.known(Ty::Usize);
                let count = lens
                    .into_iter()
                    .map(E::Len)
                    .reduce(|a, b| E::Call(Func::Min, vec![a, b], usize_tv))
                    .ok_or("syntax")?;
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
    /// `x.iter().copied()`, `x.iter_mut()`, `&x[a..b]`, `.zip(..)`, `.enumerate()`.
    /// `into_iter`: `e` is iterated itself (a `for` source or a `zip` argument).
    fn items(&mut self, e: &Expr, into_iter: bool) -> R<Item> {
        match e {
            Expr::Paren(p) => self.items(&p.expr, into_iter),
            Expr::MethodCall(m) if m.turbofish.is_none() => match (m.method.to_string().as_str(), m.args.len()) {
                ("enumerate", 0) => Ok(Item::Pair(Box::new(Item::Index), Box::new(self.items(&m.receiver, false)?))),
                ("zip", 1) => {
                    let a = self.items(&m.receiver, false)?;
                    Ok(Item::Pair(Box::new(a), Box::new(self.items(&m.args[0], true)?)))
                }
                ("copied" | "cloned", 0) => match self.items(&m.receiver, false)? {
                    Item::Value(v) => Ok(Item::Value(v)),
                    _ => Err("call"),
                },
                ("iter", 0) => Ok(Item::Value(self.view_of(&m.receiver)?)),
                ("iter_mut", 0) => {
                    let view = self.view_of(&m.receiver)?;
                    self.written(view)?;
                    Ok(Item::Mut(view))
                }
                _ => Err("call"),
            },
            Expr::Reference(r) if into_iter => {
                let view = match &*r.expr {
                    // `&x[a..b]`: a sub-slice.
                    Expr::Index(i) if matches!(&*i.index, Expr::Range(_)) => match self.reference(r)? {
                        Val::View(v) => v,
                        _ => return Err("call"),
                    },
                    inner => self.view_of(inner)?,
                };
                if r.mutability.is_some() {
                    self.written(view)?;
                    Ok(Item::Mut(view))
                } else {
                    Ok(Item::Value(view))
                }
            }
            e if into_iter => {
                let name = plain_ident(e);
                let view = self.view_of(e)?;
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
            _ => Err("call"),
        }
    }

    /// Marks `view`'s slice written: one the split proved each iteration writes only at its
    /// own item or row (a target, a written stream). Any other write could race between
    /// invocations, so it keeps the loop on the host.
    fn written(&mut self, view: ViewId) -> R<()> {
        let b = self.out.views[view].binding;
        let name = self.out.bindings[b].name.to_string();
        if !self.writable.contains(&name) {
            return Err("writes");
        }
        self.out.bindings[b].written = true;
        Ok(())
    }

    fn view_of(&mut self, e: &Expr) -> R<ViewId> {
        match self.value(e)? {
            Val::View(v) => Ok(v),
            _ => Err("call"),
        }
    }

    fn bool_of(&mut self, e: &Expr) -> R<E> {
        let (e, tv) = self.scalar(e)?;
        self.require(tv, Ty::Bool)?;
        Ok(e)
    }

    /// A place an assignment writes, and its type.
    fn place(&mut self, e: &Expr) -> R<(Place, Tv)> {
        match e {
            Expr::Paren(p) => self.place(&p.expr),
            Expr::Group(g) => self.place(&g.expr),
            Expr::Path(_) => {
                let name = plain_ident(e).ok_or("syntax")?;
                match self.lookup(&name.to_string()) {
                    Some(Local::Val(v)) => Ok((Place::Local(v), self.out.vars[v])),
                    Some(Local::Acc(_)) => Err("reads"),
                    Some(_) => Err("value"),
                    None => Err("writes"),
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
                _ => Err("value"),
            },
            _ => Err("syntax"),
        }
    }

    fn scalar(&mut self, e: &Expr) -> R<(E, Tv)> {
        match self.value(e)? {
            Val::Scalar(e, tv) => Ok((e, tv)),
            Val::View(_) => Err("value"),
            // A `&mut f32` read without `*`: only its methods auto-deref (handled there).
            Val::Elem(..) => Err("value"),
        }
    }

    /// Counts `n` roundings of a float operation in `tv` for the contract's bound.
    fn count_op(&mut self, tv: Tv, n: u32) {
        if self.out.types.class(tv) != Class::Known(Ty::Bool)
            && !matches!(self.out.types.get(tv), Some(t) if t.is_int())
        {
            self.out.roundings = self.out.roundings.saturating_add(n);
        }
    }

    fn value(&mut self, e: &Expr) -> R<Val> {
        match e {
            Expr::Paren(p) => self.value(&p.expr),
            Expr::Group(g) => self.value(&g.expr),
            Expr::Lit(l) => self.literal(&l.lit),
            Expr::Path(p) => self.path(p),
            Expr::Unary(u) => match u.op {
                UnOp::Deref(_) => match self.value(&u.expr)? {
                    Val::Elem(view, at) => Ok(self.load(view, E::Local(at))),
                    Val::Scalar(e, tv) => Ok(Val::Scalar(e, tv)),
                    Val::View(_) => Err("value"),
                },
                UnOp::Neg(_) => {
                    let (e, tv) = self.scalar(&u.expr)?;
                    if self.out.types.get(tv) == Some(Ty::Usize) || self.out.types.get(tv) == Some(Ty::U32) {
                        return Err("type");
                    }
                    Ok(Val::Scalar(E::Unary(Un::Neg, Box::new(e), tv), tv))
                }
                UnOp::Not(_) => {
                    let (e, tv) = self.scalar(&u.expr)?;
                    Ok(Val::Scalar(E::Unary(Un::Not, Box::new(e), tv), tv))
                }
                _ => Err("syntax"),
            },
            Expr::Binary(b) => self.binary(b),
            Expr::Index(i) => {
                if matches!(&*i.index, Expr::Range(_)) {
                    return Err("value");
                }
                let view = self.view_of(&i.expr)?;
                let (index, tv) = self.scalar(&i.index)?;
                self.require(tv, Ty::Usize)?;
                Ok(self.load(view, index))
            }
            Expr::Reference(r) => self.reference(r),
            Expr::Cast(c) => {
                let to = Ty::of_type(&c.ty)?;
                if to == Ty::Bool {
                    return Err("type");
                }
                let (e, from) = self.scalar(&c.expr)?;
                if to == Ty::F32 {
                    self.count_op(from, 1);
                }
                let tv = self.known(to);
                Ok(Val::Scalar(E::Cast(Box::new(e), from, to), tv))
            }
            Expr::MethodCall(m) => {
                if m.turbofish.is_some() {
                    return Err("call");
                }
                match self.value(&m.receiver)? {
                    Val::View(v) if m.method == "len" && m.args.is_empty() => {
                        let tv = self.known(Ty::Usize);
                        Ok(Val::Scalar(E::Len(v), tv))
                    }
                    Val::View(_) => Err("call"),
                    Val::Elem(view, at) => {
                        let Val::Scalar(e, tv) = self.load(view, E::Local(at)) else { unreachable!("a load") };
                        self.func(&m.method.to_string(), (e, tv), m.args.iter().collect())
                    }
                    Val::Scalar(e, tv) => self.func(&m.method.to_string(), (e, tv), m.args.iter().collect()),
                }
            }
            Expr::Call(c) => {
                // `f32::sqrt(x)`, `f32::max(a, b)`, `usize::min(a, b)`: a method called through its type.
                let Expr::Path(p) = &*c.func else { return Err("call") };
                let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                let ([ty, method], None) = (names.as_slice(), &p.qself) else { return Err("call") };
                let Some(ty) = Ty::of_name(ty)? else { return Err("call") };
                let Some((first, rest)) =
                    c.args.iter().collect::<Vec<_>>().split_first().map(|(f, r)| (*f, r.to_vec()))
                else {
                    return Err("call");
                };
                let (e, tv) = self.scalar(first)?;
                self.require(tv, ty)?;
                self.func(method, (e, tv), rest)
            }
            Expr::If(i) => self.if_value(i),
            Expr::Block(b) if b.label.is_none() => {
                if self.no_prelude > 0 {
                    return Err("syntax");
                }
                let (stmts, val) = self.value_block(&b.block)?;
                self.pending.extend(stmts);
                Ok(val)
            }
            Expr::Macro(_) => Err("macro"),
            Expr::Tuple(_) | Expr::Array(_) | Expr::Repeat(_) | Expr::Struct(_) | Expr::Field(_) => Err("value"),
            _ => Err("syntax"),
        }
    }

    fn literal(&mut self, lit: &Lit) -> R<Val> {
        match lit {
            Lit::Float(f) => {
                let class = match f.suffix() {
                    "" => Class::Float,
                    s => Class::Known(Ty::of_name(s)?.filter(|t| *t == Ty::F32).ok_or("type")?),
                };
                let tv = self.out.types.fresh(class);
                Ok(Val::Scalar(E::Float(f.base10_digits().to_string(), tv), tv))
            }
            Lit::Int(i) => {
                let class = match i.suffix() {
                    "" => Class::Int,
                    s => Class::Known(Ty::of_name(s)?.ok_or("type")?),
                };
                let tv = self.out.types.fresh(class);
                if class == Class::Known(Ty::F32) {
                    return Ok(Val::Scalar(E::Float(i.base10_digits().to_string(), tv), tv));
                }
                let value = i.base10_parse::<u128>().map_err(|_| "size")?;
                Ok(Val::Scalar(E::Int(value, tv), tv))
            }
            Lit::Bool(b) => {
                let tv = self.known(Ty::Bool);
                Ok(Val::Scalar(E::Bool(b.value), tv))
            }
            _ => Err("type"),
        }
    }

    fn path(&mut self, p: &syn::ExprPath) -> R<Val> {
        if p.qself.is_some() || p.path.segments.iter().any(|s| !s.arguments.is_empty()) {
            return Err("value");
        }
        if let Some(ident) = p.path.get_ident() {
            let name = ident.to_string();
            if let Some(local) = self.lookup(&name) {
                return match local {
                    Local::Val(v) => Ok(Val::Scalar(E::Local(v), self.out.vars[v])),
                    Local::View(v) => Ok(Val::View(v)),
                    Local::Elem(v, at) => Ok(Val::Elem(v, at)),
                    Local::Acc(_) => Err("reads"),
                };
            }
            return match self.outer.get(&name) {
                Some((held @ Held::Slice(_), _)) => Ok(Val::View(self.binding(ident, held)?)),
                Some((Held::Scalar(class), _)) => {
                    let (e, tv) = self.arg(ArgSource::Name(ident.clone()), class);
                    Ok(Val::Scalar(e, tv))
                }
                Some((Held::Opaque(word), _)) => Err(word),
                // A constant, a static, an item: its type is checked on the host.
                None => {
                    let (e, tv) = self.arg(ArgSource::Name(ident.clone()), Class::Any);
                    Ok(Val::Scalar(e, tv))
                }
            };
        }
        let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let screaming = |n: &str| {
            n.chars().any(|c| c.is_ascii_uppercase())
                && n.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        };
        let last = names.last().map(String::as_str).unwrap_or_default();
        if !screaming(last) {
            return Err("value");
        }
        // `f32::EPSILON`, `usize::MAX`, `std::f32::consts::PI`: the type is in the path.
        let typed = names.iter().rev().skip(1).find_map(|n| Ty::of_name(n).transpose());
        let class = match typed {
            Some(Ok(t)) => Class::Known(t),
            Some(Err(word)) => return Err(word),
            None => Class::Any,
        };
        let (e, tv) = self.arg(ArgSource::Path(p.clone()), class);
        Ok(Val::Scalar(e, tv))
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> R<Val> {
        let op = match b.op {
            BinOp::Add(_) => Bin::Add,
            BinOp::Sub(_) => Bin::Sub,
            BinOp::Mul(_) => Bin::Mul,
            BinOp::Div(_) => Bin::Div,
            BinOp::Rem(_) => Bin::Rem,
            BinOp::And(_) => Bin::And,
            BinOp::Or(_) => Bin::Or,
            BinOp::BitAnd(_) => Bin::BitAnd,
            BinOp::BitOr(_) => Bin::BitOr,
            BinOp::BitXor(_) => Bin::BitXor,
            BinOp::Shl(_) => Bin::Shl,
            BinOp::Shr(_) => Bin::Shr,
            BinOp::Eq(_) => Bin::Eq,
            BinOp::Ne(_) => Bin::Ne,
            BinOp::Lt(_) => Bin::Lt,
            BinOp::Le(_) => Bin::Le,
            BinOp::Gt(_) => Bin::Gt,
            BinOp::Ge(_) => Bin::Ge,
            // An assignment in a value position.
            _ => return Err("syntax"),
        };
        let (l, ltv) = self.scalar(&b.left)?;
        // The right operand of `&&`/`||` runs only sometimes: nothing of it may run first.
        let short = matches!(op, Bin::And | Bin::Or);
        self.no_prelude += usize::from(short);
        let right = self.scalar(&b.right);
        self.no_prelude -= usize::from(short);
        let (r, rtv) = right?;
        let (l, r) = (Box::new(l), Box::new(r));
        match op {
            Bin::And | Bin::Or => {
                self.require(ltv, Ty::Bool)?;
                self.require(rtv, Ty::Bool)?;
                Ok(Val::Scalar(E::Binary(op, l, r, ltv), ltv))
            }
            Bin::Shl | Bin::Shr => Ok(Val::Scalar(E::Binary(op, l, r, ltv), ltv)),
            op if op.is_comparison() => {
                self.unify(ltv, rtv)?;
                let tv = self.known(Ty::Bool);
                Ok(Val::Scalar(E::Binary(op, l, r, ltv), tv))
            }
            op => {
                self.unify(ltv, rtv)?;
                self.count_op(ltv, if op == Bin::Div { 3 } else { 1 });
                Ok(Val::Scalar(E::Binary(op, l, r, ltv), ltv))
            }
        }
    }

    fn reference(&mut self, r: &syn::ExprReference) -> R<Val> {
        match &*r.expr {
            Expr::Index(i) if matches!(&*i.index, Expr::Range(_)) => {
                let Expr::Range(range) = &*i.index else { unreachable!("checked in the guard") };
                if self.no_prelude > 0 {
                    return Err("syntax");
                }
                let parent = self.view_of(&i.expr)?;
                let usize_tv = self.known(Ty::Usize);
                let mut bound = |e: &Option<Box<Expr>>| -> R<Option<E>> {
                    match e {
                        None => Ok(None),
                        Some(e) => {
                            let (e, tv) = self.scalar(e)?;
                            self.require(tv, Ty::Usize)?;
                            Ok(Some(e))
                        }
                    }
                };
                let lo = bound(&range.start)?.unwrap_or(E::Int(0, usize_tv));
                let mut hi = bound(&range.end)?;
                if matches!(range.limits, RangeLimits::Closed(_)) {
                    let end = hi.ok_or("syntax")?;
                    hi = Some(E::Binary(Bin::Add, Box::new(end), Box::new(E::Int(1, usize_tv)), usize_tv));
                }
                let view = self.sub_view(parent);
                self.pending.push(S::Sub { view, parent, lo, hi });
                if r.mutability.is_some() {
                    self.written(view)?;
                }
                Ok(Val::View(view))
            }
            Expr::Index(i) if r.mutability.is_some() => {
                if self.no_prelude > 0 {
                    return Err("syntax");
                }
                let view = self.view_of(&i.expr)?;
                let (index, tv) = self.scalar(&i.index)?;
                self.require(tv, Ty::Usize)?;
                let at = self.var_of(tv);
                self.pending.push(S::Decl(at, Some(index)));
                self.written(view)?;
                Ok(Val::Elem(view, at))
            }
            inner if r.mutability.is_none() => self.value(inner),
            _ => Err("value"),
        }
    }

    /// `if c { a } else { b }` as a value: a local assigned on each branch.
    fn if_value(&mut self, i: &syn::ExprIf) -> R<Val> {
        if self.no_prelude > 0 {
            return Err("syntax");
        }
        let Some((_, otherwise)) = &i.else_branch else { return Err("syntax") };
        let cond = self.bool_of(&i.cond)?;
        let tv = self.out.types.fresh(Class::Any);
        let v = self.var_of(tv);
        let (mut then, a) = self.value_block(&i.then_branch)?;
        let (mut els, b) = match &**otherwise {
            Expr::Block(b) => self.value_block(&b.block)?,
            e @ Expr::If(_) => {
                let saved = std::mem::take(&mut self.pending);
                let val = self.value(e);
                let stmts = std::mem::replace(&mut self.pending, saved);
                (stmts, val?)
            }
            _ => return Err("syntax"),
        };
        for (stmts, val) in [(&mut then, a), (&mut els, b)] {
            let Val::Scalar(e, etv) = val else { return Err("value") };
            self.unify(tv, etv)?;
            stmts.push(S::Assign(Place::Local(v), e));
        }
        self.pending.push(S::Decl(v, None));
        self.pending.push(S::If(cond, then, els));
        Ok(Val::Scalar(E::Local(v), tv))
    }

    /// A block's statements and the value of its last expression.
    fn value_block(&mut self, block: &Block) -> R<(Vec<S>, Val)> {
        let Some((Stmt::Expr(tail, None), stmts)) = block.stmts.split_last() else { return Err("syntax") };
        let saved = std::mem::take(&mut self.pending);
        self.scopes.push(Vec::new());
        let mut out = Vec::new();
        let result = stmts.iter().try_for_each(|s| self.stmt(s, &mut out)).and_then(|()| self.value(tail));
        self.scopes.pop();
        let tail_first = std::mem::replace(&mut self.pending, saved);
        out.extend(tail_first);
        Ok((out, result?))
    }

    /// A method of the subset on a scalar receiver (or called through its type).
    fn func(&mut self, method: &str, (recv, rtv): (E, Tv), args: Vec<&Expr>) -> R<Val> {
        let (func, arity, float_only) = match method {
            "sqrt" => (Func::Sqrt, 0, true),
            "abs" => (Func::Abs, 0, false),
            "exp" => (Func::Exp, 0, true),
            "ln" => (Func::Ln, 0, true),
            "sin" => (Func::Sin, 0, true),
            "cos" => (Func::Cos, 0, true),
            "tanh" => (Func::Tanh, 0, true),
            "powi" => (Func::Powi, 1, true),
            "powf" => (Func::Powf, 1, true),
            "min" => (Func::Min, 1, false),
            "max" => (Func::Max, 1, false),
            "clamp" => (Func::Clamp, 2, false),
            "mul_add" => (Func::MulAdd, 2, true),
            "floor" => (Func::Floor, 0, true),
            "ceil" => (Func::Ceil, 0, true),
            "round" => (Func::Round, 0, true),
            "recip" => (Func::Recip, 0, true),
            "is_nan" => (Func::IsNan, 0, true),
            "is_finite" => (Func::IsFinite, 0, true),
            "is_infinite" => (Func::IsInfinite, 0, true),
            _ => return Err("call"),
        };
        if args.len() != arity {
            return Err("call");
        }
        match self.out.types.class(rtv) {
            Class::Known(Ty::F32) => {}
            Class::Known(Ty::Bool) => return Err("call"),
            Class::Known(t) if float_only || (func == Func::Abs && t != Ty::I32) => return Err("call"),
            Class::Known(_) => {}
            // A captured value of unknown type: a float-only method says `f32` (checked on the host).
            Class::Any if float_only => self.require(rtv, Ty::F32)?,
            // An unsuffixed literal's method: rustc asks for its type too.
            _ => return Err("type"),
        }
        let mut all = vec![recv];
        for a in args {
            let (e, tv) = self.scalar(a)?;
            if func == Func::Powi {
                self.require(tv, Ty::I32)?;
            } else {
                self.unify(tv, rtv)?;
            }
            all.push(e);
        }
        let roundings = match func {
            Func::Sqrt => 5,
            Func::Exp | Func::Tanh | Func::Ln | Func::Sin | Func::Cos | Func::Recip => 4,
            Func::MulAdd => 2,
            // 3 + 2·|y·ln x| ULP: up to 2·88 where the result is finite.
            Func::Powf => 180,
            // A product per bit of the exponent, and a division for a negative one.
            Func::Powi => 36,
            _ => 0,
        };
        self.count_op(rtv, roundings);
        let tv = match func {
            Func::IsNan | Func::IsFinite | Func::IsInfinite => self.known(Ty::Bool),
            _ => rtv,
        };
        Ok(Val::Scalar(E::Call(func, all, rtv), tv))
    }
}

/// The views an item walks, whose shortest length is the loop's count.
fn leaves(item: &Item, out: &mut Vec<ViewId>) {
    match item {
        Item::Value(v) | Item::Mut(v) => out.push(*v),
        Item::Index | Item::Row { .. } => {}
        Item::Pair(a, b) => {
            leaves(a, out);
            leaves(b, out);
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

/// A row width that can be evaluated twice (for the device and for the host) with
/// the same result: names, integer literals, arithmetic and `len()`.
fn pure(e: &Expr) -> bool {
    match e {
        Expr::Path(p) => p.qself.is_none() && p.path.segments.iter().all(|s| s.arguments.is_empty()),
        Expr::Lit(syn::ExprLit { lit: Lit::Int(_), .. }) => true,
        Expr::Paren(p) => pure(&p.expr),
        Expr::Group(g) => pure(&g.expr),
        Expr::Cast(c) => pure(&c.expr),
        Expr::Binary(b) => {
            matches!(b.op, BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_))
                && pure(&b.left)
                && pure(&b.right)
        }
        Expr::MethodCall(m) => m.method == "len" && m.args.is_empty() && pure(&m.receiver),
        _ => false,
    }
}
