//! The process-wide store: which file is used, what was loaded from it for
//! this machine, and saving (lock, re-read, merge, atomic rename).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use super::fingerprint::Fingerprint;
use super::format::{self, BucketRecord, HistoryFile, KernelRecord, Parsed, MAX_FILE_BYTES};
use super::merge::{self, KernelSnapshot};
use super::nearest::{self, NearestEntry};
use super::trim;
use crate::backend::OpComplexity;
use crate::config::{self, HistorySetting, Mode};
use crate::cost::{self, CostParams};

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
    /// The file is a history file but truncated or damaged. Only the explicit
    /// file functions ([`crate::read_history`], [`crate::clear_history`],
    /// [`crate::save_calibration`]) report this, leaving the file as it is; a
    /// running program's saves set such a file aside and start afresh instead.
    Corrupt {
        /// The file involved.
        path: PathBuf,
        /// What is wrong with it.
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
            HistoryError::Corrupt { path, reason } => write!(f, "history file {} is corrupt: {reason}", path.display()),
        }
    }
}

impl std::error::Error for HistoryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HistoryError::Io { source, .. } => Some(source),
            HistoryError::Refused { .. } | HistoryError::Corrupt { .. } => None,
        }
    }
}

/// What reading the file found.
pub(super) enum Loaded {
    Missing,
    Ours(HistoryFile),
    /// Ours but unreadable: set aside at the next save.
    Corrupt(String),
    /// Not ours to touch.
    Refused(String),
}

pub(super) fn read_file(path: &Path) -> Loaded {
    // Looked at before opening: opening a FIFO would wait for a writer, and a
    // directory opens fine on Linux and fails only when read.
    match fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Loaded::Missing,
        Err(e) => return Loaded::Refused(format!("cannot be read: {e}")),
        Ok(m) if m.is_dir() => return Loaded::Refused("cannot be read: it is a directory, not a file".to_owned()),
        Ok(m) if !m.is_file() => {
            return Loaded::Refused("cannot be read: it is not a regular file (a FIFO, socket or device)".to_owned())
        }
        Ok(_) => {}
    }
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
    match format::parse(&bytes) {
        Parsed::Ours(f) => Loaded::Ours(f),
        Parsed::Corrupt(why) => Loaded::Corrupt(why),
        Parsed::Refused(why) => Loaded::Refused(why),
    }
}

/// The process-wide persistence state.
struct Store {
    path: Option<PathBuf>,
    machine: String,
    fingerprint: Option<Fingerprint>,
    /// This machine's kernels as loaded at start-up.
    loaded: BTreeMap<String, KernelRecord>,
    /// The other entries this machine may start from, nearest first, with their kernels (`nearest`).
    nearest: Vec<(NearestEntry, BTreeMap<String, KernelRecord>)>,
    /// Set when the file must not be written; with the reason.
    refused: Option<String>,
    /// Set when the file is ours but damaged: it is moved aside at the next save.
    corrupt: bool,
    /// What opening the file found.
    status: HistoryStatus,
}

/// What the history file held when this process opened it ([`history_status`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HistoryStatus {
    /// Persistence was turned off: `ADAPTIVE_KERNEL_HISTORY=off`, or
    /// [`HistorySetting::Off`] chosen in code ([`set_history`], [`config::Settings::history`]).
    Off,
    /// The default file has nowhere to go: this platform has no user cache directory
    /// ([`default_path`]: on Linux neither `XDG_CACHE_HOME` nor a home directory; always
    /// on WebAssembly). Nothing is loaded or saved; set `ADAPTIVE_KERNEL_HISTORY` (or
    /// [`config::Settings::history`]) to a file to keep history.
    NoLocation,
    /// There was no file: this process starts fresh and creates it at its first save.
    Missing,
    /// The file held no entry for this machine and build, and none near it (other
    /// machines' entries are kept).
    NoEntry,
    /// The file held no entry for this machine and build, but one near it
    /// ([`crate::HistoryFile::nearest_entries`]): each kernel starts from the nearest
    /// entry holding it, its decisions re-timed on their first calls before they are
    /// trusted, and marked in [`crate::Kernel::table`] until they are.
    Nearest {
        /// The nearest entry.
        from: NearestEntry,
        /// Kernels in that entry.
        kernels: usize,
    },
    /// This machine's entry was loaded: what it learned is used from the first call.
    Loaded {
        /// Kernels in the entry.
        kernels: usize,
        /// Whether it held the cost model's figures (so calibration was skipped).
        calibration: bool,
    },
    /// The file is ours but damaged: ignored, and set aside at the next save.
    Corrupt {
        /// What is wrong with it.
        reason: String,
    },
    /// The file is not ours (or from a newer version): ignored and never written.
    Refused {
        /// Why it is left alone.
        reason: String,
    },
}

