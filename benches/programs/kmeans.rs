//! Nearest-centroid assignment, the step of k-means (Lloyd's algorithm) that
//! costs `n·k·d`: points and centroids are row-major `&[f32]` matrices, each
//! point gets the index of its nearest centroid (squared Euclidean distance),
//! and the step returns the inertia (the sum of those distances).
//!
//! Dimensions: 16 and 39. That is the range where this loop is what people
//! write and run: vector quantisation of speech frames uses 13 MFCCs with
//! their first and second differences (39 dimensions, codebooks of 64–1,024),
//! colour and texture descriptors and PCA-reduced features sit at 16–64. With
//! 3 or fewer dimensions the inner loop is too short for lanes; with hundreds
//! (embeddings) people call a BLAS (`‖p‖² − 2p·q + ‖q‖²`, a matrix product).
//! 39 is not a multiple of any lane width, as real data seldom is.
//!
//! Each distance term costs 3 floating-point operations (subtract, multiply,
//! add): `3·n·k·d` per assignment.

use adaptive_kernel::resident::Resident;
use rayon::prelude::*;

use super::{clones, Build, Case, WholeRun, Work};
use crate::common::Xorshift;

/// The program as its author writes it, with `$annotate` (if given) as its attribute.
macro_rules! program {
    ($($annotate:ident)?) => {
        /// `labels[i]` = the index of the centroid nearest to point `i`; returns the inertia.
        $(#[$annotate(complexity = "High", size = points.len() / d * centroids.len())])?
        pub(crate) fn assign(points: &[f32], centroids: &[f32], d: usize, labels: &mut [u32]) -> f32 {
            let n = points.len() / d;
            let k = centroids.len() / d;
            let mut inertia = 0.0f32;
            for i in 0..n {
                let p = &points[i * d..(i + 1) * d];
                let mut best = 0;
                let mut best_dist = f32::INFINITY;
                for c in 0..k {
                    let q = &centroids[c * d..(c + 1) * d];
                    let mut dist = 0.0f32;
                    for j in 0..d {
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

/// The loops, unannotated.
pub(crate) mod plain {
    program!();
}

/// The same loops under `#[adaptive_kernel]`.
pub(crate) mod annotated {
    use adaptive_kernel::adaptive_kernel;
    program!(adaptive_kernel);
}

/// Hand-optimised: `L` points in the lanes of one register (each block of
/// points transposed once, `d × L`), so every lane is a whole distance and
/// keeps its own nearest centroid (no horizontal sums, no horizontal minima);
/// eight centroids per pass (eight independent chains of fused multiply–adds,
/// each point load shared by them); a clone per CPU feature level; rayon over
/// blocks of points, the inertia summed per block and the blocks' sums in
/// block order.
pub(crate) mod hand {
    use super::*;

    /// Points per rayon task.
    const BLOCK: usize = 512;
    /// Centroids per pass over a lane group's dimensions.
    const CENTROIDS: usize = 8;

    /// [`super::plain::assign`], hand-optimised.
    pub(crate) fn assign(points: &[f32], centroids: &[f32], d: usize, labels: &mut [u32]) -> f32 {
        let partials: Vec<f32> = labels
            .par_chunks_mut(BLOCK)
            .zip(points.par_chunks(BLOCK * d))
            .map(|(labels, points)| assign_block(points, centroids, d, labels))
            .collect();
        partials.iter().sum()
    }

    clones! {
        /// [`assign`] for the points of one block.
        fn assign_block(points: &[f32], centroids: &[f32], d: usize, labels: &mut [u32]) -> f32
            = block_lanes::<16, 8, 4>
    }

    #[inline(always)]
    fn block_lanes<const L: usize>(points: &[f32], centroids: &[f32], d: usize, labels: &mut [u32]) -> f32 {
        let k = centroids.len() / d;
        let n = labels.len().min(points.len() / d);
        let mut transposed = vec![[0.0f32; L]; d];
        let mut inertia = 0.0f32;
        for first in (0..n).step_by(L) {
            // Lanes past the block's last point repeat that point; their results are dropped.
            let lanes = L.min(n - first);
            for (j, column) in transposed.iter_mut().enumerate() {
                for l in 0..L {
                    column[l] = points[(first + l.min(lanes - 1)) * d + j];
                }
            }
            let (mut best_dist, mut best) = ([f32::INFINITY; L], [0u32; L]);
            let wide = k / CENTROIDS * CENTROIDS;
            for c0 in (0..wide).step_by(CENTROIDS) {
                let q = &centroids[c0 * d..(c0 + CENTROIDS) * d];
                let mut acc = [[0.0f32; L]; CENTROIDS];
                for (j, column) in transposed.iter().enumerate() {
                    for u in 0..CENTROIDS {
                        let qj = q[u * d + j];
                        for l in 0..L {
                            let t = column[l] - qj;
                            acc[u][l] = t.mul_add(t, acc[u][l]);
                        }
                    }
                }
                // In increasing centroid order with a strict `<`: the first of equal distances
                // wins, as in the plain loop.
                for u in 0..CENTROIDS {
                    for l in 0..L {
                        if acc[u][l] < best_dist[l] {
                            best_dist[l] = acc[u][l];
                            best[l] = (c0 + u) as u32;
                        }
                    }
                }
            }
            for c in wide..k {
                let q = &centroids[c * d..(c + 1) * d];
                let mut acc = [0.0f32; L];
                for (column, &qj) in transposed.iter().zip(q) {
                    for l in 0..L {
                        let t = column[l] - qj;
                        acc[l] = t.mul_add(t, acc[l]);
                    }
                }
                for l in 0..L {
                    if acc[l] < best_dist[l] {
                        best_dist[l] = acc[l];
                        best[l] = c as u32;
                    }
                }
            }
            labels[first..first + lanes].copy_from_slice(&best[..lanes]);
            inertia += best_dist[..lanes].iter().sum::<f32>();
        }
        inertia
    }
}

/// Points scattered around `k` true centres, and `k` starting centroids (the first `k` points).
pub(crate) struct Data {
    pub(crate) points: Vec<f32>,
    pub(crate) centroids: Vec<f32>,
    pub(crate) d: usize,
}

impl Data {
    /// `n` points of `d` dimensions around `k` centres, from a fixed seed.
    pub(crate) fn new(n: usize, k: usize, d: usize, seed: u32) -> Data {
        let mut rng = Xorshift::new(seed);
        let centres = rng.uniform(k * d, -10.0, 10.0);
        let noise = rng.uniform(n * d, -2.0, 2.0);
        let which = rng.uniform(n, 0.0, k as f32);
        let mut points = vec![0.0f32; n * d];
        for i in 0..n {
            let c = (which[i] as usize).min(k - 1);
            for j in 0..d {
                points[i * d + j] = centres[c * d + j] + noise[i * d + j];
            }
        }
        let centroids = points[..k * d].to_vec();
        Data { points, centroids, d }
    }

    /// The labels and inertia in `build`.
    pub(crate) fn assign(&self, build: Build) -> (Vec<u32>, f32) {
        let mut labels = vec![0u32; self.points.len() / self.d];
        let inertia = assign(build, &self.points, &self.centroids, self.d, &mut labels);
        (labels, inertia)
    }
}

/// One assignment in `build`.
fn assign(build: Build, points: &[f32], centroids: &[f32], d: usize, labels: &mut [u32]) -> f32 {
    match build {
        Build::Plain => plain::assign(points, centroids, d, labels),
        Build::Annotated | Build::Twin => annotated::assign(points, centroids, d, labels),
        Build::Hand => hand::assign(points, centroids, d, labels),
    }
}

/// The per-call case: one assignment of `n` points to `k` centroids in `d` dimensions.
pub(crate) struct Assignment {
    data: Data,
    k: usize,
    labels: Vec<u32>,
    /// The points and labels as `Resident` handles, for the resident GPU column (the
    /// centroids, which a Lloyd iteration updates on the host, stay host data).
    resident: (Resident<f32>, Resident<u32>),
}

impl Assignment {
    /// The case for `n` points, `k` centroids, `d` dimensions.
    pub(crate) fn new(n: usize, k: usize, d: usize) -> Assignment {
        let data = Data::new(n, k, d, 0xC1A55);
        let resident = (Resident::new(data.points.clone()), Resident::new(vec![0; n]));
        Assignment { data, k, labels: vec![0; n], resident }
    }
}

impl Case for Assignment {
    fn label(&self) -> String {
        format!("k-means, {} × {}d, k = {}", self.labels.len(), self.data.d, self.k)
    }
    fn call(&mut self, build: Build) {
        std::hint::black_box(assign(build, &self.data.points, &self.data.centroids, self.data.d, &mut self.labels));
    }
    fn call_resident(&mut self) -> bool {
        let (points, labels) = &mut self.resident;
        std::hint::black_box(annotated::assign::resident(&*points, &self.data.centroids, self.data.d, labels));
        true
    }
    fn work(&self) -> Work {
        Work::Flops(3.0 * (self.labels.len() * self.k * self.data.d) as f64)
    }
    fn routed(&self) -> (&'static adaptive_kernel::Kernel, usize) {
        (&annotated::assign::KERNEL, self.labels.len() * self.k * self.data.d)
    }
    fn target(&self) -> &'static str {
        "≥ 0.9× hand"
    }
}

/// The whole run's shape: speech frames (3 minutes at 100 frames/s) into a 64-word codebook.
const RUN_POINTS: usize = 16_384;
const RUN_K: usize = 64;
const RUN_D: usize = 39;
const RUN_ITERATIONS: usize = 10;

/// `RUN_ITERATIONS` Lloyd iterations (assign, then move each centroid to its
/// points' mean); the final inertia.
fn lloyd(build: Build) -> f64 {
    let Data { points, mut centroids, d } = Data::new(RUN_POINTS, RUN_K, RUN_D, 0x11_0D);
    let mut labels = vec![0u32; RUN_POINTS];
    let mut inertia = 0.0;
    for _ in 0..RUN_ITERATIONS {
        inertia = assign(build, &points, &centroids, d, &mut labels);
        let mut sums = vec![0.0f32; RUN_K * d];
        let mut counts = vec![0usize; RUN_K];
        for (i, &c) in labels.iter().enumerate() {
            let c = c as usize;
            counts[c] += 1;
            for j in 0..d {
                sums[c * d + j] += points[i * d + j];
            }
        }
        for c in 0..RUN_K {
            if counts[c] > 0 {
                for j in 0..d {
                    centroids[c * d + j] = sums[c * d + j] / counts[c] as f32;
                }
            }
        }
    }
    f64::from(inertia)
}

/// The whole run: `RUN_ITERATIONS` Lloyd iterations.
pub(crate) const WHOLE_RUN: WholeRun =
    WholeRun { name: "kmeans", describe: "k-means: 16,384 × 39d, k = 64, 10 Lloyd iterations", run: lloyd };
