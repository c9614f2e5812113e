//! The Parallel op set of `exact` kernels ([`crate::ops::exact`]): every op gives
//! [`scalar`]'s bits, for every input, on any number of threads.
//!
//! - Element-wise ops, `axpy`, `matvec`, `matmul` and `conv2d` compute each output
//!   element on its own: they run Scalar's kernel on chunks of the output (rows for the
//!   matrix ops) across the pool, so each element is computed by the same operations in
//!   the same order as Scalar's, whichever chunk holds it (`matmul` adds `a[i][p]·b[p][j]`
//!   for p = 0, 1, … into each element, as Scalar's does; `matvec` is one Scalar `dot`
//!   per row). `transpose` moves values and computes none: [`crate::ops::par::transpose`].
//! - Reductions (`sum`, `dot`, `max`, `min`, `mean`, `norm_l2`) have one order, Scalar's
//!   left-to-right chain, which no split keeps (a sum of chunk partials rounds
//!   differently): they run Scalar's kernel on the calling thread.
//! - `softmax` runs its two element-wise passes (`e^(x − max)`, the division) on
//!   chunks and its `max` and its sum as Scalar does, on the calling thread.
//!
//! Below two grains of work (`ops::par`'s grains), on a rayon worker, or with one
//! thread, an op is Scalar's on the calling thread.

use crate::ops::check;
use crate::ops::out::producing;
use crate::ops::par::{chunked, Grain};
use crate::ops::scalar;

pub use crate::ops::scalar::{dot, max, mean, min, norm_l2, sum};

/// Elements per chunk of an element-wise grid: 16 (64 bytes), so that no two threads
/// write the same cache line of an output.
const ALIGN: usize = 16;

macro_rules! binary {
    ($name:ident / $into:ident, $doc:literal) => {
        producing! {
            #[doc = $doc]
            ///
            /// # Panics
            /// If `a` and `b` differ in length.
            pub fn $name / $into(a: &[f32], b: &[f32])
            check: shape = check::binary(stringify!($name), a.len(), b.len()),
            // Every element: the chunks partition `out`, and Scalar's kernel writes each of its part.
            overwrite: |out| chunked(a.len(), Grain::STREAM, ALIGN, 1, out, |r, out| {
                scalar::$into(&a[r.clone()], &b[r], out)
            })
        }
    };
}

macro_rules! unary {
    ($name:ident / $into:ident, $grain:ident, $doc:literal) => {
        producing! {
            #[doc = $doc]
            pub fn $name / $into(a: &[f32])
            check: shape = check::unary(stringify!($name), a.len()),
            // Every element: the chunks partition `out`, and Scalar's kernel writes each of its part.
            overwrite: |out| chunked(a.len(), Grain::$grain, ALIGN, 1, out, |r, out| scalar::$into(&a[r], out))
        }
    };
}

binary!(add / add_into, "`a[i] + b[i]`: [`scalar::add`] on chunks.");
binary!(sub / sub_into, "`a[i] - b[i]`: [`scalar::sub`] on chunks.");
binary!(mul / mul_into, "`a[i] * b[i]`: [`scalar::mul`] on chunks.");
binary!(div / div_into, "`a[i] / b[i]`: [`scalar::div`] on chunks.");
unary!(relu / relu_into, STREAM, "`max(a[i], 0)`; NaN stays NaN: [`scalar::relu`] on chunks.");
unary!(exp / exp_into, TRANSCENDENTAL, "`e^a[i]`: [`scalar::exp`] on chunks.");
unary!(sigmoid / sigmoid_into, TRANSCENDENTAL, "`1 / (1 + e^(−a[i]))`: [`scalar::sigmoid`] on chunks.");
unary!(tanh / tanh_into, TRANSCENDENTAL, "`tanh(a[i])`: [`scalar::tanh`] on chunks.");
unary!(gelu / gelu_into, TRANSCENDENTAL, "GELU, tanh approximation: [`scalar::gelu`] on chunks.");

producing! {
    /// `a[i] * s`: [`scalar::scale`] on chunks.
    pub fn scale / scale_into(a: &[f32], s: f32)
    check: shape = check::unary("scale", a.len()),
    // Every element: the chunks partition `out`, and Scalar's kernel writes each of its part.
    overwrite: |out| chunked(a.len(), Grain::STREAM, ALIGN, 1, out, |r, out| scalar::scale_into(&a[r], s, out))
}

