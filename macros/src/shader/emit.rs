//! The code a loop that runs on the GPU becomes in the GPU variant: its shader
//! in a `static`, a launch that hands the device the loop's units and what it
//! captures (each value through a run-time type check) to its group's batch, and
//! the loop as written for when the device did not run it. `group.rs` puts the
//! pieces of a group's loops together.
//!
//! ```text
//! let __adaptive_start3: usize = START;          // for i in START..END { out[i] = a[i] * s; acc += a[i]; }
//! let __adaptive_end3: usize = END;
//! {                                              // the launch
//!     use ::adaptive_kernel::__private::gpu_loop::probe::{KnownWord as _, OtherWord as _, ..};
//!     static LOOP: GpuLoop = GpuLoop::new(file!(), LINE, "<WGSL>", &[<slices>], &[<scalars>], &[<reductions>]);
//!     let mut launch = Launch::new(&LOOP);
//!     launch.range(__adaptive_start3, __adaptive_end3);   // a chain: launch.units(<shortest stream>)
//!     launch.word(Probe(&(s)).word());                    // a constant by path: launch.constant(..)
//!     launch.read(Probe(&a[..]).slice());
//!     launch.write(ProbeMut(&mut out[..]).slice_mut());
//!     launch.accumulate(ProbeMut(&mut acc).acc());
//!     __adaptive_batch0.launch(launch);
//! }
//! // the fallback, run where the group ends when the device did not run the loop:
//! simd_run(#[inline(always)] || {
//!     let __adaptive_fresh0 = Probe(&a[..]).fresh(); let a = &*__adaptive_fresh0;  // `a: &[f32]`, a parameter
//!     ProbeMut(&mut out[..]).sync();                                                // `out: &mut [f32]`, one
//!     for i in __adaptive_start3..__adaptive_end3 { out[i] = a[i] * s; acc += a[i]; }
//! });
//! ```
//!
//! A slice parameter may be a resident handle's host memory (`k::resident`), stale
//! while the device holds newer data: a loop run on the host reads a shared one
//! through a current copy (`fresh`, shadowing it inside the fallback only) and
//! makes a `&mut` one current in place (`sync`). Both do nothing for host data.
//!
//! Generated names are `Span::mixed_site` (the body cannot see them); what the
//! launch names (the slices, scalars, constants and accumulators the body
//! captures) keeps the body's tokens, so it resolves as the loop does.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::{Expr, ExprForLoop};

use super::ir::{AccOp, ArgSource};
use super::lower::Lowered;
use super::params::ParamSlices;
use super::ty::Ty;
use super::wgsl::Shader;
use crate::body::{Independent, Space, Stride};

