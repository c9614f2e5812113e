//! Closed-form checks that do not trust any of our code: each op, in Scalar
//! and in every SIMD and Parallel variant, against a value known independently (integer
//! sums, hand-computed products, identities, known function values); and the
//! `_into` forms' empty conventions.

mod ops_common;

use ops_common::Impl;

/// `got` is within `rel` of `want`, relatively.
#[track_caller]
fn assert_rel(imp: Impl, what: &str, got: f32, want: f64, rel: f64) {
    let err = (got as f64 - want).abs();
    assert!(err <= rel * want.abs(), "{imp:?} {what}: got {got:e}, want {want:e} (rel error {:e})", err / want.abs());
}

#[test]
fn sums_of_integer_sequences_are_exact() {
    // 1 + 2 + … + n = n(n + 1)/2; every partial sum is an integer below 2^24, so exact in f32
    // whatever the summation order.
    for n in [1usize, 7, 8, 9, 33, 1000, 4096, 5000] {
        let a: Vec<f32> = (1..=n).map(|i| i as f32).collect();
        let want = (n * (n + 1) / 2) as f32;
        for imp in Impl::all() {
            assert_eq!(imp.sum(&a), want, "{imp:?} sum 1..={n}");
            assert_eq!(imp.mean(&a), (n + 1) as f32 / 2.0, "{imp:?} mean 1..={n}");
            // Σ i·1 = Σ i, and Σ i² = n(n+1)(2n+1)/6 (below 2^24 for n ≤ 33).
            assert_eq!(imp.dot(&a, &vec![1.0; n]), want, "{imp:?} dot with ones, n={n}");
            if n <= 33 {
                assert_eq!(imp.dot(&a, &a), (n * (n + 1) * (2 * n + 1) / 6) as f32, "{imp:?} Σi², n={n}");
            }
        }
    }
}

#[test]
fn known_dot_products_and_norms() {
    for imp in Impl::all() {
        assert_eq!(imp.dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0, "{imp:?}");
        assert_eq!(imp.dot(&[1.0, -1.0, 1.0, -1.0, 1.0], &[2.0; 5]), 2.0, "{imp:?}");
        assert_eq!(imp.norm_l2(&[3.0, 4.0]), 5.0, "{imp:?}");
        // √(16384 · 1²) = 128 exactly.
        assert_eq!(imp.norm_l2(&vec![1.0; 16384]), 128.0, "{imp:?}");
        assert_eq!(imp.norm_l2(&[-2.0; 9]), 6.0, "{imp:?}");
    }
}

#[test]
fn empty_inputs_follow_the_conventions() {
    for imp in Impl::all() {
        assert_eq!(imp.sum(&[]), 0.0, "{imp:?}");
        assert_eq!(imp.dot(&[], &[]), 0.0, "{imp:?}");
        assert_eq!(imp.norm_l2(&[]), 0.0, "{imp:?}");
        assert_eq!(imp.max(&[]), f32::NEG_INFINITY, "{imp:?}");
        assert_eq!(imp.min(&[]), f32::INFINITY, "{imp:?}");
        assert!(imp.mean(&[]).is_nan(), "{imp:?}");
        assert!(imp.softmax(&[]).is_empty(), "{imp:?}");
        assert!(imp.exp(&[]).is_empty() && imp.add(&[], &[]).is_empty(), "{imp:?}");
        assert_eq!(imp.matmul(&[], &[], 0, 0, 0), Vec::<f32>::new(), "{imp:?}");
        assert_eq!(imp.matmul(&[], &[], 2, 3, 0), vec![0.0; 6], "{imp:?}: k = 0 gives zeros");
        assert_eq!(imp.matvec(&[], &[], 3, 0), vec![0.0; 3], "{imp:?}");
        assert_eq!(imp.transpose(&[], 0, 5), Vec::<f32>::new(), "{imp:?}");
        assert_eq!(
            imp.conv2d(&[1.0; 4], &[1.0; 9], 2, 2, 3, 3),
            Vec::<f32>::new(),
            "{imp:?}: kernel larger than input"
        );
        // The `_into` forms: empty outputs stay empty, and zero-depth products write zeros
        // over whatever `out` held.
        let mut none: [f32; 0] = [];
        imp.add_into(&[], &[], &mut none);
        imp.exp_into(&[], &mut none);
        imp.softmax_into(&[], &mut none);
        imp.transpose_into(&[], 0, 5, &mut none);
        imp.conv2d_into(&[1.0; 4], &[1.0; 9], 2, 2, 3, 3, &mut none);
        let mut c = [7.0f32; 6];
        imp.matmul_into(&[], &[], 2, 3, 0, &mut c);
        assert_eq!(c, [0.0; 6], "{imp:?}: k = 0 writes zeros");
        let mut y = [7.0f32; 3];
        imp.matvec_into(&[], &[], 3, 0, &mut y);
        assert_eq!(y, [0.0; 3], "{imp:?}: n = 0 writes zeros");
    }
}

