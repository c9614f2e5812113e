//! The learned routing table of a kernel, as returned by [`crate::Kernel::table`],
//! with a `Display` that prints it for people.

use std::fmt;
use std::ops::RangeInclusive;
use std::time::Duration;

use super::loops::LoopSummary;
use super::spec::{DecisionKind, LoopRewrite};
use crate::backend::{Backend, OpComplexity};
use crate::bucket::bucket_of;

/// One backend's measurements in one bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendReport {
    /// The backend.
    pub backend: Backend,
    /// Samples kept (warm-ups excluded), over the entry's life, loaded history included.
    pub count: u64,
    /// Median of the recent samples.
    pub centre: Option<Duration>,
    /// Median absolute deviation of the recent samples.
    pub spread: Option<Duration>,
    /// Ruled out in the current exploration round (predicted or measured too slow).
    pub pruned: bool,
}

/// One size bucket of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BucketReport {
    /// The bucket's index (see [`crate::bucket_of`]).
    pub bucket: usize,
    /// The sizes that share this bucket's decision.
    pub sizes: RangeInclusive<usize>,
    /// Measured backends, in [`Backend::ALL`] order.
    pub backends: Vec<BackendReport>,
    /// The settled backend; `None` while exploring.
    pub chosen: Option<Backend>,
    /// How the bucket was decided (`exploring` while it is not).
    pub decided_by: DecisionKind,
    /// Backends `verify` excluded here: their result disagreed with Scalar's.
    pub excluded: Vec<Backend>,
}

impl BucketReport {
    /// The report of `backend` in this bucket, if it was measured.
    pub fn backend(&self, backend: Backend) -> Option<&BackendReport> {
        self.backends.iter().find(|b| b.backend == backend)
    }
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
    /// Buckets that have been called or loaded, smallest sizes first.
    pub rows: Vec<BucketReport>,
}

impl KernelTable {
    /// The row of the bucket that holds `size`, if that bucket has been seen.
    pub fn row_for(&self, size: usize) -> Option<&BucketReport> {
        let b = bucket_of(size);
        self.rows.iter().find(|r| r.bucket == b)
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
        write!(f, "{}", LoopSummary::new("  ", self.loops))?;
        write!(f, "  {:>23}", "sizes")?;
        for b in Backend::ALL {
            write!(f, "  {:>16}", format!("{b} µs (n)"))?;
        }
        writeln!(f, "  {:<8} by", "chosen")?;
        for r in &self.rows {
            let sizes = format!("{}..={}", r.sizes.start(), r.sizes.end());
            write!(f, "  {sizes:>23}")?;
            for b in Backend::ALL {
                let cell = match r.backend(b) {
                    None => "-".to_owned(),
                    Some(m) => {
                        let mark = if m.pruned { "x" } else { "" };
                        format!("{} ({}){mark}", Micros(m.centre), m.count)
                    }
                };
                write!(f, "  {cell:>16}")?;
            }
            let chosen = r.chosen.map_or("…".to_owned(), |b| b.to_string());
            writeln!(f, "  {chosen:<8} {}", r.decided_by)?;
        }
        Ok(())
    }
}
