//! A kernel's static call site: what the `#[adaptive_kernel]` macro puts in
//! `k::KERNEL`, and the per-call fast path.
//!
//! Shaped after tracing-core's callsites: a `static` with a `const fn new`,
//! one relaxed atomic load of the cached decision per call, and a
//! `#[cold] #[inline(never)]` slow path that may lock, allocate and log.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::backend::{Backend, OpComplexity};
use crate::bucket::{bucket_of, BUCKETS};
use crate::router;

/// What the macro knows about a kernel at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    /// Identity in history and traces: `module_path!()::fn_name`, or the attribute's `name`.
    pub name: &'static str,
    /// The complexity class from the attribute.
    pub complexity: OpComplexity,
    /// Whether the kernel has a real GPU variant (its body calls `ops::` or `gpu = path` was given).
    pub has_gpu: bool,
    /// A hash of the function's tokens: an edited kernel does not trust old timings.
    pub token_hash: u64,
}

/// The work one call does, for the cost model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    /// The size the call is bucketed by (elements, by default).
    pub size: usize,
    /// Floating-point operations the call performs.
    pub flops: u64,
    /// Bytes the call reads and writes (what a GPU variant must transfer).
    pub bytes: u64,
}

impl Work {
    /// The work of a call of `size` elements, with explicit `flops`/`bytes` where the
    /// attribute gave them and estimates from the complexity otherwise:
    ///
    /// | complexity | default flops | default bytes |
    /// | --- | --- | --- |
    /// | Low | `size` | `8 · size` (f32 in and out) |
    /// | Medium | `4 · size` | `4 · size` |
    /// | High | `2 · size^1.5` (a square matmul with `size = 2n²` does `2n³ ≈ 0.7 · size^1.5`; rounded up) | `6 · size` |
    ///
    /// All arithmetic saturates.
    pub fn estimate(complexity: OpComplexity, size: usize, flops: Option<u64>, bytes: Option<u64>) -> Work {
        let s = size as u64;
        let flops = flops.unwrap_or_else(|| match complexity {
            OpComplexity::Low => s,
            OpComplexity::Medium => s.saturating_mul(4),
            OpComplexity::High => {
                let f = 2.0 * (s as f64).powf(1.5);
                if f >= u64::MAX as f64 {
                    u64::MAX
                } else {
                    f as u64
                }
            }
        });
        let bytes = bytes.unwrap_or_else(|| match complexity {
            OpComplexity::Low => s.saturating_mul(8),
            OpComplexity::Medium => s.saturating_mul(4),
            OpComplexity::High => s.saturating_mul(6),
        });
        Work { size, flops, bytes }
    }
}

/// Encoded decision byte: 0 = not decided; otherwise `1 + backend index`.
const UNDECIDED: u8 = 0;

fn encode(backend: Backend) -> u8 {
    1 + backend.index() as u8
}

#[inline]
fn decode(byte: u8) -> Option<Backend> {
    match byte {
        1 => Some(Backend::Scalar),
        2 => Some(Backend::Simd),
        3 => Some(Backend::Gpu),
        _ => None,
    }
}

/// A kernel's static handle (`k::KERNEL`): its spec and its routing state.
pub struct Kernel {
    spec: KernelSpec,
    decisions: [AtomicU8; BUCKETS],
}

impl Kernel {
    /// A kernel with nothing decided yet. `const`, so it can initialise a `static`.
    pub const fn new(spec: KernelSpec) -> Kernel {
        Kernel { spec, decisions: [const { AtomicU8::new(UNDECIDED) }; BUCKETS] }
    }

    /// What the macro recorded about this kernel.
    pub const fn spec(&self) -> &KernelSpec {
        &self.spec
    }

    /// The kernel's name in history and traces.
    pub const fn name(&self) -> &'static str {
        self.spec.name
    }

    /// The kernel's complexity class.
    pub const fn complexity(&self) -> OpComplexity {
        self.spec.complexity
    }

    /// Whether the kernel has a real GPU variant.
    pub const fn has_gpu(&self) -> bool {
        self.spec.has_gpu
    }

    /// Routes one call of `size`; `work` is evaluated only when a decision must be made.
    #[inline]
    pub fn route(&'static self, size: usize, work: impl FnOnce() -> Work) -> Route {
        let bucket = bucket_of(size);
        // Relaxed: the byte is the entire message (no other data is published with
        // it); a stale read only sends this call through the cold path once more.
        if let Some(backend) = decode(self.decisions[bucket].load(Ordering::Relaxed)) {
            return Route { backend };
        }
        self.route_cold(bucket, work())
    }

    #[cold]
    #[inline(never)]
    fn route_cold(&'static self, bucket: usize, work: Work) -> Route {
        let decision = router::cold_start(&self.spec, &work);
        self.decisions[bucket].store(encode(decision.backend), Ordering::Relaxed);
        Route { backend: decision.backend }
    }
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel").field("spec", &self.spec).finish_non_exhaustive()
    }
}

/// Where one call goes, handed from [`Kernel::route`] to the generated wrapper.
#[derive(Debug)]
#[must_use = "a route does nothing until `run` calls the chosen variant"]
pub struct Route {
    backend: Backend,
}

impl Route {
    /// The variant to call.
    #[inline]
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Calls `variant` (the chosen backend's function) and returns its result.
    #[inline]
    pub fn run<R>(self, variant: impl FnOnce() -> R) -> R {
        variant()
    }
}
