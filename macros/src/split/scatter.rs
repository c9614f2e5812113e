//! Scatter updates: a loop whose iterations update slots of a slice chosen by
//! data (`bins[idx] += 1`, `sums[label * d + j] += x[j]`, `best[k] =
//! best[k].max(v)`) is split with a private copy of the slice per chunk
//! (OpenMP's `reduction(+: bins[:n])`), merged into the slice in chunk order
//! after the loop (`adaptive_kernel::__private::split::merge_private`).
//!
//! An update is one of
//!
//! * `s[e] += v`, `s[e] -= v` on integers or floats (a float's regrouped sum
//!   is within the tolerance contract; never under `exact`);
//! * `s[e] |= v`, `s[e] &= v`, `s[e] ^= v` on integers or `bool`s;
//! * `s[e] = s[e].max(v)`, `s[e] = s[e].min(v)` (or `f32::max(s[e], v)`, …)
//!   on floats of a known width or integers of a known type,
//!
//! where `s` is a slice-like from outside the loop whose element type its
//! declaration says, the same operator at every update of `s`, and `s`
//! otherwise named only as `s.len()` (the copy is as long). A chunk's copy
//! starts at the operator's identity (`0`, `-0.0`, `!0`, `NAN`, `u32::MIN`,
//! …); a subtraction is accumulated as a sum of what is subtracted and
//! subtracted once at the merge, so an unsigned copy never goes below zero
//! where the slot would not.
//!
//! Each chunk's loop is the loop as written with `s` renamed to its copy
//! ([`Rename`]): every other part of the body is unchanged, and the slot an
//! update picks, its bounds check included, is the one the loop as written
//! picks.

use proc_macro2::{Ident, TokenStream};
use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{BinOp, Expr};

use crate::body::{plain_ident, slot, Elem, Scatter, Update};

impl Scatter {
    /// The identity a chunk's copy starts from.
    pub(super) fn identity(&self) -> TokenStream {
        let text = match (self.update, self.element) {
            (Update::Add | Update::Sub, Elem::Float(w)) => format!("-0.0{}", w.name().unwrap_or("")),
            (Update::Add | Update::Sub | Update::Or | Update::Xor, Elem::Int(_)) => "0".into(),
            (Update::Or | Update::Xor, _) => "false".into(),
            (Update::And, Elem::Int(_)) => "!0".into(),
            (Update::And, _) => "true".into(),
            (Update::Max | Update::Min, Elem::Float(w)) => format!("{}::NAN", w.name().unwrap_or("f32")),
            (Update::Max, Elem::Int(t)) => format!("{}::MIN", t.name().unwrap_or("i32")),
            (Update::Min, Elem::Int(t)) => format!("{}::MAX", t.name().unwrap_or("i32")),
            (Update::Add | Update::Sub | Update::Max | Update::Min, Elem::Bool)
            | (Update::Mul, _)
            | (_, Elem::Other) => {
                unreachable!("refused by `check`")
            }
        };
        text.parse().expect("a literal or a path")
    }

    /// `|slot, copy| ..`: how a copy's element is merged into the slice's, a closure over
    /// `&mut T` and `&T`. Spelled as paths: a module with `#![no_implicit_prelude]`.
    pub(super) fn merge(&self) -> TokenStream {
        let (s, c) = (quote!(__adaptive_slot), quote!(__adaptive_copy));
        let body = match (self.update, self.element) {
            (Update::Add, _) => quote!(*#s += *#c),
            (Update::Sub, _) => quote!(*#s -= *#c),
            (Update::Or, _) => quote!(*#s |= *#c),
            (Update::And, _) => quote!(*#s &= *#c),
            (Update::Xor, _) => quote!(*#s ^= *#c),
            (Update::Max | Update::Min, Elem::Float(w)) => {
                let ty = Ident::new(w.name().unwrap_or("f32"), proc_macro2::Span::call_site());
                let m = if self.update == Update::Max { quote!(max) } else { quote!(min) };
                quote!(*#s = #ty::#m(*#s, *#c))
            }
            (Update::Max, _) => quote!(*#s = ::core::cmp::Ord::max(*#s, *#c)),
            (_, _) => quote!(*#s = ::core::cmp::Ord::min(*#s, *#c)),
        };
        quote!(|#s, #c| #body)
    }

    /// The element type's name, where known: what a chunk's copy is declared as.
    pub(super) fn element_type(&self) -> Option<Ident> {
        Some(Ident::new(self.element.name()?, proc_macro2::Span::call_site()))
    }
}

/// Renames a scatter slice to its chunk's copy in a chunk's loop, and turns its
/// subtractions into sums of what is subtracted (the merge subtracts them).
pub(super) struct Rename<'a> {
    pub from: &'a Ident,
    pub to: &'a Ident,
}

impl VisitMut for Rename<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Binary(b) = e {
            let ours = slot(&b.left).is_some_and(|(s, _)| s == *self.from);
            if let (true, BinOp::SubAssign(t)) = (ours, b.op) {
                b.op = BinOp::AddAssign(syn::Token![+=](t.spans[0]));
            }
        }
        if plain_ident(e).is_some_and(|n| n == *self.from) && matches!(e, Expr::Path(_)) {
            let to = self.to;
            *e = syn::parse_quote!(#to);
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {
        // A nested item names no local.
    }
}
