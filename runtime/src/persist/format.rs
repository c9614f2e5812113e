//! The history file's records: serde types of its own, versioned, independent
//! of the router's in-memory state (`crate::kernel` converts at the boundary).
//!
//! # Format 2
//!
//! ```json
//! {
//!   "format": "adaptive-kernel-history",
//!   "version": 2,
//!   "machines": {
//!     "<fingerprint key>": {
//!       "fingerprint": { "cpu": "…", "cpu_features": ["avx2", …], "gpu": null, "crate_version": "0.1.0" },
//!       "calibration": { "scalar_flops": 2.1e9, … },
//!       "kernels": {
//!         "my_crate::dot": {
//!           "token_hash": "9f0c…",
//!           "complexity": "Medium",
//!           "loops": [ { "line": 12, "idiom": "for range +=", "variants": ["Simd"], "reason": "" } ],
//!           "splits": [ { "line": 10, "idiom": "for range", "reason": "" } ],
//!           "gpu_loops": [ { "line": 10, "idiom": "for range", "reason": "" } ],
//!           "buckets": [
//!             { "sizes": [8193, 10000], "typical_size": 10000, "chosen": "Parallel", "chosen_threads": 8,
//!               "timings": [ { "backend": "Scalar", "count": 3, "recent_ns": [5100, 5000, 5050] },
//!                            { "backend": "Parallel", "threads": 8, "count": 3, "recent_ns": [900, 950, 910] }, … ],
//!               "excluded": [ { "backend": "Gpu", "size": 9000, "largest_error": 0.5 } ] }
//!           ]
//!         }
//!       }
//!     }
//!   }
//! }
//! ```
//!
//! A bucket is keyed by the sizes it covers (`sizes`: first and last, inclusive),
//! not by an index, so a record stays meaningful if bucket boundaries change; a
//! backend is named, not numbered, so adding one keeps old files readable.
//! Fields added within a format are optional with defaults, so older files
//! still load and readers that predate a field ignore it: `loops` (what the
//! attribute did to the kernel's float reductions, for `adaptive-kernel
//! report`; a file without it reads as "not recorded"), `splits` (what the
//! Parallel variant did to its top-level loops, likewise), `gpu_loops` (which
//! of them the GPU variant runs on the device, likewise) and `excluded` (the
//! backends `verify` ruled out, omitted when none) and `transfers` (what the
//! bucket's calls moved between host and device, `{ "gpu_calls", "cpu_calls",
//! "submissions", "bytes_up", "bytes_down", "gpu_ns", "moving_ns" }`, omitted when
//! nothing moved; a process that measured the bucket but moved nothing keeps the
//! file's).
//!
//! The Parallel variant's narrower widths came the same way: `threads` on a
//! timing or an exclusion of the Parallel variant measured on fewer threads
//! than its whole pool (half or a quarter of it), and `chosen_threads` beside
//! a choice of one, both absent for the whole pool and for every other
//! backend (so a file from a pool of 2 or 3 threads is what it was). A width
//! the loading process's pool does not offer is dropped. A build that
//! predates them reads such a file as before: a narrower width's timing is
//! written before the whole pool's, which replaces it as that build loads
//! the bucket, and a narrower choice reads as the whole pool's, which it
//! re-times before trusting (as every loaded decision).
//!
//! # Format 1
//!
//! Read, never written: it serialised the router's bucket state keyed by bucket
//! index. [`parse`] converts it to format 2 (the indices are those of the same
//! bucketing, which has not changed since).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fingerprint::Fingerprint;
use crate::backend::{Backend, OpComplexity};
use crate::bucket::bucket_range;
use crate::cost::CostParams;
use crate::numeric::median;

/// The `format` field every history file starts with.
pub(crate) const FORMAT: &str = "adaptive-kernel-history";
/// The format version this build writes.
pub(crate) const VERSION: u32 = 2;
/// Files larger than this are not read, and a save that would exceed it drops data first (`persist::trim`).
pub(crate) const MAX_FILE_BYTES: u64 = 16 << 20;

