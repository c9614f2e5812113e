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
//! - `matvec`: chunks of rows of A, each an `ops::simd::matvec` into its rows
//!   of y; every output is one SIMD `dot`, so results are bit-identical to SIMD.
//! - `transpose`: chunks of output rows (input columns): a chunk gathers its
//!   columns into a contiguous block (a per-worker buffer kept between
//!   calls) and transposes it with `ops::simd::transpose` into its output
//!   rows; exact.
//! - `conv2d`: chunks of output rows, each an `ops::simd::conv2d` of the
//!   input rows it reads (its rows plus `krows − 1`) into its output rows;
//!   bit-identical to Scalar.
//!
//! Each op's returning form and its `_into` form run the same code; `matmul`
//! and `conv2d` only skip zeroing a fresh output that is zero already.

use std::ops::Range;

use super::split::{for_chunks, with_scratch, Grain, Grid, CHUNK_SCRATCH};
use super::threads::Team;
use crate::ops::check;
use crate::ops::out::{producing, zeroed, Slot};
use crate::ops::simd;

/// The team for a matrix op, or `None` when it has one thread (run SIMD).
fn team() -> Option<Team> {
    let team = Team::here();
    (team.threads() > 1).then_some(team)
}

/// `grid` and the team to run it on, or `None` when the team has one thread.
fn with_team(grid: Grid) -> Option<(Grid, Team)> {
    team().map(|team| (grid, team))
}

/// What an output holds before an accumulating op writes it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    /// Zeros: a fresh zeroed vector.
    Zeros,
    /// Anything: the caller's slice.
    Any,
}

/// C = A·B for row-major A (m×k) and B (k×n); C is m×n.
///
/// # Panics
/// If `a.len() != m·k`, `b.len() != k·n`, or a shape overflows `usize`.
#[track_caller]
pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let shape = check::matmul(a.len(), b.len(), m, n, k);
    let mut c = zeroed(shape.len());
    matmul_on(a, b, (m, n, k), &mut c, Start::Zeros);
    c
}

/// [`matmul`] written into `out`, which must have m·n elements: the same bits
/// (at the same thread count), the same kernels, and no allocation of ours
/// (faer's GEMM keeps its own packing buffers).
///
/// # Panics
/// Where [`matmul`] panics, and if `out` has another length (the message names the op and both shapes).
#[track_caller]
pub fn matmul_into(a: &[f32], b: &[f32], m: usize, n: usize, k: usize, out: &mut [f32]) {
    check::matmul(a.len(), b.len(), m, n, k).check(out.len());
    matmul_on(a, b, (m, n, k), out, Start::Any);
}

/// faer's GEMM on the team above the grain, else SIMD's; shapes checked.
fn matmul_on(a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize), c: &mut [f32], start: Start) {
    let work = m.saturating_mul(n).saturating_mul(k);
    match ((work >= Grain::MATMUL).then(team).flatten(), start) {
        (Some(team), _) => gemm(&team, a, b, (m, n, k), c),
        (None, Start::Zeros) => simd::matmul_onto_zeros(a, b, m, n, k, c),
        (None, Start::Any) => simd::matmul_into(a, b, m, n, k, c),
    }
}

/// faer's GEMM on `team`'s threads, replacing all of `c`; the shapes are checked and m·n·k ≥ 1.
#[cfg(not(target_arch = "wasm32"))]
fn gemm(team: &Team, a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize), c: &mut [f32]) {
    let lhs = faer::MatRef::from_row_major_slice(a, m, k);
    let rhs = faer::MatRef::from_row_major_slice(b, k, n);
    let dst = faer::MatMut::from_row_major_slice_mut(c, m, n);
    // Inside `run`, rayon's current pool is the team's, whose size is `threads`: faer's
    // workers are that pool's (the global pool's when the team has no pool of its own).
    let par = faer::Par::rayon(team.threads());
    team.run(|| faer::linalg::matmul::matmul(dst, faer::Accum::Replace, lhs, rhs, 1.0, par));
}

/// WebAssembly runs one thread: a team there has one, and `matmul` never gets here.
#[cfg(target_arch = "wasm32")]
fn gemm(_: &Team, a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize), c: &mut [f32]) {
    simd::matmul_into(a, b, m, n, k, c)
}

