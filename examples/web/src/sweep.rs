//! The size sweep the page runs: every kernel routed over a range of sizes,
//! every result checked against a reference computed in `f64`, and what the
//! router settled on.

use adaptive_kernel::{Backend, Kernel};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use crate::{dot, exp, kernels, matmul, saxpy, sum_squares};

/// Vector lengths of the sweep (`dot`, `sum_squares`, `saxpy`, `exp`).
pub const VECTOR_SIZES: [usize; 5] = [64, 1024, 16_384, 262_144, 1 << 20];
/// Sides of the square matrices of the sweep (`matmul`).
pub const MATRIX_SIDES: [usize; 4] = [8, 32, 96, 192];

/// `len` values in [−1, 1), the same on every run (a linear congruential sequence).
pub fn data(len: usize, seed: u32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

/// Whether `got` is within `rel` of `want`, measured against `scale` (the sum of the magnitudes).
fn close(got: f64, want: f64, scale: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * scale + 1e-6
}

/// How far an `f32` sum of `n` terms may be from the exact one, relative to the sum of
/// their magnitudes: `n·ε` bounds left-to-right summation (Scalar); lanes do better.
fn sum_tolerance(n: usize) -> f64 {
    (n as f64 * f64::from(f32::EPSILON)).max(1e-6)
}

/// Calls one kernel `calls` times at one size and says whether every result was right.
fn run(kernel: &str, size: usize, calls: u32) -> bool {
    let mut ok = true;
    match kernel {
        "dot" => {
            let (a, b) = (data(size, 1), data(size, 2));
            let want: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            let scale: f64 = a.iter().zip(&b).map(|(x, y)| f64::from((x * y).abs())).sum();
            for _ in 0..calls {
                ok &= close(f64::from(dot(&a, &b)), want, scale, sum_tolerance(size));
            }
        }
        "sum_squares" => {
            let x = data(size, 3);
            let want: f64 = x.iter().map(|v| f64::from(*v) * f64::from(*v)).sum();
            for _ in 0..calls {
                ok &= close(f64::from(sum_squares(&x)), want, want, sum_tolerance(size));
            }
        }
        "saxpy" => {
            let x = data(size, 4);
            let mut y = data(size, 5);
            for _ in 0..calls {
                let want: Vec<f32> = y.iter().zip(&x).map(|(yi, xi)| yi + 0.5 * xi).collect();
                saxpy(0.5, &x, &mut y);
                ok &= y == want;
                y.iter_mut().zip(&x).for_each(|(yi, xi)| *yi -= 0.5 * xi);
            }
        }
        "exp" => {
            let x = data(size, 6);
            for _ in 0..calls {
                let got = exp(&x);
                ok &= got.len() == x.len()
                    && got.iter().zip(&x).all(|(g, v)| {
                        let want = f64::from(*v).exp();
                        close(f64::from(*g), want, want, 4.0 * f64::from(f32::EPSILON))
                    });
            }
        }
        "matmul" => {
            let n = size;
            let (a, b) = (data(n * n, 7), data(n * n, 8));
            let mut want = vec![0.0f64; n * n];
            let mut scale = vec![0.0f64; n * n];
            for i in 0..n {
                for p in 0..n {
                    let aip = f64::from(a[i * n + p]);
                    for j in 0..n {
                        want[i * n + j] += aip * f64::from(b[p * n + j]);
                        scale[i * n + j] += (aip * f64::from(b[p * n + j])).abs();
                    }
                }
            }
            for _ in 0..calls {
                let got = matmul(&a, &b, n, n, n);
                ok &= got.len() == n * n
                    && got
                        .iter()
                        .zip(want.iter().zip(&scale))
                        .all(|(g, (w, s))| close(f64::from(*g), *w, *s, sum_tolerance(n)));
            }
        }
        other => unreachable!("no kernel `{other}` in the sweep"),
    }
    ok
}

/// The table row of `kernel` at `size` as JSON: the choice and each backend's median.
fn row(kernel: &'static Kernel, name: &str, size: usize, work_size: usize, ok: bool) -> Value {
    let table = kernel.table();
    let row = table.row_for(work_size);
    let micros = |b: Backend| {
        row.and_then(|r| r.backend(b)).and_then(|m| m.centre).map(|d| (d.as_secs_f64() * 1e7).round() / 10.0)
    };
    json!({
        "kernel": name,
        "size": size,
        "chosen": row.and_then(|r| r.chosen).map(|b| b.to_string()),
        "decided_by": row.map(|r| r.decided_by.to_string()),
        "scalar_us": micros(Backend::Scalar),
        "simd_us": micros(Backend::Simd),
        "ok": ok,
    })
}

/// Runs every kernel routed `calls` times at each size of the sweep, checking each
/// result, and returns a JSON report: `rows` (kernel, size, chosen backend, how it
/// was decided, the Scalar and SIMD medians in µs, whether every result was right),
/// `results_ok`, `settled` and `buckets` (rows whose bucket settled, of all),
/// `backends_used` (never `gpu` or `parallel` on WebAssembly) and `simd_level`.
#[wasm_bindgen]
pub fn sweep(calls: u32) -> String {
    let mut rows = Vec::new();
    for name in ["dot", "sum_squares", "saxpy", "exp"] {
        let kernel = kernels().into_iter().find(|k| k.name().ends_with(name)).expect("a kernel of this crate");
        for size in VECTOR_SIZES {
            let ok = run(name, size, calls);
            // The size expression is the total of the slice lengths (two slices for dot and saxpy).
            let work_size = if matches!(name, "dot" | "saxpy") { 2 * size } else { size };
            rows.push(row(kernel, name, size, work_size, ok));
        }
    }
    for n in MATRIX_SIDES {
        let ok = run("matmul", n, calls);
        rows.push(row(&matmul::KERNEL, "matmul", n, 2 * n * n, ok));
    }
    let results_ok = rows.iter().all(|r| r["ok"] == true);
    let settled = rows.iter().filter(|r| r["chosen"].is_string()).count();
    let mut used: Vec<String> = rows.iter().filter_map(|r| r["chosen"].as_str().map(str::to_owned)).collect();
    used.sort();
    used.dedup();
    json!({
        "simd_level": format!("{:?}", adaptive_kernel::simd_level()),
        "results_ok": results_ok,
        "settled": settled,
        "buckets": rows.len(),
        "backends_used": used,
        "rows": rows,
    })
    .to_string()
}

/// Every kernel's learned table as the library prints it.
#[wasm_bindgen]
pub fn tables() -> String {
    kernels().iter().map(|k| k.table().to_string()).collect::<Vec<_>>().join("\n")
}
