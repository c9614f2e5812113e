//! Element-wise ops: each chunk runs the `ops::simd` op of the same name on
//! its part of the input, so results are bit-identical to SIMD (and, where
//! SIMD is, to Scalar), whatever the thread count.
//!
//! `softmax` is three passes over the grid: `max`, then `e^(x − max)` with a
//! partial sum per chunk, then one division per element by the sum of the
//! partials taken left to right. Each element's `e^(x − max)` is SIMD's
//! (the same `exp` on the same `x − max`); the sum, and so every output,
//! differs from SIMD's only by the order of the summation.

use std::mem::MaybeUninit;
use std::ops::Range;

use super::reduce;
use super::split::{blocks, fill, map_chunks, Grain, Grid};
use super::threads::Team;
use crate::ops::{check, scalar, simd};

/// Elements per chunk of a grid over `n` elements: 16 (64 bytes), so that no
/// two threads write the same cache line of an output.
const ALIGN: usize = 16;

/// The grid for an `n`-element op with that `grain`, and the team to run it on;
/// `None` when the op should run `ops::simd` on the whole input: too small
/// to split, or one thread (where the copies through blocks would only cost).
fn plan(n: usize, grain: usize) -> Option<(Team, Grid)> {
    let grid = Grid::new(n, grain, ALIGN)?;
    let team = Team::here();
    (team.threads() > 1).then_some((team, grid))
}

/// `op` applied to `a` chunk by chunk, or to all of `a` (see [`plan`]).
fn unary(grain: usize, a: &[f32], op: impl Fn(&[f32]) -> Vec<f32> + Sync) -> Vec<f32> {
    let Some((team, grid)) = plan(a.len(), grain) else { return op(a) };
    let write = |rows: Range<usize>, out: &mut [MaybeUninit<f32>]| {
        let a = &a[rows];
        blocks(out, |r| op(&a[r]), |_| ());
    };
    // SAFETY: `blocks` writes every element of `out` (it checks each block's length).
    unsafe { fill(&team, grid, 1, write) }.0
}

/// `op` applied to `a` and `b` chunk by chunk, after `op`'s own length check.
#[track_caller]
fn binary(name: &str, a: &[f32], b: &[f32], op: impl Fn(&[f32], &[f32]) -> Vec<f32> + Sync) -> Vec<f32> {
    check::same_len(name, a.len(), b.len());
    let Some((team, grid)) = plan(a.len(), Grain::STREAM) else { return op(a, b) };
    let write = |rows: Range<usize>, out: &mut [MaybeUninit<f32>]| {
        let (a, b) = (&a[rows.clone()], &b[rows]);
        blocks(out, |r| op(&a[r.clone()], &b[r]), |_| ());
    };
    // SAFETY: `blocks` writes every element of `out` (it checks each block's length).
    unsafe { fill(&team, grid, 1, write) }.0
}

/// `a[i] + b[i]`: [`simd::add`] on chunks.
///
/// # Panics
/// If `a` and `b` differ in length.
#[track_caller]
pub fn add(a: &[f32], b: &[f32]) -> Vec<f32> {
    binary("add", a, b, simd::add)
}

/// `a[i] - b[i]`: [`simd::sub`] on chunks.
///
/// # Panics
/// If `a` and `b` differ in length.
#[track_caller]
pub fn sub(a: &[f32], b: &[f32]) -> Vec<f32> {
    binary("sub", a, b, simd::sub)
}

/// `a[i] * b[i]`: [`simd::mul`] on chunks.
///
/// # Panics
/// If `a` and `b` differ in length.
#[track_caller]
pub fn mul(a: &[f32], b: &[f32]) -> Vec<f32> {
    binary("mul", a, b, simd::mul)
}

/// `a[i] / b[i]` (IEEE: `x / 0` is ±∞ or NaN): [`simd::div`] on chunks.
///
/// # Panics
/// If `a` and `b` differ in length.
#[track_caller]
pub fn div(a: &[f32], b: &[f32]) -> Vec<f32> {
    binary("div", a, b, simd::div)
}

/// `a[i] * s`: [`simd::scale`] on chunks.
pub fn scale(a: &[f32], s: f32) -> Vec<f32> {
    unary(Grain::STREAM, a, |a| simd::scale(a, s))
}

/// `max(a[i], 0)`; NaN stays NaN: [`simd::relu`] on chunks.
pub fn relu(a: &[f32]) -> Vec<f32> {
    unary(Grain::STREAM, a, simd::relu)
}

/// `y[i] += alpha * x[i]`, in place: [`simd::axpy`] on chunks; bit-identical to Scalar.
///
/// # Panics
/// If `x` and `y` differ in length.
#[track_caller]
pub fn axpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    check::same_len("axpy", x.len(), y.len());
    let Some((team, grid)) = plan(x.len(), Grain::STREAM) else { return simd::axpy(alpha, x, y) };
    let chunks: Vec<_> = x.chunks(grid.chunk_len()).zip(y.chunks_mut(grid.chunk_len())).collect();
    map_chunks(&team, chunks, |_, (x, y)| simd::axpy(alpha, x, y));
}

/// `e^a[i]`: [`simd::exp`] on chunks.
pub fn exp(a: &[f32]) -> Vec<f32> {
    unary(Grain::TRANSCENDENTAL, a, simd::exp)
}

/// `1 / (1 + e^(−a[i]))`: [`simd::sigmoid`] on chunks.
pub fn sigmoid(a: &[f32]) -> Vec<f32> {
    unary(Grain::TRANSCENDENTAL, a, simd::sigmoid)
}

/// `tanh(a[i])`: [`simd::tanh`] on chunks.
pub fn tanh(a: &[f32]) -> Vec<f32> {
    unary(Grain::TRANSCENDENTAL, a, simd::tanh)
}

/// GELU, tanh approximation: [`simd::gelu`] on chunks.
pub fn gelu(a: &[f32]) -> Vec<f32> {
    unary(Grain::TRANSCENDENTAL, a, simd::gelu)
}

/// `e^(a[i] − max) / Σ e^(a[j] − max)`, stable for large inputs; empty in, empty
/// out. On the grid whatever the thread count (see the module docs), so the
/// result depends only on `a`.
pub fn softmax(a: &[f32]) -> Vec<f32> {
    let Some(grid) = Grid::new(a.len(), Grain::TRANSCENDENTAL, ALIGN) else { return simd::softmax(a) };
    let team = Team::here();
    let m = reduce::max_on(&team, grid, a);
    let write = |rows: Range<usize>, out: &mut [MaybeUninit<f32>]| {
        let a = &a[rows];
        let mut shifted = Vec::with_capacity(super::split::BLOCK);
        let sums = blocks(
            out,
            |r| {
                shifted.clear();
                shifted.extend(a[r].iter().map(|&x| x - m));
                simd::exp(&shifted)
            },
            simd::sum,
        );
        scalar::sum(&sums)
    };
    // SAFETY: `blocks` writes every element of `out` (it checks each block's length).
    let (mut e, partials) = unsafe { fill(&team, grid, 1, write) };
    let s = scalar::sum(&partials);
    let chunks: Vec<_> = e.chunks_mut(grid.chunk_len()).collect();
    // A division, as SIMD and Scalar do, not a multiplication by 1/s.
    map_chunks(&team, chunks, |_, chunk| chunk.iter_mut().for_each(|x| *x /= s));
    e
}
