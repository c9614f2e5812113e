//! The process-wide model the router consults. Its CPU figures are measured on
//! first use (a few milliseconds, on the calling thread) unless they were
//! installed or loaded from history; its GPU figures are measured on a
//! background thread once the GPU has started, so no routed call waits for GPU
//! start-up or GPU probes. Until they arrive the GPU is predicted unavailable.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};
use std::time::Instant;

use super::calibrate;
use super::model::{CostModel, CostParams};
use crate::ops;

/// The model before GPU figures: installed, loaded, or CPU-calibrated.
static BASE: OnceLock<CostModel> = OnceLock::new();
/// The model with GPU figures, once measured.
static WITH_GPU: OnceLock<CostModel> = OnceLock::new();
/// Set by [`install_global`]: the figures are used as they are, never re-measured.
static FIXED: AtomicBool = AtomicBool::new(false);
static GPU_PROBES: Once = Once::new();

/// The process-wide model: the figures [`install_global`] put there; else figures
/// loaded from history or, on first use, the CPU figures measured on this thread
/// (racing first calls measure once; the others wait). GPU figures are added by a
/// background thread once the GPU has started; this call never waits for them.
pub fn global() -> CostModel {
    if let Some(model) = WITH_GPU.get() {
        return *model;
    }
    let base = *BASE.get_or_init(calibrate_cpu);
    if !base.params().gpu_available && !FIXED.load(Ordering::Relaxed) && ops::gpu::is_ready() {
        GPU_PROBES.call_once(|| spawn_gpu_probes(base.params()));
    }
    base
}

/// Makes `params` the process-wide model, used as it is (no calibration, no GPU
/// probes): for reproducible routing, or figures measured elsewhere. Returns
/// false, changing nothing, when the model was already set by an earlier install,
/// by loaded history or by a first [`global`] call. Invalid figures are replaced
/// as in [`CostModel::from_params`].
pub fn install_global(params: CostParams) -> bool {
    let installed = install_in(&BASE, params);
    if installed {
        FIXED.store(true, Ordering::Relaxed);
    }
    installed
}

/// Seeds the model with figures saved by an earlier run; GPU figures are still
/// measured in the background when these have none and a GPU starts.
pub(crate) fn seed(params: CostParams) -> bool {
    install_in(&BASE, params)
}

/// The process-wide model's figures if they have been measured, loaded or
/// installed; `None` before first use (never calibrates). What history caches.
pub fn calibrated() -> Option<CostParams> {
    WITH_GPU.get().or_else(|| BASE.get()).map(CostModel::params)
}

fn calibrate_cpu() -> CostModel {
    let started = Instant::now();
    let model = CostModel::from_params(calibrate::cpu());
    calibrate::log(&model, started, "calibrated the CPU figures of the cost model");
    model
}

fn spawn_gpu_probes(base: CostParams) {
    let run = move || {
        let started = Instant::now();
        let model = CostModel::from_params(calibrate::with_gpu(base));
        calibrate::log(&model, started, "calibrated the GPU figures of the cost model");
        let _ = WITH_GPU.set(model);
    };
    if let Err(e) = std::thread::Builder::new().name("adaptive-kernel-gpu-probes".into()).spawn(run) {
        tracing::warn!(target: "adaptive_kernel", "cannot start the GPU calibration thread ({e}); the GPU stays unpredicted");
    }
}

fn install_in(cell: &OnceLock<CostModel>, params: CostParams) -> bool {
    let installed = cell.set(CostModel::from_params(params)).is_ok();
    if installed {
        tracing::debug!(target: "adaptive_kernel", ?params, "installed cost model figures");
    }
    installed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_takes_figures_once() {
        let params = super::super::model::TEST_FIGURES;
        let cell = OnceLock::new();
        assert!(install_in(&cell, params));
        assert!(!install_in(&cell, CostParams::conservative()), "too late to install");
        assert_eq!(cell.get().map(CostModel::params), Some(params));
    }
}
