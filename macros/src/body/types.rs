//! What a type is, as the model knows it: the vocabulary every analysis and
//! rewrite speaks ([`Ty`], [`Value`], [`Elem`], [`Prim`]), and the one reading
//! of a declared type ([`Ty::of_type`]), which parameters, `let x: T`, casts,
//! turbofishes and literal suffixes all go through.
//!
//! A proc macro sees tokens, not types: a name's type is known where its
//! declaration names it or its initialiser shows it (`crate::body::typer`).
//! What is not known is [`Ty::Unknown`]. A rewrite that needs to be sure (a
//! float to regroup, a slice to cut) asks for it; one that may guess and check
//! at run time (the GPU's) adds its guess on top of these answers.
//!
//! To teach the model a new parameter type (an ndarray view), add its reading
//! to [`Ty::of_type`] (and, if it is walked or indexed in a new way, to
//! `crate::body::walk` and `crate::body::typer`): every rewrite then reads it.

use syn::{GenericArgument, PathArguments, Type};

/// The width of a float.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Width {
    F32,
    F64,
    /// An unsuffixed float literal: `f32` or `f64`, as inference decides.
    Any,
}

impl Width {
    pub(crate) fn unify(self, other: Width) -> Option<Width> {
        match (self, other) {
            (Width::Any, w) | (w, Width::Any) => Some(w),
            (a, b) => (a == b).then_some(a),
        }
    }

    pub(crate) fn of_name(name: &str) -> Option<Width> {
        match name {
            "f32" => Some(Width::F32),
            "f64" => Some(Width::F64),
            _ => None,
        }
    }

    /// The type's name, when known.
    pub(crate) fn name(self) -> Option<&'static str> {
        match self {
            Width::F32 => Some("f32"),
            Width::F64 => Some("f64"),
            Width::Any => None,
        }
    }
}

/// Declares [`IntTy`] from one list of variants and names.
macro_rules! integers {
    ($($variant:ident = $name:literal,)*) => {
        /// A primitive integer type, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum IntTy {
            $($variant,)*
        }

        impl IntTy {
            /// Every integer type.
            pub(crate) const ALL: &'static [IntTy] = &[$(IntTy::$variant),*];

            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(IntTy::$variant => $name,)*
                }
            }
        }
    };
}

integers! {
    U8 = "u8",
    U16 = "u16",
    U32 = "u32",
    U64 = "u64",
    U128 = "u128",
    Usize = "usize",
    I8 = "i8",
    I16 = "i16",
    I32 = "i32",
    I64 = "i64",
    I128 = "i128",
    Isize = "isize",
}

impl IntTy {
    pub(crate) fn of_name(name: &str) -> Option<IntTy> {
        IntTy::ALL.iter().copied().find(|t| t.name() == name)
    }
}

/// An integer's type, as far as the analyses need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Int {
    /// `usize`: what indices, lengths and loop bounds are.
    Usize,
    /// Another integer type.
    Other(IntTy),
    /// An unsuffixed integer literal: any integer, as inference decides.
    Lit,
}

impl Int {
    pub(crate) fn of(t: IntTy) -> Int {
        match t {
            IntTy::Usize => Int::Usize,
            t => Int::Other(t),
        }
    }

    pub(crate) fn unify(self, other: Int) -> Option<Int> {
        match (self, other) {
            (Int::Lit, k) | (k, Int::Lit) => Some(k),
            (a, b) => (a == b).then_some(a),
        }
    }

    /// The type's name, when known.
    pub(crate) fn name(self) -> Option<&'static str> {
        match self {
            Int::Usize => Some("usize"),
            Int::Other(t) => Some(t.name()),
            Int::Lit => None,
        }
    }
}

/// A primitive scalar type, by name: what a cast, a literal's suffix and a declared
/// scalar can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prim {
    /// `f32` or `f64`.
    Float(Width),
    Int(IntTy),
    Bool,
}

impl Prim {
    /// The primitive a name like `f32` names (`bool`, the twelve integers, the two floats).
    pub(crate) fn of_name(name: &str) -> Option<Prim> {
        match name {
            "bool" => Some(Prim::Bool),
            n => Width::of_name(n).map(Prim::Float).or_else(|| IntTy::of_name(n).map(Prim::Int)),
        }
    }

    /// Its value's type.
    pub(crate) fn ty(self) -> Ty {
        match self {
            Prim::Float(w) => Ty::Float(w),
            Prim::Int(t) => Ty::Int(Int::of(t)),
            Prim::Bool => Ty::Bool,
        }
    }
}

/// The elements of a slice-like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Elem {
    Float(Width),
    Int(Int),
    Bool,
    /// Anything else, or not known (a generic `T`, a user's type, `Vec::new()`'s).
    Other,
}

