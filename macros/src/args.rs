//! The attribute's arguments: `complexity = "High", size = EXPR, …`.
//!
//! Parsed by hand with [`syn::meta::parser`]: a handful of keys needs no
//! framework. Strings become enums at once, and every problem (unknown key,
//! duplicate key, bad value) is collected rather than returned on the first
//! one, so a single build reports all of them with a span on the offending
//! token.

use crate::errors::Errors;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprPath, Ident, LitBool, LitStr, Token};

/// Declares the attribute's keys in one place: the [`Key`] enum, the list the
/// "unknown key" message prints (in this order) and an example value for each,
/// so parsing, the duplicate check and the messages cannot drift apart
/// (tracing-attributes' `custom_keyword!`, serde's `Symbol` constants).
macro_rules! keys {
    ($($(#[$doc:meta])* $key:ident = $name:literal, e.g. $example:literal;)*) => {
        /// One key of the attribute.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Key {
            $($(#[$doc])* $key,)*
        }

        impl Key {
            /// Every key, in the order messages list them.
            pub(crate) const ALL: &'static [Key] = &[$(Key::$key),*];

            /// The key as written in the attribute.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Key::$key => $name,)*
                }
            }

            /// A value for the key, for messages.
            fn example(self) -> &'static str {
                match self {
                    $(Key::$key => $example,)*
                }
            }
        }
    };
}

keys! {
    /// `complexity = "Low" | "Medium" | "High"`.
    Complexity = "complexity", e.g. "\"High\"";
    /// `size = EXPR`.
    Size = "size", e.g. "n * n";
    /// `flops = EXPR`.
    Flops = "flops", e.g. "2 * n * n * n";
    /// `bytes = EXPR`.
    Bytes = "bytes", e.g. "12 * n * n";
    /// `simd = PATH`.
    Simd = "simd", e.g. "my_simd_kernel";
    /// `parallel = PATH`.
    Parallel = "parallel", e.g. "my_parallel_kernel";
    /// `gpu = PATH`.
    Gpu = "gpu", e.g. "my_gpu_kernel";
    /// `name = "…"`.
    Name = "name", e.g. "\"my_crate::my_kernel\"";
    /// `exact`, `exact = true` or `exact = false`: a flag, so it may stand alone.
    Exact = "exact", e.g. "true";
    /// `serial`, `serial = true` or `serial = false`: a flag, so it may stand alone.
    Serial = "serial", e.g. "true";
    /// `verify`, `verify = true` or `verify = false`: a flag, so it may stand alone.
    Verify = "verify", e.g. "true";
    /// `tolerance = FLOAT`: the relative difference from Scalar that `verify` accepts.
    Tolerance = "tolerance", e.g. "1e-4";
    /// `associated`, `associated = true` or `associated = false`: a flag, so it may stand alone.
    Associated = "associated", e.g. "true";
}

impl Key {
    fn from_path(path: &syn::Path) -> Option<Key> {
        let ident = path.get_ident()?;
        Key::ALL.iter().copied().find(|key| ident == key.name())
    }

    /// Whether the key may stand alone, meaning `key = true`.
    fn is_flag(self) -> bool {
        matches!(self, Key::Exact | Key::Serial | Key::Verify | Key::Associated)
    }
}

/// The kernel's complexity class: the row of the MoE table it is routed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Complexity {
    Low,
    Medium,
    High,
}

impl Complexity {
    const ALL: [Complexity; 3] = [Complexity::Low, Complexity::Medium, Complexity::High];

    fn name(self) -> &'static str {
        match self {
            Complexity::Low => "Low",
            Complexity::Medium => "Medium",
            Complexity::High => "High",
        }
    }

    /// Accepts the names in any letter case, like the runtime's `OpComplexity::from_str`,
    /// so a spelling that parses at run time parses here too.
    fn parse(lit: &LitStr) -> syn::Result<Complexity> {
        let given = lit.value();
        Complexity::ALL.into_iter().find(|c| c.name().eq_ignore_ascii_case(&given)).ok_or_else(|| {
            syn::Error::new(
                lit.span(),
                format!("unknown complexity `{given}`; expected one of `Low`, `Medium`, `High`"),
            )
        })
    }
}

