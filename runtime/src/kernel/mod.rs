//! The learning router: a kernel's static handle, its per-call fast path, and
//! how it decides, learns and reports.
//!
//! | file | holds |
//! | --- | --- |
//! | `spec` | the vocabulary: [`KernelSpec`], [`LoopRewrite`], [`LoopSplit`], [`LoopGpu`], [`Decision`], [`DecisionKind`] |
//! | `stats` | per-bucket, per-backend timing statistics (window median and MAD) |
//! | `bucket_state` | a bucket's phases: exploring, confirming a loaded decision, settled |
//! | `policy` | the routing rules: `policy::step`, the one transition of a bucket, pure |
//! | `budget` | the process's exploration budget: one ledger over every bucket's |
//! | `decision_byte` | the per-bucket cached decision the fast path reads, and a route's flags |
//! | `site` | [`Kernel`]: the static handle, its state, and what users call on it |
//! | `cold` | the cold path: gathers inputs, steps the policy, publishes the outcome |
//! | `family` | [`KernelFamily`]: one `Kernel` per instantiation of a generic kernel or method |
//! | `route` | [`Kernel::route`] and [`Route`]: the fast path and timed calls; [`last_route`], what this thread's last routed call ran |
//! | `snapshot` | conversion between bucket states and the history file's records |
//! | `registry` | the kernels called so far ([`kernels`]), what a save snapshots |
//! | `report` | [`KernelTable`], what [`Kernel::table`] returns |
//! | `as_written` | [`AsWritten`]: calls that ran the body as written because an array was not in standard layout ([`Kernel::ran_as_written`]) |
//! | `crossover` | [`Crossover`]: where the chosen backend changes with size, a crossover or a tie within the router's [`TIE_BAND`] |
//! | `loops` | [`LoopSummary`]: what the attribute did to a kernel's reductions and top-level loops, in words |
//! | `overrides` | [`with_backend`] |
//! | `telemetry` | decision events and slow-call spans, [`init_logging`] |
//! | `transfers` | [`TransferReport`]: what each kernel's calls moved between host and device per bucket, and the warning when a GPU call moves more than it computes |
//! | `otlp` | (feature `otlp`) export of those spans to an OpenTelemetry collector |
//! | `verify` | [`run_verified`], [`VerifiedCall`]: comparing a variant with Scalar and excluding it where it disagrees |
//!
//! Dependencies point one way: `spec`, `stats`, `decision_byte`, `overrides`,
//! `loops`, `report`, `as_written` and `telemetry` import no behaviour module (`crossover` reads
//! the tie band from `policy`'s constants); `bucket_state` holds
//! `stats`; `policy` changes a `bucket_state`; `budget` holds a ledger of
//! `bucket_state`'s kind with `policy`'s shares; `snapshot` makes buckets from the history
//! file's records; `site` uses `snapshot`; `cold` uses `site`, `policy` and `budget`; `family`
//! makes sites, and `site` holds an `as_written` counter per kernel; `registry` lists sites; `route` sits on top, and `verify` beside it (it
//! takes a [`Route`] and steps the policy through `cold`); `otlp` sets `telemetry` up for export.

mod as_written;
mod bucket_state;
mod budget;
mod cold;
mod crossover;
mod decision_byte;
mod family;
mod loops;
#[cfg(feature = "otlp")]
pub(crate) mod otlp;
mod overrides;
mod policy;
mod reason;
mod registry;
mod report;
mod route;
mod site;
mod snapshot;
mod spec;
mod stats;
mod telemetry;
mod transfers;
mod verify;

pub use as_written::AsWritten;
pub use crossover::{crossovers, Crossover, TIE_BAND};
pub use family::KernelFamily;
pub use loops::{GpuLine, LoopLine, LoopSummary, MathCalls, SplitLine};
pub use overrides::with_backend;
pub use reason::{loop_reason, LoopReason, LOOP_REASONS};
pub use registry::{kernel_named, kernels};
pub use report::{backend_columns, backend_label, BackendReport, BucketReport, KernelTable};
pub use route::{last_route, LastRoute, Route};
pub use site::{set_span_threshold, Kernel};
pub use spec::{Decision, DecisionKind, KernelSpec, LoopGpu, LoopRewrite, LoopSplit};
pub use telemetry::init_logging;
pub use transfers::TransferReport;
pub use verify::{run_verified, VerifiedCall};
