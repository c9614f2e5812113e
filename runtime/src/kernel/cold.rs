//! The cold path of a kernel: the calls the fast path ([`super::route`]) could
//! not decide, the sampled calls it times, and the timings it records.
//!
//! Each entry point here takes the kernel's lock once, gathers what the policy
//! needs (candidates, predictions, the clock, the sampling rate), hands the
//! bucket and an [`Event`] to [`policy::step`], and applies the [`Outcome`] in
//! [`Kernel::publish`], the one place a bucket's decision byte is written (the
//! byte under the lock; the report and the history's save after it). The rules
//! themselves are `policy`'s; this file decides nothing about routing. All of
//! it is `#[cold] #[inline(never)]`: it may lock, allocate, log and touch files.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::MutexGuard;
use std::time::Duration;

use super::bucket_state::BucketState;
use super::budget;
use super::decision_byte::{self, DecisionByte, MAX_SHIFT, MIN_SHIFT};
use super::overrides;
use super::policy::{
    self, CallInputs, Charge, Event, Outcome, Pick, Policy, Predictions, Publish, Sample, Sampling, Tell,
};
use super::site::{frozen, Kernel, KernelState, SampleClock, SPAN_THRESHOLD_NS};
use super::spec::Decision;
use super::telemetry;
use crate::backend::{Backend, OpComplexity};
use crate::candidate::{Candidate, PerCandidate};
use crate::cost::{self, Transfers, Work};
use crate::{clock, persist};

/// A site above this many calls per second is hot: no per-call spans.
const HOT_CALLS_PER_SEC: f64 = 10_000.0;

/// Where an [`Outcome`] comes from, which says how its decision byte is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// The policy, on a path that does not know the bucket's call rate.
    Policy,
    /// The policy, on a sampled call that measured the call rate: the sampling
    /// interval (`shift`) and span it asks for.
    Sampled { shift: u8, span: bool },
    /// A forced backend (a scope, [`Kernel::force`], the process-wide setting): published
    /// while the kernel is forced.
    Forced,
}

impl Kernel {
    /// Decides a call the fast path could not: returns the backend and whether the call is timed.
    /// `transfers`: what the call would move between host and device, by where it runs.
    ///
    /// Forcing comes first, on every path (`policy`'s decision order): a scope, then
    /// [`Kernel::force`], then the process-wide setting, before any decision cached, loaded
    /// or learned. A forced call is never timed; its byte samples at the longest interval,
    /// and a sampled forced call is not timed either ([`Kernel::route_sampled`]).
    #[cold]
    #[inline(never)]
    pub(super) fn route_cold(&'static self, bucket: usize, work: Work, transfers: Transfers) -> (Candidate, bool) {
        // The SIMD variants' first call would otherwise detect the CPU's features (`cpuid`,
        // which traps to the hypervisor on a VM: ~40 µs measured on a 2-vCPU KVM guest) inside
        // the timed call, and that one figure, 20× Scalar's, pruned SIMD for its bucket.
        crate::simd_level();
        if let Some(b) = overrides::scoped() {
            let mut st = self.lock();
            let d = self.resolve_forced(&mut st, b);
            self.publish(st, bucket, work.size, forced(d, Publish::Keep), Source::Forced);
            return (Candidate::of(d.backend), false);
        }
        let mut st = self.lock();
        if let Some(b) = self.forcing(&st) {
            let d = self.resolve_forced(&mut st, b);
            let publish = Publish::Cache { candidate: Candidate::of(d.backend), sampling: Sampling::First };
            self.publish(st, bucket, work.size, forced(d, publish), Source::Forced);
            return (Candidate::of(d.backend), false);
        }
        let byte = self.decision(bucket).load();
        if byte.is_cached() {
            // Cached meanwhile, or we came here only because another thread holds a scoped override.
            drop(st);
            let route = self.cached_route(byte, work.size);
            return (route.candidate(), route.is_timed());
        }
        if frozen() {
            return self.route_frozen(st, bucket, work, transfers);
        }
        let inputs = self.call_inputs(&mut st, bucket, &work, &transfers);
        let bs = st.buckets.entry(bucket).or_insert_with(|| BucketState::new(work.size));
        let outcome = policy::step(bs, Event::Call(&inputs), &Policy::DEFAULT);
        let candidate = outcome.run.unwrap_or(Candidate::Scalar);
        self.publish(st, bucket, work.size, outcome, Source::Policy);
        // Every exploring call is timed; a bucket that just settled starts sampling.
        (candidate, true)
    }

