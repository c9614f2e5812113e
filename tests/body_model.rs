//! One model of the function body (issue 41): the SIMD, Parallel and GPU rewrites read one
//! answer to "what type is this name", "what does this `for` walk", "is this a write", "is this
//! index in the loop's own row". Each kernel here is a case where their old answers disagreed;
//! each test checks the one answer the kernel's report now gives for every variant, and that
//! every variant, called directly, gives the Scalar variant's results under the documented
//! contract (bit for bit where nothing is regrouped, within `tolerance` where a reduction is),
//! at sizes around the lane widths and the chunks of 1, 2 and 3 threads.

// The kernels are written as index loops on purpose: that is the code under test.
#![allow(clippy::needless_range_loop)]

mod common;

use adaptive_kernel::ops::par::with_threads;
use adaptive_kernel::{adaptive_kernel, tolerance, Backend, Kernel};

/// A user's own type named `Vec`: its indexing wraps around and it has no `len()`.
mod own {
    /// Weights that repeat: `w[i]` is `w.0[i % w.0.len()]`.
    pub(crate) struct Vec<T>(pub(crate) std::vec::Vec<T>);

    impl<T> std::ops::Index<usize> for Vec<T> {
        type Output = T;
        fn index(&self, i: usize) -> &T {
            &self.0[i % self.0.len()]
        }
    }
}

/// A user's `Vec` beside a slice. It was a float slice to the SIMD and GPU rewrites (which
/// would cut it like one) and to the default size (which called its missing `len()`), and a
/// type of its own to the split. One reading now: a type of its own.
#[adaptive_kernel(complexity = "Low")]
fn weighted(x: &[f32], w: &own::Vec<f32>, out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = x[i] * w[i];
    }
}

/// A buffer of `vec![0.0; n]` whose width the body decides (`f64` here). The SIMD rewrite read
/// it as a float of either width, the GPU's as `f32`: the model says "a float, width not
/// known", and only the GPU adds its guess, checked at run time.
#[adaptive_kernel(complexity = "Medium")]
fn centred_energy(x: &[f64], dev: &mut [f64]) -> f64 {
    let mut mean = 0.0f64;
    for v in x {
        mean += v;
    }
    mean /= x.len().max(1) as f64;
    let mut tmp = vec![0.0; x.len()];
    for i in 0..x.len() {
        tmp[i] = x[i] - mean;
    }
    let mut energy = 0.0f64;
    for i in 0..tmp.len().min(dev.len()) {
        dev[i] = tmp[i];
        energy += tmp[i] * tmp[i];
    }
    energy
}

/// Integer types of every width, `isize` and `i128` among them: one list of twelve names (it
/// was eleven in one rewrite and twelve in another).
#[adaptive_kernel(complexity = "Low")]
fn wide_integers(a: &[i128], b: &[isize], out: &mut [u128]) -> (i128, isize) {
    let mut sa = 0i128;
    let mut sb = 0isize;
    for i in 0..out.len() {
        out[i] = (a[i].unsigned_abs() + b[i].unsigned_abs() as u128) * 3;
        sa += a[i];
        sb += b[i];
    }
    (sa, sb)
}

/// The ten compound assignments, in an element-wise loop, and a state carried through two of
/// them (`<<=`, `^=`) that no variant may split or regroup. The rewrites knew four, five or
/// ten of them: one that missed `h <<= 1` as a write would take `h` for loop-invariant.
#[adaptive_kernel(complexity = "Low")]
fn compound(x: &[u32], out: &mut [u32]) -> u32 {
    for i in 0..out.len() {
        out[i] |= 1;
        out[i] += x[i];
        out[i] -= 1;
        out[i] *= 3;
        out[i] /= 2;
        out[i] %= 100_003;
        out[i] ^= x[i];
        out[i] &= 0xffff;
        out[i] <<= 2;
        out[i] >>= 1;
    }
    let mut h = 0u32;
    for i in 0..x.len() {
        h <<= 1;
        h ^= x[i] & 1;
    }
    h
}

