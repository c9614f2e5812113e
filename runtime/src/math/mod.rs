//! Vector math: branch-free `f32` formulas for `exp`, `exp2`, `ln`, `log2`,
//! `tanh`, `sin`, `cos`, `powf` and `hypot` that a compiler puts in lanes,
//! each with its error bound ([`ULP_BOUNDS`]).
//!
//! libm's functions are calls, and a call stops the loop around it from
//! vectorising: a softmax that calls `f32::exp` per element runs one element
//! at a time whatever else the loop does. The SIMD and Parallel variants of
//! an `#[adaptive_kernel]` call these instead, inside the loops they put in
//! lanes, for calls on `f32` values (`x.exp()`, `f32::exp(x)`, `x.powf(2.2)`
//! with a constant exponent, `a.hypot(b)`); the Scalar variant keeps libm, and
//! `exact` keeps libm in every variant. `f64` calls keep libm everywhere.
//! You may call them in your own loops too.
//!
//! Each is one straight-line formula of IEEE operations, `#[inline(always)]`,
//! with no fused multiply-add, so it gives the same bits in every instruction
//! set and on every CPU; special values (±0, subnormals, ±∞, NaN, overflow
//! and underflow) are those of libm. How far each is from the exact result is
//! [`ULP_BOUNDS`], the one statement of it: the SIMD variant's tolerance
//! ([`crate::compare::Tolerance`]) and the loop report read it from there.
//!
//! The formulas: [`exp`], [`exp2`] and [`tanh`] are Cephes' `expf`, `exp2f`
//! and `tanhf` in `f32`; [`ln`], [`log2`], [`powf`] and [`hypot`] work in
//! `f64` and round once; [`sin`] and [`cos`] reduce the argument by π/2
//! exactly for every `f32` (no loss of accuracy for large arguments) and
//! evaluate musl's `f64` kernels.

mod exp_log;
mod trig;

pub(crate) use exp_log::{exp_lane, tanh_lane};

/// How far each function of this module may be from the correctly rounded
/// result, in units in the last place: for every `f32` argument (every pair
/// of arguments for `hypot`, every exponent for `powf`), the result is at most
/// this many representable `f32` values away from the exact result rounded to
/// nearest. Subnormal results count in subnormal ulps, and every special value
/// (NaN, ±∞, ±0) is exactly libm's.
///
/// Each bound is the largest error measured over every `f32` (run `cargo bench
/// --bench vector_math`; the figures are in BENCHMARKS.md) and is checked on
/// dense samples of the whole domain by the crate's tests.
pub const ULP_BOUNDS: [(&str, u32); 9] =
    [("exp", 1), ("exp2", 1), ("ln", 1), ("log2", 1), ("tanh", 1), ("sin", 1), ("cos", 1), ("powf", 1), ("hypot", 1)];

/// The bound of [`ULP_BOUNDS`] for the function `name` (`"exp"`, `"sin"`, …), or
/// `None` for a name it does not list.
pub fn ulp_bound(name: &str) -> Option<u32> {
    ULP_BOUNDS.iter().find(|(n, _)| *n == name).map(|&(_, ulps)| ulps)
}

/// `eˣ`, like `f32::exp`; within [`ULP_BOUNDS`]' `exp` of the exact result.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    exp_log::exp_lane::<false>(x)
}

/// `2ˣ`, like `f32::exp2`.
#[inline(always)]
pub fn exp2(x: f32) -> f32 {
    exp_log::exp2_lane(x)
}

/// The natural logarithm, like `f32::ln`.
#[inline(always)]
pub fn ln(x: f32) -> f32 {
    exp_log::ln_lane(x)
}

/// The base-2 logarithm, like `f32::log2`.
#[inline(always)]
pub fn log2(x: f32) -> f32 {
    exp_log::log2_lane(x)
}

/// The hyperbolic tangent, like `f32::tanh`.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    exp_log::tanh_lane::<false>(x)
}

/// The sine, like `f32::sin`, for every `f32`.
#[inline(always)]
pub fn sin(x: f32) -> f32 {
    trig::sin_lane(x)
}

/// The cosine, like `f32::cos`, for every `f32`.
#[inline(always)]
pub fn cos(x: f32) -> f32 {
    trig::cos_lane(x)
}

/// `xʸ`, like `f32::powf`. Meant for a constant `y` (what the SIMD variant replaces):
/// `y` = 1, 2, −1 and ½ are then one IEEE operation, and the tests on `y` cost nothing.
#[inline(always)]
pub fn powf(x: f32, y: f32) -> f32 {
    exp_log::powf_lane(x, y)
}

/// `√(x² + y²)` without overflow or underflow on the way, like `f32::hypot`.
#[inline(always)]
pub fn hypot(x: f32, y: f32) -> f32 {
    exp_log::hypot_lane(x, y)
}

#[cfg(test)]
mod tests;
