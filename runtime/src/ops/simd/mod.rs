//! The SIMD backend: every op of [`scalar`](super::scalar) with the same
//! signature, shape checks and empty/NaN conventions, computed with SIMD
//! instructions chosen for this CPU at run time.
//!
//! # Where the kernels come from
//! - **trueno's slice kernels**, called directly on the caller's slices (never
//!   through `trueno::Vector`/`Matrix`, whose entry points copy and route to
//!   the GPU on their own): the `VectorBackend` reductions `sum`, `dot`,
//!   `norm_l2` (so `mean` too), `blis::gemm_blis` for `matmul` and
//!   `blis::transpose`; `matvec` is one trueno `dot` per row and `softmax`
//!   sums with trueno's `sum`.
//! - **Our own loops**, compiled once per instruction set as
//!   `#[target_feature]` clones (the `multiversion!` macro below, the
//!   multiversion crate's technique), where trueno's kernel is missing, wrong
//!   for our conventions, or costs more than it saves:
//!   - element-wise ops (`add`, `sub`, `mul`, `div`, `scale`, `relu` and the
//!     transcendentals) write slots (`ops/out.rs`): the caller's `out` in the
//!     `_into` form, a fresh `Vec`'s uninitialised capacity in the returning
//!     one. trueno's kernels take `&mut [f32]`, which must be initialised
//!     first, and zeroing a fresh output measured slower than the whole Scalar
//!     op at 64K and 1M elements (BENCHMARKS.md);
//!   - `relu`: trueno's maps NaN to 0 (`max_ps(x, 0)` returns its second
//!     operand for NaN); ours keeps NaN;
//!   - `exp`, `sigmoid`, `tanh`, `gelu`: trueno's AVX2 backend calls libm per
//!     element, and its SSE2/AVX-512 polynomials are ~1% off in range and
//!     garbage out of it (`exp(100)` < 0, `tanh(50)` = −1); ours are
//!     Cephes-style polynomials with full range handling (`transcendental.rs`);
//!   - `max`, `min`: trueno's index `a[0]` (panic on empty) and drop NaN;
//!   - `axpy` and `conv2d` have no trueno slice kernel.
//!
//! # Which instruction set
//! [`simd_level()`](crate::simd_level()) detects the CPU once and caches it. Each op belongs
//! to an [`OpClass`]; a class may be capped below the CPU's best level when
//! measurements say the wider one does not pay (see [`OpClass::ceiling`]). An
//! [`At`] names one level; the free functions use the class's choice, tests
//! and benches force each level the CPU has through [`At::new`].
//!
//! # Output memory
//! Every op that produces an array has two forms on one kernel: `add(a, b)`
//! returns a fresh `Vec`, `add_into(a, b, out)` writes the caller's slice
//! and allocates nothing (`ops/out.rs`). Fresh outputs of 16 MiB and more
//! ask Linux for transparent huge pages: on the VM the benchmarks ran on,
//! first-touch page faults otherwise cost more than the op itself.

use crate::simd_level::{runs_here, simd_level, SimdLevel};

/// Defines `$vis fn $name(at: At, args…) -> R` whose body is compiled once
/// per instruction set: a `#[target_feature]` clone for each level of the
/// table in [`simd_level`](crate::simd_level) (AVX-512 and AVX2, each with FMA,
/// on x86_64; SIMD128 on wasm32; made by [`__simd_clones!`](crate::__simd_clones),
/// the dispatch generated kernels use too) and the target's baseline; the call
/// runs the clone `at` names.
///
/// The body is generic over `const $fma: bool` (true in the x86_64 clones), so
/// it can fuse multiply-adds only where the FMA unit exists: a `mul_add`
/// without it is a libm call (SIMD128 has no fused multiply-add either).
macro_rules! multiversion {
    ($(#[$meta:meta])* $vis:vis fn $name:ident<const $fma:ident: bool>($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        $vis fn $name(at: $crate::ops::simd::At, $($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            #[allow(unused)]
            fn body<const $fma: bool>($($arg: $ty),*) $(-> $ret)? $body

            // `At` holds only levels that `simd_level()` detected on this CPU (`At::new` and
            // `At::for_class` guarantee it): the pick the clones' safety rests on.
            $crate::__simd_clones! {
                pick: at.level(),
                sig: { ($($arg: $ty),*) $(-> $ret)? },
                unsafety: {},
                args: ($($arg),*),
                simd: (body::<{ $crate::ops::simd::FMA_IN_CLONES }>),
                baseline: (body::<false>),
            }
        }
    };
}

