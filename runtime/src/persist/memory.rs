//! Learned tables as a JSON string, for programs that keep them themselves:
//! a web page in `localStorage` or on its server (WebAssembly has no history
//! file by default), or any program that ships its tables another way.
//!
//! The string is a history file's JSON (the same records, the same format
//! version), so it can also be saved as a file and read by the
//! `adaptive-kernel` binary, and a history file's content can be imported
//! here. Importing uses the file import's merge (`merge::merge_import`, by the
//! rules of [`crate::import_history`]) and hands this machine's tables to the
//! store, from which each kernel loads on its first call; exporting merges
//! what this process measured into what was imported with the save's merge
//! (`merge::merge`). No file is touched.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Mutex, PoisonError};

use super::fingerprint::Fingerprint;
use super::format::{self, HistoryFile, Parsed, MAX_FILE_BYTES};
use super::merge::{self, ImportSummary};
use super::store;
use crate::cost;

/// Every table imported in this process, every machine's entry (an export carries them on).
static IMPORTED: Mutex<Option<HistoryFile>> = Mutex::new(None);

/// Why [`import_learned`] imported nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImportError {
    /// The text is a table of ours but truncated or damaged.
    Corrupt {
        /// What is wrong with it.
        reason: String,
    },
    /// The text is not a table of ours (other JSON, not JSON, too large, or a newer format).
    Refused {
        /// Why it is not read.
        reason: String,
    },
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Corrupt { reason } => write!(
                f,
                "learned tables not imported, the text is damaged: {reason}; drop the stored copy and let the kernels learn afresh"
            ),
            ImportError::Refused { reason } => write!(
                f,
                "learned tables not imported: {reason}; pass the string `export_learned` returned"
            ),
        }
    }
}

impl std::error::Error for ImportError {}

/// What [`import_learned`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LearnedImport {
    /// What the text added to the tables this process had imported before (every machine's entries).
    pub merged: ImportSummary,
    /// Kernels of this machine's entry that will start from the imported table at their first call.
    pub kernels_adopted: usize,
    /// Kernels of this machine's entry that had already run in this process: they keep
    /// what they learned and are not changed now (the imported table is exported with
    /// the rest). Import before the first kernel call to avoid this.
    pub already_running: Vec<String>,
}

/// What this process learned, as a JSON string to keep and hand to [`import_learned`]
/// in a later run: a history file's JSON holding every table imported so far (all
/// machines' entries), with this machine's entry updated by the kernels that ran here
/// (the buckets they measured replace the imported ones) and the cost model's figures
/// when they were measured. Kernels that were never called are included only as
/// imported; for a history file's whole content use [`crate::export_history`].
///
/// Touches no file; works the same with persistence on or off, on every target.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// let json = adaptive_kernel::export_learned();
/// assert!(json.contains("adaptive-kernel-history"));
/// adaptive_kernel::import_learned(&json).unwrap();
/// ```
pub fn export_learned() -> String {
    let mut file = IMPORTED.lock().unwrap_or_else(PoisonError::into_inner).clone().unwrap_or_else(HistoryFile::empty);
    let snapshots = store::snapshots();
    if !snapshots.is_empty() || cost::calibrated().is_some() {
        let fingerprint = Fingerprint::current();
        merge::merge(&mut file, &fingerprint.key(), &fingerprint, cost::calibrated(), snapshots);
    }
    // The records are plain data (strings, numbers, maps with string keys): encoding cannot fail.
    serde_json::to_string(&file).unwrap_or_default()
}

/// Imports tables [`export_learned`] produced (or a history file's JSON): this
/// machine's tables are used by each kernel from its first call, so a page that
/// imports its stored tables before calling a kernel starts settled. Every machine's
/// entries are kept for the next [`export_learned`]. Call it before the first kernel
/// call; a kernel that already ran keeps what it has (see
/// [`LearnedImport::already_running`]).
///
/// # Errors
/// [`ImportError::Corrupt`] for a truncated or damaged table of ours;
/// [`ImportError::Refused`] for text that is not one (other JSON, a newer format, more
/// than 16 MiB). Nothing is imported then and routing is unaffected.
pub fn import_learned(json: &str) -> Result<LearnedImport, ImportError> {
    if json.len() as u64 > MAX_FILE_BYTES {
        let reason = format!("it is {} bytes, more than the {MAX_FILE_BYTES}-byte limit", json.len());
        return Err(ImportError::Refused { reason });
    }
    let incoming = match format::parse(json.as_bytes()) {
        Parsed::Ours(file) => file,
        Parsed::Corrupt(reason) => return Err(ImportError::Corrupt { reason }),
        Parsed::Refused(reason) => return Err(ImportError::Refused { reason }),
    };
    let this_machine = incoming.machines.get(&Fingerprint::current().key()).cloned();
    let merged = {
        let mut imported = IMPORTED.lock().unwrap_or_else(PoisonError::into_inner);
        merge::merge_import(imported.get_or_insert_with(HistoryFile::empty), incoming)
    };
    let mut outcome = LearnedImport { merged, ..LearnedImport::default() };
    if let Some(entry) = this_machine {
        if let Some(params) = entry.calibration {
            cost::seed(params);
        }
        let running: BTreeSet<String> = store::snapshots().into_iter().map(|s| s.name).collect();
        let (late, fresh): (BTreeMap<_, _>, BTreeMap<_, _>) =
            entry.kernels.into_iter().partition(|(name, _)| running.contains(name));
        outcome.already_running = late.into_keys().collect();
        outcome.kernels_adopted = fresh.len();
        store::adopt(fresh);
    }
    Ok(outcome)
}
