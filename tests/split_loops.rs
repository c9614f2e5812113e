//! Plain-loop kernels whose top-level loops the Parallel variant splits across
//! threads: the variant exists, its element-wise results are Scalar's bit for
//! bit, its reductions are within the tolerance and the same on every run at a
//! given thread count (1, 2 and 3 threads), scatter updates through private
//! copies are Scalar's (integers exactly), and the loops it cannot split are
//! reported with their word.

use adaptive_kernel::ops::par::with_threads;
use adaptive_kernel::{adaptive_kernel, Backend, LoopSplit};
use proptest::prelude::*;

/// `y += alpha·x`, item by item.
#[adaptive_kernel(complexity = "Low")]
fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// `out[i] = a[i]² + b[i]`, by index, and the sum of what it wrote.
#[adaptive_kernel(complexity = "Medium")]
fn square_add(a: &[f32], b: &[f32], out: &mut [f32]) -> f32 {
    let n = out.len().min(a.len()).min(b.len());
    let mut total = 0.0f32;
    for i in 0..n {
        let v = a[i] * a[i] + b[i];
        out[i] = v;
        total += v;
    }
    total
}

/// A 3-tap horizontal blur of an image, row by row.
#[adaptive_kernel(complexity = "Medium")]
fn blur_rows(img: &[f32], out: &mut [f32], w: usize) {
    for (r, row) in out.chunks_mut(w).enumerate() {
        let src = &img[r * w..(r + 1) * w];
        for c in 0..row.len() {
            let left = if c > 0 { src[c - 1] } else { src[c] };
            let right = if c + 1 < w { src[c + 1] } else { src[c] };
            row[c] = (left + src[c] + right) / 3.0;
        }
    }
}

/// Pairwise forces with softening, structure-of-arrays, and the potential energy.
#[adaptive_kernel(complexity = "High", size = x.len() * x.len())]
fn forces(x: &[f32], y: &[f32], m: &[f32], ax: &mut [f32], ay: &mut [f32]) -> f32 {
    let n = x.len();
    let eps = 1e-3f32;
    let mut energy = 0.0f32;
    for i in 0..n {
        let (xi, yi) = (x[i], y[i]);
        let (mut fx, mut fy) = (0.0f32, 0.0f32);
        for j in 0..n {
            let dx = x[j] - xi;
            let dy = y[j] - yi;
            let r2 = dx * dx + dy * dy + eps;
            let inv = 1.0 / (r2 * r2.sqrt());
            fx += dx * inv * m[j];
            fy += dy * inv * m[j];
        }
        ax[i] = fx;
        ay[i] = fy;
        energy += m[i] * (fx * fx + fy * fy);
    }
    energy
}

/// A matrix written element by element: `out[i * w + j]`.
#[adaptive_kernel(complexity = "Medium", size = h * w)]
fn outer(a: &[f32], b: &[f32], out: &mut [f32], h: usize, w: usize) {
    for i in 0..h {
        for j in 0..w {
            out[i * w + j] = a[i] * b[j];
        }
    }
}

/// Rows normalised to zero mean and unit variance: each row's sums in lanes, in every chunk too.
#[adaptive_kernel(complexity = "Medium")]
fn standardise(x: &[f32], out: &mut [f32], cols: usize) {
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
        let inv = 1.0 / (var / cols as f32 + EPS).sqrt();
        for (o, v) in out.iter_mut().zip(row) {
            *o = (v - mean) * inv;
        }
    }
}

const EPS: f32 = 1e-5;

/// A histogram: scattered writes, each chunk into a private copy of the bins.
#[adaptive_kernel(complexity = "Low", size = x.len())]
fn histogram(x: &[f32], bins: &mut [u32]) {
    let n = bins.len();
    for v in x {
        let b = ((v.clamp(0.0, 0.999)) * n as f32) as usize;
        bins[b] += 1;
    }
}

/// Sums and counts per label and dimension, and the largest value per label: k-means'
/// update step, with a maximum.
#[adaptive_kernel(complexity = "Medium", size = x.len())]
fn per_label(x: &[f32], labels: &[usize], d: usize, sums: &mut [f32], counts: &mut [u64], top: &mut [f32]) {
    for i in 0..labels.len() {
        let l = labels[i];
        counts[l] += 1;
        for j in 0..d {
            sums[l * d + j] += x[i * d + j];
            top[l] = top[l].max(x[i * d + j]);
        }
    }
}

/// A running sum reads the previous output: left on one thread.
#[adaptive_kernel(complexity = "Low")]
fn prefix(x: &[f32], out: &mut [f32]) {
    for i in 1..out.len().min(x.len()) {
        out[i] = out[i - 1] + x[i];
    }
}

