//! `name = "…"` sets the kernel's identity; `complexity` is case-insensitive.
#![deny(warnings)]

use adaptive_kernel::{adaptive_kernel, OpComplexity};

#[adaptive_kernel(complexity = "high", name = "linalg.gemv", size = a.len())]
fn gemv(a: &[f32], x: &[f32]) -> Vec<f32> {
    a.chunks(x.len()).map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum()).collect()
}

fn main() {
    assert_eq!(gemv::KERNEL.name(), "linalg.gemv");
    assert_eq!(gemv::KERNEL.complexity(), OpComplexity::High);
    assert_eq!(gemv(&[1.0, 2.0, 3.0, 4.0], &[1.0, 1.0]), [3.0, 7.0]);
}
