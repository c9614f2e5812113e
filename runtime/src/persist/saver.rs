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

use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use super::store;
use crate::platform;

/// How long after a change the background save waits for more to accumulate.
const DEBOUNCE: Duration = Duration::from_millis(200);

struct Saver {
    dirty: Mutex<bool>,
    wake: Condvar,
}

static SAVER: Saver = Saver { dirty: Mutex::new(false), wake: Condvar::new() };

/// Notes that something worth saving changed; a background thread saves after a short debounce.
pub(crate) fn note_changed() {
    if !platform::THREADS || !store::can_save() {
        return;
    }
    *SAVER.dirty.lock().unwrap_or_else(PoisonError::into_inner) = true;
    static THREAD: OnceLock<()> = OnceLock::new();
    THREAD.get_or_init(|| {
        let spawned = platform::spawn_background("adaptive-kernel-history", run);
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
        // Cleared just before saving: a change made during the save marks it dirty again.
        *SAVER.dirty.lock().unwrap_or_else(PoisonError::into_inner) = false;
        match store::flush() {
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
