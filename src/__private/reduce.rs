//! The helpers of the loops `#[adaptive_kernel]` puts in lanes in SIMD
//! variants (the macro crate's `reduce` module): for reassociated reductions,
//! lanes filled with the operator's identity and the fold of the lanes into the
//! accumulator; for them and for element-wise loops, chunked slice reads and
//! writes, and the index arithmetic that finds a chunk without overflowing.
//! Small and `#[inline(always)]`, so they compile into the `#[target_feature]`
//! clone that calls them.

use core::ops::{Add, Mul};

/// `f32` and `f64`: what an accumulator of a rewritten reduction can be.
pub trait Float: Copy + PartialOrd + Add<Output = Self> + Mul<Output = Self> {
    /// The identity of `+` in IEEE arithmetic: `-0.0 + x` is `x` for every `x`,
    /// `+0.0` included (`+0.0 + -0.0` would be `+0.0`).
    const NEG_ZERO: Self;
    /// The identity of `*`.
    const ONE: Self;
    /// The identity of `f32::max`/`f32::min`, which return the other operand for NaN.
    const NAN: Self;
    /// `f32::max`.
    fn max(self, other: Self) -> Self;
    /// `f32::min`.
    fn min(self, other: Self) -> Self;
}

macro_rules! float {
    ($($t:ident)*) => {$(
        impl Float for $t {
            const NEG_ZERO: $t = -0.0;
            const ONE: $t = 1.0;
            const NAN: $t = $t::NAN;
            #[inline(always)]
            fn max(self, other: $t) -> $t {
                $t::max(self, other)
            }
            #[inline(always)]
            fn min(self, other: $t) -> $t {
                $t::min(self, other)
            }
        }
    )*};
}

float!(f32 f64);

/// `L` lanes of a sum, each `-0.0`; `_acc` only fixes the type.
#[inline(always)]
pub fn sum_lanes<T: Float, const L: usize>(_acc: &T) -> [T; L] {
    [T::NEG_ZERO; L]
}

/// `L` lanes of a product, each `1.0`.
#[inline(always)]
pub fn product_lanes<T: Float, const L: usize>(_acc: &T) -> [T; L] {
    [T::ONE; L]
}

/// `L` lanes of a `max` or `min`, each NaN.
#[inline(always)]
pub fn extremum_lanes<T: Float, const L: usize>(_acc: &T) -> [T; L] {
    [T::NAN; L]
}

/// `L` lanes of a compare-and-keep (`if t > acc { acc = t; }`), each the accumulator
/// itself: keeping is idempotent, and a NaN accumulator must stay NaN in every lane.
#[inline(always)]
pub fn keep_lanes<T: Float, const L: usize>(acc: &T) -> [T; L] {
    [*acc; L]
}

// The folds below are inlined, but see their lanes through `opaque`: a copy
// that an empty `black_box` may have changed. Measured on this crate's
// benches (BENCHMARKS.md, issues 16 and 23):
// - folded in plain sight, LLVM's SLP vectoriser shapes the chunk loop after
//   the fold's tree and packs it 2-wide (the 100K dot: 3× Scalar instead of
//   13×);
// - folded out of line, the lanes stay whole vectors in the loop, but the
//   call (a `vzeroupper`, a baseline-ISA fold reloading the lanes 8 bytes at a
//   time from wider stores) costs more than a short reduction's work: a
//   k-means distance over 32 dimensions ran 0.78× Scalar;
// - behind `opaque`, the copy's consecutive stores are what SLP vectorises the
//   loop from (whole vectors, as out of line), and the fold runs in the
//   caller's instruction set at the price of a store and reloads.
// `black_box` is a hint; were it to do nothing, the results would be the same
// and only the speed would change.

/// `lanes`, through a copy the optimiser must assume was changed.
#[inline(always)]
fn opaque<T: Float, const L: usize>(lanes: [T; L]) -> [T; L] {
    let mut escaped = lanes;
    core::hint::black_box(&mut escaped);
    escaped
}