impl ToTokens for Complexity {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let variant = Ident::new(self.name(), Span::call_site());
        tokens.extend(quote!(::adaptive_kernel::__private::OpComplexity::#variant));
    }
}

/// The parsed attribute.
pub(crate) struct Args {
    pub complexity: Complexity,
    /// `size = EXPR`: a `usize` over the parameters; `None` means the default (slice lengths).
    pub size: Option<Expr>,
    /// `flops = EXPR`, for the cost model.
    pub flops: Option<Expr>,
    /// `bytes = EXPR`, for the cost model.
    pub bytes: Option<Expr>,
    /// `simd = PATH`: a hand-written SIMD variant.
    pub simd: Option<ExprPath>,
    /// `parallel = PATH`: a hand-written multi-core variant.
    pub parallel: Option<ExprPath>,
    /// `gpu = PATH`: a hand-written GPU variant.
    pub gpu: Option<ExprPath>,
    /// `name = "…"`: the kernel's identity in history and traces.
    pub name: Option<LitStr>,
    /// `exact`: the SIMD variant keeps the body's order of float operations
    /// (no reassociated reductions, see `crate::reduce`).
    pub exact: bool,
    /// `serial`: the kernel stays on the calling thread: no loop is split across threads (see
    /// `crate::split`) and the kernel has no Parallel variant, whatever its body calls.
    pub serial: bool,
    /// `verify` (`Some(true)`): compare each variant's result with Scalar's in every
    /// mode; `verify = false`: never (see `crate::verify`); absent: under the verify mode.
    pub verify: Option<bool>,
    /// `tolerance = FLOAT`: the relative difference `verify` accepts, instead of the rounding bound.
    pub tolerance: Option<syn::LitFloat>,
    /// `associated` (the key's span): the function is an associated function, whatever its
    /// source file says (see `crate::enclosing`); `associated = false` or absent: found out.
    pub associated: Option<Span>,
    /// `false` when a syntax error stopped parsing early: keys after it are unknown,
    /// so nothing may be reported as missing.
    pub complete: bool,
}

impl Args {
    /// Parses the attribute's tokens, recording every problem found in `errors`, not
    /// only the first. The result is meaningful only when no error was recorded
    /// (a bad value is replaced by a stand-in, as serde's attribute parser does).
    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> Args {
        let mut builder = Builder::new(errors);
        let syntax = syn::meta::parser(|meta| builder.key(meta)).parse2(tokens);
        let complete = syntax.is_ok();
        if let Err(e) = syntax {
            builder.errors.push(e);
        }
        builder.finish(complete)
    }
}

/// Collects keys and problems while the parser walks the attribute.
struct Builder<'e> {
    /// Every key seen so far, even one with a bad value (that value has its
    /// own error; "missing" or a second "bad value" would be wrong).
    seen: Vec<Key>,
    complexity: Option<Complexity>,
    size: Option<Expr>,
    flops: Option<Expr>,
    bytes: Option<Expr>,
    simd: Option<ExprPath>,
    parallel: Option<ExprPath>,
    gpu: Option<ExprPath>,
    name: Option<LitStr>,
    exact: bool,
    serial: bool,
    verify: Option<bool>,
    tolerance: Option<syn::LitFloat>,
    associated: Option<Span>,
    errors: &'e mut Errors,
}

