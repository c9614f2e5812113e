//! Runtime of the `adaptive-kernel` crate: the backends,
//! the op set, the selection rules, the router and its history.
//!
//! Users depend on the `adaptive-kernel` facade, which re-exports everything
//! public here. The crate is layered; each layer imports only those above it
//! in this table, and no two files import each other:
//!
//! | layer | holds |
//! | --- | --- |
//! | leaves: `backend`, `candidate`, `error`, [`config`], `simd_level`, [`moe`], `bucket`, `numeric`, [`tolerance`], [`fusion`], [`compare`] | [`Backend`], [`OpComplexity`], the candidates a bucket chooses between (a backend, and for Parallel a width of the pool), per-candidate values and sets, [`Error`], the `ADAPTIVE_KERNEL_*` variables and their equivalents in code, [`SimdLevel`] and the one table of SIMD feature sets, the one MoE threshold table, size buckets, the shared median, the agreement a reassociated reduction promises, what a fused multiply-add may change, and how `verify` compares results by both |
//! | [`ops`] | the op set in four backends: [`ops::scalar`], [`ops::simd`], [`ops::par`], [`ops::gpu`] (with the device side of resident data) |
//! | [`cost`] | [`CostModel`]: predicted time per backend from figures calibrated on this machine; [`Work`], [`Transfers`] |
//! | [`resident`] | data kept on the GPU between kernel calls: [`resident::Resident`], and the arguments of a kernel's `k::resident` entry |
//! | `select` | the selection API for code that routes its own calls: [`BackendSelector`] (MoE table, 5× rule, stateless), [`catalog`], [`AdaptiveBackend`] (a string-keyed learner of its own) |
//! | `persist` | the history file: its own versioned records ([`HistoryFile`]), a pure merge, the background saver, [`Fingerprint`] and the nearest other entry ([`NearestEntry`]), [`flush`], and reading and editing a file by path ([`read_history`], [`clear_history`], [`save_calibration`]) |
//! | `kernel` | the learning router: [`KernelSpec`], [`Kernel`] (static handle), [`Route`] (fast path), the cold path, the routing rules (`kernel::policy`), statistics, [`KernelTable`], [`with_backend`], telemetry |
//!
//! `select` and `kernel` are siblings: the stateless API never reaches the
//! router. `persist` receives snapshots from `kernel` and never reaches into it.

#![warn(missing_docs)]

mod backend;
mod bucket;
mod candidate;
mod clock;
pub mod compare;
pub mod config;
pub mod cost;
mod error;
pub mod fusion;
mod kernel;
pub mod layout;
pub mod math;
pub mod moe;
mod numeric;
pub mod ops;
mod persist;
mod platform;
pub mod resident;
mod select;
mod simd_level;
pub mod tolerance;

pub use backend::{Backend, OpComplexity, ParseEnumError};
pub use bucket::{bucket_of, bucket_range, BUCKETS};
pub use cost::{CostModel, CostParams, Transfers, Work};
pub use error::Error;
#[doc(hidden)]
pub use kernel::run_verified;
pub use kernel::Crossover;
#[doc(hidden)]
pub use kernel::VerifiedCall;
pub use kernel::{
    backend_columns, backend_label, crossovers, init_logging, kernel_named, kernels, last_route, loop_reason,
    set_span_threshold, with_backend, AsWritten, BackendReport, BucketReport, Decision, DecisionKind, GpuLine, Kernel,
    KernelFamily, KernelSpec, KernelTable, LastRoute, LoopGpu, LoopLine, LoopReason, LoopRewrite, LoopSplit,
    LoopSummary, MathCalls, Route, SplitLine, TransferReport, LOOP_REASONS, TIE_BAND,
};
/// Bytes in a fitting unit, as tables, the tour and the `adaptive-kernel` command print
/// them. Not a public API.
#[doc(hidden)]
pub use numeric::bytes as __bytes;
/// The median every statistic of this crate is taken with, for the workspace's own
/// benches (`benches/routing_quality`). Not a public API.
#[doc(hidden)]
pub use numeric::median as __median;
/// Sizes with thousands separators, as the tour and the `adaptive-kernel` command print
/// them. Not a public API.
#[doc(hidden)]
pub use numeric::thousands as __thousands;
#[doc(hidden)]
pub use persist::__delay_saves_for_tests;
#[doc(hidden)]
pub use persist::__saving_for_tests;
pub use persist::{
    clear_history, default_path, export_history, export_learned, flush, history_file, history_status, import_history,
    import_learned, read_history, save_calibration, set_history, BucketRecord, BuildProfile, ExclusionRecord,
    Fingerprint, GpuLoopRecord, HistoryError, HistoryFile, HistoryStatus, ImportError, ImportSummary, KernelRecord,
    LearnedImport, LoopRecord, MachineRecord, NearestEntry, NearestRule, SplitRecord, TimingRecord, TransferRecord,
};
pub use select::{
    catalog, AdaptiveBackend, BackendSelector, PerfStats, DEFAULT_GPU_FLOPS, DEFAULT_MIN_DISPATCH_RATIO,
    DEFAULT_PCIE_BANDWIDTH,
};
pub use simd_level::{simd_cold, simd_level, simd_run, SimdLevel};

/// Exporting routing decisions to an OpenTelemetry collector over OTLP (feature
/// `otlp`): [`telemetry::init_otlp`]; what is exported and how it stays off the
/// hot path is in its docs.
#[cfg(feature = "otlp")]
pub mod telemetry {
    pub use crate::kernel::otlp::{init_otlp, OtlpError, OtlpGuard};
}

/// The trueno compute library this runtime is built on (package `aprender-compute`,
/// library `trueno`), re-exported for interop such as
/// [`BackendSelector::to_trueno_backend`].
pub use trueno;