/// `acc + ((l₀ + l₁) + (l₂ + l₃)) + …`: the lanes summed pairwise, then added to `acc`.
#[inline(always)]
pub fn sum<T: Float, const L: usize>(acc: T, lanes: [T; L]) -> T {
    acc + pairwise(opaque(lanes), |a, b| a + b)
}

/// [`sum`] of each accumulator and its lanes, for accumulators taken together (a loop over
/// items jammed): one copy of all the lanes, then each halving of all of them side by side,
/// in the same grouping as `sum`, so the results are the same bits.
#[inline(always)]
pub fn sum_all<T: Float, const L: usize, const U: usize>(accs: [T; U], lanes: [[T; L]; U]) -> [T; U] {
    let mut lanes = lanes;
    core::hint::black_box(&mut lanes);
    let mut width = L;
    while width > 1 {
        let half = width.div_ceil(2);
        for row in lanes.iter_mut() {
            for i in 0..width / 2 {
                row[i] = row[i] + row[i + half];
            }
        }
        width = half;
    }
    let mut out = accs;
    for (o, row) in out.iter_mut().zip(&lanes) {
        *o = *o + row[0];
    }
    out
}

/// `acc · ((l₀ · l₁) · (l₂ · l₃)) · …`.
#[inline(always)]
pub fn product<T: Float, const L: usize>(acc: T, lanes: [T; L]) -> T {
    acc * pairwise(opaque(lanes), |a, b| a * b)
}

/// The `f32::max` of `acc` and every lane (in any order the same value: NaN is its identity).
#[inline(always)]
pub fn max<T: Float, const L: usize>(acc: T, lanes: [T; L]) -> T {
    acc.max(pairwise(opaque(lanes), T::max))
}

/// The `f32::min` of `acc` and every lane.
#[inline(always)]
pub fn min<T: Float, const L: usize>(acc: T, lanes: [T; L]) -> T {
    acc.min(pairwise(opaque(lanes), T::min))
}

/// `acc` and every lane folded as `if lane > acc { acc = lane; }` does: the greatest,
/// and NaN only if `acc` is (then every lane is NaN too).
#[inline(always)]
pub fn keep_greater<T: Float, const L: usize>(acc: T, lanes: [T; L]) -> T {
    let best = pairwise(opaque(lanes), |a, b| if b > a { b } else { a });
    if best > acc {
        best
    } else {
        acc
    }
}

/// `acc` and every lane folded as `if lane < acc { acc = lane; }` does.
#[inline(always)]
pub fn keep_less<T: Float, const L: usize>(acc: T, lanes: [T; L]) -> T {
    let best = pairwise(opaque(lanes), |a, b| if b < a { b } else { a });
    if best < acc {
        best
    } else {
        acc
    }
}

/// The lanes combined by halving: lane `i` with lane `i + ⌈w/2⌉` while `w` lanes remain.
#[inline(always)]
fn pairwise<T: Float, const L: usize>(mut lanes: [T; L], op: impl Fn(T, T) -> T) -> T {
    let mut width = L;
    while width > 1 {
        let half = width.div_ceil(2);
        for i in 0..width / 2 {
            lanes[i] = op(lanes[i], lanes[i + half]);
        }
        width = half;
    }
    lanes[0]
}

/// `s[base + at .. base + at + L]` as an array, or `None` where the original
/// code would index out of bounds or overflow on the way.
#[inline(always)]
pub fn chunk<T, const L: usize>(s: &[T], base: usize, at: usize) -> Option<&[T; L]> {
    let start = base.checked_add(at)?;
    let end = start.checked_add(L)?;
    s.get(start..end)?.try_into().ok()
}

