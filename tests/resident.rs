//! Data kept on the GPU between calls (`Resident` handles through `k::resident`),
//! on lavapipe (`ADAPTIVE_KERNEL_GPU=software`): programs of host writes, host
//! reads and kernel calls on handles give the results of the same programs on
//! plain slices; the bytes they move are counted (a 200-sweep Jacobi moves its
//! grids across once, ten Lloyd iterations of k-means move the points once, a
//! body with two GPU loops makes one submission per call), and the counters are
//! what `table()` shows; dropping handles around GPU work is safe.
//!
//! The device failing mid-program: `tests/resident_faults.rs` (child processes).
//! These tests need a device; without one they FAIL, unless
//! `ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1` asks to skip them.
// Most kernels here are called through their variants and `resident` entries, not routed.
#![allow(dead_code, clippy::needless_range_loop)]

use std::time::Duration;

use adaptive_kernel::ops::gpu::{self, Traffic};
use adaptive_kernel::resident::{Residence, Resident};
use adaptive_kernel::{adaptive_kernel, with_backend, Backend, Kernel};
use proptest::prelude::*;

const SKIP_VAR: &str = "ADAPTIVE_KERNEL_SKIP_GPU_TESTS";

/// True when the GPU tests should run.
fn gpu_or_skip() -> bool {
    if std::env::var(SKIP_VAR).as_deref() == Ok("1") {
        eprintln!("skipped: {SKIP_VAR}=1");
        return false;
    }
    assert!(
        gpu::wait_ready(Duration::from_secs(60)),
        "no usable GPU device ({}); run with ADAPTIVE_KERNEL_GPU=software and Mesa's lavapipe, or set {SKIP_VAR}=1",
        gpu::health()
    );
    true
}

/// One Jacobi sweep of Laplace's equation on an `n`×`n` grid: each interior point of
/// `next` gets the mean of its four neighbours in `grid`; the border stays.
#[adaptive_kernel(complexity = "Medium")]
fn jacobi(grid: &[f32], next: &mut [f32], n: usize) {
    for i in n..grid.len() - n {
        let x = i % n;
        if x != 0 && x != n - 1 {
            next[i] = 0.25 * (grid[i - 1] + grid[i + 1] + grid[i - n] + grid[i + n]);
        }
    }
}

/// `y ← (1 − t)·y + t·x`.
#[adaptive_kernel(complexity = "Low")]
fn blend(x: &[f32], y: &mut [f32], t: f32) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi = *yi * (1.0 - t) + xi * t;
    }
}

/// The sum of `x`.
#[adaptive_kernel(complexity = "Low")]
fn total(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        s += v;
    }
    s
}

/// `b ← (b >> 1) ^ a`, bit for bit.
#[adaptive_kernel(complexity = "Low")]
fn mix(a: &[u32], b: &mut [u32]) {
    for (bi, ai) in b.iter_mut().zip(a) {
        *bi = (*bi >> 1) ^ ai;
    }
}

/// Two GPU loops with nothing between them: `y = s·x`, then `z = y + 1`.
#[adaptive_kernel(complexity = "Low")]
fn scale_then_shift(x: &[f32], y: &mut [f32], z: &mut [f32], s: f32) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi = xi * s;
    }
    for (zi, yi) in z.iter_mut().zip(y.iter()) {
        *zi = yi + 1.0;
    }
}

/// `labels[i]` = the index of the centroid nearest to point `i` (row-major, `d` wide);
/// returns the inertia. The assignment step of Lloyd's k-means.
#[adaptive_kernel(complexity = "High", size = points.len() / d * centroids.len())]
fn assign(points: &[f32], centroids: &[f32], d: usize, labels: &mut [u32]) -> f32 {
    let n = points.len() / d;
    let k = centroids.len() / d;
    let mut inertia = 0.0f32;
    for i in 0..n {
        let p = &points[i * d..(i + 1) * d];
        let mut best = 0;
        let mut best_dist = f32::INFINITY;
        for c in 0..k {
            let q = &centroids[c * d..(c + 1) * d];
            let mut dist = 0.0f32;
            for j in 0..d {
                let t = p[j] - q[j];
                dist += t * t;
            }
            if dist < best_dist {
                best_dist = dist;
                best = c;
            }
        }
        labels[i] = best as u32;
        inertia += best_dist;
    }
    inertia
}

