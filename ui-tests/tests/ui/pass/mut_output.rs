//! `&mut` outputs and `mut` parameters.
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low")]
fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

#[adaptive_kernel(complexity = "Low")]
fn push_twice(mut v: Vec<f32>, out: &mut Vec<f32>) {
    v.push(0.0);
    out.extend_from_slice(&v);
    out.extend_from_slice(&v);
}

fn main() {
    let x = [1.0_f32, 2.0];
    let mut y = [10.0_f32, 20.0];
    saxpy(2.0, &x, &mut y);
    saxpy::scalar(1.0, &x, &mut y);
    saxpy::simd(1.0, &x, &mut y);
    assert_eq!(y, [14.0, 28.0]);
    let mut out = Vec::new();
    push_twice(vec![1.0], &mut out);
    assert_eq!(out, [1.0, 0.0, 1.0, 0.0]);
}
