//! GPU runs of plain loops: what `#[adaptive_kernel]` generates for a
//! top-level loop of a body whose iterations are independent (the loops the
//! Parallel variant splits), one iteration per GPU invocation.
//!
//! The macro writes, per loop, a [`GpuLoop`] static (its WGSL, the slices it
//! binds with their element types and access, the types of the scalars it
//! takes, the reductions it carries) and, where the loop was, code that hands
//! a [`Launch`] the loop's bounds, scalars, slices and accumulators, and runs
//! the loop as written on the CPU when [`Launch::run`] answers `false`:
//!
//! * no usable device, a failed device, or a call the device cannot take (a
//!   size over `u32`, a slice over the largest storage binding, more slices than
//!   the device binds);
//! * a captured value whose type is not the one the macro inferred (checked here,
//!   at run time, by [`probe`]: a wrong guess runs the loop on the CPU, never on
//!   wrong data);
//! * a shader that sets its status word: what would panic in Rust (an index out
//!   of bounds, an integer division by zero) or what the device cannot compute as
//!   the host does (see `shaders/loops.wgsl`). Nothing has been copied back then,
//!   so the loop as written runs on unchanged data, and panics where Rust panics.
//!
//! # How a call runs
//! The shader (`shaders/math.wgsl`, `shaders/loops.wgsl`, then the generated
//! part) is validated with naga and compiled the first time the loop runs on the
//! device, and its pipeline kept for the process. One call uploads each slice
//! once (a written slice too: what an iteration does not write must come back
//! unchanged), dispatches `⌈units / 64⌉` workgroups in as many dispatches as the
//! device's grid needs, and reads back, in one mapping, the status word, the
//! workgroups' partial results and every written slice. Reductions are combined
//! on the host, in workgroup order.
//!
//! Files: `probe.rs` (the run-time type checks), `launch.rs` (what a call
//! collects and decides), `exec.rs` (the device side).

mod launch;
pub mod probe;

#[cfg(feature = "gpu")]
pub(super) mod exec;

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

pub use launch::Launch;

/// Invocations per workgroup of every generated loop: `LP_WG` in `shaders/loops.wgsl`.
pub const WORKGROUP: usize = 64;

/// Uniform words before the slices' lengths (`shaders/loops.wgsl`).
pub(crate) const HEADER_WORDS: usize = 4;

/// Uniform words a generated loop can read: `lp_u` in `shaders/loops.wgsl`.
pub(crate) const UNIFORM_WORDS: usize = 256;

/// The element type of a slice a generated loop binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `f32`.
    F32,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `usize`, as `u32` on the device (a value over `u32::MAX` keeps the call on the host).
    Usize,
}

/// The type of a scalar a generated loop takes (a uniform word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// `f32`.
    F32,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `usize` (at most `u32::MAX` to run on the device).
    Usize,
    /// `bool`, as 0 or 1.
    Bool,
}

/// How a generated loop uses a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Only read (`&[T]`, or a `&mut [T]` the loop does not write).
    Read,
    /// Written (its iteration's own items or rows), and read back.
    ReadWrite,
}

/// A slice of a generated loop: its element type and access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The element type.
    pub elem: Elem,
    /// Read, or read and written.
    pub access: Access,
}

/// The operator of a reduction a generated loop carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `acc += t` (or `acc -= t`, whose partials are added).
    Sum,
    /// `acc *= t`.
    Product,
    /// `acc = acc.max(t)`.
    Max,
    /// `acc = acc.min(t)`.
    Min,
}

/// A reduction a generated loop carries: each workgroup's partial result,
/// combined into the accumulator on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// The operator.
    pub op: ReduceOp,
    /// The accumulator's type (`Elem::F32` for every operator, an integer for `Sum`).
    pub elem: Elem,
}

/// Why a call of a generated loop ran on the host: said once per loop and reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum HostReason {
    /// A captured value's type is not the one the shader was written for.
    Type = 1,
    /// A size or value beyond `u32`, or a slice over the device's storage binding limit.
    Size = 2,
    /// The device binds fewer slices than the loop needs.
    Bindings = 4,
    /// The shader failed validation (a bug of the macro: reported once, never retried).
    Shader = 8,
    /// The shader set its status word (an index out of bounds, a division by zero, a value
    /// the device cannot compute as the host does).
    Status = 16,
}

