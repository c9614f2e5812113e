//! ndarray's arrays and views as the macro recognises them in a signature: by the last
//! segment of a parameter's type path (`Array2`, `ndarray::ArrayView1`, `ArrayViewMutD`,
//! `ArrayBase`, `CowArray`, …), behind any number of references. The one list of those
//! names is [`NAMES`]; the default `size` (`crate::size`), `verify` (`crate::verify`) and
//! the wrapper's copies of written arrays (`crate::wrapper`) read what [`of`] answers.
//!
//! The generated code names no ndarray type: it calls methods on the user's values
//! (`len()`, `shape()`, `iter()`, `to_owned()`, `view_mut()`, `assign()`), so it compiles
//! against whichever ndarray version the user's crate depends on (0.16 and 0.17 are
//! tested). A type of the user's own that bears one of these names is taken for ndarray's.

use syn::{Type, TypePath};

/// What an array parameter's storage lets a kernel do with its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Storage {
    /// `Array`, `Array0`–`Array6`, `ArrayD`: owns its elements.
    Owned,
    /// `ArcArray`, `ArcArray1`–`ArcArray6`, `ArcArrayD`: shares them, copied on write.
    Shared,
    /// `ArrayView`, `ArrayView0`–`ArrayView6`, `ArrayViewD`: reads them.
    View,
    /// `ArrayViewMut`, `ArrayViewMut0`–`ArrayViewMut6`, `ArrayViewMutD`: writes them.
    ViewMut,
    /// `ArrayRef`, `ArrayRef0`–`ArrayRef6`, `ArrayRefD` (ndarray 0.17): behind a reference.
    Ref,
    /// `CowArray`: a view or an owned array.
    Cow,
    /// `ArrayBase<S, D>`: whatever its storage parameter says.
    Base,
}

/// How the parameter holds the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holding {
    /// By value (`a: ArrayView2<f32>`).
    Value,
    /// Behind shared references only (`a: &Array2<f32>`).
    Shared,
    /// Behind a `&mut` (`out: &mut Array2<f32>`).
    Mut,
}

/// An array parameter's type, as far as the signature tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArrayParam {
    pub storage: Storage,
    pub holding: Holding,
}

/// How the wrapper gives the Scalar variant a copy of an array the kernel writes, so that
/// `verify` can compare the two variants' writes (see `crate::verify`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Copied {
    /// `&mut Array*`, `&mut ArrayRef*`: `let mut c = out.to_owned();`, passed as `&mut c`.
    Owned,
    /// `&mut ArcArray*`: `let mut c = out.clone();`, passed as `&mut c` (the first write copies).
    Shared,
    /// `ArrayViewMut*` by value: `let mut c = out.to_owned();`, passed as `c.view_mut()`.
    View,
    /// `&mut ArrayViewMut*`: `let mut c = out.to_owned(); let mut v = c.view_mut();`, passed as `&mut v`.
    ViewRef,
}

/// Every type name [`of`] recognises, by storage: the prefixes each take the dimension
/// suffixes `""`, `0`–`6` and `D` (`ArcArray` has no `0`), then the names that take none.
pub(crate) const NAMES: &[(Storage, &[&str])] = &[
    (Storage::Owned, &["Array", "Array0", "Array1", "Array2", "Array3", "Array4", "Array5", "Array6", "ArrayD"]),
    (
        Storage::Shared,
        &["ArcArray", "ArcArray1", "ArcArray2", "ArcArray3", "ArcArray4", "ArcArray5", "ArcArray6", "ArcArrayD"],
    ),
    (
        Storage::View,
        &[
            "ArrayView",
            "ArrayView0",
            "ArrayView1",
            "ArrayView2",
            "ArrayView3",
            "ArrayView4",
            "ArrayView5",
            "ArrayView6",
            "ArrayViewD",
        ],
    ),
    (
        Storage::ViewMut,
        &[
            "ArrayViewMut",
            "ArrayViewMut0",
            "ArrayViewMut1",
            "ArrayViewMut2",
            "ArrayViewMut3",
            "ArrayViewMut4",
            "ArrayViewMut5",
            "ArrayViewMut6",
            "ArrayViewMutD",
        ],
    ),
    (
        Storage::Ref,
        &[
            "ArrayRef",
            "ArrayRef0",
            "ArrayRef1",
            "ArrayRef2",
            "ArrayRef3",
            "ArrayRef4",
            "ArrayRef5",
            "ArrayRef6",
            "ArrayRefD",
        ],
    ),
    (Storage::Cow, &["CowArray"]),
    (Storage::Base, &["ArrayBase"]),
];

