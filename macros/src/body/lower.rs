//! ndarray's shapes lowered to the slice shapes the rewrites know: the body as it
//! reads once every ndarray parameter in standard layout is one row-major slice.
//! The model is then built over the lowered body, so the three emitters
//! (`crate::reduce`, `crate::split`, `crate::shader`) see slice code and rewrite it
//! as they rewrite a body written over slices: the shapes are taught here, once.
//!
//! A parameter of a 1-D or 2-D array type whose element type the signature names
//! (`ArrayView2<'_, f32>`, `&mut Array1<u32>`, `ArrayViewMut<'_, f64, Ix2>`, see
//! `crate::arrays::elem_and_axes`) becomes `&[T]` (or `&mut [T]` where the kernel may
//! write it) in the lowered signature, and a 2-D one brings its rows and columns as
//! `usize` parameters (`__adaptive_rows_a`, `__adaptive_cols_a`). In the body:
//!
//! | written | lowered |
//! | --- | --- |
//! | `a[[i, j]]`, `a[(i, j)]` | `a[i * cols + j]` where `j` is proved below `cols`, else `a[layout::index(rows, cols, i, j)]` (checked) |
//! | `a.nrows()`, `a.ncols()`, `a.dim()` | the rows, the columns, `(rows, cols)` (a 1-D array's `dim()`: `a.len()`) |
//! | `a.len()`, `a.is_empty()`, `a.iter()`, `a.iter_mut()`, `a[i]` (1-D), `for x in a` | the same, on the slice |
//! | `a.sum()` (a primitive element) | `a.iter().sum::<T>()` |
//! | `a.fold(init, f)` | `a.iter().fold(init, f)` |
//! | `for row in a.rows()` / `outer_iter()` / `axis_iter(Axis(0))` (also `_mut`, `.into_iter()`, under `.enumerate()` and `.zip(..)`) | `for row in a.chunks_exact(cols)` (`_mut`), each row a slice with the 1-D rules |
//! | `for ((i, j), x) in a.indexed_iter()` (`_mut`; not when the body `break`s) | `for i in 0..rows { for j in 0..cols { let x = &a[i * cols + j]; .. } }` |
//! | `for (i, x) in v.indexed_iter()` (1-D, `_mut`) | `for (i, x) in v.iter().enumerate()` (`iter_mut`) |
//!
//! The proof that `j` is below the columns: `j` is the index of an enclosing `for j in
//! lo..hi` whose `hi` is a number of columns (`a.ncols()`, a name bound to it by `let m =
//! a.ncols()` or `let (n, m) = a.dim()`, a row's `len()`), less a constant `c`; then `j`,
//! `j + k` (`k ≤ c`) and `j - k` (`k ≤ lo`) stay in the row. The lowered body names the
//! columns of every array so proved in one name, and the rows of every array indexed by
//! a loop over another's rows likewise: the call's guard (`crate::layout_guard`) checks
//! that those dimensions are equal, and runs the body as written when they are not, so a
//! call with mismatched shapes panics as written (ndarray's message), never reads a
//! neighbouring row.
//!
//! Any other use of an array (passed on, `a.t()`, `&a`, a method not above, a macro
//! naming it, a row destructured) leaves that array as written, and the lowering is
//! redone without it; the body's loops over it then get the reason words the model gives
//! an unknown type. Lowering happens only for free functions, where the guard can reach
//! the kernel's handle.

use std::collections::BTreeSet;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::visit::Visit;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ExprMethodCall, FnArg, Ident, Lit, Pat, Signature, Type};

use super::names::{pat_bindings, Scopes};
use super::syntax::{idents, plain_ident};
use crate::arrays::{self, Holding, Storage};

mod zip;

/// An array parameter the lowered body reads as a slice.
#[derive(Clone, Debug)]
pub(crate) struct SliceParam {
    /// The parameter (and the slice's name in the lowered body).
    pub ident: Ident,
    /// Taken with `as_slice_mut()` (the kernel may write it), else `as_slice()`.
    pub mutable: bool,
    /// Its rows and columns (`layout::dims`: a 1-D array is one row), as the guard binds
    /// them: for a 2-D array, and a 1-D one whose length the lowered body takes as another's.
    pub dims: Option<(Ident, Ident)>,
}

/// A body with its ndarray parameters lowered to slices, and what its guard checks.
pub(crate) struct Lowered {
    /// The signature the model reads: each lowered array a slice, and the dimensions as
    /// `usize` parameters.
    pub sig: Signature,
    /// The lowered body.
    pub block: Block,
    /// The lowered parameters, in the signature's order.
    pub params: Vec<SliceParam>,
    /// Dimensions the lowered body takes as one: each pair must be equal for it to mean
    /// what the body as written means.
    pub equal: Vec<(Ident, Ident)>,
    /// Columns that must not be zero: the lowered body takes rows as `chunks_exact`.
    pub nonzero: Vec<Ident>,
    /// Dimensions that must be at least a constant: the lowered body reads `d.saturating_sub(c)`
    /// as `d - c`, the form of a range's end the rewrites take.
    pub at_least: Vec<(Ident, u64)>,
}

/// A candidate: an array parameter the body may read as a slice.
struct Candidate {
    ident: Ident,
    elem: Type,
    two_d: bool,
    mutable: bool,
    /// Owned by value (`a: Array2<f32>`): `for x in a` yields elements, not references.
    owned_value: bool,
    /// Its elements are writable through the parameter (`&mut Array2`, `ArrayViewMut2`).
    writable: bool,
}

/// The body `block` of a free function of signature `sig`, with its ndarray parameters
/// lowered to slices; `None` when no parameter can be.
pub(crate) fn lower(sig: &Signature, block: &Block) -> Option<Lowered> {
    let mut candidates: Vec<Candidate> = sig.inputs.iter().filter_map(candidate).collect();
    loop {
        if candidates.is_empty() {
            return None;
        }
        let mut walk = Walk::new(&candidates);
        let mut lowered = block.clone();
        walk.visit_block_mut(&mut lowered);
        if walk.refused.is_empty() {
            return Some(walk.finish(sig, lowered, &candidates));
        }
        let refused = walk.refused;
        candidates = candidates.into_iter().enumerate().filter(|(i, _)| !refused.contains(i)).map(|(_, c)| c).collect();
    }
}