impl fmt::Display for HistoryStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryStatus::Off => f.write_str(
                "off: nothing is loaded or saved (turned off by ADAPTIVE_KERNEL_HISTORY=off or by \
                 HistorySetting::Off in code)",
            ),
            HistoryStatus::NoLocation => write!(
                f,
                "off: nothing is loaded or saved, the default file has nowhere to go ({NO_LOCATION}); set \
                 ADAPTIVE_KERNEL_HISTORY to a file to keep history"
            ),
            HistoryStatus::Missing => f.write_str("not there yet: starting fresh"),
            HistoryStatus::NoEntry => f.write_str("no entry for this machine: starting fresh"),
            HistoryStatus::Nearest { from, kernels } => {
                let s = if *kernels == 1 { "" } else { "s" };
                write!(
                    f,
                    "no entry for this machine: starting from the nearest, {from}, with {kernels} kernel{s}; \
                     its decisions are re-timed before they are trusted"
                )
            }
            HistoryStatus::Loaded { kernels, calibration } => {
                let s = if *kernels == 1 { "" } else { "s" };
                write!(f, "loaded this machine's entry ({kernels} kernel{s}")?;
                f.write_str(if *calibration { ", calibration)" } else { ")" })
            }
            HistoryStatus::Corrupt { reason } => write!(f, "ignored, corrupt: {reason}"),
            HistoryStatus::Refused { reason } => write!(f, "ignored, not ours: {reason}"),
        }
    }
}

static STORE: OnceLock<Mutex<Store>> = OnceLock::new();

fn lock_store() -> MutexGuard<'static, Store> {
    STORE
        .get_or_init(|| {
            let setting = config::history_setting();
            let off = if setting == HistorySetting::Off { HistoryStatus::Off } else { HistoryStatus::NoLocation };
            Mutex::new(open(resolve(setting), off))
        })
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Where snapshots of the live kernels come from (set by the kernel layer).
static SNAPSHOTS: OnceLock<fn() -> Vec<KernelSnapshot>> = OnceLock::new();

/// Registers the function a save asks for the kernels' state; the first registration wins.
pub(crate) fn set_snapshot_source(source: fn() -> Vec<KernelSnapshot>) {
    let _ = SNAPSHOTS.set(source);
}

/// The live kernels' state, from the source the kernel layer registered.
pub(super) fn snapshots() -> Vec<KernelSnapshot> {
    SNAPSHOTS.get().map_or_else(Vec::new, |source| source())
}

/// Adds imported tables of this machine's kernels to what kernels load on their first
/// call (by [`merge::merge_kernels`]); a kernel that already loaded keeps what it has.
pub(super) fn adopt(kernels: BTreeMap<String, KernelRecord>) -> merge::ImportSummary {
    let mut summary = merge::ImportSummary::default();
    merge::merge_kernels(&mut lock_store().loaded, kernels, &mut summary);
    summary
}

/// Whether saving is possible at all (a file is configured and not refused).
pub(super) fn can_save() -> bool {
    if !writes_allowed() {
        return false;
    }
    let store = lock_store();
    store.path.is_some() && store.refused.is_none()
}

fn resolve(setting: HistorySetting) -> Option<PathBuf> {
    match setting {
        HistorySetting::Off => None,
        HistorySetting::Path(p) => Some(p),
        HistorySetting::Default => default_path(),
    }
}

/// Chooses where history is kept, in code, as a library would
/// (`config::Settings::library().history(setting)`): it overrides
/// `ADAPTIVE_KERNEL_HISTORY`, and the application's choice
/// ([`crate::config::Settings::application`]) overrides it. Must be called
/// before the first adaptive kernel runs: the file is opened then, once per
/// process.
///
/// Returns `false`, changing nothing, when history was already opened with a
/// different setting, or the application or an earlier library chose another one.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::config::HistorySetting;
/// assert!(adaptive_kernel::set_history(HistorySetting::Off));
/// assert_eq!(adaptive_kernel::history_file(), None);
/// ```
pub fn set_history(setting: HistorySetting) -> bool {
    config::choose_history(setting)
}

