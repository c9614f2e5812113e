//! The nine kernels of the workload, and [`K`], which names them.

use adaptive_kernel::{adaptive_kernel, ops, Kernel, Work};

use crate::sine_table::sin_by_table;

/// Element-wise sum (Low; GPU variant through `ops`).
#[adaptive_kernel(complexity = "Low")]
pub(crate) fn add(a: &[f32], b: &[f32]) -> Vec<f32> {
    ops::add(a, b)
}

/// Dot product (Medium).
#[adaptive_kernel(complexity = "Medium")]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b)
}

/// Sum of elements (Medium).
#[adaptive_kernel(complexity = "Medium")]
pub(crate) fn sum(x: &[f32]) -> f32 {
    ops::sum(x)
}

/// Softmax (Medium).
#[adaptive_kernel(complexity = "Medium")]
pub(crate) fn softmax(x: &[f32]) -> Vec<f32> {
    ops::softmax(x)
}

/// C = A·B for square matrices of side `n` (High).
#[adaptive_kernel(complexity = "High", size = 2 * n * n, flops = 2 * n * n * n)]
pub(crate) fn matmul(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    ops::matmul(a, b, n, n, n)
}

/// A 3×3 convolution of a square image of side `n` (High).
#[adaptive_kernel(complexity = "High", size = n * n, flops = 18 * (n - 2) * (n - 2))]
pub(crate) fn conv2d(x: &[f32], k: &[f32], n: usize) -> Vec<f32> {
    ops::conv2d(x, k, n, n, 3, 3)
}

/// sin per element. Scalar: libm per element. SIMD (`simd = path`): a table of
/// 4,096 intervals built on every call (a fixed cost), then linear interpolation
/// (a cheaper per-element cost; error below 1e-6 on the inputs used here).
#[adaptive_kernel(complexity = "Low", simd = sin_by_table)]
pub(crate) fn sine(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v.sin()).collect()
}

pub(crate) const POLY: [f32; 17] =
    [0.5, -0.25, 0.125, 0.3, -0.2, 0.1, 0.05, -0.04, 0.03, -0.02, 0.01, 0.009, -0.008, 0.007, -0.006, 0.005, -0.004];

/// Horner's rule for [`POLY`] into `out`.
pub(crate) fn poly_into(x: &[f32], out: &mut [f32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        let mut acc = POLY[16];
        for &c in POLY[..16].iter().rev() {
            acc = acc * v + c;
        }
        *o = acc;
    }
}

/// A degree-16 polynomial per element. Scalar: the loop on one thread; SIMD: the same
/// loop compiled for the CPU's vector unit. Parallel (`parallel = path`): the loop split
/// over every core with `std::thread::scope`, a thread spawned per call (a fixed cost only
/// large inputs repay).
#[adaptive_kernel(complexity = "Low", parallel = poly_threaded)]
pub(crate) fn poly(x: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0; x.len()];
    poly_into(x, &mut out);
    out
}

pub(crate) fn poly_threaded(x: &[f32]) -> Vec<f32> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out = vec![0.0; x.len()];
    let chunk = x.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let mut parts = x.chunks(chunk).zip(out.chunks_mut(chunk));
        let first = parts.next();
        for (xs, os) in parts {
            s.spawn(move || poly_into(xs, os));
        }
        if let Some((xs, os)) = first {
            poly_into(xs, os);
        }
    });
    out
}

/// `y += alpha·x`, a plain loop: its SIMD variant is this loop compiled for AVX2+FMA, its
/// Parallel variant the loop split across threads (by the attribute).
#[adaptive_kernel(complexity = "Low")]
pub(crate) fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum K {
    Add,
    Dot,
    Sum,
    Softmax,
    Sine,
    Poly,
    Saxpy,
    Conv2d,
    Matmul,
}

pub(crate) const KERNELS: [K; 9] =
    [K::Add, K::Dot, K::Sum, K::Softmax, K::Sine, K::Poly, K::Saxpy, K::Conv2d, K::Matmul];

impl K {
    pub(crate) fn kernel(self) -> &'static Kernel {
        match self {
            K::Add => &add::KERNEL,
            K::Dot => &dot::KERNEL,
            K::Sum => &sum::KERNEL,
            K::Softmax => &softmax::KERNEL,
            K::Sine => &sine::KERNEL,
            K::Poly => &poly::KERNEL,
            K::Saxpy => &saxpy::KERNEL,
            K::Conv2d => &conv2d::KERNEL,
            K::Matmul => &matmul::KERNEL,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            K::Add => "add",
            K::Dot => "dot",
            K::Sum => "sum",
            K::Softmax => "softmax",
            K::Sine => "sine (table)",
            K::Poly => "poly (threads)",
            K::Saxpy => "saxpy (loop)",
            K::Conv2d => "conv2d",
            K::Matmul => "matmul",
        }
    }

    /// trueno's own dispatching entry point for this kernel, if it has one.
    pub(crate) fn trueno(self) -> Option<&'static str> {
        match self {
            K::Add => Some("Vector::add"),
            K::Dot => Some("Vector::dot"),
            K::Sum => Some("Vector::sum"),
            K::Softmax => Some("Vector::softmax"),
            K::Sine => Some("Vector::sin"),
            K::Conv2d => Some("Matrix::convolve2d"),
            K::Matmul => Some("Matrix::matmul"),
            K::Poly | K::Saxpy => None,
        }
    }

    /// Each pair's `n`: elements per vector, or the side of the square matrix or image.
    pub(crate) fn dims(self) -> Vec<usize> {
        match self {
            K::Matmul => (0..7).map(|i| 8 << i).collect(),
            K::Conv2d => (0..9).map(|i| 8 << i).collect(),
            _ => (0..9).map(|i| 64 << (2 * i)).collect(),
        }
    }

    /// The size the router buckets by (the macro's `size`, or its default).
    pub(crate) fn size(self, n: usize) -> usize {
        match self {
            K::Add | K::Dot | K::Saxpy => 2 * n,
            K::Sum | K::Softmax | K::Sine | K::Poly => n,
            K::Conv2d => n * n,
            K::Matmul => 2 * n * n,
        }
    }

    /// What the router's cost model and the 5× rule see for a call.
    pub(crate) fn work(self, n: usize) -> Work {
        let flops = match self {
            K::Matmul => Some(2 * (n as u64).pow(3)),
            K::Conv2d => Some(18 * (n as u64 - 2).pow(2)),
            _ => None,
        };
        Work::estimate(self.kernel().complexity(), self.size(n), flops, None)
    }
}
