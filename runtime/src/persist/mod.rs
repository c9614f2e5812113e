//! Persistence ("wisdom"): learned timings saved as versioned JSON and loaded on
//! first use, so a second run of a program starts settled.
//!
//! # The file
//! The path chosen in code ([`crate::config::Settings::history`],
//! [`set_history`]) or in `ADAPTIVE_KERNEL_HISTORY`, or nothing when that is
//! `off` ([`history_status`] is then [`HistoryStatus::Off`]); by default
//! `adaptive-kernel/history.json` in the platform's user cache directory
//! ([`default_path`], from the `dirs` crate: `$XDG_CACHE_HOME` or `~/.cache` on
//! Linux (the home directory from `HOME`, else the user database),
//! `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows), and no
//! history at all where there is none ([`HistoryStatus::NoLocation`]). One file
//! holds an entry per machine and build, keyed by [`Fingerprint::key`]: the CPU
//! model, its SIMD features, the crate version and whether it is a debug build
//! ([`BuildProfile`]: a debug build's timings never decide a release build's calls).
//! The GPU adapter is recorded in the entry but is not part of the key (it is
//! known only once the GPU has started in the background; `fingerprint` says
//! why). Inside an entry, per kernel name, the macro's token hash and the
//! per-bucket statistics. A kernel whose token hash or complexity differs from
//! the saved one (it was edited) starts fresh; other machines' and other kernels'
//! entries are carried along untouched.
//!
//! # Another machine's entry
//! Where this machine's entry has no decision for a kernel's size (no entry at
//! all, or one without that kernel or bucket), the kernel starts from the
//! *nearest* other entry holding its current version (`nearest`: same CPU model
//! and features, then same features, then same GPU adapter; nothing looser, and
//! never across architectures). [`history_status`] says
//! [`HistoryStatus::Nearest`] when this machine had no entry. Those decisions are
//! a prior the router confirms before trusting (re-timed against the
//! alternatives the other machine found close), marked in the kernel's table
//! until confirmed, and never saved as this machine's: a save writes only what
//! this process confirmed or measured (the kernel layer's snapshot leaves the
//! rest out). The cost model's figures are never borrowed.
//!
//! # Saving
//! Off the hot path: when a decision changes, a background thread (`saver`)
//! saves after a short debounce; [`flush`] saves at once. Nothing is saved when
//! the process exits, so a program that may end within the debounce of its last
//! decision (a short run, a test, a benchmark) calls [`flush`] before it does. The kernel layer hands
//! snapshots in (it registers a snapshot source once): this layer never sees a
//! live kernel. The file's records are its own (`format`, version 2; version-1
//! files are read and converted), the merge is a pure function (`merge`), and
//! `store` holds the open file and saves. A save takes an advisory lock on
//! `<file>.lock`, re-reads the file, merges (buckets this process measured
//! replace the file's, all else is kept), writes a temporary file beside it and
//! renames it over, so readers never see a half-written file and two processes
//! sharing a file do not lose each other's kernels. A symlink in the file's place
//! is followed: the lock, the temporary file and the rename are beside its target,
//! so a linked file is updated in place and the link is kept. A save never writes
//! more than the loader reads (16 MiB): past that it drops other machines'
//! entries first, then kernels this process did not run (`trim`), and says so.
//!
//! In frozen mode ([`crate::config::Mode::Frozen`]) the file is read and never
//! written: no save, no lock file, no background saver.
//!
//! # Reading and editing a file
//! [`read_history`], [`clear_history`], [`save_calibration`], [`export_history`]
//! and [`import_history`] (a pure merge, `merge::merge_import`) work on a file by
//! its path, for tools (the `adaptive-kernel` binary): a bad file is an error
//! there and is left untouched; writers take the same lock as saves. The records
//! they hand out ([`HistoryFile`] and the types it holds) serialize to exactly
//! the file's JSON. [`history_status`] says what this process found at start-up.
//!
//! # Without a file
//! [`export_learned`] and [`import_learned`] hand the learned tables over as a
//! JSON string (a history file's JSON) and take them back, in memory: for a web
//! page, which keeps them in `localStorage` (WebAssembly has no history file by
//! default), or any program that stores them its own way. `memory` holds them.
//!
//! # Bad files
//! Reported once (a `tracing` warning and a line on stderr) and never fatal:
//! - a truncated or corrupt file of ours is ignored and, at the next save, moved
//!   aside to `<file>.corrupt` before a fresh one is written;
//! - a file that is not ours (foreign JSON, any other content, a symlink to such
//!   a file), larger than 16 MiB, written by a newer format version, unreadable,
//!   or not a regular file (a directory, a FIFO) is ignored and never
//!   overwritten: persistence is off for the process;
//! - a save that fails (a read-only directory, a full disk) is reported once per
//!   distinct error; learning goes on in memory and later saves try again.

mod edit;
mod fingerprint;
pub(crate) mod format;
mod memory;
pub(crate) mod merge;
mod nearest;
mod saver;
mod store;
mod trim;

pub use edit::{clear_history, export_history, import_history, read_history, save_calibration};
pub use fingerprint::{BuildProfile, Fingerprint};
pub use format::{
    BucketRecord, ExclusionRecord, GpuLoopRecord, HistoryFile, KernelRecord, LoopRecord, MachineRecord, SplitRecord,
    TimingRecord, TransferRecord,
};
pub use memory::{export_learned, import_learned, ImportError, LearnedImport};
pub use merge::ImportSummary;
pub use nearest::{NearestEntry, NearestRule};
pub(crate) use saver::note_changed;

/// Makes every background save wait `delay` before it writes, so tests can exit
/// while one is in progress. Not part of the API.
#[doc(hidden)]
pub fn __delay_saves_for_tests(delay: std::time::Duration) {
    saver::delay_saves_for_tests(delay);
}

/// Whether a background save delayed by [`__delay_saves_for_tests`] has begun. Not
/// part of the API.
#[doc(hidden)]
pub fn __saving_for_tests() -> bool {
    saver::saving_for_tests()
}
pub use store::{default_path, flush, history_file, history_status, set_history, HistoryError, HistoryStatus};
pub(crate) use store::{load, set_snapshot_source};
