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

use syn::{GenericArgument, PathArguments, ReturnType, Signature, Type};

use crate::args::Args;
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

const NUMBERS: [&str; 14] =
    ["f32", "f64", "usize", "isize", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "bool", "char"];

/// A shared reference to anything without `impl Trait`, or a primitive number.
fn plain_input(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => r.mutability.is_none() && !mentions_impl(&r.elem),
        Type::Path(p) => p.qself.is_none() && p.path.get_ident().is_some_and(|i| NUMBERS.contains(&&*i.to_string())),
        _ => false,
    }
}

fn mentions_impl(ty: &Type) -> bool {
    quote::ToTokens::to_token_stream(ty).to_string().contains("impl")
}

/// `f32`, `f64`, `Vec<f32|f64>`, `[f32|f64; N]`.
fn plain_result(ty: &Type) -> bool {
    let float = |ty: &Type| matches!(ty, Type::Path(p) if p.qself.is_none() && (p.path.is_ident("f32") || p.path.is_ident("f64")));
    match ty {
        Type::Array(a) => float(&a.elem),
        Type::Path(p) if p.qself.is_none() => {
            if float(ty) {
                return true;
            }
            let Some(last) = p.path.segments.last() else { return false };
            if last.ident != "Vec" {
                return false;
            }
            match &last.arguments {
                PathArguments::AngleBracketed(a) if a.args.len() == 1 => {
                    matches!(a.args.first(), Some(GenericArgument::Type(t)) if float(t))
                }
                _ => false,
            }
        }
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
