//! The index-range facts: which index expressions stay in the loop index's own row
//! ([`row_range`], [`row_index`]), and which move one element per step ([`unit_base`],
//! [`moves_with`]).
//!
//! The proof that an index into a target stays in the loop index's own row:
//! `out[r * w + OFFSET]` writes only row `r` when `0 ≤ OFFSET < w`, which is
//! what a stencil's border writes need (`out[r * w]`, `out[r * w + w - 1]`,
//! `out[r * w + c]` with `c` from an inner `for c in 1..w - 1`).
//!
//! The offset is bounded by interval arithmetic over bounds of the form
//! `c + a·w` (`w` the row width, `c` and `a` integers), from its terms:
//!
//! * an integer literal `k`: exactly `k`;
//! * the width itself, as written in the row product: exactly `w`;
//! * a variable of an inner `for j in START..END` of the body whose bounds
//!   name nothing the body binds: at least `START` (a literal, else 0), at
//!   most `END - 1`, with `END` bounded in turn (`w`, `w - 1`, `8`, …);
//! * sums and differences of those, the row product `r * w` (or `w * r`)
//!   added exactly once.
//!
//! Every condition the proof needs is a bound `c + a·w ≥ 0`: the offset at
//! least 0 and at most `w - 1`, and every difference computed on the way at
//! least 0 (an intermediate `usize` below zero would panic in the chunk,
//! whose index is `(r - lo) * w + …`, smaller than the loop's `r * w + …`,
//! where the loop as written might not). Each either holds for every width
//! (`a = 0` and `c ≥ 0`), or from a least width on (`a > 0`: `w ≥ ⌈-c / a⌉`),
//! or for no large width (`a < 0`): then the index is not the row's. The
//! least width is the proof's premise ([`RowIndex::min_width`]): a literal
//! width is checked here, an expression's at run time, where a narrower row
//! runs the loop as written (the split's and the GPU's emitters).

use syn::{BinOp, Expr};

use crate::tokens::{normalised, strip};

/// A bound `c + a·w` on an offset, `w` the row width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Affine {
    c: i128,
    a: i128,
}

impl Affine {
    const ZERO: Affine = Affine { c: 0, a: 0 };

    fn plus(self, o: Affine) -> Affine {
        Affine { c: self.c + o.c, a: self.a + o.a }
    }

    fn minus(self, o: Affine) -> Affine {
        Affine { c: self.c - o.c, a: self.a - o.a }
    }
}

/// Bounds on a `usize` value: `lo ≤ value ≤ hi` whenever the value is computed.
#[derive(Clone, Copy, Debug)]
struct Interval {
    lo: Affine,
    hi: Affine,
}

impl Interval {
    fn exactly(v: Affine) -> Interval {
        Interval { lo: v, hi: v }
    }
}

/// The bounds of an inner loop's variable, `for j in START..END`, as written.
#[derive(Clone, Debug)]
pub(crate) struct Inner {
    /// `START`, when an integer literal: the least value; else 0.
    pub start: u64,
    pub end: Expr,
}

/// An index proved to stay in the index's own row.
#[derive(Clone, Debug)]
pub(crate) struct RowIndex {
    /// The row width, as written in the row product.
    pub width: Expr,
    /// The least width for which the proof holds (0: every width).
    pub min_width: u64,
}

