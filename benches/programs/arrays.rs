//! Three of the programs written with ndarray (issue 42): the k-means assignment,
//! the layer norm and the 5-point stencil as an ndarray user writes them
//! (`ArrayView2`, `a[[i, j]]`, `.rows()`), each in four builds timed together:
//!
//! - **plain**: the ndarray loops, unannotated;
//! - **annotated**: the same loops under `#[adaptive_kernel]` (no `size` where the
//!   arrays' element count is the slice twin's size too), stamped by one
//!   `macro_rules!` with the plain build, as in the other programs;
//! - **twin**: the same program written over slices, annotated: `kmeans.rs`,
//!   `layernorm.rs`, `stencil.rs`, called with the arrays' `as_slice()`. What the
//!   annotated ndarray build should reach once the attribute rewrites ndarray's
//!   shapes as it rewrites the same shapes over slices;
//! - **hand**: a hand-optimised ndarray twin: the arrays' `as_slice()` handed to those
//!   programs' hand-written lanes (a clone per CPU feature level), with rayon over
//!   rows (`Zip::par_for_each` over the layer norm's rows).
//!
//! The arrays are in standard layout, as the twins need.

use adaptive_kernel::Kernel;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut1, ArrayViewMut2, Zip};

use super::{kmeans, layernorm, stencil, Build, Case, Work};
use crate::common::Xorshift;

/// `as_slice()` of an array the bench built in standard layout.
fn slice(a: Option<&[f32]>) -> &[f32] {
    a.expect("the bench's arrays are in standard layout")
}

/// The k-means assignment over ndarray matrices.
pub(crate) mod assign {
    use super::*;

    macro_rules! program {
        ($($annotate:ident)?) => {
            /// `labels[i]` = the index of the centroid nearest to row `i` of `points`; returns the inertia.
            $(#[$annotate(complexity = "High", size = points.nrows() * centroids.len())])?
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
        };
    }

    /// The ndarray loops, unannotated.
    pub(crate) mod plain {
        use super::*;
        program!();
    }

    /// The same loops under `#[adaptive_kernel]`.
    pub(crate) mod annotated {
        use super::*;
        use adaptive_kernel::adaptive_kernel;
        program!(adaptive_kernel);
    }

    /// One assignment in `build`.
    pub(crate) fn run(
        build: Build,
        points: ArrayView2<'_, f32>,
        centroids: ArrayView2<'_, f32>,
        mut labels: ArrayViewMut1<'_, u32>,
    ) -> f32 {
        let d = points.ncols();
        match build {
            Build::Plain => plain::assign(points, centroids, labels),
            Build::Annotated => annotated::assign(points, centroids, labels),
            Build::Twin => kmeans::annotated::assign(
                slice(points.as_slice()),
                slice(centroids.as_slice()),
                d,
                labels.as_slice_mut().expect("standard layout"),
            ),
            Build::Hand => kmeans::hand::assign(
                slice(points.as_slice()),
                slice(centroids.as_slice()),
                d,
                labels.as_slice_mut().expect("standard layout"),
            ),
        }
    }

    /// The per-call case: `n` points, `k` centroids, `d` dimensions (`kmeans::Data`'s).
    pub(crate) struct Case {
        points: Array2<f32>,
        centroids: Array2<f32>,
        labels: Array1<u32>,
    }

    impl Case {
        pub(crate) fn new(n: usize, k: usize, d: usize) -> Case {
            let data = kmeans::Data::new(n, k, d, 0xC1A55);
            Case {
                points: Array2::from_shape_vec((n, d), data.points).unwrap(),
                centroids: Array2::from_shape_vec((k, d), data.centroids).unwrap(),
                labels: Array1::zeros(n),
            }
        }

        /// The labels and inertia in `build`.
        pub(crate) fn labels(&self, build: Build) -> (Array1<u32>, f32) {
            let mut labels = Array1::zeros(self.points.nrows());
            let inertia = run(build, self.points.view(), self.centroids.view(), labels.view_mut());
            (labels, inertia)
        }
    }

    impl super::Case for Case {
        fn label(&self) -> String {
            let (n, d) = self.points.dim();
            format!("ndarray k-means, {n} × {d}d, k = {}", self.centroids.nrows())
        }
        fn call(&mut self, build: Build) {
            std::hint::black_box(run(build, self.points.view(), self.centroids.view(), self.labels.view_mut()));
        }
        fn work(&self) -> Work {
            Work::Flops(3.0 * (self.points.len() * self.centroids.nrows()) as f64)
        }
        fn routed(&self) -> (&'static Kernel, usize) {
            (&annotated::assign::KERNEL, self.points.nrows() * self.centroids.len())
        }
        fn twin(&self) -> Option<(&'static Kernel, usize)> {
            Some((&kmeans::annotated::assign::KERNEL, self.points.nrows() * self.centroids.len()))
        }
        fn builds(&self) -> &'static [Build] {
            &Build::ARRAYS
        }
        fn target(&self) -> &'static str {
            "≥ 0.9× twin, ≥ hand (issue 42)"
        }
    }
}

