//! Row-wise softmax of a matrix, in place: attention scores (one row per
//! query, one column per key) or a batch of classifier logits. Each row is
//! shifted by its maximum, exponentiated, and divided by its sum.
//!
//! The exponential dominates: `f32::exp` is a call into libm per element,
//! which no compiler turns into lanes by itself. The figure is GB/s of the
//! matrix read and written once.

use rayon::prelude::*;

use super::{clones, rows_per_task, Build, Case, WholeRun, Work};
use crate::common::Xorshift;

/// The program as its author writes it, with `$annotate` (if given) as its attribute.
macro_rules! program {
    ($($annotate:ident)?) => {
        /// Each row of `scores` (rows of `cols`) replaced by its softmax.
        $(#[$annotate(complexity = "Medium", size = scores.len())])?
        pub(crate) fn softmax_rows(scores: &mut [f32], cols: usize) {
            for row in scores.chunks_mut(cols) {
                let mut max = f32::NEG_INFINITY;
                for &v in row.iter() {
                    if v > max {
                        max = v;
                    }
                }
                let mut sum = 0.0f32;
                for v in row.iter_mut() {
                    *v = (*v - max).exp();
                    sum += *v;
                }
                for v in row.iter_mut() {
                    *v /= sum;
                }
            }
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

/// Hand-optimised: the maximum and the sum in `L` lanes, the exponential
/// evaluated in lanes (Cephes' `expf`: `2ⁿ·p(r)` with `r = x − n·ln 2`, within
/// 2 ulp of libm's), the division a multiplication by the reciprocal; a clone
/// per CPU feature level; rayon over blocks of rows.
pub(crate) mod hand {
    use super::*;

    /// [`super::plain::softmax_rows`], hand-optimised.
    pub(crate) fn softmax_rows(scores: &mut [f32], cols: usize) {
        let block = rows_per_task(cols) * cols;
        scores.par_chunks_mut(block).for_each(|rows_block| rows(rows_block, cols));
    }

    clones! {
        /// [`softmax_rows`] for the rows of one block.
        fn rows(scores: &mut [f32], cols: usize) = rows_lanes::<16, 8, 4>
    }

    /// `eˣ` for `x ≤ 0` (the shifted scores): Cephes' `expf`, flushing below `e⁻⁸⁷` to a tiny normal.
    #[inline(always)]
    pub(crate) fn exp(x: f32) -> f32 {
        const LOG2E: f32 = std::f32::consts::LOG2_E;
        // 1.5·2²³: adding it rounds to an integer held in the low mantissa bits.
        const ROUND: f32 = 12_582_912.0;
        const LN2_HI: f32 = 0.693_359_4;
        const LN2_LO: f32 = -2.121_944_4e-4;
        let x = x.max(-87.3);
        let t = x.mul_add(LOG2E, ROUND);
        let n = t - ROUND;
        let r = n.mul_add(-LN2_LO, n.mul_add(-LN2_HI, x));
        let mut p = 1.987_569_1e-4f32;
        p = p.mul_add(r, 1.398_2e-3);
        p = p.mul_add(r, 8.333_452e-3);
        p = p.mul_add(r, 4.166_579_6e-2);
        p = p.mul_add(r, 1.666_666_5e-1);
        p = p.mul_add(r, 0.5);
        let y = p.mul_add(r * r, r) + 1.0;
        // 2ⁿ from n's bits: the low mantissa bits of `t` hold n + 2²² (n ≥ −126 here).
        let two_n = f32::from_bits((t.to_bits().wrapping_sub(ROUND.to_bits()).wrapping_add(127)) << 23);
        y * two_n
    }

    #[inline(always)]
    fn rows_lanes<const L: usize>(scores: &mut [f32], cols: usize) {
        for row in scores.chunks_exact_mut(cols) {
            let mut lanes = [f32::NEG_INFINITY; L];
            let mut chunks = row.chunks_exact(L);
            for chunk in &mut chunks {
                for l in 0..L {
                    lanes[l] = lanes[l].max(chunk[l]);
                }
            }
            let max = chunks
                .remainder()
                .iter()
                .fold(lanes.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)), |a, &b| a.max(b));
            let mut sums = [0.0f32; L];
            let mut chunks = row.chunks_exact_mut(L);
            for chunk in &mut chunks {
                for l in 0..L {
                    chunk[l] = exp(chunk[l] - max);
                    sums[l] += chunk[l];
                }
            }
            let mut sum: f32 = sums.iter().sum();
            for v in chunks.into_remainder() {
                *v = exp(*v - max);
                sum += *v;
            }
            let inv = 1.0 / sum;
            for v in row.iter_mut() {
                *v *= inv;
            }
        }
    }
}

/// Scores spread like attention logits (a few units wide), from a fixed seed.
pub(crate) fn scores(rows: usize, cols: usize, seed: u32) -> Vec<f32> {
    Xorshift::new(seed).uniform(rows * cols, -8.0, 8.0)
}

/// One softmax of `scores` in `build`.
fn softmax_rows(build: Build, scores: &mut [f32], cols: usize) {
    match build {
        Build::Plain => plain::softmax_rows(scores, cols),
        Build::Annotated | Build::Twin => annotated::softmax_rows(scores, cols),
        Build::Hand => hand::softmax_rows(scores, cols),
    }
}

/// [`softmax_rows`] of a copy of `scores`.
pub(crate) fn softmax_of(build: Build, scores: &[f32], cols: usize) -> Vec<f32> {
    let mut out = scores.to_vec();
    softmax_rows(build, &mut out, cols);
    out
}

/// The per-call case: one softmax of a `rows × cols` matrix, from the same scores every call.
pub(crate) struct Softmax {
    input: Vec<f32>,
    work: Vec<f32>,
    cols: usize,
}

impl Softmax {
    /// The case for a `rows × cols` matrix.
    pub(crate) fn new(rows: usize, cols: usize) -> Softmax {
        let input = scores(rows, cols, 0x50F7);
        Softmax { work: input.clone(), input, cols }
    }
}

impl Case for Softmax {
    fn label(&self) -> String {
        format!("softmax, {} × {}", self.input.len() / self.cols, self.cols)
    }
    fn call(&mut self, build: Build) {
        // In place: the output of the last call is a softmax's, a valid input too (every build
        // reads the same kind of values: in [0, 1]); refreshing it would time a copy.
        softmax_rows(build, &mut self.work, self.cols);
    }
    fn work(&self) -> Work {
        Work::Bytes(8.0 * self.input.len() as f64)
    }
    fn routed(&self) -> (&'static adaptive_kernel::Kernel, usize) {
        (&annotated::softmax_rows::KERNEL, self.input.len())
    }
    fn target(&self) -> &'static str {
        "≥ 0.9× hand"
    }
}

/// The whole run: attention of 12 heads over 256 positions, 24 layers, 20 sequences.
const RUN_ROWS: usize = 12 * 256;
const RUN_COLS: usize = 256;
const RUN_CALLS: usize = 24 * 20;

/// `RUN_CALLS` softmaxes of fresh scores (the same scores scaled per call); the sum of the last.
fn run(build: Build) -> f64 {
    let input = scores(RUN_ROWS, RUN_COLS, 0xA77E);
    let mut work = vec![0.0f32; input.len()];
    for call in 0..RUN_CALLS {
        let scale = 1.0 + (call % 7) as f32 * 0.1;
        for (w, x) in work.iter_mut().zip(&input) {
            *w = x * scale;
        }
        softmax_rows(build, &mut work, RUN_COLS);
    }
    work.iter().enumerate().map(|(i, &v)| f64::from(v) * (i % 13) as f64).sum()
}

/// The whole run.
pub(crate) const WHOLE_RUN: WholeRun =
    WholeRun { name: "softmax", describe: "softmax: 3,072 × 256 (12 heads), 480 calls", run };
