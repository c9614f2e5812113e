//! Shared by the `ops_*` tests: every CPU implementation of the op set behind
//! one type, so a test runs the same call through Scalar, the SIMD free
//! functions, the SIMD backend forced to each instruction set this CPU has,
//! and the Parallel backend at a given thread count; and (`props`) the
//! properties every backend must have against Scalar.

#![allow(dead_code)] // each test binary uses a different subset

pub(crate) mod props;

use adaptive_kernel::ops::simd::At;
use adaptive_kernel::ops::{par, scalar, simd};

/// One implementation of the op set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Impl {
    /// `ops::scalar`, the reference.
    Scalar,
    /// `ops::simd`'s free functions, at each op class's chosen level.
    Simd,
    /// `ops::simd` forced to one instruction set.
    At(At),
    /// `ops::par` on a pool of this many threads (`par::with_threads`).
    Par(usize),
}

impl Impl {
    /// The SIMD implementations: the free functions and every level this CPU runs.
    pub(crate) fn simd_all() -> Vec<Impl> {
        std::iter::once(Impl::Simd).chain(At::available().into_iter().map(Impl::At)).collect()
    }

    /// `ops::par` at 1, 2 and 3 threads: one thread, as many as the benchmark
    /// VM has, and an odd count that does not divide the chunk grids evenly.
    pub(crate) fn par_all() -> Vec<Impl> {
        vec![Impl::Par(1), Impl::Par(2), Impl::Par(3)]
    }

    /// Scalar and every SIMD and Parallel implementation.
    pub(crate) fn all() -> Vec<Impl> {
        std::iter::once(Impl::Scalar).chain(Impl::simd_all()).chain(Impl::par_all()).collect()
    }
}

/// Defines `Impl::$name` for every op, and proves at compile time that every
/// backend's op has exactly Scalar's signature (a function pointer of Scalar's
/// type is made from each; GPU's included).
macro_rules! dispatch {
    ($(fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(
            const _: [fn($($ty),*) -> $ret; 4] =
                [scalar::$name, simd::$name, par::$name, adaptive_kernel::ops::gpu::$name];
        )*
        impl Impl {$(
            /// The op of this name in this implementation.
            #[track_caller]
            pub(crate) fn $name(self, $($arg: $ty),*) -> $ret {
                match self {
                    Impl::Scalar => scalar::$name($($arg),*),
                    Impl::Simd => simd::$name($($arg),*),
                    Impl::At(at) => at.$name($($arg),*),
                    Impl::Par(threads) => par::with_threads(threads, || par::$name($($arg),*)),
                }
            }
        )*}
    };
}

dispatch! {
    fn add(a: &[f32], b: &[f32]) -> Vec<f32>;
    fn sub(a: &[f32], b: &[f32]) -> Vec<f32>;
    fn mul(a: &[f32], b: &[f32]) -> Vec<f32>;
    fn div(a: &[f32], b: &[f32]) -> Vec<f32>;
    fn scale(a: &[f32], s: f32) -> Vec<f32>;
    fn relu(a: &[f32]) -> Vec<f32>;
    fn sigmoid(a: &[f32]) -> Vec<f32>;
    fn tanh(a: &[f32]) -> Vec<f32>;
    fn gelu(a: &[f32]) -> Vec<f32>;
    fn exp(a: &[f32]) -> Vec<f32>;
    fn axpy(alpha: f32, x: &[f32], y: &mut [f32]) -> ();
    fn sum(a: &[f32]) -> f32;
    fn dot(a: &[f32], b: &[f32]) -> f32;
    fn max(a: &[f32]) -> f32;
    fn min(a: &[f32]) -> f32;
    fn mean(a: &[f32]) -> f32;
    fn norm_l2(a: &[f32]) -> f32;
    fn softmax(a: &[f32]) -> Vec<f32>;
    fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32>;
    fn matvec(a: &[f32], x: &[f32], m: usize, n: usize) -> Vec<f32>;
    fn transpose(a: &[f32], rows: usize, cols: usize) -> Vec<f32>;
    fn conv2d(input: &[f32], kernel: &[f32], rows: usize, cols: usize, krows: usize, kcols: usize) -> Vec<f32>;
}
