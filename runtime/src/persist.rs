//! Persistence ("wisdom"): learned timings saved as versioned JSON and loaded on
//! first use, so a second run of a program starts settled.
//!
//! # The file
//! `$XDG_CACHE_HOME/adaptive-kernel/history.json` (or `~/.cache/…`), or the path
//! in `ADAPTIVE_KERNEL_HISTORY`, or nothing when that is `off`. One file holds an
//! entry per machine (keyed by [`Fingerprint::key`]: CPU, GPU adapter and driver,
//! crate version); inside it, per kernel name, the macro's token hash and the
//! per-bucket statistics. A kernel whose token hash or complexity differs from
//! the saved one (it was edited) starts fresh; other machines' and other kernels'
//! entries are carried along untouched.
//!
//! # Saving
//! Off the hot path: when a bucket settles, a background thread saves after a
//! short debounce; [`flush`] saves at once. A save takes an advisory lock on
//! `<file>.lock`, re-reads the file, merges (buckets this process measured
//! replace the file's, all else is kept), writes a temporary file beside it and
//! renames it over, so readers never see a half-written file and two processes
//! sharing a file do not lose each other's kernels.
//!
//! # Bad files
//! Reported once (a `tracing` warning and a line on stderr) and never fatal:
//! - a truncated or corrupt file of ours is ignored and, at the next save, moved
//!   aside to `<file>.corrupt` before a fresh one is written;
//! - a file that is not ours (foreign JSON, any other content), larger than
//!   16 MiB, or written by a newer format version is ignored and never
//!   overwritten: persistence is off for the process.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::backend::OpComplexity;
use crate::config::{self, HistorySetting};
use crate::cost::{self, CostParams};
use crate::fingerprint::Fingerprint;
use crate::history::{BucketState, Phase};
use crate::registry;
use crate::router::DecisionKind;
use crate::site::{KernelSpec, KernelState};

/// The `format` field every history file starts with.
pub const FORMAT: &str = "adaptive-kernel-history";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
/// Files larger than this are not read.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// How long after a bucket settles the background save waits for more to settle.
const DEBOUNCE: Duration = Duration::from_millis(200);

#[derive(Debug, Serialize, Deserialize)]
struct HistoryFile {
    format: String,
    version: u32,
    machines: BTreeMap<String, MachineEntry>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct MachineEntry {
    fingerprint: Fingerprint,
    #[serde(default)]
    calibration: Option<CostParams>,
    #[serde(default)]
    kernels: BTreeMap<String, KernelEntry>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct KernelEntry {
    /// The macro's token hash, as 16 hex digits (JSON numbers lose precision above 2^53).
    token_hash: String,
    complexity: OpComplexity,
    buckets: BTreeMap<usize, BucketState>,
}

/// Why history could not be saved.
#[derive(Debug)]
#[non_exhaustive]
pub enum HistoryError {
    /// Reading, writing, locking or renaming the file failed.
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file is not one this build may overwrite (foreign, oversized or newer); nothing was written.
    Refused {
        /// The file involved.
        path: PathBuf,
        /// Why it is left alone.
        reason: String,
    },
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryError::Io { path, source } => write!(f, "history file {}: {source}", path.display()),
            HistoryError::Refused { path, reason } => {
                write!(f, "history file {} is left alone: {reason}", path.display())
            }
        }
    }
}

impl std::error::Error for HistoryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HistoryError::Io { source, .. } => Some(source),
            HistoryError::Refused { .. } => None,
        }
    }
}

/// What reading the file found.
enum Loaded {
    Missing,
    Ours(HistoryFile),
    /// Ours but unreadable: set aside at the next save.
    Corrupt(String),
    /// Not ours to touch.
    Refused(String),
}

fn read_file(path: &Path) -> Loaded {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Loaded::Missing,
        Err(e) => return Loaded::Refused(format!("cannot be read: {e}")),
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX_FILE_BYTES {
        return Loaded::Refused(format!("it is {len} bytes, more than the {MAX_FILE_BYTES}-byte limit"));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    if let Err(e) = Read::by_ref(&mut file).take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes) {
        return Loaded::Refused(format!("cannot be read: {e}"));
    }
    parse(&bytes)
}

