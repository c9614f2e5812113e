//! ndarray arrays and views as kernel parameters (ndarray 0.17 here; `ui-tests/` builds
//! the same shapes against 0.16): arrays of any dimension, by value or by reference,
//! count as slice-like, so the default `size` is their element count; `verify`
//! compares the arrays a kernel writes, element by element in logical order whatever
//! their layout, and the arrays it returns, and where a variant disagrees the caller
//! gets the Scalar variant's arrays and result.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use adaptive_kernel::{adaptive_kernel, Backend, Kernel};
use common::settled;
use ndarray::{
    s, Array1, Array2, Array3, ArrayBase, ArrayD, ArrayRef2, ArrayView, ArrayView2, ArrayViewMut1, ArrayViewMut2,
    CowArray, Data, Ix1, Ix2, IxDyn,
};

/// `out = a·s`, numpy-style, over a view and an owned output.
#[adaptive_kernel(complexity = "Low")]
fn scale(a: ArrayView2<'_, f32>, s: f32, out: &mut Array2<f32>) {
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            out[[i, j]] = a[[i, j]] * s;
        }
    }
}

#[adaptive_kernel(complexity = "Medium")]
fn sum_dyn(a: ArrayView<'_, f32, IxDyn>) -> f32 {
    let mut s = 0.0;
    for x in a.iter() {
        s += *x;
    }
    s
}

/// Generic over the storage: owned arrays and views alike.
#[adaptive_kernel(complexity = "Medium")]
fn total<S: Data<Elem = f32>>(a: &ArrayBase<S, Ix2>) -> f32 {
    a.iter().sum()
}

/// ndarray 0.17's reference type.
#[adaptive_kernel(complexity = "Medium")]
fn sum_of_squares(a: &ArrayRef2<f32>) -> f32 {
    a.iter().map(|x| x * x).sum()
}

#[adaptive_kernel(complexity = "Low")]
fn fill(mut out: ArrayViewMut1<'_, f32>, v: f32) {
    for x in out.iter_mut() {
        *x = v;
    }
}

#[adaptive_kernel(complexity = "Medium")]
fn cow_max(a: CowArray<'_, f32, Ix1>) -> f32 {
    a.iter().fold(f32::MIN, |m, &x| m.max(x))
}

#[adaptive_kernel(complexity = "Low")]
fn add3(a: &Array3<f64>, b: &ArrayD<f64>, out: &mut Array3<f64>) {
    for ((o, x), y) in out.iter_mut().zip(a.iter()).zip(b.iter()) {
        *o = x + y;
    }
}

/// The buckets `kernel` was called in hold `size` and no other bucket was called.
fn routed_by(kernel: &'static Kernel, size: usize) {
    let table = kernel.table();
    assert_eq!(table.rows.len(), 1, "{table}");
    assert!(table.rows[0].sizes.contains(&size), "size {size} not in {:?}:\n{table}", table.rows[0].sizes);
}

#[test]
fn the_default_size_is_every_arrays_element_count() {
    common::no_history();
    let a = Array2::from_shape_fn((3, 40), |(i, j)| (i * 40 + j) as f32);
    let mut out = Array2::zeros((3, 40));
    scale(a.view(), 2.0, &mut out);
    assert_eq!(out, &a * 2.0);
    routed_by(&scale::KERNEL, 240);

    let d = ArrayD::from_shape_fn(IxDyn(&[2, 3, 50]), |ix| ix[2] as f32);
    assert_eq!(sum_dyn(d.view()), 6.0 * (0..50).sum::<usize>() as f32);
    routed_by(&sum_dyn::KERNEL, 300);

    // A strided view: its element count, not its span in memory.
    let wide = Array2::<f32>::ones((10, 100));
    assert_eq!(total(&wide.slice(s![.., ..;2])), 500.0);
    routed_by(total::kernel::<ndarray::ViewRepr<&f32>>(), 500);
    assert_eq!(total(&wide), 1000.0);
    routed_by(total::kernel::<ndarray::OwnedRepr<f32>>(), 1000);

    assert_eq!(sum_of_squares(&Array2::from_elem((4, 5), 2.0)), 80.0);
    routed_by(&sum_of_squares::KERNEL, 20);

    let mut buf = Array1::zeros(70);
    fill(buf.view_mut(), 3.0);
    assert!(buf.iter().all(|&x| x == 3.0));
    routed_by(&fill::KERNEL, 70);

    let v = Array1::from_iter((0..90).map(|i| i as f32));
    assert_eq!(cow_max(CowArray::from(v.view())), 89.0);
    routed_by(&cow_max::KERNEL, 90);

    let a3 = Array3::from_elem((2, 3, 4), 1.0);
    let b = ArrayD::from_elem(IxDyn(&[24]), 2.0);
    let mut o3 = Array3::zeros((2, 3, 4));
    add3(&a3, &b, &mut o3);
    assert!(o3.iter().all(|&x| x == 3.0));
    routed_by(&add3::KERNEL, 72);
}

