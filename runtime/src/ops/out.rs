//! Where an op that produces an array writes: the caller's slice (the
//! `_into` form, `add_into(a, b, out)`) or a fresh vector (the returning
//! form, `add(a, b)`), through one kernel per op and backend.
//!
//! A kernel writes a `&mut [Slot]`: output elements it may set but not read.
//! That one type serves both forms without a zeroing pass:
//! - the `_into` form lends the caller's initialised `&mut [f32]` as slots
//!   ([`slots`], safe: a slot can only be given a value);
//! - the returning form lends a fresh vector's uninitialised capacity
//!   ([`filled`]). A kernel taking `&mut [f32]` would need that capacity
//!   zeroed first, a whole extra write pass, which made memory-bound ops
//!   slower than the Scalar loop at 64K–1M elements (BENCHMARKS.md).
//!
//! Kernels that accumulate into their output (GEMM, `conv2d`) or that take an
//! initialised `&mut [f32]` from a library (trueno's transpose) write plain
//! `f32`s instead: their returning form starts from [`zeroed`], their `_into`
//! form from the caller's slice.
//!
//! # Fresh outputs
//! Fresh outputs of 16 MiB and more ask Linux for transparent huge pages: a
//! fresh 64 MiB output otherwise takes 16,384 first-touch page faults, which
//! cost more than the arithmetic on the benchmark VM; 2 MiB pages
//! (`MADV_HUGEPAGE`) cut them to 32. An `_into` call into a buffer the caller
//! reuses pays neither.

use std::mem::MaybeUninit;

/// One output element that a kernel may set but never read: an `f32` that
/// may not be initialised yet.
#[repr(transparent)]
pub(crate) struct Slot(MaybeUninit<f32>);

impl Slot {
    /// Gives this element its value.
    #[inline(always)]
    pub(crate) fn set(&mut self, value: f32) {
        self.0.write(value);
    }
}

/// The caller's output slice as slots, for the `_into` form of an op.
#[inline]
pub(crate) fn slots(out: &mut [f32]) -> &mut [Slot] {
    // SAFETY: `Slot` is `repr(transparent)` over `MaybeUninit<f32>`, which has the layout of
    // `f32`, so the pointer and length describe the same memory. The only way to write through
    // a `Slot` is `set`, which stores an initialised `f32`, so `out` holds valid floats
    // whatever the kernel does; and the borrow of `out` lasts as long as the result.
    unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<Slot>(), out.len()) }
}

/// Slots every one of which has been set, as the `f32`s they hold (for an op
/// that reads back what it wrote: softmax sums its exponentials).
///
/// # Safety
/// Every slot of `out` must have been set.
#[inline]
pub(crate) unsafe fn written(out: &mut [Slot]) -> &mut [f32] {
    // SAFETY: same layout (see `slots`); the caller guarantees every element is initialised.
    unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<f32>(), out.len()) }
}

/// A fresh vector of `n` elements, all of which `write` sets, in place (no
/// zeroing pass); large ones are backed by huge pages (see the module docs).
///
/// # Safety
/// `write` must set every slot of the slice it is given (a panic inside it
/// is fine: the vector is then dropped with length 0).
#[inline]
pub(crate) unsafe fn filled(n: usize, write: impl FnOnce(&mut [Slot])) -> Vec<f32> {
    let mut v: Vec<f32> = Vec::with_capacity(n);
    advise_huge_pages(v.as_mut_ptr(), n);
    // SAFETY: the capacity holds at least `n` elements; `Slot` has the layout of
    // `MaybeUninit<f32>`, which the spare capacity is.
    let spare = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<Slot>(), n) };
    write(spare);
    // SAFETY: the capacity is at least `n`, and the caller guarantees `write` set all of the
    // first `n` elements.
    unsafe { v.set_len(n) };
    v
}

/// A zeroed vector of `n` elements, for kernels that accumulate into their
/// output or take an initialised `&mut [f32]`; advised like [`filled`]'s.
pub(crate) fn zeroed(n: usize) -> Vec<f32> {
    // `vec![0.0; n]` is `calloc`: a fresh mapping is already zero and is not touched here,
    // so the advice below still decides how its pages are faulted in.
    let mut v = vec![0.0f32; n];
    advise_huge_pages(v.as_mut_ptr(), n);
    v
}

/// Outputs of at least this many bytes ask for transparent huge pages: the
/// smallest size that spans several 2 MiB pages, below which the allocator
/// usually reuses already-mapped memory anyway.
#[cfg(target_os = "linux")]
const HUGE_PAGE_MIN_BYTES: usize = 16 << 20;

/// Asks Linux to back the whole pages of `[ptr, ptr + n)` with transparent
/// huge pages, if the range is large. Advice only: errors (THP disabled, a
/// page size other than 4 KiB) leave ordinary pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut f32, n: usize) {
    const PAGE: usize = 4096;
    let bytes = n.saturating_mul(size_of::<f32>());
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + bytes) & !(PAGE - 1);
    if end <= start {
        return;
    }
    // SAFETY: `[start, end)` is the whole-page interior of an allocation of `bytes` bytes at
    // `ptr` that the caller owns and has not shared. `MADV_HUGEPAGE` only changes how the
    // kernel backs those pages later, never their contents or their mapping, so it cannot
    // affect any other allocation or any value already written.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut f32, _n: usize) {}

