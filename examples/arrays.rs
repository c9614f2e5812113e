//! A kernel written with ndarray, routed: a row-wise layer norm over an
//! `ArrayView2` into an `ArrayViewMut2`, with no `size` (the call is routed by
//! the arrays' element count), called at two sizes until its router settles,
//! then once more with `verify` comparing a variant's writes with the Scalar
//! variant's (`ADAPTIVE_KERNEL_MODE=verify` does that for every kernel whose
//! signature allows it; here `verify = true` does it always). It prints what the
//! router learned; the guide's "Arrays" chapter says what each variant does with
//! the loops: here the SIMD and Parallel variants read the arrays as slices (a row
//! sum in lanes, bands of rows), and the call with a transposed output runs the body
//! as written, which the table's `arrays:` line counts.
//!
//! ```sh
//! cargo run --release --example arrays
//! ```

use adaptive_kernel::adaptive_kernel;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut2};

/// `out = (x − mean) / sqrt(var + 1e-5) · gamma`, row by row.
#[adaptive_kernel(complexity = "Medium", verify = true)]
fn layer_norm(x: ArrayView2<'_, f32>, gamma: ArrayView1<'_, f32>, mut out: ArrayViewMut2<'_, f32>) {
    let cols = x.ncols();
    for (row, mut out) in x.rows().into_iter().zip(out.rows_mut()) {
        let mean = row.sum() / cols as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / cols as f32;
        let inv_std = 1.0 / (var + 1e-5).sqrt();
        for j in 0..cols {
            out[j] = (row[j] - mean) * inv_std * gamma[j];
        }
    }
}

fn main() {
    for (rows, cols) in [(16, 64), (256, 768)] {
        let x = Array2::from_shape_fn((rows, cols), |(i, j)| ((i * cols + j) % 17) as f32 * 0.25 + 1.0);
        let gamma = Array1::from_elem(cols, 1.5_f32);
        let mut out = Array2::zeros((rows, cols));
        for _ in 0..400 {
            layer_norm(x.view(), gamma.view(), out.view_mut());
        }
        let row = out.row(0);
        let mean = row.sum() / cols as f32;
        assert!(mean.abs() < 1e-3, "each row is centred: {mean}");
        // A transposed output: written through the view, in the caller's buffer.
        let mut transposed = Array2::zeros((cols, rows));
        layer_norm(x.view(), gamma.view(), transposed.view_mut().reversed_axes());
        assert_eq!(transposed.t(), out);
    }
    println!("{}", layer_norm::KERNEL.table());
}
