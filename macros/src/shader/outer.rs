//! What the shader may assume of the names a loop captures from outside it:
//! the model's name table at the loop (`crate::body`) says what each is (a slice
//! written or only read, a `&mut`, a scalar of a type, anything else); this
//! translates that into what a shader holds ([`Held`]).
//!
//! Where the model knows a float or an integer but not which (`let k = 3;`,
//! `vec![0.0; n]`), the shader guesses (Rust's fallbacks: `i32`, and `f32` for a
//! slice's elements): the generated code checks every captured value's real type
//! at run time (`ops::gpu::loops::probe`) and runs the loop on the host when a
//! guess was wrong. That guess is this emitter's rule, on top of the model's answer.

use super::ir::Elem;
use super::ty::{Class, Ty};
use crate::body::{self, Env, Int, IntTy, Kind, Prim, Width};
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

/// The names in scope before one loop, as the shader holds them.
pub(super) struct Outer<'a> {
    env: &'a Env,
}

impl<'a> Outer<'a> {
    /// The names the model has in scope before the loop.
    pub(super) fn new(env: &'a Env) -> Outer<'a> {
        Outer { env }
    }

    /// What `name` holds before the loop, and its kind for the split; `None` when
    /// it is not bound there (a constant, a static, an item).
    pub(super) fn get(&self, name: &str) -> Option<(Held, Kind)> {
        let binding = self.env.binding(name)?;
        let kind = self.env.outer(name)?.kind;
        Some((held(binding.ty), kind))
    }
}

/// What a value of the model's type `ty` is to a shader.
fn held(ty: body::Ty) -> Held {
    match ty {
        body::Ty::Slice { elem, .. } => Held::Slice(elem_of(elem)),
        body::Ty::Float(Width::Any) => Held::Scalar(Class::Float),
        body::Ty::Int(Int::Lit) => Held::Scalar(Class::Int),
        body::Ty::Float(w) | body::Ty::FloatRef(w) => scalar(Prim::Float(w), false),
        body::Ty::Int(Int::Usize) => scalar(Prim::Int(IntTy::Usize), false),
        body::Ty::Int(Int::Other(t)) => scalar(Prim::Int(t), false),
        body::Ty::Bool => scalar(Prim::Bool, false),
        body::Ty::PrimRef { prim, mutable } => scalar(prim, mutable),
        body::Ty::MutRef | body::Ty::Opaque => Held::Opaque(Reason::Value),
        // Placed by its uses, checked at run time.
        body::Ty::Unknown => Held::Scalar(Class::Any),
    }
}

/// A scalar of the primitive `prim` (through a `&mut`: `mutable`).
fn scalar(prim: Prim, mutable: bool) -> Held {
    match Ty::of_prim(prim) {
        Ok(t) if !mutable => Held::Scalar(Class::Known(t)),
        Ok(_) => Held::Opaque(Reason::Value),
        Err(Reason::Type) => Held::Opaque(Reason::Value),
        Err(word) => Held::Opaque(word),
    }
}

/// A slice element type a shader holds; a float or an integer of a width not known is
/// guessed (`f32`, `i32`) and checked at run time.
fn elem_of(elem: body::Elem) -> Result<Elem, Reason> {
    let prim = match elem {
        body::Elem::Float(Width::Any) => return Ok(Elem::F32),
        body::Elem::Int(Int::Lit) => return Ok(Elem::I32),
        body::Elem::Float(w) => Prim::Float(w),
        body::Elem::Int(Int::Usize) => Prim::Int(IntTy::Usize),
        body::Elem::Int(Int::Other(t)) => Prim::Int(t),
        body::Elem::Bool | body::Elem::Other => return Err(Reason::Type),
    };
    match Ty::of_prim(prim)? {
        Ty::F32 => Ok(Elem::F32),
        Ty::I32 => Ok(Elem::I32),
        Ty::U32 => Ok(Elem::U32),
        Ty::Usize => Ok(Elem::Usize),
        Ty::Bool => Err(Reason::Type),
    }
}