/// The candidate a parameter is: a plain name of a 1-D or 2-D array type with its element
/// type, whose storage gives a slice.
fn candidate(input: &FnArg) -> Option<Candidate> {
    let FnArg::Typed(pt) = input else { return None };
    let Pat::Ident(p) = &*pt.pat else { return None };
    if p.by_ref.is_some() || p.subpat.is_some() {
        return None;
    }
    let array = arrays::of(&pt.ty)?;
    let (elem, axes) = arrays::elem_and_axes(&pt.ty)?;
    if !(axes == 1 || axes == 2) {
        return None;
    }
    let mutable = match (array.storage, array.holding) {
        (Storage::View | Storage::Cow | Storage::Base, _) | (_, Holding::Shared) => false,
        (_, Holding::Mut) => true,
        // By value: written only through a `mut` binding (`mut out: ArrayViewMut2<f32>`).
        (_, Holding::Value) => p.mutability.is_some(),
    };
    let owned_value = array.holding == Holding::Value && matches!(array.storage, Storage::Owned | Storage::Shared);
    let writable = array.written();
    Some(Candidate { ident: p.ident.clone(), elem, two_d: axes == 2, mutable, owned_value, writable })
}

/// What a name in the body stands for, as far as the lowering cares.
#[derive(Clone, Copy, Debug)]
enum Name {
    /// Anything else (it shadows what it names).
    Other,
    /// Candidate `n` itself.
    Array(usize),
    /// A row of candidate `n` (a 1-D view, lowered to a slice of its columns), and whether
    /// it is writable (from `rows_mut()`).
    Row(usize, bool),
    /// A dimension (see [`Walk::dim`]).
    Dim(usize),
    /// The index of a `for` over `lo..hi`, `hi` a dimension less a constant.
    Index { lo: u64, hi: Option<(usize, u64)> },
}

/// The walk that lowers a body, recording what it could not lower.
struct Walk<'a> {
    candidates: &'a [Candidate],
    names: Scopes<Name>,
    /// Candidates used in a way that is not lowered.
    refused: BTreeSet<usize>,
    /// Dimensions (`2n` the rows of candidate `n`, `2n + 1` its columns), joined where the
    /// lowered body takes them as one: a union-find forest.
    parent: Vec<usize>,
    /// Candidates taken by rows.
    by_rows: BTreeSet<usize>,
    /// Dimensions read as `d - c` for `d.saturating_sub(c)`, with `c`.
    at_least: Vec<(usize, u64)>,
}