/// What it shares is not `Sync`: split, but run in order on the calling thread.
#[adaptive_kernel(complexity = "Low")]
fn scaled_by_rc(x: &[f32], out: &mut [f32]) {
    let scale = std::rc::Rc::new(2.0f32);
    for (o, v) in out.iter_mut().zip(x) {
        *o = v * *scale;
    }
}

/// One step of a 5-point stencil over the interior rows, their border pixels copied.
#[adaptive_kernel(complexity = "Medium", size = src.len())]
fn stencil(src: &[f32], out: &mut [f32], w: usize, h: usize) {
    for r in 1..h - 1 {
        out[r * w] = src[r * w];
        out[r * w + w - 1] = src[r * w + w - 1];
        for c in 1..w - 1 {
            let i = r * w + c;
            out[r * w + c] = 0.2 * (src[i] + src[i - 1] + src[i + 1] + src[i - w] + src[i + w]);
        }
    }
}

/// Each row's third pixel from its end, bumped: a row narrower than three pixels bumps one of
/// an earlier row, as written, on one thread.
#[adaptive_kernel(complexity = "Low", size = out.len())]
fn bump_third_last(out: &mut [f32], w: usize, first: usize) {
    for r in first..out.len() / w {
        out[r * w + w - 3] += 1.0 + r as f32;
    }
}

fn words(splits: &[LoopSplit]) -> Vec<&'static str> {
    splits.iter().map(|s| if s.is_split() { "split" } else { s.reason }).collect()
}

#[test]
fn independent_loops_are_split_and_the_others_say_why() {
    assert_eq!(words(saxpy::KERNEL.spec().splits), ["split"]);
    assert_eq!(words(square_add::KERNEL.spec().splits), ["split"]);
    assert_eq!(words(blur_rows::KERNEL.spec().splits), ["split"]);
    assert_eq!(words(forces::KERNEL.spec().splits), ["split"]);
    assert_eq!(words(outer::KERNEL.spec().splits), ["split"]);
    assert_eq!(words(histogram::KERNEL.spec().splits), ["split"]);
    assert_eq!(words(per_label::KERNEL.spec().splits), ["split"]);
    // Its inner loop keeps a maximum in `top[l]`, an element that does not move with `j`: left as
    // written by the SIMD rewrite, for that reason (it said `effect` before issue 41).
    assert_eq!(
        (per_label::KERNEL.spec().loops[0].idiom, per_label::KERNEL.spec().loops[0].reason),
        ("for range =", "overlap")
    );
    assert_eq!(words(stencil::KERNEL.spec().splits), ["split"]);
    assert_eq!(words(bump_third_last::KERNEL.spec().splits), ["split"]);
    assert_eq!(words(prefix::KERNEL.spec().splits), ["overlap"]);
    assert_eq!(words(scaled_by_rc::KERNEL.spec().splits), ["split"]);
    for spec in [saxpy::KERNEL.spec(), forces::KERNEL.spec(), scaled_by_rc::KERNEL.spec()] {
        assert!(spec.has_parallel, "{}", spec.name);
    }
    assert!(histogram::KERNEL.spec().has_parallel);
    assert_eq!(words(standardise::KERNEL.spec().splits), ["split"]);
    for l in standardise::KERNEL.spec().loops {
        assert_eq!(
            l.variants,
            [Backend::Simd, Backend::Parallel],
            "{l:?}: a chunk's rows are slices the rewrite knows"
        );
    }
    assert!(!prefix::KERNEL.spec().has_parallel);
}

