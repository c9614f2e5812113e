//! Whether the function under the attribute is an associated function (in an
//! `impl` or a `trait`) or a free one, read from the file it was written in.
//!
//! An attribute sees only its item: `fn peak(x: &[f32]) -> f32 { .. }` inside
//! `impl Signal` arrives token for token as a free `fn peak` would. The two
//! need different expansions (a free function gets `mod peak` beside it, which
//! no impl may hold), and nothing after the expansion can tell them apart
//! without an error of the compiler's own: a module in an impl is rejected
//! while the impl is parsed, even under a false `#[cfg]` or out of a nested
//! macro, and `const _` is no associated item either. So the function is
//! looked up where it was written: the file its name's span points to
//! (`Span::local_file`) is parsed, and every function in it with the same name,
//! signature and body is found, free (at any depth, a function's body included)
//! or associated (an inherent or trait impl's item, a trait's default method).
//! When the copies found agree, that is the answer.
//!
//! A function a macro writes is in no parsed item, but its name's span points
//! into the macro (a `macro_rules!` body, or an invocation's input) when the
//! macro's tokens hold it. So the tokens of every macro are read too, for
//! `fn NAME` after an attribute naming `adaptive_kernel`: when each such one
//! sits directly in a block headed by `impl` or `trait`, the function is
//! associated. Only that answer is taken from a macro, by name alone (a
//! metavariable may stand for anything else): a function at the top of a
//! macro's output may land in an impl wherever the macro is called.
//!
//! Otherwise the caller is told [`Enclosing::Unknown`]: a function a procedural
//! macro or a metavariable names, a file unreadable or that `syn` cannot parse,
//! identical copies in both places. The `associated` key settles those.
//!
//! Copies marked with an attribute naming `adaptive_kernel` are preferred over
//! unmarked ones (an identical reference implementation elsewhere in the file
//! does not count), and bodies are compared by `token_hash`, which ignores
//! layout. What a file holds is kept for the next kernels of the same file
//! (the last few files, each checked against its text), so a file is parsed
//! once per build.

use std::cell::RefCell;
use std::path::PathBuf;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::Visit;
use syn::{Attribute, Block, ItemFn, Signature};

use crate::hash::token_hash;
use crate::tokens::mentions;

/// Where the function was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Enclosing {
    /// In an `impl` or a `trait` block.
    Associated,
    /// An item of a module or of a block.
    Free,
    /// Not found, or found in both places.
    Unknown,
}

/// Where `func`, the attribute's item, was written.
pub(crate) fn of(func: &ItemFn) -> Enclosing {
    #[cfg(test)]
    if let Some(assumed) = ASSUMED.with(std::cell::Cell::get) {
        return assumed;
    }
    let Some(path) = func.sig.ident.span().local_file() else {
        return Enclosing::Unknown;
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Enclosing::Unknown;
    };
    let wanted = Found::fingerprint(&func.sig, &func.block);
    PARSED.with(|cache| {
        let mut cache = cache.borrow_mut();
        let kept = cache.iter().position(|p| p.path == path).map(|at| cache.remove(at));
        let parsed = match kept {
            Some(parsed) if parsed.text == text => parsed,
            _ => Parsed { contents: Contents::of(&text), path, text },
        };
        let found = parsed.contents.as_ref().map_or(Enclosing::Unknown, |c| c.classify(&wanted));
        // The most recent first; the oldest goes.
        cache.insert(0, parsed);
        cache.truncate(FILES_KEPT);
        found
    })
}

/// How many files' contents are kept: a crate's kernels are expanded file by file, mostly.
const FILES_KEPT: usize = 4;

thread_local! {
    /// The files looked into last, the most recent first.
    static PARSED: RefCell<Vec<Parsed>> = const { RefCell::new(Vec::new()) };
}

