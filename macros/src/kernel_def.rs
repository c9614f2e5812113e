//! [`KernelDef`]: everything known about one kernel, parsed and checked, and
//! what the generators (`wrapper`, `variants`, `in_impl`) read. It sits apart
//! from `expand`, which prints it through those generators, so that the
//! generators depend on it and nothing here depends on them.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::{Item, ItemFn};

use crate::args::Args;
use crate::attrs::Attrs;
use crate::body::{self, Body};
use crate::errors::Errors;
use crate::hash::token_hash;
use crate::layout_guard;
use crate::reason::Reason;
use crate::reduce::{self, LoopReport};
use crate::relocate::relocate;
use crate::shader::{self, GpuReport};
use crate::signature::{self, Param, Shape};
use crate::size::default_size;
use crate::split::{self, OptOut, SplitReport};
use crate::verify::{self, Verification};

/// Everything known about one kernel, checked; what the generators read.
pub(crate) struct KernelDef {
    /// The function as written (its attributes are read through `attrs`).
    pub func: ItemFn,
    /// Its signature and body with module-relative paths moved to where the variants live.
    pub relocated: ItemFn,
    /// The relocated body with its float reductions reassociated: the SIMD variant's body.
    pub simd_body: syn::Block,
    /// The generated Parallel variant's body: the relocated body with its top-level loops split
    /// across threads where they can be, then its reductions reassociated; `None` when the
    /// kernel has no generated Parallel variant (`parallel = path`, `serial`, or nothing to run
    /// in parallel).
    pub parallel_body: Option<syn::Block>,
    /// Each float reduction of the body, and the variants that compute it in lanes.
    pub loops: Vec<Lanes>,
    /// What was done to each top-level `for` loop for the Parallel variant.
    pub splits: Vec<SplitReport>,
    /// The GPU variant's body (unless `gpu = path`): the relocated body with each top-level
    /// loop that can run on the GPU replaced by its GPU run.
    pub gpu_body: syn::Block,
    /// What the GPU variant does with each top-level `for` loop.
    pub gpu_loops: Vec<GpuReport>,
    /// The `&[T]` parameters the GPU variant's host code reads (the `k::resident` entry makes a
    /// resident handle passed there current first); `None` when the GPU variant's body is not
    /// the generated one (`exact`, `gpu = path`): the kernel then has no `k::resident` entry.
    pub gpu_host_reads: Option<Vec<syn::Ident>>,
    pub attrs: Attrs,
    pub params: Vec<Param>,
    pub args: Args,
    /// The `usize` expression the call is routed by: the attribute's `size`, or the default.
    pub size: TokenStream,
    /// The body's first `ops` that starts a path (`ops::matmul(..)`), if any.
    pub ops_use: Option<syn::Ident>,
    /// Whether the kernel has a GPU variant: `gpu = path`, or, unless it is `exact`, a body
    /// that calls `ops::` or a top-level loop that runs on the GPU.
    pub has_gpu: bool,
    /// Whether the kernel has a Parallel variant: `parallel = path`, or, unless it is `serial`,
    /// a body that calls `ops::` or a top-level loop split across threads.
    pub has_parallel: bool,
    pub token_hash: u64,
    /// Free function (`mod k` beside it) or method/associated function (everything inside it).
    pub shape: Shape,
    /// The function's type and const parameters, as a turbofish names them; empty if it has none.
    pub generic_args: Vec<syn::Ident>,
    /// Whether and when the wrapper compares variants with Scalar.
    pub verification: Verification,
}

/// A float reduction of the body, and which variants compute it in lanes.
pub(crate) struct Lanes {
    /// What the SIMD variant did to it.
    pub report: LoopReport,
    /// Whether the generated Parallel variant computes it in lanes too.
    pub parallel: bool,
}

impl Lanes {
    /// The SIMD variant's reports, each marked with whether the Parallel variant's body
    /// (`parallel`: its reports, when it has a generated one) rewrote the same reduction:
    /// the one at the same line with the same idiom, in order.
    ///
    /// The report lists every libm call either variant replaces (`vector_math`), and a
    /// rewrite only the Parallel variant's body makes (a split loop's chunk, whose range the
    /// SIMD variant could not take) is reported too, for Parallel alone: whatever a variant
    /// does to a loop, the report says it.
    fn match_up(simd: Vec<LoopReport>, parallel: Option<&[LoopReport]>) -> Vec<Lanes> {
        let mut lanes: Vec<Lanes> = simd.into_iter().map(|report| Lanes { report, parallel: false }).collect();
        for p in parallel.unwrap_or_default().iter().filter(|p| p.rewritten) {
            // The same reduction: the first one not matched yet at the same line with the same
            // idiom. The split may emit a loop's body more than once (its chunks and the rest):
            // a further copy of a reduction already matched is the same loop, not another one.
            let same = |l: &Lanes| l.report.line == p.line && l.report.idiom == p.idiom;
            let at = lanes.iter().position(|l| same(l) && !l.parallel).or_else(|| lanes.iter().position(same));
            match at.map(|at| &mut lanes[at]) {
                Some(lane) => {
                    lane.parallel = true;
                    for name in &p.math {
                        if !lane.report.math.contains(name) {
                            lane.report.math.push(name);
                        }
                    }
                }
                None => {
                    let report = LoopReport { rewritten: false, reason: None, ..p.clone() };
                    lanes.push(Lanes { report, parallel: true });
                }
            }
        }
        lanes.sort_by_key(|l| l.report.line);
        lanes
    }
}