/// Distances to each centroid, then divided by the output's length, with a read-only method of
/// a shared slice beside: after a reduction, `out.len()` of the `&mut` output and
/// `cent.first()` are reads (the last fix of that kind landed in the jam only; the split had its
/// own list of sixteen read-only methods).
#[adaptive_kernel(complexity = "Medium")]
fn scaled_distances(p: &[f32], cent: &[f32], out: &mut [f32], d: usize) {
    for c in 0..out.len() {
        let q = &cent[c * d..(c + 1) * d];
        let mut dist = 0.0f32;
        for j in 0..d {
            let t = p[j] - q[j];
            dist += t * t;
        }
        out[c] = dist / out.len() as f32 + *cent.first().unwrap_or(&0.0);
    }
}

/// A zip written as a path, as the Parallel variant's own chunks spell it: one grammar of what
/// a `for` walks reads it as a zip for every rewrite.
#[adaptive_kernel(complexity = "Medium")]
fn dot_path_zip(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for (x, y) in core::iter::Iterator::zip(a.iter(), b) {
        s += x * y;
    }
    s
}

/// A zip reduction as users write it: the Parallel variant's chunks of it are now in lanes too
/// (their `Iterator::zip` was not a zip to the SIMD rewrite's own grammar).
#[adaptive_kernel(complexity = "Medium")]
fn dot_zip(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

/// Rows written three ways: `&x[i*d..(i+1)*d]`, `&x[i*d..i*d+d]`, `&x[d*i..(1+i)*d]`. The split
/// took all three for the index's own row, the items in lanes only the first: one shape now.
#[adaptive_kernel(complexity = "Medium")]
fn row_norms(x: &[f32], d: usize, a: &mut [f32], b: &mut [f32], c: &mut [f32]) {
    for i in 0..a.len() {
        let r = &x[i * d..(i + 1) * d];
        let mut s = 0.0f32;
        for j in 0..d {
            s += r[j] * r[j];
        }
        a[i] = s;
    }
    for i in 0..b.len() {
        let r = &x[i * d..i * d + d];
        let mut s = 0.0f32;
        for j in 0..d {
            s += r[j] * r[j];
        }
        b[i] = s;
    }
    for i in 0..c.len() {
        let r = &x[d * i..(1 + i) * d];
        let mut s = 0.0f32;
        for j in 0..d {
            s += r[j] * r[j];
        }
        c[i] = s;
    }
}

/// Sums per label in a local table of `vec![0u32; 256]`, then the means: an element of a `u32`
/// or `usize` slice has a type to every rewrite now, so the second loop is in lanes (it was an
/// `effect` to the SIMD rewrite).
#[adaptive_kernel(complexity = "Low", size = x.len())]
fn label_means(x: &[f32], labels: &[u8], means: &mut [f32]) {
    let mut totals = vec![0.0f32; 256];
    let mut counts = vec![0u32; 256];
    for (v, l) in x.iter().zip(labels) {
        totals[*l as usize] += *v;
        counts[*l as usize] += 1;
    }
    for k in 0..means.len().min(256) {
        means[k] = if counts[k] > 0 { totals[k] / counts[k] as f32 } else { 0.0 };
    }
}

/// k-means' update step: points per cluster and the sum of each cluster's points. The inner
/// loop's index `l * d + j` has a base read from a `usize` slice, a `usize` to every rewrite now,
/// so it is in lanes in SIMD and in the Parallel variant's chunks (it was an `effect`); the outer
/// loop is split with private copies of `counts` and `sums` merged in chunk order.
#[adaptive_kernel(complexity = "Medium", size = points.len())]
fn cluster_sums(points: &[f64], labels: &[usize], d: usize, counts: &mut Vec<u64>, sums: &mut [f64]) {
    for i in 0..labels.len() {
        let l = labels[i];
        counts[l] += 1;
        for j in 0..d {
            sums[l * d + j] += points[i * d + j];
        }
    }
}

/// A gather through an index slice: left as written by every rewrite, for one reason (`source`:
/// the index does not move with the loop's); it was `effect` to the SIMD rewrite.
#[adaptive_kernel(complexity = "Low")]
fn gather(x: &[f32], idx: &[usize], out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = x[idx[i]];
    }
}

