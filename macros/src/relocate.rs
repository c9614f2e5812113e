//! Moving a kernel's code two modules down without changing what it means.
//!
//! The variants hold copies of the body in `k::__adaptive`, two modules below
//! where the user wrote it, and see the user's module through
//! `use super::super::*`. Plain names, `crate::` and `::` paths resolve the
//! same there; paths relative to the module do not, so they are rewritten on
//! the token level (which also reaches into macro calls such as `vec![..]`):
//!
//! | written | becomes |
//! | --- | --- |
//! | `self::x` | `super::super::x` |
//! | `super::x` | `super::super::super::x` |
//! | `pub(self)`, `pub(in self)` | `pub(in super::super)` |
//! | `pub(super)`, `pub(in super)` | `pub(in super::super::super)` |
//!
//! The same shift is right for items nested inside the body (a `mod` in the
//! body is two levels deeper too), so no case analysis is needed.

use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenStream, TokenTree};

/// How many modules below the user's module the variants live.
pub(crate) const DEPTH: usize = 2;

/// `tokens` with every module-relative path shifted [`DEPTH`] modules down.
pub(crate) fn relocate(tokens: TokenStream) -> TokenStream {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = TokenStream::new();
    for (i, tt) in tts.iter().enumerate() {
        match tt {
            TokenTree::Group(g) => {
                let after_pub = matches!(i.checked_sub(1).map(|p| &tts[p]), Some(TokenTree::Ident(p)) if p == "pub");
                let stream = match visibility_target(g) {
                    Some(target) if after_pub => {
                        let span = target.span();
                        let mut s = TokenStream::from(TokenTree::Ident(Ident::new("in", span)));
                        s.extend(shifted(&target));
                        s
                    }
                    _ => relocate(g.stream()),
                };
                let mut new = Group::new(g.delimiter(), stream);
                new.set_span(g.span());
                out.extend([TokenTree::Group(new)]);
            }
            TokenTree::Ident(id)
                if (id == "self" || id == "super")
                    && !path_sep_at(&tts, i.wrapping_sub(2))
                    && path_sep_at(&tts, i + 1) =>
            {
                out.extend(shifted(id));
            }
            other => out.extend([other.clone()]),
        }
    }
    out
}

/// `self` or `super` when `g` is the `(self)`, `(super)`, `(in self)` or `(in super)` of a visibility.
fn visibility_target(g: &Group) -> Option<Ident> {
    if g.delimiter() != Delimiter::Parenthesis {
        return None;
    }
    let tts: Vec<TokenTree> = g.stream().into_iter().collect();
    let target = match tts.as_slice() {
        [TokenTree::Ident(t)] => t,
        [TokenTree::Ident(kw), TokenTree::Ident(t)] if kw == "in" => t,
        _ => return None,
    };
    (target == "self" || target == "super").then(|| target.clone())
}

/// `self` → `super::super`; `super` → `super::super::super` (for `DEPTH` = 2), spanned like `id`.
fn shifted(id: &Ident) -> TokenStream {
    let span = id.span();
    let supers = DEPTH + usize::from(id == "super");
    let mut out = TokenStream::new();
    for n in 0..supers {
        if n > 0 {
            out.extend(path_sep(span));
        }
        out.extend([TokenTree::Ident(Ident::new("super", span))]);
    }
    out
}

fn path_sep(span: Span) -> [TokenTree; 2] {
    let mut first = Punct::new(':', Spacing::Joint);
    first.set_span(span);
    let mut second = Punct::new(':', Spacing::Alone);
    second.set_span(span);
    [TokenTree::Punct(first), TokenTree::Punct(second)]
}

/// Whether `tts[at]`, `tts[at + 1]` is a `::`.
fn path_sep_at(tts: &[TokenTree], at: usize) -> bool {
    match (tts.get(at), at.checked_add(1).and_then(|n| tts.get(n))) {
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) => {
            a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn check(input: TokenStream, want: TokenStream) {
        assert_eq!(relocate(input).to_string(), want.to_string());
    }

    #[test]
    fn shifts_relative_paths() {
        check(quote!(self::a(super::b::C)), quote!(super::super::a(super::super::super::b::C)));
        check(quote!(vec![super::X; n]), quote!(vec![super::super::super::X; n]));
        check(
            quote!(
                use super::{a, b};
            ),
            quote!(
                use super::super::super::{a, b};
            ),
        );
    }

    #[test]
    fn shifts_visibilities() {
        check(
            quote!(
                pub(super) struct A;
            ),
            quote!(
                pub(in super::super::super) struct A;
            ),
        );
        check(
            quote!(
                pub(self) fn f() {}
            ),
            quote!(
                pub(in super::super) fn f() {}
            ),
        );
        check(
            quote!(
                pub(self) fn f() {}
            ),
            quote!(
                pub(in super::super) fn f() {}
            ),
        );
        check(
            quote!(
                pub(in super::m) fn f() {}
            ),
            quote!(
                pub(in super::super::super::m) fn f() {}
            ),
        );
        check(
            quote!(
                pub(crate) fn f() {}
            ),
            quote!(
                pub(crate) fn f() {}
            ),
        );
    }

    #[test]
    fn leaves_other_paths_alone() {
        let same = quote!(crate::a::b; ::std::mem::swap; a::super_x; use std::io::{self, Read}; f(self_); Self::new());
        check(same.clone(), same);
        // `super` in the middle of a path (already relative to something else) is not the start of one.
        check(quote!(a::super::b), quote!(a::super::b));
        // A tuple group after something other than `pub` is not a visibility.
        check(quote!(f(self)), quote!(f(self)));
    }
}
