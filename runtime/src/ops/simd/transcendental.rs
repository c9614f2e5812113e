//! Arithmetic-bound element-wise ops ([`OpClass::Transcendental`](super::OpClass::Transcendental)):
//! `exp`, `sigmoid`, `tanh`, `gelu`, and `softmax`, which is built on `exp`.
//!
//! trueno has no usable SIMD kernel for these: its AVX2 backend calls libm
//! once per element, and the polynomial of its SSE2 backend (the AVX-512 one
//! has the same construction) builds `2^n` from an unclamped integer and is
//! off by about 1% in range: run here, `Sse2Backend::exp` gives −2.3e−34 for
//! `exp(100)` and 20.26 for `exp(3)` (20.09), and its `tanh(50)` is −1. So each
//! op here is one branch-free scalar formula, `#[inline(always)]`, in a loop
//! that `multiversion!` compiles per instruction set; the compiler vectorises
//! it (compares become masks, the `if`s blends).
//!
//! The formulas are the runtime's vector math ([`crate::math`]: Cephes' `expf`
//! and `tanhf`), here with fused multiply-adds in the clones that have them;
//! the SIMD variants of annotated kernels call the same formulas without.

use super::{At, OpClass};
use crate::math::{exp_lane, tanh_lane};
use crate::ops::check;
use crate::ops::out::{producing, written, Slot};

multiversion! {
    fn exp_kernel<const FMA: bool>(a: &[f32], out: &mut [Slot]) {
        for (o, &x) in out.iter_mut().zip(a) {
            o.set(exp_lane::<FMA>(x));
        }
    }
}

multiversion! {
    fn sigmoid_kernel<const FMA: bool>(a: &[f32], out: &mut [Slot]) {
        for (o, &x) in out.iter_mut().zip(a) {
            o.set(1.0 / (1.0 + exp_lane::<FMA>(-x)));
        }
    }
}

multiversion! {
    fn tanh_kernel<const FMA: bool>(a: &[f32], out: &mut [Slot]) {
        for (o, &x) in out.iter_mut().zip(a) {
            o.set(tanh_lane::<FMA>(x));
        }
    }
}

multiversion! {
    fn gelu_kernel<const FMA: bool>(a: &[f32], out: &mut [Slot]) {
        const SQRT_2_OVER_PI: f32 = 0.797_884_6;
        for (o, &x) in out.iter_mut().zip(a) {
            // Scalar's expression, operation for operation, with our tanh.
            o.set(0.5 * x * (1.0 + tanh_lane::<FMA>(SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x))));
        }
    }
}

multiversion! {
    /// `out[i] = e^(a[i] − m)`.
    fn exp_shifted_kernel<const FMA: bool>(a: &[f32], m: f32, out: &mut [Slot]) {
        for (o, &x) in out.iter_mut().zip(a) {
            o.set(exp_lane::<FMA>(x - m));
        }
    }
}

multiversion! {
    /// `v[i] /= s`: a division, as Scalar's softmax does, not a multiplication by `1/s`.
    fn div_in_place_kernel<const FMA: bool>(v: &mut [f32], s: f32) {
        for x in v.iter_mut() {
            *x /= s;
        }
    }
}

/// `out[i] = e^(a[i] − m)`, at the transcendental class's level: softmax's
/// exponentials, the same bits as `exp` of `a[i] − m`, for `ops::par`'s chunks.
pub(crate) fn exp_shifted_slots(a: &[f32], m: f32, out: &mut [Slot]) {
    assert_eq!(a.len(), out.len(), "exp_shifted_slots: a chunk and its output differ in length");
    exp_shifted_kernel(At::for_class(OpClass::Transcendental), a, m, out);
}

/// Defines `At::$name`, `At::$into` and `At::$slots` for a unary kernel.
macro_rules! unary_op {
    ($name:ident / $into:ident / $slots:ident, $kernel:ident, $doc:literal) => {
        producing! {
            #[doc = $doc]
            pub fn $name / $into / $slots(self, a: &[f32])
            check: shape = check::unary(stringify!($name), a.len()),
            // Sets every slot: `out` and `a` have the same length.
            kernel: |out| $kernel(self, a, out)
        }
    };
}

impl At {
    unary_op!(exp / exp_into / exp_slots, exp_kernel, "`e^a[i]` at this level.");
    unary_op!(sigmoid / sigmoid_into / sigmoid_slots, sigmoid_kernel, "`1 / (1 + e^(−a[i]))` at this level.");
    unary_op!(tanh / tanh_into / tanh_slots, tanh_kernel, "`tanh(a[i])` at this level.");
    unary_op!(gelu / gelu_into / gelu_slots, gelu_kernel, "GELU (tanh approximation) at this level.");

    producing! {
        /// Softmax at this level: our `max`, `e^(x − max)`, trueno's `sum`, then
        /// one division per element, the same four steps as Scalar.
        pub fn softmax / softmax_into / softmax_slots(self, a: &[f32])
        check: shape = check::unary("softmax", a.len()),
        kernel: |out| {
            if !a.is_empty() {
                let m = self.max(a);
                exp_shifted_kernel(self, a, m, out);
                // SAFETY: the kernel set every slot: `out` and `a` have the same length.
                let e = unsafe { written(out) };
                let s = self.sum(e);
                div_in_place_kernel(self, e, s);
            }
        }
    }
}
