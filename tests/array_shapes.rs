//! ndarray's loop shapes (issue 42): every variant of a kernel written with each agrees
//! with the Scalar variant, within `verify`'s contract, on arrays of every layout
//! (standard, transposed, strided), empty and one-row; and the guide's "Arrays" table
//! says what each variant does with each shape today (the kernels and the check:
//! `fixtures/ndarray_shapes.rs`, shared with the 0.16 build in `ui-tests/`).

mod common;

include!("fixtures/ndarray_shapes.rs");

use ndarray::{s, Array2, ArrayView2};
use proptest::prelude::*;

/// How a test array is laid out in memory.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// Row-major, contiguous: `as_slice()` is `Some`.
    Standard,
    /// The transpose of a row-major array: column-major.
    Transposed,
    /// Every other column of an array twice as wide: `s![.., ..;2]`.
    Strided,
}

/// `values` (row-major, `rows × cols`) as an array laid out as `layout` says, held in
/// `store` so that the returned view can borrow it.
fn laid_out(values: &[f32], rows: usize, cols: usize, layout: Layout, store: &mut Array2<f32>) {
    let logical = Array2::from_shape_vec((rows, cols), values.to_vec()).unwrap();
    *store = match layout {
        Layout::Standard => logical,
        Layout::Transposed => logical.t().as_standard_layout().into_owned(),
        Layout::Strided => {
            let mut wide = Array2::from_elem((rows, 2 * cols), f32::NAN);
            wide.slice_mut(s![.., ..;2]).assign(&logical);
            wide
        }
    };
}

fn view(store: &Array2<f32>, layout: Layout) -> ArrayView2<'_, f32> {
    match layout {
        Layout::Standard => store.view(),
        Layout::Transposed => store.t(),
        Layout::Strided => store.slice(s![.., ..;2]),
    }
}

/// Checks every variant of every shape on `a` and `b` laid out as given.
fn check(a: &[f32], b: &[f32], rows: usize, cols: usize, layouts: (Layout, Layout)) {
    let (mut sa, mut sb) = (Array2::zeros((0, 0)), Array2::zeros((0, 0)));
    laid_out(a, rows, cols, layouts.0, &mut sa);
    laid_out(b, rows, cols, layouts.1, &mut sb);
    let (a, b) = (view(&sa, layouts.0), view(&sb, layouts.1));
    if rows > 1 && cols > 1 {
        let standard = |l| matches!(l, Layout::Standard);
        assert_eq!((a.is_standard_layout(), b.is_standard_layout()), (standard(layouts.0), standard(layouts.1)));
    }
    check_every_variant(a, b);
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![Just(Layout::Standard), Just(Layout::Transposed), Just(Layout::Strided)]
}