/// `s[base + at .. base + at + L]` as a mutable array, or `None` where the
/// original code would index out of bounds or overflow on the way.
#[inline(always)]
pub fn chunk_mut<T, const L: usize>(s: &mut [T], base: usize, at: usize) -> Option<&mut [T; L]> {
    let start = base.checked_add(at)?;
    let end = start.checked_add(L)?;
    s.get_mut(start..end)?.try_into().ok()
}

/// The elements an access reads over a loop's whole range of `n` indices, `s[first..=last]`
/// (`first` and `last` its index at the range's first and last index, evaluated as the
/// macro's `index_*` do), or `None` where the index overflows at either end, or the access
/// leaves the slice somewhere in the range, or its elements are not consecutive. The
/// expressions the macro accepts grow by one per index, so that every index in between
/// evaluates and reads inside the window.
#[inline(always)]
pub fn window<T>(s: &[T], first: Option<usize>, last: Option<usize>, n: usize) -> Option<&[T]> {
    s.get(window_range(first, last, n)?)
}

/// [`window`] of a slice the loop writes.
#[inline(always)]
pub fn window_mut<T>(s: &mut [T], first: Option<usize>, last: Option<usize>, n: usize) -> Option<&mut [T]> {
    s.get_mut(window_range(first, last, n)?)
}

/// The indices of [`window`]: `first..first + n`, where `last` is `first + n - 1`.
#[inline(always)]
fn window_range(first: Option<usize>, last: Option<usize>, n: usize) -> Option<core::ops::Range<usize>> {
    let first = first?;
    (first.checked_add(n.checked_sub(1)?)? == last?).then_some(first..first + n)
}

// An element-wise loop's index expression (`i - 1`, `row * w + i`), evaluated
// for a chunk's first and last lane with these instead of `+`, `-`, `*`: `None`
// where the expression as written would overflow (panic in a debug build, wrap
// in a release one), so that the chunk is not taken and the loop as written
// meets the overflow itself.

/// `a + b`, `None` on overflow or when either is `None`.
#[inline(always)]
pub fn index_add(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    a?.checked_add(b?)
}

/// `a - b`, `None` on overflow or when either is `None`.
#[inline(always)]
pub fn index_sub(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    a?.checked_sub(b?)
}

/// `a * b`, `None` on overflow or when either is `None`.
#[inline(always)]
pub fn index_mul(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    a?.checked_mul(b?)
}

