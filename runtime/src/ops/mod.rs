//! The op set an annotated kernel body calls as `ops::…`, in four backends
//! with identical signatures: [`scalar`] (plain loops, the reference),
//! [`simd`] (trueno's SIMD kernels), [`par`] (the SIMD kernels on chunks
//! across a rayon thread pool) and [`gpu`] (compute shaders over wgpu).
//!
//! The `#[adaptive_kernel]` macro binds `ops` to a different module in each
//! generated variant, so one body runs on every backend. Outside a kernel,
//! `ops::add` and friends are the scalar functions.
//!
//! # Conventions, the same in all four backends
//! - All data is `f32`; matrices are row-major.
//! - Shape mismatches panic with a message naming the op and both shapes.
//! - Empty inputs: `sum`, `dot`, `norm_l2` → 0; `max` → −∞; `min` → +∞;
//!   `mean` → NaN; element-wise ops and `softmax` return an empty vector.
//! - NaN propagates: any NaN input to `max`/`min` gives NaN.
//! - `conv2d` is valid-mode cross-correlation (the kernel is not flipped).

pub(crate) mod check;
pub mod gpu;
pub mod par;
pub mod scalar;
pub mod simd;

pub use scalar::*;
