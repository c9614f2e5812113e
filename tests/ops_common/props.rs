//! The properties every backend of the op set must have against Scalar, each
//! a function over a list of implementations, and the strategies that feed
//! them; `ops_simd.rs` and `ops_par.rs` run them on their own backends.
//! [`twins`]: every `_into` form gives its returning form's bits and
//! overwrites all of `out`; [`mismatch`]: wrong shapes, and a wrong `out`
//! length, panic with Scalar's message in every implementation.
//!
//! Tolerances, |got − scalar| ≤ …:
//! - `add`, `sub`, `mul`, `div`, `scale`, `relu`, `axpy`, `transpose`,
//!   `conv2d`: 0 (bit-identical; NaN matches any NaN);
//! - `max`, `min`: 0 as numbers (the sign of a zero result is unspecified, as
//!   for `f32::max`);
//! - `exp`, `sigmoid`, `tanh`: 1e-6·|scalar| + 1e-44 (a few ulp, and a few
//!   denormal steps); `gelu`: that plus 1e-7·|x|, because `1 + tanh(u)` cancels
//!   for negative x and turns tanh's absolute error into gelu's;
//! - `sum`, `dot`, `mean`, `matvec` and `matmul` elements: (n + 8)·ε·Σ|terms|
//!   (+ n·3e-45 for denormal terms), the sum of the worst-case error bounds of
//!   the two summation orders, with n the number of terms and ε = f32::EPSILON;
//!   `norm_l2`: (n + 10)·ε·norm + √(n·3e-45); `softmax`: (4e-6 + (n + 8)·ε) relative;
//! - NaN where Scalar gives NaN, and the same infinity where it gives one.
//!
//! Value ranges keep sums from overflowing (an overflow depends on summation
//! order): up to 1e34 for `sum`/`mean`, 1e17 for products, 1e38 elsewhere.

use proptest::prelude::*;
use proptest::sample::Index;

use super::Impl;

const EPS: f64 = f32::EPSILON as f64;

/// A finite value: mostly O(1) and O(100), else log-uniform from 1e-45 to
/// below 10^(max_exp+1), with either sign; zeros of both signs.
pub(crate) fn finite(max_exp: i32) -> impl Strategy<Value = f32> {
    prop_oneof![
        8 => -4.0f32..4.0,
        4 => -100.0f32..100.0,
        6 => (any::<bool>(), -45..=max_exp, 1.0f64..10.0).prop_map(|(neg, e, m)| {
            let v = (m * 10f64.powi(e)) as f32;
            if neg { -v } else { v }
        }),
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
    ]
}

pub(crate) fn special() -> impl Strategy<Value = f32> {
    prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY)]
}

/// Lengths 0..=300 (0, 1 and 2 weighted up) and a few thousands.
pub(crate) fn length() -> impl Strategy<Value = usize> {
    prop_oneof![2 => 0usize..=2, 12 => 0usize..=300, 2 => 1000usize..=4000]
}

/// `n` finite values; in one vector of five, one or two of them replaced by ±∞ or NaN.
pub(crate) fn vector(n: usize, max_exp: i32) -> impl Strategy<Value = Vec<f32>> {
    (
        proptest::collection::vec(finite(max_exp), n),
        proptest::bool::weighted(0.2),
        proptest::collection::vec((any::<Index>(), special()), 1..=2),
    )
        .prop_map(move |(mut v, inject, specials)| {
            if inject && n > 0 {
                for (i, s) in specials {
                    v[i.index(n)] = s;
                }
            }
            v
        })
}

/// One vector whose length `len` draws.
pub(crate) fn one_of_len(len: impl Strategy<Value = usize>, max_exp: i32) -> impl Strategy<Value = Vec<f32>> {
    len.prop_flat_map(move |n| vector(n, max_exp))
}

/// Two vectors of the same length, which `len` draws.
pub(crate) fn two_of_len(
    len: impl Strategy<Value = usize>,
    max_exp: i32,
) -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    len.prop_flat_map(move |n| (vector(n, max_exp), vector(n, max_exp)))
}