/// The array `ty` holds, if it is one: a recognised name (see [`NAMES`]) by value or
/// behind references (also in parentheses or an invisible group). `ArrayRef*` counts
/// only behind a reference (by value it is unsized).
pub(crate) fn of(ty: &Type) -> Option<ArrayParam> {
    match ty {
        Type::Reference(r) => {
            let inner = of_held(&r.elem)?;
            // Written only through `&mut`s all the way down: `&mut &Array2` and `&&mut Array2`
            // cannot write the array.
            let holding = match (r.mutability.is_some(), inner.holding) {
                (true, Holding::Value | Holding::Mut) => Holding::Mut,
                _ => Holding::Shared,
            };
            Some(ArrayParam { storage: inner.storage, holding })
        }
        Type::Paren(p) => of(&p.elem),
        Type::Group(g) => of(&g.elem),
        Type::Path(p) => {
            storage(p).filter(|s| *s != Storage::Ref).map(|storage| ArrayParam { storage, holding: Holding::Value })
        }
        _ => None,
    }
}

/// [`of`] for a type behind a reference: `ArrayRef*` is allowed there.
fn of_held(ty: &Type) -> Option<ArrayParam> {
    match ty {
        Type::Path(p) => storage(p).map(|storage| ArrayParam { storage, holding: Holding::Value }),
        Type::Paren(p) => of_held(&p.elem),
        Type::Group(g) => of_held(&g.elem),
        other => of(other),
    }
}

/// The storage a path's last segment names, if it is one of [`NAMES`].
fn storage(p: &TypePath) -> Option<Storage> {
    if p.qself.is_some() {
        return None;
    }
    let last = p.path.segments.last()?.ident.to_string();
    NAMES.iter().find(|(_, names)| names.contains(&last.as_str())).map(|(storage, _)| *storage)
}

/// The element type and the number of axes of an array type [`of`] recognises, when its
/// type says both: `Array2<f32>`, `&ArrayView1<'_, u32>`, `ArrayViewMut<'_, f64, Ix2>`
/// (`Ix1`/`Ix2`/`IxN` by their last segment), behind any references. `None` for
/// `ArrayBase<S, D>`, `CowArray`, `ArrayD` and a dimension given by a parameter.
pub(crate) fn elem_and_axes(ty: &Type) -> Option<(Type, usize)> {
    match ty {
        Type::Reference(r) => elem_and_axes(&r.elem),
        Type::Paren(p) => elem_and_axes(&p.elem),
        Type::Group(g) => elem_and_axes(&g.elem),
        Type::Path(p) => {
            if matches!(storage(p)?, Storage::Base | Storage::Cow) {
                return None;
            }
            let last = p.path.segments.last()?;
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
            let mut types = args.args.iter().filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            });
            let elem = types.next()?.clone();
            let name = last.ident.to_string();
            let axes = match name.chars().last()? {
                d @ '0'..='6' => d.to_digit(10)? as usize,
                'D' => return None,
                // `Array<A, D>`, `ArrayView<'a, A, D>`, …: the dimension is the next argument.
                _ => match types.next()? {
                    Type::Path(d) => match d.path.segments.last()?.ident.to_string().as_str() {
                        "Ix0" => 0,
                        "Ix1" => 1,
                        "Ix2" => 2,
                        "Ix3" => 3,
                        _ => return None,
                    },
                    _ => return None,
                },
            };
            Some((elem, axes))
        }
        _ => None,
    }
}

impl ArrayParam {
    /// Whether the kernel may write the array's elements through this parameter.
    pub(crate) fn written(self) -> bool {
        match (self.storage, self.holding) {
            (Storage::ViewMut, Holding::Value | Holding::Mut) => true,
            (_, Holding::Mut) => !matches!(self.storage, Storage::View | Storage::Cow),
            _ => false,
        }
    }

