//! Kernels over ndarray whose loops the variants read lowered to slices, in the
//! corners of the lowering: a generic element type, `&mut ArcArray2`, `&mut
//! ArrayViewMut2`, `ArrayView<'_, f32, Ix2>`, an owned array by value, a column index
//! the macro cannot prove in the row (checked), a dimension named in a macro, an early
//! `return`, `for x in a`, integer outputs, `Zip` and `azip!` of three, and a method
//! (not lowered). Each compiles warning-free and every variant agrees with the plain
//! computation on standard and transposed arrays.
#![deny(warnings)]

use adaptive_kernel::{adaptive_kernel, with_backend, Backend, Kernel};
use ndarray::{azip, Array1, Array2, ArrayView, ArrayView1, ArrayView2, ArrayViewMut1, ArrayViewMut2, ArcArray2, Ix2, Zip};

/// `out = a · s`, generic over the element.
#[adaptive_kernel(complexity = "Low")]
fn scale_generic<T: Copy + std::ops::Mul<Output = T>>(a: ArrayView2<'_, T>, s: T, mut out: ArrayViewMut2<'_, T>) {
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            out[[i, j]] = a[[i, j]] * s;
        }
    }
}

/// `a += b` in a shared array, `b` written as `ArrayView<'_, f32, Ix2>`.
#[adaptive_kernel(complexity = "Low")]
fn add_shared(a: &mut ArcArray2<f32>, b: ArrayView<'_, f32, Ix2>) {
    let (n, m) = b.dim();
    for i in 0..n {
        for j in 0..m {
            a[[i, j]] += b[[i, j]];
        }
    }
}

/// Each element and its right neighbour two along, where there is one: `j + 2` is not
/// proved in the row (its loop runs to `ncols() - 1`), so it is indexed checked.
#[adaptive_kernel(complexity = "Low")]
fn pairs(a: ArrayView2<'_, f32>, out: &mut ArrayViewMut2<'_, f32>) {
    let w = a.ncols();
    assert!(w >= 1, "{w} columns");
    for i in 0..a.nrows() {
        for j in 0..w - 1 {
            let right = if j + 2 < w { a[[i, j + 2]] } else { 0.0 };
            out[[i, j]] = a[[i, j]] + right;
        }
    }
}

/// The sum of the elements of an owned array, up to the first negative one.
#[adaptive_kernel(complexity = "Medium")]
fn sum_to_negative(a: Array1<f32>) -> f32 {
    let mut s = 0.0f32;
    for i in 0..a.len() {
        if a[i] < 0.0 {
            return s;
        }
        s += a[i];
    }
    s
}

/// The sum of an array's elements by `for x in a`.
#[adaptive_kernel(complexity = "Medium")]
fn for_in(a: &Array2<f32>) -> f32 {
    let mut s = 0.0f32;
    for x in a {
        s += x;
    }
    s
}

/// Each row's index of its greatest element, into integers.
#[adaptive_kernel(complexity = "Medium")]
fn argmax_rows(a: ArrayView2<'_, f32>, mut best: ArrayViewMut1<'_, u32>) {
    for (i, row) in a.outer_iter().enumerate() {
        let mut at = 0;
        for j in 1..row.len() {
            if row[j] > row[at] {
                at = j;
            }
        }
        best[i] = at as u32;
    }
}

/// `out = a · b + c` with `Zip` over 1-D arrays, then `out -= c` with `azip!`.
#[adaptive_kernel(complexity = "Low")]
fn fma_zip(a: ArrayView1<'_, f32>, b: ArrayView1<'_, f32>, c: ArrayView1<'_, f32>, mut out: ArrayViewMut1<'_, f32>) {
    Zip::from(&mut out).and(&a).and(&b).and(&c).for_each(|o, &x, &y, &z| {
        *o = x * y + z;
    });
    azip!((o in &mut out, &z in &c) *o -= z);
}

struct Scaler {
    k: f32,
}

impl Scaler {
    /// A method: its arrays are not lowered (no guard can reach its kernel's handle).
    #[adaptive_kernel(complexity = "Medium")]
    fn scaled_sum(&self, a: ArrayView1<'_, f32>) -> f32 {
        a.sum() * self.k
    }
}

/// Runs `run` on every variant `k` has and checks each result against `expected`.
fn each_variant<R: PartialEq + std::fmt::Debug>(k: &'static Kernel, expected: R, run: impl Fn() -> R) {
    let mut backends = vec![Backend::Scalar, Backend::Simd];
    backends.extend(k.has_parallel().then_some(Backend::Parallel));
    backends.extend(k.has_gpu().then_some(Backend::Gpu));
    for backend in backends {
        assert_eq!(with_backend(backend, &run), expected, "{backend}");
    }
}

fn main() {
    adaptive_kernel::history::set_history(adaptive_kernel::config::HistorySetting::Off);
    let a = Array2::from_shape_fn((5, 7), |(i, j)| (i * 7 + j) as f32 * 0.5);
    let at = a.t().as_standard_layout().into_owned();
    for a in [a.view(), at.t()] {
        each_variant(scale_generic::kernel::<f32>(), &a * 2.0, || {
            let mut out = Array2::zeros(a.dim());
            scale_generic(a, 2.0f32, out.view_mut());
            out
        });
        let ints = a.mapv(|x| x as i64);
        let mut out = Array2::zeros(a.dim());
        scale_generic(ints.view(), 3i64, out.view_mut());
        assert_eq!(out, &ints * 3);

        each_variant(&add_shared::KERNEL, &a + &a, || {
            let mut shared: ArcArray2<f32> = a.to_owned().into_shared();
            add_shared(&mut shared, a);
            shared.to_owned()
        });

        let mut expected = Array2::zeros(a.dim());
        for i in 0..a.nrows() {
            for j in 0..a.ncols() - 1 {
                expected[[i, j]] = a[[i, j]] + if j + 2 < a.ncols() { a[[i, j + 2]] } else { 0.0 };
            }
        }
        each_variant(&pairs::KERNEL, expected, || {
            let mut out = Array2::zeros(a.dim());
            pairs(a, &mut out.view_mut());
            out
        });

        each_variant(&for_in::KERNEL, a.sum(), || for_in(&a.to_owned()));

        let mut best = Array1::zeros(a.nrows());
        for (i, row) in a.outer_iter().enumerate() {
            best[i] = (0..row.len()).fold(0, |at, j| if row[j] > row[at] { j } else { at }) as u32;
        }
        each_variant(&argmax_rows::KERNEL, best, || {
            let mut out = Array1::zeros(a.nrows());
            argmax_rows(a, out.view_mut());
            out
        });
    }
    let v: Array1<f32> = (0..40).map(|i| if i == 30 { -1.0 } else { i as f32 }).collect();
    each_variant(&sum_to_negative::KERNEL, (0..30).sum::<i32>() as f32, || sum_to_negative(v.clone()));

    let (x, y, z): (Array1<f32>, Array1<f32>, Array1<f32>) =
        ((0..33).map(|i| i as f32).collect(), (0..33).map(|i| 0.5 * i as f32).collect(), Array1::ones(33));
    let strided = Array1::from_shape_fn(66, |i| (i / 2) as f32);
    for x in [x.view(), strided.slice(ndarray::s![..;2])] {
        each_variant(&fma_zip::KERNEL, &x * &y, || {
            let mut out = Array1::zeros(33);
            fma_zip(x, y.view(), z.view(), out.view_mut());
            out
        });
    }
    assert_eq!(Scaler { k: 2.0 }.scaled_sum(x.view()), 2.0 * x.sum());
}
