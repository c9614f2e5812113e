//! What each kernel's calls moved between host and device, per size bucket
//! ([`TransferReport`], in [`KernelTable`](super::KernelTable) rows), and the
//! one warning per kernel whose GPU calls move more than they compute.
//!
//! Generated code runs each GPU call of a kernel, and each call of its
//! `k::resident` entry, through `Kernel::traffic_of`: the calling thread's traffic
//! ([`crate::ops::gpu::thread_traffic`]) before and after is the call's. The
//! time spent moving data is estimated from the bytes and the transfer
//! bandwidth the cost model measured on this machine (`ops::gpu::add` of 2²⁰
//! elements, net of its fixed cost): a GPU without timestamp queries cannot say
//! how long its copies took, and every GPU wgpu drives need not have them. A GPU
//! call whose estimated moving time is more than half of the call's measured
//! time moves more than it computes: said once per kernel (`tracing` warning,
//! target `adaptive_kernel`), as numba warns of an implicit copy, but measured.
//! A bucket's first GPU call is not judged: it compiles pipelines and uploads
//! the data a `k::resident` call then keeps on the device.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::bucket::bucket_of;
use crate::ops::gpu::Traffic;

/// What one kernel's calls in one size bucket moved between host and device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransferReport {
    /// Calls on the GPU.
    pub gpu_calls: u64,
    /// Calls on a CPU variant that first downloaded data kept on the device.
    pub cpu_calls: u64,
    /// Submissions to the device's queue, in all those calls.
    pub submissions: u64,
    /// Bytes copied from host memory to the device.
    pub bytes_up: u64,
    /// Bytes copied from the device to host memory.
    pub bytes_down: u64,
    /// The GPU calls' measured time, transfers included.
    pub gpu_time: Duration,
    /// The share of that time estimated to be moving data (bytes over the transfer
    /// bandwidth the cost model measured), as a duration.
    pub moving: Duration,
}

impl TransferReport {
    /// The share of the GPU calls' time spent moving data, 0 to 1 (`None` without a GPU call).
    pub fn moving_share(&self) -> Option<f64> {
        let total = self.gpu_time.as_secs_f64();
        (self.gpu_calls > 0 && total > 0.0).then(|| (self.moving.as_secs_f64() / total).min(1.0))
    }

    /// Submissions per call (GPU and CPU calls together).
    pub fn submissions_per_call(&self) -> f64 {
        let calls = self.gpu_calls + self.cpu_calls;
        if calls == 0 {
            0.0
        } else {
            self.submissions as f64 / calls as f64
        }
    }

    fn add(&mut self, other: &TransferReport) {
        self.gpu_calls += other.gpu_calls;
        self.cpu_calls += other.cpu_calls;
        self.submissions += other.submissions;
        self.bytes_up += other.bytes_up;
        self.bytes_down += other.bytes_down;
        self.gpu_time += other.gpu_time;
        self.moving += other.moving;
    }
}

/// A kernel as the ledger knows it: its address (what tells two kernels apart) and its name.
#[derive(Clone, Copy, Debug)]
pub(super) struct KernelId {
    pub(super) addr: usize,
    pub(super) name: &'static str,
}

/// Per kernel (by address), its buckets' reports and whether it was warned about.
struct Entry {
    kernel: usize,
    buckets: BTreeMap<usize, TransferReport>,
    warned: bool,
}

static TABLE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// Records one call of `kernel` of `size` that moved `moved`; `gpu_time`: its time when it
/// ran on the GPU.
#[cold]
#[inline(never)]
pub(super) fn record(kernel: KernelId, size: usize, moved: Traffic, gpu_time: Option<Duration>) {
    let bandwidth = crate::cost::global().params().transfer_bandwidth;
    let moving = Duration::from_secs_f64(moved.bytes() as f64 / bandwidth.max(1.0));
    let report = TransferReport {
        gpu_calls: u64::from(gpu_time.is_some()),
        cpu_calls: u64::from(gpu_time.is_none()),
        submissions: moved.submissions,
        bytes_up: moved.bytes_up,
        bytes_down: moved.bytes_down,
        gpu_time: gpu_time.unwrap_or_default(),
        moving: if gpu_time.is_some() { moving } else { Duration::ZERO },
    };
    let warn = {
        let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
        let at = match table.iter().position(|e| e.kernel == kernel.addr) {
            Some(at) => at,
            None => {
                table.push(Entry { kernel: kernel.addr, buckets: BTreeMap::new(), warned: false });
                table.len() - 1
            }
        };
        let entry = &mut table[at];
        let row = entry.buckets.entry(bucket_of(size)).or_default();
        row.add(&report);
        // A bucket's first GPU call is a warm-up (pipelines compiled, resident data uploaded):
        // not judged.
        let more_than_computed = row.gpu_calls > 1 && gpu_time.is_some_and(|t| moving * 2 > t);
        more_than_computed && !std::mem::replace(&mut entry.warned, true)
    };
    if warn {
        let call = gpu_time.unwrap_or_default();
        tracing::warn!(
            target: "adaptive_kernel",
            kernel = kernel.name,
            size,
            bytes_up = moved.bytes_up,
            bytes_down = moved.bytes_down,
            moving_us = moving.as_secs_f64() * 1e6,
            call_us = call.as_secs_f64() * 1e6,
            "a GPU call moved more data than it computed (its transfers took about {:.0}% of it): keep the data on \
             the device between calls (`Resident` handles through the kernel's `resident` entry), or let the router \
             choose a CPU variant",
            100.0 * (moving.as_secs_f64() / call.as_secs_f64().max(1e-12)).min(1.0),
        );
    }
}

/// `kernel`'s transfer reports by bucket (empty if it never moved data).
pub(super) fn of(kernel: KernelId) -> BTreeMap<usize, TransferReport> {
    let table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    table.iter().find(|e| e.kernel == kernel.addr).map(|e| e.buckets.clone()).unwrap_or_default()
}

/// Forgets `kernel`'s transfer reports (and whether it was warned about).
pub(super) fn forget(kernel: KernelId) {
    let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    table.retain(|e| e.kernel != kernel.addr);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_is_of_the_gpu_calls_time() {
        let r = TransferReport {
            gpu_calls: 2,
            cpu_calls: 2,
            submissions: 2,
            gpu_time: Duration::from_millis(10),
            moving: Duration::from_millis(4),
            ..TransferReport::default()
        };
        assert_eq!(r.moving_share(), Some(0.4));
        assert_eq!(r.submissions_per_call(), 0.5);
        assert_eq!(TransferReport::default().moving_share(), None);
    }
}