/// `index` as `i * w + OFFSET` with `0 ≤ OFFSET < w` for every width from
/// [`RowIndex::min_width`] on, or `None`. `is_i`: whether an expression is the
/// loop's index; `range_of`: the bounds of an inner loop's variable, by name,
/// as the access sees it.
pub(crate) fn row_index(
    index: &Expr,
    is_i: &dyn Fn(&Expr) -> bool,
    range_of: &dyn Fn(&str) -> Option<Inner>,
) -> Option<RowIndex> {
    let width = row_width(index, is_i)?;
    let mut eval = Eval { is_i, range_of, key: normalised(&width), conditions: Vec::new(), rows: 0 };
    let offset = eval.bounds(index, 0)?;
    if eval.rows != 1 {
        return None;
    }
    // 0 ≤ offset ≤ w - 1.
    let below_width = Affine { c: -1, a: 1 }.minus(offset.hi);
    eval.conditions.extend([offset.lo, below_width]);
    let mut min_width = 0u64;
    for Affine { c, a } in eval.conditions {
        let least = match (a, c) {
            (_, c) if c >= 0 && a >= 0 => 0,
            (a, c) if a > 0 => (-c + a - 1) / a,
            _ => return None,
        };
        min_width = min_width.max(u64::try_from(least).ok()?);
    }
    Some(RowIndex { width, min_width })
}

