//! The iteration space of a top-level loop whose iterations are independent, as
//! the split and the GPU variant cut it (their chunk forms of it are theirs:
//! `crate::split`, `crate::shader`), read off its [`Walk`].
//!
//! * [`Space::Range`]: `for i in start..end` over `usize`. A chunk walks
//!   `lo..hi`; the body's writes into a target (`out[i]`, `out[i * w + j]`,
//!   `out[i * w..(i + 1) * w]`) go to the chunk's part of it, rebased (see
//!   `independence.rs`).
//! * [`Space::Chain`]: an iterator over slice-likes, items or rows, zipped and
//!   enumerated: `out.iter_mut()`, `&mut out`, `out.chunks_mut(w)`,
//!   `out.chunks_exact_mut(w)`, `a.iter()`, `a.iter().copied()`, `&a`, `a`,
//!   `a.chunks(w)`, `.zip(..)`, `.enumerate()`. A chunk walks the same chain
//!   over sub-slices: the targets' parts, `a[lo..hi]` of what is read, and
//!   `(lo..).zip(..)` for `.enumerate()`, so every item and index is the
//!   one the loop as written has at that step.
//!
//! The loop as written stops at the shortest of what it zips; so does the
//! split (its unit count is the minimum), and every sub-slice it takes is then
//! in bounds.

use proc_macro2::{Ident, TokenStream};
use quote::{quote, ToTokens};
use syn::Expr;

use super::names::Env;
use super::scope::Kind;
use super::syntax::plain_ident;
use super::walk::{is_iterator_zip, How, Walk};

/// The iteration space of a loop the split can cut into chunks.
pub(crate) enum Space {
    /// `for i in start..end` over `usize`.
    Range { start: Box<Expr>, end: Box<Expr> },
    /// An iterator chain over slice-likes.
    Chain(Box<Chain>),
}

/// An iterator chain: streams zipped and enumerated, in the shape written.
pub(crate) enum Chain {
    Leaf(Box<Stream>),
    Zip(Box<Chain>, Box<Chain>),
    Enumerate(Box<Chain>),
}

/// One slice-like a chain walks.
pub(crate) struct Stream {
    pub slice: Ident,
    /// Its items are written (`iter_mut`, `chunks_mut`, `&mut x`): a target.
    pub mutable: bool,
    /// Rows of a width (`chunks`, `chunks_exact` and their `_mut` forms) rather than items.
    pub rows: Option<Rows>,
    /// Shared items: `.copied()` or `.cloned()` after `.iter()`.
    pub adapter: Option<Ident>,
    /// Written as a method call (`x.iter()`); else `x`, `&x` or `&mut x`.
    pub method: bool,
}

/// The rows of a [`Stream`].
pub(crate) struct Rows {
    /// The width as written, evaluated once before the loop.
    pub width: Expr,
    /// `chunks_exact`: only whole rows.
    pub exact: bool,
}

impl Space {
    /// The space of `for _ in expr`, or `None` when the split cannot cut it.
    pub(crate) fn of(expr: &Expr, scope: &Env) -> Option<Space> {
        match Walk::of(expr, true) {
            Walk::Range { start: Some(start), end: Some(end), closed: false } => {
                Some(Space::Range { start: Box::new(start.clone()), end: Box::new(end.clone()) })
            }
            walk => Chain::of(&walk, scope).map(|c| Space::Chain(Box::new(c))),
        }
    }

    /// The word for the loop in reports: `for range`, `for iter_mut.zip`, `for chunks_mut.enumerate`, …
    pub(crate) fn idiom(expr: &Expr) -> String {
        let mut words = Vec::new();
        let mut e = expr;
        loop {
            match e {
                Expr::Paren(p) => e = &p.expr,
                Expr::Range(_) => {
                    words.push("range".to_string());
                    break;
                }
                // `Iterator::zip(a, b)` is `a.zip(b)` (`Walk::of`): one word for both spellings.
                Expr::Call(c) if c.args.len() == 2 && is_iterator_zip(&c.func) => {
                    words.push("zip".to_string());
                    e = &c.args[0];
                }
                Expr::MethodCall(m) => {
                    if !matches!(m.method.to_string().as_str(), "copied" | "cloned") {
                        words.push(m.method.to_string());
                    }
                    e = &m.receiver;
                }
                Expr::Reference(r) => {
                    words.push(if r.mutability.is_some() { "&mut" } else { "&" }.to_string());
                    break;
                }
                _ => {
                    words.push(if words.is_empty() { "slice".to_string() } else { "?".to_string() });
                    break;
                }
            }
        }
        words.reverse();
        if words.first().is_some_and(|w| w == "?") {
            words.remove(0);
        }
        format!("for {}", words.join("."))
    }
}

impl Chain {
    /// A walk as a chain of streams the split can cut.
    fn of(walk: &Walk, scope: &Env) -> Option<Chain> {
        match walk {
            Walk::Zip(a, b) => Some(Chain::Zip(Box::new(Chain::of(a, scope)?), Box::new(Chain::of(b, scope)?))),
            Walk::Enumerate(a) => Some(Chain::Enumerate(Box::new(Chain::of(a, scope)?))),
            walk => Stream::of(walk, scope).map(|s| Chain::Leaf(Box::new(s))),
        }
    }

    /// The streams, left to right.
    pub(crate) fn streams(&self) -> Vec<&Stream> {
        match self {
            Chain::Leaf(s) => vec![s],
            Chain::Zip(a, b) => {
                let mut all = a.streams();
                all.extend(b.streams());
                all
            }
            Chain::Enumerate(c) => c.streams(),
        }
    }
}

