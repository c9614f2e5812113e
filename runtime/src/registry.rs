//! Every kernel that has been called in this process, so history can be saved
//! for all of them ([`crate::flush`]) and listed ([`kernels`]).

use std::sync::{Mutex, PoisonError};

use crate::site::Kernel;

static KERNELS: Mutex<Vec<&'static Kernel>> = Mutex::new(Vec::new());

/// Adds `kernel` (called once per kernel, from its first cold-path visit).
pub(crate) fn register(kernel: &'static Kernel) {
    KERNELS.lock().unwrap_or_else(PoisonError::into_inner).push(kernel);
}

/// The kernels called so far in this process, in the order of their first call.
pub fn kernels() -> Vec<&'static Kernel> {
    KERNELS.lock().unwrap_or_else(PoisonError::into_inner).clone()
}