pub(crate) fn one(max_exp: i32) -> impl Strategy<Value = Vec<f32>> {
    one_of_len(length(), max_exp)
}

pub(crate) fn two(max_exp: i32) -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    two_of_len(length(), max_exp)
}

/// Bit-identical, except that any NaN matches any NaN.
pub(crate) fn same(want: f32, got: f32) -> bool {
    (want.is_nan() && got.is_nan()) || want.to_bits() == got.to_bits()
}

/// Within `tol` of `want`; NaN only with NaN, an infinity only with the same infinity.
pub(crate) fn close(want: f32, got: f32, tol: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return want == got;
    }
    (want as f64 - got as f64).abs() <= tol
}

/// Worst-case |difference| of two summations of `n` terms whose magnitudes sum to `abs_sum`.
pub(crate) fn sum_tol(n: usize, abs_sum: f64) -> f64 {
    (n as f64 + 8.0) * EPS * abs_sum + n as f64 * 3e-45
}

pub(crate) fn exact_vec(op: &str, imp: Impl, want: &[f32], got: &[f32]) -> Result<(), TestCaseError> {
    prop_assert_eq!(want.len(), got.len(), "{} {:?}: length", op, imp);
    for (i, (&w, &g)) in want.iter().zip(got).enumerate() {
        prop_assert!(same(w, g), "{} {:?}: [{}] scalar {:e} got {:e}", op, imp, i, w, g);
    }
    Ok(())
}

pub(crate) fn close_vec(
    op: &str,
    imp: Impl,
    want: &[f32],
    got: &[f32],
    tol: impl Fn(usize) -> f64,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(want.len(), got.len(), "{} {:?}: length", op, imp);
    for (i, (&w, &g)) in want.iter().zip(got).enumerate() {
        prop_assert!(close(w, g, tol(i)), "{} {:?}: [{}] scalar {:e} got {:e} tol {:e}", op, imp, i, w, g, tol(i));
    }
    Ok(())
}

pub(crate) fn close_one(op: &str, imp: Impl, want: f32, got: f32, tol: f64) -> Result<(), TestCaseError> {
    prop_assert!(close(want, got, tol), "{} {:?}: scalar {:e} got {:e} tol {:e}", op, imp, want, got, tol);
    Ok(())
}

pub(crate) fn abs_sum(terms: impl Iterator<Item = f32>) -> f64 {
    terms.map(|t| (t as f64).abs()).sum()
}

type Binary = fn(Impl, &[f32], &[f32]) -> Vec<f32>;
type Unary = fn(Impl, &[f32]) -> Vec<f32>;

/// The properties: each checks every implementation in `imps` against Scalar.
pub(crate) mod agree {
    use super::*;

    pub(crate) fn binary_elementwise_is_exact(imps: &[Impl], a: &[f32], b: &[f32]) -> Result<(), TestCaseError> {
        let ops: [(&str, Binary); 4] = [("add", Impl::add), ("sub", Impl::sub), ("mul", Impl::mul), ("div", Impl::div)];
        for (name, op) in ops {
            let want = op(Impl::Scalar, a, b);
            for &imp in imps {
                exact_vec(name, imp, &want, &op(imp, a, b))?;
            }
        }
        Ok(())
    }

    pub(crate) fn scale_is_exact(imps: &[Impl], a: &[f32], s: f32) -> Result<(), TestCaseError> {
        let want = Impl::Scalar.scale(a, s);
        for &imp in imps {
            exact_vec("scale", imp, &want, &imp.scale(a, s))?;
        }
        Ok(())
    }

    pub(crate) fn relu_is_exact(imps: &[Impl], a: &[f32]) -> Result<(), TestCaseError> {
        let want = Impl::Scalar.relu(a);
        for &imp in imps {
            exact_vec("relu", imp, &want, &imp.relu(a))?;
        }
        Ok(())
    }

