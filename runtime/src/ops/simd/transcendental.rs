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
//! `exp` is Cephes' `expf` (Moshier): `x = n·ln 2 + r` with |r| ≤ ln 2 / 2, a
//! degree-5 polynomial for `e^r`, and `2^n` applied in two halves so that
//! results that overflow become ∞ and tiny ones round to the right denormal.
//! `tanh` is Cephes' `tanhf`: an odd polynomial below 0.625, `1 − 2/(e^{2|x|}+1)`
//! above. NaN propagates through every formula (comparisons with NaN are
//! false, so the clamps and branch selects pass it through).

use super::{At, OpClass};
use crate::ops::check;
use crate::ops::out::{producing, written, Slot};

/// `a·b + c`, fused where the clone has an FMA unit (`FMA`), else two roundings.
#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// `2^n` for `n` in −126..=127, built from its exponent bits.
#[inline(always)]
fn pow2i(n: i32) -> f32 {
    f32::from_bits((n.wrapping_add(127) as u32) << 23)
}

/// `e^x`: see the module docs.
#[inline(always)]
fn exp_lane<const FMA: bool>(x: f32) -> f32 {
    /// e^89 overflows f32; clamping here keeps `n` ≤ 128 and still yields ∞.
    const HI: f32 = 89.0;
    /// e^−104 rounds to 0; clamping here keeps `n` ≥ −150.
    const LO: f32 = -104.0;
    /// 1.5·2^23: adding it rounds a float of magnitude < 2^22 to an integer, which
    /// then sits in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 in two parts (Cody–Waite): n·LN2_HI is exact for |n| ≤ 2^15.
    const LN2_HI: f32 = 0.693_359_4; // = 0.693359375 = 355/512 exactly
    const LN2_LO: f32 = -2.121_944_4e-4;
    const P0: f32 = 1.987_569_1e-4;
    const P1: f32 = 1.398_199_9e-3;
    const P2: f32 = 8.333_452e-3;
    const P3: f32 = 4.166_579_6e-2;
    const P4: f32 = 1.666_666_5e-1;
    const P5: f32 = 0.5; // Cephes' 5.0000001201e-1 rounds to 0.5 in f32

    // Comparisons with NaN are false, so NaN passes both clamps unchanged.
    let x = if x > HI { HI } else { x };
    let x = if x < LO { LO } else { x };
    let t = madd::<FMA>(x, LOG2E, ROUND);
    let n = (t.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let nf = t - ROUND;
    let r = madd::<FMA>(nf, -LN2_HI, x);
    let r = madd::<FMA>(nf, -LN2_LO, r);
    let p = madd::<FMA>(madd::<FMA>(madd::<FMA>(madd::<FMA>(madd::<FMA>(P0, r, P1), r, P2), r, P3), r, P4), r, P5);
    let y = madd::<FMA>(p, r * r, r) + 1.0;
    // n ∈ −150..=128: each half is a normal power of two, and the second product rounds once.
    let n1 = n >> 1;
    y * pow2i(n1) * pow2i(n - n1)
}

/// `tanh(x)`: see the module docs.
#[inline(always)]
fn tanh_lane<const FMA: bool>(x: f32) -> f32 {
    const SMALL: f32 = 0.625;
    const T0: f32 = -5.704_988_7e-3;
    const T1: f32 = 2.063_909e-2;
    const T2: f32 = -5.373_971_6e-2;
    const T3: f32 = 1.333_144_2e-1;
    const T4: f32 = -3.333_328e-1;

    let ax = x.abs();
    let z = x * x;
    let p = madd::<FMA>(madd::<FMA>(madd::<FMA>(madd::<FMA>(T0, z, T1), z, T2), z, T3), z, T4);
    let small = madd::<FMA>(p * z, ax, ax);
    // For large |x| the exponential overflows to ∞ and this becomes exactly 1.
    let large = 1.0 - 2.0 / (exp_lane::<FMA>(ax + ax) + 1.0);
    // NaN fails `ax < SMALL`, takes the `large` formula, and stays NaN; copysign keeps −0.
    (if ax < SMALL { small } else { large }).copysign(x)
}

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