    /// What a call of `work` in `bucket` needs decided ([`CallInputs`]), gathered
    /// under the lock; makes the bucket when it is new.
    fn call_inputs(
        &'static self,
        st: &mut KernelState,
        bucket: usize,
        work: &Work,
        transfers: &Transfers,
    ) -> CallInputs {
        let runnable = self.runnable(self.gpu_usable());
        let pool = self.pool_threads();
        if runnable.contains(Candidate::Parallel) {
            // The cost model's Parallel terms are measured once a Parallel candidate exists.
            cost::parallel_wanted();
        }
        let predicted = predictions(&st.buckets, bucket, self.complexity(), work, transfers, pool);
        let bs = st.buckets.entry(bucket).or_insert_with(|| BucketState::new(work.size));
        bs.pool = pool;
        let candidates = bs.allowed(runnable);
        let prior = policy::prior(self.spec(), work, candidates, |b| cost::global().predict_placed(b, work, transfers));
        let process_left_ns = budget::left(clock::now_ns(), &Policy::DEFAULT);
        CallInputs { candidates, later: self.later(), prior, predicted, process_left_ns }
    }

    /// Frozen mode's cold path: the saved decision, else the cold-start prior (said
    /// once per kernel), cached for good; never timed, never saved.
    fn route_frozen(
        &'static self,
        mut st: MutexGuard<'static, KernelState>,
        bucket: usize,
        work: Work,
        transfers: Transfers,
    ) -> (Candidate, bool) {
        let runnable = self.runnable(self.gpu_usable());
        let bs = st.buckets.entry(bucket).or_insert_with(|| BucketState::new(work.size));
        let candidates = bs.allowed(runnable);
        let prior =
            policy::prior(self.spec(), &work, candidates, |b| cost::global().predict_placed(b, &work, &transfers));
        let fell_back = bs.chosen().is_none();
        let outcome = policy::step(bs, Event::FrozenCall { prior, candidates }, &Policy::DEFAULT);
        let candidate = outcome.run.unwrap_or(Candidate::Scalar);
        if fell_back && !std::mem::replace(&mut st.warned_frozen, true) {
            if let Some(Tell::Decision { decision, .. }) = outcome.tell {
                telemetry::frozen_prior(self.name(), work.size, decision.decision());
            }
        }
        self.publish(st, bucket, work.size, outcome, Source::Policy);
        (candidate, false)
    }

    /// The candidate a sampled call of a bucket with a decision runs, and whether it is
    /// timed: the chosen one, or an alternative to re-time (`policy`'s self-correction).
    /// Also where the bucket's sampling interval follows its call rate and the cost of
    /// timing it ([`decision_byte::sampling_shift`]). Called for at most about 50 calls a
    /// second per bucket, fewer where timing would cost more than 1% of the bucket's time.
    ///
    /// A forced kernel's call and a frozen run's are never timed: the cached candidate,
    /// untimed (their bytes sample at the longest interval, so this costs nothing).
    #[cold]
    #[inline(never)]
    pub(super) fn route_sampled(&'static self, bucket: usize, byte: DecisionByte) -> (Candidate, bool) {
        let entered = clock::now();
        let cached = byte.candidate();
        let mut guard = self.lock();
        if self.forcing(&guard).is_some() || frozen() {
            return (cached, false);
        }
        let st = &mut *guard;
        let new_clock = SampleClock { last: entered, secs_per_call: 0.0, overhead_ns: 0.0, pending_ns: 0.0 };
        let clock = st.clocks.entry(bucket).or_insert(new_clock);
        let dt = entered.duration_since(clock.last).as_secs_f64();
        clock.last = entered;
        // Each sampled call stands for 2^shift calls on average; smooth the noisy gaps.
        let per_call = dt / f64::from(1u32 << byte.shift());
        clock.secs_per_call =
            if clock.secs_per_call == 0.0 { per_call } else { 0.8 * clock.secs_per_call + 0.2 * per_call };
        let rate = if clock.secs_per_call > 0.0 { 1.0 / clock.secs_per_call } else { 0.0 };
        let overhead_ns = clock.overhead_ns;
        let Some(bs) = st.buckets.get(&bucket) else { return (cached, true) };
        let Some(chosen) = bs.chosen() else { return (cached, true) };
        let centre = bs.of(chosen).centre().unwrap_or(0.0);
        let shift = decision_byte::sampling_shift(rate, overhead_ns, centre);
        let candidates = bs.allowed(self.runnable(self.gpu_usable()));
        // Predictions for alternatives not measured here (one the exploration deferred, or a
        // GPU that started after the bucket settled), as exploring predicts them; the work
        // from the complexity's defaults, so a settled call needs no `work`.
        let size = bs.typical_size;
        let work = Work::estimate(self.complexity(), size, None, None);
        let predicted =
            predictions(&st.buckets, bucket, self.complexity(), &work, &Transfers::host(&work), self.pool_threads());
        let Some(bs) = st.buckets.get_mut(&bucket) else { return (cached, true) };
        let now_ns = clock::now_ns();
        let process_left_ns = budget::left(now_ns, &Policy::DEFAULT);
        let event = Event::SampledCall { candidates, predicted: &predicted, now_ns, process_left_ns };
        let outcome = policy::step(bs, event, &Policy::DEFAULT);
        let site_rate: f64 =
            st.clocks.values().map(|c| if c.secs_per_call > 0.0 { 1.0 / c.secs_per_call } else { 0.0 }).sum();
        let span = centre > SPAN_THRESHOLD_NS.load(Ordering::Relaxed) as f64 && site_rate <= HOT_CALLS_PER_SEC;
        if let Some(clock) = st.clocks.get_mut(&bucket) {
            clock.pending_ns = clock::since(entered).as_nanos() as f64;
        }
        let run = outcome.run.unwrap_or(cached);
        self.publish(guard, bucket, size, outcome, Source::Sampled { shift, span });
        (run, true)
    }

