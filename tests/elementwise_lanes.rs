//! Element-wise index loops the SIMD variant runs a chunk at a time (the
//! `reduce` module's element-wise rewrite) compute what the Scalar variant
//! computes, bit for bit, and panic where it panics, with the same message and
//! the same elements written before the panic: the programs bench's 3×3 blur
//! (`benches/programs/blur.rs`: its interior loop inside its rows loop),
//! `y = a·x + y` in place, an `f64` stencil over an arbitrary range, a clamp
//! with branches, a local and a `continue` guard, a 2-D gradient
//! `out[r * w + c]`, an edge-guarded blur whose first chunk of each row is not
//! available, a top-level loop the Parallel variant also splits, and one into a scratch
//! `vec![0.0; n]` whose element type the macro cannot name.
//!
//! Lengths cover empty ranges, ranges starting at 1 or later, every remainder
//! of the chunk sizes (64, 16 and 4 elements), NaN, ±∞ and magnitudes from
//! 1e-20 to 1e20. Each kernel's `KERNEL.spec().loops`
//! is checked to say "rewritten", so the comparisons are between two
//! different codes, not one body with itself.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use adaptive_kernel::ops::par::with_threads;
use adaptive_kernel::{adaptive_kernel, Backend, LoopRewrite};
use proptest::prelude::*;

#[path = "../benches/common/mod.rs"]
mod common;
#[path = "../benches/programs/mod.rs"]
mod programs;

/// The 3×3 box blur of the programs bench, annotated.
use programs::blur::annotated::box_blur;

// ---- kernels ------------------------------------------------------------------------------------

const FIRST_LINE: u32 = line!();

/// `y = a·x + y`, in place, by index: reads the element it writes.
#[adaptive_kernel(complexity = "Low")]
#[allow(clippy::assign_op_pattern)]
fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    for i in 0..y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// A 3-point stencil over `from..to`, which the caller may get wrong.
#[adaptive_kernel(complexity = "Low", size = x.len())]
fn stencil(x: &[f64], y: &mut [f64], from: usize, to: usize) {
    for i in from..to {
        y[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1];
    }
}

/// Clamp into `lo..=hi`, NaN skipped, blended with what `out` held.
#[adaptive_kernel(complexity = "Low")]
fn clamp_blend(x: &[f32], lo: f32, hi: f32, out: &mut [f32]) {
    for i in 0..out.len() {
        if x[i].is_nan() {
            continue;
        }
        let mut v = x[i];
        if v < lo {
            v = lo;
        } else if v > hi {
            v = hi;
        }
        out[i] = v * 2.0 - out[i];
    }
}

/// The horizontal gradient of an image, `out[r * w + c] = img[r * w + c + 1] - img[r * w + c]`.
#[adaptive_kernel(complexity = "Medium", size = img.len())]
fn gradient_x(img: &[f32], out: &mut [f32], w: usize, h: usize) {
    for r in 0..h {
        for c in 0..w - 1 {
            out[r * w + c] = img[r * w + c + 1] - img[r * w + c];
        }
    }
}

/// A horizontal 3-tap blur whose edge pixels repeat: `src[c - 1]` only where `c > 0`.
#[adaptive_kernel(complexity = "Medium", size = img.len())]
fn edge_blur(img: &[f32], out: &mut [f32], w: usize) {
    for (r, row) in out.chunks_mut(w).enumerate() {
        let src = &img[r * w..(r + 1) * w];
        for c in 0..row.len() {
            let left = if c > 0 { src[c - 1] } else { src[c] };
            let right = if c + 1 < w { src[c + 1] } else { src[c] };
            row[c] = (left + src[c] + right) / 3.0;
        }
    }
}

/// A top-level loop: split across threads in Parallel, in lanes in each chunk.
#[adaptive_kernel(complexity = "Low")]
fn scale_shift(a: &[f32], out: &mut [f32], s: f32) {
    for i in 0..out.len() {
        out[i] = a[i] * s + 1.0;
    }
}

/// Into a scratch buffer of `vec![0.0; n]`, whose elements' width inference decides: its
/// windows run without the closure that takes the others as parameters.
#[adaptive_kernel(complexity = "Low")]
fn through_scratch(a: &[f32], out: &mut [f32]) {
    let mut tmp = vec![0.0; a.len()];
    for i in 0..a.len() {
        tmp[i] = a[i] * 2.0 + 1.0;
    }
    out.copy_from_slice(&tmp);
}

