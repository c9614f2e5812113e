//! The exponentials, logarithms, `tanh`, `powf` and `hypot`: straight-line
//! formulas whose branches are selects, so that a loop calling them goes into
//! lanes.
//!
//! * `exp`, `exp2` and `tanh` are Cephes' `expf`, `exp2f` and `tanhf`
//!   (Moshier) in `f32`: `x = n·ln 2 + r` (or `n + r`), a polynomial for the
//!   reduced argument, and `2ⁿ` applied in two halves, so that results that
//!   overflow become ∞ and tiny ones round once to the right subnormal.
//! * `ln`, `log2`, `powf` and `hypot` work in `f64` and round once to `f32`:
//!   `ln x = e·ln 2 + 2·atanh((m − 1)/(m + 1))` with `m ∈ [√½, √2)`, its series
//!   to 2⁻⁵⁵; `xʸ = 2^(y·log₂ x)` with `2^t = 2ⁿ·e^(f·ln 2)` from its series;
//!   `hypot` from the exact squares. Their `f64` error is far below half an
//!   `f32` ulp, so each is correctly rounded but where the exact result lies
//!   within about 2⁻²⁹ ulp of a rounding boundary.
//!
//! Special values follow IEEE 754 (and so libm): NaN in, NaN out (but
//! `powf(1, NaN)` and `powf(NaN, 0)` are 1); comparisons with NaN are false,
//! so each clamp and select passes it through.

/// `a·b + c`, fused when `FMA` (the ops' clones that have the unit), else two roundings.
#[inline(always)]
pub(crate) fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// `2ⁿ` for `n` in −126..=127, from its exponent bits.
#[inline(always)]
fn pow2i(n: i32) -> f32 {
    f32::from_bits((n.wrapping_add(127) as u32) << 23)
}

/// 1.5·2²³: adding it to an `f32` of magnitude below 2²² rounds it to an integer,
/// held in the low mantissa bits.
const ROUND: f32 = 12_582_912.0;

/// `y·2ⁿ` for `n` in −151..=128, rounded once: each half is a normal power of two.
#[inline(always)]
fn scale(y: f32, n: i32) -> f32 {
    let n1 = n >> 1;
    y * pow2i(n1) * pow2i(n - n1)
}

