//! Float reductions the SIMD variant reassociates into lanes agree with the
//! Scalar variant (the body as written) within the bound
//! `adaptive_kernel::tolerance` states, for every rewritten idiom: index loops,
//! slice and `zip` loops, `.sum()`, `.product()`, `zip`–`map`–`sum`, `fold`
//! with `f32::max`/`f32::min` (as paths and as closures) and `+`, `max`/`min`
//! loops, in both widths, several accumulators, a matrix–vector product; and
//! the shapes of numerical code as usually written: temporaries from rows
//! taken as sub-slices (`&x[a..b]`, `split_at`, `chunks`), accumulators
//! declared in a tuple, float methods, `continue` guards, reductions nested in
//! loops that store (k-means distances, n-body forces).
//!
//! Inputs cover empty and one-element slices, every remainder of the wide lane
//! width (32 for `f32`, 16 for `f64`) and of the narrow one (8, 4), lengths
//! around where the wide level starts (4 wide chunks), NaN, ±∞ and magnitudes
//! from 1e-20 to 1e20. Each kernel's `KERNEL.spec().loops` is checked to say "rewritten", so
//! the comparisons are between two different orders, not one body with itself;
//! `a_rewritten_sum_really_regroups` shows the SIMD result differing from the
//! Scalar one where rounding must differ.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use adaptive_kernel::{adaptive_kernel, ops::par::with_threads, tolerance, Backend, LoopRewrite};
use proptest::prelude::*;

// ---- kernels: one per idiom ---------------------------------------------------------------------

const FIRST_LINE: u32 = line!();