/// A sum, a maximum, a minimum and integer counts, carried by one loop.
#[adaptive_kernel(complexity = "Low")]
fn stats(x: &[f32], k: &[u32]) -> (f32, f32, f32, u32, usize) {
    let mut sum = 0.0f32;
    let mut hi = f32::NEG_INFINITY;
    let mut lo = f32::INFINITY;
    let mut count = 0u32;
    let mut wide = 0usize;
    for i in 0..x.len() {
        sum += x[i];
        hi = hi.max(x[i]);
        lo = lo.min(x[i]);
        count += k[i];
        wide += k[i] as usize;
    }
    (sum, hi, lo, count, wide)
}

/// The update step of Lloyd's k-means, on the host: each centroid becomes the mean of its points.
fn update(points: &[f32], labels: &[u32], d: usize, centroids: &mut [f32]) {
    let k = centroids.len() / d;
    let mut sums = vec![0.0f64; k * d];
    let mut counts = vec![0usize; k];
    for (p, &l) in points.chunks_exact(d).zip(labels) {
        counts[l as usize] += 1;
        for j in 0..d {
            sums[l as usize * d + j] += f64::from(p[j]);
        }
    }
    for c in 0..k {
        if counts[c] > 0 {
            for j in 0..d {
                centroids[c * d + j] = (sums[c * d + j] / counts[c] as f64) as f32;
            }
        }
    }
}

/// A reproducible grid: a hot top row, the rest cold.
fn hot_top(n: usize) -> Vec<f32> {
    let mut g = vec![0.0f32; n * n];
    g[..n].fill(1.0);
    g
}

/// What the calling thread moves and submits while `f` runs.
fn moved<R>(f: impl FnOnce() -> R) -> (R, Traffic) {
    let before = gpu::thread_traffic();
    let out = f();
    (out, gpu::thread_traffic() - before)
}

/// The transfers `kernel`'s table shows for `size`'s bucket.
fn shown(kernel: &'static Kernel, size: usize) -> adaptive_kernel::report::TransferReport {
    let table = kernel.table();
    table.row_for(size).and_then(|r| r.transfers).unwrap_or_else(|| panic!("no transfers for {size}:\n{table}"))
}

#[test]
fn a_200_sweep_jacobi_on_resident_grids_moves_them_across_once() {
    if !gpu_or_skip() {
        return;
    }
    let n = 1024;
    let bytes = (n * n * 4) as u64;
    let start = hot_top(n);
    let (mut grid, mut next) = (Resident::new(start.clone()), Resident::new(start.clone()));
    let (_, traffic) = moved(|| {
        with_backend(Backend::Gpu, || {
            for _ in 0..100 {
                jacobi::resident(&grid, &mut next, n);
                jacobi::resident(&next, &mut grid, n);
            }
        })
    });
    assert_eq!(grid.residence(), Residence::Device);
    // Each grid went up once; nothing came back but each sweep's 4-byte status word.
    assert_eq!(traffic.bytes_up, 2 * bytes, "{traffic:?}");
    assert_eq!(traffic.bytes_down, 200 * 4, "{traffic:?}");
    assert_eq!(traffic.submissions, 200, "one submission per sweep: {traffic:?}");
    let (result, read) = moved(|| grid.host().to_vec());
    assert_eq!((read.bytes_up, read.bytes_down, read.submissions), (0, bytes, 1), "one download: {read:?}");
    let (_, again) = moved(|| grid.host()[n + 1]);
    assert!(again.is_empty(), "a second read moves nothing: {again:?}");
    // The counters are what the table shows (the bucket of a call's size: both grids).
    let t = shown(&jacobi::RESIDENT, 2 * n * n);
    assert_eq!((t.gpu_calls, t.submissions, t.bytes_up, t.bytes_down), (200, 200, 2 * bytes, 200 * 4), "{t:?}");
    let text = jacobi::RESIDENT.table().to_string();
    assert!(text.contains("gpu transfers") && text.contains("8.0 MiB"), "{text}");
    // The same program on plain slices, on the CPU.
    let (mut a, mut b) = (start.clone(), start);
    for _ in 0..100 {
        jacobi::scalar(&a, &mut b, n);
        jacobi::scalar(&b, &mut a, n);
    }
    assert_eq!(result, a, "lavapipe rounds 0.25·(((a + b) + c) + d) as the host does");
}

