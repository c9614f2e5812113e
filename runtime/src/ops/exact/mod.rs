//! The op sets an `exact` kernel's variants bind `ops` to: each keeps Scalar's order of
//! operations, so every variant of an `#[adaptive_kernel(exact)]` body returns the
//! Scalar variant's bits, its `ops::` calls included.
//!
//! | variant | `ops` is | what it computes |
//! | --- | --- | --- |
//! | Scalar | [`scalar`](super::scalar) | the reference |
//! | SIMD | [`exact::simd`](simd): Scalar's kernels | the same calls; the variant's own loops are compiled for the widest instruction set, which keeps each value's operations (Rust never fuses `a*b + c` nor reorders a sum) |
//! | Parallel | [`exact::par`](par) | Scalar's kernel on chunks of the output for the ops that compute each element on its own (element-wise ops, `axpy`, `matmul`, `matvec`, `transpose`, `conv2d`); Scalar's kernel on the calling thread for reductions (`sum`, `dot`, `max`, `min`, `mean`, `norm_l2`), whose left-to-right chain no split keeps |
//! | GPU | none: an `exact` kernel has a GPU variant only when `gpu = path` names one | a GPU may flush subnormals to zero, drop NaN payloads, fuse `a*b + c` and reduce in a tree |
//!
//! [`ops::simd`](super::simd), [`ops::par`](super::par) and [`ops::gpu`](super::gpu)
//! are the faster sets the variants of other kernels use: their reductions add in
//! lanes, chunks or a tree, and their `exp`, `tanh`, … are other formulas, within
//! [`tolerance`](crate::tolerance) of Scalar's result but not its bits.
//!
//! ```
//! # use adaptive_kernel_runtime as adaptive_kernel;
//! use adaptive_kernel::ops::{exact, scalar};
//! // Mixed magnitudes: any other order of the additions rounds differently.
//! let x: Vec<f32> = (0..1_000_000).map(|i| if i % 3 == 0 { 1e8 } else { 0.37 + i as f32 * 1e-7 }).collect();
//! assert_eq!(exact::par::sum(&x).to_bits(), scalar::sum(&x).to_bits());
//! let a: Vec<f32> = (0..300 * 200).map(|i| (i % 97) as f32 * 0.013 - 0.6).collect();
//! let b: Vec<f32> = (0..200 * 100).map(|i| (i % 89) as f32 * 0.021 - 0.9).collect();
//! let c = exact::par::matmul(&a, &b, 300, 100, 200);
//! assert!(c.iter().zip(scalar::matmul(&a, &b, 300, 100, 200)).all(|(x, y)| x.to_bits() == y.to_bits()));
//! ```

pub mod simd {
    //! The SIMD variant's op set under `exact`: Scalar's kernels (see [`super`]).
    pub use crate::ops::scalar::*;
}

pub mod par;