/// A whole history file, as [`read_history`](crate::read_history) returns it (JSON
/// layout in the module docs of `persist::format`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HistoryFile {
    /// Always `adaptive-kernel-history`.
    pub format: String,
    /// The format version (older versions are converted when read, so this is the current one).
    pub version: u32,
    /// One entry per machine, keyed by [`Fingerprint::key`].
    pub machines: BTreeMap<String, MachineRecord>,
}

impl HistoryFile {
    /// A file with no machine entries.
    pub(crate) fn empty() -> HistoryFile {
        HistoryFile { format: FORMAT.to_owned(), version: VERSION, machines: BTreeMap::new() }
    }
}

/// One machine's entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MachineRecord {
    /// The machine and build the entry was recorded on.
    pub fingerprint: Fingerprint,
    /// The cost model's figures measured on it, if saved.
    #[serde(default)]
    pub calibration: Option<CostParams>,
    /// Per kernel name, its learned table.
    #[serde(default)]
    pub kernels: BTreeMap<String, KernelRecord>,
}

/// One kernel's learned table on one machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct KernelRecord {
    /// The macro's token hash, as 16 hex digits (JSON numbers lose precision above 2^53).
    pub token_hash: String,
    /// The kernel's complexity class.
    pub complexity: OpComplexity,
    /// What the attribute did to each float reduction of its body, in source
    /// order (its spec's [`LoopRewrite`](crate::LoopRewrite)s); `None` in a file
    /// written before this was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<Vec<LoopRecord>>,
    /// Whether its Parallel variant splits each top-level `for` loop of its body
    /// across threads, in source order (its spec's [`LoopSplit`](crate::LoopSplit)s);
    /// `None` in a file written before this was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub splits: Option<Vec<SplitRecord>>,
    /// Whether its GPU variant runs each top-level `for` loop of its body on the
    /// device, in source order (its spec's [`LoopGpu`](crate::LoopGpu)s); `None` in a
    /// file written before this was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_loops: Option<Vec<GpuLoopRecord>>,
    /// Its buckets, smallest sizes first.
    #[serde(default)]
    pub buckets: Vec<BucketRecord>,
}

/// One float reduction of a kernel's body and what the attribute did to it: a
/// [`LoopRewrite`](crate::LoopRewrite) as the history file keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoopRecord {
    /// The source line of its `for`, or of its `sum`/`product`/`fold`.
    pub line: u32,
    /// Its shape, e.g. `for range +=`.
    pub idiom: String,
    /// The variants that compute it in lanes; empty when left as written.
    #[serde(default)]
    pub variants: Vec<Backend>,
    /// Why it was left as written, in one word; empty when rewritten.
    #[serde(default)]
    pub reason: String,
    /// The libm functions it computes with the runtime's formulas in lanes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vector_math: Vec<String>,
}

/// One top-level loop of a kernel's body and whether its Parallel variant splits
/// it across threads: a [`LoopSplit`](crate::LoopSplit) as the history file keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SplitRecord {
    /// The source line of its `for`.
    pub line: u32,
    /// What it walks, e.g. `for range`.
    pub idiom: String,
    /// Why it was left on one thread, in one word; empty when split.
    #[serde(default)]
    pub reason: String,
}

/// One top-level loop of a kernel's body and whether its GPU variant runs it on
/// the device: a [`LoopGpu`](crate::LoopGpu) as the history file keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GpuLoopRecord {
    /// The source line of its `for`.
    pub line: u32,
    /// What it walks, e.g. `for range`.
    pub idiom: String,
    /// Why it stays on the host, in one word; empty when it runs on the GPU.
    #[serde(default)]
    pub reason: String,
}

