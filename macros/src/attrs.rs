//! Which of the user's attributes go on which generated item.
//!
//! | attribute | wrapper `fn k` | `mod k` | `k::scalar`/`simd`/`parallel`/`gpu` and the SIMD clones |
//! | --- | --- | --- | --- |
//! | `#[cfg(..)]` | yes | yes | yes (all appear and vanish together) |
//! | lint levels (`allow`, `warn`, `deny`, `forbid`) | yes | yes | yes (each holds a copy of the body) |
//! | `#[expect(..)]` | as `allow` | as `allow` | `expect` on `k::scalar`, `allow` elsewhere |
//! | `#[must_use]` | yes | — | on `k::scalar`/`simd`/`parallel`/`gpu` |
//! | docs, `#[inline]`, `#[cold]`, `#[deprecated]`, `#[track_caller]`, `#[no_mangle]`, anything else | yes | — | — |
//!
//! `#[expect]` is fulfilled once: the Scalar variant holds one copy of the body
//! and the full signature, so a lint the user expects fires there; the other
//! copies only `allow` it, so it is not reported unfulfilled five times.
//! `#[inline]`-like attributes describe the routed call, not the variants (and
//! `#[inline(always)]` is an error on a `#[target_feature]` clone); exporting
//! attributes must not be duplicated.
//!
//! Inner attributes (`#![allow(..)]` at the top of the body) are treated as
//! outer ones: they apply to the whole function.

use syn::{AttrStyle, Attribute, Meta};

/// The user's attributes, sorted by where they go.
pub(crate) struct Attrs {
    /// Everything the user wrote, `expect` turned into `allow`: the wrapper's attributes.
    pub wrapper: Vec<Attribute>,
    /// `cfg` and lint levels (`expect` as `allow`): for `mod k` and every variant.
    pub shared: Vec<Attribute>,
    /// The `expect` attributes as written: for the Scalar variant only.
    pub expect: Vec<Attribute>,
    /// `#[must_use]`, if given: for the wrapper (already in `wrapper`) and the variants.
    pub must_use: Option<Attribute>,
    /// Whether the user gave an `inline` attribute (otherwise the wrapper gets `#[inline]`).
    pub has_inline: bool,
}

impl Attrs {
    pub(crate) fn sort(attrs: &[Attribute]) -> Attrs {
        let mut sorted =
            Attrs { wrapper: Vec::new(), shared: Vec::new(), expect: Vec::new(), must_use: None, has_inline: false };
        for attr in attrs {
            let mut attr = attr.clone();
            attr.style = AttrStyle::Outer;
            let path = attr.path();
            if path.is_ident("expect") {
                sorted.expect.push(attr.clone());
                let allow = as_allow(attr);
                sorted.shared.push(allow.clone());
                sorted.wrapper.push(allow);
                continue;
            }
            if ["cfg", "allow", "warn", "deny", "forbid"].iter().any(|name| path.is_ident(name)) {
                sorted.shared.push(attr.clone());
            } else if path.is_ident("must_use") {
                sorted.must_use = Some(attr.clone());
            } else if path.is_ident("inline") {
                sorted.has_inline = true;
            }
            sorted.wrapper.push(attr);
        }
        sorted
    }
}

/// `#[expect(lint, reason = "..")]` as `#[allow(lint, reason = "..")]`.
fn as_allow(mut attr: Attribute) -> Attribute {
    if let Meta::List(list) = &mut attr.meta {
        let span = list.path.segments[0].ident.span();
        list.path = syn::Ident::new("allow", span).into();
    }
    attr
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;
    use syn::parse_quote;

    fn render(attrs: &[Attribute]) -> Vec<String> {
        attrs.iter().map(|a| a.to_token_stream().to_string()).collect()
    }

    #[test]
    fn sorts_attributes_by_destination() {
        let f: syn::ItemFn = parse_quote! {
            /// Docs.
            #[inline]
            #[must_use]
            #[cfg(unix)]
            #[expect(clippy::too_many_arguments, reason = "many")]
            #[allow(unused)]
            fn k() { #![deny(unsafe_code)] }
        };
        let a = Attrs::sort(&f.attrs);
        assert!(a.has_inline);
        assert_eq!(render(a.must_use.as_slice()), ["# [must_use]"]);
        assert_eq!(render(&a.expect), ["# [expect (clippy :: too_many_arguments , reason = \"many\")]"]);
        assert_eq!(
            render(&a.shared),
            [
                "# [cfg (unix)]",
                "# [allow (clippy :: too_many_arguments , reason = \"many\")]",
                "# [allow (unused)]",
                "# [deny (unsafe_code)]",
            ]
        );
        assert_eq!(a.wrapper.len(), 7);
        assert!(a.wrapper.iter().all(|a| a.style == AttrStyle::Outer));
    }
}
