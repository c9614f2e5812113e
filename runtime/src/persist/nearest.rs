//! Starting from another machine's entry: which entry of the history file is
//! *nearest* to this machine when its own (its [`Fingerprint::key`]) has no
//! decision for a kernel or a size, and which of that entry's buckets a process
//! here may start from. Pure functions over the file's records, so the rule is
//! tested without files or processes.
//!
//! # The rule
//!
//! Another entry is near this machine only on the same CPU architecture, and
//! then, nearest first:
//!
//! 1. [`NearestRule::SameCpu`]: the same CPU model and SIMD features (recorded
//!    by another version of this crate);
//! 2. [`NearestRule::SameFeatures`]: another CPU model with the same SIMD
//!    features (compared as sets), so the SIMD variants run the same
//!    instructions and only the speeds differ;
//! 3. [`NearestRule::SameGpu`]: the SIMD features differ but the GPU adapter and
//!    driver are the same; only its buckets settled on the GPU are used, with
//!    only their GPU figures (its CPU figures describe another CPU). This
//!    machine's adapter is known only once the GPU has started, which happens in
//!    the background: a program that wants this rule calls
//!    `ops::gpu::is_available()` before its first kernel; in frozen mode history
//!    waits for the GPU when only this rule could apply, so every frozen run
//!    makes the same choice.
//!
//! Only entries recorded by the same kind of build ([`BuildProfile`](super::BuildProfile))
//! are near: a debug build's figures say nothing of a release build's on the same CPU.
//!
//! Nothing looser is used. Where the SIMD features differ, the SIMD (and
//! Parallel) variants are other code (AVX-512 clones against AVX2 ones, say) and
//! their figures say nothing about this machine's; across architectures nothing
//! is comparable. Among entries of the same rule the one recorded by the same
//! crate version comes first, then the one with the same GPU adapter, then by key.
//!
//! Each kernel starts from the nearest entry holding a table of the same kernel
//! version (token hash and complexity); of that table only settled buckets are
//! used (a bucket still exploring there has nothing decided to start from), and
//! only for sizes this machine's own entry has no bucket for: this machine's own
//! figures always win, and a kernel its entry lacks (a program tuned elsewhere,
//! then run here after `adaptive-kernel calibrate` created the entry) still
//! starts from the nearest one.
//!
//! What the router does with such a bucket (re-times it before trusting it, shows
//! it in its table, never saves it as this machine's figures until confirmed) is
//! the kernel layer's business: see `kernel::snapshot` and `kernel::policy`.

use std::collections::BTreeMap;
use std::fmt;

use super::fingerprint::Fingerprint;
use super::format::{BucketRecord, HistoryFile, KernelRecord, MachineRecord};
use crate::backend::Backend;

/// How near another machine's entry is to this machine (nearest first; see [`HistoryFile::nearest_entries`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum NearestRule {
    /// The same CPU model and SIMD features, recorded by another version of this crate.
    SameCpu,
    /// Another CPU model with the same SIMD features (and architecture).
    SameFeatures,
    /// Other SIMD features, the same GPU adapter and driver: only GPU decisions are used.
    SameGpu,
}

impl NearestRule {
    /// The rule's name in `adaptive-kernel report --json`: `same_cpu`, `same_features`, `same_gpu`.
    pub const fn name(self) -> &'static str {
        match self {
            NearestRule::SameCpu => "same_cpu",
            NearestRule::SameFeatures => "same_features",
            NearestRule::SameGpu => "same_gpu",
        }
    }
}

impl fmt::Display for NearestRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NearestRule::SameCpu => "same CPU model and features",
            NearestRule::SameFeatures => "same CPU features",
            NearestRule::SameGpu => "same GPU adapter, GPU decisions only",
        })
    }
}

/// Another machine's entry that this machine may start from, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NearestEntry {
    /// The entry's key in the history file ([`Fingerprint::key`] of that machine and build).
    pub key: String,
    /// That machine's CPU, as its fingerprint records it.
    pub cpu: String,
    /// How near it is.
    pub rule: NearestRule,
}

impl fmt::Display for NearestEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (entry {}, {})", self.cpu, self.key, self.rule)
    }
}

/// The architecture a fingerprint's CPU string starts with (`x86_64 AMD EPYC…` → `x86_64`).
fn arch(fp: &Fingerprint) -> &str {
    fp.cpu.split(' ').next().unwrap_or("")
}

