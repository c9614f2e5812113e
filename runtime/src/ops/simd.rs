//! TEMPORARY: replaced by the trueno-backed SIMD backend.
pub use super::scalar::*;
