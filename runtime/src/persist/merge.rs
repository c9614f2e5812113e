//! Merging what this process learned into the history file's contents: a pure
//! function, so the rules are tested without files, locks or threads.
//!
//! - Other machines' entries are kept untouched.
//! - Other kernels in this machine's entry are kept untouched.
//! - A kernel whose token hash and complexity match the file's: each bucket this
//!   process measured replaces the file's bucket of the same sizes; a bucket the
//!   file lacks is added; every other bucket of the file is kept (another
//!   process may have measured it). Its loop report is ours (the same tokens
//!   compiled by this build).
//! - A kernel that changed (another token hash or complexity), or that the file
//!   lacks: ours replaces the file's.

use std::collections::BTreeMap;

use super::fingerprint::Fingerprint;
use super::format::{HistoryFile, KernelRecord, MachineRecord};
use crate::cost::CostParams;

/// One kernel's state handed to a save.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KernelSnapshot {
    /// The kernel's name in history.
    pub(crate) name: String,
    /// Everything this process knows of it (loaded and measured).
    pub(crate) record: KernelRecord,
    /// The sizes (first, last) of the buckets this process measured.
    pub(crate) touched: Vec<[usize; 2]>,
}

/// Merges `snapshots` (and the calibration, when there is one) into `machine`'s entry of `file`.
pub(crate) fn merge(
    file: &mut HistoryFile,
    machine: &str,
    fingerprint: &Fingerprint,
    calibration: Option<CostParams>,
    snapshots: Vec<KernelSnapshot>,
) {
    let entry = file.machines.entry(machine.to_owned()).or_insert_with(|| MachineRecord {
        fingerprint: fingerprint.clone(),
        calibration: None,
        kernels: Default::default(),
    });
    entry.fingerprint = fingerprint.clone();
    if calibration.is_some() {
        entry.calibration = calibration;
    }
    for snap in snapshots {
        let ours = snap.record;
        match entry.kernels.get_mut(&snap.name) {
            Some(theirs) if theirs.token_hash == ours.token_hash && theirs.complexity == ours.complexity => {
                if ours.loops.is_some() {
                    theirs.loops = ours.loops;
                }
                if ours.splits.is_some() {
                    theirs.splits = ours.splits;
                }
                if ours.gpu_loops.is_some() {
                    theirs.gpu_loops = ours.gpu_loops;
                }
                for mut bucket in ours.buckets {
                    let at = theirs.buckets.iter().position(|b| b.sizes == bucket.sizes);
                    match at {
                        Some(i) if snap.touched.contains(&bucket.sizes) => {
                            // A process that moved nothing in this bucket keeps the file's transfers.
                            if bucket.transfers.is_none() {
                                bucket.transfers = theirs.buckets[i].transfers.take();
                            }
                            theirs.buckets[i] = bucket;
                        }
                        Some(_) => {}
                        None => theirs.buckets.push(bucket),
                    }
                }
                theirs.buckets.sort_by_key(|b| b.sizes);
            }
            _ => {
                entry.kernels.insert(snap.name, ours);
            }
        }
    }
}

/// What [`crate::import_history`] merged into a history file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportSummary {
    /// Machine entries the file did not have, added whole.
    pub machines_added: usize,
    /// Kernel tables added to an existing machine entry, or replacing one for another
    /// version of the kernel (another token hash or complexity).
    pub kernels_added: usize,
    /// Buckets of existing kernel tables replaced by the imported ones of the same sizes.
    pub buckets_replaced: usize,
    /// Buckets added to existing kernel tables.
    pub buckets_added: usize,
}

impl ImportSummary {
    /// Whether the import changed nothing.
    pub fn is_empty(&self) -> bool {
        *self == ImportSummary::default()
    }
}

/// Merges an imported file into `file` (see [`crate::import_history`] for the rules):
/// the imported table is what a program ships with, so where both hold a bucket the
/// imported one wins; everything only `file` holds is kept.
pub(crate) fn merge_import(file: &mut HistoryFile, incoming: HistoryFile) -> ImportSummary {
    let mut summary = ImportSummary::default();
    for (key, theirs) in incoming.machines {
        let Some(ours) = file.machines.get_mut(&key) else {
            summary.machines_added += 1;
            file.machines.insert(key, theirs);
            continue;
        };
        if ours.calibration.is_none() {
            ours.calibration = theirs.calibration;
        }
        merge_kernels(&mut ours.kernels, theirs.kernels, &mut summary);
    }
    summary
}

