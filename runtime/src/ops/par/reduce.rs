//! Reductions: one partial result per chunk of the grid (an `ops::simd`
//! reduction of that chunk), combined on the calling thread in chunk order.
//!
//! # Determinism
//! The grid depends only on the input's length (`split.rs`), partials are
//! collected by chunk index whichever thread computed them, and they are
//! combined left to right by the Scalar reduction of the same name; so a
//! result depends only on the input, not on the thread count, the schedule,
//! or whether the call ran on the calling thread (inside a rayon worker, or
//! with one thread). Inputs too small for two chunks run `ops::simd` itself.
//!
//! # Accuracy
//! `sum`, `dot`, `mean` and `norm_l2` add the chunk partials, each a SIMD sum
//! of its chunk, so the result differs from Scalar's left-to-right sum within
//! the same summation bound as SIMD (tests/ops_par.rs). `norm_l2` takes
//! `√(Σ partials)` of per-chunk `dot(x, x)`. `max` and `min` are exact; NaN in
//! any chunk makes its partial NaN, and Scalar's `max`/`min` of the partials
//! keeps it.

use std::ops::Range;

use super::split::{partials, Grain, Grid};
use super::threads::Team;
use crate::ops::{check, scalar, simd};

/// Elements per chunk of a reduction's grid: 16 (64 bytes), so chunks start on cache lines.
const ALIGN: usize = 16;

/// `combine` of the chunk partials `f(range)` of an `n`-element reduction,
/// or `whole()` when the input is one chunk.
fn reduce(
    n: usize,
    f: impl Fn(Range<usize>) -> f32 + Sync,
    combine: impl FnOnce(&[f32]) -> f32,
    whole: impl FnOnce() -> f32,
) -> f32 {
    match Grid::new(n, Grain::REDUCTION, ALIGN) {
        Some(grid) => partials(&Team::here(), grid, f, combine),
        None => whole(),
    }
}

/// The sum of `a` (0 when empty): [`simd::sum`] per chunk.
pub fn sum(a: &[f32]) -> f32 {
    reduce(a.len(), |r| simd::sum(&a[r]), scalar::sum, || simd::sum(a))
}

/// `Σ a[i]·b[i]` (0 when empty): [`simd::dot`] per chunk.
///
/// # Panics
/// If `a` and `b` differ in length.
#[track_caller]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    check::same_len("dot", a.len(), b.len());
    reduce(a.len(), |r| simd::dot(&a[r.clone()], &b[r]), scalar::sum, || simd::dot(a, b))
}

/// The largest element: −∞ when empty, NaN when any element is NaN.
pub fn max(a: &[f32]) -> f32 {
    reduce(a.len(), |r| simd::max(&a[r]), scalar::max, || simd::max(a))
}

/// `max` of `a` on a grid the caller already has (softmax's).
pub(super) fn max_on(team: &Team, grid: Grid, a: &[f32]) -> f32 {
    partials(team, grid, |r| simd::max(&a[r]), scalar::max)
}

/// The smallest element: +∞ when empty, NaN when any element is NaN.
pub fn min(a: &[f32]) -> f32 {
    reduce(a.len(), |r| simd::min(&a[r]), scalar::min, || simd::min(a))
}

/// The arithmetic mean: NaN when empty.
pub fn mean(a: &[f32]) -> f32 {
    sum(a) / a.len() as f32
}

/// The Euclidean norm `√(Σ a[i]²)` (0 when empty).
pub fn norm_l2(a: &[f32]) -> f32 {
    reduce(a.len(), |r| simd::dot(&a[r.clone()], &a[r]), |p| scalar::sum(p).sqrt(), || simd::norm_l2(a))
}
