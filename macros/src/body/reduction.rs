//! Reductions and scatter updates as statements write them: an accumulation
//! (`acc += t`, `acc = acc.max(t)`), a compare-and-keep (`if t > acc { acc = t; }`),
//! and an update of a slot of a slice chosen by data (`bins[idx] += 1`). What each
//! rewrite does with one is its own (the SIMD variant's lanes, the Parallel
//! variant's partials and private copies, the GPU's per-workgroup partials).

use proc_macro2::Ident;
use quote::ToTokens;
use syn::{BinOp, Expr, Stmt};

use super::syntax::plain_ident;
use super::types::{Elem, Int, Width};
use crate::reason::Reason;
use crate::tokens::{mentions, normalised, strip};

/// How an accumulator combines its terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// `+=` and `-=` (`x - t` is `x + (-t)`, exactly).
    Sum,
    /// `*=`.
    Product,
    /// `f32::max`: NaN-ignoring, so associative and commutative on values.
    Max,
    /// `f32::min`, likewise.
    Min,
}

impl Op {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Op::Sum => "+=",
            Op::Product => "*=",
            Op::Max => "max",
            Op::Min => "min",
        }
    }
}

/// How an accumulator of a rewritten reduction combines its terms: an operator
/// statement ([`Op`], which the `split` analysis shares), or a compare-and-keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fold {
    Op(Op),
    /// `if t > acc { acc = t; }` (see [`keep`]): the greater value, the first of equal
    /// ones; a NaN term never wins and a NaN accumulator stays NaN. Associative and
    /// commutative on values, and idempotent, so each lane may start from the
    /// accumulator itself; two orders differ at most in the sign of a zero.
    KeepGreater,
    /// `if t < acc { acc = t; }`, likewise.
    KeepLess,
}

impl Fold {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Fold::Op(op) => op.word(),
            Fold::KeepGreater => "keep max",
            Fold::KeepLess => "keep min",
        }
    }
}

/// An accumulation statement: `acc += t`, `acc -= t`, `acc *= t`, `acc = acc.max(t)`,
/// `acc = t.max(acc)`, `acc = f32::max(acc, t)` (and `min`). Returns the accumulator, its
/// operator and the term.
pub(crate) fn accumulation(e: &Expr) -> Option<(Ident, Op, &Expr)> {
    match e {
        Expr::Binary(b) => {
            let op = match b.op {
                BinOp::AddAssign(_) | BinOp::SubAssign(_) => Op::Sum,
                BinOp::MulAssign(_) => Op::Product,
                _ => return None,
            };
            Some((plain_ident(&b.left)?, op, &b.right))
        }
        Expr::Assign(a) => {
            let acc = plain_ident(&a.left)?;
            let (op, term) = extremum_of(&a.right, &acc)?;
            Some((acc, op, term))
        }
        _ => None,
    }
}

/// `acc.max(t)`, `t.max(acc)`, `f32::max(acc, t)`, `f32::max(t, acc)` (and `min`): the operator and `t`.
pub(crate) fn extremum_of<'e>(e: &'e Expr, acc: &Ident) -> Option<(Op, &'e Expr)> {
    let is_acc = |e: &Expr| plain_ident(e).is_some_and(|i| i == *acc);
    let op_of = |name: &Ident| match name.to_string().as_str() {
        "max" => Some(Op::Max),
        "min" => Some(Op::Min),
        _ => None,
    };
    let (op, a, b) = match e {
        Expr::MethodCall(m) if m.turbofish.is_none() && m.args.len() == 1 => {
            (op_of(&m.method)?, &*m.receiver, &m.args[0])
        }
        Expr::Call(c) if c.args.len() == 2 => {
            let Expr::Path(p) = &*c.func else { return None };
            let segments: Vec<&Ident> = p.path.segments.iter().map(|s| &s.ident).collect();
            match (p.qself.is_none(), segments.as_slice()) {
                (true, [ty, name]) if *ty == "f32" || *ty == "f64" => (op_of(name)?, &c.args[0], &c.args[1]),
                _ => return None,
            }
        }
        _ => return None,
    };
    match (is_acc(a), is_acc(b)) {
        (true, false) => Some((op, b)),
        (false, true) => Some((op, a)),
        _ => None,
    }
}