/// What each variant's opt-out says (`exact`, `simd = path`, `parallel = path` or `serial`,
/// `gpu = path`).
#[derive(Clone, Copy)]
struct OptOuts {
    exact: bool,
    simd: Option<Reason>,
    split: Option<OptOut>,
    gpu: Option<Reason>,
}

/// The three rewrites of one body, from its model.
struct Rewrites {
    simd_body: syn::Block,
    simd_loops: Vec<LoopReport>,
    /// The split body with its reductions reassociated, and its reports: the Parallel variant's
    /// body when the kernel has a generated one.
    parallel: (syn::Block, Vec<LoopReport>),
    splits: Vec<SplitReport>,
    gpu_body: syn::Block,
    gpu_loops: Vec<GpuReport>,
    gpu_host_reads: Option<Vec<syn::Ident>>,
}

impl Rewrites {
    /// The rewrites of `block`, a body of signature `sig`, from its model, built once here.
    fn of(block: &syn::Block, sig: &syn::Signature, opt_outs: OptOuts) -> Rewrites {
        let model = Body::new(block, sig, opt_outs.exact);
        let (simd_body, simd_loops) = reduce::reassociate(block, &model, opt_outs.simd);
        let (split_body, splits) = split::split(block, &model, opt_outs.split);
        // The Parallel variant's body: the split, then the SIMD variant's rewrite over it.
        let parallel = reduce::reassociate(&split_body, &model, opt_outs.simd);
        let gpu = shader::gpu_loops(block, sig, &model, opt_outs.gpu);
        Rewrites {
            simd_body,
            simd_loops,
            parallel,
            splits,
            gpu_body: gpu.block,
            gpu_loops: gpu.reports,
            gpu_host_reads: gpu.host_reads,
        }
    }

    /// Whether any variant rewrites anything: a reduction in lanes, a loop split or on the GPU.
    fn any(&self) -> bool {
        self.simd_loops.iter().any(|l| l.rewritten)
            || self.parallel.1.iter().any(|l| l.rewritten)
            || self.splits.iter().any(|s| s.reason.is_none())
            || self.gpu_loops.iter().any(|l| l.reason.is_none())
    }
}

/// Which backend's op set a variant binds `ops` to ([`KernelDef::ops`]).
#[derive(Clone, Copy)]
pub(crate) enum OpSet {
    Scalar,
    Simd,
    Par,
    Gpu,
}

impl KernelDef {
    /// The `__private` name of the op set the variant for `set` binds `ops` to. Under
    /// `exact` the SIMD and Parallel ones keep Scalar's order of operations
    /// (`ops::exact`), so every variant returns Scalar's bits (the GPU variant is then
    /// only a `gpu = path` of the user's).
    pub(crate) fn ops(&self, set: OpSet) -> syn::Ident {
        let name = match (set, self.args.exact) {
            (OpSet::Scalar, _) => "ops_scalar",
            (OpSet::Simd, false) => "ops_simd",
            (OpSet::Simd, true) => "ops_exact_simd",
            (OpSet::Par, false) => "ops_par",
            (OpSet::Par, true) => "ops_exact_par",
            (OpSet::Gpu, _) => "ops_gpu",
        };
        syn::Ident::new(name, Span::call_site())
    }