    pub(crate) fn axpy_is_exact(imps: &[Impl], alpha: f32, x: &[f32], y: &[f32]) -> Result<(), TestCaseError> {
        let mut want = y.to_vec();
        Impl::Scalar.axpy(alpha, x, &mut want);
        for &imp in imps {
            let mut got = y.to_vec();
            imp.axpy(alpha, x, &mut got);
            exact_vec("axpy", imp, &want, &got)?;
        }
        Ok(())
    }

    pub(crate) fn exp_sigmoid_tanh_within_a_few_ulp(imps: &[Impl], a: &[f32]) -> Result<(), TestCaseError> {
        let ops: [(&str, Unary); 3] = [("exp", Impl::exp), ("sigmoid", Impl::sigmoid), ("tanh", Impl::tanh)];
        for (name, op) in ops {
            let want = op(Impl::Scalar, a);
            for &imp in imps {
                close_vec(name, imp, &want, &op(imp, a), |i| 1e-6 * (want[i] as f64).abs() + 1e-44)?;
            }
        }
        Ok(())
    }

    pub(crate) fn gelu_within_tanh_error(imps: &[Impl], a: &[f32]) -> Result<(), TestCaseError> {
        let want = Impl::Scalar.gelu(a);
        for &imp in imps {
            close_vec("gelu", imp, &want, &imp.gelu(a), |i| {
                1e-6 * (want[i] as f64).abs() + 1e-7 * (a[i] as f64).abs() + 1e-44
            })?;
        }
        Ok(())
    }

    pub(crate) fn softmax_within_relative_tolerance(imps: &[Impl], a: &[f32]) -> Result<(), TestCaseError> {
        let want = Impl::Scalar.softmax(a);
        let rel = 4e-6 + (a.len() as f64 + 8.0) * EPS;
        for &imp in imps {
            close_vec("softmax", imp, &want, &imp.softmax(a), |i| rel * (want[i] as f64).abs() + 1e-44)?;
        }
        Ok(())
    }

    pub(crate) fn sum_and_mean_within_summation_bound(imps: &[Impl], a: &[f32]) -> Result<(), TestCaseError> {
        let tol = sum_tol(a.len(), abs_sum(a.iter().copied()));
        let (sum, mean) = (Impl::Scalar.sum(a), Impl::Scalar.mean(a));
        for &imp in imps {
            close_one("sum", imp, sum, imp.sum(a), tol)?;
            close_one("mean", imp, mean, imp.mean(a), tol / a.len().max(1) as f64)?;
        }
        Ok(())
    }

    pub(crate) fn dot_within_summation_bound(imps: &[Impl], a: &[f32], b: &[f32]) -> Result<(), TestCaseError> {
        let tol = sum_tol(a.len(), abs_sum(a.iter().zip(b).map(|(x, y)| x * y)));
        let want = Impl::Scalar.dot(a, b);
        for &imp in imps {
            close_one("dot", imp, want, imp.dot(a, b), tol)?;
        }
        Ok(())
    }

    pub(crate) fn norm_l2_within_summation_bound(imps: &[Impl], a: &[f32]) -> Result<(), TestCaseError> {
        let want = Impl::Scalar.norm_l2(a);
        let tol = (a.len() as f64 + 10.0) * EPS * want as f64 + (a.len() as f64 * 3e-45).sqrt();
        for &imp in imps {
            close_one("norm_l2", imp, want, imp.norm_l2(a), tol)?;
        }
        Ok(())
    }

    pub(crate) fn max_and_min_are_exact(imps: &[Impl], a: &[f32]) -> Result<(), TestCaseError> {
        let (max, min) = (Impl::Scalar.max(a), Impl::Scalar.min(a));
        for &imp in imps {
            let (got_max, got_min) = (imp.max(a), imp.min(a));
            prop_assert!(
                max == got_max || (max.is_nan() && got_max.is_nan()),
                "max {:?}: scalar {} got {}",
                imp,
                max,
                got_max
            );
            prop_assert!(
                min == got_min || (min.is_nan() && got_min.is_nan()),
                "min {:?}: scalar {} got {}",
                imp,
                min,
                got_min
            );
        }
        Ok(())
    }

