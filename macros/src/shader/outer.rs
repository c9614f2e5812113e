//! What the shader may assume of the names a loop captures from outside it:
//! the split's [`Scope`] says what each is (a slice written or only read, a
//! `&mut`, anything else); this adds the types a shader needs, from declared
//! types (parameters, `let x: T`), `vec![v; n]` and sub-slices of known slices,
//! and the reduction analysis' inference of scalar `let`s ([`crate::body::Env`]).
//!
//! These are guesses where nothing is declared (`let k = 3;`, `vec![0.0; n]`):
//! the generated code checks every captured value's real type at run time
//! (`ops::gpu::loops::probe`) and runs the loop on the host when a guess was wrong.

use std::collections::HashMap;

use syn::{Expr, FnArg, Pat, Signature, Stmt, Type};

use super::ir::Elem;
use super::ty::{Class, Ty};
use crate::body::{self, Int, Kind, Scope, Width};
use crate::reason::Reason;

/// What a captured name holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Held {
    /// A slice-like of this element type (or the word for why a shader cannot hold it).
    Slice(Result<Elem, Reason>),
    /// A scalar, as far as it is known.
    Scalar(Class),
    /// Nothing a shader holds: a `&mut` of another type, or a type declared and not numeric.
    Opaque(Reason),
}

/// The names in scope before one loop, with what they hold.
pub(super) struct Outer<'a> {
    scope: &'a Scope,
    declared: HashMap<String, Held>,
}

