//! Every construct of the subset the GPU variant translates, and a loop for each word it gives
//! when it leaves one on the host: each kernel compiles warning-free whatever its types, is
//! reported with its word, and its GPU variant (on a device, or on the host) agrees with Scalar.
#![deny(warnings)]
#![allow(clippy::needless_range_loop, clippy::manual_memcpy, clippy::collapsible_else_if)]

use adaptive_kernel::adaptive_kernel;

const SCALE: f32 = 0.5;
const SHIFT: usize = 3;

/// Arithmetic, comparisons, `&&`/`||`, `if`/`else` as a statement and as a value, casts between
/// `f32`, `i32`, `u32` and `usize`, constants and captured scalars.
#[adaptive_kernel(complexity = "Low")]
pub fn arithmetic(x: &[f32], k: &[i32], out: &mut [f32], codes: &mut [u32], bias: f32, step: usize) {
    for i in 0..out.len() {
        let v = x[i] * SCALE - bias / 3.0;
        let signed = k[i] * 2 - 7 / (k[i].abs() + 1) + k[i] % 3;
        let wide = (i * step + SHIFT) / 2 % 5;
        let flag = v > 0.0 && (signed < 0 || wide == 1);
        out[i] = if flag { v } else { -v + signed as f32 + wide as f32 };
        if !flag {
            codes[i] = (signed as u32) ^ (wide as u32) | 1;
        } else {
            codes[i] = (v.abs() as u32) & 0xff;
        }
    }
}

/// The float methods of the subset, as methods and through their type.
#[adaptive_kernel(complexity = "Low")]
pub fn methods(x: &[f32], out: &mut [f32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        let a = v.abs().sqrt() + v.exp().recip() + (v.abs() + 1.0).ln();
        let b = v.sin() * v.cos() + v.tanh() + v.powi(2) + v.abs().powf(0.5);
        let c = v.min(a).max(b).clamp(-10.0, 10.0) + v.mul_add(2.0, 1.0);
        let d = v.floor() + v.ceil() + v.round() + f32::sqrt(a) + f32::max(b, c);
        let e = if v.is_nan() || v.is_infinite() || !v.is_finite() { f32::EPSILON } else { f32::MIN + f32::MAX };
        *o = a + b + c + d + e;
    }
}

/// Inner loops: over ranges (also inclusive), over captured slices and their sub-slices (`iter`,
/// `iter_mut`, `copied`, `zip`, `enumerate`) and rows (`chunks`, `chunks_exact`), `while` and
/// `loop`, `break` and `continue`.
#[adaptive_kernel(complexity = "Medium")]
pub fn inner_loops(x: &[f32], w: usize, out: &mut [f32]) {
    for (r, row) in out.chunks_mut(w).enumerate() {
        let src = &x[r * w..(r + 1) * w];
        let mut total = 0.0f32;
        for j in 0..=src.len() - 1 {
            if src[j] < 0.0 {
                continue;
            }
            total += src[j];
        }
        for (j, v) in src.iter().copied().enumerate() {
            if j > 3 {
                break;
            }
            total += v;
        }
        let mut k = 0;
        while k < w {
            k += 2;
        }
        loop {
            k -= 1;
            if k <= w {
                break;
            }
        }
        // Rows of a captured slice: the last one short, or left out.
        for (c, q) in x.chunks(7).enumerate() {
            total += q[q.len() - 1] * c as f32;
        }
        for q in x.chunks_exact(w + 1) {
            total -= q[w];
        }
        for (o, s) in row.iter_mut().zip(&src[..]) {
            *o = s + total + k as f32;
        }
    }
}

/// Reductions a loop carries: a float sum, difference, product, maximum and minimum, and an
/// integer count.
#[adaptive_kernel(complexity = "Medium")]
pub fn reductions(x: &[f32]) -> (f32, f32, f32, f32, usize) {
    let mut sum = 0.0f32;
    let mut product = 1.0f32;
    let mut hi = f32::NEG_INFINITY;
    let mut lo = f32::INFINITY;
    let mut positive = 0usize;
    for &v in x {
        sum += v;
        sum -= v * 0.5;
        product *= 1.0 + v * 1e-3;
        hi = hi.max(v);
        lo = f32::min(lo, v);
        if v > 0.0 {
            positive += 1;
        }
    }
    (sum, product, hi, lo, positive)
}

