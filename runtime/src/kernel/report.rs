//! The learned routing table of a kernel, as returned by [`crate::Kernel::table`],
//! with a `Display` that prints it for people: what the attribute did to the
//! body's loops, a row per size bucket, and a sentence per change of the chosen
//! backend (a crossover, or a tie: `crossover`).
//!
//! Decisions and figures that came from another machine's entry (the nearest
//! one, when this machine's has none for a size) are marked until this machine
//! has confirmed or replaced them: a row's [`BucketReport::from`], a figure's
//! [`BackendReport::other_machine`].

use std::fmt;
use std::ops::RangeInclusive;
use std::time::Duration;

use super::as_written::AsWritten;
use super::crossover::{crossovers, Crossover};
use super::loops::LoopSummary;
use super::spec::{DecisionKind, LoopGpu, LoopRewrite, LoopSplit};
use super::transfers::TransferReport;
use crate::backend::{Backend, OpComplexity};
use crate::bucket::bucket_of;
use crate::persist::NearestEntry;

/// One backend's measurements in one bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendReport {
    /// The backend.
    pub backend: Backend,
    /// For the Parallel variant on fewer threads than its whole pool (a width the
    /// router explores on pools of 4 threads or more), how many; `None` for the whole
    /// pool and every other backend. Shown as `Parallel ×8`.
    pub threads: Option<usize>,
    /// Samples kept (warm-ups excluded), over the entry's life, loaded history included.
    pub count: u64,
    /// Median of the recent samples.
    pub centre: Option<Duration>,
    /// Median absolute deviation of the recent samples.
    pub spread: Option<Duration>,
    /// Ruled out in the current exploration round (predicted or measured too slow).
    pub pruned: bool,
    /// These figures are another machine's ([`KernelTable::borrowed_from`]): not yet measured here.
    pub other_machine: bool,
}

/// One size bucket of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BucketReport {
    /// The bucket's index (see [`crate::bucket_of`]).
    pub bucket: usize,
    /// The sizes that share this bucket's decision.
    pub sizes: RangeInclusive<usize>,
    /// Measured backends, in [`Backend::ALL`] order, the Parallel variant's narrower widths
    /// (fewest threads first) before its whole pool.
    pub backends: Vec<BackendReport>,
    /// The settled backend; `None` while exploring.
    pub chosen: Option<Backend>,
    /// For a Parallel choice on fewer threads than its whole pool, how many.
    pub chosen_threads: Option<usize>,
    /// How the bucket was decided (`exploring` while it is not).
    pub decided_by: DecisionKind,
    /// Backends `verify` excluded here: their result disagreed with Scalar's.
    pub excluded: Vec<Backend>,
    /// The other machine's entry this bucket's decision came from, while this machine
    /// has not confirmed it (it is being re-timed; in frozen mode, for good); `None`
    /// for a decision of this machine's.
    pub from: Option<NearestEntry>,
    /// What this bucket's calls moved between host and device (GPU calls, and CPU calls
    /// on data kept on the device); `None` when they moved nothing.
    pub transfers: Option<TransferReport>,
}

impl BucketReport {
    /// The report of `backend` in this bucket, if it was measured (the Parallel
    /// variant's on its whole pool).
    pub fn backend(&self, backend: Backend) -> Option<&BackendReport> {
        self.backends.iter().find(|b| b.backend == backend && b.threads.is_none())
    }

    /// The report of the Parallel variant on `threads` threads, fewer than its whole
    /// pool, if that width was measured here.
    pub fn parallel_on(&self, threads: usize) -> Option<&BackendReport> {
        self.backends.iter().find(|b| b.backend == Backend::Parallel && b.threads == Some(threads))
    }

    /// The chosen backend as the table shows it: `Parallel ×8` for a narrower width.
    pub fn chosen_label(&self) -> Option<String> {
        self.chosen.map(|b| backend_label(b, self.chosen_threads))
    }
}

/// How a table names `backend` on `threads` threads: its name (`Parallel`), and for the
/// Parallel variant on fewer threads than its whole pool, `×threads` (`Parallel ×8`).
pub fn backend_label(backend: Backend, threads: Option<usize>) -> String {
    match threads {
        Some(t) => format!("{backend} ×{t}"),
        None => backend.to_string(),
    }
}