#[test]
fn max_and_min_find_the_extremes_and_propagate_nan() {
    // A value placed at every position of a 37-element vector (two 16-lane blocks and a tail).
    for pos in 0..37 {
        let mut a: Vec<f32> = (0..37).map(|i| (i % 5) as f32 - 2.0).collect();
        a[pos] = 100.0;
        let mut b = a.clone();
        b[pos] = -100.0;
        let mut c = a.clone();
        c[pos] = f32::NAN;
        for imp in Impl::all() {
            assert_eq!(imp.max(&a), 100.0, "{imp:?} max at {pos}");
            assert_eq!(imp.min(&b), -100.0, "{imp:?} min at {pos}");
            assert!(imp.max(&c).is_nan() && imp.min(&c).is_nan(), "{imp:?} NaN at {pos}");
        }
    }
    for imp in Impl::all() {
        assert_eq!(imp.max(&[f32::NEG_INFINITY; 3]), f32::NEG_INFINITY, "{imp:?}");
        assert_eq!(imp.min(&[1.0, f32::INFINITY]), 1.0, "{imp:?}");
    }
}

#[test]
fn element_wise_arithmetic_on_known_values() {
    let a = [1.0, -2.0, 3.5, 0.0, 8.0, 1e30, -1.0, 6.0, 7.0];
    let b = [2.0, 4.0, -0.5, 5.0, 0.0, 1e30, -1.0, 3.0, 0.25];
    for imp in Impl::all() {
        assert_eq!(imp.add(&a, &b), [3.0, 2.0, 3.0, 5.0, 8.0, 2e30, -2.0, 9.0, 7.25], "{imp:?}");
        assert_eq!(imp.sub(&a, &b), [-1.0, -6.0, 4.0, -5.0, 8.0, 0.0, 0.0, 3.0, 6.75], "{imp:?}");
        assert_eq!(imp.mul(&a, &b), [2.0, -8.0, -1.75, 0.0, 0.0, f32::INFINITY, 1.0, 18.0, 1.75], "{imp:?}");
        assert_eq!(imp.div(&a, &b), [0.5, -0.5, -7.0, 0.0, f32::INFINITY, 1.0, 1.0, 2.0, 28.0], "{imp:?}");
        assert_eq!(imp.scale(&a[..5], -2.0), [-2.0, 4.0, -7.0, -0.0, -16.0], "{imp:?}");
        let relu = imp.relu(&[-1.0, 0.0, 2.5, f32::NAN, f32::NEG_INFINITY, f32::INFINITY, -0.0, 3.0, -7.0]);
        assert_eq!(relu[..3], [0.0, 0.0, 2.5], "{imp:?}");
        assert!(relu[3].is_nan(), "{imp:?}: relu(NaN) is NaN");
        assert_eq!(relu[4..], [0.0, f32::INFINITY, 0.0, 3.0, 0.0], "{imp:?}");
        let mut y = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        imp.axpy(2.0, &[1.0; 9], &mut y);
        assert_eq!(y, [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0], "{imp:?}");
    }
}

