//! How `verify` compares a variant's result with the Scalar variant's: the
//! [`Comparable`] trait (implemented for `f32`, `f64`, and `Vec`s, boxed slices
//! and arrays of them, and with the feature `ndarray` for ndarray 0.17's arrays of
//! them; users implement it for their own result types), [`compare_arrays`] for
//! arrays of any ndarray version (what `verify` uses for the arrays a kernel writes
//! or returns), and the [`Tolerance`] a call is held to.
//!
//! The bound is the one [`crate::tolerance`] proves for two orders of one sum,
//! `2·γₖ·Σ|xᵢ|` ([`tolerance::sum_bound`] over `k + 1` summands), with the
//! element type's `EPSILON`. A comparison sees results, not summands, so
//! `Σ|xᵢ|` is estimated by the *scale* of the Scalar result: its largest
//! magnitude, and at least 1. `k`, the roundings one result element may
//! accumulate, depends on the kernel's complexity:
//!
//! | complexity | `k` | why |
//! | --- | --- | --- |
//! | Low | 8 | element-wise: a few operations per element (one fused multiply-add may replace two roundings) |
//! | Medium, High | the call's size | a result element may sum up to `size` terms (a reduction, a dot product inside a matrix product) |
//!
//! A kernel whose SIMD and Parallel variants compute libm's functions with the
//! runtime's formulas ([`crate::math`], listed in its loops'
//! [`vector_math`](crate::LoopRewrite::vector_math)) is allowed `2·(N + 1)` roundings
//! more, where `N` is the largest of their [`ULP_BOUNDS`](crate::math::ULP_BOUNDS)
//! ([`Tolerance::with_vector_math`]): such a result may differ from the Scalar
//! variant's by `N` ulp of the formula plus libm's own error (below 1 ulp), and
//! that difference may double through the operation that uses it.
//!
//! The estimate is exact for sums of terms of one sign and can be too tight
//! under heavy cancellation; the attribute's `tolerance = 1e-4` then replaces
//! it by a relative bound, `|a − b| ≤ 1e-4 · scale`.
//!
//! NaN agrees with NaN and an infinity with the same infinity. Every variant
//! may also fuse the multiply-adds Scalar rounds twice (GPUs do, and SIMD
//! kernels that call FMA instructions), which changes a result's class where
//! a product overflows when rounded on its own: so a variant's element also
//! agrees where [`fusion::results_agree`] says fusion explains the difference
//! (Scalar NaN, the variant an infinity; Scalar `±∞`, the variant finite;
//! Scalar within the tolerance of the largest finite value, the variant the
//! infinity of its sign). The contract and what it cannot tell from results
//! alone are in [`crate::fusion`]. Only `ops::` kernels change a class so: a loop
//! the GPU variant runs as a shader gives Scalar's NaN and infinities exactly
//! (a call that meets one runs on the host), and its `mul_add`, which may round
//! its product, moves a finite result by roundings only, which the GPU's widened
//! tolerance covers ([`crate::fusion`], "Where a class can change").

use crate::backend::OpComplexity;
use crate::{fusion, tolerance};

/// Roundings per result element that a Low (element-wise) kernel is allowed.
const LOW_TERMS: usize = 8;

/// How far a variant's result may be from the Scalar variant's for one call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// The bound of [`crate::tolerance`] for `terms` roundings: `2·γ_terms·scale`.
    Rounding {
        /// Roundings one result element may accumulate.
        terms: usize,
    },
    /// `relative · scale`, from the attribute's `tolerance = …`.
    Relative(f64),
}

impl Tolerance {
    /// The tolerance for a call of `size` of a kernel of `complexity` (table in the
    /// module docs), or `relative` when the attribute gives one.
    pub fn for_call(complexity: OpComplexity, size: usize, relative: Option<f64>) -> Tolerance {
        match relative {
            Some(r) => Tolerance::Relative(r),
            None => Tolerance::Rounding {
                terms: match complexity {
                    OpComplexity::Low => LOW_TERMS,
                    OpComplexity::Medium | OpComplexity::High => size.max(1),
                },
            },
        }
    }

    /// The same tolerance allowing `roundings` more roundings per result element (a
    /// relative tolerance the attribute gave is left as it is).
    pub fn widened(self, roundings: usize) -> Tolerance {
        match self {
            Tolerance::Rounding { terms } => Tolerance::Rounding { terms: terms.saturating_add(roundings) },
            relative => relative,
        }
    }

