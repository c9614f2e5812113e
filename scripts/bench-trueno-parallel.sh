#!/usr/bin/env bash
# ops::par::matmul (faer's multi-threaded GEMM on rayon; until it called faer,
# bands of rows of trueno's `gemm_blis`) against trueno's own
# `blis::gemm_blis_parallel`, interleaved in one process.
#
# trueno's GEMM needs its `parallel` cargo feature, which the workspace does
# not enable: it also makes `blis::transpose` (what `ops::simd::transpose`
# calls) fork onto rayon's global pool by itself above 1M elements, routing
# behind our back (DESIGN.md, "Known traps"). So this builds a throwaway crate
# outside the workspace that turns the feature on for this comparison only.
#
# Usage: scripts/bench-trueno-parallel.sh [reps]   (default 15 per size)
# Prints, per size, the median time and GFLOP/s of each and their ratio.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
reps="${1:-15}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src"
cat >"$dir/Cargo.toml" <<EOF
[package]
name = "trueno-parallel-probe"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
adaptive-kernel-runtime = { path = "$root/runtime", default-features = false }
trueno = { package = "aprender-compute", version = "=0.72.3", default-features = false, features = ["parallel"] }

[profile.release]
debug = false
EOF
cat >"$dir/src/main.rs" <<'EOF'
use std::hint::black_box;
use std::time::Instant;

use adaptive_kernel_runtime::ops::{par, simd};

fn data(n: usize, seed: u32) -> Vec<f32> {
    // The same inputs as benches/par.rs makes.
    (0..n as u32).map(|i| (i ^ seed).wrapping_mul(0x9E37_79B9).rotate_left(seed % 32) as f32 / 2f32.powi(30) - 2.0).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let reps: usize = std::env::args().nth(1).and_then(|r| r.parse().ok()).unwrap_or(15);
    println!("threads: ops::par {}, rayon global {}", par::threads(), rayon_threads());
    println!("{:>5} {:>12} {:>12} {:>12} {:>10}", "n", "simd", "par", "trueno_par", "par/trueno");
    for n in [128usize, 256, 512, 1024] {
        let (a, b) = (data(n * n, 1), data(n * n, 2));
        let flop = 2.0 * (n * n * n) as f64;
        let (mut t_simd, mut t_par, mut t_trueno) = (vec![], vec![], vec![]);
        let inner = (2e8 / flop).ceil() as usize; // ≥ ~0.2 GFLOP per timed sample
        for _ in 0..reps {
            let t = Instant::now();
            for _ in 0..inner {
                black_box(simd::matmul(black_box(&a), &b, n, n, n));
            }
            t_simd.push(t.elapsed().as_secs_f64() / inner as f64);
            let t = Instant::now();
            for _ in 0..inner {
                black_box(par::matmul(black_box(&a), &b, n, n, n));
            }
            t_par.push(t.elapsed().as_secs_f64() / inner as f64);
            let t = Instant::now();
            for _ in 0..inner {
                let mut c = vec![0.0f32; n * n];
                trueno::blis::gemm_blis_parallel(n, n, n, black_box(&a), &b, &mut c).unwrap();
                black_box(c);
            }
            t_trueno.push(t.elapsed().as_secs_f64() / inner as f64);
        }
        let (s, p, t) = (median(t_simd), median(t_par), median(t_trueno));
        println!(
            "{n:>5} {:>8.1} GF/s {:>7.1} GF/s {:>7.1} GF/s {:>9.2}x",
            flop / s / 1e9,
            flop / p / 1e9,
            flop / t / 1e9,
            t / p
        );
    }
}

fn rayon_threads() -> usize {
    // trueno re-exports nothing of rayon; its HeijunkaScheduler reads the pool size.
    trueno::blis::HeijunkaScheduler::default().num_threads
}
EOF
cd "$dir"
cargo run --release --quiet -- "$reps"