#[test]
fn empty_and_one_row_arrays_are_routed_by_their_element_count() {
    common::no_history();
    #[adaptive_kernel(complexity = "Low", name = "arrays::copy_rows")]
    fn copy_rows(a: &Array2<f32>, out: &mut Array2<f32>) {
        for (o, x) in out.iter_mut().zip(a.iter()) {
            *o = *x;
        }
    }
    let (a, mut out) = (Array2::<f32>::zeros((0, 5)), Array2::<f32>::zeros((0, 5)));
    copy_rows(&a, &mut out);
    routed_by(&copy_rows::KERNEL, 0);
    let one = Array2::from_shape_fn((1, 7), |(_, j)| j as f32);
    let mut out = Array2::zeros((1, 7));
    copy_rows(&one, &mut out);
    assert_eq!(out, one);
}

/// The size above which the hand-written SIMD variants below are wrong.
const WRONG_ABOVE: usize = 1_000;
static WRONG_WRITES: AtomicUsize = AtomicUsize::new(0);

/// `out[[i, j]] += a[[i, j]]²`: reads its output, so the Scalar variant must start from the
/// caller's values, not from the chosen variant's. Written slowly so the SIMD variant wins.
#[adaptive_kernel(complexity = "Medium", simd = add_squares_wrong, verify = true, serial, name = "arrays::add_squares")]
fn add_squares(a: ArrayView2<'_, f32>, out: &mut Array2<f32>) {
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            for _ in 0..10 {
                std::hint::black_box(&a);
            }
            out[[i, j]] += a[[i, j]] * a[[i, j]];
        }
    }
}

/// Right up to [`WRONG_ABOVE`] elements, then one element far off (beyond the rounding
/// bound `verify` allows a Medium kernel, which grows with the size).
fn add_squares_wrong(a: ArrayView2<'_, f32>, out: &mut Array2<f32>) {
    out.zip_mut_with(&a, |o, x| *o += x * x);
    if a.len() > WRONG_ABOVE {
        WRONG_WRITES.fetch_add(1, Ordering::Relaxed);
        out[[0, 0]] += 1e6;
    }
}

/// Calls `f` until `kernel`'s bucket for `size` settles, checking every call with `check`.
fn settle(kernel: &'static Kernel, size: usize, mut call_and_check: impl FnMut()) {
    for _ in 0..3_000 {
        call_and_check();
        if settled(kernel, size).is_some() {
            return;
        }
    }
    panic!("size {size} never settled:\n{}", kernel.table());
}

#[test]
fn verify_compares_written_arrays_and_restores_scalars_where_a_variant_disagrees() {
    common::no_history();
    for (rows, cols) in [(10, 20), (40, 50)] {
        let a = Array2::from_shape_fn((rows, cols), |(i, j)| (i + j) as f32 * 0.25);
        let start = Array2::from_shape_fn((rows, cols), |(i, j)| (i * j) as f32);
        let mut right = start.clone();
        add_squares::scalar(a.view(), &mut right);
        let size = 2 * rows * cols;
        settle(&add_squares::KERNEL, size, || {
            let mut out = start.clone();
            add_squares(a.view(), &mut out);
            assert_eq!(out, right, "{rows}×{cols}: the caller's array differs from Scalar's");
        });
    }
    let excluded = |size: usize| add_squares::KERNEL.table().row_for(size).map(|r| r.excluded.clone());
    assert_eq!(excluded(400), Some(vec![]), "right at 200 elements:\n{}", add_squares::KERNEL.table());
    assert_eq!(excluded(4_000), Some(vec![Backend::Simd]), "wrong at 2,000:\n{}", add_squares::KERNEL.table());
    assert!(WRONG_WRITES.load(Ordering::Relaxed) > 0, "the wrong variant was tried");
    assert_eq!(settled(&add_squares::KERNEL, 400), Some(Backend::Simd), "{}", add_squares::KERNEL.table());
}

