//! The chunk grid every par op splits its input on, the fork–join that runs
//! the chunks, and the fresh outputs they write into.
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
//! ops::simd's kernels are reached through its public ops, which return a new
//! `Vec`. A chunk therefore computes [`BLOCK`]-element blocks and copies each
//! into its part of the output: the block stays in L1, so the copy adds no
//! memory traffic, only a few percent of time. The output itself is written
//! in place (no zeroing pass), and large ones ask Linux for transparent huge
//! pages, for the reason `ops/simd/buffer.rs` gives: first-touch page faults
//! cost more than a memory-bound op on the benchmark VM.

use std::mem::MaybeUninit;
use std::ops::Range;

use rayon::prelude::*;

use super::threads::Team;

/// Elements per block that a chunk hands to an `ops::simd` op before copying
/// the block's result into the output: 16 KiB, so a block's input and result
/// stay in L1 and its temporary comes from the allocator's free list.
pub(super) const BLOCK: usize = 4096;

/// Outputs of at least this many bytes ask for transparent huge pages (the
/// threshold `ops::simd` uses).
#[cfg(target_os = "linux")]
const HUGE_PAGE_MIN_BYTES: usize = 16 << 20;

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
    /// `matmul`, in multiply-adds (m·n·k): from about 203³. Below it the
    /// bands gained nothing measurable on two cores (192³: 0.71–1.12× SIMD's
    /// time across runs, 128³–160³: 0.78–1.25×), and a band under ~100 rows
    /// drops trueno's GEMM into its small-matrix paths.
    pub const MATMUL: usize = 1 << 23;

    /// A grain of `work` units expressed in rows that cost `per_row` units each (at least one row).
    pub(super) fn rows(work: usize, per_row: usize) -> usize {
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

    /// The units of chunk after chunk, in order.
    pub(super) fn ranges(self) -> impl ExactSizeIterator<Item = Range<usize>> {
        let Grid { n, len } = self;
        (0..n.div_ceil(len)).map(move |i| i * len..((i + 1) * len).min(n))
    }

    /// Units per chunk (the last chunk may have fewer).
    pub(super) fn chunk_len(self) -> usize {
        self.len
    }
}

/// `f(i, item)` for every item, on `team`'s threads when it has more than
/// one, and the results in item order whatever ran where. This is the one
/// fork–join of every par op.
pub(super) fn map_chunks<C: Send, T: Send>(team: &Team, items: Vec<C>, f: impl Fn(usize, C) -> T + Sync) -> Vec<T> {
    if team.threads() == 1 {
        return items.into_iter().enumerate().map(|(i, c)| f(i, c)).collect();
    }
    team.run(|| items.into_par_iter().enumerate().map(|(i, c)| f(i, c)).collect())
}

/// A fresh output of `rows × row_len` elements, written chunk by chunk: `write`
/// gets each chunk's rows (from `grid`) and its part of the output, which it
/// must initialise entirely; returns the output and what `write` returned for
/// each chunk, in chunk order.
///
/// # Safety
/// `write` must initialise every element of the slice it is given (a panic
/// inside it is fine: the vector is dropped with length 0).
pub(super) unsafe fn fill<T: Send>(
    team: &Team,
    grid: Grid,
    row_len: usize,
    write: impl Fn(Range<usize>, &mut [MaybeUninit<f32>]) -> T + Sync,
) -> (Vec<f32>, Vec<T>) {
    let n = grid.n * row_len;
    let mut v = Vec::with_capacity(n);
    advise_huge_pages(&mut v, n);
    let chunks: Vec<_> = v.spare_capacity_mut()[..n].chunks_mut(grid.len * row_len).zip(grid.ranges()).collect();
    let results = map_chunks(team, chunks, |_, (out, rows)| write(rows, out));
    // SAFETY: the capacity is at least `n`; the chunks partition the first `n` elements
    // and the caller guarantees `write` initialised each chunk entirely.
    unsafe { v.set_len(n) };
    (v, results)
}

/// Writes `op(range)` into `out`, one [`BLOCK`] at a time: `range` is the
/// block's position within `out`, and `op` must return exactly that many
/// elements. Returns what `each` made of every block's result, for chunk
/// partials, in block order.
pub(super) fn blocks<T>(
    out: &mut [MaybeUninit<f32>],
    mut op: impl FnMut(Range<usize>) -> Vec<f32>,
    mut each: impl FnMut(&[f32]) -> T,
) -> Vec<T> {
    let mut made = Vec::with_capacity(out.len().div_ceil(BLOCK));
    for (b, dst) in out.chunks_mut(BLOCK).enumerate() {
        let start = b * BLOCK;
        let block = op(start..start + dst.len());
        copy_into(dst, &block);
        made.push(each(&block));
    }
    made
}

/// Initialises all of `out` with `src`.
///
/// # Panics
/// If the lengths differ (an op returned the wrong length), before writing.
pub(super) fn copy_into(out: &mut [MaybeUninit<f32>], src: &[f32]) {
    assert_eq!(src.len(), out.len(), "ops::par: a chunk's op returned the wrong number of elements");
    for (o, &x) in out.iter_mut().zip(src) {
        o.write(x);
    }
}

/// Asks Linux to back the whole pages of `v`'s first `n` elements with
/// transparent huge pages when they span at least [`HUGE_PAGE_MIN_BYTES`].
/// Advice only: an error leaves ordinary pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages(v: &mut Vec<f32>, n: usize) {
    let bytes = n * size_of::<f32>();
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    let base = v.as_mut_ptr().cast::<u8>();
    let skip = base.align_offset(4096);
    let len = bytes.saturating_sub(skip) & !4095;
    // SAFETY: `[base + skip, base + skip + len)` lies inside `v`'s allocation of at least
    // `bytes` bytes, which this function's caller owns and nothing has read or shared yet.
    // MADV_HUGEPAGE only changes how those pages are backed later, not their contents or
    // mapping, so it cannot affect any other allocation.
    unsafe { libc::madvise(base.add(skip).cast(), len, libc::MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_v: &mut Vec<f32>, _n: usize) {}

/// A zeroed vector of `n` elements (`calloc`: a fresh mapping is not touched
/// here), advised like [`fill`]'s outputs, for kernels that accumulate into
/// their output (trueno's GEMM).
pub(super) fn zeroed(n: usize) -> Vec<f32> {
    let mut v = vec![0.0f32; n];
    advise_huge_pages(&mut v, n);
    v
}
