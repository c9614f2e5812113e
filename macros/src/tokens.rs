//! Searching token streams: the checks that look at tokens rather than syntax
//! (does a body name `Self`, an attribute `adaptive_kernel`, a loop body its
//! accumulator) share one walk.

use proc_macro2::{TokenStream, TokenTree};

/// Whether `tokens` hold an identifier among `names` (inside groups and macro calls too).
pub(crate) fn mentions<S: AsRef<str>>(tokens: TokenStream, names: &[S]) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => names.iter().any(|n| i == n.as_ref()),
        TokenTree::Group(g) => mentions(g.stream(), names),
        _ => false,
    })
}
