//! The routing rules' tests, each a sentence: buckets driven through [`step`]
//! with injected timings (see the module docs of `policy` for the rules).

use super::*;
use crate::backend::{Backend, OpComplexity};
use crate::candidate::PerCandidate;
use crate::cost::Work;
use crate::kernel::bucket_state::{Budget, Phase};
use crate::kernel::spec::KernelSpec;

/// What a timed call changed, as the tests read an [`Outcome`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    /// Nothing about the decision.
    None,
    /// The bucket had a decision and explores again.
    Reexplore,
    /// A re-timed alternative beat the chosen backend and is now chosen.
    Switched(Backend),
}

thread_local! {
    /// The backends pruned in the round of the last exploring call made by [`explore`].
    static ROUND_PRUNED: std::cell::Cell<CandidateSet> = const { std::cell::Cell::new(CandidateSet::EMPTY) };
}

/// Whether `backend` was pruned in the round of the last exploring call, also when
/// that call settled the bucket (a settled bucket has no round to ask).
fn pruned_in_last_round(backend: Backend) -> bool {
    ROUND_PRUNED.with(|p| p.get()).contains(backend)
}

/// A call of an exploring bucket through [`step`]: the decision it was routed by.
fn explore(
    state: &mut BucketState,
    candidates: CandidateSet,
    later: CandidateSet,
    prior: Decision,
    predicted: &Predictions,
    policy: &Policy,
) -> Decision {
    let inputs = CallInputs { candidates, later, prior, predicted: *predicted, process_left_ns: IN_CREDIT };
    if let Phase::Exploring(round) = &state.phase {
        // The same pure call on a copy of the round: what this call prunes.
        let mut round = round.clone();
        let _ = explore::explore(&state.stats, &mut round, &inputs, state.has_history(), policy);
        ROUND_PRUNED.with(|p| p.set(round.pruned));
    }
    match step(state, Event::Call(&inputs), policy).tell {
        Some(Tell::Decision { decision, .. }) => decision.decision(),
        other => panic!("a call reports its decision, not {other:?}"),
    }
}

/// A timed call through [`step`]: what it changed.
fn record(state: &mut BucketState, sample: Sample, policy: &Policy) -> Change {
    match step(state, Event::Timed(sample), policy).tell {
        Some(Tell::Reexplore) => Change::Reexplore,
        Some(Tell::Corrected { to, .. }) => Change::Switched(to.backend()),
        _ => Change::None,
    }
}

/// A sampled call of a bucket with a decision through [`step`]: the alternative it
/// re-times, or `None` for the chosen backend.
fn probe(
    state: &mut BucketState,
    candidates: CandidateSet,
    predicted: PerCandidate<Option<f64>>,
    now_ns: u64,
    policy: &Policy,
) -> Option<Backend> {
    let chosen = state.chosen();
    let predicted = Predictions { model: predicted, ..NONE };
    let event = Event::SampledCall { candidates, predicted: &predicted, now_ns, process_left_ns: IN_CREDIT };
    step(state, event, policy).run.filter(|&b| Some(b) != chosen).map(Candidate::backend)
}

/// The probe budget of a settled bucket.
fn budget(state: &mut BucketState) -> &mut Budget {
    match &mut state.phase {
        Phase::Settled(s) => &mut s.budget,
        other => panic!("not settled: {other:?}"),
    }
}

/// Scalar, SIMD and GPU; Parallel has its own tests.
const ALL: CandidateSet = CandidateSet::of_backends(&[Backend::Scalar, Backend::Simd, Backend::Gpu]);
/// Every candidate may run now.
const NOW: CandidateSet = CandidateSet::EMPTY;
const SCALAR_SIMD: CandidateSet = CandidateSet::of_backends(&[Backend::Scalar, Backend::Simd]);
const P: Policy = Policy::DEFAULT;
/// A process whose exploration budget is far from spent: only the bucket's own budget counts.
const IN_CREDIT: f64 = f64::INFINITY;
/// Calls an exploring Parallel candidate gets in a round: its run's warm-up, then its kept samples.
const PARALLEL_RUN: u64 = P.samples + P.run_warmup as u64;
/// Every neighbour at the call's own size.
const NEAR: PerCandidate<f64> = PerCandidate::new([1.0; Candidate::COUNT]);
/// No prediction of any backend.
const UNKNOWN: PerCandidate<Option<f64>> = PerCandidate::new([None; Candidate::COUNT]);
const NONE: Predictions = Predictions { neighbours: UNKNOWN, reach: NEAR, model: UNKNOWN, scalar_per_simd: None };

/// The cost model's figures (ns; 0: none), by backend in [`Backend::ALL`] order
/// (none for the narrower Parallel widths).
const fn model(ns: [f64; Backend::COUNT]) -> PerCandidate<Option<f64>> {
    let mut out = [None; Backend::COUNT];
    let mut i = 0;
    while i < Backend::COUNT {
        if ns[i] != 0.0 {
            out[i] = Some(ns[i]);
        }
        i += 1;
    }
    figures(out)
}

/// Figures by backend in [`Backend::ALL`] order, none for the narrower Parallel widths.
const fn figures(by_backend: [Option<f64>; Backend::COUNT]) -> PerCandidate<Option<f64>> {
    let mut out = [None; Candidate::COUNT];
    let mut i = 0;
    while i < Backend::COUNT {
        out[Candidate::of(Backend::ALL[i]).index()] = by_backend[i];
        i += 1;
    }
    PerCandidate::new(out)
}

/// Reaches by backend in [`Backend::ALL`] order, infinite for the narrower Parallel widths.
const fn reaches(by_backend: [f64; Backend::COUNT]) -> PerCandidate<f64> {
    let mut out = [f64::INFINITY; Candidate::COUNT];
    let mut i = 0;
    while i < Backend::COUNT {
        out[Candidate::of(Backend::ALL[i]).index()] = by_backend[i];
        i += 1;
    }
    PerCandidate::new(out)
}

/// Records a sample at t = 1 s standing for one call; whether the decision changed.
fn rec(state: &mut BucketState, backend: Backend, ns: u64, warmup: bool) -> bool {
    let sample = Sample { candidate: backend.into(), ns, now_ns: 1_000_000_000, interval: 1.0, warmup };
    record(state, sample, &P) != Change::None
}

fn simd_prior() -> Decision {
    Decision { backend: Backend::Simd, kind: DecisionKind::MoeThreshold }
}

/// Drives a bucket to a decision, answering each exploring call with `time(backend)`.
fn run_to_settle(state: &mut BucketState, prior: Decision, time: impl Fn(Backend) -> u64) -> Vec<Backend> {
    let mut calls = Vec::new();
    for _ in 0..100 {
        let d = explore(state, ALL, NOW, prior, &NONE, &P);
        if d.kind == DecisionKind::Historical {
            return calls;
        }
        calls.push(d.backend);
        rec(state, d.backend, time(d.backend), false);
    }
    panic!("never settled: {calls:?}");
}

#[test]
fn explores_prior_first_then_settles_on_fastest() {
    let mut s = BucketState::new(5000);
    let calls = run_to_settle(&mut s, simd_prior(), |b| match b {
        Backend::Scalar => 300,
        Backend::Simd => 100,
        Backend::Gpu => 250,
        Backend::Parallel => unreachable!("not a candidate here"),
    });
    assert_eq!(calls[0], Backend::Simd);
    assert_eq!(calls.iter().filter(|&&b| b == Backend::Simd).count() as u64, P.samples);
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
}

#[test]
fn a_candidate_for_later_is_waited_for_not_run_and_not_skipped() {
    let time = |b: Backend| match b {
        Backend::Scalar => 300,
        Backend::Simd => 200,
        Backend::Parallel => 100,
        Backend::Gpu => unreachable!("not a candidate here"),
    };
    let mut s = BucketState::new(5000);
    let mut calls = Vec::new();
    for _ in 0..20 {
        let d = explore(&mut s, CPU, PAR_LATER, simd_prior(), &NONE, &P);
        assert_ne!(d.kind, DecisionKind::Historical, "settled before Parallel could run: {calls:?}");
        calls.push(d.backend);
        rec(&mut s, d.backend, time(d.backend), false);
    }
    assert!(!calls.contains(&Backend::Parallel), "{calls:?}");
    // Once SIMD is measured, the waiting calls go to it, the fastest, but for Scalar's
    // samples as the budget affords them (1.5× SIMD: each costs half a call more).
    let scalar = calls.iter().filter(|&&b| b == Backend::Scalar).count() as u64;
    assert_eq!(scalar, P.samples, "{calls:?}");
    assert_eq!(calls[..P.samples as usize], [Backend::Simd; P.samples as usize], "{calls:?}");
    // It may run now: measured, and it wins.
    let mut settled = None;
    for _ in 0..10 {
        let d = explore(&mut s, CPU, NOW, simd_prior(), &NONE, &P);
        if d.kind == DecisionKind::Historical {
            settled = Some(d.backend);
            break;
        }
        assert_eq!(d.backend, Backend::Parallel);
        rec(&mut s, d.backend, time(d.backend), false);
    }
    assert_eq!(settled, Some(Backend::Parallel));
}

#[test]
fn an_unmeasured_bucket_tries_the_predicted_fastest_after_the_prior() {
    // conv2d 2048², first calls: the prior (Parallel) must wait for the GPU driver; the
    // cost model predicts Scalar at 8× SIMD. SIMD runs, not the simplest variant.
    let prior = Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel };
    let model = Predictions { model: model([40e6, 5e6, 3e6, 0.0]), ..NONE };
    let mut s = BucketState::new(1 << 22);
    assert_eq!(explore(&mut s, CPU, PAR_LATER, prior, &model, &P).backend, Backend::Simd);
    // Without figures (still calibrating) nothing orders them: the simplest goes first.
    assert_eq!(explore(&mut s, CPU, PAR_LATER, prior, &NONE, &P).backend, Backend::Scalar);
}

#[test]
fn far_neighbours_do_not_order_a_bucket_the_model_can() {
    // conv2d 2048²: only 8×8 was measured (256× smaller), where Scalar beat SIMD on
    // fixed costs; the model predicts Scalar at 8× SIMD here.
    let predicted = Predictions {
        neighbours: figures([Some(300.0), Some(500.0), None, None]),
        reach: reaches([256.0; Backend::COUNT]),
        model: model([40e6, 5e6, 0.0, 0.0]),
        scalar_per_simd: None,
    };
    let mut s = BucketState::new(1 << 22);
    let mut calls = Vec::new();
    loop {
        let d = explore(&mut s, SCALAR_SIMD, NOW, simd_prior(), &predicted, &P);
        if d.kind == DecisionKind::Historical {
            assert_eq!(d.backend, Backend::Simd);
            break;
        }
        calls.push(d.backend);
        rec(&mut s, d.backend, if d.backend == Backend::Simd { 5_000_000 } else { 40_000_000 }, false);
    }
    assert_eq!(calls, [Backend::Simd; P.samples as usize], "Scalar was pruned by the model, never called");
}