const LAST_LINE: u32 = line!();

// ---- the reports --------------------------------------------------------------------------------

fn in_lanes(kernel: &str, loops: &[LoopRewrite], variants: &[Backend]) {
    let got: Vec<(&str, &[Backend], &str)> = loops.iter().map(|l| (l.idiom, l.variants, l.reason)).collect();
    assert_eq!(got, [("for range =", variants, "")], "{kernel}");
    let here = kernel != "box_blur";
    assert!(!here || loops.iter().all(|l| (FIRST_LINE..LAST_LINE).contains(&l.line)), "{loops:?}");
}

#[test]
fn every_loop_is_reported_in_lanes() {
    const BOTH: &[Backend] = &[Backend::Simd, Backend::Parallel];
    // The blur's rows loop and the edge blur's are split; their interiors run in lanes in each chunk too.
    in_lanes("box_blur", box_blur::KERNEL.spec().loops, BOTH);
    in_lanes("edge_blur", edge_blur::KERNEL.spec().loops, BOTH);
    in_lanes("scale_shift", scale_shift::KERNEL.spec().loops, BOTH);
    // Its rows loop writes `out[r * w + c]` for `c` in `0..w - 1`, an offset proved below `w`: split too.
    in_lanes("gradient_x", gradient_x::KERNEL.spec().loops, BOTH);
    in_lanes("axpy", axpy::KERNEL.spec().loops, BOTH);
    in_lanes("clamp_blend", clamp_blend::KERNEL.spec().loops, BOTH);
    in_lanes("stencil", stencil::KERNEL.spec().loops, BOTH);
    // A loop into the kernel's own buffer is not split: it runs in lanes in the SIMD variant.
    in_lanes("through_scratch", through_scratch::KERNEL.spec().loops, &[Backend::Simd]);
}

// ---- outcomes -----------------------------------------------------------------------------------

/// What a call did: its panic message, if it panicked, and the output's bits afterwards.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    panic: Option<String>,
    out: Vec<u64>,
}

fn outcome<T: Copy>(mut out: Vec<T>, bits: fn(T) -> u64, f: impl FnOnce(&mut [T])) -> Outcome {
    let caught = catch_unwind(AssertUnwindSafe(|| f(&mut out)));
    let panic = caught.err().map(|e| match e.downcast::<String>() {
        Ok(s) => *s,
        Err(e) => e.downcast::<&str>().map(|s| s.to_string()).unwrap_or_default(),
    });
    Outcome { panic, out: out.into_iter().map(bits).collect() }
}

fn bits32(v: f32) -> u64 {
    u64::from(v.to_bits())
}

fn bits64(v: f64) -> u64 {
    v.to_bits()
}

#[test]
fn out_of_bounds_panics_as_written_with_the_same_elements_written() {
    let x: Vec<f64> = (0..100).map(|i| i as f64 * 0.5).collect();
    let run = |f: fn(&[f64], &mut [f64], usize, usize), from, to, len| {
        outcome(vec![7.0; len], bits64, |y| f(&x, y, from, to))
    };
    // `x[i + 1]` past the end at i = 99, after 98 elements written by chunks and as written.
    let scalar = run(stencil::scalar, 1, 100, 100);
    assert!(scalar.panic.as_deref().is_some_and(|m| m.contains("the len is 100 but the index is 100")), "{scalar:?}");
    assert_eq!(run(stencil::simd, 1, 100, 100), scalar);
    // `y[i]` past the end at 40 (x is longer): the written chunk is refused, the rest as written.
    let scalar = run(stencil::scalar, 1, 60, 40);
    assert!(scalar.panic.as_deref().is_some_and(|m| m.contains("the len is 40 but the index is 40")), "{scalar:?}");
    assert_eq!(run(stencil::simd, 1, 60, 40), scalar);
    // `i - 1` at i = 0: the overflow of the expression as written (a debug build's panic).
    let scalar = run(stencil::scalar, 0, 50, 100);
    assert!(scalar.panic.is_some(), "{scalar:?}");
    assert_eq!(run(stencil::simd, 0, 50, 100), scalar);
    // `x` shorter than `y` in place.
    let xs = vec![1.0f32; 37];
    let scalar = outcome(vec![2.0f32; 64], bits32, |y| axpy::scalar(3.0, &xs, y));
    assert!(scalar.panic.as_deref().is_some_and(|m| m.contains("the len is 37 but the index is 37")), "{scalar:?}");
    assert_eq!(outcome(vec![2.0f32; 64], bits32, |y| axpy::simd(3.0, &xs, y)), scalar);
}

