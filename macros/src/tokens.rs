//! Searching token streams: the checks that look at tokens rather than syntax
//! (does a body name `Self`, an attribute `adaptive_kernel`, a loop body its
//! accumulator) share one walk; and expressions compared by their tokens
//! (`(w)` and `w` are the same width).

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;
use syn::Expr;

/// `e` without the parentheses (and invisible groups) around it.
pub(crate) fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        e => e,
    }
}

/// Tokens as one string without outer parentheses or spacing: `(w)` and `w` compare equal.
pub(crate) fn normalised(e: &Expr) -> String {
    strip(e).to_token_stream().to_string().replace(' ', "")
}

/// Whether `tokens` hold an identifier among `names` (inside groups and macro calls too).
pub(crate) fn mentions<S: AsRef<str>>(tokens: TokenStream, names: &[S]) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => names.iter().any(|n| i == n.as_ref()),
        TokenTree::Group(g) => mentions(g.stream(), names),
        _ => false,
    })
}

/// The opening and closing text of a group's delimiter (nothing for an invisible group).
pub(crate) fn delimiters(d: Delimiter) -> (&'static str, &'static str) {
    match d {
        Delimiter::Parenthesis => ("(", ")"),
        Delimiter::Brace => ("{", "}"),
        Delimiter::Bracket => ("[", "]"),
        Delimiter::None => ("", ""),
    }
}
