//! The boundary between live kernels and the history file: pure conversions
//! from a kernel's bucket states to the file's records for a save, and from
//! the records back into bucket states when a kernel first runs.
//!
//! Only decisions and timings cross; exploration bookkeeping (pruning, round
//! counters) does not. A record is placed in the bucket that holds its sizes;
//! one whose sizes no longer fit one bucket (the bucketing changed) is dropped.
//!
//! Buckets borrowed from another machine's entry (`persist::nearest`) are marked
//! as such, with their figures, and their decision is confirmed more strictly
//! (`policy`'s warm start). A save writes this machine's entry only with what
//! this machine measured: a borrowed decision not yet confirmed here is not
//! saved at all (the next run starts from the other entry again, which the file
//! still holds), and once confirmed or re-decided its bucket is saved without
//! the figures that are still the other machine's.

use std::collections::{BTreeMap, BTreeSet};

use super::bucket_state::{BucketState, Exclusion};
use super::policy::{self, Policy};
use super::spec::{DecisionKind, KernelSpec, LoopRewrite};
use super::transfers::TransferReport;
use crate::backend::Backend;
use crate::bucket::{bucket_of, bucket_range};
use crate::candidate::{Candidate, CandidateSet, Width};
use crate::persist::format::{
    self, BucketRecord, ExclusionRecord, GpuLoopRecord, KernelRecord, LoopRecord, SplitRecord, TimingRecord,
    TransferRecord,
};
use crate::persist::merge::KernelSnapshot;

/// Bucket states from this machine's saved records. A saved decision is kept only
/// when its backend may run now (`candidates`: a GPU decision needs a usable device,
/// a Parallel one two threads) and `verify` has not excluded it; otherwise that
/// bucket explores again. A kept CPU decision is trusted (settled, re-timed by the
/// ordinary sampling); a GPU one is confirmed first.
pub(super) fn buckets_from(records: Vec<BucketRecord>, candidates: CandidateSet) -> Vec<(usize, BucketState)> {
    records.into_iter().filter_map(|r| bucket_from(r, candidates, false)).collect()
}

/// Bucket states from another machine's settled records (the nearest entry's), marked
/// as such: each decision is re-timed against its contenders before it is confirmed
/// (`policy`'s warm start). A record whose decision may not run here, or without a
/// figure for its chosen backend to check, is left out (its bucket starts fresh).
pub(super) fn borrowed_buckets_from(records: Vec<BucketRecord>, candidates: CandidateSet) -> Vec<(usize, BucketState)> {
    records.into_iter().filter_map(|r| bucket_from(r, candidates, true)).filter(|(_, bs)| bs.is_borrowed()).collect()
}

fn bucket_from(record: BucketRecord, candidates: CandidateSet, borrowed: bool) -> Option<(usize, BucketState)> {
    let [lo, hi] = record.sizes;
    let bucket = bucket_of(lo);
    if lo > hi || bucket_of(hi) != bucket {
        return None;
    }
    let mut bs = BucketState::new(record.typical_size.clamp(lo, hi));
    // A narrower Parallel width is the one of this pool that computes on as many threads. A
    // kernel that may not run Parallel here never asks (asking builds the pool).
    bs.pool = if candidates.contains(Candidate::Parallel) { crate::ops::par::pool_threads() } else { 1 };
    let candidate = |backend: Backend, threads: Option<usize>| match threads {
        None => Some(Candidate::of(backend)),
        Some(t) if backend == Backend::Parallel => Width::of_threads(t, bs.pool).map(Candidate::parallel),
        Some(_) => None,
    };
    for t in record.timings {
        let Some(c) = candidate(t.backend, t.threads) else { continue };
        let stats = &mut bs.stats[c];
        stats.count = t.count;
        stats.recent_ns = t.recent_ns;
        stats.borrowed = borrowed;
        stats.sanitize();
    }
    for e in record.excluded {
        match candidate(e.backend, e.threads) {
            Some(c) if c != Candidate::Scalar => {
                bs.excluded[c] = Some(Exclusion { size: e.size, largest_error: e.largest_error });
            }
            _ => {}
        }
    }
    let runnable = bs.allowed(candidates);
    let chosen = record.chosen.and_then(|b| candidate(b, record.chosen_threads));
    if let Some(backend) = chosen.filter(|&c| runnable.contains(c)) {
        let saved_centre = bs.of(backend).centre();
        let contenders = borrowed.then(|| policy::contenders(&bs, backend, candidates, &Policy::DEFAULT));
        if !borrowed || saved_centre.is_some() {
            bs.settle_on(backend, DecisionKind::Historical);
            // This machine's CPU decision is trusted; a GPU decision (the adapter is not part of
            // the fingerprint) and another machine's are confirmed by the first calls of this
            // run (see `policy`'s warm start).
            match saved_centre {
                Some(saved_ns) if borrowed || backend == Candidate::Gpu => bs.await_confirmation(saved_ns, contenders),
                _ => bs.trust_loaded(),
            }
        }
    }
    Some((bucket, bs))
}