/// `out = aᵀ`, into a view of any layout.
#[adaptive_kernel(complexity = "Low", verify = true, serial, name = "arrays::transpose_into")]
fn transpose_into(a: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) {
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            out[[j, i]] = a[[i, j]];
        }
    }
}

#[test]
fn written_views_compare_in_logical_order_whatever_their_layout() {
    common::no_history();
    let a = Array2::from_shape_fn((30, 20), |(i, j)| (i * 20 + j) as f64);
    let size = 2 * 600;
    // The output is a column-major view (the transpose of a row-major 30×20 buffer): the
    // Scalar variant's copy of it is row-major, and the two agree element by element.
    let mut buffer = Array2::<f64>::zeros((30, 20));
    settle(&transpose_into::KERNEL, size, || {
        buffer.fill(-1.0);
        let out = buffer.view_mut().reversed_axes();
        assert!(!out.is_standard_layout());
        transpose_into(a.view(), out);
        assert_eq!(buffer, a, "the transpose of the transpose");
    });
    let row = transpose_into::KERNEL.table().row_for(size).cloned().expect("called");
    assert_eq!(row.excluded, [], "{}", transpose_into::KERNEL.table());
}

/// `2·a`, returned.
#[adaptive_kernel(complexity = "Low", simd = doubled_wrong, verify = true, serial, name = "arrays::doubled")]
fn doubled(a: &Array2<f32>) -> Array2<f32> {
    let mut out = a.clone();
    for x in out.iter_mut() {
        for _ in 0..10 {
            std::hint::black_box(&x);
        }
        *x *= 2.0;
    }
    out
}

fn doubled_wrong(a: &Array2<f32>) -> Array2<f32> {
    // The right values in the wrong shape: a disagreement, whatever the elements.
    let flat = a.iter().map(|x| 2.0 * x).collect::<Vec<_>>();
    Array2::from_shape_vec((a.ncols(), a.nrows()), flat).unwrap()
}

#[test]
fn a_returned_array_of_another_shape_disagrees() {
    common::no_history();
    let a = Array2::from_shape_fn((8, 30), |(i, j)| (i + j) as f32);
    settle(&doubled::KERNEL, 240, || assert_eq!(doubled(&a), &a * 2.0));
    let row = doubled::KERNEL.table().row_for(240).cloned().expect("called");
    assert_eq!(row.excluded, [Backend::Simd], "{}", doubled::KERNEL.table());
}

/// A method and an associated function over arrays: the default size there too.
struct Layer {
    scale: f32,
}

impl Layer {
    #[adaptive_kernel(complexity = "Low", name = "arrays::Layer::apply")]
    fn apply(&self, x: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>) {
        for (o, v) in out.iter_mut().zip(x.iter()) {
            *o = v * self.scale;
        }
    }
}

#[test]
fn methods_over_arrays_are_routed_by_the_arrays_element_count() {
    common::no_history();
    let layer = Layer { scale: 3.0 };
    let x = Array2::from_elem((5, 6), 2.0_f32);
    let mut out = Array2::zeros((5, 6));
    layer.apply(x.view(), out.view_mut());
    assert!(out.iter().all(|&v| v == 6.0));
    // A method's kernel is one per `Self` type: `name::<Self>`.
    let kernel = adaptive_kernel::kernel_named("arrays::Layer::apply::<arrays::Layer>").expect("called");
    routed_by(kernel, 60);
}
