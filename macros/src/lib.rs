//! The `#[adaptive_kernel]` attribute of the `adaptive-kernel` crate.
//! Use it through the facade: `use adaptive_kernel::adaptive_kernel;`.
//!
#![doc = include_str!("../doc/reference.md")]
//!
//! # Expansion
//!
//! This kernel (`doc/example.rs`)
//!
//! ```rust,ignore
#![doc = include_str!("../doc/example.rs")]
//! ```
//!
//! expands to the following (`doc/expansion.rs`, rustfmt-formatted, comments
//! added; a unit test checks it against the real expansion, token for token):
//!
//! ```rust,ignore
#![doc = include_str!("../doc/expansion.rs")]
//! ```
//!
//! # Expansion of a method
//!
//! This method (`doc/method_example.rs`)
//!
//! ```rust,ignore
#![doc = include_str!("../doc/method_example.rs")]
//! ```
//!
//! expands to the following method (`doc/method_expansion.rs`, checked the same way):
//!
//! ```rust,ignore
#![doc = include_str!("../doc/method_expansion.rs")]
//! ```
//!
//! # Expansion of a generic kernel
//!
//! This kernel (`doc/generic_example.rs`)
//!
//! ```rust,ignore
#![doc = include_str!("../doc/generic_example.rs")]
//! ```
//!
//! expands to the following (`doc/generic_expansion.rs`, checked the same way):
//!
//! ```rust,ignore
#![doc = include_str!("../doc/generic_expansion.rs")]
//! ```
//!
//! # This crate
//!
//! | module | concern |
//! | --- | --- |
//! | `expand` | input to output: a `KernelDef` printed by the generators below; the user's item plus the errors on failure |
//! | `kernel_def` | `KernelDef` (named apart from the runtime's `Kernel`): everything parsed and checked about one kernel, what the generators read |
//! | `args` | the attribute's keys, parsed with `syn::meta::parser`; strings become enums at once |
//! | `signature` | which functions can be kernels, and the parameters to forward |
//! | `enclosing` | whether a function with neither `self` nor `Self` sits in an `impl` or `trait`, from its source file |
//! | `errors` | collecting every problem before reporting (`syn::Error::combine`) |
//! | `size` | the default `size` expression |
//! | `arrays` | ndarray's arrays and views in a signature, recognised by their type's name: one list |
//! | `tokens` | searching token streams for identifiers |
//! | `std_macros` | the standard and logging macros the analyses know by name, and what each may do |
//! | `hash` | `token_hash`: FNV-1a over a layout-independent rendering of the tokens |
//! | `attrs` | which user attribute goes on which generated item |
//! | `relocate` | module-relative paths moved to where the variants live |
//! | `body` | the model of the body every rewrite reads: types of names, what loops walk, what they read and write, reductions, index ranges, and each top-level loop analysed once |
//! | `reduce` | the SIMD body's float reductions reassociated into independent lanes, its bounds-checked element-wise index loops taken in chunks, and what was done to each |
//! | `split` | the Parallel body: top-level loops with independent iterations split across threads, and why not where not |
//! | `shader` | the GPU body: those loops as WGSL compute shaders, one invocation per iteration (a checked subset with its own type inference, types confirmed at run time), and why not where not |
//! | `variants` | `mod k`: the variants and `KERNEL` (a `ToTokens` printer, one method per piece) |
//! | `wrapper` | the routed function |
//! | `in_impl` | a method or associated function: the routed function with its variants inside it |
//! | `verify` | which kernels `verify` applies to, from the signature, and its errors |
//! | `reason` | the reason words every analysis answers with, and the facade's check that the runtime lists the same |

mod args;
mod arrays;
mod attrs;
mod body;
mod enclosing;
mod errors;
mod expand;
#[cfg(test)]
mod golden;
mod hash;
mod in_impl;
mod kernel_def;
mod kernel_spec;
mod layout_guard;
mod reason;
mod reduce;
mod relocate;
mod resident;
mod shader;
mod signature;
mod size;
mod split;
mod std_macros;
mod tokens;
mod variants;
mod verify;
mod wrapper;

use proc_macro::TokenStream;

#[doc = include_str!("../doc/reference.md")]
///
/// # Expansion
///
/// <details><summary>What the <code>matmul</code> above expands to</summary>
///
/// ```rust,ignore
#[doc = include_str!("../doc/expansion.rs")]
/// ```
///
/// </details>
///
/// # Expansion of a method
///
/// <details><summary>What <code>Layer::forward</code> expands to</summary>
///
/// ```rust,ignore
#[doc = include_str!("../doc/method_example.rs")]
/// ```
///
/// becomes
///
/// ```rust,ignore
#[doc = include_str!("../doc/method_expansion.rs")]
/// ```
///
/// </details>
///
/// # Expansion of a generic kernel
///
/// <details><summary>What a generic <code>dot</code> expands to</summary>
///
/// ```rust,ignore
#[doc = include_str!("../doc/generic_example.rs")]
/// ```
///
/// becomes
///
/// ```rust,ignore
#[doc = include_str!("../doc/generic_expansion.rs")]
/// ```
///
/// </details>
#[proc_macro_attribute]
pub fn adaptive_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::adaptive_kernel(args.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// The facade's compile-time check that the runtime's `LoopReason`, at the path given,
/// lists exactly the reason words this macro writes (`crate::reason`). Not a public API.
#[doc(hidden)]
#[proc_macro]
pub fn __loop_reasons(path: TokenStream) -> TokenStream {
    match syn::parse::<syn::Path>(path) {
        Ok(path) => reason::check(&path).into(),
        Err(e) => e.into_compile_error().into(),
    }
}
