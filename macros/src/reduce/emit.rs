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
//!     let mut lanes0 = sum_lanes::<_, LANES>(&acc);  // the operator's identity: -0.0, 1.0 or NaN
//!     while end.saturating_sub(k) >= LANES {
//!         // w[BASE + i] and x[i] for the whole chunk, bounds-checked once
//!         let (Some(h0), Some(h1)) = (chunk::<_, LANES>(&w[..], BASE, k), chunk::<_, LANES>(&x[..], 0, k))
//!             else { break };
//!         for l in 0..LANES {
//!             let i: usize = k + l;
//!             lanes0[l] += h0[l] * h1[l];        // the body: `acc` → `lanes0[l]`, reads → chunk elements
//!         }
//!         k += LANES;
//!     }
//!     acc = sum(acc, &{ lanes0 });           // acc + pairwise sum of the lanes (out of line)
//!     for i in k..end { acc += w[BASE + i] * x[i]; }   // the rest, as written
//! }
//! ```
//!
//! Every element is visited in the original order and its body runs once, so
//! the only change is the grouping of the accumulator's operations. A chunked
//! read that would fail leaves the loop to the verbatim tail, which then fails
//! (or wraps, in release) exactly where the original did. Generated names are
//! `Span::mixed_site`: the body cannot see them.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat};

use super::recognise::{plain_ident, Init, Op, Plan, Source};

fn hidden(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The helpers in the facade (`adaptive_kernel::__private::reduce`).
fn helper(name: &str) -> TokenStream {
    let name = Ident::new(name, Span::call_site());
    quote!(::adaptive_kernel::__private::reduce::#name)
}

/// The rewritten `for` loop: a block expression of type `()`.
///
/// The chunk loop's condition is `end.saturating_sub(k) >= LANES` in both forms, though over
/// a slice `end - k` cannot underflow: with a computable trip count LLVM's loop vectoriser
/// also vectorises the chunk loop itself when the lanes are `max`/`min` reductions (which it
/// may reorder), 8 chunks of 32 lanes at a time, and spills them all (measured: 5× slower
/// than the chunk loop alone at 100K elements).
pub(crate) fn rewritten_loop(plan: &Plan) -> Expr {
    let lanes = Literal::usize_unsuffixed(plan.lanes);
    let (k, l, end) = (hidden("__adaptive_k"), hidden("__adaptive_l"), hidden("__adaptive_end"));
    let lane_vars: Vec<Ident> = (0..plan.accs.len()).map(|n| hidden(&format!("__adaptive_lanes{n}"))).collect();
    let mut init = TokenStream::new();
    let mut combine = TokenStream::new();
    for (acc, var) in plan.accs.iter().zip(&lane_vars) {
        let (identity, fold) = match acc.op {
            Op::Sum => ("sum_lanes", "sum"),
            Op::Product => ("product_lanes", "product"),
            Op::Max => ("extremum_lanes", "max"),
            Op::Min => ("extremum_lanes", "min"),
        };
        let (identity, fold, acc) = (helper(identity), helper(fold), &acc.ident);
        init.extend(quote!(let mut #var = #identity::<_, #lanes>(&#acc);));
        // A copy is what escapes to the out-of-line fold, so the loop keeps the lanes in registers.
        combine.extend(quote!(#acc = #fold(#acc, &{ #var });));
    }
    let chunk = helper("chunk");
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

    let tokens = match &plan.source {
        Source::Range { start, end: last } => {
            let calls = plan.hoists.iter().map(|(h, _)| {
                let slice = &h.slice;
                let base = h.base.as_ref().map_or(quote!(0), ToTokens::to_token_stream);
                quote!(#chunk::<_, #lanes>(&#slice[..], #base, #k))
            });
            let checked = if reads.is_empty() {
                TokenStream::new()
            } else {
                quote!(let (#(::core::option::Option::Some(#reads),)*) = (#(#calls,)*) else { break; };)
            };
            let index = match pat {
                Pat::Wild(_) => TokenStream::new(),
                pat => quote!(#[allow(unused_variables, unused_mut)] let #pat: usize = #k + #l;),
            };
            quote!({
                let mut #k: usize = #start;
                let #end: usize = #last;
                #init
                while #end.saturating_sub(#k) >= #lanes {
                    #checked
                    for #l in 0..#lanes {
                        #index
                        #(#lane_stmts)*
                    }
                    #k += #lanes;
                }
                #combine
                for #pat in #k..#end #body
            })
        }
        Source::Slices(items) => {
            let slices: Vec<Ident> = (0..items.len()).map(|n| hidden(&format!("__adaptive_s{n}"))).collect();
            let chunks: Vec<Ident> = (0..items.len()).map(|n| hidden(&format!("__adaptive_h{n}"))).collect();
            let originals = items.iter().map(|s| &s.slice);
            let len = match slices.as_slice() {
                [one] => quote!(#one.len()),
                [a, b] => quote!(::core::cmp::min(#a.len(), #b.len())),
                _ => unreachable!("a source has one slice or two zipped"),
            };
            let (mut lane_items, mut tail_items) = (Vec::new(), Vec::new());
            for ((item, s), h) in items.iter().zip(&slices).zip(&chunks) {
                if item.by_value {
                    lane_items.push(quote!(#h[#l]));
                    tail_items.push(quote!(#s[#k..#end].iter().copied()));
                } else {
                    lane_items.push(quote!(&#h[#l]));
                    tail_items.push(quote!(#s[#k..#end].iter()));
                }
            }
            let (lane_item, tail) = match (lane_items.as_slice(), tail_items.as_slice()) {
                ([one], [tail]) => (one.clone(), tail.clone()),
                ([a, b], [ta, tb]) => (quote!((#a, #b)), quote!(#ta.zip(#tb))),
                _ => unreachable!("a source has one slice or two zipped"),
            };
            quote!({
                #(let #slices: &[_] = &#originals[..];)*
                let #end: usize = #len;
                #init
                let mut #k: usize = 0;
                while #end.saturating_sub(#k) >= #lanes {
                    let (#(::core::option::Option::Some(#chunks),)*) =
                        (#(#chunk::<_, #lanes>(#slices, 0, #k),)*) else { break; };
                    for #l in 0..#lanes {
                        let #pat = #lane_item;
                        #(#lane_stmts)*
                    }
                    #k += #lanes;
                }
                #combine
                for #pat in #tail #body
            })
        }
    };
    Expr::Verbatim(tokens)
}

/// The rewritten iterator reduction: a parenthesised block expression of the result's type.
pub(crate) fn rewritten_expr(plan: &Plan, init: &Init) -> Expr {
    let acc = &plan.accs[0].ident;
    let ty = |w: &super::types::Width| w.name().map(|n| Ident::new(n, Span::call_site()));
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

/// Rewrites a copy of the body for one lane: accumulators to their lane, hoisted reads to their chunk.
struct Lanes {
    /// Accumulator name → its lane (`__adaptive_lanes0[__adaptive_l]`).
    accs: Vec<(String, TokenStream)>,
    /// A hoisted `x[..]` read, as tokens → its chunk element (`__adaptive_h0[__adaptive_l]`).
    reads: Vec<(String, TokenStream)>,
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