#[test]
fn transcendentals_at_known_points() {
    let ln2 = std::f64::consts::LN_2;
    let ln3 = 3f64.ln();
    for imp in Impl::all() {
        // e^0 = 1, e^ln2 = 2, e^1 = e, e^−100 (a denormal), e^88, and the limits.
        let x = [0.0, ln2 as f32, 1.0, -100.0, 88.0, 89.0, f32::INFINITY, f32::NEG_INFINITY, -200.0];
        let e = imp.exp(&x);
        assert_eq!(e[0], 1.0, "{imp:?}");
        assert_rel(imp, "exp(ln 2)", e[1], 2.0, 1e-6);
        assert_rel(imp, "exp(1)", e[2], std::f64::consts::E, 1e-6);
        assert_rel(imp, "exp(-100)", e[3], 3.720075976020836e-44, 0.05); // 26 denormal steps
        assert_rel(imp, "exp(88)", e[4], 1.6516362549940018e38, 1e-6);
        assert_eq!(e[5..], [f32::INFINITY, f32::INFINITY, 0.0, 0.0], "{imp:?}: overflow and underflow");
        assert!(imp.exp(&[f32::NAN])[0].is_nan(), "{imp:?}");

        // σ(0) = 1/2, σ(ln 3) = 3/4, σ(−ln 3) = 1/4, and the limits.
        let s = imp.sigmoid(&[0.0, ln3 as f32, -ln3 as f32, f32::INFINITY, f32::NEG_INFINITY, -200.0, 200.0]);
        assert_eq!(s[0], 0.5, "{imp:?}");
        assert_rel(imp, "sigmoid(ln 3)", s[1], 0.75, 1e-6);
        assert_rel(imp, "sigmoid(-ln 3)", s[2], 0.25, 1e-6);
        assert_eq!(s[3..], [1.0, 0.0, 0.0, 1.0], "{imp:?}");

        // tanh(ln 2) = (4 − 1)/(4 + 1) = 0.6; tanh(0.1) from its series; odd; saturates.
        let t = imp.tanh(&[0.0, ln2 as f32, -(ln2 as f32), 0.1, 20.0, f32::NEG_INFINITY, -0.0]);
        assert_eq!(t[0], 0.0, "{imp:?}");
        assert_rel(imp, "tanh(ln 2)", t[1], 0.6, 1e-6);
        assert_rel(imp, "tanh(-ln 2)", t[2], -0.6, 1e-6);
        assert_rel(imp, "tanh(0.1)", t[3], 0.1f64.tanh(), 1e-6);
        assert_eq!(t[4..6], [1.0, -1.0], "{imp:?}");
        assert!(t[6] == 0.0 && t[6].is_sign_negative(), "{imp:?}: tanh(-0) = -0");

        // GELU (tanh form) values from the formula in f64.
        let gelu = |x: f64| 0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh());
        let g = imp.gelu(&[0.0, 1.0, -1.0, 2.0, 3.0, 50.0]);
        assert_eq!(g[0], 0.0, "{imp:?}");
        for (i, x) in [1.0, -1.0, 2.0, 3.0, 50.0].into_iter().enumerate() {
            assert_rel(imp, &format!("gelu({x})"), g[i + 1], gelu(x), 1e-5);
        }
    }
}

#[test]
fn softmax_is_a_distribution_with_known_values() {
    for imp in Impl::all() {
        // softmax(0, ln 2) = (1/3, 2/3); shifting every input changes nothing.
        let p = imp.softmax(&[0.0, std::f32::consts::LN_2]);
        assert_rel(imp, "softmax[0]", p[0], 1.0 / 3.0, 1e-6);
        assert_rel(imp, "softmax[1]", p[1], 2.0 / 3.0, 1e-6);
        let (lo, hi) = (1000.0f32, 1000.0 + std::f32::consts::LN_2);
        let q = imp.softmax(&[lo, hi]);
        let d = (hi - lo) as f64; // ln 2 rounded to the spacing of f32 near 1000
        assert_rel(imp, "shifted softmax[1]", q[1], 1.0 / (1.0 + (-d).exp()), 1e-6);
        // Equal inputs: 1/n each.
        for n in [1usize, 5, 16, 333, 4000] {
            for v in imp.softmax(&vec![-3.5; n]) {
                assert_rel(imp, &format!("uniform softmax of {n}"), v, 1.0 / n as f64, 1e-6);
            }
        }
        // Any input sums to 1.
        let a: Vec<f32> = (0..1001).map(|i| ((i * 37) % 101) as f32 * 0.37 - 20.0).collect();
        let total: f64 = imp.softmax(&a).iter().map(|&v| v as f64).sum();
        assert!((total - 1.0).abs() < 1e-5, "{imp:?}: softmax sums to {total}");
        assert!(imp.softmax(&[1.0, f32::NAN, 2.0]).iter().all(|v| v.is_nan()), "{imp:?}: NaN spreads");
    }
}

