//! Image code over rows, as people write it: `chunks_mut(w)` and
//! `chunks_exact_mut(w)` with `enumerate`, index loops writing row `i`
//! (`out[i * w..(i + 1) * w]`) or pixel `out[i * w + j]`, a per-row reduction
//! stored per row, and a transposition (writes not in row `i`). Each routed
//! call, and each variant called directly, matches the same computation
//! written out in `main`: bit for bit where nothing is summed, within a
//! relative 1e-4 where a row is. A 5-point stencil writes its border pixels
//! (`dst[r * w]`, `dst[r * w + w - 1]`) in the loop over rows, and a row-wise
//! prefix sets each row's first element before the rest: both split. A row
//! loop that writes past its row (the next row's first pixel, a column shifted
//! right) stays on one thread (`overlap`) and computes the same.
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;

/// Gamma correction of an 8-bit-range image, row by row.
#[adaptive_kernel(complexity = "Low")]
fn gamma_rows(img: &mut [f32], w: usize, gamma: f32) {
    for row in img.chunks_mut(w) {
        for p in row.iter_mut() {
            *p = 255.0 * (*p / 255.0).powf(gamma);
        }
    }
}

/// A horizontal 3-tap blur with `chunks_exact_mut` and `enumerate`; edges clamped.
#[adaptive_kernel(complexity = "Medium", size = src.len())]
fn blur_rows(src: &[f32], dst: &mut [f32], w: usize) {
    for (y, out) in dst.chunks_exact_mut(w).enumerate() {
        let row = &src[y * w..(y + 1) * w];
        for x in 0..w {
            let left = row[x.saturating_sub(1)];
            let right = row[(x + 1).min(w - 1)];
            out[x] = (left + row[x] + right) / 3.0;
        }
    }
}

/// A vertical gradient, `out[i * w + j] = src[(i + 1) * w + j] - src[i * w + j]`, last row zero.
#[adaptive_kernel(complexity = "Medium", size = src.len())]
fn vertical_gradient(src: &[f32], out: &mut [f32], w: usize, h: usize) {
    for i in 0..h {
        for j in 0..w {
            out[i * w + j] = if i + 1 < h { src[(i + 1) * w + j] - src[i * w + j] } else { 0.0 };
        }
    }
}

/// Each row scaled to unit sum (a row reduction, then a write of row `i` as a sub-slice).
#[adaptive_kernel(complexity = "Medium", size = img.len())]
fn normalise_rows(img: &[f32], out: &mut [f32], w: usize) {
    let h = img.len() / w;
    for i in 0..h {
        let row = &img[i * w..(i + 1) * w];
        let mut sum = 0.0f32;
        for v in row {
            sum += v;
        }
        let dst = &mut out[i * w..(i + 1) * w];
        for j in 0..w {
            dst[j] = row[j] / sum;
        }
    }
}

/// The sum of each row, stored per row: `sums[i]`.
#[adaptive_kernel(complexity = "Medium", size = img.len())]
fn row_sums(img: &[f32], w: usize, sums: &mut [f32]) {
    for (i, s) in sums.iter_mut().enumerate() {
        let mut acc = 0.0;
        for x in &img[i * w..(i + 1) * w] {
            acc += *x;
        }
        *s = acc;
    }
}

/// `out = srcᵀ`: row `i` of the source becomes column `i` (writes spread over every row).
#[adaptive_kernel(complexity = "Medium", size = src.len())]
fn transpose(src: &[f32], out: &mut [f32], w: usize, h: usize) {
    for i in 0..h {
        for j in 0..w {
            out[j * h + i] = src[i * w + j];
        }
    }
}

/// One Jacobi step of a 5-point stencil: the border copied, each interior pixel the mean of
/// itself and its four neighbours (rows split across threads, border writes included).
#[adaptive_kernel(complexity = "Medium", size = src.len())]
fn jacobi(src: &[f32], dst: &mut [f32], w: usize, h: usize) {
    dst[..w].copy_from_slice(&src[..w]);
    for r in 1..h - 1 {
        dst[r * w] = src[r * w];
        dst[r * w + w - 1] = src[r * w + w - 1];
        for c in 1..w - 1 {
            let here = r * w + c;
            let around = src[here - 1] + src[here + 1] + src[here - w] + src[here + w];
            dst[r * w + c] = (src[here] + around) / 5.0;
        }
    }
    let last = (h - 1) * w;
    dst[last..].copy_from_slice(&src[last..]);
}

/// The running sum along each row (a summed-area table's first pass): the row's first
/// element set first, each next one from the one before it.
#[adaptive_kernel(complexity = "Low", size = img.len())]
fn row_prefix(img: &[f32], out: &mut [f32], w: usize) {
    let h = img.len() / w;
    for r in 0..h {
        out[r * w] = img[r * w];
        for c in 1..w {
            out[r * w + c] = out[r * w + c - 1] + img[r * w + c];
        }
    }
}

/// Each row's first pixel replaced by half the previous row's last: writes row `r + 1`.
#[adaptive_kernel(complexity = "Low", size = img.len())]
fn carry_down(img: &[f32], out: &mut [f32], w: usize) {
    let h = img.len() / w;
    out.copy_from_slice(img);
    for r in 0..h - 1 {
        out[r * w + w] = 0.5 * img[r * w + w - 1];
    }
}

