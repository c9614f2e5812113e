//! A differential tester of `#[adaptive_kernel]`, in the manner of Csmith and
//! YARPGen: it generates random kernels in the shapes the loop table
//! documents, writes each twice, plain and annotated, into one crate built
//! under `#![deny(warnings)]`, forces every variant of the annotated copy
//! (Scalar, SIMD, Parallel on 1 and 3 threads, the GPU on lavapipe) on sizes
//! around every lane, chunk and workgroup boundary, with NaN, ±∞, ±0 and
//! subnormals among the inputs, and compares each with the plain copy under
//! the documented contract: bit for bit where it promises that, and
//! elsewhere within the bound it states, computed from the values the call
//! actually met ([`track`]). A failing kernel is minimised and printed.
//!
//! * [`ast`]: the kernels' syntax tree; [`gen`]: the seeded generator;
//!   [`print`](mod@print): the three copies and the crate; [`minimise`]: smaller
//!   candidates;
//! * [`track`], [`harness`]: what the generated crate runs (the contract and
//!   the comparisons);
//! * [`runner`]: building, running and minimising batches.
//!
//! The command (`cargo run -p adaptive-kernel-difftest --release -- --help`)
//! prints one line per failure, `difftest: FAIL seed=… kernel=… shape=…
//! variant=… …`, the minimal kernel after `difftest: MINIMAL`, and a summary.

pub mod ast;
pub mod gen;
pub mod harness;
pub mod minimise;
pub mod print;
pub mod runner;
pub mod track;
