//! Output vectors for the SIMD ops: written in place without zeroing first,
//! and backed by transparent huge pages when large.
//!
//! Two measured costs shape this file (figures in BENCHMARKS.md):
//! - zeroing a fresh output before a kernel overwrites it is a whole extra
//!   write pass, which made a memory-bound op slower than its Scalar loop at
//!   64K–1M elements; so kernels write into the `Vec`'s spare capacity;
//! - a fresh 64 MiB output takes 16,384 first-touch page faults, which cost
//!   more than the arithmetic on the benchmark VM; asking for 2 MiB pages
//!   (`MADV_HUGEPAGE`) cuts them to 32.

use std::mem::MaybeUninit;

/// Outputs of at least this many bytes ask for transparent huge pages: the
/// smallest size that spans several 2 MiB pages, below which the allocator
/// usually reuses already-mapped memory anyway.
#[cfg(target_os = "linux")]
const HUGE_PAGE_MIN_BYTES: usize = 16 << 20;

/// A vector of `n` elements, all of which `write` initialises in place.
///
/// # Safety
/// `write` must initialise every element of the slice it is given (a panic
/// inside it is fine: the vector is dropped with length 0).
pub(super) unsafe fn filled(n: usize, write: impl FnOnce(&mut [MaybeUninit<f32>])) -> Vec<f32> {
    let mut v = Vec::with_capacity(n);
    advise_huge_pages(v.as_ptr(), n);
    write(&mut v.spare_capacity_mut()[..n]);
    // SAFETY: the capacity is at least `n`, and the caller guarantees `write` initialised
    // all of the first `n` elements.
    unsafe { v.set_len(n) };
    v
}

/// A zeroed vector of `n` elements, for kernels that accumulate into their
/// output or take `&mut [f32]` (trueno's GEMM and transpose).
pub(super) fn zeroed(n: usize) -> Vec<f32> {
    // `vec![0.0; n]` is `calloc`: a fresh mapping is already zero and is not touched here,
    // so the advice below still decides how its pages are faulted in.
    let v = vec![0.0f32; n];
    advise_huge_pages(v.as_ptr(), n);
    v
}

/// Asks Linux to back the whole pages of `[ptr, ptr + n)` with transparent
/// huge pages, if the range is large. Advice only: errors (THP disabled, a
/// page size other than 4 KiB, another OS) leave ordinary pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *const f32, n: usize) {
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
fn advise_huge_pages(_ptr: *const f32, _n: usize) {}
