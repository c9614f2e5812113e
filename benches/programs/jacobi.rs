//! Jacobi relaxation of Laplace's equation on an `n`×`n` grid, as a heat or
//! pressure solver writes it: each sweep gives every interior point of the next
//! grid the mean of its four neighbours in the current one, the border stays,
//! and the two grids swap roles. Hundreds of sweeps over the same grids: the
//! program a GPU pays for only when the grids stay on the device between calls
//! (issue 43), which the **resident** GPU column times (`sweep::resident` on
//! `Resident` handles, nothing crossing the bus after the first call).
//!
//! Memory-bound (each sweep reads the grid once and writes it once; the three
//! rows around a point stay in cache), so its figure is GB/s.

use adaptive_kernel::resident::Resident;
use rayon::prelude::*;

use super::{clones, rows_per_task, Build, Case, WholeRun, Work};
use crate::common::Xorshift;

/// The program as its author writes it, with `$annotate` (if given) as its attribute.
macro_rules! program {
    ($($annotate:ident)?) => {
        /// One sweep: each interior point of `next` (an `n`×`n` grid, row-major) gets the mean
        /// of its four neighbours in `grid`; the border is not written.
        $(#[$annotate(complexity = "Medium")])?
        pub(crate) fn sweep(grid: &[f32], next: &mut [f32], n: usize) {
            for i in n..grid.len() - n {
                let x = i % n;
                if x != 0 && x != n - 1 {
                    next[i] = 0.25 * (grid[i - 1] + grid[i + 1] + grid[i - n] + grid[i + n]);
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

/// Hand-optimised: `L` interior points per step from four `L`-wide loads (the same
/// sums in the same order), a clone per CPU feature level, rayon over blocks of rows.
pub(crate) mod hand {
    use super::*;

    /// [`super::plain::sweep`], hand-optimised.
    pub(crate) fn sweep(grid: &[f32], next: &mut [f32], n: usize) {
        if n < 3 {
            return;
        }
        let rows = rows_per_task(n);
        // Rows 1..n−1 of `next`, in blocks; row 0 and row n−1 are the border.
        next[n..n * (n - 1)]
            .par_chunks_mut(rows * n)
            .enumerate()
            .for_each(|(block, next)| rows_block(grid, next, n, 1 + block * rows));
    }

    clones! {
        /// [`sweep`]'s rows `first..`, as many as `next` holds.
        fn rows_block(grid: &[f32], next: &mut [f32], n: usize, first: usize) = rows_lanes::<16, 8, 4>
    }

    #[inline(always)]
    fn rows_lanes<const L: usize>(grid: &[f32], next: &mut [f32], n: usize, first: usize) {
        for (dy, out) in next.chunks_exact_mut(n).enumerate() {
            let y = first + dy;
            let (up, row, down) =
                (&grid[(y - 1) * n..y * n], &grid[y * n..(y + 1) * n], &grid[(y + 1) * n..(y + 2) * n]);
            let interior = n - 2;
            if interior < L {
                for x in 1..n - 1 {
                    out[x] = 0.25 * (row[x - 1] + row[x + 1] + up[x] + down[x]);
                }
                continue;
            }
            // Points 1..n−1 in steps of L, the last step shifted back to end at n − 1.
            let mut x0 = 1;
            loop {
                let (left, right) = (&row[x0 - 1..x0 - 1 + L], &row[x0 + 1..x0 + 1 + L]);
                let (u, d) = (&up[x0..x0 + L], &down[x0..x0 + L]);
                let mut lanes = [0.0f32; L];
                for l in 0..L {
                    lanes[l] = 0.25 * (left[l] + right[l] + u[l] + d[l]);
                }
                out[x0..x0 + L].copy_from_slice(&lanes);
                if x0 + L == n - 1 {
                    break;
                }
                x0 = (x0 + L).min(n - 1 - L);
            }
        }
    }
}

/// An `n`×`n` grid: a hot top edge, a warm left one, noise inside, from a fixed seed.
pub(crate) fn grid(n: usize, seed: u32) -> Vec<f32> {
    let mut g = Xorshift::new(seed).uniform(n * n, 0.0, 0.1);
    g[..n].fill(1.0);
    for y in 0..n {
        g[y * n] = 0.5;
    }
    g
}

/// One sweep of `grid` into `next` in `build`.
pub(crate) fn sweep(build: Build, grid: &[f32], next: &mut [f32], n: usize) {
    match build {
        Build::Plain => plain::sweep(grid, next, n),
        Build::Annotated | Build::Twin => annotated::sweep(grid, next, n),
        Build::Hand => hand::sweep(grid, next, n),
    }
}

/// The per-call case: one sweep of an `n`×`n` grid (the grids swap after each call, so
/// calls iterate as the program does).
pub(crate) struct Sweep {
    grids: [Vec<f32>; 2],
    n: usize,
    /// The same grids as `Resident` handles, for the resident GPU column.
    resident: [Resident<f32>; 2],
}

impl Sweep {
    /// The case for an `n`×`n` grid.
    pub(crate) fn new(n: usize) -> Sweep {
        let g = grid(n, 0x7AC0);
        Sweep { resident: [Resident::new(g.clone()), Resident::new(g.clone())], grids: [g.clone(), g], n }
    }
}

impl Case for Sweep {
    fn label(&self) -> String {
        format!("Jacobi sweep, {0} × {0}", self.n)
    }
    fn call(&mut self, build: Build) {
        let [a, b] = &mut self.grids;
        sweep(build, a, b, self.n);
        self.grids.swap(0, 1);
    }
    fn call_resident(&mut self) -> bool {
        let [a, b] = &mut self.resident;
        annotated::sweep::resident(&*a, b, self.n);
        self.resident.swap(0, 1);
        true
    }
    fn work(&self) -> Work {
        Work::Bytes(8.0 * (self.n * self.n) as f64)
    }
    fn routed(&self) -> (&'static adaptive_kernel::Kernel, usize) {
        (&annotated::sweep::KERNEL, 2 * self.n * self.n)
    }
    fn target(&self) -> &'static str {
        "none (issue 43: the resident GPU column)"
    }
}

/// The whole run: 200 sweeps of a 1,024 × 1,024 grid.
const RUN_N: usize = 1_024;
const RUN_SWEEPS: usize = 200;

/// `RUN_SWEEPS` sweeps from the fixed grid; the final grid's weighted sum.
fn run(build: Build) -> f64 {
    let mut a = grid(RUN_N, 0x3E11);
    let mut b = a.clone();
    for _ in 0..RUN_SWEEPS / 2 {
        sweep(build, &a, &mut b, RUN_N);
        sweep(build, &b, &mut a, RUN_N);
    }
    a.iter().enumerate().map(|(i, &v)| f64::from(v) * (i % 17) as f64).sum()
}

/// The whole run.
pub(crate) const WHOLE_RUN: WholeRun =
    WholeRun { name: "jacobi", describe: "Jacobi: 1,024 × 1,024 grid, 200 sweeps", run };
