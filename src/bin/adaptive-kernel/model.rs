//! What `report` shows, built once from a history file: the machine entries,
//! their kernels and per-bucket rows with each backend's median time, and the
//! crossovers and ties (the library's `report::crossovers`, as the tour and
//! `KERNEL.table()` find them), the backends `verify` excluded, what each bucket's calls moved
//! between host and device, and which entries a program on
//! this machine would start from where its own entry has no decision. The text
//! table, the JSON document and the plot all render this model, so they cannot
//! disagree. Its `Serialize` form *is* the `--json`
//! schema documented in `main.rs`: a field renamed here is a schema change.

use std::path::Path;

use adaptive_kernel::history::{BuildProfile, Fingerprint, GpuLoopRecord, HistoryFile, LoopRecord, SplitRecord};
use adaptive_kernel::{cost::CostParams, report, Backend, OpComplexity};
use serde::Serialize;

/// The version of the `--json` schema; bumped on any incompatible change.
pub(crate) const SCHEMA: u32 = 1;

/// The whole report (the `--json` document).
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    /// [`SCHEMA`].
    pub(crate) schema: u32,
    /// The history file read.
    pub(crate) history: String,
    /// Whether the file existed (a missing file reports no machines).
    pub(crate) exists: bool,
    /// The history file's format version.
    pub(crate) format_version: Option<u32>,
    /// Machine entries, this machine's first, then by key.
    pub(crate) machines: Vec<Machine>,
}

/// One machine entry.
#[derive(Debug, Serialize)]
pub(crate) struct Machine {
    /// The entry's key (a hash of CPU, CPU features, crate version and, for a debug build, its profile).
    pub(crate) key: String,
    /// Whether the key is this machine's (with this build of the crate).
    pub(crate) this_machine: bool,
    /// The fingerprint as recorded.
    pub(crate) cpu: String,
    pub(crate) cpu_features: Vec<String>,
    pub(crate) gpu: Option<String>,
    pub(crate) crate_version: String,
    /// The kind of build that recorded it, part of its key: `release` or `debug`.
    pub(crate) profile: BuildProfile,
    /// The cost model's figures, as in the history file (SI units: FLOP/s, B/s, s).
    pub(crate) calibration: Option<CostParams>,
    /// For another machine's entry near this one (`HistoryFile::nearest_entries`): its
    /// rank (1: the first a program here starts from) and the rule that makes it near.
    pub(crate) nearest: Option<Near>,
    /// Kernels by name.
    pub(crate) kernels: Vec<Kernel>,
}

/// How near another machine's entry is to this machine.
#[derive(Debug, Serialize, PartialEq)]
pub(crate) struct Near {
    /// 1 for the nearest; a kernel starts from the nearest entry holding it.
    pub(crate) rank: usize,
    /// `same_cpu`, `same_features` or `same_gpu` (`NearestRule::name`).
    pub(crate) rule: &'static str,
    /// The rule in words, for the table.
    #[serde(skip)]
    pub(crate) words: String,
}

/// One kernel's learned table on one machine.
#[derive(Debug, Serialize)]
pub(crate) struct Kernel {
    pub(crate) name: String,
    pub(crate) complexity: OpComplexity,
    pub(crate) token_hash: String,
    /// What the attribute did to each float reduction of the body, as the history
    /// file records it; `null` when the file predates the record.
    pub(crate) loops: Option<Vec<LoopRecord>>,
    /// Whether the Parallel variant splits each top-level loop of the body across
    /// threads, as the history file records it; `null` when the file predates the record.
    pub(crate) splits: Option<Vec<SplitRecord>>,
    /// Whether the GPU variant runs each top-level loop of the body on the device, as
    /// the history file records it; `null` when the file predates the record.
    pub(crate) gpu_loops: Option<Vec<GpuLoopRecord>>,
    /// Smallest sizes first.
    pub(crate) buckets: Vec<Bucket>,
    /// Where the chosen backend changes between consecutive settled buckets.
    pub(crate) crossovers: Vec<Crossover>,
}

/// One size bucket.
#[derive(Debug, Serialize)]
pub(crate) struct Bucket {
    /// First and last size, inclusive.
    pub(crate) sizes: [usize; 2],
    pub(crate) typical_size: usize,
    /// `null` while the bucket was still exploring.
    pub(crate) chosen: Option<Backend>,
    /// For a Parallel choice on fewer threads than its whole pool, how many (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) chosen_threads: Option<usize>,
    /// Measured backends, in Scalar, SIMD, Parallel, GPU order.
    pub(crate) backends: Vec<Timing>,
    /// Backends `verify` excluded here (their result disagreed with Scalar's).
    pub(crate) excluded: Vec<Excluded>,
    /// What the bucket's calls moved between host and device (absent when nothing moved).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) transfers: Option<Transfers>,
}

