//! The `KernelSpec { .. }` expression a kernel's static handle is built from: its name,
//! complexity, variants, and what the attribute did to each loop (the report), read by
//! `mod k` (`variants.rs`), a method's family (`in_impl.rs`) and the resident entry
//! (`resident.rs`).

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

use crate::kernel_def::KernelDef;
use crate::reason::word;

/// The `KernelSpec { .. }` expression of `k`, named `name`.
pub(crate) fn spec(k: &KernelDef, name: TokenStream) -> TokenStream {
    let complexity = k.args.complexity;
    let has_gpu = k.has_gpu;
    let has_parallel = k.has_parallel;
    let token_hash = proc_macro2::Literal::u64_suffixed(k.token_hash);
    let backend = |name: &str| {
        let name = Ident::new(name, Span::call_site());
        quote!(::adaptive_kernel::__private::Backend::#name)
    };
    let loops = k.loops.iter().map(|l| {
        let r = &l.report;
        let (line, idiom, reason) = (proc_macro2::Literal::u32_unsuffixed(r.line), &r.idiom, word(r.reason));
        let mut variants = Vec::new();
        variants.extend(r.rewritten.then(|| backend("Simd")));
        variants.extend(l.parallel.then(|| backend("Parallel")));
        let math = &r.math;
        quote! {
            ::adaptive_kernel::__private::LoopRewrite {
                line: #line, idiom: #idiom, variants: &[#(#variants),*], reason: #reason, vector_math: &[#(#math),*],
            }
        }
    });
    let splits = k.splits.iter().map(|s| {
        let (line, idiom, reason) = (proc_macro2::Literal::u32_unsuffixed(s.line), &s.idiom, word(s.reason));
        quote!(::adaptive_kernel::__private::LoopSplit { line: #line, idiom: #idiom, reason: #reason, })
    });
    let gpu_loops = k.gpu_loops.iter().map(|g| {
        let (line, idiom, reason) = (proc_macro2::Literal::u32_unsuffixed(g.line), &g.idiom, word(g.reason));
        let roundings = proc_macro2::Literal::u32_unsuffixed(g.roundings);
        quote!(::adaptive_kernel::__private::LoopGpu { line: #line, idiom: #idiom, reason: #reason, roundings: #roundings, })
    });
    quote! {
        ::adaptive_kernel::__private::KernelSpec {
            name: #name,
            complexity: #complexity,
            has_gpu: #has_gpu,
            has_parallel: #has_parallel,
            token_hash: #token_hash,
            loops: &[#(#loops),*],
            splits: &[#(#splits),*],
            gpu_loops: &[#(#gpu_loops),*],
        }
    }
}
