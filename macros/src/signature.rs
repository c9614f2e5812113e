//! Which functions can be kernels, and the parameters the wrapper forwards.
//!
//! Every problem of one function is collected and combined (serde's `Ctxt`
//! pattern) so a single build shows all of them, each spanned on the token
//! that causes it.
//!
//! Generics: lifetimes, type and const parameters and where-clauses are
//! accepted; each instantiation gets its own routing table (the runtime's
//! `KernelFamily`). `impl Trait` arguments (anonymous type parameters) are
//! rejected: the wrapper names every generic argument when it calls a variant
//! (`k::scalar::<T, N>(..)`), and Rust allows no explicit generic arguments
//! beside `impl Trait`. Receivers (`self`, `&self`, `&mut self`,
//! `self: Box<Self>`, ..) make the function a method ([`Shape::InImpl`]), and so
//! does an `impl` or `trait` block around it in its source file, or `Self`.

use crate::enclosing::{self, Enclosing};
use crate::errors::Errors;
use crate::tokens::mentions;
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{FnArg, GenericParam, Ident, Item, ItemFn, Pat, ReturnType, Signature, Type, TypeImplTrait};

/// Where the generated code goes, which follows from what the function is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A free function: the wrapper plus `mod k` beside it.
    Free,
    /// A method or associated function (it takes a receiver, sits in an `impl` or
    /// `trait` block of its source file, says `associated` or names `Self`): everything
    /// inside the function, since an impl item may bring no other
    /// item with it (a trait impl accepts only the trait's items, and an impl
    /// no modules).
    InImpl,
}

impl Shape {
    /// The shape of `func`, the attribute's item, whose `associated` key (if given) is at
    /// `associated`.
    ///
    /// A receiver makes it a method. Otherwise it may look like a free function token for
    /// token (the attribute cannot see an `impl` around it), so its source file is asked
    /// ([`crate::enclosing`]). When the file cannot tell, the `associated` key or a `Self` in
    /// the function makes it associated. `associated` on a function the file shows to be free
    /// is an error.
    pub(crate) fn of(func: &ItemFn, associated: Option<Span>, errors: &mut Errors) -> Shape {
        let (sig, block) = (&func.sig, &func.block);
        if sig.inputs.iter().any(|i| matches!(i, FnArg::Receiver(_))) {
            return Shape::InImpl;
        }
        match (enclosing::of(func), associated) {
            (Enclosing::Associated, _) => Shape::InImpl,
            (Enclosing::Free, None) => Shape::Free,
            (Enclosing::Free, Some(span)) => {
                errors.error(
                    span,
                    format!(
                        "`{}` is a free function, in no `impl` or `trait` block, so `associated` does not apply; \
                         remove it",
                        sig.ident
                    ),
                );
                Shape::Free
            }
            (Enclosing::Unknown, Some(_)) => Shape::InImpl,
            // `Self` is only valid in an impl or a trait (or in an item nested in the body,
            // which the file would have shown).
            (Enclosing::Unknown, None) => {
                if mentions(sig.to_token_stream(), &["Self"]) || mentions(block.to_token_stream(), &["Self"]) {
                    Shape::InImpl
                } else {
                    Shape::Free
                }
            }
        }
    }
}

/// The type and const parameters of `generics`, in order, as a turbofish names them
/// (lifetimes are left to inference); empty when there are none.
pub(crate) fn generic_args(generics: &syn::Generics) -> Vec<Ident> {
    generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Lifetime(_) => None,
            GenericParam::Type(t) => Some(t.ident.clone()),
            GenericParam::Const(c) => Some(c.ident.clone()),
        })
        .collect()
}

/// One parameter, as the wrapper forwards it: by name.
pub(crate) struct Param {
    pub ident: Ident,
    pub ty: Type,
}