/// Arrays of up to 9 × 40 (sizes across a SIMD chunk and a row band): `a` in [0, 100) (the
/// kernels sum it: see `check_every_variant`), `b` in ±100.
fn arrays() -> impl Strategy<Value = (usize, usize, Vec<f32>, Vec<f32>)> {
    (0usize..=9, 0usize..=40).prop_flat_map(|(rows, cols)| {
        let n = rows * cols;
        (Just(rows), Just(cols), prop::collection::vec(0.0f32..100.0, n), prop::collection::vec(-100.0f32..100.0, n))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_variant_of_every_shape_agrees_with_scalar((rows, cols, a, b) in arrays(), la in layout(), lb in layout()) {
        common::no_history();
        check(&a, &b, rows, cols, (la, lb));
    }
}

#[test]
fn empty_and_one_row_arrays_in_every_layout() {
    common::no_history();
    let layouts = [Layout::Standard, Layout::Transposed, Layout::Strided];
    for (rows, cols) in [(0, 0), (0, 7), (7, 0), (1, 1), (1, 33), (33, 1)] {
        let a: Vec<f32> = (0..rows * cols).map(|i| (i as f32 * 0.37).sin().abs() * 10.0).collect();
        let b: Vec<f32> = (0..rows * cols).map(|i| (i as f32 * 0.11).cos()).collect();
        for la in layouts {
            for lb in layouts {
                check(&a, &b, rows, cols, (la, lb));
            }
        }
    }
}

#[test]
fn kernels_whose_loops_are_rewritten_count_calls_on_arrays_not_in_standard_layout() {
    common::no_history();
    let a: Vec<f32> = (0..6 * 9).map(|i| (i as f32 * 0.3).sin().abs()).collect();
    let b: Vec<f32> = (0..6 * 9).map(|i| (i as f32 * 0.2).cos()).collect();
    check(&a, &b, 6, 9, (Layout::Transposed, Layout::Strided));
    check_as_written_counts();
}

/// The verdicts of the guide's "Arrays" table, cell by cell, as the kernels' specs give them:
/// SIMD "as written" or "lanes" with the reason words of its reductions; Parallel and GPU
/// "no variant" or "split"/"on the GPU", with their loops' reason words.
fn verdicts(k: &'static adaptive_kernel::Kernel) -> [String; 3] {
    fn words<'a>(reasons: impl Iterator<Item = &'a str>) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for r in reasons.filter(|r| !r.is_empty()) {
            if !seen.contains(&r) {
                seen.push(r);
            }
        }
        seen.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
    }
    let cell = |verdict: &str, reasons: String| {
        if reasons.is_empty() {
            verdict.to_owned()
        } else {
            format!("{verdict} ({reasons})")
        }
    };
    let spec = k.spec();
    let simd = if spec.loops.iter().any(|l| l.rewritten()) { "lanes" } else { "as written" };
    let parallel = if spec.has_parallel { "split" } else { "no variant" };
    let gpu = if spec.has_gpu { "on the GPU" } else { "no variant" };
    [
        cell(simd, words(spec.loops.iter().map(|l| l.reason))),
        cell(parallel, words(spec.splits.iter().map(|l| l.reason))),
        cell(gpu, words(spec.gpu_loops.iter().map(|l| l.reason))),
    ]
}

#[test]
fn the_guides_table_says_what_each_variant_does_with_each_shape() {
    let guide = include_str!("../docs/guide/arrays.md");
    let table = guide.split("## What each shape gets").nth(1).expect("the table's section");
    // Every row that disagrees, at once: what the guide says and what the kernel compiled to.
    let mut wrong = Vec::new();
    for (name, k) in kernels() {
        let kernel = format!("`{name}`");
        let (row, cells) = table
            .lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| (l, l.trim_matches('|').split(" | ").map(str::trim).collect::<Vec<_>>()))
            .find(|(_, cells)| cells.get(1) == Some(&kernel.as_str()))
            .unwrap_or_else(|| panic!("no row of the guide's table names {kernel}"));
        let [simd, parallel, gpu] = verdicts(k);
        if cells[2..5] != [simd.as_str(), parallel.as_str(), gpu.as_str()] {
            wrong.push(format!("{row}\n  compiled: | {kernel} | {simd} | {parallel} | {gpu} |"));
        }
    }
    assert!(
        wrong.is_empty(),
        "rows of the guide's table that are not what the kernels compiled to:\n{}",
        wrong.join("\n")
    );
}

/// A k-means assignment written with ndarray's rows, as the programs bench writes it.
mod nearest {
    use adaptive_kernel::adaptive_kernel;
    use ndarray::{ArrayView2, ArrayViewMut1};

    /// `labels[i]` = the centroid nearest to row `i` of `points`; returns the inertia.
    #[adaptive_kernel(complexity = "High")]
    pub(crate) fn assign(
        points: ArrayView2<'_, f32>,
        centroids: ArrayView2<'_, f32>,
        mut labels: ArrayViewMut1<'_, u32>,
    ) -> f32 {
        let mut inertia = 0.0f32;
        for (i, p) in points.rows().into_iter().enumerate() {
            let mut best = 0;
            let mut best_dist = f32::INFINITY;
            for (c, q) in centroids.rows().into_iter().enumerate() {
                let mut dist = 0.0f32;
                for j in 0..p.len() {
                    let t = p[j] - q[j];
                    dist += t * t;
                }
                if dist < best_dist {
                    best_dist = dist;
                    best = c;
                }
            }
            labels[i] = best as u32;
            inertia += best_dist;
        }
        inertia
    }
}

