//! Valid bodies around the loops the Parallel variant splits, written without regard for the
//! analysis: methods reading `self`, labels, closures, shadowing, `let else`, generic
//! element types with and without `Send + Sync`, lifetimes, a body a `macro_rules!` writes,
//! `unsafe fn`. Each compiles warning-free and computes Scalar's result.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use std::ops::Mul;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use adaptive_kernel::adaptive_kernel;

pub struct Gain {
    pub gain: f32,
    pub calls: AtomicUsize,
    pub log: Mutex<Vec<usize>>,
}

impl Gain {
    /// Reads `self` in a split loop; counts through an atomic, logs through a mutex.
    #[adaptive_kernel(complexity = "Low")]
    pub fn apply(&self, x: &[f32], out: &mut [f32]) {
        for (i, (o, v)) in out.iter_mut().zip(x).enumerate() {
            *o = self.gain * v;
            self.calls.fetch_add(1, Ordering::Relaxed);
            if i == 0 {
                self.log.lock().unwrap().push(i);
            }
        }
    }

    /// Writes through `&mut self`: left on one thread.
    #[adaptive_kernel(complexity = "Low")]
    pub fn accumulate(&mut self, x: &[f32]) {
        for v in x {
            self.gain += v;
        }
    }
}

/// A label the loop continues to, a closure, shadowing of names from outside, `let else`.
#[adaptive_kernel(complexity = "Low")]
pub fn busy(x: &[f32], out: &mut [f32], skip: Option<usize>) {
    let x = &x[..x.len().min(out.len())];
    let scale = |v: f32| v * 2.0;
    'items: for (i, o) in out.iter_mut().enumerate() {
        let Some(&v) = x.get(i) else { continue 'items };
        if Some(i) == skip {
            continue;
        }
        let x = v;
        let doubled: Vec<f32> = (0..2).map(|k| scale(x) + k as f32).collect();
        *o = doubled.iter().sum::<f32>();
    }
}

/// Generic, with the bounds that let the chunks cross threads.
#[adaptive_kernel(complexity = "Low")]
pub fn scale_all<T: Copy + Send + Sync + Mul<Output = T>>(x: &[T], k: T, out: &mut [T]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = *v * k;
    }
}

/// Lifetimes, and a row width from a struct.
pub struct Image<'a> {
    pub pixels: &'a [u16],
    pub width: usize,
}

#[adaptive_kernel(complexity = "Low", size = out.len())]
pub fn to_float<'a>(img: &Image<'a>, out: &'a mut [f32]) {
    let w = img.width;
    for (r, row) in out.chunks_mut(w).enumerate() {
        for (c, px) in row.iter_mut().enumerate() {
            *px = img.pixels[r * w + c] as f32 / 65535.0;
        }
    }
}

macro_rules! stamped {
    ($name:ident, $factor:expr) => {
        #[adaptive_kernel(complexity = "Low")]
        pub fn $name(x: &[f32], out: &mut [f32]) -> f32 {
            let mut total = 0.0f32;
            for i in 0..x.len() {
                out[i] = x[i] * $factor;
                total += out[i];
            }
            total
        }
    };
}

stamped!(triple, 3.0);

/// Reads a stream of `Cell`s (not `Sync`): split, run in order on the calling thread.
#[adaptive_kernel(complexity = "Low")]
pub fn from_cells(cells: &[std::cell::Cell<f32>], out: &mut [f32]) {
    for (o, c) in out.iter_mut().zip(cells.iter()) {
        *o = c.get() * 2.0;
    }
}

/// An `unsafe fn`: its body may do anything an `unsafe` block may, so no loop is split.
#[adaptive_kernel(complexity = "Low")]
pub unsafe fn copy_raw(src: *const f32, out: &mut [f32]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = *src.add(i);
    }
}

/// Writes through a `&mut` a `let` holds: its chunks could not borrow it mutably, so the loop
/// stays on one thread (`writes`), and the kernel compiles.
#[adaptive_kernel(complexity = "Low")]
pub fn logged_copy(a: &[f32], out: &mut [f32], log: &mut Vec<f32>) {
    let seen = log;
    for i in 0..a.len() {
        out[i] = a[i];
        seen.push(a[i]);
    }
}

fn main() {
    let g = Gain { gain: 2.0, calls: AtomicUsize::new(0), log: Mutex::new(Vec::new()) };
    let x: Vec<f32> = (0..500).map(|i| i as f32).collect();
    let (mut p, mut s) = (vec![0.0f32; 500], vec![0.0f32; 500]);
    g.apply(&x, &mut p);
    adaptive_kernel::with_backend(adaptive_kernel::Backend::Scalar, || g.apply(&x, &mut s));
    assert_eq!(p, s);
    assert_eq!(g.calls.load(Ordering::Relaxed), 1000);
    let mut m = Gain { gain: 0.0, calls: AtomicUsize::new(0), log: Mutex::new(Vec::new()) };
    m.accumulate(&[1.0, 2.0]);
    assert_eq!(m.gain, 3.0);

    busy::parallel(&x, &mut p, Some(3));
    busy::scalar(&x, &mut s, Some(3));
    assert_eq!(p, s);
    scale_all::parallel(&x, 0.5, &mut p);
    scale_all::scalar(&x, 0.5, &mut s);
    assert_eq!(p, s);
    let pixels: Vec<u16> = (0..600).collect();
    let img = Image { pixels: &pixels, width: 20 };
    let (mut fp, mut fs) = (vec![0.0f32; 600], vec![0.0f32; 600]);
    to_float::parallel(&img, &mut fp);
    to_float::scalar(&img, &mut fs);
    assert_eq!(fp, fs);
    let (tp, ts) = (triple::parallel(&x, &mut p), triple::scalar(&x, &mut s));
    assert_eq!(p, s);
    assert!((tp - ts).abs() <= 1e-4 * ts);
    let cells: Vec<std::cell::Cell<f32>> = x.iter().map(|v| std::cell::Cell::new(*v)).collect();
    from_cells::parallel(&cells, &mut p);
    from_cells::scalar(&cells, &mut s);
    assert_eq!(p, s);
    assert!(from_cells::KERNEL.spec().splits[0].is_split());
    assert_eq!(copy_raw::KERNEL.spec().splits[0].reason, "unsafe");
    // SAFETY: `x` holds 500 elements, as many as `p`.
    unsafe { copy_raw(x.as_ptr(), &mut p) };
    assert_eq!(p, x);
    let mut seen = Vec::new();
    logged_copy(&x, &mut p, &mut seen);
    assert_eq!((&p, &seen), (&x, &x));
    assert_eq!(logged_copy::KERNEL.spec().splits[0].reason, "writes");
}
