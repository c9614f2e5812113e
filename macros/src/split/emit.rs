//! The code a split loop becomes in the Parallel variant: the loop's range or
//! items cut into chunks, each target cut into the chunks' parts with safe
//! `split_at_mut`, one closure run per chunk (across the pool, or in order
//! when what the loop shares is not `Sync`), and the carried reductions'
//! partial results combined in chunk order.
//!
//! ```text
//! {                                               // for i in START..END { out[i * w + j] ..; e += t; }
//!     use ::adaptive_kernel::__private::split::{Across as _, InOrder as _};
//!     let start: usize = START;
//!     let end: usize = END;
//!     let s0: usize = if start < end { w } else { 0 };   // a row width, when the loop runs at all
//!     let bounds = split::bounds(start, end);    // chunks [lo, hi): from the thread count
//!     let p0 = split::parts(&mut out[..], s0, &bounds);
//!     let jobs: Vec<_> = bounds.into_iter().zip(p0).map(|(b, p0)| (b, p0)).collect();
//!     let partials = (&split::Split::new((&a,), jobs)).run(|job| {
//!         let lo: usize = job.0 .0;
//!         let hi: usize = job.0 .1;
//!         let o0 = job.1;
//!         let _shared = (&a,);                   // the closure names every shared variable whole
//!         let mut e = -0.0f32;                   // this chunk's partial, shadowing `e`
//!         simd_run(|| for i in lo..hi { o0[(i - lo) * w + j] ..; e += t; });
//!         (e,)
//!     });
//!     for q in partials { e += q.0; }            // in chunk order
//! }
//! ```
//!
//! Where a target's offsets stay in their row only from a least width on
//! (`out[r * w + w - 1]` needs `w ≥ 1`: `crate::body::interval`), that premise is
//! checked first: `if start >= end || (s0 >= 1 && …) { /* the above */ }
//! else { for i in start..end { /* the body as written */ } }`, so a
//! narrower row computes what the loop computes, on the calling thread.
//!
//! A slice updated at slots chosen by data (`bins[idx] += 1`: `scatter.rs`)
//! gets one private copy per chunk, cut from one buffer the calling thread
//! keeps between calls (`split::private_parts`); the chunk sets its copy to
//! the update's identity, its loop updates the copy (the slice renamed in
//! it), and after the loop the copies are merged into the slice in chunk
//! order (`split::merge_private`).
//!
//! A chain's chunk walks the same chain over sub-slices (see `chunk.rs`).
//! Generated names are `Span::mixed_site`: the body cannot see them. The
//! chunk's loop keeps the loop's attributes, label, `for` token (and so its
//! line in reports), pattern and body.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::visit_mut::VisitMut;
use syn::{Expr, ExprForLoop};

use super::chunk::StreamVars;
use super::scatter::Rename;
use crate::body::{plain_ident, Carried, Elem, Env, Facts, Op, Space, Stride, Ty, Value, Width};

