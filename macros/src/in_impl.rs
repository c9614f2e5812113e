//! A method or associated function (a receiver or `Self` in it, an `impl` or
//! `trait` around it in its source file, or the `associated` key, see
//! `crate::signature::Shape`): the routed function with its variants and
//! routing handle inside its own body.
//!
//! ```text
//! #[attrs] #[inline] #vis fn k(&self, a: &[f32]) -> R {
//!     static __ADAPTIVE_FAMILY: KernelFamily = KernelFamily::new(KernelSpec { .. });
//!     let __adaptive_size: usize = SIZE;
//!     let __adaptive_route = __ADAPTIVE_FAMILY
//!         .get(|| format!("{}::k", type_name::<Self>()))   // this instantiation's kernel
//!         .route(__adaptive_size, || Work::estimate(..));
//!     match __adaptive_route.backend() {
//!         Backend::Scalar => __adaptive_route.run(move || { use ops_scalar as ops; BODY }),
//!         Backend::Simd => __adaptive_route.run(move || simd_run(#[inline(always)] move || { use ops_simd as ops; SIMD BODY })),
//!         Backend::Parallel => __adaptive_route.run(move || { use ops_par as ops; SIMD BODY }),
//!         Backend::Gpu => __adaptive_route.run(move || { use ops_gpu as ops; BODY }),
//!     }
//! }
//! ```
//!
//! Why inside: an attribute on an impl item may bring no other item with it (a
//! trait impl takes only the trait's items, no impl takes a module), and an
//! item nested in the function could not name `Self`, `self` or the impl's
//! generics. Closures can: each variant is a `move` closure holding a copy of
//! the body, capturing the receiver and the parameters as they are (`self`,
//! `&mut self`, `self: Box<Self>` alike); `return` and `?` leave the closure,
//! whose value is the function's. The SIMD closure runs inside the runtime's
//! `#[target_feature]` clones (`simd_run`), into which it is inlined
//! (`#[inline(always)]` on the closure), so LLVM compiles it with their features.
//!
//! The macro cannot see whether the impl is generic, so every method routes
//! through a `KernelFamily`: one kernel per instantiation of `Self` (and of the
//! method's own generic parameters), named `{type_name::<Self>()}::k` (or
//! `NAME::<Self, ..>` with `name = "NAME"`).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::{Block, FnArg, Ident};

use crate::kernel_def::{KernelDef, OpSet};
use crate::kernel_spec::spec;
use crate::variants::{generic_values, instance_name};
use crate::wrapper::routed_body;

/// Prints the method with everything inside it.
pub(crate) struct InImpl<'a>(pub &'a KernelDef);

impl ToTokens for InImpl<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let k = self.0;
        // The signature as written, `mut` included: the closures move the parameters in,
        // and a body that assigns to one needs its binding mutable.
        let sig = &k.func.sig;
        let vis = &k.func.vis;
        let attrs = &k.func.attrs;
        let inline = (!k.attrs.has_inline).then(|| quote!(#[inline]));

        let family = KernelDef::hidden("__ADAPTIVE_FAMILY");
        let method = sig.ident.to_string();
        // `Self` at the `associated` key, if given: on a free function it is the one error, there.
        let self_ty = match k.args.associated {
            Some(span) => quote_spanned!(span=> Self),
            None => quote!(Self),
        };
        let mut values = vec![quote!(::core::any::type_name::<#self_ty>())];
        values.extend(generic_values(k));
        // `Self` first, then the method's own generic arguments.
        let all = vec!["{}"; values.len()].join(", ");
        let own = vec!["{}"; values.len() - 1].join(", ");
        let (prefix, format) = match &k.args.name {
            Some(lit) => (lit.to_token_stream(), format!("::<{all}>")),
            None if own.is_empty() => (quote!(""), format!("{{}}::{method}")),
            None => (quote!(""), format!("{{}}::{method}::<{own}>")),
        };
        let instance = instance_name(&format, &values);
        let spec = spec(k, prefix);
        let prelude = quote! {
            static #family: ::adaptive_kernel::__private::KernelFamily =
                ::adaptive_kernel::__private::KernelFamily::new(#spec);
        };
        let kernel = quote!(#family.get(#instance));

        let scalar = body_closure(k.ops(OpSet::Scalar), &k.func.block);
        let simd = match &k.args.simd {
            Some(path) => self.explicit(path),
            None => {
                let body = body_closure(k.ops(OpSet::Simd), &k.simd_body);
                // `inline(always)`: the body must compile inside `simd_run`'s `#[target_feature]`
                // clones; a large one left to LLVM's judgement stays a function of its own, at the
                // target's baseline.
                quote!(move || ::adaptive_kernel::__private::simd_run(#[inline(always)] #body))
            }
        };
        let parallel = match (&k.args.parallel, &k.parallel_body) {
            (Some(path), _) => self.explicit(path),
            (None, Some(body)) => body_closure(k.ops(OpSet::Par), body),
            // No Parallel variant: the routed `match` never reaches this arm.
            (None, None) => body_closure(k.ops(OpSet::Par), &k.simd_body),
        };
        let gpu = match &k.args.gpu {
            Some(path) => self.explicit(path),
            None => body_closure(k.ops(OpSet::Gpu), &k.gpu_body),
        };
        let gpu = crate::wrapper::traffic_of(&kernel, quote!((#gpu)()));
        let body = routed_body(k, prelude, kernel, [scalar, simd, parallel, gpu], &|_, _| TokenStream::new());

        tokens.extend(quote! {
            #(#attrs)*
            #inline
            #vis #sig #body
        });
    }
}

impl InImpl<'_> {
    /// A closure calling the user's `path` with the receiver (if any) and the parameters.
    fn explicit(&self, path: &syn::ExprPath) -> TokenStream {
        let k = self.0;
        let receiver = k.func.sig.inputs.iter().any(|i| matches!(i, FnArg::Receiver(_))).then(|| quote!(self,));
        let args = k.arg_names();
        let call = quote!(#path(#receiver #(#args),*));
        if k.func.sig.unsafety.is_some() {
            quote!(move || unsafe { #call })
        } else {
            quote!(move || #call)
        }
    }
}

/// `move || { use __private::#ops as ops; BODY }`: one variant, a copy of `body`.
fn body_closure(ops: Ident, body: &Block) -> TokenStream {
    // Spanned at the call site so that the body's `ops::…` (the user's tokens) resolves to it.
    let ops_ident = Ident::new("ops", Span::call_site());
    let stmts = &body.stmts;
    quote! {
        move || {
            #[allow(unused_imports)]
            use ::adaptive_kernel::__private::#ops as #ops_ident;
            #(#stmts)*
        }
    }
}
