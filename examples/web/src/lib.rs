//! Annotated kernels in a web page and in Node: the crate behind `index.html`
//! (see this folder's README).
//!
//! Built for `wasm32-unknown-unknown` and bound to JavaScript by wasm-bindgen,
//! it exports a size sweep that runs each kernel routed and checks every result
//! ([`sweep()`]), the learned tables ([`tables`]), their export and import as a
//! JSON string for `localStorage` ([`export_tables`], [`import_tables`]), the
//! Scalar vs SIMD128 figures ([`figures`]) and a call with bad input
//! ([`bad_input`]), which traps. It also builds natively, where the same
//! functions run on the native backends.

use adaptive_kernel::{adaptive_kernel, ops};
use wasm_bindgen::prelude::*;

mod figures;
pub mod sweep;

pub use figures::figures;
pub use sweep::{sweep, tables};

/// `Σ aᵢ·bᵢ` through the op set (trueno's SIMD128 `dot` in the SIMD variant).
#[adaptive_kernel(complexity = "Medium")]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b)
}

/// `Σ xᵢ²` as a plain loop: the SIMD variant runs it in lanes (reassociated).
#[adaptive_kernel(complexity = "Medium")]
pub fn sum_squares(x: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for v in x {
        acc += v * v;
    }
    acc
}

/// `y += alpha·x`, element by element: LLVM vectorises it in the SIMD128 clone.
#[adaptive_kernel(complexity = "Low")]
pub fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// `C = A·B`, row-major; A is m×k, B is k×n.
#[adaptive_kernel(complexity = "High", size = m * k + k * n, flops = 2 * m * n * k)]
pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    ops::matmul(a, b, m, n, k)
}

/// `e^xᵢ` through the op set (the runtime's polynomial, compiled for SIMD128).
#[adaptive_kernel(complexity = "Medium")]
pub fn exp(x: &[f32]) -> Vec<f32> {
    ops::exp(x)
}

/// Every kernel here, for reports.
pub fn kernels() -> [&'static adaptive_kernel::Kernel; 5] {
    [&dot::KERNEL, &sum_squares::KERNEL, &saxpy::KERNEL, &matmul::KERNEL, &exp::KERNEL]
}

/// What this process learned, as the JSON string to keep in `localStorage`.
#[wasm_bindgen]
pub fn export_tables() -> String {
    adaptive_kernel::export_learned()
}

/// Imports tables [`export_tables`] produced; call it before the first kernel call.
/// Returns how many kernels start from the imported tables.
///
/// # Errors
/// The import's error message when the text is not such a table (nothing is imported).
#[wasm_bindgen]
pub fn import_tables(json: &str) -> Result<usize, String> {
    adaptive_kernel::import_learned(json).map(|i| i.kernels_adopted).map_err(|e| e.to_string())
}

/// The SIMD level the SIMD variants run at here (`Simd128` on wasm32).
#[wasm_bindgen]
pub fn simd_level() -> String {
    format!("{:?}", adaptive_kernel::simd_level())
}

/// Calls `dot` with slices of different lengths: the op's documented shape panic.
/// On wasm32-unknown-unknown a panic aborts, which is a trap: the call throws a
/// `WebAssembly.RuntimeError` in JavaScript and this instance must not be used
/// again (Rust's state in it may be half-updated). The page shows how to carry
/// on: it re-instantiates the module and imports the tables it exported before.
#[wasm_bindgen]
pub fn bad_input() -> f32 {
    dot(&[1.0; 3], &[1.0; 4])
}

/// Sends panic messages to `globalThis.akPanic` (the page shows it after a trap):
/// on wasm32-unknown-unknown the standard hook's stderr goes nowhere.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| report_panic(&info.to_string())));
}

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[wasm_bindgen(inline_js = "export function report_panic(m) { globalThis.akPanic = m; }")]
extern "C" {
    fn report_panic(message: &str);
}

/// Natively the standard hook's message is enough.
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
fn report_panic(message: &str) {
    eprintln!("{message}");
}
