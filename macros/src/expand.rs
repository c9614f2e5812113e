//! From the attribute's input to its output: parse and check everything into
//! one [`KernelDef`], then print it as the wrapper ([`crate::wrapper`]) and the
//! variants ([`crate::variants`]).
//!
//! On any error the user's item is emitted unchanged beside the errors (tokio's
//! `token_stream_with_error`), so the rest of the crate and the IDE keep
//! seeing the function.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::{Item, ItemFn};

use crate::args::Args;
use crate::attrs::Attrs;
use crate::errors::Errors;
use crate::hash::token_hash;
use crate::reduce::{self, LoopReport};
use crate::relocate::relocate;
use crate::signature::{self, Param};
use crate::size::default_size;
use crate::variants::Variants;
use crate::verify::{self, Verification};
use crate::wrapper::Wrapper;

/// The expansion of `#[adaptive_kernel(args)] item`.
pub(crate) fn adaptive_kernel(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let item: Item = syn::parse2(item)?;
    Ok(match KernelDef::new(args, &item) {
        Ok(kernel) => kernel.into_token_stream(),
        Err(errors) => {
            let errors = errors.into_compile_error();
            quote!(#item #errors)
        }
    })
}

/// Everything known about one kernel, checked; what the generators read.
pub(crate) struct KernelDef {
    /// The function as written (its attributes are read through `attrs`).
    pub func: ItemFn,
    /// Its signature and body with module-relative paths moved to where the variants live.
    pub relocated: ItemFn,
    /// The relocated body with its float reductions reassociated: the SIMD variant's body.
    pub simd_body: syn::Block,
    /// What was done to each reduction of the body in `simd_body`.
    pub loops: Vec<LoopReport>,
    pub attrs: Attrs,
    pub params: Vec<Param>,
    pub args: Args,
    /// The `usize` expression the call is routed by: the attribute's `size`, or the default.
    pub size: TokenStream,
    /// The body's first `ops` that starts a path (`ops::matmul(..)`), if any.
    pub ops_use: Option<syn::Ident>,
    /// Whether the kernel has a GPU variant: `gpu = path`, or a body that calls `ops::`.
    pub has_gpu: bool,
    /// Whether the kernel has a Parallel variant: `parallel = path`, or a body that calls `ops::`.
    pub has_parallel: bool,
    pub token_hash: u64,
    /// Whether and when the wrapper compares variants with Scalar.
    pub verification: Verification,
}

impl KernelDef {
    fn new(args: TokenStream, item: &Item) -> syn::Result<KernelDef> {
        let mut errors = Errors::new();
        let parsed_args = Args::parse(args.clone(), &mut errors);
        let func = match signature::function(item) {
            Ok(func) => func,
            Err(e) => return Err(errors.fail(e)),
        };
        let params = signature::check(&func.sig);
        // Stand-ins (empty) only where an error is recorded; then nothing is generated.
        let size = match (&parsed_args.size, &params) {
            (Some(size), _) => size.to_token_stream(),
            (None, Ok(params)) => default_size(params).unwrap_or_else(|| {
                // After a syntax error the attribute may hold a `size` past it: say nothing.
                if parsed_args.complete {
                    errors.error(
                        func.sig.paren_token.span.join(),
                        format!(
                            "cannot infer the size of a call: `{}` has no slice-like parameter (`&[T]`, `&mut [T]`, \
                             `&Vec<T>`, `Vec<T>`, `[T; N]`); add `size = <usize expression>` to the attribute, \
                             e.g. `size = n * n`",
                            func.sig.ident
                        ),
                    );
                }
                TokenStream::new()
            }),
            (None, Err(_)) => TokenStream::new(),
        };
        let params = errors.take(params).unwrap_or_default();
        let verification = verify::plan(&parsed_args, &func.sig, &params, &mut errors);
        errors.finish()?;

        let relocated = {
            let (sig, block) = (&func.sig, &func.block);
            syn::parse2::<ItemFn>(relocate(quote!(#sig #block)))?
        };
        let (simd_body, loops) = match parsed_args.simd {
            // A hand-written SIMD variant: the body is not the SIMD variant's.
            Some(_) => ((*relocated.block).clone(), Vec::new()),
            None => reduce::reassociate(&relocated.block, &relocated.sig, !parsed_args.exact),
        };
        let token_hash = token_hash([&args, &func.sig.to_token_stream(), &func.block.to_token_stream()]);
        let ops_use = first_ops_path(func.block.to_token_stream());
        let has_gpu = parsed_args.gpu.is_some() || ops_use.is_some();
        let has_parallel = parsed_args.parallel.is_some() || ops_use.is_some();
        Ok(KernelDef {
            func: func.clone(),
            relocated,
            simd_body,
            loops,
            attrs: Attrs::sort(&func.attrs),
            params,
            args: parsed_args,
            size,
            ops_use,
            has_gpu,
            has_parallel,
            token_hash,
            verification,
        })
    }

    /// The parameter names, in order, as the forwarding calls pass them.
    pub(crate) fn arg_names(&self) -> Vec<&syn::Ident> {
        self.params.iter().map(|p| &p.ident).collect()
    }

    /// A generated identifier that the user's code cannot see or clash with.
    pub(crate) fn hidden(name: &str) -> syn::Ident {
        syn::Ident::new(name, Span::mixed_site())
    }
}

impl ToTokens for KernelDef {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        Wrapper(self).to_tokens(tokens);
        Variants(self).to_tokens(tokens);
    }
}

/// The first `ops` in `tokens` that starts a path `ops::…` (also inside macro calls).
fn first_ops_path(tokens: TokenStream) -> Option<syn::Ident> {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let is_colon = |i: usize| matches!(tts.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ':');
    tts.iter().enumerate().find_map(|(i, tt)| match tt {
        TokenTree::Ident(id)
            if id == "ops" && is_colon(i + 1) && is_colon(i + 2) && !(i >= 2 && is_colon(i - 1) && is_colon(i - 2)) =>
        {
            Some(id.clone())
        }
        TokenTree::Group(g) => first_ops_path(g.stream()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_ops_calls_only_at_the_start_of_a_path() {
        let calls_ops = |t: TokenStream| first_ops_path(t).is_some();
        assert!(calls_ops(quote!({
            let c = ops::matmul(a, b, m, n, k);
            c
        })));
        assert!(calls_ops(quote!({ vec![ops::sum(x)] })));
        assert!(!calls_ops(quote!({ adaptive_kernel::ops::sum(x) })));
        assert!(!calls_ops(quote!({
            let ops = 3;
            ops + 1
        })));
    }
}

#[cfg(test)]
mod snapshot {
    //! The expansion shown in the crate docs (`doc/expansion.rs`) is the real one.

    use super::*;

    /// `doc/example.rs` split into the attribute's arguments and the item under it.
    fn example() -> (TokenStream, TokenStream) {
        let file = syn::parse_file(include_str!("../doc/example.rs")).unwrap();
        let mut func = file
            .items
            .into_iter()
            .find_map(|item| match item {
                Item::Fn(f) => Some(f),
                _ => None,
            })
            .unwrap();
        let at = func.attrs.iter().position(|a| a.path().is_ident("adaptive_kernel")).unwrap();
        let args = func.attrs.remove(at).meta.require_list().unwrap().tokens.clone();
        (args, func.into_token_stream())
    }

    /// Tokens as syn prints a parsed file: comments gone, `///` as `#[doc]`, spacing uniform.
    fn normalised(tokens: TokenStream) -> String {
        syn::parse2::<syn::File>(tokens).unwrap().into_token_stream().to_string()
    }

    #[test]
    fn the_documented_expansion_is_current() {
        let (args, item) = example();
        let actual = adaptive_kernel(args, item).unwrap();
        let documented: TokenStream = include_str!("../doc/expansion.rs").parse().unwrap();
        assert!(
            normalised(documented) == normalised(actual.clone()),
            "doc/expansion.rs is stale; regenerate it from this expansion (rustfmt it, write its \
             #[doc] attributes as /// comments, keep the explanatory comments):\n{actual}"
        );
    }
}