producing! {
    /// y = A·x for row-major A (m×n); y has m elements.
    ///
    /// # Panics
    /// If `a.len() != m·n` or `x.len() != n`.
    pub fn matvec / matvec_into(a: &[f32], x: &[f32], m: usize, n: usize)
    check: shape = check::matvec(a.len(), x.len(), m, n),
    // Sets every slot: the chunks of rows partition `y`, and SIMD's kernel sets each of its part.
    kernel: |y| {
        let split = Grid::new(m, Grain::rows(Grain::MATVEC, n), 1).filter(|_| n > 0).and_then(with_team);
        match split {
            None => simd::matvec_slots(a, x, m, n, y),
            Some((grid, team)) => for_chunks(&team, grid, 1, y, |rows: Range<usize>, y: &mut [Slot]| {
                simd::matvec_slots(&a[rows.start * n..rows.end * n], x, rows.len(), n, y)
            }),
        }
    }
}

producing! {
    /// The transpose of row-major `a` (rows×cols), as a cols×rows matrix.
    ///
    /// # Panics
    /// If `a.len() != rows·cols`.
    pub fn transpose / transpose_into(a: &[f32], rows: usize, cols: usize)
    check: shape = check::transpose(a.len(), rows, cols),
    // Each chunk's SIMD transpose writes all of its output rows.
    overwrite: |t| {
        let split = Grid::new(cols, Grain::rows(Grain::TRANSPOSE, rows), 1).filter(|_| rows > 0).and_then(with_team);
        match split {
            None => simd::transpose_into(a, rows, cols, t),
            // A chunk is output rows `js` = input columns `js`: gather them, then transpose.
            Some((grid, team)) => for_chunks(&team, grid, rows, t, |js: Range<usize>, out: &mut [f32]| {
                with_scratch(&CHUNK_SCRATCH, rows * js.len(), |columns| {
                    for (row, dst) in a.chunks_exact(cols).zip(columns.chunks_exact_mut(js.len())) {
                        dst.copy_from_slice(&row[js.clone()]);
                    }
                    simd::transpose_into(columns, rows, js.len(), out);
                })
            }),
        }
    }
}

/// Valid-mode 2-D cross-correlation (the kernel is not flipped), as
/// [`scalar::conv2d`](crate::ops::scalar::conv2d) defines it; bit-identical to Scalar.
///
/// # Panics
/// If `input.len() != rows·cols`, `kernel.len() != krows·kcols`, or the kernel shape is empty.
#[track_caller]
pub fn conv2d(input: &[f32], kernel: &[f32], rows: usize, cols: usize, krows: usize, kcols: usize) -> Vec<f32> {
    let shape = check::conv2d(input.len(), kernel.len(), rows, cols, krows, kcols);
    let mut out = zeroed(shape.len());
    conv2d_on(input, kernel, (rows, cols, krows, kcols), shape.dims(), &mut out, Start::Zeros);
    out
}

/// [`conv2d`] written into `out`, which must have as many elements as its
/// result: the same bits, the same kernel, and no allocation.
///
/// # Panics
/// Where [`conv2d`] panics, and if `out` has another length (the message names the op and both shapes).
#[track_caller]
pub fn conv2d_into(
    input: &[f32],
    kernel: &[f32],
    rows: usize,
    cols: usize,
    krows: usize,
    kcols: usize,
    out: &mut [f32],
) {
    let shape = check::conv2d(input.len(), kernel.len(), rows, cols, krows, kcols);
    shape.check(out.len());
    conv2d_on(input, kernel, (rows, cols, krows, kcols), shape.dims(), out, Start::Any);
}

/// Chunks of output rows, each SIMD's `conv2d` of the input rows it reads; shapes checked.
fn conv2d_on(
    input: &[f32],
    kernel: &[f32],
    (rows, cols, krows, kcols): (usize, usize, usize, usize),
    (orows, ocols): (usize, usize),
    out: &mut [f32],
    start: Start,
) {
    // SIMD's conv2d of `input` (`in_rows` rows) into `out`, zeroing it first unless it is zeros.
    let simd_conv = |input: &[f32], in_rows: usize, out: &mut [f32]| match start {
        Start::Zeros => simd::conv2d_onto_zeros(input, kernel, (in_rows, cols, krows, kcols), out),
        Start::Any => simd::conv2d_into(input, kernel, in_rows, cols, krows, kcols, out),
    };
    let per_row = ocols.saturating_mul(kernel.len());
    let split = Grid::new(orows, Grain::rows(Grain::CONV2D, per_row), 1).filter(|_| ocols > 0).and_then(with_team);
    let Some((grid, team)) = split else { return simd_conv(input, rows, out) };
    // Output rows `is` read input rows `is.start .. is.end + krows − 1`.
    for_chunks(&team, grid, ocols, out, |is: Range<usize>, out: &mut [f32]| {
        let in_rows = is.len() + krows - 1;
        simd_conv(&input[is.start * cols..(is.start + in_rows) * cols], in_rows, out);
    });
}