fn parse(bytes: &[u8]) -> Loaded {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Loaded::Corrupt("it is empty".to_owned());
    }
    #[derive(Deserialize)]
    struct Header {
        format: String,
        version: u32,
    }
    match serde_json::from_slice::<Header>(bytes) {
        Ok(h) if h.format != FORMAT => Loaded::Refused(format!("its format is `{}`, not `{FORMAT}`", h.format)),
        Ok(h) if h.version > VERSION => {
            Loaded::Refused(format!("it was written by a newer version (format {} > {VERSION})", h.version))
        }
        Ok(h) if h.version < VERSION => Loaded::Corrupt(format!("format version {} is obsolete", h.version)),
        Ok(_) => match serde_json::from_slice::<HistoryFile>(bytes) {
            Ok(f) => Loaded::Ours(f),
            Err(e) => Loaded::Corrupt(format!("it is damaged: {e}")),
        },
        Err(_) if looks_like_ours(bytes) => Loaded::Corrupt("it is truncated or damaged".to_owned()),
        Err(_) => Loaded::Refused("it is not an adaptive-kernel history file".to_owned()),
    }
}

/// Whether the start of the file names our format (a truncated file of ours still does).
fn looks_like_ours(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(256)];
    String::from_utf8_lossy(head).contains(FORMAT)
}

/// The process-wide persistence state.
struct Store {
    path: Option<PathBuf>,
    machine: String,
    fingerprint: Option<Fingerprint>,
    /// This machine's entry as loaded at start-up.
    loaded: BTreeMap<String, KernelEntry>,
    /// Set when the file must not be written; with the reason.
    refused: Option<String>,
    /// Set when the file is ours but damaged: it is moved aside at the next save.
    corrupt: bool,
    dirty: bool,
}

struct Global {
    store: Mutex<Store>,
    wake: Condvar,
}

static GLOBAL: OnceLock<Global> = OnceLock::new();

fn global() -> &'static Global {
    GLOBAL.get_or_init(|| Global { store: Mutex::new(open(resolve(config::history_setting()))), wake: Condvar::new() })
}

fn resolve(setting: HistorySetting) -> Option<PathBuf> {
    match setting {
        HistorySetting::Off => None,
        HistorySetting::Path(p) => Some(p),
        HistorySetting::Default => default_path(),
    }
}

/// Chooses where history is kept, in code, overriding `ADAPTIVE_KERNEL_HISTORY`.
/// Must be called before the first adaptive kernel runs; the file is read now.
///
/// Returns `false`, changing nothing, when history was already opened with a
/// different setting (it is opened once per process).
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::config::HistorySetting;
/// assert!(adaptive_kernel::set_history(HistorySetting::Off));
/// assert_eq!(adaptive_kernel::history_file(), None);
/// ```
pub fn set_history(setting: HistorySetting) -> bool {
    let wanted = resolve(setting);
    let mut fresh = false;
    let g = GLOBAL.get_or_init(|| {
        fresh = true;
        Global { store: Mutex::new(open(wanted.clone())), wake: Condvar::new() }
    });
    fresh || g.store.lock().unwrap_or_else(PoisonError::into_inner).path == wanted
}

/// `$XDG_CACHE_HOME/adaptive-kernel/history.json`, else `$HOME/.cache/adaptive-kernel/history.json`.
pub fn default_path() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("adaptive-kernel").join("history.json"))
}

fn report(path: &Path, what: &str) {
    tracing::warn!(target: "adaptive_kernel", path = %path.display(), "history file ignored: {what}");
    eprintln!("adaptive-kernel: history file {} ignored: {what}", path.display());
}

