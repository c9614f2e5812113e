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

use super::buffer::{filled, zeroed};
use super::At;
use crate::ops::check;

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
    /// C = A·B (A m×k, B k×n, row-major) with trueno's `gemm_blis` (on wasm32, Scalar's
    /// row loop compiled for this level).
    ///
    /// # Panics
    /// If `a.len() != m·k`, `b.len() != k·n`, or a shape overflows `usize`.
    #[track_caller]
    pub fn matmul(self, a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
        check::matmul(a.len(), b.len(), m, n, k);
        let mut c = zeroed(m * n);
        if c.is_empty() || k == 0 {
            return c;
        }
        #[cfg(target_arch = "wasm32")]
        matmul_rows(self, a, b, n, k, &mut c);
        // `gemm_blis` fails only on slice lengths that disagree with m, n, k: checked above.
        #[cfg(not(target_arch = "wasm32"))]
        if let Err(e) = trueno::blis::gemm_blis(m, n, k, a, b, &mut c, None) {
            unreachable!("gemm_blis rejected shapes that check::matmul accepted: {e}");
        }
        c
    }

    /// y = A·x (A m×n, row-major): one trueno `dot` per row.
    ///
    /// # Panics
    /// If `a.len() != m·n` or `x.len() != n`.
    #[track_caller]
    pub fn matvec(self, a: &[f32], x: &[f32], m: usize, n: usize) -> Vec<f32> {
        check::matvec(a.len(), x.len(), m, n);
        if n == 0 {
            return vec![0.0; m];
        }
        // SAFETY: `a` has exactly `m·n` elements (checked), so `chunks_exact(n)` yields `m` rows
        // and the loop writes each of the `m` elements of `y` once.
        unsafe {
            filled(m, |y| {
                for (yi, row) in y.iter_mut().zip(a.chunks_exact(n)) {
                    yi.write(self.dot(row, x));
                }
            })
        }
    }

    /// The transpose of `a` (rows×cols) with trueno's `blis::transpose`.
    ///
    /// # Panics
    /// If `a.len() != rows·cols`.
    #[track_caller]
    pub fn transpose(self, a: &[f32], rows: usize, cols: usize) -> Vec<f32> {
        check::matrix("transpose", "a (rows×cols)", a.len(), rows, cols);
        let mut t = zeroed(a.len());
        // trueno asserts (debug builds) that neither dimension is zero; the result is empty then.
        if t.is_empty() {
            return t;
        }
        // `transpose` fails only on lengths that disagree with rows×cols: checked above.
        if let Err(e) = trueno::blis::transpose(rows, cols, a, &mut t) {
            unreachable!("blis::transpose rejected a shape that check::matrix accepted: {e}");
        }
        t
    }

    /// Valid-mode 2-D cross-correlation at this level; bit-identical to Scalar.
    ///
    /// # Panics
    /// If `input.len() != rows·cols`, `kernel.len() != krows·kcols`, or the kernel shape is empty.
    #[track_caller]
    pub fn conv2d(
        self,
        input: &[f32],
        kernel: &[f32],
        rows: usize,
        cols: usize,
        krows: usize,
        kcols: usize,
    ) -> Vec<f32> {
        let (orows, ocols) = check::conv2d(input.len(), kernel.len(), rows, cols, krows, kcols);
        // Zeroed, not uninitialised: every output is a sum that starts at 0.0, as in Scalar.
        let mut out = zeroed(orows * ocols);
        if !out.is_empty() {
            conv2d_kernel(self, input, kernel, cols, kcols, &mut out, ocols);
        }
        out
    }
}