/// A kernel's buckets as a snapshot for a save; `touched` are the buckets this process measured.
pub(super) fn snapshot(
    spec: &KernelSpec,
    buckets: &BTreeMap<usize, BucketState>,
    touched: &BTreeSet<usize>,
    transfers: &BTreeMap<usize, TransferReport>,
) -> KernelSnapshot {
    let sizes = |bucket: usize| bucket_range(bucket).map(|r| [*r.start(), *r.end()]);
    KernelSnapshot {
        name: spec.name.to_owned(),
        record: KernelRecord {
            token_hash: format::hex(spec.token_hash),
            complexity: spec.complexity,
            loops: Some(spec.loops.iter().map(loop_record).collect()),
            splits: Some(
                spec.splits
                    .iter()
                    .map(|l| SplitRecord { line: l.line, idiom: l.idiom.to_owned(), reason: l.reason.to_owned() })
                    .collect(),
            ),
            gpu_loops: Some(
                spec.gpu_loops
                    .iter()
                    .map(|l| GpuLoopRecord { line: l.line, idiom: l.idiom.to_owned(), reason: l.reason.to_owned() })
                    .collect(),
            ),
            // A borrowed decision not confirmed here is not this machine's to save.
            buckets: buckets
                .iter()
                .filter(|(_, bs)| !bs.is_borrowed())
                .filter_map(|(&b, bs)| Some(bucket_record(sizes(b)?, bs, transfers.get(&b))))
                .collect(),
        },
        touched: touched.iter().filter_map(|&b| sizes(b)).collect(),
    }
}

fn loop_record(l: &LoopRewrite) -> LoopRecord {
    LoopRecord {
        line: l.line,
        idiom: l.idiom.to_owned(),
        variants: l.variants.to_vec(),
        reason: l.reason.to_owned(),
        vector_math: l.vector_math.iter().map(|&f| f.to_owned()).collect(),
    }
}