fn open(path: Option<PathBuf>) -> Store {
    let mut store = Store {
        path: None,
        machine: String::new(),
        fingerprint: None,
        loaded: BTreeMap::new(),
        refused: None,
        corrupt: false,
        dirty: false,
    };
    let Some(path) = path else { return store };
    let fp = Fingerprint::current();
    store.machine = fp.key();
    match read_file(&path) {
        Loaded::Missing => {}
        Loaded::Ours(mut file) => {
            if let Some(entry) = file.machines.remove(&store.machine) {
                if entry.fingerprint == fp {
                    if let Some(params) = entry.calibration {
                        cost::install_global(params);
                    }
                    store.loaded = entry.kernels;
                }
            }
        }
        Loaded::Corrupt(why) => {
            report(&path, &format!("{why}; it will be replaced (the old one kept as .corrupt)"));
            store.corrupt = true;
        }
        Loaded::Refused(why) => {
            report(&path, &format!("{why}; it will not be written either"));
            store.refused = Some(why);
        }
    }
    store.fingerprint = Some(fp);
    store.path = Some(path);
    store
}

/// Seeds a kernel's state from the loaded history (called once per kernel, from its first cold path).
pub(crate) fn load_into(spec: &KernelSpec, state: &mut KernelState) {
    let store = global().store.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(entry) = store.loaded.get(spec.name) else { return };
    if entry.token_hash != hex(spec.token_hash) || entry.complexity != spec.complexity {
        tracing::info!(target: "adaptive_kernel", kernel = spec.name, "kernel changed since its history was saved; starting fresh");
        return;
    }
    for (&bucket, bs) in &entry.buckets {
        if bucket >= crate::bucket::BUCKETS {
            continue;
        }
        let mut bs = bs.clone();
        for s in &mut bs.stats {
            s.sanitize();
        }
        if let Phase::Settled { backend, .. } = bs.phase {
            let gpu_gone = backend == crate::Backend::Gpu && !(spec.has_gpu && crate::ops::gpu::is_available());
            bs.phase =
                if gpu_gone { Phase::Exploring } else { Phase::Settled { backend, by: DecisionKind::Historical } };
        }
        state.buckets.insert(bucket, bs);
    }
}

fn hex(h: u64) -> String {
    format!("{h:016x}")
}

/// Notes that something worth saving changed; a background thread saves after a short debounce.
pub(crate) fn note_changed() {
    let g = global();
    let mut store = g.store.lock().unwrap_or_else(PoisonError::into_inner);
    if store.path.is_none() || store.refused.is_some() {
        return;
    }
    store.dirty = true;
    drop(store);
    static SAVER: OnceLock<()> = OnceLock::new();
    SAVER.get_or_init(|| {
        let spawned = std::thread::Builder::new().name("adaptive-kernel-history".into()).spawn(saver_loop);
        if let Err(e) = spawned {
            tracing::warn!(target: "adaptive_kernel", "cannot start the history saver thread ({e}); call adaptive_kernel::flush() to save");
        }
    });
    g.wake.notify_one();
}

fn saver_loop() {
    let g = global();
    loop {
        let mut store = g.store.lock().unwrap_or_else(PoisonError::into_inner);
        while !store.dirty {
            store = g.wake.wait(store).unwrap_or_else(PoisonError::into_inner);
        }
        drop(store);
        std::thread::sleep(DEBOUNCE);
        if let Err(e) = flush() {
            tracing::warn!(target: "adaptive_kernel", "saving history failed: {e}");
        }
    }
}