#[cfg(test)]
thread_local! {
    /// What [`of`] answers while [`assume`] runs: a unit test's tokens point to no file.
    static ASSUMED: std::cell::Cell<Option<Enclosing>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with [`of`] answering `enclosing` for every function (the golden expansions know
/// where each kernel sits in its file; their tokens, parsed from a string, do not).
#[cfg(test)]
pub(crate) fn assume<T>(enclosing: Enclosing, f: impl FnOnce() -> T) -> T {
    let before = ASSUMED.with(|a| a.replace(Some(enclosing)));
    let result = f();
    ASSUMED.with(|a| a.set(before));
    result
}

/// One source file's functions (plain data: no compiler token outlives its expansion).
struct Parsed {
    path: PathBuf,
    text: String,
    /// `None` when the file does not parse.
    contents: Option<Contents>,
}

/// What a file holds that the lookup compares.
#[derive(Debug, Default)]
struct Contents {
    /// Every function with a body.
    fns: Vec<Found>,
    /// Every marked `fn NAME` in the tokens of a macro (a `macro_rules!` body, an invocation).
    in_macros: Vec<InMacro>,
}

/// One function of a file, as much of it as the lookup compares.
#[derive(Debug, PartialEq, Eq)]
struct Found {
    name: String,
    /// `token_hash` of the signature and the body.
    hash: u64,
    associated: bool,
    /// Whether an attribute of it names `adaptive_kernel`.
    marked: bool,
}

impl Found {
    /// The name and hash of the function `sig body` (`associated` and `marked` left false).
    fn fingerprint(sig: &Signature, body: &Block) -> Found {
        Found {
            name: sig.ident.to_string(),
            hash: token_hash([&sig.to_token_stream(), &body.to_token_stream()]),
            associated: false,
            marked: false,
        }
    }
}

/// A function marked with the attribute in a macro's tokens: known by name only, since a
/// metavariable may stand for any part of it.
#[derive(Debug, PartialEq, Eq)]
struct InMacro {
    name: String,
    /// Whether it sits directly in a block headed by `impl` or `trait`.
    associated: bool,
}

impl Contents {
    /// The functions of the Rust source `text`, or `None` if it does not parse.
    fn of(text: &str) -> Option<Contents> {
        let file = syn::parse_file(text).ok()?;
        let mut finder = Finder::default();
        finder.visit_file(&file);
        Some(finder.0)
    }

    /// The answer for `wanted`.
    fn classify(&self, wanted: &Found) -> Enclosing {
        let same: Vec<&Found> = self.fns.iter().filter(|c| c.name == wanted.name && c.hash == wanted.hash).collect();
        if same.is_empty() {
            // Not an item of the file: written by one of its macros, if anywhere here.
            let written: Vec<&InMacro> = self.in_macros.iter().filter(|m| m.name == wanted.name).collect();
            return if !written.is_empty() && written.iter().all(|m| m.associated) {
                Enclosing::Associated
            } else {
                Enclosing::Unknown
            };
        }
        let marked: Vec<&Found> = same.iter().copied().filter(|c| c.marked).collect();
        let pool = if marked.is_empty() { same } else { marked };
        match (pool.iter().any(|c| c.associated), pool.iter().any(|c| !c.associated)) {
            (true, false) => Enclosing::Associated,
            (false, true) => Enclosing::Free,
            _ => Enclosing::Unknown,
        }
    }
}

/// Collects every function, and the marked ones in macros' tokens.
#[derive(Default)]
struct Finder(Contents);

impl Finder {
    fn push(&mut self, attrs: &[Attribute], sig: &Signature, body: &Block, associated: bool) {
        // A path to the attribute, or a `cfg_attr` applying it.
        let marked = attrs.iter().any(|a| mentions(a.to_token_stream(), &["adaptive_kernel"]));
        self.0.fns.push(Found { associated, marked, ..Found::fingerprint(sig, body) });
    }
}

/// Every `fn NAME` in `tokens` (a macro's) with an attribute naming `adaptive_kernel` among
/// the tokens before it, and whether it sits in a block headed by `impl` or `trait`
/// (`in_impl`: whether `tokens` are such a block's, or a group inside one).
fn scan_macro(tokens: TokenStream, in_impl: bool, out: &mut Vec<InMacro>) {
    // The tokens of the item being read, since the last `;` or block.
    let mut header: Vec<TokenTree> = Vec::new();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(tt) = tokens.next() {
        match &tt {
            TokenTree::Ident(i) if i == "fn" => {
                let marked = header.iter().any(|t| {
                    matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket
                        && mentions(g.stream(), &["adaptive_kernel"]))
                });
                if let (true, Some(TokenTree::Ident(name))) = (marked, tokens.peek()) {
                    out.push(InMacro { name: name.to_string(), associated: in_impl });
                }
                header.push(tt);
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                scan_macro(g.stream(), heads_impl(&header), out);
                header.clear();
            }
            // Parameters, attributes, `$( .. )*` repetitions: still in the same block.
            TokenTree::Group(g) => {
                scan_macro(g.stream(), in_impl, out);
                header.push(tt);
            }
            TokenTree::Punct(p) if p.as_char() == ';' => header.clear(),
            _ => header.push(tt),
        }
    }
}

/// Whether the item `header` (the tokens before a `{`) starts an `impl` or a `trait`: its
/// first keyword that starts an item or a block is `impl` or `trait`, so `fn f() -> impl
/// Trait {` is a function.
fn heads_impl(header: &[TokenTree]) -> bool {
    const STARTS: &[&str] = &[
        "impl",
        "trait",
        "fn",
        "mod",
        "struct",
        "enum",
        "union",
        "const",
        "static",
        "type",
        "let",
        "use",
        "extern",
        "macro_rules",
        "match",
        "if",
        "while",
        "for",
        "loop",
    ];
    let first = header.iter().find_map(|t| match t {
        TokenTree::Ident(i) => STARTS.iter().find(|k| i == *k),
        _ => None,
    });
    matches!(first, Some(&"impl" | &"trait"))
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_item_fn(&mut self, f: &'ast ItemFn) {
        self.push(&f.attrs, &f.sig, &f.block, false);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.push(&f.attrs, &f.sig, &f.block, true);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(body) = &f.default {
            self.push(&f.attrs, &f.sig, body, true);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        scan_macro(m.tokens.clone(), false, &mut self.0.in_macros);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    /// Where the function `item` is written in the source `text`.
    fn find(text: &str, item: proc_macro2::TokenStream) -> Enclosing {
        let f: ItemFn = syn::parse2(item).unwrap();
        Contents::of(text).unwrap().classify(&Found::fingerprint(&f.sig, &f.block))
    }

    const SOURCE: &str = r#"
        use adaptive_kernel::adaptive_kernel;

        #[adaptive_kernel(complexity = "Low")]
        pub fn total(x: &[f32]) -> f32 {
            x.iter().sum()
        }

        pub struct Signal;

        impl Signal {
            /// Neither `self` nor `Self`.
            #[adaptive_kernel(complexity = "Low")]
            pub fn peak(x: &[f32]) -> f32 {
                x.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v))
            }

            fn helper() {
                #[adaptive_kernel(complexity = "Low")]
                fn nested(x: &[f32]) -> usize { x.len() }
            }
        }

        pub trait Norm {
            #[cfg_attr(all(), adaptive_kernel(complexity = "Low"))]
            fn norm(x: &[f32]) -> f32 { x.iter().map(|v| v * v).sum::<f32>().sqrt() }
        }

        impl Norm for Signal {
            #[adaptive_kernel(complexity = "Low")]
            fn norm(x: &[f32]) -> f32 { x.iter().map(|v| v.abs()).sum() }
        }

        mod inner {
            #[adaptive_kernel(complexity = "Low")]
            fn twice(x: &[f32]) -> usize { 2 * x.len() }
            // An unmarked copy in an impl: the marked free one is the kernel.
            impl super::Signal { fn twice(x: &[f32]) -> usize { 2 * x.len() } }
        }

        // The same function in an impl and free, both marked: cannot tell.
        impl Signal { #[adaptive_kernel(complexity = "Low")] fn both(x: &[f32]) {} }
        #[adaptive_kernel(complexity = "Low")] fn both(x: &[f32]) {}

        macro_rules! written_by_a_macro {
            ($t:ident) => {
                impl $t {
                    $(#[doc = "x"])*
                    #[adaptive_kernel(complexity = "Low")]
                    fn hidden(x: &[f32]) { $t::other(x) }
                    $( #[adaptive_kernel(complexity = "Low")] fn repeated() {} )*
                }
                fn returns() -> impl Sized { #[adaptive_kernel(complexity = "Low")] fn in_body() {} }
                #[adaptive_kernel(complexity = "Low")] fn at_the_top(x: &[f32]) {}
                impl $t { fn unmarked(x: &[f32]) {} }
            };
        }
    "#;

    #[test]
    fn finds_associated_functions_in_impls_trait_impls_and_traits() {
        let peak = quote!(
            pub fn peak(x: &[f32]) -> f32 {
                x.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v))
            }
        );
        assert_eq!(find(SOURCE, peak), Enclosing::Associated);
        let in_trait_impl = quote!(
            fn norm(x: &[f32]) -> f32 {
                x.iter().map(|v| v.abs()).sum()
            }
        );
        assert_eq!(find(SOURCE, in_trait_impl), Enclosing::Associated);
        let default_method = quote!(
            fn norm(x: &[f32]) -> f32 {
                x.iter().map(|v| v * v).sum::<f32>().sqrt()
            }
        );
        assert_eq!(find(SOURCE, default_method), Enclosing::Associated);
    }

    #[test]
    fn finds_free_functions_in_modules_and_in_bodies_of_methods() {
        assert_eq!(
            find(
                SOURCE,
                quote!(
                    pub fn total(x: &[f32]) -> f32 {
                        x.iter().sum()
                    }
                )
            ),
            Enclosing::Free
        );
        assert_eq!(
            find(
                SOURCE,
                quote!(
                    fn nested(x: &[f32]) -> usize {
                        x.len()
                    }
                )
            ),
            Enclosing::Free
        );
        assert_eq!(
            find(
                SOURCE,
                quote!(
                    fn twice(x: &[f32]) -> usize {
                        2 * x.len()
                    }
                )
            ),
            Enclosing::Free
        );
    }

    #[test]
    fn says_unknown_when_not_found_or_found_in_both_places() {
        assert_eq!(
            find(
                SOURCE,
                quote!(
                    fn both(x: &[f32]) {}
                )
            ),
            Enclosing::Unknown
        );
        // An edited body is another function.
        assert_eq!(
            find(
                SOURCE,
                quote!(
                    pub fn total(x: &[f32]) -> f32 {
                        x.iter().sum::<f32>()
                    }
                )
            ),
            Enclosing::Unknown
        );
        assert!(Contents::of("fn broken( {").is_none());
    }

    #[test]
    fn finds_marked_functions_in_impls_a_macro_writes_by_name() {
        assert_eq!(
            find(
                SOURCE,
                quote!(
                    fn hidden(x: &[f32]) {
                        Signal::other(x)
                    }
                )
            ),
            Enclosing::Associated
        );
        assert_eq!(
            find(
                SOURCE,
                quote!(
                    fn repeated() {}
                )
            ),
            Enclosing::Associated
        );
        // Anywhere else in a macro's output it may land in an impl or not.
        assert_eq!(
            find(
                SOURCE,
                quote!(
                    fn in_body() {}
                )
            ),
            Enclosing::Unknown
        );
        assert_eq!(
            find(
                SOURCE,
                quote!(
                    fn at_the_top(x: &[f32]) {}
                )
            ),
            Enclosing::Unknown
        );
        assert_eq!(
            find(
                SOURCE,
                quote!(
                    fn unmarked(x: &[f32]) {}
                )
            ),
            Enclosing::Unknown
        );
    }

    #[test]
    fn layout_does_not_matter() {
        let reformatted = "impl S {\n    fn peak(\n        x: &[f32]\n    ) -> f32 {\n        x[0] // first\n    }\n}";
        assert_eq!(
            find(
                reformatted,
                quote!(
                    fn peak(x: &[f32]) -> f32 {
                        x[0]
                    }
                )
            ),
            Enclosing::Associated
        );
    }
}