#[test]
fn a_bucket_waits_for_a_later_candidate_only_so_many_calls() {
    let mut s = BucketState::new(5000);
    let mut calls = Vec::new();
    for _ in 0..200 {
        let d = explore(&mut s, CPU, PAR_LATER, simd_prior(), &NONE, &P);
        if d.kind == DecisionKind::Historical {
            break;
        }
        calls.push(d.backend);
        rec(&mut s, d.backend, if d.backend == Backend::Parallel { 100 } else { 200 }, false);
    }
    let first_parallel = calls.iter().position(|&b| b == Backend::Parallel).expect("Parallel measured");
    assert_eq!(first_parallel, 2 * P.samples as usize + P.wait_calls as usize, "{calls:?}");
    assert_eq!(s.chosen_backend(), Some(Backend::Parallel));
}

#[test]
fn prunes_a_candidate_measured_far_slower_after_one_sample() {
    // Scalar's one sample costs more than `measure_below_ns`: the rest are not worth taking.
    let mut s = BucketState::new(5000);
    let calls = run_to_settle(&mut s, simd_prior(), |b| match b {
        Backend::Scalar => 200_000,
        Backend::Simd => 2_000,
        Backend::Gpu => 3_000,
        Backend::Parallel => unreachable!("not a candidate here"),
    });
    assert_eq!(calls.iter().filter(|&&b| b == Backend::Scalar).count(), 1, "{calls:?}");
    assert!(pruned_in_last_round(Backend::Scalar));
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
}

#[test]
fn skips_a_candidate_predicted_hopeless_without_running_it() {
    let mut s = BucketState::new(1 << 25);
    let mut calls = Vec::new();
    loop {
        let p = Predictions { model: model([1e12, 1e6, f64::INFINITY, 1e6]), ..NONE };
        let d = explore(&mut s, ALL, NOW, simd_prior(), &p, &P);
        if d.kind == DecisionKind::Historical {
            break;
        }
        calls.push(d.backend);
        rec(&mut s, d.backend, 1_000_000, false);
    }
    assert!(!calls.contains(&Backend::Scalar), "{calls:?}");
}

#[test]
fn ties_within_tolerance_go_to_the_cheaper_backend() {
    let mut s = BucketState::new(5000);
    run_to_settle(&mut s, simd_prior(), |b| match b {
        Backend::Scalar => 103,
        Backend::Simd => 100,
        Backend::Gpu => 101,
        Backend::Parallel => unreachable!("not a candidate here"),
    });
    assert_eq!(s.chosen_backend(), Some(Backend::Scalar), "3% slower is a tie; Scalar is cheapest to launch");
}

#[test]
fn first_call_carries_the_prior_kind() {
    let mut s = BucketState::new(10);
    let d = explore(&mut s, ALL, NOW, simd_prior(), &NONE, &P);
    assert_eq!(d, simd_prior());
}

#[test]
fn one_outlier_does_not_trigger_drift_but_sustained_degradation_does() {
    let mut s = BucketState::new(5000);
    // The others 10% slower: a new bucket's budget affords their samples.
    run_to_settle(&mut s, simd_prior(), |b| if b == Backend::Simd { 100 } else { 110 });
    for _ in 0..20 {
        assert!(!rec(&mut s, Backend::Simd, 100, false));
    }
    assert!(!rec(&mut s, Backend::Simd, 10_000, false), "one preempted sample");
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
    let mut changed = false;
    for _ in 0..20 {
        changed |= rec(&mut s, Backend::Simd, 400, false);
    }
    assert!(changed);
    assert!(matches!(s.phase, Phase::Exploring(_)));
}

#[test]
fn neighbour_measurements_outrank_the_prior() {
    let mut s = BucketState::new(64_000);
    let p = Predictions {
        neighbours: figures([Some(3_200.0), Some(320.0), None, Some(300.0)]),
        reach: NEAR,
        model: UNKNOWN,
        scalar_per_simd: None,
    };
    let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
    let d = explore(&mut s, ALL, NOW, scalar_prior, &p, &P);
    assert_eq!(d, Decision { backend: Backend::Gpu, kind: DecisionKind::Exploring });
}

#[test]
fn a_cost_model_off_in_absolute_terms_does_not_prune_a_cpu_backend() {
    // The model predicts 1.6 µs for both CPU backends; Scalar measures 0.3 µs.
    // Absolutely, SIMD looks 5× slower than the best; relative to Scalar's error, it ties.
    let mut s = BucketState::new(2_000);
    let p = Predictions {
        neighbours: UNKNOWN,
        reach: NEAR,
        model: model([1_600.0, 1_600.0, f64::INFINITY, f64::INFINITY]),
        scalar_per_simd: None,
    };
    let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
    let two = SCALAR_SIMD;
    for _ in 0..P.samples {
        let d = explore(&mut s, two, NOW, scalar_prior, &p, &P);
        assert_eq!(d.backend, Backend::Scalar);
        rec(&mut s, Backend::Scalar, 300, false);
    }
    assert_eq!(explore(&mut s, two, NOW, scalar_prior, &p, &P).backend, Backend::Simd);
}

#[test]
fn the_relative_model_still_prunes_what_it_can_tell_apart() {
    // Scalar is modelled at 10× SIMD; SIMD measures 1 ms, so Scalar is estimated at 10 ms.
    let mut s = BucketState::new(1 << 25);
    let p = Predictions {
        neighbours: UNKNOWN,
        reach: NEAR,
        model: model([1e8, 1e7, f64::INFINITY, f64::INFINITY]),
        scalar_per_simd: None,
    };
    let simd_prior = simd_prior();
    for _ in 0..P.samples {
        let d = explore(&mut s, SCALAR_SIMD, NOW, simd_prior, &p, &P);
        assert_eq!(d.backend, Backend::Simd);
        rec(&mut s, Backend::Simd, 1_000_000, false);
    }
    assert_eq!(explore(&mut s, SCALAR_SIMD, NOW, simd_prior, &p, &P).kind, DecisionKind::Historical);
    assert!(pruned_in_last_round(Backend::Scalar));
}

#[test]
fn the_kernel_s_own_scalar_to_simd_ratio_prunes_where_the_model_s_would_not() {
    // conv2d 2048² in a fresh process: Parallel (the prior) 3 ms, SIMD 5 ms measured here;
    // the model's matmul probe puts Scalar at only 2× SIMD, while 512² (16× smaller)
    // measured this kernel's Scalar at 8× its SIMD. Scalar (42 ms) is not called.
    // Here SIMD's and Scalar's calls are too dear for the new bucket's budget: both are
    // deferred, and re-timed after settling as the budget affords them; the ratio carries
    // over to SIMD's figures measured then.
    let figures = model([10e6, 5e6, 3e6, 0.0]);
    let truth = [42_000_000, 5_000_000, 3_000_000, 0];
    let scalar_called = |scalar_per_simd| {
        let p = Predictions { model: figures, scalar_per_simd, ..NONE };
        let prior = Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel };
        let mut s = BucketState::new(1 << 22);
        let mut calls = Vec::new();
        loop {
            let d = explore(&mut s, CPU, NOW, prior, &p, &P);
            if d.kind == DecisionKind::Historical {
                break;
            }
            calls.push(d.backend);
            rec(&mut s, d.backend, truth[d.backend.index()], false);
        }
        for _ in 0..2_000 {
            let b = probe(&mut s, CPU, UNKNOWN, 1, &P).unwrap_or(s.chosen_backend().unwrap());
            calls.push(b);
            record(&mut s, sample(b, truth[b.index()], 1, 1.0), &P);
        }
        assert!(calls.contains(&Backend::Simd), "{calls:?}");
        calls.contains(&Backend::Scalar)
    };
    assert!(!scalar_called(Some((8.0, 16.0))));
    assert!(scalar_called(None), "the model alone does not rule it out");
    assert!(scalar_called(Some((8.0, 256.0))), "too far to carry");
    assert!(scalar_called(Some((1.5, 16.0))), "a ratio that says it is close");
}

/// What is known of conv2d 2048² with the GPU before its first call: SIMD's 1024²
/// neighbour (9.2 ms scaled), the model's absolute figures (Scalar 8.9 ms), the kernel's
/// Scalar-to-SIMD ratio (11× at 256²).
const CONV2D_2048: Predictions = Predictions {
    neighbours: figures([Some(350e6), Some(9.2e6), Some(25e6), None]),
    reach: reaches([64.0, 4.0, 4.0, f64::INFINITY]),
    model: model([8.9e6, 2.5e6, 1.4e6, f64::INFINITY]),
    scalar_per_simd: Some((11.0, 16.0)),
};

#[test]
fn the_kernel_s_ratio_orders_scalar_after_simd_from_simd_s_near_neighbour() {
    // conv2d 2048² with the GPU: Parallel (the prior) measured at 5.4 ms. The model's
    // absolute figure put Scalar at 8.9 ms, below SIMD's 9.2 ms scaled from 1024², so
    // Scalar (40 ms) ran next. By the kernel's ratio (11× at 256²) it is 100 ms away.
    let p = CONV2D_2048;
    let prior = Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel };
    let every = CandidateSet::of_backends(&Backend::ALL);
    // A budget that affords SIMD's calls (9.2 ms predicted: 3.8 ms beyond Parallel each);
    // the default one defers it, as the next test shows.
    let generous = Policy { explore_share: 1.0, ..P };
    let mut s = BucketState::new(1 << 22);
    for _ in 0..PARALLEL_RUN {
        assert_eq!(explore(&mut s, every, NOW, prior, &p, &generous).backend, Backend::Parallel);
        rec(&mut s, Backend::Parallel, 5_400_000, false);
    }
    assert_eq!(explore(&mut s, every, NOW, prior, &p, &generous).backend, Backend::Simd);
    // SIMD measures 5.5 ms, so Scalar is predicted at 60 ms: pruned without a call.
    loop {
        let d = explore(&mut s, every, NOW, prior, &p, &generous);
        if d.kind == DecisionKind::Historical {
            break;
        }
        assert_eq!(d.backend, Backend::Simd);
        rec(&mut s, Backend::Simd, 5_500_000, false);
    }
    assert!(pruned_in_last_round(Backend::Scalar) && s.of(Backend::Scalar).is_empty());
    assert_eq!(s.chosen_backend(), Some(Backend::Simd), "within 5% of Parallel: the simpler");
}