/// `continue` of the loop itself, a tuple `let`, a block as a value, a `&mut` element, a
/// `bool` captured.
#[adaptive_kernel(complexity = "Low")]
pub fn odds(x: &[f32], out: &mut [f32], negate: bool) {
    'items: for i in 0..x.len() {
        if i % 2 == 0 {
            out[i] = 0.0;
            continue 'items;
        }
        let (a, b) = (x[i], x[i - 1]);
        let c = {
            let t = a - b;
            t * t
        };
        let slot = &mut out[i];
        *slot = if negate { -c } else { c };
    }
}

/// A `serial` kernel still runs its loop on the GPU (the device forks no CPU thread).
#[adaptive_kernel(complexity = "Low", serial)]
pub fn serial_scale(x: &mut [f32], by: f32) {
    for v in x.iter_mut() {
        *v *= by;
    }
}

// Left on the host, each with its word.

/// `f64`: the device computes in `f32`.
#[adaptive_kernel(complexity = "Low")]
pub fn wide(x: &[f64], out: &mut [f64]) {
    for i in 0..x.len() {
        out[i] = x[i] * 2.0;
    }
}

fn helper(v: f32) -> f32 {
    v + 1.0
}

/// `call`: a function of the user's, and a method outside the list.
#[adaptive_kernel(complexity = "Low")]
pub fn calls(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        out[i] = helper(x[i]);
    }
    for i in 0..x.len() {
        out[i] += x[i].atan();
    }
}

/// `type`: an element type the device does not hold.
#[adaptive_kernel(complexity = "Low")]
pub fn bytes(x: &[u8], out: &mut [u8]) {
    for i in 0..x.len() {
        out[i] = x[i] / 2;
    }
}

#[derive(Clone, Copy)]
pub struct Point {
    pub x: f32,
    pub y: f32,
}

/// `value`: an array value, and a struct value.
#[adaptive_kernel(complexity = "Low")]
pub fn arrays(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        let pair = [x[i], 1.0];
        out[i] = pair[0] + pair[1];
    }
    for i in 0..x.len() {
        let p = Point { x: x[i], y: 2.0 };
        out[i] += p.x * p.y;
    }
}

/// `size`: a 64-bit integer.
#[adaptive_kernel(complexity = "Low")]
pub fn long(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        out[i] = x[i] + (i as u64 * 3) as f32;
    }
}

/// `syntax`: a `match`.
#[adaptive_kernel(complexity = "Low")]
pub fn matched(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        out[i] = match i % 3 {
            0 => x[i],
            _ => -x[i],
        };
    }
}

/// `macro`: a macro call inside.
#[adaptive_kernel(complexity = "Low")]
pub fn checked(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        debug_assert!(x[i].is_finite() || x[i].is_nan() || x[i].is_infinite());
        out[i] = x[i];
    }
}

/// `label`: an inner labelled loop.
#[adaptive_kernel(complexity = "Medium")]
pub fn labelled(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        let mut found = 0.0;
        'search: for j in 0..x.len() {
            if x[j] > x[i] {
                found = x[j];
                break 'search;
            }
        }
        out[i] = found;
    }
}

/// `writes`: a write through a name from outside that is not the loop's own item (the split's word).
#[adaptive_kernel(complexity = "Low")]
pub fn logged(x: &[f32], out: &mut [f32], seen: &mut Vec<f32>) {
    for i in 0..x.len() {
        out[i] = x[i];
        seen.push(x[i]);
    }
}

/// `overlap`: a write outside the iteration's own item (the split's word).
#[adaptive_kernel(complexity = "Low")]
pub fn prefix(x: &[f32], out: &mut [f32]) {
    for i in 1..x.len() {
        out[i] = out[i - 1] + x[i];
    }
}

/// `exact`: the kernel opted out of reassociation, and so of the GPU.
#[adaptive_kernel(complexity = "Low", exact)]
pub fn exact_sum(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        s += v;
    }
    s
}

fn own_gpu(x: &[f32], out: &mut [f32]) {
    out.copy_from_slice(x);
}

/// `gpu`: the GPU variant is the kernel's own.
#[adaptive_kernel(complexity = "Low", gpu = own_gpu)]
pub fn own(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        out[i] = x[i];
    }
}

