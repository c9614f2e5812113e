//! What counts as a write: the one classifier of the places an expression
//! writes, read by every analysis that asks whether a loop's body writes a name
//! (the SIMD rewrites' stores, the items a jam may take together, a split's
//! targets, a GPU loop's places).
//!
//! An expression writes directly ([`Write::of`]) by assigning (`=`), by a
//! compound assignment (any of the ten: [`is_compound`]), by borrowing mutably
//! (`&mut`), or by calling a method that may take `&mut self`; what a method may
//! write is decided by the type of the name at the root of its receiver
//! ([`method_writes`]): a method of a shared slice reads it, a method of a
//! slice behind a `&mut` or owned reads it only if it is one of [`READ_ONLY`]
//! (`len()`, `is_empty()`, `iter()`, …), a method of a primitive value takes
//! it by value, and a method of anything else may write it if the name is
//! bound `mut` or holds a `&mut`. A name of a `&mut` used whole (passed on,
//! reborrowed) may be written too ([`whole_use_writes`]).

use proc_macro2::Ident;
use syn::{BinOp, Expr};

use super::names::Binding;
use super::syntax::plain_ident;
use super::types::{Access, Ty};

/// The compound assignment operators: `+=`, `-=`, `*=`, `/=`, `%=`, `^=`, `&=`, `|=`, `<<=`, `>>=`.
pub(crate) fn is_compound(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

/// The methods of a slice-like that only read it.
pub(crate) const READ_ONLY: [&str; 16] = [
    "len",
    "is_empty",
    "iter",
    "get",
    "first",
    "last",
    "chunks",
    "chunks_exact",
    "windows",
    "contains",
    "starts_with",
    "ends_with",
    "to_vec",
    "split_at",
    "split_first",
    "split_last",
];

/// A write an expression makes itself (its operands may make others).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Write<'a> {
    /// `place = value`.
    Assign { place: &'a Expr, value: &'a Expr },
    /// `place op= value`, one of the ten compound assignments.
    Compound { place: &'a Expr, value: &'a Expr },
    /// `&mut place`.
    Borrow { place: &'a Expr },
    /// `receiver.method(..)`: a method may take `&mut self` ([`method_writes`]).
    Method { receiver: &'a Expr, method: &'a Ident },
}

impl<'a> Write<'a> {
    /// The write `e` makes itself, if any.
    pub(crate) fn of(e: &'a Expr) -> Option<Write<'a>> {
        match e {
            Expr::Assign(a) => Some(Write::Assign { place: &a.left, value: &a.right }),
            Expr::Binary(b) if is_compound(&b.op) => Some(Write::Compound { place: &b.left, value: &b.right }),
            Expr::Reference(r) if r.mutability.is_some() => Some(Write::Borrow { place: &r.expr }),
            Expr::MethodCall(m) => Some(Write::Method { receiver: &m.receiver, method: &m.method }),
            _ => None,
        }
    }

    /// An assignment or a compound assignment: the place stored into and the value stored.
    pub(crate) fn store(self) -> Option<(&'a Expr, &'a Expr)> {
        match self {
            Write::Assign { place, value } | Write::Compound { place, value, .. } => Some((place, value)),
            Write::Borrow { .. } | Write::Method { .. } => None,
        }
    }

    /// The place written (the receiver, for a method).
    pub(crate) fn place(self) -> &'a Expr {
        match self {
            Write::Assign { place, .. } | Write::Compound { place, .. } | Write::Borrow { place } => place,
            Write::Method { receiver, .. } => receiver,
        }
    }
}

/// The name at the root of a place: `x` of `x`, `x[i]`, `x.f`, `*x`, `(x)`, `x[i].f[j]`.
pub(crate) fn root(place: &Expr) -> Option<Ident> {
    match place {
        Expr::Paren(p) => root(&p.expr),
        Expr::Group(g) => root(&g.expr),
        Expr::Index(i) => root(&i.expr),
        Expr::Field(f) => root(&f.base),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => root(&u.expr),
        e => plain_ident(e),
    }
}

/// Whether calling `method` on a value the name `binding` holds (or, as the root of the
/// receiver, holds a part of) may write it. `None`: a name the model does not know, which may.
pub(crate) fn method_writes(binding: Option<Binding>, method: &str) -> bool {
    let Some(b) = binding else { return true };
    match b.ty {
        Ty::Slice { access: Access::Shared, .. } => false,
        Ty::Slice { access: Access::Mut, .. } => !READ_ONLY.contains(&method),
        // A `&mut self` method of an owned value needs a `mut` binding.
        Ty::Slice { access: Access::Owned, .. } => b.mutable && !READ_ONLY.contains(&method),
        // Their methods take them by value.
        Ty::Float(_) | Ty::FloatRef(_) | Ty::Int(_) | Ty::Bool | Ty::PrimRef { mutable: false, .. } => false,
        Ty::MutRef | Ty::PrimRef { mutable: true, .. } => true,
        // A `&mut self` method needs a `mut` binding (or a `&mut`, which the types above say).
        Ty::Opaque | Ty::Unknown => b.mutable,
    }
}

/// Whether a name holding `ty`, used whole (passed to a function, reborrowed), may be written
/// through: a `&mut`.
pub(crate) fn whole_use_writes(ty: Ty) -> bool {
    matches!(ty, Ty::Slice { access: Access::Mut, .. } | Ty::MutRef | Ty::PrimRef { mutable: true, .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::types::{Elem, Width};
    use syn::parse_quote;

    #[test]
    fn every_compound_assignment_is_a_write() {
        // Disagreement resolved: the reductions' stores knew four compound assignments, the
        // element-wise rewrite five, the jam, the split and the GPU ten.
        for e in [
            parse_quote!(x[i] += 1),
            parse_quote!(x[i] -= 1),
            parse_quote!(x[i] *= 1),
            parse_quote!(x[i] /= 1),
            parse_quote!(x[i] %= 1),
            parse_quote!(x[i] ^= 1),
            parse_quote!(x[i] &= 1),
            parse_quote!(x[i] |= 1),
            parse_quote!(x[i] <<= 1),
            parse_quote!(x[i] >>= 1),
        ] {
            let e: Expr = e;
            let write = Write::of(&e).and_then(Write::store).map(|(place, _)| root(place));
            assert_eq!(write, Some(Some(parse_quote!(x))), "{}", quote::ToTokens::to_token_stream(&e));
        }
        let read: Expr = parse_quote!(x[i] + 1);
        assert!(Write::of(&read).is_none());
    }

    #[test]
    fn what_a_method_may_write() {
        let binding = |ty, mutable| Some(Binding { ty, mutable });
        let slice = |access| Ty::Slice { elem: Elem::Float(Width::F32), access };
        // Disagreement resolved: the jam took every method but `len` and `is_empty` for a write, the
        // split read the sixteen of `READ_ONLY`, and any method of a shared slice.
        assert!(!method_writes(binding(slice(Access::Shared), false), "reverse"));
        assert!(!method_writes(binding(slice(Access::Mut), false), "len"));
        assert!(!method_writes(binding(slice(Access::Mut), false), "contains"));
        assert!(method_writes(binding(slice(Access::Mut), false), "reverse"));
        assert!(method_writes(binding(slice(Access::Owned), true), "push"));
        assert!(!method_writes(binding(slice(Access::Owned), false), "as_slice"));
        assert!(!method_writes(binding(Ty::Float(Width::F32), true), "sqrt"));
        assert!(method_writes(binding(Ty::MutRef, false), "push"));
        assert!(!method_writes(binding(Ty::Opaque, false), "update"));
        assert!(method_writes(binding(Ty::Opaque, true), "update"));
        assert!(method_writes(None, "len"));
        assert!(whole_use_writes(slice(Access::Mut)) && !whole_use_writes(slice(Access::Shared)));
    }
}