fn bucket_record(sizes: [usize; 2], bs: &BucketState, transfers: Option<&TransferReport>) -> BucketRecord {
    BucketRecord {
        sizes,
        typical_size: bs.typical_size,
        chosen: bs.chosen().map(Candidate::backend),
        chosen_threads: bs.chosen().and_then(|c| c.narrow_threads(bs.pool)),
        timings: bs
            .stats
            .iter()
            .filter(|(_, s)| !s.is_empty() && !s.borrowed)
            .map(|(c, s)| TimingRecord {
                backend: c.backend(),
                threads: c.narrow_threads(bs.pool),
                count: s.count,
                recent_ns: s.recent_ns.clone(),
            })
            .collect(),
        excluded: bs
            .excluded
            .iter()
            .filter_map(|(c, e)| {
                let e = e.as_ref()?;
                let (backend, threads) = (c.backend(), c.narrow_threads(bs.pool));
                Some(ExclusionRecord { backend, threads, size: e.size, largest_error: e.largest_error })
            })
            .collect(),
        transfers: transfers.map(|t| TransferRecord {
            gpu_calls: t.gpu_calls,
            cpu_calls: t.cpu_calls,
            submissions: t.submissions,
            bytes_up: t.bytes_up,
            bytes_down: t.bytes_down,
            gpu_ns: u64::try_from(t.gpu_time.as_nanos()).unwrap_or(u64::MAX),
            moving_ns: u64::try_from(t.moving.as_nanos()).unwrap_or(u64::MAX),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::OpComplexity;
    use crate::kernel::bucket_state::Phase;

    #[test]
    fn round_trips_decisions_and_timings() {
        let spec = KernelSpec {
            name: "k",
            complexity: OpComplexity::Low,
            has_gpu: true,
            has_parallel: false,
            token_hash: 7,
            loops: &[LoopRewrite {
                line: 4,
                idiom: "for range +=",
                variants: &[Backend::Simd],
                reason: "",
                vector_math: &["exp"],
            }],
            splits: &[],
            gpu_loops: &[],
        };
        let mut bs = BucketState::new(5000);
        bs.stats[Backend::Simd].push(40, 5);
        bs.stats[Backend::Gpu].push(90, 5);
        bs.settle_on(Candidate::Gpu, DecisionKind::Historical);
        bs.excluded[Backend::Parallel] = Some(Exclusion { size: 5000, largest_error: 0.5 });
        let b = bucket_of(5000);
        let buckets = BTreeMap::from([(b, bs.clone())]);
        let snap = snapshot(&spec, &buckets, &BTreeSet::from([b]), &BTreeMap::new());
        assert_eq!(snap.touched.len(), 1);
        let loops = snap.record.loops.as_deref().unwrap();
        assert_eq!(
            (loops[0].line, loops[0].idiom.as_str(), loops[0].variants.as_slice()),
            (4, "for range +=", &[Backend::Simd][..])
        );
        let back = buckets_from(snap.record.buckets.clone(), CandidateSet::ALL);
        assert_eq!(back.len(), 1);
        let (at, loaded) = &back[0];
        assert_eq!((*at, loaded.chosen_backend(), loaded.typical_size), (b, Some(Backend::Gpu), 5000));
        for x in Backend::ALL {
            assert_eq!(loaded.of(x).recent_ns, bs.of(x).recent_ns);
            assert_eq!(loaded.of(x).last_ns, 0, "loaded figures are from another run");
        }
        assert!(loaded.confirming().is_some(), "a loaded decision awaits confirmation");
        assert_eq!(loaded.excluded, bs.excluded, "exclusions survive a restart");
        let no_gpu = buckets_from(snap.record.buckets, CandidateSet::ALL.without(Backend::Gpu));
        assert_eq!(no_gpu[0].1.chosen(), None, "a GPU decision without a GPU explores again");
    }

    #[test]
    fn a_snapshot_keeps_what_each_bucket_moved() {
        let spec = KernelSpec {
            name: "k",
            complexity: OpComplexity::Low,
            has_gpu: true,
            has_parallel: false,
            token_hash: 7,
            loops: &[],
            splits: &[],
            gpu_loops: &[],
        };
        let b = bucket_of(4096);
        let buckets = BTreeMap::from([(b, BucketState::new(4096))]);
        let moved = TransferReport {
            gpu_calls: 3,
            submissions: 3,
            bytes_up: 1 << 20,
            bytes_down: 12,
            gpu_time: std::time::Duration::from_micros(30),
            moving: std::time::Duration::from_micros(10),
            ..TransferReport::default()
        };
        let snap = snapshot(&spec, &buckets, &BTreeSet::from([b]), &BTreeMap::from([(b, moved)]));
        let t = snap.record.buckets[0].transfers.clone().expect("transfers kept");
        assert_eq!((t.gpu_calls, t.submissions, t.bytes_up, t.bytes_down), (3, 3, 1 << 20, 12));
        assert_eq!((t.gpu_ns, t.moving_ns), (30_000, 10_000));
        assert_eq!(t.moving_share(), Some(1.0 / 3.0));
    }

    #[test]
    fn records_that_straddle_buckets_are_dropped() {
        let r = BucketRecord {
            sizes: [100, 5000],
            typical_size: 200,
            chosen: Some(Backend::Simd),
            chosen_threads: None,
            timings: vec![],
            excluded: vec![],
            transfers: None,
        };
        assert!(buckets_from(vec![r], CandidateSet::ALL).is_empty());
    }

    fn simd_record(lo: usize, chosen: Option<Backend>, scalar_ns: u64) -> BucketRecord {
        let t = |backend, ns| TimingRecord { backend, threads: None, count: 9, recent_ns: vec![ns; 3] };
        BucketRecord {
            sizes: [lo, 2 * lo - 1],
            typical_size: lo,
            chosen,
            chosen_threads: None,
            timings: vec![t(Backend::Scalar, scalar_ns), t(Backend::Simd, 100)],
            excluded: vec![],
            transfers: None,
        }
    }

    #[test]
    fn borrowed_buckets_are_marked_and_confirmed_against_their_contenders() {
        let gpu_without_figure = BucketRecord { chosen: Some(Backend::Gpu), ..simd_record(4096, None, 150) };
        let records =
            vec![simd_record(1024, Some(Backend::Simd), 150), simd_record(2048, None, 150), gpu_without_figure.clone()];
        let got = borrowed_buckets_from(records.clone(), CandidateSet::ALL);
        assert_eq!(got.len(), 1, "exploring there, or no figure to check the decision by: left out");
        let (at, bs) = &got[0];
        assert_eq!((*at, bs.chosen_backend(), bs.is_borrowed()), (bucket_of(1024), Some(Backend::Simd), true));
        assert!(bs.stats[Backend::Scalar].borrowed && bs.stats[Backend::Simd].borrowed);
        let v = bs.confirming().expect("confirmed before it is trusted");
        assert_eq!((v.saved_ns, v.contenders), (100.0, Some(CandidateSet::of(&[Candidate::Scalar]))));
        let no_gpu = borrowed_buckets_from(vec![gpu_without_figure], CandidateSet::ALL.without(Backend::Gpu));
        assert!(no_gpu.is_empty(), "a decision that cannot run here is not borrowed");
        let own = buckets_from(records, CandidateSet::ALL);
        assert!(own.iter().all(|(_, bs)| !bs.is_borrowed() && bs.confirming().is_none_or(|v| v.contenders.is_none())));
    }

    #[test]
    fn a_save_keeps_only_what_this_machine_measured() {
        let spec = KernelSpec {
            name: "k",
            complexity: OpComplexity::Low,
            has_gpu: false,
            has_parallel: false,
            token_hash: 7,
            loops: &[],
            splits: &[],
            gpu_loops: &[],
        };
        let mut buckets: BTreeMap<usize, BucketState> = borrowed_buckets_from(
            vec![simd_record(1024, Some(Backend::Simd), 150), simd_record(8192, Some(Backend::Simd), 150)],
            CandidateSet::ALL,
        )
        .into_iter()
        .collect();
        // The first bucket was confirmed here, its SIMD figures re-timed; Scalar's are still the other machine's.
        let confirmed = buckets.get_mut(&bucket_of(1024)).unwrap();
        confirmed.drop_borrowed(Candidate::Simd);
        confirmed.stats[Backend::Simd].push(120, 5);
        if let Phase::Confirming(c) = confirmed.phase {
            confirmed.phase = Phase::Settled(c.settled);
        }
        let snap = snapshot(&spec, &buckets, &BTreeSet::from([bucket_of(1024), bucket_of(8192)]), &BTreeMap::new());
        assert_eq!(snap.record.buckets.len(), 1, "an unconfirmed borrowed decision is not saved");
        let saved = &snap.record.buckets[0];
        assert_eq!(saved.sizes[0], 1024);
        assert_eq!(saved.chosen, Some(Backend::Simd));
        assert_eq!(
            saved.timings,
            vec![TimingRecord { backend: Backend::Simd, threads: None, count: 1, recent_ns: vec![120] }],
            "the other machine's figures are not saved as this one's"
        );
    }

    #[test]
    fn a_narrower_width_is_saved_by_its_threads_and_loaded_where_the_pool_offers_it() {
        let spec = KernelSpec {
            name: "k",
            complexity: OpComplexity::Low,
            has_gpu: false,
            has_parallel: true,
            token_hash: 7,
            loops: &[],
            splits: &[],
            gpu_loops: &[],
        };
        let mut bs = BucketState::new(5000);
        bs.pool = 16;
        bs.stats[Candidate::Simd].push(400, 5);
        bs.stats[Candidate::Parallel].push(300, 5);
        bs.stats[Candidate::ParallelHalf].push(150, 5);
        bs.stats[Candidate::ParallelQuarter].push(100, 5);
        bs.settle_on(Candidate::ParallelQuarter, DecisionKind::Historical);
        let b = bucket_of(5000);
        let snap = snapshot(&spec, &BTreeMap::from([(b, bs.clone())]), &BTreeSet::from([b]), &BTreeMap::new());
        let record = &snap.record.buckets[0];
        assert_eq!((record.chosen, record.chosen_threads), (Some(Backend::Parallel), Some(4)));
        let threads: Vec<Option<usize>> = record.timings.iter().map(|t| t.threads).collect();
        assert_eq!(threads, [None, Some(4), Some(8), None], "SIMD, ×4, ×8, the whole pool");
        // Reloaded in a pool of 16: the same candidates, the same decision.
        let back = crate::ops::par::with_threads(16, || buckets_from(snap.record.buckets.clone(), CandidateSet::ALL));
        let loaded = &back[0].1;
        assert_eq!(loaded.chosen(), Some(Candidate::ParallelQuarter));
        assert_eq!(loaded.of(Candidate::ParallelHalf).recent_ns, [150]);
        // In a pool of 8, 8 threads are its whole pool and 4 its half; 4 was chosen.
        let back = crate::ops::par::with_threads(8, || buckets_from(snap.record.buckets.clone(), CandidateSet::ALL));
        let loaded = &back[0].1;
        assert_eq!(loaded.chosen(), Some(Candidate::ParallelHalf));
        assert_eq!(loaded.of(Candidate::Parallel).recent_ns, [300], "the record of the whole pool");
        // In a pool of 2 no narrower width exists: those figures and that decision are dropped.
        let back = crate::ops::par::with_threads(2, || buckets_from(snap.record.buckets.clone(), CandidateSet::ALL));
        let loaded = &back[0].1;
        assert_eq!(loaded.chosen(), None, "the bucket explores again");
        assert!(loaded.of(Candidate::ParallelQuarter).is_empty() && loaded.of(Candidate::ParallelHalf).is_empty());
    }
}
