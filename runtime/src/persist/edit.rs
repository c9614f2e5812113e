//! Reading and editing a history file by its path, outside the router: what
//! tools such as the `adaptive-kernel` binary (report, calibrate, clear) are
//! built on.
//!
//! Unlike a running program's store, which reports a bad file once and carries
//! on (moving a corrupt file aside at its next save), these functions are
//! explicit requests: a corrupt, foreign or unreadable file is an error naming
//! the file and what is wrong, and the file is left exactly as it was. Writers
//! take the same advisory lock as a program's saves (`<file>.lock`), re-read
//! the file under it and replace it atomically, so they never lose what a
//! running program saved meanwhile.

use std::io;
use std::path::Path;

use super::fingerprint::Fingerprint;
use super::format::{HistoryFile, MachineRecord};
use super::merge::{self, ImportSummary};
use super::store::{lock_beside, read_file, write_atomically, HistoryError, Loaded};
use crate::cost::CostParams;

/// Reads the history file at `path`: `Ok(None)` when there is none, an older
/// format converted to the current one.
///
/// # Errors
/// [`HistoryError::Corrupt`] for a truncated or damaged history file;
/// [`HistoryError::Refused`] for a file that is not a history file, one written by a
/// newer version, one over the 16 MiB limit, or one that cannot be read (the reason says which).
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// let dir = std::env::temp_dir().join(format!("ak-doc-read-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("history.json");
/// assert!(adaptive_kernel::read_history(&path).unwrap().is_none());
/// std::fs::write(&path, r#"{"format":"adaptive-kernel-history","version":2,"machines":{}}"#).unwrap();
/// assert!(adaptive_kernel::read_history(&path).unwrap().unwrap().machines.is_empty());
/// std::fs::write(&path, r#"{"name":"my-app"}"#).unwrap();
/// let err = adaptive_kernel::read_history(&path).unwrap_err();
/// assert!(err.to_string().contains("not an adaptive-kernel history file"), "{err}");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn read_history(path: &Path) -> Result<Option<HistoryFile>, HistoryError> {
    match read_file(path) {
        Loaded::Missing => Ok(None),
        Loaded::Ours(file) => Ok(Some(file)),
        Loaded::Corrupt(reason) => Err(HistoryError::Corrupt { path: path.to_owned(), reason }),
        Loaded::Refused(reason) => Err(HistoryError::Refused { path: path.to_owned(), reason }),
    }
}

/// Removes entries from the history file at `path`, under its lock: every machine's
/// entry when `kernel` is `None`, else that kernel's table from every machine's entry.
/// Returns how many entries (machines, or kernel tables) were removed. A missing file
/// is left missing (0); a file with nothing to remove is not rewritten.
///
/// A running program keeps what it loaded and saves it again at its next save.
///
/// # Errors
/// As [`read_history`] (the file is left as it was), and [`HistoryError::Io`] when
/// the lock or the new file cannot be written.
pub fn clear_history(path: &Path, kernel: Option<&str>) -> Result<usize, HistoryError> {
    if read_history(path)?.is_none() {
        return Ok(0);
    }
    update(path, |file| {
        let removed = match kernel {
            None => std::mem::take(&mut file.machines).len(),
            Some(name) => file.machines.values_mut().map(|m| m.kernels.remove(name)).filter(Option::is_some).count(),
        };
        (removed, removed > 0)
    })
    .map(Option::unwrap_or_default)
}

/// Stores `params` as this machine's cost-model figures in the history file at
/// `path` (creating the file or the entry), under its lock, so the next program on
/// this machine uses them instead of calibrating. Figures that are not finite and
/// positive are replaced by conservative ones when loaded.
///
/// # Errors
/// As [`clear_history`].
pub fn save_calibration(path: &Path, params: CostParams) -> Result<(), HistoryError> {
    let fingerprint = Fingerprint::current();
    let machine = fingerprint.key();
    update(path, |file| {
        let entry = file.machines.entry(machine).or_insert_with(|| MachineRecord {
            fingerprint: fingerprint.clone(),
            calibration: None,
            kernels: Default::default(),
        });
        entry.fingerprint = fingerprint;
        entry.calibration = Some(params);
        ((), true)
    })
    .map(drop)
}

/// Locks `path`, re-reads it (a missing file is an empty one), applies `edit`, and
/// when `edit` says the file changed, replaces it atomically. `None` when the file
/// was missing and `edit` left it unchanged (nothing is created then).
fn update<R>(path: &Path, edit: impl FnOnce(&mut HistoryFile) -> (R, bool)) -> Result<Option<R>, HistoryError> {
    let lock = lock_beside(path)?;
    let (mut file, existed) = match read_history(path)? {
        Some(file) => (file, true),
        None => (HistoryFile::empty(), false),
    };
    let (result, changed) = edit(&mut file);
    if changed {
        let io_err = |source| HistoryError::Io { path: path.to_owned(), source };
        let json = serde_json::to_vec_pretty(&file).map_err(|e| io_err(io::Error::other(e)))?;
        write_atomically(path, &json).map_err(io_err)?;
    }
    #[cfg_attr(target_family = "wasm", allow(clippy::drop_non_drop, reason = "`File` has no destructor there"))]
    drop(lock);
    Ok((changed || existed).then_some(result))
}

/// The history file at `path` as it would be shipped with a program ("wisdom"):
/// every machine's entry, or with `kernel`, only that kernel's tables (machine
/// entries without one are left out, and so are their calibrations, which describe
/// machines rather than kernels). A missing file exports as an empty one. The result
/// serializes to a history file [`import_history`] (and the library) can read.
///
/// # Errors
/// As [`read_history`].
pub fn export_history(path: &Path, kernel: Option<&str>) -> Result<HistoryFile, HistoryError> {
    let mut file = read_history(path)?.unwrap_or_else(HistoryFile::empty);
    if let Some(name) = kernel {
        file.machines.retain(|_, m| {
            m.kernels.retain(|k, _| k == name);
            m.calibration = None;
            !m.kernels.is_empty()
        });
    }
    Ok(file)
}

/// Merges the history file at `from` (an export, or any history file of format 1
/// or 2) into the one at `path`, under `path`'s lock, and says what changed.
///
/// - A machine entry `path` lacks is added whole.
/// - In a machine entry both hold: a kernel `path` lacks is added; for a kernel with
///   the same token hash and complexity, each imported bucket replaces `path`'s
///   bucket of the same sizes (the imported table is what the program ships with)
///   and the buckets only `path` holds are kept; a kernel whose token hash or
///   complexity differs is replaced by the imported one. `path`'s calibration is
///   kept, the imported one used only where `path` has none.
///
/// A program running on `path` keeps what it loaded; its next save merges
/// its own measurements in (they win for the buckets it measured).
///
/// # Errors
/// As [`read_history`] for either file (`from` missing is [`HistoryError::Io`]);
/// nothing is written then.
pub fn import_history(path: &Path, from: &Path) -> Result<ImportSummary, HistoryError> {
    let incoming = read_history(from)?.ok_or_else(|| HistoryError::Io {
        path: from.to_owned(),
        source: io::Error::new(io::ErrorKind::NotFound, "no such file to import"),
    })?;
    update(path, |file| {
        let summary = merge::merge_import(file, incoming);
        (summary, !summary.is_empty())
    })
    .map(Option::unwrap_or_default)
}
