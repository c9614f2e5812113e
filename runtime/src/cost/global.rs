//! The process-wide model the router consults. Its CPU figures are measured on a
//! background thread started by the first use (unless they were installed or
//! loaded from history), and its GPU figures on another once a kernel with a GPU
//! variant found the GPU ready ([`gpu_wanted`]), so no routed call waits for
//! calibration, GPU start-up or GPU probes, and a program whose kernels have no
//! GPU variant never runs GPU probes (nor starts the GPU: the model only reads
//! whether it is ready). Until the
//! CPU figures arrive the model is [`CostParams::conservative`] (the router then
//! routes by the MoE table and its own measurements, and prunes nothing by
//! prediction); until the GPU figures arrive the GPU is predicted unavailable.
//! On a target without threads (WebAssembly) the CPU figures are not measured
//! at all: the only thread is the caller's, whose routed call must not stall for
//! a calibration, and a browser's coarse clock (100 µs) cannot time its
//! sub-millisecond probes anyway. The model stays conservative there unless
//! figures are installed ([`install_global`]) or imported with learned tables,
//! so the router prunes by its own measurements only.
//!
//! The Parallel terms (the pool's threads, one fork–join) are measured only once a
//! kernel with a Parallel variant is routed ([`parallel_wanted`]): measuring them starts
//! the pool's threads, which a program whose kernels are all `serial` (a real-time
//! callback) must never see. Until then the model has one thread and a conservative
//! fork–join, which predicts Parallel never to pay (and nothing asks). Figures loaded
//! from history with one thread (saved by such a program) have their Parallel terms
//! measured the same way; those with more are used as they are.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};

use super::calibrate;
use super::model::{CostModel, CostParams};
use crate::clock::Instant;
use crate::{ops, platform};

/// The model before GPU figures: installed, loaded, or CPU-calibrated.
static BASE: OnceLock<CostModel> = OnceLock::new();
/// The model with GPU figures, once measured.
static WITH_GPU: OnceLock<CostModel> = OnceLock::new();
/// Set by [`install_global`]: the figures are used as they are, never re-measured.
static FIXED: AtomicBool = AtomicBool::new(false);
/// The CPU calibration, started by the first [`global`] call that finds no figures.
static CPU_CALIBRATION: Background = Background::new();
static GPU_PROBES: Once = Once::new();
/// Set by [`gpu_wanted`]: a kernel with a GPU variant found the GPU ready.
static GPU_WANTED: AtomicBool = AtomicBool::new(false);
/// Set by [`parallel_wanted`]: a kernel with a Parallel variant offered it.
static PARALLEL_WANTED: AtomicBool = AtomicBool::new(false);
/// The Parallel terms measured after the CPU figures: the pool's threads, a fork–join's seconds.
static PARALLEL: OnceLock<(f64, f64)> = OnceLock::new();
static PARALLEL_PROBES: Once = Once::new();

/// The process-wide model: the figures [`install_global`] put there; else figures
/// loaded from history or measured on this machine. The first call that finds
/// none starts the CPU calibration on a background thread and, like every call
/// until it is done, gets [`CostParams::conservative`]. GPU figures are added by
/// another background thread once a kernel with a GPU variant found the GPU ready
/// (see the module docs). Never waits.
pub fn global() -> CostModel {
    measured().unwrap_or_else(|| CostModel::from_params(CostParams::conservative()))
}

/// The process-wide model if its CPU figures were measured, loaded or installed;
/// else `None`, and the CPU calibration is started in the background (see [`global`]).
/// Once GPU figures are wanted ([`gpu_wanted`]) and the CPU figures exist, starts the
/// GPU probes in the background (once).
pub(crate) fn measured() -> Option<CostModel> {
    let model = match WITH_GPU.get() {
        Some(model) => *model,
        None => {
            let base = CPU_CALIBRATION.get_or_start(&BASE, calibrate_cpu)?;
            let fixed = FIXED.load(Ordering::Relaxed);
            let probe = GPU_WANTED.load(Ordering::Relaxed) && !base.params().gpu_available && !fixed;
            // `is_ready` never starts the GPU: only a kernel with a GPU variant does that.
            if probe && ops::gpu::is_ready() {
                GPU_PROBES.call_once(|| spawn_gpu_probes(base.params()));
            }
            base
        }
    };
    let lacks_parallel = model.params().parallel_threads <= 1.0 && !FIXED.load(Ordering::Relaxed);
    if lacks_parallel && PARALLEL_WANTED.load(Ordering::Relaxed) {
        PARALLEL_PROBES.call_once(spawn_parallel_probes);
    }
    Some(with_parallel(model))
}

/// `model` with the Parallel terms measured after it, when it has none of its own.
fn with_parallel(model: CostModel) -> CostModel {
    match PARALLEL.get() {
        Some(&(parallel_threads, fork_join_latency)) if model.params().parallel_threads <= 1.0 => {
            CostModel::from_params(CostParams { parallel_threads, fork_join_latency, ..model.params() })
        }
        _ => model,
    }
}

/// Says that a kernel with a Parallel variant offers it: the model's Parallel terms are
/// measured on a background thread (once) unless its figures have them (see the module docs).
pub(crate) fn parallel_wanted() {
    if !PARALLEL_WANTED.swap(true, Ordering::Relaxed) {
        let _ = measured();
    }
}

/// Says that a kernel with a GPU variant found the GPU ready: the model's GPU
/// figures are measured on a background thread once its CPU figures exist (now, or
/// on the next [`measured`]), unless installed or loaded figures already have them.
pub(crate) fn gpu_wanted() {
    if !GPU_WANTED.swap(true, Ordering::Relaxed) {
        let _ = measured();
    }
}