/// The halves of `split_at` are `f32` slices to every rewrite: the GPU variant now runs the loop
/// (it had no reading of them).
#[adaptive_kernel(complexity = "Medium")]
fn half_correlation(signal: &[f32]) -> f32 {
    let half = signal.len() / 2;
    let (left, right) = signal.split_at(half);
    let mut corr = 0.0;
    for i in 0..half {
        corr += left[i] * right[i];
    }
    corr
}

/// A `&mut` a `let` holds, written in the loop: the split took it for a read and wrote chunks
/// that could not borrow it (code that did not compile). One name table now: `writes`.
#[adaptive_kernel(complexity = "Low")]
fn logged_copy(a: &[f32], out: &mut [f32], log: &mut Vec<f32>) {
    let seen = log;
    for i in 0..a.len().min(out.len()) {
        out[i] = a[i];
        seen.push(a[i]);
    }
}

// ---- helpers ------------------------------------------------------------------------------------

/// Lengths around the lane widths (4, 8, 16, 32) and the chunks of a few threads.
const SIZES: [usize; 14] = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 1000, 4099];

/// The thread counts a Parallel variant is called on.
const THREADS: [usize; 3] = [1, 2, 3];

/// Deterministic values in about [-8, 8], with no two equal neighbours.
fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) % 1601) as f32 / 100.0 - 8.0).collect()
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Whether two float sums of `terms` agree within the contract of a regrouped reduction.
fn sums_agree(got: f64, want: f64, terms: impl Iterator<Item = f64>, epsilon: f64) -> bool {
    let (mut n, mut abs) = (1, 0.0);
    for t in terms {
        n += 1;
        abs += t.abs();
    }
    tolerance::sums_agree(got, want, n, abs, epsilon, f64::MAX)
}

fn sums32(got: f32, want: f32, terms: impl Iterator<Item = f32>) -> bool {
    sums_agree(f64::from(got), f64::from(want), terms.map(f64::from), f64::from(f32::EPSILON) / 2.0)
}

/// (idiom, variants, reason) of each reduction the kernel reports.
fn reductions(k: &Kernel) -> Vec<(&'static str, &'static [Backend], &'static str)> {
    k.spec().loops.iter().map(|l| (l.idiom, l.variants, l.reason)).collect()
}

/// The reason word of each top-level loop for the Parallel variant ("" when split).
fn splits(k: &Kernel) -> Vec<&'static str> {
    k.spec().splits.iter().map(|l| l.reason).collect()
}

/// The reason word of each top-level loop for the GPU variant ("" when on the device).
fn gpu(k: &Kernel) -> Vec<&'static str> {
    k.spec().gpu_loops.iter().map(|l| l.reason).collect()
}

const LANES: &[Backend] = &[Backend::Simd, Backend::Parallel];

// ---- tests --------------------------------------------------------------------------------------