/// What a bucket's calls moved between host and device (the history file's `transfers`).
#[derive(Debug, Serialize, PartialEq)]
pub(crate) struct Transfers {
    /// Calls on the GPU.
    pub(crate) gpu_calls: u64,
    /// Calls on a CPU variant that first downloaded data kept on the device.
    pub(crate) cpu_calls: u64,
    /// Submissions to the device's queue in all those calls.
    pub(crate) submissions: u64,
    /// Bytes copied to the device.
    pub(crate) bytes_up: u64,
    /// Bytes copied back from it.
    pub(crate) bytes_down: u64,
    /// The share of the GPU calls' time spent moving data, 0 to 1 (`null` without a GPU call).
    pub(crate) moving_share: Option<f64>,
}

/// A backend `verify` excluded from a bucket.
#[derive(Debug, Serialize)]
pub(crate) struct Excluded {
    pub(crate) backend: Backend,
    /// The size of the call whose result disagreed.
    pub(crate) size: usize,
    /// The largest difference from the Scalar result then.
    pub(crate) largest_error: f64,
}

/// One backend's timing in one bucket.
#[derive(Debug, Serialize)]
pub(crate) struct Timing {
    pub(crate) backend: Backend,
    /// For the Parallel variant on fewer threads than its whole pool, how many (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) threads: Option<usize>,
    /// Samples over the entry's life.
    pub(crate) count: u64,
    /// Median of the kept samples, in nanoseconds (`null` when none is kept).
    pub(crate) median_ns: Option<f64>,
}

/// A change of the chosen backend between two consecutive settled buckets
/// (`report::Crossover`, the library's, with the field names of schema 1).
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub(crate) struct Crossover {
    /// The first size of the bucket where `to` is chosen.
    pub(crate) size: usize,
    /// The last size of the previous settled bucket, where `from` was chosen.
    pub(crate) below: usize,
    pub(crate) from: Backend,
    pub(crate) to: Backend,
    /// `from` and `to` measured within the router's tie band of each other from `size` on.
    pub(crate) tie: bool,
}

impl Crossover {
    /// The library's sentence for it: "SIMD beats Scalar from …" or "Scalar and SIMD tie from …".
    pub(crate) fn sentence(&self) -> String {
        let Crossover { size, below, from, to, tie } = *self;
        report::Crossover { size, below, from, to, tie }.to_string()
    }
}

impl Report {
    /// The report of `file` (read from `path`; `None` when there was none), keeping
    /// only the kernel named `kernel` when given.
    pub(crate) fn new(path: &Path, file: Option<HistoryFile>, kernel: Option<&str>) -> Report {
        let fingerprint = Fingerprint::current();
        let here = fingerprint.key();
        let exists = file.is_some();
        let format_version = file.as_ref().map(|f| f.version);
        let near = file.as_ref().map(|f| f.nearest_entries(&fingerprint)).unwrap_or_default();
        let nearest = |key: &str| {
            let (i, e) = near.iter().enumerate().find(|(_, e)| e.key == key)?;
            Some(Near { rank: i + 1, rule: e.rule.name(), words: e.rule.to_string() })
        };
        let mut machines: Vec<Machine> = file
            .map(|f| f.machines)
            .unwrap_or_default()
            .into_iter()
            .map(|(key, m)| Machine {
                nearest: nearest(&key),
                this_machine: key == here,
                key,
                cpu: m.fingerprint.cpu,
                cpu_features: m.fingerprint.cpu_features,
                gpu: m.fingerprint.gpu,
                crate_version: m.fingerprint.crate_version,
                profile: m.fingerprint.profile,
                calibration: m.calibration,
                kernels: m
                    .kernels
                    .into_iter()
                    .filter(|(name, _)| kernel.is_none_or(|k| k == name))
                    .map(|(name, k)| {
                        let mut buckets: Vec<Bucket> = k
                            .buckets
                            .into_iter()
                            .map(|b| {
                                let mut backends: Vec<Timing> = b
                                    .timings
                                    .iter()
                                    .map(|t| Timing {
                                        backend: t.backend,
                                        threads: t.threads,
                                        count: t.count,
                                        median_ns: t.median_ns(),
                                    })
                                    .collect();
                                // A narrower width, fewest threads first, before the whole pool.
                                backends.sort_by_key(|t| (t.backend, t.threads.is_none(), t.threads));
                                let excluded = b
                                    .excluded
                                    .iter()
                                    .map(|e| Excluded {
                                        backend: e.backend,
                                        size: e.size,
                                        largest_error: e.largest_error,
                                    })
                                    .collect();
                                let transfers = b.transfers.as_ref().map(|t| Transfers {
                                    gpu_calls: t.gpu_calls,
                                    cpu_calls: t.cpu_calls,
                                    submissions: t.submissions,
                                    bytes_up: t.bytes_up,
                                    bytes_down: t.bytes_down,
                                    moving_share: t.moving_share(),
                                });
                                Bucket {
                                    sizes: b.sizes,
                                    typical_size: b.typical_size,
                                    chosen: b.chosen,
                                    chosen_threads: b.chosen_threads,
                                    backends,
                                    excluded,
                                    transfers,
                                }
                            })
                            .collect();
                        buckets.sort_by_key(|b| b.sizes);
                        let crossovers = crossovers(&buckets);
                        Kernel {
                            name,
                            complexity: k.complexity,
                            token_hash: k.token_hash,
                            loops: k.loops,
                            splits: k.splits,
                            gpu_loops: k.gpu_loops,
                            buckets,
                            crossovers,
                        }
                    })
                    .collect(),
            })
            .collect();
        machines.sort_by(|a, b| b.this_machine.cmp(&a.this_machine).then_with(|| a.key.cmp(&b.key)));
        Report { schema: SCHEMA, history: path.display().to_string(), exists, format_version, machines }
    }

