//! # adaptive-kernel
//!
//! Write a compute function once and annotate it: [`#[adaptive_kernel]`](adaptive_kernel)
//! compiles it into up to four variants (Scalar, SIMD, Parallel and GPU), and
//! every call is routed to the one that is fastest *for that size on this
//! machine*, learned from timings of real calls and remembered across runs.
//!
//! ## Quick start
//!
//! ```
//! use adaptive_kernel::adaptive_kernel;
//! # adaptive_kernel::history::set_history(adaptive_kernel::config::HistorySetting::Off);
//!
//! /// `y += a·x`: a plain loop. The SIMD variant is it compiled for this CPU's
//! /// widest instruction set, the Parallel variant splits it across threads.
//! #[adaptive_kernel(complexity = "Low")]
//! fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
//!     for (yi, xi) in y.iter_mut().zip(x) {
//!         *yi += a * xi;
//!     }
//! }
//!
//! let x = vec![1.0; 100_000];
//! let mut y = vec![0.0; 100_000];
//! for _ in 0..100 {
//!     saxpy(2.0, &x, &mut y); // routed: the router times the variants, then keeps the fastest
//! }
//! assert_eq!(y[0], 200.0);
//! println!("{}", saxpy::KERNEL.table()); // what it learned, per size bucket
//! adaptive_kernel::flush()?; // save it now (a short program may end before the background save)
//! # Ok::<(), adaptive_kernel::history::HistoryError>(())
//! ```
//!
//! [The guide](guide) explains the rest chapter by chapter, starting with
//! [getting started](guide::getting_started) and
//! [choosing `complexity`](guide::getting_started#choosing-complexity); what each
//! variant does with a loop of your body, by its shape, is
//! [the loop table](guide::attribute#what-your-loop-gets); the attribute's
//! reference is on [`adaptive_kernel`].
//!
//! ## The API by task
//!
//! | to … | use |
//! | --- | --- |
//! | annotate a function | [`#[adaptive_kernel]`](adaptive_kernel); inside it, the op set [`ops`] (`ops::matmul`, `ops::dot`, `ops::add_into`, …) |
//! | call one variant, bypassing the router | `k::scalar(..)`, `k::simd(..)`, `k::parallel(..)`, `k::gpu(..)`; for methods, [`with_backend`] |
//! | inspect what a kernel learned | `k::KERNEL` (a [`Kernel`]): [`Kernel::table`] (a [`KernelTable`]), [`Kernel::spec`]; every kernel called so far: [`kernels`], [`kernel_named`]; rows, crossovers and ties: [`report`]; its decisions as `tracing` events: [`init_logging`] |
//! | steer or configure it | [`Kernel::force`], [`with_backend`]; the mode, history file, GPU, threads, a backend for every kernel and quiet switch: [`config::Settings`] (or the `ADAPTIVE_KERNEL_*` variables, [`config`]) |
//! | check where a call went (tests) | [`last_route`]: the variant this thread's last routed call ran, and whether it was timed |
//! | keep and share what it learned | [`flush`]; files, export and import, tables in memory: [`history`] |
//! | check its numerics | [`tolerance`] (what reassociated reductions promise), [`fusion`] (what fused multiply-adds may change), [`compare`] (how `verify` compares variants) |
//! | route calls of your own, without the attribute | [`select`]: the MoE thresholds ([`moe`]), the 5× dispatch rule, the operation catalog, a string-keyed learner; the cost model: [`cost`] |
//! | export decisions to OpenTelemetry | `telemetry` (feature `otlp`) |
//! | learn to use it | [`guide`] |
//!
//! The `adaptive-kernel` command (feature `cli`) reports, plots, exports and
//! imports what was learned: see [the guide's chapter](guide::cli).
//!
//! ## Features
//!
//! | feature | default | what it adds |
//! | --- | --- | --- |
//! | `gpu` | yes | GPU variants through wgpu; without it the router never picks GPU |
//! | `cli` | no | the `adaptive-kernel` binary (clap, plotters, serde): `cargo install … --features cli` |
//! | `otlp` | no | `telemetry::init_otlp`: decisions exported to an OpenTelemetry collector |
//! | `ndarray` | no | [`compare::Comparable`] for ndarray 0.17's arrays (kernels over ndarray 0.16 or 0.17 arrays need no feature: [the guide](guide::arrays)) |

#![warn(missing_docs)]

