// The prelude of every shader `#[adaptive_kernel]` generates from a plain loop
// (ops/gpu/loops): after math.wgsl, before the generated part. It holds what
// the runtime and the generated code agree on (bindings, the uniform layout,
// the status word) and Rust's meaning of what WGSL leaves open.
//
// Bindings (explicit layout, see loops/exec.rs):
//   0 lp_u       the call's uniforms: 64 vec4<u32> words (below)
//   1 lp_status  word 0: status bits (LP_PANIC, LP_HOST); then each workgroup's
//                partial results, `1 + group * reductions + r`
//   2 + k        the k-th slice the loop reads or writes (declared by the
//                generated part with its element type and access)
//
// Uniform words: 0 the first invocation of this dispatch, 1 the invocations of
// the call (units of the loop), 2 a range loop's start, 3 zero (see lp_fin), then one
// length per slice, then the loop's arguments (captured scalars, constants,
// row widths), in the order the generated part declares them
// (`LP_BINDINGS`: how many slices it binds).
//
// Status: a shader cannot panic, so what would panic in Rust (an index out of
// bounds, a sub-slice past its slice, `clamp` with min > max, an integer
// division by zero) sets LP_PANIC, and what the device cannot compute as the
// host would (a usize beyond u32, `sin` of a huge argument) sets LP_HOST. The
// host reads the status before it copies any result back; any bit makes it
// run the loop on the CPU instead, which panics where Rust panics.
//
// NaN and infinities: WGSL lets an implementation assume that no float value is
// NaN or infinite, and Vulkan drivers apply the algebra that allows (Mesa's
// lavapipe folds `x * 0.0` to 0 and `x != x` to false even for x = ∞ or NaN).
// So the host runs every call whose float inputs hold one, and every float
// operation that can create one (+ − × /, mul_add, sqrt, exp, ln, powi, powf,
// recip) goes through lp_fin, a bit test the driver cannot fold, which sets
// LP_SPECIAL: a call in which one arises runs on the host too, where Rust
// computes it. A driver may also fold an operation that would create one before
// the test sees it (`0 / b`, `b / b` for b = 0): with finite operands only a
// division can, so lp_div also tests its divisor. Every value the shader works
// with is then finite.

const LP_WG: u32 = 64u;
const LP_PANIC: u32 = 1u;
const LP_HOST: u32 = 2u;
const LP_SPECIAL: u32 = 4u;

@group(0) @binding(0) var<uniform> lp_u: array<vec4<u32>, 64>;
@group(0) @binding(1) var<storage, read_write> lp_status: array<atomic<u32>>;

fn lp_word(k: u32) -> u32 {
    return lp_u[k >> 2u][k & 3u];
}

fn lp_base() -> u32 {
    return lp_word(0u);
}

fn lp_count() -> u32 {
    return lp_word(1u);
}

fn lp_start() -> u32 {
    return lp_word(2u);
}

fn lp_len(b: u32) -> u32 {
    return lp_word(4u + b);
}

fn lp_arg(k: u32) -> u32 {
    return lp_word(4u + LP_BINDINGS + k);
}

fn lp_fail(bits: u32) {
    atomicOr(&lp_status[0], bits);
}

// Where the generated part writes workgroup `group`'s partial result of reduction `r`.
fn lp_partial(group: u32, r: u32, bits: u32) {
    atomicStore(&lp_status[1u + group * LP_REDUCTIONS + r], bits);
}

// `i` when it is below `n` (an index into a slice of `n` elements); else Rust panics.
fn lp_at(i: u32, n: u32) -> u32 {
    if (i >= n) {
        lp_fail(LP_PANIC);
        return 0u;
    }
    return i;
}

// A sub-slice `lo..hi` of a slice of `n` elements: Rust panics unless lo <= hi <= n.
fn lp_sub(lo: u32, hi: u32, n: u32) -> u32 {
    if (lo > hi || hi > n) {
        lp_fail(LP_PANIC);
        return 0u;
    }
    return hi - lo;
}