impl<'a> Outer<'a> {
    /// The names of `sig` and of the `lets` before the loop, over the split's `scope` there.
    pub(super) fn new(sig: &Signature, lets: &[Stmt], scope: &'a Scope) -> Outer<'a> {
        let mut outer = Outer { scope, declared: HashMap::new() };
        for input in &sig.inputs {
            if let FnArg::Typed(pt) = input {
                if let Pat::Ident(p) = &*pt.pat {
                    outer.declared.insert(p.ident.to_string(), held_by_type(&pt.ty));
                }
            }
        }
        for stmt in lets {
            let Stmt::Local(local) = stmt else { continue };
            match &local.pat {
                Pat::Type(t) => {
                    if let Pat::Ident(p) = &*t.pat {
                        outer.declared.insert(p.ident.to_string(), held_by_type(&t.ty));
                    }
                }
                Pat::Ident(p) => {
                    let init = local.init.as_ref().filter(|i| i.diverge.is_none()).map(|i| &*i.expr);
                    let held = init.and_then(|e| outer.held_by_init(e));
                    match held {
                        Some(h) => outer.declared.insert(p.ident.to_string(), h),
                        None => outer.declared.remove(&p.ident.to_string()),
                    };
                }
                pat => {
                    for name in body::pat_names(pat) {
                        outer.declared.remove(&name);
                    }
                }
            }
        }
        outer
    }

    /// What a `let` initialiser gives its name, when the macro can tell.
    fn held_by_init(&self, e: &Expr) -> Option<Held> {
        match e {
            Expr::Paren(p) => self.held_by_init(&p.expr),
            Expr::Macro(m) if m.mac.path.is_ident("vec") => {
                let repeat = |input: syn::parse::ParseStream| {
                    let value: Expr = input.parse()?;
                    input.parse::<syn::Token![;]>()?;
                    let _: Expr = input.parse()?;
                    Ok(value)
                };
                let value = m.mac.parse_body_with(repeat).ok()?;
                Some(Held::Slice(elem_of_literal(&value)))
            }
            Expr::MethodCall(m) if m.method == "to_vec" && m.args.is_empty() => self.slice_of(&m.receiver),
            Expr::Reference(r) => match &*r.expr {
                Expr::Index(i) if matches!(&*i.index, Expr::Range(_)) => self.slice_of(&i.expr),
                inner => self.slice_of(inner),
            },
            _ => None,
        }
    }

    /// What `e`, a name of a known slice, holds.
    fn slice_of(&self, e: &Expr) -> Option<Held> {
        let name = body::plain_ident(e)?.to_string();
        match self.declared.get(&name) {
            Some(h @ Held::Slice(_)) => Some(*h),
            _ => None,
        }
    }

    /// What `name` holds before the loop, and its kind for the split; `None` when
    /// it is not bound there (a constant, a static, an item).
    pub(super) fn get(&self, name: &str) -> Option<(Held, Kind)> {
        let binding = self.scope.get(name)?;
        let held = match (self.declared.get(name), binding.kind) {
            (Some(h), _) => *h,
            (None, Kind::MutSlice | Kind::Slice { .. }) => Held::Slice(Err(Reason::Type)),
            (None, Kind::MutRef) => Held::Opaque(Reason::Value),
            (None, Kind::Other) => Held::Scalar(self.scalar_class(name, binding.usize)),
        };
        Some((held, binding.kind))
    }

    /// A scalar `let`'s type as the reduction analysis infers it.
    fn scalar_class(&self, name: &str, usize: bool) -> Class {
        if usize {
            return Class::Known(Ty::Usize);
        }
        match self.scope.env.lookup(name).map(|(ty, _)| ty) {
            Some(body::Ty::Float(Width::F32)) => Class::Known(Ty::F32),
            Some(body::Ty::Float(Width::Any)) => Class::Float,
            Some(body::Ty::Int(Int::Usize)) => Class::Known(Ty::Usize),
            Some(body::Ty::Int(_)) => Class::Int,
            Some(body::Ty::Bool) => Class::Known(Ty::Bool),
            // An f64 is refused where it is used; anything else is placed by its uses.
            _ => Class::Any,
        }
    }
}

/// What a name declared with type `ty` holds.
fn held_by_type(ty: &Type) -> Held {
    match ty {
        Type::Paren(p) => held_by_type(&p.elem),
        Type::Group(g) => held_by_type(&g.elem),
        Type::Reference(r) => match &*r.elem {
            Type::Slice(s) => Held::Slice(elem_of_type(&s.elem)),
            elem if slice_element(elem).is_some() => Held::Slice(elem_of_type(slice_element(elem).expect("checked"))),
            elem => match Ty::of_type(elem) {
                Ok(t) if r.mutability.is_none() => Held::Scalar(Class::Known(t)),
                Ok(_) => Held::Opaque(Reason::Value),
                Err(word) => Held::Opaque(if word == Reason::Type { Reason::Value } else { word }),
            },
        },
        ty => match slice_element(ty) {
            Some(elem) => Held::Slice(elem_of_type(elem)),
            None => match Ty::of_type(ty) {
                Ok(t) => Held::Scalar(Class::Known(t)),
                Err(word) => Held::Opaque(if word == Reason::Type { Reason::Value } else { word }),
            },
        },
    }
}

/// The element type of `Vec<T>` or `[T; N]`.
fn slice_element(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Array(a) => Some(&a.elem),
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            if last.ident != "Vec" {
                return None;
            }
            match &last.arguments {
                syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    }
}

/// A slice element type a shader holds.
pub(super) fn elem_of_type(ty: &Type) -> Result<Elem, Reason> {
    match Ty::of_type(ty)? {
        Ty::F32 => Ok(Elem::F32),
        Ty::I32 => Ok(Elem::I32),
        Ty::U32 => Ok(Elem::U32),
        Ty::Usize => Ok(Elem::Usize),
        Ty::Bool => Err(Reason::Type),
    }
}

/// The element type of `vec![value; n]`: a literal's suffix, else Rust's fallback
/// where the literal meets nothing (checked at run time if the body says otherwise).
fn elem_of_literal(value: &Expr) -> Result<Elem, Reason> {
    let Expr::Lit(l) = value else { return Err(Reason::Type) };
    let suffix = match &l.lit {
        syn::Lit::Float(f) if f.suffix().is_empty() => return Ok(Elem::F32),
        syn::Lit::Int(i) if i.suffix().is_empty() => return Ok(Elem::I32),
        syn::Lit::Float(f) => f.suffix().to_string(),
        syn::Lit::Int(i) => i.suffix().to_string(),
        _ => return Err(Reason::Type),
    };
    match Ty::of_name(&suffix)? {
        Some(Ty::F32) => Ok(Elem::F32),
        Some(Ty::I32) => Ok(Elem::I32),
        Some(Ty::U32) => Ok(Elem::U32),
        Some(Ty::Usize) => Ok(Elem::Usize),
        _ => Err(Reason::Type),
    }
}
