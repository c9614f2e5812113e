//! `k::resident`: the kernel's entry for data kept on the GPU between calls, and
//! its routing handle `k::RESIDENT` (the decisions of calls on resident data are
//! not those of calls on host data).
//!
//! ```text
//! pub fn __adaptive_resident<'__adaptive_r>(
//!     a: impl Into<In<'__adaptive_r, f32>>, out: impl Into<InOut<'__adaptive_r, f32>>, n: usize,
//! ) -> R {
//!     let a: In<'__adaptive_r, f32> = Into::into(a);
//!     let mut out: InOut<'__adaptive_r, f32> = Into::into(out);
//!     let __adaptive_size: usize = SIZE;                       // `a.len()` works on `In`
//!     let __adaptive_route = super::RESIDENT.route_placed(__adaptive_size, || Work::estimate(..),
//!         || transfers(&[(&a, A_READ_ON_HOST), (&out, false)]));
//!     match __adaptive_route.backend() {
//!         Backend::Scalar => __adaptive_route.run(move || __adaptive_scalar(a.host(), out.host_mut(), n)),
//!         ..                                                  // SIMD, Parallel alike
//!         Backend::Gpu => __adaptive_route.run(move || super::RESIDENT.traffic_of(size, Gpu, move || {
//!             let mut scope = Scope::new();                   // the handles, by host address, for the loops
//!             let a = unsafe { scope.read(&a, A_READ_ON_HOST) };
//!             let out = unsafe { scope.write(&mut out) };
//!             __adaptive_gpu(a, out, n)
//!         })),
//!     }
//! }
//! ```
//!
//! Each `&[E]` or `&mut [E]` parameter with `E` one of `f32`, `i32`, `u32` takes a
//! [`In`]/[`InOut`] (a plain slice, a `Vec`, an array or a `Resident<E>` handle);
//! the other parameters are as declared. The CPU variants get the data current in
//! host memory; the GPU variant gets host memory as it is, possibly stale, and is
//! sound with it: its loops bind the device's copy, a loop run on the host reads
//! current data (`shader/emit.rs`), and host statements get current data
//! (`shader/group.rs`; a `&[E]` parameter their code reads is made current here,
//! the `A_READ_ON_HOST` above).
//!
//! Generated only where the GPU variant is the generated one (not `exact`, not
//! `gpu = path`) and runs a top-level loop on the device (an `ops::` call moves its
//! data itself), for a free, non-generic function with such a parameter, whose
//! return type borrows nothing and whose `size`, `flops` and `bytes` read no slice's
//! data (only `.len()`). `verify` does not check these calls.
//!
//! [`In`]: ../../adaptive_kernel/resident/enum.In.html
//! [`InOut`]: ../../adaptive_kernel/resident/enum.InOut.html

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::{FnArg, Pat, Type};

use crate::kernel_def::KernelDef;
use crate::relocate::relocate;
use crate::signature::Shape;
use crate::tokens::reads_data;

/// How a parameter is taken by `k::resident`.
enum Arg {
    /// `&[E]`: an `In<E>`.
    In(Ident, Ident),
    /// `&mut [E]`: an `InOut<E>`.
    InOut(Ident, Ident),
    /// As declared.
    Plain(Ident),
}

impl Arg {
    fn ident(&self) -> &Ident {
        match self {
            Arg::In(i, _) | Arg::InOut(i, _) | Arg::Plain(i) => i,
        }
    }
}

/// The element type of `&[E]`/`&mut [E]` when it is one a resident handle holds.
fn resident_elem(ty: &Type) -> Option<(bool, Ident)> {
    let Type::Reference(r) = ty else { return None };
    let Type::Slice(s) = &*r.elem else { return None };
    let Type::Path(p) = &*s.elem else { return None };
    let ident = p.path.get_ident()?;
    ["f32", "i32", "u32"].iter().any(|e| ident == e).then(|| (r.mutability.is_some(), ident.clone()))
}

/// Whether `ty` names a lifetime or a reference (a return type that could borrow an argument).
fn borrows(ty: &syn::ReturnType) -> bool {
    let syn::ReturnType::Type(_, ty) = ty else { return false };
    let text = ty.to_token_stream().to_string();
    text.contains('&') || text.contains('\'')
}

