//! `sin` and `cos` for every `f32`, in lanes: an exact argument reduction by
//! π/2 for the whole range (Payne–Hanek, with the bits of 2/π tabulated per
//! exponent so that the reduction is a table read and a few `f64` products),
//! then musl's `f64` kernels for |r| ≤ π/4 (`__sindf`, `__cosdf`), rounded once
//! to `f32`.
//!
//! The reduction: an `f32` is `x = M·2ᴱ` with an integer `M < 2²⁴`. Then
//! `x·2/π mod 4 = M·G_E mod 4`, where `G_E = 2ᴱ·(2/π) mod 4` depends on the
//! exponent only. `G_E` is stored in three parts aligned to fixed weights
//! (`g₁` to 2⁻²⁷, `g₂` to 2⁻⁵⁶, `g₃` the rest, rounded to 53 bits), so that
//! `M·g₁` and `M·g₂` are exact in `f64` and the quadrant `j` and the fraction
//! `f = x·2/π − j`, `|f| ≤ ½`, come out with an error of about 2⁻⁸⁵ plus one
//! rounding relative to `f`, however close `x` is to a multiple of π/2 and
//! however large. No branch, only selects and one gathered table read, so the
//! whole range costs the same and vectorises. (Gathers are slow on CPUs that
//! mitigate gather data sampling: there an AVX2 loop of `sin` runs at about the
//! speed of libm's, an AVX-512 one 1.5× as fast; figures in BENCHMARKS.md.
//! A table-free reduction, shifting the window of 2/π's bits out of constant
//! words with selects, measured slower still; Cody–Waite alone, three times as
//! fast, is exact only below 2²⁰.)

/// The bits of 2/π after the binary point, 24 per entry (fdlibm's `ipio2`, checked
/// against a 1,200-bit computation): enough for every `f32` exponent.
const TWO_OVER_PI: [u32; 12] = [
    0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62, 0x95993C, 0x439041, 0xFE5163, 0xABDEBB, 0xC561B7,
    0x246E3A,
];

/// Bit `i` (from 1) of 2/π after the binary point.
const fn bit(i: i32) -> u64 {
    let k = (i - 1) as usize;
    ((TWO_OVER_PI[k / 24] >> (23 - k % 24)) & 1) as u64
}

/// `2ᵏ` for `k` in −1022..=1023.
const fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `Σ bitᵢ·2^(e−i)` for `i` in `lo..=hi` (at most 64 bits, `lo` ≥ 1), rounded to `f64`.
const fn window(e: i32, lo: i32, hi: i32) -> f64 {
    if hi < lo {
        return 0.0;
    }
    let mut v: u64 = 0;
    let mut i = lo;
    while i <= hi {
        v = (v << 1) | bit(i);
        i += 1;
    }
    (v as f64) * pow2(e - hi)
}

const fn max(a: i32, b: i32) -> i32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `G_E` in its three parts for the biased exponent `b` (`E = max(b, 1) − 150`).
const fn parts(b: i32) -> [f64; 3] {
    let e = max(b, 1) - 150;
    // Bit i of 2/π weighs 2^(e−i) in G_E; bits with weight ≥ 4 vanish mod 4.
    let lo1 = max(1, e - 1);
    let g1 = window(e, lo1, e + 27);
    let g2 = window(e, max(lo1, e + 28), e + 56);
    let lo3 = max(lo1, e + 57);
    [g1, g2, window(e, lo3, lo3 + 63)]
}

const fn table() -> [[f64; 3]; 256] {
    let mut t = [[0.0; 3]; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = parts(b as i32);
        b += 1;
    }
    t
}

/// `G_E` per biased exponent: see the module docs.
static G: [[f64; 3]; 256] = table();

/// 1.5·2⁵²: adding it to an `f64` of magnitude below 2⁵¹ rounds it to an integer (ties to
/// even), held in the low mantissa bits.
const ROUND64: f64 = 6_755_399_441_055_744.0;