#[test]
fn the_same_sweeps_on_host_data_move_the_grids_every_call() {
    if !gpu_or_skip() {
        return;
    }
    let n = 128;
    let bytes = (n * n * 4) as u64;
    let (mut a, mut b) = (hot_top(n), hot_top(n));
    let (_, traffic) = moved(|| {
        with_backend(Backend::Gpu, || {
            for _ in 0..5 {
                jacobi(&a, &mut b, n);
                jacobi(&b, &mut a, n);
            }
        })
    });
    assert_eq!(traffic.bytes_up, 10 * 2 * bytes, "both grids up on each call: {traffic:?}");
    assert_eq!(traffic.bytes_down, 10 * (bytes + 4), "the written grid and the status back: {traffic:?}");
    let t = shown(&jacobi::KERNEL, 2 * n * n);
    assert_eq!((t.bytes_up, t.bytes_down), (traffic.bytes_up, traffic.bytes_down), "{t:?}");
}

#[test]
fn ten_lloyd_iterations_move_the_points_once() {
    if !gpu_or_skip() {
        return;
    }
    let (n, d, k) = (20_000, 16, 8);
    let mut seed = 0x2545_f491u32;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed % 1000) as f32 / 100.0
    };
    let points: Vec<f32> = (0..n * d).map(|_| rand()).collect();
    let initial: Vec<f32> = points[..k * d].to_vec();
    let run = |resident: bool| {
        let mut centroids = initial.clone();
        let pts = Resident::new(points.clone());
        let mut labels = Resident::new(vec![0u32; n]);
        let mut plain_labels = vec![0u32; n];
        let mut inertias = Vec::new();
        let (_, traffic) = moved(|| {
            for _ in 0..10 {
                let inertia = if resident {
                    with_backend(Backend::Gpu, || assign::resident(&pts, &centroids, d, &mut labels))
                } else {
                    assign::scalar(&points, &centroids, d, &mut plain_labels)
                };
                inertias.push(inertia);
                let l = if resident { labels.host() } else { &plain_labels[..] };
                update(&points, l, d, &mut centroids);
            }
        });
        (centroids, inertias, traffic)
    };
    let (centroids, inertias, traffic) = run(true);
    let (want, want_inertias, _) = run(false);
    let (points_bytes, labels_bytes, centroid_bytes) = ((n * d * 4) as u64, (n * 4) as u64, (k * d * 4) as u64);
    // Up: the points and the labels once, the (host-updated) centroids each iteration.
    assert_eq!(traffic.bytes_up, points_bytes + labels_bytes + 10 * centroid_bytes, "{traffic:?}");
    // Down: the labels for each host update, and each call's status word and inertia.
    assert_eq!(traffic.bytes_down, 10 * (labels_bytes + 8), "{traffic:?}");
    // Distances summed in the body's order: labels agree, so the centroids do exactly.
    assert_eq!(centroids, want);
    for (g, s) in inertias.iter().zip(&want_inertias) {
        assert!((g - s).abs() <= 1e-4 * s.abs(), "inertia {g} vs {s}");
    }
    let t = shown(&assign::RESIDENT, n * k * d);
    assert_eq!((t.gpu_calls, t.bytes_up), (10, traffic.bytes_up), "{t:?}");
    assert_eq!(t.bytes_down, 10 * 8, "the table counts the call's own traffic; the host reads are the program's");
}

