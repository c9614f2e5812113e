//! What a `for` walks, as written ([`Walk`]): the one grammar of loop sources.
//! The typer types a walk's items, the SIMD rewrites take ranges and slices in
//! chunks, the split and the GPU variant cut a top-level loop's iteration space
//! (`space.rs`), and the GPU lowers an inner loop's items: each from this parse.

use proc_macro2::Ident;
use syn::Expr;

/// What a `for` walks, as written: the one grammar of loop sources. Each reader takes the
/// shapes it can compute with: the typer types the items (`Env::item`), the SIMD variant
/// takes ranges and one or two slices in chunks, the split cuts ranges and chains of slices
/// (`crate::body::Space`), the GPU lowers a chain to one invocation's items.
///
/// To teach the model a new iterator source (`x.rows()` of an ndarray), add its shape here:
/// every reader then sees it, and says what it makes of it.
pub(crate) enum Walk<'a> {
    /// `start..end`, `start..`, `..end`, `start..=end`.
    Range { start: Option<&'a Expr>, end: Option<&'a Expr>, closed: bool },
    /// `a.zip(b)`, also spelled `Iterator::zip(a, b)`.
    Zip(Box<Walk<'a>>, Box<Walk<'a>>),
    /// `a.enumerate()`.
    Enumerate(Box<Walk<'a>>),
    /// `a.copied()`, `a.cloned()`.
    Copied(Box<Walk<'a>>, &'a Ident),
    /// `a.rev()`, `a.skip(n)`, `a.take(n)`, `a.step_by(n)`.
    Adapted { inner: Box<Walk<'a>>, method: &'a Ident, arg: Option<&'a Expr> },
    /// The items of a slice-like `of`.
    Items { of: &'a Expr, how: How<'a> },
    /// Anything else: a user's iterator, a call.
    Other,
}

/// How a [`Walk::Items`] walks its slice-like.
pub(crate) enum How<'a> {
    /// `x.iter()`.
    Iter,
    /// `x.iter_mut()`.
    IterMut,
    /// `x.chunks(w)`, `chunks_exact`, `windows`, `rchunks`, `rchunks_exact`, and the `_mut` ones.
    Rows { method: &'a Ident, width: &'a Expr, mutable: bool },
    /// `x` itself, `&x` (`Some(false)`) or `&mut x` (`Some(true)`), where a `for` or a `zip`
    /// walks what it is given.
    Whole(Option<bool>),
}

impl<'a> Walk<'a> {
    /// `e` as a `for` source or a `zip` argument (`into_iter`: a slice-like walked as it is, `x`,
    /// `&x`, `&mut x`, is one), or as a method's receiver (an iterator is needed).
    pub(crate) fn of(e: &'a Expr, into_iter: bool) -> Walk<'a> {
        match e {
            Expr::Paren(p) => Walk::of(&p.expr, into_iter),
            Expr::Group(g) => Walk::of(&g.expr, into_iter),
            Expr::Range(r) => Walk::Range {
                start: r.start.as_deref(),
                end: r.end.as_deref(),
                closed: matches!(r.limits, syn::RangeLimits::Closed(_)),
            },
            Expr::Call(c) if c.args.len() == 2 && is_iterator_zip(&c.func) => {
                Walk::Zip(Box::new(Walk::of(&c.args[0], false)), Box::new(Walk::of(&c.args[1], true)))
            }
            Expr::MethodCall(m) if m.turbofish.is_none() => {
                let (method, args, receiver) = (&m.method, &m.args, &*m.receiver);
                let name = method.to_string();
                match (name.as_str(), args.len()) {
                    ("zip", 1) => Walk::Zip(Box::new(Walk::of(receiver, false)), Box::new(Walk::of(&args[0], true))),
                    ("enumerate", 0) => Walk::Enumerate(Box::new(Walk::of(receiver, false))),
                    ("copied" | "cloned", 0) => Walk::Copied(Box::new(Walk::of(receiver, false)), method),
                    ("rev", 0) => Walk::Adapted { inner: Box::new(Walk::of(receiver, false)), method, arg: None },
                    ("skip" | "take" | "step_by", 1) => {
                        Walk::Adapted { inner: Box::new(Walk::of(receiver, false)), method, arg: Some(&args[0]) }
                    }
                    ("iter", 0) => Walk::Items { of: receiver, how: How::Iter },
                    ("iter_mut", 0) => Walk::Items { of: receiver, how: How::IterMut },
                    ("chunks" | "chunks_exact" | "windows" | "rchunks" | "rchunks_exact", 1) => {
                        Walk::Items { of: receiver, how: How::Rows { method, width: &args[0], mutable: false } }
                    }
                    ("chunks_mut" | "chunks_exact_mut" | "rchunks_mut" | "rchunks_exact_mut", 1) => {
                        Walk::Items { of: receiver, how: How::Rows { method, width: &args[0], mutable: true } }
                    }
                    _ => Walk::Other,
                }
            }
            Expr::Reference(r) if into_iter => {
                Walk::Items { of: &r.expr, how: How::Whole(Some(r.mutability.is_some())) }
            }
            e if into_iter => Walk::Items { of: e, how: How::Whole(None) },
            _ => Walk::Other,
        }
    }
}

/// `Iterator::zip` by path (`::core::iter::Iterator::zip`, `std::iter::Iterator::zip`): `a.zip(b)`
/// as a split loop's chunk spells it.
pub(crate) fn is_iterator_zip(f: &Expr) -> bool {
    let Expr::Path(p) = f else { return false };
    let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
    p.qself.is_none() && names.ends_with(&["Iterator".to_string(), "zip".to_string()])
}
