//! The code a loop that runs on the GPU becomes in the GPU variant: its shader
//! in a `static`, a launch that hands the device the loop's units and what it
//! captures (each value through a run-time type check), and the loop as written
//! for when the launch answers that the host must compute it.
//!
//! ```text
//! {                                             // for i in START..END { out[i] = a[i] * s; acc += a[i]; }
//!     use ::adaptive_kernel::__private::gpu_loop::probe::{KnownWord as _, OtherWord as _, ..};
//!     static LOOP: GpuLoop = GpuLoop::new(file!(), LINE, "<WGSL>", &[<slices>], &[<scalars>], &[<reductions>]);
//!     let start: usize = START;
//!     let end: usize = END;
//!     let done: bool = {
//!         let mut launch = Launch::new(&LOOP);
//!         launch.range(start, end);                // a chain: launch.units(<shortest stream>)
//!         launch.word(Probe(&(s)).word());       // a constant by path: launch.constant(..)
//!         launch.read(Probe(&a[..]).slice());
//!         launch.write(ProbeMut(&mut out[..]).slice_mut());
//!         launch.accumulate(ProbeMut(&mut acc).acc());
//!         launch.run()
//!     };
//!     if !done {
//!         simd_run(#[inline(always)] || for i in start..end { out[i] = a[i] * s; acc += a[i]; });
//!     }
//! }
//! ```
//!
//! Generated names are `Span::mixed_site` (the body cannot see them); what the
//! launch names (the slices, scalars, constants and accumulators the body
//! captures) keeps the body's tokens, so it resolves as the loop does.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::{Expr, ExprForLoop};

use super::ir::{AccOp, ArgSource};
use super::lower::Lowered;
use super::ty::Ty;
use super::wgsl::Shader;
use crate::split::{Space, Stride, Target};

fn hidden(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The statement that replaces `f` (a loop over `space` writing `targets`) in the GPU variant.
pub(super) fn gpu_loop(
    f: &ExprForLoop,
    space: &Space,
    targets: &[Target],
    lowered: &Lowered,
    shader: &Shader,
    line: u32,
) -> Expr {
    let gl = quote!(::adaptive_kernel::__private::gpu_loop);
    let the_loop = hidden("__ADAPTIVE_GPU_LOOP");
    let launch = hidden("__adaptive_launch");
    let done = hidden("__adaptive_done");

    let bindings = lowered.bindings.iter().map(|b| {
        let elem = b.elem.runtime();
        let access = if b.written { quote!(ReadWrite) } else { quote!(Read) };
        quote!(#gl::Binding { elem: #elem, access: #gl::Access::#access })
    });
    let scalars = shader.scalars.iter().map(|t| t.scalar());
    let reductions = shader.reductions.iter().map(|(op, ty)| {
        let op = match op {
            AccOp::Sum => quote!(Sum),
            AccOp::Product => quote!(Product),
            AccOp::Max => quote!(Max),
            AccOp::Min => quote!(Min),
        };
        let elem = match ty {
            Ty::F32 => quote!(F32),
            Ty::I32 => quote!(I32),
            Ty::U32 => quote!(U32),
            Ty::Usize | Ty::Bool => quote!(Usize),
        };
        quote!(#gl::Reduction { op: #gl::ReduceOp::#op, elem: #gl::Elem::#elem })
    });
    let wgsl = Literal::string(&shader.text);
    let line = Literal::u32_unsuffixed(line);

    let mut prelude = TokenStream::new();
    // Where a target's offsets were proved to stay in their row only from a least row width
    // on (the split's `offset.rs`), that width is checked first: a narrower row runs as written.
    let mut premises: Vec<TokenStream> = Vec::new();
    let mut fallback = f.clone();
    let units = match space {
        Space::Range { start, end } => {
            let (s, e) = (hidden("__adaptive_start"), hidden("__adaptive_end"));
            prelude.extend(quote!(let #s: usize = #start; let #e: usize = #end;));
            for (k, t) in targets.iter().enumerate() {
                if let (Stride::Expr(w), true) = (&t.stride, t.min_width > 0) {
                    let var = hidden(&format!("__adaptive_s{k}"));
                    let least = Literal::u64_unsuffixed(t.min_width);
                    prelude.extend(quote!(let #var: usize = if #s < #e { #w } else { 0 };));
                    premises.push(quote!((#s >= #e || #var >= #least)));
                }
            }
            *fallback.expr = Expr::Verbatim(quote!(#s..#e));
            quote!(#launch.range(#s, #e);)
        }
        Space::Chain(chain) => {
            let mut widths = 0;
            let counts: Vec<TokenStream> = chain
                .streams()
                .iter()
                .map(|s| {
                    let width = s.rows.as_ref().map(|rows| {
                        let var = hidden(&format!("__adaptive_w{widths}"));
                        widths += 1;
                        prelude
                            .extend(quote!(let #var: usize = ::adaptive_kernel::__private::split::row_width(#rows);));
                        var
                    });
                    s.count(width.as_ref())
                })
                .collect();
            let n = counts.into_iter().reduce(|a, b| quote!(::core::cmp::min(#a, #b))).expect("a chain has a stream");
            let units = hidden("__adaptive_units");
            prelude.extend(quote!(let #units: usize = #n;));
            quote!(#launch.units(#units);)
        }
    };
    let words = lowered.args.iter().map(|a| {
        let (value, method) = match &a.source {
            ArgSource::Name(n) => (n.to_token_stream(), quote!(word)),
            // A constant by path (`f32::INFINITY`) may be infinite on the device too.
            ArgSource::Path(p) => (p.to_token_stream(), quote!(constant)),
            ArgSource::Width(k) => (hidden(&format!("__adaptive_w{k}")).into_token_stream(), quote!(word)),
        };
        quote!(#launch.#method(#gl::probe::Probe(&(#value)).word());)
    });
    let slices = lowered.bindings.iter().map(|b| {
        let name = &b.name;
        if b.written {
            quote!(#launch.write(#gl::probe::ProbeMut(&mut #name[..]).slice_mut());)
        } else {
            quote!(#launch.read(#gl::probe::Probe(&#name[..]).slice());)
        }
    });
    let accs = lowered.accs.iter().map(|a| {
        let name = &a.name;
        quote!(#launch.accumulate(#gl::probe::ProbeMut(&mut #name).acc());)
    });
    let tokens = quote!({
        #[allow(unused_imports)]
        use #gl::probe::{
            KnownAcc as _, KnownSlice as _, KnownSliceMut as _, KnownWord as _, OtherAcc as _, OtherSlice as _,
            OtherSliceMut as _, OtherWord as _,
        };
        static #the_loop: #gl::GpuLoop = #gl::GpuLoop::new(
            ::core::file!(),
            #line,
            #wgsl,
            &[#(#bindings),*],
            &[#(#scalars),*],
            &[#(#reductions),*],
        );
        #prelude
        let #done: bool = #(#premises &&)* {
            let mut #launch = #gl::Launch::new(&#the_loop);
            #units
            #(#words)*
            #(#slices)*
            #(#accs)*
            #launch.run()
        };
        if !#done {
            // `inline(always)`: compiled inside `simd_run`'s `#[target_feature]` clone.
            ::adaptive_kernel::__private::simd_run(#[inline(always)] || { #fallback });
        }
    });
    Expr::Verbatim(tokens)
}