    /// The tolerance for a kernel whose variants compute libm's functions with the
    /// runtime's formulas, the largest of whose bounds is `ulps`
    /// ([`KernelSpec::vector_math_ulps`](crate::KernelSpec::vector_math_ulps)): `2·(ulps + 1)`
    /// roundings more (module docs); unchanged when `ulps` is 0 (no formula) and for a
    /// [`Relative`](Tolerance::Relative) tolerance, which the attribute states.
    pub fn with_vector_math(self, ulps: u32) -> Tolerance {
        match self {
            Tolerance::Rounding { terms } if ulps > 0 => {
                Tolerance::Rounding { terms: terms.saturating_add(2 * (ulps as usize + 1)) }
            }
            other => other,
        }
    }

    /// The largest difference allowed for results of magnitude up to `scale`
    /// (taken as at least 1) in a type whose machine epsilon is `epsilon`.
    pub fn allowed(self, epsilon: f64, scale: f64) -> f64 {
        let scale = scale.max(1.0);
        match self {
            Tolerance::Rounding { terms } => tolerance::sum_bound(terms + 1, scale, epsilon),
            Tolerance::Relative(r) => r * scale,
        }
    }
}

/// The outcome of comparing a variant's result with the Scalar variant's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agreement {
    /// The largest difference found between finite elements; infinite for a NaN or
    /// infinity that does not match (nor [`fusion`] explains) or a shape that does not match.
    pub largest_error: f64,
    /// Whether every difference is within the tolerance.
    pub agrees: bool,
}

impl Agreement {
    /// Exact agreement.
    pub const EXACT: Agreement = Agreement { largest_error: 0.0, agrees: true };

    /// Results that cannot be compared element by element (lengths differ): disagreement.
    pub const MISMATCH: Agreement = Agreement { largest_error: f64::INFINITY, agrees: false };

    /// The agreement of two comparisons together (a result and the arrays a kernel wrote):
    /// the larger error, and agreement only where both agree.
    #[must_use]
    pub fn and(self, other: Agreement) -> Agreement {
        Agreement { largest_error: self.largest_error.max(other.largest_error), agrees: self.agrees && other.agrees }
    }
}

/// A kernel result that `verify` can compare with the Scalar variant's.
///
/// Implement it for your own result type by comparing its floats, for example
/// with [`compare_floats`]:
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::compare::{compare_floats, Agreement, Comparable, Tolerance};
///
/// struct Stats { mean: f32, max: f32 }
///
/// impl Comparable for Stats {
///     fn compare(&self, scalar: &Self, tolerance: Tolerance) -> Agreement {
///         let mine = [self.mean as f64, self.max as f64];
///         let reference = [scalar.mean as f64, scalar.max as f64];
///         compare_floats(mine, reference, f32::EPSILON as f64, tolerance)
///     }
/// }
///
/// let a = Stats { mean: 1.0, max: 2.0 };
/// assert!(a.compare(&Stats { mean: 1.0, max: 2.0 }, Tolerance::Relative(1e-6)).agrees);
/// assert!(!a.compare(&Stats { mean: 1.5, max: 2.0 }, Tolerance::Relative(1e-6)).agrees);
/// ```
#[diagnostic::on_unimplemented(
    message = "`verify` compares each variant's result with the Scalar variant's, but `{Self}` cannot be compared",
    label = "`{Self}`, the kernel's result, does not implement `Comparable`",
    note = "results of type `f32`, `f64`, and `Vec`s, boxed slices and arrays of them can be compared; \
            implement `adaptive_kernel::compare::Comparable` for your own type, or remove `verify`"
)]
pub trait Comparable {
    /// Compares `self`, a variant's result, with `scalar`, the Scalar variant's
    /// result on the same inputs, within `tolerance`.
    fn compare(&self, scalar: &Self, tolerance: Tolerance) -> Agreement;
}

/// A parameter `verify` can pass to two variants: any `Copy` type. Generated code
/// names it to say so at the parameter's type; not for use elsewhere.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`verify` passes each parameter to the Scalar variant and to the chosen one, but `{Self}` is not `Copy`",
    label = "this parameter cannot be passed twice",
    note = "take it by shared reference (`&[f32]`, `&Vec<f32>`), or remove `verify`"
)]
pub trait VerifyInput {}

impl<T: Copy> VerifyInput for T {}

/// Asserts at compile time that a parameter is a [`VerifyInput`] (generated code only).
#[doc(hidden)]
pub fn verify_input<T: VerifyInput>(_: &T) {}

