//! Seven numerical programs written the way their authors write them (plain
//! loops over slices), each in three builds, for issue #23:
//!
//! - **plain**: the loops, unannotated;
//! - **annotated**: the same loops under one `#[adaptive_kernel(…)]` each and
//!   nothing else. One `macro_rules!` per program stamps the source twice
//!   (`program!()` and `program!(adaptive_kernel)`), so the two cannot drift;
//!   the attribute is written inside the macro, so its `size = …` names the
//!   parameters the macro declares (hygiene);
//! - **hand**: what a performance engineer writes: explicit lanes (arrays of
//!   `f32` that LLVM keeps in vector registers), a clone per CPU feature level
//!   chosen at run time ([`clones!`]: AVX-512, AVX2+FMA, baseline), and rayon
//!   over the outer loop.
//!
//! Three of them are also written with ndarray (`arrays.rs`, issue 42), each in
//! four builds: the three above and its **twin**, the same program written over
//! slices and annotated (`kmeans.rs`, `layernorm.rs`, and the 5-point stencil of
//! `stencil.rs`, which is here for that alone).
//!
//! Used by `benches/programs.rs` (the builds timed in one run) and
//! `tests/programs.rs` (the builds compute the same result).

// Each user of this module uses a different part of it.
#![allow(dead_code)]
// The programs are written as index loops on purpose: that is the code under test.
#![allow(clippy::needless_range_loop)]

pub(crate) mod arrays;
pub(crate) mod blur;
pub(crate) mod histogram;
pub(crate) mod jacobi;
pub(crate) mod kmeans;
pub(crate) mod layernorm;
pub(crate) mod nbody;
pub(crate) mod softmax;
pub(crate) mod stencil;

use adaptive_kernel::{Backend, Kernel};

/// One of the three builds of a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Build {
    /// The loops, unannotated.
    Plain,
    /// The same loops under `#[adaptive_kernel]`: routed calls.
    Annotated,
    /// Explicit lanes, a CPU-feature clone chosen at run time, rayon.
    Hand,
    /// The same program written over slices, annotated: the twin of a program written
    /// with ndarray (`arrays.rs`). A program written over slices is its own twin.
    Twin,
}

impl Build {
    /// Every build of a program written over slices, in table order.
    pub(crate) const ALL: [Build; 3] = [Build::Plain, Build::Annotated, Build::Hand];
    /// Every build of a program written with ndarray, in table order.
    pub(crate) const ARRAYS: [Build; 4] = [Build::Plain, Build::Annotated, Build::Twin, Build::Hand];

    /// The build's name in tables and on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Build::Plain => "plain",
            Build::Annotated => "annotated",
            Build::Hand => "hand",
            Build::Twin => "twin",
        }
    }

    /// The build named `name`.
    pub(crate) fn parse(name: &str) -> Option<Build> {
        Build::ARRAYS.into_iter().find(|b| b.name() == name)
    }
}

/// What one call of a program's kernel does, for a throughput figure.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Work {
    /// Floating-point operations (n-body counts 20 per interaction, as is customary).
    Flops(f64),
    /// Bytes read and written once each (the least memory traffic the call needs).
    Bytes(f64),
}

impl Work {
    /// The throughput of one call taking `seconds`, with its unit.
    pub(crate) fn rate(self, seconds: f64) -> String {
        match self {
            Work::Flops(f) => format!("{:.1} GFLOP/s", f / seconds / 1e9),
            Work::Bytes(b) => format!("{:.1} GB/s", b / seconds / 1e9),
        }
    }
}

/// One program at one size, with its inputs and outputs allocated: what the
/// bench times. `call` runs the program's kernel once in `build`.
pub(crate) trait Case {
    /// The program and size, for the table.
    fn label(&self) -> String;
    /// One call of the kernel in `build` (outputs overwritten).
    fn call(&mut self, build: Build);
    /// What one call does.
    fn work(&self) -> Work;
    /// The annotated kernel's handle and the size its routed call reports.
    fn routed(&self) -> (&'static Kernel, usize);
    /// The twin's kernel and size, for a program written with ndarray (settled like
    /// [`Case::routed`]'s before the rounds); `None` for a program written over slices.
    fn twin(&self) -> Option<(&'static Kernel, usize)> {
        None
    }
    /// The builds it has, in table order.
    fn builds(&self) -> &'static [Build] {
        &Build::ALL
    }
    /// One call of the annotated kernel's `resident` entry on `Resident` handles (data
    /// kept on the device between calls), where the program has one; `false` otherwise.
    fn call_resident(&mut self) -> bool {
        false
    }
    /// What the issue asks of the annotated build here, in words.
    fn target(&self) -> &'static str;
}

/// The backend the annotated build's bucket for this case settled on, if it has.
pub(crate) fn settled(case: &dyn Case) -> Option<Backend> {
    let (kernel, size) = case.routed();
    settled_at(kernel, size)
}

/// The backend `kernel`'s bucket for `size` settled on, if it has.
pub(crate) fn settled_at(kernel: &'static Kernel, size: usize) -> Option<Backend> {
    kernel.table().row_for(size).and_then(|row| row.chosen)
}

/// A whole program run: `steps` steps of a program from its fixed initial
/// state, as the program's `main` would do them. Returns a checksum of the
/// final state (printed so that no build can skip work, and compared loosely).
pub(crate) struct WholeRun {
    /// The program's name on the command line.
    pub(crate) name: &'static str,
    /// What the run does, in words.
    pub(crate) describe: &'static str,
    /// Runs it in `build`.
    pub(crate) run: fn(Build) -> f64,
}

/// `$name(args)` runs `$body::<L>(args)` compiled for the best instruction set
/// this CPU has, chosen at run time: AVX-512F (`L = $l512`), else AVX2 with
/// FMA (`L = $l256`), else the target's baseline (`L = $l128`). `$body` must be
/// `#[inline(always)]` so that each clone compiles it with its features.
macro_rules! clones {
    (
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?
        = $body:ident::<$l512:literal, $l256:literal, $l128:literal>
    ) => {
        $(#[$doc])*
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[allow(clippy::too_many_arguments)]
                #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
                fn avx512($($arg: $ty),*) $(-> $ret)? {
                    $body::<$l512>($($arg),*)
                }
                #[allow(clippy::too_many_arguments)]
                #[target_feature(enable = "avx2,fma")]
                fn avx2($($arg: $ty),*) $(-> $ret)? {
                    $body::<$l256>($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: the CPU has every feature `avx512` is compiled for (checked above).
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU has every feature `avx2` is compiled for (checked above).
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body::<$l128>($($arg),*)
        }
    };
}
pub(crate) use clones;

/// Rows per rayon task for a row-parallel loop over `rows` rows of `cols`
/// elements: tasks of about 32 K elements (enough work to pay for a task's
/// ~1 µs, several per thread for balance), at least one row.
pub(crate) fn rows_per_task(cols: usize) -> usize {
    (32 * 1024 / cols.max(1)).max(1)
}