/// The candidates a settled bucket's exploration deferred.
fn deferred(s: &BucketState) -> CandidateSet {
    match &s.phase {
        Phase::Settled(settled) => settled.deferred.set(),
        other => panic!("not settled: {other:?}"),
    }
}

#[test]
fn a_new_bucket_defers_a_candidate_its_budget_cannot_afford_and_re_times_it_after_settling() {
    // The same conv2d 2048²: after Parallel's run (21.6 ms in all), SIMD's three samples are
    // predicted at 3.8 ms each beyond Parallel's, more than a tenth of what the bucket's calls
    // took. The bucket settles on Parallel without calling SIMD, and re-times SIMD once its
    // calls have paid for it: SIMD, as fast within 5% and simpler, takes over.
    let p = CONV2D_2048;
    let prior = Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel };
    let every = CandidateSet::of_backends(&Backend::ALL);
    let mut s = BucketState::new(1 << 22);
    let mut calls = Vec::new();
    loop {
        let d = explore(&mut s, every, NOW, prior, &p, &P);
        if d.kind == DecisionKind::Historical {
            break;
        }
        calls.push(d.backend);
        rec(&mut s, d.backend, 5_400_000, false);
    }
    assert_eq!(calls, [Backend::Parallel; PARALLEL_RUN as usize], "{calls:?}");
    assert_eq!(s.chosen_backend(), Some(Backend::Parallel));
    assert_eq!(deferred(&s), CandidateSet::of_backends(&[Backend::Simd]), "Scalar is pruned, not deferred");
    // Sampled calls, every one timed (a bucket called rarely), alternate with re-timing SIMD
    // once the settled bucket's 1% holds SIMD's predicted cost (3.8 ms: 70 calls of 5.4 ms).
    let truth = [60_000_000, 5_500_000, 5_400_000, 0];
    let mut first_simd = None;
    for call in 0..200 {
        let b = probe(&mut s, every, UNKNOWN, 1, &P).unwrap_or(s.chosen_backend().unwrap());
        first_simd = first_simd.or((b == Backend::Simd).then_some(call));
        assert_ne!(b, Backend::Scalar, "pruned while exploring, and 11× SIMD by the kernel's ratio");
        record(&mut s, sample(b, truth[b.index()], 1, 1.0), &P);
        if s.chosen_backend() == Some(Backend::Simd) {
            break;
        }
    }
    let first_simd = first_simd.expect("SIMD re-timed");
    assert!((60..=80).contains(&first_simd), "re-timed once its cost fits a hundredth of the calls: {first_simd}");
    assert_eq!(s.chosen_backend(), Some(Backend::Simd), "{s:?}");
    assert_eq!(deferred(&s), CandidateSet::EMPTY);
}

#[test]
fn a_candidate_measured_far_slower_gets_no_more_calls_however_cheap() {
    // A plain-loop dot product of 8,192 elements: Scalar 3.8 µs; SIMD's first call 5× that.
    // However it is measured (a warm-up, or a kept sample), it gets no second call.
    let two = SCALAR_SIMD;
    let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
    for warmup in [true, false] {
        let mut s = BucketState::new(8192);
        let mut simd_calls = 0;
        for _ in 0..50 {
            let d = explore(&mut s, two, NOW, scalar_prior, &NONE, &P);
            if d.kind == DecisionKind::Historical {
                break;
            }
            let first = d.backend == Backend::Simd && simd_calls == 0;
            simd_calls += usize::from(d.backend == Backend::Simd);
            rec(&mut s, d.backend, if d.backend == Backend::Simd { 5 * 3_800 } else { 3_800 }, warmup && first);
        }
        assert_eq!(simd_calls, 1, "warm-up {warmup}");
        assert!(pruned_in_last_round(Backend::Simd));
        assert_eq!(s.chosen_backend(), Some(Backend::Scalar));
        // Settled: its one slow figure keeps it out of the re-timing.
        let (probes, _) = run_settled(&mut s, [3_800, 5 * 3_800, 0, 0], 1_000, 1);
        assert_eq!(probes, 0, "warm-up {warmup}");
    }
}

#[test]
fn a_cheap_candidate_pruned_by_a_slow_first_call_is_re_timed_where_a_prediction_says_it_may_win() {
    // The same dot product, SIMD's first call in the process 34 µs (page faults), then
    // 0.5 µs: the warm-up prunes it (9×), the bucket settles on Scalar, and once the cost
    // model predicts SIMD faster, re-timing it costs nothing and corrects the decision.
    let two = SCALAR_SIMD;
    let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
    let mut s = BucketState::new(8192);
    for _ in 0..P.samples {
        assert_eq!(explore(&mut s, two, NOW, scalar_prior, &NONE, &P).backend, Backend::Scalar);
        rec(&mut s, Backend::Scalar, 3_800, false);
    }
    assert_eq!(explore(&mut s, two, NOW, scalar_prior, &NONE, &P).backend, Backend::Simd);
    rec(&mut s, Backend::Simd, 34_000, true);
    assert!(s.is_pruned(Backend::Simd), "measured far slower, if only by a warm-up");
    assert_eq!(explore(&mut s, two, NOW, scalar_prior, &NONE, &P).kind, DecisionKind::Historical);
    let predicted = figures([Some(3_000.0), Some(600.0), None, None]);
    let mut switched = false;
    for _ in 0..40 {
        let b = probe(&mut s, two, predicted, 1, &P).unwrap_or(s.chosen_backend().unwrap());
        switched |= record(&mut s, sample(b, if b == Backend::Simd { 500 } else { 3_800 }, 1, 16.0), &P)
            == Change::Switched(Backend::Simd);
    }
    assert!(switched, "{s:?}");

    // A GPU's warm-up far slower is pruned too.
    let mut s = BucketState::new(8192);
    for _ in 0..P.samples {
        rec(&mut s, Backend::Scalar, 3_800, false);
    }
    rec(&mut s, Backend::Gpu, 34_000, true);
    assert!(s.is_pruned(Backend::Gpu));
}

#[test]
fn warmup_is_not_kept() {
    let mut s = BucketState::new(5000);
    rec(&mut s, Backend::Simd, 999, true);
    assert!(s.of(Backend::Simd).is_empty());
}

#[test]
fn prior_vetoes_gpu_without_a_variant_a_device_or_a_case() {
    let spec = KernelSpec {
        name: "k",
        complexity: OpComplexity::High,
        has_gpu: true,
        has_parallel: false,
        token_hash: 0,
        loops: &[],
        splits: &[],
        gpu_loops: &[],
    };
    let w = Work { size: 20_000, flops: 1, bytes: 1 };
    let gpu_fast = |b: Backend| if b == Backend::Gpu { 1.0 } else { 2.0 };
    let gpu_slow = |b: Backend| if b == Backend::Gpu { 3.0 } else { 2.0 };
    let no_gpu = SCALAR_SIMD;
    assert_eq!(prior(&spec, &w, ALL, gpu_fast).backend, Backend::Gpu);
    assert_eq!(prior(&spec, &w, no_gpu, gpu_fast), Decision { backend: Backend::Simd, kind: DecisionKind::CostModel });
    assert_eq!(prior(&spec, &w, ALL, gpu_slow).kind, DecisionKind::CostModel);
    let small = Work { size: 500, ..w };
    assert_eq!(
        prior(&spec, &small, ALL, gpu_fast),
        Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold }
    );
}

#[test]
fn prior_takes_parallel_only_where_the_model_says_it_pays() {
    let spec = KernelSpec {
        name: "k",
        complexity: OpComplexity::Medium,
        has_gpu: false,
        has_parallel: true,
        token_hash: 0,
        loops: &[],
        splits: &[],
        gpu_loops: &[],
    };
    let w = Work { size: 50_000, flops: 1, bytes: 1 };
    let cpu = CPU;
    let pays = |b: Backend| if b == Backend::Parallel { 1.0 } else { 2.0 };
    let costs = |b: Backend| if b == Backend::Parallel { 3.0 } else { 2.0 };
    assert_eq!(prior(&spec, &w, cpu, pays), Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel });
    assert_eq!(prior(&spec, &w, cpu, costs).backend, Backend::Simd);
    assert_eq!(prior(&spec, &w, SCALAR_SIMD, pays).backend, Backend::Simd, "one thread: not a candidate");
    let small = Work { size: 5_000, ..w };
    assert_eq!(prior(&spec, &small, cpu, pays).backend, Backend::Scalar, "the table says Scalar: kept");
}

/// A bucket settled on `chosen` after exploration measured these times (ns).
fn settled_on(times: [u64; Backend::COUNT]) -> BucketState {
    let mut s = BucketState::new(5000);
    run_to_settle(&mut s, simd_prior(), |b| times[b.index()]);
    s
}

fn sample(backend: Backend, ns: u64, at_s: u64, interval: f64) -> Sample {
    Sample { candidate: backend.into(), ns, now_ns: at_s * 1_000_000_000, interval, warmup: false }
}

/// Runs `calls` sampled calls through `probe` and `record` (that is, [`step`]) with the true times `truth`.
fn run_settled(s: &mut BucketState, truth: [u64; Backend::COUNT], calls: usize, at_s: u64) -> (usize, Option<Backend>) {
    let mut probes = 0;
    for _ in 0..calls {
        let chosen = s.chosen_backend().unwrap();
        let b = probe(s, ALL, UNKNOWN, at_s * 1_000_000_000, &P).unwrap_or(chosen);
        probes += usize::from(b != chosen);
        if let Change::Switched(to) = record(s, sample(b, truth[b.index()], at_s, 16.0), &P) {
            return (probes, Some(to));
        }
    }
    (probes, None)
}

#[test]
fn a_decision_taken_under_load_is_corrected_by_probes() {
    // Exploration saw Scalar at 160 (busy machine); it really takes 60, SIMD 100.
    let mut s = settled_on([160, 100, 1_000_000, 10_000]);
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
    let (probes, switched) = run_settled(&mut s, [60, 100, 1_000_000, 10_000], 200, 2);
    assert_eq!(switched, Some(Backend::Scalar));
    assert!((3..=10).contains(&probes), "{probes} probes");
    assert_eq!(s.chosen_backend(), Some(Backend::Scalar));
}

