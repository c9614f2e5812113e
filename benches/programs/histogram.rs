//! A histogram of samples into equal-width bins. Its writes are scattered
//! (`counts[bin] += 1`, the bin read from the data), so its iterations are
//! not independent: the annotated build's Parallel variant gives each chunk
//! a private copy of the counts, merged after the loop (a scatter reduction,
//! as OpenMP's `reduction(+: counts[:n])`); the loop itself runs as written.
//!
//! What a performance engineer does besides: private histograms per task,
//! four of them interleaved per task so that equal bins in a row do not wait
//! on each other's stores, and the bins computed in lanes with a spill bin
//! instead of the branch (which changes the body, as no rewrite may). The
//! figure is GB/s of samples read.

use rayon::prelude::*;

use super::{clones, Build, Case, WholeRun, Work};
use crate::common::Xorshift;

/// The program as its author writes it, with `$annotate` (if given) as its attribute.
macro_rules! program {
    ($($annotate:ident)?) => {
        /// Adds to `counts` (bins of equal width over `[lo, hi)`) the samples that fall in range.
        $(#[$annotate(complexity = "Low", size = samples.len())])?
        pub(crate) fn histogram(samples: &[f32], lo: f32, hi: f32, counts: &mut [u32]) {
            let bins = counts.len();
            let scale = bins as f32 / (hi - lo);
            for &v in samples {
                if v >= lo && v < hi {
                    let bin = ((v - lo) * scale) as usize;
                    counts[bin.min(bins - 1)] += 1;
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

/// Hand-optimised: private histograms per rayon task (up to four interleaved
/// copies, as many as fit in 32 KiB of L1 cache, sample `i` into copy
/// `i % copies`, each with one extra bin that takes the out-of-range samples,
/// so that the loop has no branch), bin indices computed `L` at a time, a
/// clone per CPU feature level; the copies and tasks summed at the end.
pub(crate) mod hand {
    use super::*;

    /// Samples per rayon task.
    const BLOCK: usize = 64 * 1024;
    /// Interleaved copies of each task's histogram: at most 4, a power of two, together
    /// within 32 KiB (one at least).
    fn copies(bins: usize) -> usize {
        let mut copies = 4;
        while copies > 1 && copies * (bins + 1) * 4 > 32 * 1024 {
            copies /= 2;
        }
        copies
    }

    /// [`super::plain::histogram`], hand-optimised.
    pub(crate) fn histogram(samples: &[f32], lo: f32, hi: f32, counts: &mut [u32]) {
        let stride = counts.len() + 1;
        let copies = copies(counts.len());
        let total = samples
            .par_chunks(BLOCK)
            .fold(
                || vec![0u32; copies * stride],
                |mut private, chunk| {
                    block(chunk, lo, hi, stride, &mut private);
                    private
                },
            )
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
                a
            });
        if let Some(total) = total {
            for copy in total.chunks_exact(stride) {
                counts.iter_mut().zip(copy).for_each(|(c, n)| *c += n);
            }
        }
    }

    clones! {
        /// Adds `samples` to `private`: [`copies`] histograms of `stride = bins + 1`, one after the other.
        fn block(samples: &[f32], lo: f32, hi: f32, stride: usize, private: &mut [u32]) = block_lanes::<16, 8, 4>
    }

    #[inline(always)]
    fn block_lanes<const L: usize>(samples: &[f32], lo: f32, hi: f32, stride: usize, private: &mut [u32]) {
        let bins = stride - 1;
        // `copies` is a power of two.
        let mask = private.len() / stride - 1;
        let scale = bins as f32 / (hi - lo);
        // The bin of `v`, or `bins` (the extra one) when `v` is out of range. In float
        // arithmetic to the end (floor, clamp, and 2²³ added so that the integer is the low
        // mantissa bits), which vectorises; a saturating `as` conversion does not.
        const TWO_23: f32 = 8_388_608.0;
        let last = (bins - 1) as f32;
        let bin = |v: f32| {
            let x = ((v - lo) * scale).floor().max(0.0).min(last);
            let b = (x + TWO_23).to_bits().wrapping_sub(TWO_23.to_bits());
            (if v >= lo && v < hi { b } else { bins as u32 }) as usize
        };
        let mut chunks = samples.chunks_exact(L);
        for chunk in &mut chunks {
            let mut index = [0usize; L];
            for l in 0..L {
                index[l] = bin(chunk[l]);
            }
            for l in 0..L {
                private[(l & mask) * stride + index[l]] += 1;
            }
        }
        for &v in chunks.remainder() {
            private[bin(v)] += 1;
        }
    }
}

/// Samples roughly normal around 0 (the sum of four uniforms), some outside `[-2, 2)`.
pub(crate) fn samples(n: usize, seed: u32) -> Vec<f32> {
    let u = Xorshift::new(seed).uniform(4 * n, -1.0, 1.0);
    u.chunks_exact(4).map(|c| c.iter().sum()).collect()
}

/// The range the bins cover.
pub(crate) const RANGE: (f32, f32) = (-2.0, 2.0);

/// One histogram of `samples` added to `counts` in `build`.
fn histogram(build: Build, samples: &[f32], counts: &mut [u32]) {
    let (lo, hi) = RANGE;
    match build {
        Build::Plain => plain::histogram(samples, lo, hi, counts),
        Build::Annotated | Build::Twin => annotated::histogram(samples, lo, hi, counts),
        Build::Hand => hand::histogram(samples, lo, hi, counts),
    }
}

/// The counts of `samples` in `bins` bins over [`RANGE`] in `build`.
pub(crate) fn counts(build: Build, samples: &[f32], bins: usize) -> Vec<u32> {
    let mut counts = vec![0; bins];
    histogram(build, samples, &mut counts);
    counts
}

/// The per-call case: one histogram of `n` samples into `bins` bins.
pub(crate) struct Histogram {
    samples: Vec<f32>,
    counts: Vec<u32>,
}

impl Histogram {
    /// The case for `n` samples and `bins` bins.
    pub(crate) fn new(n: usize, bins: usize) -> Histogram {
        Histogram { samples: samples(n, 0x415), counts: vec![0; bins] }
    }
}

impl Case for Histogram {
    fn label(&self) -> String {
        format!("histogram, {} into {}", self.samples.len(), self.counts.len())
    }
    fn call(&mut self, build: Build) {
        self.counts.fill(0);
        histogram(build, &self.samples, &mut self.counts);
    }
    fn work(&self) -> Work {
        Work::Bytes(4.0 * self.samples.len() as f64)
    }
    fn routed(&self) -> (&'static adaptive_kernel::Kernel, usize) {
        (&annotated::histogram::KERNEL, self.samples.len())
    }
    fn target(&self) -> &'static str {
        "≥ 0.5× hand"
    }
}

/// The whole run: 200 batches of 250,000 samples into 1,024 bins.
const RUN_SAMPLES: usize = 250_000;
const RUN_BATCHES: usize = 200;
const RUN_BINS: usize = 1_024;

/// `RUN_BATCHES` histograms accumulated into one; a weighted sum of the counts.
fn run(build: Build) -> f64 {
    let data = samples(RUN_SAMPLES * 4, 0xD15);
    let mut counts = vec![0u32; RUN_BINS];
    for batch in 0..RUN_BATCHES {
        let start = (batch % 4) * RUN_SAMPLES;
        histogram(build, &data[start..start + RUN_SAMPLES], &mut counts);
    }
    counts.iter().enumerate().map(|(i, &c)| f64::from(c) * i as f64).sum()
}

/// The whole run.
pub(crate) const WHOLE_RUN: WholeRun =
    WholeRun { name: "histogram", describe: "histogram: 200 batches of 250,000 samples into 1,024 bins", run };
