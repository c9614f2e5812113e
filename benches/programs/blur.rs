//! A 3×3 box blur of a single-channel `f32` image, row by row: each interior
//! pixel becomes the mean of its 3×3 neighbourhood; the border is copied.
//!
//! Memory-bound on large images (each call reads the image once and writes it
//! once; the two rows around the current one stay in cache), so its figure
//! is GB/s.

use rayon::prelude::*;

use super::{clones, rows_per_task, Build, Case, WholeRun, Work};
use crate::common::Xorshift;

/// The program as its author writes it, with `$annotate` (if given) as its attribute.
macro_rules! program {
    ($($annotate:ident)?) => {
        /// `dst` = `src` (rows of `w` pixels) blurred by a 3×3 box; border pixels copied.
        $(#[$annotate(complexity = "Medium", size = src.len())])?
        pub(crate) fn box_blur(src: &[f32], dst: &mut [f32], w: usize) {
            let h = src.len() / w;
            for (y, out) in dst.chunks_exact_mut(w).enumerate() {
                let row = &src[y * w..(y + 1) * w];
                if y == 0 || y == h - 1 {
                    out.copy_from_slice(row);
                    continue;
                }
                let up = &src[(y - 1) * w..y * w];
                let down = &src[(y + 1) * w..(y + 2) * w];
                out[0] = row[0];
                out[w - 1] = row[w - 1];
                for x in 1..w - 1 {
                    let sum = up[x - 1] + up[x] + up[x + 1]
                        + row[x - 1] + row[x] + row[x + 1]
                        + down[x - 1] + down[x] + down[x + 1];
                    out[x] = sum / 9.0;
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

/// Hand-optimised: `L` output pixels per step from nine `L`-wide loads (the
/// same sums in the same order; a multiplication by 1/9 instead of the
/// division), a clone per CPU feature level, rayon over blocks of rows.
pub(crate) mod hand {
    use super::*;

    /// [`super::plain::box_blur`], hand-optimised.
    pub(crate) fn box_blur(src: &[f32], dst: &mut [f32], w: usize) {
        let rows = rows_per_task(w);
        dst.par_chunks_mut(rows * w).enumerate().for_each(|(block, dst)| rows_block(src, dst, w, block * rows));
    }

    clones! {
        /// [`box_blur`]'s rows `first..`, as many as `dst` holds.
        fn rows_block(src: &[f32], dst: &mut [f32], w: usize, first: usize) = rows_lanes::<16, 8, 4>
    }

    #[inline(always)]
    fn rows_lanes<const L: usize>(src: &[f32], dst: &mut [f32], w: usize, first: usize) {
        let h = src.len() / w;
        for (dy, out) in dst.chunks_exact_mut(w).enumerate() {
            let y = first + dy;
            let row = &src[y * w..(y + 1) * w];
            if y == 0 || y == h - 1 {
                out.copy_from_slice(row);
                continue;
            }
            let up = &src[(y - 1) * w..y * w];
            let down = &src[(y + 1) * w..(y + 2) * w];
            out[0] = row[0];
            out[w - 1] = row[w - 1];
            let ninth = 1.0 / 9.0;
            // Interior pixels 1..w−1 in steps of L, the last step shifted back to end at w − 1.
            let interior = w - 2;
            if interior < L {
                for x in 1..w - 1 {
                    let sum = up[x - 1] + up[x] + up[x + 1] + row[x - 1] + row[x] + row[x + 1];
                    out[x] = (sum + down[x - 1] + down[x] + down[x + 1]) * ninth;
                }
                continue;
            }
            let mut x0 = 1;
            loop {
                let (u, r, d) = (&up[x0 - 1..x0 + L + 1], &row[x0 - 1..x0 + L + 1], &down[x0 - 1..x0 + L + 1]);
                let mut lanes = [0.0f32; L];
                for l in 0..L {
                    let sum = u[l] + u[l + 1] + u[l + 2] + r[l] + r[l + 1] + r[l + 2];
                    lanes[l] = (sum + d[l] + d[l + 1] + d[l + 2]) * ninth;
                }
                out[x0..x0 + L].copy_from_slice(&lanes);
                if x0 + L == w - 1 {
                    break;
                }
                x0 = (x0 + L).min(w - 1 - L);
            }
        }
    }
}

/// A `w × h` image: smooth gradients plus noise, from a fixed seed.
pub(crate) fn image(w: usize, h: usize, seed: u32) -> Vec<f32> {
    let noise = Xorshift::new(seed).uniform(w * h, -0.1, 0.1);
    (0..w * h).map(|i| ((i % w) as f32 / w as f32) * 0.5 + ((i / w) as f32 / h as f32) * 0.4 + noise[i]).collect()
}

/// One blur of `src` into `dst` in `build`.
fn box_blur(build: Build, src: &[f32], dst: &mut [f32], w: usize) {
    match build {
        Build::Plain => plain::box_blur(src, dst, w),
        Build::Annotated | Build::Twin => annotated::box_blur(src, dst, w),
        Build::Hand => hand::box_blur(src, dst, w),
    }
}

/// [`box_blur`] of `src` into a new image.
pub(crate) fn blurred(build: Build, src: &[f32], w: usize) -> Vec<f32> {
    let mut dst = vec![0.0; src.len()];
    box_blur(build, src, &mut dst, w);
    dst
}

/// The per-call case: one blur of a `w × h` image.
pub(crate) struct Blur {
    src: Vec<f32>,
    dst: Vec<f32>,
    w: usize,
}

impl Blur {
    /// The case for a `w × h` image.
    pub(crate) fn new(w: usize, h: usize) -> Blur {
        Blur { src: image(w, h, 0xB1E5), dst: vec![0.0; w * h], w }
    }
}

impl Case for Blur {
    fn label(&self) -> String {
        format!("3×3 blur, {} × {}", self.w, self.src.len() / self.w)
    }
    fn call(&mut self, build: Build) {
        box_blur(build, &self.src, &mut self.dst, self.w);
    }
    fn work(&self) -> Work {
        Work::Bytes(8.0 * self.src.len() as f64)
    }
    fn routed(&self) -> (&'static adaptive_kernel::Kernel, usize) {
        (&annotated::box_blur::KERNEL, self.src.len())
    }
    fn target(&self) -> &'static str {
        "≥ 0.9× hand"
    }
}

/// The whole run: a 1080p frame blurred 100 times (ping-pong between two buffers).
const RUN_W: usize = 1_920;
const RUN_H: usize = 1_080;
const RUN_PASSES: usize = 100;

/// `RUN_PASSES` blurs, each of the previous one's output; the final image's weighted sum.
fn run(build: Build) -> f64 {
    let mut a = image(RUN_W, RUN_H, 0xF4A3);
    let mut b = vec![0.0f32; a.len()];
    for _ in 0..RUN_PASSES {
        box_blur(build, &a, &mut b, RUN_W);
        std::mem::swap(&mut a, &mut b);
    }
    a.iter().enumerate().map(|(i, &v)| f64::from(v) * (i % 17) as f64).sum()
}

/// The whole run.
pub(crate) const WHOLE_RUN: WholeRun =
    WholeRun { name: "blur", describe: "3×3 blur: 1,920 × 1,080, 100 passes", run };