// usize arithmetic, computed in 32 bits: a result the host would hold in 64
// bits (or an underflow, which panics in a debug build and wraps to 2^64 - k
// in a release one) is the host's to compute.
fn lp_uadd(a: u32, b: u32) -> u32 {
    let r = a + b;
    if (r < a) {
        lp_fail(LP_HOST);
    }
    return r;
}

fn lp_usub(a: u32, b: u32) -> u32 {
    if (b > a) {
        lp_fail(LP_HOST);
    }
    return a - b;
}

fn lp_umul(a: u32, b: u32) -> u32 {
    let ah = a >> 16u;
    let bh = b >> 16u;
    if (ah != 0u && bh != 0u) {
        lp_fail(LP_HOST);
        return a * b;
    }
    let mid = ah * (b & 0xffffu) + bh * (a & 0xffffu);
    if (mid > 0xffffu) {
        lp_fail(LP_HOST);
        return a * b;
    }
    let low = (a & 0xffffu) * (b & 0xffffu);
    let r = (mid << 16u) + low;
    if (r < low) {
        lp_fail(LP_HOST);
    }
    return r;
}

// Integer division and remainder: by zero, and i32::MIN by -1, panic in Rust.
fn lp_udiv(a: u32, b: u32) -> u32 {
    if (b == 0u) {
        lp_fail(LP_PANIC);
        return 0u;
    }
    return a / b;
}

fn lp_urem(a: u32, b: u32) -> u32 {
    if (b == 0u) {
        lp_fail(LP_PANIC);
        return 0u;
    }
    return a % b;
}

fn lp_idiv(a: i32, b: i32) -> i32 {
    if (b == 0 || (a == bitcast<i32>(0x80000000u) && b == -1)) {
        lp_fail(LP_PANIC);
        return 0;
    }
    return a / b;
}

fn lp_irem(a: i32, b: i32) -> i32 {
    if (b == 0 || (a == bitcast<i32>(0x80000000u) && b == -1)) {
        lp_fail(LP_PANIC);
        return 0;
    }
    return a % b;
}

// `Ord::clamp` panics when min > max.
fn lp_uclamp(x: u32, lo: u32, hi: u32) -> u32 {
    if (lo > hi) {
        lp_fail(LP_PANIC);
    }
    return min(max(x, lo), hi);
}

fn lp_iclamp(x: i32, lo: i32, hi: i32) -> i32 {
    if (lo > hi) {
        lp_fail(LP_PANIC);
    }
    return min(max(x, lo), hi);
}

// Casts as Rust's `as`: float to integer saturates and maps NaN to 0; a
// negative i32 or a float of 2^32 or more as usize is the host's.
fn lp_f2i(x: f32) -> i32 {
    if (is_nan(x)) {
        return 0;
    }
    if (x >= 2147483648.0) {
        return 2147483647;
    }
    if (x <= -2147483648.0) {
        return bitcast<i32>(0x80000000u);
    }
    return i32(x);
}

fn lp_f2u(x: f32) -> u32 {
    if (is_nan(x) || x <= 0.0) {
        return 0u;
    }
    if (x >= 4294967296.0) {
        return 0xffffffffu;
    }
    return u32(x);
}

fn lp_f2usize(x: f32) -> u32 {
    if (!is_nan(x) && x >= 4294967296.0) {
        lp_fail(LP_HOST);
    }
    return lp_f2u(x);
}

fn lp_i2usize(x: i32) -> u32 {
    if (x < 0) {
        lp_fail(LP_HOST);
    }
    return bitcast<u32>(x);
}