fn hidden(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

fn private(path: TokenStream) -> TokenStream {
    quote!(::adaptive_kernel::__private::#path)
}

/// `f` split as `space` and `facts` allow: a block expression of type `()`.
pub(super) fn split_loop(f: &ExprForLoop, space: &Space, facts: &Facts, scope: &Env) -> Expr {
    let (lo, hi) = (hidden("__adaptive_lo"), hidden("__adaptive_hi"));
    let bounds = hidden("__adaptive_bounds");
    let split = private(quote!(split));
    let mut prelude = TokenStream::new();
    // What a range loop's premises read (its bounds and row widths), and the premises: the
    // least width each target's offsets were proved for (`crate::body::interval`). Where one fails, the
    // loop runs as written over the same range.
    let mut head = TokenStream::new();
    let mut premises: Vec<TokenStream> = Vec::new();
    let mut fallback: Option<ExprForLoop> = None;
    // The parts of each written slice: (the slice, its stride per unit).
    let mut targets: Vec<(Ident, TokenStream)> = Vec::new();
    let mut chunk_loop = f.clone();
    // A chain's read streams, cut to the chunk (inside the chunk's closure).
    let mut sub_slices = TokenStream::new();
    // What the chunk's closure names from outside: the body's names, and a chain's read streams.
    let mut shared: Vec<Ident> = facts.shared.clone();
    match space {
        Space::Range { start, end } => {
            let (s, e) = (hidden("__adaptive_start"), hidden("__adaptive_end"));
            head.extend(quote!(let #s: usize = #start; let #e: usize = #end;));
            let index = plain_ident_of_pat(&f.pat);
            let mut rebase = Rebase { index, lo: lo.clone(), parts: Vec::new() };
            for (k, t) in facts.targets.iter().enumerate() {
                let stride = match &t.stride {
                    Stride::One => quote!(1usize),
                    Stride::Literal(n) => {
                        let n = proc_macro2::Literal::u64_unsuffixed(*n);
                        quote!(#n)
                    }
                    Stride::Expr(w) => {
                        let var = hidden(&format!("__adaptive_s{k}"));
                        head.extend(quote!(let #var: usize = if #s < #e { #w } else { 0 };));
                        if t.min_width > 0 {
                            let least = proc_macro2::Literal::u64_unsuffixed(t.min_width);
                            premises.push(quote!(#var >= #least));
                        }
                        var.into_token_stream()
                    }
                };
                targets.push((t.name.clone(), stride));
                rebase.parts.push((t.name.to_string(), hidden(&format!("__adaptive_o{k}"))));
            }
            prelude.extend(quote!(let #bounds = #split::bounds(#s, #e);));
            if !premises.is_empty() {
                // An empty loop has no premise: its widths are 0.
                premises.insert(0, quote!(#s >= #e));
                let mut as_written = f.clone();
                *as_written.expr = Expr::Verbatim(quote!(#s..#e));
                fallback = Some(as_written);
            }
            *chunk_loop.expr = Expr::Verbatim(quote!(#lo..#hi));
            rebase.visit_block_mut(&mut chunk_loop.body);
        }
        Space::Chain(chain) => {
            let streams = chain.streams();
            let mut vars = Vec::new();
            let mut counts = Vec::new();
            for (k, s) in streams.iter().enumerate() {
                let width = s.rows.as_ref().map(|rows| {
                    let var = hidden(&format!("__adaptive_w{k}"));
                    // A call, not `assert!`: the `reduce` rewrite cannot see into a macro's tokens.
                    prelude.extend(quote!(let #var: usize = #split::row_width(#rows);));
                    var
                });
                counts.push(s.count(width.as_ref()));
                let part = if s.mutable {
                    let part = hidden(&format!("__adaptive_o{}", targets.len()));
                    let stride = width.as_ref().map_or(quote!(1usize), ToTokens::to_token_stream);
                    targets.push((s.slice.clone(), stride));
                    part
                } else {
                    if !shared.contains(&s.slice) {
                        shared.push(s.slice.clone());
                    }
                    let sub = hidden(&format!("__adaptive_r{k}"));
                    let slice = s.sub_slice(&lo, &hi, width.as_ref());
                    sub_slices.extend(quote!(let #sub = #slice;));
                    sub
                };
                vars.push(StreamVars { part, width });
            }
            let n = counts.into_iter().reduce(|a, b| quote!(::core::cmp::min(#a, #b))).expect("a chain has a stream");
            prelude.extend(quote!(let #bounds = #split::bounds(0, #n);));
            let over = chain.over_chunk(&lo, &mut vars.into_iter());
            *chunk_loop.expr = Expr::Verbatim(over);
        }
    }

    let mut parts: Vec<Ident> = (0..targets.len()).map(|k| hidden(&format!("__adaptive_o{k}"))).collect();
    for ((slice, stride), part) in targets.iter().zip(&parts) {
        prelude.extend(quote!(let #part = #split::parts(&mut #slice[..], #stride, &#bounds);));
    }
    // Each scatter slice's private copies, one per chunk, in one buffer (`scatter.rs`).
    let chunks = hidden("__adaptive_chunks");
    let mut merges = TokenStream::new();
    let mut copies = Vec::new();
    if !facts.scatters.is_empty() {
        prelude.extend(quote!(let #chunks: usize = #bounds.len();));
    }
    for (k, s) in facts.scatters.iter().enumerate() {
        let (len, buffer, copy) = (
            hidden(&format!("__adaptive_xl{k}")),
            hidden(&format!("__adaptive_xb{k}")),
            hidden(&format!("__adaptive_x{k}")),
        );
        let name = &s.name;
        prelude.extend(quote! {
            let #len: usize = #name.len();
            let mut #buffer = #split::private_buffer();
            let #copy = #split::private_parts(&mut #buffer, #len, #chunks);
        });
        let merge = s.merge();
        merges.extend(quote! {
            #split::merge_private(&mut #name[..], &#buffer, #len, #chunks, #merge);
            #split::keep_buffer(#buffer);
        });
        Rename { from: name, to: &copy }.visit_block_mut(&mut chunk_loop.body);
        copies.push((copy.clone(), s));
        parts.push(copy);
    }
    let jobs = hidden("__adaptive_jobs");
    let b = hidden("__adaptive_b");
    // Spelled as paths, not methods: a module with `#![no_implicit_prelude]` has no `Iterator` in scope.
    let zipped = parts.iter().fold(b.to_token_stream(), |acc, p| quote!((#acc, #p)));
    let iter = quote!(::core::iter::Iterator);
    let zips = parts
        .iter()
        .fold(quote!(::core::iter::IntoIterator::into_iter(#bounds)), |acc, p| quote!(#iter::zip(#acc, #p)));
    prelude.extend(quote! {
        let #jobs: ::std::vec::Vec<_> = #iter::collect(#iter::map(#zips, |#zipped| (#b, #(#parts,)*)));
    });

    let job = hidden("__adaptive_job");
    // A part of a float slice says its type, so that the `reduce` rewrite knows what it walks.
    let take_parts = parts.iter().zip(&targets).enumerate().map(|(k, (p, (slice, _)))| {
        let field = syn::Index::from(k + 1);
        match scope.lookup(&slice.to_string()) {
            Some((Ty::Slice { elem: Elem::Float(width), .. }, _)) if width.name().is_some() => {
                let ty = Ident::new(width.name().expect("checked in the guard"), Span::call_site());
                quote!(let #p: &mut [#ty] = #job.#field;)
            }
            _ => quote!(let #p = #job.#field;),
        }
    });
    // A chunk's copy of a scatter slice starts at the update's identity, set on the chunk's thread.
    let take_copies = copies.iter().enumerate().map(|(k, (copy, s))| {
        let field = syn::Index::from(targets.len() + k + 1);
        let identity = s.identity();
        let declared = s.element_type().map(|t| quote!(: &mut [#t]));
        quote! {
            let #copy #declared = #job.#field;
            #copy.fill(#identity);
        }
    });
    let partial_decls = facts.carried.iter().map(|c| {
        let acc = &c.ident;
        let identity = identity(c);
        quote!(let mut #acc = #identity;)
    });
    let accs: Vec<&Ident> = facts.carried.iter().map(|c| &c.ident).collect();
    let partials = hidden("__adaptive_partials");
    let q = hidden("__adaptive_q");
    let combine = facts.carried.iter().enumerate().map(|(k, c)| {
        let (acc, field) = (&c.ident, syn::Index::from(k));
        match c.op {
            Op::Sum => quote!(#acc += #q.#field;),
            Op::Product => quote!(#acc *= #q.#field;),
            Op::Max => quote!(#acc = #acc.max(#q.#field);),
            Op::Min => quote!(#acc = #acc.min(#q.#field);),
        }
    });
    let simd_run = private(quote!(simd_run));
    let whole = hidden("__adaptive_shared");
    // The chunk's partial results; nothing (the closure's value is `()`) when it carries none.
    let partials_out = if accs.is_empty() { TokenStream::new() } else { quote!((#(#accs,)*)) };
    let combine = if facts.carried.is_empty() {
        quote!(let _ = #partials;)
    } else {
        quote!(for #q in #partials { #(#combine)* })
    };
    let first = premises.first();
    let rest = premises.iter().skip(1);
    let (guard, otherwise) = match &fallback {
        Some(f) => (quote!(if #first || (#(#rest)&&*)), quote!(else { #f })),
        None => (TokenStream::new(), TokenStream::new()),
    };
    let tokens = quote!({
        #[allow(unused_imports)]
        use ::adaptive_kernel::__private::split::{Across as _, InOrder as _};
        #head
        #guard {
        #prelude
        let #partials = (&#split::Split::new((#(&#shared,)*), #jobs)).run(|#job| {
            let #lo: usize = #job.0 .0;
            let #hi: usize = #job.0 .1;
            #(#take_parts)*
            #(#take_copies)*
            #[allow(unused_variables)]
            let #whole = (#(&#shared,)*);
            #sub_slices
            #(#partial_decls)*
            // `inline(always)`: the loop must compile inside `simd_run`'s `#[target_feature]` clone,
            // not as a function of its own at the target's baseline.
            #simd_run(#[inline(always)] || { #chunk_loop });
            #partials_out
        });
        #combine
        #merges
        } #otherwise
    });
    // Parsed, not `Expr::Verbatim`, so that the `reduce` rewrite then walks into the chunk's loop.
    syn::parse2(tokens).expect("the split loop is an expression")
}

/// A partial's starting value: the operator's identity, a literal of the accumulator's type
/// (unsuffixed where that is not known: combining the partial into the accumulator infers it).
fn identity(c: &Carried) -> TokenStream {
    let suffix = |w: Width| w.name().unwrap_or("");
    let text = match (c.value, c.op) {
        (Value::Int, _) => "0".to_string(),
        (Value::Float(w), Op::Sum) => format!("-0.0{}", suffix(w)),
        (Value::Float(w), Op::Product) => format!("1.0{}", suffix(w)),
        (Value::Float(w), Op::Max | Op::Min) => format!("{}::NAN", w.name().expect("a max or min has a known width")),
    };
    text.parse().expect("a literal or a path")
}

fn plain_ident_of_pat(pat: &syn::Pat) -> Option<Ident> {
    match pat {
        syn::Pat::Ident(p) => Some(p.ident.clone()),
        _ => None,
    }
}

/// Sends a range loop's writes to the chunk's parts: `out[E]` becomes `part[E']`, where
/// `E'` is `E` with the index `i` replaced by `(i - lo)`.
struct Rebase {
    index: Option<Ident>,
    lo: Ident,
    /// Target name → its part.
    parts: Vec<(String, Ident)>,
}

impl VisitMut for Rebase {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Index(ix) = e {
            let target = plain_ident(&ix.expr).and_then(|n| self.parts.iter().find(|(t, _)| n == t));
            if let Some((_, part)) = target {
                let part = part.clone();
                let mut index = (*ix.index).clone();
                RebaseIndex { index: self.index.clone(), lo: self.lo.clone() }.visit_expr_mut(&mut index);
                *e = Expr::Verbatim(quote!(#part[#index]));
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// `i` → `(i - lo)` in one index expression.
struct RebaseIndex {
    index: Option<Ident>,
    lo: Ident,
}

impl VisitMut for RebaseIndex {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let (Some(i), Some(n)) = (&self.index, plain_ident(e)) {
            if n == *i {
                let lo = &self.lo;
                *e = Expr::Verbatim(quote!((#n - #lo)));
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}