/// Makes a function an adaptive kernel. For example:
///
/// ```
/// use adaptive_kernel::{adaptive_kernel, ops};
/// # adaptive_kernel::history::set_history(adaptive_kernel::config::HistorySetting::Off);
///
/// /// `y += alpha·x`: a plain loop, which the GPU variant runs as a generated shader.
/// #[adaptive_kernel(complexity = "Low")]
/// pub fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
///     for (yi, xi) in y.iter_mut().zip(x) {
///         *yi += alpha * xi;
///     }
/// }
///
/// /// `Σ xᵢ²` through the op set, so it has a GPU variant.
/// #[adaptive_kernel(complexity = "Medium")]
/// pub fn energy(x: &[f32]) -> f32 {
///     ops::dot(x, x)
/// }
///
/// let x = [1.0, 2.0, 3.0];
/// let mut y = [1.0; 3];
/// saxpy(2.0, &x, &mut y); // routed: 6 elements are far below SIMD's threshold
/// assert_eq!(y, [3.0, 5.0, 7.0]);
/// saxpy::simd(1.0, &x, &mut y); // one variant, bypassing the router
/// assert_eq!(y, [4.0, 7.0, 10.0]);
///
/// assert_eq!(energy(&x), 14.0);
/// assert_eq!(energy::gpu(&x), 14.0);
/// assert!(energy::KERNEL.has_gpu() && saxpy::KERNEL.has_gpu());
/// assert!(saxpy::KERNEL.spec().gpu_loops[0].on_gpu()); // its loop, one GPU invocation per item
/// ```
pub use adaptive_kernel_macros::adaptive_kernel;

// The reason words the attribute writes into a kernel's spec are exactly the runtime's
// `LoopReason`s: checked here, at compile time, variant for variant.
adaptive_kernel_macros::__loop_reasons!(adaptive_kernel_runtime::LoopReason);

// What users name daily; everything else is in the modules below.
pub use adaptive_kernel_runtime::{
    flush, init_logging, kernel_named, kernels, last_route, with_backend, Backend, Kernel, KernelTable, OpComplexity,
};

pub use adaptive_kernel_runtime::{config, cost, moe, ops};

/// Data kept on the GPU between kernel calls: [`resident::Resident`] handles, which an
/// annotated kernel's `k::resident(..)` entry takes (the [guide's chapter](guide::resident)).
pub use adaptive_kernel_runtime::resident;

/// How far a SIMD variant's reassociated reductions may be from the Scalar variant's.
pub use adaptive_kernel_runtime::tolerance;

/// Vector math: the branch-free `f32` formulas (`exp`, `ln`, `sin`, …) a SIMD variant
/// computes in lanes in place of libm's, and their error bounds.
pub use adaptive_kernel_runtime::math;

/// How `verify` compares a variant's result with the Scalar variant's ([`compare::Comparable`]).
pub use adaptive_kernel_runtime::compare;

/// What a variant that fuses `a*b + c` into one rounding may return where Scalar rounds twice.
pub use adaptive_kernel_runtime::fusion;

/// Exporting routing decisions to an OpenTelemetry collector (feature `otlp`).
#[cfg(feature = "otlp")]
pub use adaptive_kernel_runtime::telemetry;

/// The trueno compute library the backends are built on (package `aprender-compute`).
pub use adaptive_kernel_runtime::trueno;

pub mod guide;

pub mod kernel {
    //! A kernel's handle and vocabulary: what `k::KERNEL` is ([`Kernel`]), how a call is
    //! routed ([`Route`]) and what this thread's last routed call ran ([`last_route`]), what
    //! the attribute compiled ([`KernelSpec`], [`LoopRewrite`], [`LoopSplit`], [`LoopGpu`], and
    //! why a loop was left alone: [`LoopReason`]), size buckets ([`bucket_of`]), and which SIMD
    //! instruction set runs ([`simd_level`]).
    pub use adaptive_kernel_runtime::{
        bucket_of, bucket_range, kernel_named, kernels, last_route, loop_reason, set_span_threshold, simd_level,
        with_backend, Backend, Decision, DecisionKind, Kernel, KernelFamily, KernelSpec, LastRoute, LoopGpu,
        LoopReason, LoopRewrite, LoopSplit, OpComplexity, ParseEnumError, Route, SimdLevel, Transfers, Work, BUCKETS,
        LOOP_REASONS,
    };
}

pub mod report {
    //! What a kernel learned, for people and programs: [`KernelTable`] (from
    //! `k::KERNEL.table()`) with its rows, what each row's calls moved between host and
    //! device ([`TransferReport`]), the [`Crossover`]s and ties between backends
    //! ([`TIE_BAND`]), [`LoopSummary`], the words for what the attribute did to the
    //! body's loops, and [`AsWritten`], the calls that ran the body as written because an
    //! ndarray array was not in standard layout.
    /// The ndarray array that made a call run its body as written ([`AsWritten::first`]).
    pub use adaptive_kernel_runtime::layout::Strided;
    pub use adaptive_kernel_runtime::{
        backend_columns, backend_label, crossovers, AsWritten, BackendReport, BucketReport, Crossover, GpuLine,
        KernelTable, LoopLine, LoopSummary, MathCalls, SplitLine, TransferReport, TIE_BAND,
    };
}

