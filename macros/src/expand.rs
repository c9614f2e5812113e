//! From the attribute's input to its output: parse and check everything into
//! one [`KernelDef`], then print it as the wrapper ([`crate::wrapper`]) and the
//! variants ([`crate::variants`]), or everything inside a method
//! ([`crate::in_impl`]).
//!
//! On any error the user's item is emitted unchanged beside the errors (tokio's
//! `token_stream_with_error`), so the rest of the crate and the IDE keep
//! seeing the function.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::Item;

use crate::in_impl::InImpl;
use crate::kernel_def::KernelDef;
use crate::signature::Shape;
use crate::variants::Variants;
use crate::wrapper::Wrapper;

/// The expansion of `#[adaptive_kernel(args)] item`.
pub(crate) fn adaptive_kernel(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let item: Item = syn::parse2(item)?;
    Ok(match KernelDef::new(args, &item) {
        Ok(kernel) => print(&kernel),
        Err(errors) => {
            let errors = errors.into_compile_error();
            quote!(#item #errors)
        }
    })
}

/// The code generated for a checked kernel.
fn print(k: &KernelDef) -> TokenStream {
    let mut tokens = TokenStream::new();
    match k.shape {
        Shape::Free => {
            Wrapper(k).to_tokens(&mut tokens);
            Variants(k).to_tokens(&mut tokens);
        }
        Shape::InImpl => InImpl(k).to_tokens(&mut tokens),
    }
    tokens
}

#[cfg(test)]
mod loop_reports {
    //! The spec's `loops` in the expansion: which variants compute a reduction in lanes, and
    //! the word for a body the SIMD variant does not use.

    use super::*;

    /// The `loops: &[..]` of the `KernelSpec` in the expansion of `#[adaptive_kernel(args)] item`.
    fn loops(args: TokenStream, item: TokenStream) -> String {
        let out = adaptive_kernel(args, item).unwrap().to_string();
        let start = out.find("loops : & [").expect("a spec with loops");
        let end = out[start..].find("] , }").expect("the end of the spec") + start;
        out[start..end].to_string()
    }

    const SIMD: &str = ":: adaptive_kernel :: __private :: Backend :: Simd";
    const PARALLEL: &str = ":: adaptive_kernel :: __private :: Backend :: Parallel";

    fn dot(body_extra: TokenStream) -> TokenStream {
        quote!(fn k(a: &[f32], b: &mut [f32]) -> f32 {
            let mut s = 0.0f32;
            for v in a {
                s += v;
            }
            #body_extra
            s
        })
    }

    #[test]
    fn rewritten_in_simd_and_in_a_parallel_variant_built_from_the_body() {
        // The loop is split across threads, and each chunk computes it in lanes too.
        let plain = loops(quote!(complexity = "Low"), dot(quote!()));
        assert!(plain.contains(&format!("variants : & [{SIMD} , {PARALLEL}] , reason : \"\"")), "{plain}");
        let serial = loops(quote!(complexity = "Low", serial), dot(quote!()));
        assert!(serial.contains(&format!("variants : & [{SIMD}] , reason : \"\"")), "{serial}");
        assert!(!serial.contains(PARALLEL), "a `serial` kernel has no Parallel variant: {serial}");
        let with_ops = dot(quote!(b.copy_from_slice(&ops::scale(a, s));));
        let both = loops(quote!(complexity = "Low"), with_ops.clone());
        assert!(both.contains(&format!("variants : & [{SIMD} , {PARALLEL}]")), "{both}");
        let serial_ops = loops(quote!(complexity = "Low", serial), with_ops.clone());
        assert!(!serial_ops.contains(PARALLEL), "`serial` with `ops::`: no Parallel variant: {serial_ops}");
        let own = loops(quote!(complexity = "Low", parallel = mine), with_ops);
        assert!(own.contains(&format!("variants : & [{SIMD}] ,")), "the user's Parallel variant: {own}");
    }

    #[test]
    fn a_serial_kernel_has_no_parallel_variant_whatever_its_body_calls() {
        let body = quote!(
            fn k(a: &[f32], out: &mut [f32]) -> f32 {
                for (o, v) in out.iter_mut().zip(a) {
                    *o = 2.0 * v;
                }
                ops::sum(a)
            }
        );
        let plain = adaptive_kernel(quote!(complexity = "Low"), body.clone()).unwrap().to_string();
        assert!(plain.contains("has_parallel : true") && plain.contains("__adaptive_parallel"), "{plain}");
        let serial = adaptive_kernel(quote!(complexity = "Low", serial), body).unwrap().to_string();
        assert!(serial.contains("has_parallel : false"), "{serial}");
        assert!(!serial.contains("__adaptive_parallel") && !serial.contains("ops_par"), "nothing forks: {serial}");
    }

    #[test]
    fn opted_out_bodies_report_why() {
        let exact = loops(quote!(complexity = "Low", exact), dot(quote!()));
        assert!(exact.contains("variants : & [] , reason : \"exact\""), "{exact}");
        let own = loops(quote!(complexity = "Low", simd = mine), dot(quote!()));
        assert!(own.contains("variants : & [] , reason : \"simd\""), "{own}");
        let both = loops(quote!(complexity = "Low", simd = mine, exact), dot(quote!()));
        assert!(both.contains("reason : \"exact\""), "{both}");
    }
}

#[cfg(test)]
mod snapshot {
    //! The expansions shown in the crate docs (`doc/*expansion.rs`) are the real ones.

    use super::*;
    use crate::golden::normalised;
    use syn::ItemFn;

    /// The first function of an example file (free, or in an `impl`), split into the
    /// attribute's arguments and the item under it.
    fn example(src: &str) -> (TokenStream, TokenStream) {
        let file = syn::parse_file(src).unwrap();
        let mut func = file
            .items
            .into_iter()
            .find_map(|item| match item {
                Item::Fn(f) => Some(f),
                Item::Impl(i) => i.items.into_iter().find_map(|item| match item {
                    syn::ImplItem::Fn(f) => {
                        Some(ItemFn { attrs: f.attrs, vis: f.vis, sig: f.sig, block: Box::new(f.block) })
                    }
                    _ => None,
                }),
                _ => None,
            })
            .unwrap();
        let at = func.attrs.iter().position(|a| a.path().is_ident("adaptive_kernel")).unwrap();
        let args = func.attrs.remove(at).meta.require_list().unwrap().tokens.clone();
        (args, func.into_token_stream())
    }

    fn check(name: &str, example_src: &str, documented: &str) {
        let (args, item) = example(example_src);
        let actual = adaptive_kernel(args, item).unwrap();
        let documented: TokenStream = documented.parse().unwrap();
        assert!(
            normalised(documented, false) == normalised(actual.clone(), false),
            "doc/{name} is stale; regenerate it from this expansion (rustfmt it, write its \
             #[doc] attributes as /// comments, keep the explanatory comments):\n{actual}"
        );
    }

    #[test]
    fn the_documented_expansion_is_current() {
        check("expansion.rs", include_str!("../doc/example.rs"), include_str!("../doc/expansion.rs"));
    }

    #[test]
    fn the_documented_method_expansion_is_current() {
        check(
            "method_expansion.rs",
            include_str!("../doc/method_example.rs"),
            include_str!("../doc/method_expansion.rs"),
        );
    }

    #[test]
    fn the_documented_generic_expansion_is_current() {
        check(
            "generic_expansion.rs",
            include_str!("../doc/generic_example.rs"),
            include_str!("../doc/generic_expansion.rs"),
        );
    }
}