/// The layer norm over the rows of an ndarray matrix.
pub(crate) mod norm {
    use super::*;
    use layernorm::EPS;

    macro_rules! program {
        ($($annotate:ident)?) => {
            /// `out = (x − mean) / sqrt(var + ε) · gamma + beta`, row by row.
            $(#[$annotate(complexity = "Medium", size = x.len())])?
            pub(crate) fn layer_norm(
                x: ArrayView2<'_, f32>,
                gamma: ArrayView1<'_, f32>,
                beta: ArrayView1<'_, f32>,
                mut out: ArrayViewMut2<'_, f32>,
            ) {
                let cols = x.ncols();
                for (row, mut out) in x.rows().into_iter().zip(out.rows_mut()) {
                    let mut sum = 0.0f32;
                    for v in row.iter() {
                        sum += v;
                    }
                    let mean = sum / cols as f32;
                    let mut var = 0.0f32;
                    for v in row.iter() {
                        var += (v - mean) * (v - mean);
                    }
                    let inv_std = 1.0 / (var / cols as f32 + EPS).sqrt();
                    for j in 0..cols {
                        out[j] = (row[j] - mean) * inv_std * gamma[j] + beta[j];
                    }
                }
            }
        };
    }

    /// The ndarray loops, unannotated.
    pub(crate) mod plain {
        use super::*;
        program!();
    }

    /// The same loops under `#[adaptive_kernel]`.
    pub(crate) mod annotated {
        use super::*;
        use adaptive_kernel::adaptive_kernel;
        program!(adaptive_kernel);
    }

    /// One layer norm in `build`.
    pub(crate) fn run(
        build: Build,
        x: ArrayView2<'_, f32>,
        gamma: ArrayView1<'_, f32>,
        beta: ArrayView1<'_, f32>,
        mut out: ArrayViewMut2<'_, f32>,
    ) {
        match build {
            Build::Plain => plain::layer_norm(x, gamma, beta, out),
            Build::Annotated => annotated::layer_norm(x, gamma, beta, out),
            Build::Twin => layernorm::annotated::layer_norm(
                slice(x.as_slice()),
                slice(gamma.as_slice()),
                slice(beta.as_slice()),
                out.as_slice_mut().expect("standard layout"),
            ),
            Build::Hand => {
                let (gamma, beta) = (slice(gamma.as_slice()), slice(beta.as_slice()));
                Zip::from(out.rows_mut()).and(x.rows()).par_for_each(|out, row| {
                    layernorm::hand::rows(slice(row.to_slice()), gamma, beta, out.into_slice().expect("a whole row"))
                });
            }
        }
    }

    /// The per-call case: a `rows × cols` matrix (`layernorm::Data`'s).
    pub(crate) struct Case {
        x: Array2<f32>,
        gamma: Array1<f32>,
        beta: Array1<f32>,
        out: Array2<f32>,
    }

    impl Case {
        pub(crate) fn new(rows: usize, cols: usize) -> Case {
            let data = layernorm::Data::new(rows, cols, 0x1A7E);
            Case {
                x: Array2::from_shape_vec((rows, cols), data.x).unwrap(),
                gamma: Array1::from(data.gamma),
                beta: Array1::from(data.beta),
                out: Array2::zeros((rows, cols)),
            }
        }

        /// The normalised matrix in `build`.
        pub(crate) fn normalised(&self, build: Build) -> Array2<f32> {
            let mut out = Array2::zeros(self.x.dim());
            run(build, self.x.view(), self.gamma.view(), self.beta.view(), out.view_mut());
            out
        }
    }

    impl super::Case for Case {
        fn label(&self) -> String {
            let (rows, cols) = self.x.dim();
            format!("ndarray layer norm, {rows} × {cols}")
        }
        fn call(&mut self, build: Build) {
            run(build, self.x.view(), self.gamma.view(), self.beta.view(), self.out.view_mut());
        }
        fn work(&self) -> Work {
            Work::Bytes(8.0 * self.x.len() as f64)
        }
        fn routed(&self) -> (&'static Kernel, usize) {
            (&annotated::layer_norm::KERNEL, self.x.len())
        }
        fn twin(&self) -> Option<(&'static Kernel, usize)> {
            Some((&layernorm::annotated::layer_norm::KERNEL, self.x.len()))
        }
        fn builds(&self) -> &'static [Build] {
            &Build::ARRAYS
        }
        fn target(&self) -> &'static str {
            "≥ 0.9× twin, ≥ hand (issue 42)"
        }
    }
}

