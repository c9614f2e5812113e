//! Multiply-adds rounded once or twice: the contract between the Scalar variant
//! and a variant that may *fuse* `a*b + c`.
//!
//! The Scalar variant rounds the product, then the sum (Rust never contracts
//! the two). A GPU shader compiler may fuse them into one operation rounded
//! once, as [`f32::mul_add`] is (NVIDIA's does, for `y + alpha * x`; Mesa's
//! lavapipe never does), and so do SIMD kernels that call FMA instructions
//! (trueno's and faer's). Both are correct IEEE results of their formula, and
//! every variant other than Scalar may give either, multiply-add by
//! multiply-add. They differ in two ways:
//!
//! - **by one rounding of the product** where the product stays in range:
//!   `|fused − separate| ≤ ½·ulp(a·b)`. The tolerances count a multiply-add as
//!   two roundings, so this is within them (a Low kernel is allowed 8 per
//!   element, see [`crate::compare`]);
//! - **in class** where the product overflows when rounded on its own but not
//!   inside the fused operation (its exact value is finite):
//!
//! | `a`, `b`, `c` | separately rounded | fused |
//! | --- | --- | --- |
//! | `1e20`, `−1e20`, `+∞` | `−∞ + ∞` = NaN | `+∞` |
//! | `2e19`, `2e19`, `−3e38` | `+∞ − 3e38` = `+∞` | `1e38` |
//! | `a·b` just above `f32::MAX` (rounding down to it), `c` a little above zero | `f32::MAX` | `+∞` |
//!
//! A fused result is NaN only where the separately rounded one is too (a NaN
//! input, `∞·0`, or an input infinity meeting the opposite one), and a fused
//! `±∞` beside a finite separate result needs the product within one rounding
//! of the overflow threshold.
//!
//! WGSL also lets a GPU flush subnormal inputs and results to zero; that
//! moves a result by less than `f32::MIN_POSITIVE`, and the rule below allows it.
//!
//! # Where a class can change
//!
//! Only in `ops::` kernels: the SIMD and Parallel ones that use FMA
//! instructions, and the `ops::gpu` shaders (`axpy`, `dot`, `matvec`,
//! `matmul`, `conv2d`, `norm_l2`; their table is in `ops::gpu`'s docs), which
//! run on the device whatever values they meet.
//!
//! A loop the GPU variant runs as a generated shader (the macro reference's
//! "Loops on the GPU") never changes a class. A call whose float inputs hold a
//! NaN or an infinity runs on the host, and so does one in which the shader
//! computes one: every `+ − × /`, `mul_add`, `sqrt`, `exp`, `ln`, `powi`,
//! `powf` and `recip` result is tested bit-wise, and so is every divisor (a
//! driver may fold `0 / b` before the result's test). The exception is a
//! constant the body names by path (`f32::INFINITY`, where a compare-and-keep
//! loop starts), which goes to the device as it is. Such a loop's NaN and
//! infinities are therefore Scalar's, bit for bit, and its finite results differ
//! from Scalar's by roundings only:
//!
//! - `a*b + c` may be fused: within one rounding of the product, as above;
//! - `a.mul_add(b, c)` may round its product (WGSL's `fma` is only as accurate
//!   as `a*b + c`): the reverse of fusion, `|device − Scalar| ≤ ½·ulp(a·b)`.
//!   Where the rounded product overflows (Scalar's `(-b).mul_add(-a.mul_add(s,
//!   b*b), 1.0)` is `+∞` for `a = −3.4e38`, `b = ∞`, and the product rounded
//!   first would give NaN), the device meets an infinity and the call runs on
//!   the host.
//!
//! So the class table below is never needed for a generated loop, and never
//! wrong for one: [`results_agree`], which `verify` applies to every variant,
//! accepts everything a generated loop can give, and the GPU loops' tests and
//! the differential tester (`difftest/`) hold them to the stricter rule.
//!
//! # The rule
//!
//! *With the inputs* ([`agrees`]): a result of `a*b + c` is right when it
//! matches one of [`evaluations`] of `a, b, c` or of the inputs with
//! subnormals flushed ([`flush`]): NaN matches NaN, an infinity the same
//! infinity, and a finite value one within the caller's tolerance plus
//! `f32::MIN_POSITIVE`. The GPU op tests check element-wise ops (`axpy`) so.
//!
//! *From results alone* ([`results_agree`]), which is what `verify` sees: a
//! variant's element agrees with Scalar's when both are NaN or equal, when
//! both are finite and within the tolerance, or when the difference in class
//! is one fusion can cause:
//!
//! | Scalar's element | the variant's may also be |
//! | --- | --- |
//! | NaN | `+∞` or `−∞` (the infinity of `c`; a product that overflowed met it) |
//! | `±∞` | any finite value (the product did not overflow when fused) |
//! | finite, within the tolerance of `±MAX` | the infinity of its sign |
//!
//! The same holds for a chain of multiply-adds (a dot product, a matrix
//! product, a convolution: each step may be fused or not), with two cases
//! that results alone cannot tell from a wrong answer and that `verify`
//! therefore reports as disagreements (false exclusions, at f32's overflow
//! threshold only): two products of opposite signs that both overflow when
//! rounded on their own (Scalar NaN, fused finite), and a partial sum within
//! one rounding of `MAX` that later terms bring back into range (Scalar
//! finite, fused `±∞`). Under heavy cancellation (`a·b ≈ −c` with `|a·b|` far
//! above every result) one rounding of the product can exceed the rounding
//! bound `verify` estimates from the results; the attribute's `tolerance = …`
//! then sets a relative bound ([`crate::compare`] says the same of reordered
//! sums).
//!
//! What the rule does not excuse: a finite result where Scalar's is NaN (a
//! NaN dropped), a NaN where Scalar's is an infinity or finite, or the
//! opposite infinity.