impl HostReason {
    fn says(self) -> &'static str {
        match self {
            HostReason::Type => "a captured value's type is not the one the shader was written for",
            HostReason::Size => "a size or value is beyond u32, or a slice beyond the device's storage binding limit",
            HostReason::Bindings => "the device binds fewer storage buffers than the loop needs",
            HostReason::Shader => "its shader failed validation (please report this)",
            HostReason::Status => {
                "the device met what Rust computes otherwise (an index out of bounds, a division by zero, a value \
                 beyond u32, a sine of a huge argument)"
            }
        }
    }
}

/// A loop `#[adaptive_kernel]` generated a GPU run for: one `static` per loop,
/// built by [`GpuLoop::new`] in generated code. Not for use elsewhere: the layout
/// of its WGSL is the runtime's and the macro's private agreement.
#[derive(Debug)]
pub struct GpuLoop {
    /// The source file of the kernel (`file!()` where the attribute is).
    pub file: &'static str,
    /// The line of the loop's `for`.
    pub line: u32,
    /// The generated part of the shader: its slices (bindings `2..`), `LP_BINDINGS`,
    /// `LP_REDUCTIONS` and the entry point `main`.
    pub wgsl: &'static str,
    /// The slices, in binding order.
    pub bindings: &'static [Binding],
    /// The types of its scalar arguments, in order.
    pub scalars: &'static [Scalar],
    /// The reductions it carries, in order.
    pub reductions: &'static [Reduction],
    /// Calls run on the device, and on the host.
    on_device: AtomicU64,
    on_host: AtomicU64,
    /// `HostReason` bits already said.
    said: AtomicU8,
    /// 0: not validated yet; 1: valid; 2: invalid.
    shader: AtomicU8,
    /// Whether it is in [`REGISTRY`].
    registered: AtomicU8,
}

/// Every generated loop that has run, for [`runs`].
static REGISTRY: Mutex<Vec<&'static GpuLoop>> = Mutex::new(Vec::new());

/// The most invocations one dispatch may cover (0: as the device allows); tests
/// lower it to make "more than one dispatch" cheap.
static DISPATCH_LIMIT: AtomicUsize = AtomicUsize::new(0);

impl GpuLoop {
    /// A generated loop's static.
    pub const fn new(
        file: &'static str,
        line: u32,
        wgsl: &'static str,
        bindings: &'static [Binding],
        scalars: &'static [Scalar],
        reductions: &'static [Reduction],
    ) -> GpuLoop {
        GpuLoop {
            file,
            line,
            wgsl,
            bindings,
            scalars,
            reductions,
            on_device: AtomicU64::new(0),
            on_host: AtomicU64::new(0),
            said: AtomicU8::new(0),
            shader: AtomicU8::new(0),
            registered: AtomicU8::new(0),
        }
    }

    /// The whole shader: the runtime's prelude and the generated part.
    pub fn source(&self) -> String {
        [include_str!("../shaders/math.wgsl"), include_str!("../shaders/loops.wgsl"), self.wgsl].concat()
    }

    /// Whether the shader parses and validates (naga, as wgpu runs it), or the error.
    /// Always `Ok` without the `gpu` feature (nothing would compile it).
    pub fn validate(&self) -> Result<(), String> {
        #[cfg(feature = "gpu")]
        return exec::validate(&self.source());
        #[cfg(not(feature = "gpu"))]
        return Ok(());
    }

    /// Records a call's outcome.
    fn count(&'static self, on_device: bool) {
        let counter = if on_device { &self.on_device } else { &self.on_host };
        counter.fetch_add(1, Ordering::Relaxed);
        if self.registered.swap(1, Ordering::Relaxed) == 0 {
            REGISTRY.lock().unwrap_or_else(PoisonError::into_inner).push(self);
        }
    }

