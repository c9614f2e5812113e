//! The three builds of each program of `benches/programs.rs` compute the same
//! result: plain (unannotated), annotated (routed, and each of its variants
//! called directly) and hand-optimised, at sizes that are not multiples of any
//! lane width, each checked against a reference computed here in `f64`.
//!
//! Tolerances: float reductions may be regrouped (the annotated SIMD variant,
//! the hand-optimised lanes) and the hand-optimised builds fuse multiply–adds
//! and multiply by reciprocals, so sums are compared with a bound of the
//! classical form `c·n·ε·Σ|terms|` (Higham §4.2; `c` stated per check) against
//! the `f64` reference, never with a bare relative error. The annotated Scalar
//! variant is the body as written: bit for bit the plain program. Element-wise
//! programs without reductions (the blur) must give the plain result bit for
//! bit in every annotated variant; integer programs (the histogram) exactly,
//! in every build.
//!
//! The programs written with ndarray (`benches/programs/arrays.rs`) are held to the
//! same checks in their four builds (their twin: the program written over slices).
//!
//! The same checks run once more in a child process with every call forced onto
//! the GPU (`ADAPTIVE_KERNEL_BACKEND=gpu`, on lavapipe where there is no GPU): each
//! program with a GPU variant runs its loops on the device, within the same
//! bounds (its sums keep the body's order; a device may fuse multiply–adds, which
//! the bounds' roundings cover), and each without one runs SIMD and says why.

#[path = "../benches/common/mod.rs"]
mod common;
#[path = "../benches/programs/mod.rs"]
mod programs;

use adaptive_kernel::__private::gpu_loop;
use adaptive_kernel::kernel::KernelSpec;
use adaptive_kernel::resident::Resident;
use programs::{arrays, blur, histogram, jacobi, kmeans, layernorm, nbody, softmax, stencil, Build};

const EPS: f64 = f32::EPSILON as f64;

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Each of `got` within `bound[i]` of `reference[i]`.
fn within(what: &str, got: &[f32], reference: &[f64], bound: &[f64]) {
    assert_eq!(got.len(), reference.len(), "{what}: length");
    for (i, ((&g, &r), &b)) in got.iter().zip(reference).zip(bound).enumerate() {
        assert!((f64::from(g) - r).abs() <= b, "{what}: element {i}: {g} vs {r} (allowed {b:e})");
    }
}

#[test]
fn nbody_builds_agree_with_an_f64_reference() {
    let n = 203;
    let b = nbody::Bodies::new(n, 7);
    // Reference accelerations and, per body and axis, Σ|terms| for the bound.
    let mut reference = [vec![0.0f64; n], vec![0.0f64; n], vec![0.0f64; n]];
    let mut magnitude = [vec![0.0f64; n], vec![0.0f64; n], vec![0.0f64; n]];
    let f = |v: &[f32], i: usize| f64::from(v[i]);
    for i in 0..n {
        for j in 0..n {
            let d = [f(&b.x, j) - f(&b.x, i), f(&b.y, j) - f(&b.y, i), f(&b.z, j) - f(&b.z, i)];
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + f64::from(nbody::SOFTENING2);
            let s = f(&b.m, j) / (r2 * r2.sqrt());
            for axis in 0..3 {
                reference[axis][i] += d[axis] * s;
                magnitude[axis][i] += (d[axis] * s).abs();
            }
        }
    }
    // Each term is within a few roundings of the reference's (offsets, r², sqrt, division,
    // product) and the sum of n of them within n·ε·Σ|terms|: 2·(n + 8)·ε·Σ|terms| in all.
    let bound = magnitude.map(|m| m.iter().map(|s| 2.0 * (n + 8) as f64 * EPS * s).collect::<Vec<_>>());
    let plain = b.accelerations(Build::Plain);
    for build in Build::ALL {
        let a = b.accelerations(build);
        for axis in 0..3 {
            within(&format!("{build:?} axis {axis}"), &a[axis], &reference[axis], &bound[axis]);
        }
    }
    let run = |f: nbody::AccelerationsFn| {
        let mut a = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        let [ax, ay, az] = &mut a;
        f(&b.x, &b.y, &b.z, &b.m, ax, ay, az);
        a
    };
    let scalar = run(nbody::annotated::accelerations::scalar);
    let simd = run(nbody::annotated::accelerations::simd);
    for axis in 0..3 {
        assert_eq!(bits(&scalar[axis]), bits(&plain[axis]), "the Scalar variant is the body as written");
        within(&format!("SIMD variant axis {axis}"), &simd[axis], &reference[axis], &bound[axis]);
    }
}

