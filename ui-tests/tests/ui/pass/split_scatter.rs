//! Loops that update slots chosen by data, as people write them: a histogram,
//! counts and sums per label (k-means' update step), a maximum per bucket, a
//! bitmap of seen values, a group-by. The Parallel variant gives each chunk a
//! private copy of the updated slice and merges the copies after the loop; each
//! compiles warning-free and computes what the Scalar variant computes (integers
//! exactly, floats within a relative 1e-5). Loops it must leave on one thread say
//! why.
#![deny(warnings)]

use adaptive_kernel::{adaptive_kernel, LoopSplit};

/// Counts of samples in equal-width bins over `[lo, hi)`; samples out of range are skipped.
#[adaptive_kernel(complexity = "Low", size = samples.len())]
pub fn histogram(samples: &[f32], lo: f32, hi: f32, counts: &mut [u32]) {
    let bins = counts.len();
    let scale = bins as f32 / (hi - lo);
    for &v in samples {
        if v >= lo && v < hi {
            let bin = ((v - lo) * scale) as usize;
            counts[bin.min(bins - 1)] += 1;
        }
    }
}

/// k-means' update step: points per cluster and the sum of each cluster's points.
#[adaptive_kernel(complexity = "Medium", size = points.len())]
pub fn cluster_sums(points: &[f64], labels: &[usize], d: usize, counts: &mut Vec<u64>, sums: &mut [f64]) {
    for i in 0..labels.len() {
        let l = labels[i];
        counts[l] += 1;
        for j in 0..d {
            sums[l * d + j] += points[i * d + j];
        }
    }
}

/// The largest reading seen per sensor.
#[adaptive_kernel(complexity = "Low", size = readings.len())]
pub fn peaks(sensor: &[u16], readings: &[f32], peak: &mut [f32]) {
    for (s, r) in sensor.iter().zip(readings) {
        let k = *s as usize;
        peak[k] = peak[k].max(*r);
    }
}

/// The earliest timestamp per user (an integer minimum), written as `u64::min(a, b)`.
#[adaptive_kernel(complexity = "Low", size = users.len())]
pub fn first_seen(users: &[u32], times: &[u64], first: &mut [u64]) {
    for (u, t) in users.iter().zip(times) {
        let u = *u as usize;
        first[u] = u64::min(first[u], *t);
    }
}

/// Which values occur: a bitmap of 64-bit words, and a flag per block of 64.
#[adaptive_kernel(complexity = "Low", size = values.len())]
pub fn seen(values: &[u32], words: &mut [u64], blocks: &mut [bool]) {
    for &v in values {
        let v = v as usize % (words.len() * 64);
        words[v / 64] |= 1u64 << (v % 64);
        blocks[v / 64] |= true;
    }
}

/// Balances after withdrawals, per account: a group-by over a table's columns.
#[adaptive_kernel(complexity = "Low", size = amounts.len())]
pub fn withdraw(account: &[usize], amounts: &[u64], balance: &mut [u64]) {
    for i in 0..amounts.len() {
        balance[account[i]] -= amounts[i];
    }
}

/// Sums per label in a local table, then scaled into the output: the table is a `Vec` of
/// the body's own.
#[adaptive_kernel(complexity = "Low", size = x.len())]
pub fn label_means(x: &[f32], labels: &[u8], means: &mut [f32]) {
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

/// Reads a bin it updates: `overlap`.
#[adaptive_kernel(complexity = "Low", size = x.len())]
pub fn capped(x: &[u8], bins: &mut [u32]) {
    for &v in x {
        if bins[v as usize] < 3 {
            bins[v as usize] += 1;
        }
    }
}

/// Two operators on one slice: `mixed`.
#[adaptive_kernel(complexity = "Low", size = x.len())]
pub fn toggled(x: &[u8], bins: &mut [u32]) {
    for &v in x {
        bins[v as usize] += 1;
        bins[(v / 2) as usize] |= 1;
    }
}

/// A float sum under `exact`: `exact`.
#[adaptive_kernel(complexity = "Low", size = x.len(), exact)]
pub fn exact_sums(x: &[f32], labels: &[u8], sums: &mut [f32]) {
    for (v, l) in x.iter().zip(labels) {
        sums[*l as usize] += *v;
    }
}

/// A generic element type: `type` (no identity is known to the macro).
#[adaptive_kernel(complexity = "Low", size = keys.len())]
pub fn generic_counts<T: Copy + std::ops::AddAssign + From<u8>>(keys: &[usize], counts: &mut [T]) {
    for &k in keys {
        counts[k] += T::from(1);
    }
}

fn words(splits: &[LoopSplit]) -> Vec<&'static str> {
    splits.iter().map(|s| if s.is_split() { "split" } else { s.reason }).collect()
}

fn close(a: &[f32], b: &[f32]) -> bool {
    a.iter().zip(b).all(|(p, q)| (p - q).abs() <= 1e-5 * q.abs().max(1.0))
}