fn values(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(-10.0f32..10.0, len)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn element_wise_results_are_scalar_s_bit_for_bit(n in 0usize..3000, w in 1usize..40) {
        let (a, b) = ((0..n).map(|i| i as f32 * 0.37 - 5.0).collect::<Vec<_>>(), (0..n).map(|i| (i % 7) as f32).collect::<Vec<_>>());
        for threads in [1, 2, 3] {
            let (mut ys, mut yp) = (b.clone(), b.clone());
            saxpy::scalar(1.5, &a, &mut ys);
            with_threads(threads, || saxpy::parallel(1.5, &a, &mut yp));
            prop_assert_eq!(bits(&ys), bits(&yp));

            let h = n / w;
            let img = &a[..h * w];
            let (mut bs, mut bp) = (vec![0.0; h * w], vec![0.0; h * w]);
            blur_rows::scalar(img, &mut bs, w);
            with_threads(threads, || blur_rows::parallel(img, &mut bp, w));
            prop_assert_eq!(bits(&bs), bits(&bp));

            let (mut os, mut op) = (vec![0.0; h * w], vec![0.0; h * w]);
            outer::scalar(&a[..h], &b[..w.min(n)], &mut os[..h * w.min(n)], h, w.min(n));
            with_threads(threads, || outer::parallel(&a[..h], &b[..w.min(n)], &mut op[..h * w.min(n)], h, w.min(n)));
            prop_assert_eq!(bits(&os), bits(&op));

            let (mut rs, mut rp) = (vec![0.0; n], vec![0.0; n]);
            scaled_by_rc::scalar(&a, &mut rs);
            with_threads(threads, || scaled_by_rc::parallel(&a, &mut rp));
            prop_assert_eq!(bits(&rs), bits(&rp));
        }
    }

    #[test]
    fn border_writes_are_scalar_s_bit_for_bit(w in 1usize..40, h in 2usize..40, first in 0usize..4) {
        let src: Vec<f32> = (0..w * h).map(|i| (i % 17) as f32 * 0.5 - 3.0).collect();
        let mut want = vec![0.0; w * h];
        stencil::scalar(&src, &mut want, w, h);
        // Rows of one or two pixels: `w - 3` reaches back into an earlier row (the loop as
        // written); from three on, each row's own pixel (split). The first row must not reach
        // before the image.
        let bumps = w >= 3 || first * w + w >= 3;
        let mut bumped = src.clone();
        if bumps {
            bump_third_last::scalar(&mut bumped, w, first);
        }
        for threads in [1, 2, 3] {
            let mut got = vec![0.0; w * h];
            with_threads(threads, || stencil::parallel(&src, &mut got, w, h));
            prop_assert_eq!(bits(&want), bits(&got));
            if bumps {
                let mut got = src.clone();
                with_threads(threads, || bump_third_last::parallel(&mut got, w, first));
                prop_assert_eq!(bits(&bumped), bits(&got));
            }
        }
    }

    #[test]
    fn scatter_updates_are_scalar_s_and_repeat_at_a_thread_count(
        x in values(0..2000),
        bins in 1usize..300,
        k in 1usize..20,
        d in 1usize..5,
    ) {
        let mut want = vec![3u32; bins];
        histogram::scalar(&x, &mut want);
        let n = x.len() / d;
        let labels: Vec<usize> = (0..n).map(|i| (i * 7 + x.len()) % k).collect();
        let (mut sums, mut counts, mut top) = (vec![1.0f32; k * d], vec![0u64; k], vec![f32::NAN; k]);
        per_label::scalar(&x, &labels, d, &mut sums, &mut counts, &mut top);
        let scale: Vec<f32> = (0..k * d).map(|s| {
            (0..n).filter(|&i| labels[i] == s / d).map(|i| x[i * d + s % d].abs()).sum::<f32>() + 1.0
        }).collect();
        for threads in [1, 2, 3] {
            let run = || {
                let mut got = vec![3u32; bins];
                let (mut s, mut c, mut t) = (vec![1.0f32; k * d], vec![0u64; k], vec![f32::NAN; k]);
                with_threads(threads, || {
                    histogram::parallel(&x, &mut got);
                    per_label::parallel(&x, &labels, d, &mut s, &mut c, &mut t);
                });
                (got, s, c, t)
            };
            let (got, s, c, t) = run();
            prop_assert_eq!(&got, &want, "integer counts are exact");
            prop_assert_eq!(&c, &counts);
            prop_assert_eq!(bits(&t), bits(&top), "a maximum is exact");
            for ((g, w), sc) in s.iter().zip(&sums).zip(&scale) {
                prop_assert!((g - w).abs() <= 1e-5 * sc, "{} vs {}", g, w);
            }
            let again = run();
            prop_assert_eq!(bits(&again.1), bits(&s), "the same float sums on every run at {} threads", threads);
        }
    }

    #[test]
    fn reductions_are_within_tolerance_and_repeat_at_a_thread_count(x in values(0..300), y in values(0..300)) {
        let n = x.len().min(y.len());
        let (x, y) = (&x[..n], &y[..n]);
        let m: Vec<f32> = (0..n).map(|i| 1.0 + (i % 3) as f32).collect();
        let (mut ax, mut ay) = (vec![0.0; n], vec![0.0; n]);
        let scalar = forces::scalar(x, y, &m, &mut ax, &mut ay);
        for threads in [1, 2, 3] {
            let run = || {
                let (mut px, mut py) = (vec![0.0; n], vec![0.0; n]);
                let e = with_threads(threads, || forces::parallel(x, y, &m, &mut px, &mut py));
                (e, px, py)
            };
            let (e1, px, py) = run();
            let (e2, qx, qy) = run();
            prop_assert_eq!(e1.to_bits(), e2.to_bits());
            prop_assert_eq!(bits(&px), bits(&qx));
            prop_assert_eq!(bits(&py), bits(&qy));
            let close = |a: f32, b: f32, scale: f32| (a - b).abs() <= 1e-3 * scale.max(1.0);
            let scale: f32 = ax.iter().map(|v| v.abs()).sum::<f32>() + 1.0;
            for i in 0..n {
                prop_assert!(close(ax[i], px[i], scale), "{} vs {}", ax[i], px[i]);
                prop_assert!(close(ay[i], py[i], scale));
            }
            prop_assert!(close(scalar, e1, scalar.abs() * 1e-1 + 1.0), "{} vs {}", scalar, e1);
        }
        let (mut out_s, mut out_p) = (vec![0.0; n], vec![0.0; n]);
        let ts = square_add::scalar(x, y, &mut out_s);
        let tp = with_threads(2, || square_add::parallel(x, y, &mut out_p));
        prop_assert_eq!(bits(&out_s), bits(&out_p));
        let bound: f32 = out_s.iter().map(|v| v.abs()).sum::<f32>() * 1e-5 + 1e-6;
        prop_assert!((ts - tp).abs() <= bound, "{} vs {}", ts, tp);
    }
}