/// The two correct values of `a*b + c` in `f32`: `[separately rounded, fused]`
/// (the product rounded, then the sum; and [`f32::mul_add`], rounded once).
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::fusion::evaluations;
///
/// let [separate, fused] = evaluations(2e19, 2e19, -3e38);
/// assert_eq!(separate, f32::INFINITY); // 2e19·2e19 overflows when rounded on its own
/// assert_eq!(fused, 1e38);
/// assert!(evaluations(1e20, -1e20, f32::INFINITY)[0].is_nan());
/// ```
pub fn evaluations(a: f32, b: f32, c: f32) -> [f32; 2] {
    [a * b + c, a.mul_add(b, c)]
}

/// `x` with a subnormal flushed to zero of the same sign, as WGSL lets a GPU
/// treat subnormal inputs and results; any other value unchanged.
pub fn flush(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// Whether `result` is a right value of `a*b + c` under the contract (see the
/// module docs): it matches one of [`evaluations`] of the inputs as given or
/// with subnormals [flushed](flush), NaN only NaN, an infinity only the same
/// infinity, a finite value one within `tolerance + f32::MIN_POSITIVE` (which
/// also admits a flushed result).
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::fusion::agrees;
///
/// // y + alpha·x with alpha·x overflowing on its own: NaN rounded twice, +∞ fused.
/// let (alpha, x, y) = (1e20f32, -1e20f32, f32::INFINITY);
/// assert!(agrees(f32::NAN, alpha, x, y, 0.0));
/// assert!(agrees(f32::INFINITY, alpha, x, y, 0.0));
/// assert!(!agrees(0.0, alpha, x, y, 0.0));
/// ```
pub fn agrees(result: f32, a: f32, b: f32, c: f32, tolerance: f64) -> bool {
    let as_given = evaluations(a, b, c);
    let flushed = evaluations(flush(a), flush(b), flush(c));
    as_given.iter().chain(&flushed).any(|&expected| matches(result, expected, tolerance))
}

/// `got` matches `expected`: NaN only NaN, an infinity only itself, finite values
/// within `tolerance + f32::MIN_POSITIVE`.
fn matches(got: f32, expected: f32, tolerance: f64) -> bool {
    if got.is_nan() || expected.is_nan() {
        return got.is_nan() && expected.is_nan();
    }
    if got.is_infinite() || expected.is_infinite() {
        return got == expected;
    }
    (f64::from(got) - f64::from(expected)).abs() <= tolerance + f64::from(f32::MIN_POSITIVE)
}

/// Whether a variant's result element `variant` agrees with the Scalar variant's
/// `scalar` when neither the inputs nor the products are known (what `verify`
/// compares): equal, or both NaN; both finite and at most `allowed` apart; or a
/// difference in class that fusing multiply-adds can cause (the table in the
/// module docs). `max` is the element type's largest finite value (`f32::MAX` as
/// `f64` for `f32` results).
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::fusion::results_agree;
///
/// let max = f32::MAX as f64;
/// assert!(results_agree(f64::INFINITY, f64::NAN, 1e-6, max)); // fused, where Scalar met ∞ − ∞
/// assert!(results_agree(1e38, f64::INFINITY, 1e-6, max)); // fused, where Scalar's product overflowed
/// assert!(!results_agree(0.0, f64::NAN, 1e-6, max)); // a NaN dropped
/// ```
pub fn results_agree(variant: f64, scalar: f64, allowed: f64, max: f64) -> bool {
    if variant == scalar || (variant.is_nan() && scalar.is_nan()) {
        return true;
    }
    if variant.is_finite() && scalar.is_finite() {
        return (variant - scalar).abs() <= allowed;
    }
    explains(variant, scalar, allowed, max)
}

/// Whether fusion explains a difference in class between `variant` and `scalar`
/// (at least one of them NaN or infinite, and not equal).
fn explains(variant: f64, scalar: f64, allowed: f64, max: f64) -> bool {
    if scalar.is_nan() {
        variant.is_infinite()
    } else if scalar.is_infinite() {
        variant.is_finite()
    } else {
        // Scalar finite, the variant NaN or infinite: only an infinity past a Scalar
        // result within the tolerance of the overflow threshold, of the same sign.
        variant.is_infinite() && variant.signum() == scalar.signum() && max - scalar.abs() <= allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: f64 = f32::MAX as f64;
    const INF: f32 = f32::INFINITY;

    /// A device that fuses: `mul_add`. Scalar: rounded twice.
    fn pair(a: f32, b: f32, c: f32) -> (f64, f64) {
        let [separate, fused] = evaluations(a, b, c);
        (f64::from(fused), f64::from(separate))
    }

    #[test]
    fn the_two_evaluations_differ_where_the_product_overflows_alone() {
        assert_eq!(pair(1e20, -1e20, INF).0, f64::INFINITY);
        assert!(pair(1e20, -1e20, INF).1.is_nan());
        assert_eq!(pair(2e19, 2e19, -3e38), (1e38f32 as f64, f64::INFINITY));
        // In range: the same value, or one rounding of the product apart.
        let (fused, separate) = pair(1.1, 3.3, -3.63);
        assert!((fused - separate).abs() <= f64::from(f32::EPSILON) * 3.63);
    }

    #[test]
    fn a_simulated_fused_device_agrees_with_inputs_and_without() {
        let cases = [
            (1e20, -1e20, INF),
            (2e19, 2e19, -3e38),
            (-2e19, 2e19, 3e38),
            JUST_PAST_MAX,
            (1.5, 2.5, -1.0),
            (f32::NAN, 1.0, 2.0),
            (INF, 0.0, 1.0),
        ];
        for (a, b, c) in cases {
            let (fused, separate) = pair(a, b, c);
            assert!(agrees(fused as f32, a, b, c, 0.0), "{a} {b} {c}: fused {fused}");
            assert!(agrees(separate as f32, a, b, c, 0.0), "{a} {b} {c}: separate {separate}");
            // The scale `compare` would take: the finite result's magnitude, at least 1 (MAX past an overflow).
            let scale = if separate.is_finite() { separate.abs().max(1.0) } else { MAX };
            let allowed = crate::tolerance::sum_bound(9, scale, f64::from(f32::EPSILON));
            assert!(results_agree(fused, separate, allowed, MAX), "{a} {b} {c}: fused {fused}, scalar {separate}");
        }
    }

    /// `a·b` exactly between `MAX` and the overflow threshold (`MAX` + ½ ulp), nearer
    /// the threshold than 2⁹⁴: rounded alone it is `MAX`, and `MAX + c` is `MAX`; fused
    /// with `c` = 2⁹⁴ it passes the threshold.
    const JUST_PAST_MAX: (f32, f32, f32) =
        (8_390_057.0 * (1u64 << 40) as f32, 16_774_318.0 * (1u64 << 41) as f32, (1u128 << 94) as f32);

    #[test]
    fn a_product_just_past_max_fuses_to_infinity_beside_a_finite_scalar() {
        let (a, b, c) = JUST_PAST_MAX;
        let (fused, separate) = pair(a, b, c);
        assert_eq!((fused, separate), (f64::INFINITY, MAX));
        assert!(results_agree(fused, separate, 16.0 * f64::from(f32::EPSILON) * MAX, MAX));
        assert!(!results_agree(f64::INFINITY, 1e30, 1e20, MAX), "far below MAX: no fusion overflows there");
    }

    #[test]
    fn what_fusion_does_not_explain_is_refused() {
        assert!(!results_agree(0.0, f64::NAN, 1.0, MAX), "a NaN dropped");
        assert!(!results_agree(f64::NAN, f64::INFINITY, 1.0, MAX));
        assert!(!results_agree(f64::NAN, 3.0, 1.0, MAX));
        assert!(!results_agree(f64::NEG_INFINITY, f64::INFINITY, 1.0, MAX), "the opposite infinity");
        assert!(!results_agree(f64::NEG_INFINITY, MAX, 1e32, MAX), "the infinity of the other sign");
        assert!(!results_agree(2.0, 1.0, 0.5, MAX), "finite values beyond the tolerance");
        assert!(!agrees(0.0, 1e20, -1e20, INF, 0.0));
        assert!(!agrees(f32::NEG_INFINITY, 2e19, 2e19, -3e38, 0.0));
        assert!(!agrees(1.0, 1.5, 2.5, -1.0, 1e-3), "2.75 is right");
    }

    #[test]
    fn flushed_subnormals_are_admitted() {
        let tiny = f32::MIN_POSITIVE / 8.0;
        assert_eq!(flush(tiny), 0.0);
        assert!(flush(-tiny).is_sign_negative());
        assert_eq!(flush(1.0), 1.0);
        // A device that flushes the subnormal input `c` gives a·b alone.
        assert!(agrees(2.0, 1.0, 2.0, tiny, 0.0));
        assert!(agrees(0.0, tiny, 0.5, 0.0, 0.0), "a subnormal product flushed");
    }

    /// The issue's `mul_add` case: a device that rounds `mul_add`'s product (WGSL's `fma`
    /// may) would give NaN where Scalar gives `+∞`. The rule does not excuse it, and a
    /// generated GPU loop never gives it: `b = ∞`, or any product that overflows when
    /// rounded, sends the call to the host.
    #[test]
    fn a_mul_add_that_rounds_its_product_changes_no_class_the_rule_excuses() {
        let (a, b, s) = (-3.4e38f32, INF, 2.0f32);
        let scalar = (-b).mul_add(-a.mul_add(s, b * b), 1.0);
        let rounded = (-b) * -(a * s + b * b) + 1.0;
        assert_eq!(scalar, INF);
        assert!(rounded.is_nan());
        assert!(!results_agree(f64::from(rounded), f64::from(scalar), 1e-6, MAX));
    }
}
