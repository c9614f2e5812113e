//! The `#[adaptive_kernel]` attribute (skeleton; see the macro issue).
use proc_macro::TokenStream;

/// Marks a function as an adaptive kernel.
#[proc_macro_attribute]
pub fn adaptive_kernel(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}
