//! ndarray's lock-step loops lowered to the `for` loop they are:
//! `Zip::from(p0).and(p1)…for_each(|x0, x1, …| body)` and
//! `azip!((x0 in p0, x1 in p1, …) body)` become
//! `for ((x0, x1), …) in p0.iter_mut().zip(p1.iter())… { body }`, each producer the
//! slice of an array the lowering reads (`&mut a`, `a.view_mut()` or a writable view
//! by value: `iter_mut()`; `&a`, `a.view()` or a view by value: `iter()`).
//!
//! ndarray panics when the producers' shapes differ, where zipped iterators would stop
//! at the shortest: the lowered loop takes every producer's rows and columns as the
//! first's, so the call's guard checks they are equal (and runs the body as written,
//! which panics as ndarray does, when they are not). A `move` closure (its captures are
//! copies, a loop's are not), a `return` in the closure (a loop's would leave the
//! function), `azip!`'s `index` form and a producer that is not such an array leave
//! the call as written.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::visit::Visit;
use syn::{Expr, Pat, Token};

/// A lock-step loop as written: its producers, the pattern each element binds, its body.
pub(super) struct ZipCall {
    /// The arrays (or views) it walks, in order.
    pub(super) producers: Vec<Expr>,
    /// The pattern each producer's element binds.
    pub(super) pats: Vec<Pat>,
    pub(super) body: Expr,
    /// Where the `for` of the lowered loop is said to be (its line in reports).
    pub(super) span: Span,
}

/// `Zip::from(p0).and(p1)….for_each(|x0, x1, …| body)`, if `e` is one.
pub(super) fn zip_call(e: &Expr) -> Option<ZipCall> {
    let Expr::MethodCall(m) = e else { return None };
    if m.method != "for_each" || m.args.len() != 1 || m.turbofish.is_some() {
        return None;
    }
    let Expr::Closure(c) = &m.args[0] else { return None };
    if c.capture.is_some() || c.asyncness.is_some() || !matches!(c.output, syn::ReturnType::Default) {
        return None;
    }
    let producers = chain(&m.receiver)?;
    let pats: Vec<Pat> = c.inputs.iter().map(untyped).collect();
    (pats.len() == producers.len()).then(|| ZipCall { producers, pats, body: (*c.body).clone(), span: m.method.span() })
}

/// The producers of `Zip::from(p0).and(p1)…`, in order.
fn chain(e: &Expr) -> Option<Vec<Expr>> {
    match e {
        Expr::MethodCall(m) if m.method == "and" && m.args.len() == 1 && m.turbofish.is_none() => {
            let mut producers = chain(&m.receiver)?;
            producers.push(m.args[0].clone());
            Some(producers)
        }
        Expr::Call(c) if c.args.len() == 1 => {
            let Expr::Path(p) = &*c.func else { return None };
            let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            (names.ends_with(&["Zip".to_owned(), "from".to_owned()])).then(|| vec![c.args[0].clone()])
        }
        _ => None,
    }
}

/// `azip!((x0 in p0, x1 in p1, …) body)`, if `m` is one.
pub(super) fn azip(m: &syn::Macro) -> Option<ZipCall> {
    if m.path.segments.last().is_none_or(|s| s.ident != "azip") {
        return None;
    }
    let parsed: Azip = syn::parse2(m.tokens.clone()).ok()?;
    let (pats, producers) = parsed.parts.into_iter().unzip();
    let span = m.path.segments.last().map_or_else(Span::call_site, |s| s.ident.span());
    Some(ZipCall { producers, pats, body: parsed.body, span })
}

/// `azip!`'s input: `(pat in expr, …) body`.
struct Azip {
    parts: Vec<(Pat, Expr)>,
    body: Expr,
}

impl Parse for Azip {
    fn parse(input: ParseStream) -> syn::Result<Azip> {
        let inner;
        syn::parenthesized!(inner in input);
        let parts = Punctuated::<(Pat, Expr), Token![,]>::parse_terminated_with(&inner, |p| {
            let pat = Pat::parse_single(p)?;
            p.parse::<Token![in]>()?;
            Ok((pat, p.parse()?))
        })?;
        let body = input.parse()?;
        Ok(Azip { parts: parts.into_iter().collect(), body })
    }
}