/// Squared distance of point `i` to centroid `c`, in `f64`.
fn distance(data: &kmeans::Data, i: usize, c: usize) -> f64 {
    let d = data.d;
    let p = &data.points[i * d..(i + 1) * d];
    let q = &data.centroids[c * d..(c + 1) * d];
    p.iter().zip(q).map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2)).sum()
}

/// `labels` are nearest centroids up to rounding (a label may differ from the exact
/// nearest only where the two distances are within 4·d·ε of each other), and `inertia`
/// is the sum of the labelled distances within 2·(n + 4·d)·ε of it.
fn check_assignment(what: &str, data: &kmeans::Data, labels: &[u32], inertia: f32) {
    let (n, k, d) = (labels.len(), data.centroids.len() / data.d, data.d);
    let mut total = 0.0;
    for (i, &label) in labels.iter().enumerate() {
        let nearest = (0..k).map(|c| distance(data, i, c)).fold(f64::INFINITY, f64::min);
        let got = distance(data, i, label as usize);
        assert!(got - nearest <= 4.0 * d as f64 * EPS * got, "{what}: point {i} labelled {label}: {got} > {nearest}");
        total += got;
    }
    let bound = 2.0 * (n + 4 * d) as f64 * EPS * total;
    assert!((f64::from(inertia) - total).abs() <= bound, "{what}: inertia {inertia} vs {total} (allowed {bound:e})");
}

#[test]
fn kmeans_builds_assign_nearest_centroids() {
    for (n, k, d) in [(1_001, 37, 39), (300, 64, 16), (50, 3, 5)] {
        let data = kmeans::Data::new(n, k, d, 11);
        let (plain, _) = data.assign(Build::Plain);
        for build in Build::ALL {
            let (labels, inertia) = data.assign(build);
            check_assignment(&format!("{build:?} {n}×{d}d k={k}"), &data, &labels, inertia);
        }
        let mut labels = vec![0u32; n];
        let inertia = kmeans::annotated::assign::scalar(&data.points, &data.centroids, d, &mut labels);
        assert_eq!(labels, plain, "the Scalar variant is the body as written");
        let inertia_simd = kmeans::annotated::assign::simd(&data.points, &data.centroids, d, &mut labels);
        check_assignment("SIMD variant", &data, &labels, inertia_simd);
        assert_eq!(inertia.to_bits(), data.assign(Build::Plain).1.to_bits());
    }
}

#[test]
fn kmeans_builds_break_ties_towards_the_first_centroid() {
    // Every centroid twice: each point is exactly as near to both copies, in every build
    // (each build computes both distances the same way), so every label must be the first.
    let (n, k, d) = (257, 40, 16);
    let mut data = kmeans::Data::new(n, k / 2, d, 5);
    let half = data.centroids.clone();
    data.centroids.extend_from_slice(&half);
    for build in Build::ALL {
        let (labels, _) = data.assign(build);
        assert!(labels.iter().all(|&c| (c as usize) < k / 2), "{build:?}: {labels:?}");
    }
}

#[test]
fn ndarray_kmeans_builds_assign_nearest_centroids() {
    for (n, k, d) in [(1_001, 37, 39), (50, 3, 5)] {
        // The case's data: `kmeans::Data` of the same seed, as arrays.
        let data = kmeans::Data::new(n, k, d, 0xC1A55);
        let case = arrays::assign::Case::new(n, k, d);
        for build in Build::ARRAYS {
            let (labels, inertia) = case.labels(build);
            check_assignment(&format!("ndarray {build:?} {n}×{d}d k={k}"), &data, labels.as_slice().unwrap(), inertia);
        }
        let (plain, inertia) = case.labels(Build::Plain);
        assert_eq!(
            (plain.to_vec(), inertia.to_bits()),
            (data.assign(Build::Plain).0, data.assign(Build::Plain).1.to_bits())
        );
    }
}

