//! The main job: three annotated kernels called at sizes across the routing
//! thresholds. The first call into each size bucket goes where the MoE table
//! and the cost model say; the router then times the variants, settles on the
//! fastest, and saves what it learned. Run it twice: the second run starts
//! settled.
//!
//! ```sh
//! cargo run --release --example routing
//! ADAPTIVE_KERNEL_GPU=software cargo run --release --example routing   # let lavapipe count as a GPU
//! ADAPTIVE_KERNEL_LOG=info cargo run --release --example routing       # watch the decisions
//! ```

use std::hint::black_box;
use std::time::Instant;

use adaptive_kernel::{adaptive_kernel, ops, Backend, BackendSelector, Kernel};

/// C = A·B, row-major f32; A is m×k, B is k×n.
#[adaptive_kernel(complexity = "High", size = m * k + k * n, flops = 2 * m * n * k)]
pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    ops::matmul(a, b, m, n, k)
}

/// y += alpha·x, written as a plain loop: its SIMD variant is this loop compiled for AVX2/AVX-512.
#[adaptive_kernel(complexity = "Low")]
pub fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// The L2 norm of a softmax: a few passes over the data.
#[adaptive_kernel(complexity = "Medium")]
pub fn softmax_norm(x: &[f32]) -> f32 {
    ops::norm_l2(&ops::softmax(x))
}

/// Calls `f` `calls` times and reports what the MoE table would pick, whether the
/// bucket started fresh or settled (from a saved history), and what was learned.
fn drive(kernel: &'static Kernel, label: &str, size: usize, calls: usize, mut f: impl FnMut()) {
    let before = kernel.table().row_for(size).and_then(|r| r.chosen);
    let start = Instant::now();
    for _ in 0..calls {
        f();
    }
    let per_call = start.elapsed() / calls as u32;
    let row = kernel.table().row_for(size).cloned();
    let after = row.as_ref().and_then(|r| r.chosen);
    let show = |b: Option<Backend>| b.map_or("exploring".to_owned(), |b| b.to_string());
    let moe = BackendSelector::new().select_with_moe(kernel.complexity(), size);
    let start = if before.is_some() { format!("settled on {}", show(before)) } else { "fresh".to_owned() };
    println!(
        "  {label:<20} size {size:>8}: MoE says {moe:<6} started {start:<17} learned {:<6} ({calls} calls, {:.1} µs/call)",
        show(after),
        per_call.as_secs_f64() * 1e6,
    );
}

fn main() {
    adaptive_kernel::init_logging();
    match adaptive_kernel::history_file() {
        Some(path) => println!("history: {}", path.display()),
        None => println!("history: off"),
    }
    println!("GPU: {}", adaptive_kernel::ops::gpu::health());

    println!("\nsaxpy (Low: SIMD above 1,000,000 elements, never GPU)");
    for n in [1_000usize, 100_000, 2_000_000] {
        let x = vec![1.0f32; n];
        let mut y = vec![0.0f32; n];
        drive(&saxpy::KERNEL, "saxpy", 2 * n, 60, || saxpy(0.5, black_box(&x), black_box(&mut y)));
    }

    println!("\nsoftmax_norm (Medium: SIMD above 10,000, GPU above 100,000)");
    for n in [5_000usize, 50_000, 500_000] {
        let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32 / 97.0).collect();
        drive(&softmax_norm::KERNEL, "softmax_norm", n, 40, || {
            black_box(softmax_norm(black_box(&x)));
        });
    }

    println!("\nmatmul (High: SIMD above 1,000, GPU above 10,000; size = m·k + k·n)");
    for n in [16usize, 64, 256] {
        let a: Vec<f32> = (0..n * n).map(|i| (i % 13) as f32 * 0.1).collect();
        let b: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.2).collect();
        let calls = if n >= 256 { 20 } else { 60 };
        drive(&matmul::KERNEL, &format!("matmul {n}×{n}×{n}"), 2 * n * n, calls, || {
            black_box(matmul(black_box(&a), black_box(&b), n, n, n));
        });
    }

    println!("\nWhat was learned:");
    for kernel in adaptive_kernel::kernels() {
        println!("{}", kernel.table());
    }
    match adaptive_kernel::flush() {
        Ok(()) if adaptive_kernel::history_file().is_some() => {
            println!("Saved. Run again: every bucket above starts settled, with no exploration.")
        }
        Ok(()) => {}
        Err(e) => eprintln!("could not save history: {e}"),
    }
}
