//! The routed function `k`: same signature, visibility and attributes as the
//! user's function; its body asks `k::KERNEL` for a route and calls the chosen
//! variant.
//!
//! ```text
//! #[attrs] #[inline] #vis fn k(a: &[f32], n: usize) -> R {
//!     let __adaptive_size: usize = SIZE;
//!     let __adaptive_route = k::KERNEL.route(__adaptive_size, || Work::estimate(COMPLEXITY, __adaptive_size, FLOPS, BYTES));
//!     match __adaptive_route.backend() {
//!         Backend::Scalar => __adaptive_route.run(move || k::scalar(a, n)),
//!         Backend::Simd => __adaptive_route.run(move || k::simd(a, n)),
//!         Backend::Parallel => __adaptive_route.run(move || k::parallel(a, n)),
//!         Backend::Gpu => __adaptive_route.run(move || k::gpu(a, n)),
//!     }   // a backend without its variant joins the SIMD arm: `Backend::Simd | Backend::Gpu => ..`
//! }
//! ```
//!
//! A generic kernel names its type and const parameters in every call
//! (`k::scalar::<T, N>(a, n)`) and routes through its instantiation's kernel,
//! `k::kernel::<T, N>()`.
//!
//! The size expression runs on every call (it is the bucket key); the work
//! estimate, with the user's `flops`/`bytes`, only on the cold path. Generated
//! locals are `Span::mixed_site` (invisible to the user's expressions), and
//! `mut` is dropped from the parameters: the wrapper only forwards them.

use proc_macro2::{Delimiter, Group, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::Expr;

use crate::arrays::Copied;
use crate::kernel_def::KernelDef;
use crate::variants::forwarding;
use crate::verify::{self, Verification};

/// Prints the routed function.
pub(crate) struct Wrapper<'a>(pub &'a KernelDef);

