//! Which kernels `verify` applies to, decided from the signature.
//!
//! `verify` calls the Scalar variant and the routed variant on the same inputs,
//! so it needs parameters it can pass twice and a result it can compare:
//!
//! - With `verify = true` the kernel is checked in every mode. A slice or other
//!   value written through `&mut` is a compile error (the variants would both write
//!   it), and so is a kernel that returns nothing and writes no array. Every other
//!   parameter must be `Copy` and the result must implement `Comparable` (or be an
//!   ndarray array); the compiler says so where they do not.
//! - An ndarray array the kernel writes (`&mut Array2<f32>`, `ArrayViewMut2<f32>`,
//!   `&mut ArrayViewMut1<f32>`, `&mut ArcArray2<f32>`, `&mut ArrayRef2<f32>`; see
//!   `crate::arrays`) is an output `verify` compares: the Scalar variant writes a copy
//!   of it (`to_owned()`, made before either variant runs, so it starts from what the
//!   caller passed), the chosen variant writes the caller's array, and the two are
//!   compared element by element in logical order, whatever their layouts. Where they
//!   disagree the caller's array gets the Scalar variant's elements (`assign`), as the
//!   caller gets its result. An `&mut ArrayBase<S, D>` or `&mut CowArray` cannot be
//!   copied (the wrapper cannot name its storage): an error with `verify = true`.
//!   An array result (`-> Array2<f32>`) is compared the same way.
//! - Without the key, the kernel is checked under `ADAPTIVE_KERNEL_MODE=verify`
//!   when its signature is plainly verifiable: every parameter a shared
//!   reference, an `ArrayView*` (which is `Copy`), a primitive number or `bool`, or
//!   an array of `f32` or `f64` it writes (as above); the result `f32`, `f64`, or a
//!   `Vec`, array or ndarray `Array*` of them, or nothing when it writes an array; no
//!   generics. Other kernels are routed as in `learn`.
//! - `verify = false` opts a kernel out of the mode.

use syn::{GenericArgument, PathArguments, ReturnType, Signature, Type};

use crate::args::Args;
use crate::arrays::{self, Copied, Storage};
use crate::body::{self, Access, Elem, Width};
use crate::errors::Errors;
use crate::signature::{Param, Shape};

/// Whether and when a kernel compares its variants with Scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verification {
    /// Never: no code is generated for it.
    Off,
    /// Under `ADAPTIVE_KERNEL_MODE=verify`.
    InVerifyMode,
    /// In every mode (`verify = true`).
    Always,
}

/// Decides the kernel's [`Verification`], recording an error for each `&mut`
/// parameter (and a missing result) when `verify = true` asks for it.
pub(crate) fn plan(args: &Args, sig: &Signature, params: &[Param], errors: &mut Errors) -> Verification {
    if args.verify == Some(true) {
        for p in params {
            let array = arrays::of(&p.ty).filter(|a| a.written());
            match (array, &p.ty) {
                (Some(a), _) if a.copied().is_none() => errors.push(syn::Error::new_spanned(
                    &p.ty,
                    format!(
                        "`verify` gives the Scalar variant a copy of each array the kernel writes, but cannot \
                         copy `{}`: its storage is not named; take `&mut Array2<T>`, `ArrayViewMut2<T>` (any \
                         dimension) or `&mut ArrayRef2<T>` instead, or remove `verify`",
                        p.ident
                    ),
                )),
                (Some(_), _) => {}
                (None, Type::Reference(r)) if r.mutability.is_some() => errors.push(syn::Error::new_spanned(
                    r,
                    format!(
                        "`verify` runs the Scalar variant and the chosen one on the same inputs, but `{}` is \
                         written through `&mut`: both would write it; return the result instead of writing \
                         it (or write an ndarray array, which `verify` copies), or remove `verify`",
                        p.ident
                    ),
                )),
                (None, _) => {}
            }
        }
        if matches!(sig.output, ReturnType::Default) && outputs(params).is_empty() {
            errors.push(syn::Error::new(
                sig.ident.span(),
                format!(
                    "`verify` compares each variant's result with the Scalar variant's, but `{}` returns nothing; \
                     return the result (e.g. `-> Vec<f32>`), or remove `verify`",
                    sig.ident
                ),
            ));
        }
        return Verification::Always;
    }
    let writes_arrays = !outputs(params).is_empty();
    let plain = args.verify.is_none()
        && sig.generics.params.is_empty()
        && sig.asyncness.is_none()
        && params.iter().all(|p| plain_input(&p.ty) || float_output(&p.ty))
        && match &sig.output {
            ReturnType::Default => writes_arrays,
            ReturnType::Type(_, ty) => plain_result(ty),
        };
    if plain {
        Verification::InVerifyMode
    } else {
        Verification::Off
    }
}

