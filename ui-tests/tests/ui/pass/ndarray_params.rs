//! ndarray 0.16's arrays and views as parameters: every form counts as slice-like (no
//! `size` needed; the size is the element count), and `verify` compares the arrays a
//! kernel writes, whatever their layout, and the arrays it returns.
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;
use ndarray::{
    s, Array1, Array2, Array3, ArrayBase, ArrayD, ArrayView, ArrayView1, ArrayView2, ArrayViewMut1, ArrayViewMut2,
    CowArray, Data, Ix1, Ix2, IxDyn,
};

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
    a.iter().sum()
}

#[adaptive_kernel(complexity = "Medium")]
fn total<S: Data<Elem = f32>>(a: &ArrayBase<S, Ix2>) -> f32 {
    a.iter().sum()
}

#[adaptive_kernel(complexity = "Low")]
fn fill(mut out: ArrayViewMut1<'_, f32>, v: f32) {
    out.fill(v);
}

#[adaptive_kernel(complexity = "Medium")]
fn cow_len(a: CowArray<'_, f32, Ix1>, b: &ArrayD<f64>, c: &Array3<u8>) -> usize {
    a.len() + b.len() + c.len()
}

/// `verify`: the written view is compared in logical order, whatever its layout.
#[adaptive_kernel(complexity = "Low", verify = true, serial)]
fn add_into(a: ArrayView2<'_, f32>, b: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>) {
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            out[[i, j]] = a[[i, j]] + b[[i, j]];
        }
    }
}

/// `verify` with an owned output read in place and a returned array.
#[adaptive_kernel(complexity = "Medium", verify, tolerance = 1e-5, serial)]
fn accumulate(a: ArrayView1<'_, f32>, acc: &mut Array1<f32>, more: &mut ArrayViewMut1<'_, f32>) -> Array1<f32> {
    for (x, y) in acc.iter_mut().zip(a.iter()) {
        *x += y;
    }
    more.assign(&acc.view());
    acc.clone()
}

/// Under `ADAPTIVE_KERNEL_MODE=verify` without the key: f32 arrays written, nothing returned.
#[adaptive_kernel(complexity = "Low")]
fn copy_rows(a: &Array2<f32>, out: &mut Array2<f32>) {
    out.assign(a);
}

fn main() {
    adaptive_kernel::history::set_history(adaptive_kernel::config::HistorySetting::Off);
    let a = Array2::from_shape_fn((4, 6), |(i, j)| (i * 6 + j) as f32);
    let mut out = Array2::zeros((4, 6));
    scale(a.view(), 2.0, &mut out);
    assert_eq!(out, &a * 2.0);
    assert!(scale::KERNEL.table().row_for(48).is_some(), "routed by 24 + 24 elements");

    let d = ArrayD::from_elem(IxDyn(&[2, 3, 4]), 1.0_f32);
    assert_eq!(sum_dyn(d.view()), 24.0);
    assert_eq!(total(&a.slice(s![.., ..;2])), a.slice(s![.., ..;2]).sum());
    assert_eq!(total(&a), a.sum());
    let mut v = Array1::zeros(5);
    fill(v.view_mut(), 2.0);
    assert_eq!(v.sum(), 10.0);
    assert_eq!(cow_len(CowArray::from(v.view()), &ArrayD::zeros(IxDyn(&[3])), &Array3::zeros((1, 2, 3))), 14);

    let b = Array2::from_elem((4, 6), 0.5_f32);
    for _ in 0..200 {
        let mut buffer = Array2::zeros((6, 4));
        let out = buffer.view_mut().reversed_axes();
        add_into(a.view(), b.view(), out);
        assert_eq!(buffer.t(), &a + &b);
    }
    let x = Array1::from_elem(8, 1.0_f32);
    let mut acc = Array1::zeros(8);
    let mut copy = Array1::zeros(8);
    for k in 1..=50 {
        let returned = accumulate(x.view(), &mut acc, &mut copy.view_mut());
        assert_eq!(returned, Array1::from_elem(8, k as f32));
        assert_eq!(copy, returned);
    }
    let mut out = Array2::zeros((4, 6));
    copy_rows(&a, &mut out);
    assert_eq!(out, a);
}