/// The function under the attribute, or an error spanned on what it is instead.
pub(crate) fn function(item: &Item) -> syn::Result<&ItemFn> {
    match item {
        Item::Fn(f) => Ok(f),
        other => {
            let (span, what): (Span, &str) = match other {
                Item::Struct(i) => (i.struct_token.span, "a struct"),
                Item::Enum(i) => (i.enum_token.span, "an enum"),
                Item::Union(i) => (i.union_token.span, "a union"),
                Item::Trait(i) => (i.trait_token.span, "a trait"),
                Item::Impl(i) => (i.impl_token.span, "an impl block"),
                Item::Mod(i) => (i.mod_token.span, "a module"),
                Item::Const(i) => (i.const_token.span, "a constant"),
                Item::Static(i) => (i.static_token.span, "a static"),
                Item::Type(i) => (i.type_token.span, "a type alias"),
                Item::Use(i) => (i.use_token.span, "a `use` declaration"),
                Item::ForeignMod(i) => (i.abi.extern_token.span, "an `extern` block"),
                other => (other.span(), "not a function"),
            };
            Err(syn::Error::new(
                span,
                format!("`#[adaptive_kernel]` applies to functions and methods only (`fn name(..) {{ .. }}`); this is {what}"),
            ))
        }
    }
}

/// Checks `sig` and returns its parameters; every problem is reported, not only the first.
pub(crate) fn check(sig: &Signature) -> syn::Result<Vec<Param>> {
    let mut errors = Errors::new();
    let name = &sig.ident;
    if let Some(t) = &sig.constness {
        errors.error(t.span, "`const fn` kernels are not supported: a kernel is routed at run time; remove `const`");
    }
    if let Some(t) = &sig.asyncness {
        errors.error(
            t.span,
            "`async fn` kernels are not supported: the router times synchronous calls; \
             make the kernel a plain `fn` and call it from your async code",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            "`extern` ABIs are not supported: the variants are Rust functions; \
             remove the ABI and wrap the kernel in an `extern` function if you need one",
        ));
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            v,
            "variadic parameters are not supported: every variant needs the same fixed parameters",
        ));
    }
    let mut params = Vec::with_capacity(sig.inputs.len());
    for input in &sig.inputs {
        match input {
            // The variants are closures in the method's body: they capture `self` as it is.
            FnArg::Receiver(_) => {}
            FnArg::Typed(pt) => {
                for span in impl_traits(&pt.ty) {
                    errors.error(
                        span,
                        format!(
                            "`impl Trait` parameters are not supported: `{name}` calls its variants with every \
                             generic argument named (`{name}::scalar::<T>(..)`), which Rust forbids beside \
                             `impl Trait`; declare a type parameter instead (`fn {name}<F: Trait>(f: F, ..)`)"
                        ),
                    );
                }
                match &*pt.pat {
                    Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                        params.push(Param { ident: p.ident.clone(), ty: (*pt.ty).clone() })
                    }
                    other => errors.push(syn::Error::new_spanned(
                        other,
                        "kernel parameters must be plain identifiers (`name: Type`): the wrapper forwards each \
                         parameter by name to the variants; bind the pattern inside the body \
                         (`let (a, b) = pair;`)",
                    )),
                }
            }
        }
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        for span in impl_traits(ty) {
            errors.error(
                span,
                "`impl Trait` return types are not supported: each variant would return its own opaque type; \
                 return a concrete type",
            );
        }
    }
    errors.finish().map(|()| params)
}

/// The spans of every `impl Trait` inside `ty`.
fn impl_traits(ty: &Type) -> Vec<Span> {
    struct Finder(Vec<Span>);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_type_impl_trait(&mut self, t: &'ast TypeImplTrait) {
            self.0.push(t.impl_token.span);
        }
    }
    let mut finder = Finder(Vec::new());
    finder.visit_type(ty);
    finder.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn check_fn(tokens: proc_macro2::TokenStream) -> syn::Result<Vec<Param>> {
        let f: ItemFn = syn::parse2(tokens).unwrap();
        check(&f.sig)
    }

    #[test]
    fn accepts_lifetimes_mut_params_and_unsafe() {
        let params = check_fn(quote!(
            pub unsafe fn k<'a>(mut x: &'a mut [f32], n: usize) -> &'a f32
            where
                'a: 'a,
            {
                &x[0]
            }
        ))
        .unwrap();
        let names: Vec<String> = params.iter().map(|p| p.ident.to_string()).collect();
        assert_eq!(names, ["x", "n"]);
    }

    #[test]
    fn reports_every_problem() {
        let e = check_fn(quote!(
            async fn k<T>(&self, (a, b): (f32, f32), f: impl Fn(f32)) -> impl Sized {}
        ))
        .err()
        .unwrap();
        let starts: Vec<String> = e.into_iter().map(|e| e.to_string().chars().take(20).collect()).collect();
        assert_eq!(
            starts,
            ["`async fn` kernels a", "kernel parameters mu", "`impl Trait` paramet", "`impl Trait` return ",]
        );
    }
}