/// The layer norm of `data` in `f64`, and per element the bound a build must keep to.
fn layer_norm_reference(data: &layernorm::Data) -> (Vec<f64>, Vec<f64>) {
    let cols = data.gamma.len();
    let rows = data.x.len() / cols;
    let mut reference = vec![0.0f64; rows * cols];
    let mut bound = vec![0.0f64; rows * cols];
    for r in 0..rows {
        let row: Vec<f64> = data.x[r * cols..(r + 1) * cols].iter().map(|&v| f64::from(v)).collect();
        let mean = row.iter().sum::<f64>() / cols as f64;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
        let inv_std = 1.0 / (var + f64::from(layernorm::EPS)).sqrt();
        let max = row.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for j in 0..cols {
            let g = f64::from(data.gamma[j]);
            reference[r * cols + j] = (row[j] - mean) * inv_std * g + f64::from(data.beta[j]);
            // The mean's error (cols·ε·max), carried through 1/std, and a few roundings of the result.
            bound[r * cols + j] =
                2.0 * cols as f64 * EPS * max * inv_std * g.abs() + 8.0 * EPS * reference[r * cols + j].abs();
        }
    }
    (reference, bound)
}

#[test]
fn ndarray_layer_norm_builds_agree_with_an_f64_reference() {
    // The case's data: `layernorm::Data` of the same seed, as arrays.
    let (rows, cols) = (7, 203);
    let data = layernorm::Data::new(rows, cols, 0x1A7E);
    let (reference, bound) = layer_norm_reference(&data);
    let case = arrays::norm::Case::new(rows, cols);
    for build in Build::ARRAYS {
        within(&format!("ndarray {build:?}"), case.normalised(build).as_slice().unwrap(), &reference, &bound);
    }
}

#[test]
fn stencil_builds_give_the_plain_step_bit_for_bit() {
    // Element-wise, no reduction: every build, and the slice program, bit for bit.
    for (h, w) in [(37, 53), (3, 3), (2, 9), (9, 2), (64, 65)] {
        let case = arrays::heat::Case::new(h, w);
        let grid = case.grid();
        let mut out = grid.to_vec();
        stencil::plain::heat_step(grid, &mut out, w, arrays::heat::ALPHA);
        assert_eq!(out != grid, h > 2 && w > 2, "{h}×{w}: the step changes the interior, if there is one");
        for build in Build::ARRAYS {
            assert_eq!(bits(case.step(build).as_slice().unwrap()), bits(&out), "ndarray {build:?} {h}×{w}");
        }
    }
}

#[test]
fn layer_norm_builds_agree_with_an_f64_reference() {
    let (rows, cols) = (7, 203);
    let data = layernorm::Data::new(rows, cols, 3);
    let (reference, bound) = layer_norm_reference(&data);
    let plain = data.layer_norm(Build::Plain);
    for build in Build::ALL {
        within(&format!("{build:?}"), &data.layer_norm(build), &reference, &bound);
    }
    let mut out = vec![0.0; rows * cols];
    layernorm::annotated::layer_norm::scalar(&data.x, &data.gamma, &data.beta, &mut out);
    assert_eq!(bits(&out), bits(&plain), "the Scalar variant is the body as written");
    layernorm::annotated::layer_norm::simd(&data.x, &data.gamma, &data.beta, &mut out);
    within("SIMD variant", &out, &reference, &bound);
}

#[test]
fn softmax_builds_agree_with_an_f64_reference() {
    let (rows, cols) = (5, 203);
    let scores = softmax::scores(rows, cols, 9);
    let mut reference = vec![0.0f64; rows * cols];
    for r in 0..rows {
        let row = &scores[r * cols..(r + 1) * cols];
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
        let e: Vec<f64> = row.iter().map(|&v| (f64::from(v) - max).exp()).collect();
        let sum: f64 = e.iter().sum();
        for j in 0..cols {
            reference[r * cols + j] = e[j] / sum;
        }
    }
    // Every term is positive: the sum within cols·ε of its value, each exponential within
    // 2 ulp (libm's, and the hand build's polynomial): relative (cols + 8)·ε per element.
    let bound: Vec<f64> = reference.iter().map(|r| 2.0 * (cols + 8) as f64 * EPS * r).collect();
    let plain = softmax::softmax_of(Build::Plain, &scores, cols);
    for build in Build::ALL {
        within(&format!("{build:?}"), &softmax::softmax_of(build, &scores, cols), &reference, &bound);
    }
    let mut out = scores.clone();
    softmax::annotated::softmax_rows::scalar(&mut out, cols);
    assert_eq!(bits(&out), bits(&plain), "the Scalar variant is the body as written");
    let mut out = scores.clone();
    softmax::annotated::softmax_rows::simd(&mut out, cols);
    within("SIMD variant", &out, &reference, &bound);
}

