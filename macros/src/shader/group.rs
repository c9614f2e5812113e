//! The GPU variant's body, put together: its loops that run on the GPU grouped
//! so that each group is **one submission** (the runtime's `gpu_loop::Batch`),
//! and, where host code uses a slice parameter's data, the data made current on
//! the host first.
//!
//! # Groups
//! Consecutive GPU loops form a group as long as the host code between them
//! touches none of the group's data: it names no slice, accumulator or scalar a
//! loop of the group captures (a length, `x.len()`, is not data), cannot leave
//! early (`return`, `?`, `break`, `continue`) and calls no macro (whose expansion
//! could). A loop joins the group only if what the host evaluates for its launch
//! (its bounds, row widths and scalars) is not an earlier loop's result. The
//! group's batch is finished right after its last loop: the results are stored,
//! then each loop the device did not run runs as written, in order. Since the
//! code between the loops touches none of their data, running those loops there
//! is running them in the order they were written.
//!
//! ```text
//! let mut __adaptive_batch = Batch::new();
//! <loop 1's prelude and launch>
//! let w = n - 1;                                   // between: touches no loop's data
//! <loop 2's prelude and launch>
//! let __adaptive_done = { let mut f = __adaptive_batch.finish(); f.store(..); f.accumulate(..); f.done() };
//! if !__adaptive_done.on_device(0) { simd_run(|| <loop 1 as written>) }
//! if !__adaptive_done.on_device(1) { simd_run(|| <loop 2 as written>) }
//! ```
//!
//! # Data a host statement uses
//! In a `k::resident` call a slice parameter may be a resident handle whose
//! device copy is newer than host memory. A `&mut [T]` one is made current in
//! place before the first host statement that uses its data, and again after a
//! group wrote it (`ProbeMut(&mut p[..]).sync()`, nothing for host data). A
//! `&[T]` one cannot be written through its shared slice: the `k::resident`
//! entry makes current, before the call, each one host code uses
//! ([`Assembled::host_reads`]).

use std::collections::BTreeMap;

use proc_macro2::{Ident, TokenStream};
use quote::{quote, ToTokens};
use syn::Block;

use super::emit::{gl, hidden, LoopCode};
use super::params::ParamSlices;
use crate::tokens::{may_divert, reads_data};

/// The GPU variant's body, and the shared slice parameters its host code reads.
pub(crate) struct Assembled {
    pub block: Block,
    /// The `&[T]` parameters whose data host code reads (the `k::resident` entry makes them
    /// current first).
    pub host_reads: Vec<Ident>,
}

/// An open group: its loops' statements and pieces, what they capture and produce.
#[derive(Default)]
struct Group {
    loops: Vec<LoopCode>,
    /// Every name a loop of the group captures (what code between them must not name).
    captured: Vec<String>,
    /// Every slice and accumulator a loop of the group writes.
    outputs: Vec<String>,
    /// Host statements after its last loop, emitted once the group is finished.
    after: Vec<TokenStream>,
}