    pub(crate) fn new(args: TokenStream, item: &Item) -> syn::Result<KernelDef> {
        let mut errors = Errors::new();
        let parsed_args = Args::parse(args.clone(), &mut errors);
        let func = match signature::function(item) {
            Ok(func) => func,
            Err(e) => return Err(errors.fail(e)),
        };
        let params = signature::check(&func.sig);
        // Stand-ins (empty) only where an error is recorded; then nothing is generated.
        let size = match (&parsed_args.size, &params) {
            (Some(size), _) => size.to_token_stream(),
            (None, Ok(params)) => default_size(params).unwrap_or_else(|| {
                // After a syntax error the attribute may hold a `size` past it: say nothing.
                if parsed_args.complete {
                    errors.error(
                        func.sig.paren_token.span.join(),
                        format!(
                            "cannot infer the size of a call: `{}` has no slice-like parameter (`&[T]`, `&mut [T]`, \
                             `&Vec<T>`, `Vec<T>`, `[T; N]`) and no ndarray array or view (`&Array2<T>`, \
                             `ArrayView2<T>`, `ArrayViewMut1<T>`, …); add `size = <usize expression>` to the \
                             attribute, e.g. `size = n * n`",
                            func.sig.ident
                        ),
                    );
                }
                TokenStream::new()
            }),
            (None, Err(_)) => TokenStream::new(),
        };
        let params = errors.take(params).unwrap_or_default();
        let ops_use = first_ops_path(func.block.to_token_stream());
        if let (Some(ops), Some(t)) = (&ops_use, first_type_param(&func.sig.generics)) {
            errors.error(
                ops.span(),
                format!(
                    "a kernel generic over a type (`{t}`) cannot call `ops::`: the op set is `f32`-only; write the \
                     generic body with plain loops (the SIMD variant vectorises them), or make an `f32` kernel \
                     that calls `ops::` and call it where `{t}` is `f32`"
                ),
            );
        }
        let shape = Shape::of(func, parsed_args.associated, &mut errors);
        let verification = verify::plan(&parsed_args, &func.sig, &params, &mut errors);
        let verification = verify::for_shape(verification, shape, &func.sig, &mut errors);
        errors.finish()?;

        let relocated = match shape {
            Shape::Free => {
                let (sig, block) = (&func.sig, &func.block);
                syn::parse2::<ItemFn>(relocate(quote!(#sig #block)))?
            }
            // The variants stay inside the function, where the body was written.
            Shape::InImpl => func.clone(),
        };
        // A hand-written SIMD variant: the body is not the SIMD variant's, and stays as written
        // (the Parallel one, if it is the body, too); its reductions are reported left alone.
        let opt_out = match (parsed_args.exact, &parsed_args.simd) {
            (true, _) => Some(Reason::Exact),
            (false, Some(_)) => Some(Reason::Simd),
            (false, None) => None,
        };
        let split_opt_out = match (&parsed_args.parallel, parsed_args.serial) {
            (Some(_), _) => Some(OptOut::Parallel),
            (None, true) => Some(OptOut::Serial),
            (None, false) => None,
        };
        let gpu_opt_out = match (parsed_args.exact, &parsed_args.gpu) {
            (true, _) => Some(Reason::Exact),
            (false, Some(_)) => Some(Reason::Gpu),
            (false, None) => None,
        };
        let opt_outs = OptOuts { exact: parsed_args.exact, simd: opt_out, split: split_opt_out, gpu: gpu_opt_out };
        // A body over ndarray arrays is rewritten lowered to slices (`body::lower`), behind a
        // per-call guard of their layout (`layout_guard`), where that gets a variant a rewrite.
        let lowered = match shape {
            Shape::Free => body::lower(&relocated.sig, &relocated.block)
                .map(|lowered| (Rewrites::of(&lowered.block, &lowered.sig, opt_outs), lowered))
                .filter(|(rewrites, _)| rewrites.any()),
            Shape::InImpl => None,
        };
        let (mut rewrites, lowered) = match lowered {
            Some((rewrites, lowered)) => (rewrites, Some(lowered)),
            None => (Rewrites::of(&relocated.block, &relocated.sig, opt_outs), None),
        };
        if let Some(lowered) = &lowered {
            // A call whose arrays fail the guard runs the body as written, in every variant.
            let generic_args = signature::generic_args(&func.sig.generics);
            let kernel = if generic_args.is_empty() {
                quote!(super::KERNEL)
            } else {
                quote!(__adaptive_kernel::<#(#generic_args),*>())
            };
            let guard = |b: &syn::Block| layout_guard::guarded(lowered, &kernel, b, &relocated.block);
            rewrites.simd_body = guard(&rewrites.simd_body);
            rewrites.parallel.0 = guard(&rewrites.parallel.0);
            rewrites.gpu_body = guard(&rewrites.gpu_body);
            // The `k::resident` entry's host copies assume the generated GPU body, not the body
            // as written that the guard may run instead: these kernels have no such entry.
            rewrites.gpu_host_reads = None;
        }
        let Rewrites { simd_body, simd_loops, parallel, splits, gpu_body, gpu_loops, gpu_host_reads } = rewrites;
        let token_hash = token_hash([&args, &func.sig.to_token_stream(), &func.block.to_token_stream()]);
        let any_gpu_loop = gpu_loops.iter().any(|l| l.reason.is_none());
        // `exact`: no GPU op keeps Scalar's bits (a GPU may flush subnormals, drop NaN payloads,
        // fuse `a*b + c` and reduce in a tree), so only a `gpu = path` of the user's is one.
        let has_gpu = parsed_args.gpu.is_some() || (!parsed_args.exact && (ops_use.is_some() || any_gpu_loop));
        let any_split = splits.iter().any(|s| s.reason.is_none());
        // `serial`: the kernel stays on the calling thread, so no Parallel variant, whatever the
        // body calls (`ops::` would bind to `ops::par`, which forks); `parallel = path` beside it
        // is an error (`Args::parse`).
        let has_parallel = parsed_args.parallel.is_some() || (!parsed_args.serial && (ops_use.is_some() || any_split));
        let parallel = (has_parallel && parsed_args.parallel.is_none()).then_some(parallel);
        let loops = Lanes::match_up(simd_loops, parallel.as_ref().map(|(_, reports)| reports.as_slice()));
        let parallel_body = parallel.map(|(body, _)| body);
        Ok(KernelDef {
            func: func.clone(),
            relocated,
            simd_body,
            parallel_body,
            loops,
            splits,
            gpu_body,
            gpu_loops,
            gpu_host_reads,
            attrs: Attrs::sort(&func.attrs),
            params,
            args: parsed_args,
            size,
            ops_use,
            has_gpu,
            has_parallel,
            token_hash,
            shape,
            generic_args: signature::generic_args(&func.sig.generics),
            verification,
        })
    }

    /// The parameter names, in order, as the forwarding calls pass them.
    pub(crate) fn arg_names(&self) -> Vec<&syn::Ident> {
        self.params.iter().map(|p| &p.ident).collect()
    }

    /// Whether the kernel is generic over types or consts: one routing table per instantiation.
    pub(crate) fn is_generic(&self) -> bool {
        !self.generic_args.is_empty()
    }

    /// `::<T, N>` naming the function's type and const parameters, or nothing.
    pub(crate) fn turbofish(&self) -> TokenStream {
        let args = &self.generic_args;
        if args.is_empty() {
            TokenStream::new()
        } else {
            quote!(::<#(#args),*>)
        }
    }

    /// A generated identifier that the user's code cannot see or clash with.
    pub(crate) fn hidden(name: &str) -> syn::Ident {
        syn::Ident::new(name, Span::mixed_site())
    }
}

/// The first type parameter of `generics`, if any.
fn first_type_param(generics: &syn::Generics) -> Option<&syn::Ident> {
    generics.type_params().next().map(|t| &t.ident)
}

/// The first `ops` in `tokens` that starts a path `ops::…` (also inside macro calls).
fn first_ops_path(tokens: TokenStream) -> Option<syn::Ident> {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let is_colon = |i: usize| matches!(tts.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ':');
    tts.iter().enumerate().find_map(|(i, tt)| match tt {
        TokenTree::Ident(id)
            if id == "ops" && is_colon(i + 1) && is_colon(i + 2) && !(i >= 2 && is_colon(i - 1) && is_colon(i - 2)) =>
        {
            Some(id.clone())
        }
        TokenTree::Group(g) => first_ops_path(g.stream()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_ops_calls_only_at_the_start_of_a_path() {
        let calls_ops = |t: TokenStream| first_ops_path(t).is_some();
        assert!(calls_ops(quote!({
            let c = ops::matmul(a, b, m, n, k);
            c
        })));
        assert!(calls_ops(quote!({ vec![ops::sum(x)] })));
        assert!(!calls_ops(quote!({ adaptive_kernel::ops::sum(x) })));
        assert!(!calls_ops(quote!({
            let ops = 3;
            ops + 1
        })));
    }

    #[test]
    fn loops_inside_a_split_loops_chunks_are_rewritten_too() {
        // The Parallel variant's body: the split, then the SIMD variant's rewrite over it.
        let item: Item = syn::parse2(quote!(
            fn k(src: &[f32], dst: &mut [f32], w: usize, s: f32) {
                for (y, out) in dst.chunks_exact_mut(w).enumerate() {
                    let row = &src[y * w..(y + 1) * w];
                    for x in 1..w - 1 {
                        out[x] = (row[x - 1] + row[x + 1]) * s;
                    }
                }
                for i in 0..src.len() {
                    dst[i] = src[i] * s;
                }
            }
        ))
        .unwrap();
        let k = KernelDef::new(quote!(complexity = "Low"), &item).unwrap();
        assert!(k.splits.iter().all(|s| s.reason.is_none()));
        let lanes: Vec<(&str, bool, bool)> =
            k.loops.iter().map(|l| (l.report.idiom.as_str(), l.report.rewritten, l.parallel)).collect();
        assert_eq!(lanes, [("for range =", true, true), ("for range =", true, true)]);
        let parallel = k.parallel_body.unwrap().into_token_stream().to_string();
        // Two loops, each with its windows' path and its slices' path.
        assert!(parallel.matches("chunk_mut :: < _ , 64 >").count() == 4, "{parallel}");
    }
}
