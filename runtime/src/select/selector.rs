//! The stateless selection rules: the per-complexity size thresholds (the "MoE"
//! table) and the 5× dispatch rule of Gregg & Hazelwood (2011), with
//! trueno-backed convenience helpers.
//!
//! These are stateless: the learning router (`crate::kernel`) starts from the
//! same MoE table ([`crate::moe`]) and then learns from timings.

use crate::backend::{Backend, OpComplexity};
use crate::error::Error;
use crate::moe::{self, moe};
use crate::numeric::is_positive_finite;
use crate::ops;

/// Default host↔device bandwidth: 32 GB/s (PCIe 4.0 x16), in bytes per second.
pub const DEFAULT_PCIE_BANDWIDTH: f64 = 32e9;
/// Default GPU throughput: 20 TFLOP/s, in FLOP per second.
pub const DEFAULT_GPU_FLOPS: f64 = 20e12;
/// Default dispatch ratio: compute time must exceed five times the transfer time.
pub const DEFAULT_MIN_DISPATCH_RATIO: f64 = 5.0;

/// Picks a backend from an operation's complexity and size, or from its bytes
/// moved and FLOPs done.
///
/// # The MoE table ([`select_with_moe`](Self::select_with_moe))
///
/// | complexity | Scalar | SIMD | GPU |
/// | --- | --- | --- | --- |
/// | Low | ≤ 1,000,000 | > 1,000,000 | never |
/// | Medium | ≤ 10,000 | > 10,000 | > 100,000 |
/// | High | ≤ 1,000 | > 1,000 | > 10,000 |
///
/// Every boundary is strict: a High op of exactly 10,000 elements is SIMD.
///
/// # The 5× dispatch rule ([`select_backend`](Self::select_backend))
///
/// GPU when `flops / gpu_flops > ratio × bytes / pcie_bandwidth`, else SIMD.
/// With the defaults (32 GB/s, 20 TFLOP/s, ratio 5) a square matmul of side `n`
/// moves `12·n²` bytes and does `2·n³` FLOPs, so it crosses over at
/// `n = 5·12·20e12 / (2·32e9) = 18,750`: a 1024³ matmul is **SIMD**.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::{Backend, BackendSelector, OpComplexity};
/// let s = BackendSelector::new();
/// assert_eq!(s.select_with_moe(OpComplexity::High, 10_001), Backend::Gpu);
/// assert_eq!(s.select_for_matmul(1024, 1024, 1024), Backend::Simd);
/// assert_eq!(s.select_for_matmul(20_000, 20_000, 20_000), Backend::Gpu);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackendSelector {
    pcie_bandwidth: f64,
    gpu_flops: f64,
    min_dispatch_ratio: f64,
}

impl Default for BackendSelector {
    fn default() -> Self {
        Self::new()
    }
}

fn validate(name: &'static str, value: f64) -> Result<f64, Error> {
    if is_positive_finite(value) {
        Ok(value)
    } else {
        Err(Error::InvalidParameter { name, value })
    }
}

fn validated_or_panic(name: &'static str, value: f64) -> f64 {
    validate(name, value).unwrap_or_else(|e| panic!("BackendSelector: {e}"))
}

impl BackendSelector {
    /// The defaults: 32e9 B/s host↔device bandwidth, 20e12 FLOP/s, ratio 5.0.
    pub const fn new() -> Self {
        BackendSelector {
            pcie_bandwidth: DEFAULT_PCIE_BANDWIDTH,
            gpu_flops: DEFAULT_GPU_FLOPS,
            min_dispatch_ratio: DEFAULT_MIN_DISPATCH_RATIO,
        }
    }

    /// Host↔device bandwidth in bytes per second.
    pub fn pcie_bandwidth(&self) -> f64 {
        self.pcie_bandwidth
    }

    /// GPU throughput in FLOP per second.
    pub fn gpu_gflops(&self) -> f64 {
        self.gpu_flops
    }

