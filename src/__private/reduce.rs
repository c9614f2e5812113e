//! The helpers of the reassociated reductions `#[adaptive_kernel]` writes into
//! SIMD variants (the macro crate's `reduce` module): lanes filled with the
//! operator's identity, the fold of the lanes into the accumulator, and a
//! chunked slice read. Small and `#[inline(always)]`, so they compile into the
//! `#[target_feature]` clone that calls them.

use core::ops::{Add, Mul};

/// `f32` and `f64`: what an accumulator of a rewritten reduction can be.
pub trait Float: Copy + Add<Output = Self> + Mul<Output = Self> {
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

// The folds below are `#[inline(never)]` and take the lanes by reference, on
// purpose: inlined, LLVM splits the lane array into scalars and its SLP
// vectoriser then packs the chunk loop into 2-wide vectors shaped by the
// fold's tree (measured on the 768×288 matvec of benches/reductions.rs: 26 µs
// inlined, 21 µs out of line, 200 µs Scalar). Behind a reference the lanes
// stay one array, the loop vectorises at full width, and the call costs a few
// nanoseconds once per reduction.

/// `acc + ((l₀ + l₁) + (l₂ + l₃)) + …`: the lanes summed pairwise, then added to `acc`.
#[inline(never)]
pub fn sum<T: Float, const L: usize>(acc: T, lanes: &[T; L]) -> T {
    acc + pairwise(*lanes, |a, b| a + b)
}

/// `acc · ((l₀ · l₁) · (l₂ · l₃)) · …`.
#[inline(never)]
pub fn product<T: Float, const L: usize>(acc: T, lanes: &[T; L]) -> T {
    acc * pairwise(*lanes, |a, b| a * b)
}

/// The `f32::max` of `acc` and every lane (in any order the same value: NaN is its identity).
#[inline(never)]
pub fn max<T: Float, const L: usize>(acc: T, lanes: &[T; L]) -> T {
    lanes.iter().fold(acc, |m, &l| m.max(l))
}

/// The `f32::min` of `acc` and every lane.
#[inline(never)]
pub fn min<T: Float, const L: usize>(acc: T, lanes: &[T; L]) -> T {
    lanes.iter().fold(acc, |m, &l| m.min(l))
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
        assert_eq!(sum(10.0, &lanes), 25.0);
        assert_eq!(product(2.0, &lanes), 240.0);
        assert_eq!(max(0.0, &lanes), 5.0);
        assert_eq!(min(0.0, &lanes), 0.0);
        assert!(max(f32::NAN, &[f32::NAN; 4]).is_nan());
        assert_eq!(sum(-0.0, &sum_lanes::<f32, 16>(&0.0)).to_bits(), (-0.0_f32).to_bits());
        // The grouping is pairwise: 1e8 + 1 + (-1e8) + 1 is 0 + 2 when the halves pair up (1e8 with -1e8).
        assert_eq!(pairwise([1e8_f32, 1.0, -1e8, 1.0], |a, b| a + b), 2.0);
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
}
