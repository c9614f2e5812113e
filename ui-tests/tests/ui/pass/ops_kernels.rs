//! Bodies that call `ops::…`: each variant binds `ops` to its backend's op set, the
//! user's `use adaptive_kernel::ops;` counts as used, and the kernel has a GPU variant.
#![deny(warnings)]

use adaptive_kernel::{adaptive_kernel, ops};

#[adaptive_kernel(complexity = "High", size = m * k + k * n, flops = 2 * m * n * k)]
fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    ops::matmul(a, b, m, n, k)
}

#[adaptive_kernel(complexity = "Medium", bytes = (x.len() * 4) as u64)]
fn normalised(x: &[f32]) -> Vec<f32> {
    let norm = ops::norm_l2(x);
    // Inside a macro call too.
    assert!(norm.is_finite(), "{}", ops::sum(x));
    ops::scale(x, 1.0 / norm)
}

fn main() {
    let c = matmul(&[1.0, 2.0, 3.0, 4.0], &[1.0, 0.0, 0.0, 1.0], 2, 2, 2);
    assert_eq!(c, [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(matmul::gpu(&[2.0], &[3.0], 1, 1, 1), [6.0]);
    assert!(matmul::KERNEL.has_gpu() && normalised::KERNEL.has_gpu());
    assert_eq!(normalised(&[0.0, 2.0]), [0.0, 1.0]);
}
