//! Matrix ops, split by rows.
//!
//! - `matmul`: bands of rows of A and C, each a call of trueno's `gemm_blis`
//!   (the kernel `ops::simd::matmul` runs) writing its rows of C in place.
//!   Two bands per thread where each still has `MATMUL_BAND_ROWS` (128) rows,
//!   else one: every `gemm_blis` call packs all of B, so bands are few, but
//!   a second one per thread lets work stealing even out a core that another
//!   process takes part of the time (on the loaded VM, 1024³ ran 34.0 rather
//!   than 29.0 GFLOP/s; on two idle cores 4 and 2 bands were within 3%).
//!   The bands depend on the thread count, and `gemm_blis` picks its inner
//!   kernel by shape, so a `matmul` result depends on the input and the
//!   thread count (each element stays within SIMD's summation bound of
//!   Scalar). Why this and not trueno's `gemm_blis_parallel`: BENCHMARKS.md.
//! - `matvec`: chunks of rows of A, each an `ops::simd::matvec`; every output
//!   is one SIMD `dot`, so results are bit-identical to SIMD.
//! - `transpose`: chunks of output rows (input columns): a chunk gathers its
//!   columns into a small contiguous block, transposes it with
//!   `ops::simd::transpose` and copies it out; exact.
//! - `conv2d`: chunks of output rows, each an `ops::simd::conv2d` of the
//!   input rows it reads (its rows plus `krows − 1`); bit-identical to Scalar.

use std::mem::MaybeUninit;
use std::ops::Range;

use super::split::{copy_into, fill, map_chunks, zeroed, Grain, Grid};
use super::threads::Team;
use crate::ops::{check, simd};

/// Rows per `matmul` band are a multiple of this: the height of trueno's
/// AVX2 micro-kernel (`blis::MR`), so no band ends in a partial tile.
const MATMUL_ROW_ALIGN: usize = trueno::blis::MR;

/// The fewest rows that make a `matmul` band worth a second one per thread:
/// trueno's L2 block height (`blis::MC`), so that no band is a fraction of
/// one block.
const MATMUL_BAND_ROWS: usize = trueno::blis::MC;

/// The team for a matrix op, or `None` when it has one thread (run SIMD).
fn team() -> Option<Team> {
    let team = Team::here();
    (team.threads() > 1).then_some(team)
}

/// `grid` and the team to run it on, or `None` when the team has one thread.
fn with_team(grid: Grid) -> Option<(Grid, Team)> {
    team().map(|team| (grid, team))
}

/// C = A·B for row-major A (m×k) and B (k×n); C is m×n.
///
/// # Panics
/// If `a.len() != m·k`, `b.len() != k·n`, or a shape overflows `usize`.
#[track_caller]
pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    check::matmul(a.len(), b.len(), m, n, k);
    let work = m.saturating_mul(n).saturating_mul(k);
    let big = work >= Grain::MATMUL && m >= 2 * MATMUL_ROW_ALIGN;
    let Some(team) = big.then(team).flatten() else {
        return simd::matmul(a, b, m, n, k);
    };
    let threads = team.threads();
    let bands = (2 * threads).min(m / MATMUL_BAND_ROWS).max(threads).min(m / MATMUL_ROW_ALIGN);
    let rows = m.div_ceil(bands).next_multiple_of(MATMUL_ROW_ALIGN);
    let mut c = zeroed(m * n);
    let parts: Vec<_> = c.chunks_mut(rows * n).zip(a.chunks(rows * k)).collect();
    map_chunks(&team, parts, |_, (c, a)| {
        // `gemm_blis` fails only on lengths that disagree with the shape: these are
        // `c.len() / n` whole rows of A and C, and B as checked above.
        if let Err(e) = trueno::blis::gemm_blis(c.len() / n, n, k, a, b, c, None) {
            unreachable!("gemm_blis rejected a band of a shape that check::matmul accepted: {e}");
        }
    });
    c
}

/// y = A·x for row-major A (m×n); y has m elements.
///
/// # Panics
/// If `a.len() != m·n` or `x.len() != n`.
#[track_caller]
pub fn matvec(a: &[f32], x: &[f32], m: usize, n: usize) -> Vec<f32> {
    check::matvec(a.len(), x.len(), m, n);
    let split = Grid::new(m, Grain::rows(Grain::MATVEC, n), 1).filter(|_| n > 0).and_then(with_team);
    let Some((grid, team)) = split else { return simd::matvec(a, x, m, n) };
    let write = |rows: Range<usize>, out: &mut [MaybeUninit<f32>]| {
        copy_into(out, &simd::matvec(&a[rows.start * n..rows.end * n], x, rows.len(), n));
    };
    // SAFETY: `copy_into` writes every element of `out` (it checks the length first).
    unsafe { fill(&team, grid, 1, write) }.0
}

/// The transpose of row-major `a` (rows×cols), as a cols×rows matrix.
///
/// # Panics
/// If `a.len() != rows·cols`.
#[track_caller]
pub fn transpose(a: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    check::matrix("transpose", "a (rows×cols)", a.len(), rows, cols);
    let split = Grid::new(cols, Grain::rows(Grain::TRANSPOSE, rows), 1).filter(|_| rows > 0).and_then(with_team);
    let Some((grid, team)) = split else { return simd::transpose(a, rows, cols) };
    // A chunk is output rows `js` = input columns `js`: gather them, transpose, copy out.
    let write = |js: Range<usize>, out: &mut [MaybeUninit<f32>]| {
        let mut columns = Vec::with_capacity(rows * js.len());
        for row in a.chunks_exact(cols) {
            columns.extend_from_slice(&row[js.clone()]);
        }
        copy_into(out, &simd::transpose(&columns, rows, js.len()));
    };
    // SAFETY: `copy_into` writes every element of `out` (it checks the length first).
    unsafe { fill(&team, grid, rows, write) }.0
}

/// Valid-mode 2-D cross-correlation (the kernel is not flipped), as
/// [`scalar::conv2d`](crate::ops::scalar::conv2d) defines it; bit-identical to Scalar.
///
/// # Panics
/// If `input.len() != rows·cols`, `kernel.len() != krows·kcols`, or the kernel shape is empty.
#[track_caller]
pub fn conv2d(input: &[f32], kernel: &[f32], rows: usize, cols: usize, krows: usize, kcols: usize) -> Vec<f32> {
    let (orows, ocols) = check::conv2d(input.len(), kernel.len(), rows, cols, krows, kcols);
    let per_row = ocols.saturating_mul(kernel.len());
    let split = Grid::new(orows, Grain::rows(Grain::CONV2D, per_row), 1).filter(|_| ocols > 0).and_then(with_team);
    let Some((grid, team)) = split else { return simd::conv2d(input, kernel, rows, cols, krows, kcols) };
    // Output rows `is` read input rows `is.start .. is.end + krows − 1`.
    let write = |is: Range<usize>, out: &mut [MaybeUninit<f32>]| {
        let in_rows = is.len() + krows - 1;
        let part = &input[is.start * cols..(is.start + in_rows) * cols];
        copy_into(out, &simd::conv2d(part, kernel, in_rows, cols, krows, kcols));
    };
    // SAFETY: `copy_into` writes every element of `out` (it checks the length first).
    unsafe { fill(&team, grid, ocols, write) }.0
}
