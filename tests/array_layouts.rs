//! The layout rule of the variants' array loops, the runtime's side of it: an ndarray
//! array in standard layout (row-major, contiguous: `as_slice()` is `Some`) is read as
//! one row-major slice (`__private::layout::{Rows, RowsMut}`), and a call given one
//! that is not (a transposed view, a strided slice) runs the body as written: counted
//! per kernel, said once (a `tracing` event) and shown in the kernel's table.
//!
//! The first "variant" below is written by hand the way the macro's rewritten loops use
//! these helpers: over the slices when every array is in standard layout, else the
//! body as written, with [`Kernel::ran_as_written`] naming the first array that is not.
//! Then the macro's own: a generated kernel whose loops its variants rewrite
//! (`generated::double`), forced onto each variant.

mod common;

use std::sync::{Arc, Mutex};

use adaptive_kernel::__private::layout::{self, Rows, RowsMut};
use adaptive_kernel::{Kernel, OpComplexity};
use ndarray::{s, Array2, ArrayView2, ArrayViewMut2};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

static SCALE: Kernel = Kernel::new(common::cpu_spec("array_layouts::scale", OpComplexity::Low));

/// `out = 2·a`, element by element, as a rewritten variant computes it.
fn scale_variant(kernel: &'static Kernel, a: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>) {
    // The output's dimensions first: its slice borrows it.
    let out_dims = layout::dims(out.shape());
    match (Rows::new(a.as_slice(), layout::dims(a.shape())), RowsMut::new(out.as_slice_mut(), out_dims)) {
        (Some(a_rows), Some(mut out_rows)) => {
            for i in 0..a_rows.rows() {
                for j in 0..a_rows.cols() {
                    *out_rows.at_mut(i, j) = 2.0 * a_rows.at(i, j);
                }
            }
        }
        _ => {
            if !a.is_standard_layout() {
                kernel.ran_as_written("a", a.shape(), a.strides());
            } else {
                kernel.ran_as_written("out", out.shape(), out.strides());
            }
            // The body as written.
            for i in 0..a.nrows() {
                for j in 0..a.ncols() {
                    out[[i, j]] = 2.0 * a[[i, j]];
                }
            }
        }
    }
}

/// The messages of the `tracing` events seen.
#[derive(Clone, Default)]
struct Messages(Arc<Mutex<Vec<String>>>);

struct Message<'a>(&'a mut String);

impl Visit for Message<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Messages {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut message = String::new();
        event.record(&mut Message(&mut message));
        self.0.lock().unwrap().push(message);
    }
}

#[test]
fn standard_arrays_are_read_as_slices_and_other_layouts_run_as_written_said_once() {
    common::no_history();
    let a = Array2::from_shape_fn((6, 8), |(i, j)| (i * 8 + j) as f32);
    let twice = &a * 2.0;
    let messages = Messages::default();
    let subscriber = tracing_subscriber::registry().with(messages.clone());
    tracing::subscriber::with_default(subscriber, || {
        // Standard layouts: the slices, and nothing to say.
        let mut out = Array2::zeros((6, 8));
        scale_variant(&SCALE, a.view(), out.view_mut());
        assert_eq!(out, twice);
        assert_eq!(SCALE.table().as_written, None);

        // A transposed input (column-major), three times; then a strided output. (`to_owned`
        // would keep the transposed view's layout: `at` is `aᵀ` laid out row-major.)
        let at = a.t().as_standard_layout().into_owned();
        for _ in 0..3 {
            let mut out = Array2::zeros((6, 8));
            scale_variant(&SCALE, at.t(), out.view_mut());
            assert_eq!(out, twice, "the body as written computes the same");
        }
        let mut wide = Array2::zeros((6, 16));
        scale_variant(&SCALE, a.view(), wide.slice_mut(s![.., ..;2]));
        assert_eq!(wide.slice(s![.., ..;2]), twice);
        assert!(wide.slice(s![.., 1..;2]).iter().all(|&x| x == 0.0), "only the strided elements written");

        // Empty and one-row arrays are in standard layout.
        let mut none = Array2::zeros((0, 8));
        scale_variant(&SCALE, Array2::zeros((0, 8)).view(), none.view_mut());
        let mut one = Array2::zeros((1, 8));
        scale_variant(&SCALE, a.slice(s![2..3, ..]), one.view_mut());
        assert_eq!(one.row(0), twice.row(2));
    });
    let table = SCALE.table();
    let as_written = table.as_written.clone().expect("counted");
    assert_eq!(as_written.calls, 4, "three transposed inputs and a strided output:\n{table}");
    assert_eq!(
        (as_written.first.param, as_written.first.shape.as_slice(), as_written.first.strides.as_slice()),
        ("a", &[6, 8][..], &[1, 6][..]),
        "the first array that was not in standard layout"
    );
    assert!(
        table.to_string().contains(
            "  arrays: 4 calls ran the body as written: `a` is not in standard layout (shape [6, 8], strides [1, 6]) (the first)"
        ),
        "{table}"
    );
    let said: Vec<String> =
        messages.0.lock().unwrap().iter().filter(|m| m.contains("not in standard layout")).cloned().collect();
    assert_eq!(said.len(), 1, "said once per kernel: {said:?}");
}