    pub(crate) fn matmul_within_summation_bound(
        imps: &[Impl],
        (a, b, m, n, k): (&[f32], &[f32], usize, usize, usize),
    ) -> Result<(), TestCaseError> {
        let want = Impl::Scalar.matmul(a, b, m, n, k);
        let tol = |idx: usize| {
            let (i, j) = (idx / n, idx % n);
            sum_tol(k, abs_sum((0..k).map(|p| a[i * k + p] * b[p * n + j])))
        };
        for &imp in imps {
            close_vec("matmul", imp, &want, &imp.matmul(a, b, m, n, k), tol)?;
        }
        Ok(())
    }

    pub(crate) fn matvec_within_summation_bound(
        imps: &[Impl],
        (a, x, m, n): (&[f32], &[f32], usize, usize),
    ) -> Result<(), TestCaseError> {
        let want = Impl::Scalar.matvec(a, x, m, n);
        let tol = |i: usize| sum_tol(n, abs_sum((0..n).map(|j| a[i * n + j] * x[j])));
        for &imp in imps {
            close_vec("matvec", imp, &want, &imp.matvec(a, x, m, n), tol)?;
        }
        Ok(())
    }

    pub(crate) fn transpose_is_exact(imps: &[Impl], a: &[f32], rows: usize, cols: usize) -> Result<(), TestCaseError> {
        let want = Impl::Scalar.transpose(a, rows, cols);
        for &imp in imps {
            exact_vec("transpose", imp, &want, &imp.transpose(a, rows, cols))?;
        }
        Ok(())
    }

    pub(crate) fn conv2d_is_exact(
        imps: &[Impl],
        (input, kernel, rows, cols, krows, kcols): (&[f32], &[f32], usize, usize, usize, usize),
    ) -> Result<(), TestCaseError> {
        let want = Impl::Scalar.conv2d(input, kernel, rows, cols, krows, kcols);
        for &imp in imps {
            exact_vec("conv2d", imp, &want, &imp.conv2d(input, kernel, rows, cols, krows, kcols))?;
        }
        Ok(())
    }
}

/// Each `_into` form against the returning form of the same op in the same
/// implementation: the same bits (NaN payloads included), written over an
/// `out` that held a stale value no op produces, so an element the `_into`
/// form left unwritten fails the property. Called twice on one buffer, the
/// second call overwrites the first's result.
pub(crate) mod twins {
    use super::*;

    /// A signalling NaN: arithmetic only ever makes quiet ones, and the inputs hold none.
    const STALE: u32 = 0x7FA5_A5A5;

    /// `into(out)` on a stale `out` of `want`'s length, twice, against `want`.
    fn check(op: &str, imp: Impl, want: &[f32], into: impl Fn(&mut [f32])) -> Result<(), TestCaseError> {
        let mut out = vec![f32::from_bits(STALE); want.len()];
        for call in ["first", "second"] {
            into(&mut out);
            for (i, (w, g)) in want.iter().zip(&out).enumerate() {
                prop_assert!(
                    w.to_bits() == g.to_bits(),
                    "{} {:?} ({} call): [{}] returning form {:e} ({:#x}), _into {:e} ({:#x})",
                    op,
                    imp,
                    call,
                    i,
                    w,
                    w.to_bits(),
                    g,
                    g.to_bits()
                );
            }
        }
        Ok(())
    }

    /// `add` … `softmax` on `a` (and `b`, `s`).
    pub(crate) fn elementwise(imps: &[Impl], a: &[f32], b: &[f32], s: f32) -> Result<(), TestCaseError> {
        stream(imps, a, b, s)?;
        transcendental(imps, a)
    }