#[test]
fn a_user_s_own_vec_is_a_type_of_its_own_to_every_variant() {
    common::no_history();
    // The loop reads `w[i]` through the user's `Index`, a call of the user's code: split by the
    // Parallel variant (a shared reference is only read, whatever its type), left as written by
    // the SIMD rewrite (`effect`) and on the host by the GPU variant.
    assert_eq!(reductions(&weighted::KERNEL), [("for range =", &[][..], "effect")]);
    assert_eq!(splits(&weighted::KERNEL), [""]);
    assert_ne!(gpu(&weighted::KERNEL), [""]);
    let w = own::Vec(vec![0.5, -2.0, 3.25]);
    for n in SIZES {
        let x = values(n, 1);
        let mut want = vec![0.0; n];
        weighted::scalar(&x, &w, &mut want);
        assert!(want.iter().enumerate().all(|(i, v)| *v == x[i] * w.0[i % 3]), "n = {n}");
        let mut simd = vec![0.0; n];
        weighted::simd(&x, &w, &mut simd);
        assert!(same_bits(&simd, &want), "SIMD, n = {n}");
        for t in THREADS {
            let mut par = vec![0.0; n];
            with_threads(t, || weighted::parallel(&x, &w, &mut par));
            assert!(same_bits(&par, &want), "Parallel on {t} threads, n = {n}");
        }
        // The default size counts the slices only (the user's `Vec` has no `len()`).
        let mut routed = vec![0.0; n];
        weighted(&x, &w, &mut routed);
        assert!(same_bits(&routed, &want));
    }
}

#[test]
fn an_unsuffixed_vec_of_zeros_takes_the_width_the_body_gives_it() {
    common::no_history();
    for n in SIZES {
        let x: Vec<f64> = values(n, 2).iter().map(|&v| f64::from(v) * 1.000_000_1).collect();
        let mut want = vec![0.0; n];
        let e = centred_energy::scalar(&x, &mut want);
        let mean = x.iter().sum::<f64>() / n.max(1) as f64;
        let terms = || x.iter().map(|v| (v - mean) * (v - mean));
        let mut simd = vec![0.0; n];
        let s = centred_energy::simd(&x, &mut simd);
        assert!(sums_agree(s, e, terms(), f64::EPSILON / 2.0), "SIMD {s} vs {e}, n = {n}");
        for t in THREADS {
            let mut par = vec![0.0; n];
            let p = with_threads(t, || centred_energy::parallel(&x, &mut par));
            assert!(sums_agree(p, e, terms(), f64::EPSILON / 2.0), "Parallel {p} vs {e}, n = {n}");
            // The deviations depend on the mean, regrouped within the same bound.
            for i in 0..n {
                let bound = tolerance::sum_bound(n + 1, x.iter().map(|v| v.abs()).sum::<f64>(), f64::EPSILON / 2.0);
                assert!((par[i] - want[i]).abs() <= bound / n.max(1) as f64 + bound, "{i}: {} vs {}", par[i], want[i]);
            }
        }
    }
}

#[test]
fn every_integer_type_is_an_integer_to_every_variant() {
    common::no_history();
    for n in SIZES {
        let a: Vec<i128> = (0..n as i128).map(|i| (i * 7919 - 3000) * 1_000_000_000_000).collect();
        let b: Vec<isize> = (0..n as isize).map(|i| i * 31 - 500).collect();
        let mut want = vec![0u128; n];
        let sums = wide_integers::scalar(&a, &b, &mut want);
        assert_eq!(sums, (a.iter().sum(), b.iter().sum()));
        let mut simd = vec![0u128; n];
        assert_eq!(wide_integers::simd(&a, &b, &mut simd), sums, "SIMD, n = {n}");
        assert_eq!(simd, want);
        for t in THREADS {
            let mut par = vec![0u128; n];
            assert_eq!(with_threads(t, || wide_integers::parallel(&a, &b, &mut par)), sums, "n = {n}");
            assert_eq!(par, want, "Parallel on {t} threads, n = {n}");
        }
    }
}

#[test]
fn all_ten_compound_assignments_are_writes_to_every_variant() {
    common::no_history();
    // The element-wise loop is split; the carried state is not (it carries `h`), and no variant
    // regroups it: its result is Scalar's bits at every size.
    assert_eq!(splits(&compound::KERNEL).len(), 2);
    assert_eq!(splits(&compound::KERNEL)[0], "");
    assert_ne!(splits(&compound::KERNEL)[1], "", "the carried loop is not split");
    assert_ne!(gpu(&compound::KERNEL)[1], "", "the carried loop is not on the GPU");
    for n in SIZES {
        let x: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) % 1000).collect();
        let start: Vec<u32> = (0..n as u32).map(|i| i % 17).collect();
        let mut want = start.clone();
        let h = compound::scalar(&x, &mut want);
        let mut simd = start.clone();
        assert_eq!(compound::simd(&x, &mut simd), h, "SIMD, n = {n}");
        assert_eq!(simd, want, "SIMD, n = {n}");
        for t in THREADS {
            let mut par = start.clone();
            assert_eq!(with_threads(t, || compound::parallel(&x, &mut par)), h, "n = {n}");
            assert_eq!(par, want, "Parallel on {t} threads, n = {n}");
        }
    }
}

