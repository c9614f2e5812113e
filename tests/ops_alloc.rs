//! The `_into` ops allocate nothing per call once warm, in Scalar, SIMD and
//! Parallel: a counting global allocator counts every allocation the process
//! makes while a loop of calls runs (after a few warm-up calls). A global
//! allocator is per binary, and this binary has no test harness
//! (`harness = false` in Cargo.toml), so no thread but the ops' own runs
//! meanwhile. The GPU twins are not counted: recording a device submission
//! allocates inside wgpu (their promise is no intermediate result `Vec`).
//!
//! What does allocate, measured here and asserted exactly, not skipped:
//! - **Parallel, when a call forks**: rayon, not our code. A fork–join from
//!   outside the pool injects one job into the pool's queue, a
//!   `crossbeam_deque::Injector`, which allocates a block of job slots each
//!   time the previous block fills (63 slots: 1,520 bytes here); now and then
//!   the pool's threads also allocate for their own bookkeeping (crossbeam's
//!   epoch-based reclamation: 2,072 bytes seen once in five runs). Asserted,
//!   as a bare `rayon::join` from outside the pool measures them: every
//!   allocation is small (under 4 KiB: never an output- or input-sized
//!   buffer), and there is at most one per 16 fork–joins (an allocation per
//!   call, of any size, fails it).
//! - **SIMD `matmul_into` where trueno's small-matrix GEMM runs**: m, n, k ≤
//!   256 with m and n multiples of 8, except where both are ≤ 128 (its direct
//!   kernel): it packs B into a fresh `Vec` of k·n floats on every call.
//!   Asserted: at most one allocation per call, of exactly that size. Other
//!   shapes allocate nothing (trueno keeps its large GEMM's buffers per thread).
//! - **Parallel `matmul_into` above its grain**: faer's parallel GEMM spawns its
//!   tasks on rayon, boxing each (about nine allocations per call on two
//!   threads, 3–192 bytes). Asserted: nothing of 1 KiB or more, so never an
//!   output- or matrix-sized buffer. Below its grain it is SIMD's. Once per
//!   thread, not per call: the first time a thread runs part of a GEMM, faer's
//!   x86 kernels (private-gemm-x86) give it a workspace of twice the L3 cache
//!   (address space, touched as used: 960 MiB where a VM reports a 480 MiB
//!   L3). A pool thread that ran no part of the warm-up's multiplies (the other
//!   took every task) allocates it in the counted calls; those calls are
//!   counted again, and at most one such workspace per thread is allowed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use adaptive_kernel::ops::par::{self, Grain};
use adaptive_kernel::ops::{scalar, simd};

/// Counts allocations (`alloc`, `alloc_zeroed`, `realloc`) while [`COUNTING`] is set.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// The sizes of the first [`KEPT`] allocations counted.
static SIZES: [AtomicUsize; KEPT] = [const { AtomicUsize::new(0) }; KEPT];
const KEPT: usize = 256;

impl Counting {
    fn note(size: usize) {
        if COUNTING.load(Relaxed) {
            let i = COUNT.fetch_add(1, Relaxed);
            if let Some(slot) = SIZES.get(i) {
                slot.store(size, Relaxed);
            }
        }
    }
}

// SAFETY: every method forwards to the system allocator with the caller's arguments; the
// counting touches only atomics, never allocates, and cannot fail.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Counting::note(layout.size());
        // SAFETY: the caller's contract for `alloc`, passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Counting::note(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Counting::note(new_size);
        // SAFETY: the caller's contract for `realloc`, passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Warm-up calls before counting: enough for every pool thread to have run a chunk.
const WARM_UP: usize = 20;

/// The sizes of the allocations `calls` calls of `f` made, after [`WARM_UP`] calls.
fn allocations(calls: usize, mut f: impl FnMut()) -> Vec<usize> {
    for _ in 0..WARM_UP {
        f();
    }
    COUNT.store(0, Relaxed);
    COUNTING.store(true, Relaxed);
    for _ in 0..calls {
        f();
    }
    COUNTING.store(false, Relaxed);
    let n = COUNT.load(Relaxed);
    assert!(n <= KEPT, "{n} allocations, more than the {KEPT} this test keeps the sizes of");
    SIZES[..n].iter().map(|s| s.load(Relaxed)).collect()
}

/// `n` finite values.
fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32).map(|i| ((i ^ seed).wrapping_mul(0x9E37_79B9) >> 9) as f32 / (1 << 22) as f32 - 1.0).collect()
}

/// Every `_into` op of one backend, on inputs of a size chosen per op.
struct Sizes {
    /// Elements of the element-wise ops (stream: `add` … `relu`).
    stream: usize,
    /// Elements of the transcendental ops and `softmax`.
    transcendental: usize,
    /// `matvec` (m×n), `transpose` (m×n), `conv2d` (an m×n input, a 3×3 kernel).
    matrix: (usize, usize),
    /// `matmul` (m, n, k).
    matmul: (usize, usize, usize),
}