// A float the shader computed, unless it is NaN or infinite (see the header), bit for bit,
// but opaque to the driver's algebra: uniform word 3 is zero, which the driver cannot know
// when it compiles the shader. WGSL promises each + − × its own rounding, and Vulkan drivers
// without SPIR-V's NoContraction (naga emits none) rewrite across operations: lavapipe turned
// `-x + (s + x)` into `s` (0.1 where Rust's is 0 for x = 1e8) and `(s - s) / x` into 0.
// Every operation's result passes through here, so each is computed as written.
fn lp_fin(x: f32) -> f32 {
    if ((bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u) {
        lp_fail(LP_SPECIAL);
    }
    return bitcast<f32>(bitcast<u32>(x) ^ lp_word(3u));
}

// a / b through `lp_fin`, and a divisor that is zero or subnormal sets the same status bit.
// With finite operands only such a divisor gives a NaN or an infinity, and a driver may fold
// the quotient before `lp_fin` sees it (WGSL lets it assume finite values): lavapipe turns
// `(s - s) / b` into 0 for b = 0, where Rust's is NaN. The divisor is a run-time value
// whatever the quotient became, so its test stands.
fn lp_div(a: f32, b: f32) -> f32 {
    if ((bitcast<u32>(b) & 0x7f800000u) == 0u) {
        lp_fail(LP_SPECIAL);
    }
    return lp_fin(div_full(a, b));
}

// f32::max / f32::min: NaN only when both are NaN (WGSL's may return either side).
fn lp_max(a: f32, b: f32) -> f32 {
    if (is_nan(a)) {
        return b;
    }
    if (is_nan(b)) {
        return a;
    }
    return max(a, b);
}

fn lp_min(a: f32, b: f32) -> f32 {
    if (is_nan(a)) {
        return b;
    }
    if (is_nan(b)) {
        return a;
    }
    return min(a, b);
}

// f32::clamp: panics when min > max or either is NaN; NaN stays NaN.
fn lp_clamp(x: f32, lo: f32, hi: f32) -> f32 {
    if (is_nan(lo) || is_nan(hi) || lo > hi) {
        lp_fail(LP_PANIC);
        return x;
    }
    if (is_nan(x)) {
        return x;
    }
    var r = x;
    if (r < lo) {
        r = lo;
    }
    if (r > hi) {
        r = hi;
    }
    return r;
}

fn lp_abs(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu);
}

fn lp_is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

fn lp_is_infinite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u;
}

// WGSL's sqrt of a negative number is undefined; Rust's is NaN.
fn lp_sqrt(x: f32) -> f32 {
    if (is_nan(x) || x < 0.0) {
        return nan();
    }
    return sqrt(x);
}

// f32::round: halves away from zero (WGSL's `round` takes them to even).
fn lp_round(x: f32) -> f32 {
    let t = trunc(x);
    if (abs(x - t) >= 0.5) {
        return t + sign(x);
    }
    return t;
}

// f32::powi: binary exponentiation in the order LLVM's `powi` multiplies
// (compiler-rt's __powisf2 and the expansion for a constant exponent agree), so
// the products round as the host's do.
fn lp_powi(x: f32, n: i32) -> f32 {
    var a = x;
    var b = n;
    var r = 1.0;
    loop {
        if ((b & 1) != 0) {
            r = r * a;
        }
        b = b / 2;
        if (b == 0) {
            break;
        }
        a = a * a;
    }
    if (n < 0) {
        return div_full(1.0, r);
    }
    return r;
}

// ln x, Cephes' logf: within 2 ULP where the result is normal. WGSL's `log`
// promises only an absolute 2^-21 near 1.
fn lp_ln(x: f32) -> f32 {
    if (is_nan(x) || x < 0.0) {
        return nan();
    }
    if (x == 0.0) {
        return -inf();
    }
    if (lp_is_infinite(x)) {
        return x;
    }
    // A subnormal: `frexp` may not see its exponent (lavapipe's reads 1e-40 as 2^-127, so
    // `powf(1e-40, 0.5)` gave 7.7e-20 for 1e-20), and a device that flushes it took the
    // branch above, whose -inf sends the call to the host. Send it there either way.
    if ((bitcast<u32>(x) & 0x7f800000u) == 0u) {
        lp_fail(LP_SPECIAL);
    }
    let parts = frexp(x);
    var m = parts.fract;
    var e = parts.exp;
    var t: f32;
    if (m < 0.70710678118654752440) {
        e = e - 1;
        t = m + m - 1.0;
    } else {
        t = m - 1.0;
    }
    let z = t * t;
    var y = ((((((((7.0376836292e-2 * t - 1.1514610310e-1) * t + 1.1676998740e-1) * t - 1.2420140846e-1) * t
        + 1.4249322787e-1) * t - 1.6668057665e-1) * t + 2.0000714765e-1) * t - 2.4999993993e-1) * t
        + 3.3333331174e-1) * t * z;
    let fe = f32(e);
    y = y + -2.12194440e-4 * fe;
    y = y + -0.5 * z;
    var r = t + y;
    r = r + 0.693359375 * fe;
    return r;
}