/// Compares two equally long sequences of floats of a type with machine epsilon
/// `epsilon` (`f32::EPSILON` or `f64::EPSILON`, as `f64`): the scale is the largest
/// finite `|scalar|` (at least 1), every pair must be within [`Tolerance::allowed`] of
/// it, NaN matches NaN and an infinity itself, and a difference in class that fused
/// multiply-adds explain is accepted ([`fusion::results_agree`]; the type's largest
/// finite value is `f32::MAX` for `f32`'s epsilon or any larger one, else `f64::MAX`).
/// Sequences of different lengths disagree.
pub fn compare_floats(
    mine: impl IntoIterator<Item = f64>,
    scalar: impl IntoIterator<Item = f64>,
    epsilon: f64,
    tolerance: Tolerance,
) -> Agreement {
    let mine: Vec<f64> = mine.into_iter().collect();
    let scalar: Vec<f64> = scalar.into_iter().collect();
    if mine.len() != scalar.len() {
        return Agreement::MISMATCH;
    }
    let scale = scalar.iter().filter(|x| x.is_finite()).fold(0.0_f64, |m, x| m.max(x.abs()));
    let allowed = tolerance.allowed(epsilon, scale);
    let max = largest_finite(epsilon);
    let mut out = Agreement::EXACT;
    for (&a, &b) in mine.iter().zip(&scalar) {
        let agrees = fusion::results_agree(a, b, allowed, max);
        let error = match (a.is_finite() && b.is_finite(), agrees) {
            (true, _) => (a - b).abs(),
            (false, true) => 0.0,
            (false, false) => f64::INFINITY,
        };
        out.largest_error = out.largest_error.max(error);
        out.agrees &= agrees;
    }
    out
}

/// The largest finite value of the float type whose machine epsilon is `epsilon`.
fn largest_finite(epsilon: f64) -> f64 {
    if epsilon >= f64::from(f32::EPSILON) {
        f64::from(f32::MAX)
    } else {
        f64::MAX
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// `f32` and `f64`: the element types [`compare_arrays`] compares (sealed).
#[diagnostic::on_unimplemented(
    message = "`verify` compares arrays of `f32` or `f64`, but these hold `{Self}`",
    label = "elements of type `{Self}` cannot be compared",
    note = "make the kernel's arrays hold `f32` or `f64`, or remove `verify`"
)]
pub trait Element: Copy + sealed::Sealed {
    /// The type's machine epsilon, as `f64`.
    const EPSILON: f64;
    /// The value as `f64` (exactly).
    fn wide(self) -> f64;
}

impl Element for f32 {
    const EPSILON: f64 = f32::EPSILON as f64;
    fn wide(self) -> f64 {
        f64::from(self)
    }
}

impl Element for f64 {
    const EPSILON: f64 = f64::EPSILON;
    fn wide(self) -> f64 {
        self
    }
}

fn compare_slices<T: Element>(mine: &[T], scalar: &[T], tolerance: Tolerance) -> Agreement {
    compare_floats(mine.iter().map(|x| x.wide()), scalar.iter().map(|x| x.wide()), T::EPSILON, tolerance)
}

/// Compares two arrays given as their shapes and their elements in logical order
/// (row-major, whatever their memory layout: what ndarray's `iter()` yields), as
/// [`compare_floats`] does; arrays of different shapes disagree
/// ([`Agreement::MISMATCH`]).
///
/// It names no ndarray type, so it compares arrays of any ndarray version: this is
/// what `verify` calls for the arrays a kernel writes or returns. For example, an
/// array and its transposed copy laid out column-major agree:
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::compare::{compare_arrays, Tolerance};
///
/// // [[1, 2, 3], [4, 5, 6]] row-major, and the same matrix stored column by column,
/// // walked in logical (row-major) order.
/// let row_major = [1.0_f32, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let column_major = [1.0_f32, 4.0, 2.0, 5.0, 3.0, 6.0];
/// let logical = [0, 2, 4, 1, 3, 5].map(|i| &column_major[i]);
/// let t = Tolerance::Relative(0.0);
/// assert!(compare_arrays(&[2, 3], &row_major, &[2, 3], logical, t).agrees);
/// assert!(!compare_arrays(&[2, 3], &row_major, &[3, 2], &row_major, t).agrees, "shapes differ");
/// ```
pub fn compare_arrays<'a, 'b, T: Element + 'a + 'b>(
    mine_shape: &[usize],
    mine: impl IntoIterator<Item = &'a T>,
    scalar_shape: &[usize],
    scalar: impl IntoIterator<Item = &'b T>,
    tolerance: Tolerance,
) -> Agreement {
    if mine_shape != scalar_shape {
        return Agreement::MISMATCH;
    }
    compare_floats(mine.into_iter().map(|x| x.wide()), scalar.into_iter().map(|x| x.wide()), T::EPSILON, tolerance)
}