#[test]
fn hand_exponential_is_within_two_ulp_of_libm() {
    for i in 0..=100_000 {
        let x = -87.0 * i as f32 / 100_000.0;
        let (got, want) = (softmax::hand::exp(x), x.exp());
        assert!((got - want).abs() <= 2.0 * f32::EPSILON * want, "exp({x}) = {got}, libm {want}");
    }
}

#[test]
fn blur_builds_agree_and_the_annotated_variants_bit_for_bit() {
    // Wide enough for lanes with a shifted last step, and narrower than one lane group.
    for (w, h) in [(37, 23), (10, 6), (3, 3), (64, 2)] {
        let src = blur::image(w, h, 1);
        let plain = blur::blurred(Build::Plain, &src, w);
        let (mut reference, mut bound) = (vec![0.0f64; w * h], vec![0.0f64; w * h]);
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                if y == 0 || y + 1 == h || x == 0 || x + 1 == w {
                    reference[i] = f64::from(src[i]);
                } else {
                    let terms =
                        [i - w, i, i + w].into_iter().flat_map(|c| [c - 1, c, c + 1]).map(|j| f64::from(src[j]));
                    reference[i] = terms.clone().sum::<f64>() / 9.0;
                    // Eight additions, the division (or a product with a rounded 1/9): 10 roundings.
                    bound[i] = 10.0 * EPS * terms.map(f64::abs).sum::<f64>() / 9.0;
                }
            }
        }
        within(&format!("hand {w}×{h}"), &blur::blurred(Build::Hand, &src, w), &reference, &bound);
        within(&format!("plain {w}×{h}"), &plain, &reference, &bound);
        // No reduction: nothing may be regrouped, in any variant.
        assert_eq!(bits(&blur::blurred(Build::Annotated, &src, w)), bits(&plain), "routed {w}×{h}");
        let mut out = vec![0.0; w * h];
        blur::annotated::box_blur::scalar(&src, &mut out, w);
        assert_eq!(bits(&out), bits(&plain), "Scalar variant {w}×{h}");
        blur::annotated::box_blur::simd(&src, &mut out, w);
        assert_eq!(bits(&out), bits(&plain), "SIMD variant {w}×{h}");
    }
}

#[test]
fn jacobi_builds_agree_and_the_annotated_ones_bit_for_bit() {
    // Odd sizes: lanes with a shifted last step, rows narrower than one lane group, the smallest grid.
    for n in [37, 10, 3, 70] {
        let start = jacobi::grid(n, 5);
        let run = |build: Build| {
            let (mut a, mut b) = (start.clone(), start.clone());
            for _ in 0..4 {
                jacobi::sweep(build, &a, &mut b, n);
                jacobi::sweep(build, &b, &mut a, n);
            }
            a
        };
        let plain = run(Build::Plain);
        // Each point is 0.25·(((l + r) + u) + d) in every build: the same roundings.
        assert_eq!(bits(&run(Build::Hand)), bits(&plain), "hand {n}");
        assert_eq!(bits(&run(Build::Annotated)), bits(&plain), "routed {n}");
        let (mut a, mut b) = (start.clone(), start.clone());
        let (mut ra, mut rb) = (Resident::new(start.clone()), Resident::new(start.clone()));
        for _ in 0..4 {
            jacobi::annotated::sweep::simd(&a, &mut b, n);
            jacobi::annotated::sweep::parallel(&b, &mut a, n);
            jacobi::annotated::sweep::resident(&ra, &mut rb, n);
            jacobi::annotated::sweep::resident(&rb, &mut ra, n);
        }
        assert_eq!(bits(&a), bits(&plain), "SIMD and Parallel variants {n}");
        assert_eq!(bits(ra.host()), bits(&plain), "resident entry {n}");
    }
}

