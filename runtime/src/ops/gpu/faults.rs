//! Faults a test can inject into the GPU backend, to exercise the paths a real
//! machine takes when its GPU is missing or fails: the backend itself takes
//! them (start-up finds no adapter, the device is destroyed, a buffer
//! allocation fails), so what the router and the ops do next is the real code.

use std::sync::atomic::{AtomicBool, Ordering};

/// A GPU fault to inject ([`super::__inject_fault_for_tests`]). Not part of the API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GpuFault {
    /// Start-up finds no adapter. Takes effect only before start-up begins.
    NoAdapter,
    /// The device is lost, as in a driver reset (the device is destroyed now).
    DeviceLost,
    /// The next buffer allocation fails as out of memory.
    OutOfMemory,
}

static NO_ADAPTER: AtomicBool = AtomicBool::new(false);
static OUT_OF_MEMORY: AtomicBool = AtomicBool::new(false);

/// Arms `fault`; [`GpuFault::DeviceLost`] is applied by the caller (it needs the device).
pub(super) fn arm(fault: GpuFault) {
    match fault {
        GpuFault::NoAdapter => NO_ADAPTER.store(true, Ordering::Relaxed),
        GpuFault::OutOfMemory => OUT_OF_MEMORY.store(true, Ordering::Relaxed),
        GpuFault::DeviceLost => {}
    }
}

/// Whether start-up must pretend to find no adapter.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(super) fn no_adapter() -> bool {
    NO_ADAPTER.load(Ordering::Relaxed)
}

/// Whether this allocation must fail (consumes the armed fault).
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(super) fn take_out_of_memory() -> bool {
    OUT_OF_MEMORY.swap(false, Ordering::Relaxed)
}
