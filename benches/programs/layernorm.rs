//! Layer normalisation over the rows of a matrix (a transformer's activations:
//! one row per token): each row is shifted to mean 0, scaled to variance 1,
//! then multiplied by `gamma` and shifted by `beta`, written to `out`.
//!
//! Memory-bound at these sizes: each call reads `x` and writes `out` once
//! (`gamma` and `beta` stay in cache), so its figure is GB/s.

use rayon::prelude::*;

use super::{clones, rows_per_task, Build, Case, WholeRun, Work};
use crate::common::Xorshift;

/// Added to the variance, as in PyTorch's default.
pub(crate) const EPS: f32 = 1e-5;

/// The program as its author writes it, with `$annotate` (if given) as its attribute.
macro_rules! program {
    ($($annotate:ident)?) => {
        /// `out = (x − mean) / sqrt(var + ε) · gamma + beta`, row by row (rows of `gamma.len()`).
        $(#[$annotate(complexity = "Medium", size = x.len())])?
        pub(crate) fn layer_norm(x: &[f32], gamma: &[f32], beta: &[f32], out: &mut [f32]) {
            let cols = gamma.len();
            for (row, out) in x.chunks_exact(cols).zip(out.chunks_exact_mut(cols)) {
                let mut sum = 0.0f32;
                for v in row {
                    sum += v;
                }
                let mean = sum / cols as f32;
                let mut var = 0.0f32;
                for v in row {
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

/// The loops, unannotated.
pub(crate) mod plain {
    use super::EPS;
    program!();
}

/// The same loops under `#[adaptive_kernel]`.
pub(crate) mod annotated {
    use super::EPS;
    use adaptive_kernel::adaptive_kernel;
    program!(adaptive_kernel);
}

/// Hand-optimised: both sums in `L` lanes (the row read once for the mean,
/// once for the variance, once for the output, from cache), a clone per CPU
/// feature level, rayon over blocks of rows.
pub(crate) mod hand {
    use super::*;

    /// [`super::plain::layer_norm`], hand-optimised.
    pub(crate) fn layer_norm(x: &[f32], gamma: &[f32], beta: &[f32], out: &mut [f32]) {
        let cols = gamma.len();
        let block = rows_per_task(cols) * cols;
        out.par_chunks_mut(block).zip(x.par_chunks(block)).for_each(|(out, x)| rows(x, gamma, beta, out));
    }

    clones! {
        /// [`layer_norm`] for the rows of one block.
        fn rows(x: &[f32], gamma: &[f32], beta: &[f32], out: &mut [f32]) = rows_lanes::<16, 8, 4>
    }

    /// `Σ f(vᵢ)` over `row` in `L` lanes, lanes summed in order.
    #[inline(always)]
    fn lane_sum<const L: usize>(row: &[f32], f: impl Fn(f32) -> f32) -> f32 {
        let mut acc = [0.0f32; L];
        let chunks = row.chunks_exact(L);
        let tail = chunks.remainder();
        for chunk in chunks {
            for l in 0..L {
                acc[l] += f(chunk[l]);
            }
        }
        acc.iter().sum::<f32>() + tail.iter().map(|&v| f(v)).sum::<f32>()
    }

    #[inline(always)]
    fn rows_lanes<const L: usize>(x: &[f32], gamma: &[f32], beta: &[f32], out: &mut [f32]) {
        let cols = gamma.len();
        let beta = &beta[..cols];
        for (row, out) in x.chunks_exact(cols).zip(out.chunks_exact_mut(cols)) {
            let mean = lane_sum::<L>(row, |v| v) / cols as f32;
            let var = lane_sum::<L>(row, |v| (v - mean) * (v - mean)) / cols as f32;
            let inv_std = 1.0 / (var + EPS).sqrt();
            for j in 0..cols {
                out[j] = ((row[j] - mean) * inv_std).mul_add(gamma[j], beta[j]);
            }
        }
    }
}

/// A `rows × cols` activation matrix and the layer's weights.
pub(crate) struct Data {
    pub(crate) x: Vec<f32>,
    pub(crate) gamma: Vec<f32>,
    pub(crate) beta: Vec<f32>,
}

impl Data {
    /// Activations around 3 (a mean far from 0, as residual streams have), from a fixed seed.
    pub(crate) fn new(rows: usize, cols: usize, seed: u32) -> Data {
        let mut rng = Xorshift::new(seed);
        Data {
            x: rng.uniform(rows * cols, 1.0, 5.0),
            gamma: rng.uniform(cols, 0.5, 1.5),
            beta: rng.uniform(cols, -0.1, 0.1),
        }
    }

    /// The normalised matrix in `build`.
    pub(crate) fn layer_norm(&self, build: Build) -> Vec<f32> {
        let mut out = vec![0.0; self.x.len()];
        layer_norm(build, self, &mut out);
        out
    }
}

/// One layer norm of `data` into `out` in `build`.
fn layer_norm(build: Build, data: &Data, out: &mut [f32]) {
    let f = match build {
        Build::Plain => plain::layer_norm,
        Build::Annotated | Build::Twin => annotated::layer_norm,
        Build::Hand => hand::layer_norm,
    };
    f(&data.x, &data.gamma, &data.beta, out);
}

/// The per-call case: one layer norm of a `rows × cols` matrix.
pub(crate) struct LayerNorm {
    data: Data,
    out: Vec<f32>,
}

impl LayerNorm {
    /// The case for a `rows × cols` matrix.
    pub(crate) fn new(rows: usize, cols: usize) -> LayerNorm {
        LayerNorm { data: Data::new(rows, cols, 0x1A7E), out: vec![0.0; rows * cols] }
    }
}

impl Case for LayerNorm {
    fn label(&self) -> String {
        let cols = self.data.gamma.len();
        format!("layer norm, {} × {}", self.out.len() / cols, cols)
    }
    fn call(&mut self, build: Build) {
        layer_norm(build, &self.data, &mut self.out);
    }
    fn work(&self) -> Work {
        Work::Bytes(8.0 * self.out.len() as f64)
    }
    fn routed(&self) -> (&'static adaptive_kernel::Kernel, usize) {
        (&annotated::layer_norm::KERNEL, self.out.len())
    }
    fn target(&self) -> &'static str {
        "≥ 0.9× hand"
    }
}

/// The whole run: a 512-token batch through 48 normalisations (two per layer of a 24-layer model), 10 batches.
const RUN_ROWS: usize = 512;
const RUN_COLS: usize = 1_024;
const RUN_CALLS: usize = 480;

/// `RUN_CALLS` layer norms, each of the previous one's output; the final sum.
fn run(build: Build) -> f64 {
    let mut data = Data::new(RUN_ROWS, RUN_COLS, 0xBA7C);
    let mut out = vec![0.0f32; RUN_ROWS * RUN_COLS];
    for _ in 0..RUN_CALLS {
        layer_norm(build, &data, &mut out);
        // The next layer's input: the normalised rows plus a residual-like shift.
        for (x, o) in data.x.iter_mut().zip(&out) {
            *x = 0.5 * *x + o;
        }
    }
    out.iter().map(|&v| f64::from(v)).sum()
}

/// The whole run.
pub(crate) const WHOLE_RUN: WholeRun =
    WholeRun { name: "layernorm", describe: "layer norm: 512 × 1,024, 480 calls", run };