#[test]
fn a_length_and_a_read_only_method_after_a_reduction_are_reads() {
    common::no_history();
    // The inner distance is taken several centroids at a time (jam) by the SIMD rewrite. The
    // loop over centroids is not split: a chunk's `out` would be shorter than the output, so
    // `out.len()` is a use beyond the iteration's own item (`overlap`), and the kernel has no
    // Parallel variant.
    assert_eq!(reductions(&scaled_distances::KERNEL)[0], ("for range jam", &[Backend::Simd][..], ""));
    assert_eq!(splits(&scaled_distances::KERNEL), ["overlap"]);
    for (k, d) in [(0, 3), (1, 1), (5, 3), (9, 4), (17, 8), (33, 5), (301, 7)] {
        let p = values(d, 3);
        let cent = values(k * d, 4);
        let (pr, cr) = (&p, &cent);
        let terms = |c: usize| (0..d).map(move |j| (pr[j] - cr[c * d + j]) * (pr[j] - cr[c * d + j]));
        let mut want = vec![0.0; k];
        scaled_distances::scalar(&p, &cent, &mut want, d);
        let check = |got: &[f32], what: &str| {
            for c in 0..k {
                let first = cent.first().copied().unwrap_or(0.0);
                let (g, w) = ((got[c] - first) * k as f32, (want[c] - first) * k as f32);
                assert!(sums32(g, w, terms(c).chain([first * k as f32])), "{what}, k = {k}, c = {c}: {g} vs {w}");
            }
        };
        let mut simd = vec![0.0; k];
        scaled_distances::simd(&p, &cent, &mut simd, d);
        check(&simd, "SIMD");
    }
}

#[test]
fn a_zip_is_a_zip_however_it_is_spelled_and_in_every_variant() {
    common::no_history();
    assert_eq!(reductions(&dot_path_zip::KERNEL), [("for zip +=", LANES, "")]);
    assert_eq!(reductions(&dot_zip::KERNEL), [("for zip +=", LANES, "")]);
    // And one word for it in the split's and the GPU's reports.
    for k in [&dot_path_zip::KERNEL, &dot_zip::KERNEL] {
        let spec = k.spec();
        assert_eq!((spec.splits[0].idiom, spec.splits[0].reason), ("for iter.zip", ""));
        assert_eq!((spec.gpu_loops[0].idiom, spec.gpu_loops[0].reason), ("for iter.zip", ""));
    }
    for n in SIZES.into_iter().chain([100_003]) {
        let (a, b) = (values(n, 5), values(n, 6));
        let terms = || a.iter().zip(&b).map(|(x, y)| x * y);
        for (name, scalar, simd, parallel) in [
            (
                "path",
                dot_path_zip::scalar as fn(&[f32], &[f32]) -> f32,
                dot_path_zip::simd as fn(&[f32], &[f32]) -> f32,
                dot_path_zip::parallel as fn(&[f32], &[f32]) -> f32,
            ),
            ("method", dot_zip::scalar, dot_zip::simd, dot_zip::parallel),
        ] {
            let want = scalar(&a, &b);
            assert!(sums32(simd(&a, &b), want, terms()), "{name} SIMD, n = {n}");
            for t in THREADS {
                let got = with_threads(t, || parallel(&a, &b));
                assert!(sums32(got, want, terms()), "{name} Parallel on {t} threads, n = {n}: {got} vs {want}");
                // The same numbers on every run at a given thread count.
                assert_eq!(got.to_bits(), with_threads(t, || parallel(&a, &b)).to_bits());
            }
        }
    }
}