#[test]
fn a_body_with_two_gpu_loops_makes_one_submission_per_call() {
    if !gpu_or_skip() {
        return;
    }
    let spec = scale_then_shift::KERNEL.spec();
    assert!(spec.gpu_loops.iter().all(|l| l.on_gpu()), "{:?}", spec.gpu_loops);
    let x: Vec<f32> = (0..5000).map(|i| i as f32).collect();
    let (mut y, mut z) = (vec![0.0; 5000], vec![0.0; 5000]);
    let (_, traffic) = moved(|| with_backend(Backend::Gpu, || scale_then_shift(&x, &mut y, &mut z, 2.0)));
    assert_eq!(traffic.submissions, 1, "{traffic:?}");
    assert_eq!(y[4999], 9998.0);
    assert_eq!(z[4999], 9999.0);
    // `y`, written by the first loop and read by the second, is not read back and uploaded
    // again in between: x, y, z up once; y, z and two status words back.
    assert_eq!(traffic.bytes_up, 3 * 20_000, "{traffic:?}");
    assert_eq!(traffic.bytes_down, 2 * 20_000 + 8, "{traffic:?}");
    for _ in 0..4 {
        with_backend(Backend::Gpu, || scale_then_shift(&x, &mut y, &mut z, 3.0));
    }
    let t = shown(&scale_then_shift::KERNEL, 15_000);
    assert_eq!((t.gpu_calls, t.submissions), (5, 5), "{t:?}");
    assert_eq!(t.submissions_per_call(), 1.0);
    // On resident data, the same: one submission, and nothing moved but the status words.
    let (rx, mut ry, mut rz) = (Resident::new(x.clone()), Resident::new(y.clone()), Resident::new(z.clone()));
    with_backend(Backend::Gpu, || scale_then_shift::resident(&rx, &mut ry, &mut rz, 2.0));
    let (_, traffic) = moved(|| with_backend(Backend::Gpu, || scale_then_shift::resident(&rx, &mut ry, &mut rz, 2.0)));
    assert_eq!((traffic.submissions, traffic.bytes_up, traffic.bytes_down), (1, 0, 8), "{traffic:?}");
    assert_eq!(rz.host()[10], 21.0);
}

#[test]
fn host_reads_download_only_when_the_device_is_newer() {
    if !gpu_or_skip() {
        return;
    }
    let x = Resident::new(vec![1.0f32; 4096]);
    let mut y = Resident::new(vec![2.0f32; 4096]);
    assert_eq!(y.residence(), Residence::Host);
    let ((), t) = moved(|| with_backend(Backend::Gpu, || blend::resident(&x, &mut y, 0.5)));
    assert_eq!(t.bytes_up, 2 * 4 * 4096, "both uploaded once: {t:?}");
    assert_eq!((x.residence(), y.residence()), (Residence::Both, Residence::Device));
    let (v, t) = moved(|| y.host()[7]);
    assert_eq!((v, t.bytes_down), (1.5, 4 * 4096));
    assert_eq!(y.residence(), Residence::Both);
    let (_, t) = moved(|| x.host()[0] + y.host()[0]);
    assert!(t.is_empty(), "both current: {t:?}");
    // A host write marks the device's copy stale: the next GPU call uploads it, once.
    y.host_mut()[0] = 10.0;
    assert_eq!(y.residence(), Residence::Host);
    let ((), t) = moved(|| with_backend(Backend::Gpu, || blend::resident(&x, &mut y, 0.5)));
    assert_eq!(t.bytes_up, 4 * 4096, "only y: {t:?}");
    assert_eq!(y.host()[0], 5.5);
    // A CPU call on resident data downloads the newer copy first, and marks the device's stale.
    with_backend(Backend::Gpu, || blend::resident(&x, &mut y, 0.5));
    let ((), t) = moved(|| with_backend(Backend::Simd, || blend::resident(&x, &mut y, 0.5)));
    assert_eq!((t.bytes_up, t.bytes_down), (0, 4 * 4096), "{t:?}");
    assert_eq!(y.residence(), Residence::Host);
    assert_eq!(y.host()[0], 2.125);
    // A reduction on resident data reads nothing back but its result.
    let (s, t) = moved(|| with_backend(Backend::Gpu, || total::resident(&x)));
    assert_eq!((s, t.bytes_up, t.bytes_down), (4096.0, 0, 8), "{t:?}");
}