/// `adaptive-kernel/history.json` in this platform's user cache directory, as the `dirs`
/// crate finds it: `$XDG_CACHE_HOME`, else `~/.cache` on Linux and the BSDs (the home
/// directory from `HOME`, else the user database, so a service without `HOME` still has one),
/// `~/Library/Caches` on macOS, `%LOCALAPPDATA%` (`{FOLDERID_LocalAppData}`) on Windows.
/// `None` when the platform has none: no history is kept then, and [`history_status`]
/// says why ([`HistoryStatus::NoLocation`]). `None` on
/// WebAssembly: persistence is off there unless a file is set (WASI), and a page keeps
/// its tables with [`crate::export_learned`] instead.
pub fn default_path() -> Option<PathBuf> {
    crate::platform::user_cache_dir().map(|cache| cache.join("adaptive-kernel").join("history.json"))
}

/// Why [`default_path`] has none, in words ([`HistoryStatus::NoLocation`] says it).
const NO_LOCATION: &str = if cfg!(target_family = "wasm") {
    "WebAssembly has no user cache directory"
} else {
    "this platform reports no user cache directory: on Linux no XDG_CACHE_HOME, no HOME and no home directory in \
     the user database"
};

/// Says once per save that trimming made the file fit under the loader's cap.
fn report_trim(path: &Path, before: usize, after: usize, dropped: &trim::Dropped) {
    let what = format!(
        "saving it would take {before} bytes, more than the {MAX_FILE_BYTES}-byte limit; {dropped} to write {after} bytes"
    );
    tracing::warn!(target: "adaptive_kernel", path = %path.display(), "history file trimmed: {what}");
    config::say(format_args!("history file {} trimmed: {what}", path.display()));
}

fn report(path: &Path, what: &str) {
    tracing::warn!(target: "adaptive_kernel", path = %path.display(), "history file ignored: {what}");
    config::say(format_args!("history file {} ignored: {what}", path.display()));
}

/// The history store for `path`; `off` is its status when there is none.
fn open(path: Option<PathBuf>, off: HistoryStatus) -> Store {
    let mut store = Store {
        path: None,
        machine: String::new(),
        fingerprint: None,
        loaded: BTreeMap::new(),
        nearest: Vec::new(),
        refused: None,
        corrupt: false,
        status: off,
    };
    let frozen = config::mode() == Mode::Frozen;
    let Some(path) = path else {
        freeze_cost_model(frozen, None);
        return store;
    };
    let mut fp = Fingerprint::current();
    store.machine = fp.key();
    let mut saved_calibration = None;
    store.status = match read_file(&path) {
        Loaded::Missing => HistoryStatus::Missing,
        Loaded::Ours(mut file) => {
            if frozen && fp.gpu.is_none() && nearest::only_gpu_could_decide(&fp, &store.machine, &file.machines) {
                // Every frozen run must choose alike: wait for the GPU's adapter (`nearest`'s docs).
                crate::ops::gpu::is_available();
                fp = Fingerprint::current();
            }
            let own = file.machines.remove(&store.machine);
            store.nearest = nearest::ranked(&fp, &store.machine, &file.machines)
                .into_iter()
                .filter_map(|e| Some((e.clone(), file.machines.remove(&e.key)?.kernels)))
                .collect();
            match (own, store.nearest.first()) {
                (Some(entry), _) => {
                    let calibration = entry.calibration.is_some();
                    saved_calibration = entry.calibration;
                    store.loaded = entry.kernels;
                    HistoryStatus::Loaded { kernels: store.loaded.len(), calibration }
                }
                (None, Some((from, kernels))) => HistoryStatus::Nearest { from: from.clone(), kernels: kernels.len() },
                (None, None) => HistoryStatus::NoEntry,
            }
        }
        Loaded::Corrupt(why) => {
            report(&path, &format!("{why}; it will be replaced (the old one kept as .corrupt)"));
            store.corrupt = true;
            HistoryStatus::Corrupt { reason: why }
        }
        Loaded::Refused(why) => {
            report(&path, &format!("{why}; it will not be written either"));
            store.refused = Some(why.clone());
            HistoryStatus::Refused { reason: why }
        }
    };
    freeze_cost_model(frozen, saved_calibration);
    store.fingerprint = Some(fp);
    store.path = Some(path);
    store
}