impl<'a> Walk<'a> {
    fn new(candidates: &'a [Candidate]) -> Walk<'a> {
        let mut names = Scopes::default();
        names.push();
        for (n, c) in candidates.iter().enumerate() {
            names.bind(c.ident.to_string(), Name::Array(n));
        }
        Walk {
            candidates,
            names,
            refused: BTreeSet::new(),
            parent: (0..2 * candidates.len()).collect(),
            by_rows: BTreeSet::new(),
            at_least: Vec::new(),
        }
    }

    fn rows(n: usize) -> usize {
        2 * n
    }

    fn cols(n: usize) -> usize {
        2 * n + 1
    }

    fn root(&self, mut d: usize) -> usize {
        while self.parent[d] != d {
            d = self.parent[d];
        }
        d
    }

    fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.root(a), self.root(b));
        // The lower one is the root: the first parameter's name stands for the class.
        if a != b {
            self.parent[a.max(b)] = a.min(b);
        }
    }

    /// The name of dimension `d` as written by the walk (each array's own); `finish`
    /// renames each to its class's.
    fn dim_ident(&self, d: usize) -> Ident {
        let c = &self.candidates[d / 2];
        let axis = if d.is_multiple_of(2) { "rows" } else { "cols" };
        format_ident!("__adaptive_{}_{}", axis, c.ident, span = Span::call_site())
    }

    /// The candidate or row `e` names.
    fn array(&self, e: &Expr) -> Option<Name> {
        let name = plain_ident(e)?;
        match self.names.lookup(&name.to_string()) {
            Some(n @ (Name::Array(_) | Name::Row(..))) => Some(*n),
            _ => None,
        }
    }

    /// The candidate `name` stands for (an array, or the array a row is of).
    fn owner(name: Name) -> Option<usize> {
        match name {
            Name::Array(n) | Name::Row(n, _) => Some(n),
            _ => None,
        }
    }

    fn refuse(&mut self, name: Name) {
        if let Some(n) = Self::owner(name) {
            self.refused.insert(n);
        }
    }

    /// `e` as a dimension less a constant: `a.nrows()`, `a.ncols()`, `row.len()`, a name
    /// bound to one; `D - c`, `D.saturating_sub(c)`.
    fn dim(&self, e: &Expr) -> Option<(usize, u64)> {
        match e {
            Expr::Paren(p) => self.dim(&p.expr),
            Expr::Group(g) => self.dim(&g.expr),
            Expr::Path(_) => match self.names.lookup(&plain_ident(e)?.to_string())? {
                Name::Dim(d) => Some((*d, 0)),
                _ => None,
            },
            Expr::Binary(b) if matches!(b.op, syn::BinOp::Sub(_)) => {
                let (d, c) = self.dim(&b.left)?;
                Some((d, c.checked_add(literal(&b.right)?)?))
            }
            Expr::MethodCall(m) if m.method == "saturating_sub" && m.args.len() == 1 => {
                let (d, c) = self.dim(&m.receiver)?;
                Some((d, c.checked_add(literal(&m.args[0])?)?))
            }
            Expr::MethodCall(m) if m.args.is_empty() && m.turbofish.is_none() => {
                match (self.array(&m.receiver)?, m.method.to_string().as_str()) {
                    (Name::Array(n), "nrows") if self.candidates[n].two_d => Some((Self::rows(n), 0)),
                    (Name::Array(n), "ncols") if self.candidates[n].two_d => Some((Self::cols(n), 0)),
                    (Name::Row(n, _), "len") => Some((Self::cols(n), 0)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether the column index `j` of an element of candidate `n` is proved below its
    /// columns (see the module's docs), joining those columns with the loop's.
    fn column_proved(&mut self, n: usize, j: &Expr) -> bool {
        let (name, offset) = match j {
            Expr::Paren(p) => return self.column_proved(n, &p.expr),
            Expr::Binary(b) => match (plain_ident(&b.left), literal(&b.right), &b.op) {
                (Some(name), Some(k), syn::BinOp::Add(_)) => (name, k as i128),
                (Some(name), Some(k), syn::BinOp::Sub(_)) => (name, -(k as i128)),
                _ => return false,
            },
            _ => match plain_ident(j) {
                Some(name) => (name, 0),
                None => return false,
            },
        };
        let Some(Name::Index { lo, hi: Some((d, c)) }) = self.names.lookup(&name.to_string()).copied() else {
            return false;
        };
        let fits = if offset >= 0 { offset <= c as i128 } else { -offset <= lo as i128 };
        if fits {
            self.join(d, Self::cols(n));
        }
        fits
    }

    /// Joins candidate `n`'s rows with those of the loop whose index `i` is, if it is one.
    fn row_index(&mut self, n: usize, i: &Expr) {
        if let Some(name) = plain_ident(i) {
            if let Some(Name::Index { hi: Some((d, _)), .. }) = self.names.lookup(&name.to_string()).copied() {
                if d.is_multiple_of(2) {
                    self.join(d, Self::rows(n));
                }
            }
        }
    }

    /// The lowered form of `e`, an index expression of candidate or row `name`; `None`
    /// when it is not one the lowering takes.
    fn index(&mut self, name: Name, ix: &mut syn::ExprIndex) -> Option<Expr> {
        let elems: Vec<Expr> = match &*ix.index {
            Expr::Array(a) => a.elems.iter().cloned().collect(),
            Expr::Tuple(t) => t.elems.iter().cloned().collect(),
            other => vec![other.clone()],
        };
        let bracketed = matches!(&*ix.index, Expr::Array(_) | Expr::Tuple(_));
        let two_d = matches!(name, Name::Array(n) if self.candidates[n].two_d);
        let array = &ix.expr;
        match (two_d, elems.as_slice()) {
            (false, [i]) => {
                let mut i = i.clone();
                self.visit_expr_mut(&mut i);
                Some(syn::parse_quote!(#array[#i]))
            }
            (true, [i, j]) if bracketed => {
                let n = Self::owner(name)?;
                let proved = self.column_proved(n, j);
                self.row_index(n, i);
                let (mut i, mut j) = (i.clone(), j.clone());
                self.visit_expr_mut(&mut i);
                self.visit_expr_mut(&mut j);
                let (rows, cols) = (self.dim_ident(Self::rows(n)), self.dim_ident(Self::cols(n)));
                if proved {
                    let i = operand(&i);
                    Some(syn::parse_quote!(#array[#i * #cols + #j]))
                } else {
                    Some(syn::parse_quote!(#array[::adaptive_kernel::__private::layout::index(#rows, #cols, #i, #j)]))
                }
            }
            _ => None,
        }
    }

    /// The lowered form of a method call on candidate or row `name`; `None` when it is not
    /// one the lowering takes.
    fn method(&mut self, name: Name, m: &mut ExprMethodCall) -> Option<Expr> {
        let n = Self::owner(name)?;
        let c = &self.candidates[n];
        let array_2d = matches!(name, Name::Array(_)) && c.two_d;
        let writable = match name {
            Name::Row(_, writable) => writable,
            _ => c.mutable,
        };
        let receiver = &m.receiver;
        let method = m.method.to_string();
        let span = m.method.span();
        if m.turbofish.is_some() {
            return None;
        }
        match (method.as_str(), m.args.len()) {
            ("nrows", 0) if array_2d => Some(ident_expr(self.dim_ident(Self::rows(n)))),
            ("ncols", 0) if array_2d => Some(ident_expr(self.dim_ident(Self::cols(n)))),
            ("dim", 0) if array_2d => {
                let (rows, cols) = (self.dim_ident(Self::rows(n)), self.dim_ident(Self::cols(n)));
                Some(syn::parse_quote_spanned!(span=> (#rows, #cols)))
            }
            ("dim", 0) => Some(syn::parse_quote_spanned!(span=> #receiver.len())),
            ("len" | "is_empty" | "iter", 0) => Some(Expr::MethodCall(m.clone())),
            ("iter_mut", 0) if writable => Some(Expr::MethodCall(m.clone())),
            ("sum", 0) if primitive(&c.elem) => {
                let elem = &c.elem;
                Some(syn::parse_quote_spanned!(span=> #receiver.iter().sum::<#elem>()))
            }
            ("fold", 2) => {
                for arg in &mut m.args {
                    self.visit_expr_mut(arg);
                }
                let args = &m.args;
                Some(syn::parse_quote_spanned!(span=> #receiver.iter().fold(#args)))
            }
            _ => None,
        }
    }

    /// The candidate whose rows `e` walks (`a.rows()`, `a.outer_iter()`, `a.axis_iter(Axis(0))`,
    /// their `_mut` forms, and `.into_iter()` of them), and whether writably.
    fn rows_of(&self, e: &Expr) -> Option<(usize, bool)> {
        let Expr::MethodCall(m) = e else { return None };
        if m.method == "into_iter" && m.args.is_empty() {
            return self.rows_of(&m.receiver);
        }
        let Some(Name::Array(n)) = self.array(&m.receiver) else { return None };
        if !self.candidates[n].two_d || m.turbofish.is_some() {
            return None;
        }
        let axis_0 = m.args.len() == 1 && is_axis_0(&m.args[0]);
        let mutable = match (m.method.to_string().as_str(), m.args.is_empty()) {
            ("rows" | "outer_iter", true) => false,
            ("rows_mut" | "outer_iter_mut", true) => true,
            ("axis_iter", false) if axis_0 => false,
            ("axis_iter_mut", false) if axis_0 => true,
            _ => return None,
        };
        (!mutable || self.candidates[n].mutable).then_some((n, mutable))
    }

    /// Lowers the source of a `for` in place: its rows walks become `chunks_exact`, under
    /// `.enumerate()` and `.zip(..)`; returns what its pattern binds, as [`Source`].
    fn source(&mut self, e: &mut Expr) -> Source {
        if let Some((n, mutable)) = self.rows_of(e) {
            self.by_rows.insert(n);
            let array = &self.candidates[n].ident;
            let cols = self.dim_ident(Self::cols(n));
            *e = if mutable {
                syn::parse_quote!(#array.chunks_exact_mut(#cols))
            } else {
                syn::parse_quote!(#array.chunks_exact(#cols))
            };
            return Source::Rows(n, mutable);
        }
        if let Expr::MethodCall(m) = e {
            if m.method == "enumerate" && m.args.is_empty() {
                let inner = self.source(&mut m.receiver);
                if !matches!(inner, Source::Other) {
                    return Source::Enumerate(Box::new(inner));
                }
                return Source::Other;
            }
            if m.method == "zip" && m.args.len() == 1 {
                let left = self.source(&mut m.receiver);
                let right = self.source(&mut m.args[0]);
                if matches!((&left, &right), (Source::Other, Source::Other)) {
                    return Source::Other;
                }
                return Source::Zip(Box::new(left), Box::new(right));
            }
        }
        // A bare array or row (`for x in row`): its elements, as the slice's (but an array
        // owned by value yields its elements by value, the slice references).
        match self.array(e) {
            Some(Name::Array(n)) if self.candidates[n].owned_value => self.refuse(Name::Array(n)),
            Some(_) => {}
            None => self.visit_expr_mut(e),
        }
        Source::Other
    }

    /// `for (i, row) in a.rows().enumerate() { .. }` (or `outer_iter`, `axis_iter(Axis(0))`,
    /// `_mut`, `.into_iter()`) lowered as the slice code numbers rows: `for i in 0..rows {
    /// let row = &a[i * cols..(i + 1) * cols]; .. }`, so that a write at `out[i]` is the
    /// iteration's own (and no guard on the columns is needed). Whether `f` was one (then
    /// it is lowered, body and all).
    fn numbered_rows(&mut self, f: &mut syn::ExprForLoop) -> bool {
        let Expr::MethodCall(m) = &*f.expr else { return false };
        if m.method != "enumerate" || !m.args.is_empty() {
            return false;
        }
        let Some((n, mutable)) = self.rows_of(&m.receiver) else { return false };
        let Pat::Tuple(t) = &*f.pat else { return false };
        let plain = |p: &Pat| match p {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(Some(p.ident.clone())),
            Pat::Wild(_) => Some(None),
            _ => None,
        };
        let (Some(Some(index)), Some(row)) = (t.elems.first().and_then(plain), t.elems.get(1).and_then(plain)) else {
            return false;
        };
        if matches!(&t.elems[0], Pat::Ident(p) if p.mutability.is_some()) {
            return false;
        }
        let span = m.method.span();
        let (array, rows, cols) =
            (&self.candidates[n].ident, self.dim_ident(Self::rows(n)), self.dim_ident(Self::cols(n)));
        *f.expr = syn::parse_quote_spanned!(span=> 0..#rows);
        *f.pat = syn::parse_quote!(#index);
        let taken = row.is_some();
        if let Some(row) = &row {
            let borrow = if mutable { quote!(&mut) } else { quote!(&) };
            let take: syn::Stmt =
                syn::parse_quote_spanned!(span=> let #row = #borrow #array[#index * #cols..(#index + 1) * #cols];);
            f.body.stmts.insert(0, take);
        }
        self.names.push();
        self.names.bind(index.to_string(), Name::Index { lo: 0, hi: Some((Self::rows(n), 0)) });
        if let Some(row) = row {
            self.names.bind(row.to_string(), Name::Row(n, mutable));
        }
        // The body past the row's own `let`, which is lowered already.
        let rest = f.body.stmts.split_off(usize::from(taken));
        let mut body = Block { brace_token: f.body.brace_token, stmts: rest };
        self.visit_block_mut(&mut body);
        f.body.stmts.extend(body.stmts);
        self.names.pop();
        true
    }

    /// `for ((i, j), x) in a.indexed_iter() { .. }` (`indexed_iter_mut()`) lowered as the
    /// slice code writes it: `for i in 0..rows { for j in 0..cols { let x = &a[i * cols + j];
    /// .. } }` (`&mut`), so that the rows are the loops the rewrites split and take in lanes;
    /// a 1-D array's `for (i, x) in a.indexed_iter()`: `for (i, x) in a.iter().enumerate()`.
    /// In standard layout, ndarray's order (logical, row-major) is the slice's. A 2-D loop
    /// whose body `break`s or that has a label is not one (two loops for one would change
    /// what a `break` leaves). Whether `f` was one (then it is lowered, body and all).
    fn indexed(&mut self, f: &mut syn::ExprForLoop) -> bool {
        let Expr::MethodCall(m) = &*f.expr else { return false };
        if !m.args.is_empty() || m.turbofish.is_some() {
            return false;
        }
        let mutable = match m.method.to_string().as_str() {
            "indexed_iter" => false,
            "indexed_iter_mut" => true,
            _ => return false,
        };
        let Some(Name::Array(n)) = self.array(&m.receiver) else { return false };
        let c = &self.candidates[n];
        if mutable && !c.mutable {
            return false;
        }
        let two_d = c.two_d;
        let Pat::Tuple(t) = &*f.pat else { return false };
        if t.elems.len() != 2 {
            return false;
        }
        let (at, elem) = (&t.elems[0], &t.elems[1]);
        // An index: a name that is not `mut` or `ref`, or `_` (then a hidden name).
        let index = |p: &Pat, hidden: &str| match p {
            Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
                Some(p.ident.clone())
            }
            Pat::Wild(_) => Some(format_ident!("{}", hidden, span = Span::call_site())),
            _ => None,
        };
        let indices = match (two_d, at) {
            (true, Pat::Tuple(ij)) if ij.elems.len() == 2 => {
                match (index(&ij.elems[0], "__adaptive_i"), index(&ij.elems[1], "__adaptive_j")) {
                    (Some(i), Some(j)) if i != j => vec![i, j],
                    _ => return false,
                }
            }
            (false, p) => match index(p, "__adaptive_i") {
                Some(i) => vec![i],
                None => return false,
            },
            _ => return false,
        };
        if two_d && (f.label.is_some() || breaks(&f.body)) {
            return false;
        }
        let elem = elem.clone();
        let span = m.method.span();
        let array = c.ident.clone();
        let borrow = if mutable { quote!(&mut) } else { quote!(&) };
        // The body, lowered with the indices and the element bound (the element's `let` and
        // the loops around it are written already lowered, below).
        self.names.push();
        for (k, i) in indices.iter().enumerate() {
            let hi = if two_d { Some((if k == 0 { Self::rows(n) } else { Self::cols(n) }, 0)) } else { None };
            self.names.bind(i.to_string(), Name::Index { lo: 0, hi });
        }
        self.bind_other(&elem);
        let mut body = f.body.clone();
        self.visit_block_mut(&mut body);
        self.names.pop();
        let stmts = &body.stmts;
        let lowered: syn::ExprForLoop = if two_d {
            let (i, j) = (&indices[0], &indices[1]);
            let (rows, cols) = (self.dim_ident(Self::rows(n)), self.dim_ident(Self::cols(n)));
            syn::parse_quote_spanned!(span=>
                for #i in 0..#rows {
                    for #j in 0..#cols {
                        let #elem = #borrow #array[#i * #cols + #j];
                        #(#stmts)*
                    }
                }
            )
        } else {
            // `iter().enumerate()`: what the slice code writes (a range over `0..v.len()` that
            // only indexes `v` is clippy's `needless_range_loop`, in the user's span).
            let i = &indices[0];
            let label = &f.label;
            let iter = if mutable { quote!(iter_mut) } else { quote!(iter) };
            syn::parse_quote_spanned!(span=>
                #label for (#i, #elem) in #array.#iter().enumerate() {
                    #(#stmts)*
                }
            )
        };
        *f = lowered;
        true
    }

    /// Lowers `e` in place when it is a lock-step loop (`Zip::from(..)..for_each(..)`,
    /// `azip!(..)`) the lowering takes (see `zip.rs`); whether it was.
    fn lock_step(&mut self, e: &mut Expr) -> bool {
        let call = match &*e {
            Expr::Macro(m) => zip::azip(&m.mac),
            other => zip::zip_call(other),
        };
        match call.and_then(|z| self.zip_loop(z)) {
            Some(mut f) => {
                self.visit_expr_mut(&mut f);
                *e = f;
                true
            }
            None => false,
        }
    }

    /// Binds the names `pat` binds from a source of shape `source`: rows as rows (their
    /// `mut` dropped: a slice needs none), everything else as other names.
    fn bind_source(&mut self, pat: &mut Pat, source: &Source) {
        match (source, &mut *pat) {
            (Source::Other, _) => self.bind_other(pat),
            (Source::Rows(n, writable), Pat::Ident(p)) if p.by_ref.is_none() && p.subpat.is_none() => {
                p.mutability = None;
                self.names.bind(p.ident.to_string(), Name::Row(*n, *writable));
            }
            (Source::Rows(..), Pat::Wild(_)) => {}
            (Source::Enumerate(inner), Pat::Tuple(t)) if t.elems.len() == 2 => {
                self.bind_other(&t.elems[0]);
                self.bind_source(&mut t.elems[1], inner);
            }
            (Source::Zip(left, right), Pat::Tuple(t)) if t.elems.len() == 2 => {
                self.bind_source(&mut t.elems[0], left);
                self.bind_source(&mut t.elems[1], right);
            }
            (other, _) => {
                // A row taken apart some other way: its array stays as written.
                other.rows().into_iter().for_each(|n| {
                    self.refused.insert(n);
                });
                self.bind_other(pat);
            }
        }
    }

    fn bind_other(&mut self, pat: &Pat) {
        for (name, _) in pat_bindings(pat) {
            self.names.bind(name, Name::Other);
        }
    }

    /// What a `let` binds: a dimension's name (`let m = a.ncols()`, `let (n, m) = a.dim()`)
    /// or other names; whether a dimension's.
    fn bind_let(&mut self, pat: &Pat, init: Option<&Expr>) -> bool {
        let plain = |p: &Pat| match p {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() && p.mutability.is_none() => {
                Some(p.ident.to_string())
            }
            Pat::Type(t) => match &*t.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() && p.mutability.is_none() => {
                    Some(p.ident.to_string())
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(init) = init {
            if let (Some(name), Some((d, 0))) = (plain(pat), self.dim(init)) {
                self.names.bind(name, Name::Dim(d));
                return true;
            }
            if let (Pat::Tuple(t), Expr::MethodCall(m)) = (pat, init) {
                if let (2, "dim", true, Some(Name::Array(n))) =
                    (t.elems.len(), m.method.to_string().as_str(), m.args.is_empty(), self.array(&m.receiver))
                {
                    if let (true, Some(rows), Some(cols)) =
                        (self.candidates[n].two_d, plain(&t.elems[0]), plain(&t.elems[1]))
                    {
                        self.names.bind(rows, Name::Dim(Self::rows(n)));
                        self.names.bind(cols, Name::Dim(Self::cols(n)));
                        return true;
                    }
                }
            }
        }
        self.bind_other(pat);
        false
    }

    /// The lowered signature and body: each dimension renamed to its class's, the joined
    /// classes to check, the arrays read as slices.
    fn finish(self, sig: &Signature, mut block: Block, candidates: &[Candidate]) -> Lowered {
        let mut rename = Rename(Vec::new());
        for d in 0..self.parent.len() {
            let root = self.root(d);
            if root != d {
                rename.0.push((self.dim_ident(d).to_string(), self.dim_ident(root)));
            }
        }
        rename.visit_block_mut(&mut block);
        let mut sig = sig.clone();
        for input in &mut sig.inputs {
            let FnArg::Typed(pt) = input else { continue };
            let Pat::Ident(p) = &*pt.pat else { continue };
            let Some(c) = candidates.iter().find(|c| c.ident == p.ident) else { continue };
            let (ident, elem) = (&c.ident, &c.elem);
            *pt.pat = syn::parse_quote!(#ident);
            *pt.ty = if c.mutable { syn::parse_quote!(&mut [#elem]) } else { syn::parse_quote!(&[#elem]) };
        }
        // The dimensions of a 2-D array, and of a 1-D one (one row) joined with another's (a
        // `Zip` of 1-D arrays): the guard binds them.
        let joined = |d: usize| (0..self.parent.len()).any(|e| e != d && self.root(e) == self.root(d));
        let bound: Vec<bool> = (0..candidates.len())
            .map(|n| candidates[n].two_d || joined(Self::rows(n)) || joined(Self::cols(n)))
            .collect();
        let mut roots = BTreeSet::new();
        for n in (0..candidates.len()).filter(|&n| bound[n]) {
            roots.insert(self.root(Self::rows(n)));
            roots.insert(self.root(Self::cols(n)));
        }
        for d in roots {
            let ident = self.dim_ident(d);
            sig.inputs.push(syn::parse_quote!(#ident: usize));
        }
        let params = candidates
            .iter()
            .enumerate()
            .map(|(n, c)| SliceParam {
                ident: c.ident.clone(),
                mutable: c.mutable,
                dims: bound[n].then(|| (self.dim_ident(Self::rows(n)), self.dim_ident(Self::cols(n)))),
            })
            .collect();
        let equal = (0..self.parent.len())
            .filter(|&d| self.root(d) != d)
            .map(|d| (self.dim_ident(d), self.dim_ident(self.root(d))))
            .collect();
        let nonzero = self.by_rows.iter().map(|&n| self.dim_ident(self.root(Self::cols(n)))).collect();
        let mut at_least: Vec<(Ident, u64)> =
            self.at_least.iter().map(|&(d, c)| (self.dim_ident(self.root(d)), c)).collect();
        at_least.sort_by_key(|(d, c)| (d.to_string(), *c));
        at_least.dedup();
        Lowered { sig, block, params, equal, nonzero, at_least }
    }
}

/// What a `for`'s source walks, as far as its pattern's rows go.
enum Source {
    /// Not rows.
    Other,
    /// The rows of candidate `n`, and whether writably.
    Rows(usize, bool),
    Enumerate(Box<Source>),
    Zip(Box<Source>, Box<Source>),
}

impl Source {
    /// The candidates whose rows it walks.
    fn rows(&self) -> Vec<usize> {
        match self {
            Source::Other => Vec::new(),
            Source::Rows(n, _) => vec![*n],
            Source::Enumerate(inner) => inner.rows(),
            Source::Zip(a, b) => a.rows().into_iter().chain(b.rows()).collect(),
        }
    }
}

impl VisitMut for Walk<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if matches!(e, Expr::MethodCall(_) | Expr::Macro(_)) && self.lock_step(e) {
            return;
        }
        let lowered = match e {
            Expr::Index(ix) => match self.array(&ix.expr) {
                Some(name) => {
                    let lowered = self.index(name, ix);
                    if lowered.is_none() {
                        self.refuse(name);
                    }
                    lowered
                }
                None => None,
            },
            Expr::MethodCall(m) if m.method == "saturating_sub" && m.args.len() == 1 => {
                // `d.saturating_sub(c)` of a dimension: `d - c`, guarded by `d >= c`.
                match (self.dim(&m.receiver), literal(&m.args[0])) {
                    (Some((d, 0)), Some(c)) => {
                        self.at_least.push((d, c));
                        let (d, span) = (self.dim_ident(d), m.method.span());
                        let c = &m.args[0];
                        // In an invisible group: its precedence kept, and no `unused_parens` where
                        // a rewrite binds it to a name.
                        Some(Expr::Group(syn::ExprGroup {
                            attrs: Vec::new(),
                            group_token: syn::token::Group(span),
                            expr: Box::new(syn::parse_quote_spanned!(span=> #d - #c)),
                        }))
                    }
                    _ => None,
                }
            }
            Expr::MethodCall(m) => match self.array(&m.receiver) {
                Some(name) => {
                    let lowered = self.method(name, m);
                    if lowered.is_none() {
                        self.refuse(name);
                    }
                    lowered
                }
                None => None,
            },
            Expr::Path(_) => match plain_ident(e).and_then(|i| self.names.lookup(&i.to_string()).copied()) {
                // A name bound to a dimension: the dimension's own, which the model sees as one.
                Some(Name::Dim(d)) => Some(ident_expr(self.dim_ident(d))),
                // Any other use of an array's name: passed on, borrowed, moved.
                Some(name) => {
                    self.refuse(name);
                    None
                }
                None => None,
            },
            Expr::ForLoop(f) => {
                if self.numbered_rows(f) || self.indexed(f) {
                    return;
                }
                let range = match (&*f.expr, &*f.pat) {
                    (Expr::Range(r), Pat::Ident(p))
                        if matches!(r.limits, syn::RangeLimits::HalfOpen(_)) && p.mutability.is_none() =>
                    {
                        let lo = r.start.as_deref().map_or(Some(0), literal).unwrap_or(0);
                        let hi = r.end.as_deref().and_then(|hi| self.dim(hi));
                        Some((p.ident.to_string(), Name::Index { lo, hi }))
                    }
                    _ => None,
                };
                // The source as written, then lowered (its rows walks bind rows).
                let source = self.source(&mut f.expr);
                self.names.push();
                match range {
                    Some((name, index)) => self.names.bind(name, index),
                    None => self.bind_source(&mut f.pat, &source),
                }
                self.visit_block_mut(&mut f.body);
                self.names.pop();
                return;
            }
            Expr::Closure(c) => {
                self.names.push();
                for input in &c.inputs {
                    self.bind_other(input);
                }
                self.visit_expr_mut(&mut c.body);
                self.names.pop();
                return;
            }
            Expr::If(i) if matches!(&*i.cond, Expr::Let(_)) => {
                // `if let`'s names are in scope in its `then` block only.
                self.names.push();
                self.visit_expr_mut(&mut i.cond);
                self.visit_block_mut(&mut i.then_branch);
                self.names.pop();
                if let Some((_, e)) = &mut i.else_branch {
                    self.visit_expr_mut(e);
                }
                return;
            }
            Expr::While(w) => {
                self.names.push();
                self.visit_expr_mut(&mut w.cond);
                self.visit_block_mut(&mut w.body);
                self.names.pop();
                return;
            }
            Expr::Let(l) => {
                self.visit_expr_mut(&mut l.expr);
                self.bind_other(&l.pat);
                return;
            }
            _ => None,
        };
        match lowered {
            Some(new) => *e = new,
            None => visit_mut::visit_expr_mut(self, e),
        }
    }

    fn visit_block_mut(&mut self, b: &mut Block) {
        self.names.push();
        visit_mut::visit_block_mut(self, b);
        self.names.pop();
    }

    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        let original = l.init.as_ref().map(|i| (*i.expr).clone());
        if let Some(init) = &mut l.init {
            self.visit_expr_mut(&mut init.expr);
            if let Some((_, diverge)) = &mut init.diverge {
                self.visit_expr_mut(diverge);
            }
        }
        if self.bind_let(&l.pat, original.as_ref()) {
            // Its uses read the dimension itself (see `visit_expr_mut`), so it may be unused.
            l.attrs.push(syn::parse_quote!(#[allow(unused_variables)]));
        }
    }

    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        self.names.push();
        self.bind_other(&arm.pat);
        if let Some((_, guard)) = &mut arm.guard {
            self.visit_expr_mut(guard);
        }
        self.visit_expr_mut(&mut arm.body);
        self.names.pop();
    }

    fn visit_stmt_mut(&mut self, s: &mut syn::Stmt) {
        if let syn::Stmt::Macro(m) = s {
            if let Some(mut f) = zip::azip(&m.mac).and_then(|z| self.zip_loop(z)) {
                self.visit_expr_mut(&mut f);
                *s = syn::Stmt::Expr(f, None);
                return;
            }
        }
        visit_mut::visit_stmt_mut(self, s);
        // A lock-step call lowered to a `for` loop keeps no `;` after it.
        if let syn::Stmt::Expr(Expr::ForLoop(_), semi @ Some(_)) = s {
            *semi = None;
        }
    }

    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        // A macro's tokens are not lowered: an array named in them stays as written.
        for ident in idents(m.tokens.clone()) {
            if let Some(name) = self.names.lookup(&ident.to_string()).copied() {
                self.refuse(name);
            }
        }
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {
        // A nested item sees none of the body's names.
    }
}

/// Renames each dimension to its class's.
struct Rename(Vec<(String, Ident)>);

impl VisitMut for Rename {
    fn visit_ident_mut(&mut self, i: &mut Ident) {
        if let Some((_, to)) = self.0.iter().find(|(from, _)| i == from) {
            *i = to.clone();
        }
    }
}

/// Whether `body` holds a `break` (in a nested loop or closure too: enough to refuse).
fn breaks(body: &Block) -> bool {
    super::holds_expr(body, |e| matches!(e, Expr::Break(_)))
}

/// A `usize` literal's value.
fn literal(e: &Expr) -> Option<u64> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        Expr::Paren(p) => literal(&p.expr),
        _ => None,
    }
}

/// `e` as the left operand of `*`: parenthesised unless it is a name, a literal, a call
/// or a method call.
fn operand(e: &Expr) -> TokenStream {
    match e {
        Expr::Path(_) | Expr::Lit(_) | Expr::Call(_) | Expr::MethodCall(_) | Expr::Paren(_) | Expr::Field(_) => {
            e.to_token_stream()
        }
        _ => quote!((#e)),
    }
}

fn ident_expr(i: Ident) -> Expr {
    syn::parse_quote!(#i)
}

/// `Axis(0)` (by its last segment).
fn is_axis_0(e: &Expr) -> bool {
    match e {
        Expr::Call(c) => {
            matches!(&*c.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Axis"))
                && c.args.len() == 1
                && literal(&c.args[0]) == Some(0)
        }
        _ => false,
    }
}

/// Whether `ty` is a primitive number, whose `iter().sum()` is its `sum()`.
fn primitive(ty: &Type) -> bool {
    const NUMBERS: &[&str] =
        &["f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize"];
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some_and(|i| NUMBERS.iter().any(|n| i == n)))
}

/// The lock-step loops of `zip.rs`, lowered with what this walk knows of the names.
impl Walk<'_> {
    /// The candidate a producer reads, and whether it writes it: `&mut a`, `a.view_mut()`,
    /// `&a`, `a.view()`, or `a` itself (a view by value, or an array behind a reference).
    fn producer(&self, e: &Expr) -> Option<(usize, bool)> {
        let (array, writes) = match e {
            Expr::Reference(r) => (plain_ident(&r.expr)?, Some(r.mutability.is_some())),
            Expr::MethodCall(m) if m.args.is_empty() && m.method == "view" => (plain_ident(&m.receiver)?, Some(false)),
            Expr::MethodCall(m) if m.args.is_empty() && m.method == "view_mut" => {
                (plain_ident(&m.receiver)?, Some(true))
            }
            _ => (plain_ident(e)?, None),
        };
        let Some(Name::Array(n)) = self.names.lookup(&array.to_string()).copied() else { return None };
        let c = &self.candidates[n];
        match writes {
            Some(true) => c.mutable.then_some((n, true)),
            Some(false) => Some((n, false)),
            // By itself: a view or a reference yields what it can write, an owned array itself.
            None if c.owned_value => None,
            None => match (c.writable, c.mutable) {
                (false, _) => Some((n, false)),
                (true, true) => Some((n, true)),
                (true, false) => None,
            },
        }
    }

    /// The `for` loop `z` is, with its producers' dimensions joined; `None` (and the arrays
    /// it names refused) when it is not one the lowering takes.
    fn zip_loop(&mut self, z: zip::ZipCall) -> Option<Expr> {
        let producers: Option<Vec<(usize, bool)>> = z.producers.iter().map(|p| self.producer(p)).collect();
        let producers = match producers {
            Some(p) if !p.is_empty() && !zip::returns(&z.body) => p,
            _ => {
                for p in &z.producers {
                    self.refuse_named_in(p);
                }
                return None;
            }
        };
        let first = producers[0].0;
        if producers.iter().any(|&(n, _)| self.candidates[n].two_d != self.candidates[first].two_d) {
            return None;
        }
        for &(n, _) in &producers[1..] {
            self.join(Self::rows(first), Self::rows(n));
            self.join(Self::cols(first), Self::cols(n));
        }
        let span = z.span;
        let mut sources = producers.iter().map(|&(n, writes)| {
            let array = &self.candidates[n].ident;
            if writes {
                quote_spanned!(span=> #array.iter_mut())
            } else {
                quote_spanned!(span=> #array.iter())
            }
        });
        let mut pats = z.pats.iter();
        let mut source: TokenStream = sources.next()?;
        let first_pat = pats.next()?;
        let mut pat = quote_spanned!(span=> #first_pat);
        for (s, p) in sources.zip(pats) {
            source = quote_spanned!(span=> #source.zip(#s));
            pat = quote_spanned!(span=> (#pat, #p));
        }
        let body = match z.body {
            Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => quote_spanned!(span=> #b),
            other => quote_spanned!(span=> { #other; }),
        };
        Some(syn::parse_quote_spanned!(span=> for #pat in #source #body))
    }

    /// Refuses every candidate `e` names.
    fn refuse_named_in(&mut self, e: &Expr) {
        struct Names(Vec<String>);
        impl<'ast> Visit<'ast> for Names {
            fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
                self.0.push(i.to_string());
            }
        }
        let mut names = Names(Vec::new());
        names.visit_expr(e);
        for name in names.0 {
            if let Some(n) = self.names.lookup(&name).copied() {
                self.refuse(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn lowered(f: TokenStream) -> Option<(String, String, Vec<String>)> {
        let f: syn::ItemFn = syn::parse2(f).unwrap();
        let l = lower(&f.sig, &f.block)?;
        let sig = l.sig.inputs.to_token_stream().to_string();
        let checks = l
            .equal
            .iter()
            .map(|(a, b)| format!("{a} == {b}"))
            .chain(l.nonzero.iter().map(|c| format!("{c} != 0")))
            .collect();
        Some((sig, l.block.to_token_stream().to_string(), checks))
    }

    #[test]
    fn index_loops_become_row_major_indices_with_the_columns_joined() {
        let (sig, body, checks) = lowered(quote!(
            fn k(a: ArrayView2<'_, f32>, s: f32, mut out: ArrayViewMut2<'_, f32>) {
                for i in 0..a.nrows() {
                    for j in 0..a.ncols() {
                        out[[i, j]] = a[[i, j]] * s;
                    }
                }
            }
        ))
        .unwrap();
        assert_eq!(
            sig,
            "a : & [f32] , s : f32 , out : & mut [f32] , __adaptive_rows_a : usize , __adaptive_cols_a : usize"
        );
        assert!(body.contains("out [i * __adaptive_cols_a + j] = a [i * __adaptive_cols_a + j] * s"), "{body}");
        assert!(body.contains("for i in 0 .. __adaptive_rows_a"), "{body}");
        assert_eq!(checks, ["__adaptive_rows_out == __adaptive_rows_a", "__adaptive_cols_out == __adaptive_cols_a"]);
    }

    #[test]
    fn a_stencil_s_neighbours_are_proved_in_the_row_and_an_unproved_column_is_checked() {
        let (_, body, _) = lowered(quote!(
            fn k(u: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>) {
                let (h, w) = u.dim();
                for i in 1..h.saturating_sub(1) {
                    for j in 1..w.saturating_sub(1) {
                        out[[i, j]] = u[[i - 1, j]] + u[[i, j - 1]] + u[[i, j + 1]] + u[[i, j + 2]];
                    }
                }
            }
        ))
        .unwrap();
        assert!(body.contains("let (h , w) = (__adaptive_rows_u , __adaptive_cols_u)"), "{body}");
        assert!(body.contains("u [(i - 1) * __adaptive_cols_u + j]"), "{body}");
        assert!(body.contains("u [i * __adaptive_cols_u + j - 1]"), "{body}");
        assert!(body.contains("u [i * __adaptive_cols_u + j + 1]"), "{body}");
        assert!(
            body.contains("layout :: index (__adaptive_rows_u , __adaptive_cols_u , i , j + 2)"),
            "j + 2 may pass the row: checked\n{body}"
        );
    }

    #[test]
    fn indexed_iter_becomes_the_loops_over_rows_and_columns() {
        let (_, body, _) = lowered(quote!(
            fn k(a: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>, v: ArrayView1<'_, f32>) -> f32 {
                let mut s = 0.0f32;
                for ((i, j), x) in a.indexed_iter() {
                    s += (i + j) as f32 * x;
                }
                for ((_, j), o) in out.indexed_iter_mut() {
                    *o = a[[0, j]];
                }
                'l: for (k, &y) in v.indexed_iter() {
                    if y > 1.0 {
                        break 'l;
                    }
                    s += k as f32;
                }
                s
            }
        ))
        .unwrap();
        let squash = |s: &str| s.split_whitespace().collect::<String>();
        let body = squash(&body);
        let want = [
            "for i in 0 .. __adaptive_rows_a { for j in 0 .. __adaptive_cols_a { let x = & a [i * __adaptive_cols_a + j] ;",
            "for __adaptive_i in 0 .. __adaptive_rows_out { for j in 0 .. __adaptive_cols_a { let o = & mut out [__adaptive_i * __adaptive_cols_a + j] ; * o = a [0 * __adaptive_cols_a + j] ;",
            "'l : for (k , & y) in v . iter () . enumerate () {",
        ];
        for w in want {
            assert!(body.contains(&squash(w)), "{w}\n{body}");
        }
    }

    #[test]
    fn indexed_iter_of_a_2_d_array_whose_body_breaks_stays_as_written() {
        // Two loops for one would change what the `break` leaves.
        let lowered = lowered(quote!(
            fn k(a: ArrayView2<'_, f32>) -> f32 {
                let mut s = 0.0f32;
                for ((i, _), x) in a.indexed_iter() {
                    if i > 2 {
                        break;
                    }
                    s += x;
                }
                s
            }
        ));
        assert!(lowered.is_none());
    }

    #[test]
    fn rows_become_chunks_and_each_row_a_slice() {
        let (_, body, checks) = lowered(quote!(
            fn k(x: ArrayView2<'_, f32>, g: ArrayView1<'_, f32>, mut out: ArrayViewMut2<'_, f32>) {
                for (row, mut o) in x.rows().into_iter().zip(out.rows_mut()) {
                    let s = row.sum();
                    for j in 0..row.len() {
                        o[j] = row[j] * g[j] / s;
                    }
                }
            }
        ))
        .unwrap();
        assert!(body.contains("for (row , o) in x . chunks_exact (__adaptive_cols_x) . zip (out . chunks_exact_mut (__adaptive_cols_out))"), "{body}");
        assert!(body.contains("row . iter () . sum :: < f32 > ()"), "{body}");
        assert_eq!(checks, ["__adaptive_cols_x != 0", "__adaptive_cols_out != 0"]);
    }

    #[test]
    fn an_array_used_otherwise_stays_as_written_and_the_others_are_lowered() {
        let (sig, body, _) = lowered(quote!(
            fn k(a: ArrayView2<'_, f32>, b: &Array2<f32>) -> f32 {
                let t = a.t();
                let mut s = 0.0f32;
                for x in b.iter() {
                    s += *x;
                }
                s + t[[0, 0]] + a.sum()
            }
        ))
        .unwrap();
        assert!(sig.starts_with("a : ArrayView2 < '_ , f32 > , b : & [f32]"), "{sig}");
        assert!(body.contains("a . sum ()"), "{body}");
        for not in [
            quote!(
                fn k(a: ArrayView2<'_, f32>) {
                    helper(&a);
                }
            ),
            quote!(
                fn k(a: ArrayView2<'_, f32>) {
                    println!("{}", a[[0, 0]]);
                }
            ),
            quote!(
                fn k(a: ArrayViewD<'_, f32>) -> f32 {
                    a.sum()
                }
            ),
            quote!(
                fn k(a: ArrayView2<'_, f32>) {
                    for r in a.rows() {
                        r.dot(&r);
                    }
                }
            ),
            quote!(
                fn k(a: ArrayView2<'_, f32>) {
                    for pair in a.rows().into_iter().enumerate() {}
                }
            ),
        ] {
            assert!(lowered(not.clone()).is_none(), "{not}");
        }
    }

    #[test]
    fn shadowed_names_are_not_arrays() {
        let (_, body, _) = lowered(quote!(
            fn k(a: ArrayView1<'_, f32>) -> f32 {
                let s = a.sum();
                let a = [1.0f32, 2.0];
                s + a.iter().sum::<f32>()
            }
        ))
        .unwrap();
        assert!(body.contains("let s = a . iter () . sum :: < f32 > ()"), "{body}");
    }
}
