//! The default `size`: the total number of elements of the slice-like
//! parameters, the quantity the MoE thresholds are stated in. ndarray's arrays and
//! views count (`crate::arrays`): their `len()` is their element count, whatever their
//! dimension and layout.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Type;

use crate::arrays;
use crate::body::Ty;
use crate::signature::Param;

/// `0usize.saturating_add(a.len()).saturating_add(b.len())…` over the slice-like
/// parameters, or `None` when there are none.
///
/// Saturating because slices of zero-sized types may be `usize::MAX` long each.
pub(crate) fn default_size(params: &[Param]) -> Option<TokenStream> {
    let lens: Vec<_> =
        params.iter().filter(|p| is_slice_like(&p.ty) || arrays::of(&p.ty).is_some()).map(|p| &p.ident).collect();
    match lens.as_slice() {
        [] => None,
        [one] => Some(quote!(#one.len())),
        [first, rest @ ..] => Some(quote!(#first.len() #(.saturating_add(#rest.len()))*)),
    }
}

/// The types whose `.len()` counts elements: what the body model reads as a slice-like
/// ([`Ty::of_type`]): `&[T]`, `&mut [T]`, std's `Vec<T>` behind a reference or owned, `[T; N]`
/// and `&[T; N]` (also behind `&&`, parentheses or an invisible group, and with any lifetime).
/// A user's own type named `Vec` (`my::Vec<f32>`) is not one: its length may be anything,
/// or missing.
fn is_slice_like(ty: &Type) -> bool {
    matches!(Ty::of_type(ty), Ty::Slice { .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(names_and_types: &[(&str, &str)]) -> Vec<Param> {
        names_and_types
            .iter()
            .map(|(n, t)| Param { ident: syn::parse_str(n).unwrap(), ty: syn::parse_str(t).unwrap() })
            .collect()
    }

    #[test]
    fn counts_every_slice_like_parameter() {
        let ps = params(&[
            ("a", "&[f32]"),
            ("b", "&'a mut [f32]"),
            ("c", "&Vec<f64>"),
            ("d", "&mut std::vec::Vec<u8>"),
            ("e", "Vec<f32>"),
            ("f", "&[f32; 4]"),
            ("g", "[f32; 4]"),
            ("n", "usize"),
            ("s", "&str"),
            ("o", "Option<Vec<f32>>"),
        ]);
        let got = default_size(&ps).unwrap().to_string();
        let want = quote!(a
            .len()
            .saturating_add(b.len())
            .saturating_add(c.len())
            .saturating_add(d.len())
            .saturating_add(e.len())
            .saturating_add(f.len())
            .saturating_add(g.len()))
        .to_string();
        assert_eq!(got, want);
    }

    #[test]
    fn arrays_and_views_count_by_their_element_count() {
        let ps = params(&[
            ("a", "ArrayView2<'_, f32>"),
            ("n", "usize"),
            ("b", "&Array2<f32>"),
            ("c", "&mut ndarray::ArrayViewMutD<'a, f64>"),
            ("d", "&ArrayBase<S, Ix3>"),
            ("e", "ArrayView<'_, f32, IxDyn>"),
        ]);
        let got = default_size(&ps).unwrap().to_string();
        let want = quote!(a
            .len()
            .saturating_add(b.len())
            .saturating_add(c.len())
            .saturating_add(d.len())
            .saturating_add(e.len()))
        .to_string();
        assert_eq!(got, want);
        assert_eq!(default_size(&params(&[("out", "&mut Array1<f32>")])).unwrap().to_string(), "out . len ()");
        assert!(default_size(&params(&[("r", "ArrayRef2<f32>"), ("l", "&LayoutRef2<f32>")])).is_none());
    }

    #[test]
    fn one_slice_is_its_length_and_none_is_none() {
        assert_eq!(default_size(&params(&[("x", "&[f32]"), ("n", "usize")])).unwrap().to_string(), "x . len ()");
        assert!(default_size(&params(&[("n", "usize"), ("s", "&str"), ("b", "Box<[f32]>")])).is_none());
    }

    #[test]
    fn a_vec_is_std_s() {
        // Disagreement resolved: any path ending in `Vec` counted here, so a user's own
        // `my::Vec<f32>` without a `len()` gave a default size that did not compile; the body
        // model (and `verify`, and the three rewrites) read it as a type of its own.
        let ps =
            params(&[("v", "&my::Vec<f32>"), ("x", "&std::vec::Vec<f32>"), ("a", "&&[f32]"), ("w", "&mut Vec<u8>")]);
        assert_eq!(
            default_size(&ps).unwrap().to_string(),
            "x . len () . saturating_add (a . len ()) . saturating_add (w . len ())"
        );
        assert!(default_size(&params(&[("v", "&my::Vec<f32>"), ("n", "usize")])).is_none());
    }
}