/// [`calibrated`], after waiting up to `timeout` for a calibration running in the
/// background (for a save about to be written; never on a routed call).
pub(crate) fn calibrated_within(timeout: std::time::Duration) -> Option<CostParams> {
    let started = Instant::now();
    // Without threads a calibration runs inline and is done before anything can wait for it.
    while platform::THREADS && CPU_CALIBRATION.started() && BASE.get().is_none() && started.elapsed() < timeout {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    calibrated()
}

/// Makes `params` the process-wide model, used as it is (no calibration, no GPU
/// probes): for reproducible routing, or figures measured elsewhere. Returns
/// false, changing nothing, when the model was already set by an earlier install
/// or by loaded history, or a first [`global`] call already started calibrating.
/// Invalid figures are replaced as in [`CostModel::from_params`].
pub fn install_global(params: CostParams) -> bool {
    let installed = !CPU_CALIBRATION.started() && install_in(&BASE, params);
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
    WITH_GPU.get().or_else(|| BASE.get()).map(|model| with_parallel(*model).params())
}

fn calibrate_cpu() -> CostModel {
    let started = Instant::now();
    let model = CostModel::from_params(calibrate::cpu(PARALLEL_WANTED.load(Ordering::Relaxed)));
    calibrate::log(&model, started, "calibrated the CPU figures of the cost model");
    model
}

/// A model measured once on a background thread, started by the first caller that needs it.
struct Background {
    started: AtomicBool,
}

impl Background {
    const fn new() -> Background {
        Background { started: AtomicBool::new(false) }
    }

    /// Whether [`get_or_start`](Self::get_or_start) ever started a measurement.
    fn started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    /// The model in `cell`; if there is none yet, starts `measure` on a background
    /// thread (once; it fills `cell` unless something else did first) and returns
    /// `None` without waiting. Where no thread can be started, measures on this one;
    /// on a target without threads (WebAssembly) it never measures and returns `None`.
    fn get_or_start(&self, cell: &'static OnceLock<CostModel>, measure: fn() -> CostModel) -> Option<CostModel> {
        if let Some(model) = cell.get() {
            return Some(*model);
        }
        if !platform::THREADS {
            // Nothing to measure on but a routed call, which must not stall for it.
            return None;
        }
        if self.started.swap(true, Ordering::AcqRel) {
            return None;
        }
        let spawned = platform::spawn_measurement(platform::thread_name::CALIBRATION, move || {
            let _ = cell.set(measure());
        });
        match spawned {
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(target: "adaptive_kernel", "cannot start the calibration thread ({e}); calibrating on the calling thread");
                Some(*cell.get_or_init(measure))
            }
        }
    }
}

fn spawn_gpu_probes(base: CostParams) {
    let run = move || {
        let started = Instant::now();
        let model = CostModel::from_params(calibrate::with_gpu(base));
        calibrate::log(&model, started, "calibrated the GPU figures of the cost model");
        let _ = WITH_GPU.set(model);
    };
    if let Err(e) = platform::spawn_measurement(platform::thread_name::GPU_PROBES, run) {
        tracing::warn!(target: "adaptive_kernel", "cannot start the GPU calibration thread ({e}); the GPU stays unpredicted");
    }
}

fn spawn_parallel_probes() {
    let run = || {
        let started = Instant::now();
        let figures = calibrate::parallel();
        tracing::debug!(target: "adaptive_kernel", parallel_threads = figures.0, fork_join_latency = figures.1,
            elapsed_ms = started.elapsed().as_secs_f64() * 1e3, "calibrated the Parallel figures of the cost model");
        let _ = PARALLEL.set(figures);
    };
    if let Err(e) = platform::spawn_measurement(platform::thread_name::CALIBRATION, run) {
        tracing::warn!(target: "adaptive_kernel", "cannot start the Parallel calibration thread ({e}); Parallel stays unpredicted");
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

    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    static RELEASE: AtomicBool = AtomicBool::new(false);
    static MEASURED: AtomicUsize = AtomicUsize::new(0);

    /// A slow calibration: waits until the test releases it (at most 10 s).
    fn held_calibration() -> CostModel {
        let started = Instant::now();
        while !RELEASE.load(Ordering::Acquire) && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        MEASURED.fetch_add(1, Ordering::Relaxed);
        CostModel::from_params(super::super::model::TEST_FIGURES)
    }

    #[test]
    fn calibration_runs_in_the_background_and_callers_never_wait_for_it() {
        static CELL: OnceLock<CostModel> = OnceLock::new();
        static CALIBRATION: Background = Background::new();
        // The calibration cannot finish before RELEASE, so a caller that got an answer did not wait.
        assert_eq!(CALIBRATION.get_or_start(&CELL, held_calibration), None, "the first caller does not wait");
        assert!(CALIBRATION.started());
        assert_eq!(CALIBRATION.get_or_start(&CELL, held_calibration), None, "nor does the next");
        RELEASE.store(true, Ordering::Release);
        let started = Instant::now();
        let model = loop {
            if let Some(m) = CALIBRATION.get_or_start(&CELL, held_calibration) {
                break m;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "the background calibration never finished");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(model.params(), super::super::model::TEST_FIGURES);
        assert_eq!(MEASURED.load(Ordering::Relaxed), 1, "measured once however many callers asked");
    }

    #[test]
    fn a_cell_takes_figures_once() {
        let params = super::super::model::TEST_FIGURES;
        let cell = OnceLock::new();
        assert!(install_in(&cell, params));
        assert!(!install_in(&cell, CostParams::conservative()), "too late to install");
        assert_eq!(cell.get().map(CostModel::params), Some(params));
    }
}
