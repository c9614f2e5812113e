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

/// Whether `tokens` use the data of `name`: name it other than as `name.len()` or
/// `name.is_empty()` (inside groups and macro calls too).
pub(crate) fn reads_data(tokens: TokenStream, name: &str) -> bool {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    tts.iter().enumerate().any(|(i, tt)| match tt {
        TokenTree::Ident(id) if id == name => {
            let dot = matches!(tts.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '.');
            let len = matches!(tts.get(i + 2), Some(TokenTree::Ident(m)) if m == "len" || m == "is_empty");
            let call = matches!(tts.get(i + 3), Some(TokenTree::Group(g)) if g.stream().is_empty());
            !(dot && len && call)
        }
        TokenTree::Group(g) => reads_data(g.stream(), name),
        _ => false,
    })
}

/// Whether `tokens` may leave the code around them early or hide what they do: a
/// `return`, `?`, `break`, `continue`, `yield` or `.await`, or a macro call (whose
/// expansion may hold any of them).
pub(crate) fn may_divert(tokens: TokenStream) -> bool {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    tts.iter().enumerate().any(|(i, tt)| match tt {
        TokenTree::Ident(id) => {
            ["return", "break", "continue", "yield", "await"].iter().any(|k| id == k)
                || (matches!(tts.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!')
                    && matches!(tts.get(i + 2), Some(TokenTree::Group(_))))
        }
        TokenTree::Punct(p) => p.as_char() == '?',
        TokenTree::Group(g) => may_divert(g.stream()),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    #[test]
    fn a_length_is_not_a_read_of_the_data() {
        assert!(!reads_data(quote!(let n = a.len() + b.len();), "a"));
        assert!(!reads_data(
            quote!(if a.is_empty() {
                return;
            }),
            "a"
        ));
        assert!(reads_data(quote!(let s = a[0];), "a"));
        assert!(reads_data(quote!(helper(a);), "a"));
        assert!(reads_data(quote!(let n = a.len; let m = f(a.len());), "a"), "a field, then a len");
        assert!(reads_data(quote!(println!("{:?}", (a));), "a"));
        assert!(!reads_data(quote!(let b = 1;), "a"));
    }

    #[test]
    fn early_exits_and_macros_may_divert() {
        assert!(may_divert(quote!(if x {
            return;
        })));
        assert!(may_divert(quote!(let v = f()?;)));
        assert!(may_divert(quote!(check!(x);)));
        assert!(
            may_divert(quote!({
                let c = || {
                    return 1;
                };
            })),
            "conservative: a closure's return too"
        );
        assert!(!may_divert(quote!(let w = n - 1;)));
        assert!(!may_divert(quote!(let t = !flag;)));
    }
}
