//! Every loop shape the Parallel variant splits across threads, and shapes it leaves on one
//! thread with their words: each compiles warning-free, and each variant computes Scalar's result.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use std::cell::Cell;
use std::ops::{Add, Mul};
use std::rc::Rc;

use adaptive_kernel::{adaptive_kernel, LoopSplit};

/// Items: `iter_mut`.
#[adaptive_kernel(complexity = "Low")]
pub fn fill(out: &mut [f32], value: f32) {
    for o in out.iter_mut() {
        *o = value;
    }
}

/// Items with their index: `enumerate`.
#[adaptive_kernel(complexity = "Low")]
pub fn ramp(out: &mut Vec<f64>, step: f64) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = i as f64 * step;
    }
}

/// Items zipped with shared reads.
#[adaptive_kernel(complexity = "Low")]
pub fn axpby(a: f32, x: &[f32], b: f32, y: &[f32], out: &mut [f32]) {
    for (o, (xi, yi)) in out.iter_mut().zip(x.iter().zip(y)) {
        *o = a * xi + b * yi;
    }
}

/// Rows of an image: `chunks_mut`, with a helper function called per row.
#[adaptive_kernel(complexity = "Medium")]
pub fn normalise_rows(img: &mut [f32], width: usize) {
    for row in img.chunks_mut(width) {
        let peak = row_peak(row);
        for px in row.iter_mut() {
            *px /= peak;
        }
    }
}

fn row_peak(row: &[f32]) -> f32 {
    row.iter().fold(1e-12, |m, v| m.max(v.abs()))
}

/// Whole rows with their index, read from another image's rows: `chunks_exact_mut`, `enumerate`.
#[adaptive_kernel(complexity = "Medium")]
pub fn shift_rows(src: &[u8], dst: &mut [u8], width: usize) {
    for (r, (d, s)) in dst.chunks_exact_mut(width).zip(src.chunks_exact(width)).enumerate() {
        for c in 0..width {
            d[c] = s[(c + r) % width];
        }
    }
}

/// A range writing its own item and carrying two reductions (a float sum and a count).
#[adaptive_kernel(complexity = "Medium")]
pub fn clip(x: &[f32], out: &mut [f32], limit: f32) -> (f32, usize) {
    let mut removed = 0.0f32;
    let mut clipped = 0usize;
    for i in 0..x.len() {
        if x[i] > limit {
            out[i] = limit;
            removed += x[i] - limit;
            clipped += 1;
        } else {
            out[i] = x[i];
        }
    }
    (removed, clipped)
}

/// A range writing its row, as a sub-slice and element by element.
#[adaptive_kernel(complexity = "High", size = n * n)]
pub fn outer(a: &[f32], b: &[f32], m: &mut [f32], n: usize) {
    for i in 0..n {
        let row = &mut m[i * n..(i + 1) * n];
        row[0] = 0.0;
        for j in 0..n {
            m[i * n + j] = a[i] * b[j];
        }
    }
}

/// Interleaved `xyz` triples: `out[3 * i + c]`.
#[adaptive_kernel(complexity = "Low", size = pos.len())]
pub fn drift(pos: &[f32], vel: &mut [f32], dt: f32) {
    for i in 0..pos.len() / 3 {
        vel[3 * i] += dt * pos[3 * i];
        vel[3 * i + 1] += dt * pos[3 * i + 1];
        vel[3 * i + 2] += dt * pos[3 * i + 2];
    }
}

/// What the loop shares is not `Sync`: split, run in order on the calling thread.
#[adaptive_kernel(complexity = "Low")]
pub fn scaled(x: &[f32], out: &mut [f32]) {
    let scale = Rc::new(3.0f32);
    let seen = Cell::new(0usize);
    for (o, v) in out.iter_mut().zip(x) {
        *o = v * *scale;
        seen.set(seen.get() + 1);
    }
}

/// A generic element type without `Send + Sync` bounds: split, run in order.
#[adaptive_kernel(complexity = "Low")]
pub fn squares<T: Copy + Mul<Output = T> + Add<Output = T>>(x: &[T], out: &mut [T]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = *v * *v;
    }
}

/// Scattered writes: split, each chunk into a private copy of the bins.
#[adaptive_kernel(complexity = "Low", size = x.len())]
pub fn histogram(x: &[f32], bins: &mut [u32]) {
    for v in x {
        let b = ((v.clamp(0.0, 0.999)) * bins.len() as f32) as usize;
        bins[b] += 1;
    }
}

/// Each row's last pixel written one past its row, into the next row: `overlap`.
#[adaptive_kernel(complexity = "Low", size = x.len())]
pub fn spill_right(x: &[f32], out: &mut [f32], w: usize) {
    for r in 0..x.len() / w {
        out[r * w + w] = x[r * w];
    }
}

/// Reads the previous output: `overlap`.
#[adaptive_kernel(complexity = "Low")]
pub fn cumulative(x: &[f32], out: &mut [f32]) {
    out[0] = x[0];
    for i in 1..x.len() {
        out[i] = out[i - 1] + x[i];
    }
}