/// `eˣ`: Cephes' `expf`.
#[inline(always)]
pub(crate) fn exp_lane<const FMA: bool>(x: f32) -> f32 {
    /// e^89 overflows f32; clamping here keeps `n` ≤ 128 and still yields ∞.
    const HI: f32 = 89.0;
    /// e^−104 rounds to 0; clamping here keeps `n` ≥ −150.
    const LO: f32 = -104.0;
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

    let x = if x > HI { HI } else { x };
    let x = if x < LO { LO } else { x };
    let t = madd::<FMA>(x, LOG2E, ROUND);
    let n = (t.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let nf = t - ROUND;
    let r = madd::<FMA>(nf, -LN2_HI, x);
    let r = madd::<FMA>(nf, -LN2_LO, r);
    let p = madd::<FMA>(madd::<FMA>(madd::<FMA>(madd::<FMA>(madd::<FMA>(P0, r, P1), r, P2), r, P3), r, P4), r, P5);
    let y = madd::<FMA>(p, r * r, r) + 1.0;
    scale(y, n)
}

/// `2ˣ`: Cephes' `exp2f`; `x = n + f` exactly, `2^f = 1 + f·P(f)` for |f| ≤ ½.
#[inline(always)]
pub(crate) fn exp2_lane(x: f32) -> f32 {
    /// 2^128 overflows.
    const HI: f32 = 128.0;
    /// 2^−151 rounds to 0.
    const LO: f32 = -151.0;
    const P0: f32 = 1.535_336_2e-4;
    const P1: f32 = 1.339_887_4e-3;
    const P2: f32 = 9.618_437e-3;
    const P3: f32 = 5.550_332_5e-2;
    const P4: f32 = 2.402_264_8e-1;
    const P5: f32 = 6.931_472e-1;

    let x = if x > HI { HI } else { x };
    let x = if x < LO { LO } else { x };
    let t = x + ROUND;
    let n = (t.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let f = x - (t - ROUND);
    let p = (((((P0 * f + P1) * f + P2) * f + P3) * f + P4) * f + P5) * f + 1.0;
    scale(p, n)
}

/// `tanh(x)`: Cephes' `tanhf`, an odd polynomial below 0.625, `1 − 2/(e^{2|x|} + 1)` above.
#[inline(always)]
pub(crate) fn tanh_lane<const FMA: bool>(x: f32) -> f32 {
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

/// √2, where the logarithm's mantissa is folded from `[1, 2)` into `[√½, √2)`.
const SQRT_2: f64 = std::f64::consts::SQRT_2;

/// `(e, ln m)` with `x = m·2ᵉ`, `m ∈ [√½, √2)`, for a positive finite `x` (an `f32`, so a
/// normal `f64`); other inputs give finite garbage, which the callers select away.
#[inline(always)]
fn log_parts(x: f64) -> (f64, f64) {
    const MANTISSA: u64 = (1 << 52) - 1;
    let bits = x.to_bits();
    let e = ((bits >> 52) as i32 & 0x7ff) - 1023;
    let m = f64::from_bits((bits & MANTISSA) | 1.0f64.to_bits());
    let big = m > SQRT_2;
    let m = if big { m * 0.5 } else { m };
    let e = e + i32::from(big);
    // ln m = 2·atanh(s) = 2s·(1 + s²/3 + s⁴/5 + …), |s| ≤ 0.1716: ten terms reach 2⁻⁵⁵.
    let s = (m - 1.0) / (m + 1.0);
    let z = s * s;
    let mut p = 1.0 / 19.0;
    p = p * z + 1.0 / 17.0;
    p = p * z + 1.0 / 15.0;
    p = p * z + 1.0 / 13.0;
    p = p * z + 1.0 / 11.0;
    p = p * z + 1.0 / 9.0;
    p = p * z + 1.0 / 7.0;
    p = p * z + 1.0 / 5.0;
    p = p * z + 1.0 / 3.0;
    let two_s = s + s;
    (f64::from(e), two_s + two_s * z * p)
}

/// A logarithm's result for `x`'s special values: −∞ at ±0, NaN below 0 and for NaN, ∞ at ∞.
#[inline(always)]
fn log_special(x: f32, r: f32) -> f32 {
    let r = if x == 0.0 { f32::NEG_INFINITY } else { r };
    let r = if x < 0.0 { f32::NAN } else { r };
    let r = if x == f32::INFINITY { x } else { r };
    if x.is_nan() {
        x
    } else {
        r
    }
}

/// `ln x`, in `f64`.
#[inline(always)]
pub(crate) fn ln_lane(x: f32) -> f32 {
    let (e, ln_m) = log_parts(f64::from(x));
    log_special(x, (e * std::f64::consts::LN_2 + ln_m) as f32)
}

/// `log₂ x`, in `f64`.
#[inline(always)]
pub(crate) fn log2_lane(x: f32) -> f32 {
    let (e, ln_m) = log_parts(f64::from(x));
    log_special(x, (e + ln_m * std::f64::consts::LOG2_E) as f32)
}

/// `log₂ x` in `f64` for `x = |f32|`: −∞ at 0, ∞ at ∞, NaN for NaN.
#[inline(always)]
fn log2_f64(x: f64) -> f64 {
    let (e, ln_m) = log_parts(x);
    let r = e + ln_m * std::f64::consts::LOG2_E;
    let r = if x == 0.0 { f64::NEG_INFINITY } else { r };
    let r = if x == f64::INFINITY { x } else { r };
    if x.is_nan() {
        x
    } else {
        r
    }
}

/// `2ᵗ` in `f64` for `t` in [−300, 300] (NaN passes): `2ⁿ·e^(f·ln 2)`, `|f| ≤ ½`, the series to 2⁻⁵³.
#[inline(always)]
fn exp2_f64(t: f64) -> f64 {
    /// 1.5·2⁵²: adding it rounds to an integer, held in the low mantissa bits.
    const ROUND64: f64 = 6_755_399_441_055_744.0;
    let r = t + ROUND64;
    let n = (r.to_bits() as i64).wrapping_sub(ROUND64.to_bits() as i64);
    let g = (t - (r - ROUND64)) * std::f64::consts::LN_2;
    // e^g for |g| ≤ 0.3466: Σ gᵏ/k! to k = 13.
    let mut p = 1.0 / 6_227_020_800.0;
    p = p * g + 1.0 / 479_001_600.0;
    p = p * g + 1.0 / 39_916_800.0;
    p = p * g + 1.0 / 3_628_800.0;
    p = p * g + 1.0 / 362_880.0;
    p = p * g + 1.0 / 40_320.0;
    p = p * g + 1.0 / 5_040.0;
    p = p * g + 1.0 / 720.0;
    p = p * g + 1.0 / 120.0;
    p = p * g + 1.0 / 24.0;
    p = p * g + 1.0 / 6.0;
    p = p * g + 0.5;
    p = p * g + 1.0;
    p = p * g + 1.0;
    p * f64::from_bits((n.wrapping_add(1023) as u64) << 52)
}

/// `xʸ`, as libm's `powf` defines it. `y` is a constant where the SIMD variant calls it,
/// so the tests on `y` fold away: 1, 2, −1 and ½ are one IEEE operation (correctly
/// rounded), every other exponent goes through `f64`.
#[inline(always)]
pub(crate) fn powf_lane(x: f32, y: f32) -> f32 {
    if y == 1.0 {
        return x;
    }
    if y == 2.0 {
        return x * x;
    }
    if y == -1.0 {
        return 1.0 / x;
    }
    if y == 0.5 {
        // `powf(−0, ½)` is +0 and `powf(−∞, ½)` is +∞, where `sqrt` gives −0 and NaN.
        return if x == f32::NEG_INFINITY { f32::INFINITY } else { x.sqrt() + 0.0 };
    }
    let t = f64::from(y) * log2_f64(f64::from(x.abs()));
    let t = if t > 300.0 { 300.0 } else { t };
    let t = if t < -300.0 { -300.0 } else { t };
    let r = exp2_f64(t) as f32;
    let integer = y.trunc() == y;
    let odd = integer && (y * 0.5).trunc() != y * 0.5;
    let r = if x.is_sign_negative() && odd { -r } else { r };
    // A finite negative base and a finite exponent that is not an integer: no real result.
    let r = if x < 0.0 && x.is_finite() && !integer { f32::NAN } else { r };
    let r = if x.abs() == 1.0 && y.is_infinite() { 1.0 } else { r };
    if x == 1.0 || y == 0.0 {
        1.0
    } else {
        r
    }
}

/// `√(a² + b²)` from the exact `f64` squares; ∞ when either is infinite, even with a NaN.
#[inline(always)]
pub(crate) fn hypot_lane(a: f32, b: f32) -> f32 {
    let (a64, b64) = (f64::from(a), f64::from(b));
    let r = (a64 * a64 + b64 * b64).sqrt() as f32;
    if a.is_infinite() || b.is_infinite() {
        f32::INFINITY
    } else {
        r
    }
}