    /// How many times the transfer time the compute time must exceed to choose the GPU.
    pub fn min_dispatch_ratio(&self) -> f64 {
        self.min_dispatch_ratio
    }

    /// Sets the host↔device bandwidth (bytes per second).
    ///
    /// # Panics
    /// If `bytes_per_sec` is zero, negative, NaN or infinite; see [`try_with_pcie_bandwidth`](Self::try_with_pcie_bandwidth).
    pub fn with_pcie_bandwidth(self, bytes_per_sec: f64) -> Self {
        Self { pcie_bandwidth: validated_or_panic("pcie_bandwidth", bytes_per_sec), ..self }
    }

    /// Sets the GPU throughput, in FLOP per second (despite the name, in FLOP/s, not GFLOP/s).
    ///
    /// # Panics
    /// If `flops` is zero, negative, NaN or infinite; see [`try_with_gpu_gflops`](Self::try_with_gpu_gflops).
    pub fn with_gpu_gflops(self, flops: f64) -> Self {
        Self { gpu_flops: validated_or_panic("gpu_gflops", flops), ..self }
    }

    /// Sets the dispatch ratio.
    ///
    /// # Panics
    /// If `ratio` is zero, negative, NaN or infinite; see [`try_with_min_dispatch_ratio`](Self::try_with_min_dispatch_ratio).
    pub fn with_min_dispatch_ratio(self, ratio: f64) -> Self {
        Self { min_dispatch_ratio: validated_or_panic("min_dispatch_ratio", ratio), ..self }
    }

    /// Like [`with_pcie_bandwidth`](Self::with_pcie_bandwidth), returning [`Error::InvalidParameter`] instead of panicking.
    pub fn try_with_pcie_bandwidth(self, bytes_per_sec: f64) -> Result<Self, Error> {
        Ok(Self { pcie_bandwidth: validate("pcie_bandwidth", bytes_per_sec)?, ..self })
    }

    /// Like [`with_gpu_gflops`](Self::with_gpu_gflops), returning [`Error::InvalidParameter`] instead of panicking.
    pub fn try_with_gpu_gflops(self, flops: f64) -> Result<Self, Error> {
        Ok(Self { gpu_flops: validate("gpu_gflops", flops)?, ..self })
    }

    /// Like [`with_min_dispatch_ratio`](Self::with_min_dispatch_ratio), returning [`Error::InvalidParameter`] instead of panicking.
    pub fn try_with_min_dispatch_ratio(self, ratio: f64) -> Result<Self, Error> {
        Ok(Self { min_dispatch_ratio: validate("min_dispatch_ratio", ratio)?, ..self })
    }

    /// The MoE table: the backend for an operation of `complexity` over `data_size` elements.
    ///
    /// See the table in the type's docs; every boundary is a strict `>`.
    pub const fn select_with_moe(&self, complexity: OpComplexity, data_size: usize) -> Backend {
        moe(complexity, data_size)
    }

    /// The 5× rule: GPU when `flops / gpu_flops > ratio × data_bytes / pcie_bandwidth`, else SIMD.
    pub fn select_backend(&self, data_bytes: usize, flops: u64) -> Backend {
        self.dispatch(data_bytes as f64, flops as f64)
    }

    /// The 5× rule for C = A·B with A m×k and B k×n (f32): bytes `(m·k + k·n + m·n)·4`,
    /// FLOPs `2·m·n·k`. Computed in `u128` with saturation, so any `usize` inputs are
    /// safe: no panic, no wrap-around.
    pub fn select_for_matmul(&self, m: usize, n: usize, k: usize) -> Backend {
        let (m, n, k) = (m as u128, n as u128, k as u128);
        let bytes = (m * k).saturating_add(k * n).saturating_add(m * n).saturating_mul(4);
        let flops = (2 * m).saturating_mul(n).saturating_mul(k);
        self.dispatch(bytes as f64, flops as f64)
    }

