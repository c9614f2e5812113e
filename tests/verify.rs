//! `verify`: a variant whose result disagrees with the Scalar variant's is
//! excluded from that size bucket, reported once, and stays excluded after a
//! restart; where it agrees it is routed as usual.
//!
//! Each run is a child process (this test binary again, on the ignored `child`
//! entry point), because the history file is chosen once per process.

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use adaptive_kernel::{adaptive_kernel, Backend};
use common::*;

/// Sizes above this get a wrong answer from the hand-written SIMD variant.
const WRONG_ABOVE: usize = 3_000;
const SMALL: usize = 1_000;
const BIG: usize = 8_000;
/// Calls of the SIMD variant above [`WRONG_ABOVE`] in this process.
static WRONG_CALLS: AtomicUsize = AtomicUsize::new(0);

/// A fast SIMD variant that is wrong above [`WRONG_ABOVE`] elements.
fn fast_but_wrong(x: &[f32]) -> f32 {
    let s: f32 = x.iter().map(|v| v * v).sum();
    if x.len() > WRONG_ABOVE {
        WRONG_CALLS.fetch_add(1, Ordering::Relaxed);
        s * 1.5 + 1.0
    } else {
        s
    }
}

/// The sum of squares, written slowly so the SIMD variant wins wherever it is allowed.
/// `serial`: no Parallel variant, so that only Scalar and the wrong SIMD variant compete
/// (`tests/split_routing.rs` checks `verify` against a split loop's Parallel variant).
#[adaptive_kernel(complexity = "Medium", simd = fast_but_wrong, verify = true, serial, name = "verify::sum_sq")]
pub fn sum_sq(x: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for v in x {
        for _ in 0..20 {
            std::hint::black_box(v);
        }
        acc += v * v;
    }
    acc
}

/// The same kernel without the key: checked only under `ADAPTIVE_KERNEL_MODE=verify`.
#[adaptive_kernel(complexity = "Medium", simd = fast_but_wrong, name = "verify::sum_sq_by_mode")]
pub fn sum_sq_by_mode(x: &[f32]) -> f32 {
    sum_sq::scalar(x)
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 10) as f32 * 0.1).collect()
}

/// Calls `sum_sq` at `n` until its bucket settles; every result must be Scalar's.
fn settle(n: usize) {
    let x = input(n);
    let right = sum_sq::scalar(&x);
    for _ in 0..2_000 {
        let got = sum_sq(&x);
        assert!((got - right).abs() <= 1e-3 * right, "size {n}: {got} returned, {right} is right");
        if settled(&sum_sq::KERNEL, n).is_some() {
            return;
        }
    }
    panic!("size {n} never settled: {}", sum_sq::KERNEL.table());
}

fn excluded(n: usize) -> Vec<Backend> {
    sum_sq::KERNEL.table().row_for(n).map(|r| r.excluded.clone()).unwrap_or_default()
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    match child_role().expect("run by run_child").as_str() {
        "learn" => {
            settle(SMALL);
            settle(BIG);
            assert_eq!(settled(&sum_sq::KERNEL, SMALL), Some(Backend::Simd), "{}", sum_sq::KERNEL.table());
            assert_eq!(settled(&sum_sq::KERNEL, BIG), Some(Backend::Scalar), "{}", sum_sq::KERNEL.table());
            assert_eq!((excluded(SMALL), excluded(BIG)), (vec![], vec![Backend::Simd]));
            assert!(WRONG_CALLS.load(Ordering::Relaxed) > 0, "the wrong variant was tried");
            adaptive_kernel::flush().unwrap();
        }
        "restart" => {
            assert_eq!(excluded(BIG), [Backend::Simd], "loaded with the history");
            let x = input(BIG);
            let right = sum_sq::scalar(&x);
            for _ in 0..3_000 {
                assert_eq!(sum_sq(&x), right);
            }
            assert_eq!(WRONG_CALLS.load(Ordering::Relaxed), 0, "an excluded variant is never called again");
            assert_eq!(settled(&sum_sq::KERNEL, BIG), Some(Backend::Scalar));
            settle(SMALL);
            assert_eq!(settled(&sum_sq::KERNEL, SMALL), Some(Backend::Simd), "{}", sum_sq::KERNEL.table());
        }
        "by_mode" => {
            let x = input(BIG);
            for _ in 0..2_000 {
                sum_sq_by_mode(&x);
            }
            let row = sum_sq_by_mode::KERNEL.table().row_for(BIG).cloned().expect("called");
            println!("BY_MODE chosen={:?} excluded={:?}", row.chosen, row.excluded);
        }
        other => panic!("unknown role {other}"),
    }
}