/// The width `w` of the one row product `i * w` (or `w * i`) among the terms `index`
/// adds, or `None` when there is none, more than one, or one that is subtracted.
fn row_width(index: &Expr, is_i: &dyn Fn(&Expr) -> bool) -> Option<Expr> {
    fn walk(e: &Expr, is_i: &dyn Fn(&Expr) -> bool, positive: bool, out: &mut Vec<(Expr, bool)>) {
        match e {
            Expr::Paren(p) => walk(&p.expr, is_i, positive, out),
            Expr::Group(g) => walk(&g.expr, is_i, positive, out),
            Expr::Binary(b) if matches!(b.op, BinOp::Add(_)) => {
                walk(&b.left, is_i, positive, out);
                walk(&b.right, is_i, positive, out);
            }
            Expr::Binary(b) if matches!(b.op, BinOp::Sub(_)) => {
                walk(&b.left, is_i, positive, out);
                walk(&b.right, is_i, false, out);
            }
            e => {
                if let Some(w) = product(e, is_i) {
                    out.push((w, positive));
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(index, is_i, true, &mut found);
    match found.as_slice() {
        [(w, true)] => Some(w.clone()),
        _ => None,
    }
}

/// The width `w` of a row's range: `i * w..(i + 1) * w`, also with `w * i`, `w * (i + 1)`,
/// `(1 + i) * w`, `i * w + w` or `w + i * w`, where `is_i` says which expression is the
/// index: the one shape of "the index's own row" of a slice (a split target's, the row a
/// SIMD rewrite reads items of in lanes).
pub(crate) fn row_range(range: &syn::ExprRange, is_i: &dyn Fn(&Expr) -> bool) -> Option<Expr> {
    if !matches!(range.limits, syn::RangeLimits::HalfOpen(_)) {
        return None;
    }
    let (start, end) = (range.start.as_deref()?, range.end.as_deref()?);
    let w = product(start, is_i)?;
    let w_key = normalised(&w);
    let one = |e: &Expr| matches!(strip(e), Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) if n.base10_parse::<u64>().ok() == Some(1));
    let next = |e: &Expr| match strip(e) {
        Expr::Binary(b) if matches!(b.op, BinOp::Add(_)) => {
            let (l, r) = (strip(&b.left), strip(&b.right));
            (is_i(l) && one(r)) || (one(l) && is_i(r))
        }
        _ => false,
    };
    let ends_row = match strip(end) {
        // `(i + 1) * w` or `w * (i + 1)`
        Expr::Binary(b) if matches!(b.op, BinOp::Mul(_)) => {
            (next(&b.left) && normalised(&b.right) == w_key) || (next(&b.right) && normalised(&b.left) == w_key)
        }
        // `i * w + w` or `w + i * w`
        Expr::Binary(b) if matches!(b.op, BinOp::Add(_)) => {
            (product(&b.left, is_i).is_some_and(|x| normalised(&x) == w_key) && normalised(&b.right) == w_key)
                || (product(&b.right, is_i).is_some_and(|x| normalised(&x) == w_key) && normalised(&b.left) == w_key)
        }
        _ => false,
    };
    ends_row.then_some(w)
}

/// An index one element past the previous one at each step of the loop: `i`, `b + i` or
/// `i + b`, with `b` a term `invariant` accepts: `Some(None)` for `i`, `Some(Some(b))` for the others.
pub(crate) fn unit_base<'e>(
    index: &'e Expr,
    is_i: &dyn Fn(&Expr) -> bool,
    invariant: &dyn Fn(&Expr) -> bool,
) -> Option<Option<&'e Expr>> {
    match index {
        i if is_i(i) => Some(None),
        Expr::Binary(b) if matches!(b.op, BinOp::Add(_)) => {
            if is_i(&b.right) && invariant(&b.left) {
                Some(Some(&*b.left))
            } else if is_i(&b.left) && invariant(&b.right) {
                Some(Some(&*b.right))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Whether an index expression moves with the loop index (`i` in it once, added: `i`, `i + c`,
/// `i - c`, `b + i`, `(i - lo)`, `row * w + i`): `Some(true)` for a part that holds the index,
/// `Some(false)` for one that does not, `None` where it is not a sum and difference of the index
/// and of parts `leaf` accepts (`leaf` answers for every part that is not a sum, a difference or
/// a product: `Some(true)` for the index itself).
pub(crate) fn moves_with(e: &Expr, leaf: &dyn Fn(&Expr) -> Option<bool>) -> Option<bool> {
    match e {
        Expr::Paren(p) => moves_with(&p.expr, leaf),
        Expr::Group(g) => moves_with(&g.expr, leaf),
        Expr::Binary(b) if b.attrs.is_empty() => {
            let (left, right) = (moves_with(&b.left, leaf)?, moves_with(&b.right, leaf)?);
            match b.op {
                BinOp::Add(_) if !(left && right) => Some(left || right),
                BinOp::Sub(_) if !right => Some(left),
                BinOp::Mul(_) if !left && !right => Some(false),
                _ => None,
            }
        }
        e => leaf(e),
    }
}

/// `w` of `i * w` or `w * i`, where `is_i` says which expression is the index.
pub(crate) fn product(e: &Expr, is_i: &dyn Fn(&Expr) -> bool) -> Option<Expr> {
    let Expr::Binary(b) = strip(e) else { return None };
    if !matches!(b.op, BinOp::Mul(_)) {
        return None;
    }
    match (is_i(strip(&b.left)), is_i(strip(&b.right))) {
        (true, false) => Some(strip(&b.right).clone()),
        (false, true) => Some(strip(&b.left).clone()),
        _ => None,
    }
}

/// Bounds of index expressions, for one row width.
struct Eval<'a> {
    is_i: &'a dyn Fn(&Expr) -> bool,
    range_of: &'a dyn Fn(&str) -> Option<Inner>,
    /// The width's tokens, normalised.
    key: String,
    /// Bounds that must be at least 0.
    conditions: Vec<Affine>,
    /// Row products met.
    rows: usize,
}

impl Eval<'_> {
    /// Bounds of `e` less its row product (counted in `rows`); `depth`: inner ranges followed.
    fn bounds(&mut self, e: &Expr, depth: usize) -> Option<Interval> {
        let e = strip(e);
        if normalised(e) == self.key {
            return Some(Interval::exactly(Affine { c: 0, a: 1 }));
        }
        match e {
            Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) => {
                let n = i128::from(n.base10_parse::<u64>().ok()?);
                Some(Interval::exactly(Affine { c: n, a: 0 }))
            }
            Expr::Binary(b) if matches!(b.op, BinOp::Mul(_)) && product(e, self.is_i).is_some() => {
                let w = product(e, self.is_i)?;
                if normalised(&w) != self.key {
                    return None;
                }
                self.rows += 1;
                Some(Interval::exactly(Affine::ZERO))
            }
            Expr::Binary(b) if matches!(b.op, BinOp::Add(_)) => {
                let (l, r) = (self.bounds(&b.left, depth)?, self.bounds(&b.right, depth)?);
                Some(Interval { lo: l.lo.plus(r.lo), hi: l.hi.plus(r.hi) })
            }
            Expr::Binary(b) if matches!(b.op, BinOp::Sub(_)) => {
                let l = self.bounds(&b.left, depth)?;
                let rows = self.rows;
                let r = self.bounds(&b.right, depth)?;
                if self.rows != rows {
                    // A row product subtracted.
                    return None;
                }
                let difference = Interval { lo: l.lo.minus(r.hi), hi: l.hi.minus(r.lo) };
                self.conditions.push(difference.lo);
                Some(difference)
            }
            Expr::Path(p) if depth < 4 => {
                let name = p.path.get_ident()?.to_string();
                let inner = (self.range_of)(&name)?;
                let start = i128::from(inner.start);
                let end = self.bounds(&inner.end, depth + 1)?;
                Some(Interval { lo: Affine { c: start, a: 0 }, hi: end.hi.minus(Affine { c: 1, a: 0 }) })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;
    use syn::parse_quote;

    /// The least width for `index` in a loop over `r` with `c` from `for c in 1..w - 1`,
    /// `j` from `for j in 0..w`, `k` from `for k in 0..4`; `None`: not the row's.
    fn least(index: Expr) -> Option<u64> {
        let is_i = |e: &Expr| matches!(e, Expr::Path(p) if p.path.is_ident("r"));
        let range_of = |n: &str| match n {
            "c" => Some(Inner { start: 1, end: parse_quote!(w - 1) }),
            "j" => Some(Inner { start: 0, end: parse_quote!(w) }),
            "k" => Some(Inner { start: 0, end: parse_quote!(4) }),
            _ => None,
        };
        row_index(&index, &is_i, &range_of).map(|r| r.min_width)
    }

    #[test]
    fn border_writes_and_inner_ranges_stay_in_the_row() {
        assert_eq!(least(parse_quote!(r * w)), Some(1), "the first pixel: a row of at least one");
        assert_eq!(least(parse_quote!(w * r)), Some(1));
        assert_eq!(least(parse_quote!(r * w + w - 1)), Some(1), "the last pixel");
        assert_eq!(least(parse_quote!(r * w + (w - 1))), Some(1));
        assert_eq!(least(parse_quote!(w - 1 + r * w)), Some(1));
        assert_eq!(least(parse_quote!(r * w + w - 3)), Some(3));
        assert_eq!(least(parse_quote!(r * w + 2)), Some(3), "a literal below the width");
        // `1..w - 1`: its end is computed without wrapping from a width of one on.
        assert_eq!(least(parse_quote!(r * w + c)), Some(1), "an inner range inside 0..w");
        assert_eq!(least(parse_quote!(r * w + c - 1)), Some(1));
        assert_eq!(least(parse_quote!(r * w + c + 1)), Some(1));
        assert_eq!(least(parse_quote!(r * w + j)), Some(0));
        assert_eq!(least(parse_quote!(j + r * w)), Some(0));
        assert_eq!(least(parse_quote!(r * w + k)), Some(4));
        assert_eq!(least(parse_quote!((r * w) + (k))), Some(4));
    }

    #[test]
    fn offsets_that_may_leave_the_row_are_refused() {
        let refused: [Expr; 14] = [
            parse_quote!(r * w + w),
            parse_quote!(r * w + j + 1),
            parse_quote!(r * w + j - 1),
            parse_quote!(r * w + c + 2),
            parse_quote!(r * w - 1),
            parse_quote!(r * w + w + w - 1),
            parse_quote!(r * w + r * w),
            parse_quote!(w - r * w),
            parse_quote!(r * w + x),
            parse_quote!(r * w + v),
            parse_quote!(r * w * 2),
            parse_quote!((r + 1) * w),
            parse_quote!(r + w),
            parse_quote!(1 - w + r * w),
        ];
        for index in refused {
            let shown = index.to_token_stream().to_string();
            assert_eq!(least(index), None, "{shown}");
        }
    }
}
