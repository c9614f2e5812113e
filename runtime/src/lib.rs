//! Runtime of [adaptive-kernel](https://docs.rs/adaptive-kernel): the backends,
//! the op set, the selection rules, the router and its history.
//!
//! Users depend on the `adaptive-kernel` facade, which re-exports everything
//! public here; this crate's layout is one module per concept:
//!
//! | module | holds |
//! | --- | --- |
//! | `backend` | [`Backend`], [`OpComplexity`] |
//! | `selector` | [`BackendSelector`]: MoE thresholds and the 5× dispatch rule |
//! | `adaptive` | [`AdaptiveBackend`]: the seed's string-keyed selector for hand-routed calls |
//! | [`cost`] | [`CostModel`]: predicted time per backend from figures calibrated on this machine |
//! | [`catalog`] | NumPy / scikit-learn / PyTorch operation names and their complexity |
//! | [`ops`] | the op set in three backends: [`ops::scalar`], [`ops::simd`], [`ops::gpu`] |
//! | `bucket` | which sizes share one routing decision |
//! | `site` | [`Kernel`], a kernel's static call site and the per-call fast path |
//! | `router` | how a decision is reached: prior, exploration, pruning, settling, drift |
//! | `history` | per-bucket, per-backend timing statistics |
//! | `cost` | [`CostModel`]: per-machine calibrated time predictions |
//! | `persist` | saving and loading history ("wisdom"), [`flush`] |
//! | `fingerprint` | what identifies this machine in saved history |
//! | `overrides` | [`with_backend`] |
//! | `report` | [`KernelTable`], what [`Kernel::table`] returns |
//! | `telemetry` | decision tracing, [`init_logging`] |
//! | [`config`] | the `ADAPTIVE_KERNEL_*` environment variables |

#![warn(missing_docs)]

mod adaptive;
mod backend;
mod bucket;
pub mod catalog;
pub mod config;
pub mod cost;
mod error;
mod fingerprint;
mod history;
pub mod ops;
mod overrides;
mod persist;
mod registry;
mod report;
mod router;
mod selector;
mod simd_level;
mod site;
mod telemetry;

pub use adaptive::{AdaptiveBackend, PerfStats};
pub use backend::{Backend, OpComplexity, ParseEnumError};
pub use bucket::{bucket_of, bucket_range, BUCKETS};
pub use cost::{CostModel, CostParams};
pub use error::Error;
pub use fingerprint::Fingerprint;
pub use history::{BackendStats, WINDOW};
pub use overrides::with_backend;
pub use persist::{default_path, flush, history_file, set_history, HistoryError};
pub use registry::kernels;
pub use report::{BackendReport, BucketReport, KernelTable};
pub use router::{Decision, DecisionKind};
pub use selector::{BackendSelector, DEFAULT_GPU_FLOPS, DEFAULT_MIN_DISPATCH_RATIO, DEFAULT_PCIE_BANDWIDTH};
pub use simd_level::{simd_level, SimdLevel};
pub use site::{set_span_threshold, Kernel, KernelSpec, Route, Work};
pub use telemetry::init_logging;

/// The trueno compute library this runtime is built on (package `aprender-compute`,
/// library `trueno`), re-exported for interop such as
/// [`BackendSelector::to_trueno_backend`].
pub use trueno;
