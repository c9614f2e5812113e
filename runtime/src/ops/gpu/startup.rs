//! Running the device's one-time creation off the caller's thread: a
//! [`Startup`] cell that a background thread fills while callers either look
//! without blocking, wait with a time limit, or wait for good.
//!
//! # Shape
//! The outcome lives in a `OnceLock`: whichever thread gets there first runs
//! the creation (`get_or_init`), and any other thread that needs the outcome
//! waits inside `get_or_init` for it. So a blocking caller that comes first
//! creates on its own thread, and one that comes during a background start-up
//! waits for that one: the creation runs once either way. `OnceLock` cannot
//! wait with a time limit, so a flag under a mutex with a condition variable
//! says "finished" for [`Startup::wait`]. If no thread can be spawned,
//! [`Startup::start`] creates inline.
//!
//! # Exiting during start-up
//! A process must not exit while a driver is being loaded on another thread:
//! exit runs the destructors of the C++ libraries loaded so far, and Mesa's
//! lavapipe loads LLVM during start-up. Measured on this VM (lavapipe, Mesa
//! 22.3.6), a program that called `start` on `main` and returned 1–20 ms later
//! aborted in 6 of 400 runs (`LLVM ERROR: inconsistency in registered
//! CommandLine options`). So the thread that begins start-up gets a
//! thread-local guard whose destructor waits for start-up to finish (at most
//! [`EXIT_WAIT`]): glibc's `exit` runs the exiting thread's thread-local
//! destructors before any `atexit` handler or library destructor, and a
//! thread that ends runs them too. With it, 0 of 1,000 such runs failed. A
//! program that begins start-up on `main` or on a thread that ends before
//! `main` does (a test thread) is covered.
//!
//! Not covered: exiting from `main` while start-up, begun on another thread
//! that is still running, is loading the driver (1–2 in 500 runs exiting
//! 1–30 ms in crashed, the same as without the guard). An `atexit` handler
//! that waits does not help there, as measured: it runs after the destructors
//! of the libraries loaded after it was registered.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::Duration;

/// The longest an exiting thread or process waits for a start-up in progress.
const EXIT_WAIT: Duration = Duration::from_secs(10);

/// A value created once per process, in the background when asked to.
pub(super) struct Startup<T> {
    value: OnceLock<T>,
    started: AtomicBool,
    finished: Mutex<bool>,
    finished_changed: Condvar,
    /// Test hook: nanoseconds creation sleeps before it begins.
    delay_ns: AtomicU64,
    /// When start-up began, on the process clock (`clock::now_ns`, at least 1); 0 before.
    begun_ns: AtomicU64,
}

/// Something an exiting thread can wait for (`Startup` is generic; the
/// thread-local guard is not).
trait Finish: Sync {
    /// Blocks until start-up has finished or `timeout` passes.
    fn wait(&self, timeout: Duration);
}

impl<T: Send + Sync + 'static> Finish for Startup<T> {
    fn wait(&self, timeout: Duration) {
        Startup::wait(self, timeout);
    }
}

thread_local! {
    /// The start-up the thread that began it waits for when it exits.
    static WAIT_ON_EXIT: ExitGuard = const { ExitGuard(Cell::new(None)) };
}

struct ExitGuard(Cell<Option<&'static dyn Finish>>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        if let Some(startup) = self.0.get() {
            startup.wait(EXIT_WAIT);
        }
    }
}

