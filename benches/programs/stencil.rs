//! A 5-point stencil: one explicit step of the heat equation on a `h × w` grid,
//! each interior point moved towards the mean of its four neighbours,
//! `out = u + α·(up + down + left + right − 4u)` (the border stays as it is).
//! Written over a row-major slice; the slice-written twin of the ndarray stencil
//! (`arrays.rs`), which is what issue 42 compares, so it has plain, annotated
//! and hand builds but no row of its own in the per-call table.
//!
//! Memory-bound: each call reads `u` and writes `out` once (the neighbours' rows
//! come from cache), so its figure is GB/s.

use rayon::prelude::*;

use super::{clones, rows_per_task};

/// The program as its author writes it, with `$annotate` (if given) as its attribute.
macro_rules! program {
    ($($annotate:ident)?) => {
        /// One step of `u` (rows of `w`) into `out`'s interior.
        $(#[$annotate(complexity = "Low")])?
        pub(crate) fn heat_step(u: &[f32], out: &mut [f32], w: usize, alpha: f32) {
            let h = u.len() / w;
            for i in 1..h.saturating_sub(1) {
                for j in 1..w - 1 {
                    let c = u[i * w + j];
                    let around = u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1];
                    out[i * w + j] = c + alpha * (around - 4.0 * c);
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

/// Hand-optimised: each interior row from its three source rows in `L` lanes (each
/// lane's five reads taken as arrays, so no lane is bounds-checked), a clone per CPU
/// feature level, rayon over blocks of rows for grids too large for one core's caches.
pub(crate) mod hand {
    use super::*;

    /// Grids of fewer elements (2 MiB of `f32`) run on the calling thread: the step is
    /// memory-bound, and waking the pool costs more than a second core gains there.
    const SERIAL_BELOW: usize = 1 << 19;

    /// [`super::plain::heat_step`], hand-optimised.
    pub(crate) fn heat_step(u: &[f32], out: &mut [f32], w: usize, alpha: f32) {
        let h = u.len() / w;
        if h < 3 || w < 3 {
            return;
        }
        let block = if u.len() < SERIAL_BELOW { h } else { rows_per_task(w) };
        // Interior rows 1..h-1, in blocks; each block reads the rows around it.
        out[w..(h - 1) * w].par_chunks_mut(block * w).enumerate().for_each(|(b, rows)| {
            let first = 1 + b * block;
            for (r, o) in rows.chunks_exact_mut(w).enumerate() {
                let i = first + r;
                row(&u[(i - 1) * w..(i + 2) * w], o, alpha);
            }
        });
    }

    clones! {
        /// One interior row: `around` is its three source rows, `out` its output row.
        fn row(around: &[f32], out: &mut [f32], alpha: f32) = row_lanes::<16, 8, 4>
    }

    #[inline(always)]
    fn row_lanes<const L: usize>(around: &[f32], out: &mut [f32], alpha: f32) {
        let w = out.len();
        let (up, rest) = around.split_at(w);
        let (mid, down) = rest.split_at(w);
        let interior = w - 2;
        let full = interior / L * L;
        let lanes = |s: &[f32], at: usize| -> [f32; L] { s[at..at + L].try_into().expect("L elements") };
        for j0 in (1..1 + full).step_by(L) {
            let (u, d, l, c, r) =
                (lanes(up, j0), lanes(down, j0), lanes(mid, j0 - 1), lanes(mid, j0), lanes(mid, j0 + 1));
            let mut o = [0.0f32; L];
            for k in 0..L {
                o[k] = c[k] + alpha * (u[k] + d[k] + l[k] + r[k] - 4.0 * c[k]);
            }
            out[j0..j0 + L].copy_from_slice(&o);
        }
        for j in 1 + full..w - 1 {
            let c = mid[j];
            out[j] = c + alpha * (up[j] + down[j] + mid[j - 1] + mid[j + 1] - 4.0 * c);
        }
    }
}