/// Defines an op's two forms from its input check (`check: output = expr`,
/// an [`Output`](crate::ops::check::Output) the body may read) and its one kernel:
/// `$name(args) -> Vec<f32>` (a fresh output) and `$into(args, out)` (the
/// caller's), each running the check first, so both panic alike on bad
/// inputs, and `$into` also on an `out` of the wrong length.
///
/// How the body writes: `kernel: |slots| expr` sets every one of `slots`
/// (the check's length); `onto_zeros: |out| expr` adds into an initialised
/// `out` that starts at zero (the `_into` form zeroes the caller's slice
/// first); `overwrite: |out| expr` writes every element of an initialised
/// `out` (a library kernel taking `&mut [f32]`). `$self` (written `self`)
/// makes them methods; a third name (`fn add / add_into / add_slots`) adds a
/// crate-visible method taking the output as slots. The attributes (docs) go on `$name`; `$into`'s docs
/// point to it.
macro_rules! producing {
    (@into_doc $name:ident, $path:expr) => {
        concat!(
            "[`", stringify!($name), "`](", $path, ") written into `out`, which must have as many elements as ",
            "its result: the same bits, the same kernel, and no allocation.\n\n",
            "# Panics\nWhere [`", stringify!($name), "`](", $path, ") panics, and if `out` has another length ",
            "(the message names the op and both shapes)."
        )
    };
    (@fresh kernel, $output:ident, |$out:ident| $body:expr) => {{
        let write = |$out: &mut [$crate::ops::out::Slot]| $body;
        // SAFETY: an op's kernel sets every slot of an output of the length its check returned
        // (each op states how next to its kernel).
        unsafe { $crate::ops::out::filled($output.len(), write) }
    }};
    // `onto_zeros` and `overwrite` both start from a zeroed vector.
    (@fresh $zeroed:ident, $output:ident, |$out:ident| $body:expr) => {{
        let mut fresh = $crate::ops::out::zeroed($output.len());
        let $out: &mut [f32] = &mut fresh;
        $body;
        fresh
    }};
    (@into kernel, $dst:ident, |$out:ident| $body:expr) => {{
        let $out = $crate::ops::out::slots($dst);
        $body
    }};
    (@into onto_zeros, $dst:ident, |$out:ident| $body:expr) => {{
        $dst.fill(0.0);
        let $out: &mut [f32] = $dst;
        $body
    }};
    (@into overwrite, $dst:ident, |$out:ident| $body:expr) => {{
        let $out: &mut [f32] = $dst;
        $body
    }};
    // Methods (`self` first), with a crate-visible form on slots, for the backends built on them.
    ($(#[$m:meta])* $vis:vis fn $name:ident / $into:ident / $slots:ident ($self:ident $(, $arg:ident: $ty:ty)* $(,)?)
        check: $output:ident = $check:expr, kernel: |$out:ident| $body:expr $(,)?) => {
        $crate::ops::out::producing! {
            $(#[$m])* $vis fn $name / $into ($self $(, $arg: $ty)*) check: $output = $check, kernel: |$out| $body
        }

        /// The `_into` form on slots: the same checks and kernel, into any output `out` (see `ops/out.rs`).
        #[track_caller]
        pub(crate) fn $slots($self $(, $arg: $ty)*, out: &mut [$crate::ops::out::Slot]) {
            let $output = $check;
            $output.check(out.len());
            let $out = out;
            $body
        }
    };
    // Methods (`self` first).
    ($(#[$m:meta])* $vis:vis fn $name:ident / $into:ident ($self:ident $(, $arg:ident: $ty:ty)* $(,)?)
        check: $output:ident = $check:expr, $how:ident: |$out:ident| $body:expr $(,)?) => {
        $(#[$m])*
        #[track_caller]
        $vis fn $name($self $(, $arg: $ty)*) -> Vec<f32> {
            let $output = $check;
            $crate::ops::out::producing!(@fresh $how, $output, |$out| $body)
        }

        #[doc = $crate::ops::out::producing!(@into_doc $name, concat!("Self::", stringify!($name)))]
        #[track_caller]
        #[allow(clippy::too_many_arguments)] // `conv2d_into`: `self`, the op's six and `out`
        $vis fn $into($self $(, $arg: $ty)*, out: &mut [f32]) {
            let $output = $check;
            $output.check(out.len());
            $crate::ops::out::producing!(@into $how, out, |$out| $body)
        }
    };
    // Free functions.
    ($(#[$m:meta])* $vis:vis fn $name:ident / $into:ident ($($arg:ident: $ty:ty),* $(,)?)
        check: $output:ident = $check:expr, $how:ident: |$out:ident| $body:expr $(,)?) => {
        $(#[$m])*
        #[track_caller]
        $vis fn $name($($arg: $ty),*) -> Vec<f32> {
            let $output = $check;
            $crate::ops::out::producing!(@fresh $how, $output, |$out| $body)
        }

        #[doc = $crate::ops::out::producing!(@into_doc $name, stringify!($name))]
        #[track_caller]
        $vis fn $into($($arg: $ty,)* out: &mut [f32]) {
            let $output = $check;
            $output.check(out.len());
            $crate::ops::out::producing!(@into $how, out, |$out| $body)
        }
    };
}
pub(crate) use producing;
