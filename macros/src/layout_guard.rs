//! The guard of a variant whose body the rewrites read lowered (`crate::body::lower`):
//! per call, each lowered array is taken as its contiguous slice (`as_slice()`,
//! `as_slice_mut()`: `Some` only in standard layout) and its dimensions (the runtime's
//! `layout::dims`); when every slice is there and the dimensions the lowered body takes
//! as one are equal, the variant's rewrite of the lowered body runs over the slices;
//! otherwise the body as written runs, and an array not in standard layout is counted
//! and said once (`Kernel::ran_as_written`).
//!
//! ```text
//! {
//!     #[allow(unused_variables)]
//!     let (__adaptive_rows_a, __adaptive_cols_a) = layout::dims(a.shape());   // each 2-D array
//!     match (a.as_slice(), out.as_slice_mut()) {
//!         (Some(a), Some(out)) if __adaptive_cols_out == __adaptive_cols_a && .. => { REWRITTEN }
//!         _ => {
//!             if !a.is_standard_layout() { KERNEL.ran_as_written("a", a.shape(), a.strides()); }
//!             else if !out.is_standard_layout() { .. }
//!             BODY AS WRITTEN
//!         }
//!     }
//! }
//! ```
//!
//! Safe slices only: no pointer arithmetic. The generated code calls methods of the
//! caller's arrays and names no ndarray type, so it serves every ndarray version.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Block;

use crate::body::Lowered;

/// `rewritten` (a variant's rewrite of `lowered`'s body) behind the guard of `lowered`'s
/// arrays, with `as_written` for calls that fail it; `kernel` is an expression of type
/// `&'static Kernel` in the variant's scope.
pub(crate) fn guarded(lowered: &Lowered, kernel: &TokenStream, rewritten: &Block, as_written: &Block) -> Block {
    let dims = lowered.params.iter().filter_map(|p| {
        let (rows, cols) = p.dims.as_ref()?;
        let array = &p.ident;
        Some(quote! {
            #[allow(unused_variables)]
            let (#rows, #cols) = ::adaptive_kernel::__private::layout::dims(#array.shape());
        })
    });
    let slices = lowered.params.iter().map(|p| {
        let array = &p.ident;
        if p.mutable {
            quote!(#array.as_slice_mut(),)
        } else {
            quote!(#array.as_slice(),)
        }
    });
    let somes = lowered.params.iter().map(|p| {
        let array = &p.ident;
        quote!(::core::option::Option::Some(#array),)
    });
    let mut checks: Vec<TokenStream> = lowered.equal.iter().map(|(a, b)| quote!(#a == #b)).collect();
    checks.extend(lowered.nonzero.iter().map(|c| quote!(#c != 0)));
    checks.extend(lowered.at_least.iter().map(|(d, c)| {
        let c = proc_macro2::Literal::u64_unsuffixed(*c);
        quote!(#d >= #c)
    }));
    let guard = (!checks.is_empty()).then(|| quote!(if #(#checks)&&*));
    let reports = lowered.params.iter().map(|p| {
        let array = &p.ident;
        let name = array.to_string();
        quote! {
            if !#array.is_standard_layout() {
                #kernel.ran_as_written(#name, #array.shape(), #array.strides());
            }
        }
    });
    let (rewritten, as_written) = (&rewritten.stmts, &as_written.stmts);
    syn::parse_quote!({
        #(#dims)*
        match (#(#slices)*) {
            (#(#somes)*) #guard => {
                #(#rewritten)*
            }
            _ => {
                #(#reports)else*
                #(#as_written)*
            }
        }
    })
}