    /// Every kernel name in the report.
    pub(crate) fn kernel_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> =
            self.machines.iter().flat_map(|m| m.kernels.iter().map(|k| k.name.as_str())).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

impl Bucket {
    /// The median time of `backend` here (the Parallel variant's on its whole pool), in nanoseconds.
    pub(crate) fn median_ns(&self, backend: Backend) -> Option<f64> {
        self.median_on(backend, None)
    }

    /// The median time of `backend` on `threads` (`None`: the whole pool), in nanoseconds.
    pub(crate) fn median_on(&self, backend: Backend, threads: Option<usize>) -> Option<f64> {
        self.backends.iter().find(|t| t.backend == backend && t.threads == threads).and_then(|t| t.median_ns)
    }

    /// The chosen backend as a report shows it: `Parallel ×8` for a narrower width.
    pub(crate) fn chosen_label(&self) -> Option<String> {
        self.chosen.map(|b| report::backend_label(b, self.chosen_threads))
    }
}

/// The crossovers and ties of settled buckets, smallest sizes first (exploring buckets are skipped).
fn crossovers(buckets: &[Bucket]) -> Vec<Crossover> {
    let settled = buckets.iter().filter_map(|b| Some((b.sizes[0]..=b.sizes[1], b.chosen?, |x| b.median_ns(x))));
    report::crossovers(settled)
        .into_iter()
        .map(|c| Crossover { size: c.size, below: c.below, from: c.from, to: c.to, tie: c.tie })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(lo: usize, hi: usize, chosen: Option<Backend>) -> Bucket {
        Bucket {
            sizes: [lo, hi],
            typical_size: lo,
            chosen,
            chosen_threads: None,
            backends: vec![],
            excluded: vec![],
            transfers: None,
        }
    }

    fn timed(lo: usize, hi: usize, chosen: Backend, scalar_ns: f64, simd_ns: f64) -> Bucket {
        let t = |backend, ns| Timing { backend, threads: None, count: 5, median_ns: Some(ns) };
        Bucket {
            backends: vec![t(Backend::Scalar, scalar_ns), t(Backend::Simd, simd_ns)],
            ..bucket(lo, hi, Some(chosen))
        }
    }

    #[test]
    fn crossovers_skip_exploring_buckets_and_repeat_choices() {
        let b = [
            bucket(1, 1, Some(Backend::Scalar)),
            bucket(2, 3, Some(Backend::Scalar)),
            bucket(4, 7, None),
            bucket(8, 15, Some(Backend::Simd)),
            bucket(16, 31, Some(Backend::Gpu)),
        ];
        assert_eq!(
            crossovers(&b),
            vec![
                Crossover { size: 8, below: 3, from: Backend::Scalar, to: Backend::Simd, tie: false },
                Crossover { size: 16, below: 15, from: Backend::Simd, to: Backend::Gpu, tie: false },
            ]
        );
        assert!(crossovers(&b[..2]).is_empty());
    }

    #[test]
    fn a_change_within_the_routers_tie_band_is_a_tie() {
        // The memory-bound saxpy: 5.68 µs against 5.66 µs.
        let b = [
            timed(65_536, 131_071, Backend::Simd, 3000.0, 2000.0),
            timed(131_072, 262_143, Backend::Scalar, 5660.0, 5680.0),
        ];
        let found = crossovers(&b);
        assert_eq!(
            found,
            vec![Crossover { size: 131_072, below: 131_071, from: Backend::Simd, to: Backend::Scalar, tie: true }]
        );
        assert!(
            found[0].sentence().starts_with("Scalar and SIMD tie from 131,072 elements"),
            "{}",
            found[0].sentence()
        );
    }
}