#[test]
fn a_right_decision_stays_and_probing_decays_within_budget() {
    // SIMD 100 is right; Scalar 130 is close enough to be re-timed, GPU far off is never probed.
    let mut s = settled_on([130, 100, 1_000_000, 10_000]);
    let (probes, switched) = run_settled(&mut s, [130, 100, 1_000_000, 10_000], 4_000, 2);
    assert_eq!(switched, None);
    assert!(probes >= P.confident as usize, "{probes}: few figures are re-timed");
    assert_eq!(s.of(Backend::Gpu).fresh, 0, "a hopeless alternative is never probed");
    let b = budget(&mut s);
    assert!(b.extra_ns <= P.probe_budget * b.calls_ns, "{b:?}");
    // Once confident and apart, nothing more is probed.
    let (later, _) = run_settled(&mut s, [130, 100, 1_000_000, 10_000], 1_000, 3);
    assert_eq!(later, 0);
}

/// Noisy timings from a fixed seed: the true time ±20% (uniform), one call in 16
/// preempted (5×): what a µs-scale kernel looks like on a shared machine.
struct Noise(u32);

impl Noise {
    fn time(&mut self, truth: u64) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        let jitter = 0.8 + 0.4 * f64::from(x % 1_000) / 1_000.0;
        let preempted = if (x >> 10).is_multiple_of(16) { 5.0 } else { 1.0 };
        (truth as f64 * jitter * preempted) as u64
    }
}

const CPU: CandidateSet = CandidateSet::of_backends(&[Backend::Scalar, Backend::Simd, Backend::Parallel]);
/// Parallel may run, but only later (a GPU driver is loading).
const PAR_LATER: CandidateSet = CandidateSet::of_backends(&[Backend::Parallel]);

/// Runs `calls` timed calls (50 a second from t = 1 s) of a bucket with noisy true times
/// `truth`: probes and records while settled, explores when re-opened. Returns how many
/// calls re-timed an alternative and every change of decision.
fn run_noisy(s: &mut BucketState, truth: [u64; Backend::COUNT], calls: u64, noise: &mut Noise) -> (usize, Vec<Change>) {
    let (mut probes, mut changes) = (0, Vec::new());
    for k in 0..calls {
        let now_ns = 1_000_000_000 + k * 20_000_000;
        let b = match s.chosen_backend() {
            Some(chosen) => {
                let b = probe(s, CPU, UNKNOWN, now_ns, &P).unwrap_or(chosen);
                probes += usize::from(b != chosen);
                b
            }
            None => explore(s, CPU, NOW, simd_prior(), &NONE, &P).backend,
        };
        let interval = if s.chosen_backend().is_some() { 16.0 } else { 1.0 };
        let sample = Sample { candidate: b.into(), ns: noise.time(truth[b.index()]), now_ns, interval, warmup: false };
        let change = record(s, sample, &P);
        if change != Change::None {
            changes.push(change);
        }
    }
    (probes, changes)
}

/// A bucket settled, from noise-free exploration, on SIMD (Scalar 200, SIMD 100, Parallel `parallel`).
fn settled_among_cpu(parallel: u64) -> BucketState {
    let mut s = BucketState::new(5000);
    run_to_settle_on(&mut s, CPU, |b| [200, 100, parallel, 0][b.index()]);
    s
}

#[test]
fn equal_backends_do_not_flap_under_noise() {
    // SIMD and Parallel run the same code (below the parallel grain): 100 ns each, noisy.
    let mut s = settled_among_cpu(102);
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
    let (probes, changes) = run_noisy(&mut s, [200, 100, 100, 0], 20_000, &mut Noise(0x5EED));
    assert!(probes >= P.confident as usize, "the alternative was re-timed ({probes} probes)");
    assert_eq!(changes, [], "a tie flapped");
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
}

#[test]
fn figures_from_a_busier_moment_are_re_timed_and_a_wrong_settle_corrected() {
    // Explored while a competing load ran: everything 2× slow, Parallel (its threads
    // competing too) 20× slow: 6× SIMD, beyond noise from the 4× prune factor, so it
    // looked hopeless.
    let mut s = BucketState::new(5000);
    run_to_settle_on(&mut s, CPU, |b| [400, 200, 1_200, 0][b.index()]);
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
    // The load is gone: SIMD takes 100, Parallel 60. Within 200 sampled calls (4 s
    // at 50 a second) the bucket re-times Parallel and moves to it (a switch, or a new
    // round that the fresh figures decide), once.
    let (probes, changes) = run_noisy(&mut s, [200, 100, 60, 0], 200, &mut Noise(0x5EED));
    assert_eq!(changes.len(), 1, "{changes:?} after {probes} probes {s:?}");
    assert_eq!(s.chosen_backend(), Some(Backend::Parallel), "{changes:?} after {probes} probes");
    let b = budget(&mut s);
    assert!(b.extra_ns <= P.probe_budget * b.calls_ns + 1_000.0, "{b:?}");
    // The same exploration on a machine as busy now as then: nothing changes.
    let mut s = BucketState::new(5000);
    run_to_settle_on(&mut s, CPU, |b| [400, 200, 1_200, 0][b.index()]);
    let (_, changes) = run_noisy(&mut s, [400, 200, 1_200, 0], 200, &mut Noise(0x5EED));
    assert_eq!(changes, []);
    assert_eq!(s.of(Backend::Parallel).fresh, 0, "the hopeless one was re-timed");
}

#[test]
fn figures_re_timed_during_a_load_are_re_timed_again_once_it_is_gone() {
    // Explored and settled under a competing load, which then lasted 2 s more: SIMD
    // 2× slow, Parallel (its threads competing too) 4× slow, and re-timed while it
    // lasted, so its figures are fresh ones from a busy moment.
    let mut s = BucketState::new(5000);
    let busy = [400, 200, 240, 0];
    // Every candidate measured to the end (a budget that affords them: this test is about
    // figures from a busy moment, not about what exploring defers).
    run_to_settle_with(&mut s, CPU, &Policy { explore_share: 1.0, ..P }, |b| busy[b.index()]);
    let (probes, changes) = run_noisy(&mut s, busy, 100, &mut Noise(0xFEED));
    assert_eq!((changes, s.chosen_backend()), (vec![], Some(Backend::Simd)));
    assert!(s.of(Backend::Parallel).fresh > 0, "Parallel was re-timed under the load ({probes} probes)");
    // The load is gone: SIMD takes 100, Parallel 60. Within 5 s at 50 sampled calls
    // a second the bucket moves to Parallel, once, within the probe budget.
    let (probes, changes) = run_noisy(&mut s, [200, 100, 60, 0], 250, &mut Noise(0x5EED));
    assert_eq!(changes.len(), 1, "{changes:?} after {probes} probes");
    assert_eq!(s.chosen_backend(), Some(Backend::Parallel), "{changes:?} after {probes} probes");
    let b = budget(&mut s);
    assert!(b.extra_ns <= P.probe_budget * b.calls_ns + 1_000.0, "{b:?}");
}

#[test]
fn a_tie_settled_on_the_more_complex_backend_moves_to_the_simpler_once() {
    let mut s = settled_among_cpu(95);
    assert_eq!(s.chosen_backend(), Some(Backend::Parallel));
    let (_, changes) = run_noisy(&mut s, [200, 100, 100, 0], 20_000, &mut Noise(0xBEEF));
    assert_eq!(changes, [Change::Switched(Backend::Simd)]);
}

#[test]
fn a_clear_improvement_still_switches_under_the_same_noise() {
    // Exploration saw SIMD and Parallel alike; SIMD really takes 130, Parallel 100.
    let mut s = settled_among_cpu(102);
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
    let (_, changes) = run_noisy(&mut s, [200, 130, 100, 0], 250, &mut Noise(0x5EED));
    assert_eq!(changes.first(), Some(&Change::Switched(Backend::Parallel)), "within 5 s at 50 samples/s");
    assert_eq!(s.chosen_backend(), Some(Backend::Parallel));
}

#[test]
fn a_degraded_choice_is_not_judged_against_old_figures() {
    // Settled at t = 1 s; at t = 100 s the chosen SIMD takes 400, twice Scalar's 40 s old figure.
    let mut s = settled_on([200, 100, 1_000_000, 10_000]);
    for _ in 0..P.drift_samples + 8 {
        assert_eq!(record(&mut s, sample(Backend::Simd, 400, 100, 16.0), &P), Change::None);
    }
    // Re-timed now, Scalar's figure counts.
    let mut changes = Vec::new();
    for _ in 0..4 {
        changes.push(record(&mut s, sample(Backend::Scalar, 200, 100, 16.0), &P));
        changes.push(record(&mut s, sample(Backend::Simd, 400, 100, 16.0), &P));
    }
    assert!(changes.iter().any(|&c| c != Change::None), "{changes:?}");
}

#[test]
fn old_figures_are_re_timed() {
    let mut s = settled_on([130, 100, 1_000_000, 10_000]);
    run_settled(&mut s, [130, 100, 1_000_000, 10_000], 4_000, 2);
    let (probes, _) = run_settled(&mut s, [130, 100, 1_000_000, 10_000], 100, 2 + 31);
    assert!(probes > 0, "figures older than stale_ns are re-timed");
}

#[test]
fn figures_that_call_an_alternative_hopeless_are_re_timed_once_stale() {
    // Exploration under load measured Scalar at 1,000 (10× SIMD); it really takes 60.
    let mut s = settled_on([1_000, 100, 1_000_000, 10_000]);
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
    let truth = [60, 100, 1_000_000, 10_000];
    let (probes, switched) = run_settled(&mut s, truth, 500, 2);
    assert_eq!((probes, switched), (0, None), "fresh hopeless figures are not re-timed");
    // Past stale_ns the old figures are re-timed (within the budget): the fresh Scalar figure
    // either takes over or, beating SIMD by more than the drift band, re-opens exploration.
    let at = 2 + P.stale_ns / 1_000_000_000 + 1;
    let mut change = Change::None;
    for _ in 0..500 {
        let chosen = s.chosen_backend().expect("settled until a change");
        let b = probe(&mut s, ALL, UNKNOWN, at * 1_000_000_000, &P).unwrap_or(chosen);
        change = record(&mut s, sample(b, truth[b.index()], at, 16.0), &P);
        if change != Change::None {
            break;
        }
    }
    assert_ne!(change, Change::None, "the stale figures were never re-timed");
    assert_eq!(s.of(Backend::Gpu).fresh, 0, "a stale GPU figure over the budget is still not re-timed");
    if s.chosen_backend().is_none() {
        run_to_settle(&mut s, simd_prior(), |b| truth[b.index()]);
    }
    assert_eq!(s.chosen_backend(), Some(Backend::Scalar));
}