/// Asserts that each `_into` op of a backend allocates what `allowed` accepts
/// over `calls` calls; `ops` names the backend's functions.
macro_rules! each_into_op {
    ($ops:ident, $what:expr, $sizes:expr, $calls:expr, $allowed:expr) => {{
        let Sizes { stream, transcendental, matrix: (rows, cols), matmul: (m, n, k) } = $sizes;
        let big = stream.max(transcendental).max(rows * cols).max(m * k).max(k * n).max(m * n);
        let (a, b) = (data(big, 1), data(big, 2));
        let mut out = vec![0.0f32; big];
        let allowed = $allowed;
        let check = |op: &str, f: &mut dyn FnMut()| {
            let sizes = allocations($calls, || f());
            allowed(op, &sizes).unwrap_or_else(|why| panic!("{} {op}: {why}; allocation sizes {sizes:?}", $what));
            println!("{} {op}: {} allocations in {} calls", $what, sizes.len(), $calls);
        };
        let (s, t) = (stream, transcendental);
        check("add_into", &mut || $ops::add_into(&a[..s], &b[..s], &mut out[..s]));
        check("sub_into", &mut || $ops::sub_into(&a[..s], &b[..s], &mut out[..s]));
        check("mul_into", &mut || $ops::mul_into(&a[..s], &b[..s], &mut out[..s]));
        check("div_into", &mut || $ops::div_into(&a[..s], &b[..s], &mut out[..s]));
        check("scale_into", &mut || $ops::scale_into(&a[..s], 1.5, &mut out[..s]));
        check("relu_into", &mut || $ops::relu_into(&a[..s], &mut out[..s]));
        check("exp_into", &mut || $ops::exp_into(&a[..t], &mut out[..t]));
        check("sigmoid_into", &mut || $ops::sigmoid_into(&a[..t], &mut out[..t]));
        check("tanh_into", &mut || $ops::tanh_into(&a[..t], &mut out[..t]));
        check("gelu_into", &mut || $ops::gelu_into(&a[..t], &mut out[..t]));
        check("softmax_into", &mut || $ops::softmax_into(&a[..t], &mut out[..t]));
        check("matvec_into", &mut || $ops::matvec_into(&a[..rows * cols], &b[..cols], rows, cols, &mut out[..rows]));
        check("transpose_into", &mut || $ops::transpose_into(&a[..rows * cols], rows, cols, &mut out[..rows * cols]));
        let conv = (rows - 2) * (cols - 2);
        check("conv2d_into", &mut || $ops::conv2d_into(&a[..rows * cols], &b[..9], rows, cols, 3, 3, &mut out[..conv]));
        check("matmul_into", &mut || $ops::matmul_into(&a[..m * k], &b[..k * n], m, n, k, &mut out[..m * n]));
    }};
}

/// Small inputs, and a matmul that takes trueno's direct kernel (m, n ≤ 128, multiples of 8).
const SMALL: Sizes = Sizes { stream: 1000, transcendental: 1000, matrix: (37, 29), matmul: (64, 48, 40) };

fn none(_: &str, sizes: &[usize]) -> Result<(), String> {
    if sizes.is_empty() {
        Ok(())
    } else {
        Err("allocated".into())
    }
}

fn scalar_and_simd_allocate_nothing() {
    each_into_op!(scalar, "scalar", SMALL, 50, none);
    each_into_op!(simd, "simd", SMALL, 50, none);
    // trueno's blocked GEMM, above 256 in one dimension, keeps its buffers per thread.
    let big_gemm = Sizes { matmul: (300, 260, 100), ..SMALL };
    each_into_op!(simd, "simd, blocked GEMM", big_gemm, 10, none);
}

/// The documented exception: trueno's small GEMM packs B (k·n floats) afresh on every call.
fn simd_matmul_allocates_only_truenos_packed_b() {
    for (m, n, k) in [(136, 136, 136), (200, 48, 96), (256, 256, 256)] {
        let (a, b) = (data(m * k, 3), data(k * n, 4));
        let mut c = vec![0.0f32; m * n];
        let calls = 10;
        let sizes = allocations(calls, || simd::matmul_into(&a, &b, m, n, k, &mut c));
        println!("simd matmul_into {m}×{n}×{k}: {} allocations in {calls} calls, sizes {sizes:?}", sizes.len());
        assert!(
            sizes.len() <= calls && sizes.iter().all(|&s| s == k * n * size_of::<f32>()),
            "simd matmul_into {m}×{n}×{k}: allocations other than trueno's packed B ({} bytes): {sizes:?}",
            k * n * size_of::<f32>()
        );
    }
}