/// Whether the `#[target_feature]` clones have a fused multiply-add: the x86_64
/// ones (AVX2+FMA, AVX-512) do, wasm32's SIMD128 does not.
pub(crate) const FMA_IN_CLONES: bool = cfg!(target_arch = "x86_64");

/// Calls one of trueno's `VectorBackend` kernels: the backend for `at`'s level
/// (AVX-512, AVX2, SSE2 on x86_64; SIMD128 on wasm32; the portable one below
/// that and elsewhere).
///
/// The caller states, in a `// SAFETY:` comment, that the kernel's slice
/// preconditions hold; the CPU-feature precondition is `At`'s invariant.
macro_rules! trueno_kernel {
    ($at:expr, $kernel:ident($($arg:expr),* $(,)?)) => {{
        use ::trueno::backends::VectorBackend;
        match $at.level() {
            // SAFETY: `At` holds only levels this CPU supports (see `At::new`); the caller
            // guarantees the kernel's slice preconditions.
            #[cfg(target_arch = "x86_64")]
            $crate::SimdLevel::Avx512 => unsafe {
                <::trueno::backends::avx512::Avx512Backend as VectorBackend>::$kernel($($arg),*)
            },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            $crate::SimdLevel::Avx2 => unsafe {
                <::trueno::backends::avx2::Avx2Backend as VectorBackend>::$kernel($($arg),*)
            },
            // SAFETY: SSE2 is part of the x86_64 baseline; slices as above. (The baseline is the
            // only other level an `At` holds here: `Simd128` is wasm32's.)
            #[cfg(target_arch = "x86_64")]
            _ => unsafe {
                <::trueno::backends::sse2::Sse2Backend as VectorBackend>::$kernel($($arg),*)
            },
            // SAFETY: `At` holds SIMD128 only on wasm32, whose engine validated this module's
            // SIMD128 code before running it (see `simd_level`); slices as above.
            #[cfg(target_arch = "wasm32")]
            $crate::SimdLevel::Simd128 => unsafe {
                <::trueno::backends::wasm::WasmBackend as VectorBackend>::$kernel($($arg),*)
            },
            // SAFETY: the portable backend needs no CPU feature; slices as above.
            #[cfg(not(target_arch = "x86_64"))]
            _ => unsafe { <::trueno::backends::scalar::ScalarBackend as VectorBackend>::$kernel($($arg),*) },
        }
    }};
}

mod elementwise;
mod matrix;
mod reduce;
mod transcendental;

pub(crate) use matrix::{conv2d_onto_zeros, matmul_onto_zeros};
pub(crate) use transcendental::exp_shifted_slots;

/// The op classes that choose their instruction set separately, because they
/// are limited by different things (memory bandwidth, arithmetic, latency).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpClass {
    /// Memory-bound element-wise ops: `add`, `sub`, `mul`, `div`, `scale`, `relu`, `axpy`.
    Stream,
    /// Arithmetic-bound element-wise ops: `exp`, `sigmoid`, `tanh`, `gelu`, `softmax`.
    Transcendental,
    /// Reductions: `sum`, `dot`, `max`, `min`, `mean`, `norm_l2`.
    Reduction,
    /// Matrix ops: `matmul`, `matvec`, `transpose`, `conv2d`.
    Matrix,
}

impl OpClass {
    /// Every class, in declaration order.
    pub const ALL: [OpClass; 4] = [OpClass::Stream, OpClass::Transcendental, OpClass::Reduction, OpClass::Matrix];

