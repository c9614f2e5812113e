//! Shared by the `ops_*` tests: every CPU implementation of the op set behind
//! one type, so a test runs the same call through Scalar, the SIMD free
//! functions, the SIMD backend forced to each instruction set this CPU has,
//! and the Parallel backend at a given thread count, in both forms of each op
//! that produces an array (`add` and `add_into`); and (`props`) the
//! properties every backend must have against Scalar, and every `_into` form
//! against its returning form.

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

    /// Scalar and every SIMD implementation.
    pub(crate) fn scalar_and_simd() -> Vec<Impl> {
        std::iter::once(Impl::Scalar).chain(Impl::simd_all()).collect()
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

/// Defines `Impl::$into` for every op that produces an array (its `_into`
/// form), and proves at compile time that every backend has it with Scalar's
/// signature: the op's arguments, then `out: &mut [f32]`.
macro_rules! dispatch_into {
    ($(fn $into:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            const _: [fn($($ty,)* &mut [f32]); 4] =
                [scalar::$into, simd::$into, par::$into, adaptive_kernel::ops::gpu::$into];
        )*
        impl Impl {$(
            /// The `_into` op of this name in this implementation.
            #[track_caller]
            #[allow(clippy::too_many_arguments)] // `conv2d_into`: `self`, the op's six and `out`
            pub(crate) fn $into(self, $($arg: $ty,)* out: &mut [f32]) {
                match self {
                    Impl::Scalar => scalar::$into($($arg,)* out),
                    Impl::Simd => simd::$into($($arg,)* out),
                    Impl::At(at) => at.$into($($arg,)* out),
                    Impl::Par(threads) => par::with_threads(threads, || par::$into($($arg,)* out)),
                }
            }
        )*}
    };
}

dispatch_into! {
    fn add_into(a: &[f32], b: &[f32]);
    fn sub_into(a: &[f32], b: &[f32]);
    fn mul_into(a: &[f32], b: &[f32]);
    fn div_into(a: &[f32], b: &[f32]);
    fn scale_into(a: &[f32], s: f32);
    fn relu_into(a: &[f32]);
    fn sigmoid_into(a: &[f32]);
    fn tanh_into(a: &[f32]);
    fn gelu_into(a: &[f32]);
    fn exp_into(a: &[f32]);
    fn softmax_into(a: &[f32]);
    fn matmul_into(a: &[f32], b: &[f32], m: usize, n: usize, k: usize);
    fn matvec_into(a: &[f32], x: &[f32], m: usize, n: usize);
    fn transpose_into(a: &[f32], rows: usize, cols: usize);
    fn conv2d_into(input: &[f32], kernel: &[f32], rows: usize, cols: usize, krows: usize, kcols: usize);
}