/// The kernel's `k::resident` parameters, when it gets the entry.
fn args(k: &KernelDef) -> Option<Vec<Arg>> {
    let loop_on_gpu = k.gpu_loops.iter().any(|l| l.reason.is_none());
    if k.shape != Shape::Free || k.is_generic() || !loop_on_gpu || k.args.gpu.is_some() || k.gpu_host_reads.is_none() {
        return None;
    }
    if borrows(&k.func.sig.output) || k.func.sig.asyncness.is_some() {
        return None;
    }
    let mut args = Vec::new();
    for input in &k.relocated.sig.inputs {
        let FnArg::Typed(pt) = input else { return None };
        let Pat::Ident(id) = &*pt.pat else { return None };
        let name = id.ident.clone();
        args.push(match resident_elem(&pt.ty) {
            Some((false, elem)) => Arg::In(name, elem),
            Some((true, elem)) => Arg::InOut(name, elem),
            None => Arg::Plain(name),
        });
    }
    let slices: Vec<String> =
        args.iter().filter(|a| !matches!(a, Arg::Plain(_))).map(|a| a.ident().to_string()).collect();
    if slices.is_empty() {
        return None;
    }
    // The size and the estimates run on the `In`/`InOut` values: lengths only.
    let exprs = [
        Some(k.size.clone()),
        k.args.flops.as_ref().map(ToTokens::to_token_stream),
        k.args.bytes.as_ref().map(ToTokens::to_token_stream),
    ];
    if exprs.iter().flatten().any(|e| slices.iter().any(|s| reads_data(e.clone(), s))) {
        return None;
    }
    Some(args)
}

/// Whether the kernel gets a `k::resident` entry.
pub(crate) fn has_entry(k: &KernelDef) -> bool {
    args(k).is_some()
}