fn same_features(a: &Fingerprint, b: &Fingerprint) -> bool {
    fn set(fp: &Fingerprint) -> Vec<&str> {
        let mut v: Vec<&str> = fp.cpu_features.iter().map(String::as_str).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
    set(a) == set(b)
}

/// How near `there` is to `here` (see the module docs), or `None` when it is not near enough to start from.
pub(crate) fn rule(here: &Fingerprint, there: &Fingerprint) -> Option<NearestRule> {
    if arch(here) != arch(there) {
        return None;
    }
    if same_features(here, there) {
        return Some(if here.cpu == there.cpu { NearestRule::SameCpu } else { NearestRule::SameFeatures });
    }
    match (&here.gpu, &there.gpu) {
        (Some(a), Some(b)) if a == b => Some(NearestRule::SameGpu),
        _ => None,
    }
}

/// The entries of `machines` other than `own` (this machine's key) that `here` may
/// start from, nearest first (the order of the module docs).
pub(crate) fn ranked(here: &Fingerprint, own: &str, machines: &BTreeMap<String, MachineRecord>) -> Vec<NearestEntry> {
    let mut near: Vec<(NearestRule, bool, bool, &String, &MachineRecord)> = machines
        .iter()
        .filter(|(key, m)| key.as_str() != own && m.fingerprint.profile == here.profile)
        .filter_map(|(key, m)| {
            let rule = rule(here, &m.fingerprint)?;
            let other_version = m.fingerprint.crate_version != here.crate_version;
            let other_gpu = here.gpu.is_none() || m.fingerprint.gpu != here.gpu;
            Some((rule, other_version, other_gpu, key, m))
        })
        .collect();
    near.sort_by(|a, b| (a.0, a.1, a.2, a.3).cmp(&(b.0, b.1, b.2, b.3)));
    near.into_iter()
        .map(|(rule, _, _, key, m)| NearestEntry { key: key.clone(), cpu: m.fingerprint.cpu.clone(), rule })
        .collect()
}

/// Whether only [`NearestRule::SameGpu`] could pick an entry for `here`, were its GPU
/// adapter known: no entry but its own is near by the CPU rules, and some entry of
/// the same architecture recorded a GPU.
pub(crate) fn only_gpu_could_decide(here: &Fingerprint, own: &str, machines: &BTreeMap<String, MachineRecord>) -> bool {
    let others = || {
        machines
            .iter()
            .filter(|(key, m)| key.as_str() != own && m.fingerprint.profile == here.profile)
            .map(|(_, m)| &m.fingerprint)
    };
    let by_cpu = others().any(|there| arch(here) == arch(there) && same_features(here, there));
    !by_cpu && others().any(|there| arch(here) == arch(there) && there.gpu.is_some())
}

/// The buckets of `theirs` (another entry's table of a kernel, near by `rule`) that a
/// process here starts from: those settled there whose sizes `own` (this machine's
/// buckets of the kernel) has no bucket for; by [`NearestRule::SameGpu`] only those
/// settled on the GPU, keeping only their GPU figures. Exclusions (`verify`) are kept:
/// a variant found wrong elsewhere stays out here until its bucket is measured afresh.
pub(crate) fn borrowable(rule: NearestRule, theirs: &KernelRecord, own: &[BucketRecord]) -> Vec<BucketRecord> {
    theirs
        .buckets
        .iter()
        .filter(|b| b.chosen.is_some() && !own.iter().any(|o| o.sizes == b.sizes))
        .filter(|b| rule != NearestRule::SameGpu || b.chosen == Some(Backend::Gpu))
        .map(|b| {
            let mut b = b.clone();
            if rule == NearestRule::SameGpu {
                b.timings.retain(|t| t.backend == Backend::Gpu);
            }
            b
        })
        .collect()
}

impl HistoryFile {
    /// The entries of this file other than `here`'s own ([`Fingerprint::key`]) that a
    /// process on `here` starts from where its own entry has no decision, nearest
    /// first: same architecture, then the same CPU model and SIMD features (another
    /// crate version), the same SIMD features, or the same GPU adapter (GPU
    /// decisions only); entries near by none of these are not listed. The decisions
    /// are re-timed on their first calls before they are trusted.
    ///
    /// ```
    /// # use adaptive_kernel_runtime as adaptive_kernel;
    /// use adaptive_kernel::{Fingerprint, HistoryFile, NearestRule};
    ///
    /// let here = Fingerprint::current();
    /// let other = Fingerprint { cpu: format!("{} Another CPU", std::env::consts::ARCH), ..here.clone() };
    /// let json = serde_json::json!({
    ///     "format": "adaptive-kernel-history", "version": 2,
    ///     "machines": { other.key(): { "fingerprint": other, "kernels": {} } },
    /// });
    /// let file: HistoryFile = serde_json::from_value(json).unwrap();
    /// let near = file.nearest_entries(&here);
    /// assert_eq!((near[0].key.as_str(), near[0].rule), (other.key().as_str(), NearestRule::SameFeatures));
    /// ```
    pub fn nearest_entries(&self, here: &Fingerprint) -> Vec<NearestEntry> {
        ranked(here, &here.key(), &self.machines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::OpComplexity;
    use crate::persist::format::TimingRecord;

    fn fp(cpu: &str, features: &[&str], gpu: Option<&str>, version: &str) -> Fingerprint {
        Fingerprint {
            cpu: cpu.into(),
            cpu_features: features.iter().map(|f| (*f).to_owned()).collect(),
            gpu: gpu.map(str::to_owned),
            crate_version: version.into(),
            profile: crate::persist::BuildProfile::current(),
        }
    }

    fn machines(fps: &[Fingerprint]) -> BTreeMap<String, MachineRecord> {
        fps.iter()
            .map(|f| (f.key(), MachineRecord { fingerprint: f.clone(), calibration: None, kernels: BTreeMap::new() }))
            .collect()
    }

    const HERE: &str = "x86_64 AMD EPYC 7B13";

    #[test]
    fn the_rules_in_order_and_nothing_looser() {
        let here = fp(HERE, &["avx2", "fma"], Some("RTX | 550"), "0.2.0");
        let r = |there: &Fingerprint| rule(&here, there);
        assert_eq!(r(&fp(HERE, &["fma", "avx2"], None, "0.1.0")), Some(NearestRule::SameCpu), "features as a set");
        assert_eq!(r(&fp("x86_64 Intel Xeon", &["avx2", "fma"], None, "0.2.0")), Some(NearestRule::SameFeatures));
        let avx512 = ["avx512f", "avx2", "fma"];
        assert_eq!(r(&fp("x86_64 Intel Xeon", &avx512, Some("RTX | 550"), "0.2.0")), Some(NearestRule::SameGpu));
        assert_eq!(r(&fp("x86_64 Intel Xeon", &avx512, Some("RTX | 535"), "0.2.0")), None, "another driver");
        assert_eq!(r(&fp("x86_64 Intel Xeon", &avx512, None, "0.2.0")), None, "other SIMD variants");
        assert_eq!(r(&fp("aarch64 Neoverse", &["avx2", "fma"], Some("RTX | 550"), "0.2.0")), None, "another arch");
        let unknown_gpu = fp(HERE, &["avx2"], None, "0.2.0");
        assert_eq!(rule(&unknown_gpu, &fp("x86_64 X", &["avx512f"], None, "0.2.0")), None);
    }

    #[test]
    fn ranked_nearest_first_without_this_machines_own_entry() {
        let here = fp(HERE, &["avx2", "fma"], Some("gpu A"), "0.2.0");
        let all = [
            here.clone(),
            fp("x86_64 Intel Xeon", &["avx2", "fma"], Some("gpu B"), "0.2.0"),
            fp("x86_64 Intel Core", &["avx2", "fma"], Some("gpu A"), "0.2.0"),
            fp("x86_64 Intel Old", &["avx2", "fma"], Some("gpu A"), "0.1.0"),
            fp(HERE, &["avx2", "fma"], None, "0.1.0"),
            fp("x86_64 Intel Sapphire", &["avx512f", "avx2", "fma"], Some("gpu A"), "0.2.0"),
            fp("aarch64 Neoverse", &["neon"], Some("gpu A"), "0.2.0"),
        ];
        let got: Vec<(String, NearestRule)> =
            ranked(&here, &here.key(), &machines(&all)).into_iter().map(|e| (e.cpu, e.rule)).collect();
        let want = [
            (HERE, NearestRule::SameCpu),
            ("x86_64 Intel Core", NearestRule::SameFeatures), // same version, same GPU
            ("x86_64 Intel Xeon", NearestRule::SameFeatures), // same version, other GPU
            ("x86_64 Intel Old", NearestRule::SameFeatures),  // other version
            ("x86_64 Intel Sapphire", NearestRule::SameGpu),
        ];
        assert_eq!(got, want.map(|(c, r)| (c.to_owned(), r)));
        assert!(ranked(&here, &here.key(), &machines(&all[..1])).is_empty(), "only its own entry: none");
    }

    #[test]
    fn another_kind_of_build_is_never_near() {
        use crate::persist::BuildProfile;
        let here = fp(HERE, &["avx2", "fma"], None, "0.2.0");
        let other_build = match here.profile {
            BuildProfile::Release => BuildProfile::Debug,
            BuildProfile::Debug => BuildProfile::Release,
        };
        let same_cpu_other_build = Fingerprint { profile: other_build, ..here.clone() };
        assert_ne!(same_cpu_other_build.key(), here.key(), "its own key");
        let same_features = Fingerprint { cpu: "x86_64 Intel Core".into(), ..same_cpu_other_build.clone() };
        let all = [same_cpu_other_build, same_features];
        assert!(ranked(&here, &here.key(), &machines(&all)).is_empty(), "nothing borrowed across builds");
        let gpu_only =
            [Fingerprint { cpu_features: vec!["avx512f".into()], gpu: Some("gpu".into()), ..all[0].clone() }];
        assert!(!only_gpu_could_decide(&here, &here.key(), &machines(&gpu_only)));
    }

    #[test]
    fn the_gpu_is_waited_for_only_when_it_alone_could_decide() {
        let here = fp(HERE, &["avx2"], None, "0.2.0");
        let own = here.key();
        let gpu_only = [fp("x86_64 X", &["avx512f"], Some("gpu"), "0.2.0")];
        assert!(only_gpu_could_decide(&here, &own, &machines(&gpu_only)));
        let by_cpu = [gpu_only[0].clone(), fp("x86_64 Y", &["avx2"], None, "0.2.0")];
        assert!(!only_gpu_could_decide(&here, &own, &machines(&by_cpu)), "the CPU rules decide");
        let no_gpu = [fp("x86_64 X", &["avx512f"], None, "0.2.0")];
        assert!(!only_gpu_could_decide(&here, &own, &machines(&no_gpu)), "no GPU recorded anywhere");
    }

    fn bucket(lo: usize, chosen: Option<Backend>) -> BucketRecord {
        let t = |backend| TimingRecord { backend, threads: None, count: 3, recent_ns: vec![100, 110, 120] };
        BucketRecord {
            sizes: [lo, 2 * lo - 1],
            typical_size: lo,
            chosen,
            chosen_threads: None,
            timings: vec![t(Backend::Scalar), t(Backend::Simd), t(Backend::Gpu)],
            excluded: vec![],
            transfers: None,
        }
    }

    #[test]
    fn borrows_settled_buckets_this_machine_lacks_and_by_the_gpu_rule_only_gpu_ones() {
        let theirs = KernelRecord {
            token_hash: "7".into(),
            complexity: OpComplexity::Medium,
            loops: None,
            splits: None,
            gpu_loops: None,
            buckets: vec![
                bucket(8, Some(Backend::Simd)),
                bucket(16, Some(Backend::Simd)),
                bucket(32, None),
                bucket(64, Some(Backend::Gpu)),
            ],
        };
        let own = [bucket(16, Some(Backend::Scalar))];
        let sizes = |v: Vec<BucketRecord>| v.iter().map(|b| b.sizes[0]).collect::<Vec<_>>();
        assert_eq!(sizes(borrowable(NearestRule::SameFeatures, &theirs, &own)), [8, 64], "own 16 wins; 32 explores");
        let gpu = borrowable(NearestRule::SameGpu, &theirs, &own);
        assert_eq!(sizes(gpu.clone()), [64]);
        assert_eq!(gpu[0].timings.iter().map(|t| t.backend).collect::<Vec<_>>(), [Backend::Gpu], "CPU figures dropped");
    }
}