#[test]
fn a_far_neighbour_does_not_prune_a_candidate_never_measured_here() {
    // SIMD's fixed cost, measured 256× lower in size, scaled up predicts 66 ms against Scalar's 11 ms.
    let explore_after_scalar = |reach: f64| {
        let mut s = BucketState::new(1 << 20);
        let p = Predictions {
            neighbours: figures([None, Some(66e6), None, None]),
            reach: reaches([1.0, reach, 1.0, 1.0]),
            model: UNKNOWN,
            scalar_per_simd: None,
        };
        let two = SCALAR_SIMD;
        let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
        for _ in 0..P.samples {
            let d = explore(&mut s, two, NOW, scalar_prior, &p, &P);
            assert_eq!(d.backend, Backend::Scalar);
            rec(&mut s, Backend::Scalar, 11_000_000, false);
        }
        explore(&mut s, two, NOW, scalar_prior, &p, &P)
    };
    assert_eq!(explore_after_scalar(256.0).backend, Backend::Simd, "measured here before judging");
    let near = explore_after_scalar(2.0);
    assert_eq!((near.backend, near.kind), (Backend::Scalar, DecisionKind::Historical), "a near one prunes");
}

#[test]
fn a_cheap_candidate_is_measured_rather_than_pruned_by_a_neighbour() {
    // matmul 16³: SIMD's 8³ neighbour (fixed cost) scaled up predicts 6.9 µs against Scalar's
    // measured 0.9 µs; one sample costs less than trusting that, so SIMD is measured.
    let explore_after_scalar = |predicted: f64| {
        let mut s = BucketState::new(768);
        let p = Predictions {
            neighbours: figures([None, Some(predicted), None, None]),
            reach: reaches([1.0, 2.0, 1.0, 1.0]),
            model: UNKNOWN,
            scalar_per_simd: None,
        };
        let two = SCALAR_SIMD;
        let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
        for _ in 0..P.samples {
            assert_eq!(explore(&mut s, two, NOW, scalar_prior, &p, &P).backend, Backend::Scalar);
            rec(&mut s, Backend::Scalar, 900, false);
        }
        explore(&mut s, two, NOW, scalar_prior, &p, &P).backend
    };
    assert_eq!(explore_after_scalar(6_900.0), Backend::Simd, "a 7 µs sample is cheaper than a wrong prune");
    assert_eq!(explore_after_scalar(P.measure_below_ns * 2.0), Backend::Scalar, "an expensive one is pruned");
}

#[test]
fn no_probe_without_budget() {
    let mut s = settled_on([300, 100, 1_000_000, 10_000]);
    // Nothing was spent on the chosen backend yet: a 3× slower alternative costs more than 1% of nothing.
    assert_eq!(probe(&mut s, ALL, UNKNOWN, 1, &P), None);
}

#[test]
fn an_overrun_of_the_budget_is_forgotten_after_a_few_half_lives() {
    // Scalar at 120 is worth re-timing (few fresh figures; 20 ns beyond SIMD a probe),
    // but earlier probes ran long: 10 µs beyond the chosen backend, the budget of 62
    // sampled calls (each standing for 160 calls of 100 ns).
    let mut s = settled_on([120, 100, 1_000_000, 10_000]);
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
    for _ in 0..P.samples {
        record(&mut s, sample(Backend::Simd, 100, 1, 160.0), &P);
    }
    budget(&mut s).extra_ns = 10_000.0;
    let probe_at = |s: &mut BucketState, at_s: u64| {
        budget(s).last_was_probe = false;
        probe(s, ALL, UNKNOWN, at_s * 1_000_000_000, &P)
    };
    assert_eq!(probe_at(&mut s, 1), None, "in debt");
    record(&mut s, sample(Backend::Simd, 100, 2, 160.0), &P);
    assert_eq!(probe_at(&mut s, 2), None, "one sampled call does not repay it");
    // Seven half-lives later the overrun weighs 1/128 as much; one sampled call repays it.
    record(&mut s, sample(Backend::Simd, 100, 36, 160.0), &P);
    assert_eq!(probe_at(&mut s, 36), Some(Backend::Scalar));
}

#[test]
fn an_alternative_no_slower_than_the_chosen_backend_is_re_timed_even_in_debt() {
    // Scalar (105 ns) and SIMD (100 ns) tie, so Scalar is chosen; probes under a load
    // left the ledger deep in debt. Re-timing SIMD costs nothing beyond Scalar's pace,
    // so the debt does not stop it: a router in `add`'s 16,384-element bucket kept
    // Scalar at 8.5 µs for the 10 s after a load with SIMD measured at 3.7 µs.
    let mut s = settled_on([105, 100, 1_000_000, 10_000]);
    assert_eq!(s.chosen_backend(), Some(Backend::Scalar));
    for _ in 0..P.samples {
        record(&mut s, sample(Backend::Scalar, 105, 1, 16.0), &P);
    }
    budget(&mut s).extra_ns = 1e9;
    budget(&mut s).last_was_probe = false;
    assert_eq!(probe(&mut s, ALL, UNKNOWN, 1_000_000_000, &P), Some(Backend::Simd));
}

#[test]
fn an_unmeasured_backend_is_probed_from_its_prediction() {
    let mut s = BucketState::new(5000);
    run_to_settle_on(&mut s, SCALAR_SIMD, |b| if b == Backend::Simd { 100 } else { 1_000 });
    for _ in 0..50 {
        record(&mut s, sample(Backend::Simd, 100, 1, 16.0), &P);
    }
    // The GPU joined after the bucket settled; predicted 90 ns, it is worth a look.
    let got = (0..4).filter_map(|_| probe(&mut s, ALL, figures([None, None, None, Some(90.0)]), 1, &P)).next();
    assert_eq!(got, Some(Backend::Gpu));
}

fn run_to_settle_on(s: &mut BucketState, candidates: CandidateSet, time: impl Fn(Backend) -> u64) {
    run_to_settle_with(s, candidates, &P, time);
}

fn run_to_settle_with(s: &mut BucketState, candidates: CandidateSet, policy: &Policy, time: impl Fn(Backend) -> u64) {
    for _ in 0..100 {
        let d = explore(s, candidates, NOW, simd_prior(), &NONE, policy);
        if d.kind == DecisionKind::Historical {
            return;
        }
        rec(s, d.backend, time(d.backend), false);
    }
    panic!("never settled");
}

#[test]
fn a_loaded_decision_timed_on_a_busy_machine_stays_when_one_call_matches() {
    let mut s = settled_on([300, 100, 1_000_000, 10_000]);
    s.await_confirmation(100.0, None);
    for st in s.stats.values_mut() {
        st.last_ns = 0;
    }
    // Preempted calls 3–6× the saved figure, one undisturbed call among them.
    let mut changes = Vec::new();
    for ns in [400, 600, 110, 350, 500] {
        changes.push(record(&mut s, sample(Backend::Simd, ns, 1, 1.0), &P));
    }
    assert!(!changes.contains(&Change::Reexplore), "{changes:?}");
    assert_eq!((s.confirming(), s.chosen_backend()), (None, Some(Backend::Simd)));
}

#[test]
fn a_loaded_decision_far_off_re_explores_and_a_close_one_stays() {
    for (real, reexplores) in [(500, true), (120, false), (40, true)] {
        let mut s = settled_on([300, 100, 1_000_000, 10_000]);
        s.await_confirmation(100.0, None);
        for st in s.stats.values_mut() {
            st.last_ns = 0; // as loaded: figures from another run
        }
        let mut changes = Vec::new();
        for _ in 0..P.confirm_samples {
            assert_eq!(probe(&mut s, ALL, UNKNOWN, 1, &P), None, "no probes before confirmation");
            changes.push(record(&mut s, sample(Backend::Simd, real, 1, 1.0), &P));
        }
        assert_eq!(changes.contains(&Change::Reexplore), reexplores, "real {real}: {changes:?}");
        assert_eq!(s.confirming(), None);
    }
}

/// A bucket as borrowed from another machine's entry: settled on SIMD, these
/// figures (ns, 5 samples each; 0: none) marked borrowed, its contenders computed.
fn borrowed(figures: [u64; Backend::COUNT]) -> BucketState {
    let mut s = BucketState::new(5000);
    for b in Backend::ALL.into_iter().filter(|b| figures[b.index()] > 0) {
        let st = &mut s.stats[b];
        st.recent_ns = vec![figures[b.index()]; 5];
        st.count = 5;
        st.borrowed = true;
    }
    s.settle_on(Candidate::Simd, DecisionKind::Historical);
    let contenders = contenders(&s, Candidate::Simd, ALL, &P);
    s.await_confirmation(figures[Backend::Simd.index()] as f64, Some(contenders));
    s
}

/// Sampled calls of a borrowed bucket with the true times `truth`, until its decision
/// changes or `calls` have run; the backends timed, and the change.
fn confirm_borrowed(s: &mut BucketState, truth: [u64; Backend::COUNT], calls: usize) -> (Vec<Backend>, Change) {
    let mut timed = Vec::new();
    for _ in 0..calls {
        let chosen = s.chosen_backend().expect("settled until a change");
        let b = probe(s, ALL, UNKNOWN, 1, &P).unwrap_or(chosen);
        timed.push(b);
        let change = record(s, sample(b, truth[b.index()], 1, 1.0), &P);
        if change != Change::None {
            return (timed, change);
        }
    }
    (timed, Change::None)
}

#[test]
fn another_machines_decision_re_explores_where_this_machine_ranks_otherwise() {
    // There: SIMD 100, Scalar 140 (a contender), GPU hopeless. Here SIMD matches, but Scalar takes 60.
    let mut s = borrowed([140, 100, 0, 1_000_000]);
    assert_eq!(
        s.confirming().unwrap().contenders,
        Some(CandidateSet::of_backends(&[Backend::Scalar])),
        "only Scalar is within reach"
    );
    let (timed, change) = confirm_borrowed(&mut s, [60, 100, 0, 1_000_000], 40);
    assert_eq!(timed[0], Backend::Simd, "the first call goes where the other machine decided");
    assert_eq!(change, Change::Reexplore, "{timed:?}");
    assert_eq!(timed.iter().filter(|&&b| b == Backend::Scalar).count() as u64, P.samples, "{timed:?}");
    assert!(!timed.contains(&Backend::Gpu), "a hopeless alternative is not re-timed: {timed:?}");
    assert!(!s.is_borrowed() && s.stats.values().all(|st| !st.borrowed), "this machine decides from now on");
    // Its own figure for the chosen backend alone would have kept the decision.
    let mut own = borrowed([140, 100, 0, 1_000_000]);
    own.await_confirmation(100.0, None);
    assert_eq!(confirm_borrowed(&mut own, [60, 100, 0, 1_000_000], P.confirm_samples as usize).1, Change::None);
}