/// ndarray 0.17's arrays of `f32` or `f64`, of any storage and dimension, element by
/// element in logical order ([`compare_arrays`]): a result type `verify` and code of
/// your own can compare. (`verify` compares the arrays of any ndarray version itself,
/// through their methods, without this implementation.)
#[cfg(feature = "ndarray")]
impl<A, S, D> Comparable for ndarray::ArrayBase<S, D>
where
    A: Element,
    S: ndarray::Data<Elem = A>,
    D: ndarray::Dimension,
{
    fn compare(&self, scalar: &Self, tolerance: Tolerance) -> Agreement {
        compare_arrays(self.shape(), self.iter(), scalar.shape(), scalar.iter(), tolerance)
    }
}

macro_rules! comparable_floats {
    ($($t:ty),*) => {$(
        impl Comparable for $t {
            fn compare(&self, scalar: &Self, tolerance: Tolerance) -> Agreement {
                compare_slices(std::slice::from_ref(self), std::slice::from_ref(scalar), tolerance)
            }
        }

        impl Comparable for Vec<$t> {
            fn compare(&self, scalar: &Self, tolerance: Tolerance) -> Agreement {
                compare_slices(self, scalar, tolerance)
            }
        }

        impl Comparable for Box<[$t]> {
            fn compare(&self, scalar: &Self, tolerance: Tolerance) -> Agreement {
                compare_slices(self, scalar, tolerance)
            }
        }

        impl<const N: usize> Comparable for [$t; N] {
            fn compare(&self, scalar: &Self, tolerance: Tolerance) -> Agreement {
                compare_slices(self, scalar, tolerance)
            }
        }
    )*};
}

