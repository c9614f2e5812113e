// Functions shared by every shader module: those of the op backend (after
// common.wgsl) and those generated for plain loops (before loops.wgsl). No
// bindings here: each of those declares its own.
//
// NaN and infinities: WGSL lets an implementation assume no NaN or infinity
// occurs, so NaN tests here look at the bits (integer ops are never folded),
// and infinities are made with `bitcast` (WGSL has no infinity literal).

fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn nan() -> f32 {
    return bitcast<f32>(0x7fc00000u);
}

fn inf() -> f32 {
    return bitcast<f32>(0x7f800000u);
}

// max/min that return NaN when either side is NaN (WGSL's may return the other side).
fn max_nan(a: f32, b: f32) -> f32 {
    if (is_nan(a) || is_nan(b)) {
        return nan();
    }
    return max(a, b);
}

fn min_nan(a: f32, b: f32) -> f32 {
    if (is_nan(a) || is_nan(b)) {
        return nan();
    }
    return min(a, b);
}

// a / b. WGSL promises 2.5 ULP only for |b| in [2^-126, 2^126], and GPUs that
// divide as a·(1/b) flush 1/b to zero above that (3e38 / 3e38 would be 0), so
// huge divisors are scaled by 1/4 first (exact, and the quotient is unchanged).
fn div_full(a: f32, b: f32) -> f32 {
    if (abs(b) > 8.507059e37) {
        return (a * 0.25) / (b * 0.25);
    }
    return a / b;
}

// e^x within a few ULP over the whole f32 range. WGSL's `exp` only promises
// 3 + 2·|x| ULP (about 180 ULP near x = 88), so reduce first (Cody–Waite):
// x = n·ln2 + r with |r| ≤ ln2/2, e^x = 2^n · e^r, and `exp` sees only |r| ≤ 0.35.
// Results below 2^-126 may be flushed to zero (WGSL allows it).
fn exp_acc(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    if (x > 88.72283935546875) {
        return inf();
    }
    if (x < -103.97208404541016) {
        return 0.0;
    }
    let n = round(x * 1.4426950408889634);
    // ln2 split in a high part with 16 significant bits (n·hi is exact) and the rest.
    let r = (x - n * 0.693145751953125) - n * 1.428606765330187e-6;
    let e = exp(r);
    let ni = i32(n);
    // 2^n in two steps so neither factor leaves the normal range (n ∈ [-150, 128]).
    let half = ni / 2;
    return ldexp(ldexp(e, half), ni - half);
}

// tanh within a few ULP: an odd polynomial near zero (Cephes' tanhf, where
// 1 - 2/(e^2x + 1) would cancel), the exponential form elsewhere. WGSL's
// `tanh` is only specified as sinh/cosh, which loses all relative precision
// near 0 and is NaN for large |x| on some drivers.
fn tanh_acc(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    let ax = abs(x);
    if (ax < 0.625) {
        let z = x * x;
        let p = (((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z + 1.33314422036e-1) * z
            - 3.33332819422e-1;
        return p * z * x + x;
    }
    let t = 1.0 - 2.0 / (exp_acc(2.0 * ax) + 1.0);
    return select(t, -t, x < 0.0);
}