#[test]
fn a_row_is_one_shape_however_its_bounds_are_written() {
    common::no_history();
    // Each loop over rows reports the rows taken several at a time (jam) and its sum: the three
    // spellings get one answer, in lanes in SIMD and in the Parallel variant's chunks.
    let report = reductions(&row_norms::KERNEL);
    let one = [("for range jam", LANES, ""), ("for range +=", LANES, "")];
    assert_eq!(report, [one, one, one].concat());
    assert_eq!(splits(&row_norms::KERNEL), ["", "", ""]);
    for (rows, d) in [(0, 4), (1, 1), (3, 33), (17, 8), (64, 9), (257, 16)] {
        let x = values(rows * d, 7);
        let run = |f: &dyn Fn(&mut [f32], &mut [f32], &mut [f32])| {
            let (mut a, mut b, mut c) = (vec![0.0; rows], vec![0.0; rows], vec![0.0; rows]);
            f(&mut a, &mut b, &mut c);
            (a, b, c)
        };
        let want = run(&|a, b, c| row_norms::scalar(&x, d, a, b, c));
        let check = |got: &(Vec<f32>, Vec<f32>, Vec<f32>), what: &str| {
            for i in 0..rows {
                let terms = || x[i * d..(i + 1) * d].iter().map(|v| v * v);
                for (g, w) in [(got.0[i], want.0[i]), (got.1[i], want.1[i]), (got.2[i], want.2[i])] {
                    assert!(sums32(g, w, terms()), "{what}, row {i} of {rows}×{d}: {g} vs {w}");
                }
            }
        };
        check(&run(&|a, b, c| row_norms::simd(&x, d, a, b, c)), "SIMD");
        for t in THREADS {
            check(&run(&|a, b, c| with_threads(t, || row_norms::parallel(&x, d, a, b, c))), "Parallel");
        }
    }
}

#[test]
fn an_element_of_an_integer_table_has_a_type_and_the_means_are_in_lanes() {
    common::no_history();
    // The scatter into the two tables and the element-wise means.
    let report = reductions(&label_means::KERNEL);
    assert!(report.iter().any(|r| r.0 == "for range =" && r.1 == LANES && r.2.is_empty()), "{report:?}");
    for n in SIZES {
        let x = values(n, 8);
        let labels: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
        for m in [0, 1, 9, 200, 256, 300] {
            let mut want = vec![1.0; m];
            label_means::scalar(&x, &labels, &mut want);
            let mut simd = vec![1.0; m];
            label_means::simd(&x, &labels, &mut simd);
            let close = |got: &[f32], what: &str| {
                for k in 0..m {
                    let terms = || x.iter().zip(&labels).filter(|(_, l)| **l as usize == k).map(|(v, _)| *v);
                    let count = terms().count().max(1) as f32;
                    assert!(
                        sums32(got[k] * count, want[k] * count, terms()),
                        "{what}: label {k}, {} vs {}",
                        got[k],
                        want[k]
                    );
                }
            };
            close(&simd, "SIMD");
            for t in THREADS {
                let mut par = vec![1.0; m];
                with_threads(t, || label_means::parallel(&x, &labels, &mut par));
                close(&par, "Parallel");
            }
        }
    }
}