/// `n` rounded to an integer, for |n| < 2⁵¹, without an instruction the baseline lacks.
#[inline(always)]
fn rint(n: f64) -> f64 {
    (n + ROUND64) - ROUND64
}

/// For `|x|` given by its bits: the quadrant `j mod 4` and `r = (x·2/π − j)·π/2`, |r| ≲ π/4.
#[inline(always)]
fn reduce(abs_bits: u32) -> (i32, f64) {
    let b = ((abs_bits >> 23) & 0xff) as usize;
    let mantissa = abs_bits & 0x7f_ffff;
    let m = if b == 0 { mantissa } else { mantissa | 0x80_0000 };
    let m = f64::from(m as i32);
    let g = &G[b];
    let p1 = m * g[0];
    let s1 = p1 - 4.0 * rint(p1 * 0.25);
    let p2 = m * g[1];
    let rounded = s1 + p2 + ROUND64;
    let j = rounded - ROUND64;
    let f = ((s1 - j) + p2) + m * g[2];
    // The quadrant from the rounded sum's low bits: `j as i32` saturates, which no vector
    // instruction does, and would take the loop out of lanes.
    ((rounded.to_bits() as i32) & 3, f * std::f64::consts::FRAC_PI_2)
}

/// sin r for |r| ≤ π/4 (musl's `__sindf`: |sin r/r − s(r)| < 2⁻³⁷·⁵).
#[inline(always)]
fn sin_kernel(x: f64) -> f64 {
    const S1: f64 = -0.166_666_666_416_265_24;
    const S2: f64 = 0.008_333_329_385_889_463;
    const S3: f64 = -0.000_198_393_348_360_966_32;
    const S4: f64 = 0.000_002_718_311_493_989_822;
    let z = x * x;
    let w = z * z;
    let r = S3 + z * S4;
    let s = z * x;
    (x + s * (S1 + z * S2)) + s * w * r
}

/// cos r for |r| ≤ π/4 (musl's `__cosdf`: |cos r − c(r)| < 2⁻³⁴·¹).
#[inline(always)]
fn cos_kernel(x: f64) -> f64 {
    const C0: f64 = -0.499_999_997_251_031;
    const C1: f64 = 0.041_666_623_323_739_06;
    const C2: f64 = -0.001_388_676_377_460_993;
    const C3: f64 = 0.000_024_390_448_796_277_41;
    let z = x * x;
    let w = z * z;
    let r = C2 + z * C3;
    ((1.0 + z * C0) + w * C1) + (w * z) * r
}

/// `sin x`.
#[inline(always)]
#[allow(clippy::eq_op)] // `x - x`: libm's NaN for ∞ and NaN
pub(crate) fn sin_lane(x: f32) -> f32 {
    let bits = x.to_bits();
    let (q, r) = reduce(bits & 0x7fff_ffff);
    let (s, c) = (sin_kernel(r), cos_kernel(r));
    let v = if q & 1 == 0 { s } else { c };
    let v = if q & 2 == 0 { v } else { -v };
    let v = if bits >> 31 == 0 { v } else { -v };
    // ∞ and NaN: NaN, as libm computes it (`x - x` keeps a NaN's payload).
    if x.is_finite() {
        v as f32
    } else {
        x - x
    }
}

/// `cos x`.
#[inline(always)]
#[allow(clippy::eq_op)] // `x - x`: libm's NaN for ∞ and NaN
pub(crate) fn cos_lane(x: f32) -> f32 {
    let (q, r) = reduce(x.to_bits() & 0x7fff_ffff);
    let (s, c) = (sin_kernel(r), cos_kernel(r));
    let v = if q & 1 == 0 { c } else { -s };
    let v = if q & 2 == 0 { v } else { -v };
    // ∞ and NaN: NaN, as libm computes it (`x - x` keeps a NaN's payload).
    if x.is_finite() {
        v as f32
    } else {
        x - x
    }
}
