//! The op set an annotated kernel body calls as `ops::…`, in four backends
//! with identical signatures: [`scalar`] (plain loops, the reference),
//! [`simd`] (trueno's SIMD kernels), [`par`] (the SIMD kernels on chunks
//! across a rayon thread pool) and [`gpu`] (compute shaders over wgpu).
//!
//! The `#[adaptive_kernel]` macro binds `ops` to a different module in each
//! generated variant, so one body runs on every backend; an `exact` kernel's
//! variants bind it to [`exact`]'s sets, which give Scalar's bits. Outside a
//! kernel, `ops::add` and friends are the scalar functions.
//!
//! # Two forms of every op that produces an array
//! `add(a, b)` returns a fresh `Vec<f32>`; `add_into(a, b, out)` writes the
//! same result into the caller's `out: &mut [f32]` and allocates nothing, the
//! way numpy's `out=` and BLAS's `C` argument do. Every such op has both, in
//! every backend, named alike (the op's arguments, then `out`):
//!
//! | returns a `Vec` | writes `out` | `out` holds |
//! | --- | --- | --- |
//! | `add`, `sub`, `mul`, `div` `(a, b)` | `add_into(a, b, out)` … | `a.len()` |
//! | `scale(a, s)` | `scale_into(a, s, out)` | `a.len()` |
//! | `relu`, `exp`, `sigmoid`, `tanh`, `gelu`, `softmax` `(a)` | `relu_into(a, out)` … | `a.len()` |
//! | `matmul(a, b, m, n, k)` | `matmul_into(a, b, m, n, k, out)` | m·n |
//! | `matvec(a, x, m, n)` | `matvec_into(a, x, m, n, out)` | m |
//! | `transpose(a, rows, cols)` | `transpose_into(a, rows, cols, out)` | rows·cols |
//! | `conv2d(input, kernel, rows, cols, krows, kcols)` | `conv2d_into(…, out)` | (rows−krows+1)·(cols−kcols+1) |
//!
//! The two forms run one kernel per op and backend, so they give the same
//! bits; the returning form is the `_into` form on a fresh output. `out` may
//! hold anything before the call: every element is overwritten. An `out` of
//! another length panics, naming the op and both lengths. Ops that already
//! return a number (`sum`, `dot`, `max`, …) or work in place (`axpy`) have one
//! form.
//!
//! Inside an annotated kernel the `_into` forms route like the others. A
//! kernel's default `size` is the total element count of its slice
//! parameters, the `&mut` output slices included: `fn k(a: &[f32], b: &[f32],
//! out: &mut [f32])` calling `ops::add_into(a, b, out)` is sized `3·n` where
//! the returning `fn k(a, b) -> Vec<f32>` is sized `2·n`; give `size = …`
//! to route by something else.
//!
//! # Conventions, the same in all four backends
//! - All data is `f32`; matrices are row-major.
//! - Shape mismatches panic with a message naming the op and both shapes.
//! - Empty inputs: `sum`, `dot`, `norm_l2` → 0; `max` → −∞; `min` → +∞;
//!   `mean` → NaN; element-wise ops and `softmax` return an empty vector
//!   (their `_into` forms take an empty `out`).
//! - NaN propagates: any NaN input to `max`/`min` gives NaN.
//! - `conv2d` is valid-mode cross-correlation (the kernel is not flipped).

pub(crate) mod check;
pub mod exact;
pub mod gpu;
mod out;
pub mod par;
pub mod scalar;
pub mod simd;

pub use scalar::*;
