//! Element-wise index loops as people write them: stencils, image filters
//! over `y * w + x`, in-place updates, a heat-equation step in `f64`, mixed
//! widths, a `Vec` built and returned, loops nested in other loops and in
//! methods; and some the SIMD variant leaves as written (generic and `u8`
//! elements, a running sum, a gather). Each routed call, and each variant
//! called directly, matches the computation written out in `main` bit for bit.
#![deny(warnings)]

use std::ops::Add;

use adaptive_kernel::adaptive_kernel;

/// Sharpen the interior of a `w × h` image with a 5-point Laplacian; the border is copied.
#[adaptive_kernel(complexity = "Medium", size = src.len())]
fn sharpen(src: &[f32], dst: &mut [f32], w: usize, h: usize) {
    dst.copy_from_slice(src);
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let c = src[y * w + x];
            let n = src[(y - 1) * w + x] + src[(y + 1) * w + x] + src[y * w + x - 1] + src[y * w + x + 1];
            dst[y * w + x] = 5.0 * c - n;
        }
    }
}

/// One explicit step of the 1-D heat equation; the ends stay fixed.
#[adaptive_kernel(complexity = "Low")]
fn heat_step(cur: &[f64], next: &mut [f64], alpha: f64) {
    let n = cur.len();
    next[0] = cur[0];
    next[n - 1] = cur[n - 1];
    for i in 1..n - 1 {
        next[i] = cur[i] + alpha * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
    }
}

/// ReLU in place.
#[adaptive_kernel(complexity = "Low")]
fn relu(x: &mut [f32]) {
    for i in 0..x.len() {
        if x[i] < 0.0 {
            x[i] = 0.0;
        }
    }
}

/// Standardise pixels: `(p - mean) / std`, NaN pixels left as they were.
#[adaptive_kernel(complexity = "Low")]
fn standardise(img: &[f32], out: &mut [f32], mean: f32, std: f32) {
    let inv = 1.0 / std;
    for i in 0..img.len() {
        if img[i].is_nan() {
            continue;
        }
        let d = img[i] - mean;
        out[i] = d * inv;
    }
}

/// Weighted widening: `out[i] = f64(a[i]) · w[i]`.
#[adaptive_kernel(complexity = "Low")]
fn widen(a: &[f32], w: &[f64], out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = f64::from(a[i]) * w[i];
    }
}

/// A window of `a` shifted into `out`: `out[i - lo] = a[i + shift] * 0.5` for `i` in `lo..hi`.
#[adaptive_kernel(complexity = "Low")]
fn shifted_window(a: &[f32], out: &mut [f32], lo: usize, hi: usize, shift: usize) {
    for i in lo..hi {
        out[i - lo] = a[i + shift] * 0.5;
    }
}

/// Column sums of an `m × n` matrix, accumulated row by row.
#[adaptive_kernel(complexity = "Medium", size = m.len())]
fn column_sums(m: &[f32], n: usize) -> Vec<f32> {
    let mut sums = vec![0.0f32; n];
    for i in 0..m.len() / n {
        for j in 0..n {
            sums[j] += m[i * n + j];
        }
    }
    sums
}

/// A ramp `start + i · step`.
#[adaptive_kernel(complexity = "Low", size = n)]
fn ramp(n: usize, start: f32, step: f32) -> Vec<f32> {
    let mut out = vec![0.0f32; n];
    for i in 0..n {
        out[i] = start + i as f32 * step;
    }
    out
}

/// A signal processor with its gain as a parameter.
struct Amplifier;

impl Amplifier {
    #[adaptive_kernel(complexity = "Low")]
    fn amplify(&self, input: &[f32], output: &mut [f32], gain: f32) {
        for i in 0..output.len() {
            output[i] = input[i] * gain + output[i];
        }
    }
}

/// Left as written (`type`): the element type is generic.
#[adaptive_kernel(complexity = "Low")]
fn add_any<T: Copy + Add<Output = T>>(a: &[T], b: &[T], out: &mut [T]) {
    for i in 0..out.len() {
        out[i] = a[i] + b[i];
    }
}

/// Left as written (`type`): 8-bit pixels.
#[adaptive_kernel(complexity = "Low")]
fn halve(img: &[u8], out: &mut [u8]) {
    for i in 0..out.len() {
        out[i] = img[i] / 2;
    }
}

/// Left as written: a running sum reads the element before (`overlap`), a gather reads
/// where another slice says (`source`: an index that does not move with the loop's).
#[adaptive_kernel(complexity = "Low")]
fn prefix_and_gather(x: &[f32], idx: &[usize], prefix: &mut [f32], gathered: &mut [f32]) {
    for i in 1..prefix.len() {
        prefix[i] = prefix[i - 1] + x[i];
    }
    for i in 0..gathered.len() {
        gathered[i] = x[idx[i]];
    }
}

fn image(w: usize, h: usize) -> Vec<f32> {
    (0..w * h).map(|i| ((i * 7919) % 251) as f32 * 0.1 - 9.0).collect()
}

fn same32(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits())
}

fn same64(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits())
}