    /// The memory-bound element-wise ops: `add`, `sub`, `mul`, `div`, `scale`, `relu`.
    pub(crate) fn stream(imps: &[Impl], a: &[f32], b: &[f32], s: f32) -> Result<(), TestCaseError> {
        for &imp in imps {
            check("add", imp, &imp.add(a, b), |o| imp.add_into(a, b, o))?;
            check("sub", imp, &imp.sub(a, b), |o| imp.sub_into(a, b, o))?;
            check("mul", imp, &imp.mul(a, b), |o| imp.mul_into(a, b, o))?;
            check("div", imp, &imp.div(a, b), |o| imp.div_into(a, b, o))?;
            check("scale", imp, &imp.scale(a, s), |o| imp.scale_into(a, s, o))?;
            check("relu", imp, &imp.relu(a), |o| imp.relu_into(a, o))?;
        }
        Ok(())
    }

    /// `exp`, `sigmoid`, `tanh`, `gelu`, `softmax`.
    pub(crate) fn transcendental(imps: &[Impl], a: &[f32]) -> Result<(), TestCaseError> {
        for &imp in imps {
            check("exp", imp, &imp.exp(a), |o| imp.exp_into(a, o))?;
            check("sigmoid", imp, &imp.sigmoid(a), |o| imp.sigmoid_into(a, o))?;
            check("tanh", imp, &imp.tanh(a), |o| imp.tanh_into(a, o))?;
            check("gelu", imp, &imp.gelu(a), |o| imp.gelu_into(a, o))?;
            check("softmax", imp, &imp.softmax(a), |o| imp.softmax_into(a, o))?;
        }
        Ok(())
    }

    pub(crate) fn matmul(
        imps: &[Impl],
        (a, b, m, n, k): (&[f32], &[f32], usize, usize, usize),
    ) -> Result<(), TestCaseError> {
        for &imp in imps {
            check("matmul", imp, &imp.matmul(a, b, m, n, k), |o| imp.matmul_into(a, b, m, n, k, o))?;
        }
        Ok(())
    }

    pub(crate) fn matvec(imps: &[Impl], (a, x, m, n): (&[f32], &[f32], usize, usize)) -> Result<(), TestCaseError> {
        for &imp in imps {
            check("matvec", imp, &imp.matvec(a, x, m, n), |o| imp.matvec_into(a, x, m, n, o))?;
        }
        Ok(())
    }

    pub(crate) fn transpose(imps: &[Impl], a: &[f32], rows: usize, cols: usize) -> Result<(), TestCaseError> {
        for &imp in imps {
            check("transpose", imp, &imp.transpose(a, rows, cols), |o| imp.transpose_into(a, rows, cols, o))?;
        }
        Ok(())
    }

    pub(crate) fn conv2d(
        imps: &[Impl],
        (input, kernel, rows, cols, krows, kcols): (&[f32], &[f32], usize, usize, usize, usize),
    ) -> Result<(), TestCaseError> {
        for &imp in imps {
            let want = imp.conv2d(input, kernel, rows, cols, krows, kcols);
            check("conv2d", imp, &want, |o| imp.conv2d_into(input, kernel, rows, cols, krows, kcols, o))?;
        }
        Ok(())
    }
}

/// Matrix dimensions that reach each of trueno's GEMM paths: tiny (its
/// reference loop), multiples of 8 up to 128 (its direct kernels), odd sizes,
/// and one dimension past 256 (its blocked BLIS path).
pub(crate) fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 0usize..=20, 2 => (1usize..=16).prop_map(|d| d * 8), 1 => 100usize..=140, 1 => 250usize..=300]
}

/// (m, n, k) with m·n·k ≤ 300,000 and at most 12,000 elements per operand,
/// so generating inputs and running Scalar stay quick in debug builds.
pub(crate) fn mnk() -> impl Strategy<Value = (usize, usize, usize)> {
    (dim(), dim(), dim())
        .prop_filter("debug-build budget", |&(m, n, k)| m * n * k <= 300_000 && m * k <= 12_000 && k * n <= 12_000)
}