/// Stops early: `break`.
#[adaptive_kernel(complexity = "Low")]
pub fn until_negative(x: &[f32], out: &mut [f32]) {
    for (o, v) in out.iter_mut().zip(x) {
        if *v < 0.0 {
            break;
        }
        *o = *v;
    }
}

/// Leaves the function from inside: `try`.
#[adaptive_kernel(complexity = "Low")]
pub fn parse_all(x: &[&str], out: &mut [f32]) -> Result<(), std::num::ParseFloatError> {
    for (o, s) in out.iter_mut().zip(x) {
        *o = s.parse()?;
    }
    Ok(())
}

/// Opted out: `serial`.
#[adaptive_kernel(complexity = "Low", serial)]
pub fn fill_serial(out: &mut [f32], value: f32) {
    for o in out.iter_mut() {
        *o = value;
    }
}

pub struct Stats {
    pub seen: usize,
}

impl Stats {
    pub fn note(&mut self) {
        self.seen += 1;
    }
}

/// Calls a method that may write on a `&mut` from outside: `writes`.
#[adaptive_kernel(complexity = "Low")]
pub fn counted(x: &[f32], out: &mut [f32], stats: &mut Stats) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = *v;
        stats.note();
    }
}

macro_rules! halve {
    ($v:expr) => {
        $v * 0.5
    };
}

/// A macro the attribute cannot see into: `macro`.
#[adaptive_kernel(complexity = "Low")]
pub fn halved(x: &[f32], out: &mut [f32]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = halve!(*v);
    }
}

/// Only prints: `nothing` to share out.
#[adaptive_kernel(complexity = "Low", size = x.len())]
pub fn show(x: &[f32]) {
    for v in x.iter() {
        if *v > 1e30 {
            println!("{v}");
        }
    }
}

/// Walks backwards: `source`.
#[adaptive_kernel(complexity = "Low")]
pub fn reversed(out: &mut [f32]) {
    for (i, o) in out.iter_mut().rev().enumerate() {
        *o = i as f32;
    }
}

/// Reads its running total: `reads`.
#[adaptive_kernel(complexity = "Low")]
pub fn normalised_running(x: &[f32], out: &mut [f32]) -> f32 {
    let mut total = 0.0f32;
    for i in 0..x.len() {
        total += x[i];
        out[i] = x[i] / (1.0 + total.abs());
    }
    total
}

/// A float reduction under `exact`: `exact`.
#[adaptive_kernel(complexity = "Low", exact)]
pub fn exact_energy(x: &[f32], out: &mut [f32]) -> f32 {
    let mut e = 0.0f32;
    for (o, v) in out.iter_mut().zip(x) {
        *o = v * v;
        e += v * v;
    }
    e
}

fn own_parallel(x: &[f32], out: &mut [f32]) {
    out.copy_from_slice(x);
}

/// The Parallel variant is the kernel's own: `parallel`.
#[adaptive_kernel(complexity = "Low", parallel = own_parallel)]
pub fn copied(x: &[f32], out: &mut [f32]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = *v;
    }
}

/// Continues its own label, from an inner loop: split, the label kept on the chunk's loop.
#[adaptive_kernel(complexity = "Low", size = x.len())]
pub fn first_rows(x: &[f32], out: &mut [f32], w: usize) {
    'rows: for r in 0..out.len() / w.max(1) {
        for i in 0..w {
            if x[r * w + i] < 0.0 {
                continue 'rows;
            }
        }
        out[r] = 1.0;
    }
    'other: for v in out.iter_mut() {
        for _ in 0..1 {
            continue 'other;
        }
        *v = 0.0;
    }
}

/// An `unsafe` block: `unsafe`.
#[adaptive_kernel(complexity = "Low")]
pub fn unchecked(x: &[f32], out: &mut [f32]) {
    for i in 0..out.len().min(x.len()) {
        // SAFETY: `i` is below both lengths.
        out[i] = unsafe { *x.get_unchecked(i) };
    }
}

fn words(splits: &[LoopSplit]) -> Vec<&'static str> {
    splits.iter().map(|s| if s.is_split() { "split" } else { s.reason }).collect()
}