impl Elem {
    /// The element type of values of type `ty`.
    pub(crate) fn of(ty: Ty) -> Elem {
        match ty {
            Ty::Float(w) => Elem::Float(w),
            Ty::Int(k) => Elem::Int(k),
            Ty::Bool => Elem::Bool,
            _ => Elem::Other,
        }
    }

    /// The type of one element read by value (`x[i]`).
    pub(crate) fn ty(self) -> Ty {
        match self {
            Elem::Float(w) => Ty::Float(w),
            Elem::Int(k) => Ty::Int(k),
            Elem::Bool => Ty::Bool,
            Elem::Other => Ty::Unknown,
        }
    }

    /// The element type's name, where known.
    pub(crate) fn name(self) -> Option<&'static str> {
        match self {
            Elem::Float(w) => w.name(),
            Elem::Int(k) => k.name(),
            Elem::Bool => Some("bool"),
            Elem::Other => None,
        }
    }
}

/// How a slice-like is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Behind a shared reference (`&[T]`, `&Vec<T>`, `&[T; N]`): iterating it yields `&T`.
    Shared,
    /// Behind a `&mut` (`&mut [T]`, `&mut Vec<T>`).
    Mut,
    /// Owned: `Vec<T>`, `[T; N]`.
    Owned,
}

/// A value's type, as far as the model knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    /// `f32` or `f64`.
    Float(Width),
    /// `&f32` or `&f64`.
    FloatRef(Width),
    Int(Int),
    Bool,
    /// A slice-like: `[T]` behind a reference, `Vec<T>` (std's), `[T; N]`.
    Slice {
        elem: Elem,
        access: Access,
    },
    /// A reference to another primitive (`&i32`, `&mut f32`).
    PrimRef {
        prim: Prim,
        mutable: bool,
    },
    /// A `&mut` of anything else (`&mut Config`): whatever it points to may be written.
    MutRef,
    /// A declared type that is none of the above (a user's type, a generic `T`, `String`).
    Opaque,
    /// Not known.
    Unknown,
}

impl Ty {
    /// Whether the type is known to the typer as a value it computes with: a float, an
    /// integer, a `bool`, a `&f32`, a slice-like. (References to other primitives, `&mut`s
    /// and opaque types are known to be what they are, but not values it computes with.)
    pub(crate) fn is_known(self) -> bool {
        matches!(self, Ty::Float(_) | Ty::FloatRef(_) | Ty::Int(_) | Ty::Bool | Ty::Slice { .. })
    }

    /// A float or a reference to one: what arithmetic accepts.
    pub(crate) fn float_width(self) -> Option<Width> {
        match self {
            Ty::Float(w) | Ty::FloatRef(w) => Some(w),
            _ => None,
        }
    }

    /// A slice-like of floats: their width and how the slice is held.
    pub(crate) fn float_slice(self) -> Option<(Width, Access)> {
        match self {
            Ty::Slice { elem: Elem::Float(w), access } => Some((w, access)),
            _ => None,
        }
    }

    /// The type a declared type names: the one reading of a type every analysis makes.
    ///
    /// `Vec<T>` is std's: `Vec`, `std::vec::Vec` or `alloc::vec::Vec` (another path ending in
    /// `Vec` is a type of its own); a primitive is named by one identifier (`f32`, `u8`,
    /// `usize`, `bool`).
    pub(crate) fn of_type(ty: &Type) -> Ty {
        match ty {
            Type::Paren(p) => Ty::of_type(&p.elem),
            Type::Group(g) => Ty::of_type(&g.elem),
            Type::Path(p) if p.qself.is_none() => {
                if let Some(prim) = p.path.get_ident().and_then(|i| Prim::of_name(&i.to_string())) {
                    return prim.ty();
                }
                match vec_element(&p.path) {
                    Some(elem) => Ty::Slice { elem: Elem::of(Ty::of_type(elem)), access: Access::Owned },
                    None => Ty::Opaque,
                }
            }
            Type::Array(a) => Ty::Slice { elem: Elem::of(Ty::of_type(&a.elem)), access: Access::Owned },
            Type::Reference(r) => {
                let mutable = r.mutability.is_some();
                let access = if mutable { Access::Mut } else { Access::Shared };
                let to = match &*r.elem {
                    Type::Slice(s) => Ty::Slice { elem: Elem::of(Ty::of_type(&s.elem)), access: Access::Owned },
                    elem => Ty::of_type(elem),
                };
                match to {
                    Ty::Slice { elem, .. } => Ty::Slice { elem, access },
                    Ty::Float(w) if !mutable => Ty::FloatRef(w),
                    Ty::Float(w) => Ty::PrimRef { prim: Prim::Float(w), mutable },
                    Ty::Int(Int::Usize) => Ty::PrimRef { prim: Prim::Int(IntTy::Usize), mutable },
                    Ty::Int(Int::Other(t)) => Ty::PrimRef { prim: Prim::Int(t), mutable },
                    Ty::Bool => Ty::PrimRef { prim: Prim::Bool, mutable },
                    _ if mutable => Ty::MutRef,
                    _ => Ty::Opaque,
                }
            }
            _ => Ty::Opaque,
        }
    }
}