/// Saves the history of every kernel called in this process now, merging with
/// what the file holds. Does nothing (and succeeds) when persistence is off.
///
/// Programs that end soon after their kernels settle should call this before
/// exiting: the background save runs a moment after a bucket settles.
///
/// # Errors
/// [`HistoryError::Io`] when the file or its directory cannot be written;
/// [`HistoryError::Refused`] when the file is not ours to overwrite (see the module docs).
pub fn flush() -> Result<(), HistoryError> {
    let g = global();
    let (path, machine, fingerprint, corrupt) = {
        let mut store = g.store.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(path) = store.path.clone() else { return Ok(()) };
        if let Some(reason) = &store.refused {
            return Err(HistoryError::Refused { path, reason: reason.clone() });
        }
        store.dirty = false;
        (path, store.machine.clone(), store.fingerprint.clone(), std::mem::take(&mut store.corrupt))
    };
    let Some(fingerprint) = fingerprint else { return Ok(()) };
    let snapshot = snapshot_kernels();
    let io_err = |source| HistoryError::Io { path: path.clone(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io_err)?;
    }
    let lock_path = sibling(&path, ".lock");
    let lock = OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).map_err(io_err)?;
    lock.lock().map_err(io_err)?;
    let mut file = match read_file(&path) {
        Loaded::Ours(f) => f,
        Loaded::Missing => HistoryFile { format: FORMAT.to_owned(), version: VERSION, machines: BTreeMap::new() },
        Loaded::Corrupt(why) => {
            if !corrupt {
                report(&path, &format!("{why}; replacing it (the old one kept as .corrupt)"));
            }
            fs::rename(&path, sibling(&path, ".corrupt")).map_err(io_err)?;
            HistoryFile { format: FORMAT.to_owned(), version: VERSION, machines: BTreeMap::new() }
        }
        Loaded::Refused(reason) => {
            let mut store = g.store.lock().unwrap_or_else(PoisonError::into_inner);
            store.refused = Some(reason.clone());
            report(&path, &format!("{reason}; it will not be written"));
            return Err(HistoryError::Refused { path, reason });
        }
    };
    let entry = file.machines.entry(machine).or_insert_with(|| MachineEntry {
        fingerprint: fingerprint.clone(),
        calibration: None,
        kernels: BTreeMap::new(),
    });
    entry.fingerprint = fingerprint;
    if let Some(params) = cost::calibrated() {
        entry.calibration = Some(params);
    }
    for (name, (ours, touched)) in snapshot {
        match entry.kernels.get_mut(&name) {
            Some(theirs) if theirs.token_hash == ours.token_hash && theirs.complexity == ours.complexity => {
                for (bucket, bs) in ours.buckets {
                    if touched.contains(&bucket) || !theirs.buckets.contains_key(&bucket) {
                        theirs.buckets.insert(bucket, bs);
                    }
                }
            }
            _ => {
                entry.kernels.insert(name, ours);
            }
        }
    }
    let json = serde_json::to_vec_pretty(&file).map_err(|e| io_err(io::Error::other(e)))?;
    write_atomically(&path, &json).map_err(io_err)?;
    drop(lock);
    Ok(())
}

/// Every registered kernel's entry and the buckets this process measured.
fn snapshot_kernels() -> Vec<(String, (KernelEntry, Vec<usize>))> {
    registry::kernels()
        .into_iter()
        .map(|k| {
            let spec = *k.spec();
            k.with_state(|st| {
                let entry = KernelEntry {
                    token_hash: hex(spec.token_hash),
                    complexity: spec.complexity,
                    buckets: st.buckets.clone(),
                };
                (spec.name.to_owned(), (entry, st.touched.iter().copied().collect()))
            })
        })
        .collect()
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = sibling(path, &format!(".{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The history file in use: `None` when persistence is off.
pub fn history_file() -> Option<PathBuf> {
    global().store.lock().unwrap_or_else(PoisonError::into_inner).path.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_files() {
        assert!(matches!(parse(b""), Loaded::Corrupt(_)));
        assert!(matches!(parse(b"{\"format\":\"adaptive-kernel-history\",\"vers"), Loaded::Corrupt(_)));
        assert!(matches!(parse(b"{\"name\": \"my-app\", \"version\": 3}"), Loaded::Refused(_)));
        assert!(matches!(parse(b"hello world"), Loaded::Refused(_)));
        assert!(matches!(
            parse(b"{\"format\":\"adaptive-kernel-history\",\"version\":99,\"machines\":{}}"),
            Loaded::Refused(_)
        ));
        assert!(matches!(
            parse(b"{\"format\":\"adaptive-kernel-history\",\"version\":1,\"machines\":{}}"),
            Loaded::Ours(_)
        ));
        assert!(matches!(
            parse(b"{\"format\":\"adaptive-kernel-history\",\"version\":1,\"machines\":7}"),
            Loaded::Corrupt(_)
        ));
    }
}