pub mod history {
    //! Keeping and sharing what kernels learned: saving now ([`flush`]), the history file
    //! ([`history_file`], [`history_status`]) and its records ([`HistoryFile`]), exporting
    //! and importing tables (files: [`export_history`], [`import_history`]; JSON strings in
    //! memory: [`export_learned`], [`import_learned`]), and the machine [`Fingerprint`]
    //! that keys them. The [guide's chapter](crate::guide::persistence) tells the story.
    #[doc(hidden)]
    pub use adaptive_kernel_runtime::{__delay_saves_for_tests, __saving_for_tests};
    pub use adaptive_kernel_runtime::{
        clear_history, default_path, export_history, export_learned, flush, history_file, history_status,
        import_history, import_learned, read_history, save_calibration, set_history, BucketRecord, BuildProfile,
        ExclusionRecord, Fingerprint, GpuLoopRecord, HistoryError, HistoryFile, HistoryStatus, ImportError,
        ImportSummary, KernelRecord, LearnedImport, LoopRecord, MachineRecord, NearestEntry, NearestRule, SplitRecord,
        TimingRecord, TransferRecord,
    };
}

pub mod select {
    //! The selection API for code that routes its own calls, without the attribute (the
    //! project's seeds): [`BackendSelector`] (the MoE thresholds and the 5× dispatch rule,
    //! stateless), the operation [`catalog`], and [`AdaptiveBackend`], a string-keyed
    //! learner of its own. It answers Scalar, SIMD or GPU; only the learning router offers
    //! Parallel.
    pub use adaptive_kernel_runtime::{
        catalog, AdaptiveBackend, BackendSelector, Error, PerfStats, DEFAULT_GPU_FLOPS, DEFAULT_MIN_DISPATCH_RATIO,
        DEFAULT_PCIE_BANDWIDTH,
    };
}

// The crate root's paths before the items were grouped into the modules above (see
// CHANGELOG.md); kept so that code written against them still compiles, throughout 0.1
// (removed in 0.2: the README's "Stability and supported Rust").
#[doc(hidden)]
pub use adaptive_kernel_runtime::{
    bucket_of, bucket_range, catalog, clear_history, default_path, export_history, export_learned, history_file,
    history_status, import_history, import_learned, loop_reason, read_history, save_calibration, set_history,
    set_span_threshold, simd_level, AdaptiveBackend, BackendReport, BackendSelector, BucketRecord, BucketReport,
    CostModel, CostParams, Decision, DecisionKind, Error, ExclusionRecord, Fingerprint, HistoryError, HistoryFile,
    HistoryStatus, ImportError, ImportSummary, KernelFamily, KernelRecord, KernelSpec, LearnedImport, LoopLine,
    LoopRecord, LoopRewrite, LoopSplit, LoopSummary, MachineRecord, NearestEntry, NearestRule, ParseEnumError,
    PerfStats, Route, SimdLevel, SplitLine, SplitRecord, TimingRecord, Work, BUCKETS, DEFAULT_GPU_FLOPS,
    DEFAULT_MIN_DISPATCH_RATIO, DEFAULT_PCIE_BANDWIDTH, LOOP_REASONS,
};

/// Items the code generated by `#[adaptive_kernel]` refers to (and the crate's
/// own benches and tools: `median`, `thousands`, `bytes`). Not a public API: anything here may
/// change in any release.
#[doc(hidden)]
pub mod __private {
    /// The check that the runtime's reason words are the macro's (used at this crate's root).
    pub use adaptive_kernel_macros::__loop_reasons as loop_reasons;
    /// Bytes in a fitting unit, as tables and the `adaptive-kernel` command print them.
    pub use adaptive_kernel_runtime::__bytes as bytes;
    pub use adaptive_kernel_runtime::__median as median;
    /// The `#[target_feature]` clones and their run-time pick, for the SIMD variant.
    pub use adaptive_kernel_runtime::__simd_clones as simd_clones;
    /// Sizes as the tour and the `adaptive-kernel` command print them.
    pub use adaptive_kernel_runtime::__thousands as thousands;
    pub use adaptive_kernel_runtime::compare::{compare_arrays, verify_input, Agreement, Comparable};
    pub use adaptive_kernel_runtime::ops::exact::{par as ops_exact_par, simd as ops_exact_simd};
    pub use adaptive_kernel_runtime::ops::{gpu as ops_gpu, par as ops_par, scalar as ops_scalar, simd as ops_simd};
    pub use adaptive_kernel_runtime::{
        run_verified, simd_cold, simd_level, simd_run, Backend, Kernel, KernelFamily, KernelSpec, LoopGpu, LoopReason,
        LoopRewrite, LoopSplit, OpComplexity, Route, SimdLevel, VerifiedCall, Work,
    };

    /// Lanes and chunked reads for the SIMD variant's reassociated reductions.
    pub mod reduce;

    /// The formulas that replace libm's calls in the loops a SIMD variant puts in lanes.
    pub use adaptive_kernel_runtime::math;

    /// The fork–join of the loops a Parallel variant splits across threads.
    pub use adaptive_kernel_runtime::ops::par::loops as split;

    /// The GPU runs of the loops a GPU variant generates.
    pub use adaptive_kernel_runtime::ops::gpu::loops as gpu_loop;

    /// ndarray arrays in standard layout as row-major slices, for the loops a variant
    /// rewrites; a call with one that is not runs as written (`Kernel::ran_as_written`).
    pub use adaptive_kernel_runtime::layout;
}