#[test]
fn a_row_at_a_label_read_from_a_usize_slice_is_in_lanes() {
    common::no_history();
    assert_eq!(reductions(&cluster_sums::KERNEL), [("for range =", LANES, "")]);
    assert_eq!(splits(&cluster_sums::KERNEL), [""]);
    for (n, d, k) in [(0, 3, 2), (1, 1, 1), (7, 3, 2), (33, 4, 5), (257, 17, 3), (1000, 8, 7)] {
        let points: Vec<f64> = values(n * d, 14).iter().map(|&v| f64::from(v)).collect();
        let labels: Vec<usize> = (0..n).map(|i| (i * 5 + i / 3) % k).collect();
        let (mut counts, mut sums) = (vec![0u64; k], vec![0.0; k * d]);
        cluster_sums::scalar(&points, &labels, d, &mut counts, &mut sums);
        // Element by element in lanes: Scalar's bits.
        let (mut c, mut s) = (vec![0u64; k], vec![0.0; k * d]);
        cluster_sums::simd(&points, &labels, d, &mut c, &mut s);
        assert_eq!(c, counts);
        assert!(s.iter().zip(&sums).all(|(a, b)| a.to_bits() == b.to_bits()), "SIMD, n = {n}, d = {d}");
        for t in THREADS {
            let (mut c, mut s) = (vec![0u64; k], vec![0.0; k * d]);
            with_threads(t, || cluster_sums::parallel(&points, &labels, d, &mut c, &mut s));
            assert_eq!(c, counts, "Parallel on {t} threads");
            // Per-chunk partial sums merged in chunk order: within the sum's bound.
            for l in 0..k {
                for j in 0..d {
                    let terms = (0..n).filter(|&i| labels[i] == l).map(|i| points[i * d + j]);
                    let (got, want) = (s[l * d + j], sums[l * d + j]);
                    assert!(sums_agree(got, want, terms, f64::EPSILON / 2.0), "({l}, {j}) on {t}: {got} vs {want}");
                }
            }
        }
        let (mut c, mut s) = (vec![0u64; k], vec![0.0; k * d]);
        cluster_sums(&points, &labels, d, &mut c, &mut s);
        assert_eq!(c, counts);
    }
}

#[test]
fn a_gather_is_left_as_written_for_one_reason() {
    common::no_history();
    assert_eq!(reductions(&gather::KERNEL), [("for range =", &[][..], "source")]);
    assert_eq!(splits(&gather::KERNEL), [""]);
    for n in SIZES {
        let x = values(n.max(1), 9);
        let idx: Vec<usize> = (0..n).map(|i| (i * 7 + 3) % x.len()).collect();
        let mut want = vec![0.0; n];
        gather::scalar(&x, &idx, &mut want);
        let mut simd = vec![0.0; n];
        gather::simd(&x, &idx, &mut simd);
        assert!(same_bits(&simd, &want));
        for t in THREADS {
            let mut par = vec![0.0; n];
            with_threads(t, || gather::parallel(&x, &idx, &mut par));
            assert!(same_bits(&par, &want));
        }
    }
}

