//! Any return type: scalars, tuples, `Result`, `Option`, unit.
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Medium")]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[adaptive_kernel(complexity = "Medium")]
fn min_max(x: &[f32]) -> (f32, f32) {
    x.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| (lo.min(*v), hi.max(*v)))
}

#[adaptive_kernel(complexity = "Low")]
fn checked_first(x: &[f32]) -> Result<f32, String> {
    x.first().copied().ok_or_else(|| "empty".to_string())
}

#[adaptive_kernel(complexity = "Low", size = 1)]
fn constant() -> u64 {
    42
}

// Arrays count towards the default size too (4 + 2 elements).
#[adaptive_kernel(complexity = "Low")]
fn sum_arrays(a: [f32; 4], b: &[f32; 2]) -> f32 {
    a.iter().chain(b).sum()
}

/// A vector type of the user's, named `Vec`.
mod own {
    /// The user's vector: no `Comparable` for `verify`.
    pub struct Vec<T>(pub std::vec::Vec<T>);
}

// A result of the user's `Vec` (not std's) is no plainly verifiable one: no comparison is
// written for it, and the kernel compiles.
#[adaptive_kernel(complexity = "Low")]
fn doubled(x: &[f32]) -> own::Vec<f32> {
    own::Vec(x.iter().map(|v| v * 2.0).collect())
}

fn main() {
    assert_eq!(dot(&[1.0, 2.0], &[3.0, 4.0]), 11.0);
    assert_eq!(doubled(&[1.5]).0, [3.0]);
    assert_eq!(min_max(&[3.0, -1.0, 2.0]), (-1.0, 3.0));
    assert_eq!(checked_first(&[]), Err("empty".to_string()));
    assert_eq!(constant() + constant::scalar() + constant::simd(), 126);
    assert_eq!(sum_arrays([1.0; 4], &[2.0; 2]), 8.0);
}