#[test]
fn empty_and_reversed_ranges_run_nothing() {
    let x = vec![1.0f64; 10];
    for (from, to) in [(5, 5), (5, 3), (1, 1), (9, 2)] {
        let simd = outcome(vec![0.5; 10], bits64, |y| stencil::simd(&x, y, from, to));
        assert_eq!(simd, outcome(vec![0.5; 10], bits64, |y| stencil::scalar(&x, y, from, to)));
        assert_eq!(simd, outcome(vec![0.5; 10], bits64, |_| {}));
    }
}

#[test]
fn routed_calls_agree_with_the_scalar_variant() {
    // The router may run any variant: each is Scalar's, bit for bit.
    let (w, h) = (67, 9);
    let img: Vec<f32> = (0..w * h).map(|i| ((i * 37) % 101) as f32 * 0.01 - 0.5).collect();
    let same = |f: &dyn Fn(&mut [f32]), g: &dyn Fn(&mut [f32])| {
        let (mut a, mut b) = (vec![0.25f32; w * h], vec![0.25f32; w * h]);
        f(&mut a);
        g(&mut b);
        assert!(same_bits(&a, &b));
    };
    same(&|o| box_blur(&img, o, w), &|o| box_blur::scalar(&img, o, w));
    same(&|o| edge_blur(&img, o, w), &|o| edge_blur::scalar(&img, o, w));
    same(&|o| gradient_x(&img, o, w, h), &|o| gradient_x::scalar(&img, o, w, h));
    same(&|o| axpy(0.5, &img, o), &|o| axpy::scalar(0.5, &img, o));
    same(&|o| clamp_blend(&img, -0.2, 0.3, o), &|o| clamp_blend::scalar(&img, -0.2, 0.3, o));
    same(&|o| scale_shift(&img, o, 3.0), &|o| scale_shift::scalar(&img, o, 3.0));
    same(&|o| through_scratch(&img, o), &|o| through_scratch::scalar(&img, o));
    let x: Vec<f64> = img.iter().map(|&v| f64::from(v)).collect();
    let (mut a, mut b) = (vec![0.0; x.len()], vec![0.0; x.len()]);
    stencil(&x, &mut a, 1, x.len() - 1);
    stencil::scalar(&x, &mut b, 1, x.len() - 1);
    assert!(a.iter().map(|v| v.to_bits()).eq(b.iter().map(|v| v.to_bits())));
}

// ---- agreement ----------------------------------------------------------------------------------

/// Lengths around every multiple of the chunk sizes (64, 16 and 4).
fn len() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 0usize..150,
        1 => Just(0usize),
        1 => Just(1usize),
        2 => (1usize..6, 0usize..3).prop_map(|(k, r)| 64 * k + r - 1),
        2 => (1usize..8, 0usize..3).prop_map(|(k, r)| 16 * k + r - 1),
        2 => (1usize..12, 0usize..3).prop_map(|(k, r)| 4 * k + r - 1),
        1 => 500usize..600,
    ]
}

/// Magnitudes from 1e-20 to 1e20, both signs and zeros, and now and then NaN or ±∞.
fn value() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![
        40 => (-1.0f32..1.0, -20i32..20).prop_map(|(m, e)| m * 10f32.powi(e)),
        4 => -100.0f32..100.0,
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
    ]
}

fn vec_of(n: usize) -> impl Strategy<Value = Vec<f32>> {
    proptest::collection::vec(value(), n)
}

/// An image of `w × h` pixels, `w` from 1, around the chunk sizes.
fn image() -> impl Strategy<Value = (Vec<f32>, usize, usize)> {
    let width = prop_oneof![
        1usize..40,
        (1usize..5, 0usize..4).prop_map(|(k, r)| 16 * k + r),
        (1usize..3, 0usize..4).prop_map(|(k, r)| 64 * k + r),
    ];
    (width, 1usize..7).prop_flat_map(|(w, h)| (vec_of(w * h), Just(w), Just(h)))
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.iter().map(|v| v.to_bits()).eq(b.iter().map(|v| v.to_bits()))
}

