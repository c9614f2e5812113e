//! The boundary between live kernels and the history file: pure conversions
//! from a kernel's bucket states to the file's records for a save, and from
//! the records back into bucket states when a kernel first runs.
//!
//! Only decisions and timings cross; exploration bookkeeping (pruning, round
//! counters) does not. A record is placed in the bucket that holds its sizes;
//! one whose sizes no longer fit one bucket (the bucketing changed) is dropped.

use std::collections::{BTreeMap, BTreeSet};

use super::spec::{DecisionKind, KernelSpec, LoopRewrite};
use super::stats::{BucketState, Exclusion, Verify};
use crate::backend::Backend;
use crate::bucket::{bucket_of, bucket_range};
use crate::persist::format::{self, BucketRecord, ExclusionRecord, KernelRecord, LoopRecord, TimingRecord};
use crate::persist::merge::KernelSnapshot;

/// Bucket states from saved records. A saved GPU decision is kept only when
/// `gpu_usable` (the kernel has a GPU variant and a usable device exists);
/// otherwise that bucket explores again.
pub(super) fn buckets_from(records: Vec<BucketRecord>, gpu_usable: bool) -> Vec<(usize, BucketState)> {
    let mut out = Vec::with_capacity(records.len());
    for record in records {
        let [lo, hi] = record.sizes;
        let bucket = bucket_of(lo);
        if lo > hi || bucket_of(hi) != bucket {
            continue;
        }
        let mut bs = BucketState::new(record.typical_size.clamp(lo, hi));
        for t in record.timings {
            let stats = &mut bs.stats[t.backend.index()];
            stats.count = t.count;
            stats.recent_ns = t.recent_ns;
            stats.sanitize();
        }
        for e in record.excluded {
            if e.backend != Backend::Scalar {
                bs.excluded[e.backend.index()] = Some(Exclusion { size: e.size, largest_error: e.largest_error });
            }
        }
        match record.chosen {
            Some(b) if bs.excluded[b.index()].is_some() => {}
            Some(Backend::Gpu) if !gpu_usable => {}
            Some(backend) => {
                bs.settle_on(backend, DecisionKind::Historical);
                // Confirmed by the first calls of this run (see `policy`'s warm start).
                bs.verify = bs.of(backend).centre().map(|saved_centre| Verify { saved_centre });
            }
            None => {}
        }
        out.push((bucket, bs));
    }
    out
}

/// A kernel's buckets as a snapshot for a save; `touched` are the buckets this process measured.
pub(super) fn snapshot(
    spec: &KernelSpec,
    buckets: &BTreeMap<usize, BucketState>,
    touched: &BTreeSet<usize>,
) -> KernelSnapshot {
    let sizes = |bucket: usize| bucket_range(bucket).map(|r| [*r.start(), *r.end()]);
    KernelSnapshot {
        name: spec.name.to_owned(),
        record: KernelRecord {
            token_hash: format::hex(spec.token_hash),
            complexity: spec.complexity,
            loops: Some(spec.loops.iter().map(loop_record).collect()),
            buckets: buckets.iter().filter_map(|(&b, bs)| Some(record(sizes(b)?, bs))).collect(),
        },
        touched: touched.iter().filter_map(|&b| sizes(b)).collect(),
    }
}

fn loop_record(l: &LoopRewrite) -> LoopRecord {
    LoopRecord { line: l.line, idiom: l.idiom.to_owned(), variants: l.variants.to_vec(), reason: l.reason.to_owned() }
}

fn record(sizes: [usize; 2], bs: &BucketState) -> BucketRecord {
    BucketRecord {
        sizes,
        typical_size: bs.typical_size,
        chosen: bs.settled(),
        timings: Backend::ALL
            .into_iter()
            .filter(|b| !bs.of(*b).is_empty())
            .map(|b| TimingRecord { backend: b, count: bs.of(b).count, recent_ns: bs.of(b).recent_ns.clone() })
            .collect(),
        excluded: Backend::ALL
            .into_iter()
            .filter_map(|b| {
                let e = bs.excluded[b.index()]?;
                Some(ExclusionRecord { backend: b, size: e.size, largest_error: e.largest_error })
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::OpComplexity;
    use crate::kernel::stats::Phase;

    #[test]
    fn round_trips_decisions_and_timings() {
        let spec = KernelSpec {
            name: "k",
            complexity: OpComplexity::Low,
            has_gpu: true,
            has_parallel: false,
            token_hash: 7,
            loops: &[LoopRewrite { line: 4, idiom: "for range +=", variants: &[Backend::Simd], reason: "" }],
        };
        let mut bs = BucketState::new(5000);
        bs.stats[Backend::Simd.index()].record(40, 5);
        bs.stats[Backend::Gpu.index()].record(90, 5);
        bs.phase = Phase::Settled { backend: Backend::Gpu, by: DecisionKind::Historical };
        bs.excluded[Backend::Parallel.index()] = Some(Exclusion { size: 5000, largest_error: 0.5 });
        let b = bucket_of(5000);
        let buckets = BTreeMap::from([(b, bs.clone())]);
        let snap = snapshot(&spec, &buckets, &BTreeSet::from([b]));
        assert_eq!(snap.touched.len(), 1);
        let loops = snap.record.loops.as_deref().unwrap();
        assert_eq!(
            (loops[0].line, loops[0].idiom.as_str(), loops[0].variants.as_slice()),
            (4, "for range +=", &[Backend::Simd][..])
        );
        let back = buckets_from(snap.record.buckets.clone(), true);
        assert_eq!(back.len(), 1);
        let (at, loaded) = &back[0];
        assert_eq!((*at, loaded.settled(), loaded.typical_size), (b, Some(Backend::Gpu), 5000));
        for x in Backend::ALL {
            assert_eq!(loaded.of(x).recent_ns, bs.of(x).recent_ns);
            assert_eq!(loaded.of(x).last_ns, 0, "loaded figures are from another run");
        }
        assert!(loaded.verify.is_some(), "a loaded decision awaits confirmation");
        assert_eq!(loaded.excluded, bs.excluded, "exclusions survive a restart");
        let no_gpu = buckets_from(snap.record.buckets, false);
        assert_eq!(no_gpu[0].1.settled(), None, "a GPU decision without a GPU explores again");
    }

    #[test]
    fn records_that_straddle_buckets_are_dropped() {
        let r = BucketRecord {
            sizes: [100, 5000],
            typical_size: 200,
            chosen: Some(Backend::Simd),
            timings: vec![],
            excluded: vec![],
        };
        assert!(buckets_from(vec![r], true).is_empty());
    }
}