#[adaptive_kernel(complexity = "Medium")]
fn dot_index(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

#[adaptive_kernel(complexity = "Medium")]
fn dot_zip_loop(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

#[adaptive_kernel(complexity = "Medium")]
fn sum_f64_loop(x: &[f64]) -> f64 {
    let mut s: f64 = 0.0;
    for v in x {
        s += v;
    }
    s
}

#[adaptive_kernel(complexity = "Medium")]
fn neg_sum_loop(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x.iter().copied() {
        s -= v;
    }
    s
}

#[adaptive_kernel(complexity = "Medium")]
fn sum_chain(x: &[f32]) -> f32 {
    x.iter().sum::<f32>()
}

#[adaptive_kernel(complexity = "Medium")]
fn sum_sq_chain(x: &[f32]) -> f32 {
    let s: f32 = x.iter().map(|v| v * v).sum();
    s
}

#[adaptive_kernel(complexity = "Medium")]
fn dot_chain(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[adaptive_kernel(complexity = "Medium")]
fn dot_range_chain(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    (0..n).map(|i| a[i] * b[i]).sum::<f32>()
}

#[adaptive_kernel(complexity = "Medium")]
fn product_chain(x: &[f32]) -> f32 {
    x.iter().product()
}

#[adaptive_kernel(complexity = "Medium")]
fn product_f64_loop(x: &[f64]) -> f64 {
    let mut p = 1.0f64;
    for i in 0..x.len() {
        p *= x[i];
    }
    p
}

#[adaptive_kernel(complexity = "Medium")]
fn max_fold(x: &[f32]) -> f32 {
    x.iter().copied().fold(f32::NEG_INFINITY, f32::max)
}

#[adaptive_kernel(complexity = "Medium")]
fn min_fold_closure(x: &[f32]) -> f32 {
    x.iter().fold(f32::INFINITY, |m, &v| m.min(v))
}

#[adaptive_kernel(complexity = "Medium")]
fn max_loop(x: &[f32]) -> f32 {
    let mut m = f32::NAN;
    for i in 0..x.len() {
        m = m.max(x[i]);
    }
    m
}

#[adaptive_kernel(complexity = "Medium")]
fn min_fold_path(x: &[f32]) -> f32 {
    x.iter().copied().fold(f32::INFINITY, f32::min)
}

#[adaptive_kernel(complexity = "Medium")]
fn min_loop_f64(x: &[f64]) -> f64 {
    let mut m = f64::INFINITY;
    for v in x.iter().copied() {
        m = f64::min(m, v);
    }
    m
}

#[adaptive_kernel(complexity = "Medium")]
fn sum_sq_fold(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |s, v| s + v * v)
}

#[adaptive_kernel(complexity = "Medium")]
fn sum_f64_chain(x: &[f64]) -> f64 {
    x.iter().sum()
}

/// Positive part sum, sum of squares and the largest magnitude in one pass.
#[adaptive_kernel(complexity = "Medium")]
fn stats(x: &[f32]) -> (f32, f32, f32) {
    let mut pos = 0.0f32;
    let mut sq = 0.0f32;
    let mut big = 0.0f32;
    for &v in x.iter() {
        let a = v.abs();
        if v > 0.0 {
            pos += v;
        }
        sq += v * v;
        big = big.max(a);
    }
    (pos, sq, big)
}

/// y = W·x for a row-major `rows × x.len()` matrix: the inner loop reads row `i` at base `i * n`.
#[adaptive_kernel(complexity = "High", size = w.len())]
fn matvec(w: &[f32], x: &[f32], rows: usize) -> Vec<f32> {
    let n = x.len();
    let mut y = vec![0.0; rows];
    for i in 0..rows {
        let mut acc = 0.0f32;
        for j in 0..n {
            acc += w[i * n + j] * x[j];
        }
        y[i] = acc;
    }
    y
}

/// `dot_index` opted out: its SIMD variant adds in source order.
#[adaptive_kernel(complexity = "Medium", exact)]
fn dot_exact(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

/// Stores into its own elements, and `exp` of them: in lanes, with the runtime's `exp`.
#[adaptive_kernel(complexity = "Medium")]
fn exp_sum(x: &mut [f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..x.len() {
        x[i] = x[i].exp();
        s += x[i];
    }
    s
}

/// Stores into another element than its own: left as written.
#[adaptive_kernel(complexity = "Medium")]
fn running_exp_sum(x: &mut [f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 1..x.len() {
        x[i] = x[i - 1].exp();
        s += x[i];
    }
    s
}

/// Squared distance of `p` to each row of `rows`: k-means' inner loop over a row taken as a sub-slice.
#[adaptive_kernel(complexity = "Medium")]
fn row_distances(p: &[f32], rows: &[f32], out: &mut [f32]) {
    let d = p.len();
    for c in 0..out.len() {
        let q = &rows[c * d..(c + 1) * d];
        let mut dist = 0.0;
        for j in 0..d {
            let t = p[j] - q[j];
            dist += t * t;
        }
        out[c] = dist;
    }
}

/// Two-dimensional pairwise forces: tuple lets, float methods, a self-skip guard.
#[adaptive_kernel(complexity = "High", size = x.len() * x.len())]
fn forces(x: &[f32], y: &[f32], m: &[f32], fx_out: &mut [f32], fy_out: &mut [f32], eps: f32) {
    let n = x.len();
    for i in 0..n {
        let (xi, yi) = (x[i], y[i]);
        let (mut fx, mut fy) = (0.0f32, 0.0f32);
        for j in 0..n {
            if i == j {
                continue;
            }
            let dx = x[j] - xi;
            let dy = y[j] - yi;
            let r2 = dx * dx + dy * dy + eps;
            let inv = 1.0 / (r2 * r2.sqrt());
            fx += dx * inv * m[j];
            fy += dy * inv * m[j];
        }
        fx_out[i] = fx;
        fy_out[i] = fy;
    }
}

/// Three sums declared in one tuple, two of them typed by what they accumulate.
#[adaptive_kernel(complexity = "Medium")]
fn three_sums(a: &[f32], b: &[f32]) -> (f32, f32, f32) {
    let (mut ab, mut aa, mut bb) = (0.0f32, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    (ab, aa, bb)
}

/// The halves of `x` from `split_at`, multiplied element by element and summed.
#[adaptive_kernel(complexity = "Medium")]
fn halves_dot(x: &[f64]) -> f64 {
    let (lo, hi) = x.split_at(x.len() / 2);
    let mut s = 0.0;
    for i in 0..lo.len() {
        s += lo[i] * hi[i];
    }
    s
}

/// The sum of each row of `d` (the last one shorter), rows from `chunks`.
#[adaptive_kernel(complexity = "Medium")]
fn row_sums(x: &[f32], d: usize) -> Vec<f32> {
    let mut out = Vec::new();
    for row in x.chunks(d) {
        let mut s = 0.0;
        for v in row {
            s += v;
        }
        out.push(s);
    }
    out
}

/// A softmax's maximum and denominator, in `f64`: a temporary from `exp`.
#[adaptive_kernel(complexity = "Medium")]
fn max_and_denominator(x: &[f64]) -> (f64, f64) {
    let mut m = f64::NEG_INFINITY;
    for &v in x {
        m = m.max(v);
    }
    let mut z = 0.0;
    for &v in x {
        let e = (v - m).exp();
        z += e;
    }
    (m, z)
}

/// The sum of squares from `from` on: an iterator chain over a sub-slice.
#[adaptive_kernel(complexity = "Medium")]
fn tail_sum_sq(x: &[f32], from: usize) -> f32 {
    let tail = &x[from..];
    tail.iter().map(|v| v * v).sum::<f32>()
}

/// A guard after a temporary: doubled values beyond `limit` are skipped.
#[adaptive_kernel(complexity = "Medium")]
fn clipped_sum_sq(x: &[f32], limit: f32) -> f32 {
    let mut s = 0.0f32;
    for i in 0..x.len() {
        let v = x[i] * 2.0;
        if v.abs() > limit {
            continue;
        }
        s += v * v;
    }
    s
}

/// The potential at each body from all others, over `enumerate` with reads of `m` at the index.
#[adaptive_kernel(complexity = "High", size = x.len() * x.len())]
fn potentials(x: &[f32], m: &[f32], out: &mut [f32]) {
    for i in 0..out.len() {
        let xi = x[i];
        let mut phi = 0.0;
        for (j, &xj) in x.iter().enumerate() {
            if j == i {
                continue;
            }
            phi -= m[j] / ((xj - xi).abs() + 0.5);
        }
        out[i] = phi;
    }
}

/// Finite pairs only, accumulated in `f64`: predicates in the condition, `f64::from` in the term.
#[adaptive_kernel(complexity = "Medium")]
fn finite_dot_f64(a: &[f32], b: &[f32]) -> f64 {
    let mut s = 0.0_f64;
    for (x, y) in a.iter().zip(b) {
        if x.is_finite() && y.is_finite() {
            s += f64::from(*x) * f64::from(*y);
        }
    }
    s
}

/// A squared distance whose `map` closure is a block with a `let`.
#[adaptive_kernel(complexity = "Medium")]
fn sq_dist_chain(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let d = x - y;
            d * d
        })
        .sum()
}

/// The index rebound in the body: `x[i]` is read at the mirrored position, not the loop's.
#[adaptive_kernel(complexity = "Medium")]
fn mirrored_dot(x: &[f32], y: &[f32]) -> f32 {
    let n = x.len().min(y.len());
    let mut s = 0.0f32;
    for i in 0..n {
        let a = y[i];
        let i = n - 1 - i;
        s += a * x[i];
    }
    s
}

const LAST_LINE: u32 = line!();

// ---- the reports --------------------------------------------------------------------------------

fn rewritten(loops: &[LoopRewrite], idioms: &[&str]) {
    let got: Vec<(&str, bool, &str)> = loops.iter().map(|l| (l.idiom, l.rewritten(), l.reason)).collect();
    let want: Vec<(&str, bool, &str)> = idioms.iter().map(|i| (*i, true, "")).collect();
    assert_eq!(got, want);
    assert!(loops.iter().all(|l| (FIRST_LINE..LAST_LINE).contains(&l.line)), "{loops:?}");
}

#[test]
fn every_idiom_is_reported_rewritten() {
    rewritten(dot_index::KERNEL.spec().loops, &["for range +="]);
    rewritten(dot_zip_loop::KERNEL.spec().loops, &["for zip +="]);
    rewritten(sum_f64_loop::KERNEL.spec().loops, &["for iter +="]);
    rewritten(neg_sum_loop::KERNEL.spec().loops, &["for iter +="]);
    rewritten(sum_chain::KERNEL.spec().loops, &["iter.sum()"]);
    rewritten(sum_sq_chain::KERNEL.spec().loops, &["iter.sum()"]);
    rewritten(dot_chain::KERNEL.spec().loops, &["zip.sum()"]);
    rewritten(dot_range_chain::KERNEL.spec().loops, &["range.sum()"]);
    rewritten(product_chain::KERNEL.spec().loops, &["iter.product()"]);
    rewritten(product_f64_loop::KERNEL.spec().loops, &["for range *="]);
    rewritten(max_fold::KERNEL.spec().loops, &["iter.fold(max)"]);
    rewritten(min_fold_closure::KERNEL.spec().loops, &["iter.fold(min)"]);
    rewritten(max_loop::KERNEL.spec().loops, &["for range max"]);
    rewritten(min_fold_path::KERNEL.spec().loops, &["iter.fold(min)"]);
    rewritten(min_loop_f64::KERNEL.spec().loops, &["for iter min"]);
    rewritten(sum_sq_fold::KERNEL.spec().loops, &["iter.fold(+=)"]);
    rewritten(sum_f64_chain::KERNEL.spec().loops, &["iter.sum()"]);
    rewritten(stats::KERNEL.spec().loops, &["for iter +="]);
    rewritten(matvec::KERNEL.spec().loops, &["for range jam", "for range +="]);
    rewritten(row_distances::KERNEL.spec().loops, &["for range jam", "for range +="]);
    rewritten(forces::KERNEL.spec().loops, &["for range +="]);
    rewritten(exp_sum::KERNEL.spec().loops, &["for range +="]);
    rewritten(three_sums::KERNEL.spec().loops, &["for zip +="]);
    rewritten(halves_dot::KERNEL.spec().loops, &["for range +="]);
    rewritten(row_sums::KERNEL.spec().loops, &["for iter +="]);
    rewritten(max_and_denominator::KERNEL.spec().loops, &["for iter max", "for iter +="]);
    rewritten(tail_sum_sq::KERNEL.spec().loops, &["iter.sum()"]);
    rewritten(clipped_sum_sq::KERNEL.spec().loops, &["for range +="]);
    rewritten(potentials::KERNEL.spec().loops, &["for enumerate +="]);
    rewritten(finite_dot_f64::KERNEL.spec().loops, &["for zip +="]);
    rewritten(sq_dist_chain::KERNEL.spec().loops, &["zip.sum()"]);
    rewritten(mirrored_dot::KERNEL.spec().loops, &["for range +="]);
    // A zip loop is in lanes in the Parallel variant's chunks too (issue 41: its chunks spell the
    // zip `Iterator::zip(a, b)`, which the SIMD rewrite's own grammar did not read as one).
    for k in [&dot_zip_loop::KERNEL, &three_sums::KERNEL, &finite_dot_f64::KERNEL] {
        assert_eq!(k.spec().loops[0].variants, [Backend::Simd, Backend::Parallel], "{}", k.name());
    }
    // The halves of `split_at` of an `f64` slice are `f64` slices to the GPU variant (it had no
    // reading of them, and said `call`).
    assert_eq!(halves_dot::KERNEL.spec().gpu_loops[0].reason, "f64");
}

#[test]
fn what_is_left_alone_says_why() {
    let exact = dot_exact::KERNEL.spec().loops;
    assert_eq!((exact.len(), exact[0].rewritten(), exact[0].reason), (1, false, "exact"));
    let stores = running_exp_sum::KERNEL.spec().loops;
    assert_eq!(
        (stores.len(), stores[0].idiom, stores[0].rewritten(), stores[0].reason),
        (1, "for range +=", false, "overlap")
    );
    assert_eq!(exp_sum::KERNEL.spec().loops[0].vector_math, ["exp"]);
}

#[test]
fn a_rewritten_sum_really_regroups() {
    // 1e8 then 1023 ones: in order every 1 is lost (f32 spacing at 1e8 is 8). In 32 lanes, lane 0
    // holds 1e8 and loses its 31 ones, lanes 1 to 31 sum 32 ones each and keep them: 1e8 + 992.
    // The exact variant keeps the order.
    let mut x = vec![1.0f32; 1024];
    x[0] = 1e8;
    let ones = vec![1.0f32; 1024];
    assert_eq!(dot_index::scalar(&x, &ones), 1e8);
    assert_eq!(dot_index::simd(&x, &ones), 1e8 + 992.0);
    assert_eq!(dot_exact::simd(&x, &ones), 1e8);
    assert_eq!(sum_chain::simd(&x), 1e8 + 992.0);
    // Below 4 wide chunks the narrow level takes them: 1e8 then 63 ones in 8 lanes keep 7 × 8.
    assert_eq!(dot_index::scalar(&x[..64], &ones[..64]), 1e8);
    assert_eq!(dot_index::simd(&x[..64], &ones[..64]), 1e8 + 56.0);
    // 127 elements: 15 narrow chunks, then 7 in order (all lost beside 1e8).
    assert_eq!(dot_index::simd(&x[..127], &ones[..127]), 1e8 + 14.0 * 8.0);
    // In f64 (spacing 2 at 1e16) with 4-lane narrow chunks: 40 elements, 10 per lane, lanes 1 to 3 keep theirs.
    let mut w = vec![1.0f64; 40];
    w[0] = 1e16;
    assert_eq!(sum_f64_loop::scalar(&w), 1e16);
    assert_eq!(sum_f64_loop::simd(&w), 1e16 + 30.0);
}

#[test]
fn empty_and_single_inputs_match_std() {
    // `Sum` starts from -0.0 and `Product` from 1.0; the rewrites start where std does.
    assert_eq!(sum_chain::simd(&[]).to_bits(), sum_chain::scalar(&[]).to_bits());
    assert_eq!(dot_chain::simd(&[], &[]).to_bits(), dot_chain::scalar(&[], &[]).to_bits());
    assert_eq!(product_chain::simd(&[]), 1.0);
    assert_eq!(max_fold::simd(&[]), f32::NEG_INFINITY);
    assert!(max_loop::simd(&[]).is_nan());
    assert_eq!(sum_chain::simd(&[-0.0]).to_bits(), (-0.0f32).to_bits());
    assert_eq!(dot_index::simd(&[3.0], &[2.0]), 6.0);
}

#[test]
fn out_of_bounds_reads_panic_as_written() {
    // The chunked read of `b` fails, so the tail runs the body as written and panics at b[40].
    let a = vec![1.0f32; 64];
    let b = vec![1.0f32; 40];
    let scalar = std::panic::catch_unwind(|| dot_index::scalar(&a, &b)).unwrap_err();
    let simd = std::panic::catch_unwind(|| dot_index::simd(&a, &b)).unwrap_err();
    let message = |e: Box<dyn std::any::Any + Send>| e.downcast::<String>().map(|s| *s).unwrap_or_default();
    let (scalar, simd) = (message(scalar), message(simd));
    assert!(scalar.contains("index out of bounds"), "{scalar}");
    assert_eq!(simd, scalar);
    // Past both levels: the wide reads fail at 128, the narrow ones at 136, the tail panics at b[140].
    let (a, b) = (vec![1.0f32; 300], vec![1.0f32; 140]);
    let scalar = message(std::panic::catch_unwind(|| dot_index::scalar(&a, &b)).unwrap_err());
    let simd = message(std::panic::catch_unwind(|| dot_index::simd(&a, &b)).unwrap_err());
    assert!(scalar.contains("the len is 140 but the index is 140"), "{scalar}");
    assert_eq!(simd, scalar);
}

#[test]
fn routed_calls_agree_with_the_scalar_variant() {
    // The router may run either variant; both agree with Scalar within the contract.
    let x: Vec<f32> = (0..3000).map(|i| ((i * 37) % 101) as f32 * 0.01 - 0.5).collect();
    let y: Vec<f32> = (0..3000).map(|i| ((i * 53) % 97) as f32 * 0.02 - 1.0).collect();
    let wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let dots = || x.iter().zip(&y).map(|(a, b)| a * b);
    for got in [dot_index(&x, &y), dot_zip_loop(&x, &y), dot_chain(&x, &y), dot_range_chain(&x, &y), dot_exact(&x, &y)]
    {
        assert!(sums32(got, dot_index::scalar(&x, &y), dots()), "{got}");
    }
    assert!(sums_agree(sum_f64_loop(&wide), sum_f64_loop::scalar(&wide), wide.iter().copied(), E64, f64::MAX));
    assert!(sums32(neg_sum_loop(&x), neg_sum_loop::scalar(&x), x.iter().map(|v| -v)));
    assert!(sums32(sum_chain(&x), sum_chain::scalar(&x), x.iter().copied()));
    assert!(sums32(sum_sq_chain(&x), sum_sq_chain::scalar(&x), x.iter().map(|v| v * v)));
    let near_one: Vec<f32> = x.iter().take(100).map(|v| 1.0 + v * 0.1).collect();
    let p = f64::from(product_chain(&near_one));
    assert!(tolerance::products_agree(p, f64::from(product_chain::scalar(&near_one)), 101, E32));
    let p = product_f64_loop(&wide[..100]);
    assert!(tolerance::products_agree(p, product_f64_loop::scalar(&wide[..100]), 101, E64));
    assert_eq!(max_fold(&x), 0.5);
    assert_eq!(min_fold_closure(&x), -0.5);
    assert_eq!(min_fold_path(&x), -0.5);
    assert_eq!(min_loop_f64(&wide), -0.5);
    assert!(sums_agree(sum_f64_chain(&wide), sum_f64_chain::scalar(&wide), wide.iter().copied(), E64, f64::MAX));
    let squares = wide.iter().map(|v| v * v);
    assert!(sums_agree(sum_sq_fold(&wide), sum_sq_fold::scalar(&wide), squares, E64, f64::MAX));
    assert_eq!(max_loop(&x), 0.5);
    assert_eq!(stats(&x).2, 0.5);
    let w: Vec<f32> = y.iter().take(3 * 1000).copied().collect();
    let routed = matvec(&w, &x[..1000], 3);
    let scalar = matvec::scalar(&w, &x[..1000], 3);
    for i in 0..3 {
        let terms = w[i * 1000..(i + 1) * 1000].iter().zip(&x[..1000]).map(|(a, b)| a * b);
        assert!(sums32(routed[i], scalar[i], terms));
    }
    let mut e = vec![0.5f32; 10];
    let s = exp_sum(&mut e);
    assert!((s - 10.0 * 0.5f32.exp()).abs() <= 1e-5 && e.iter().all(|v| (v - 0.5f32.exp()).abs() <= 1e-6));
    let mut e = vec![0.5f32; 10];
    assert_eq!(running_exp_sum(&mut e), running_exp_sum::scalar(&mut [0.5f32; 10]));
    let mut out = vec![0.0; 3];
    row_distances(&x[..10], &y[..30], &mut out);
    let (mut fx, mut fy) = (vec![0.0; 50], vec![0.0; 50]);
    forces(&x[..50], &y[..50], &x[50..100], &mut fx, &mut fy, 0.01);
    let _ = (three_sums(&x, &y), halves_dot(&wide), row_sums(&x, 7), max_and_denominator(&wide));
    let _ = (tail_sum_sq(&x, 3), clipped_sum_sq(&x, 1.0));
    potentials(&x[..100], &y[..100], &mut out);
    let _ = (finite_dot_f64(&x, &y), sq_dist_chain(&x, &y), mirrored_dot(&x, &y));
}

// ---- agreement ----------------------------------------------------------------------------------

const E32: f64 = f32::EPSILON as f64;
const E64: f64 = f64::EPSILON;

/// Two sums of the same summands (`terms` plus the initial value) agree per the contract.
fn sums_agree(simd: f64, scalar: f64, terms: impl Iterator<Item = f64>, epsilon: f64, max: f64) -> bool {
    let (mut n, mut abs) = (1, 0.0);
    for t in terms {
        n += 1;
        if t.is_finite() {
            abs += t.abs();
        }
    }
    tolerance::sums_agree(simd, scalar, n, abs, epsilon, max)
}

fn sums32(simd: f32, scalar: f32, terms: impl Iterator<Item = f32>) -> bool {
    sums_agree(f64::from(simd), f64::from(scalar), terms.map(f64::from), E32, f64::from(f32::MAX))
}

/// Lengths around every multiple of the lane widths (wide and narrow) and where the wide level
/// starts, and random ones.
fn len() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 0usize..300,
        1 => Just(0usize),
        1 => Just(1usize),
        2 => (1usize..9, 0usize..3).prop_map(|(k, r)| 32 * k + r - 1),
        2 => (1usize..16, 0usize..3).prop_map(|(k, r)| 8 * k + r - 1),
        1 => (0usize..3).prop_map(|r| 127 + r),
        1 => 1000usize..1100,
    ]
}

/// Magnitudes from 1e-20 to 1e20, both signs, and zeros of both signs.
fn finite() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![
        40 => (-1.0f32..1.0, -20i32..20).prop_map(|(m, e)| m * 10f32.powi(e)),
        4 => -100.0f32..100.0,
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
    ]
}

fn special() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY)]
}

