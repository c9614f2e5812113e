//! Which kernels `verify` applies to, decided from the signature.
//!
//! `verify` calls the Scalar variant and the routed variant on the same inputs,
//! so it needs parameters it can pass twice and a result it can compare:
//!
//! - With `verify = true` the kernel is checked in every mode. A parameter
//!   written through `&mut` is a compile error (the variants would both write
//!   it; copying outputs would hide what the caller sees), and so is a kernel
//!   that returns nothing. Every other parameter must be `Copy` and the result
//!   must implement `Comparable`; the compiler says so where they do not.
//! - Without the key, the kernel is checked under `ADAPTIVE_KERNEL_MODE=verify`
//!   when its signature is plainly verifiable: every parameter a shared
//!   reference or a primitive number or `bool`, the result `f32`, `f64`, or a
//!   `Vec` or array of them, no generics. Other kernels are routed as in `learn`.
//! - `verify = false` opts a kernel out of the mode.

use syn::{ReturnType, Signature, Type};

use crate::args::Args;
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
            if let Type::Reference(r) = &p.ty {
                if r.mutability.is_some() {
                    errors.push(syn::Error::new_spanned(
                        r,
                        format!(
                            "`verify` runs the Scalar variant and the chosen one on the same inputs, but `{}` is \
                             written through `&mut`: both would write it; return the result instead of writing \
                             it, or remove `verify`",
                            p.ident
                        ),
                    ));
                }
            }
        }
        if matches!(sig.output, ReturnType::Default) {
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
    let plain = args.verify.is_none()
        && sig.generics.params.is_empty()
        && sig.asyncness.is_none()
        && params.iter().all(|p| plain_input(&p.ty))
        && matches!(&sig.output, ReturnType::Type(_, ty) if plain_result(ty));
    if plain {
        Verification::InVerifyMode
    } else {
        Verification::Off
    }
}

/// A shared reference to anything without `impl Trait`, or a primitive number, `bool` or `char`.
fn plain_input(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => r.mutability.is_none() && !mentions_impl(&r.elem),
        ty => match body::Ty::of_type(ty) {
            body::Ty::Float(_) | body::Ty::Int(_) | body::Ty::Bool => true,
            _ => matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("char")),
        },
    }
}

fn mentions_impl(ty: &Type) -> bool {
    quote::ToTokens::to_token_stream(ty).to_string().contains("impl")
}

/// `f32`, `f64`, `Vec<f32|f64>` (std's), `[f32|f64; N]`: the model's reading of the type
/// (`crate::body::Ty::of_type`).
fn plain_result(ty: &Type) -> bool {
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
}