/// Each row shifted one pixel right: the last pixel of row `r` lands in row `r + 1`.
#[adaptive_kernel(complexity = "Low", size = img.len())]
fn shift_right(img: &[f32], out: &mut [f32], w: usize) {
    let h = img.len() / w;
    for r in 0..h {
        for c in 0..w {
            if r * w + c + 1 < out.len() {
                out[r * w + c + 1] = img[r * w + c];
            }
        }
    }
}

fn image(w: usize, h: usize) -> Vec<f32> {
    (0..w * h).map(|i| 1.0 + ((i * 7919) % 251) as f32).collect()
}

fn close(got: f32, want: f64) -> bool {
    (f64::from(got) - want).abs() <= 1e-4 * want.abs().max(1.0)
}

fn main() {
    let (w, h) = (67, 19);
    let img = image(w, h);
    let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits());

    let want: Vec<f32> = img.iter().map(|p| 255.0 * (p / 255.0).powf(0.8)).collect();
    for f in [gamma_rows, gamma_rows::scalar, gamma_rows::simd] {
        let mut out = img.clone();
        f(&mut out, w, 0.8);
        assert!(same(&out, &want));
    }

    let mut want = vec![0.0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            let r = &img[y * w..(y + 1) * w];
            want[y * w + x] = (r[x.saturating_sub(1)] + r[x] + r[(x + 1).min(w - 1)]) / 3.0;
        }
    }
    for f in [blur_rows, blur_rows::scalar, blur_rows::simd] {
        let mut out = vec![0.0; w * h];
        f(&img, &mut out, w);
        assert!(same(&out, &want));
    }

    let want: Vec<f32> =
        (0..w * h).map(|k| if k / w + 1 < h { img[k + w] - img[k] } else { 0.0 }).collect();
    for f in [vertical_gradient, vertical_gradient::scalar, vertical_gradient::simd] {
        let mut out = vec![1.0; w * h];
        f(&img, &mut out, w, h);
        assert!(same(&out, &want));
    }

    let sums: Vec<f64> = img.chunks(w).map(|r| r.iter().map(|&v| f64::from(v)).sum()).collect();
    for f in [normalise_rows, normalise_rows::scalar, normalise_rows::simd] {
        let mut out = vec![0.0; w * h];
        f(&img, &mut out, w);
        assert!(out.iter().enumerate().all(|(k, &v)| close(v, f64::from(img[k]) / sums[k / w])));
    }
    for f in [row_sums, row_sums::scalar, row_sums::simd] {
        let mut out = vec![0.0; h];
        f(&img, w, &mut out);
        assert!(out.iter().zip(&sums).all(|(&g, &s)| close(g, s)), "{out:?}");
    }

    let mut want = img.clone();
    for r in 1..h - 1 {
        for c in 1..w - 1 {
            let k = r * w + c;
            want[k] = (img[k] + (img[k - 1] + img[k + 1] + img[k - w] + img[k + w])) / 5.0;
        }
    }
    assert!(jacobi::KERNEL.spec().splits.iter().all(|s| s.is_split()));
    for f in [jacobi, jacobi::scalar, jacobi::simd, jacobi::parallel] {
        let mut out = vec![0.0; w * h];
        f(&img, &mut out, w, h);
        assert!(same(&out, &want));
    }

    let mut want = img.clone();
    for k in 0..w * h {
        if k % w > 0 {
            want[k] += want[k - 1];
        }
    }
    assert!(row_prefix::KERNEL.spec().splits.iter().all(|s| s.is_split()));
    for f in [row_prefix, row_prefix::scalar, row_prefix::simd, row_prefix::parallel] {
        let mut out = vec![0.0; w * h];
        f(&img, &mut out, w);
        assert!(same(&out, &want));
    }

    let reasons = |splits: &[adaptive_kernel::LoopSplit]| splits.iter().map(|s| s.reason).collect::<Vec<_>>();
    assert_eq!(reasons(carry_down::KERNEL.spec().splits), ["overlap"]);
    assert_eq!(reasons(shift_right::KERNEL.spec().splits), ["overlap"]);
    let mut want = img.clone();
    for r in 0..h - 1 {
        want[(r + 1) * w] = 0.5 * img[r * w + w - 1];
    }
    for f in [carry_down, carry_down::scalar, carry_down::simd] {
        let mut out = vec![0.0; w * h];
        f(&img, &mut out, w);
        assert!(same(&out, &want));
    }
    let mut want = vec![0.0; w * h];
    want[1..].copy_from_slice(&img[..w * h - 1]);
    for f in [shift_right, shift_right::scalar, shift_right::simd] {
        let mut out = vec![0.0; w * h];
        f(&img, &mut out, w);
        assert!(same(&out, &want));
    }

    for f in [transpose, transpose::scalar, transpose::simd] {
        let mut out = vec![0.0; w * h];
        f(&img, &mut out, w, h);
        assert!((0..h).all(|i| (0..w).all(|j| out[j * h + i] == img[i * w + j])));
    }
}