/// (rows, cols) with at most 12,000 elements.
pub(crate) fn rc() -> impl Strategy<Value = (usize, usize)> {
    (dim(), dim()).prop_filter("debug-build budget", |&(r, c)| r * c <= 12_000)
}

/// A matmul case: (a, b, m, n, k) with shapes from [`mnk`].
pub(crate) fn matmul_case() -> impl Strategy<Value = (Vec<f32>, Vec<f32>, usize, usize, usize)> {
    mnk().prop_flat_map(|(m, n, k)| (vector(m * k, 16), vector(k * n, 16), Just(m), Just(n), Just(k)))
}

/// A matvec case: (a, x, m, n) with shapes from [`rc`].
pub(crate) fn matvec_case() -> impl Strategy<Value = (Vec<f32>, Vec<f32>, usize, usize)> {
    rc().prop_flat_map(|(m, n)| (vector(m * n, 16), vector(n, 16), Just(m), Just(n)))
}

/// A transpose case: (a, rows, cols) with shapes from [`rc`].
pub(crate) fn transpose_case() -> impl Strategy<Value = (Vec<f32>, usize, usize)> {
    rc().prop_flat_map(|(r, c)| (vector(r * c, 37), Just(r), Just(c)))
}

/// A conv2d case: (input, kernel, rows, cols, krows, kcols), inputs up to
/// 40×70 (empty included), kernels 1×1 to 6×6 (larger than the input included).
pub(crate) fn conv2d_case() -> impl Strategy<Value = (Vec<f32>, Vec<f32>, usize, usize, usize, usize)> {
    (0usize..=40, 0usize..=70, 1usize..=6, 1usize..=6)
        .prop_flat_map(|(r, c, kr, kc)| (vector(r * c, 16), vector(kr * kc, 16), Just(r), Just(c), Just(kr), Just(kc)))
}

/// The message of the panic `f` raises, or `None`.
pub(crate) fn panic_message(f: impl FnOnce()) -> Option<String> {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).err()?;
    Some(
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    )
}

/// `call` panics in Scalar, and with the same message in every implementation of `imps`.
pub(crate) fn same_panic(imps: &[Impl], op: &str, call: impl Fn(Impl)) -> Result<(), TestCaseError> {
    let want = panic_message(|| call(Impl::Scalar));
    prop_assert!(want.is_some(), "{}: Scalar did not panic", op);
    for &imp in imps {
        prop_assert_eq!(&want, &panic_message(|| call(imp)), "{} {:?}", op, imp);
    }
    Ok(())
}

/// A length that is not `right`.
pub(crate) fn wrong(right: usize) -> impl Strategy<Value = usize> {
    (0usize..=2 * right + 3).prop_filter("must differ", move |&l| l != right)
}

/// The shape-mismatch properties, over `imps`.
pub(crate) mod mismatch {
    use super::*;

    /// Element-wise ops and `dot` with lengths `la` ≠ `lb`.
    pub(crate) fn lengths_panic_like_scalar(imps: &[Impl], la: usize, lb: usize) -> Result<(), TestCaseError> {
        let (a, b) = (vec![1.0f32; la], vec![2.0f32; lb]);
        let ops: [(&str, Binary); 4] = [("add", Impl::add), ("sub", Impl::sub), ("mul", Impl::mul), ("div", Impl::div)];
        for (name, op) in ops {
            same_panic(imps, name, |imp| {
                op(imp, &a, &b);
            })?;
        }
        same_panic(imps, "dot", |imp| {
            imp.dot(&a, &b);
        })?;
        same_panic(imps, "axpy", |imp| imp.axpy(2.0, &a, &mut b.clone()))
    }