/// A shared reference to anything without `impl Trait`, a primitive number, `bool` or `char`
/// (the model's reading of the type, `crate::body::Ty::of_type`), or an `ArrayView*` of a
/// fixed dimension (`Copy`, so it can be passed to two variants; a view of dynamic
/// dimension, `ArrayViewD`, is not).
fn plain_input(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => r.mutability.is_none() && !mentions_impl(&r.elem),
        Type::Path(p) if arrays::of(ty).is_some_and(|a| a.storage == Storage::View) => fixed_dimension(p),
        ty => match body::Ty::of_type(ty) {
            body::Ty::Float(_) | body::Ty::Int(_) | body::Ty::Bool => true,
            _ => matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("char")),
        },
    }
}

/// Whether a view's path names a fixed dimension: `ArrayView0`–`ArrayView6`, or
/// `ArrayView<'a, T, Ix0>`–`Ix6` (whose dimension types are `Copy`).
fn fixed_dimension(p: &syn::TypePath) -> bool {
    const FIXED: [&str; 7] = ["Ix0", "Ix1", "Ix2", "Ix3", "Ix4", "Ix5", "Ix6"];
    let Some(last) = p.path.segments.last() else { return false };
    let name = last.ident.to_string();
    if name.strip_prefix("ArrayView").is_some_and(|d| d.len() == 1 && d.as_bytes()[0].is_ascii_digit()) {
        return true;
    }
    let PathArguments::AngleBracketed(a) = &last.arguments else { return false };
    let dimension =
        a.args.iter().filter_map(|arg| if let GenericArgument::Type(t) = arg { Some(t) } else { None }).nth(1);
    matches!(dimension, Some(Type::Path(d)) if d.path.segments.last().is_some_and(|s| FIXED.contains(&&*s.ident.to_string())))
}

/// An ndarray array of `f32` or `f64` the kernel writes, which the wrapper can copy.
fn float_output(ty: &Type) -> bool {
    arrays::of(ty).is_some_and(|a| a.written() && a.copied().is_some()) && float_elements(ty)
}

/// Whether the first type argument of `ty`'s path (behind references) is `f32` or `f64`:
/// an array's element type (`Array2<f32>`, `ArrayViewMut<'a, f64, Ix2>`).
fn float_elements(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => float_elements(&r.elem),
        Type::Paren(p) => float_elements(&p.elem),
        Type::Group(g) => float_elements(&g.elem),
        Type::Path(p) => p.path.segments.last().is_some_and(|last| match &last.arguments {
            PathArguments::AngleBracketed(a) => {
                a.args.iter().find_map(|arg| match arg {
                    GenericArgument::Type(t) => Some(is_float(t)),
                    _ => None,
                }) == Some(true)
            }
            _ => false,
        }),
        _ => false,
    }
}

fn is_float(ty: &Type) -> bool {
    matches!(body::Ty::of_type(ty), body::Ty::Float(_))
}

/// The kernel's parameters that are arrays it writes and the wrapper can copy, with how:
/// what `verify` compares besides the result.
pub(crate) fn outputs(params: &[Param]) -> Vec<(&Param, Copied)> {
    params
        .iter()
        .filter_map(|p| {
            let array = arrays::of(&p.ty).filter(|a| a.written())?;
            Some((p, array.copied()?))
        })
        .collect()
}

/// Whether a result of type `ty` is an owned ndarray array (`Array2<f32>`), which the
/// wrapper compares element by element rather than through `Comparable`.
pub(crate) fn array_result(ty: &Type) -> bool {
    arrays::of(ty).is_some_and(|a| a.storage == Storage::Owned && a.holding == arrays::Holding::Value)
}

fn mentions_impl(ty: &Type) -> bool {
    quote::ToTokens::to_token_stream(ty).to_string().contains("impl")
}

/// `f32`, `f64`, `Vec<f32|f64>` (std's), `[f32|f64; N]`: the model's reading of the type
/// (`crate::body::Ty::of_type`); or an ndarray `Array*<f32|f64>`.
fn plain_result(ty: &Type) -> bool {
    if array_result(ty) {
        return float_elements(ty);
    }
    let float = |w: Width| w != Width::Any;
    match body::Ty::of_type(ty) {
        body::Ty::Float(w) => float(w),
        body::Ty::Slice { elem: Elem::Float(w), access: Access::Owned } => float(w),
        _ => false,
    }
}