/// `pub static RESIDENT`, in `mod k`.
pub(crate) fn handle(k: &KernelDef) -> TokenStream {
    if !has_entry(k) {
        return TokenStream::new();
    }
    let name = match &k.args.name {
        Some(lit) => quote!(::core::concat!(#lit, "::resident")),
        None => quote!(::core::concat!(::core::module_path!(), "::resident")),
    };
    let spec = crate::kernel_spec::spec(k, name);
    let doc = format!(
        " The routing handle of `{}::resident`: calls on data that may be kept on the GPU are decided and \
         recorded apart from the routed function's (`KERNEL`), with the transfers each call would make charged \
         by the cost model. Force it, read its table, as `KERNEL`'s.",
        k.func.sig.ident
    );
    quote! {
        #[doc = #doc]
        pub static RESIDENT: ::adaptive_kernel::__private::Kernel = ::adaptive_kernel::__private::Kernel::new(#spec);
    }
}

/// `__adaptive_resident`, in `mod __adaptive`.
pub(crate) fn entry(k: &KernelDef) -> TokenStream {
    let Some(args) = args(k) else { return TokenStream::new() };
    let hidden = KernelDef::hidden;
    let life = syn::Lifetime::new("'__adaptive_r", Span::mixed_site());
    let res = quote!(::adaptive_kernel::resident);
    let private = quote!(::adaptive_kernel::__private);
    let host_reads = k.gpu_host_reads.as_deref().unwrap_or_default();
    let reads_on_host = |name: &Ident| host_reads.iter().any(|h| h == name);

    let mut params = Vec::new();
    let mut converts = Vec::new();
    let mut placed = Vec::new();
    for (input, arg) in k.relocated.sig.inputs.iter().zip(&args) {
        let FnArg::Typed(pt) = input else { unreachable!("checked in `args`") };
        match arg {
            Arg::In(name, elem) => {
                params.push(quote!(#name: impl ::core::convert::Into<#res::In<#life, #elem>>));
                converts.push(quote!(let #name: #res::In<#life, #elem> = ::core::convert::Into::into(#name);));
                let on_host = reads_on_host(name);
                placed.push(quote!((&#name as &dyn #res::Placed, #on_host)));
            }
            Arg::InOut(name, elem) => {
                params.push(quote!(#name: impl ::core::convert::Into<#res::InOut<#life, #elem>>));
                converts.push(quote!(let mut #name: #res::InOut<#life, #elem> = ::core::convert::Into::into(#name);));
                placed.push(quote!((&#name as &dyn #res::Placed, false)));
            }
            Arg::Plain(name) => {
                let ty = &pt.ty;
                params.push(quote!(#name: #ty));
            }
        }
    }
    // Each variant's arguments: data current on the host for a CPU variant, as-is for the GPU.
    let host_args: Vec<TokenStream> = args
        .iter()
        .map(|a| match a {
            Arg::In(n, _) => quote!(#n.host()),
            Arg::InOut(n, _) => quote!(#n.host_mut()),
            Arg::Plain(n) => n.to_token_stream(),
        })
        .collect();
    let scope = hidden("__adaptive_scope");
    let gpu_views: Vec<TokenStream> = args
        .iter()
        .filter_map(|a| match a {
            Arg::In(n, _) => {
                let on_host = reads_on_host(n);
                Some(quote!(let #n = unsafe { #scope.read(&#n, #on_host) };))
            }
            Arg::InOut(n, _) => Some(quote!(let #n = unsafe { #scope.write(&mut #n, false) };)),
            Arg::Plain(_) => None,
        })
        .collect();
    let names: Vec<&Ident> = args.iter().map(Arg::ident).collect();

    let size_var = hidden("__adaptive_size");
    let route = hidden("__adaptive_route");
    // Evaluated inside `mod k`, as the variants' bodies are: paths relocated like theirs.
    let size = relocate(k.size.clone());
    let complexity = k.args.complexity;
    let estimate = |e: Option<&syn::Expr>| match e {
        Some(e) => {
            let e = relocate(e.to_token_stream());
            quote!(::core::option::Option::Some((#e) as u64))
        }
        None => quote!(::core::option::Option::None),
    };
    let (flops, bytes) = (estimate(k.args.flops.as_ref()), estimate(k.args.bytes.as_ref()));
    let unsafe_call = |call: TokenStream| {
        if k.func.sig.unsafety.is_some() {
            quote!(unsafe { #call })
        } else {
            call
        }
    };
    let backend = |name: &str| {
        let name = Ident::new(name, Span::call_site());
        quote!(#private::Backend::#name)
    };
    let cpu = |variant: &str, b: &str| {
        let variant = Ident::new(variant, Span::call_site());
        let call = unsafe_call(quote!(#variant(#(#host_args),*)));
        let b = backend(b);
        quote!(super::RESIDENT.traffic_of(#size_var, #b, move || #call))
    };
    let mut simd_pattern = vec![backend("Simd")];
    let mut arms = vec![(backend("Scalar"), cpu("__adaptive_scalar", "Scalar"))];
    if k.has_parallel {
        arms.push((backend("Parallel"), cpu("__adaptive_parallel", "Parallel")));
    } else {
        simd_pattern.push(backend("Parallel"));
    }
    let simd = cpu("__adaptive_simd", "Simd");
    let gpu_call = unsafe_call(quote!(__adaptive_gpu(#(#names),*)));
    let gpu = backend("Gpu");
    arms.push((
        gpu.clone(),
        quote!(super::RESIDENT.traffic_of(#size_var, #gpu, move || {
            let mut #scope = #res::Scope::new();
            // SAFETY: the views may hold stale data; they go only to the generated GPU variant,
            // called while the scope lives (see `macros/src/resident.rs`).
            #(#gpu_views)*
            #gpu_call
        })),
    ));
    let (patterns, calls): (Vec<_>, Vec<_>) = arms.into_iter().unzip();

    let ident = &k.func.sig.ident;
    let doc = format!(
        " `{ident}` on data that may stay on the GPU between calls: each slice parameter of `f32`, `i32` or `u32` \
         takes a plain slice (`&[T]`, `&Vec<T>`, …) or a `Resident<T>` handle (`&handle`, `&mut handle`). A call \
         the router sends to the GPU uploads only what the device does not hold and leaves what it writes in a \
         handle there; a call it sends to a CPU variant downloads a handle's newer device copy first. Routed on \
         its own handle, `RESIDENT`. See the guide's chapter on resident data."
    );
    let unsafety = &k.func.sig.unsafety;
    let output = &k.func.sig.output;
    let (shared, must_use) = (&k.attrs.shared, &k.attrs.must_use);
    quote! {
        #(#shared)*
        #must_use
        #[doc = #doc]
        #[inline]
        #[allow(unsafe_code, unused_mut, clippy::too_many_arguments)]
        pub #unsafety fn __adaptive_resident<#life>(#(#params),*) #output {
            #(#converts)*
            let #size_var: usize = #size;
            let #route = super::RESIDENT.route_placed(
                #size_var,
                || #private::Work::estimate(#complexity, #size_var, #flops, #bytes),
                || #res::transfers(&[#(#placed),*]),
            );
            match #route.backend() {
                #(#patterns => #route.run(move || #calls),)*
                #(#simd_pattern)|* => #route.run(move || #simd),
            }
        }
    }
}

/// The re-export of the entry in `mod k`.
pub(crate) fn export(k: &KernelDef) -> TokenStream {
    if has_entry(k) {
        quote!(__adaptive_resident as resident,)
    } else {
        TokenStream::new()
    }
}
