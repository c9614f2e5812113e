//! The predictive cost model: how long one call would take on each backend,
//! from a handful of throughput and latency figures measured on *this* machine.
//!
//! The MoE table and the 5× rule in `selector` use fixed constants (an A100 and
//! PCIe 4.0); this model replaces them with [`CostParams`] calibrated at start-up
//! by [`CostModel::calibrate`] (or loaded from the history file and installed with
//! [`install_global`]). The router uses it as the cold-start prior and to prune
//! hopeless exploration; it is never on the per-call path of a settled bucket.
//!
//! # The model
//!
//! For a call doing `F` floating-point operations and moving `B` bytes
//! ([`Work::flops`], [`Work::bytes`]), in seconds:
//!
//! | backend | predicted time |
//! | --- | --- |
//! | Scalar | `cpu_call_latency + max(F / scalar_flops, B / mem_bandwidth)` |
//! | SIMD | `cpu_call_latency + max(F / simd_flops, B / mem_bandwidth)` |
//! | Parallel | `fork_join_latency + max(F / (simd_flops · (1 + 0.8 · (parallel_threads − 1))), B / mem_bandwidth)` |
//! | GPU | `gpu_latency + B / transfer_bandwidth + F / gpu_flops` (∞ when no GPU is available) |
//!
//! The Parallel variant on a narrower width of its pool (half or a quarter of
//! it, a candidate of the router's on pools of 4 threads or more) is predicted
//! by the Parallel row with that width's thread count in place of
//! `parallel_threads`: the fork–join term stays, the share of the work falls.
//!
//! The CPU rows are a roofline: a call is bound either by arithmetic or by
//! memory traffic. The GPU row adds its terms because the data crosses the bus
//! before and after the kernel runs. The GPU beats SIMD once the work is large
//! enough to pay for the launch and the transfer; [`CostModel::gpu_worth_it`] is
//! that comparison.
//!
//! # Where the data is
//! The table charges a GPU call `B` bytes over the bus: its data comes from the
//! host and goes back. A call on data kept on the device
//! ([`Resident`](crate::resident::Resident) handles, through a kernel's
//! `k::resident` entry) moves only what is not there; [`Transfers`] says how
//! much each way would move, and [`CostModel::predict_placed`] charges it:
//!
//! | backend | predicted time with [`Transfers`] `{ gpu: G, cpu: C }` |
//! | --- | --- |
//! | GPU | `gpu_latency + G / transfer_bandwidth + F / gpu_flops` |
//! | Scalar, SIMD, Parallel | the row above, plus `C / transfer_bandwidth`: downloading what only the device holds |
//!
//! `Transfers::host(work)` (`G = B`, `C = 0`) gives the table's rows. The router
//! predicts a `k::resident` call with the transfers its arguments would make at
//! that moment (`Kernel::route_placed`), so the GPU can win a resident sweep
//! that it loses on host data, and a CPU variant pays for bringing the data back.
//!
//! # Calibration
//!
//! [`CostModel::calibrate`] times a few realistic calls of the real ops, each the
//! fastest of three to five repetitions after one dropped warm-up, stopping after
//! three once a probe has used its budget (1 ms for a CPU probe, 25 ms for a GPU
//! probe). The fastest, because a probe shares the machine (with GPU start-up, with
//! the program) and other threads only ever slow a call down; the probes run at the
//! program's priority for the same reason:
//!
//! | figure | probe |
//! | --- | --- |
//! | `cpu_call_latency` | `add` of one element, batches of 64 calls; the larger of Scalar and SIMD |
//! | `parallel_threads` | `ops::par::threads()`, once a kernel with a Parallel variant is routed |
//! | `fork_join_latency` | `ops::par`'s fork–join with no work, one task per thread, likewise |
//! | `scalar_flops` | `ops::scalar::matmul`, 64×64×64 |
//! | `simd_flops` | `ops::simd::matmul`, 128×128×128 |
//! | `mem_bandwidth` | `add` of 2¹⁸ elements (1 MiB per array, 3 MiB moved, STREAM's count); the faster of Scalar and SIMD |
//! | `gpu_latency` | `ops::gpu::add` of one element |
//! | `transfer_bandwidth` | `ops::gpu::add` of 2²⁰ elements, net of `gpu_latency` |
//! | `gpu_flops` | `ops::gpu::matmul` from 128³, doubling up to 1024³ until compute is at least a quarter of the call, net of latency and transfer |
//!
//! Every throughput is computed net of its fixed latency, so the model reproduces
//! the probe's own time. A net time lost in timer noise is floored at a tenth of
//! the call, which under-estimates that throughput (the conservative side). The
//! budget bounds each probe to its warm-up, its budget and one more call.
//!
//! The process-wide model ([`global`]) takes the CPU figures on a background
//! thread started by its first use (until they arrive it answers with
//! [`CostParams::conservative`], and the router prunes nothing by prediction), and
//! the GPU figures on another once a kernel with a GPU variant found the GPU
//! started ([`crate::ops::gpu`]); until then the GPU is predicted unavailable. Figures loaded from history are reused, and figures
//! installed with [`install_global`] are used as they are, never re-measured.

mod calibrate;
mod global;
mod model;

pub use global::{calibrated, global, install_global};
pub(crate) use global::{calibrated_within, gpu_wanted, measured, parallel_wanted, seed};
pub(crate) use model::cheapest;
pub use model::{CostModel, CostParams, Transfers, Work};
