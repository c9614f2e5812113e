//! The chunk grid every par op splits its input on, the fork–join that runs
//! the chunks, and the per-thread scratch that keeps a warm call free of
//! allocations.
//!
//! # The grid
//! An input of `n` units (elements, or rows for the matrix ops) is cut into
//! `⌊n / grain⌋` chunks of equal length (rounded up to `align` units, the last
//! one shorter), where `grain` is the least work per chunk that still pays
//! for a fork–join (the figures behind each grain are in [`Grain`]). Fewer
//! than two chunks means the op calls `ops::simd` on the whole input.
//!
//! The grid depends on `n` and the grain only, never on the thread count, so
//! that a reduction's partial results, one per chunk combined left to right,
//! are the same numbers on 1, 2 or 64 threads: a result depends only on the
//! input (`matmul` is the one exception; see `matrix.rs`). More chunks than
//! threads also lets rayon's work stealing even out cores that another
//! process is using, which is the usual state of a shared VM.
//!
//! # Outputs
//! A chunk writes its part of the output directly, through the `ops::simd`
//! kernel's slot or `_into` form (`ops/out.rs`): into the caller's slice for
//! an `_into` op, into a fresh vector's uninitialised capacity for a
//! returning one. Nothing is copied and no block is allocated.
//!
//! # Allocation
//! [`for_parts`] hands out the output with rayon's `par_chunks_mut` (its
//! joins live on the stack), and partial results go into a per-thread buffer
//! reused from call to call ([`with_scratch`]), so a warm call allocates
//! nothing of its own. What rayon allocates is its own: a call from outside
//! the pool injects one job into the pool's queue (a `crossbeam_deque::Injector`,
//! which allocates a block of 63 job slots every 63 injected jobs);
//! `tests/ops_alloc.rs` counts it.

use std::cell::RefCell;
use std::ops::Range;
use std::thread::LocalKey;

use rayon::prelude::*;

use super::threads::Team;

/// The least work per chunk, per kind of op: below twice this an op runs
/// `ops::simd` directly (`matmul`: below this).
///
/// Chosen from the fork–join cost (16–29 µs on the benchmark VM, an AMD EPYC
/// Zen 3 with 2 shared vCPUs, under load; 7–11 µs on idle cores) and the
/// SIMD ops' speed there (BENCHMARKS.md): a grain is 40–100 µs of
/// single-threaded SIMD work, at least four fork–joins, so that two chunks on
/// two free cores already gain. The `par` bench's `grain` group checks it
/// (par/simd time at 2, 4 and 16 grains; figures in BENCHMARKS.md). With no
/// free core (the VM under load) splitting cannot gain at any size, and a
/// router that times both keeps SIMD.
pub struct Grain;

impl Grain {
    /// Memory-bound element-wise ops (`add` … `axpy`), in elements.
    pub const STREAM: usize = 1 << 18;
    /// `exp`, `sigmoid`, `tanh`, `gelu`, `softmax`, in elements.
    pub const TRANSCENDENTAL: usize = 1 << 15;
    /// `sum`, `dot`, `max`, `min`, `mean`, `norm_l2`, in elements.
    pub const REDUCTION: usize = 1 << 18;
    /// `matvec`, in elements of the matrix.
    pub const MATVEC: usize = 1 << 18;
    /// `transpose`, in elements.
    pub const TRANSPOSE: usize = 1 << 18;
    /// `conv2d`, in multiply-adds (output elements × kernel elements).
    pub const CONV2D: usize = 1 << 18;
    /// `matmul`, in multiply-adds (m·n·k): from about 203³ it is faer's
    /// multi-threaded GEMM, below it SIMD's. Set when `matmul` was bands of
    /// trueno's GEMM, which gained nothing measurable below it on two cores
    /// (192³: 0.71–1.12× SIMD's time across runs, 128³–160³: 0.78–1.25×).
    /// faer's GEMM on two threads already gains at 160³–192³ (the `par`
    /// bench's `grain_matmul` group, BENCHMARKS.md) and loses at 96³–128³, so
    /// the grain could come down to about 3·2²⁰ (146³) once a quiet run
    /// confirms it.
    pub const MATMUL: usize = 1 << 23;

    /// A grain of `work` units expressed in rows that cost `per_row` units each (at least one row).
    pub(crate) fn rows(work: usize, per_row: usize) -> usize {
        work.div_ceil(per_row.max(1)).max(1)
    }
}

/// Chunk boundaries for `n` units cut into chunks of at least `grain` units
/// (see the module docs); `None` when that gives fewer than two chunks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Grid {
    n: usize,
    len: usize,
}

impl Grid {
    /// The grid for `n` units, at least `grain` (≥ 1) per chunk, chunk lengths a multiple of `align`.
    pub(super) fn new(n: usize, grain: usize, align: usize) -> Option<Grid> {
        let chunks = n / grain.max(1);
        if chunks < 2 {
            return None;
        }
        let len = n.div_ceil(chunks).next_multiple_of(align);
        // Rounding up to `align` can merge the chunks back into one for tiny grains.
        (len < n).then_some(Grid { n, len })
    }

    /// How many chunks.
    pub(super) fn count(self) -> usize {
        self.n.div_ceil(self.len)
    }