/// Where a chunk of `L` lanes starts, from an index expression evaluated at its
/// first lane (`first`) and at its last (`last`): `first` when both evaluate
/// and the lanes' elements are consecutive (`last` is `first + L - 1`), else
/// `None`. The expressions the macro accepts add the loop index once and grow
/// with it by one per lane, so that every lane in between evaluates too.
#[inline(always)]
pub fn span<const L: usize>(first: Option<usize>, last: Option<usize>) -> Option<usize> {
    let first = first?;
    (first.checked_add(L - 1)? == last?).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identities_are_identities() {
        for x in [0.0_f32, -0.0, 1.5, -3.0, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE / 4.0] {
            assert_eq!((f32::NEG_ZERO + x).to_bits(), x.to_bits(), "{x}");
            assert_eq!((f32::ONE * x).to_bits(), x.to_bits(), "{x}");
            assert_eq!(Float::max(f32::NAN, x).to_bits(), x.to_bits(), "{x}");
            assert_eq!(Float::min(x, f32::NAN).to_bits(), x.to_bits(), "{x}");
        }
        assert!(Float::max(f64::NAN, f64::NAN).is_nan());
    }

    #[test]
    fn lanes_fold_pairwise_into_the_accumulator() {
        // Exact small integers: any grouping gives the same sum, so check the value and the count.
        let lanes: [f32; 5] = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(sum(10.0, lanes), 25.0);
        assert_eq!(product(2.0, lanes), 240.0);
        assert_eq!(max(0.0, lanes), 5.0);
        assert_eq!(min(0.0, lanes), 0.0);
        assert_eq!(max(f32::NAN, [f32::NAN, 3.0, f32::NAN, 1.0]), 3.0);
        assert!(max(f32::NAN, [f32::NAN; 4]).is_nan());
        assert_eq!(sum(-0.0, sum_lanes::<f32, 16>(&0.0)).to_bits(), (-0.0_f32).to_bits());
        // The grouping is pairwise: 1e8 + 1 + (-1e8) + 1 is 0 + 2 when the halves pair up (1e8 with -1e8).
        assert_eq!(pairwise([1e8_f32, 1.0, -1e8, 1.0], |a, b| a + b), 2.0);
    }

    #[test]
    fn compare_and_keep_folds_as_the_statement_does() {
        assert_eq!(keep_greater(1.0_f32, [0.5, 3.0, 2.0]), 3.0);
        assert_eq!(keep_greater(4.0_f32, [0.5, 3.0, 2.0]), 4.0);
        assert_eq!(keep_less(1.0_f32, [0.5, 3.0, -2.0]), -2.0);
        assert_eq!(keep_lanes::<f32, 3>(&7.0), [7.0; 3]);
        // A NaN accumulator stays NaN (its lanes are NaN too); NaN never wins otherwise.
        assert!(keep_greater(f32::NAN, keep_lanes::<f32, 4>(&f32::NAN)).is_nan());
        assert_eq!(keep_greater(f32::NEG_INFINITY, [f32::NEG_INFINITY, 2.0]), 2.0);
    }

    #[test]
    fn chunks_are_read_only_in_bounds() {
        let x: Vec<u32> = (0..10).collect();
        assert_eq!(chunk::<u32, 4>(&x, 2, 3), Some(&[5, 6, 7, 8]));
        assert_eq!(chunk::<u32, 4>(&x, 3, 3), Some(&[6, 7, 8, 9]));
        assert_eq!(chunk::<u32, 4>(&x, 4, 3), None);
        assert_eq!(chunk::<u32, 4>(&x, usize::MAX, 1), None);
        assert_eq!(chunk::<u32, 4>(&x, usize::MAX - 2, 0), None);
    }

    #[test]
    fn mutable_chunks_are_taken_only_in_bounds() {
        let mut x: Vec<u32> = (0..10).collect();
        let c = chunk_mut::<u32, 4>(&mut x, 3, 3).expect("6..10 is in bounds");
        c[0] = 60;
        assert_eq!(x[6], 60);
        assert!(chunk_mut::<u32, 4>(&mut x, 4, 3).is_none());
        assert!(chunk_mut::<u32, 4>(&mut x, usize::MAX, 1).is_none());
        assert!(chunk_mut::<u32, 1>(&mut [], 0, 0).is_none());
    }

    #[test]
    fn index_arithmetic_fails_where_the_expression_would_overflow() {
        assert_eq!(index_sub(Some(3), Some(1)), Some(2));
        assert_eq!(index_sub(Some(0), Some(1)), None);
        assert_eq!(index_add(Some(usize::MAX), Some(1)), None);
        assert_eq!(index_mul(Some(usize::MAX / 2 + 1), Some(2)), None);
        assert_eq!(index_add(None, Some(1)), None);
        // `(i + 5) - 5` at lanes 0..4: fine from i = 0, but not where `i + 5` overflows at the last lane.
        let at = |i: usize| index_sub(index_add(Some(i), Some(5)), Some(5));
        assert_eq!(span::<4>(at(0), at(3)), Some(0));
        assert_eq!(span::<4>(at(usize::MAX - 7), at(usize::MAX - 4)), None);
        // `i - 1` at lanes 0..4 from i = 0: the first lane underflows.
        assert_eq!(span::<4>(index_sub(Some(0), Some(1)), index_sub(Some(3), Some(1))), None);
        // Not consecutive: refused.
        assert_eq!(span::<4>(Some(0), Some(6)), None);
    }
}
