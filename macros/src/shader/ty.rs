//! The types a shader holds, and the inference that places every value of a
//! loop body in one of them: a union–find over type variables, each of which
//! is known (`f32`, `i32`, `u32`, `usize`, `bool`), a float or an integer of a
//! width still open (an unsuffixed literal), or anything (a captured name whose
//! type the macro could not read). Arithmetic, comparisons, assignments and
//! method arguments join their operands, as rustc's inference does for the
//! primitive types; at the end an open float is Rust's fallback `f64` (refused),
//! an open integer Rust's fallback `i32`, and anything still open is refused.

use crate::body::{self, Int, IntTy, Prim, Width};
use crate::reason::Reason;
use proc_macro2::TokenStream;
use quote::quote;

/// A scalar type a shader holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    F32,
    I32,
    U32,
    /// `usize`: `u32` on the device, checked where it could exceed it.
    Usize,
    Bool,
}

impl Ty {
    /// The WGSL type.
    pub(super) fn wgsl(self) -> &'static str {
        match self {
            Ty::F32 => "f32",
            Ty::I32 => "i32",
            Ty::U32 | Ty::Usize => "u32",
            Ty::Bool => "bool",
        }
    }

    pub(super) fn is_int(self) -> bool {
        matches!(self, Ty::I32 | Ty::U32 | Ty::Usize)
    }

    /// The type a shader holds for the primitive `prim`, or the word for why it holds none.
    pub(super) fn of_prim(prim: Prim) -> Result<Ty, Reason> {
        match prim {
            Prim::Float(Width::F32) => Ok(Ty::F32),
            Prim::Float(_) => Err(Reason::F64),
            Prim::Int(IntTy::I32) => Ok(Ty::I32),
            Prim::Int(IntTy::U32) => Ok(Ty::U32),
            Prim::Int(IntTy::Usize) => Ok(Ty::Usize),
            Prim::Int(IntTy::U64 | IntTy::I64 | IntTy::Isize | IntTy::U128 | IntTy::I128) => Err(Reason::Size),
            Prim::Int(IntTy::U8 | IntTy::U16 | IntTy::I8 | IntTy::I16) => Err(Reason::Type),
            Prim::Bool => Ok(Ty::Bool),
        }
    }

    /// The type a name like `f32` names: `Ok(None)` for a name that is no primitive
    /// number, the reason word for one a shader cannot hold.
    pub(super) fn of_name(name: &str) -> Result<Option<Ty>, Reason> {
        match Prim::of_name(name) {
            Some(prim) => Ty::of_prim(prim).map(Some),
            // A `char` is a primitive a shader cannot hold.
            None if name == "char" => Err(Reason::Type),
            None => Ok(None),
        }
    }

    /// The type `ty` declares (the model's reading of it), if it is one a shader holds.
    pub(super) fn of_type(ty: &syn::Type) -> Result<Ty, Reason> {
        match body::Ty::of_type(ty) {
            body::Ty::Float(w) => Ty::of_prim(Prim::Float(w)),
            body::Ty::Int(Int::Usize) => Ty::of_prim(Prim::Int(IntTy::Usize)),
            body::Ty::Int(Int::Other(t)) => Ty::of_prim(Prim::Int(t)),
            body::Ty::Bool => Ty::of_prim(Prim::Bool),
            _ => Err(Reason::Type),
        }
    }

    /// The runtime's `Scalar` for a captured value of this type.
    pub(super) fn scalar(self) -> TokenStream {
        let name = match self {
            Ty::F32 => quote!(F32),
            Ty::I32 => quote!(I32),
            Ty::U32 => quote!(U32),
            Ty::Usize => quote!(Usize),
            Ty::Bool => quote!(Bool),
        };
        quote!(::adaptive_kernel::__private::gpu_loop::Scalar::#name)
    }
}

/// A type variable.
pub(super) type Tv = usize;

/// What is known of a type variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    Known(Ty),
    /// An unsuffixed float literal's: `f32` or `f64`.
    Float,
    /// An unsuffixed integer literal's: any integer.
    Int,
    /// Nothing yet.
    Any,
}

