//! The code a [`Plan`] becomes: the reduction's elements taken a chunk of
//! `LANES` at a time, each element's update going to its own partial result
//! (lane) of every accumulator, so the lanes are independent and the compiler
//! vectorises them; then the lanes folded into the accumulator, and the
//! remaining elements (fewer than a chunk, or from where a chunked read would
//! have been out of bounds) run by the body exactly as written.
//!
//! ```text
//! {                                          // for i in START..END { acc += w[BASE + i] * x[i]; }
//!     let mut k: usize = START;              // (over slices: 0, and END is the length)
//!     let end: usize = END;
//!     if end.saturating_sub(k) >= NARROW {
//!         if end.saturating_sub(k) >= 4 * LANES {     // the wide level
//!             let mut lanes0 = sum_lanes::<_, LANES>(&acc);  // the operator's identity: -0.0, 1.0 or NaN
//!             while end.saturating_sub(k) >= LANES {
//!                 // w[BASE + i] and x[i] for the whole chunk, bounds-checked once
//!                 let (Some(h0), Some(h1)) = (chunk::<_, LANES>(&w[..], BASE, k), chunk::<_, LANES>(&x[..], 0, k))
//!                     else { break };
//!                 for l in 0..LANES {
//!                     let i: usize = k + l;
//!                     lanes0[l] += h0[l] * h1[l];    // the body: `acc` → `lanes0[l]`, reads → chunk elements
//!                 }
//!                 k += LANES;
//!             }
//!             acc = sum(acc, lanes0);        // acc + pairwise sum of the lanes
//!         }
//!         { /* the same with NARROW = LANES / 4 lanes */ }
//!     }
//!     for i in k..end { acc += w[BASE + i] * x[i]; }   // the rest, as written
//! }
//! ```
//!
//! Every element is visited in the original order and its body runs once, so
//! the only change is the grouping of the accumulator's operations. A chunked
//! read that would fail leaves the level to the next one and finally to the
//! verbatim tail, which then fails (or wraps, in release) exactly where the
//! original did. A `continue` guard of the body (see
//! [`continue_guard`](super::recognise::continue_guard)) ends one lane's
//! iteration, which is one element's. Generated names are `Span::mixed_site`:
//! the body cannot see them.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat};

use super::recognise::{Init, Plan, Source};
use crate::body::{plain_ident, Fold, Op};