pub(super) fn hidden(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The runtime's generated-loop module.
pub(super) fn gl() -> TokenStream {
    quote!(::adaptive_kernel::__private::gpu_loop)
}

/// The pieces of one loop's GPU run.
pub(super) struct LoopCode {
    /// Locals the launch and the fallback share, at the body's level (a range's bounds).
    pub prelude: TokenStream,
    /// The launch: a block that hands the loop to the group's batch.
    pub launch: TokenStream,
    /// The loop as written (its bounds the prelude's), with current data for resident slices:
    /// the body of the closure that runs it on the host.
    pub fallback: TokenStream,
    /// The slices it writes, as the body names them.
    pub written: Vec<Ident>,
    /// The slices it only reads.
    pub reads: Vec<Ident>,
    /// Its accumulators, in order.
    pub accs: Vec<Ident>,
    /// The names whose values the host reads for its launch: its scalars, its bounds' and
    /// row widths' names (what an earlier loop of a group must not be computing).
    pub host_reads: TokenStream,
}

/// The pieces of the GPU run of `f` (an independent loop, as `found` says, the statement at
/// `stmt`), launched into the batch `batch`; `params` says which names are slice parameters.
pub(super) fn gpu_loop(
    f: &ExprForLoop,
    found: &Independent,
    lowered: &Lowered,
    shader: &Shader,
    (line, stmt): (u32, usize),
    batch: &Ident,
    params: &ParamSlices,
) -> LoopCode {
    let (space, targets) = (&found.space, &found.facts.targets[..]);
    let gl = gl();
    let the_loop = hidden("__ADAPTIVE_GPU_LOOP");
    let launch = hidden("__adaptive_launch");

    let bindings = lowered.bindings.iter().map(|b| {
        let elem = b.elem.runtime();
        let access = if b.written { quote!(ReadWrite) } else { quote!(Read) };
        let param = params.is_slice(&b.name);
        quote!(#gl::Binding { elem: #elem, access: #gl::Access::#access, param: #param })
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
    let mut inner = TokenStream::new();
    let mut host_reads = TokenStream::new();
    // Where a target's offsets were proved to stay in their row only from a least row width
    // on (`crate::body::interval`), that width is checked first: a narrower row runs as written.
    let mut premises: Vec<TokenStream> = Vec::new();
    let mut fallback = f.clone();
    let units = match space {
        Space::Range { start, end } => {
            let (s, e) = (hidden(&format!("__adaptive_start{stmt}")), hidden(&format!("__adaptive_end{stmt}")));
            prelude.extend(quote!(let #s: usize = #start; let #e: usize = #end;));
            host_reads.extend(quote!(#start #end));
            for (k, t) in targets.iter().enumerate() {
                if let (Stride::Expr(w), true) = (&t.stride, t.min_width > 0) {
                    let var = hidden(&format!("__adaptive_s{k}"));
                    let least = Literal::u64_unsuffixed(t.min_width);
                    inner.extend(quote!(let #var: usize = if #s < #e { #w } else { 0 };));
                    host_reads.extend(w.to_token_stream());
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
                        host_reads.extend(rows.to_token_stream());
                        inner.extend(quote!(let #var: usize = ::adaptive_kernel::__private::split::row_width(#rows);));
                        var
                    });
                    s.count(width.as_ref())
                })
                .collect();
            let n = counts.into_iter().reduce(|a, b| quote!(::core::cmp::min(#a, #b))).expect("a chain has a stream");
            let units = hidden("__adaptive_units");
            inner.extend(quote!(let #units: usize = #n;));
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
        if !matches!(a.source, ArgSource::Width(_)) {
            host_reads.extend(value.clone());
        }
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
    let fill = quote!(#units #(#words)* #(#slices)* #(#accs)*);
    let fill = if premises.is_empty() { fill } else { quote!(if #(#premises)&&* { #fill } else { #launch.narrow(); }) };
    let launch_block = quote!({
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
        #inner
        let mut #launch = #gl::Launch::new(&#the_loop);
        #fill
        #batch.launch(#launch);
    });

    // The fallback reads resident slice parameters through current data.
    let mut current = TokenStream::new();
    for (k, b) in lowered.bindings.iter().enumerate() {
        let name = &b.name;
        if params.is_shared(name) {
            let copy = hidden(&format!("__adaptive_fresh{k}"));
            current.extend(quote!(let #copy = #gl::probe::Probe(&#name[..]).fresh(); let #name = &*#copy;));
        } else if params.is_mutable(name) {
            current.extend(quote!(#gl::probe::ProbeMut(&mut #name[..]).sync();));
        }
    }
    let fallback = quote!(
        #[allow(unused_imports)]
        use #gl::probe::{KnownFresh as _, KnownSync as _, OtherFresh as _, OtherSync as _};
        #current
        #fallback
    );
    let mut written: Vec<Ident> = Vec::new();
    for b in lowered.bindings.iter().filter(|b| b.written) {
        if !written.contains(&b.name) {
            written.push(b.name.clone());
        }
    }
    LoopCode {
        prelude,
        launch: launch_block,
        fallback,
        written,
        reads: lowered.bindings.iter().filter(|b| !b.written).map(|b| b.name.clone()).collect(),
        accs: lowered.accs.iter().map(|a| a.name.clone()).collect(),
        host_reads,
    }
}