/// One size bucket of a kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BucketRecord {
    /// The first and last size of the bucket, inclusive.
    pub sizes: [usize; 2],
    /// A size seen in this bucket, to scale predictions between buckets.
    pub typical_size: usize,
    /// The settled backend; `None` while it was still exploring.
    #[serde(default)]
    pub chosen: Option<Backend>,
    /// For a Parallel choice on fewer threads than its whole pool, how many; absent
    /// otherwise (and in files written before widths were routed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_threads: Option<usize>,
    /// Per-backend timings, for the backends that were measured.
    #[serde(default)]
    pub timings: Vec<TimingRecord>,
    /// Backends `verify` found disagreeing with the Scalar variant here: never
    /// chosen for this bucket again. Absent from files without any (and from
    /// files written before it existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<ExclusionRecord>,
    /// What the calls of the last process that measured this bucket moved between host
    /// and device; absent when they moved nothing (and from files written before it
    /// existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfers: Option<TransferRecord>,
}

/// What a bucket's calls moved between host and device in one process: a
/// [`TransferReport`](crate::TransferReport) as the history file keeps it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TransferRecord {
    /// Calls on the GPU.
    pub gpu_calls: u64,
    /// Calls on a CPU variant that first downloaded data kept on the device.
    #[serde(default)]
    pub cpu_calls: u64,
    /// Submissions to the device's queue.
    pub submissions: u64,
    /// Bytes copied to the device.
    pub bytes_up: u64,
    /// Bytes copied back from it.
    pub bytes_down: u64,
    /// The GPU calls' time, in nanoseconds.
    pub gpu_ns: u64,
    /// The part of it estimated to be moving data, in nanoseconds.
    pub moving_ns: u64,
}

impl TransferRecord {
    /// The share of the GPU calls' time spent moving data, 0 to 1 (`None` without a GPU call).
    pub fn moving_share(&self) -> Option<f64> {
        (self.gpu_calls > 0 && self.gpu_ns > 0).then(|| (self.moving_ns as f64 / self.gpu_ns as f64).min(1.0))
    }
}

/// A backend excluded from a bucket because its result disagreed with Scalar's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExclusionRecord {
    /// The excluded backend.
    pub backend: Backend,
    /// For the Parallel variant on fewer threads than its whole pool, how many; absent
    /// otherwise (and in files written before widths were routed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// The size of the call whose result disagreed.
    pub size: usize,
    /// The largest difference from the Scalar result found then.
    pub largest_error: f64,
}

/// One backend's timings in one bucket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TimingRecord {
    /// The backend.
    pub backend: Backend,
    /// For the Parallel variant on fewer threads than its whole pool, how many; absent
    /// otherwise (and in files written before widths were routed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Samples kept over the entry's whole life.
    pub count: u64,
    /// The most recent samples in nanoseconds, oldest first.
    pub recent_ns: Vec<u64>,
}

impl TimingRecord {
    /// The median of [`recent_ns`](Self::recent_ns) in nanoseconds (the mean of the two
    /// middle samples for an even count): the centre the router compares backends by.
    /// `None` when no sample is kept.
    pub fn median_ns(&self) -> Option<f64> {
        median(&mut self.recent_ns.iter().map(|&x| x as f64).collect::<Vec<_>>())
    }
}

/// The token hash as the file spells it.
pub(crate) fn hex(h: u64) -> String {
    format!("{h:016x}")
}

/// What reading a file found.
pub(crate) enum Parsed {
    /// A file of ours, converted to the current format if it was older.
    Ours(HistoryFile),
    /// Ours but unreadable: set aside at the next save.
    Corrupt(String),
    /// Not ours to touch.
    Refused(String),
}