#[test]
fn another_machines_decision_is_confirmed_where_this_machine_agrees() {
    let mut s = borrowed([140, 100, 0, 1_000_000]);
    let (timed, change) = confirm_borrowed(&mut s, [150, 100, 0, 1_000_000], 40);
    assert_eq!(change, Change::None, "{timed:?}");
    assert_eq!((s.confirming(), s.is_borrowed(), s.chosen_backend()), (None, false, Some(Backend::Simd)), "confirmed");
    let scalar = s.of(Backend::Scalar);
    assert!(!scalar.borrowed && scalar.recent_ns.iter().all(|&ns| ns == 150), "{scalar:?}: measured here only");
    assert_eq!(scalar.count, P.samples, "the other machine's count is not carried");
    assert!(s.of(Backend::Gpu).borrowed, "never re-timed: still the other machine's");
    assert_eq!(budget(&mut s).extra_ns, 0.0, "re-timing contenders spent no probe budget");
}

#[test]
fn another_machines_figure_far_off_re_explores_and_its_figures_predict_nothing() {
    // There SIMD took 20; here 100: the same check as a warm start's.
    let mut s = borrowed([1_000, 20, 0, 0]);
    assert_eq!(s.confirming().unwrap().contenders, Some(CandidateSet::EMPTY));
    let (timed, change) = confirm_borrowed(&mut s, [1_000, 100, 0, 0], 40);
    assert_eq!((timed.len() as u32, change), (P.confirm_samples, Change::Reexplore));
}

#[test]
fn a_contender_that_can_no_longer_run_is_not_waited_for() {
    let mut s = borrowed([140, 100, 0, 110]);
    assert_eq!(s.confirming().unwrap().contenders, Some(CandidateSet::of_backends(&[Backend::Scalar, Backend::Gpu])));
    let no_gpu = SCALAR_SIMD;
    for _ in 0..20 {
        let b = probe(&mut s, no_gpu, UNKNOWN, 1, &P).unwrap_or(Backend::Simd);
        assert_ne!(b, Backend::Gpu);
        record(&mut s, sample(b, [150, 100, 0, 90][b.index()], 1, 1.0), &P);
    }
    assert_eq!((s.confirming(), s.is_borrowed()), (None, false), "confirmed without the GPU");
}

#[test]
fn a_failed_gpu_is_pruned_from_a_round_and_a_decision_on_it_explores_again() {
    let mut s = BucketState::new(5000);
    explore(&mut s, ALL, NOW, simd_prior(), &NONE, &P);
    assert_eq!(step(&mut s, Event::GpuFailed, &P), Outcome::NOTHING);
    assert!(s.is_pruned(Backend::Gpu));

    let mut s = settled_on([300, 200, 1_000_000, 100]);
    assert_eq!(s.chosen_backend(), Some(Backend::Gpu));
    let out = step(&mut s, Event::GpuFailed, &P);
    assert_eq!((out.publish, out.tell, out.dirty), (Publish::Clear, Some(Tell::Reexplore), true));
    assert!(s.is_pruned(Backend::Gpu), "the new round does not wait for it");
    assert_eq!(s.of(Backend::Gpu).recent_ns.len(), P.samples as usize, "its figures are kept");

    let mut s = settled_on([300, 100, 1_000_000, 200]);
    assert_eq!(step(&mut s, Event::GpuFailed, &P), Outcome::NOTHING, "a decision on another backend stands");
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
}

#[test]
fn a_variant_that_disagrees_with_scalar_is_excluded_and_a_decision_on_it_explores_again() {
    let compared =
        |backend: Backend, disagreement| Event::Compared { candidate: backend.into(), size: 5000, disagreement };
    let mut s = settled_on([300, 100, 1_000_000, 10_000]);
    assert_eq!(step(&mut s, compared(Backend::Simd, None), &P), Outcome::NOTHING);
    assert!(s.compared.contains(Backend::Simd) && s.excluded[Backend::Simd].is_none());
    let out = step(&mut s, compared(Backend::Gpu, Some(0.5)), &P);
    assert_eq!(out.tell, Some(Tell::Excluded { candidate: Candidate::Gpu, largest_error: 0.5 }));
    assert_eq!((out.publish, s.chosen_backend()), (Publish::Keep, Some(Backend::Simd)), "not the decision: it stands");
    let out = step(&mut s, compared(Backend::Simd, Some(2.0)), &P);
    assert_eq!((out.publish, out.dirty, s.chosen_backend()), (Publish::Clear, true, None));
    assert_eq!(s.allowed(ALL), CandidateSet::of_backends(&[Backend::Scalar]), "excluded for good");
}

#[test]
fn frozen_mode_settles_on_the_prior_for_good_and_on_scalar_where_the_prior_is_excluded() {
    let frozen = |prior, candidates| Event::FrozenCall { prior, candidates };
    let mut s = BucketState::new(5000);
    let out = step(&mut s, frozen(simd_prior(), ALL), &P);
    assert_eq!(
        (out.run, s.chosen_backend(), s.decided_by()),
        (Some(Candidate::Simd), Some(Backend::Simd), DecisionKind::MoeThreshold)
    );
    let gpu = Decision { backend: Backend::Gpu, kind: DecisionKind::MoeThreshold };
    assert_eq!(step(&mut s, frozen(gpu, ALL), &P).run, Some(Candidate::Simd), "settled: the prior asks nothing");
    let mut s = BucketState::new(5000);
    assert_eq!(step(&mut s, frozen(simd_prior(), ALL.without(Backend::Simd)), &P).run, Some(Candidate::Scalar));
}

#[test]
fn a_loaded_decision_times_every_call_until_it_is_confirmed() {
    let mut s = settled_on([300, 100, 1_000_000, 10_000]);
    let first = Publish::Cache { candidate: Candidate::Simd, sampling: Sampling::First };
    assert_eq!(loaded(&s), Some(first));
    s.await_confirmation(100.0, None);
    let every = Publish::Cache { candidate: Candidate::Simd, sampling: Sampling::EveryCall };
    assert_eq!(loaded(&s), Some(every));
    let sampled = Event::SampledCall { candidates: ALL, predicted: &NONE, now_ns: 1, process_left_ns: IN_CREDIT };
    assert_eq!(step(&mut s, sampled, &P).publish, every);
    for _ in 0..P.confirm_samples {
        record(&mut s, sample(Backend::Simd, 100, 1, 1.0), &P);
    }
    assert_eq!(s.confirming(), None);
    let by_rate = Publish::Cache { candidate: Candidate::Simd, sampling: Sampling::ByRate };
    assert_eq!(step(&mut s, sampled, &P).publish, by_rate);
    assert_eq!(loaded(&BucketState::new(5000)), None, "an exploring bucket publishes nothing");
}

#[test]
fn a_run_s_first_call_does_not_decide() {
    // A 640 × 480 blur: SIMD 47 µs; Parallel 36 µs back to back, but its first call after
    // SIMD's finds the pool asleep (60 µs). Measured call by call, SIMD would win.
    let two = CandidateSet::of_backends(&[Backend::Simd, Backend::Parallel]);
    let mut s = BucketState::new(307_200);
    let mut calls = Vec::new();
    let mut previous = None;
    loop {
        let d = explore(&mut s, two, NOW, simd_prior(), &NONE, &P);
        if d.kind == DecisionKind::Historical {
            break;
        }
        let cold = previous != Some(d.backend);
        let ns = match d.backend {
            Backend::Parallel if cold => 60_000,
            Backend::Parallel => 36_000,
            _ => 47_000,
        };
        previous = Some(d.backend);
        calls.push(d.backend);
        rec(&mut s, d.backend, ns, false);
    }
    let runs = [vec![Backend::Simd; P.samples as usize], vec![Backend::Parallel; PARALLEL_RUN as usize]].concat();
    assert_eq!(calls, runs, "each candidate in one run of consecutive calls");
    assert!(!s.of(Backend::Parallel).recent_ns.contains(&60_000), "the run's first call is not kept");
    assert_eq!(s.chosen_backend(), Some(Backend::Parallel));
}

#[test]
fn a_parallel_run_starts_with_a_warm_up_and_a_far_slower_one_still_prunes() {
    let two = CandidateSet::of_backends(&[Backend::Simd, Backend::Parallel]);
    let parallel_prior = Decision { backend: Backend::Parallel, kind: DecisionKind::CostModel };
    let mut s = BucketState::new(5000);
    assert_eq!(explore(&mut s, two, NOW, parallel_prior, &NONE, &P).backend, Backend::Parallel);
    rec(&mut s, Backend::Parallel, 100_000, false);
    assert!(s.of(Backend::Parallel).is_empty(), "the run's first call");
    assert_eq!(explore(&mut s, two, NOW, parallel_prior, &NONE, &P).backend, Backend::Parallel);
    rec(&mut s, Backend::Parallel, 100_000, false);
    assert_eq!(s.of(Backend::Parallel).recent_ns, [100_000], "the run's second call is kept");
    // A sample of another candidate than the run's (a call routed before it began) is kept.
    rec(&mut s, Backend::Simd, 90_000, false);
    assert_eq!(s.of(Backend::Simd).recent_ns, [90_000]);
    // A SIMD run keeps its first call: no pool to wake.
    let mut s = BucketState::new(5000);
    assert_eq!(explore(&mut s, two, NOW, simd_prior(), &NONE, &P).backend, Backend::Simd);
    rec(&mut s, Backend::Simd, 100_000, false);
    assert_eq!(s.of(Backend::Simd).recent_ns, [100_000]);
    // Parallel's own run: its first call, far slower than SIMD's figure, prunes it as a warm-up does.
    for _ in 1..P.samples {
        assert_eq!(explore(&mut s, two, NOW, simd_prior(), &NONE, &P).backend, Backend::Simd);
        rec(&mut s, Backend::Simd, 100_000, false);
    }
    assert_eq!(explore(&mut s, two, NOW, simd_prior(), &NONE, &P).backend, Backend::Parallel);
    rec(&mut s, Backend::Parallel, 5_000_000, false);
    assert!(s.is_pruned(Backend::Parallel));
    assert_eq!(s.of(Backend::Parallel).recent_ns, [5_000_000], "the figure that pruned it is kept");
}

