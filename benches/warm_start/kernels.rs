//! The three kernels of the workload, each with an alternative that loses at small sizes
//! by a wide margin and wins at large ones, and [`K`], which names them.

use adaptive_kernel::{adaptive_kernel, ops, Kernel};

use crate::sine_table::sin_by_table;

/// `1.5·x + 0.25` per element. Scalar and SIMD: the body. Parallel (`parallel = path`):
/// two threads forked per call (`std::thread::scope`), each computing half: tens of
/// microseconds of fork and join where Scalar takes a tenth of one at 256 elements.
#[adaptive_kernel(complexity = "Low", parallel = affine_two_threads)]
pub(crate) fn affine(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v * 1.5 + 0.25).collect()
}

pub(crate) fn affine_two_threads(x: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0; x.len()];
    let half = x.len().div_ceil(2).max(1);
    std::thread::scope(|s| {
        for (xs, os) in x.chunks(half).zip(out.chunks_mut(half)) {
            s.spawn(move || {
                for (o, v) in os.iter_mut().zip(xs) {
                    *o = v * 1.5 + 0.25;
                }
            });
        }
    });
    out
}

/// sin per element. Scalar: libm per element. SIMD (`simd = path`): a table of 4,096
/// intervals built on every call (tens of microseconds), then linear interpolation.
#[adaptive_kernel(complexity = "Low", simd = sin_by_table)]
pub(crate) fn sine(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v.sin()).collect()
}

/// C = A·B for square matrices of side `n` (High): every variant through `ops`, the
/// GPU's included.
#[adaptive_kernel(complexity = "High", size = 2 * n * n, flops = 2 * n * n * n)]
pub(crate) fn matmul(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    ops::matmul(a, b, n, n, n)
}

/// A kernel of the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum K {
    Affine,
    Sine,
    Matmul,
}

pub(crate) const KERNELS: [K; 3] = [K::Affine, K::Sine, K::Matmul];

impl K {
    pub(crate) fn label(self) -> &'static str {
        match self {
            K::Affine => "affine (two threads)",
            K::Sine => "sine (table)",
            K::Matmul => "matmul (GPU variant)",
        }
    }

    /// The eight `n` of each kernel: elements, or the side of the square matrices.
    pub(crate) fn dims(self) -> [usize; 8] {
        match self {
            K::Matmul => [8, 16, 32, 64, 96, 128, 192, 256],
            _ => std::array::from_fn(|i| 256 << (2 * i)),
        }
    }

    pub(crate) fn kernel(self) -> &'static Kernel {
        match self {
            K::Affine => &affine::KERNEL,
            K::Sine => &sine::KERNEL,
            K::Matmul => &matmul::KERNEL,
        }
    }

    /// Whether the kernel has `variant` (as the attribute generated it).
    pub(crate) fn has(self, variant: Variant) -> bool {
        match variant {
            Variant::Scalar | Variant::Simd => true,
            Variant::Parallel => self.kernel().has_parallel(),
            Variant::Gpu => self.kernel().has_gpu(),
        }
    }
}

/// A variant called directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variant {
    Scalar,
    Simd,
    Parallel,
    Gpu,
}

pub(crate) const VARIANTS: [Variant; 4] = [Variant::Scalar, Variant::Simd, Variant::Parallel, Variant::Gpu];

impl Variant {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Variant::Scalar => "Scalar",
            Variant::Simd => "SIMD",
            Variant::Parallel => "Parallel",
            Variant::Gpu => "GPU",
        }
    }
}

/// One call: `variant` directly, or the routed wrapper (`None`).
pub(crate) fn call(k: K, variant: Option<Variant>, a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    match (k, variant) {
        (K::Affine, None) => affine(a),
        (K::Affine, Some(Variant::Scalar)) => affine::scalar(a),
        (K::Affine, Some(Variant::Simd)) => affine::simd(a),
        (K::Affine, Some(_)) => affine::parallel(a),
        (K::Sine, None) => sine(a),
        (K::Sine, Some(Variant::Scalar)) => sine::scalar(a),
        (K::Sine, Some(_)) => sine::simd(a),
        (K::Matmul, None) => matmul(a, b, n),
        (K::Matmul, Some(Variant::Scalar)) => matmul::scalar(a, b, n),
        (K::Matmul, Some(Variant::Simd)) => matmul::simd(a, b, n),
        (K::Matmul, Some(Variant::Parallel)) => matmul::parallel(a, b, n),
        (K::Matmul, Some(Variant::Gpu)) => matmul::gpu(a, b, n),
    }
}
