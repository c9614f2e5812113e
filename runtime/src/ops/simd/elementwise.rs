//! Memory-bound element-wise ops ([`OpClass::Stream`](super::OpClass::Stream)):
//! `add`, `sub`, `mul`, `div`, `scale`, `relu`, `axpy`.
//!
//! Each is a plain loop compiled per instruction set by `multiversion!`; the
//! compiler turns it into the same load/op/store sequence trueno's
//! `VectorBackend` kernels spell out with intrinsics. They are our own loops,
//! not trueno's, because they write into the output's uninitialised capacity
//! (trueno's take an initialised `&mut [f32]`, and zeroing it first cost more
//! than the Scalar op at 64K–1M elements; BENCHMARKS.md), because trueno's
//! `relu` turns NaN into 0, and because trueno has no `axpy`.
//!
//! Every result is bit-identical to Scalar: the same IEEE operation per
//! element, with no fused multiply-add.

use std::mem::MaybeUninit;

use super::buffer::filled;
use super::At;
use crate::ops::check;

/// Defines a kernel writing `out[i] = $f(a[i], b[i])`.
macro_rules! binary_kernel {
    ($name:ident, |$x:ident, $y:ident| $f:expr) => {
        multiversion! {
            fn $name<const FMA: bool>(a: &[f32], b: &[f32], out: &mut [MaybeUninit<f32>]) {
                for ((o, &$x), &$y) in out.iter_mut().zip(a).zip(b) {
                    o.write($f);
                }
            }
        }
    };
}

binary_kernel!(add_kernel, |x, y| x + y);
binary_kernel!(sub_kernel, |x, y| x - y);
binary_kernel!(mul_kernel, |x, y| x * y);
binary_kernel!(div_kernel, |x, y| x / y);

multiversion! {
    fn scale_kernel<const FMA: bool>(a: &[f32], s: f32, out: &mut [MaybeUninit<f32>]) {
        for (o, &x) in out.iter_mut().zip(a) {
            o.write(x * s);
        }
    }
}

multiversion! {
    fn relu_kernel<const FMA: bool>(a: &[f32], out: &mut [MaybeUninit<f32>]) {
        for (o, &x) in out.iter_mut().zip(a) {
            // The same select as Scalar: NaN fails `x > 0` but passes `is_nan`, so it stays.
            o.write(if x > 0.0 || x.is_nan() { x } else { 0.0 });
        }
    }
}

multiversion! {
    fn axpy_kernel<const FMA: bool>(alpha: f32, x: &[f32], y: &mut [f32]) {
        for (yi, &xi) in y.iter_mut().zip(x) {
            // Multiply, then add: two roundings, as Scalar does, so results are bit-identical.
            *yi += alpha * xi;
        }
    }
}

impl At {
    /// `a[i] + b[i]` at this level.
    ///
    /// # Panics
    /// If `a` and `b` differ in length.
    #[track_caller]
    pub fn add(self, a: &[f32], b: &[f32]) -> Vec<f32> {
        check::same_len("add", a.len(), b.len());
        // SAFETY: the kernel writes `out[i]` for every `i` of `out.iter_mut().zip(a).zip(b)`,
        // and `out`, `a` and `b` all have `a.len()` elements (checked above).
        unsafe { filled(a.len(), |out| add_kernel(self, a, b, out)) }
    }

    /// `a[i] - b[i]` at this level.
    ///
    /// # Panics
    /// If `a` and `b` differ in length.
    #[track_caller]
    pub fn sub(self, a: &[f32], b: &[f32]) -> Vec<f32> {
        check::same_len("sub", a.len(), b.len());
        // SAFETY: as in `add`: three slices of `a.len()` elements, one write per element.
        unsafe { filled(a.len(), |out| sub_kernel(self, a, b, out)) }
    }

    /// `a[i] * b[i]` at this level.
    ///
    /// # Panics
    /// If `a` and `b` differ in length.
    #[track_caller]
    pub fn mul(self, a: &[f32], b: &[f32]) -> Vec<f32> {
        check::same_len("mul", a.len(), b.len());
        // SAFETY: as in `add`: three slices of `a.len()` elements, one write per element.
        unsafe { filled(a.len(), |out| mul_kernel(self, a, b, out)) }
    }

    /// `a[i] / b[i]` at this level.
    ///
    /// # Panics
    /// If `a` and `b` differ in length.
    #[track_caller]
    pub fn div(self, a: &[f32], b: &[f32]) -> Vec<f32> {
        check::same_len("div", a.len(), b.len());
        // SAFETY: as in `add`: three slices of `a.len()` elements, one write per element.
        unsafe { filled(a.len(), |out| div_kernel(self, a, b, out)) }
    }

    /// `a[i] * s` at this level.
    pub fn scale(self, a: &[f32], s: f32) -> Vec<f32> {
        // SAFETY: `out` and `a` both have `a.len()` elements; the kernel writes each `out[i]`.
        unsafe { filled(a.len(), |out| scale_kernel(self, a, s, out)) }
    }

    /// `max(a[i], 0)` at this level; NaN stays NaN.
    pub fn relu(self, a: &[f32]) -> Vec<f32> {
        // SAFETY: `out` and `a` both have `a.len()` elements; the kernel writes each `out[i]`.
        unsafe { filled(a.len(), |out| relu_kernel(self, a, out)) }
    }

    /// `y[i] += alpha * x[i]` at this level.
    ///
    /// # Panics
    /// If `x` and `y` differ in length.
    #[track_caller]
    pub fn axpy(self, alpha: f32, x: &[f32], y: &mut [f32]) {
        check::same_len("axpy", x.len(), y.len());
        axpy_kernel(self, alpha, x, y);
    }
}