    /// Says once per reason why this loop ran on the host.
    fn say_once(&'static self, reason: HostReason) {
        let bit = reason as u8;
        if self.said.fetch_or(bit, Ordering::Relaxed) & bit == 0 {
            let (file, line, says) = (self.file, self.line, reason.says());
            tracing::info!(target: "adaptive_kernel", file, line, reason = says, "a GPU loop ran on the CPU");
            crate::config::say(format_args!("the GPU loop at {file}:{line} ran on the CPU: {says}"));
        }
    }
}

/// How often a generated loop ran on the device and on the host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopRuns {
    /// Calls computed on the device.
    pub on_device: u64,
    /// Calls computed on the host (no usable device, or one of the reasons of the module docs).
    pub on_host: u64,
}

/// The calls of the generated loops at `file:line` so far (the sum over loops
/// there, e.g. one per instantiation of a macro that writes kernels); zero
/// before the first. For tests and diagnostics.
pub fn runs(file: &str, line: u32) -> LoopRuns {
    let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    registry.iter().filter(|l| l.line == line && (l.file == file || l.file.ends_with(file))).fold(
        LoopRuns::default(),
        |acc, l| LoopRuns {
            on_device: acc.on_device + l.on_device.load(Ordering::Relaxed),
            on_host: acc.on_host + l.on_host.load(Ordering::Relaxed),
        },
    )
}

/// Makes every later dispatch of a generated loop cover at most `invocations`
/// (rounded up to a workgroup; 0 lifts the limit), so tests can run a loop over
/// several dispatches at small sizes. Not part of the API.
#[doc(hidden)]
pub fn __set_dispatch_limit_for_tests(invocations: usize) {
    DISPATCH_LIMIT.store(invocations.next_multiple_of(WORKGROUP), Ordering::Relaxed);
}

/// The most invocations one dispatch covers: `device_max` unless a test lowered it.
#[cfg(feature = "gpu")]
fn dispatch_limit(device_max: usize) -> usize {
    match DISPATCH_LIMIT.load(Ordering::Relaxed) {
        0 => device_max,
        n => n.min(device_max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prelude_says_what_the_runtime_assumes() {
        let prelude = include_str!("../shaders/loops.wgsl");
        assert!(prelude.contains(&format!("const LP_WG: u32 = {WORKGROUP}u;")));
        assert!(prelude.contains(&format!("array<vec4<u32>, {}>", UNIFORM_WORDS / 4)));
        assert!(prelude.contains(&format!("lp_word({HEADER_WORDS}u + b)")));
    }

    #[cfg(feature = "gpu")]
    #[test]
    fn the_prelude_validates_with_a_generated_part() {
        static EMPTY: GpuLoop = GpuLoop::new(
            file!(),
            line!(),
            "const LP_BINDINGS: u32 = 0u;\nconst LP_REDUCTIONS: u32 = 0u;\n\
             @compute @workgroup_size(LP_WG)\nfn main(@builtin(local_invocation_index) lid: u32) {\n\
             if (lid == 0u) { lp_fail(LP_PANIC); }\n\
             let f = lp_powf(lp_sin(1.0), lp_cos(2.0)) + lp_ln(3.0) + lp_powi(2.0, -3) + lp_round(0.5);\n\
             let u = lp_umul(lp_uadd(1u, 2u), lp_usub(3u, 1u)) + lp_udiv(4u, 2u) + lp_urem(5u, 3u);\n\
             let i = lp_idiv(-4, 2) + lp_irem(5, 3) + lp_f2i(f) + lp_iclamp(1, 0, 2);\n\
             lp_partial(0u, 0u, u + bitcast<u32>(i) + lp_f2u(f) + lp_f2usize(f) + lp_i2usize(i) + lp_uclamp(1u, 0u, 2u) \
             + lp_at(0u, 1u) + lp_sub(0u, 1u, 1u) + lp_word(0u) + lp_base() + lp_count() + lp_start() + lp_len(0u) \
             + lp_arg(0u) + bitcast<u32>(lp_max(lp_min(1.0, 2.0), lp_clamp(lp_abs(-1.0), 0.0, lp_sqrt(4.0)))) \
             + select(0u, 1u, lp_is_finite(1.0) && !lp_is_infinite(1.0)));\n}\n",
            &[],
            &[],
            &[],
        );
        EMPTY.validate().unwrap();
    }
}