    /// Matrix ops with one operand `extra` elements off (`which` picks it).
    pub(crate) fn matrix_shapes_panic_like_scalar(
        imps: &[Impl],
        (m, n, k): (usize, usize, usize),
        which: usize,
        extra: usize,
    ) -> Result<(), TestCaseError> {
        // One operand `extra` elements too long or too short (when it can be).
        let off = |right: usize, bad: bool| {
            if !bad {
                right
            } else if right >= extra && extra.is_multiple_of(2) {
                right - extra
            } else {
                right + extra
            }
        };
        let a = vec![1.0f32; off(m * k, which == 0)];
        let b = vec![1.0f32; off(k * n, which != 0)];
        same_panic(imps, "matmul", |imp| {
            imp.matmul(&a, &b, m, n, k);
        })?;
        let a = vec![1.0f32; off(m * n, which == 0)];
        let x = vec![1.0f32; off(n, which != 0)];
        same_panic(imps, "matvec", |imp| {
            imp.matvec(&a, &x, m, n);
        })?;
        let t = vec![1.0f32; off(m * n, true)];
        same_panic(imps, "transpose", |imp| {
            imp.transpose(&t, m, n);
        })?;
        let (krows, kcols) = (k.max(1), (n % 3).max(1));
        let input = vec![1.0f32; off(m * n, which == 0)];
        let kernel = vec![1.0f32; off(krows * kcols, which != 0)];
        same_panic(imps, "conv2d", |imp| {
            imp.conv2d(&input, &kernel, m, n, krows, kcols);
        })
    }

    /// Every `_into` op with valid inputs (element-wise on `n` elements, matrices
    /// from `(m, n, k)`) and an `out` of `extra` elements more, or fewer where it
    /// can: Scalar panics naming the op and both lengths, and every
    /// implementation panics with Scalar's message.
    pub(crate) fn wrong_out_lengths_panic_like_scalar(
        imps: &[Impl],
        (m, n, k): (usize, usize, usize),
        extra: usize,
        shorter: bool,
    ) -> Result<(), TestCaseError> {
        let wrong = |right: usize| if shorter && right >= extra { right - extra } else { right + extra };
        let (a, b) = (vec![1.0f32; n], vec![2.0f32; n]);
        type Into<'a> = Box<dyn Fn(Impl, &mut [f32]) + 'a>;
        let (am, bm, x) = (vec![1.0f32; m * k], vec![1.0f32; k * n], vec![1.0f32; k]);
        let (krows, kcols) = ((k % 3).max(1), (n % 2).max(1));
        let (input, kernel) = (vec![1.0f32; m * n], vec![1.0f32; krows * kcols]);
        let conv_len = if krows > m || kcols > n { 0 } else { (m - krows + 1) * (n - kcols + 1) };
        let cases: Vec<(&str, usize, Into<'_>)> = vec![
            ("add", n, Box::new(|imp, o| imp.add_into(&a, &b, o))),
            ("sub", n, Box::new(|imp, o| imp.sub_into(&a, &b, o))),
            ("mul", n, Box::new(|imp, o| imp.mul_into(&a, &b, o))),
            ("div", n, Box::new(|imp, o| imp.div_into(&a, &b, o))),
            ("scale", n, Box::new(|imp, o| imp.scale_into(&a, 3.0, o))),
            ("relu", n, Box::new(|imp, o| imp.relu_into(&a, o))),
            ("exp", n, Box::new(|imp, o| imp.exp_into(&a, o))),
            ("sigmoid", n, Box::new(|imp, o| imp.sigmoid_into(&a, o))),
            ("tanh", n, Box::new(|imp, o| imp.tanh_into(&a, o))),
            ("gelu", n, Box::new(|imp, o| imp.gelu_into(&a, o))),
            ("softmax", n, Box::new(|imp, o| imp.softmax_into(&a, o))),
            ("matmul", m * n, Box::new(|imp, o| imp.matmul_into(&am, &bm, m, n, k, o))),
            ("matvec", m, Box::new(|imp, o| imp.matvec_into(&am, &x, m, k, o))),
            ("transpose", m * k, Box::new(|imp, o| imp.transpose_into(&am, m, k, o))),
            ("conv2d", conv_len, Box::new(|imp, o| imp.conv2d_into(&input, &kernel, m, n, krows, kcols, o))),
        ];
        for (op, right, call) in &cases {
            let len = wrong(*right);
            let want = panic_message(|| call(Impl::Scalar, &mut vec![0.0; len]));
            let msg = want.as_deref().unwrap_or_default();
            prop_assert!(
                want.is_some(),
                "{}: Scalar did not panic on an out of {} elements ({} right)",
                op,
                len,
                right
            );
            prop_assert!(
                msg.starts_with(&format!("{op}: "))
                    && msg.contains(&len.to_string())
                    && msg.contains(&right.to_string()),
                "{}: the message must name the op and both lengths ({} passed, {} right): {}",
                op,
                len,
                right,
                msg
            );
            for &imp in imps {
                prop_assert_eq!(&want, &panic_message(|| call(imp, &mut vec![0.0; len])), "{} {:?}", op, imp);
            }
        }
        Ok(())
    }

