//! Reduction-shaped loops and chains the SIMD variant leaves as written, one
//! per reason: each compiles warning-free, reports why, and its SIMD variant
//! computes bit for bit what its Scalar variant computes (same order).
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;
use std::iter::Sum;
use std::ops::AddAssign;

/// A user type with its own `+=` on `f32`: not provably an f32 addition.
#[derive(Clone, Copy)]
struct Meters(f32);

impl AddAssign<Meters> for f32 {
    fn add_assign(&mut self, m: Meters) {
        *self = *self * 0.5 + m.0;
    }
}

/// A user type `.sum()` can produce.
#[derive(Debug, PartialEq)]
struct Total(f32);

impl<'a> Sum<&'a f32> for Total {
    fn sum<I: Iterator<Item = &'a f32>>(iter: I) -> Total {
        Total(iter.fold(0.0, |a, b| a * 0.5 + b))
    }
}

fn helper(v: f32) -> f32 {
    v * 3.0
}

#[adaptive_kernel(complexity = "Low")]
fn until_negative(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        if *v < 0.0 {
            break;
        }
        s += v;
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn skip_zeros(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        if *v == 0.0 {
            s -= 0.5;
            continue;
        }
        s += v;
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn early_return(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        if v.is_nan() {
            return -1.0;
        }
        s += v;
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn parsed(x: &[f32], text: &str) -> Result<f32, std::num::ParseFloatError> {
    let mut s = 0.0f32;
    for v in x {
        let scale: f32 = text.parse()?;
        s += v * scale;
    }
    Ok(s)
}

#[adaptive_kernel(complexity = "Low")]
fn labelled(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    'outer: for v in x {
        s += v;
        if s > 1e9 {
            break 'outer;
        }
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn with_macro(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        debug_assert!(!v.is_nan() || v.is_nan());
        s += v;
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn reads_accumulator(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        s += v * 0.5 + s * 0.25;
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn stores(x: &[f32], last: &mut f32) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        *last = *v;
        s += v;
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn calls(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        s += helper(*v);
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn integers(x: &[u32], n: usize) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        s += u64::from(x[i]);
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn user_add_assign(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        s += Meters(*v);
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn unknown_start(x: &[f32]) -> f32 {
    let mut s = helper(1.0);
    for v in x {
        s += v;
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn mixed(x: &[f32]) -> f32 {
    let mut s = 1.0f32;
    for v in x {
        s += v;
        s *= 0.5;
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn shadowed(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        let mut s = *v;
        s += 1.0;
        let _ = s;
    }
    s += 1.0;
    s
}

#[adaptive_kernel(complexity = "Low")]
fn reversed(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x.iter().rev() {
        s += v;
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn user_sum(x: &[f32]) -> Total {
    x.iter().sum()
}

#[adaptive_kernel(complexity = "Low")]
fn subtracting_fold(x: &[f32]) -> f32 {
    x.iter().fold(100.0f32, |a, v| a - v)
}

#[adaptive_kernel(complexity = "Low")]
fn integer_chain(x: &[u64]) -> u64 {
    x.iter().sum()
}

#[adaptive_kernel(complexity = "Low")]
fn pushes(x: &[f32], seen: &mut Vec<f32>) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        seen.push(*v);
        s += v;
    }
    s
}

#[adaptive_kernel(complexity = "Low")]
fn fold_calls(x: &[f32]) -> f32 {
    x.iter().fold(0.0f32, |a, v| a + helper(*v))
}

#[adaptive_kernel(complexity = "Low", exact)]
fn exact(x: &[f32]) -> f32 {
    x.iter().map(|v| v * v).sum::<f32>()
}

fn main() {
    // 100 values with rounding to lose: a regrouped sum would differ in the low bits.
    let x: Vec<f32> = (1..=100).map(|i| 1.0 / i as f32 + 1e4 * (i % 3) as f32).collect();
    let same = |a: f32, b: f32| assert_eq!(a.to_bits(), b.to_bits());
    same(until_negative::simd(&x), until_negative::scalar(&x));
    same(skip_zeros::simd(&x), skip_zeros::scalar(&x));
    same(early_return::simd(&x), early_return::scalar(&x));
    same(parsed::simd(&x, "1.5").unwrap(), parsed::scalar(&x, "1.5").unwrap());
    same(labelled::simd(&x), labelled::scalar(&x));
    same(with_macro::simd(&x), with_macro::scalar(&x));
    same(reads_accumulator::simd(&x), reads_accumulator::scalar(&x));
    let (mut a, mut b) = (0.0, 0.0);
    same(stores::simd(&x, &mut a), stores::scalar(&x, &mut b));
    same(a, b);
    same(calls::simd(&x), calls::scalar(&x));
    let ints: Vec<u32> = (0..100).collect();
    assert_eq!(integers::simd(&ints, 100), integers::scalar(&ints, 100));
    same(user_add_assign::simd(&x), user_add_assign::scalar(&x));
    same(unknown_start::simd(&x), unknown_start::scalar(&x));
    same(mixed::simd(&x), mixed::scalar(&x));
    same(shadowed::simd(&x), shadowed::scalar(&x));
    same(reversed::simd(&x), reversed::scalar(&x));
    assert_eq!(user_sum::simd(&x), user_sum::scalar(&x));
    same(subtracting_fold::simd(&x), subtracting_fold::scalar(&x));
    same(exact::simd(&x), exact::scalar(&x));
    let longs: Vec<u64> = (0..100).collect();
    assert_eq!(integer_chain::simd(&longs), integer_chain::scalar(&longs));
    let (mut seen_simd, mut seen_scalar) = (Vec::new(), Vec::new());
    same(pushes::simd(&x, &mut seen_simd), pushes::scalar(&x, &mut seen_scalar));
    assert_eq!(seen_simd, seen_scalar);
    same(fold_calls::simd(&x), fold_calls::scalar(&x));

    let reasons = [
        (until_negative::KERNEL.spec().loops, "break"),
        (skip_zeros::KERNEL.spec().loops, "continue"),
        (early_return::KERNEL.spec().loops, "return"),
        (parsed::KERNEL.spec().loops, "try"),
        (labelled::KERNEL.spec().loops, "label"),
        (with_macro::KERNEL.spec().loops, "macro"),
        (reads_accumulator::KERNEL.spec().loops, "reads"),
        (stores::KERNEL.spec().loops, "effect"),
        (calls::KERNEL.spec().loops, "type"),
        (integers::KERNEL.spec().loops, "type"),
        (user_add_assign::KERNEL.spec().loops, "type"),
        (unknown_start::KERNEL.spec().loops, "type"),
        (mixed::KERNEL.spec().loops, "mixed"),
        (shadowed::KERNEL.spec().loops, "shadow"),
        (reversed::KERNEL.spec().loops, "source"),
        (user_sum::KERNEL.spec().loops, "type"),
        (subtracting_fold::KERNEL.spec().loops, "op"),
        (integer_chain::KERNEL.spec().loops, "source"),
        (pushes::KERNEL.spec().loops, "effect"),
        (fold_calls::KERNEL.spec().loops, "type"),
        (exact::KERNEL.spec().loops, "exact"),
    ];
    for (loops, reason) in reasons {
        assert_eq!(loops.len(), 1, "{reason}: {loops:?}");
        assert!(!loops[0].rewritten() && loops[0].reason == reason, "{reason}: {loops:?}");
    }

    // The routed calls compile and run too.
    let _ = (until_negative(&x), skip_zeros(&x), early_return(&x), parsed(&x, "2"), labelled(&x));
    let _ = (with_macro(&x), reads_accumulator(&x), stores(&x, &mut a), calls(&x), integers(&ints, 100));
    let _ = (user_add_assign(&x), unknown_start(&x), mixed(&x), shadowed(&x), reversed(&x));
    let _ = (user_sum(&x), subtracting_fold(&x), exact(&x));
    let _ = (integer_chain(&longs), pushes(&x, &mut seen_simd), fold_calls(&x));
}
