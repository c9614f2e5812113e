//! Keeping a saved file under the loader's size cap (`format::MAX_FILE_BYTES`), so
//! a long-lived program never writes a file its next run refuses to read.
//!
//! A file grows only with the number of machines and kernels it holds: one
//! kernel's entry is bounded (at most `BUCKETS` buckets, each with at most one
//! timing per backend of at most `WINDOW` recent samples). When a save would
//! still exceed the cap, [`fit`] drops data in this order, least useful to this
//! run first, until the file fits:
//!
//! 1. other machines' entries (their timings are never used here), largest first;
//! 2. this machine's kernels that this process did not run, largest first;
//! 3. the older half of every kept bucket's recent samples, repeatedly;
//! 4. this machine's remaining kernels, largest first.
//!
//! A pure function over the file's records, like the merge: no files, no locks.

use std::collections::BTreeSet;
use std::fmt;

use super::format::HistoryFile;

/// What [`fit`] dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// Other machines' entries removed.
    pub(crate) machines: usize,
    /// This machine's kernels removed.
    pub(crate) kernels: usize,
    /// Times every kept bucket's samples were halved.
    pub(crate) halvings: usize,
}

impl fmt::Display for Dropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.machines > 0 {
            parts.push(format!("dropped {} other machines' entries", self.machines));
        }
        if self.kernels > 0 {
            parts.push(format!("dropped {} kernels of this machine", self.kernels));
        }
        if self.halvings > 0 {
            parts.push(format!("kept the newest 1/{} of each bucket's samples", 1u64 << self.halvings.min(63)));
        }
        if parts.is_empty() {
            parts.push("dropped nothing".to_owned());
        }
        f.write_str(&parts.join(", "))
    }
}

/// Drops data from `file` (in the order of the module docs) until `size(file) <= max`.
/// `machine` is this machine's key; `used` the kernels this process ran.
///
/// Each stage measures its candidates once and drops the largest until their
/// sizes cover the excess (an item weighs at least its own pretty-printed size
/// inside the file, so that is enough), then measures the file again: a few
/// serialisations of the file, however many entries it holds.
pub(crate) fn fit(
    file: &mut HistoryFile,
    machine: &str,
    used: &BTreeSet<String>,
    max: u64,
    size: impl Fn(&HistoryFile) -> u64,
) -> Dropped {
    let mut dropped = Dropped::default();
    let mut total = size(file);
    // 1. Other machines, largest first.
    if total > max {
        let others = file.machines.iter().filter(|(key, _)| key.as_str() != machine);
        let victims = largest_covering(others, total - max);
        for key in &victims {
            file.machines.remove(key);
        }
        dropped.machines = victims.len();
        total = size(file);
    }
    // 2. This machine's kernels this process did not run, largest first.
    if total > max {
        dropped.kernels += drop_kernels(file, machine, |name| !used.contains(name), total - max);
        total = size(file);
    }
    // 3. Halve the samples while any bucket keeps more than one.
    while total > max && halve_samples(file, machine) {
        dropped.halvings += 1;
        total = size(file);
    }
    // 4. This machine's remaining kernels.
    while total > max {
        let removed = drop_kernels(file, machine, |_| true, total - max);
        if removed == 0 {
            break;
        }
        dropped.kernels += removed;
        total = size(file);
    }
    dropped
}

/// The keys of the largest items whose pretty-printed sizes add up to at least `excess`
/// (all of them if they do not), largest first.
fn largest_covering<'a, T: serde::Serialize + 'a>(
    items: impl Iterator<Item = (&'a String, &'a T)>,
    excess: u64,
) -> Vec<String> {
    let mut sized: Vec<(u64, &String)> =
        items.map(|(key, item)| (serde_json::to_vec_pretty(item).map_or(0, |j| j.len() as u64), key)).collect();
    sized.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut covered = 0;
    let mut keys = Vec::new();
    for (bytes, key) in sized {
        if covered >= excess {
            break;
        }
        covered += bytes;
        keys.push(key.clone());
    }
    keys
}

/// Drops the largest of `machine`'s kernels that `eligible` admits until `excess`
/// bytes are covered; returns how many were dropped.
fn drop_kernels(file: &mut HistoryFile, machine: &str, eligible: impl Fn(&str) -> bool, excess: u64) -> usize {
    let Some(entry) = file.machines.get_mut(machine) else { return 0 };
    let victims = largest_covering(entry.kernels.iter().filter(|(name, _)| eligible(name)), excess);
    for name in &victims {
        entry.kernels.remove(name);
    }
    victims.len()
}