    /// Records one timed call (the cold part of [`Kernel::observe`]). `partial`: the call's
    /// split loops ran on fewer threads than they had chunks for (`ops::par::loops`' width).
    ///
    /// A partial call's timing is dropped, [`Policy::wake_samples`] times in a row at most:
    /// a pool thread still waking (on a VM, after its vCPU idled a few milliseconds, for up
    /// to several calls) slows the first calls of a run of Parallel ones, which the router's
    /// own interleaving of candidates causes; called back to back, the variant runs at full
    /// width. Past the bound the width is what this machine gives (another process holds
    /// the cores), and the timings count.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_cold(
        &'static self,
        bucket: usize,
        candidate: Candidate,
        size: usize,
        elapsed: Duration,
        partial: bool,
    ) {
        if frozen() {
            // A frozen table never changes: the rare sampled call's timing is discarded.
            return;
        }
        let entered = clock::now();
        let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let mut guard = self.lock();
        let st = &mut *guard;
        match partial {
            true if st.partial_streak < Policy::DEFAULT.wake_samples => {
                st.partial_streak += 1;
                return;
            }
            true => {}
            false => st.partial_streak = 0,
        }
        let warmup = st.warmed.insert(candidate);
        let byte = self.decision(bucket).load();
        let pool = self.pool_threads();
        let bs = st.buckets.entry(bucket).or_insert_with(|| BucketState::new(size));
        bs.pool = pool;
        // A timed call of a bucket with a decision stands for the calls its sampling interval skips.
        let interval = if bs.chosen().is_some() { f64::from(1u32 << byte.shift()) } else { 1.0 };
        let sample = Sample { candidate, ns, now_ns: clock::now_ns(), interval, warmup };
        let mut outcome = policy::step(bs, Event::Timed(sample), &Policy::DEFAULT);
        if candidate == Candidate::Gpu && !crate::ops::gpu::is_available() {
            // The device failed: GPU calls now fall back inside the op.
            outcome = outcome.then(policy::step(bs, Event::GpuFailed, &Policy::DEFAULT));
        }
        if !warmup {
            st.touched.insert(bucket);
        }
        // A sampled call's cost to the router: its `route_sampled` part, kept there, and this one.
        if let Some(clock) = st.clocks.get_mut(&bucket).filter(|c| c.pending_ns > 0.0) {
            let spent = std::mem::take(&mut clock.pending_ns) + clock::since(entered).as_nanos() as f64;
            clock.overhead_ns = decision_byte::smooth_overhead(clock.overhead_ns, spent);
        }
        self.publish(guard, bucket, size, outcome, Source::Policy);
    }

    /// Applies `outcome` for `bucket` (a call of `size`): writes its decision byte
    /// under the lock `st`, then, with the lock released, reports the change and
    /// marks the history for saving. While the kernel is forced (by [`Kernel::force`] or
    /// the process-wide setting) its bytes hold the forced backend, so only
    /// [`Source::Forced`] outcomes write one.
    pub(super) fn publish(
        &'static self,
        mut st: MutexGuard<'static, KernelState>,
        bucket: usize,
        size: usize,
        outcome: Outcome,
        source: Source,
    ) {
        if source == Source::Forced || self.forcing(&st).is_none() {
            self.write_byte(bucket, outcome.publish, source);
        }
        budget::charge(outcome.charge, clock::now_ns(), &Policy::DEFAULT);
        // A disagreement is reported once per kernel and backend.
        let tell = match outcome.tell {
            Some(Tell::Excluded { candidate, .. }) if !st.warned_excluded.insert(candidate) => None,
            tell => tell,
        };
        drop(st);
        match tell {
            None => {}
            Some(Tell::Decision { decision, has_history }) => {
                telemetry::decision(self.spec(), size, bucket, decision.decision(), has_history)
            }
            Some(Tell::Reexplore) => telemetry::reexplore(self.spec(), size, bucket),
            Some(Tell::Corrected { from, to }) => {
                telemetry::corrected(self.spec(), size, bucket, from.backend(), to.backend())
            }
            Some(Tell::Confirmed(chosen)) => telemetry::confirmed(self.spec(), size, bucket, chosen.backend()),
            Some(Tell::Excluded { candidate, largest_error }) => {
                telemetry::excluded(self.name(), size, candidate.backend(), largest_error)
            }
        }
        if outcome.dirty {
            persist::note_changed();
        }
    }

    /// Publishes the decisions of buckets loaded from history (under the lock that loaded them).
    pub(super) fn publish_loaded(&'static self, st: &KernelState) {
        for (&bucket, bs) in &st.buckets {
            if let Some(publish) = policy::loaded(bs) {
                self.write_byte(bucket, publish, Source::Policy);
            }
        }
    }

    /// Writes `bucket`'s decision byte as `publish` says. A cached decision's sampling
    /// interval: for a forced backend and in frozen mode the longest (a sampled call of
    /// either is not timed: [`Kernel::route_sampled`]); else [`MIN_SHIFT`] until the call rate is known, every call while a
    /// loaded decision is confirmed, what a sampled call measured once it is.
    fn write_byte(&self, bucket: usize, publish: Publish, source: Source) {
        let cell = self.decision(bucket);
        let (candidate, sampling) = match publish {
            Publish::Keep => return,
            Publish::Clear => return cell.store(DecisionByte::UNDECIDED),
            Publish::Cache { candidate, sampling } => (candidate, sampling),
        };
        let (shift, span) = match (source, sampling) {
            (Source::Forced, _) => (MAX_SHIFT, false),
            _ if frozen() => (MAX_SHIFT, false),
            (_, Sampling::First) => (MIN_SHIFT, false),
            (Source::Sampled { span, .. }, Sampling::EveryCall) => (0, span),
            (_, Sampling::EveryCall) => (0, false),
            (Source::Sampled { shift, span }, Sampling::ByRate) => (shift, span),
            (_, Sampling::ByRate) => (MIN_SHIFT, false),
            (_, Sampling::Unchanged) => (cell.load().shift(), false),
        };
        cell.store(DecisionByte::cached(candidate, shift, span));
    }
}