/// `rows × cols` values that are all different.
fn distinct(rows: usize, cols: usize) -> Vec<f32> {
    (0..rows * cols).map(|i| (i as f32) * 0.5 - 7.0).collect()
}

fn identity(n: usize) -> Vec<f32> {
    (0..n * n).map(|i| if i / n == i % n { 1.0 } else { 0.0 }).collect()
}

#[test]
fn matmul_by_hand_and_by_identity() {
    for imp in Impl::all() {
        // [1 2 3; 4 5 6] · [7 8; 9 10; 11 12] = [58 64; 139 154].
        let c = imp.matmul(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0], 2, 2, 3);
        assert_eq!(c, [58.0, 64.0, 139.0, 154.0], "{imp:?}");
        // I·A = A and A·I = A exactly (one non-zero term per sum), across trueno's GEMM paths.
        for (m, n) in [(3, 5), (8, 8), (64, 64), (129, 17), (300, 9), (9, 300), (260, 260)] {
            let a = distinct(m, n);
            assert_eq!(imp.matmul(&identity(m), &a, m, n, m), a, "{imp:?}: I({m})·A({m}×{n})");
            assert_eq!(imp.matmul(&a, &identity(n), m, n, n), a, "{imp:?}: A({m}×{n})·I({n})");
        }
        // All-ones: every element of ones(m×k)·ones(k×n) is k.
        assert_eq!(
            imp.matmul(&vec![1.0; 70 * 300], &vec![1.0; 300 * 33], 70, 33, 300),
            vec![300.0; 70 * 33],
            "{imp:?}"
        );
    }
}

#[test]
fn matvec_by_hand_and_by_identity() {
    for imp in Impl::all() {
        assert_eq!(imp.matvec(&[1.0, 2.0, 3.0, 4.0], &[1.0, 1.0], 2, 2), [3.0, 7.0], "{imp:?}");
        assert_eq!(imp.matvec(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[1.0, 0.0, -1.0], 2, 3), [-2.0, -2.0], "{imp:?}");
        let x = distinct(1, 45);
        assert_eq!(imp.matvec(&identity(45), &x, 45, 45), x, "{imp:?}");
    }
}

#[test]
fn transpose_by_hand_and_twice() {
    for imp in Impl::all() {
        assert_eq!(imp.transpose(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0], "{imp:?}");
        for (r, c) in [(1, 1), (1, 9), (8, 8), (13, 29), (64, 3), (100, 37)] {
            let a = distinct(r, c);
            let t = imp.transpose(&a, r, c);
            assert_eq!(t[r - 1], a[(r - 1) * c], "{imp:?}: t[0][r-1] = a[r-1][0] for {r}×{c}");
            assert_eq!(imp.transpose(&t, c, r), a, "{imp:?}: transposing {r}×{c} twice");
        }
    }
}

#[test]
fn conv2d_with_delta_and_constant_kernels() {
    let (rows, cols) = (9, 21);
    let input = distinct(rows, cols);
    for imp in Impl::all() {
        // A 3×3 kernel with a single 1 at (1, 2) picks input[i + 1][j + 2].
        let mut delta = [0.0; 9];
        delta[5] = 1.0;
        let out = imp.conv2d(&input, &delta, rows, cols, 3, 3);
        let want: Vec<f32> = (0..rows - 2)
            .flat_map(|i| (0..cols - 2).map(move |j| (i, j)))
            .map(|(i, j)| input[(i + 1) * cols + j + 2])
            .collect();
        assert_eq!(out, want, "{imp:?}: delta kernel");
        // A 1×1 kernel scales.
        assert_eq!(
            imp.conv2d(&input, &[2.0], rows, cols, 1, 1),
            input.iter().map(|x| 2.0 * x).collect::<Vec<_>>(),
            "{imp:?}"
        );
        // All-ones 2×2 over all-ones input: every output is 4.
        assert_eq!(imp.conv2d(&[1.0; 12], &[1.0; 4], 3, 4, 2, 2), [4.0; 6], "{imp:?}");
        // Hand-computed: [1 2 3; 4 5 6] ⋆ [1 0; 0 -1] = [1−5, 2−6].
        assert_eq!(
            imp.conv2d(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[1.0, 0.0, 0.0, -1.0], 2, 3, 2, 2),
            [-4.0, -4.0],
            "{imp:?}"
        );
    }
}