#[test]
fn histogram_builds_count_exactly_alike() {
    for (n, bins) in [(100_003, 256), (1_000, 7), (70_000, 4_096), (5, 1)] {
        let samples = histogram::samples(n, 2);
        let (lo, hi) = histogram::RANGE;
        let mut reference = vec![0u32; bins];
        for &v in &samples {
            if (lo..hi).contains(&v) {
                let bin = ((f64::from(v) - f64::from(lo)) / f64::from(hi - lo) * bins as f64) as usize;
                reference[bin.min(bins - 1)] += 1;
            }
        }
        let inside = reference.iter().sum::<u32>() as usize;
        assert!(n < 1_000 || (inside < n && inside > 0), "some samples in range, some out: {inside} of {n}");
        for build in Build::ALL {
            let counts = histogram::counts(build, &samples, bins);
            // The f64 bin edges may round differently from f32's at a boundary: compare totals
            // with the reference, and every build with the plain one bin by bin.
            assert_eq!(counts.iter().sum::<u32>() as usize, inside, "{build:?}");
            assert_eq!(counts, histogram::counts(Build::Plain, &samples, bins), "{build:?} {n} into {bins}");
        }
        let mut counts = vec![0u32; bins];
        histogram::annotated::histogram::scalar(&samples, lo, hi, &mut counts);
        histogram::annotated::histogram::simd(&samples, lo, hi, &mut counts);
        histogram::annotated::histogram::parallel(&samples, lo, hi, &mut counts);
        let thrice: Vec<u32> = histogram::counts(Build::Plain, &samples, bins).iter().map(|c| 3 * c).collect();
        assert_eq!(counts, thrice, "every variant adds to the counts");
    }
}

/// The programs with a GPU variant, and the file each kernel is in.
fn with_gpu() -> [(&'static KernelSpec, &'static str); 5] {
    [
        (nbody::annotated::accelerations::KERNEL.spec(), "benches/programs/nbody.rs"),
        (kmeans::annotated::assign::KERNEL.spec(), "benches/programs/kmeans.rs"),
        (layernorm::annotated::layer_norm::KERNEL.spec(), "benches/programs/layernorm.rs"),
        (softmax::annotated::softmax_rows::KERNEL.spec(), "benches/programs/softmax.rs"),
        (jacobi::annotated::sweep::KERNEL.spec(), "benches/programs/jacobi.rs"),
    ]
}

#[test]
#[ignore = "entry point of the child process `forcing_the_gpu_runs_each_program_there_or_says_why` starts"]
fn every_program_forced_onto_the_gpu() {
    adaptive_kernel::history::set_history(adaptive_kernel::config::HistorySetting::Off);
    nbody_builds_agree_with_an_f64_reference();
    kmeans_builds_assign_nearest_centroids();
    layer_norm_builds_agree_with_an_f64_reference();
    softmax_builds_agree_with_an_f64_reference();
    blur_builds_agree_and_the_annotated_variants_bit_for_bit();
    histogram_builds_count_exactly_alike();
    jacobi_builds_agree_and_the_annotated_ones_bit_for_bit();
    for (spec, file) in with_gpu() {
        for l in spec.gpu_loops {
            let runs = gpu_loop::runs(file, l.line);
            assert!(runs.on_device > 0 && runs.on_host == 0, "{}: line {}: {runs:?}", spec.name, l.line);
        }
    }
}

#[test]
fn forcing_the_gpu_runs_each_program_there_or_says_why() {
    if std::env::var("ADAPTIVE_KERNEL_SKIP_GPU_TESTS").as_deref() == Ok("1") {
        eprintln!("skipped: ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1");
        return;
    }
    for (spec, _) in with_gpu() {
        assert!(spec.gpu_loops.iter().all(|l| l.on_gpu()), "{}: {:?}", spec.name, spec.gpu_loops);
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = std::process::Command::new(exe)
        .args(["--ignored", "--exact", "every_program_forced_onto_the_gpu", "--nocapture", "--test-threads=1"])
        .env("ADAPTIVE_KERNEL_BACKEND", "gpu")
        .env("ADAPTIVE_KERNEL_GPU", std::env::var("ADAPTIVE_KERNEL_GPU").unwrap_or_else(|_| "software".into()))
        .env("ADAPTIVE_KERNEL_HISTORY", "off")
        .output()
        .expect("spawn the child test process");
    let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    // The programs without a GPU variant ran SIMD, and said why, naming the loop's word.
    for (kernel, word) in [("box_blur", "(call: "), ("histogram", "on the host (")] {
        let said =
            text.lines().find(|l| l.contains(kernel) && l.contains("GPU forced but the kernel has no GPU variant"));
        assert!(said.is_some_and(|l| l.contains(word)), "{kernel}: {text}");
    }
}
