//! GPU runs of plain loops: what `#[adaptive_kernel]` generates for a
//! top-level loop of a body whose iterations are independent (the loops the
//! Parallel variant splits), one iteration per GPU invocation.
//!
//! The macro writes, per loop, a [`GpuLoop`] static (its WGSL, the slices it
//! binds with their element types and access, the types of the scalars it
//! takes, the reductions it carries) and, where the loop was, code that hands
//! a [`Launch`] the loop's bounds, scalars, slices and accumulators, and runs
//! the loop as written on the CPU when [`Launch::run`] answers `false`:
//!
//! * no usable device, a failed device, or a call the device cannot take (a
//!   size over `u32`, a slice over the largest storage binding, more slices than
//!   the device binds);
//! * a captured value whose type is not the one the macro inferred (checked here,
//!   at run time, by [`probe`]: a wrong guess runs the loop on the CPU, never on
//!   wrong data);
//! * a shader that sets its status word: what would panic in Rust (an index out
//!   of bounds, an integer division by zero) or what the device cannot compute as
//!   the host does (see `shaders/loops.wgsl`). Nothing has been copied back then,
//!   so the loop as written runs on unchanged data, and panics where Rust panics.
//!
//! # How a call runs
//! The shader (`shaders/math.wgsl`, `shaders/loops.wgsl`, then the generated
//! part) is validated with naga and compiled the first time the loop runs on the
//! device, and its pipeline kept for the process. One call uploads each slice
//! once (a written slice too: what an iteration does not write must come back
//! unchanged), dispatches `⌈units / 64⌉` workgroups in as many dispatches as the
//! device's grid needs, and reads back, in one mapping, the status word, the
//! workgroups' partial results and every written slice. Reductions are combined
//! on the host, in workgroup order.
//!
//! Files: `probe.rs` (the run-time type checks), `slot.rs` (a slice as handed
//! over and as the device holds it), `launch.rs` (what a call collects and
//! decides), `exec.rs` (the device side).

mod launch;
pub mod probe;
mod slot;
mod spec;

#[cfg(feature = "gpu")]
mod exec;

pub use launch::Launch;
#[doc(hidden)]
pub use spec::__set_dispatch_limit_for_tests;
pub use spec::{runs, Access, Binding, Elem, GpuLoop, LoopRuns, ReduceOp, Reduction, Scalar, WORKGROUP};