#[test]
fn reductions_are_combined_on_the_device_across_many_workgroups() {
    if !gpu_or_skip() {
        return;
    }
    // 300,000 items: 4,688 workgroups of 64, so the partials take two passes of the
    // device's tree (256 a workgroup). Small integers: every order of the sum is exact.
    let n: usize = 300_000;
    let mut x: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    x[200_001] = 1000.0;
    x[7] = -50.0;
    let k: Vec<u32> = (0..n).map(|i| (i % 5) as u32).collect();
    let want = stats::scalar(&x, &k);
    let (got, t) = moved(|| with_backend(Backend::Gpu, || stats(&x, &k)));
    assert_eq!(got, want, "every order of these sums is exact");
    // A usize sum may pass u32: every workgroup's partials come back, and it is summed on the
    // host in 64 bits (the others still on the device): 4,688 workgroups × 5 reductions.
    let groups = n.div_ceil(64) as u64;
    assert_eq!(t.bytes_down, 4 * (1 + 5 * groups) + 4 * 5, "{t:?}");
    // A NaN among the inputs: the host computes the call (the GPU contract), as Rust does.
    let mut with_nan = x.clone();
    with_nan[123_457] = f32::NAN;
    let want = stats::scalar(&with_nan, &k);
    let (got, t) = moved(|| with_backend(Backend::Gpu, || stats(&with_nan, &k)));
    assert!(got.0.is_nan() && want.0.is_nan(), "a NaN in a sum stays: {got:?} vs {want:?}");
    assert_eq!((got.1, got.2, got.3, got.4), (want.1, want.2, want.3, want.4));
    assert!(t.is_empty(), "computed on the host: {t:?}");
    let x2 = x;
    // Without one, only the status word and the combined result come back, whatever the size.
    let (s, t) = moved(|| with_backend(Backend::Gpu, || total(&x2)));
    assert_eq!((s, t.bytes_down), (total::scalar(&x2), 8), "{t:?}");
}

#[test]
fn dropping_handles_around_gpu_work_is_safe() {
    if !gpu_or_skip() {
        return;
    }
    let n = 64;
    // Another thread keeps the device busy with its own handles while this one drops its own,
    // some with device-newer data never read, between and during those submissions.
    let busy = std::thread::spawn(move || {
        let (mut a, mut b) = (Resident::new(hot_top(n)), Resident::new(hot_top(n)));
        with_backend(Backend::Gpu, || {
            for _ in 0..50 {
                jacobi::resident(&a, &mut b, n);
                jacobi::resident(&b, &mut a, n);
            }
        });
        a.into_vec()
    });
    for round in 0..30 {
        let a = Resident::new(hot_top(n));
        let mut b = Resident::new(hot_top(n));
        with_backend(Backend::Gpu, || jacobi::resident(&a, &mut b, n));
        if round % 2 == 0 {
            drop(a);
            drop(b); // device-newer, never read
        } else {
            let moved_away = std::thread::spawn(move || drop(b));
            drop(a);
            moved_away.join().unwrap();
        }
    }
    // Buffers given back are reused by later calls, which still compute the right thing.
    let (mut want_a, mut want_b) = (hot_top(n), hot_top(n));
    for _ in 0..50 {
        jacobi::scalar(&want_a, &mut want_b, n);
        jacobi::scalar(&want_b, &mut want_a, n);
    }
    assert_eq!(busy.join().unwrap(), want_a);
}

/// One step of a program on a pair of grids, a reduction and a pair of integer arrays.
#[derive(Clone, Debug)]
enum Step {
    /// A host write of `value` at `index` (taken modulo the length) of grid 0 or 1.
    Write(usize, usize, f32),
    /// A host read at `index` of grid 0 or 1.
    Read(usize, usize),
    /// A sweep from grid `from` into the other, on a backend.
    Sweep(usize, Placement),
    /// `grid[1] ← blend of grid 1 toward grid 0`.
    Blend(f32, Placement),
    /// The sum of grid 0.
    Total(Placement),
    /// `bits[1] ← (bits[1] >> 1) ^ bits[0]`.
    Mix(Placement),
    /// A host write into the integer arrays.
    WriteBits(usize, usize, u32),
}

/// Where a kernel call runs.
#[derive(Clone, Copy, Debug)]
enum Placement {
    Gpu,
    Simd,
    Routed,
}

impl Placement {
    fn call<R>(self, f: impl FnOnce() -> R) -> R {
        match self {
            Placement::Gpu => with_backend(Backend::Gpu, f),
            Placement::Simd => with_backend(Backend::Simd, f),
            Placement::Routed => f(),
        }
    }
}

fn placement() -> impl Strategy<Value = Placement> {
    prop_oneof![3 => Just(Placement::Gpu), 1 => Just(Placement::Simd), 1 => Just(Placement::Routed)]
}