/// `y[i] += alpha * x[i]`, in place: [`scalar::axpy`] on chunks.
///
/// # Panics
/// If `x` and `y` differ in length.
#[track_caller]
pub fn axpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    check::same_len("axpy", x.len(), y.len());
    chunked(x.len(), Grain::STREAM, ALIGN, 1, y, |r, y| scalar::axpy(alpha, &x[r], y));
}

producing! {
    /// `e^(a[i] − max) / Σ e^(a[j] − max)`: Scalar's `max` and sum on this thread, its
    /// element-wise passes on chunks.
    pub fn softmax / softmax_into(a: &[f32])
    check: shape = check::unary("softmax", a.len()),
    overwrite: |out| {
        let m = scalar::max(a);
        chunked(a.len(), Grain::TRANSCENDENTAL, ALIGN, 1, out, |r, out| {
            for (o, &x) in out.iter_mut().zip(&a[r]) {
                *o = (x - m).exp();
            }
        });
        let s: f32 = out.iter().sum();
        chunked(a.len(), Grain::STREAM, ALIGN, 1, out, |_, out| out.iter_mut().for_each(|x| *x /= s));
    }
}

producing! {
    /// C = A·B for row-major A (m×k) and B (k×n): [`scalar::matmul`] on bands of rows of C.
    ///
    /// # Panics
    /// If `a.len() != m·k`, `b.len() != k·n`, or a shape overflows `usize`.
    pub fn matmul / matmul_into(a: &[f32], b: &[f32], m: usize, n: usize, k: usize)
    check: shape = check::matmul(a.len(), b.len(), m, n, k),
    // Every element: the bands partition C's rows, and Scalar's kernel writes all of a band.
    overwrite: |c| {
        let per_row = n.saturating_mul(k);
        chunked(m, Grain::rows(Grain::CONV2D, per_row), 1, n, c, |rows, c| {
            scalar::matmul_into(&a[rows.start * k..rows.end * k], b, rows.len(), n, k, c)
        })
    }
}

producing! {
    /// y = A·x for row-major A (m×n): [`scalar::matvec`] on bands of rows.
    ///
    /// # Panics
    /// If `a.len() != m·n` or `x.len() != n`.
    pub fn matvec / matvec_into(a: &[f32], x: &[f32], m: usize, n: usize)
    check: shape = check::matvec(a.len(), x.len(), m, n),
    // Every element: the bands partition `y`, and Scalar's kernel writes all of a band.
    overwrite: |y| chunked(m, Grain::rows(Grain::MATVEC, n), 1, 1, y, |rows, y| {
        scalar::matvec_into(&a[rows.start * n..rows.end * n], x, rows.len(), n, y)
    })
}

pub use crate::ops::par::{transpose, transpose_into};

producing! {
    /// Valid-mode 2-D cross-correlation: [`scalar::conv2d`] on bands of output rows.
    ///
    /// # Panics
    /// If `input.len() != rows·cols`, `kernel.len() != krows·kcols`, or the kernel shape is empty.
    pub fn conv2d / conv2d_into(input: &[f32], kernel: &[f32], rows: usize, cols: usize, krows: usize, kcols: usize)
    check: shape = check::conv2d(input.len(), kernel.len(), rows, cols, krows, kcols),
    // Every element: the bands partition the output rows, and Scalar's kernel writes all of a band.
    overwrite: |out| {
        let (orows, ocols) = shape.dims();
        let per_row = ocols.saturating_mul(kernel.len());
        if orows == 0 || ocols == 0 {
            // Nothing to compute (the kernel is larger than the input).
            scalar::conv2d_into(input, kernel, rows, cols, krows, kcols, out);
        } else {
            // Output rows `is` read input rows `is.start .. is.end + krows − 1`.
            chunked(orows, Grain::rows(Grain::CONV2D, per_row), 1, ocols, out, |is, out| {
                let in_rows = is.len() + krows - 1;
                let part = &input[is.start * cols..(is.start + in_rows) * cols];
                scalar::conv2d_into(part, kernel, in_rows, cols, krows, kcols, out)
            })
        }
    }
}
