//! Every formula against libm's `f64` function rounded to `f32` (within 2⁻²⁹ ulp of
//! the correctly rounded result, far below the bounds checked): dense samples of the
//! whole `f32` line (every 2,048th bit pattern, about two million values, from an odd
//! offset per function), every special value and threshold, and where they differ
//! from the samples, the arguments where each formula changes branch. The bound for
//! every `f32` is measured by `cargo bench --bench vector_math`.

use super::*;

/// Bit patterns between samples: 2³² / 2,048 ≈ 2.1 million values per function.
const STRIDE: u64 = 2048;

/// The order of `x` among `f32`s (−0 and +0 adjacent), for ulp distances.
fn order(x: f32) -> i64 {
    let b = x.to_bits() as i32;
    i64::from(if b < 0 { i32::MIN.wrapping_sub(b) } else { b })
}

/// How many `f32`s `ours` is from `reference` rounded to nearest (∞ counts as the value
/// after `MAX`); 0 for NaN and NaN, `u64::MAX` where only one is NaN.
fn distance(ours: f32, reference: f64) -> u64 {
    let correct = reference as f32;
    if correct.is_nan() || ours.is_nan() {
        return if correct.is_nan() && ours.is_nan() { 0 } else { u64::MAX };
    }
    order(ours).abs_diff(order(correct))
}

/// The special values every function is checked at, besides its own thresholds.
fn specials() -> Vec<f32> {
    let mut v = vec![
        0.0,
        f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
        f32::MIN_POSITIVE,
        f32::EPSILON,
        0.5,
        1.0,
        2.0,
        std::f32::consts::FRAC_PI_4,
        std::f32::consts::FRAC_PI_2,
        std::f32::consts::PI,
        16_777_216.0,
        1e30,
        f32::MAX,
        f32::INFINITY,
    ];
    v.extend(v.clone().into_iter().map(|x| -x));
    v.push(f32::NAN);
    v.push(-f32::NAN);
    v
}

/// The largest distance of `f` from `reference` over the samples, `specials()` and `extra`,
/// with the argument where it occurs; panics if it exceeds `bound`.
fn check(name: &str, f: fn(f32) -> f32, reference: fn(f64) -> f64, extra: &[f32]) {
    let bound = u64::from(ulp_bound(name).expect("a listed function"));
    let offset = (0x9e37_79b9_u64.wrapping_mul(name.len() as u64 + 1) % STRIDE) | 1;
    let samples = (offset..1 << 32).step_by(STRIDE as usize).map(|b| f32::from_bits(b as u32));
    let mut count = 0;
    for x in samples.chain(specials()).chain(extra.iter().copied()) {
        // Thresholds are checked with their neighbours.
        let around = [f32::from_bits(x.to_bits().wrapping_sub(1)), x, f32::from_bits(x.to_bits().wrapping_add(1))];
        for x in around {
            let d = distance(f(x), reference(f64::from(x)));
            assert!(
                d <= bound,
                "{name}({x:e} = {:#x}) = {:e}, {d} ulp from {:e}",
                x.to_bits(),
                f(x),
                reference(f64::from(x))
            );
            count += 1;
        }
    }
    assert!(count > 6_000_000, "{name}: {count} values");
}

#[test]
fn exp_within_its_bound() {
    // Overflow at ln(MAX) ≈ 88.72, the clamps at 89 and −104, the last subnormal near −103.97.
    check("exp", exp, f64::exp, &[88.722_83, 88.722_84, 89.0, -87.336_55, -103.278_93, -103.972_08, -104.0, 1e-8]);
}

#[test]
fn exp2_within_its_bound() {
    check("exp2", exp2, f64::exp2, &[127.999_99, 128.0, -126.0, -149.0, -149.5, -150.0, -151.0, 0.5, -0.5]);
}

#[test]
fn ln_within_its_bound() {
    check("ln", ln, f64::ln, &[std::f32::consts::SQRT_2, std::f32::consts::FRAC_1_SQRT_2, std::f32::consts::E]);
}

#[test]
fn log2_within_its_bound() {
    check("log2", log2, f64::log2, &[std::f32::consts::SQRT_2, 1024.0, 3.0]);
}

