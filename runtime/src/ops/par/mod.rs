//! The Parallel backend: every op of [`scalar`](super::scalar) with the same
//! signature, shape checks and empty/NaN conventions, computed by running the
//! [`simd`](super::simd) ops on chunks of the input across a rayon thread pool;
//! `matmul` is faer's multi-threaded GEMM, on the same pool.
//!
//! # When it forks
//! An input is cut into chunks of at least a *grain* of work, per kind of op
//! (`split.rs`, `Grain`): the work a single-threaded SIMD op needs to
//! outlast several fork–joins. One fork–join (waking a pool thread and
//! joining it) measured 7–11 µs on idle cores and 16–29 µs on the 2-vCPU
//! benchmark VM while other jobs ran (BENCHMARKS.md, "ops::par"), so a grain
//! is 40–100 µs of SIMD work there. An input of fewer than two grains (one
//! for `matmul`) runs the [`simd`](super::simd) op on the whole input, at
//! SIMD's cost plus a few nanoseconds; so do larger inputs on a rayon worker
//! thread or when [`threads`] is 1, except that reductions and `softmax` then
//! run their chunks one after another, so that their result does not change.
//!
//! # Results
//! Each op that produces an array has a returning and an `_into` form (see
//! the [`ops`](super) docs), which run the same chunks of the same SIMD
//! kernels and give the same bits; a chunk writes its part of the output in
//! place, the caller's `out` or a fresh vector's (`split.rs`).
//! - Element-wise ops, `matvec`, `transpose`, `conv2d`: bit-identical to
//!   [`simd`](super::simd) (each output element is computed by the same SIMD op).
//! - Reductions and `softmax`: one partial per chunk, combined on the calling
//!   thread in chunk order. Chunk boundaries depend only on the input's
//!   length, so a result depends only on the input, never on the thread
//!   count or on which thread ran which chunk; it differs from Scalar's
//!   left-to-right sum within the same bound as SIMD's (tests/ops_par.rs).
//! - `matmul`: faer's GEMM on the team's threads (`matrix.rs` says why), so a
//!   result depends on the input and the thread count (and on the CPU's
//!   instruction set, as SIMD's does), never on which thread ran which tile;
//!   each element stays within SIMD's bound of Scalar.
//!
//! # Threads
//! [`threads`] says how many threads a call made here uses; [`with_threads`]
//! runs a closure at a given count. By default the ops run on rayon's global
//! pool (`RAYON_NUM_THREADS`, else the available parallelism);
//! `ADAPTIVE_KERNEL_THREADS=N` gives them a dedicated pool of N threads (a
//! bad value is reported once, naming the variable and the accepted values,
//! and ignored). A call from inside a rayon task does not fork again: see
//! `threads.rs` for why and how that avoids deadlock and oversubscription.

mod elementwise;
#[doc(hidden)]
pub mod loops;
mod matrix;
mod private;
mod reduce;
mod split;
mod threads;

pub use crate::config::{parse_threads, ENV_THREADS};
pub use elementwise::{
    add, add_into, axpy, div, div_into, exp, exp_into, gelu, gelu_into, mul, mul_into, relu, relu_into, scale,
    scale_into, sigmoid, sigmoid_into, softmax, softmax_into, sub, sub_into, tanh, tanh_into,
};
pub use matrix::{conv2d, conv2d_into, matmul, matmul_into, matvec, matvec_into, transpose, transpose_into};
pub use reduce::{dot, max, mean, min, norm_l2, sum};
pub(crate) use split::chunked;
pub(crate) use threads::{pool_threads, Narrowed};
pub use threads::{threads, with_threads};

/// The grains, for tests and benches that must size inputs across them.
#[doc(hidden)]
pub use split::Grain;

/// One fork–join with no work, as a par op above its grain does it: one
/// empty task per thread on the pool a call made here would use. For the
/// `par` bench's fork–join cost; not part of the op set.
#[doc(hidden)]
pub fn fork_join() {
    let team = threads::Team::here();
    // A `Vec` of `()` never allocates.
    split::for_parts(&team, &mut vec![(); team.threads()], 1, |_, _| ());
}