// sin and cos, Cephes' sinf/cosf: the argument reduced by π/4 in three parts
// (exact for |x| ≤ 8192), then a polynomial of the octant. WGSL's own are only
// absolutely accurate (2^-11 on [-π, π]). Beyond 8192 the reduction loses
// digits: the host computes those calls.
fn lp_octant(ax: f32) -> vec2<f32> {
    var j = u32(ax * 1.27323954473516);
    var y = f32(j);
    if ((j & 1u) != 0u) {
        j = j + 1u;
        y = y + 1.0;
    }
    let r = ((ax - y * 0.78515625) - y * 2.4187564849853515625e-4) - y * 3.77489497744594108e-8;
    return vec2<f32>(r, f32(j & 7u));
}

fn lp_sin_poly(r: f32) -> f32 {
    let z = r * r;
    return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * (z * r) + r;
}

fn lp_cos_poly(r: f32) -> f32 {
    let z = r * r;
    return ((((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * (z * z)) - 0.5 * z)
        + 1.0;
}

fn lp_sin(x: f32) -> f32 {
    if (is_nan(x) || lp_is_infinite(x)) {
        return nan();
    }
    var sgn = 1.0;
    var ax = x;
    if (x < 0.0) {
        sgn = -1.0;
        ax = -x;
    }
    if (ax > 8192.0) {
        lp_fail(LP_HOST);
        return 0.0;
    }
    let o = lp_octant(ax);
    var j = u32(o.y);
    if (j > 3u) {
        sgn = -sgn;
        j = j - 4u;
    }
    var v: f32;
    if (j == 1u || j == 2u) {
        v = lp_cos_poly(o.x);
    } else {
        v = lp_sin_poly(o.x);
    }
    return sgn * v;
}

fn lp_cos(x: f32) -> f32 {
    if (is_nan(x) || lp_is_infinite(x)) {
        return nan();
    }
    let ax = lp_abs(x);
    if (ax > 8192.0) {
        lp_fail(LP_HOST);
        return 0.0;
    }
    let o = lp_octant(ax);
    var j = u32(o.y);
    var sgn = 1.0;
    if (j > 3u) {
        j = j - 4u;
        sgn = -sgn;
    }
    if (j > 1u) {
        sgn = -sgn;
    }
    var v: f32;
    if (j == 1u || j == 2u) {
        v = lp_sin_poly(o.x);
    } else {
        v = lp_cos_poly(o.x);
    }
    return sgn * v;
}

// f32::powf with IEEE pow's special cases; otherwise e^(y·ln|x|), within
// 3 + 2·|y·ln x| ULP (the error of y·ln x grows with its size, as that of
// WGSL's own `pow`, exp2(y·log2 x), does).
fn lp_powf(x: f32, y: f32) -> f32 {
    if (y == 0.0 || x == 1.0) {
        return 1.0;
    }
    if (is_nan(x) || is_nan(y)) {
        return nan();
    }
    let ay = lp_abs(y);
    let integral = trunc(y) == y;
    let odd = integral && ay < 16777216.0 && (lp_f2i(ay) & 1) == 1;
    let ax = lp_abs(x);
    if (lp_is_infinite(y)) {
        if (ax == 1.0) {
            return 1.0;
        }
        if ((ax < 1.0) == (y > 0.0)) {
            return 0.0;
        }
        return inf();
    }
    if (x < 0.0 && !integral) {
        return nan();
    }
    var r: f32;
    if (ax == 0.0) {
        r = select(0.0, inf(), y < 0.0);
    } else if (lp_is_infinite(x)) {
        r = select(inf(), 0.0, y < 0.0);
    } else {
        r = exp_acc(y * lp_ln(ax));
    }
    let negative = (bitcast<u32>(x) & 0x80000000u) != 0u;
    if (negative && odd) {
        return -r;
    }
    return r;
}
