//! The reason words: why a rewrite left a reduction as written, or a loop on one
//! thread or on the host. Every analysis answers with a [`Reason`]; the word is
//! written into the kernel's spec, whose reports explain it.
//!
//! The runtime has the same list with the meanings (`adaptive_kernel::kernel::LoopReason`).
//! The facade checks at compile time that the two hold the same words, variant for
//! variant ([`check`], expanded by the hidden `__loop_reasons!`), so a word cannot be
//! written here without a meaning there, nor listed there and never written here.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

/// Declares [`Reason`] from one list of variants and words.
macro_rules! reasons {
    ($($variant:ident = $word:literal,)*) => {
        /// Why a loop (or a reduction) was left as written by a rewrite: the word its report gives.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Reason {
            $($variant,)*
        }

        impl Reason {
            /// Every reason, in the runtime's order.
            pub(crate) const ALL: &'static [Reason] = &[$(Reason::$variant),*];

            /// The word a kernel's spec holds.
            pub(crate) fn word(self) -> &'static str {
                match self {
                    $(Reason::$variant => $word,)*
                }
            }

            /// The runtime's variant of the same name (`LoopReason::Exact`).
            fn variant(self) -> &'static str {
                match self {
                    $(Reason::$variant => stringify!($variant),)*
                }
            }
        }
    };
}

reasons! {
    Exact = "exact",
    Simd = "simd",
    Break = "break",
    Continue = "continue",
    Return = "return",
    Try = "try",
    Label = "label",
    Await = "await",
    Yield = "yield",
    Macro = "macro",
    Effect = "effect",
    Reads = "reads",
    Type = "type",
    Mixed = "mixed",
    Shadow = "shadow",
    Op = "op",
    Source = "source",
    Serial = "serial",
    Parallel = "parallel",
    Writes = "writes",
    Overlap = "overlap",
    Unsafe = "unsafe",
    Nothing = "nothing",
    Gpu = "gpu",
    F64 = "f64",
    Call = "call",
    Value = "value",
    Size = "size",
    Syntax = "syntax",
    Carried = "carried",
}

/// The word of a report's reason; empty when there is none (the loop was rewritten).
pub(crate) fn word(reason: Option<Reason>) -> &'static str {
    reason.map_or("", Reason::word)
}

/// The facade's compile-time check that the runtime's `LoopReason` (at `path`) holds exactly
/// these words: each variant named here exists there with the same word, and there are as
/// many there as here (so none is only there).
pub(crate) fn check(path: &syn::Path) -> TokenStream {
    let count = Reason::ALL.len();
    let checks = Reason::ALL.iter().map(|r| {
        let variant = Ident::new(r.variant(), Span::call_site());
        let word = r.word();
        let message = format!("the runtime's `LoopReason::{variant}` is not the word `{word}` the macro writes");
        quote!(::core::assert!(same(#path::#variant.word(), #word), #message);)
    });
    let message = format!("the runtime's `LoopReason` lists words the macro never writes: it writes {count}");
    quote! {
        const _: () = {
            const fn same(a: &str, b: &str) -> bool {
                let (a, b) = (a.as_bytes(), b.as_bytes());
                if a.len() != b.len() {
                    return false;
                }
                let mut i = 0;
                while i < a.len() {
                    if a[i] != b[i] {
                        return false;
                    }
                    i += 1;
                }
                true
            }
            #(#checks)*
            ::core::assert!(#path::ALL.len() == #count, #message);
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_word_once() {
        for (i, r) in Reason::ALL.iter().enumerate() {
            assert_eq!(Reason::ALL.iter().position(|o| o.word() == r.word()), Some(i), "{r:?}");
            assert!(r.word().chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
        }
        assert_eq!(word(None), "");
        assert_eq!(word(Some(Reason::Overlap)), "overlap");
        let check = check(&syn::parse_quote!(runtime::LoopReason)).to_string();
        assert!(check.contains("runtime :: LoopReason :: Carried . word () , \"carried\""), "{check}");
    }
}
