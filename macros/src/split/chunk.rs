//! How one chunk of a split loop walks the loop's chain (`crate::body::walk`): each
//! stream over its part (a written stream) or its sub-slice (a read one), `zip` and
//! `enumerate` as the loop wrote them, so every item and index is the one the loop as
//! written has at that step.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::body::{Chain, Rows, Stream};

impl Chain {
    /// The chain over one chunk starting at unit `lo`: each stream's part or sub-slice and
    /// row width variable, by position. `zip` is spelled as a path: a module with
    /// `#![no_implicit_prelude]` has no `Iterator` in scope for a generated method call.
    pub(super) fn over_chunk(&self, lo: &Ident, vars: &mut dyn Iterator<Item = StreamVars>) -> TokenStream {
        match self {
            Chain::Leaf(s) => s.over_chunk(vars.next().expect("one set of variables per stream")),
            Chain::Zip(a, b) => {
                let a = a.over_chunk(lo, vars);
                let b = b.over_chunk(lo, vars);
                quote!(::core::iter::Iterator::zip(#a, #b))
            }
            Chain::Enumerate(c) => {
                let c = c.over_chunk(lo, vars);
                quote!(::core::iter::Iterator::zip((#lo..), #c))
            }
        }
    }
}

/// The generated names one stream's chunk form uses.
pub(super) struct StreamVars {
    /// The target's part in this chunk, for a written stream; the sub-slice of this
    /// chunk (bound by [`Stream::sub_slice`]), for a read one.
    pub part: Ident,
    /// The row width, evaluated once, for rows.
    pub width: Option<Ident>,
}

impl Stream {
    /// The sub-slice of a read stream that chunk `[lo, hi)` walks: `&x[lo..hi]`, or its rows
    /// `&x[lo * w..min(hi * w, x.len())]` (whole rows only: `&x[lo * w..hi * w]`). Bound to a
    /// name in the chunk, it is a slice the `reduce` rewrite knows.
    pub(super) fn sub_slice(&self, lo: &Ident, hi: &Ident, width: Option<&Ident>) -> TokenStream {
        let slice = &self.slice;
        match (&self.rows, width) {
            (None, _) => quote!(&#slice[#lo..#hi]),
            (Some(Rows { exact: true, .. }), Some(w)) => quote!(&#slice[#lo * #w..#hi * #w]),
            (Some(Rows { exact: false, .. }), Some(w)) => {
                quote!(&#slice[#lo * #w..::core::cmp::min(#hi * #w, #slice.len())])
            }
            (Some(_), None) => unreachable!("rows have a width variable"),
        }
    }

    /// The stream over one chunk, from its part or sub-slice.
    fn over_chunk(&self, vars: StreamVars) -> TokenStream {
        let part = &vars.part;
        let adapter = self.adapter.as_ref().map(|a| quote!(.#a()));
        let rows = |mutable: bool, exact: bool| {
            let name = match (mutable, exact) {
                (true, true) => "chunks_exact_mut",
                (true, false) => "chunks_mut",
                (false, true) => "chunks_exact",
                (false, false) => "chunks",
            };
            Ident::new(name, Span::call_site())
        };
        match (&self.rows, &vars.width) {
            (None, _) if self.mutable => quote!(#part.iter_mut()),
            (None, _) if self.method => quote!(#part.iter() #adapter),
            (None, _) => quote!(#part),
            (Some(r), Some(w)) => {
                let method = rows(self.mutable, r.exact);
                quote!(#part.#method(#w))
            }
            (Some(_), None) => unreachable!("rows have a width variable"),
        }
    }
}