    /// The widest level this class uses even when the CPU offers more.
    ///
    /// On wasm32 the cap lies above SIMD128, so every class runs SIMD128 there.
    ///
    /// AVX2 for every class: the machine the figures in BENCHMARKS.md come
    /// from does not expose AVX-512, so no class has a measurement that
    /// justifies the wider clones. They are compiled, tested on CPUs that have
    /// AVX-512 (the tests force every level the CPU offers) and measured by
    /// the `ops` bench's `isa` group; raise a class here when those figures
    /// show it pays. `matmul` and `transpose` are not bound by this: trueno
    /// picks their instruction set inside `gemm_blis`/`transpose`.
    pub const fn ceiling(self) -> SimdLevel {
        match self {
            OpClass::Stream | OpClass::Transcendental | OpClass::Reduction | OpClass::Matrix => SimdLevel::Avx2,
        }
    }
}

/// One instruction set to run the ops at: the [`OpClass`] choice for the free
/// functions, or any level the CPU has for tests and benches.
///
/// Invariant: the level is at most [`simd_level()`], so the `#[target_feature]`
/// code it selects can run on this CPU.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At(SimdLevel);

impl At {
    /// `level`, if this CPU can run it (a level of another architecture never can).
    pub fn new(level: SimdLevel) -> Option<At> {
        runs_here(level).then_some(At(level))
    }

    /// Every level this CPU can run, narrowest first.
    pub fn available() -> Vec<At> {
        [SimdLevel::Baseline, SimdLevel::Simd128, SimdLevel::Avx2, SimdLevel::Avx512]
            .into_iter()
            .filter_map(At::new)
            .collect()
    }

    /// The level the free functions use for `class` on this CPU.
    #[inline]
    pub fn for_class(class: OpClass) -> At {
        At(simd_level().min(class.ceiling()))
    }

    /// The instruction set this `At` runs.
    #[inline]
    pub fn level(self) -> SimdLevel {
        self.0
    }
}