/// Every candidate a pool of 16 threads offers a kernel with a Parallel variant (no GPU).
const SIXTEEN: CandidateSet = CandidateSet::of(&[
    Candidate::Scalar,
    Candidate::Simd,
    Candidate::ParallelQuarter,
    Candidate::ParallelHalf,
    Candidate::Parallel,
]);

/// Drives a bucket over `candidates` to a decision from `prior`, answering each exploring
/// call with `time(candidate)` (every call of a run alike); the calls made.
fn settle_widths(
    s: &mut BucketState,
    candidates: CandidateSet,
    (prior, predicted): (Backend, Predictions),
    time: impl Fn(Candidate) -> u64,
) -> Vec<Candidate> {
    let mut calls = Vec::new();
    let prior = Decision { backend: prior, kind: DecisionKind::CostModel };
    for _ in 0..100 {
        let inputs = CallInputs { candidates, later: NOW, prior, predicted, process_left_ns: IN_CREDIT };
        let out = step(s, Event::Call(&inputs), &P);
        let Some(Tell::Decision { decision, .. }) = out.tell else { panic!("a call reports its decision") };
        if decision.kind == DecisionKind::Historical {
            return calls;
        }
        calls.push(decision.candidate);
        let ns = time(decision.candidate);
        let sample = Sample { candidate: decision.candidate, ns, now_ns: 1, interval: 1.0, warmup: false };
        let _ = step(s, Event::Timed(sample), &P);
    }
    panic!("never settled: {calls:?}");
}

#[test]
fn each_width_of_the_pool_is_a_candidate_and_a_narrower_one_wins_where_it_is_faster() {
    // Layer norm 512 × 768 on 16 threads: 37 µs of work, where forking to all 16 costs
    // more than it gains; a quarter of the pool (4 threads) is fastest.
    let time = |c: Candidate| match c {
        Candidate::Scalar => 400_000,
        Candidate::Simd => 60_000,
        Candidate::ParallelQuarter => 20_000,
        Candidate::ParallelHalf => 26_000,
        Candidate::Parallel => 35_000,
        Candidate::Gpu => unreachable!("not a candidate here"),
    };
    let mut s = BucketState::new(393_216);
    let calls = settle_widths(&mut s, SIXTEEN, (Backend::Parallel, NONE), time);
    let count = |width| calls.iter().filter(|&&c| c == width).count() as u64;
    // The prior's run, then the quarter's (faster than the best so far: it costs nothing);
    // the half, slower than the quarter, is called until the budget defers it.
    for width in [Candidate::ParallelQuarter, Candidate::Parallel] {
        assert_eq!(count(width), PARALLEL_RUN, "{width:?} measured in a run: {calls:?}");
    }
    assert!((2..=PARALLEL_RUN).contains(&count(Candidate::ParallelHalf)), "{calls:?}");
    assert_eq!(s.chosen(), Some(Candidate::ParallelQuarter));
    // Where the whole pool is fastest, it is chosen; widths that tie go to fewer threads.
    let mut s = BucketState::new(393_216);
    settle_widths(
        &mut s,
        SIXTEEN,
        (Backend::Parallel, NONE),
        |c| if c == Candidate::Parallel { 10_000 } else { time(c) },
    );
    assert_eq!(s.chosen(), Some(Candidate::Parallel));
    let mut s = BucketState::new(393_216);
    settle_widths(&mut s, SIXTEEN, (Backend::Parallel, NONE), |c| {
        if c.backend() == Backend::Parallel {
            20_000
        } else {
            time(c)
        }
    });
    assert_eq!(s.chosen(), Some(Candidate::ParallelQuarter), "a tie: the fewest threads");
}

#[test]
fn a_width_predicted_hopeless_is_pruned_without_a_call() {
    // 16 threads on a tiny call: the model's fork–join term puts the whole pool at 10×
    // what a quarter of it costs, once a quarter has been measured.
    let predicted = Predictions {
        model: PerCandidate::new([Some(50_000.0), Some(8_000.0), Some(6_000.0), Some(9_000.0), Some(300_000.0), None]),
        ..NONE
    };
    let mut s = BucketState::new(8_192);
    let time = |c: Candidate| match c {
        Candidate::ParallelQuarter => 6_000,
        Candidate::ParallelHalf => 9_000,
        Candidate::Simd => 8_000,
        _ => 60_000,
    };
    let calls = settle_widths(&mut s, SIXTEEN, (Backend::Simd, predicted), time);
    assert!(!calls.contains(&Candidate::Parallel), "{calls:?}");
    assert!(s.of(Candidate::Parallel).is_empty(), "never called");
    assert!(calls.contains(&Candidate::ParallelQuarter), "{calls:?}");
}

#[test]
fn a_parallel_run_between_other_work_keeps_its_first_call() {
    // The bucket's calls are 10 ms apart (a program calling it between other work): every
    // call finds the pool as the program leaves it, and the first is as telling as the rest.
    let two = CandidateSet::of_backends(&[Backend::Simd, Backend::Parallel]);
    let mut s = BucketState::new(5000);
    let mut parallel = Vec::new();
    for k in 1..=6u64 {
        let d = explore(&mut s, two, NOW, simd_prior(), &NONE, &P);
        let candidate = Candidate::of(d.backend);
        if candidate == Candidate::Parallel {
            parallel.push(k);
        }
        let sample = Sample { candidate, ns: 60_000, now_ns: k * 10_000_000, interval: 1.0, warmup: false };
        let _ = record(&mut s, sample, &P);
    }
    assert_eq!(parallel, [4, 5, 6], "SIMD's run, then Parallel's");
    assert_eq!(s.of(Backend::Parallel).recent_ns, [60_000; 3], "nothing dropped");
}

/// A bucket of 5,000 elements as saved with SIMD chosen: these figures (ns, 5 samples each;
/// 0: none), loaded as this machine's own history (`own`) or as another machine's.
fn loaded_from_file(figures: [u64; Backend::COUNT], own: bool) -> BucketState {
    loaded_choice_from_file(Backend::Simd, figures, own)
}

/// [`loaded_from_file`] with `chosen` chosen.
fn loaded_choice_from_file(chosen: Backend, figures: [u64; Backend::COUNT], own: bool) -> BucketState {
    use crate::persist::format::{BucketRecord, TimingRecord};
    let timings = Backend::ALL
        .into_iter()
        .filter(|b| figures[b.index()] > 0)
        .map(|backend| TimingRecord { backend, threads: None, count: 5, recent_ns: vec![figures[backend.index()]; 5] })
        .collect();
    let record = BucketRecord {
        sizes: [4096, 8191],
        typical_size: 5000,
        chosen: Some(chosen),
        chosen_threads: None,
        timings,
        excluded: vec![],
        transfers: None,
    };
    let mut loaded = if own {
        crate::kernel::snapshot::buckets_from(vec![record], ALL)
    } else {
        crate::kernel::snapshot::borrowed_buckets_from(vec![record], ALL)
    };
    loaded.pop().expect("the bucket").1
}

/// Sampled calls of a bucket with a decision, every call timed, 1 ms apart from t = 1 s,
/// with noisy true times `truth`; every change of decision.
fn sampled_calls(s: &mut BucketState, truth: [u64; Backend::COUNT], calls: u64, noise: &mut Noise) -> Vec<Change> {
    let mut changes = Vec::new();
    for i in 0..calls {
        let now = 1_000_000_000 + i * 1_000_000;
        let b = match s.chosen_backend() {
            Some(chosen) => probe(s, ALL, UNKNOWN, now, &P).unwrap_or(chosen),
            None => explore(s, ALL, NOW, simd_prior(), &NONE, &P).backend,
        };
        let sample =
            Sample { candidate: b.into(), ns: noise.time(truth[b.index()]), now_ns: now, interval: 1.0, warmup: false };
        let change = record(s, sample, &P);
        if change != Change::None {
            changes.push(change);
        }
    }
    changes
}

#[test]
fn a_loaded_decision_is_not_re_explored_in_its_first_1000_calls_unless_another_machine_made_it() {
    // Saved: SIMD 100 µs, Scalar 300 µs, the GPU 10 ms. This process finds SIMD 3× slower
    // than saved (a busier machine, another input), Scalar 330 µs: SIMD is still fastest.
    let saved = [300_000, 100_000, 0, 10_000_000];
    let now = [330_000, 300_000, 0, 10_000_000];
    let mut own = loaded_from_file(saved, true);
    assert_eq!((own.chosen_backend(), own.confirming()), (Some(Backend::Simd), None), "trusted, not on probation");
    assert_eq!(loaded(&own), Some(Publish::Cache { candidate: Candidate::Simd, sampling: Sampling::First }));
    let changes = sampled_calls(&mut own, now, 1_000, &mut Noise(44));
    assert_eq!(changes, [], "{own:?}");
    assert_eq!(own.chosen_backend(), Some(Backend::Simd));
    // The same figures from another machine's entry (the fingerprint changed) are checked
    // first, and SIMD 3× off the other machine's figure explores again.
    let mut borrowed = loaded_from_file(saved, false);
    assert!(borrowed.is_borrowed());
    let changes = sampled_calls(&mut borrowed, now, 20, &mut Noise(44));
    assert_eq!(changes.first(), Some(&Change::Reexplore), "{changes:?}");
}

#[test]
fn a_loaded_decision_that_is_beaten_is_replaced_by_what_beats_it_not_by_a_new_round() {
    // Saved: SIMD 100 µs, Scalar 150 µs. Here Scalar takes 60 µs: re-timed within the
    // budget, it takes over; the bucket never explores.
    let mut s = loaded_from_file([150_000, 100_000, 0, 0], true);
    let changes = sampled_calls(&mut s, [60_000, 100_000, 0, 0], 1_000, &mut Noise(7));
    assert_eq!(changes, [Change::Switched(Backend::Scalar)], "{s:?}");
    // Even where the chosen backend's own figures drift past a re-timed alternative's first.
    let mut s = loaded_from_file([150_000, 100_000, 0, 0], true);
    s.trust_loaded();
    let changes = sampled_calls(&mut s, [140_000, 400_000, 0, 0], 1_000, &mut Noise(7));
    assert_eq!(changes, [Change::Switched(Backend::Scalar)], "{s:?}");
}