#[test]
fn the_halves_of_split_at_are_slices_to_every_variant() {
    common::no_history();
    assert_eq!(reductions(&half_correlation::KERNEL), [("for range +=", LANES, "")]);
    assert_eq!(gpu(&half_correlation::KERNEL), [""]);
    for n in SIZES {
        let x = values(n, 10);
        let half = n / 2;
        let terms = || (0..half).map(|i| x[i] * x[half + i]);
        let want = half_correlation::scalar(&x);
        assert!(sums32(half_correlation::simd(&x), want, terms()), "SIMD, n = {n}");
        for t in THREADS {
            assert!(sums32(with_threads(t, || half_correlation::parallel(&x)), want, terms()), "n = {n}");
        }
        // On the device where one is usable (lavapipe with ADAPTIVE_KERNEL_GPU=software); its
        // contract adds a rounding per product (fused multiply-adds) to the regrouped sum's.
        if adaptive_kernel::ops::gpu::is_available() {
            let got = half_correlation::gpu(&x);
            let bound = 2.0 * f64::from(f32::EPSILON) * terms().map(|t| f64::from(t.abs())).sum::<f64>();
            assert!(
                sums32(got, want, terms()) || f64::from((got - want).abs()) <= bound,
                "GPU, n = {n}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn a_mut_a_let_holds_is_written_and_the_loop_stays_on_one_thread() {
    common::no_history();
    assert_eq!(splits(&logged_copy::KERNEL), ["writes"]);
    for n in SIZES {
        let a = values(n, 11);
        let (mut want, mut want_log) = (vec![0.0; n], vec![9.0]);
        logged_copy::scalar(&a, &mut want, &mut want_log);
        for variant in [Backend::Simd, Backend::Parallel] {
            let (mut out, mut log) = (vec![0.0; n], vec![9.0]);
            adaptive_kernel::with_backend(variant, || logged_copy(&a, &mut out, &mut log));
            assert!(same_bits(&out, &want) && same_bits(&log, &want_log), "{variant:?}, n = {n}");
        }
    }
}

#[test]
fn routed_calls_give_a_variant_s_results() {
    common::no_history();
    let n = 1000;
    let (x, y) = (values(n, 12), values(n, 13));
    let dot = || x.iter().zip(&y).map(|(a, b)| a * b);
    assert!(sums32(dot_zip(&x, &y), dot_zip::scalar(&x, &y), dot()));
    assert!(sums32(dot_path_zip(&x, &y), dot_path_zip::scalar(&x, &y), dot()));
    let halves = || (0..n / 2).map(|i| x[i] * x[n / 2 + i]);
    assert!(sums32(half_correlation(&x), half_correlation::scalar(&x), halves()));
    let wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let (mut d1, mut d2) = (vec![0.0; n], vec![0.0; n]);
    let mean = wide.iter().sum::<f64>() / n as f64;
    let terms = wide.iter().map(|v| (v - mean) * (v - mean));
    assert!(sums_agree(
        centred_energy(&wide, &mut d1),
        centred_energy::scalar(&wide, &mut d2),
        terms,
        f64::EPSILON / 2.0
    ));
    let (a, b): (Vec<i128>, Vec<isize>) = ((0..n as i128).collect(), (0..n as isize).collect());
    let (mut o1, mut o2) = (vec![0u128; n], vec![0u128; n]);
    assert_eq!(wide_integers(&a, &b, &mut o1), wide_integers::scalar(&a, &b, &mut o2));
    assert_eq!(o1, o2);
    let u: Vec<u32> = (0..n as u32).collect();
    let (mut c1, mut c2) = (vec![3u32; n], vec![3u32; n]);
    assert_eq!((compound(&u, &mut c1), &c1), (compound::scalar(&u, &mut c2), &c2));
    let d = 10;
    let (mut s1, mut s2) = (vec![0.0; n / d], vec![0.0; n / d]);
    scaled_distances(&x[..d], &y, &mut s1, d);
    scaled_distances::scalar(&x[..d], &y, &mut s2, d);
    for (g, w) in s1.iter().zip(&s2) {
        assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "{g} vs {w}");
    }
    let rows = || (vec![0.0; n / d], vec![0.0; n / d], vec![0.0; n / d]);
    let ((mut a1, mut b1, mut c1), (mut a2, mut b2, mut c2)) = (rows(), rows());
    row_norms(&x, d, &mut a1, &mut b1, &mut c1);
    row_norms::scalar(&x, d, &mut a2, &mut b2, &mut c2);
    for (g, w) in [a1, b1, c1].concat().iter().zip(&[a2, b2, c2].concat()) {
        assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "{g} vs {w}");
    }
    let labels: Vec<u8> = (0..n).map(|i| (i % 7) as u8).collect();
    let (mut m1, mut m2) = (vec![0.0; 7], vec![0.0; 7]);
    label_means(&x, &labels, &mut m1);
    label_means::scalar(&x, &labels, &mut m2);
    for (g, w) in m1.iter().zip(&m2) {
        assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "{g} vs {w}");
    }
    let idx: Vec<usize> = (0..n).rev().collect();
    let (mut g1, mut g2) = (vec![0.0; n], vec![0.0; n]);
    gather(&x, &idx, &mut g1);
    gather::scalar(&x, &idx, &mut g2);
    assert!(same_bits(&g1, &g2));
}