/// A compare-and-keep statement: `if t > acc { acc = t; }`, `if acc < t { acc = t; }`
/// (`>=`, `<=` too) keep the greater, `if t < acc { acc = t; }` the lesser, where the
/// assigned `t` is the compared one, token for token. Returns the accumulator, which it
/// keeps, and `t`.
pub(crate) fn keep(e: &Expr) -> Option<(Ident, Fold, &Expr)> {
    let Expr::If(i) = e else { return None };
    if !i.attrs.is_empty() || i.else_branch.is_some() {
        return None;
    }
    let [Stmt::Expr(Expr::Assign(a), _)] = i.then_branch.stmts.as_slice() else { return None };
    let acc = plain_ident(&a.left)?;
    let Expr::Binary(c) = strip(&i.cond) else { return None };
    let is_acc = |e: &Expr| plain_ident(e).is_some_and(|x| x == acc);
    let greater = matches!(c.op, BinOp::Gt(_) | BinOp::Ge(_));
    let less = matches!(c.op, BinOp::Lt(_) | BinOp::Le(_));
    let (fold, term) = match (is_acc(&c.left), is_acc(&c.right)) {
        (false, true) if greater => (Fold::KeepGreater, &*c.left),
        (false, true) if less => (Fold::KeepLess, &*c.left),
        (true, false) if less => (Fold::KeepGreater, &*c.right),
        (true, false) if greater => (Fold::KeepLess, &*c.right),
        _ => return None,
    };
    let same = strip(&a.right).to_token_stream().to_string() == strip(term).to_token_stream().to_string();
    (same && !mentions(term.to_token_stream(), &[acc.to_string()])).then_some((acc, fold, term))
}

/// How a scatter statement updates its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Update {
    Add,
    Sub,
    Or,
    And,
    Xor,
    Max,
    Min,
}

/// A slice the loop updates at slots chosen by data.
pub(crate) struct Scatter {
    pub(crate) name: Ident,
    pub(crate) update: Update,
    pub(crate) element: Elem,
}

/// The parts of an update statement: the slice, the operator, the index and the value.
pub(crate) struct Parts<'a> {
    pub slice: Ident,
    pub update: Update,
    pub index: &'a Expr,
    pub value: &'a Expr,
}

/// `e` as an update of a slot of a slice named plainly, if it is one (see the module docs).
pub(crate) fn update(e: &Expr) -> Option<Parts<'_>> {
    match e {
        Expr::Binary(b) => {
            let update = match b.op {
                BinOp::AddAssign(_) => Update::Add,
                BinOp::SubAssign(_) => Update::Sub,
                BinOp::BitOrAssign(_) => Update::Or,
                BinOp::BitAndAssign(_) => Update::And,
                BinOp::BitXorAssign(_) => Update::Xor,
                _ => return None,
            };
            let (slice, index) = slot(&b.left)?;
            Some(Parts { slice, update, index, value: &b.right })
        }
        Expr::Assign(a) => {
            let (slice, index) = slot(&a.left)?;
            let same = |e: &Expr| slot(e).is_some_and(|(s, i)| s == slice && normalised(i) == normalised(index));
            let extremum = |name: &str| match name {
                "max" => Some(Update::Max),
                "min" => Some(Update::Min),
                _ => None,
            };
            match strip(&a.right) {
                // `s[e] = s[e].max(v)`
                Expr::MethodCall(m) if m.args.len() == 1 && m.turbofish.is_none() && same(&m.receiver) => {
                    let update = extremum(&m.method.to_string())?;
                    Some(Parts { slice, update, index, value: &m.args[0] })
                }
                // `s[e] = f32::max(s[e], v)`
                Expr::Call(c) if c.args.len() == 2 && same(&c.args[0]) => {
                    let Expr::Path(p) = &*c.func else { return None };
                    if p.qself.is_some() || p.path.segments.len() != 2 {
                        return None;
                    }
                    let update = extremum(&p.path.segments[1].ident.to_string())?;
                    Some(Parts { slice, update, index, value: &c.args[1] })
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// `s[e]` with `s` a plain name.
pub(crate) fn slot(e: &Expr) -> Option<(Ident, &Expr)> {
    match strip(e) {
        Expr::Index(i) => Some((plain_ident(&i.expr)?, &i.index)),
        _ => None,
    }
}

impl Scatter {
    /// Whether `update` applies to elements of `element`; `exact`: the kernel keeps float
    /// operations in their order. `Err` holds the word for why not.
    pub(crate) fn check(update: Update, element: Elem, exact: bool) -> Result<(), Reason> {
        match (update, element) {
            (_, Elem::Float(_)) if exact => Err(Reason::Exact),
            (Update::Add | Update::Sub, Elem::Int(_) | Elem::Float(_)) => Ok(()),
            (Update::Or | Update::And | Update::Xor, Elem::Int(_) | Elem::Bool) => Ok(()),
            (Update::Max | Update::Min, Elem::Float(w)) if w != Width::Any => Ok(()),
            (Update::Max | Update::Min, Elem::Int(Int::Usize | Int::Other(_))) => Ok(()),
            _ => Err(Reason::Type),
        }
    }
}