/// Merges imported kernel tables into one machine's `ours` by the rules of
/// [`merge_import`], counting what changed into `summary`.
pub(crate) fn merge_kernels(
    ours: &mut BTreeMap<String, KernelRecord>,
    theirs: BTreeMap<String, KernelRecord>,
    summary: &mut ImportSummary,
) {
    for (name, kernel) in theirs {
        match ours.get_mut(&name) {
            Some(mine) if mine.token_hash == kernel.token_hash && mine.complexity == kernel.complexity => {
                for bucket in kernel.buckets {
                    match mine.buckets.iter().position(|b| b.sizes == bucket.sizes) {
                        Some(i) if mine.buckets[i] == bucket => {}
                        Some(i) => {
                            mine.buckets[i] = bucket;
                            summary.buckets_replaced += 1;
                        }
                        None => {
                            mine.buckets.push(bucket);
                            summary.buckets_added += 1;
                        }
                    }
                }
                mine.buckets.sort_by_key(|b| b.sizes);
            }
            Some(mine) if *mine == kernel => {}
            _ => {
                ours.insert(name, kernel);
                summary.kernels_added += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, OpComplexity};
    use crate::persist::format::{BucketRecord, TimingRecord};

    fn fp(cpu: &str) -> Fingerprint {
        Fingerprint {
            cpu: cpu.into(),
            cpu_features: vec![],
            gpu: None,
            crate_version: "1".into(),
            profile: Default::default(),
        }
    }

    fn bucket(lo: usize, chosen: Backend, ns: u64) -> BucketRecord {
        BucketRecord {
            sizes: [lo, 2 * lo - 1],
            typical_size: lo,
            chosen: Some(chosen),
            chosen_threads: None,
            timings: vec![TimingRecord { backend: chosen, threads: None, count: 1, recent_ns: vec![ns] }],
            excluded: vec![],
            transfers: None,
        }
    }

    fn kernel(hash: &str, buckets: Vec<BucketRecord>) -> KernelRecord {
        KernelRecord {
            token_hash: hash.into(),
            complexity: OpComplexity::Low,
            loops: None,
            splits: None,
            gpu_loops: None,
            buckets,
        }
    }

    fn file_with(k: &str, record: KernelRecord) -> HistoryFile {
        let mut f = HistoryFile::empty();
        let mut m = MachineRecord { fingerprint: fp("a"), calibration: None, kernels: Default::default() };
        m.kernels.insert(k.into(), record);
        f.machines.insert("a".into(), m.clone());
        f.machines.insert("other".into(), MachineRecord { fingerprint: fp("b"), ..m });
        f
    }

    #[test]
    fn touched_buckets_replace_others_are_kept_and_new_ones_added() {
        let mut f = file_with("k", kernel("h", vec![bucket(8, Backend::Scalar, 1), bucket(16, Backend::Simd, 2)]));
        let ours =
            kernel("h", vec![bucket(8, Backend::Simd, 9), bucket(16, Backend::Scalar, 9), bucket(32, Backend::Gpu, 3)]);
        let snap = KernelSnapshot { name: "k".into(), record: ours, touched: vec![[8, 15], [32, 63]] };
        merge(&mut f, "a", &fp("a"), None, vec![snap]);
        let got = &f.machines["a"].kernels["k"].buckets;
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].chosen, Some(Backend::Simd), "touched: ours wins");
        assert_eq!(got[1].chosen, Some(Backend::Simd), "untouched: the file's is kept");
        assert_eq!(got[2].chosen, Some(Backend::Gpu), "new: added");
        assert_eq!(f.machines["other"].kernels["k"].buckets.len(), 2, "other machines untouched");
    }

    #[test]
    fn a_touched_bucket_that_moved_nothing_keeps_the_files_transfers() {
        use crate::persist::format::TransferRecord;
        let moved =
            |up| Some(TransferRecord { gpu_calls: 1, submissions: 1, bytes_up: up, ..TransferRecord::default() });
        let theirs = BucketRecord { transfers: moved(64), ..bucket(8, Backend::Gpu, 1) };
        let mut f = file_with(
            "k",
            kernel("h", vec![theirs, BucketRecord { transfers: moved(8), ..bucket(16, Backend::Gpu, 1) }]),
        );
        let ours = kernel(
            "h",
            vec![bucket(8, Backend::Simd, 9), BucketRecord { transfers: moved(4), ..bucket(16, Backend::Gpu, 2) }],
        );
        let snap = KernelSnapshot { name: "k".into(), record: ours, touched: vec![[8, 15], [16, 31]] };
        merge(&mut f, "a", &fp("a"), None, vec![snap]);
        let got = &f.machines["a"].kernels["k"].buckets;
        assert_eq!((got[0].chosen, got[0].transfers.as_ref().map(|t| t.bytes_up)), (Some(Backend::Simd), Some(64)));
        assert_eq!(got[1].transfers.as_ref().map(|t| t.bytes_up), Some(4), "ours, where we moved data");
    }

    #[test]
    fn the_loop_report_is_ours_when_we_have_one() {
        use crate::persist::format::LoopRecord;
        let mut f = file_with("k", kernel("h", vec![]));
        let report = vec![LoopRecord {
            line: 3,
            idiom: "for iter +=".into(),
            variants: vec![Backend::Simd],
            reason: "".into(),
            vector_math: Vec::new(),
        }];
        let ours = KernelRecord { loops: Some(report.clone()), ..kernel("h", vec![]) };
        merge(&mut f, "a", &fp("a"), None, vec![KernelSnapshot { name: "k".into(), record: ours, touched: vec![] }]);
        assert_eq!(f.machines["a"].kernels["k"].loops.as_ref(), Some(&report), "recorded into an older entry");
        let unrecorded = KernelSnapshot { name: "k".into(), record: kernel("h", vec![]), touched: vec![] };
        merge(&mut f, "a", &fp("a"), None, vec![unrecorded]);
        assert_eq!(f.machines["a"].kernels["k"].loops.as_ref(), Some(&report), "kept when ours says nothing");
    }

    #[test]
    fn an_edited_kernel_replaces_the_old_entry_and_other_kernels_stay() {
        let mut f = file_with("k", kernel("old", vec![bucket(8, Backend::Scalar, 1)]));
        f.machines.get_mut("a").unwrap().kernels.insert("j".into(), kernel("x", vec![]));
        let snap = KernelSnapshot { name: "k".into(), record: kernel("new", vec![]), touched: vec![] };
        let cal = CostParams::conservative();
        merge(&mut f, "a", &fp("a"), Some(cal), vec![snap]);
        let m = &f.machines["a"];
        assert_eq!(m.kernels["k"].token_hash, "new");
        assert!(m.kernels["k"].buckets.is_empty());
        assert!(m.kernels.contains_key("j"));
        assert_eq!(m.calibration, Some(cal));
    }

    #[test]
    fn a_new_machine_gets_an_entry() {
        let mut f = HistoryFile::empty();
        let snap = KernelSnapshot { name: "k".into(), record: kernel("h", vec![]), touched: vec![] };
        merge(&mut f, "m", &fp("m"), None, vec![snap]);
        assert_eq!(f.machines["m"].fingerprint, fp("m"));
        assert!(f.machines["m"].kernels.contains_key("k"));
    }

    #[test]
    fn an_import_adds_machines_and_kernels_and_its_buckets_win() {
        let mut f = file_with("k", kernel("h", vec![bucket(8, Backend::Scalar, 1), bucket(16, Backend::Simd, 2)]));
        let mut incoming = file_with("k", kernel("h", vec![bucket(8, Backend::Simd, 5), bucket(64, Backend::Gpu, 3)]));
        incoming.machines.get_mut("a").unwrap().kernels.insert("new".into(), kernel("n", vec![]));
        let far = MachineRecord { fingerprint: fp("far"), calibration: None, kernels: Default::default() };
        incoming.machines.insert("far".into(), far);
        let summary = merge_import(&mut f, incoming.clone());
        assert_eq!(
            summary,
            // Machines `a` and `other` both hold `k`: one bucket replaced and one added in each.
            ImportSummary { machines_added: 1, kernels_added: 1, buckets_replaced: 2, buckets_added: 2 }
        );
        let got = &f.machines["a"].kernels["k"].buckets;
        let chosen: Vec<_> = got.iter().map(|b| (b.sizes[0], b.chosen)).collect();
        assert_eq!(
            chosen,
            [(8, Some(Backend::Simd)), (16, Some(Backend::Simd)), (64, Some(Backend::Gpu))],
            "imported bucket wins, the file's other bucket is kept, the new one added in order"
        );
        assert!(f.machines.contains_key("far"));
        assert!(merge_import(&mut f, incoming).is_empty(), "importing the same file twice changes nothing");
    }
}
