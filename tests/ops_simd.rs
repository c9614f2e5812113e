//! The SIMD backend agrees with Scalar, op by op, on random inputs: lengths
//! 0..=300 and 1000..=4000 (so empty, single, odd and non-multiple-of-lane
//! lengths all occur), values from denormal to huge, both signed zeros, and
//! sometimes ±∞ or NaN. Every SIMD call is checked through the free function
//! and through each instruction set this CPU offers.
//!
//! The properties and their tolerances are in `ops_common/props.rs`, shared
//! with the other backends. Shape mismatches panic with Scalar's message in
//! every SIMD variant. Every `_into` form, in Scalar and in every SIMD
//! variant, gives its returning form's bits and overwrites all of `out`, and
//! an `out` of the wrong length panics with Scalar's message.

mod ops_common;

use ops_common::props::{self, agree, mismatch, twins};
use ops_common::Impl;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(48) }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn binary_elementwise_is_exact((a, b) in props::two(37)) {
        agree::binary_elementwise_is_exact(&Impl::simd_all(), &a, &b)?;
    }

    #[test]
    fn scale_is_exact(a in props::one(37), s in prop_oneof![props::finite(37), props::special()]) {
        agree::scale_is_exact(&Impl::simd_all(), &a, s)?;
    }

    #[test]
    fn relu_is_exact(a in props::one(37)) {
        agree::relu_is_exact(&Impl::simd_all(), &a)?;
    }

    #[test]
    fn axpy_is_exact((x, y) in props::two(37), alpha in prop_oneof![props::finite(37), props::special()]) {
        agree::axpy_is_exact(&Impl::simd_all(), alpha, &x, &y)?;
    }

    #[test]
    fn exp_sigmoid_tanh_within_a_few_ulp(a in props::one(37)) {
        agree::exp_sigmoid_tanh_within_a_few_ulp(&Impl::simd_all(), &a)?;
    }

    #[test]
    fn gelu_within_tanh_error(a in props::one(37)) {
        agree::gelu_within_tanh_error(&Impl::simd_all(), &a)?;
    }

    #[test]
    fn softmax_within_relative_tolerance(a in props::one(37)) {
        agree::softmax_within_relative_tolerance(&Impl::simd_all(), &a)?;
    }

    #[test]
    fn sum_and_mean_within_summation_bound(a in props::one(33)) {
        agree::sum_and_mean_within_summation_bound(&Impl::simd_all(), &a)?;
    }

    #[test]
    fn dot_within_summation_bound((a, b) in props::two(16)) {
        agree::dot_within_summation_bound(&Impl::simd_all(), &a, &b)?;
    }

    #[test]
    fn norm_l2_within_summation_bound(a in props::one(16)) {
        agree::norm_l2_within_summation_bound(&Impl::simd_all(), &a)?;
    }

    #[test]
    fn max_and_min_are_exact(a in props::one(37)) {
        agree::max_and_min_are_exact(&Impl::simd_all(), &a)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(32) })]

    #[test]
    fn matmul_within_summation_bound((a, b, m, n, k) in props::matmul_case()) {
        agree::matmul_within_summation_bound(&Impl::simd_all(), (&a, &b, m, n, k))?;
    }

    #[test]
    fn matvec_within_summation_bound((a, x, m, n) in props::matvec_case()) {
        agree::matvec_within_summation_bound(&Impl::simd_all(), (&a, &x, m, n))?;
    }

    #[test]
    fn transpose_is_exact((a, rows, cols) in props::transpose_case()) {
        agree::transpose_is_exact(&Impl::simd_all(), &a, rows, cols)?;
    }

    #[test]
    fn conv2d_is_exact((input, kernel, rows, cols, krows, kcols) in props::conv2d_case()) {
        agree::conv2d_is_exact(&Impl::simd_all(), (&input, &kernel, rows, cols, krows, kcols))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(24) })]

    #[test]
    fn length_mismatches_panic_like_scalar((la, lb) in (0usize..40).prop_flat_map(|la| (Just(la), props::wrong(la)))) {
        mismatch::lengths_panic_like_scalar(&Impl::simd_all(), la, lb)?;
    }

    #[test]
    fn matrix_shape_mismatches_panic_like_scalar(
        mnk in (0usize..6, 0usize..6, 0usize..6),
        which in 0usize..3,
        extra in 1usize..4,
    ) {
        mismatch::matrix_shapes_panic_like_scalar(&Impl::simd_all(), mnk, which, extra)?;
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn into_forms_give_the_returning_forms_bits((a, b) in props::two(37), s in prop_oneof![props::finite(37), props::special()]) {
        twins::elementwise(&Impl::scalar_and_simd(), &a, &b, s)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(32) })]

    #[test]
    fn matrix_into_forms_give_the_returning_forms_bits(
        (a, b, m, n, k) in props::matmul_case(),
        (ma, x, mm, mn) in props::matvec_case(),
        (t, rows, cols) in props::transpose_case(),
        (input, kernel, irows, icols, krows, kcols) in props::conv2d_case(),
    ) {
        let imps = Impl::scalar_and_simd();
        twins::matmul(&imps, (&a, &b, m, n, k))?;
        twins::matvec(&imps, (&ma, &x, mm, mn))?;
        twins::transpose(&imps, &t, rows, cols)?;
        twins::conv2d(&imps, (&input, &kernel, irows, icols, krows, kcols))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(24) })]

    #[test]
    fn wrong_out_lengths_panic_like_scalar(mnk in (0usize..6, 0usize..6, 0usize..6), extra in 1usize..4, shorter in any::<bool>()) {
        mismatch::wrong_out_lengths_panic_like_scalar(&Impl::simd_all(), mnk, extra, shorter)?;
    }
}

#[test]
fn empty_conv2d_kernel_and_overflowing_shapes_panic_like_scalar() {
    mismatch::degenerate_shapes_panic_like_scalar(&Impl::simd_all());
}
