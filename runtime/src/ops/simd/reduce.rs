//! Reductions ([`OpClass::Reduction`](super::OpClass::Reduction)): `sum`,
//! `dot`, `norm_l2` and `mean` on trueno's `VectorBackend` kernels; `max` and
//! `min` on our own.
//!
//! trueno's kernels document "must not be empty" for `sum`, and its `max`/`min`
//! index `a[0]`, so empty inputs are answered here with the conventions of
//! [`ops`](crate::ops). Its `max`/`min` also lose NaN (`max_ps` returns its
//! second operand when either is NaN, and the scalar tail uses `>`), and a
//! second pass to look for NaN would double the memory traffic; so `max` and
//! `min` are one pass of our own over 16 independent lanes, whose select keeps
//! a NaN once seen.
//!
//! Summation order differs from Scalar's left-to-right loop (trueno keeps one
//! to four vector accumulators), so `sum`, `dot`, `mean` and `norm_l2` agree
//! with Scalar within the usual bound for summing n terms, relative to
//! `Σ|terms|`, not bit for bit. `max` and `min` are exact.

use super::At;
use crate::ops::check;

/// Independent accumulators in `max`/`min`: one AVX-512 register, two AVX2
/// registers, four SSE registers, so every clone hides the compare latency.
const LANES: usize = 16;

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

multiversion! {
    fn max_kernel<const FMA: bool>(a: &[f32]) -> f32 {
        let (chunks, tail) = a.as_chunks::<LANES>();
        let mut acc = [f32::NEG_INFINITY; LANES];
        for chunk in chunks {
            for (m, &x) in acc.iter_mut().zip(chunk) {
                *m = max_keep_nan(*m, x);
            }
        }
        acc.iter().chain(tail).fold(f32::NEG_INFINITY, |m, &x| max_keep_nan(m, x))
    }
}

multiversion! {
    fn min_kernel<const FMA: bool>(a: &[f32]) -> f32 {
        let (chunks, tail) = a.as_chunks::<LANES>();
        let mut acc = [f32::INFINITY; LANES];
        for chunk in chunks {
            for (m, &x) in acc.iter_mut().zip(chunk) {
                *m = min_keep_nan(*m, x);
            }
        }
        acc.iter().chain(tail).fold(f32::INFINITY, |m, &x| min_keep_nan(m, x))
    }
}

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