/// A closure parameter without its type (a `for` pattern takes none).
fn untyped(p: &Pat) -> Pat {
    match p {
        Pat::Type(t) => (*t.pat).clone(),
        other => other.clone(),
    }
}

/// Whether `body` holds a `return` of its own (not one of a closure inside it).
pub(super) fn returns(body: &Expr) -> bool {
    struct Returns(bool);
    impl<'ast> Visit<'ast> for Returns {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            // A macro's tokens may hold one too.
            self.0 |=
                m.tokens.clone().into_iter().any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "return"));
        }
    }
    let mut r = Returns(false);
    r.visit_expr(body);
    r.0
}

#[cfg(test)]
mod tests {
    use quote::{quote, ToTokens};

    use crate::body::lower;

    fn lowered(f: TokenStream) -> Option<(String, Vec<String>)> {
        let f: syn::ItemFn = syn::parse2(f).unwrap();
        let l = lower(&f.sig, &f.block)?;
        let equal = l.equal.iter().map(|(a, b)| format!("{a} == {b}")).collect();
        Some((l.block.to_token_stream().to_string(), equal))
    }

    use proc_macro2::TokenStream;

    #[test]
    fn zip_for_each_and_azip_are_the_for_loops_they_are_with_the_shapes_joined() {
        let (body, equal) = lowered(quote!(
            fn k(a: ArrayView2<'_, f32>, b: &Array2<f32>, mut out: ArrayViewMut2<'_, f32>) {
                Zip::from(&mut out).and(&a).and(b).for_each(|o, &x, &y: &f32| *o = x * y);
            }
        ))
        .unwrap();
        assert_eq!(
            body,
            "{ for ((o , & x) , & y) in out . iter_mut () . zip (a . iter ()) . zip (b . iter ()) { * o = x * y ; } }"
        );
        assert_eq!(
            equal,
            [
                "__adaptive_rows_b == __adaptive_rows_a",
                "__adaptive_cols_b == __adaptive_cols_a",
                "__adaptive_rows_out == __adaptive_rows_a",
                "__adaptive_cols_out == __adaptive_cols_a"
            ]
        );
        let (body, _) = lowered(quote!(
            fn k(a: ArrayView1<'_, f32>, s: f32, mut out: ArrayViewMut1<'_, f32>) {
                azip!((o in &mut out, &x in &a) *o += x * s);
            }
        ))
        .unwrap();
        assert_eq!(body, "{ for (o , & x) in out . iter_mut () . zip (a . iter ()) { * o += x * s ; } }");
    }

    #[test]
    fn what_a_loop_would_not_mean_stays_as_written() {
        for not in [
            // A `move` closure's captures are copies.
            quote!(
                fn k(a: ArrayView1<'_, f32>, mut s: f32) {
                    Zip::from(&a).for_each(move |&x| s += x);
                }
            ),
            // `return` in the closure is a `continue`.
            quote!(
                fn k(a: ArrayView1<'_, f32>, mut out: ArrayViewMut1<'_, f32>) {
                    Zip::from(&mut out).and(&a).for_each(|o, &x| {
                        if x < 0.0 {
                            return;
                        }
                        *o = x;
                    });
                }
            ),
            // `azip!`'s index form, a writable producer of a read-only view.
            quote!(
                fn k(a: ArrayView1<'_, f32>, mut out: ArrayViewMut1<'_, f32>) {
                    azip!((index i, o in &mut out, &x in &a) *o = x * i as f32);
                }
            ),
            quote!(
                fn k(a: ArrayView1<'_, f32>) {
                    Zip::from(&mut a).for_each(|x| *x = 0.0);
                }
            ),
        ] {
            assert!(lowered(not.clone()).is_none(), "{not}");
        }
    }
}