    /// How the wrapper copies a written array for the Scalar variant under `verify`; `None`
    /// when it cannot (an `ArrayBase<S, D>`, whose storage it cannot name; a `CowArray`).
    pub(crate) fn copied(self) -> Option<Copied> {
        match (self.storage, self.holding) {
            (Storage::Owned | Storage::Ref, Holding::Mut) => Some(Copied::Owned),
            (Storage::Shared, Holding::Mut) => Some(Copied::Shared),
            (Storage::ViewMut, Holding::Value) => Some(Copied::View),
            (Storage::ViewMut, Holding::Mut) => Some(Copied::ViewRef),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(ty: &str) -> Option<ArrayParam> {
        of(&syn::parse_str(ty).unwrap())
    }

    #[test]
    fn recognises_arrays_and_views_of_any_dimension_by_value_or_reference() {
        let value = |storage| Some(ArrayParam { storage, holding: Holding::Value });
        let shared = |storage| Some(ArrayParam { storage, holding: Holding::Shared });
        let written = |storage| Some(ArrayParam { storage, holding: Holding::Mut });
        assert_eq!(param("ArrayView2<'_, f32>"), value(Storage::View));
        assert_eq!(param("ndarray::ArrayView<'a, f64, IxDyn>"), value(Storage::View));
        assert_eq!(param("ArrayViewMut1<f32>"), value(Storage::ViewMut));
        assert_eq!(param("&Array2<f32>"), shared(Storage::Owned));
        assert_eq!(param("&&ArrayD<f32>"), shared(Storage::Owned));
        assert_eq!(param("&mut Array3<f64>"), written(Storage::Owned));
        assert_eq!(param("&ArrayBase<S, Ix2>"), shared(Storage::Base));
        assert_eq!(param("&mut ArrayRef2<f32>"), written(Storage::Ref));
        assert_eq!(param("CowArray<'_, f32, Ix1>"), value(Storage::Cow));
        assert_eq!(param("(&ArcArray2<f32>)"), shared(Storage::Shared));
        assert_eq!(param("Array2<f32>"), value(Storage::Owned));
        for not in ["ArrayRef2<f32>", "&[f32]", "Vec<f32>", "Arrays", "&LayoutRef2<f32>", "<T as Tr>::Array2", "usize"]
        {
            assert_eq!(param(not), None, "{not}");
        }
    }

    #[test]
    fn every_listed_name_is_recognised_and_the_list_has_each_dimension() {
        for (storage, names) in NAMES {
            for name in names.iter() {
                assert_eq!(param(&format!("&{name}<f32>")).map(|p| p.storage), Some(*storage), "{name}");
            }
        }
        let owned = NAMES[0].1;
        assert_eq!(owned.len(), 9, "Array, Array0..=Array6, ArrayD");
    }

    #[test]
    fn element_types_and_axes_where_the_type_says_them() {
        let read = |ty: &str| {
            elem_and_axes(&syn::parse_str(ty).unwrap())
                .map(|(e, n)| (quote::ToTokens::to_token_stream(&e).to_string(), n))
        };
        assert_eq!(read("ArrayView2<'_, f32>"), Some(("f32".into(), 2)));
        assert_eq!(read("&Array1<u32>"), Some(("u32".into(), 1)));
        assert_eq!(read("&mut ndarray::ArrayViewMut<'a, f64, ndarray::Ix2>"), Some(("f64".into(), 2)));
        assert_eq!(read("Array<T, Ix1>"), Some(("T".into(), 1)));
        for not in ["ArrayViewD<'_, f32>", "ArrayBase<S, Ix2>", "CowArray<'_, f32, Ix1>", "Array<f32, D>", "&[f32]"] {
            assert_eq!(read(not), None, "{not}");
        }
    }

    #[test]
    fn written_arrays_and_how_they_are_copied() {
        let copied = |ty: &str| param(ty).filter(|p| p.written()).map(|p| p.copied());
        assert_eq!(copied("&mut Array2<f32>"), Some(Some(Copied::Owned)));
        assert_eq!(copied("&mut ArrayRef1<f32>"), Some(Some(Copied::Owned)));
        assert_eq!(copied("&mut ArcArray2<f32>"), Some(Some(Copied::Shared)));
        assert_eq!(copied("ArrayViewMut2<'_, f32>"), Some(Some(Copied::View)));
        assert_eq!(copied("&mut ArrayViewMutD<f32>"), Some(Some(Copied::ViewRef)));
        assert_eq!(copied("&mut ArrayBase<S, Ix2>"), Some(None), "written, but its storage cannot be named");
        for read in [
            "&Array2<f32>",
            "ArrayView2<f32>",
            "&mut ArrayView2<f32>",
            "&mut &Array2<f32>",
            "&&mut Array2<f32>",
            "Array2<f32>",
        ] {
            assert_eq!(copied(read), None, "{read} is not written");
        }
    }
}