/// Methods and associated functions do not verify (their variants are closures
/// inside the function, with no Scalar variant to call separately): `verify =
/// true` on one is an error, and verify mode leaves them unchecked.
pub(crate) fn for_shape(plan: Verification, shape: Shape, sig: &Signature, errors: &mut Errors) -> Verification {
    match (shape, plan) {
        (Shape::Free, plan) => plan,
        (Shape::InImpl, Verification::Always) => {
            errors.push(syn::Error::new(
                sig.ident.span(),
                format!(
                    "`verify` is not supported on methods and associated functions yet (`{}`); move the \
                     computation into a free function with `verify` and call it from the method, or remove `verify`",
                    sig.ident
                ),
            ));
            Verification::Off
        }
        (Shape::InImpl, _) => Verification::Off,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::TokenStream;
    use quote::quote;
    use syn::parse_quote;

    #[test]
    fn plainly_verifiable_results_are_std_s() {
        for ty in [parse_quote!(f32), parse_quote!(Vec<f64>), parse_quote!(std::vec::Vec<f32>), parse_quote!([f32; 4])]
        {
            assert!(plain_result(&ty));
        }
        // Disagreement resolved: any path ending in `Vec` was a vector here, whose `Comparable` the
        // generated comparison then required (a user's `own::Vec<f32>` result did not compile).
        for ty in [parse_quote!(own::Vec<f32>), parse_quote!(Vec<u8>), parse_quote!(&[f32])] {
            assert!(!plain_result(&ty));
        }
        for ty in [parse_quote!(u128), parse_quote!(char), parse_quote!(&Config)] {
            assert!(plain_input(&ty));
        }
        assert!(!plain_input(&parse_quote!(&mut [f32])));
        assert!(!plain_input(&parse_quote!(String)));
    }

    /// The plan for `item` under `#[adaptive_kernel(args)]`, and its errors' messages.
    fn plan_of(args: TokenStream, item: TokenStream) -> (Verification, Vec<String>) {
        let mut errors = Errors::new();
        let args = Args::parse(args, &mut errors);
        let f: syn::ItemFn = syn::parse2(item).unwrap();
        let params = crate::signature::check(&f.sig).unwrap();
        let plan = plan(&args, &f.sig, &params, &mut errors);
        let messages = errors.finish().err().map(|e| e.into_iter().map(|e| e.to_string()).collect());
        (plan, messages.unwrap_or_default())
    }

    #[test]
    fn kernels_writing_float_arrays_verify_in_verify_mode() {
        let low = quote!(complexity = "Low");
        for item in [
            quote!(
                fn k(a: ArrayView2<'_, f32>, out: &mut Array2<f32>) {}
            ),
            quote!(
                fn k(a: &Array2<f64>, out: ArrayViewMut2<'_, f64>, s: f64) {}
            ),
            quote!(
                fn k(a: &ArrayRef1<f32>, out: &mut ArrayRef1<f32>) {}
            ),
            quote!(
                fn k(a: &ArrayD<f32>) -> Array1<f32> {}
            ),
            quote!(
                fn k(a: ArrayView<'_, f32, Ix3>, out: &mut ArrayViewMut1<'_, f32>) -> f32 {}
            ),
            quote!(
                fn k(a: ArrayView1<f32>, b: ndarray::ArrayView<f32, ndarray::Ix2>) -> f32 {}
            ),
        ] {
            assert_eq!(plan_of(low.clone(), item.clone()), (Verification::InVerifyMode, vec![]), "{item}");
        }
        for item in [
            // Nothing returned, nothing written; a slice written; integer elements; generic storage.
            quote!(
                fn k(a: &Array2<f32>) {}
            ),
            quote!(
                fn k(a: &Array2<f32>, out: &mut [f32]) {}
            ),
            quote!(
                fn k(a: &Array2<u8>, out: &mut Array2<u8>) {}
            ),
            quote!(
                fn k(out: &mut ArrayBase<S, Ix2>) {}
            ),
            quote!(
                fn k(a: CowArray<'_, f32, Ix1>) -> f32 {}
            ),
            quote!(
                fn k(a: Array2<f32>) -> Array2<u8> {}
            ),
            // Not `Copy`: a view of dynamic dimension.
            quote!(
                fn k(a: ArrayViewD<'_, f32>) -> f32 {}
            ),
            quote!(
                fn k(a: ArrayView<'_, f32, IxDyn>) -> f32 {}
            ),
        ] {
            assert_eq!(plan_of(low.clone(), item.clone()).0, Verification::Off, "{item}");
        }
    }

    #[test]
    fn verify_true_accepts_written_arrays_and_says_which_it_cannot_copy() {
        let on = quote!(complexity = "Low", verify);
        assert_eq!(
            plan_of(
                on.clone(),
                quote!(
                    fn k(out: &mut Array2<f32>) {}
                )
            ),
            (Verification::Always, vec![])
        );
        assert_eq!(
            plan_of(
                on.clone(),
                quote!(
                    fn k(out: ArrayViewMut1<f32>) {}
                )
            ),
            (Verification::Always, vec![])
        );
        let (_, errors) = plan_of(
            on.clone(),
            quote!(
                fn k(out: &mut ArrayBase<S, Ix2>, y: &mut [f32]) {}
            ),
        );
        assert_eq!(errors.len(), 3, "the two parameters, and nothing returned or copied: {errors:?}");
        assert!(
            errors[0].starts_with(
                "`verify` gives the Scalar variant a copy of each array the kernel writes, but cannot copy `out`"
            ),
            "{errors:?}"
        );
        assert!(errors[1].contains("`y` is written through `&mut`"), "{errors:?}");
        let (_, errors) = plan_of(
            on,
            quote!(
                fn k(a: &Array2<f32>) {}
            ),
        );
        assert!(errors[0].contains("returns nothing"), "{errors:?}");
    }
}