/// `unsafe`: an `unsafe fn`'s body.
///
/// # Safety
/// None needed: it only copies.
#[adaptive_kernel(complexity = "Low")]
pub unsafe fn copy_unsafe(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        out[i] = x[i];
    }
}

fn words(spec: &adaptive_kernel::kernel::KernelSpec) -> Vec<&'static str> {
    spec.gpu_loops.iter().map(|l| if l.on_gpu() { "gpu" } else { l.reason }).collect()
}

fn main() {
    for (name, spec) in [
        ("arithmetic", arithmetic::KERNEL.spec()),
        ("methods", methods::KERNEL.spec()),
        ("inner_loops", inner_loops::KERNEL.spec()),
        ("reductions", reductions::KERNEL.spec()),
        ("odds", odds::KERNEL.spec()),
        ("serial_scale", serial_scale::KERNEL.spec()),
    ] {
        assert_eq!(words(spec), ["gpu"], "{name}");
        assert!(spec.has_gpu, "{name}");
    }
    for (spec, word) in [
        (wide::KERNEL.spec(), "f64"),
        (calls::KERNEL.spec(), "call"),
        (bytes::KERNEL.spec(), "type"),
        (arrays::KERNEL.spec(), "value"),
        (long::KERNEL.spec(), "size"),
        (matched::KERNEL.spec(), "syntax"),
        (checked::KERNEL.spec(), "macro"),
        (labelled::KERNEL.spec(), "label"),
        (prefix::KERNEL.spec(), "overlap"),
        (logged::KERNEL.spec(), "writes"),
        (exact_sum::KERNEL.spec(), "exact"),
        (own::KERNEL.spec(), "gpu"),
        (copy_unsafe::KERNEL.spec(), "unsafe"),
    ] {
        let loops = if spec.name.ends_with("calls") || spec.name.ends_with("arrays") { 2 } else { 1 };
        assert_eq!(words(spec), vec![word; loops], "{}", spec.name);
        assert!(adaptive_kernel::kernel::loop_reason(word).is_some(), "{word} is a documented word");
    }
    assert!(!wide::KERNEL.spec().has_gpu && !prefix::KERNEL.spec().has_gpu);

    let x: Vec<f32> = (0..200).map(|i| (i as f32 * 0.37).sin() * 4.0).collect();
    let k: Vec<i32> = (0..200).map(|i| i * 7 % 23 - 11).collect();
    let (mut og, mut os) = (vec![0.0; 200], vec![0.0; 200]);
    let (mut cg, mut cs) = (vec![0u32; 200], vec![0u32; 200]);
    arithmetic::gpu(&x, &k, &mut og, &mut cg, 0.25, 3);
    arithmetic::scalar(&x, &k, &mut os, &mut cs, 0.25, 3);
    assert_eq!((og.clone(), cg), (os.clone(), cs));
    methods::gpu(&x, &mut og);
    methods::scalar(&x, &mut os);
    for (a, b) in og.iter().zip(&os) {
        assert!((a - b).abs() <= 1e-4 * (1.0 + b.abs()), "{a} vs {b}");
    }
    inner_loops::gpu(&x, 10, &mut og);
    inner_loops::scalar(&x, 10, &mut os);
    for (a, b) in og.iter().zip(&os) {
        assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{a} vs {b}");
    }
    let (rg, rs) = (reductions::gpu(&x), reductions::scalar(&x));
    assert_eq!((rg.2, rg.3, rg.4), (rs.2, rs.3, rs.4));
    assert!((rg.0 - rs.0).abs() <= 1e-4 * (1.0 + rs.0.abs()) && (rg.1 - rs.1).abs() <= 1e-4 * rs.1.abs());
    odds::gpu(&x, &mut og, true);
    odds::scalar(&x, &mut os, true);
    assert_eq!(og, os);
    let (mut sg, mut ss) = (x.clone(), x.clone());
    serial_scale::gpu(&mut sg, 3.0);
    serial_scale::scalar(&mut ss, 3.0);
    assert_eq!(sg, ss);
    // SAFETY: the kernel only copies between two valid slices.
    unsafe { copy_unsafe(&x, &mut og) };
    assert_eq!(og, x);
    own(&x, &mut os);
    assert_eq!(os, x);
}