fn parallel_without_a_fork_allocates_nothing() {
    // Below every grain: the SIMD ops on the calling thread.
    each_into_op!(par, "par, below the grains", SMALL, 50, none);
    // Above the grains, with one thread: no fork either (reductions and softmax run their
    // chunks one after another on this thread, with the partials in its buffer).
    let split = Sizes {
        stream: 2 * Grain::STREAM + 16,
        transcendental: 2 * Grain::TRANSCENDENTAL + 16,
        matrix: (2 * Grain::MATVEC / 300 + 8, 300),
        matmul: (64, 48, 40),
    };
    par::with_threads(1, || each_into_op!(par, "par, one thread", split, 10, none));
}

/// The most a bookkeeping allocation of rayon's (or crossbeam's, under it) takes.
const BOOKKEEPING: usize = 4096;

/// Rayon's own allocations in bare `rayon::join`s made outside the pool: 4,000 injected jobs.
fn rayons_bookkeeping() {
    let sizes = allocations(4000, || {
        black_box(rayon::join(|| (), || ()));
    });
    println!("rayon::join from outside the pool: {} allocations in 4000 calls, sizes {sizes:?}", sizes.len());
    assert!(!sizes.is_empty(), "rayon's injector allocated no block in 4,000 injected jobs");
    assert!(sizes.iter().all(|&s| s < BOOKKEEPING), "bare joins allocated a large buffer: {sizes:?}");
    assert!(sizes.len() <= 4000 / 16, "bare joins allocated more than once per 16 jobs: {}", sizes.len());
}

fn parallel_forks_allocate_only_rayons_bookkeeping() {
    rayons_bookkeeping();
    let split = Sizes {
        stream: 2 * Grain::STREAM + 16,
        transcendental: 2 * Grain::TRANSCENDENTAL + 16,
        // Two matvec/transpose grains; conv2d (9 multiply-adds per output) splits at far fewer rows.
        matrix: (2 * Grain::MATVEC / 300 + 8, 300),
        // Below matmul's grain (faer's split is the next function's).
        matmul: (64, 48, 40),
    };
    // Softmax makes three fork–joins per call, the other ops one; 64 calls.
    let calls = 64;
    let bookkeeping_only = |op: &str, sizes: &[usize]| {
        let forks = if op == "softmax_into" { 3 * calls } else { calls };
        match sizes.iter().find(|&&s| s >= BOOKKEEPING) {
            Some(s) => Err(format!("an allocation of {s} bytes, larger than rayon's bookkeeping")),
            None if sizes.len() > forks / 16 + 1 => Err(format!("{} allocations for {forks} fork–joins", sizes.len())),
            None => Ok(()),
        }
    };
    par::with_threads(2, || each_into_op!(par, "par, two threads", split, calls, bookkeeping_only));
}

fn parallel_matmul_above_its_grain_allocates_only_faers_task_bookkeeping() {
    let side = 256; // 256³ multiply-adds: twice the grain
    assert!(side * side * side >= Grain::MATMUL);
    let (a, b) = (data(side * side, 5), data(side * side, 6));
    let mut c = vec![0.0f32; side * side];
    let (calls, threads) = (10, 2);
    // One pool for every window: a new pool's threads would each allocate a workspace again.
    let (workspaces, sizes) = par::with_threads(threads, || {
        let mut workspaces = Vec::new();
        loop {
            let sizes = allocations(calls, || par::matmul_into(&a, &b, side, side, side, &mut c));
            let large: Vec<usize> = sizes.iter().copied().filter(|&s| s >= 1024).collect();
            if large.is_empty() || workspaces.len() + large.len() > threads {
                return (workspaces, sizes);
            }
            // A thread's first part of a GEMM, after the warm-up: its workspace. Again.
            workspaces.extend(large);
        }
    });
    println!(
        "par matmul_into {side}³, {threads} threads: {} allocations in {calls} calls, sizes {sizes:?} \
         (per-thread GEMM workspaces first allocated after the warm-up: {workspaces:?})",
        sizes.len()
    );
    assert!(
        sizes.iter().all(|&s| s < 1024),
        "faer's GEMM allocated a buffer: {sizes:?} (workspaces before: {workspaces:?})"
    );
}

fn main() {
    // `cargo test` passes filters and flags; this binary runs everything, in this order.
    scalar_and_simd_allocate_nothing();
    simd_matmul_allocates_only_truenos_packed_b();
    parallel_without_a_fork_allocates_nothing();
    parallel_forks_allocate_only_rayons_bookkeeping();
    parallel_matmul_above_its_grain_allocates_only_faers_task_bookkeeping();
    println!("ops_alloc: ok");
}