/// `block` with the loops of `codes` (by statement index) replaced by their GPU runs,
/// grouped, and host uses of slice parameters' data made current.
pub(crate) fn assemble(block: &Block, mut codes: BTreeMap<usize, LoopCode>, params: &ParamSlices) -> Assembled {
    let gl = gl();
    let mut out: Vec<TokenStream> = Vec::new();
    let mut group: Option<Group> = None;
    // Mutable slice parameters whose device copy may be newer than host memory: all of them
    // at first (a resident handle's may), and those a group wrote.
    let mut dirty: Vec<String> = params.mutable.clone();
    let mut host_reads: Vec<Ident> = Vec::new();
    let mut note_reads = |tokens: &TokenStream, dirty: &mut Vec<String>| -> TokenStream {
        for (name, ident) in &params.shared {
            if reads_data(tokens.clone(), name) && !host_reads.iter().any(|h| h == ident) {
                host_reads.push(ident.clone());
            }
        }
        let mut syncs = TokenStream::new();
        dirty.retain(|name| {
            if reads_data(tokens.clone(), name) {
                let p = params.ident(name);
                syncs.extend(sync(&p));
                false
            } else {
                true
            }
        });
        syncs
    };
    for (i, stmt) in block.stmts.iter().enumerate() {
        if let Some(code) = codes.remove(&i) {
            let joins =
                group.as_ref().is_some_and(|g| !g.outputs.iter().any(|o| reads_data(code.host_reads.clone(), o)));
            if !joins {
                if let Some(g) = group.take() {
                    finish(g, &mut out, &mut dirty, params);
                }
            }
            let syncs = note_reads(&code.host_reads, &mut dirty);
            let g = group.get_or_insert_with(|| {
                let batch = hidden("__adaptive_batch");
                out.push(quote!(let mut #batch = #gl::Batch::new();));
                Group::default()
            });
            for t in g.after.drain(..) {
                out.push(t);
            }
            out.push(syncs);
            out.push(code.prelude.clone());
            out.push(code.launch.clone());
            g.captured.extend(captured_names(&code));
            g.outputs.extend(code.written.iter().chain(&code.accs).map(ToString::to_string));
            g.loops.push(code);
            continue;
        }
        let tokens = stmt.to_token_stream();
        let touches = group.as_ref().is_some_and(|g| g.captured.iter().any(|c| reads_data(tokens.clone(), c)));
        if touches || (group.is_some() && may_divert(tokens.clone())) {
            if let Some(g) = group.take() {
                finish(g, &mut out, &mut dirty, params);
            }
        }
        let syncs = note_reads(&tokens, &mut dirty);
        let emitted = quote!(#syncs #stmt);
        match &mut group {
            Some(g) => g.after.push(emitted),
            None => out.push(emitted),
        }
    }
    if let Some(g) = group.take() {
        finish(g, &mut out, &mut dirty, params);
    }
    let stmts: TokenStream = out.into_iter().collect();
    let block = syn::parse2(quote!({ #stmts })).expect("the GPU variant's body parses");
    Assembled { block, host_reads }
}

/// The names a loop's code captures: its slices, accumulators, and the names its launch reads.
fn captured_names(code: &LoopCode) -> Vec<String> {
    let mut names: Vec<String> =
        code.written.iter().chain(&code.accs).chain(&code.reads).map(ToString::to_string).collect();
    idents(code.host_reads.clone(), &mut names);
    names
}

/// Every identifier in `tokens` (inside groups too), added to `out`.
fn idents(tokens: TokenStream, out: &mut Vec<String>) {
    for tt in tokens {
        match tt {
            proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
            proc_macro2::TokenTree::Group(g) => idents(g.stream(), out),
            _ => {}
        }
    }
}

/// Emits the end of group `g`: its finish, each loop the device did not run, as written,
/// then the host statements that followed its last loop.
fn finish(g: Group, out: &mut Vec<TokenStream>, dirty: &mut Vec<String>, params: &ParamSlices) {
    let gl = gl();
    let (batch, done, finish) = (hidden("__adaptive_batch"), hidden("__adaptive_done"), hidden("__adaptive_finish"));
    let mut stored: Vec<String> = Vec::new();
    let mut stores = TokenStream::new();
    let mut accs = TokenStream::new();
    for (k, code) in g.loops.iter().enumerate() {
        for w in &code.written {
            if !stored.contains(&w.to_string()) {
                stored.push(w.to_string());
                stores.extend(quote!(#finish.store(#gl::probe::ProbeMut(&mut #w[..]).slice_mut());));
            }
        }
        for a in &code.accs {
            accs.extend(quote!(#finish.accumulate(#k, #gl::probe::ProbeMut(&mut #a).acc());));
        }
    }
    out.push(quote! {
        let #done: #gl::Done = {
            #[allow(unused_imports)]
            use #gl::probe::{KnownAcc as _, KnownSliceMut as _, OtherAcc as _, OtherSliceMut as _};
            let mut #finish = #batch.finish();
            #stores
            #accs
            #finish.done()
        };
    });
    for (k, code) in g.loops.iter().enumerate() {
        let fallback = &code.fallback;
        out.push(quote! {
            if !#done.on_device(#k) {
                // `inline(always)`: compiled inside `simd_run`'s `#[target_feature]` clone.
                ::adaptive_kernel::__private::simd_run(#[inline(always)] || { #fallback });
            }
        });
    }
    for w in g.loops.iter().flat_map(|c| &c.written) {
        let name = w.to_string();
        if params.mutable.contains(&name) && !dirty.contains(&name) {
            dirty.push(name);
        }
    }
    out.extend(g.after);
}

/// Makes the mutable slice parameter `p` current in host memory (nothing for host data).
fn sync(p: &Ident) -> TokenStream {
    let gl = gl();
    quote!({
        #[allow(unused_imports)]
        use #gl::probe::{KnownSync as _, OtherSync as _};
        #gl::probe::ProbeMut(&mut #p[..]).sync();
    })
}
