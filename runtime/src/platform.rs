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
//! - there is no default history file (no user cache directory);
//! - the history saver starts no thread: with a history file configured (WASI),
//!   [`crate::flush`] saves; the learned tables of a page travel as a JSON
//!   string instead ([`crate::export_learned`], [`crate::import_learned`]);
//! - the Parallel backend has one thread, so the router never offers it;
//! - the GPU is absent (see [`crate::ops::gpu`]): WebGPU is asynchronous in a
//!   browser and a synchronous kernel call cannot wait for it.
//!
//! Also here: the names of the threads the runtime starts ([`thread_name`]),
//! and the work it does when the process exits ([`at_exit`]).

/// Whether this target can start threads (`std::thread::spawn`) and block on them.
pub(crate) const THREADS: bool = !cfg!(target_family = "wasm");

/// The user's cache directory, where the history file is kept by default: the `dirs`
/// crate's answer for each platform; `None` where there is none, and always on
/// WebAssembly (a page keeps its tables with `export_learned` instead).
#[cfg(not(target_family = "wasm"))]
pub(crate) fn user_cache_dir() -> Option<std::path::PathBuf> {
    dirs::cache_dir()
}

/// WebAssembly has no user cache directory.
#[cfg(target_family = "wasm")]
pub(crate) fn user_cache_dir() -> Option<std::path::PathBuf> {
    None
}

/// The names of the threads the runtime starts, one place for all of them.
///
/// Linux keeps the first 15 bytes of a thread's name (`/proc/<pid>/task/<tid>/comm`,
/// `top -H`, `ps -T`, a debugger), so every name fits in 15 bytes and starts with `ak-`:
/// a truncated `adaptive-kernel-…` would name every thread alike. Each GPU thread has
/// `gpu` in its name, and no other thread has.
pub(crate) mod thread_name {
    /// Creates the GPU device in the background (`ops::gpu::start`); ends once it exists.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code, reason = "no GPU backend without the feature"))]
    pub(crate) const GPU_START: &str = "ak-gpu-start";
    /// Times GPU ops for the cost model's GPU figures; ends once measured.
    pub(crate) const GPU_PROBES: &str = "ak-gpu-probes";
    /// Times CPU ops for the cost model's CPU figures; ends once measured.
    pub(crate) const CALIBRATION: &str = "ak-calibrate";
    /// Saves the history file a moment after a change; lives as long as the process.
    pub(crate) const HISTORY: &str = "ak-history";
    /// The dedicated `ops::par` pool's threads (`ADAPTIVE_KERNEL_THREADS`), `ak-par-0`, `ak-par-1`, …
    pub(crate) const PAR: &str = "ak-par";
    /// An `ops::par::with_threads` scope's threads.
    pub(crate) const PAR_SCOPED: &str = "ak-scoped";

    /// Every fixed name, for the test that checks their length.
    #[cfg(test)]
    pub(super) const ALL: [&str; 6] = [GPU_START, GPU_PROBES, CALIBRATION, HISTORY, PAR, PAR_SCOPED];
}

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

/// Work to do when the process exits: one function per part of the runtime, named.
type ExitHook = (&'static str, fn());

/// The hooks [`at_exit`] registered, run once by [`run_exit_hooks`].
static EXIT_HOOKS: std::sync::Mutex<Vec<ExitHook>> = std::sync::Mutex::new(Vec::new());

/// Runs `hook` (once, under `name`: a second call with the same name keeps the first
/// hook) when the process exits through `exit` (returning from `main` included), before
/// the destructors of every shared library loaded before this call.
///
/// Those destructors run in the reverse order of their registration, interleaved with
/// `atexit` handlers, so a handler registered before a library was loaded runs after
/// that library was torn down. Hence every call registers the runtime's one handler
/// anew (a handler registered twice runs twice; [`run_exit_hooks`] does its work on the
/// first run): call it again after loading more (the GPU driver loads libraries when it
/// creates the device and when it compiles a pipeline), and the hooks run before them.
///
/// The hooks run on the exiting thread, in the reverse order of their first
/// registration, each bounded in time by its own code. Nothing is registered on a
/// system without `atexit` (anything but Unix) or where registration fails (said at
/// debug level); `_exit`, `abort` and signals never run the hooks.
pub(crate) fn at_exit(name: &'static str, hook: fn()) {
    {
        let mut hooks = EXIT_HOOKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !hooks.iter().any(|(n, _)| *n == name) {
            hooks.push((name, hook));
        }
    }
    register_exit_handler();
}

#[cfg(unix)]
fn register_exit_handler() {
    extern "C" fn handler() {
        run_exit_hooks();
    }
    // SAFETY: `atexit` only records the function pointer; `handler` is an `extern "C"`
    // function with no arguments that never unwinds (`run_exit_hooks` catches panics).
    if unsafe { libc::atexit(handler) } != 0 {
        tracing::debug!(target: "adaptive_kernel", "cannot register the runtime's exit handler");
    }
}

#[cfg(not(unix))]
fn register_exit_handler() {}

/// For an exit hook: waits up to `wait` for `lock` (held by work that must not be cut
/// short by the exit), then keeps it for the rest of the process, so that no such work
/// begins again. Returns whether it got the lock in time (a poisoned lock counts).
pub(crate) fn hold_for_exit<T>(lock: &'static std::sync::Mutex<T>, wait: std::time::Duration) -> bool {
    use std::sync::TryLockError;
    let began = std::time::Instant::now();
    loop {
        match lock.try_lock() {
            Ok(held) => {
                std::mem::forget(held);
                return true;
            }
            Err(TryLockError::Poisoned(held)) => {
                std::mem::forget(held);
                return true;
            }
            Err(TryLockError::WouldBlock) if began.elapsed() >= wait => return false,
            Err(TryLockError::WouldBlock) => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
}

/// Runs the registered hooks once, newest first; later calls do nothing. A panicking hook
/// is caught (the process is exiting; unwinding out of an `atexit` handler would abort).
#[cfg(unix)]
fn run_exit_hooks() {
    static RAN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if RAN.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let hooks = std::mem::take(&mut *EXIT_HOOKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    for (_, hook) in hooks.into_iter().rev() {
        let _ = std::panic::catch_unwind(hook);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_names_fit_what_linux_keeps() {
        for name in thread_name::ALL {
            // Pool threads get a `-<index>` suffix: room for two digits.
            let suffix = if [thread_name::PAR, thread_name::PAR_SCOPED].contains(&name) { 3 } else { 0 };
            let longest = name.len() + suffix;
            assert!(longest <= 15, "{name}: {longest} bytes");
            assert!(name.starts_with("ak-"));
            assert_eq!(name.contains("gpu"), name.starts_with("ak-gpu"), "{name}");
        }
    }
}
