use adaptive_kernel::{adaptive_kernel, ops};

/// C = A·B, row-major f32; A is m×k, B is k×n.
#[adaptive_kernel(complexity = "High", size = m * k + k * n, flops = 2 * m * n * k)]
pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    ops::matmul(a, b, m, n, k)
}
