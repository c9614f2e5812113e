//! A loop that reuses its buffers: the feed-forward block of a small
//! transformer (288 → 768 → 288, the sizes of the 15M-parameter "stories"
//! model) applied token after token, written with the op set's `_into` forms,
//! so no call allocates: every output goes into a buffer made once.
//!
//! `layer` is an annotated kernel like any other: routed per size, each of
//! its variants binds `ops` to its backend, and its default size counts every
//! slice, the two output buffers included (both layers' calls are about
//! 223,000 elements: one size bucket). The run prints how fast the loop went
//! and what the router learned.
//!
//! ```sh
//! cargo run --release --example into
//! ```

use std::hint::black_box;
use std::time::Instant;

use adaptive_kernel::{adaptive_kernel, ops};

/// `y = gelu(W·x + bias)` for W of `bias.len()` rows × `x.len()` columns;
/// `pre` holds `W·x + bias` afterwards.
#[adaptive_kernel(complexity = "Medium")]
fn layer(w: &[f32], x: &[f32], bias: &[f32], pre: &mut [f32], y: &mut [f32]) {
    ops::matvec_into(w, x, bias.len(), x.len(), y);
    ops::add_into(y, bias, pre);
    ops::gelu_into(pre, y);
}

/// `n` small values from a multiplicative hash.
fn values(n: usize, seed: u32, scale: f32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| ((i ^ seed).wrapping_mul(0x9E37_79B9) >> 8) as f32 / (1 << 24) as f32 * 2.0 - 1.0)
        .map(|v| v * scale)
        .collect()
}

fn main() {
    const DIM: usize = 288;
    const HIDDEN: usize = 768;
    const TOKENS: usize = 20_000;
    let (w_up, b_up) = (values(HIDDEN * DIM, 1, 0.06), values(HIDDEN, 2, 0.1));
    let (w_down, b_down) = (values(DIM * HIDDEN, 3, 0.04), values(DIM, 4, 0.1));

    // Every buffer the loop writes, made once.
    let mut x = values(DIM, 5, 1.0);
    let (mut pre_up, mut hidden) = (vec![0.0; HIDDEN], vec![0.0; HIDDEN]);
    let (mut pre_down, mut out) = (vec![0.0; DIM], vec![0.0; DIM]);

    let start = Instant::now();
    for _ in 0..TOKENS {
        layer(&w_up, &x, &b_up, &mut pre_up, &mut hidden);
        layer(&w_down, &hidden, &b_down, &mut pre_down, &mut out);
        // The next token's input: this one's output plus a residual, in place.
        for (xi, oi) in x.iter_mut().zip(&out) {
            *xi = 0.5 * *xi + oi;
        }
    }
    let elapsed = start.elapsed();
    black_box(&x);
    println!(
        "{TOKENS} tokens through {DIM}→{HIDDEN}→{DIM} in {:.1} ms ({:.2} µs per token); x[0] = {:.4}",
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e6 / TOKENS as f64,
        x[0]
    );
    // The default size of a call: every slice's elements, the outputs `pre` and `y` included.
    let up = w_up.len() + DIM + 3 * HIDDEN;
    let down = w_down.len() + HIDDEN + 3 * DIM;
    println!("sizes routed by: up {up}, down {down} (weights, input, bias and both outputs)\n");
    print!("{}", layer::KERNEL.table());
}
