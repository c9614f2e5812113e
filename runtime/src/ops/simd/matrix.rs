//! Matrix ops ([`OpClass::Matrix`](super::OpClass::Matrix)): `matmul` on
//! trueno's BLIS GEMM (on wasm32 our own row loop, see below), `transpose` on trueno's 8×8 in-register transpose,
//! `matvec` as one trueno `dot` per row, and `conv2d` as our own loop.
//!
//! `gemm_blis` and `blis::transpose` choose their instruction set inside
//! trueno (AVX-512 or AVX2 by CPU detection, a portable path otherwise), so an
//! [`At`]'s level does not constrain them. We call `gemm_blis`, not
//! `blis::gemm`: the latter asserts (in debug builds) that every output is
//! finite, which would turn a NaN input into a panic. Both GEMM entry points
//! compute `C += A·B`, so C starts zeroed.
//!
//! trueno's BLIS has SIMD microkernels for x86_64 and aarch64 only; on wasm32
//! its portable path ran slower than Scalar's loop (BENCHMARKS.md,
//! "WebAssembly"). There `matmul` is Scalar's row loop (`c[i][..] +=
//! a[i][p]·b[p][..]`) compiled for SIMD128, which vectorises over the row and
//! keeps Scalar's summation order (bit-identical: SIMD128 has no fused
//! multiply-add).
//!
//! trueno has no matrix–vector product in our orientation (its `gemv` is
//! `xᵀ·B`) and no 2-D convolution. `matvec` streams each row of A once
//! through trueno's `dot`, which is what the memory-bound product needs.
//! `conv2d` adds `w[p][q]·input[i+p][j+q…]` row-slice by row-slice into each
//! output row (a vectorised multiply-then-add over `j`), in the same `(p, q)`
//! order as Scalar's per-pixel loop, so results are bit-identical to Scalar.
//!
//! `matmul` and `conv2d` add into an output that starts at zero: a fresh
//! zeroed one, or the caller's slice, zeroed first (`_into`); `transpose`
//! overwrites an initialised one; `matvec` sets slots (`ops/out.rs`).

use super::{At, OpClass};
use crate::ops::check;
use crate::ops::out::producing;

multiversion! {
    /// Adds the valid-mode cross-correlation of `input` (`cols` wide) with
    /// `kernel` (`kcols` wide) into `out` (`ocols` wide, non-empty).
    fn conv2d_kernel<const FMA: bool>(
        input: &[f32],
        kernel: &[f32],
        cols: usize,
        kcols: usize,
        out: &mut [f32],
        ocols: usize,
    ) {
        for (i, orow) in out.chunks_exact_mut(ocols).enumerate() {
            for (p, krow) in kernel.chunks_exact(kcols).enumerate() {
                let irow = &input[(i + p) * cols..];
                for (q, &w) in krow.iter().enumerate() {
                    for (o, &x) in orow.iter_mut().zip(&irow[q..q + ocols]) {
                        // Multiply, then add, as Scalar's `acc += x * w`.
                        *o += x * w;
                    }
                }
            }
        }
    }
}

multiversion! {
    /// Adds A·B (A m×k, B k×n, row-major) into `c` (m×n) row by row, vectorised over
    /// each row: the GEMM where trueno's BLIS has no SIMD microkernel.
    #[cfg(target_arch = "wasm32")]
    fn matmul_rows<const FMA: bool>(a: &[f32], b: &[f32], n: usize, k: usize, c: &mut [f32]) {
        for (arow, crow) in a.chunks_exact(k).zip(c.chunks_exact_mut(n)) {
            for (&aip, brow) in arow.iter().zip(b.chunks_exact(n)) {
                for (cij, &bpj) in crow.iter_mut().zip(brow) {
                    *cij += aip * bpj;
                }
            }
        }
    }
}

impl At {
    producing! {
        /// C = A·B (A m×k, B k×n, row-major) with trueno's `gemm_blis` (on wasm32, Scalar's
        /// row loop compiled for this level).
        ///
        /// # Panics
        /// If `a.len() != m·k`, `b.len() != k·n`, or a shape overflows `usize`.
        pub fn matmul / matmul_into(self, a: &[f32], b: &[f32], m: usize, n: usize, k: usize)
        check: shape = check::matmul(a.len(), b.len(), m, n, k),
        onto_zeros: |c| self.gemm_onto_zeros(a, b, (m, n, k), c)
    }

