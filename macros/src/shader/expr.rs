//! Expressions of a loop body read into the shader's IR: literals, names from
//! inside and outside the loop, operators, indexing and sub-slices, `if` and
//! blocks as values, and the methods of the subset; each typed as it is read
//! (`ty.rs`), anything else the word for why the loop stays on the host.

use syn::{BinOp, Block, Expr, Lit, RangeLimits, Stmt, UnOp};

use super::ir::{ArgSource, Bin, Func, Place, Un, E, S};
use super::lower::{Local, Lower, Val, R};
use super::outer::Held;
use super::ty::{Class, Tv, Ty};
use crate::body::is_screaming;
use crate::reason::Reason;

impl Lower<'_> {
    pub(super) fn scalar(&mut self, e: &Expr) -> R<(E, Tv)> {
        match self.value(e)? {
            Val::Scalar(e, tv) => Ok((e, tv)),
            Val::View(_) => Err(Reason::Value),
            // A `&mut f32` read without `*`: only its methods auto-deref (handled there).
            Val::Elem(..) => Err(Reason::Value),
        }
    }

    /// Counts `n` roundings of a float operation in `tv` for the contract's bound.
    pub(super) fn count_op(&mut self, tv: Tv, n: u32) {
        if self.out.types.class(tv) != Class::Known(Ty::Bool)
            && !matches!(self.out.types.get(tv), Some(t) if t.is_int())
        {
            self.out.roundings = self.out.roundings.saturating_add(n);
        }
    }

    pub(super) fn value(&mut self, e: &Expr) -> R<Val> {
        match e {
            Expr::Paren(p) => self.value(&p.expr),
            Expr::Group(g) => self.value(&g.expr),
            Expr::Lit(l) => self.literal(&l.lit),
            Expr::Path(p) => self.path(p),
            Expr::Unary(u) => match u.op {
                UnOp::Deref(_) => match self.value(&u.expr)? {
                    Val::Elem(view, at) => Ok(self.load(view, E::Local(at))),
                    Val::Scalar(e, tv) => Ok(Val::Scalar(e, tv)),
                    Val::View(_) => Err(Reason::Value),
                },
                UnOp::Neg(_) => {
                    let (e, tv) = self.scalar(&u.expr)?;
                    if self.out.types.get(tv) == Some(Ty::Usize) || self.out.types.get(tv) == Some(Ty::U32) {
                        return Err(Reason::Type);
                    }
                    Ok(Val::Scalar(E::Unary(Un::Neg, Box::new(e), tv), tv))
                }
                UnOp::Not(_) => {
                    let (e, tv) = self.scalar(&u.expr)?;
                    Ok(Val::Scalar(E::Unary(Un::Not, Box::new(e), tv), tv))
                }
                _ => Err(Reason::Syntax),
            },
            Expr::Binary(b) => self.binary(b),
            Expr::Index(i) => {
                if matches!(&*i.index, Expr::Range(_)) {
                    return Err(Reason::Value);
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
                    return Err(Reason::Type);
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
                    return Err(Reason::Call);
                }
                match self.value(&m.receiver)? {
                    Val::View(v) if m.method == "len" && m.args.is_empty() => {
                        let tv = self.known(Ty::Usize);
                        Ok(Val::Scalar(E::Len(v), tv))
                    }
                    Val::View(_) => Err(Reason::Call),
                    Val::Elem(view, at) => {
                        let Val::Scalar(e, tv) = self.load(view, E::Local(at)) else { unreachable!("a load") };
                        self.func(&m.method.to_string(), (e, tv), m.args.iter().collect())
                    }
                    Val::Scalar(e, tv) => self.func(&m.method.to_string(), (e, tv), m.args.iter().collect()),
                }
            }
            Expr::Call(c) => {
                // `f32::sqrt(x)`, `f32::max(a, b)`, `usize::min(a, b)`: a method called through its type.
                let Expr::Path(p) = &*c.func else { return Err(Reason::Call) };
                let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                let ([ty, method], None) = (names.as_slice(), &p.qself) else { return Err(Reason::Call) };
                let Some(ty) = Ty::of_name(ty)? else { return Err(Reason::Call) };
                let Some((first, rest)) =
                    c.args.iter().collect::<Vec<_>>().split_first().map(|(f, r)| (*f, r.to_vec()))
                else {
                    return Err(Reason::Call);
                };
                let (e, tv) = self.scalar(first)?;
                self.require(tv, ty)?;
                self.func(method, (e, tv), rest)
            }
            Expr::If(i) => self.if_value(i),
            Expr::Block(b) if b.label.is_none() => {
                if self.no_prelude > 0 {
                    return Err(Reason::Syntax);
                }
                let (stmts, val) = self.value_block(&b.block)?;
                self.pending.extend(stmts);
                Ok(val)
            }
            Expr::Macro(_) => Err(Reason::Macro),
            Expr::Tuple(_) | Expr::Array(_) | Expr::Repeat(_) | Expr::Struct(_) | Expr::Field(_) => Err(Reason::Value),
            _ => Err(Reason::Syntax),
        }
    }

    pub(super) fn literal(&mut self, lit: &Lit) -> R<Val> {
        match lit {
            Lit::Float(f) => {
                let class = match f.suffix() {
                    "" => Class::Float,
                    s => Class::Known(Ty::of_name(s)?.filter(|t| *t == Ty::F32).ok_or(Reason::Type)?),
                };
                let tv = self.out.types.fresh(class);
                Ok(Val::Scalar(E::Float(f.base10_digits().to_string(), tv), tv))
            }
            Lit::Int(i) => {
                let class = match i.suffix() {
                    "" => Class::Int,
                    s => Class::Known(Ty::of_name(s)?.ok_or(Reason::Type)?),
                };
                let tv = self.out.types.fresh(class);
                if class == Class::Known(Ty::F32) {
                    return Ok(Val::Scalar(E::Float(i.base10_digits().to_string(), tv), tv));
                }
                let value = i.base10_parse::<u128>().map_err(|_| Reason::Size)?;
                Ok(Val::Scalar(E::Int(value, tv), tv))
            }
            Lit::Bool(b) => {
                let tv = self.known(Ty::Bool);
                Ok(Val::Scalar(E::Bool(b.value), tv))
            }
            _ => Err(Reason::Type),
        }
    }

    pub(super) fn path(&mut self, p: &syn::ExprPath) -> R<Val> {
        if p.qself.is_some() || p.path.segments.iter().any(|s| !s.arguments.is_empty()) {
            return Err(Reason::Value);
        }
        if let Some(ident) = p.path.get_ident() {
            let name = ident.to_string();
            if let Some(local) = self.lookup(&name) {
                return match local {
                    Local::Val(v) => Ok(Val::Scalar(E::Local(v), self.out.vars[v])),
                    Local::View(v) => Ok(Val::View(v)),
                    Local::Elem(v, at) => Ok(Val::Elem(v, at)),
                    Local::Acc(_) => Err(Reason::Reads),
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
        let last = names.last().map(String::as_str).unwrap_or_default();
        if !is_screaming(last) {
            return Err(Reason::Value);
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

    pub(super) fn binary(&mut self, b: &syn::ExprBinary) -> R<Val> {
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
            _ => return Err(Reason::Syntax),
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

    pub(super) fn reference(&mut self, r: &syn::ExprReference) -> R<Val> {
        match &*r.expr {
            Expr::Index(i) if matches!(&*i.index, Expr::Range(_)) => self.sub_slice(i, r.mutability.is_some()),
            Expr::Index(i) if r.mutability.is_some() => {
                if self.no_prelude > 0 {
                    return Err(Reason::Syntax);
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
            _ => Err(Reason::Value),
        }
    }

    /// `&x[a..b]` (`&mut x[a..b]`: `mutable`): a view of a part of `x`'s slice.
    pub(super) fn sub_slice(&mut self, i: &syn::ExprIndex, mutable: bool) -> R<Val> {
        let Expr::Range(range) = &*i.index else { return Err(Reason::Value) };
        if self.no_prelude > 0 {
            return Err(Reason::Syntax);
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
            let end = hi.ok_or(Reason::Syntax)?;
            hi = Some(E::Binary(Bin::Add, Box::new(end), Box::new(E::Int(1, usize_tv)), usize_tv));
        }
        let view = self.sub_view(parent);
        self.pending.push(S::Sub { view, parent, lo, hi });
        if mutable {
            self.written(view)?;
        }
        Ok(Val::View(view))
    }

    /// `if c { a } else { b }` as a value: a local assigned on each branch.
    pub(super) fn if_value(&mut self, i: &syn::ExprIf) -> R<Val> {
        if self.no_prelude > 0 {
            return Err(Reason::Syntax);
        }
        let Some((_, otherwise)) = &i.else_branch else { return Err(Reason::Syntax) };
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
            _ => return Err(Reason::Syntax),
        };
        for (stmts, val) in [(&mut then, a), (&mut els, b)] {
            let Val::Scalar(e, etv) = val else { return Err(Reason::Value) };
            self.unify(tv, etv)?;
            stmts.push(S::Assign(Place::Local(v), e));
        }
        self.pending.push(S::Decl(v, None));
        self.pending.push(S::If(cond, then, els));
        Ok(Val::Scalar(E::Local(v), tv))
    }

    /// A block's statements and the value of its last expression.
    pub(super) fn value_block(&mut self, block: &Block) -> R<(Vec<S>, Val)> {
        let Some((Stmt::Expr(tail, None), stmts)) = block.stmts.split_last() else { return Err(Reason::Syntax) };
        let saved = std::mem::take(&mut self.pending);
        self.scopes.push();
        let mut out = Vec::new();
        let result = stmts.iter().try_for_each(|s| self.stmt(s, &mut out)).and_then(|()| self.value(tail));
        self.scopes.pop();
        let tail_first = std::mem::replace(&mut self.pending, saved);
        out.extend(tail_first);
        Ok((out, result?))
    }

    /// A method of the subset on a scalar receiver (or called through its type).
    pub(super) fn func(&mut self, method: &str, (recv, rtv): (E, Tv), args: Vec<&Expr>) -> R<Val> {
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
            _ => return Err(Reason::Call),
        };
        if args.len() != arity {
            return Err(Reason::Call);
        }
        match self.out.types.class(rtv) {
            Class::Known(Ty::F32) => {}
            Class::Known(Ty::Bool) => return Err(Reason::Call),
            Class::Known(t) if float_only || (func == Func::Abs && t != Ty::I32) => return Err(Reason::Call),
            Class::Known(_) => {}
            // A captured value of unknown type: a float-only method says `f32` (checked on the host).
            Class::Any if float_only => self.require(rtv, Ty::F32)?,
            // An unsuffixed literal's method: rustc asks for its type too.
            _ => return Err(Reason::Type),
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