/// `len` values of `elem`; in a quarter of the cases one to three of them replaced by NaN or an
/// infinity (more would make nearly every long sum NaN, and the rounding untested).
fn with_specials(len: usize, elem: impl Strategy<Value = f32> + Clone) -> impl Strategy<Value = Vec<f32>> {
    let specials = prop_oneof![3 => Just(Vec::new()), 1 => prop::collection::vec((any::<usize>(), special()), 1..4)];
    (prop::collection::vec(elem, len), specials).prop_map(|(mut v, specials)| {
        let n = v.len();
        for (at, value) in specials {
            if n > 0 {
                v[at % n] = value;
            }
        }
        v
    })
}

fn vec_of(len: usize) -> impl Strategy<Value = Vec<f32>> {
    with_specials(len, finite())
}

fn pair() -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    len().prop_flat_map(|n| (vec_of(n), vec_of(n)))
}

fn same_extremum(a: f32, b: f32) -> bool {
    tolerance::extrema_agree(f64::from(a), f64::from(b))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn dot_products_agree((a, b) in pair()) {
        let terms = || a.iter().zip(&b).map(|(x, y)| x * y);
        for (simd, scalar) in [
            (dot_index::simd(&a, &b), dot_index::scalar(&a, &b)),
            (dot_zip_loop::simd(&a, &b), dot_zip_loop::scalar(&a, &b)),
            (dot_chain::simd(&a, &b), dot_chain::scalar(&a, &b)),
            (dot_range_chain::simd(&a, &b), dot_range_chain::scalar(&a, &b)),
        ] {
            prop_assert!(sums32(simd, scalar, terms()), "simd {simd} scalar {scalar} n {}", a.len());
        }
        prop_assert_eq!(dot_exact::simd(&a, &b).to_bits(), dot_exact::scalar(&a, &b).to_bits());
        // The Parallel variant's chunks of a zip loop are in lanes too (their `Iterator::zip` is a
        // zip to the one grammar of walks), on any number of threads.
        let scalar = dot_zip_loop::scalar(&a, &b);
        for t in [1, 2, 3] {
            let parallel = with_threads(t, || dot_zip_loop::parallel(&a, &b));
            prop_assert!(sums32(parallel, scalar, terms()), "parallel {parallel} scalar {scalar} threads {t}");
        }
    }

    #[test]
    fn sums_agree_in_both_widths(x in len().prop_flat_map(vec_of)) {
        prop_assert!(sums32(sum_chain::simd(&x), sum_chain::scalar(&x), x.iter().copied()));
        prop_assert!(sums32(neg_sum_loop::simd(&x), neg_sum_loop::scalar(&x), x.iter().map(|v| -v)));
        prop_assert!(sums32(sum_sq_chain::simd(&x), sum_sq_chain::scalar(&x), x.iter().map(|v| v * v)));
        let wide: Vec<f64> = x.iter().map(|&v| f64::from(v) * 1e280).collect();
        let (simd, scalar) = (sum_f64_loop::simd(&wide), sum_f64_loop::scalar(&wide));
        prop_assert!(sums_agree(simd, scalar, wide.iter().copied(), E64, f64::MAX), "{simd} {scalar}");
        let (simd, scalar) = (sum_f64_chain::simd(&wide), sum_f64_chain::scalar(&wide));
        prop_assert!(sums_agree(simd, scalar, wide.iter().copied(), E64, f64::MAX), "{simd} {scalar}");
        let narrow: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let (simd, scalar) = (sum_sq_fold::simd(&narrow), sum_sq_fold::scalar(&narrow));
        prop_assert!(sums_agree(simd, scalar, narrow.iter().map(|v| v * v), E64, f64::MAX), "{simd} {scalar}");
    }

    #[test]
    fn products_agree(
        x in (0usize..120).prop_flat_map(|n| with_specials(n, prop_oneof![
            30 => 0.7f32..1.4,
            1 => Just(-1.0f32),
            1 => Just(0.0f32),
        ]))
    ) {
        // Factors near 1: no partial product leaves the normal range in any grouping.
        let (simd, scalar) = (product_chain::simd(&x), product_chain::scalar(&x));
        prop_assert!(tolerance::products_agree(f64::from(simd), f64::from(scalar), x.len() + 1, E32), "{simd} {scalar}");
        let wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let (simd, scalar) = (product_f64_loop::simd(&wide), product_f64_loop::scalar(&wide));
        prop_assert!(tolerance::products_agree(simd, scalar, wide.len() + 1, E64), "{simd} {scalar}");
    }

    #[test]
    fn max_and_min_are_the_same_value(
        x in len().prop_flat_map(|n| prop::collection::vec(prop_oneof![
            8 => finite(),
            2 => Just(f32::NAN),
            1 => special(),
        ], n))
    ) {
        prop_assert!(same_extremum(max_fold::simd(&x), max_fold::scalar(&x)));
        prop_assert!(same_extremum(min_fold_closure::simd(&x), min_fold_closure::scalar(&x)));
        prop_assert!(same_extremum(max_loop::simd(&x), max_loop::scalar(&x)));
        prop_assert!(same_extremum(min_fold_path::simd(&x), min_fold_path::scalar(&x)));
        let wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        prop_assert!(tolerance::extrema_agree(min_loop_f64::simd(&wide), min_loop_f64::scalar(&wide)));
    }

    #[test]
    fn all_nan_extrema_stay_nan(n in 0usize..100) {
        let x = vec![f32::NAN; n];
        prop_assert!(max_loop::simd(&x).is_nan());
        prop_assert_eq!(max_fold::simd(&x), f32::NEG_INFINITY);
    }

    #[test]
    fn several_accumulators_agree(x in len().prop_flat_map(vec_of)) {
        let (simd, scalar) = (stats::simd(&x), stats::scalar(&x));
        prop_assert!(sums32(simd.0, scalar.0, x.iter().copied().filter(|v| *v > 0.0)));
        prop_assert!(sums32(simd.1, scalar.1, x.iter().map(|v| v * v)));
        prop_assert!(same_extremum(simd.2, scalar.2));
    }

    #[test]
    fn sub_slice_rows_agree(
        (p, rows, k) in (0usize..5, 0usize..70).prop_flat_map(|(k, d)| (vec_of(d), vec_of(k * d), Just(k)))
    ) {
        let (mut simd, mut scalar) = (vec![0.0; k], vec![0.0; k]);
        row_distances::simd(&p, &rows, &mut simd);
        row_distances::scalar(&p, &rows, &mut scalar);
        let d = p.len();
        for c in 0..k {
            let terms = (0..d).map(|j| (p[j] - rows[c * d + j]) * (p[j] - rows[c * d + j]));
            prop_assert!(sums32(simd[c], scalar[c], terms), "row {c}: {} vs {}", simd[c], scalar[c]);
        }
        if d > 0 {
            let (simd, scalar) = (row_sums::simd(&rows, d), row_sums::scalar(&rows, d));
            prop_assert_eq!(simd.len(), scalar.len());
            for (c, row) in rows.chunks(d).enumerate() {
                prop_assert!(sums32(simd[c], scalar[c], row.iter().copied()));
            }
        }
    }

    #[test]
    fn forces_agree(
        (x, y, m) in (0usize..150).prop_flat_map(|n| (vec_of(n), vec_of(n), vec_of(n))),
        eps in prop_oneof![Just(0.0f32), 1e-6f32..1.0],
    ) {
        let n = x.len();
        let (mut sx, mut sy, mut rx, mut ry) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        forces::simd(&x, &y, &m, &mut sx, &mut sy, eps);
        forces::scalar(&x, &y, &m, &mut rx, &mut ry, eps);
        for i in 0..n {
            // The terms as the kernel computes them, skipping `j == i`.
            let term = |j: usize| {
                let (dx, dy) = (x[j] - x[i], y[j] - y[i]);
                let r2 = dx * dx + dy * dy + eps;
                let inv = 1.0 / (r2 * r2.sqrt());
                (dx * inv * m[j], dy * inv * m[j])
            };
            let others = || (0..n).filter(move |&j| j != i);
            prop_assert!(sums32(sx[i], rx[i], others().map(|j| term(j).0)), "x {i}: {} vs {}", sx[i], rx[i]);
            prop_assert!(sums32(sy[i], ry[i], others().map(|j| term(j).1)), "y {i}: {} vs {}", sy[i], ry[i]);
        }
    }

    #[test]
    fn enumerated_potentials_agree((x, m) in pair(), bodies in 0usize..6) {
        let n = bodies.min(x.len());
        let (mut simd, mut scalar) = (vec![0.0; n], vec![0.0; n]);
        potentials::simd(&x, &m, &mut simd);
        potentials::scalar(&x, &m, &mut scalar);
        for i in 0..n {
            let terms = (0..x.len()).filter(|&j| j != i).map(|j| -(m[j] / ((x[j] - x[i]).abs() + 0.5)));
            prop_assert!(sums32(simd[i], scalar[i], terms), "{i}: {} vs {}", simd[i], scalar[i]);
        }
    }

    #[test]
    fn widened_and_block_terms_agree((a, b) in pair()) {
        let finite = a.iter().zip(&b).filter(|(x, y)| x.is_finite() && y.is_finite());
        let terms = finite.map(|(x, y)| f64::from(*x) * f64::from(*y));
        let (simd, scalar) = (finite_dot_f64::simd(&a, &b), finite_dot_f64::scalar(&a, &b));
        prop_assert!(sums_agree(simd, scalar, terms.clone(), E64, f64::MAX), "{simd} {scalar}");
        for t in [1, 3] {
            let parallel = with_threads(t, || finite_dot_f64::parallel(&a, &b));
            prop_assert!(sums_agree(parallel, scalar, terms.clone(), E64, f64::MAX), "{parallel} {scalar} threads {t}");
        }
        let terms = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y));
        prop_assert!(sums32(sq_dist_chain::simd(&a, &b), sq_dist_chain::scalar(&a, &b), terms));
    }

    #[test]
    fn a_rebound_index_is_read_where_the_body_says((a, b) in pair()) {
        let n = a.len();
        let terms = (0..n).map(|i| b[i] * a[n - 1 - i]);
        prop_assert!(sums32(mirrored_dot::simd(&a, &b), mirrored_dot::scalar(&a, &b), terms));
    }

    #[test]
    fn tuple_accumulators_and_halves_agree((a, b) in pair()) {
        let scalar = three_sums::scalar(&a, &b);
        let parallel = [1, 3].map(|t| with_threads(t, || three_sums::parallel(&a, &b)));
        for got in [three_sums::simd(&a, &b), parallel[0], parallel[1]] {
            prop_assert!(sums32(got.0, scalar.0, a.iter().zip(&b).map(|(x, y)| x * y)));
            prop_assert!(sums32(got.1, scalar.1, a.iter().map(|x| x * x)));
            prop_assert!(sums32(got.2, scalar.2, b.iter().map(|y| y * y)));
        }
        let wide: Vec<f64> = a.iter().map(|&v| f64::from(v)).collect();
        let half = wide.len() / 2;
        let terms = (0..half).map(|i| wide[i] * wide[half + i]);
        let (simd, scalar) = (halves_dot::simd(&wide), halves_dot::scalar(&wide));
        prop_assert!(sums_agree(simd, scalar, terms, E64, f64::MAX), "{simd} {scalar}");
    }

    #[test]
    fn guarded_and_method_temporaries_agree(x in len().prop_flat_map(vec_of), from in 0usize..40, limit in 0.0f32..4.0) {
        let terms = x.iter().map(|v| v * 2.0).filter(|v| v.abs() <= limit || v.is_nan()).map(|v| v * v);
        prop_assert!(sums32(clipped_sum_sq::simd(&x, limit), clipped_sum_sq::scalar(&x, limit), terms));
        let from = from.min(x.len());
        let terms = x[from..].iter().map(|v| v * v);
        prop_assert!(sums32(tail_sum_sq::simd(&x, from), tail_sum_sq::scalar(&x, from), terms));
        let wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let ((sm, sz), (rm, rz)) = (max_and_denominator::simd(&wide), max_and_denominator::scalar(&wide));
        prop_assert!(tolerance::extrema_agree(sm, rm));
        let terms = wide.iter().map(|v| (v - rm).exp());
        prop_assert!(sums_agree(sz, rz, terms, E64, f64::MAX), "{sz} {rz}");
    }

    #[test]
    fn matvec_rows_agree(
        (w, x, rows) in (0usize..6, 0usize..80).prop_flat_map(|(rows, n)| (vec_of(rows * n), vec_of(n), Just(rows)))
    ) {
        let (simd, scalar) = (matvec::simd(&w, &x, rows), matvec::scalar(&w, &x, rows));
        prop_assert_eq!(simd.len(), rows);
        let n = x.len();
        for i in 0..rows {
            let terms = w[i * n..(i + 1) * n].iter().zip(&x).map(|(a, b)| a * b);
            prop_assert!(sums32(simd[i], scalar[i], terms), "row {i}: {} vs {}", simd[i], scalar[i]);
        }
    }
}