comparable_floats!(f32, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rounding_bound_is_the_tolerance_modules_and_grows_with_size() {
        let t = Tolerance::for_call(OpComplexity::Medium, 1000, None);
        assert_eq!(t, Tolerance::Rounding { terms: 1000 });
        let eps = f32::EPSILON as f64;
        assert_eq!(t.allowed(eps, 50.0), tolerance::sum_bound(1001, 50.0, eps));
        assert_eq!(t.allowed(eps, 0.001), tolerance::sum_bound(1001, 1.0, eps), "the scale is at least 1");
        assert_eq!(Tolerance::for_call(OpComplexity::Low, 1 << 20, None), Tolerance::Rounding { terms: LOW_TERMS });
        assert_eq!(Tolerance::for_call(OpComplexity::High, 9, Some(1e-4)), Tolerance::Relative(1e-4));
    }

    #[test]
    fn vector_math_widens_the_rounding_bound_only() {
        let low = Tolerance::for_call(OpComplexity::Low, 100, None);
        assert_eq!(low.with_vector_math(0), low);
        assert_eq!(low.with_vector_math(2), Tolerance::Rounding { terms: LOW_TERMS + 6 });
        assert_eq!(Tolerance::Relative(1e-3).with_vector_math(4), Tolerance::Relative(1e-3));
        // An exponential 2 ulp off, at 1.0: refused with the plain bound, accepted with the widened one.
        let (exact, off) = (1.0_f32, f32::from_bits(1.0_f32.to_bits() + 2));
        let tight = Tolerance::Rounding { terms: 0 };
        assert!(!off.compare(&exact, tight).agrees);
        assert!(off.compare(&exact, tight.with_vector_math(1)).agrees);
    }

    #[test]
    fn a_reordered_sum_agrees_and_a_wrong_one_does_not() {
        let x: Vec<f32> = (0..10_000).map(|i| ((i % 7) as f32 - 3.0) * 0.37).collect();
        let in_order: f32 = x.iter().fold(0.0, |a, b| a + b);
        let lanes: f32 = x.chunks(8).map(|c| c.iter().sum::<f32>()).sum();
        let t = Tolerance::for_call(OpComplexity::Medium, x.len(), None);
        assert!(lanes.compare(&in_order, t).agrees);
        let wrong = in_order * 1.5 + 1.0;
        let a = wrong.compare(&in_order, t);
        assert!(!a.agrees);
        assert_eq!(a.largest_error, f64::from((wrong - in_order).abs()));
    }

    /// A simulated fused device (`f32::mul_add`) against Scalar's `a*b + c`, where the
    /// product overflows when rounded on its own.
    #[test]
    fn fused_results_agree_with_scalars_special_values() {
        let axpy = |fused: bool, alpha: f32, x: &[f32], y: &[f32]| -> Vec<f32> {
            x.iter().zip(y).map(|(&x, &y)| if fused { alpha.mul_add(x, y) } else { alpha * x + y }).collect()
        };
        let t = Tolerance::for_call(OpComplexity::Low, 3, None);
        for (alpha, x, y) in
            [(1e20, [-1e20, 1.0, 2.0], [f32::INFINITY, 1.0, -2.0]), (2e19, [2e19, 1.0, 0.5], [-3e38, 0.0, 1.0])]
        {
            let (fused, scalar) = (axpy(true, alpha, &x, &y), axpy(false, alpha, &x, &y));
            assert!(fused[0].is_finite() != scalar[0].is_finite() || scalar[0].is_nan(), "{fused:?} {scalar:?}");
            let a = fused.compare(&scalar, t);
            assert!(a.agrees, "{fused:?} against {scalar:?}: {a:?}");
            assert!(a.largest_error.is_finite());
        }
        // What fusion cannot do is still a disagreement.
        assert!(!vec![0.0_f32].compare(&vec![f32::NAN], t).agrees, "a NaN dropped");
        assert!(!vec![f32::NEG_INFINITY].compare(&vec![f32::INFINITY], t).agrees);
        assert!(!vec![f32::INFINITY].compare(&vec![1.0], t).agrees, "far below f32::MAX");
        assert!(vec![f32::INFINITY].compare(&vec![f32::MAX], t).agrees, "at f32::MAX");
        assert!(!vec![f64::INFINITY].compare(&vec![f64::from(f32::MAX)], t).agrees, "f64 results overflow at f64::MAX");
    }

    #[test]
    fn agreements_combine_and_arrays_compare_by_shape_and_logical_order() {
        let t = Tolerance::Relative(1e-6);
        let off = Agreement { largest_error: 0.5, agrees: false };
        assert_eq!(Agreement::EXACT.and(off), off);
        assert_eq!(off.and(Agreement::EXACT), off);
        assert_eq!(Agreement::EXACT.and(Agreement::EXACT), Agreement::EXACT);
        let a = [1.0_f64, 2.0, 3.0, 4.0];
        assert_eq!(compare_arrays(&[2, 2], &a, &[2, 2], &a, t), Agreement::EXACT);
        assert_eq!(compare_arrays(&[2, 2], &a, &[4], &a, t), Agreement::MISMATCH, "same elements, other shape");
        assert_eq!(compare_arrays(&[0, 3], &[] as &[f64], &[0, 3], &[], t), Agreement::EXACT, "empty");
        let b = [1.0_f64, 2.0, 3.5, 4.0];
        let d = compare_arrays(&[2, 2], &a, &[2, 2], &b, t);
        assert!(!d.agrees && d.largest_error == 0.5, "{d:?}");
    }

    #[cfg(feature = "ndarray")]
    #[test]
    fn ndarray_arrays_compare_in_logical_order_whatever_their_layout() {
        let t = Tolerance::Relative(0.0);
        let a = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f32);
        let column_major = a.t().as_standard_layout().into_owned().reversed_axes();
        assert!(!column_major.is_standard_layout());
        assert!(column_major.compare(&a, t).agrees);
        assert!(a.view().compare(&column_major.view(), t).agrees);
        assert!(!a.t().compare(&a.view(), t).agrees, "a transposed view is another shape");
        let mut b = a.clone();
        b[[2, 3]] += 1.0;
        assert!(!b.compare(&a, t).agrees);
    }

    #[test]
    fn special_values_and_shapes() {
        let t = Tolerance::Relative(1e-3);
        assert!(vec![f64::NAN, f64::INFINITY].compare(&vec![f64::NAN, f64::INFINITY], t).agrees);
        assert!(!vec![1.0_f64].compare(&vec![f64::NAN], t).agrees);
        assert!(!vec![f32::INFINITY].compare(&vec![1.0], t).agrees);
        assert!(!vec![f32::NAN].compare(&vec![1.0], t).agrees);
        assert_eq!(vec![1.0_f32, 2.0].compare(&vec![1.0], t), Agreement::MISMATCH);
        assert!([1.0_f32, 1000.0].compare(&[1.5, 1000.0], t).agrees, "within 1e-3 of the scale 1000");
        assert!(!Box::<[f32]>::from([1.0, 1.0]).compare(&Box::from([1.0, 1.5]), t).agrees);
    }
}