impl<T: Send + Sync + 'static> Startup<T> {
    /// Nothing begun.
    pub(super) const fn new() -> Self {
        Startup {
            value: OnceLock::new(),
            started: AtomicBool::new(false),
            finished: Mutex::new(false),
            finished_changed: Condvar::new(),
            delay_ns: AtomicU64::new(0),
            begun_ns: AtomicU64::new(0),
        }
    }

    /// The outcome, if start-up has finished; never blocks.
    pub(super) fn get(&self) -> Option<&T> {
        self.value.get()
    }

    /// Whether start-up has begun (it may have finished).
    pub(super) fn has_begun(&self) -> bool {
        self.started.load(Ordering::Relaxed)
    }

    /// Whether start-up is running now: it has begun, at most `max` ago, and not finished.
    pub(super) fn running_within(&self, max: Duration) -> bool {
        let begun = self.begun_ns.load(Ordering::Relaxed);
        let max = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
        begun != 0 && self.value.get().is_none() && crate::clock::now_ns().saturating_sub(begun) <= max
    }

    fn note_begun(&self) {
        let _ = self.begun_ns.compare_exchange(0, crate::clock::now_ns().max(1), Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Begins `create` on a background thread unless start-up has begun;
    /// returns at once (or after creating inline, if no thread can be spawned).
    pub(super) fn start(&'static self, create: fn() -> T) {
        if self.value.get().is_some() {
            return;
        }
        // Relaxed: the swap only elects the one caller that spawns; the value is
        // published through the `OnceLock`, which orders it for readers.
        if self.started.swap(true, Ordering::Relaxed) {
            return;
        }
        // `try_with`: called from another thread-local's destructor, this thread
        // is ending anyway; it then simply does not wait.
        let _ = WAIT_ON_EXIT.try_with(|guard| guard.0.set(Some(self)));
        self.note_begun();
        let spawned = thread::Builder::new().name(crate::platform::thread_name::GPU_START.into()).spawn(move || {
            self.get_or_run(create);
        });
        if let Err(e) = spawned {
            tracing::debug!(target: "adaptive_kernel", error = %e, "cannot spawn the GPU start-up thread; starting inline");
            self.get_or_run(create);
        }
    }

    /// The outcome: runs `create` on this thread if nothing has begun, waits
    /// for it if it is running elsewhere.
    pub(super) fn get_or_run(&'static self, create: fn() -> T) -> &'static T {
        if let Some(value) = self.value.get() {
            return value;
        }
        self.started.store(true, Ordering::Relaxed);
        let value = self.value.get_or_init(|| {
            self.note_begun();
            let delay = self.delay_ns.load(Ordering::Relaxed);
            if delay > 0 {
                thread::sleep(Duration::from_nanos(delay));
            }
            create()
        });
        *self.finished.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.finished_changed.notify_all();
        value
    }

    /// Blocks until start-up has finished or `timeout` passes; returns at
    /// once when it has finished or not begun.
    pub(super) fn wait(&self, timeout: Duration) {
        if self.value.get().is_some() || !self.has_begun() {
            return;
        }
        let finished = self.finished.lock().unwrap_or_else(PoisonError::into_inner);
        let waited = self.finished_changed.wait_timeout_while(finished, timeout, |finished| !*finished);
        drop(waited.unwrap_or_else(PoisonError::into_inner));
    }

    /// Makes creation sleep `delay` first; affects only a start-up that has not begun.
    pub(super) fn delay_for_tests(&self, delay: Duration) {
        let nanos = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
        self.delay_ns.store(nanos, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn slow() -> u32 {
        thread::sleep(Duration::from_millis(50));
        7
    }

    #[test]
    fn starts_in_the_background_and_waits_with_a_limit() {
        static CELL: Startup<u32> = Startup::new();
        assert!(!CELL.has_begun() && CELL.get().is_none());
        CELL.wait(Duration::from_secs(1)); // not begun: returns at once
        let began = Instant::now();
        CELL.start(slow);
        CELL.start(slow);
        assert!(began.elapsed() < Duration::from_millis(40), "start blocked");
        assert!(CELL.has_begun());
        assert_eq!(CELL.get(), None);
        CELL.wait(Duration::from_millis(1));
        assert_eq!(CELL.get(), None, "a short wait ends before creation");
        CELL.wait(Duration::from_secs(5));
        assert_eq!(CELL.get(), Some(&7));
        assert_eq!(CELL.get_or_run(|| unreachable!("created twice")), &7);
    }

    #[test]
    fn creation_runs_once_when_a_blocking_caller_races_the_thread() {
        static CELL: Startup<u32> = Startup::new();
        static CREATED: AtomicU64 = AtomicU64::new(0);
        fn counted() -> u32 {
            CREATED.fetch_add(1, Ordering::Relaxed);
            slow()
        }
        CELL.delay_for_tests(Duration::from_millis(20));
        CELL.start(counted);
        assert_eq!(CELL.get_or_run(counted), &7);
        assert_eq!(CREATED.load(Ordering::Relaxed), 1);
    }
}