fn run(role: &str, file: &Path) -> String {
    let env = [("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()), ("ADAPTIVE_KERNEL_GPU", "off")];
    let (ok, out) = run_child("child", role, &env);
    assert!(ok, "child {role} failed:\n{out}");
    out
}

#[test]
fn a_wrong_variant_is_excluded_where_it_is_wrong_reported_once_and_stays_excluded() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let first = run("learn", &file);
    let reports: Vec<&str> = first.lines().filter(|l| l.contains("verify: the")).collect();
    assert_eq!(reports.len(), 1, "reported once:\n{first}");
    let r = reports[0];
    assert!(r.contains("verify::sum_sq") && r.contains("SIMD") && r.contains(&format!("size {BIG}")), "{r}");
    assert!(r.contains("differs from Scalar's by up to"), "{r}");

    let history: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let machine = history["machines"].as_object().unwrap().values().next().unwrap();
    let buckets = machine["kernels"]["verify::sum_sq"]["buckets"].as_array().unwrap();
    let big = buckets
        .iter()
        .find(|b| b["sizes"][0].as_u64().unwrap() <= BIG as u64 && b["sizes"][1].as_u64().unwrap() >= BIG as u64)
        .unwrap();
    assert_eq!(big["excluded"][0]["backend"], "Simd", "{big}");
    assert!(big["excluded"][0]["largest_error"].as_f64().unwrap() > 1.0, "{big}");

    let second = run("restart", &file);
    assert!(!second.contains("verify: the"), "nothing new to report:\n{second}");
}

#[test]
fn the_verify_mode_checks_kernels_without_the_key_and_learn_mode_does_not() {
    let off = [("ADAPTIVE_KERNEL_HISTORY", "off"), ("ADAPTIVE_KERNEL_GPU", "off")];
    let (ok, verify) = run_child("child", "by_mode", &[off[0], off[1], ("ADAPTIVE_KERNEL_MODE", "verify")]);
    assert!(ok, "{verify}");
    assert!(verify.contains("BY_MODE chosen=Some(Scalar) excluded=[Simd]"), "{verify}");
    assert_eq!(verify.matches("verify::sum_sq_by_mode: verify: the SIMD variant").count(), 1, "{verify}");
    let (ok, learn) = run_child("child", "by_mode", &off);
    assert!(ok, "{learn}");
    // Without verification the fast, wrong variant wins: what `verify` exists to prevent.
    assert!(learn.contains("BY_MODE chosen=Some(Simd) excluded=[]"), "{learn}");
}

/// Calls of [`axpy_fused`], the fused variant.
static FUSED_CALLS: AtomicUsize = AtomicUsize::new(0);

/// `alpha·x + y`, element by element: the Scalar variant rounds the product, then the sum.
#[adaptive_kernel(complexity = "Low", simd = axpy_fused, verify = true, serial, name = "verify::axpy")]
pub fn axpy(alpha: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(&x, &y)| alpha * x + y).collect()
}

/// A device that fuses the multiply-add into one rounding, as NVIDIA's shader compiler does.
fn axpy_fused(alpha: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    FUSED_CALLS.fetch_add(1, Ordering::Relaxed);
    x.iter().zip(y).map(|(&x, &y)| alpha.mul_add(x, y)).collect()
}

/// The same kernel whose other variant returns 0 for an infinity: 0 where Scalar's result
/// is NaN, a dropped NaN that fusion cannot explain.
#[adaptive_kernel(complexity = "Low", simd = axpy_dropping_nan, verify = true, serial, name = "verify::axpy_nan")]
pub fn axpy_nan(alpha: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    axpy::scalar(alpha, x, y)
}

fn axpy_dropping_nan(alpha: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    axpy_fused(alpha, x, y).into_iter().map(|v| if v.is_infinite() { 0.0 } else { v }).collect()
}

/// `alpha·x` overflows on its own for the first two elements: beside `y = +∞` Scalar gives
/// NaN and the fused variant +∞; beside `y = −3e38` Scalar gives +∞ and the fused variant 1e38.
fn overflowing_products() -> (f32, Vec<f32>, Vec<f32>) {
    let mut x: Vec<f32> = (0..2_000).map(|i| (i % 13) as f32 * 0.25).collect();
    let mut y: Vec<f32> = (0..2_000).map(|i| (i % 7) as f32 - 3.0).collect();
    (x[0], y[0], x[1], y[1]) = (-1e20, f32::INFINITY, 4e18, -3e38);
    (1e20, x, y)
}

#[test]
fn a_variant_that_fuses_multiply_adds_is_not_excluded_and_one_dropping_nan_is() {
    common::no_history();
    let (alpha, x, y) = overflowing_products();
    let scalar = axpy::scalar(alpha, &x, &y);
    let fused = axpy_fused(alpha, &x, &y);
    assert!(scalar[0].is_nan() && fused[0] == f32::INFINITY, "{} {}", scalar[0], fused[0]);
    assert!(scalar[1] == f32::INFINITY && fused[1] == 1e38, "{} {}", scalar[1], fused[1]);
    // The size a call is routed by: the elements of its slices.
    let size = x.len() + y.len();
    let calls_before = FUSED_CALLS.load(Ordering::Relaxed);
    for _ in 0..2_000 {
        axpy(alpha, &x, &y);
        axpy_nan(alpha, &x, &y);
        if settled(&axpy::KERNEL, size).is_some() && settled(&axpy_nan::KERNEL, size).is_some() {
            break;
        }
    }
    let row = |k: &'static adaptive_kernel::Kernel| k.table().row_for(size).cloned().expect("called");
    assert!(FUSED_CALLS.load(Ordering::Relaxed) > calls_before + 1, "the fused variant was never tried");
    assert_eq!(row(&axpy::KERNEL).excluded, [], "fusion excluded:\n{}", axpy::KERNEL.table());
    assert_eq!(row(&axpy_nan::KERNEL).excluded, [Backend::Simd], "a dropped NaN passed:\n{}", axpy_nan::KERNEL.table());
}
