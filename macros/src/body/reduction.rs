//! Reductions and scatter updates as statements write them: an accumulation
//! (`acc += t`, `acc = acc.max(t)`), a compare-and-keep (`if t > acc { acc = t; }`),
//! and an update of a slot of a slice chosen by data (`bins[idx] += 1`). What each
//! rewrite does with one is its own (the SIMD variant's lanes, the Parallel
//! variant's partials and private copies, the GPU's per-workgroup partials).

use proc_macro2::Ident;
use quote::ToTokens;
use syn::{BinOp, Expr, Stmt};

use super::syntax::plain_ident;
use super::types::{Elem, Int, Prim, Width};
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

/// How an update statement combines its term into its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Update {
    /// `+=`.
    Add,
    /// `-=`.
    Sub,
    /// `*=`.
    Mul,
    /// `|=`.
    Or,
    /// `&=`.
    And,
    /// `^=`.
    Xor,
    /// `t = t.max(v)`, `t = v.max(t)`, `t = f32::max(t, v)`, …
    Max,
    /// The same with `min`.
    Min,
}

/// What an update statement updates: a name (an accumulator) or a slot of a slice named
/// plainly (`s[e]`).
#[derive(Clone, Debug)]
pub(crate) enum Target<'a> {
    Name(Ident),
    Slot { slice: Ident, index: &'a Expr },
}

impl Target<'_> {
    fn of(place: &Expr) -> Option<Target<'_>> {
        match slot(place) {
            Some((slice, index)) => Some(Target::Slot { slice, index }),
            None => plain_ident(place).map(Target::Name),
        }
    }

    /// Whether `e` is this target again (the same name, or the same slice at the same index,
    /// token for token).
    fn is(&self, e: &Expr) -> bool {
        match self {
            Target::Name(n) => plain_ident(e).is_some_and(|i| i == *n),
            Target::Slot { slice, index } => {
                slot(e).is_some_and(|(s, i)| s == *slice && normalised(i) == normalised(index))
            }
        }
    }
}

/// An update statement: `t op= v` (`+=`, `-=`, `*=`, `|=`, `&=`, `^=`) or `t = t.max(v)` (also
/// `v.max(t)`, `f32::max(t, v)`, `u32::min(v, t)`: a primitive type's `max` or `min`), where `t`
/// is a name or a slot of a slice: the one recognizer of the reductions (an accumulator) and the
/// scatter updates (a slot) a loop's body writes.
pub(crate) struct UpdateStmt<'a> {
    pub target: Target<'a>,
    pub update: Update,
    /// `v`.
    pub term: &'a Expr,
}

/// `e` as an update statement, if it is one.
pub(crate) fn update_of(e: &Expr) -> Option<UpdateStmt<'_>> {
    match e {
        Expr::Binary(b) => {
            let update = match b.op {
                BinOp::AddAssign(_) => Update::Add,
                BinOp::SubAssign(_) => Update::Sub,
                BinOp::MulAssign(_) => Update::Mul,
                BinOp::BitOrAssign(_) => Update::Or,
                BinOp::BitAndAssign(_) => Update::And,
                BinOp::BitXorAssign(_) => Update::Xor,
                _ => return None,
            };
            Some(UpdateStmt { target: Target::of(&b.left)?, update, term: &b.right })
        }
        Expr::Assign(a) => {
            let target = Target::of(&a.left)?;
            let (op, term) = extremum(&a.right, &|e| target.is(e))?;
            let update = if op == Op::Max { Update::Max } else { Update::Min };
            Some(UpdateStmt { target, update, term })
        }
        _ => None,
    }
}

/// An accumulation statement: `acc += t`, `acc -= t`, `acc *= t`, `acc = acc.max(t)`,
/// `acc = t.max(acc)`, `acc = f32::max(acc, t)` (and `min`): an update of a name by one of
/// the reassociable operators. Returns the accumulator, its operator and the term.
pub(crate) fn accumulation(e: &Expr) -> Option<(Ident, Op, &Expr)> {
    let u = update_of(e)?;
    let Target::Name(acc) = u.target else { return None };
    let op = match u.update {
        Update::Add | Update::Sub => Op::Sum,
        Update::Mul => Op::Product,
        Update::Max => Op::Max,
        Update::Min => Op::Min,
        Update::Or | Update::And | Update::Xor => return None,
    };
    Some((acc, op, u.term))
}

/// `acc.max(t)`, `t.max(acc)`, `f32::max(acc, t)`, `f32::max(t, acc)` (and `min`): the operator and `t`.
pub(crate) fn extremum_of<'e>(e: &'e Expr, acc: &Ident) -> Option<(Op, &'e Expr)> {
    extremum(e, &|e| plain_ident(e).is_some_and(|i| i == *acc))
}