#[test]
fn a_histogram_and_a_loop_left_alone_compute_what_they_did() {
    let x: Vec<f32> = (0..100).map(|i| i as f32 / 100.0).collect();
    let mut bins = vec![0u32; 10];
    histogram(&x, &mut bins);
    assert_eq!(bins, [10; 10]);
    let mut out = vec![0.0; 5];
    prefix(&[1.0, 2.0, 3.0, 4.0, 5.0], &mut out);
    assert_eq!(out, [0.0, 2.0, 5.0, 9.0, 14.0]);
}

#[test]
fn rows_narrower_than_the_proof_needs_compute_what_the_loop_computes() {
    // `out[r * w + w - 3]` with rows of 1 or 2 pixels writes into earlier rows: the loop as
    // written runs, on one thread.
    for (w, first) in [(1, 2), (1, 5), (2, 1), (2, 3), (3, 0)] {
        let mut want: Vec<f32> = (0..24).map(|i| i as f32).collect();
        bump_third_last::scalar(&mut want, w, first);
        for threads in [1, 2, 3] {
            let mut got: Vec<f32> = (0..24).map(|i| i as f32).collect();
            with_threads(threads, || bump_third_last::parallel(&mut got, w, first));
            assert_eq!(bits(&want), bits(&got), "w = {w}, first = {first}, {threads} threads");
            let mut routed: Vec<f32> = (0..24).map(|i| i as f32).collect();
            bump_third_last(&mut routed, w, first);
            assert_eq!(bits(&want), bits(&routed));
        }
    }
}

#[test]
fn routed_calls_compute_what_scalar_computes() {
    let n = 4_096;
    let a: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
    for _ in 0..50 {
        let (mut y, mut want) = (b.clone(), b.clone());
        saxpy(2.0, &a, &mut y);
        saxpy::scalar(2.0, &a, &mut want);
        assert_eq!(y, want);
        let (mut o, mut w) = (vec![0.0; n], vec![0.0; n]);
        let (t, tw) = (square_add(&a, &b, &mut o), square_add::scalar(&a, &b, &mut w));
        assert_eq!(o, w);
        assert!((t - tw).abs() <= tw.abs() * 1e-4);
        blur_rows(&a, &mut o, 64);
        blur_rows::scalar(&a, &mut w, 64);
        assert_eq!(o, w);
        outer(&a[..64], &b[..64], &mut o, 64, 64);
        outer::scalar(&a[..64], &b[..64], &mut w, 64, 64);
        assert_eq!(o, w);
        scaled_by_rc(&a, &mut o);
        scaled_by_rc::scalar(&a, &mut w);
        assert_eq!(o, w);
        let (mut s, mut c, mut t) = (vec![0.0; 64], vec![0; 8], vec![0.0; 8]);
        per_label(&a[..512], &[3; 64], 8, &mut s, &mut c, &mut t);
        assert_eq!(c[3], 64);
        stencil(&a, &mut o, 64, 64);
        stencil::scalar(&a, &mut w, 64, 64);
        assert_eq!(o, w);
    }
    let (mut o, mut w) = (vec![0.0; n], vec![0.0; n]);
    standardise(&a, &mut o, 64);
    standardise::scalar(&a, &mut w, 64);
    for (p, q) in o.iter().zip(&w) {
        assert!((p - q).abs() <= 1e-4, "{p} vs {q}");
    }
    let (x, y, m) = (&a[..256], &b[..256], vec![1.0f32; 256]);
    let (mut ax, mut ay) = (vec![0.0; 256], vec![0.0; 256]);
    let e = forces(x, y, &m, &mut ax, &mut ay);
    assert!(e.is_finite());
}
