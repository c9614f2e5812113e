//! The learning router: a kernel's static handle, its per-call fast path, and
//! how it decides, learns and reports.
//!
//! | file | holds |
//! | --- | --- |
//! | `spec` | the vocabulary: [`KernelSpec`], [`LoopRewrite`], [`LoopSplit`], [`Decision`], [`DecisionKind`] |
//! | `stats` | per-bucket, per-backend timing statistics (window median and MAD) |
//! | `policy` | pure decisions: prior, exploration, pruning, settling, drift |
//! | `decision_byte` | the per-bucket cached decision the fast path reads |
//! | `site` | [`Kernel`]: the static handle and its cold path |
//! | `family` | [`KernelFamily`]: one `Kernel` per instantiation of a generic kernel or method |
//! | `route` | [`Kernel::route`] and [`Route`]: the fast path and timed calls |
//! | `snapshot` | conversion between bucket states and the history file's records |
//! | `registry` | the kernels called so far ([`kernels`]), what a save snapshots |
//! | `report` | [`KernelTable`], what [`Kernel::table`] returns |
//! | `loops` | [`LoopSummary`]: what the attribute did to a kernel's reductions and top-level loops, in words |
//! | `overrides` | [`with_backend`] |
//! | `telemetry` | decision events and slow-call spans, [`init_logging`] |
//! | `otlp` | (feature `otlp`) export of those spans to an OpenTelemetry collector |
//! | `verify` | [`run_verified`]: comparing a variant with Scalar and excluding it where it disagrees |
//!
//! Dependencies point one way: `spec`, `stats`, `decision_byte`, `overrides`,
//! `loops`, `report` and `telemetry` import no behaviour module; `policy` reads `stats`;
//! `site` uses `policy` and `snapshot`; `family` makes sites; `registry` lists sites; `route` sits on top,
//! and `verify` beside it (it takes a [`Route`] and records into a site); `otlp` sets `telemetry` up for export.

mod decision_byte;
mod family;
mod loops;
#[cfg(feature = "otlp")]
pub(crate) mod otlp;
mod overrides;
mod policy;
mod registry;
mod report;
mod route;
mod site;
mod snapshot;
mod spec;
mod stats;
mod telemetry;
mod verify;

pub use family::KernelFamily;
pub use loops::{loop_reason, LoopLine, LoopSummary, SplitLine, LOOP_REASONS};
pub use overrides::with_backend;
pub use registry::{kernel_named, kernels};
pub use report::{BackendReport, BucketReport, KernelTable};
pub use route::Route;
pub use site::{set_span_threshold, Kernel};
pub use spec::{Decision, DecisionKind, KernelSpec, LoopRewrite, LoopSplit};
pub use telemetry::init_logging;
pub use verify::run_verified;