/// `a.max(t)`, `t.max(a)`, `T::max(a, t)`, `T::max(t, a)` (and `min`, `T` a primitive type's name),
/// where `is_a` says which operand is `a`: the operator and `t`.
fn extremum<'e>(e: &'e Expr, is_a: &dyn Fn(&Expr) -> bool) -> Option<(Op, &'e Expr)> {
    let op_of = |name: &Ident| match name.to_string().as_str() {
        "max" => Some(Op::Max),
        "min" => Some(Op::Min),
        _ => None,
    };
    let (op, a, b) = match strip(e) {
        Expr::MethodCall(m) if m.turbofish.is_none() && m.args.len() == 1 => {
            (op_of(&m.method)?, &*m.receiver, &m.args[0])
        }
        Expr::Call(c) if c.args.len() == 2 => {
            let Expr::Path(p) = &*c.func else { return None };
            let segments: Vec<&Ident> = p.path.segments.iter().map(|s| &s.ident).collect();
            match (p.qself.is_none(), segments.as_slice()) {
                (true, [ty, name]) if Prim::of_name(&ty.to_string()).is_some() => {
                    (op_of(name)?, &c.args[0], &c.args[1])
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    match (is_a(a), is_a(b)) {
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

/// A slice the loop updates at slots chosen by data.
pub(crate) struct Scatter {
    pub(crate) name: Ident,
    pub(crate) update: Update,
    pub(crate) element: Elem,
}

/// The parts of a scatter update: the slice, the operator, the index and the value.
pub(crate) struct Parts<'a> {
    pub slice: Ident,
    pub update: Update,
    pub index: &'a Expr,
    pub value: &'a Expr,
}

/// `e` as an update of a slot of a slice named plainly, if it is one: the [`update_of`] a
/// private copy per chunk can take (any of its operators but `*=`).
pub(crate) fn update(e: &Expr) -> Option<Parts<'_>> {
    let u = update_of(e)?;
    let Target::Slot { slice, index } = u.target else { return None };
    (u.update != Update::Mul).then_some(Parts { slice, update: u.update, index, value: u.term })
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

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn name(e: Expr) -> Option<(String, Op, String)> {
        accumulation(&e).map(|(acc, op, t)| (acc.to_string(), op, quote::ToTokens::to_token_stream(t).to_string()))
    }

    fn slot_update(e: Expr) -> Option<(String, Update, String)> {
        update(&e).map(|p| (p.slice.to_string(), p.update, quote::ToTokens::to_token_stream(p.value).to_string()))
    }

    #[test]
    fn accumulations_and_scatter_updates_are_one_shape() {
        assert_eq!(name(parse_quote!(s += x[i])), Some(("s".into(), Op::Sum, "x [i]".into())));
        assert_eq!(name(parse_quote!(s -= t)), Some(("s".into(), Op::Sum, "t".into())));
        assert_eq!(name(parse_quote!(p *= t)), Some(("p".into(), Op::Product, "t".into())));
        assert_eq!(name(parse_quote!(m = t.max(m))), Some(("m".into(), Op::Max, "t".into())));
        assert_eq!(name(parse_quote!(m = f64::min(m, t))), Some(("m".into(), Op::Min, "t".into())));
        assert_eq!(name(parse_quote!(bits |= t)), None, "not a reassociable accumulation");
        assert_eq!(name(parse_quote!(m = g::max(m, t))), None, "a `max` of no primitive type");
        assert_eq!(slot_update(parse_quote!(bins[b] += 1)), Some(("bins".into(), Update::Add, "1".into())));
        assert_eq!(slot_update(parse_quote!(seen[k] |= hit)), Some(("seen".into(), Update::Or, "hit".into())));
        // Disagreement resolved: a slot's `max` was recognised as `s[e] = s[e].max(v)` and
        // `T::max(s[e], v)` (any two-segment path) only; an accumulator's also as `v.max(acc)` and
        // `f32::max(v, acc)` (of `f32` and `f64` only). One rule for both: either operand, a
        // primitive type's path.
        for e in [
            parse_quote!(best[k] = best[k].max(v)),
            parse_quote!(best[k] = v.max(best[k])),
            parse_quote!(best[k] = u32::max(v, best[k])),
        ] {
            assert_eq!(slot_update(e), Some(("best".into(), Update::Max, "v".into())));
        }
        assert_eq!(slot_update(parse_quote!(best[k] = Ord::max(best[k], v))), None);
        assert_eq!(slot_update(parse_quote!(best[k] = best[j].max(v))), None, "another slot");
        assert_eq!(slot_update(parse_quote!(p[k] *= v)), None, "no private copy takes a product");
    }
}