/// The points' rows are taken 16 at a time in lanes (`for range items`), as the same loop
/// over slices: its inner loop's bound `0..p.len()` was compared as printed tokens, which
/// the compiler prints otherwise than the macro's own tests did, so a real build missed it.
#[test]
fn a_k_means_assignment_over_rows_takes_its_points_in_lanes_and_agrees_with_scalar() {
    use adaptive_kernel::{with_backend, Backend};
    common::no_history();
    let k = &nearest::assign::KERNEL;
    let rewritten: Vec<&str> = k.spec().loops.iter().filter(|l| l.rewritten()).map(|l| l.idiom).collect();
    assert!(rewritten.contains(&"for range items"), "{rewritten:?}");
    let points = Array2::from_shape_fn((37, 5), |(i, j)| ((i * 5 + j) as f32 * 0.37).sin());
    let centroids = Array2::from_shape_fn((6, 5), |(c, j)| ((c * 5 + j) as f32 * 0.91).cos());
    let mut scalar = ndarray::Array1::zeros(37);
    let inertia = with_backend(Backend::Scalar, || nearest::assign(points.view(), centroids.view(), scalar.view_mut()));
    let mut backends = vec![Backend::Simd];
    backends.extend(k.has_parallel().then_some(Backend::Parallel));
    backends.extend(k.has_gpu().then_some(Backend::Gpu));
    for backend in backends {
        let mut labels = ndarray::Array1::zeros(37);
        let got = with_backend(backend, || nearest::assign(points.view(), centroids.view(), labels.view_mut()));
        assert_eq!(labels, scalar, "{backend}");
        assert!((got - inertia).abs() <= 1e-4 * inertia.abs(), "{backend}: {got} against {inertia}");
    }
}

/// The centroids' rows are read at the points' width: where they are longer, their first
/// elements, as written; where they are shorter, every variant panics, as the body as written
/// does at `q[j]` (in lanes the centroid's row is taken once as its first `width` elements
/// where it has them, and the loop as written runs where it has not).
#[test]
fn a_k_means_assignment_whose_centroids_rows_differ_in_length_from_the_points_runs_as_written() {
    use adaptive_kernel::{with_backend, Backend};
    common::no_history();
    let k = &nearest::assign::KERNEL;
    let points = Array2::from_shape_fn((37, 5), |(i, j)| ((i * 5 + j) as f32 * 0.37).sin());
    let mut backends = vec![Backend::Simd];
    backends.extend(k.has_parallel().then_some(Backend::Parallel));
    backends.extend(k.has_gpu().then_some(Backend::Gpu));
    assert_eq!(backends.len(), 3, "the assignment is split and runs on the GPU");

    let longer = Array2::from_shape_fn((6, 7), |(c, j)| ((c * 7 + j) as f32 * 0.91).cos());
    let mut scalar = ndarray::Array1::zeros(37);
    let inertia = with_backend(Backend::Scalar, || nearest::assign(points.view(), longer.view(), scalar.view_mut()));
    for &backend in &backends {
        let mut labels = ndarray::Array1::zeros(37);
        let got = with_backend(backend, || nearest::assign(points.view(), longer.view(), labels.view_mut()));
        assert_eq!(labels, scalar, "{backend}");
        assert!((got - inertia).abs() <= 1e-4 * inertia.abs(), "{backend}: {got} against {inertia}");
    }

    let shorter = Array2::from_shape_fn((6, 4), |(c, j)| ((c * 4 + j) as f32 * 0.91).cos());
    backends.push(Backend::Scalar);
    for backend in backends {
        let mut labels = ndarray::Array1::zeros(37);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_backend(backend, || nearest::assign(points.view(), shorter.view(), labels.view_mut()))
        }));
        assert!(run.is_err(), "{backend}: centroids of 4 columns for points of 5 panic at `q[4]`");
    }
}
