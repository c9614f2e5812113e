//! Scoped backend overrides: [`with_backend`].
//!
//! The override lives in a thread-local, so it applies to calls made by the
//! current thread inside the closure only. To keep the fast path free of a
//! thread-local read, a process-wide count of active scopes is checked first:
//! while it is zero (the normal case) a settled call never looks further.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::backend::Backend;

static ACTIVE_SCOPES: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SCOPED: Cell<Option<Backend>> = const { Cell::new(None) };
}

/// Whether any thread is inside a [`with_backend`] scope.
#[inline]
pub(crate) fn any_active() -> bool {
    // Relaxed: a thread always sees its own increment (program order); other
    // threads' scopes do not concern it, and a stale non-zero only costs a cold-path visit.
    ACTIVE_SCOPES.load(Ordering::Relaxed) != 0
}

/// The backend forced by the innermost [`with_backend`] scope of this thread.
pub(crate) fn scoped() -> Option<Backend> {
    if !any_active() {
        return None;
    }
    SCOPED.with(Cell::get)
}

/// Runs `f` with every adaptive kernel called by this thread inside it forced onto
/// `backend`, then restores the previous setting (also when `f` panics). Scopes nest;
/// the innermost wins. A scope overrides [`crate::Kernel::force`], the process-wide
/// setting ([`crate::config::Settings::backend`], `ADAPTIVE_KERNEL_BACKEND`) and every
/// saved or learned decision. Calls inside a scope are never timed, compared or
/// recorded, so they teach the router nothing. The scope is this thread's: kernels
/// that `f` calls on other threads (a rayon pool's workers) are not forced by it; the
/// process-wide setting reaches them.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::{with_backend, Backend};
/// let total = with_backend(Backend::Scalar, || adaptive_kernel::ops::sum(&[1.0, 2.0]));
/// assert_eq!(total, 3.0);
/// ```
pub fn with_backend<R>(backend: Backend, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Backend>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPED.with(|s| s.set(self.0));
            ACTIVE_SCOPES.fetch_sub(1, Ordering::Relaxed);
        }
    }
    ACTIVE_SCOPES.fetch_add(1, Ordering::Relaxed);
    let _restore = Restore(SCOPED.with(|s| s.replace(Some(backend))));
    f()
}
