//! What the target can do that the runtime otherwise takes for granted, in one
//! place, so a target without it changes behaviour here and not in a fork of
//! the code that needs it.
//!
//! WebAssembly (`wasm32-unknown-unknown` in browsers and Node, `wasm32-wasip1`)
//! runs one thread: `std::thread::spawn` fails there and blocking waits
//! (`Condvar::wait`, `thread::sleep`) panic on `wasm32-unknown-unknown`. So on
//! WebAssembly the work native builds hand to background threads runs inline or
//! not at all:
//!
//! - the CPU calibration of the cost model does not run (it would stall a
//!   routed call, and a browser's clock is too coarse for its probes): the
//!   router prunes by its own measurements only (see `cost::global`);
//! - the history saver starts no thread: with a history file configured (WASI),
//!   [`crate::flush`] saves; the learned tables of a page travel as a JSON
//!   string instead ([`crate::export_learned`], [`crate::import_learned`]);
//! - the Parallel backend has one thread, so the router never offers it;
//! - the GPU is absent (see [`crate::ops::gpu`]): WebGPU is asynchronous in a
//!   browser and a synchronous kernel call cannot wait for it.

/// Whether this target can start threads (`std::thread::spawn`) and block on them.
pub(crate) const THREADS: bool = !cfg!(target_family = "wasm");

/// Whether this target has a user cache directory to keep a history file in by default.
pub(crate) const DEFAULT_HISTORY_FILE: bool = !cfg!(target_family = "wasm");

/// How much one-time background work lowers its priority (Linux nice; see [`spawn_background`]).
#[cfg(target_os = "linux")]
const BACKGROUND_NICE: libc::c_int = 10;

/// Starts `work` on a new thread named `name`, for work no call waits for and that
/// measures nothing (saving history), at a lower scheduling priority
/// where the system has one per thread: on Linux the thread adds 10 to its own nice
/// value first (at most 19), so on a machine with few cores it takes the CPU time the
/// program's own threads leave over rather than preempting a routed call. Threads it
/// starts inherit the value. Elsewhere (and if the change is refused) the thread runs
/// at the caller's priority.
///
/// # Errors
/// The error of [`std::thread::Builder::spawn`]: no thread could be started (always on
/// a target without threads, see [`THREADS`]).
pub(crate) fn spawn_background(name: &str, work: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new().name(name.to_owned()).spawn(move || {
        lower_this_threads_priority();
        work();
    })?;
    Ok(())
}

/// Starts `work` on a new thread named `name`, at the caller's priority, for a
/// measurement no call waits for (the cost model's calibration and GPU probes). Not
/// lowered like [`spawn_background`]: at a lower priority a probe measures what the
/// other threads leave over (on the benchmark VM, while the GPU driver loaded, SIMD's
/// matmul probe once came out 20× slower than Scalar's), and wrong figures outlive
/// the moment (they prune exploration and are saved with the history).
///
/// # Errors
/// As [`spawn_background`].
pub(crate) fn spawn_measurement(name: &str, work: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new().name(name.to_owned()).spawn(work)?;
    Ok(())
}

#[cfg(target_os = "linux")]
fn lower_this_threads_priority() {
    // SAFETY: `gettid` has no preconditions; `getpriority`/`setpriority` on this
    // thread's own id read and change only its nice value (Linux keeps one per
    // thread) and touch no memory of ours.
    let changed = unsafe {
        let tid = libc::gettid() as libc::id_t;
        // -1 is a valid nice value, so only errno tells a failure; 0 is as good a guess then.
        let now = libc::getpriority(libc::PRIO_PROCESS, tid).clamp(-20, 19);
        libc::setpriority(libc::PRIO_PROCESS, tid, (now + BACKGROUND_NICE).min(19))
    };
    if changed != 0 {
        tracing::debug!(target: "adaptive_kernel", error = %std::io::Error::last_os_error(),
            "cannot lower a background thread's priority; it runs at the caller's");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_this_threads_priority() {}