    /// The units of chunk `i`.
    pub(super) fn range(self, i: usize) -> Range<usize> {
        i * self.len..((i + 1) * self.len).min(self.n)
    }

    /// Units per chunk (the last chunk may have fewer).
    pub(super) fn chunk_len(self) -> usize {
        self.len
    }
}

/// `f(i, part)` for every part `i` of `out` cut into parts of `per`
/// elements (the last may be shorter), on `team`'s threads when it has more
/// than one, else one after another on this thread. This is the one
/// fork–join of every par op; it allocates nothing itself.
pub(super) fn for_parts<T: Send>(team: &Team, out: &mut [T], per: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    if team.threads() == 1 {
        out.chunks_mut(per).enumerate().for_each(|(i, part)| f(i, part));
    } else {
        let least = least_per_job(team, out.len().div_ceil(per.max(1)));
        team.run(|| out.par_chunks_mut(per).with_min_len(least).enumerate().for_each(|(i, part)| f(i, part)));
    }
}

/// The fewest of `count` parts one rayon job takes: 1, or, on a team narrowed to fewer
/// threads than its pool (a narrower width the router chose), as many as leave no more
/// jobs than the team's threads.
fn least_per_job(team: &Team, count: usize) -> usize {
    if team.is_narrowed() {
        count.div_ceil(team.threads()).max(1)
    } else {
        1
    }
}

/// `f(i, out part i)` for every chunk `i` of `grid`, where a chunk of the
/// grid's units writes `per_unit` output elements per unit.
pub(super) fn for_chunks<T: Send>(
    team: &Team,
    grid: Grid,
    per_unit: usize,
    out: &mut [T],
    f: impl Fn(Range<usize>, &mut [T]) + Sync,
) {
    for_parts(team, out, grid.chunk_len() * per_unit, |i, part| f(grid.range(i), part));
}

thread_local! {
    /// The calling thread's buffer of chunk partials ([`partials`]).
    static PARTIALS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// A worker's buffer for a chunk's temporary data (`transpose`'s gathered columns).
    pub(super) static CHUNK_SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on `len` elements of this thread's buffer `which`, grown when
/// needed and kept for the next call: after the first calls of a size, no
/// allocation. The elements hold whatever the last user left. A buffer is in
/// use only inside one op's own code, which calls no other par op, so it is
/// never borrowed twice; if it were, `f` gets a fresh vector instead.
pub(super) fn with_scratch<R>(
    which: &'static LocalKey<RefCell<Vec<f32>>>,
    len: usize,
    f: impl FnOnce(&mut [f32]) -> R,
) -> R {
    which.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            if buffer.len() < len {
                buffer.resize(len, 0.0);
            }
            f(&mut buffer[..len])
        }
        Err(_) => f(&mut vec![0.0; len]),
    })
}

/// `combine` of the partials `part(range)` of `grid`'s chunks, in chunk
/// order: each chunk's partial is computed on `team`, then `combine` runs on
/// this thread over all of them.
pub(super) fn partials<R>(
    team: &Team,
    grid: Grid,
    part: impl Fn(Range<usize>) -> f32 + Sync,
    combine: impl FnOnce(&[f32]) -> R,
) -> R {
    with_scratch(&PARTIALS, grid.count(), |p| {
        for_parts(team, p, 1, |i, slot| slot[0] = part(grid.range(i)));
        combine(p)
    })
}

/// [`partials`] of chunks that also write their part of `out` (`per_unit`
/// output elements per unit of the grid): `part(range, out part)` returns
/// the chunk's partial.
pub(super) fn partials_writing<T: Send, R>(
    team: &Team,
    grid: Grid,
    per_unit: usize,
    out: &mut [T],
    part: impl Fn(Range<usize>, &mut [T]) -> f32 + Sync,
    combine: impl FnOnce(&[f32]) -> R,
) -> R {
    let per = grid.chunk_len() * per_unit;
    with_scratch(&PARTIALS, grid.count(), |p| {
        let each = |(i, (part_out, slot)): (usize, (&mut [T], &mut f32))| *slot = part(grid.range(i), part_out);
        if team.threads() == 1 {
            out.chunks_mut(per).zip(p.iter_mut()).enumerate().for_each(each);
        } else {
            let least = least_per_job(team, p.len());
            team.run(|| out.par_chunks_mut(per).zip(p.par_iter_mut()).with_min_len(least).enumerate().for_each(each));
        }
        combine(p)
    })
}

/// `f(units, out part)` for the chunks of a grid over `n` units of at least `grain`
/// each (chunk lengths a multiple of `align`), each writing `per_unit` elements of `out`
/// per unit, across the pool; `f(0..n, out)` on this thread when that gives one chunk
/// or the team has one thread. (The exact op set's one fork–join: `ops::exact::par`.)
pub(crate) fn chunked(
    n: usize,
    grain: usize,
    align: usize,
    per_unit: usize,
    out: &mut [f32],
    f: impl Fn(Range<usize>, &mut [f32]) + Sync,
) {
    let team = Grid::new(n, grain, align).map(|grid| (grid, Team::here())).filter(|(_, t)| t.threads() > 1);
    match team {
        Some((grid, team)) => for_chunks(&team, grid, per_unit, out, f),
        None => f(0..n, out),
    }
}