/// Seeds the cost model with the saved figures. In frozen mode they are installed as
/// they are, or fixed conservative figures when none were saved: a frozen run never
/// measures, so the cold-start prior is the same in every run with the same file.
fn freeze_cost_model(frozen: bool, saved: Option<CostParams>) {
    if frozen {
        cost::install_global(saved.unwrap_or_else(CostParams::conservative));
    } else if let Some(params) = saved {
        cost::seed(params);
    }
}

/// Whether this process may write the history file: not in frozen mode.
fn writes_allowed() -> bool {
    config::mode() != Mode::Frozen
}

/// What a kernel starts from: this machine's saved buckets, and those of the nearest
/// other entry for sizes it has none for.
#[derive(Debug, Default)]
pub(crate) struct SavedTable {
    /// This machine's buckets of the kernel.
    pub(crate) own: Vec<BucketRecord>,
    /// Another machine's settled buckets for sizes `own` lacks, and that entry (`nearest`'s docs).
    pub(crate) borrowed: Option<(NearestEntry, Vec<BucketRecord>)>,
}

/// What a kernel starts from (see [`SavedTable`]): tables whose token hash and
/// complexity match (an edited kernel starts fresh). The cost model's figures are
/// never taken from another entry: this machine calibrates its own. Called once per
/// kernel, from its first cold path.
pub(crate) fn load(name: &str, token_hash: u64, complexity: OpComplexity) -> SavedTable {
    let store = lock_store();
    let hash = format::hex(token_hash);
    let current = |k: &&KernelRecord| k.token_hash == hash && k.complexity == complexity;
    let own = match store.loaded.get(name) {
        Some(k) if current(&k) => k.buckets.clone(),
        Some(_) => {
            tracing::info!(target: "adaptive_kernel", kernel = name, "kernel changed since its history was saved; starting fresh");
            Vec::new()
        }
        None => Vec::new(),
    };
    let borrowed = store
        .nearest
        .iter()
        .find_map(|(from, kernels)| Some((from, kernels.get(name).filter(|k| current(k))?)))
        .map(|(from, theirs)| (from.clone(), nearest::borrowable(from.rule, theirs, &own)))
        .filter(|(_, buckets)| !buckets.is_empty());
    if let Some((from, buckets)) = &borrowed {
        tracing::info!(target: "adaptive_kernel", kernel = name, from = %from, buckets = buckets.len(),
            "starting from the nearest machine's decisions; they are re-timed before they are trusted");
    }
    SavedTable { own, borrowed }
}

