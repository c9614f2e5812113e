//! Matrix ops, split by rows (`matmul`: split by faer).
//!
//! - `matmul`: faer's multi-threaded GEMM (`faer::linalg::matmul::matmul`
//!   with `Par::rayon(threads)`), called inside the team's pool, whose size
//!   is the team's thread count, so that faer's workers are exactly the
//!   team's threads (the policy of `threads.rs` holds: one thread, or a call
//!   on a rayon worker, runs SIMD); below `Grain::MATMUL` multiply-adds, and
//!   on WebAssembly, it is `ops::simd::matmul` on the calling thread.
//!
//!   Why faer: at 1024³ on the 2-vCPU benchmark VM, bands of rows of
//!   trueno's `gemm_blis` (the kernel SIMD runs, one call per band, each
//!   packing all of B) reached about half of faer's and numpy's GFLOP/s on
//!   the same two cores, faer's GEMM through this function about 0.96 of
//!   faer's own figure and 1.2× the bands, and trueno's `gemm_blis_parallel` is the
//!   same row split as the bands (BENCHMARKS.md, "ops::par").
//!
//!   Results: faer's threads take tiles of C from a shared counter, but each
//!   tile sums its depth in blocks of 512 in order, whichever thread runs it,
//!   and its splits of a C of one row or column are fixed by the thread
//!   count; so a result depends only on the input, the thread count and the
//!   CPU's instruction set (faer's AVX-512 or AVX2 kernels), and repeated
//!   calls give the same bits (tests/ops_par.rs). On the benchmark VM the
//!   general case gave the same bits at 2, 3, 4 and 8 threads, and a C of
//!   one row did not. Its bits are not always SIMD's (the two GEMMs block
//!   and order the depth differently); each element stays within SIMD's
//!   summation bound of Scalar.
//! - `matvec`: chunks of rows of A, each an `ops::simd::matvec`; every output
//!   is one SIMD `dot`, so results are bit-identical to SIMD.
//! - `transpose`: chunks of output rows (input columns): a chunk gathers its
//!   columns into a small contiguous block, transposes it with
//!   `ops::simd::transpose` and copies it out; exact.
//! - `conv2d`: chunks of output rows, each an `ops::simd::conv2d` of the
//!   input rows it reads (its rows plus `krows − 1`); bit-identical to Scalar.

use std::mem::MaybeUninit;
use std::ops::Range;

use super::split::{copy_into, fill, Grain, Grid};
use super::threads::Team;
use crate::ops::{check, simd};

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
    match (work >= Grain::MATMUL).then(team).flatten() {
        Some(team) => gemm(&team, a, b, m, n, k),
        None => simd::matmul(a, b, m, n, k),
    }
}

/// faer's GEMM on `team`'s threads; the shapes are checked and m·n·k ≥ 1.
#[cfg(not(target_arch = "wasm32"))]
fn gemm(team: &Team, a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = super::split::zeroed(m * n);
    let lhs = faer::MatRef::from_row_major_slice(a, m, k);
    let rhs = faer::MatRef::from_row_major_slice(b, k, n);
    let dst = faer::MatMut::from_row_major_slice_mut(&mut c, m, n);
    // Inside `run`, rayon's current pool is the team's, whose size is `threads`: faer's
    // workers are that pool's (the global pool's when the team has no pool of its own).
    let par = faer::Par::rayon(team.threads());
    team.run(|| faer::linalg::matmul::matmul(dst, faer::Accum::Replace, lhs, rhs, 1.0, par));
    c
}

/// WebAssembly runs one thread: a team there has one, and `matmul` never gets here.
#[cfg(target_arch = "wasm32")]
fn gemm(_: &Team, a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    simd::matmul(a, b, m, n, k)
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
