//! Reductions ([`OpClass::Reduction`](super::OpClass::Reduction)): `sum`,
//! `dot`, `norm_l2` and `mean` on trueno's `VectorBackend` kernels; `max` and
//! `min` on our own.
//!
//! trueno's kernels document "must not be empty" for `sum`, and its `max`/`min`
//! index `a[0]`, so empty inputs are answered here with the conventions of
//! [`ops`](crate::ops). Its `max`/`min` also lose NaN (`max_ps` returns its
//! second operand when either is NaN, and the scalar tail uses `>`), and a
//! second pass to look for NaN would double the memory traffic; so `max` and
//! `min` are one pass of our own: per lane, the plain `maxps`/`minps` select
//! trueno uses, plus the largest `|x|` bit pattern seen, an integer max that
//! runs beside it; NaN patterns are above +∞'s, so it detects any NaN at the
//! end. (A select that kept NaN itself, `x > m || x.is_nan()`, measured 1.6×
//! slower in L2.)
//!
//! Summation order differs from Scalar's left-to-right loop (trueno keeps one
//! to four vector accumulators), so `sum`, `dot`, `mean` and `norm_l2` agree
//! with Scalar within the usual bound for summing n terms, relative to
//! `Σ|terms|`, not bit for bit. `max` and `min` are exact.

use super::At;
use crate::ops::check;

/// Lanes per step in `max`/`min`: four AVX2 registers or two AVX-512 ones per
/// accumulator, enough to hide the compare latency without spilling (16 and
/// 64 measured slower with AVX2).
const LANES: usize = 32;

/// The `|x|` bit patterns above this one are NaN.
const INF_BITS: u32 = 0x7F80_0000;

/// `max` that keeps NaN: a NaN `x` is taken, and once `m` is NaN no `x` compares above it.
#[inline(always)]
fn max_keep_nan(m: f32, x: f32) -> f32 {
    if x > m || x.is_nan() {
        x
    } else {
        m
    }
}

/// `min` that keeps NaN, as [`max_keep_nan`].
#[inline(always)]
fn min_keep_nan(m: f32, x: f32) -> f32 {
    if x < m || x.is_nan() {
        x
    } else {
        m
    }
}

/// Defines `$name(at, a)`: the fold of `a` with `$keep` from `$init`, NaN if any element is NaN.
macro_rules! extreme_kernel {
    ($name:ident, $init:expr, |$m:ident, $x:ident| $pick:expr, $keep:ident) => {
        multiversion! {
            fn $name<const FMA: bool>(a: &[f32]) -> f32 {
                let (chunks, tail) = a.as_chunks::<LANES>();
                let mut acc = [$init; LANES];
                let mut magnitude = [0u32; LANES];
                for chunk in chunks {
                    for ((m, mag), &x) in acc.iter_mut().zip(magnitude.iter_mut()).zip(chunk) {
                        // NaN never wins this select, so `acc` stays NaN-free...
                        let $m = *m;
                        let $x = x;
                        *m = $pick;
                        // ...and this integer max records whether a NaN went by.
                        *mag = (*mag).max(x.to_bits() & !(1 << 31));
                    }
                }
                if magnitude.iter().any(|&mag| mag > INF_BITS) {
                    return f32::NAN;
                }
                acc.iter().chain(tail).fold($init, |m, &x| $keep(m, x))
            }
        }
    };
}

extreme_kernel!(max_kernel, f32::NEG_INFINITY, |m, x| if x > m { x } else { m }, max_keep_nan);
extreme_kernel!(min_kernel, f32::INFINITY, |m, x| if x < m { x } else { m }, min_keep_nan);

impl At {
    /// The sum of `a` at this level (0 when empty).
    pub fn sum(self, a: &[f32]) -> f32 {
        if a.is_empty() {
            return 0.0;
        }
        // SAFETY: slice preconditions: `a` is not empty, the one precondition of `sum`.
        trueno_kernel!(self, sum(a))
    }

    /// `Σ a[i]·b[i]` at this level (0 when empty).
    ///
    /// # Panics
    /// If `a` and `b` differ in length.
    #[track_caller]
    pub fn dot(self, a: &[f32], b: &[f32]) -> f32 {
        check::same_len("dot", a.len(), b.len());
        if a.is_empty() {
            return 0.0;
        }
        // SAFETY: slice preconditions: `a` and `b` have the same length (checked above), as `dot` requires.
        trueno_kernel!(self, dot(a, b))
    }

    /// The largest element at this level: −∞ when empty, NaN when any element is NaN.
    pub fn max(self, a: &[f32]) -> f32 {
        max_kernel(self, a)
    }

    /// The smallest element at this level: +∞ when empty, NaN when any element is NaN.
    pub fn min(self, a: &[f32]) -> f32 {
        min_kernel(self, a)
    }

    /// The arithmetic mean at this level: NaN when empty.
    pub fn mean(self, a: &[f32]) -> f32 {
        self.sum(a) / a.len() as f32
    }

    /// The Euclidean norm at this level (0 when empty).
    pub fn norm_l2(self, a: &[f32]) -> f32 {
        if a.is_empty() {
            return 0.0;
        }
        // SAFETY: slice preconditions: `norm_l2` has no precondition beyond a valid slice.
        trueno_kernel!(self, norm_l2(a))
    }
}