/// Saves the history of every kernel called in this process now, merging with
/// what the file holds. Does nothing (and succeeds) when persistence is off or
/// the routing mode is [`Mode::Frozen`] (a frozen run never writes the file).
///
/// Programs that end soon after their kernels settle should call this before
/// exiting: the background save runs a moment after a bucket settles. A cost-model
/// calibration still running in the background is waited for (at most 2 s), so
/// its figures are saved too.
///
/// # Errors
/// [`HistoryError::Io`] when the file or its directory cannot be written;
/// [`HistoryError::Refused`] when the file is not ours to overwrite (see the module docs).
pub fn flush() -> Result<(), HistoryError> {
    if !writes_allowed() {
        return Ok(());
    }
    let (path, machine, fingerprint) = {
        let store = lock_store();
        let Some(path) = store.path.clone() else { return Ok(()) };
        if let Some(reason) = &store.refused {
            return Err(HistoryError::Refused { path, reason: reason.clone() });
        }
        (path, store.machine.clone(), store.fingerprint.is_some())
    };
    let figures = cost::calibrated_within(std::time::Duration::from_secs(2));
    if !fingerprint {
        return Ok(());
    }
    // Taken now, not at start-up: by now the GPU may have started and its adapter can be recorded.
    let fingerprint = Fingerprint::current();
    let snapshots = snapshots();
    let io_err = |source| HistoryError::Io { path: path.clone(), source };
    let lock = lock_beside(&path)?;
    // Whether the load already said the file was damaged, taken under the file's lock: two
    // saves at once (a background one and the exit's) would otherwise both see it unsaid.
    let corrupt = std::mem::take(&mut lock_store().corrupt);
    let mut file = match read_file(&path) {
        Loaded::Ours(f) => f,
        Loaded::Missing => HistoryFile::empty(),
        Loaded::Corrupt(why) => {
            if !corrupt {
                report(&path, &format!("{why}; replacing it (the old one kept as .corrupt)"));
            }
            let target = link_target(&path);
            fs::rename(&target, sibling(&target, ".corrupt")).map_err(io_err)?;
            HistoryFile::empty()
        }
        Loaded::Refused(reason) => {
            let mut store = lock_store();
            store.refused = Some(reason.clone());
            report(&path, &format!("{reason}; it will not be written"));
            return Err(HistoryError::Refused { path, reason });
        }
    };
    let used: BTreeSet<String> = snapshots.iter().map(|s| s.name.clone()).collect();
    merge::merge(&mut file, &machine, &fingerprint, figures, snapshots);
    let encode = |f: &HistoryFile| serde_json::to_vec_pretty(f).map_err(|e| io_err(io::Error::other(e)));
    let mut json = encode(&file)?;
    if json.len() as u64 > MAX_FILE_BYTES {
        let before = json.len();
        let dropped =
            trim::fit(&mut file, &machine, &used, MAX_FILE_BYTES, |f| encode(f).map_or(u64::MAX, |j| j.len() as u64));
        json = encode(&file)?;
        report_trim(&path, before, json.len(), &dropped);
    }
    write_atomically(&path, &json).map_err(io_err)?;
    #[cfg_attr(target_family = "wasm", allow(clippy::drop_non_drop, reason = "`File` has no destructor there"))]
    drop(lock);
    Ok(())
}

/// Takes the advisory lock every writer of `path` holds (`<file>.lock` beside the file a
/// symlink at `path` points to, created with its directory when missing); released when
/// the returned file is dropped.
pub(super) fn lock_beside(path: &Path) -> Result<File, HistoryError> {
    let io_err = |source| HistoryError::Io { path: path.to_owned(), source };
    let path = &link_target(path);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io_err)?;
    }
    let lock =
        OpenOptions::new().create(true).truncate(false).write(true).open(sibling(path, ".lock")).map_err(io_err)?;
    lock.lock().map_err(io_err)?;
    Ok(lock)
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

/// The file `path` names once symlinks are followed (the path itself when it is not a
/// link). Writes go there, so a history file linked from elsewhere (a dotfile
/// repository) is updated in place and the link is kept. A dangling link resolves to
/// the file it would name, which a save then creates.
pub(super) fn link_target(path: &Path) -> PathBuf {
    let mut current = path.to_owned();
    // As the kernel does (`MAXSYMLINKS`): a loop or a very long chain stops being followed.
    for _ in 0..40 {
        let Ok(next) = fs::read_link(&current) else { break };
        current = match current.parent() {
            Some(dir) if next.is_relative() => dir.join(next),
            _ => next,
        };
    }
    current
}

/// Writes `bytes` to a temporary file beside `path` (beside its target, when `path` is
/// a symlink) and renames it over that file.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let path = &link_target(path);
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
    lock_store().path.clone()
}

/// What the history file held when this process opened it: whether this machine's
/// entry was loaded, and why not. Opens history (reading the file) if no kernel
/// has yet, so call it before the first kernel to read the state a run starts from.
pub fn history_status() -> HistoryStatus {
    lock_store().status.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_without_history_says_why_and_what_to_do() {
        let no_location = HistoryStatus::NoLocation.to_string();
        assert!(no_location.starts_with("off: nothing is loaded or saved"), "{no_location}");
        assert!(no_location.contains("no user cache directory"), "{no_location}");
        assert!(no_location.contains("set ADAPTIVE_KERNEL_HISTORY to a file"), "{no_location}");
        let off = HistoryStatus::Off.to_string();
        assert!(off.contains("ADAPTIVE_KERNEL_HISTORY=off") && off.contains("HistorySetting::Off"), "{off}");
    }
}