fn main() {
    let (w, h) = (67, 19);
    let img = image(w, h);

    let mut want = img.clone();
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let k = y * w + x;
            want[k] = 5.0 * img[k] - (img[k - w] + img[k + w] + img[k - 1] + img[k + 1]);
        }
    }
    for f in [sharpen, sharpen::scalar, sharpen::simd] {
        let mut out = vec![0.0; w * h];
        f(&img, &mut out, w, h);
        assert!(same32(&out, &want));
    }

    let cur: Vec<f64> = img.iter().map(|&v| f64::from(v)).collect();
    let mut want = cur.clone();
    for i in 1..cur.len() - 1 {
        want[i] = cur[i] + 0.1 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
    }
    for f in [heat_step, heat_step::scalar, heat_step::simd] {
        let mut next = vec![0.0; cur.len()];
        f(&cur, &mut next, 0.1);
        assert!(same64(&next, &want));
    }

    let want: Vec<f32> = img.iter().map(|&v| if v < 0.0 { 0.0 } else { v }).collect();
    for f in [relu, relu::scalar, relu::simd] {
        let mut x = img.clone();
        f(&mut x);
        assert!(same32(&x, &want));
    }

    let mut pixels = img.clone();
    pixels[5] = f32::NAN;
    let inv = 1.0 / 2.5f32;
    let want: Vec<f32> = pixels.iter().map(|&p| if p.is_nan() { 7.0 } else { (p - 0.5) * inv }).collect();
    for f in [standardise, standardise::scalar, standardise::simd] {
        let mut out = vec![7.0; pixels.len()];
        f(&pixels, &mut out, 0.5, 2.5);
        assert!(same32(&out, &want));
    }

    let weights: Vec<f64> = (0..img.len()).map(|i| 1.0 / (1.0 + i as f64)).collect();
    let want: Vec<f64> = img.iter().zip(&weights).map(|(&a, &w)| f64::from(a) * w).collect();
    for f in [widen, widen::scalar, widen::simd] {
        let mut out = vec![0.0; img.len()];
        f(&img, &weights, &mut out);
        assert!(same64(&out, &want));
    }

    let want: Vec<f32> = (3..90).map(|i| img[i + 7] * 0.5).collect();
    for f in [shifted_window, shifted_window::scalar, shifted_window::simd] {
        let mut out = vec![0.0; 87];
        f(&img, &mut out, 3, 90, 7);
        assert!(same32(&out, &want));
    }

    let mut want = vec![0.0f32; w];
    for row in img.chunks(w) {
        for (s, v) in want.iter_mut().zip(row) {
            *s += v;
        }
    }
    for f in [column_sums, column_sums::scalar, column_sums::simd] {
        assert!(same32(&f(&img, w), &want));
    }

    let want: Vec<f32> = (0..101).map(|i| 0.25 + i as f32 * 0.125).collect();
    for f in [ramp, ramp::scalar, ramp::simd] {
        assert!(same32(&f(101, 0.25, 0.125), &want));
    }

    let want: Vec<f32> = img.iter().map(|&v| v * 1.5 + 1.0).collect();
    let mut out = vec![1.0; img.len()];
    Amplifier.amplify(&img, &mut out, 1.5);
    assert!(same32(&out, &want));

    let mut sums = vec![0u32; 4];
    add_any(&[1, 2, 3, 4], &[10, 20, 30, 40], &mut sums);
    assert_eq!(sums, [11, 22, 33, 44]);
    let mut half = vec![0u8; 3];
    for f in [halve, halve::scalar, halve::simd] {
        f(&[200, 7, 0], &mut half);
        assert_eq!(half, [100, 3, 0]);
    }

    let x = [1.0f32, 2.0, 3.0, 4.0];
    for f in [prefix_and_gather, prefix_and_gather::scalar, prefix_and_gather::simd] {
        let (mut prefix, mut gathered) = ([1.0f32; 4], [0.0f32; 3]);
        f(&x, &[3, 0, 2], &mut prefix, &mut gathered);
        assert_eq!((prefix, gathered), ([1.0, 3.0, 6.0, 10.0], [4.0, 1.0, 3.0]));
    }

    // What the SIMD variant did to each loop, as the report says.
    let words = |loops: &[adaptive_kernel::LoopRewrite]| -> Vec<(&str, bool, &str)> {
        loops.iter().map(|l| (l.idiom, l.rewritten(), l.reason)).collect()
    };
    let lanes = [("for range =", true, "")];
    for loops in [
        sharpen::KERNEL.spec().loops,
        heat_step::KERNEL.spec().loops,
        relu::KERNEL.spec().loops,
        standardise::KERNEL.spec().loops,
        widen::KERNEL.spec().loops,
        shifted_window::KERNEL.spec().loops,
        column_sums::KERNEL.spec().loops,
        ramp::KERNEL.spec().loops,
    ] {
        assert_eq!(words(loops), lanes);
    }
    assert_eq!(words(add_any::kernel::<u32>().spec().loops), [("for range =", false, "type")]);
    assert_eq!(words(halve::KERNEL.spec().loops), [("for range =", false, "type")]);
    assert_eq!(
        words(prefix_and_gather::KERNEL.spec().loops),
        [("for range =", false, "overlap"), ("for range =", false, "source")]
    );
}