/// The 5-point stencil on an ndarray grid.
pub(crate) mod heat {
    use super::*;

    /// The step's coefficient (stable below 0.25).
    pub(crate) const ALPHA: f32 = 0.2;

    macro_rules! program {
        ($($annotate:ident)?) => {
            /// One step of the heat equation on `u`'s interior, into `out`.
            $(#[$annotate(complexity = "Low")])?
            pub(crate) fn heat_step(u: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>, alpha: f32) {
                let (h, w) = u.dim();
                for i in 1..h.saturating_sub(1) {
                    for j in 1..w.saturating_sub(1) {
                        let c = u[[i, j]];
                        let around = u[[i - 1, j]] + u[[i + 1, j]] + u[[i, j - 1]] + u[[i, j + 1]];
                        out[[i, j]] = c + alpha * (around - 4.0 * c);
                    }
                }
            }
        };
    }

    /// The ndarray loops, unannotated.
    pub(crate) mod plain {
        use super::*;
        program!();
    }

    /// The same loops under `#[adaptive_kernel]`.
    pub(crate) mod annotated {
        use super::*;
        use adaptive_kernel::adaptive_kernel;
        program!(adaptive_kernel);
    }

    /// One step in `build`.
    pub(crate) fn run(build: Build, u: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>, alpha: f32) {
        let w = u.ncols();
        match build {
            Build::Plain => plain::heat_step(u, out, alpha),
            Build::Annotated => annotated::heat_step(u, out, alpha),
            Build::Twin => stencil::annotated::heat_step(
                slice(u.as_slice()),
                out.as_slice_mut().expect("standard layout"),
                w,
                alpha,
            ),
            Build::Hand => {
                stencil::hand::heat_step(slice(u.as_slice()), out.as_slice_mut().expect("standard layout"), w, alpha)
            }
        }
    }

    /// The per-call case: an `h × w` grid of temperatures and the next step's.
    pub(crate) struct Case {
        u: Array2<f32>,
        out: Array2<f32>,
    }

    impl Case {
        pub(crate) fn new(h: usize, w: usize) -> Case {
            let u = Array2::from_shape_vec((h, w), Xorshift::new(0x4EA7).uniform(h * w, 0.0, 100.0)).unwrap();
            Case { out: u.clone(), u }
        }

        /// The grid, row-major.
        pub(crate) fn grid(&self) -> &[f32] {
            slice(self.u.as_slice())
        }

        /// The next step in `build` (the border copied from `u`).
        pub(crate) fn step(&self, build: Build) -> Array2<f32> {
            let mut out = self.u.clone();
            run(build, self.u.view(), out.view_mut(), ALPHA);
            out
        }
    }

    impl super::Case for Case {
        fn label(&self) -> String {
            let (h, w) = self.u.dim();
            format!("ndarray 5-point stencil, {h} × {w}")
        }
        fn call(&mut self, build: Build) {
            run(build, self.u.view(), self.out.view_mut(), ALPHA);
        }
        fn work(&self) -> Work {
            Work::Bytes(8.0 * self.u.len() as f64)
        }
        fn routed(&self) -> (&'static Kernel, usize) {
            (&annotated::heat_step::KERNEL, 2 * self.u.len())
        }
        fn twin(&self) -> Option<(&'static Kernel, usize)> {
            Some((&stencil::annotated::heat_step::KERNEL, 2 * self.u.len()))
        }
        fn builds(&self) -> &'static [Build] {
            &Build::ARRAYS
        }
        fn target(&self) -> &'static str {
            "≥ 0.9× twin, ≥ hand (issue 42)"
        }
    }
}