fn main() {
    for (spec, want) in [
        (histogram::KERNEL.spec(), vec!["split"]),
        (cluster_sums::KERNEL.spec(), vec!["split"]),
        (peaks::KERNEL.spec(), vec!["split"]),
        (first_seen::KERNEL.spec(), vec!["split"]),
        (seen::KERNEL.spec(), vec!["split"]),
        (withdraw::KERNEL.spec(), vec!["split"]),
        (label_means::KERNEL.spec(), vec!["split", "split"]),
        (capped::KERNEL.spec(), vec!["overlap"]),
        (toggled::KERNEL.spec(), vec!["mixed"]),
        (exact_sums::KERNEL.spec(), vec!["exact"]),
        (generic_counts::kernel::<u32>().spec(), vec!["type"]),
    ] {
        assert_eq!(words(spec.splits), want, "{}", spec.name);
    }

    let samples: Vec<f32> = (0..10_000).map(|i| ((i * 7919) % 1000) as f32 / 200.0 - 2.5).collect();
    let mut want = vec![5u32; 64];
    histogram::scalar(&samples, -2.0, 2.0, &mut want);
    for f in [histogram, histogram::simd, histogram::parallel] {
        let mut got = vec![5u32; 64];
        f(&samples, -2.0, 2.0, &mut got);
        assert_eq!(got, want);
    }

    let (n, d, k) = (3_000, 3, 7);
    let points: Vec<f64> = (0..n * d).map(|i| (i % 13) as f64 * 0.5).collect();
    let labels: Vec<usize> = (0..n).map(|i| (i * 31) % k).collect();
    let (mut cs, mut ss) = (vec![0u64; k], vec![0.0f64; k * d]);
    cluster_sums::scalar(&points, &labels, d, &mut cs, &mut ss);
    for f in [cluster_sums, cluster_sums::simd, cluster_sums::parallel] {
        let (mut c, mut s) = (vec![0u64; k], vec![0.0f64; k * d]);
        f(&points, &labels, d, &mut c, &mut s);
        assert_eq!(c, cs);
        assert!(s.iter().zip(&ss).all(|(p, q)| (p - q).abs() <= 1e-9 * q.abs().max(1.0)));
    }

    let sensor: Vec<u16> = (0..5_000).map(|i| (i % 17) as u16).collect();
    let readings: Vec<f32> = (0..5_000).map(|i| ((i * 37) % 101) as f32 - 50.0).collect();
    let mut want = vec![f32::NEG_INFINITY; 17];
    peaks::scalar(&sensor, &readings, &mut want);
    for f in [peaks, peaks::simd, peaks::parallel] {
        let mut got = vec![f32::NEG_INFINITY; 17];
        f(&sensor, &readings, &mut got);
        assert_eq!(got, want);
    }

    let users: Vec<u32> = (0..5_000).map(|i| (i % 23) as u32).collect();
    let times: Vec<u64> = (0..5_000).map(|i| 1_000_000 - (i * 7919 % 4999) as u64).collect();
    let mut want = vec![u64::MAX; 23];
    first_seen::scalar(&users, &times, &mut want);
    for f in [first_seen, first_seen::simd, first_seen::parallel] {
        let mut got = vec![u64::MAX; 23];
        f(&users, &times, &mut got);
        assert_eq!(got, want);
    }

    let values: Vec<u32> = (0..4_000).map(|i| (i * 7919) % 100_000).collect();
    let (mut ww, mut wb) = (vec![0u64; 16], vec![false; 16]);
    seen::scalar(&values, &mut ww, &mut wb);
    for f in [seen, seen::simd, seen::parallel] {
        let (mut w, mut b) = (vec![0u64; 16], vec![false; 16]);
        f(&values, &mut w, &mut b);
        assert_eq!((w, b), (ww.clone(), wb.clone()));
    }

    let account: Vec<usize> = (0..6_000).map(|i| i % 11).collect();
    let amounts: Vec<u64> = (0..6_000).map(|i| (i % 97) as u64).collect();
    let mut want = vec![1_000_000u64; 11];
    withdraw::scalar(&account, &amounts, &mut want);
    for f in [withdraw, withdraw::simd, withdraw::parallel] {
        let mut got = vec![1_000_000u64; 11];
        f(&account, &amounts, &mut got);
        assert_eq!(got, want);
    }

    let x: Vec<f32> = (0..8_000).map(|i| (i % 29) as f32 * 0.25).collect();
    let labels: Vec<u8> = (0..8_000).map(|i| (i % 251) as u8).collect();
    let mut want = vec![0.0f32; 256];
    label_means::scalar(&x, &labels, &mut want);
    for f in [label_means, label_means::simd, label_means::parallel] {
        let mut got = vec![0.0f32; 256];
        f(&x, &labels, &mut got);
        assert!(close(&got, &want));
    }

    // Left on one thread: routed, the same results.
    let mut bins = vec![0u32; 4];
    capped(&[1, 1, 1, 1, 2], &mut bins);
    assert_eq!(bins, [0, 3, 1, 0]);
    let mut bins = vec![0u32; 4];
    toggled(&[2, 3], &mut bins);
    assert_eq!(bins, [0, 1, 1, 1]);
    let mut sums = vec![0.0f32; 2];
    exact_sums(&[1.0, 2.0, 4.0], &[0, 1, 0], &mut sums);
    assert_eq!(sums, [5.0, 2.0]);
    let mut counts = vec![0u32; 3];
    generic_counts(&[0, 2, 2], &mut counts);
    assert_eq!(counts, [1, 0, 2]);
}