fn main() {
    for (spec, want) in [
        (fill::KERNEL.spec(), "split"),
        (ramp::KERNEL.spec(), "split"),
        (axpby::KERNEL.spec(), "split"),
        (normalise_rows::KERNEL.spec(), "split"),
        (shift_rows::KERNEL.spec(), "split"),
        (clip::KERNEL.spec(), "split"),
        (outer::KERNEL.spec(), "split"),
        (drift::KERNEL.spec(), "split"),
        (scaled::KERNEL.spec(), "split"),
        (squares::kernel::<f32>().spec(), "split"),
        (histogram::KERNEL.spec(), "split"),
        (cumulative::KERNEL.spec(), "overlap"),
        (spill_right::KERNEL.spec(), "overlap"),
        (until_negative::KERNEL.spec(), "break"),
        (parse_all::KERNEL.spec(), "try"),
        (fill_serial::KERNEL.spec(), "serial"),
        (counted::KERNEL.spec(), "writes"),
        (halved::KERNEL.spec(), "macro"),
        (show::KERNEL.spec(), "nothing"),
        (reversed::KERNEL.spec(), "source"),
        (normalised_running::KERNEL.spec(), "reads"),
        (exact_energy::KERNEL.spec(), "exact"),
        (copied::KERNEL.spec(), "parallel"),
        (unchecked::KERNEL.spec(), "unsafe"),
    ] {
        assert_eq!(words(spec.splits), [want], "{}", spec.name);
    }
    assert_eq!(words(first_rows::KERNEL.spec().splits), ["split", "split"]);

    let x: Vec<f32> = (0..1000).map(|i| (i % 37) as f32 * 0.1).collect();
    let y: Vec<f32> = (0..1000).map(|i| (i % 11) as f32).collect();
    let (mut p, mut s) = (vec![0.0f32; 1000], vec![0.0f32; 1000]);

    fill::parallel(&mut p, 2.5);
    fill::scalar(&mut s, 2.5);
    assert_eq!(p, s);
    let (mut pd, mut sd) = (vec![0.0f64; 300], vec![0.0f64; 300]);
    ramp::parallel(&mut pd, 0.5);
    ramp::scalar(&mut sd, 0.5);
    assert_eq!(pd, sd);
    axpby::parallel(2.0, &x, 3.0, &y, &mut p);
    axpby::scalar(2.0, &x, 3.0, &y, &mut s);
    assert_eq!(p, s);
    normalise_rows::parallel(&mut p, 37);
    normalise_rows::scalar(&mut s, 37);
    assert_eq!(p, s);
    let src: Vec<u8> = (0..=255).collect();
    let (mut dp, mut ds) = (vec![0u8; 256], vec![0u8; 256]);
    shift_rows::parallel(&src, &mut dp, 16);
    shift_rows::scalar(&src, &mut ds, 16);
    assert_eq!(dp, ds);
    let (rp, rs) = (clip::parallel(&x, &mut p, 2.0), clip::scalar(&x, &mut s, 2.0));
    assert_eq!(p, s);
    assert_eq!(rp.1, rs.1);
    assert!((rp.0 - rs.0).abs() <= 1e-3 * rs.0.abs());
    let (mut mp, mut ms) = (vec![0.0f32; 900], vec![0.0f32; 900]);
    outer::parallel(&x[..30], &y[..30], &mut mp, 30);
    outer::scalar(&x[..30], &y[..30], &mut ms, 30);
    assert_eq!(mp, ms);
    drift::parallel(&x[..999], &mut p, 0.1);
    drift::scalar(&x[..999], &mut s, 0.1);
    assert_eq!(p, s);
    scaled::parallel(&x, &mut p);
    scaled::scalar(&x, &mut s);
    assert_eq!(p, s);
    squares::parallel(&x, &mut p);
    squares::scalar(&x, &mut s);
    assert_eq!(p, s);

    let mut bins = vec![0u32; 4];
    histogram(&[0.1, 0.3, 0.6, 0.9, 0.95], &mut bins);
    assert_eq!(bins, [1, 1, 1, 2]);
    let mut split_bins = vec![0u32; 4];
    histogram::parallel(&[0.1, 0.3, 0.6, 0.9, 0.95], &mut split_bins);
    assert_eq!(split_bins, bins);

    // Left on one thread: routed, with the same results.
    p[..5].fill(0.0);
    spill_right(&[1.0, 2.0, 3.0, 4.0], &mut p[..5], 2);
    assert_eq!(&p[..5], [0.0, 0.0, 1.0, 0.0, 3.0]);
    cumulative(&[1.0, 2.0, 3.0], &mut p[..3]);
    assert_eq!(&p[..3], [1.0, 3.0, 6.0]);
    until_negative(&[1.0, -1.0, 2.0], &mut s[..3]);
    assert_eq!(s[0], 1.0);
    assert!(parse_all(&["1.5", "x"], &mut p[..2]).is_err());
    fill_serial(&mut p, 1.0);
    assert_eq!(p, vec![1.0; 1000]);
    let mut stats = Stats { seen: 0 };
    counted(&x[..4], &mut p[..4], &mut stats);
    assert_eq!(stats.seen, 4);
    halved(&[2.0], &mut p[..1]);
    assert_eq!(p[0], 1.0);
    show(&x);
    reversed(&mut p[..3]);
    assert_eq!(&p[..3], [2.0, 1.0, 0.0]);
    assert_eq!(normalised_running(&[1.0, 1.0], &mut p[..2]), 2.0);
    assert_eq!(exact_energy(&[3.0], &mut p[..1]), 9.0);
    copied(&[5.0], &mut p[..1]);
    assert_eq!(p[0], 5.0);
    let (mut rp, mut rs) = (vec![9.0f32; 2], vec![9.0f32; 2]);
    first_rows::parallel(&[1.0, -1.0, 1.0, 1.0], &mut rp, 2);
    first_rows::scalar(&[1.0, -1.0, 1.0, 1.0], &mut rs, 2);
    assert_eq!(rp, rs);
    unchecked(&[7.0], &mut p[..1]);
    assert_eq!(p[0], 7.0);
}
