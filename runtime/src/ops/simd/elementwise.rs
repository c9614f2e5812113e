//! Memory-bound element-wise ops ([`OpClass::Stream`](super::OpClass::Stream)):
//! `add`, `sub`, `mul`, `div`, `scale`, `relu`, `axpy`.
//!
//! Each is a plain loop compiled per instruction set by `multiversion!`; the
//! compiler turns it into the same load/op/store sequence trueno's
//! `VectorBackend` kernels spell out with intrinsics. They are our own loops,
//! not trueno's, because they write slots (`ops/out.rs`: the caller's slice
//! or a fresh output's uninitialised capacity; trueno's take an initialised
//! `&mut [f32]`, and zeroing a fresh one first cost more than the Scalar op at
//! 64K–1M elements; BENCHMARKS.md), because trueno's `relu` turns NaN into
//! 0, and because trueno has no `axpy`. Each op has its returning form and
//! its `_into` form, one kernel behind both.
//!
//! Every result is bit-identical to Scalar: the same IEEE operation per
//! element, with no fused multiply-add.

use super::At;
use crate::ops::check;
use crate::ops::out::{producing, Slot};

/// Defines a kernel writing `out[i] = $f(a[i], b[i])`.
macro_rules! binary_kernel {
    ($name:ident, |$x:ident, $y:ident| $f:expr) => {
        multiversion! {
            fn $name<const FMA: bool>(a: &[f32], b: &[f32], out: &mut [Slot]) {
                for ((o, &$x), &$y) in out.iter_mut().zip(a).zip(b) {
                    o.set($f);
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
    fn scale_kernel<const FMA: bool>(a: &[f32], s: f32, out: &mut [Slot]) {
        for (o, &x) in out.iter_mut().zip(a) {
            o.set(x * s);
        }
    }
}

multiversion! {
    fn relu_kernel<const FMA: bool>(a: &[f32], out: &mut [Slot]) {
        for (o, &x) in out.iter_mut().zip(a) {
            // The same select as Scalar: NaN fails `x > 0` but passes `is_nan`, so it stays.
            o.set(if x > 0.0 || x.is_nan() { x } else { 0.0 });
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

/// Defines `At::$name`, `At::$into` and `At::$slots` for a binary kernel.
macro_rules! binary_op {
    ($name:ident / $into:ident / $slots:ident, $kernel:ident, $doc:literal) => {
        producing! {
            #[doc = $doc]
            ///
            /// # Panics
            /// If `a` and `b` differ in length.
            pub fn $name / $into / $slots(self, a: &[f32], b: &[f32])
            check: shape = check::binary(stringify!($name), a.len(), b.len()),
            // Sets every slot: `out`, `a` and `b` have the same length (checked).
            kernel: |out| $kernel(self, a, b, out)
        }
    };
}

impl At {
    binary_op!(add / add_into / add_slots, add_kernel, "`a[i] + b[i]` at this level.");
    binary_op!(sub / sub_into / sub_slots, sub_kernel, "`a[i] - b[i]` at this level.");
    binary_op!(mul / mul_into / mul_slots, mul_kernel, "`a[i] * b[i]` at this level.");
    binary_op!(div / div_into / div_slots, div_kernel, "`a[i] / b[i]` at this level.");

    producing! {
        /// `a[i] * s` at this level.
        pub fn scale / scale_into / scale_slots(self, a: &[f32], s: f32)
        check: shape = check::unary("scale", a.len()),
        // Sets every slot: `out` and `a` have the same length.
        kernel: |out| scale_kernel(self, a, s, out)
    }

    producing! {
        /// `max(a[i], 0)` at this level; NaN stays NaN.
        pub fn relu / relu_into / relu_slots(self, a: &[f32])
        check: shape = check::unary("relu", a.len()),
        // Sets every slot: `out` and `a` have the same length.
        kernel: |out| relu_kernel(self, a, out)
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
