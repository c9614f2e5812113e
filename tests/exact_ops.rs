//! `exact`: every variant of an `exact` kernel returns the Scalar variant's bits for
//! the whole body, its `ops::` calls included, on inputs whose rounding depends on the
//! order of the operations (mixed magnitudes, a million values). Each variant that
//! exists is called directly and forced through the router; the GPU variant does not
//! exist (a forced GPU runs the SIMD fallback).

mod common;

use adaptive_kernel::{adaptive_kernel, ops, with_backend, Backend, Kernel};

#[adaptive_kernel(complexity = "Medium", exact)]
fn total(x: &[f32]) -> f32 {
    ops::sum(x)
}

#[adaptive_kernel(complexity = "Medium", exact)]
fn inner(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b)
}

#[adaptive_kernel(complexity = "Medium", exact)]
fn average(x: &[f32]) -> f32 {
    ops::mean(x)
}

#[adaptive_kernel(complexity = "Medium", exact)]
fn length(x: &[f32]) -> f32 {
    ops::norm_l2(x)
}

#[adaptive_kernel(complexity = "High", exact)]
fn apply(a: &[f32], x: &[f32], m: usize, n: usize) -> Vec<f32> {
    ops::matvec(a, x, m, n)
}

#[adaptive_kernel(complexity = "High", exact)]
fn product(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    ops::matmul(a, b, m, n, k)
}

/// A body of several ops, element-wise and reducing.
#[adaptive_kernel(complexity = "Medium", exact)]
fn score(a: &[f32], b: &[f32]) -> f32 {
    let s = ops::add(a, b);
    let e = ops::exp(&ops::scale(&s, 1e-7));
    ops::dot(&e, a) + ops::max(&s)
}

/// Values of mixed magnitudes, whose sum (or dot product) rounds differently in any
/// other order: every third is ±1e7, the others small and varied.
fn mixed(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| {
            let h = (i ^ seed).wrapping_mul(2_654_435_761);
            match i % 3 {
                0 if h & 1 == 0 => 1e7,
                0 => -1e7,
                _ => (h >> 8) as f32 / (1 << 24) as f32 * 3.0 + 0.1,
            }
        })
        .collect()
}

const N: usize = 1 << 20;

fn bits(x: f32) -> u32 {
    x.to_bits()
}

fn all_bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Every backend, forced through the router (scope and `Kernel::force`), gives `want`'s bits.
fn forced_on_every_backend<R: PartialEq + std::fmt::Debug>(kernel: &'static Kernel, want: R, call: impl Fn() -> R) {
    assert!(!kernel.has_gpu(), "{}: no GPU op keeps Scalar's bits", kernel.name());
    assert!(kernel.has_parallel(), "{}", kernel.name());
    for b in Backend::ALL {
        let got = with_backend(b, &call);
        assert_eq!(got, want, "{} forced onto {b:?} by a scope", kernel.name());
        let last = adaptive_kernel::last_route().expect("routed");
        let ran = if b == Backend::Gpu { Backend::Simd } else { b };
        assert_eq!(last.backend, ran, "{}: a forced GPU runs the SIMD fallback", kernel.name());
        kernel.force(Some(b));
        assert_eq!(call(), want, "{} forced onto {b:?} by Kernel::force", kernel.name());
        kernel.force(None);
    }
    assert_eq!(call(), want, "{} routed", kernel.name());
}

#[test]
fn the_inputs_round_differently_in_another_order() {
    let (x, y) = (mixed(N, 1), mixed(N, 2));
    assert_ne!(bits(ops::simd::sum(&x)), bits(ops::scalar::sum(&x)), "lanes");
    assert_ne!(bits(ops::par::sum(&x)), bits(ops::scalar::sum(&x)), "chunks");
    assert_ne!(bits(ops::simd::dot(&x, &y)), bits(ops::scalar::dot(&x, &y)), "lanes");
}