/// A kernel whose index loops every variant but Scalar rewrites over the arrays' slices.
mod generated {
    use adaptive_kernel::adaptive_kernel;
    use ndarray::{ArrayView2, ArrayViewMut2};

    /// `out = 2·a`, element by element.
    #[adaptive_kernel(complexity = "Low")]
    pub(crate) fn double(a: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>) {
        for i in 0..a.nrows() {
            for j in 0..a.ncols() {
                out[[i, j]] = 2.0 * a[[i, j]];
            }
        }
    }
}

/// The backends `double` has, past Scalar.
fn rewritten_variants() -> Vec<adaptive_kernel::Backend> {
    use adaptive_kernel::Backend;
    let k = &generated::double::KERNEL;
    assert!(k.has_parallel() && k.has_gpu(), "the index loops are split and run on the GPU");
    assert!(k.spec().loops.iter().any(|l| l.rewritten()), "and put in lanes");
    vec![Backend::Simd, Backend::Parallel, Backend::Gpu]
}

#[test]
fn a_generated_kernel_counts_its_calls_on_arrays_not_in_standard_layout_and_says_so_once() {
    use adaptive_kernel::{with_backend, Backend};
    common::no_history();
    let k = &generated::double::KERNEL;
    let a = Array2::from_shape_fn((6, 8), |(i, j)| (i * 8 + j) as f32);
    let twice = &a * 2.0;
    let at = a.t().as_standard_layout().into_owned();
    let messages = Messages::default();
    let subscriber = tracing_subscriber::registry().with(messages.clone());
    tracing::subscriber::with_default(subscriber, || {
        // Scalar is the body as written: it has no guard, and counts nothing.
        let mut out = Array2::zeros((6, 8));
        with_backend(Backend::Scalar, || generated::double(at.t(), out.view_mut()));
        assert_eq!(out, twice);
        assert_eq!(k.table().as_written, None, "Scalar counts nothing");
        for backend in rewritten_variants() {
            // Standard layouts: the rewritten loops, nothing to count.
            let mut out = Array2::zeros((6, 8));
            with_backend(backend, || generated::double(a.view(), out.view_mut()));
            assert_eq!(out, twice, "{backend}");
            assert_eq!(
                k.table().as_written.map(|w| w.calls).unwrap_or(0),
                0,
                "{backend}: standard layouts count nothing"
            );
        }
        for (n, backend) in rewritten_variants().into_iter().enumerate() {
            // A transposed input, then a strided output: the body as written, counted.
            let mut out = Array2::zeros((6, 8));
            with_backend(backend, || generated::double(at.t(), out.view_mut()));
            assert_eq!(out, twice, "{backend}: the body as written computes the same");
            let mut wide = Array2::zeros((6, 16));
            with_backend(backend, || generated::double(a.view(), wide.slice_mut(s![.., ..;2])));
            assert_eq!(wide.slice(s![.., ..;2]), twice, "{backend}");
            assert!(wide.slice(s![.., 1..;2]).iter().all(|&x| x == 0.0), "{backend}: only the view's elements written");
            assert_eq!(k.table().as_written.map(|w| w.calls), Some(2 * (n as u64 + 1)), "{backend}");
        }
    });
    let table = k.table();
    let as_written = table.as_written.clone().expect("counted");
    assert_eq!(
        (as_written.first.param, as_written.first.shape.as_slice(), as_written.first.strides.as_slice()),
        ("a", &[6, 8][..], &[1, 6][..]),
        "the first array that was not in standard layout:\n{table}"
    );
    let said: Vec<String> =
        messages.0.lock().unwrap().iter().filter(|m| m.contains("not in standard layout")).cloned().collect();
    assert_eq!(said.len(), 1, "said once per kernel: {said:?}");
}

#[test]
fn a_generated_kernel_given_arrays_of_different_shapes_panics_as_the_body_as_written_does() {
    use adaptive_kernel::{with_backend, Backend};
    common::no_history();
    let a = Array2::from_shape_fn((4, 8), |(i, j)| (i * 8 + j) as f32);
    // Fewer columns, then fewer rows, than `a`: the body as written indexes past `out`.
    for shape in [(4, 7), (3, 8)] {
        let mut backends = vec![Backend::Scalar];
        backends.extend(rewritten_variants());
        for backend in backends {
            let mut out = Array2::<f32>::zeros(shape);
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                with_backend(backend, || generated::double(a.view(), out.view_mut()))
            }));
            assert!(run.is_err(), "{backend} on an output of {shape:?} panics as ndarray's indexing does");
        }
    }
    // A larger output is no error as written (the loops cover `a`'s elements): the variants
    // agree with Scalar there too.
    let mut scalar = Array2::<f32>::from_elem((5, 9), -1.0);
    with_backend(Backend::Scalar, || generated::double(a.view(), scalar.view_mut()));
    for backend in rewritten_variants() {
        let mut out = Array2::<f32>::from_elem((5, 9), -1.0);
        with_backend(backend, || generated::double(a.view(), out.view_mut()));
        assert_eq!(out, scalar, "{backend}");
    }
}
