//! The `#[adaptive_kernel]` attribute (docs in progress).

mod args;
mod attrs;
mod errors;
mod expand;
mod hash;
mod relocate;
mod signature;
mod size;
mod variants;
mod wrapper;

use proc_macro::TokenStream;

/// Marks a function as an adaptive kernel.
#[proc_macro_attribute]
pub fn adaptive_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::adaptive_kernel(args.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