#[test]
fn reductions_give_scalars_bits_on_every_variant() {
    common::no_history();
    let (x, y) = (mixed(N, 1), mixed(N, 2));

    let want = bits(total::scalar(&x));
    assert_eq!((bits(total::simd(&x)), bits(total::parallel(&x))), (want, want));
    forced_on_every_backend(&total::KERNEL, want, || bits(total(&x)));

    let want = bits(inner::scalar(&x, &y));
    assert_eq!((bits(inner::simd(&x, &y)), bits(inner::parallel(&x, &y))), (want, want));
    forced_on_every_backend(&inner::KERNEL, want, || bits(inner(&x, &y)));

    let want = bits(average::scalar(&x));
    assert_eq!((bits(average::simd(&x)), bits(average::parallel(&x))), (want, want));
    forced_on_every_backend(&average::KERNEL, want, || bits(average(&x)));

    let want = bits(length::scalar(&x));
    assert_eq!((bits(length::simd(&x)), bits(length::parallel(&x))), (want, want));
    forced_on_every_backend(&length::KERNEL, want, || bits(length(&x)));

    let want = bits(score::scalar(&x, &y));
    assert_eq!((bits(score::simd(&x, &y)), bits(score::parallel(&x, &y))), (want, want));
    forced_on_every_backend(&score::KERNEL, want, || bits(score(&x, &y)));
}

#[test]
fn matrix_products_give_scalars_bits_on_every_variant() {
    common::no_history();
    // Large enough that the Parallel variant splits them into bands across the pool.
    let (m, n) = (512, 2048);
    let (a, x) = (mixed(m * n, 3), mixed(n, 4));
    let want = all_bits(&apply::scalar(&a, &x, m, n));
    assert_eq!(all_bits(&apply::simd(&a, &x, m, n)), want);
    assert_eq!(all_bits(&apply::parallel(&a, &x, m, n)), want);
    assert_ne!(all_bits(&ops::simd::matvec(&a, &x, m, n)), want, "the input rounds differently in lanes");
    forced_on_every_backend(&apply::KERNEL, want, || all_bits(&apply(&a, &x, m, n)));

    let (m, n, k) = (96, 40, 2048);
    let (a, b) = (mixed(m * k, 5), mixed(k * n, 6));
    let want = all_bits(&product::scalar(&a, &b, m, n, k));
    assert_eq!(all_bits(&product::simd(&a, &b, m, n, k)), want);
    assert_eq!(all_bits(&product::parallel(&a, &b, m, n, k)), want);
    assert_ne!(all_bits(&ops::simd::matmul(&a, &b, m, n, k)), want, "the input rounds differently in a GEMM");
    forced_on_every_backend(&product::KERNEL, want, || all_bits(&product(&a, &b, m, n, k)));
}

#[test]
fn the_exact_op_sets_split_what_keeps_each_elements_order() {
    // More than one band on two threads: the split runs, and still gives Scalar's bits.
    ops::par::with_threads(3, || {
        let (m, n, k) = (64, 48, 1024);
        let (a, b) = (mixed(m * k, 7), mixed(k * n, 8));
        let want = all_bits(&ops::scalar::matmul(&a, &b, m, n, k));
        assert_eq!(all_bits(&ops::exact::par::matmul(&a, &b, m, n, k)), want);
        let mut out = vec![f32::NAN; m * n];
        ops::exact::par::matmul_into(&a, &b, m, n, k, &mut out);
        assert_eq!(all_bits(&out), want);
        let x = mixed(N, 9);
        for (got, want) in [
            (ops::exact::par::exp(&ops::scalar::scale(&x, 1e-7)), ops::scalar::exp(&ops::scalar::scale(&x, 1e-7))),
            (
                ops::exact::par::softmax(&ops::scalar::scale(&x, 1e-6)),
                ops::scalar::softmax(&ops::scalar::scale(&x, 1e-6)),
            ),
            (ops::exact::par::add(&x, &x), ops::scalar::add(&x, &x)),
        ] {
            assert_eq!(all_bits(&got), all_bits(&want));
        }
        let img = mixed(300 * 200, 10);
        let kern = mixed(25, 11);
        let want = all_bits(&ops::scalar::conv2d(&img, &kern, 300, 200, 5, 5));
        assert_eq!(all_bits(&ops::exact::par::conv2d(&img, &kern, 300, 200, 5, 5)), want);
        assert!(ops::exact::par::conv2d(&img[..8], &kern, 2, 4, 5, 5).is_empty(), "a kernel larger than the input");
        let mut y = x.clone();
        let mut want = x.clone();
        ops::exact::par::axpy(0.3, &x, &mut y);
        ops::scalar::axpy(0.3, &x, &mut want);
        assert_eq!(all_bits(&y), all_bits(&want));
    });
}