/// Classifies and reads the bytes of a history file.
pub(crate) fn parse(bytes: &[u8]) -> Parsed {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Corrupt("it is empty".to_owned());
    }
    #[derive(Deserialize)]
    struct Header {
        format: String,
        version: u32,
    }
    match serde_json::from_slice::<Header>(bytes) {
        Ok(h) if h.format != FORMAT => Parsed::Refused(format!("its format is `{}`, not `{FORMAT}`", h.format)),
        Ok(h) if h.version > VERSION => {
            Parsed::Refused(format!("it was written by a newer version (format {} > {VERSION})", h.version))
        }
        Ok(h) if h.version == 1 => match serde_json::from_slice::<v1::File>(bytes) {
            Ok(f) => Parsed::Ours(f.upgrade()),
            Err(e) => Parsed::Corrupt(format!("it is damaged: {e}")),
        },
        Ok(h) if h.version < VERSION => Parsed::Corrupt(format!("format version {} is obsolete", h.version)),
        Ok(_) => match serde_json::from_slice::<HistoryFile>(bytes) {
            Ok(f) => Parsed::Ours(f),
            Err(e) => Parsed::Corrupt(format!("it is damaged: {e}")),
        },
        Err(_) if looks_like_ours(bytes) => Parsed::Corrupt("it is truncated or damaged".to_owned()),
        Err(_) => Parsed::Refused("it is not an adaptive-kernel history file".to_owned()),
    }
}

/// Whether the start of the file names our format (a truncated file of ours still does).
fn looks_like_ours(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(256)];
    String::from_utf8_lossy(head).contains(FORMAT)
}

/// Format 1, for reading only.
mod v1 {
    use super::*;

    #[derive(Deserialize)]
    pub(super) struct File {
        machines: BTreeMap<String, Machine>,
    }

    #[derive(Deserialize)]
    struct Machine {
        fingerprint: Fingerprint,
        #[serde(default)]
        calibration: Option<CostParams>,
        #[serde(default)]
        kernels: BTreeMap<String, Kernel>,
    }

    #[derive(Deserialize)]
    struct Kernel {
        token_hash: String,
        complexity: OpComplexity,
        buckets: BTreeMap<usize, Bucket>,
    }

    #[derive(Deserialize)]
    struct Bucket {
        stats: [Stats; 3],
        phase: Phase,
        typical_size: usize,
    }

    #[derive(Deserialize)]
    struct Stats {
        count: u64,
        recent_ns: Vec<u64>,
    }

    #[derive(Deserialize)]
    #[serde(tag = "state", rename_all = "snake_case")]
    enum Phase {
        Exploring,
        Settled { backend: Backend },
    }

    impl File {
        pub(super) fn upgrade(self) -> HistoryFile {
            let machines = self
                .machines
                .into_iter()
                .map(|(key, m)| {
                    let kernels = m
                        .kernels
                        .into_iter()
                        .map(|(name, k)| {
                            let buckets = k.buckets.into_iter().filter_map(|(i, b)| b.upgrade(i)).collect();
                            (
                                name,
                                KernelRecord {
                                    token_hash: k.token_hash,
                                    complexity: k.complexity,
                                    loops: None,
                                    splits: None,
                                    gpu_loops: None,
                                    buckets,
                                },
                            )
                        })
                        .collect();
                    (key, MachineRecord { fingerprint: m.fingerprint, calibration: m.calibration, kernels })
                })
                .collect();
            HistoryFile { format: FORMAT.to_owned(), version: VERSION, machines }
        }
    }

