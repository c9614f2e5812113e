//! The background saver: a thread that saves history a moment after something
//! worth saving changed, so no routed call ever waits for the file.
//!
//! [`note_changed`] marks the history dirty and wakes the thread (started on
//! first use); the thread waits [`DEBOUNCE`] for more changes to accumulate,
//! then saves ([`crate::flush`]). A failed save is reported once per distinct
//! error (a `tracing` warning and a line on stderr, naming the file), never
//! retried in a loop: the next change (or an explicit `flush`) tries again, and
//! learning goes on in memory meanwhile.
//!
//! A target without threads (WebAssembly) starts no saver: a history file
//! configured there (WASI) is written by [`crate::flush`] only, which the
//! program calls when it suits it, so no routed call ever waits for the file
//! there either.
//!
//! When the process exits, an exit hook ([`crate::platform::at_exit`]) stops
//! the thread from beginning another save and waits up to [`EXIT_SAVE_WAIT`]
//! for one in progress, so an exit never cuts a save short (which would
//! leave its temporary file beside the history file). Changes not yet saved
//! then are not saved: [`crate::flush`] before exiting keeps them.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use super::store;
use crate::platform;

/// How long after a change the background save waits for more to accumulate.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// The longest the exit hook waits for a save in progress.
const EXIT_SAVE_WAIT: Duration = Duration::from_secs(2);

struct Saver {
    dirty: Mutex<bool>,
    wake: Condvar,
    /// Held by the thread while it saves; the exit hook takes it and keeps it.
    saving: Mutex<()>,
    /// Set by the exit hook: no save begins any more.
    stopped: AtomicBool,
    /// Test hook: nanoseconds each save waits, holding `saving`, before it writes.
    delay_ns: AtomicU64,
    /// Test hook: a delayed save has begun.
    begun: AtomicBool,
}

static SAVER: Saver = Saver {
    dirty: Mutex::new(false),
    wake: Condvar::new(),
    saving: Mutex::new(()),
    stopped: AtomicBool::new(false),
    delay_ns: AtomicU64::new(0),
    begun: AtomicBool::new(false),
};

/// Notes that something worth saving changed; a background thread saves after a short debounce.
pub(crate) fn note_changed() {
    if !platform::THREADS || !store::can_save() {
        return;
    }
    *SAVER.dirty.lock().unwrap_or_else(PoisonError::into_inner) = true;
    static THREAD: OnceLock<()> = OnceLock::new();
    THREAD.get_or_init(|| {
        platform::at_exit("history", finish_for_exit);
        let spawned = platform::spawn_background(platform::thread_name::HISTORY, run);
        if let Err(e) = spawned {
            tracing::warn!(target: "adaptive_kernel", "cannot start the history saver thread ({e}); call adaptive_kernel::flush() to save");
        }
    });
    SAVER.wake.notify_one();
}

fn run() {
    // The last failure reported: a read-only directory fails every save the same way.
    let mut reported: Option<String> = None;
    loop {
        let mut dirty = SAVER.dirty.lock().unwrap_or_else(PoisonError::into_inner);
        while !*dirty {
            dirty = SAVER.wake.wait(dirty).unwrap_or_else(PoisonError::into_inner);
        }
        drop(dirty);
        std::thread::sleep(DEBOUNCE);
        let saving = SAVER.saving.lock().unwrap_or_else(PoisonError::into_inner);
        // Acquire: pairs with the exit hook's SeqCst store, made before it takes `saving`.
        if SAVER.stopped.load(Ordering::Acquire) {
            return;
        }
        // Cleared just before saving: a change made during the save marks it dirty again.
        *SAVER.dirty.lock().unwrap_or_else(PoisonError::into_inner) = false;
        delay_for_tests();
        let saved = store::flush();
        drop(saving);
        match saved {
            Ok(()) => reported = None,
            Err(e) => {
                let what = e.to_string();
                if reported.as_deref() != Some(what.as_str()) {
                    tracing::warn!(target: "adaptive_kernel", "saving history failed: {what}; learning goes on in memory and later saves try again");
                    crate::config::say(format_args!(
                        "saving history failed: {what}; learning goes on in memory and later saves try again"
                    ));
                    reported = Some(what);
                }
            }
        }
    }
}

/// The exit hook: no save begins from now on; waits up to [`EXIT_SAVE_WAIT`] for the
/// one in progress, then keeps the thread from saving again.
fn finish_for_exit() {
    // SeqCst: visible to the saver before this thread starts waiting for `saving`.
    SAVER.stopped.store(true, Ordering::SeqCst);
    platform::hold_for_exit(&SAVER.saving, EXIT_SAVE_WAIT);
}

/// Makes every background save wait `delay` before it writes (holding the save
/// lock), so tests can exit while a save is in progress ([`saving_for_tests`]).
pub(crate) fn delay_saves_for_tests(delay: Duration) {
    SAVER.delay_ns.store(u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// Whether a save delayed by [`delay_saves_for_tests`] has begun.
pub(crate) fn saving_for_tests() -> bool {
    SAVER.begun.load(Ordering::Relaxed)
}

fn delay_for_tests() {
    let delay = SAVER.delay_ns.load(Ordering::Relaxed);
    if delay > 0 {
        SAVER.begun.store(true, Ordering::Relaxed);
        std::thread::sleep(Duration::from_nanos(delay));
    }
}