impl Stream {
    /// `x.iter_mut()`, `x.iter()`, `x.iter().copied()`, `x.chunks(w)`, `x.chunks_exact_mut(w)`,
    /// `x`, `&x` or `&mut x` of a slice-like `x`.
    fn of(walk: &Walk, scope: &Env) -> Option<Stream> {
        let (of, how, adapter) = match walk {
            Walk::Copied(inner, adapter) => match &**inner {
                Walk::Items { of, how: How::Iter } => (*of, &How::Iter, Some((*adapter).clone())),
                _ => return None,
            },
            Walk::Items { of, how } => (*of, how, None),
            _ => return None,
        };
        let slice = plain_ident(of)?;
        let outer = scope.outer(&slice.to_string())?;
        let kind = outer.kind;
        let (mutable, rows, method) = match how {
            How::Iter => (false, None, true),
            How::IterMut => (true, None, true),
            How::Rows { method, width, mutable } => {
                let exact = match method.to_string().as_str() {
                    "chunks" | "chunks_mut" => false,
                    "chunks_exact" | "chunks_exact_mut" => true,
                    _ => return None,
                };
                // The width is evaluated once, before the loop, as the iterator as written evaluates it.
                (*mutable, Some(Rows { width: (*width).clone(), exact }), true)
            }
            How::Whole(reference) => {
                let mutable = match (kind, reference) {
                    // `&mut x` of an owned or `&mut` slice-like; `&x` of any slice-like.
                    (Kind::MutSlice, Some(true)) => true,
                    (Kind::MutSlice | Kind::Slice { .. }, Some(false)) => false,
                    // `x` itself: a `&[T]`/`&Vec<T>` yields `&T`; a `&mut [T]` parameter yields `&mut T`
                    // (an owned one would yield `T`, which no sub-slice can).
                    (Kind::Slice { by_ref: true }, None) => false,
                    (Kind::MutSlice, None) if !outer.mutable => true,
                    _ => return None,
                };
                (mutable, None, false)
            }
        };
        let fits = match kind {
            Kind::MutSlice => true,
            Kind::Slice { .. } => !mutable,
            Kind::MutRef | Kind::Other => false,
        };
        fits.then_some(Stream { slice, mutable, rows, adapter, method })
    }

    /// How many units (items or rows) it has: an expression of `usize`.
    pub(crate) fn count(&self, width: Option<&Ident>) -> TokenStream {
        let slice = &self.slice;
        match (&self.rows, width) {
            (None, _) => quote!(#slice.len()),
            (Some(Rows { exact: false, .. }), Some(w)) => quote!(#slice.len().div_ceil(#w)),
            (Some(Rows { exact: true, .. }), Some(w)) => quote!(#slice.len() / #w),
            (Some(_), None) => unreachable!("rows have a width variable"),
        }
    }
}

impl ToTokens for Rows {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.width.to_tokens(tokens);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn scope() -> Env {
        Env::of_signature(&parse_quote!(fn k(out: &mut [f32], a: &[f32], v: Vec<f32>, w: usize, m: &mut Vec<f32>)))
    }

    fn words(e: Expr) -> Option<Vec<(String, bool, bool)>> {
        match Space::of(&e, &scope())? {
            Space::Range { .. } => Some(vec![]),
            Space::Chain(c) => {
                Some(c.streams().iter().map(|s| (s.slice.to_string(), s.mutable, s.rows.is_some())).collect())
            }
        }
    }

    #[test]
    fn chains_the_split_can_cut() {
        let w = |s: &str, m, r| (s.to_string(), m, r);
        assert_eq!(words(parse_quote!(out.iter_mut())), Some(vec![w("out", true, false)]));
        assert_eq!(words(parse_quote!(out)), Some(vec![w("out", true, false)]));
        assert_eq!(
            words(parse_quote!(out.chunks_mut(w).zip(a.chunks(w)).enumerate())),
            Some(vec![w("out", true, true), w("a", false, true)])
        );
        assert_eq!(
            words(parse_quote!(m.iter_mut().zip(a.iter().copied()).zip(&v))),
            Some(vec![w("m", true, false), w("a", false, false), w("v", false, false)])
        );
        assert_eq!(words(parse_quote!(0..w)), Some(vec![]));
        for e in [
            parse_quote!(out.iter_mut().rev()),
            parse_quote!(v.iter_mut()),
            parse_quote!(a.iter_mut()),
            parse_quote!(out.iter_mut().zip(v)),
            parse_quote!(out.chunks_mut(w).step_by(2)),
            parse_quote!(0..=w),
            parse_quote!(items.iter_mut()),
        ] {
            assert!(words(e).is_none());
        }
    }

    #[test]
    fn idioms() {
        assert_eq!(Space::idiom(&parse_quote!(0..n)), "for range");
        assert_eq!(Space::idiom(&parse_quote!(out.iter_mut().zip(a).enumerate())), "for iter_mut.zip.enumerate");
        assert_eq!(Space::idiom(&parse_quote!(out)), "for slice");
        // Disagreement resolved: the walk's grammar read `Iterator::zip(a, b)` as a zip, the
        // report's word for it was `for slice`.
        assert_eq!(Space::idiom(&parse_quote!(::core::iter::Iterator::zip(out.iter_mut(), a))), "for iter_mut.zip");
        assert_eq!(Space::idiom(&parse_quote!(out.iter_mut().zip(a))), "for iter_mut.zip");
        assert_eq!(Space::idiom(&parse_quote!(&mut out)), "for &mut");
        assert_eq!(Space::idiom(&parse_quote!(f().iter_mut())), "for iter_mut");
    }
}