/// The columns of a table of per-backend figures: each backend in [`Backend::ALL`]
/// order, the Parallel variant's whole pool followed by each of its narrower widths in
/// `narrow` (thread counts, any order, repeats allowed), most threads first.
pub fn backend_columns(narrow: impl IntoIterator<Item = usize>) -> Vec<(Backend, Option<usize>)> {
    let mut narrow: Vec<usize> = narrow.into_iter().collect();
    narrow.sort_unstable_by(|a, b| b.cmp(a));
    narrow.dedup();
    let mut columns = Vec::new();
    for b in Backend::ALL {
        columns.push((b, None));
        if b == Backend::Parallel {
            columns.extend(narrow.iter().map(|&t| (b, Some(t))));
        }
    }
    columns
}

/// A kernel's learned routing table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelTable {
    /// The kernel's name.
    pub kernel: &'static str,
    /// Its complexity class.
    pub complexity: OpComplexity,
    /// The backend it is forced to with [`crate::Kernel::force`], if any.
    pub forced: Option<Backend>,
    /// What the attribute did to each float reduction of its body ([`crate::KernelSpec::loops`]).
    pub loops: &'static [LoopRewrite],
    /// Whether its Parallel variant splits each top-level loop across threads ([`crate::KernelSpec::splits`]).
    pub splits: &'static [LoopSplit],
    /// Whether its GPU variant runs each top-level loop on the device ([`crate::KernelSpec::gpu_loops`]).
    pub gpu_loops: &'static [LoopGpu],
    /// Buckets that have been called or loaded, smallest sizes first.
    pub rows: Vec<BucketReport>,
    /// The other machine's entry some of these decisions or figures came from, while
    /// any still are ([`crate::HistoryStatus::Nearest`]).
    pub borrowed_from: Option<NearestEntry>,
    /// The calls that ran the body as written because an ndarray array was not in
    /// standard layout ([`crate::Kernel::ran_as_written`]); `None` when none has.
    pub as_written: Option<AsWritten>,
}

impl KernelTable {
    /// The row of the bucket that holds `size`, if that bucket has been seen.
    pub fn row_for(&self, size: usize) -> Option<&BucketReport> {
        let b = bucket_of(size);
        self.rows.iter().find(|r| r.bucket == b)
    }

    /// Where the chosen backend changes between consecutive settled rows, each a
    /// crossover or a tie ([`crate::crossovers`]), by the rows' median times.
    pub fn crossovers(&self) -> Vec<Crossover> {
        crossovers(self.rows.iter().filter_map(|r| {
            // The Parallel variant's figure is its chosen width's, where a narrower one is chosen.
            let figure = |b| {
                let report = match (b, r.chosen, r.chosen_threads) {
                    (Backend::Parallel, Some(Backend::Parallel), Some(t)) => r.parallel_on(t),
                    _ => r.backend(b),
                };
                Some(report?.centre?.as_secs_f64())
            };
            Some((r.sizes.clone(), r.chosen?, figure))
        }))
    }
}

struct Micros(Option<Duration>);

impl fmt::Display for Micros {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.pad("-"),
            Some(d) => f.pad(&format!("{:.1}", d.as_secs_f64() * 1e6)),
        }
    }
}

