//! `unsafe fn` kernels: the wrapper and every variant are `unsafe fn`.
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;

/// # Safety
/// `i < x.len()`.
#[adaptive_kernel(complexity = "Low")]
unsafe fn get_unchecked(x: &[f32], i: usize) -> f32 {
    // SAFETY: the caller promises `i < x.len()`.
    unsafe { *x.get_unchecked(i) }
}

/// # Safety
/// `i < x.len()`.
unsafe fn get_simd(x: &[f32], i: usize) -> f32 {
    // SAFETY: the caller promises `i < x.len()`.
    unsafe { *x.get_unchecked(i) }
}

/// # Safety
/// `i < x.len()`.
#[adaptive_kernel(complexity = "Low", simd = get_simd)]
unsafe fn get_explicit(x: &[f32], i: usize) -> f32 {
    // SAFETY: the caller promises `i < x.len()`.
    unsafe { *x.get_unchecked(i) }
}

fn main() {
    let x = [1.0_f32, 2.0];
    // SAFETY: 1 < 2.
    unsafe {
        assert_eq!(get_unchecked(&x, 1), 2.0);
        assert_eq!(get_unchecked::scalar(&x, 1), 2.0);
        assert_eq!(get_unchecked::simd(&x, 1), 2.0);
        assert_eq!(get_explicit(&x, 1) + get_explicit::simd(&x, 0), 3.0);
    }
}