/// The outcome of a forced call (`d`): its byte as `publish` says, its decision reported.
fn forced(d: Decision, publish: Publish) -> Outcome {
    Outcome {
        run: Some(Candidate::of(d.backend)),
        publish,
        tell: Some(Tell::Decision { decision: Pick::from(d), has_history: false }),
        dirty: false,
        charge: Charge::NONE,
    }
}

/// What is known of a call of `work` in `bucket` before it is measured there
/// ([`Predictions`]): the nearest buckets' figures, the kernel's own Scalar-to-SIMD ratio,
/// and the cost model's figures where they were measured. Measured figures only: they
/// order the candidates from the first call (a variant predicted 8× slower is not tried
/// second because it is the simplest), and prune only once something was measured here
/// to compare with. `transfers`: what the call would move by where it runs; `pool`: the
/// threads a Parallel call of the kernel would use.
fn predictions(
    buckets: &BTreeMap<usize, BucketState>,
    bucket: usize,
    complexity: OpComplexity,
    work: &Work,
    transfers: &Transfers,
    pool: usize,
) -> Predictions {
    let (neighbours, reach) = predict_from_neighbours(buckets, bucket, complexity, work.size);
    let scalar_per_simd = scalar_per_simd(buckets, bucket, work.size);
    let model = match cost::measured() {
        Some(model) => PerCandidate::from_fn(|c| Some(model.predict_candidate(c, work, transfers, pool) * 1e9)),
        None => PerCandidate::default(),
    };
    Predictions { neighbours, reach, model, scalar_per_simd }
}