#[test]
fn tanh_within_its_bound() {
    // The branch at 0.625; saturation to ±1 from about 9.01.
    check("tanh", tanh, f64::tanh, &[0.625, -0.625, 9.010_913, 44.0, 1e-20]);
}

#[test]
fn sin_and_cos_within_their_bounds_for_every_magnitude() {
    // Near multiples of π/2 (where the reduction cancels): the f32s closest to k·π/2.
    let near: Vec<f32> = (1..2000).map(|k| (f64::from(k) * std::f64::consts::FRAC_PI_2) as f32).collect();
    check("sin", sin, f64::sin, &near);
    check("cos", cos, f64::cos, &near);
}

/// `x^y` for `y` fixed.
fn pow_check(y: f32) {
    thread_local!(static Y: std::cell::Cell<f32> = const { std::cell::Cell::new(0.0) });
    Y.with(|c| c.set(y));
    let name = "powf";
    check(name, |x| powf(x, Y.with(|c| c.get())), |x| x.powf(f64::from(Y.with(|c| c.get()))), &[1.0, -1.0]);
}

#[test]
fn powf_within_its_bound_for_constant_exponents() {
    for y in [2.0, 0.5, -1.0, 2.2, 1.0 / 2.4, 3.0, -0.5, 1.5, -2.0, 1.0 / 3.0] {
        pow_check(y);
    }
}

#[test]
fn powf_special_values_are_libms() {
    let values = [0.0f32, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
    for x in values {
        for y in values.iter().copied().chain([2.2, -2.2, 1e10, -1e10, 1.5]) {
            let (ours, libm) = (powf(x, y), x.powf(y));
            assert!(
                ours.to_bits() == libm.to_bits()
                    || (ours.is_nan() && libm.is_nan())
                    || distance(ours, f64::from(x).powf(f64::from(y))) <= 1,
                "powf({x}, {y}) = {ours}, libm {libm}"
            );
        }
    }
}

#[test]
fn hypot_within_its_bound() {
    let bound = u64::from(ulp_bound("hypot").unwrap());
    let mut state = 0x2545_f491_u32;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        f32::from_bits(state)
    };
    for _ in 0..1_000_000 {
        let (a, b) = (next(), next());
        let d = distance(hypot(a, b), f64::from(a).hypot(f64::from(b)));
        assert!(d <= bound, "hypot({a:e}, {b:e})");
    }
    for a in specials() {
        for b in specials() {
            let (ours, libm) = (hypot(a, b), a.hypot(b));
            assert!(
                ours.to_bits() == libm.to_bits() || (ours.is_nan() && libm.is_nan()),
                "hypot({a}, {b}) = {ours}, libm {libm}"
            );
        }
    }
}

#[test]
fn special_values_are_libms_exactly() {
    // Where libm's result is a special value (±0, ±∞, NaN, ±1 from tanh), so is ours, sign included.
    type Pair = (&'static str, fn(f32) -> f32, fn(f32) -> f32);
    let functions: [Pair; 7] = [
        ("exp", exp, f32::exp),
        ("exp2", exp2, f32::exp2),
        ("ln", ln, f32::ln),
        ("log2", log2, f32::log2),
        ("tanh", tanh, f32::tanh),
        ("sin", sin, f32::sin),
        ("cos", cos, f32::cos),
    ];
    for (name, f, libm) in functions {
        for x in specials() {
            let (ours, theirs) = (f(x), libm(x));
            let special = theirs.is_nan() || theirs.is_infinite() || theirs == 0.0;
            if special {
                assert!(
                    ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
                    "{name}({x:e}) = {ours:e}, libm {theirs:e}"
                );
            }
        }
    }
}

#[test]
fn the_table_names_each_function_once() {
    for (i, (name, ulps)) in ULP_BOUNDS.iter().enumerate() {
        assert!(*ulps >= 1, "{name}");
        assert_eq!(ULP_BOUNDS.iter().position(|(n, _)| n == name), Some(i));
    }
    assert_eq!(ulp_bound("erf"), None);
}