    /// An empty `conv2d` kernel and shapes whose element counts overflow.
    pub(crate) fn degenerate_shapes_panic_like_scalar(imps: &[Impl]) {
        type Call = Box<dyn Fn(Impl)>;
        let cases: [(&str, Call); 4] = [
            (
                "conv2d with a 0×3 kernel",
                Box::new(|imp| {
                    imp.conv2d(&[1.0; 9], &[], 3, 3, 0, 3);
                }),
            ),
            (
                "matmul with m·k overflowing",
                Box::new(|imp| {
                    imp.matmul(&[], &[], usize::MAX / 2 + 1, 1, 2);
                }),
            ),
            (
                "matmul with m·n overflowing",
                Box::new(|imp| {
                    imp.matmul(&[], &[], usize::MAX / 2 + 1, 2, 0);
                }),
            ),
            (
                "transpose with rows·cols overflowing",
                Box::new(|imp| {
                    imp.transpose(&[], usize::MAX, 3);
                }),
            ),
        ];
        for (what, call) in cases {
            let want = panic_message(|| call(Impl::Scalar)).unwrap_or_else(|| panic!("{what}: Scalar did not panic"));
            for &imp in imps {
                assert_eq!(panic_message(|| call(imp)).as_deref(), Some(want.as_str()), "{what}: {imp:?}");
            }
        }
    }
}

/// `n` values drawn like [`vector`]'s, from a seed instead of one draw per
/// element, so inputs of hundreds of thousands of elements (several chunks
/// of `ops::par`) stay cheap in debug builds: per element one of the classes
/// of [`finite`] with its weights (8 small, 4 medium, 6 log-uniform, 1 zero,
/// 1 negative zero); in one vector of five, one or two ±∞ or NaN.
pub(crate) fn big_vector(n: usize, max_exp: i32) -> impl Strategy<Value = Vec<f32>> {
    (any::<u64>(), proptest::bool::weighted(0.2), proptest::collection::vec((any::<Index>(), special()), 1..=2))
        .prop_map(move |(seed, inject, specials)| {
            let mut v = seeded_vector(n, max_exp, seed);
            if inject && n > 0 {
                for (i, sp) in specials {
                    v[i.index(n)] = sp;
                }
            }
            v
        })
}

/// [`big_vector`]'s finite values for one `seed`, for tests that pick their own inputs.
pub(crate) fn seeded_vector(n: usize, max_exp: i32, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let unit = |r: u64| (r >> 11) as f64 / (1u64 << 53) as f64;
    (0..n)
        .map(|_| {
            let (class, r) = (next() % 20, unit(next()));
            match class {
                0..=7 => (r * 8.0 - 4.0) as f32,
                8..=11 => (r * 200.0 - 100.0) as f32,
                12..=17 => {
                    let e = -45 + (next() % (max_exp + 46) as u64) as i32;
                    let v = ((1.0 + 9.0 * r) * 10f64.powi(e)) as f32;
                    if next() % 2 == 0 {
                        v
                    } else {
                        -v
                    }
                }
                18 => 0.0,
                _ => -0.0,
            }
        })
        .collect()
}
