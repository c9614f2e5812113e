//! The per-call fast path: [`Kernel::route`] reads a bucket's decision byte
//! with one relaxed load, picks which settled calls are timed, and hands the
//! generated wrapper a [`Route`]; [`Route::run`] calls the chosen variant and
//! times it when picked. Everything that may lock, allocate or log is behind
//! `#[cold]` calls into [`super::site`].

use std::cell::Cell;
use std::time::Instant;

use super::decision_byte::{self, CACHED, SPAN};
use super::site::Kernel;
use super::{registry, telemetry};
use crate::backend::Backend;
use crate::bucket::bucket_of;
use crate::cost::Work;

use std::sync::atomic::Ordering;

thread_local! {
    /// Calls left before this thread times one (shared by every kernel the thread calls).
    static COUNTDOWN: Cell<u32> = const { Cell::new(0) };
}

/// Counts one settled call down; `true` when this call is to be timed.
#[inline]
fn sample_tick(byte: u8) -> bool {
    COUNTDOWN.with(|c| match c.get() {
        0 => {
            c.set((1u32 << decision_byte::shift(byte)) - 1);
            true
        }
        n => {
            c.set(n - 1);
            false
        }
    })
}

impl Kernel {
    /// Routes one call of `size`; `work` is evaluated only when a decision must be made.
    ///
    /// A settled bucket returns its cached backend; one call in N (per thread) is
    /// timed to keep the history current, with N a power of two between 16 and
    /// 32,768 chosen so a bucket gets about 50 samples a second. Everything else
    /// goes through the cold path.
    #[inline]
    pub fn route(&'static self, size: usize, work: impl FnOnce() -> Work) -> Route {
        let bucket = bucket_of(size);
        // Relaxed: the byte is the entire message (no other data is published with
        // it); a stale read only sends this call through the cold path once more.
        let byte = self.decision(bucket).load(Ordering::Relaxed);
        if byte & CACHED != 0 && !super::overrides::any_active() {
            return self.cached_route(byte, size);
        }
        registry::register(self);
        let (backend, timed) = self.route_cold(bucket, work());
        Route::new(self, backend, size, timed)
    }

    #[inline]
    pub(super) fn cached_route(&'static self, byte: u8, size: usize) -> Route {
        let timed = if sample_tick(byte) { TIMED } else { 0 };
        Route { kernel: self, size, flags: (byte & !CACHED) | timed }
    }
}

/// Where one call goes, handed from [`Kernel::route`] to the generated wrapper.
///
/// Kept to three words passed by value, so the fast path keeps it in registers:
/// `flags` is the bucket's decision byte, with its "cached" bit reused to mean
/// "time this call".
#[derive(Debug)]
#[must_use = "a route does nothing until `run` calls the chosen variant"]
pub struct Route {
    kernel: &'static Kernel,
    size: usize,
    flags: u8,
}

/// In a [`Route`]'s flags: this call is timed.
const TIMED: u8 = CACHED;

impl Route {
    fn new(kernel: &'static Kernel, backend: Backend, size: usize, timed: bool) -> Route {
        Route {
            kernel,
            size,
            flags: decision_byte::encode(backend, 0, false) & !CACHED | if timed { TIMED } else { 0 },
        }
    }

    /// The variant to call.
    #[inline]
    pub fn backend(&self) -> Backend {
        decision_byte::backend(self.flags)
    }

    /// Whether this call will be timed and recorded.
    #[inline]
    pub fn is_timed(&self) -> bool {
        self.flags & TIMED != 0
    }

    /// Calls `variant` (the chosen backend's function) and returns its result,
    /// timing it when this call was picked for measurement.
    #[inline]
    pub fn run<R>(self, variant: impl FnOnce() -> R) -> R {
        if self.flags & (TIMED | SPAN) == 0 {
            variant()
        } else {
            run_observed(self.kernel, self.size, self.flags, variant)
        }
    }
}

/// A call that is timed, spanned or both (fields by value: nothing forces the route into memory).
#[inline(never)]
fn run_observed<R>(kernel: &'static Kernel, size: usize, flags: u8, variant: impl FnOnce() -> R) -> R {
    let backend = decision_byte::backend(flags);
    let _span = (flags & SPAN != 0).then(|| telemetry::call_span(kernel.name(), backend, size));
    if flags & TIMED == 0 {
        return variant();
    }
    let start = Instant::now();
    let out = variant();
    kernel.observe(size, backend, start.elapsed());
    out
}

impl Kernel {
    /// Records that a call of `size` on `backend` took `elapsed`: what [`Route::run`]
    /// does for timed calls. Public so timings measured elsewhere can be fed in.
    ///
    /// The first sample of each backend after the process starts is a warm-up
    /// and is not kept (it pays for page faults, pipeline compilation, caches).
    pub fn observe(&'static self, size: usize, backend: Backend, elapsed: std::time::Duration) {
        registry::register(self);
        self.record(bucket_of(size), backend, size, elapsed);
    }
}