/// The element type of std's `Vec<T>` (`Vec`, `std::vec::Vec`, `alloc::vec::Vec`).
fn vec_element(path: &syn::Path) -> Option<&Type> {
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let std = matches!(
        names.iter().map(String::as_str).collect::<Vec<_>>().as_slice(),
        ["Vec"] | ["std" | "alloc", "vec", "Vec"]
    );
    let inner = path.segments.iter().rev().skip(1).all(|s| s.arguments.is_empty());
    match &path.segments.last()?.arguments {
        PathArguments::AngleBracketed(a) if std && inner && a.args.len() == 1 => match &a.args[0] {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// A value as a pattern can take it apart: one value, or a tuple of values
/// (`(x[i], y[i])`, `x.split_at(m)`, an `enumerate`d or `zip`ped item).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    One(Ty),
    Tuple(Vec<Value>),
}

impl Value {
    /// Whether every part's type is known ([`Ty::is_known`]).
    pub(crate) fn known(&self) -> bool {
        match self {
            Value::One(ty) => ty.is_known(),
            Value::Tuple(parts) => parts.iter().all(Value::known),
        }
    }

    /// The value a declared type names: a tuple type part by part.
    pub(crate) fn of_type(ty: &Type) -> Value {
        match ty {
            Type::Tuple(t) if !t.elems.is_empty() => Value::Tuple(t.elems.iter().map(Value::of_type).collect()),
            Type::Paren(p) => Value::of_type(&p.elem),
            ty => Value::One(Ty::of_type(ty)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn of(ty: Type) -> Ty {
        Ty::of_type(&ty)
    }

    #[test]
    fn declared_types() {
        let float = |access| Ty::Slice { elem: Elem::Float(Width::F32), access };
        assert_eq!(of(parse_quote!(&[f32])), float(Access::Shared));
        assert_eq!(of(parse_quote!(&mut [f32])), float(Access::Mut));
        assert_eq!(of(parse_quote!([f32; 4])), float(Access::Owned));
        assert_eq!(of(parse_quote!(&Vec<f64>)), Ty::Slice { elem: Elem::Float(Width::F64), access: Access::Shared });
        assert_eq!(of(parse_quote!(std::vec::Vec<f32>)), float(Access::Owned));
        assert_eq!(
            of(parse_quote!(&mut alloc::vec::Vec<u32>)),
            Ty::Slice { elem: Elem::Int(Int::Other(IntTy::U32)), access: Access::Mut }
        );
        assert_eq!(of(parse_quote!(&[Foo])), Ty::Slice { elem: Elem::Other, access: Access::Shared });
        assert_eq!(of(parse_quote!(&f32)), Ty::FloatRef(Width::F32));
        assert_eq!(of(parse_quote!(&mut f32)), Ty::PrimRef { prim: Prim::Float(Width::F32), mutable: true });
        assert_eq!(of(parse_quote!(&i32)), Ty::PrimRef { prim: Prim::Int(IntTy::I32), mutable: false });
        assert_eq!(of(parse_quote!(&mut Config)), Ty::MutRef);
        assert_eq!(of(parse_quote!(&Config)), Ty::Opaque);
        assert_eq!(of(parse_quote!(usize)), Ty::Int(Int::Usize));
        assert_eq!(of(parse_quote!(i128)), Ty::Int(Int::Other(IntTy::I128)));
        assert_eq!(of(parse_quote!(bool)), Ty::Bool);
        assert_eq!(of(parse_quote!(T)), Ty::Opaque);
        assert_eq!(of(parse_quote!((f32))), Ty::Float(Width::F32));
        // One list of the twelve integer types.
        assert_eq!(IntTy::ALL.len(), 12);
        assert!(IntTy::ALL.iter().all(|t| Prim::of_name(t.name()) == Some(Prim::Int(*t))));
        assert_eq!(Prim::of_name("char"), None);
    }

    #[test]
    fn a_vec_is_std_s() {
        // Disagreement resolved: another path ending in `Vec` (a user's `my::Vec<f32>`) was a
        // float slice to the SIMD rewrite and to the GPU's, and a type of its own to the split.
        // It is a type of its own: its indexing, iteration and length may be anything.
        for ty in [parse_quote!(my::Vec<f32>), parse_quote!(&mut smallvec::Vec<f32>), parse_quote!(&Vec)] {
            assert!(!matches!(of(ty), Ty::Slice { .. }));
        }
        assert!(matches!(of(parse_quote!(&::std::vec::Vec<f32>)), Ty::Slice { .. }));
    }
}
