//! Element-wise ops: each chunk runs the `ops::simd` kernel of the same name
//! on its part of the input, writing its part of the output in place, so
//! results are bit-identical to SIMD (and, where SIMD is, to Scalar),
//! whatever the thread count, in the returning and the `_into` form alike.
//!
//! `softmax` is three passes over the grid: `max`, then `e^(x − max)` with a
//! partial sum per chunk, then one division per element by the sum of the
//! partials taken left to right. Each element's `e^(x − max)` is SIMD's
//! (the same `exp` on the same `x − max`); the sum, and so every output,
//! differs from SIMD's only by the order of the summation.

use std::ops::Range;

use super::reduce;
use super::split::{for_chunks, partials_writing, Grain, Grid};
use super::threads::Team;
use crate::ops::out::{producing, written, Slot};
use crate::ops::{check, scalar, simd};

/// Elements per chunk of a grid over `n` elements: 16 (64 bytes), so that no
/// two threads write the same cache line of an output.
const ALIGN: usize = 16;

/// The grid for an `n`-element op with that `grain`, and the team to run it on;
/// `None` when the op should run `ops::simd` on the whole input: too small
/// to split, or one thread.
fn plan(n: usize, grain: usize) -> Option<(Team, Grid)> {
    let grid = Grid::new(n, grain, ALIGN)?;
    let team = Team::here();
    (team.threads() > 1).then_some((team, grid))
}

/// `op(a part, out part)` chunk by chunk, or on all of `a` (see [`plan`]).
fn unary(grain: usize, a: &[f32], out: &mut [Slot], op: impl Fn(&[f32], &mut [Slot]) + Sync) {
    match plan(a.len(), grain) {
        None => op(a, out),
        Some((team, grid)) => for_chunks(&team, grid, 1, out, |rows: Range<usize>, out| op(&a[rows], out)),
    }
}

/// `op(a part, b part, out part)` chunk by chunk, or on all of them.
fn binary(a: &[f32], b: &[f32], out: &mut [Slot], op: impl Fn(&[f32], &[f32], &mut [Slot]) + Sync) {
    match plan(a.len(), Grain::STREAM) {
        None => op(a, b, out),
        Some((team, grid)) => {
            for_chunks(&team, grid, 1, out, |rows: Range<usize>, out| op(&a[rows.clone()], &b[rows], out))
        }
    }
}

/// Defines a binary op's two forms, chunks of the SIMD kernel `$simd`.
macro_rules! binary_op {
    ($name:ident / $into:ident, $simd:ident, $doc:literal) => {
        producing! {
            #[doc = $doc]
            ///
            /// # Panics
            /// If `a` and `b` differ in length.
            pub fn $name / $into(a: &[f32], b: &[f32])
            check: shape = check::binary(stringify!($name), a.len(), b.len()),
            // Sets every slot: the chunks partition `out`, and SIMD's kernel sets each of its part.
            kernel: |out| binary(a, b, out, simd::$simd)
        }
    };
}

/// Defines a unary op's two forms, chunks of the SIMD kernel `$simd`.
macro_rules! unary_op {
    ($name:ident / $into:ident, $grain:ident, $simd:ident, $doc:literal) => {
        producing! {
            #[doc = $doc]
            pub fn $name / $into(a: &[f32])
            check: shape = check::unary(stringify!($name), a.len()),
            // Sets every slot: the chunks partition `out`, and SIMD's kernel sets each of its part.
            kernel: |out| unary(Grain::$grain, a, out, simd::$simd)
        }
    };
}

binary_op!(add / add_into, add_slots, "`a[i] + b[i]`: [`simd::add`] on chunks.");
binary_op!(sub / sub_into, sub_slots, "`a[i] - b[i]`: [`simd::sub`] on chunks.");
binary_op!(mul / mul_into, mul_slots, "`a[i] * b[i]`: [`simd::mul`] on chunks.");
binary_op!(div / div_into, div_slots, "`a[i] / b[i]` (IEEE: `x / 0` is ±∞ or NaN): [`simd::div`] on chunks.");

producing! {
    /// `a[i] * s`: [`simd::scale`] on chunks.
    pub fn scale / scale_into(a: &[f32], s: f32)
    check: shape = check::unary("scale", a.len()),
    // Sets every slot: the chunks partition `out`, and SIMD's kernel sets each of its part.
    kernel: |out| unary(Grain::STREAM, a, out, |a, out| simd::scale_slots(a, s, out))
}

unary_op!(relu / relu_into, STREAM, relu_slots, "`max(a[i], 0)`; NaN stays NaN: [`simd::relu`] on chunks.");
unary_op!(exp / exp_into, TRANSCENDENTAL, exp_slots, "`e^a[i]`: [`simd::exp`] on chunks.");
unary_op!(sigmoid / sigmoid_into, TRANSCENDENTAL, sigmoid_slots, "`1 / (1 + e^(−a[i]))`: [`simd::sigmoid`] on chunks.");
unary_op!(tanh / tanh_into, TRANSCENDENTAL, tanh_slots, "`tanh(a[i])`: [`simd::tanh`] on chunks.");
unary_op!(gelu / gelu_into, TRANSCENDENTAL, gelu_slots, "GELU, tanh approximation: [`simd::gelu`] on chunks.");

/// `y[i] += alpha * x[i]`, in place: [`simd::axpy`] on chunks; bit-identical to Scalar.
///
/// # Panics
/// If `x` and `y` differ in length.
#[track_caller]
pub fn axpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    check::same_len("axpy", x.len(), y.len());
    let Some((team, grid)) = plan(x.len(), Grain::STREAM) else { return simd::axpy(alpha, x, y) };
    for_chunks(&team, grid, 1, y, |rows, y| simd::axpy(alpha, &x[rows], y));
}

producing! {
    /// `e^(a[i] − max) / Σ e^(a[j] − max)`, stable for large inputs; empty in, empty
    /// out. On the grid whatever the thread count (see the module docs), so the
    /// result depends only on `a`.
    pub fn softmax / softmax_into(a: &[f32])
    check: shape = check::unary("softmax", a.len()),
    kernel: |out| softmax_kernel(a, out)
}

/// Softmax of `a` into `out` (as long as `a`), setting every slot.
fn softmax_kernel(a: &[f32], out: &mut [Slot]) {
    let Some(grid) = Grid::new(a.len(), Grain::TRANSCENDENTAL, ALIGN) else { return simd::softmax_slots(a, out) };
    let team = Team::here();
    let m = reduce::max_on(&team, grid, a);
    let exp_part = |rows: Range<usize>, part: &mut [Slot]| {
        simd::exp_shifted_slots(&a[rows], m, part);
        // SAFETY: `exp_shifted_slots` set every slot of `part` (it checks the lengths agree).
        simd::sum(unsafe { written(part) })
    };
    let s = partials_writing(&team, grid, 1, out, exp_part, scalar::sum);
    // SAFETY: the chunks partition `out` and each set all of its part above.
    let e = unsafe { written(out) };
    // A division, as SIMD and Scalar do, not a multiplication by 1/s.
    for_chunks(&team, grid, 1, e, |_, part| part.iter_mut().for_each(|x| *x /= s));
}
