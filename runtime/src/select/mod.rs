//! The stateless selection API: answers from fixed rules, no learning.
//!
//! - [`selector`]: [`BackendSelector`], the MoE table and the 5× dispatch rule;
//! - [`catalog`]: NumPy, scikit-learn and PyTorch operation names with their complexity;
//! - [`adaptive`]: [`AdaptiveBackend`], a string-keyed learner for code that times its own calls.
//!
//! The learning router (`crate::kernel`) starts from the same MoE table but
//! lives in its own layer; nothing here depends on it.

pub(crate) mod adaptive;
pub mod catalog;
pub(crate) mod selector;

pub use adaptive::{AdaptiveBackend, PerfStats};
pub use selector::{BackendSelector, DEFAULT_GPU_FLOPS, DEFAULT_MIN_DISPATCH_RATIO, DEFAULT_PCIE_BANDWIDTH};
