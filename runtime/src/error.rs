//! The error type of the fallible, non-panicking entry points.
//!
//! The `ops` functions panic on shape mismatches (documented under `# Panics`,
//! like slice indexing); the helpers that take user data at a library boundary
//! ([`crate::BackendSelector::vector_add`], the builders' `try_with_*`) return
//! this instead.

use std::fmt;

/// What went wrong in a fallible call of this crate.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// An input's length does not match what the other inputs imply.
    LengthMismatch {
        /// The operation that was asked for.
        op: &'static str,
        /// Which input is wrong (`"b"`, `"a (m×k)"`, …).
        input: &'static str,
        /// The length the other arguments require.
        expected: usize,
        /// The length that was passed.
        actual: usize,
    },
    /// A shape whose element count does not fit in `usize`.
    ShapeOverflow {
        /// The operation that was asked for.
        op: &'static str,
    },
    /// A tuning parameter that must be a positive, finite number was not.
    InvalidParameter {
        /// The parameter's name, as in the builder method.
        name: &'static str,
        /// The value that was passed.
        value: f64,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::LengthMismatch { op, input, expected, actual } => {
                write!(f, "{op}: input {input} has {actual} elements, expected {expected}")
            }
            Error::ShapeOverflow { op } => {
                write!(f, "{op}: the shape's element count overflows usize")
            }
            Error::InvalidParameter { name, value } => {
                write!(f, "{name} must be a positive, finite number, got {value}")
            }
        }
    }
}

impl std::error::Error for Error {}
