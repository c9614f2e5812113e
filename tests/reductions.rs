//! Float reductions the SIMD variant reassociates into lanes agree with the
//! Scalar variant (the body as written) within the bound
//! `adaptive_kernel::tolerance` states, for every rewritten idiom: index loops,
//! slice and `zip` loops, `.sum()`, `.product()`, `zip`–`map`–`sum`, `fold`
//! with `f32::max`/`f32::min` (as paths and as closures) and `+`, `max`/`min`
//! loops, in both widths, several accumulators, a matrix–vector product.
//!
//! Inputs cover empty and one-element slices, every remainder of the lane
//! width (32 for `f32`, 16 for `f64`), NaN, ±∞ and magnitudes from 1e-20 to
//! 1e20. Each kernel's `KERNEL.spec().loops` is checked to say "rewritten", so
//! the comparisons are between two different orders, not one body with itself;
//! `a_rewritten_sum_really_regroups` shows the SIMD result differing from the
//! Scalar one where rounding must differ.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use adaptive_kernel::{adaptive_kernel, tolerance, LoopRewrite};
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

/// Stores inside the loop: left as written.
#[adaptive_kernel(complexity = "Medium")]
fn exp_sum(x: &mut [f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..x.len() {
        x[i] = x[i].exp();
        s += x[i];
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
    rewritten(matvec::KERNEL.spec().loops, &["for range +="]);
}

#[test]
fn what_is_left_alone_says_why() {
    let exact = dot_exact::KERNEL.spec().loops;
    assert_eq!((exact.len(), exact[0].rewritten(), exact[0].reason), (1, false, "exact"));
    let stores = exp_sum::KERNEL.spec().loops;
    assert_eq!(
        (stores.len(), stores[0].idiom, stores[0].rewritten(), stores[0].reason),
        (1, "for range +=", false, "effect")
    );
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
    assert_eq!(exp_sum(&mut e), (0..10).fold(0.0, |s, _| s + 0.5f32.exp()));
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

/// Lengths around every multiple of the lane width, and random ones.
fn len() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 0usize..300,
        1 => Just(0usize),
        1 => Just(1usize),
        2 => (1usize..5, 0usize..3).prop_map(|(k, r)| 32 * k + r - 1),
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