    impl Bucket {
        fn upgrade(self, index: usize) -> Option<BucketRecord> {
            let range = bucket_range(index)?;
            // Format 1 had three backends, in this order.
            let timings = [Backend::Scalar, Backend::Simd, Backend::Gpu]
                .into_iter()
                .zip(self.stats)
                .filter(|(_, s)| !s.recent_ns.is_empty())
                .map(|(backend, s)| TimingRecord { backend, threads: None, count: s.count, recent_ns: s.recent_ns })
                .collect();
            let chosen = match self.phase {
                Phase::Settled { backend } => Some(backend),
                Phase::Exploring => None,
            };
            Some(BucketRecord {
                sizes: [*range.start(), *range.end()],
                typical_size: self.typical_size,
                chosen,
                chosen_threads: None,
                timings,
                excluded: Vec::new(),
                transfers: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_files() {
        assert!(matches!(parse(b""), Parsed::Corrupt(_)));
        assert!(matches!(parse(b"{\"format\":\"adaptive-kernel-history\",\"vers"), Parsed::Corrupt(_)));
        assert!(matches!(parse(b"{\"name\": \"my-app\", \"version\": 3}"), Parsed::Refused(_)));
        assert!(matches!(parse(b"hello world"), Parsed::Refused(_)));
        assert!(matches!(
            parse(b"{\"format\":\"adaptive-kernel-history\",\"version\":99,\"machines\":{}}"),
            Parsed::Refused(_)
        ));
        assert!(matches!(
            parse(b"{\"format\":\"adaptive-kernel-history\",\"version\":2,\"machines\":{}}"),
            Parsed::Ours(_)
        ));
        assert!(matches!(
            parse(b"{\"format\":\"adaptive-kernel-history\",\"version\":2,\"machines\":7}"),
            Parsed::Corrupt(_)
        ));
    }

    #[test]
    fn a_file_without_widths_reads_as_whole_pool_timings_and_widths_round_trip() {
        let old = br#"{"format":"adaptive-kernel-history","version":2,"machines":{"abc":{
            "fingerprint":{"cpu":"x","cpu_features":["avx2"],"gpu":null,"crate_version":"0.1.0"},
            "kernels":{"k":{"token_hash":"00000000000000ff","complexity":"Low","buckets":[
              {"sizes":[8,15],"typical_size":9,"chosen":"Parallel",
               "timings":[{"backend":"Parallel","count":3,"recent_ns":[7,8,9]}]}]}}}}}"#;
        let Parsed::Ours(mut file) = parse(old) else { panic!("ours") };
        let b = &mut file.machines.get_mut("abc").unwrap().kernels.get_mut("k").unwrap().buckets[0];
        assert_eq!((b.chosen, b.chosen_threads, b.timings[0].threads), (Some(Backend::Parallel), None, None));
        assert!(!serde_json::to_string(&file).unwrap().contains("threads"), "nothing added where no width was");
        let b = &mut file.machines.get_mut("abc").unwrap().kernels.get_mut("k").unwrap().buckets[0];
        b.chosen_threads = Some(4);
        b.timings
            .insert(0, TimingRecord { backend: Backend::Parallel, threads: Some(4), count: 3, recent_ns: vec![5] });
        let written = serde_json::to_string(&file).unwrap();
        assert!(written.contains(r#""chosen_threads":4"#) && written.contains(r#""threads":4"#), "{written}");
        let Parsed::Ours(back) = parse(written.as_bytes()) else { panic!("ours") };
        assert_eq!(back, file);
    }

    #[test]
    fn reads_format_one() {
        let v1 = br#"{"format":"adaptive-kernel-history","version":1,"machines":{"abc":{
            "fingerprint":{"cpu":"x","cpu_features":["avx2"],"gpu":null,"crate_version":"0.1.0"},
            "kernels":{"k":{"token_hash":"00000000000000ff","complexity":"Medium","buckets":{
              "BUCKET":{"stats":[{"count":3,"recent_ns":[10,11,12]},{"count":4,"recent_ns":[5,5,6,5]},{"count":0,"recent_ns":[]}],
                    "phase":{"state":"settled","backend":"Simd","by":"historical"},"typical_size":9000,
                    "pruned":[false,false,false],"round_base":[0,0,0]}}}}}}}"#;
        let index = crate::bucket::bucket_of(9000);
        let v1 = String::from_utf8_lossy(v1).replace("BUCKET", &index.to_string());
        let Parsed::Ours(file) = parse(v1.as_bytes()) else { panic!("format 1 is ours") };
        assert_eq!(file.version, VERSION);
        let k = &file.machines["abc"].kernels["k"];
        let range = bucket_range(index).unwrap();
        assert_eq!(
            k.buckets,
            vec![BucketRecord {
                sizes: [*range.start(), *range.end()],
                typical_size: 9000,
                chosen: Some(Backend::Simd),
                chosen_threads: None,
                timings: vec![
                    TimingRecord { backend: Backend::Scalar, threads: None, count: 3, recent_ns: vec![10, 11, 12] },
                    TimingRecord { backend: Backend::Simd, threads: None, count: 4, recent_ns: vec![5, 5, 6, 5] },
                ],
                excluded: vec![],
                transfers: None,
            }]
        );
    }
}