/// Defines the public free functions: each runs the `At` method of the same
/// name at its class's level. `fn name / name_into(..) -> Vec<f32>` defines
/// an op's returning form and its `_into` form; `/ name_slots` adds the
/// crate-visible form on slots that `ops::par` builds on.
macro_rules! routed {
    () => {};
    ($(#[$meta:meta])* $class:ident => fn $name:ident / $into:ident / $slots:ident($($arg:ident: $ty:ty),*) -> Vec<f32>; $($rest:tt)*) => {
        routed! { $(#[$meta])* $class => fn $name / $into($($arg: $ty),*) -> Vec<f32>; }
        /// The `_into` form on slots, at the class's level (for `ops::par`).
        #[inline]
        #[track_caller]
        pub(crate) fn $slots($($arg: $ty,)* out: &mut [crate::ops::out::Slot]) {
            At::for_class(OpClass::$class).$slots($($arg,)* out)
        }
        routed! { $($rest)* }
    };
    ($(#[$meta:meta])* $class:ident => fn $name:ident / $into:ident($($arg:ident: $ty:ty),*) -> Vec<f32>; $($rest:tt)*) => {
        routed! { $(#[$meta])* $class => fn $name($($arg: $ty),*) -> Vec<f32>; }
        #[doc = $crate::ops::out::producing!(@into_doc $name, stringify!($name))]
        #[inline]
        #[track_caller]
        pub fn $into($($arg: $ty,)* out: &mut [f32]) {
            At::for_class(OpClass::$class).$into($($arg,)* out)
        }
        routed! { $($rest)* }
    };
    ($(#[$meta:meta])* $class:ident => fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?; $($rest:tt)*) => {
        $(#[$meta])*
        #[inline]
        #[track_caller]
        pub fn $name($($arg: $ty),*) $(-> $ret)? {
            At::for_class(OpClass::$class).$name($($arg),*)
        }
        routed! { $($rest)* }
    };
}

routed! {
    /// `a[i] + b[i]`.
    ///
    /// # Panics
    /// If `a` and `b` differ in length.
    Stream => fn add / add_into / add_slots(a: &[f32], b: &[f32]) -> Vec<f32>;
    /// `a[i] - b[i]`.
    ///
    /// # Panics
    /// If `a` and `b` differ in length.
    Stream => fn sub / sub_into / sub_slots(a: &[f32], b: &[f32]) -> Vec<f32>;
    /// `a[i] * b[i]`.
    ///
    /// # Panics
    /// If `a` and `b` differ in length.
    Stream => fn mul / mul_into / mul_slots(a: &[f32], b: &[f32]) -> Vec<f32>;
    /// `a[i] / b[i]` (IEEE: `x / 0` is ±∞ or NaN).
    ///
    /// # Panics
    /// If `a` and `b` differ in length.
    Stream => fn div / div_into / div_slots(a: &[f32], b: &[f32]) -> Vec<f32>;
    /// `a[i] * s`.
    Stream => fn scale / scale_into / scale_slots(a: &[f32], s: f32) -> Vec<f32>;
    /// `max(a[i], 0)`; NaN stays NaN.
    Stream => fn relu / relu_into / relu_slots(a: &[f32]) -> Vec<f32>;
    /// `y[i] += alpha * x[i]`, in place; bit-identical to Scalar (no fused multiply-add).
    ///
    /// # Panics
    /// If `x` and `y` differ in length.
    Stream => fn axpy(alpha: f32, x: &[f32], y: &mut [f32]);
    /// `e^a[i]`, within a few ulp of libm's (Cephes polynomial; denormal results and overflow to ∞ included).
    Transcendental => fn exp / exp_into / exp_slots(a: &[f32]) -> Vec<f32>;
    /// `1 / (1 + e^(−a[i]))`.
    Transcendental => fn sigmoid / sigmoid_into / sigmoid_slots(a: &[f32]) -> Vec<f32>;
    /// `tanh(a[i])`.
    Transcendental => fn tanh / tanh_into / tanh_slots(a: &[f32]) -> Vec<f32>;
    /// GELU, tanh approximation: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    Transcendental => fn gelu / gelu_into / gelu_slots(a: &[f32]) -> Vec<f32>;
    /// `e^(a[i] − max) / Σ e^(a[j] − max)`, stable for large inputs; empty in, empty out.
    Transcendental => fn softmax / softmax_into / softmax_slots(a: &[f32]) -> Vec<f32>;
    /// The sum of `a` (0 when empty).
    Reduction => fn sum(a: &[f32]) -> f32;
    /// `Σ a[i]·b[i]` (0 when empty).
    ///
    /// # Panics
    /// If `a` and `b` differ in length.
    Reduction => fn dot(a: &[f32], b: &[f32]) -> f32;
    /// The largest element: −∞ when empty, NaN when any element is NaN.
    Reduction => fn max(a: &[f32]) -> f32;
    /// The smallest element: +∞ when empty, NaN when any element is NaN.
    Reduction => fn min(a: &[f32]) -> f32;
    /// The arithmetic mean: NaN when empty.
    Reduction => fn mean(a: &[f32]) -> f32;
    /// The Euclidean norm `√(Σ a[i]²)` (0 when empty).
    Reduction => fn norm_l2(a: &[f32]) -> f32;
    /// C = A·B for row-major A (m×k) and B (k×n); C is m×n.
    ///
    /// # Panics
    /// If `a.len() != m·k`, `b.len() != k·n`, or a shape overflows `usize`.
    Matrix => fn matmul / matmul_into(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32>;
    /// y = A·x for row-major A (m×n); y has m elements.
    ///
    /// # Panics
    /// If `a.len() != m·n` or `x.len() != n`.
    Matrix => fn matvec / matvec_into / matvec_slots(a: &[f32], x: &[f32], m: usize, n: usize) -> Vec<f32>;
    /// The transpose of row-major `a` (rows×cols), as a cols×rows matrix.
    ///
    /// # Panics
    /// If `a.len() != rows·cols`.
    Matrix => fn transpose / transpose_into(a: &[f32], rows: usize, cols: usize) -> Vec<f32>;
    /// Valid-mode 2-D cross-correlation (the kernel is not flipped), as
    /// [`scalar::conv2d`](super::scalar::conv2d) defines it; bit-identical to Scalar (same
    /// summation order, no fused multiply-add).
    ///
    /// # Panics
    /// If `input.len() != rows·cols`, `kernel.len() != krows·kcols`, or the kernel shape is empty.
    Matrix => fn conv2d / conv2d_into(input: &[f32], kernel: &[f32], rows: usize, cols: usize, krows: usize, kcols: usize) -> Vec<f32>;
}
