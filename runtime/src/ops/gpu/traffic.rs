//! What the GPU backend moves between host and device, counted in bytes, and
//! how many submissions it makes: for the process ([`traffic`]) and for the
//! calling thread ([`thread_traffic`], what a routed call attributes to its
//! kernel and size bucket: `kernel::transfers`).
//!
//! Counted: every slice uploaded to the device (an op's inputs, a generated
//! loop's slices, a [`Resident`](crate::resident::Resident) handle's data), and
//! every byte read back (results, written slices, a generated loop's status word
//! and reduction results, a handle's data downloaded for the host). Not
//! counted: the parameters of each dispatch (a uniform block of at most 1 KiB),
//! and copies from one device buffer to another, which do not cross the bus.

use std::cell::Cell;
use std::ops::Sub;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes moved each way and submissions made, since some starting point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes copied from host memory to the device.
    pub bytes_up: u64,
    /// Bytes copied from the device to host memory.
    pub bytes_down: u64,
    /// Command submissions to the device's queue (one per op call, one per group of a
    /// GPU variant's loops, one per download of a resident handle).
    pub submissions: u64,
}

impl Traffic {
    /// Whether nothing was moved or submitted.
    pub fn is_empty(&self) -> bool {
        *self == Traffic::default()
    }

    /// Bytes moved both ways.
    pub fn bytes(&self) -> u64 {
        self.bytes_up.saturating_add(self.bytes_down)
    }
}

impl Sub for Traffic {
    type Output = Traffic;

    /// What was added between `rhs` (earlier) and `self` (later).
    fn sub(self, rhs: Traffic) -> Traffic {
        Traffic {
            bytes_up: self.bytes_up.saturating_sub(rhs.bytes_up),
            bytes_down: self.bytes_down.saturating_sub(rhs.bytes_down),
            submissions: self.submissions.saturating_sub(rhs.submissions),
        }
    }
}

static UP: AtomicU64 = AtomicU64::new(0);
static DOWN: AtomicU64 = AtomicU64::new(0);
static SUBMISSIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static THREAD: Cell<Traffic> = const { Cell::new(Traffic { bytes_up: 0, bytes_down: 0, submissions: 0 }) };
}

/// Everything the GPU backend has moved and submitted in this process so far, on
/// every thread. Take it before and after some work and subtract
/// (`traffic() - before`) to see what that work moved.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::ops::gpu;
/// let before = gpu::traffic();
/// let _ = gpu::add(&[1.0, 2.0], &[3.0, 4.0]); // on the device when there is one
/// let moved = gpu::traffic() - before;
/// assert!(moved.bytes_up == 16 || moved.is_empty()); // two 8-byte inputs, or no device
/// ```
pub fn traffic() -> Traffic {
    // Relaxed: counters, read for reports; no other memory depends on them.
    Traffic {
        bytes_up: UP.load(Ordering::Relaxed),
        bytes_down: DOWN.load(Ordering::Relaxed),
        submissions: SUBMISSIONS.load(Ordering::Relaxed),
    }
}

/// What the calling thread has moved and submitted so far (the process's
/// [`traffic`], restricted to this thread's calls).
pub fn thread_traffic() -> Traffic {
    THREAD.with(Cell::get)
}

fn add(f: impl FnOnce(&mut Traffic)) {
    THREAD.with(|t| {
        let mut v = t.get();
        f(&mut v);
        t.set(v);
    });
}

/// Counts `bytes` copied to the device.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) fn up(bytes: u64) {
    UP.fetch_add(bytes, Ordering::Relaxed);
    add(|t| t.bytes_up += bytes);
}

/// Counts `bytes` read back from the device.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) fn down(bytes: u64) {
    DOWN.fetch_add(bytes, Ordering::Relaxed);
    add(|t| t.bytes_down += bytes);
}

/// Counts one submission.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) fn submission() {
    SUBMISSIONS.fetch_add(1, Ordering::Relaxed);
    add(|t| t.submissions += 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_and_the_process_count_the_same_calls() {
        let (p, t) = (traffic(), thread_traffic());
        up(12);
        down(4);
        submission();
        let moved = thread_traffic() - t;
        assert_eq!(moved, Traffic { bytes_up: 12, bytes_down: 4, submissions: 1 });
        assert_eq!(moved.bytes(), 16);
        let all = traffic() - p;
        assert!(all.bytes_up >= 12 && all.bytes_down >= 4 && all.submissions >= 1);
        assert!(Traffic::default().is_empty() && !moved.is_empty());
    }
}