pub(super) fn hidden(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The helpers in the facade (`adaptive_kernel::__private::reduce`).
pub(super) fn helper(name: &str) -> TokenStream {
    let name = Ident::new(name, Span::call_site());
    quote!(::adaptive_kernel::__private::reduce::#name)
}

/// How many chunks of the plan's lanes must remain before the wide level runs; below, the
/// narrow level takes them. A fold of 32 lanes costs about as much as 64 elements in 8-lane
/// chunks, so a short reduction (a k-means distance over 16 to 100 dimensions) runs faster
/// in the narrow lanes alone (figures: BENCHMARKS.md, issue 23).
pub(super) const WIDE_AFTER_CHUNKS: usize = 4;

/// The rewritten `for` loop: a block expression of type `()`.
///
/// Two levels of chunks before the verbatim tail: the plan's lanes (32 for `f32`, 16 for
/// `f64`) while at least [`WIDE_AFTER_CHUNKS`] such chunks remain, then the plan's narrow
/// lanes (a quarter as many); each level folds its lanes into the accumulators (all at once
/// with `sum_all` when the plan says so). A plan whose two levels are as wide (a jam's, see
/// `jam.rs`) gets the one level. A loop shorter than one narrow chunk costs one comparison
/// more than the loop as written.
///
/// The chunk loop's condition is `end.saturating_sub(k) >= LANES` in both forms, though over
/// a slice `end - k` cannot underflow: with a computable trip count LLVM's loop vectoriser
/// also vectorises the chunk loop itself when the lanes are `max`/`min` reductions (which it
/// may reorder), 8 chunks of 32 lanes at a time, and spills them all (measured: 5× slower
/// than the chunk loop alone at 100K elements).
pub(crate) fn rewritten_loop(plan: &Plan) -> Expr {
    let (k, l, end) = (hidden("__adaptive_k"), hidden("__adaptive_l"), hidden("__adaptive_end"));
    let lane_vars: Vec<Ident> = (0..plan.accs.len()).map(|n| hidden(&format!("__adaptive_lanes{n}"))).collect();
    let (chunk, chunk_mut) = (helper("chunk"), helper("chunk_mut"));
    let pat = &plan.pat;
    let body = &plan.body;
    let reads: Vec<Ident> = (0..plan.hoists.len()).map(|n| hidden(&format!("__adaptive_h{n}"))).collect();
    let mut lanes_body = body.clone();
    Lanes {
        accs: plan.accs.iter().zip(&lane_vars).map(|(a, v)| (a.ident.to_string(), quote!(#v[#l]))).collect(),
        reads: plan
            .hoists
            .iter()
            .zip(&reads)
            .flat_map(|((_, exprs), var)| {
                let place = quote!(#var[#l]);
                exprs.iter().map(move |e| (e.to_token_stream().to_string(), place.clone()))
            })
            .collect(),
    }
    .visit_block_mut(&mut lanes_body);
    let lane_stmts = &lanes_body.stmts;

    // One level: lanes from the identity, chunks of `lanes` while they last, the lanes folded.
    let level = |lanes: usize, checked: &dyn Fn(&Literal) -> TokenStream, item: &TokenStream| {
        let lanes = Literal::usize_unsuffixed(lanes);
        let mut init = TokenStream::new();
        let mut combine = TokenStream::new();
        for (acc, var) in plan.accs.iter().zip(&lane_vars) {
            let (identity, fold) = match acc.fold {
                Fold::Op(Op::Sum) => ("sum_lanes", "sum"),
                Fold::Op(Op::Product) => ("product_lanes", "product"),
                Fold::Op(Op::Max) => ("extremum_lanes", "max"),
                Fold::Op(Op::Min) => ("extremum_lanes", "min"),
                Fold::KeepGreater => ("keep_lanes", "keep_greater"),
                Fold::KeepLess => ("keep_lanes", "keep_less"),
            };
            let (identity, fold, acc) = (helper(identity), helper(fold), &acc.ident);
            init.extend(quote!(let mut #var = #identity::<_, #lanes>(&#acc);));
            combine.extend(quote!(#acc = #fold(#acc, #var);));
        }
        let checked = checked(&lanes);
        let all_sums = plan.accs.iter().all(|a| a.fold == Fold::Op(Op::Sum));
        if plan.fold_together && all_sums && plan.accs.len() > 1 {
            let accs: Vec<&Ident> = plan.accs.iter().map(|a| &a.ident).collect();
            let folded = hidden("__adaptive_folded");
            let index = (0..accs.len()).map(syn::Index::from);
            let sum_all = helper("sum_all");
            combine = quote!(
                let #folded = #sum_all([#(#accs),*], [#(#lane_vars),*]);
                #(#accs = #folded[#index];)*
            );
        }
        quote!({
            #init
            while #end.saturating_sub(#k) >= #lanes {
                #checked
                for #l in 0..#lanes {
                    #item
                    #(#lane_stmts)*
                }
                #k += #lanes;
            }
            #combine
        })
    };
    let levels = |checked: &dyn Fn(&Literal) -> TokenStream, item: &TokenStream| {
        let (wide, narrow) = (plan.lanes, plan.narrow);
        let wide_after = Literal::usize_unsuffixed(wide * WIDE_AFTER_CHUNKS);
        let narrow_lit = Literal::usize_unsuffixed(narrow);
        if wide == narrow {
            let narrow = level(narrow, checked, item);
            return quote!(if #end.saturating_sub(#k) >= #narrow_lit #narrow);
        }
        let (wide, narrow) = (level(wide, checked, item), level(narrow, checked, item));
        quote!(
            if #end.saturating_sub(#k) >= #narrow_lit {
                if #end.saturating_sub(#k) >= #wide_after #wide
                #narrow
            }
        )
    };

    // The hoisted reads of a chunk at `k`: reads at the index of a range or `enumerate` loop.
    let hoisted = |lanes: &Literal| -> Vec<TokenStream> {
        plan.hoists
            .iter()
            .map(|(h, _)| {
                let slice = &h.slice;
                let base = h.base.as_ref().map_or(quote!(0), ToTokens::to_token_stream);
                match h.mutable {
                    true => quote!(#chunk_mut::<_, #lanes>(&mut #slice[..], #base, #k)),
                    false => quote!(#chunk::<_, #lanes>(&#slice[..], #base, #k)),
                }
            })
            .collect()
    };
    let tokens = match &plan.source {
        Source::Range { start, end: last } => {
            let checked = |lanes: &Literal| {
                if reads.is_empty() {
                    return TokenStream::new();
                }
                let calls = hoisted(lanes);
                quote!(let (#(::core::option::Option::Some(#reads),)*) = (#(#calls,)*) else { break; };)
            };
            let index = match pat {
                Pat::Wild(_) => TokenStream::new(),
                pat => quote!(#[allow(unused_variables, unused_mut)] let #pat: usize = #k + #l;),
            };
            let levels = levels(&checked, &index);
            quote!({
                let mut #k: usize = #start;
                let #end: usize = #last;
                #levels
                for #pat in #k..#end #body
            })
        }
        Source::Slices { items, indexed } => {
            let slices: Vec<Ident> = (0..items.len()).map(|n| hidden(&format!("__adaptive_s{n}"))).collect();
            let chunks: Vec<Ident> = (0..items.len()).map(|n| hidden(&format!("__adaptive_c{n}"))).collect();
            let originals = items.iter().map(|s| &s.slice);
            let len = match slices.as_slice() {
                [one] => quote!(#one.len()),
                [a, b] => quote!(::core::cmp::min(#a.len(), #b.len())),
                _ => unreachable!("a source has one slice or two zipped"),
            };
            let (mut lane_items, mut tail_items, mut binds) = (Vec::new(), Vec::new(), Vec::new());
            for (((item, s), h), original) in items.iter().zip(&slices).zip(&chunks).zip(originals) {
                if item.mutable {
                    lane_items.push(quote!(&mut #h[#l]));
                    tail_items.push(quote!(#s[#k..#end].iter_mut()));
                    binds.push(quote!(let #s: &mut [_] = &mut #original[..];));
                } else {
                    binds.push(quote!(let #s: &[_] = &#original[..];));
                    if item.by_value {
                        lane_items.push(quote!(#h[#l]));
                        tail_items.push(quote!(#s[#k..#end].iter().copied()));
                    } else {
                        lane_items.push(quote!(&#h[#l]));
                        tail_items.push(quote!(#s[#k..#end].iter()));
                    }
                }
            }
            let (lane_item, tail) = match (lane_items.as_slice(), tail_items.as_slice()) {
                ([one], [tail]) => (one.clone(), tail.clone()),
                ([a, b], [ta, tb]) => (quote!((#a, #b)), quote!(#ta.zip(#tb))),
                _ => unreachable!("a source has one slice or two zipped"),
            };
            // `enumerate`: each item with its index, which is `k + l` in a chunk and counts from `k` in the tail.
            let (lane_item, tail) = match indexed {
                true => (quote!((#k + #l, #lane_item)), quote!((#k..#end).zip(#tail))),
                false => (lane_item, tail),
            };
            let checked = |lanes: &Literal| {
                let calls = hoisted(lanes);
                let takes = items.iter().zip(&slices).map(|(item, s)| match item.mutable {
                    true => quote!(#chunk_mut::<_, #lanes>(&mut #s[..], 0, #k)),
                    false => quote!(#chunk::<_, #lanes>(#s, 0, #k)),
                });
                quote!(let (#(::core::option::Option::Some(#chunks),)* #(::core::option::Option::Some(#reads),)*) =
                    (#(#takes,)* #(#calls,)*) else { break; };)
            };
            let item = quote!(#[allow(unused_variables, unused_mut)] let #pat = #lane_item;);
            let levels = levels(&checked, &item);
            quote!({
                #(#binds)*
                let #end: usize = #len;
                let mut #k: usize = 0;
                #levels
                for #pat in #tail #body
            })
        }
    };
    Expr::Verbatim(tokens)
}

/// The rewritten iterator reduction: a parenthesised block expression of the result's type.
pub(crate) fn rewritten_expr(plan: &Plan, init: &Init) -> Expr {
    let acc = &plan.accs[0].ident;
    let ty = |w: &crate::body::Width| w.name().map(|n| Ident::new(n, Span::call_site()));
    let decl = match init {
        Init::Sum(w) => {
            let t = ty(w);
            quote!(let mut #acc: #t = <#t as ::core::iter::Sum>::sum(::core::iter::empty::<#t>());)
        }
        Init::Product(w) => {
            let t = ty(w);
            quote!(let mut #acc: #t = <#t as ::core::iter::Product>::product(::core::iter::empty::<#t>());)
        }
        Init::Fold(e, w) => match ty(w) {
            Some(t) => quote!(let mut #acc: #t = #e;),
            None => quote!(let mut #acc = #e;),
        },
    };
    let reduction = rewritten_loop(plan);
    Expr::Verbatim(quote!(({ #decl #reduction #acc })))
}

/// Rewrites a copy of the body for one lane: accumulators to their lane, hoisted reads to their
/// chunk (and, for an element-wise loop, written elements to theirs).
pub(super) struct Lanes {
    /// Accumulator name → its lane (`__adaptive_lanes0[__adaptive_l]`).
    pub accs: Vec<(String, TokenStream)>,
    /// A hoisted `x[..]` read, as tokens → its chunk element (`__adaptive_h0[__adaptive_l]`).
    pub reads: Vec<(String, TokenStream)>,
}

impl VisitMut for Lanes {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let replacement = match e {
            Expr::Index(_) => {
                let key = e.to_token_stream().to_string();
                self.reads.iter().find(|(k, _)| *k == key).map(|(_, r)| r.clone())
            }
            Expr::Path(_) => {
                plain_ident(e).and_then(|id| self.accs.iter().find(|(a, _)| id == a).map(|(_, r)| r.clone()))
            }
            _ => None,
        };
        match replacement {
            Some(tokens) => *e = Expr::Verbatim(tokens),
            None => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}