    /// The 5× rule for an element-wise op over `n` f32 elements (two inputs, one output):
    /// bytes `n·3·4`, FLOPs `n·ops_per_element`. Overflow-safe like [`select_for_matmul`](Self::select_for_matmul).
    pub fn select_for_vector_op(&self, n: usize, ops_per_element: u64) -> Backend {
        let n = n as u128;
        let bytes = n.saturating_mul(12);
        let flops = n.saturating_mul(ops_per_element as u128);
        self.dispatch(bytes as f64, flops as f64)
    }

    /// Element-wise work never pays for a GPU transfer: the MoE table's Low row
    /// (SIMD above 1,000,000 elements, else Scalar).
    pub const fn select_for_elementwise(&self, n: usize) -> Backend {
        if n > moe::thresholds(OpComplexity::Low).simd_above {
            Backend::Simd
        } else {
            Backend::Scalar
        }
    }

    /// The trueno backend that corresponds to `backend` (Scalar→Scalar, Simd and Parallel→Auto, Gpu→GPU).
    pub fn to_trueno_backend(backend: Backend) -> trueno::Backend {
        match backend {
            Backend::Scalar => trueno::Backend::Scalar,
            Backend::Simd => trueno::Backend::Auto,
            Backend::Parallel => trueno::Backend::Auto,
            Backend::Gpu => trueno::Backend::GPU,
        }
    }

    /// `a + b`, element-wise, on the backend [`select_for_vector_op`](Self::select_for_vector_op)`(n, 1)` picks.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `b` is not as long as `a`.
    pub fn vector_add(&self, a: &[f32], b: &[f32]) -> Result<Vec<f32>, Error> {
        if a.len() != b.len() {
            return Err(Error::LengthMismatch { op: "vector_add", input: "b", expected: a.len(), actual: b.len() });
        }
        Ok(match self.select_for_vector_op(a.len(), 1) {
            Backend::Scalar => ops::scalar::add(a, b),
            Backend::Simd => ops::simd::add(a, b),
            // The 5× rule answers Scalar, SIMD or GPU only; the arm keeps the match total.
            Backend::Parallel => ops::par::add(a, b),
            Backend::Gpu => ops::gpu::add(a, b),
        })
    }

    /// C = A·B for row-major f32 A (m×k) and B (k×n), on the backend
    /// [`select_for_matmul`](Self::select_for_matmul) picks.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `a` is not m×k or `b` is not k×n;
    /// [`Error::ShapeOverflow`] when a shape's element count overflows `usize`.
    pub fn matrix_multiply(&self, a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Result<Vec<f32>, Error> {
        let op = "matrix_multiply";
        let need = |r: usize, c: usize| r.checked_mul(c).ok_or(Error::ShapeOverflow { op });
        let (want_a, want_b) = (need(m, k)?, need(k, n)?);
        need(m, n)?;
        if a.len() != want_a {
            return Err(Error::LengthMismatch { op, input: "a (m×k)", expected: want_a, actual: a.len() });
        }
        if b.len() != want_b {
            return Err(Error::LengthMismatch { op, input: "b (k×n)", expected: want_b, actual: b.len() });
        }
        Ok(match self.select_for_matmul(m, n, k) {
            Backend::Scalar => ops::scalar::matmul(a, b, m, n, k),
            Backend::Simd => ops::simd::matmul(a, b, m, n, k),
            Backend::Parallel => ops::par::matmul(a, b, m, n, k),
            Backend::Gpu => ops::gpu::matmul(a, b, m, n, k),
        })
    }

    fn dispatch(&self, bytes: f64, flops: f64) -> Backend {
        // `flops / gpu_flops > ratio · bytes / pcie`, cross-multiplied so that values
        // exactly on the boundary compare exactly (no rounding in the two divisions).
        if flops * self.pcie_bandwidth > self.min_dispatch_ratio * bytes * self.gpu_flops {
            Backend::Gpu
        } else {
            Backend::Simd
        }
    }
}