/// Keeps the newer half (rounded up) of every timing's recent samples in `machine`'s
/// entry; `false` when no timing had more than one sample to give up.
fn halve_samples(file: &mut HistoryFile, machine: &str) -> bool {
    let Some(entry) = file.machines.get_mut(machine) else { return false };
    let mut changed = false;
    for timing in entry.kernels.values_mut().flat_map(|k| &mut k.buckets).flat_map(|b| &mut b.timings) {
        let n = timing.recent_ns.len();
        if n > 1 {
            timing.recent_ns.drain(..n / 2);
            changed = true;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, OpComplexity};
    use crate::persist::format::{BucketRecord, KernelRecord, MachineRecord, TimingRecord};
    use crate::persist::Fingerprint;

    fn kernel(buckets: usize, samples: usize) -> KernelRecord {
        let buckets = (0..buckets)
            .map(|i| BucketRecord {
                sizes: [1 << i, (2 << i) - 1],
                typical_size: 1 << i,
                chosen: Some(Backend::Simd),
                chosen_threads: None,
                timings: vec![TimingRecord {
                    backend: Backend::Simd,
                    threads: None,
                    count: samples as u64,
                    recent_ns: (0..samples as u64).collect(),
                }],
                excluded: Vec::new(),
                transfers: None,
            })
            .collect();
        KernelRecord {
            token_hash: "00".into(),
            complexity: OpComplexity::Low,
            buckets,
            loops: None,
            splits: None,
            gpu_loops: None,
        }
    }

    fn machine(cpu: &str, kernels: &[(&str, KernelRecord)]) -> MachineRecord {
        MachineRecord {
            fingerprint: Fingerprint {
                cpu: cpu.into(),
                cpu_features: vec![],
                gpu: None,
                crate_version: "1".into(),
                profile: Default::default(),
            },
            calibration: None,
            kernels: kernels.iter().map(|(n, k)| ((*n).to_owned(), k.clone())).collect(),
        }
    }

    fn size(f: &HistoryFile) -> u64 {
        serde_json::to_vec_pretty(f).unwrap().len() as u64
    }

    fn sample_file() -> HistoryFile {
        let mut f = HistoryFile::empty();
        f.machines.insert("here".into(), machine("a", &[("used", kernel(20, 16)), ("idle", kernel(20, 16))]));
        f.machines.insert("big".into(), machine("b", &[("x", kernel(30, 16))]));
        f.machines.insert("small".into(), machine("c", &[("x", kernel(2, 16))]));
        f
    }

    fn used() -> BTreeSet<String> {
        ["used".to_owned()].into()
    }

    #[test]
    fn a_file_that_fits_is_untouched() {
        let mut f = sample_file();
        let before = f.clone();
        let max = size(&f);
        assert_eq!(fit(&mut f, "here", &used(), max, size), Dropped::default());
        assert_eq!(f, before);
    }

    #[test]
    fn other_machines_go_first_largest_first() {
        let mut f = sample_file();
        let max = size(&f) - 1;
        let dropped = fit(&mut f, "here", &used(), max, size);
        assert_eq!(dropped, Dropped { machines: 1, ..Dropped::default() });
        assert!(size(&f) <= max);
        assert!(f.machines.contains_key("small") && !f.machines.contains_key("big"));
        assert_eq!(f.machines["here"].kernels.len(), 2);
    }

    #[test]
    fn then_unused_kernels_then_samples_then_used_kernels() {
        let mut f = sample_file();
        let mut only_used = HistoryFile::empty();
        only_used.machines.insert("here".into(), machine("a", &[("used", kernel(20, 16))]));
        let dropped = fit(&mut f, "here", &used(), size(&only_used), size);
        assert_eq!(dropped, Dropped { machines: 2, kernels: 1, halvings: 0 });
        assert_eq!(f, only_used);

        let max = size(&only_used) - 1;
        let dropped = fit(&mut f, "here", &used(), max, size);
        assert_eq!(dropped.halvings, 1, "{dropped}");
        let kept = &f.machines["here"].kernels["used"].buckets[0].timings[0].recent_ns;
        assert_eq!(kept, &(8..16).collect::<Vec<u64>>(), "the newest samples are kept");

        let dropped = fit(&mut f, "here", &used(), 10, size);
        assert!(f.machines["here"].kernels.is_empty(), "{dropped}");
        assert!(size(&f) <= 400, "an empty entry is all that is left: {}", size(&f));
    }
}
