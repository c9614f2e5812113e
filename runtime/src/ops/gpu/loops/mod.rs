//! GPU runs of plain loops: what `#[adaptive_kernel]` generates for a
//! top-level loop of a body whose iterations are independent (the loops the
//! Parallel variant splits), one iteration per GPU invocation.
//!
//! The macro writes, per loop, a [`GpuLoop`] static (its WGSL, the slices it
//! binds with their element types and access, the types of the scalars it
//! takes, the reductions it carries) and, where the loop was, code that hands
//! a [`Launch`] the loop's bounds, scalars, slices and accumulators to its
//! group's [`Batch`] (the loops of a body that run one after the other, with no
//! host code touching their data in between); where the group ends, the batch
//! runs, the results are stored, and each loop the device did not run runs as
//! written on the CPU ([`Done::on_device`] false):
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
//! device, and its pipeline kept for the process. A group of loops is **one
//! submission**: each region of host memory its loops bind is uploaded once (a
//! written slice too: what an iteration does not write must come back
//! unchanged), and a later loop of the group that reads what an earlier one
//! wrote binds the same device buffer; each loop dispatches `⌈units / 64⌉`
//! workgroups in as many dispatches as the device's grid needs. Reductions are
//! combined within each workgroup in a tree, then the workgroups' partials on
//! the device, in a tree again (`shaders/combine.wgsl`; a `usize` sum's on the
//! host, in 64 bits). The group's finish reads back, in one mapping, each loop's
//! status word and reduction results and every written slice of host data.
//!
//! A slice that is a [`Resident`](crate::resident::Resident) handle's host
//! memory, given to the call in progress through the kernel's `k::resident`
//! entry, is not uploaded when the device's copy is current, and what a loop
//! writes into it stays on the device (`ops::gpu::residency`). Regions and the
//! versions a group's writes make: `exec.rs`.
//!
//! Files: `probe.rs` (the run-time type checks, and the fresh copies a loop run
//! on the host reads), `slot.rs` (a slice as handed over and as the device holds
//! it), `launch.rs` (what a call collects and checks), `batch.rs` (a group: what
//! generated code calls), `exec.rs` (the device side).

mod batch;
mod launch;
pub mod probe;
mod slot;
mod spec;

#[cfg(feature = "gpu")]
mod exec;

pub use batch::{Batch, Done, Finish};
pub use launch::Launch;
#[doc(hidden)]
pub use spec::__set_dispatch_limit_for_tests;
pub use spec::{runs, Access, Binding, Elem, GpuLoop, LoopRuns, ReduceOp, Reduction, Scalar, WORKGROUP};