impl ToTokens for Wrapper<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let k = self.0;
        let name = &k.func.sig.ident;
        let sig = forwarding(&k.func.sig, name.clone());
        let vis = &k.func.vis;
        let attrs = &k.attrs.wrapper;
        let inline = (!k.attrs.has_inline).then(|| quote!(#[inline]));

        let turbofish = k.turbofish();
        let direct = |variant: &str| {
            let variant = syn::Ident::new(variant, proc_macro2::Span::call_site());
            let args = k.arg_names();
            let call = quote!(#name::#variant #turbofish (#(#args),*));
            if k.func.sig.unsafety.is_some() {
                quote!(unsafe { #call })
            } else {
                call
            }
        };
        let call = |variant: &str| {
            let call = direct(variant);
            quote!(move || #call)
        };
        // A generic kernel has one routing table per instantiation.
        let kernel = if k.is_generic() { quote!(#name::kernel #turbofish ()) } else { quote!(#name::KERNEL) };
        let gpu = traffic_of(&kernel, direct("gpu"));
        let variants = [call("scalar"), call("simd"), call("parallel"), gpu];
        let verify = |route: &syn::Ident, size_var: &syn::Ident| self.verify(&kernel, route, size_var, &direct);
        let body = routed_body(k, TokenStream::new(), kernel.clone(), variants, &verify);

        tokens.extend(quote! {
            #(#attrs)*
            #inline
            #vis #sig #body
        });
    }
}

/// The routed function's body, in the user's braces: `prelude`, then the size, the
/// route asked of `kernel` (an expression of type `&'static Kernel`) and a `match`
/// that runs the chosen one of `variants` (closures: Scalar, SIMD, Parallel, GPU).
/// A variant the kernel lacks is replaced by SIMD. `after_route` (given the route's
/// and the size's locals) adds statements between the route and the `match`.
pub(crate) fn routed_body(
    k: &KernelDef,
    prelude: TokenStream,
    kernel: TokenStream,
    variants: [TokenStream; 4],
    after_route: &dyn Fn(&syn::Ident, &syn::Ident) -> TokenStream,
) -> Group {
    let size_var = KernelDef::hidden("__adaptive_size");
    // `usize` spanned at the user's expression: a mistyped `size` is reported there, label and all.
    let usize_ty = quote_spanned!(k.size.span()=> usize);
    let route = KernelDef::hidden("__adaptive_route");
    let size = &k.size;
    let complexity = k.args.complexity;
    let (flops, bytes) = (estimate(k.args.flops.as_ref()), estimate(k.args.bytes.as_ref()));
    let [scalar, simd, parallel, gpu] = variants;
    let backend = |name: &str| {
        let name = syn::Ident::new(name, proc_macro2::Span::call_site());
        quote!(::adaptive_kernel::__private::Backend::#name)
    };
    // Without a GPU variant the router never picks GPU (`has_gpu` is false in the spec);
    // should it ever, SIMD is the right fallback, as for a failed GPU call. Likewise for
    // Parallel. One arm for both, so a body is not compiled once more for an arm never taken.
    let mut simd_pattern = vec![backend("Simd")];
    let mut arms = Vec::new();
    if k.has_parallel {
        arms.push((backend("Parallel"), parallel));
    } else {
        simd_pattern.push(backend("Parallel"));
    }
    if k.has_gpu {
        arms.push((backend("Gpu"), gpu));
    } else {
        simd_pattern.push(backend("Gpu"));
    }
    let (patterns, closures): (Vec<_>, Vec<_>) = arms.into_iter().unzip();
    let scalar_pattern = backend("Scalar");

    // The variants bind `ops` themselves, so the body's `ops::…` never resolves through the
    // user's `use adaptive_kernel::ops;`, which would then be reported unused. Naming it here,
    // spanned at the body's first `ops`, keeps the import used, and required like any path.
    // (`ops::{self as _}` rather than `ops as _`: rustc's help for a missing import then stays
    // a note instead of a code suggestion garbled by the spans.)
    let ops_use =
        k.ops_use.as_ref().map(|ops| quote_spanned!(ops.span()=> #[allow(unused_imports)] use #ops::{self as _};));

    let after_route = after_route(&route, &size_var);
    let body = quote! {
        #ops_use
        #prelude
        let #size_var: #usize_ty = #size;
        let #route = #kernel.route(#size_var, || {
            ::adaptive_kernel::__private::Work::estimate(#complexity, #size_var, #flops, #bytes)
        });
        #after_route
        match #route.backend() {
            #scalar_pattern => #route.run(#scalar),
            #(#simd_pattern)|* => #route.run(#simd),
            #(#patterns => #route.run(#closures),)*
        }
    };
    // The user's braces: rustc then treats the wrapper as the user's own item, so an
    // unused kernel gets its "function is never used" warning, as without the attribute.
    let mut body = Group::new(Delimiter::Brace, body);
    body.set_span(k.func.block.brace_token.span.join());
    body
}

impl Wrapper<'_> {
    /// The check against Scalar (see `crate::verify`): timed calls of another variant
    /// go through `run_verified`; a settled call that is not timed skips it on one flag test.
    fn verify(
        &self,
        kernel: &TokenStream,
        route: &syn::Ident,
        size_var: &syn::Ident,
        direct: &dyn Fn(&str) -> TokenStream,
    ) -> TokenStream {
        let k = self.0;
        let always = match k.verification {
            Verification::Off => return TokenStream::new(),
            Verification::InVerifyMode => false,
            Verification::Always => true,
        };
        let tolerance = match &k.args.tolerance {
            Some(t) => quote!(::core::option::Option::Some(#t as f64)),
            None => quote!(::core::option::Option::None),
        };
        let outputs = verify::outputs(&k.params);
        // Each parameter but the arrays it writes (copied below) is passed to two variants:
        // `Copy` is required, said at its type.
        let inputs = always.then(|| {
            let checks = k.params.iter().filter(|p| !outputs.iter().any(|(o, _)| o.ident == p.ident)).map(|p| {
                let (ident, ty) = (&p.ident, &p.ty);
                quote_spanned!(ty.span()=> ::adaptive_kernel::__private::verify_input(&#ident);)
            });
            quote!(#(#checks)*)
        });
        let array_result = matches!(&k.func.sig.output, syn::ReturnType::Type(_, ty) if verify::array_result(ty));
        if !outputs.is_empty() || array_result {
            let checked = self.verify_arrays(kernel, route, size_var, &outputs, always, &tolerance);
            return quote!(#inputs #checked);
        }
        let backend = KernelDef::hidden("__adaptive_backend");
        let (scalar, simd) = (direct("scalar"), direct("simd"));
        let gpu = if k.has_gpu { direct("gpu") } else { simd.clone() };
        let parallel = if k.has_parallel { direct("parallel") } else { simd.clone() };
        // Spanned at the return type: a result that cannot be compared is reported there.
        let run = match &k.func.sig.output {
            syn::ReturnType::Type(_, ty) => quote_spanned!(ty.span()=> ::adaptive_kernel::__private::run_verified),
            syn::ReturnType::Default => quote!(::adaptive_kernel::__private::run_verified),
        };
        quote! {
            #inputs
            if #route.is_timed() && #route.backend() != ::adaptive_kernel::__private::Backend::Scalar {
                let #backend = #route.backend();
                return #run(&#kernel, #route, #size_var, #always, #tolerance, move || #scalar, move || {
                    match #backend {
                        ::adaptive_kernel::__private::Backend::Scalar => #scalar,
                        ::adaptive_kernel::__private::Backend::Simd => #simd,
                        ::adaptive_kernel::__private::Backend::Parallel => #parallel,
                        ::adaptive_kernel::__private::Backend::Gpu => #gpu,
                    }
                });
            }
        }
    }
}

impl Wrapper<'_> {
    /// The check against Scalar of a kernel that writes ndarray arrays or returns one (see
    /// `crate::verify`): the Scalar variant runs first on copies of the written arrays, the
    /// chosen one on the caller's; the writes and the results are compared element by
    /// element, in logical order; where they disagree the caller gets Scalar's, arrays included.
    fn verify_arrays(
        &self,
        kernel: &TokenStream,
        route: &syn::Ident,
        size_var: &syn::Ident,
        outputs: &[(&crate::signature::Param, Copied)],
        always: bool,
        tolerance: &TokenStream,
    ) -> TokenStream {
        let k = self.0;
        let private = quote!(::adaptive_kernel::__private);
        let (check, backend, tol) = (
            KernelDef::hidden("__adaptive_check"),
            KernelDef::hidden("__adaptive_backend"),
            KernelDef::hidden("__adaptive_tolerance"),
        );
        let (result, reference, agreement) = (
            KernelDef::hidden("__adaptive_result"),
            KernelDef::hidden("__adaptive_reference"),
            KernelDef::hidden("__adaptive_agreement"),
        );
        let mut copies = TokenStream::new();
        let mut rebinds = TokenStream::new();
        let mut compares = TokenStream::new();
        let mut restores = TokenStream::new();
        // The arguments of the Scalar call (copies) and of the chosen variant's (the caller's
        // arrays, reborrowed so that they can be compared and restored after the call).
        let mut scalar_args = Vec::new();
        let mut variant_args = Vec::new();
        for p in &k.params {
            let ident = &p.ident;
            let Some(at) = outputs.iter().position(|(o, _)| o.ident == p.ident) else {
                scalar_args.push(quote!(#ident));
                variant_args.push(quote!(#ident));
                continue;
            };
            let how = &outputs[at].1;
            let copy = KernelDef::hidden(&format!("__adaptive_copy_{at}"));
            let view = KernelDef::hidden(&format!("__adaptive_view_{at}"));
            match how {
                Copied::Owned | Copied::View => copies.extend(quote!(let mut #copy = #ident.to_owned();)),
                Copied::Shared => copies.extend(quote!(let mut #copy = ::core::clone::Clone::clone(&*#ident);)),
                Copied::ViewRef => {
                    copies.extend(quote!(let mut #copy = #ident.to_owned(); let mut #view = #copy.view_mut();))
                }
            }
            match how {
                Copied::Owned | Copied::Shared => scalar_args.push(quote!(&mut #copy)),
                Copied::View => scalar_args.push(quote!(#copy.view_mut())),
                Copied::ViewRef => scalar_args.push(quote!(&mut #view)),
            }
            match how {
                // A view taken by value: bound `mut` here to be reborrowed (the wrapper's
                // parameters are not `mut`).
                Copied::View => {
                    rebinds.extend(quote!(#[allow(unused_mut)] let mut #ident = #ident;));
                    variant_args.push(quote!(#ident.view_mut()));
                }
                _ => variant_args.push(quote!(&mut *#ident)),
            }
            compares.extend(quote! {
                let #agreement = #agreement.and(#private::compare_arrays(
                    #ident.shape(), #ident.iter(), #copy.shape(), #copy.iter(), #tol,
                ));
            });
            restores.extend(quote!(#ident.assign(&#copy);));
        }
        let name = &k.func.sig.ident;
        let turbofish = k.turbofish();
        let call = |variant: &str, args: &[TokenStream]| {
            let variant = syn::Ident::new(variant, proc_macro2::Span::call_site());
            let call = quote!(#name::#variant #turbofish (#(#args),*));
            if k.func.sig.unsafety.is_some() {
                quote!(unsafe { #call })
            } else {
                call
            }
        };
        let scalar_ref = call("scalar", &scalar_args);
        let (scalar, simd) = (call("scalar", &variant_args), call("simd", &variant_args));
        let parallel = if k.has_parallel { call("parallel", &variant_args) } else { simd.clone() };
        let gpu = if k.has_gpu { call("gpu", &variant_args) } else { simd.clone() };
        let compare_result = match &k.func.sig.output {
            syn::ReturnType::Default => quote!(#private::Agreement::EXACT),
            syn::ReturnType::Type(_, ty) if verify::array_result(ty) => quote_spanned! {ty.span()=>
                #private::compare_arrays(#result.shape(), #result.iter(), #reference.shape(), #reference.iter(), #tol)
            },
            // Spanned at the return type: a result that cannot be compared is reported there.
            syn::ReturnType::Type(_, ty) => {
                quote_spanned!(ty.span()=> #private::Comparable::compare(&#result, &#reference, #tol))
            }
        };
        quote! {
            if #route.is_timed() && #route.backend() != #private::Backend::Scalar {
                if let ::core::option::Option::Some(#check) =
                    #private::VerifiedCall::begin(&#kernel, &#route, #size_var, #always, #tolerance)
                {
                    #rebinds
                    let #backend = #route.backend();
                    #copies
                    let #reference = #scalar_ref;
                    let #result = #route.run(|| match #backend {
                        #private::Backend::Scalar => #scalar,
                        #private::Backend::Simd => #simd,
                        #private::Backend::Parallel => #parallel,
                        #private::Backend::Gpu => #gpu,
                    });
                    let #tol = #check.tolerance();
                    let #agreement = #compare_result;
                    #compares
                    if #check.finish(#agreement) {
                        return #result;
                    }
                    #restores
                    return #reference;
                }
            }
        }
    }
}

/// `move || KERNEL.traffic_of(size, Gpu, move || CALL)`: a GPU call whose transfers are
/// recorded in `kernel`'s table (`kernel`: the `Kernel` static, or an expression of type
/// `&'static Kernel`).
pub(crate) fn traffic_of(kernel: &TokenStream, call: TokenStream) -> TokenStream {
    let size_var = KernelDef::hidden("__adaptive_size");
    quote! {
        move || #kernel.traffic_of(#size_var, ::adaptive_kernel::__private::Backend::Gpu, move || #call)
    }
}

/// `Some(EXPR as u64)` for a given `flops`/`bytes`, `None` for the complexity's default.
///
/// `as u64` rather than a type annotation so the natural expressions work: `2 * m * n * k`
/// over `usize` parameters, or a float estimate such as `(n as f64).powf(1.5)` (`as` saturates).
fn estimate(expr: Option<&Expr>) -> TokenStream {
    match expr {
        Some(e) => quote!(::core::option::Option::Some((#e) as u64)),
        None => quote!(::core::option::Option::None),
    }
}