fn step() -> impl Strategy<Value = Step> {
    let value = (0u32..64).prop_map(|v| v as f32 / 4.0);
    prop_oneof![
        2 => (0usize..2, any::<usize>(), value).prop_map(|(g, i, v)| Step::Write(g, i, v)),
        2 => (0usize..2, any::<usize>()).prop_map(|(g, i)| Step::Read(g, i)),
        3 => (0usize..2, placement()).prop_map(|(g, p)| Step::Sweep(g, p)),
        1 => (prop_oneof![Just(0.25f32), Just(0.5)], placement()).prop_map(|(t, p)| Step::Blend(t, p)),
        1 => placement().prop_map(Step::Total),
        1 => placement().prop_map(Step::Mix),
        1 => (0usize..2, any::<usize>(), any::<u32>()).prop_map(|(g, i, v)| Step::WriteBits(g, i, v)),
    ]
}

/// `g` and `s` agree: equal, or within a few units of `f32` rounding of the values here (a
/// device may fuse `y·(1 − t) + x·t`; lavapipe does not).
fn agree(g: f32, s: f32) -> bool {
    g == s || (g - s).abs() <= 1e-5 * s.abs().max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, max_shrink_iters: 64, ..ProptestConfig::default() })]

    /// Random interleavings of host writes, host reads and kernel calls (on the GPU, on a
    /// CPU variant, or routed) on resident data read what the same program reads on plain
    /// slices, and end with the same data.
    #[test]
    fn programs_on_resident_data_read_what_they_read_on_plain_slices(
        n in 3usize..12,
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        if !gpu_or_skip() {
            return Ok(());
        }
        let start = |k: usize| -> Vec<f32> { (0..n * n).map(|i| ((i * 7 + k) % 13) as f32 / 4.0).collect() };
        let mut plain = [start(0), start(1)];
        let mut res = [Resident::new(start(0)), Resident::new(start(1))];
        let bits0: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let mut plain_bits = [bits0.clone(), bits0.iter().map(|b| b.rotate_left(7)).collect::<Vec<_>>()];
        let mut res_bits = [Resident::new(plain_bits[0].clone()), Resident::new(plain_bits[1].clone())];
        for step in &steps {
            match *step {
                Step::Write(g, i, v) => {
                    let i = i % (n * n);
                    plain[g][i] = v;
                    res[g].host_mut()[i] = v;
                }
                Step::Read(g, i) => {
                    let i = i % (n * n);
                    let (got, want) = (res[g].host()[i], plain[g][i]);
                    prop_assert!(agree(got, want), "{step:?}: {got} vs {want}");
                }
                Step::Sweep(from, p) => {
                    let [a, b] = &mut plain;
                    let [ra, rb] = &mut res;
                    if from == 0 {
                        jacobi::scalar(a, b, n);
                        p.call(|| jacobi::resident(&*ra, rb, n));
                    } else {
                        jacobi::scalar(b, a, n);
                        p.call(|| jacobi::resident(&*rb, ra, n));
                    }
                }
                Step::Blend(t, p) => {
                    let [a, b] = &mut plain;
                    blend::scalar(a, b, t);
                    let [ra, rb] = &mut res;
                    p.call(|| blend::resident(&*ra, rb, t));
                }
                Step::Total(p) => {
                    let want = total::scalar(&plain[0]);
                    let got = p.call(|| total::resident(&res[0]));
                    prop_assert!((got - want).abs() <= 1e-5 * want.abs().max(1.0) * (n * n) as f32, "{got} vs {want}");
                }
                Step::Mix(p) => {
                    let [a, b] = &mut plain_bits;
                    mix::scalar(a, b);
                    let [ra, rb] = &mut res_bits;
                    p.call(|| mix::resident(&*ra, rb));
                }
                Step::WriteBits(g, i, v) => {
                    let i = i % n;
                    plain_bits[g][i] = v;
                    res_bits[g].host_mut()[i] = v;
                }
            }
        }
        for g in 0..2 {
            for (i, (&got, &want)) in res[g].host().iter().zip(&plain[g]).enumerate() {
                prop_assert!(agree(got, want), "grid {g}[{i}]: {got} vs {want}");
            }
            prop_assert_eq!(res_bits[g].host(), &plain_bits[g][..]);
        }
    }
}
