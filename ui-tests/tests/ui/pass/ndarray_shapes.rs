//! ndarray's loop shapes, built against ndarray 0.16 (this crate's dev-dependency): the
//! kernels of the facade's `tests/fixtures/ndarray_shapes.rs`, included as they are,
//! compile warning-free, and every variant of each agrees with Scalar, and Scalar with
//! the plain computation, on standard, transposed, strided, empty and one-row arrays; the
//! kernels whose loops are rewritten count the calls on transposed and strided arrays.
#![deny(warnings)]

include!("../../../../tests/fixtures/ndarray_shapes.rs");

use ndarray::{s, Array2};

fn main() {
    adaptive_kernel::history::set_history(adaptive_kernel::config::HistorySetting::Off);
    // `a` is summed: its elements are not negative (`check_every_variant`'s docs).
    let a = Array2::from_shape_fn((9, 37), |(i, j)| 1.0 + ((i * 37 + j) as f32 * 0.7).sin().powi(2) * 10.0);
    let b = Array2::from_shape_fn((9, 37), |(i, j)| ((i + 2 * j) as f32 * 0.3).cos());
    check_every_variant(a.view(), b.view());
    // Transposed (column-major) views, and strided slices.
    let (at, bt) = (a.t().as_standard_layout().into_owned(), b.t().as_standard_layout().into_owned());
    check_every_variant(at.t(), bt.t());
    let wide = Array2::from_shape_fn((9, 74), |(i, j)| (i * 74 + j) as f32 * 0.01);
    check_every_variant(wide.slice(s![.., ..;2]), b.view());
    check_every_variant(a.view(), wide.slice(s![.., 1..;2]));
    // The kernels whose loops are rewritten ran those calls as written, and say so.
    check_as_written_counts();
    // Empty and one-row arrays.
    check_every_variant(Array2::zeros((0, 5)).view(), Array2::zeros((0, 5)).view());
    check_every_variant(a.slice(s![3..4, ..]), b.slice(s![5..6, ..]));
    for (name, kernel) in kernels() {
        println!("{name}:\n{}", adaptive_kernel::report::LoopSummary::of("  ", kernel.spec()));
    }
}