    /// Adds A·B into `c`, which holds zeros: the GEMM of `matmul`, for shapes already checked.
    fn gemm_onto_zeros(self, a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize), c: &mut [f32]) {
        debug_assert_eq!(c.len(), m * n);
        if c.is_empty() || k == 0 {
            return;
        }
        #[cfg(target_arch = "wasm32")]
        matmul_rows(self, a, b, n, k, c);
        // `gemm_blis` fails only on slice lengths that disagree with m, n, k: checked by the caller.
        #[cfg(not(target_arch = "wasm32"))]
        if let Err(e) = trueno::blis::gemm_blis(m, n, k, a, b, c, None) {
            unreachable!("gemm_blis rejected shapes that check::matmul accepted: {e}");
        }
    }

    producing! {
        /// y = A·x (A m×n, row-major): one trueno `dot` per row.
        ///
        /// # Panics
        /// If `a.len() != m·n` or `x.len() != n`.
        pub fn matvec / matvec_into / matvec_slots(self, a: &[f32], x: &[f32], m: usize, n: usize)
        check: shape = check::matvec(a.len(), x.len(), m, n),
        // Sets each of the `m` slots once: `a` has exactly `m·n` elements (checked), so
        // `chunks_exact(n)` yields `m` rows.
        kernel: |y| {
            if n == 0 {
                y.iter_mut().for_each(|yi| yi.set(0.0));
            } else {
                for (yi, row) in y.iter_mut().zip(a.chunks_exact(n)) {
                    yi.set(self.dot(row, x));
                }
            }
        }
    }

    producing! {
        /// The transpose of `a` (rows×cols) with trueno's `blis::transpose`.
        ///
        /// # Panics
        /// If `a.len() != rows·cols`.
        pub fn transpose / transpose_into(self, a: &[f32], rows: usize, cols: usize)
        check: shape = check::transpose(a.len(), rows, cols),
        overwrite: |t| {
            // trueno asserts (debug builds) that neither dimension is zero; the result is empty then.
            // `transpose` fails only on lengths that disagree with rows×cols: checked above.
            if !t.is_empty() {
                if let Err(e) = trueno::blis::transpose(rows, cols, a, t) {
                    unreachable!("blis::transpose rejected a shape that check::matrix accepted: {e}");
                }
            }
        }
    }

    producing! {
        /// Valid-mode 2-D cross-correlation at this level; bit-identical to Scalar.
        ///
        /// # Panics
        /// If `input.len() != rows·cols`, `kernel.len() != krows·kcols`, or the kernel shape is empty.
        pub fn conv2d / conv2d_into(
            self,
            input: &[f32],
            kernel: &[f32],
            rows: usize,
            cols: usize,
            krows: usize,
            kcols: usize,
        )
        check: shape = check::conv2d(input.len(), kernel.len(), rows, cols, krows, kcols),
        // Onto zeros: every output is a sum that starts at 0.0, as in Scalar.
        onto_zeros: |out| {
            if !out.is_empty() {
                conv2d_kernel(self, input, kernel, cols, kcols, out, shape.dims().1);
            }
        }
    }
}

/// `matmul` into a `c` that holds zeros (a fresh zeroed output), at the matrix
/// class's level: `ops::par`'s fresh outputs skip the zeroing pass of `_into`.
#[track_caller]
pub(crate) fn matmul_onto_zeros(a: &[f32], b: &[f32], m: usize, n: usize, k: usize, c: &mut [f32]) {
    check::matmul(a.len(), b.len(), m, n, k).check(c.len());
    At::for_class(OpClass::Matrix).gemm_onto_zeros(a, b, (m, n, k), c);
}

/// `conv2d` into an `out` that holds zeros, as [`matmul_onto_zeros`].
#[track_caller]
pub(crate) fn conv2d_onto_zeros(
    input: &[f32],
    kernel: &[f32],
    (rows, cols, krows, kcols): (usize, usize, usize, usize),
    out: &mut [f32],
) {
    let shape = check::conv2d(input.len(), kernel.len(), rows, cols, krows, kcols);
    shape.check(out.len());
    if !out.is_empty() {
        conv2d_kernel(At::for_class(OpClass::Matrix), input, kernel, cols, kcols, out, shape.dims().1);
    }
}