impl fmt::Display for KernelTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.kernel, self.complexity)?;
        if let Some(b) = self.forced {
            write!(f, ", forced to {b}")?;
        }
        writeln!(f)?;
        write!(f, "{}", LoopSummary::new("  ", self.loops).with_splits(self.splits).with_gpu(self.gpu_loops))?;
        if let Some(a) = &self.as_written {
            writeln!(f, "  arrays: {a}")?;
        }
        // A column per backend, and per narrower width of the Parallel variant measured anywhere.
        let columns = backend_columns(self.rows.iter().flat_map(|r| r.backends.iter().filter_map(|b| b.threads)));
        write!(f, "  {:>23}", "sizes")?;
        for &(b, t) in &columns {
            write!(f, "  {:>16}", format!("{} µs (n)", backend_label(b, t)))?;
        }
        writeln!(f, "  {:<8} by", "chosen")?;
        for r in &self.rows {
            let sizes = format!("{}..={}", r.sizes.start(), r.sizes.end());
            write!(f, "  {sizes:>23}")?;
            for &(b, t) in &columns {
                let report = match t {
                    Some(t) => r.parallel_on(t),
                    None => r.backend(b),
                };
                let cell = match report {
                    None => "-".to_owned(),
                    Some(m) => {
                        let pruned = if m.pruned { "x" } else { "" };
                        let other = if m.other_machine { "*" } else { "" };
                        format!("{} ({}){pruned}{other}", Micros(m.centre), m.count)
                    }
                };
                write!(f, "  {cell:>16}")?;
            }
            let chosen = r.chosen_label().unwrap_or_else(|| "…".to_owned());
            write!(f, "  {chosen:<8} {}", r.decided_by)?;
            if let Some(from) = &r.from {
                write!(f, ", from {} ({}), not yet confirmed here", from.cpu, from.rule)?;
            }
            writeln!(f)?;
        }
        let moved: Vec<(&BucketReport, &TransferReport)> =
            self.rows.iter().filter_map(|r| Some((r, r.transfers.as_ref()?))).collect();
        if !moved.is_empty() {
            writeln!(
                f,
                "  {:>23}  {:>9}  {:>11}  {:>12}  {:>12}  moving data",
                "gpu transfers, sizes", "calls", "submissions", "up", "down"
            )?;
            for (r, t) in moved {
                let sizes = format!("{}..={}", r.sizes.start(), r.sizes.end());
                let calls = if t.cpu_calls > 0 {
                    format!("{}+{} cpu", t.gpu_calls, t.cpu_calls)
                } else {
                    t.gpu_calls.to_string()
                };
                let share =
                    t.moving_share().map_or_else(|| "-".to_owned(), |s| format!("{:.0}% of GPU time", 100.0 * s));
                writeln!(
                    f,
                    "  {sizes:>23}  {calls:>9}  {:>11}  {:>12}  {:>12}  {share}",
                    format!("{:.2}/call", t.submissions_per_call()),
                    crate::numeric::bytes(t.bytes_up),
                    crate::numeric::bytes(t.bytes_down),
                )?;
            }
        }
        for c in self.crossovers() {
            writeln!(f, "  {c}")?;
        }
        if let Some(from) = &self.borrowed_from {
            writeln!(f, "  * another machine's figures, not yet measured here: {from}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persist::NearestRule;

    fn figure(backend: Backend, micros: u64) -> BackendReport {
        let us = Some(Duration::from_micros(micros));
        BackendReport { backend, threads: None, count: 5, centre: us, spread: us, pruned: false, other_machine: false }
    }

    fn settled_row(lo: usize, chosen: Backend, scalar: u64, simd: u64) -> BucketReport {
        BucketReport {
            bucket: bucket_of(lo),
            sizes: lo..=2 * lo - 1,
            backends: vec![figure(Backend::Scalar, scalar), figure(Backend::Simd, simd)],
            chosen: Some(chosen),
            chosen_threads: None,
            decided_by: DecisionKind::Historical,
            excluded: vec![],
            from: None,
            transfers: None,
        }
    }

    #[test]
    fn the_table_says_crossovers_and_ties_apart() {
        let table = KernelTable {
            kernel: "saxpy",
            complexity: OpComplexity::Low,
            forced: None,
            loops: &[],
            splits: &[],
            gpu_loops: &[],
            rows: vec![
                settled_row(2048, Backend::Scalar, 100, 150),
                settled_row(4096, Backend::Simd, 400, 200),
                settled_row(131_072, Backend::Scalar, 5660, 5680),
            ],
            borrowed_from: None,
            as_written: None,
        };
        let text = table.to_string();
        assert!(
            text.contains("\n  SIMD beats Scalar from 4,096 elements (Scalar was chosen up to 4,095).\n"),
            "{text}"
        );
        assert!(
            text.contains("\n  Scalar and SIMD tie from 131,072 elements (within the router's 5% tie band"),
            "{text}"
        );
        assert!(!text.contains("Scalar beats SIMD"), "a tie is not a crossover:\n{text}");
    }

    #[test]
    fn decisions_and_figures_from_another_machine_are_marked() {
        let from = NearestEntry {
            key: "00112233aabbccdd".into(),
            cpu: "x86_64 Other CPU".into(),
            rule: NearestRule::SameFeatures,
        };
        let us = |n| Some(Duration::from_micros(n));
        let figure = |backend, centre, other_machine| BackendReport {
            backend,
            threads: None,
            count: 5,
            centre: us(centre),
            spread: us(1),
            pruned: false,
            other_machine,
        };
        let row = |lo: usize, from: Option<NearestEntry>, other_machine| BucketReport {
            bucket: bucket_of(lo),
            sizes: lo..=2 * lo - 1,
            backends: vec![figure(Backend::Scalar, 900, other_machine), figure(Backend::Simd, 100, false)],
            chosen: Some(Backend::Simd),
            chosen_threads: None,
            decided_by: DecisionKind::Historical,
            excluded: vec![],
            from,
            transfers: None,
        };
        let table = KernelTable {
            kernel: "k",
            complexity: OpComplexity::Medium,
            forced: None,
            loops: &[],
            splits: &[],
            gpu_loops: &[],
            rows: vec![row(4096, Some(from.clone()), true), row(8192, None, false)],
            borrowed_from: Some(from),
            as_written: None,
        };
        let text = table.to_string();
        let lines: Vec<&str> = text.lines().collect();
        let borrowed = lines.iter().find(|l| l.contains("4096..=8191")).unwrap();
        assert!(
            borrowed.ends_with("historical, from x86_64 Other CPU (same CPU features), not yet confirmed here"),
            "{text}"
        );
        assert!(borrowed.contains("900.0 (5)*"), "{text}");
        let own = lines.iter().find(|l| l.contains("8192..=16383")).unwrap();
        assert!(own.trim_end().ends_with("historical") && !own.contains('*'), "{text}");
        assert_eq!(
            lines.last().copied(),
            Some("  * another machine's figures, not yet measured here: x86_64 Other CPU (entry 00112233aabbccdd, same CPU features)")
        );
    }

    #[test]
    fn a_narrower_width_has_a_column_and_is_shown_as_parallel_times_threads() {
        let us = |n| Some(Duration::from_micros(n));
        let figure = |backend, threads, centre| BackendReport {
            backend,
            threads,
            count: 5,
            centre: us(centre),
            spread: us(1),
            pruned: false,
            other_machine: false,
        };
        let row = BucketReport {
            bucket: bucket_of(4096),
            sizes: 4096..=8191,
            backends: vec![
                figure(Backend::Simd, None, 100),
                figure(Backend::Parallel, Some(4), 30),
                figure(Backend::Parallel, Some(8), 40),
                figure(Backend::Parallel, None, 60),
            ],
            chosen: Some(Backend::Parallel),
            chosen_threads: Some(4),
            decided_by: DecisionKind::Historical,
            excluded: vec![],
            from: None,
            transfers: None,
        };
        assert_eq!(row.backend(Backend::Parallel).and_then(|b| b.centre), us(60), "the whole pool's");
        assert_eq!(row.parallel_on(4).and_then(|b| b.centre), us(30));
        assert_eq!(row.chosen_label().as_deref(), Some("Parallel ×4"));
        let table = KernelTable {
            kernel: "k",
            complexity: OpComplexity::Low,
            forced: None,
            loops: &[],
            splits: &[],
            gpu_loops: &[],
            rows: vec![row],
            borrowed_from: None,
            as_written: None,
        };
        let text = table.to_string();
        let header = text.lines().find(|l| l.contains("sizes")).unwrap();
        let at = |s: &str| header.find(s).unwrap_or_else(|| panic!("{s} in {header}"));
        assert!(at("Parallel µs") < at("Parallel ×8 µs") && at("Parallel ×8 µs") < at("Parallel ×4 µs"), "{text}");
        assert!(at("Parallel ×4 µs") < at("GPU µs"), "{text}");
        assert!(text.contains("30.0 (5)") && text.contains("Parallel ×4 historical"), "{text}");
    }
}