impl<'e> Builder<'e> {
    fn new(errors: &'e mut Errors) -> Builder<'e> {
        Builder {
            seen: Vec::new(),
            complexity: None,
            size: None,
            flops: None,
            bytes: None,
            simd: None,
            parallel: None,
            gpu: None,
            name: None,
            exact: false,
            serial: false,
            verify: None,
            tolerance: None,
            associated: None,
            errors,
        }
    }

    /// Handles one `key = value`. Returns `Err` only for syntax errors, after
    /// which the rest of the attribute cannot be read; everything else is
    /// recorded and parsing goes on.
    fn key(&mut self, meta: ParseNestedMeta) -> syn::Result<()> {
        let Some(key) = Key::from_path(&meta.path) else {
            let shown = meta.path.to_token_stream().to_string().replace(' ', "");
            let expected = Key::ALL.iter().map(|k| format!("`{}`", k.name())).collect::<Vec<_>>().join(", ");
            self.errors.push(syn::Error::new_spanned(
                &meta.path,
                format!("unknown key `{shown}`; expected one of {expected}"),
            ));
            return skip_value(meta.input);
        };
        let span = meta.path.span();
        let duplicate = self.seen.contains(&key);
        self.seen.push(key);
        if !meta.input.peek(Token![=]) {
            if duplicate {
                self.errors.error(span, format!("duplicate key `{}`", key.name()));
            } else if key.is_flag() {
                self.set_flag(key, true, span);
                return Ok(());
            } else {
                self.errors.error(span, format!("`{0}` needs a value, e.g. `{0} = {1}`", key.name(), key.example()));
            }
            return skip_value(meta.input);
        }
        let value = ungroup(meta.value()?.parse()?);
        if duplicate {
            self.errors.error(span, format!("duplicate key `{}`", key.name()));
            return Ok(());
        }
        match key {
            Key::Complexity => {
                let parsed = literal::<LitStr>(key, &value).and_then(|lit| Complexity::parse(&lit));
                self.complexity = self.errors.take(parsed);
            }
            Key::Size => self.size = Some(value),
            Key::Flops => self.flops = Some(value),
            Key::Bytes => self.bytes = Some(value),
            Key::Simd => self.simd = self.path(key, value),
            Key::Parallel => self.parallel = self.path(key, value),
            Key::Gpu => self.gpu = self.path(key, value),
            Key::Name => match literal::<LitStr>(key, &value) {
                Ok(lit) if lit.value().trim().is_empty() => {
                    self.errors.push(syn::Error::new(lit.span(), "kernel `name` must not be empty"))
                }
                Ok(lit) => self.name = Some(lit),
                Err(e) => self.errors.push(e),
            },
            Key::Exact | Key::Serial | Key::Verify | Key::Associated => {
                if let Some(lit) = self.errors.take(literal::<LitBool>(key, &value)) {
                    self.set_flag(key, lit.value, span);
                }
            }
            Key::Tolerance => match literal::<syn::LitFloat>(key, &value) {
                Ok(lit) if lit.base10_parse::<f64>().is_ok_and(|t| t.is_finite() && t > 0.0) => {
                    self.tolerance = Some(lit)
                }
                Ok(lit) => self.errors.push(syn::Error::new(
                    lit.span(),
                    "`tolerance` must be a positive finite number, the largest relative difference from \
                     the Scalar result that `verify` accepts, e.g. `tolerance = 1e-4`",
                )),
                Err(e) => self.errors.push(e),
            },
        }
        Ok(())
    }

    /// Sets the flag `key` (one of those [`Key::is_flag`] accepts), written at `span`.
    fn set_flag(&mut self, key: Key, value: bool, span: Span) {
        match key {
            Key::Verify => self.verify = Some(value),
            Key::Associated => self.associated = value.then_some(span),
            Key::Serial => self.serial = value,
            _ => self.exact = value,
        }
    }

    fn path(&mut self, key: Key, value: Expr) -> Option<ExprPath> {
        match value {
            Expr::Path(path) if path.attrs.is_empty() => Some(path),
            other => {
                self.errors.push(syn::Error::new_spanned(
                    other,
                    format!(
                        "`{0}` expects the path of a function with the kernel's signature, e.g. `{0} = {1}`",
                        key.name(),
                        key.example()
                    ),
                ));
                None
            }
        }
    }

    fn finish(self, complete: bool) -> Args {
        if !self.seen.contains(&Key::Complexity) && complete {
            self.errors.error(
                Span::call_site(),
                "missing `complexity`; add `complexity = \"Low\"`, `\"Medium\"` or `\"High\"` to the attribute",
            );
        }
        if let (true, Some(path)) = (self.serial, &self.parallel) {
            self.errors.push(syn::Error::new_spanned(
                path,
                "a `serial` kernel stays on the calling thread and has no Parallel variant, so it takes no \
                 `parallel = …`; remove `serial` to route to this variant, or `parallel = …` to keep the kernel \
                 on one thread",
            ));
        }
        Args {
            // `Low` stands in only when an error was recorded; then nothing is generated.
            complexity: self.complexity.unwrap_or(Complexity::Low),
            size: self.size,
            flops: self.flops,
            bytes: self.bytes,
            simd: self.simd,
            parallel: self.parallel,
            gpu: self.gpu,
            name: self.name,
            exact: self.exact,
            serial: self.serial,
            verify: self.verify,
            tolerance: self.tolerance,
            associated: self.associated,
            complete,
        }
    }
}

/// `expr` without the invisible groups a `macro_rules!` fragment (`$c:expr`) arrives in.
fn ungroup(expr: Expr) -> Expr {
    match expr {
        Expr::Group(g) if g.attrs.is_empty() => ungroup(*g.expr),
        other => other,
    }
}

/// The literal of type `L` (a string, a bool) that `key`'s value must be.
fn literal<L: syn::parse::Parse + LitKind>(key: Key, value: &Expr) -> syn::Result<L> {
    match value {
        Expr::Lit(ExprLit { lit, attrs }) if attrs.is_empty() => {
            if let Ok(lit) = syn::parse2::<L>(lit.to_token_stream()) {
                return Ok(lit);
            }
        }
        _ => {}
    }
    Err(syn::Error::new_spanned(
        value,
        format!("`{0}` expects {1}, e.g. `{0} = {2}`", key.name(), L::WHAT, key.example()),
    ))
}

/// What a literal type is called in messages.
trait LitKind {
    const WHAT: &'static str;
}

impl LitKind for LitStr {
    const WHAT: &'static str = "a string literal";
}

impl LitKind for LitBool {
    const WHAT: &'static str = "`true` or `false`";
}

impl LitKind for syn::LitFloat {
    const WHAT: &'static str = "a floating-point literal";
}

/// Consumes an unknown key's value (`= expr`, a parenthesised list, or nothing) up to
/// the next top-level comma (left for the meta parser), so the keys after it are still checked.
fn skip_value(input: ParseStream) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if let TokenTree::Punct(p) = &tt {
                if p.as_char() == ',' {
                    break;
                }
            }
            rest = next;
        }
        Ok(((), rest))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(tokens: TokenStream) -> syn::Result<Args> {
        let mut errors = Errors::new();
        let args = Args::parse(tokens, &mut errors);
        errors.finish().map(|()| args)
    }

    fn messages(e: syn::Error) -> Vec<String> {
        e.into_iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn reads_every_key() {
        let args = parse(quote!(
            complexity = "high",
            size = n * n,
            flops = 2 * n,
            bytes = 4 * n,
            simd = a::b,
            gpu = c,
            name = "k",
            exact = true
        ))
        .unwrap();
        assert!(args.exact);
        assert_eq!(args.complexity, Complexity::High);
        assert!(args.size.is_some() && args.flops.is_some() && args.bytes.is_some());
        assert_eq!(args.simd.unwrap().to_token_stream().to_string(), "a :: b");
        assert_eq!(args.name.unwrap().value(), "k");
    }

    #[test]
    fn sees_through_macro_rules_fragments() {
        // `$complexity:expr` and `$path:path` arrive wrapped in invisible groups.
        let lit = proc_macro2::Group::new(proc_macro2::Delimiter::None, quote!("Medium"));
        let path = proc_macro2::Group::new(proc_macro2::Delimiter::None, quote!(my::simd));
        let args = parse(quote!(complexity = #lit, simd = #path)).unwrap();
        assert_eq!(args.complexity, Complexity::Medium);
        assert!(args.simd.is_some());
    }

    #[test]
    fn complexity_is_case_insensitive() {
        for (text, want) in [("LOW", Complexity::Low), ("Medium", Complexity::Medium), ("hIgH", Complexity::High)] {
            assert_eq!(parse(quote!(complexity = #text)).unwrap().complexity, want);
        }
    }

    #[test]
    fn reports_all_problems_at_once() {
        let e = parse(quote!(complexity = "Hgh", foo = 1, size = 1, size = 2)).err().unwrap();
        assert_eq!(
            messages(e),
            [
                "unknown complexity `Hgh`; expected one of `Low`, `Medium`, `High`",
                "unknown key `foo`; expected one of `complexity`, `size`, `flops`, `bytes`, `simd`, `parallel`, \
                 `gpu`, `name`, `exact`, `serial`, `verify`, `tolerance`, `associated`",
                "duplicate key `size`",
            ]
        );
    }

    #[test]
    fn a_key_without_value_is_reported_at_the_key_and_parsing_goes_on() {
        let e = parse(quote!(size, complexity = "Hgh")).err().unwrap();
        assert_eq!(
            messages(e),
            [
                "`size` needs a value, e.g. `size = n * n`",
                "unknown complexity `Hgh`; expected one of `Low`, `Medium`, `High`"
            ]
        );
        let e = parse(quote!(complexity)).err().unwrap();
        assert_eq!(messages(e), ["`complexity` needs a value, e.g. `complexity = \"High\"`"]);
    }

    #[test]
    fn missing_complexity_is_reported_with_other_problems() {
        let e = parse(quote!(bogus(1, 2), size = n)).err().unwrap();
        let m = messages(e);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].starts_with("unknown key `bogus`"));
        assert!(m[1].starts_with("missing `complexity`"));
    }

    #[test]
    fn exact_is_a_flag_or_a_bool() {
        assert!(!parse(quote!(complexity = "Low")).unwrap().exact);
        assert!(parse(quote!(complexity = "Low", exact)).unwrap().exact);
        assert!(parse(quote!(exact = true, complexity = "Low")).unwrap().exact);
        assert!(!parse(quote!(complexity = "Low", exact = false)).unwrap().exact);
        let e = parse(quote!(complexity = "Low", exact = 1, exact)).err().unwrap();
        assert_eq!(messages(e), ["`exact` expects `true` or `false`, e.g. `exact = true`", "duplicate key `exact`"]);
    }

    #[test]
    fn serial_is_a_flag_or_a_bool() {
        assert!(!parse(quote!(complexity = "Low")).unwrap().serial);
        assert!(parse(quote!(complexity = "Low", serial)).unwrap().serial);
        assert!(!parse(quote!(complexity = "Low", serial = false)).unwrap().serial);
        let e = parse(quote!(complexity = "Low", serial = "no")).err().unwrap();
        assert_eq!(messages(e), ["`serial` expects `true` or `false`, e.g. `serial = true`"]);
    }

    #[test]
    fn serial_takes_no_parallel_variant_of_ones_own() {
        let e = parse(quote!(complexity = "Low", serial, parallel = mine)).err().unwrap();
        assert_eq!(
            messages(e),
            ["a `serial` kernel stays on the calling thread and has no Parallel variant, so it takes no \
              `parallel = …`; remove `serial` to route to this variant, or `parallel = …` to keep the kernel on one \
              thread"]
        );
        assert!(parse(quote!(complexity = "Low", serial = false, parallel = mine)).is_ok());
    }

    #[test]
    fn associated_is_a_flag_that_keeps_its_span() {
        assert!(parse(quote!(complexity = "Low")).unwrap().associated.is_none());
        assert!(parse(quote!(complexity = "Low", associated)).unwrap().associated.is_some());
        assert!(parse(quote!(associated = true, complexity = "Low")).unwrap().associated.is_some());
        assert!(parse(quote!(complexity = "Low", associated = false)).unwrap().associated.is_none());
        let e = parse(quote!(complexity = "Low", associated = "yes")).err().unwrap();
        assert_eq!(messages(e), ["`associated` expects `true` or `false`, e.g. `associated = true`"]);
    }

    #[test]
    fn every_key_is_parsed_and_listed() {
        // The message lists `Key::ALL`; each of them must be accepted as a key.
        for key in Key::ALL {
            let name = Ident::new(key.name(), Span::call_site());
            let value = match key {
                Key::Complexity => quote!("Low"),
                Key::Name => quote!("k"),
                Key::Exact | Key::Serial | Key::Verify | Key::Associated => quote!(true),
                Key::Tolerance => quote!(1e-4),
                _ => quote!(f),
            };
            let tokens = if *key == Key::Complexity {
                quote!(#name = #value)
            } else {
                quote!(complexity = "Low", #name = #value)
            };
            assert!(parse(tokens).is_ok(), "key `{}`", key.name());
        }
    }
}
