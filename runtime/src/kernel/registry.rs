//! Every kernel that has been called in this process, so history can be saved
//! for all of them ([`crate::flush`]) and listed ([`kernels`]).

use std::sync::{Mutex, PoisonError};

use super::site::Kernel;
use crate::persist::{self, merge::KernelSnapshot};

static KERNELS: Mutex<Vec<&'static Kernel>> = Mutex::new(Vec::new());

/// Adds `kernel` unless it is listed already (called from the cold paths of a
/// call), and makes sure saves can ask for the kernels' state.
pub(super) fn register(kernel: &'static Kernel) {
    if kernel.mark_registered() {
        persist::set_snapshot_source(snapshots);
        KERNELS.lock().unwrap_or_else(PoisonError::into_inner).push(kernel);
    }
}

/// The kernels called so far in this process, in the order of their first call.
pub fn kernels() -> Vec<&'static Kernel> {
    KERNELS.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// The kernel called so far whose name is `name`, if any: the handle of a kernel
/// the macro generated inside a method, or of one instantiation of a generic
/// kernel (`"my_crate::dot::<f32>"`). A kernel is listed from its first call on.
pub fn kernel_named(name: &str) -> Option<&'static Kernel> {
    kernels().into_iter().find(|k| k.name() == name)
}

/// Every registered kernel's state, for a save.
fn snapshots() -> Vec<KernelSnapshot> {
    kernels().into_iter().map(Kernel::snapshot).collect()
}