/// The type variables of one loop body.
#[derive(Default)]
pub(super) struct Types {
    parent: Vec<Tv>,
    class: Vec<Class>,
}

impl Types {
    pub(super) fn fresh(&mut self, class: Class) -> Tv {
        self.parent.push(self.parent.len());
        self.class.push(class);
        self.parent.len() - 1
    }

    pub(super) fn known(&mut self, ty: Ty) -> Tv {
        self.fresh(Class::Known(ty))
    }

    fn find(&mut self, v: Tv) -> Tv {
        let mut root = v;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        let mut at = v;
        while self.parent[at] != root {
            let next = self.parent[at];
            self.parent[at] = root;
            at = next;
        }
        root
    }

    /// What is known of `v` now.
    pub(super) fn class(&mut self, v: Tv) -> Class {
        let root = self.find(v);
        self.class[root]
    }

    /// `v`'s type, if known now.
    pub(super) fn get(&mut self, v: Tv) -> Option<Ty> {
        match self.class(v) {
            Class::Known(t) => Some(t),
            _ => None,
        }
    }

    /// Joins `a` and `b`: they are one type (Rust's primitive operators take two
    /// operands of one type). `Err(Reason::Type)` when they cannot be.
    pub(super) fn unify(&mut self, a: Tv, b: Tv) -> Result<(), Reason> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return Ok(());
        }
        let joined = match (self.class[ra], self.class[rb]) {
            (Class::Any, c) | (c, Class::Any) => c,
            (Class::Known(x), Class::Known(y)) if x == y => Class::Known(x),
            (Class::Float, Class::Float) => Class::Float,
            (Class::Int, Class::Int) => Class::Int,
            (Class::Float, Class::Known(Ty::F32)) | (Class::Known(Ty::F32), Class::Float) => Class::Known(Ty::F32),
            (Class::Int, Class::Known(t)) | (Class::Known(t), Class::Int) if t.is_int() => Class::Known(t),
            _ => return Err(Reason::Type),
        };
        self.parent[ra] = rb;
        self.class[rb] = joined;
        Ok(())
    }

    /// Joins `v` with the known type `ty`.
    pub(super) fn require(&mut self, v: Tv, ty: Ty) -> Result<(), Reason> {
        let t = self.known(ty);
        self.unify(v, t)
    }

    /// `v`'s final type: an open float is Rust's fallback `f64` (refused), an open
    /// integer its fallback `i32`, anything else still open cannot be placed.
    pub(super) fn resolve(&mut self, v: Tv) -> Result<Ty, Reason> {
        match self.class(v) {
            Class::Known(t) => Ok(t),
            Class::Float => Err(Reason::F64),
            Class::Int => {
                self.require(v, Ty::I32)?;
                Ok(Ty::I32)
            }
            Class::Any => Err(Reason::Type),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_take_the_type_they_meet_or_rusts_fallback() {
        let mut t = Types::default();
        let (lit, x) = (t.fresh(Class::Float), t.known(Ty::F32));
        t.unify(lit, x).unwrap();
        assert_eq!(t.resolve(lit), Ok(Ty::F32));
        let alone = t.fresh(Class::Float);
        assert_eq!(t.resolve(alone), Err(Reason::F64));
        let (int, any) = (t.fresh(Class::Int), t.fresh(Class::Any));
        t.unify(any, int).unwrap();
        assert_eq!(t.resolve(any), Ok(Ty::I32));
        let (u, f) = (t.known(Ty::Usize), t.fresh(Class::Float));
        assert_eq!(t.unify(u, f), Err(Reason::Type));
        let open = t.fresh(Class::Any);
        assert_eq!(t.resolve(open), Err(Reason::Type));
        assert_eq!(Ty::of_name("f64"), Err(Reason::F64));
        assert_eq!(Ty::of_name("u64"), Err(Reason::Size));
        assert_eq!(Ty::of_name("Vec3"), Ok(None));
    }
}
