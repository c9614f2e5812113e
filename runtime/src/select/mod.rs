//! The selection API for code that routes its own calls, without the macro's
//! router: fixed rules, and a learner of its own.
//!
//! - [`selector`]: [`BackendSelector`], the MoE table and the 5× dispatch rule:
//!   stateless answers from fixed rules;
//! - [`catalog`]: NumPy, scikit-learn and PyTorch operation names with their complexity;
//! - [`adaptive`]: [`AdaptiveBackend`], a string-keyed learner: it keeps the timings
//!   its caller reports and picks the backend with the lowest average, a far simpler
//!   rule than the router's (no exploration, pruning or self-correction).
//!
//! The learning router (`crate::kernel`) starts from the same MoE table but
//! lives in its own layer; nothing here depends on it, and it shares no state
//! with [`AdaptiveBackend`].

pub(crate) mod adaptive;
pub mod catalog;
pub(crate) mod selector;

pub use adaptive::{AdaptiveBackend, PerfStats};
pub use selector::{BackendSelector, DEFAULT_GPU_FLOPS, DEFAULT_MIN_DISPATCH_RATIO, DEFAULT_PCIE_BANDWIDTH};