proptest! {
    #[test]
    fn blurs_are_scalars_bit_for_bit((img, w, _h) in image()) {
        let mut scalar = vec![0.0; img.len()];
        box_blur::scalar(&img, &mut scalar, w);
        let mut simd = vec![0.0; img.len()];
        box_blur::simd(&img, &mut simd, w);
        prop_assert!(same_bits(&simd, &scalar), "{simd:?}\n{scalar:?}");
        let mut scalar = vec![0.0; img.len()];
        edge_blur::scalar(&img, &mut scalar, w);
        let mut simd = vec![0.0; img.len()];
        edge_blur::simd(&img, &mut simd, w);
        prop_assert!(same_bits(&simd, &scalar), "{simd:?}\n{scalar:?}");
        for threads in 1..=3 {
            let mut parallel = vec![0.0; img.len()];
            with_threads(threads, || edge_blur::parallel(&img, &mut parallel, w));
            prop_assert!(same_bits(&parallel, &scalar));
        }
    }

    #[test]
    fn the_parallel_blur_is_scalars_too((img, w, _h) in image()) {
        let mut scalar = vec![0.0; img.len()];
        box_blur::scalar(&img, &mut scalar, w);
        for threads in 1..=3 {
            let mut parallel = vec![0.0; img.len()];
            with_threads(threads, || box_blur::parallel(&img, &mut parallel, w));
            prop_assert!(same_bits(&parallel, &scalar));
        }
    }

    #[test]
    fn in_place_updates_are_scalars(
        (x, y) in len().prop_flat_map(|n| (vec_of(n), vec_of(n))),
        a in value(),
    ) {
        let (mut simd, mut scalar) = (y.clone(), y.clone());
        axpy::simd(a, &x, &mut simd);
        axpy::scalar(a, &x, &mut scalar);
        prop_assert!(same_bits(&simd, &scalar));
        let (mut simd, mut scalar) = (y.clone(), y);
        clamp_blend::simd(&x, -1.0, 2.5, &mut simd);
        clamp_blend::scalar(&x, -1.0, 2.5, &mut scalar);
        prop_assert!(same_bits(&simd, &scalar));
        let (mut simd, mut scalar) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        through_scratch::simd(&x, &mut simd);
        through_scratch::scalar(&x, &mut scalar);
        prop_assert!(same_bits(&simd, &scalar));
        let (mut simd, mut scalar) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        scale_shift::simd(&x, &mut simd, a);
        scale_shift::scalar(&x, &mut scalar, a);
        prop_assert!(same_bits(&simd, &scalar));
        for threads in 1..=3 {
            let mut parallel = vec![0.0; x.len()];
            with_threads(threads, || scale_shift::parallel(&x, &mut parallel, a));
            prop_assert!(same_bits(&parallel, &scalar));
        }
    }

    #[test]
    fn stencils_over_any_range_are_scalars(
        x in len().prop_flat_map(|n| proptest::collection::vec(value().prop_map(f64::from), n)),
        from in 0usize..4,
        short in 0usize..3,
        y_len in prop_oneof![Just(None), (0usize..80).prop_map(Some)],
    ) {
        // `to` up to one past where `x[i + 1]` is in bounds, `y` as long as `x` or any length.
        let to = (x.len() + 1).saturating_sub(short);
        let y_len = y_len.unwrap_or(x.len());
        let simd = outcome(vec![-3.0; y_len], bits64, |y| stencil::simd(&x, y, from, to));
        let scalar = outcome(vec![-3.0; y_len], bits64, |y| stencil::scalar(&x, y, from, to));
        prop_assert_eq!(simd, scalar);
    }

    #[test]
    fn gradients_are_scalars((img, w, h) in image(), out_short in 0usize..3) {
        // Two pixels short of the output now and then: the last row's last write panics.
        let n = img.len() - out_short.min(img.len());
        let simd = outcome(vec![0.0f32; n], bits32, |out| gradient_x::simd(&img, out, w, h));
        let scalar = outcome(vec![0.0f32; n], bits32, |out| gradient_x::scalar(&img, out, w, h));
        prop_assert_eq!(simd, scalar);
    }
}
