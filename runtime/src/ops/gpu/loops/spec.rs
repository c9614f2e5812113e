//! The vocabulary of generated loops: a loop's static ([`GpuLoop`]) with its
//! slices, scalars and reductions, why a call ran on the host, and how often
//! each loop ran where ([`runs`]). No behaviour here beyond the counters.

use std::sync::atomic::{AtomicU16, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

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
    /// A slice parameter of the kernel (`&[T]`, `&mut [T]`), which a `k::resident` call may
    /// pass as a resident handle's host memory; only these are looked up as resident.
    pub param: bool,
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

/// A reduction a generated loop carries: each workgroup's partial result (a tree
/// within the workgroup), the partials combined on the device (a tree again; a
/// `usize` sum's on the host, in 64 bits), then into the accumulator on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// The operator.
    pub op: ReduceOp,
    /// The accumulator's type (`Elem::F32` for every operator, an integer for `Sum`).
    pub elem: Elem,
}

/// Why a call of a generated loop ran on the host: said once per loop and reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
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
    /// A row narrower than the width the shader's bounds were proved for (not said).
    Narrow = 32,
    /// An earlier loop of the same group runs on the host, so this one does too (not said:
    /// the earlier one's reason is).
    Earlier = 64,
    /// A resident handle it binds lost its data with the device.
    Lost = 128,
    /// A NaN or infinity among the loop's float inputs, or one the shader computed: WGSL lets
    /// a device assume there are none (lavapipe folds `x * 0.0` to `0` for `x = ∞`), so the
    /// host computes the call, as Rust does. Data, not a fault: counted, never said.
    Special = 256,
}

impl HostReason {
    fn says(self) -> &'static str {
        match self {
            HostReason::Type => "a captured value's type is not the one the shader was written for",
            HostReason::Size => "a size or value is beyond u32, or a slice beyond the device's storage binding limit",
            HostReason::Bindings => "the device binds fewer storage buffers than the loop needs",
            HostReason::Shader => "its shader failed validation (please report this)",
            HostReason::Special => "a NaN or an infinity among its float values",
            HostReason::Status => {
                "the device met what Rust computes otherwise (an index out of bounds, a division by zero, a value \
                 beyond u32, a sine of a huge argument)"
            }
            HostReason::Lost => "the device that held a resident handle's data was lost",
            HostReason::Narrow | HostReason::Earlier => "",
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
    /// Calls run on the device, and on the host (of which `special` for a NaN or infinity).
    on_device: AtomicU64,
    on_host: AtomicU64,
    special: AtomicU64,
    /// `HostReason` bits already said.
    said: AtomicU16,
    /// 0: not validated yet; 1: valid; 2: invalid.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) shader: AtomicU8,
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
            special: AtomicU64::new(0),
            said: AtomicU16::new(0),
            shader: AtomicU8::new(0),
            registered: AtomicU8::new(0),
        }
    }

    /// The whole shader: the runtime's prelude and the generated part.
    pub fn source(&self) -> String {
        [include_str!("../shaders/math.wgsl"), include_str!("../shaders/loops.wgsl"), self.wgsl].concat()
    }

    /// Records a call's outcome.
    pub(crate) fn count(&'static self, on_device: bool) {
        let counter = if on_device { &self.on_device } else { &self.on_host };
        counter.fetch_add(1, Ordering::Relaxed);
        if self.registered.swap(1, Ordering::Relaxed) == 0 {
            REGISTRY.lock().unwrap_or_else(PoisonError::into_inner).push(self);
        }
    }

    /// Records a call computed on the host, and says once per reason why (`None`: no usable
    /// device, said elsewhere; a NaN or infinity is data, counted and never said).
    pub(crate) fn ran_on_host(&'static self, reason: Option<HostReason>) {
        self.count(false);
        match reason {
            None => {}
            Some(HostReason::Special) => {
                self.special.fetch_add(1, Ordering::Relaxed);
            }
            Some(reason) => self.say_once(reason),
        }
    }

    /// Says once per reason why this loop ran on the host (a narrow row, or an earlier
    /// loop of its group on the host, is not said).
    fn say_once(&'static self, reason: HostReason) {
        if matches!(reason, HostReason::Narrow | HostReason::Earlier) {
            return;
        }
        let bit = reason as u16;
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
    /// Of those, the calls computed on the host because a NaN or an infinity was among the
    /// loop's float inputs or arose in the shader (the GPU contract: the host computes them).
    pub special: u64,
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
            special: acc.special + l.special.load(Ordering::Relaxed),
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
pub(crate) fn dispatch_limit(device_max: usize) -> usize {
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
}