/// Predicted time (ns) per backend for `size` from the nearest bucket where that backend
/// was measured, scaled by the complexity's growth (`size^1` for Low/Medium, `size^1.5` for
/// High), and how far that bucket is (the ratio, ≥ 1, of its typical size to `size`).
fn predict_from_neighbours(
    buckets: &BTreeMap<usize, BucketState>,
    bucket: usize,
    complexity: OpComplexity,
    size: usize,
) -> (PerCandidate<Option<f64>>, PerCandidate<f64>) {
    let exponent = if complexity == OpComplexity::High { 1.5 } else { 1.0 };
    let mut out = PerCandidate::default();
    let mut reach = PerCandidate::new([f64::INFINITY; Candidate::COUNT]);
    for b in Candidate::ALL {
        let nearest = buckets
            .iter()
            // Another machine's figures predict nothing here (`policy`'s warm start).
            .filter(|(&i, bs)| i != bucket && bs.typical_size > 0 && !bs.of(b).is_empty() && !bs.of(b).borrowed)
            .min_by_key(|(&i, _)| i.abs_diff(bucket));
        if let Some((_, bs)) = nearest {
            let centre = bs.of(b).centre().unwrap_or(0.0);
            let ratio = size.max(1) as f64 / bs.typical_size as f64;
            out[b] = Some(centre * ratio.powf(exponent));
            reach[b] = ratio.max(1.0 / ratio);
        }
    }
    (out, reach)
}

/// The kernel's Scalar-to-SIMD time ratio in the largest other bucket than `bucket`,
/// smaller than `size`, where both were measured on this machine, and how far that
/// bucket is (`size` over its typical size): `policy::Predictions::scalar_per_simd`.
/// Not the bucket's own: after drift its old ratio would judge its new figures. (A 0 ns
/// SIMD centre gives an infinite ratio, which the policy ignores.)
fn scalar_per_simd(buckets: &BTreeMap<usize, BucketState>, bucket: usize, size: usize) -> Option<(f64, f64)> {
    let own = |bs: &BucketState, b: Backend| Some(bs.of(b)).filter(|s| !s.borrowed).and_then(|s| s.centre());
    buckets
        .iter()
        .filter(|&(&i, bs)| i != bucket && bs.typical_size > 0 && bs.typical_size < size)
        .map(|(_, bs)| bs)
        .filter_map(|bs| Some((bs.typical_size, own(bs, Backend::Scalar)?, own(bs, Backend::Simd)?)))
        .max_by_key(|&(typical, _, _)| typical)
        .map(|(typical, scalar, simd)| (scalar / simd, size as f64 / typical as f64))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::backend::OpComplexity;
    use crate::kernel::spec::KernelSpec;

    static K: Kernel = Kernel::new(KernelSpec {
        name: "cold::tests::partial",
        complexity: OpComplexity::High,
        has_gpu: false,
        has_parallel: true,
        token_hash: 1,
        loops: &[],
        splits: &[],
        gpu_loops: &[],
    });

    fn parallel_samples(size: usize) -> u64 {
        let table = K.table();
        let row = table.row_for(size).expect("a row");
        row.backend(Backend::Parallel).map_or(0, |b| b.count)
    }

    #[test]
    fn timings_of_calls_short_of_their_width_are_dropped_only_so_many_times_in_a_row() {
        crate::persist::set_history(crate::config::HistorySetting::Off);
        let size = 1 << 20;
        let bucket = crate::bucket::bucket_of(size);
        let us = Duration::from_micros(500);
        // The process's first timing of a backend is a warm-up, kept nowhere.
        K.observe_cold(bucket, Candidate::Simd, size, us, false);
        K.observe_cold(bucket, Candidate::Parallel, size, us, false);
        K.observe_cold(bucket, Candidate::Parallel, size, us, false);
        let before = parallel_samples(size);
        assert_eq!(before, 1);
        for _ in 0..Policy::DEFAULT.wake_samples {
            K.observe_cold(bucket, Candidate::Parallel, size, us * 4, true);
        }
        assert_eq!(parallel_samples(size), before, "a pool still waking: not the variant's time");
        K.observe_cold(bucket, Candidate::Parallel, size, us * 4, true);
        assert_eq!(parallel_samples(size), before + 1, "past the bound, the machine's width counts");
        // A call at full width ends the streak: the next short one is dropped again.
        K.observe_cold(bucket, Candidate::Parallel, size, us, false);
        K.observe_cold(bucket, Candidate::Parallel, size, us * 4, true);
        assert_eq!(parallel_samples(size), before + 2);
    }
}