#[test]
fn a_gpu_decision_loaded_from_this_machine_is_confirmed_before_it_is_trusted() {
    // The adapter is not part of the fingerprint: a GPU decision is re-timed on every call
    // until confirmed, as another machine's is.
    let gpu = loaded_choice_from_file(Backend::Gpu, [300_000, 200_000, 0, 100_000], true);
    assert!(gpu.confirming().is_some(), "{gpu:?}");
    assert_eq!(loaded(&gpu), Some(Publish::Cache { candidate: Candidate::Gpu, sampling: Sampling::EveryCall }));
}

#[test]
fn a_candidate_five_times_slower_than_the_best_gets_at_most_one_run() {
    // SIMD 100 µs. Scalar 5× that: one call. Parallel 5× that: its run's wake-up call
    // (a pool waking may cost that much) and one kept sample, consecutive.
    let mut s = BucketState::new(5000);
    let truth = [500_000, 100_000, 500_000, 0];
    let mut calls = Vec::new();
    loop {
        let d = explore(&mut s, CPU, NOW, simd_prior(), &NONE, &P);
        if d.kind == DecisionKind::Historical {
            break;
        }
        calls.push(d.backend);
        rec(&mut s, d.backend, truth[d.backend.index()], false);
    }
    let count = |b| calls.iter().filter(|&&c| c == b).count();
    assert_eq!((count(Backend::Scalar), count(Backend::Parallel)), (1, 1 + P.run_warmup as usize), "{calls:?}");
    let first = calls.iter().position(|&c| c == Backend::Parallel).unwrap();
    assert_eq!(calls[first..first + count(Backend::Parallel)], [Backend::Parallel; 2], "one run: {calls:?}");
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
    // And none while settled.
    let changes = sampled_calls(&mut s, truth, 1_000, &mut Noise(3));
    assert_eq!(changes, []);
    assert_eq!((s.of(Backend::Scalar).count, s.of(Backend::Parallel).count), (1, 1), "{s:?}");
}

#[test]
fn a_parallel_wake_up_far_beyond_the_call_cap_ends_its_run() {
    // Scalar 0.1 µs (a few hundred elements); the Parallel variant forks threads, 20 µs.
    let two = CandidateSet::of_backends(&[Backend::Scalar, Backend::Parallel]);
    let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
    let mut s = BucketState::new(256);
    let mut calls = Vec::new();
    loop {
        let d = explore(&mut s, two, NOW, scalar_prior, &NONE, &P);
        if d.kind == DecisionKind::Historical {
            break;
        }
        calls.push(d.backend);
        rec(&mut s, d.backend, if d.backend == Backend::Parallel { 20_000 } else { 100 }, false);
    }
    assert_eq!(calls.iter().filter(|&&b| b == Backend::Parallel).count(), 1, "{calls:?}");
    assert_eq!(s.chosen_backend(), Some(Backend::Scalar));
    // Predicted that far off (the cost model's fork–join, a neighbour), it gets no call at all.
    let model = Predictions { model: model([100.0, 0.0, 20_000.0, 0.0]), ..NONE };
    let mut s = BucketState::new(256);
    for _ in 0..P.samples {
        assert_eq!(explore(&mut s, two, NOW, scalar_prior, &model, &P).backend, Backend::Scalar);
        rec(&mut s, Backend::Scalar, 100, false);
    }
    assert_eq!(explore(&mut s, two, NOW, scalar_prior, &model, &P).kind, DecisionKind::Historical);
    assert!(pruned_in_last_round(Backend::Parallel) && s.of(Backend::Parallel).is_empty());
}

#[test]
fn no_alternative_estimated_beyond_the_call_cap_is_re_timed_even_when_its_figures_are_old() {
    // Saved: SIMD 100 µs chosen, Scalar 1.2 ms (12×), the GPU 0.8 ms (8×). Their figures are
    // from another run, so both are re-timed within the budget, but the one beyond the cap never is.
    let mut s = loaded_from_file([1_200_000, 100_000, 0, 800_000], true);
    let changes = sampled_calls(&mut s, [1_200_000, 100_000, 0, 800_000], 3_000, &mut Noise(9));
    assert_eq!(changes, []);
    assert_eq!(s.of(Backend::Scalar).fresh, 0, "{s:?}");
    assert!(s.of(Backend::Gpu).fresh > 0, "{s:?}");
}

#[test]
fn a_dear_candidate_waits_while_the_process_is_over_its_budget_and_an_unknown_one_does_not() {
    // Scalar 40 µs, measured (the prior). Another kernel's exploration left the process in debt.
    let two = SCALAR_SIMD;
    let scalar_prior = Decision { backend: Backend::Scalar, kind: DecisionKind::MoeThreshold };
    let mut s = BucketState::new(8192);
    for _ in 0..P.samples {
        rec(&mut s, Backend::Scalar, 40_000, false);
    }
    // The next call, with this round's budget made large enough for anything.
    let next = |simd: Option<f64>, process_left_ns: f64| {
        let Phase::Exploring(round) = &s.phase else { panic!("exploring") };
        let mut round = round.clone();
        round.budget.calls_ns = 1e12;
        let predicted = Predictions { model: figures([Some(40_000.0), simd, None, None]), ..NONE };
        let inputs = CallInputs { candidates: two, later: NOW, prior: scalar_prior, predicted, process_left_ns };
        match explore::explore(&s.stats, &mut round, &inputs, true, &P) {
            Next::Run(pick) => Some(pick.candidate.backend()),
            Next::Settle { .. } => None,
        }
    };
    // SIMD predicted at 100 µs (2.5×: a cost the budget weighs).
    assert_eq!(next(Some(100_000.0), 1e12), Some(Backend::Simd), "within the process's share");
    assert_eq!(next(Some(100_000.0), -1.0), None, "the process is in debt: deferred, the bucket settles");
    // Nothing predicts it: its first call tells what it costs, debt or not.
    assert_eq!(next(None, -1.0), Some(Backend::Simd));
    // Predicted faster: it costs nothing.
    assert_eq!(next(Some(20_000.0), -1.0), Some(Backend::Simd));
}

#[test]
fn what_exploring_costs_beyond_the_best_stays_within_a_tenth_while_new_and_a_hundredth_once_settled() {
    // SIMD 100 µs (the prior); Scalar 150 µs and Parallel 200 µs, predicted so.
    let predicted = Predictions { model: model([150_000.0, 100_000.0, 200_000.0, 0.0]), ..NONE };
    let truth = [150_000u64, 100_000, 200_000, 0];
    let mut s = BucketState::new(5000);
    let (mut calls_ns, mut extra_ns) = (0.0, 0.0);
    let mut worst_over_a_tenth: f64 = 0.0;
    let mut settled_from = None;
    let mut window = (0.0, 0.0);
    for i in 0..40_000u64 {
        let now = 1_000_000_000 + i * 1_000_000;
        let b = match s.chosen_backend() {
            Some(chosen) => {
                let event = Event::SampledCall {
                    candidates: CPU,
                    predicted: &predicted,
                    now_ns: now,
                    process_left_ns: IN_CREDIT,
                };
                step(&mut s, event, &P).run.map_or(chosen, Candidate::backend)
            }
            None => {
                let inputs = CallInputs {
                    candidates: CPU,
                    later: NOW,
                    prior: simd_prior(),
                    predicted,
                    process_left_ns: IN_CREDIT,
                };
                step(&mut s, Event::Call(&inputs), &P).run.expect("a call").backend()
            }
        };
        let sample = Sample { candidate: b.into(), ns: truth[b.index()], now_ns: now, interval: 1.0, warmup: false };
        let charge = step(&mut s, Event::Timed(sample), &P).charge;
        calls_ns += charge.calls_ns;
        extra_ns += charge.extra_ns;
        worst_over_a_tenth = worst_over_a_tenth.max(extra_ns - P.explore_share * calls_ns);
        let done = matches!(&s.phase, Phase::Settled(st) if st.deferred.set() == CandidateSet::EMPTY);
        if done && settled_from.is_none() {
            settled_from = Some(i);
            window = (calls_ns, extra_ns);
        }
    }
    // One call's worth beyond the share at most: a call is allowed when the ledger holds its estimate.
    assert!(worst_over_a_tenth <= 100_000.0, "{worst_over_a_tenth} ns over a tenth");
    let from = settled_from.expect("every deferred candidate measured");
    assert!(from < 1_000, "the deferred candidates are measured early: from call {from}");
    assert!(s.of(Backend::Scalar).count >= P.samples && s.of(Backend::Parallel).count >= P.samples, "{s:?}");
    let (calls, extra) = (calls_ns - window.0, extra_ns - window.1);
    assert!(extra <= 0.01 * calls + 100_000.0, "once settled: {extra} ns beyond the best over {calls} ns");
    assert!(extra > 0.0, "and it still re-times: a count bounded from above alone proves nothing");
    assert_eq!(s.chosen_backend(), Some(Backend::Simd));
}

#[test]
fn an_alternative_not_measured_here_is_predicted_as_exploring_predicts_it() {
    // sin by a table built per call (SIMD, 9.4 ms at 4M elements) against libm's (Scalar,
    // 30 ms): the exploration deferred Scalar on the kernel's own ratio (3.2× at 1M), so the
    // saved bucket has no Scalar figure. The cost model, which knows no tables, puts Scalar
    // at 4 ms: re-timing it on the model's word would cost a 30 ms call.
    let mut s = loaded_from_file([0, 9_400_000, 0, 0], true);
    let model_only = Predictions { model: model([4e6, 9.4e6, 0.0, 0.0]), ..NONE };
    let with_ratio = Predictions { scalar_per_simd: Some((3.2, 4.0)), ..model_only };
    let retimed = |s: &mut BucketState, predicted: &Predictions| {
        (0..150u64).any(|i| {
            let now = 1_000_000_000 + i * 10_000_000;
            let event =
                Event::SampledCall { candidates: SCALAR_SIMD, predicted, now_ns: now, process_left_ns: IN_CREDIT };
            let b = step(s, event, &P).run.map_or(Backend::Simd, Candidate::backend);
            let ns = if b == Backend::Scalar { 30_000_000 } else { 9_400_000 };
            let _ = step(s, Event::Timed(sample(b, ns, 1 + i / 100, 1.0)), &P);
            b == Backend::Scalar
        })
    };
    assert!(!retimed(&mut s.clone(), &with_ratio), "3.2× SIMD by the kernel's ratio: not within 1% of 150 calls");
    assert!(retimed(&mut s, &model_only), "the model alone calls it free");
}
