//! How far a reassociated reduction may be from the same reduction in source
//! order: the contract between a kernel's Scalar variant and the SIMD variant
//! whose float reductions `#[adaptive_kernel]` regrouped into lanes.
//!
//! The SIMD variant adds (or multiplies) exactly the same rounded terms as the
//! Scalar variant, each once, in another grouping; no fused multiply-add is
//! formed and no term is computed differently. So the classical bounds for
//! recursive summation apply to both orders (Higham, *Accuracy and Stability
//! of Numerical Algorithms*, §4.2): with `u = ε/2` and
//! `γₖ = k·u / (1 − k·u)`, any order of summing `n` summands `xᵢ` (the
//! accumulator's initial value counts as one) is within `γₙ₋₁·Σ|xᵢ|` of the
//! exact sum. Hence, for a rewritten **sum**,
//!
//! ```text
//! |simd − scalar| ≤ 2·γₙ₋₁·Σ|xᵢ|      (≈ (n − 1)·ε·Σ|xᵢ| while n·ε ≪ 1)
//! ```
//!
//! provided no partial sum overflows in either order, which holds when
//! `Σ|xᵢ|·(1 + γₙ)` does not exceed the type's `MAX`; NaN and infinities
//! then agree exactly (NaN iff a summand is NaN or both infinities occur).
//! For a **product**, `|simd − scalar| ≤ 2·γₙ₋₁/(1 − γₙ₋₁)·|scalar|`, provided
//! no partial product overflows or falls below the normal range in either
//! order. **`max`/`min`** folds (`f32::max` ignores NaN, so NaN is their
//! identity and any grouping gives the same value) agree exactly, except
//! that a zero result may differ in sign: `f32::max(0.0, -0.0)` may return
//! either.
//!
//! The functions below state the bounds once, for tests, benches and the
//! router's future verify mode. They take `f64` (an `f32` converts exactly)
//! and the accumulator type's `EPSILON` and `MAX` (`f32::EPSILON as f64`).

/// `γₖ = k·u / (1 − k·u)` with `u = epsilon / 2`: the bound on the relative error
/// of `k` roundings. Infinite when `k·u ≥ 1`, where no bound holds.
pub fn gamma(k: usize, epsilon: f64) -> f64 {
    let ku = k as f64 * epsilon / 2.0;
    if ku >= 1.0 {
        f64::INFINITY
    } else {
        ku / (1.0 - ku)
    }
}

/// The largest `|a − b|` between two orders of one sum of `n` summands whose
/// absolute values sum to `abs_sum`: `2·γₙ₋₁·abs_sum`.
pub fn sum_bound(n: usize, abs_sum: f64, epsilon: f64) -> f64 {
    2.0 * gamma(n.saturating_sub(1), epsilon) * abs_sum
}

/// The largest `|a − b|` between two orders of one product of `n` factors whose
/// value in one order is `b`: `2·γₙ₋₁/(1 − γₙ₋₁)·|b|`.
pub fn product_bound(n: usize, b: f64, epsilon: f64) -> f64 {
    let g = gamma(n.saturating_sub(1), epsilon);
    2.0 * g / (1.0 - g) * b.abs()
}

/// Whether `a` and `b`, two orders of one sum of `n` summands, agree as the
/// contract promises. `finite_abs_sum` is `Σ|xᵢ|` over the finite summands and
/// `max` the accumulator type's `MAX`. Where a partial sum could overflow
/// (`finite_abs_sum·(1 + γₙ) > max`, or `n·ε/2 ≥ 1`) nothing is promised and
/// the answer is `true`; otherwise both are NaN, or equal, or finite and within
/// [`sum_bound`].
pub fn sums_agree(a: f64, b: f64, n: usize, finite_abs_sum: f64, epsilon: f64, max: f64) -> bool {
    let in_range = finite_abs_sum * (1.0 + gamma(n, epsilon)) <= max;
    if !in_range {
        return true;
    }
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= sum_bound(n, finite_abs_sum, epsilon))
}

/// Whether `a` and `b`, two orders of one product of `n` factors, agree as the
/// contract promises, given that no partial product left the normal range:
/// both NaN, or equal, or within [`product_bound`] of `b`.
pub fn products_agree(a: f64, b: f64, n: usize, epsilon: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= product_bound(n, b, epsilon))
}

/// Whether two groupings of one `max` or `min` fold agree: the same value
/// (`+0.0` and `-0.0` are the same value), or both NaN.
pub fn extrema_agree(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

#[cfg(test)]
mod tests {
    use super::*;

    const E32: f64 = f32::EPSILON as f64;
    const MAX32: f64 = f32::MAX as f64;

    #[test]
    fn gamma_grows_with_k_and_ends_where_the_bound_does() {
        assert_eq!(gamma(0, E32), 0.0);
        assert!((gamma(1, E32) / (E32 / 2.0) - 1.0).abs() < 1e-6);
        assert!(gamma(1000, E32) > 1000.0 * E32 / 2.0);
        assert_eq!(gamma(1 << 24, E32), f64::INFINITY);
    }

    #[test]
    fn two_real_orders_of_a_sum_are_within_the_bound() {
        // 1e8 then a thousand ones: in order each 1 is lost (f32 spacing at 1e8 is 8);
        // the ones summed first survive. The difference is 1000, the bound about 1001·ε·(1e8 + 1000).
        let terms: Vec<f32> = std::iter::once(1e8_f32).chain(std::iter::repeat_n(1.0, 1000)).collect();
        let in_order = terms.iter().fold(0.0_f32, |a, t| a + t);
        let ones_first = terms[0] + terms[1..].iter().sum::<f32>();
        assert_eq!(in_order, 1e8);
        assert_eq!(ones_first, 1e8 + 1000.0);
        let abs_sum: f64 = terms.iter().map(|t| f64::from(t.abs())).sum();
        let n = terms.len() + 1;
        assert!(sums_agree(f64::from(in_order), f64::from(ones_first), n, abs_sum, E32, MAX32));
        // …and a difference the bound does not allow is refused.
        assert!(!sums_agree(1e8, 1e8 + 2.0 * sum_bound(n, abs_sum, E32), n, abs_sum, E32, MAX32));
    }

    #[test]
    fn special_values_must_match_exactly_when_nothing_overflows() {
        assert!(sums_agree(f64::NAN, f64::NAN, 3, 2.0, E32, MAX32));
        assert!(!sums_agree(f64::NAN, 1.0, 3, 2.0, E32, MAX32));
        assert!(sums_agree(f64::INFINITY, f64::INFINITY, 3, 2.0, E32, MAX32));
        assert!(!sums_agree(f64::INFINITY, 2.0, 3, 2.0, E32, MAX32));
        // 3e38 + 3e38 − 3e38 overflows in one order and not in another: no promise.
        assert!(sums_agree(f64::INFINITY, 3e38, 3, 9e38, E32, MAX32));
    }

    #[test]
    fn products_and_extrema() {
        assert!(products_agree(6.0, 6.0 * (1.0 + E32), 3, E32));
        assert!(!products_agree(6.0, 6.1, 3, E32));
        assert!(products_agree(f64::NAN, f64::NAN, 3, E32));
        assert!(extrema_agree(0.0, -0.0));
        assert!(extrema_agree(f64::NAN, f64::NAN));
        assert!(!extrema_agree(1.0, f64::NAN));
    }
}
