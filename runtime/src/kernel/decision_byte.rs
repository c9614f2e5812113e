//! The decision byte: what a bucket caches for the fast path, in one
//! `AtomicU8` per bucket ([`DecisionCell`]), so a settled call costs one relaxed
//! load; and the flags a [`Route`](super::Route) carries ([`RouteFlags`]), which
//! keep some of its bits.
//!
//! | bits | [`DecisionByte`] | [`RouteFlags`] |
//! | --- | --- | --- |
//! | 7 | wrap calls in a tracing span (slow calls on a site that is not hot) | the same |
//! | 3..=6 | the sampling interval N (one call in N is timed), as a code: see [`SHIFTS`] | bit 6: this call is timed |
//! | 0..=2 | the candidate's [`Candidate::index`] (a backend, and for Parallel a width); 7: no decision is cached, the call takes the cold path | the candidate |
//!
//! It also holds the rule that picks a settled bucket's sampling interval
//! ([`sampling_shift`]): the longer of the interval that gives the bucket about
//! [`TARGET_SAMPLES_PER_SEC`] timed calls a second ([`shift_for_rate`]) and the
//! shortest one at which timing costs at most [`SAMPLING_SHARE`] of the bucket's
//! own time ([`shift_for_cost`]). A timed call goes through the cold path (two
//! lock acquisitions, clock reads, statistics), a few microseconds when the
//! bucket is called rarely and its state is out of cache, so timing a cheap
//! kernel's calls often would cost more than correcting its decision is worth
//! (BENCHMARKS.md, "Routing quality", run A).

use std::sync::atomic::{AtomicU8, Ordering};

use crate::candidate::Candidate;

/// Calls are wrapped in a span.
const SPAN: u8 = 0x80;
const SHIFT_MASK: u8 = 0x78;
const SHIFT_AT: u32 = 3;
const CANDIDATE_MASK: u8 = 0x07;
/// The candidate bits of a byte with no decision.
const NONE: u8 = 0x07;

/// The sampling interval a bucket starts with once settled, before its call rate is
/// known: one call in 2^4 = 16.
pub(super) const MIN_SHIFT: u8 = 4;
/// The longest sampling interval: one call in 2^17 = 131,072, so a bucket keeps its
/// target rate (about 50 samples a second) up to about 6.5 million calls a second.
pub(super) const MAX_SHIFT: u8 = 17;

/// The interval exponents the four shift bits can name, by code. Rare buckets need
/// short intervals (every call while a loaded decision is confirmed, or while a bucket
/// is called less than ~100 times a second) and busy ones long ones, which is more
/// than 16 exponents; the low end, where oversampling costs nothing measurable,
/// skips 1 and 3.
pub(super) const SHIFTS: [u8; 16] = [0, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, MAX_SHIFT];

/// What a call of a bucket that times every call spends: more than any allowance holds,
/// so the call is always timed, whatever the thread's allowance (see `route`).
pub(super) const EVERY_CALL: i32 = 1 << 30;

/// Per code, what one call spends of the fast path's sampling allowance: `2^(MAX_SHIFT - shift)`,
/// or [`EVERY_CALL`] for an interval of 1.
const SPEND: [i32; 16] = {
    let mut t = [0; 16];
    let mut i = 0;
    while i < 16 {
        t[i] = if SHIFTS[i] == 0 { EVERY_CALL } else { 1 << (MAX_SHIFT - SHIFTS[i]) };
        i += 1;
    }
    t
};

/// How many timed samples per second a settled bucket aims for.
pub(super) const TARGET_SAMPLES_PER_SEC: f64 = 50.0;

/// The interval exponent for a bucket called `calls_per_sec` times a second (0 when
/// not known yet: [`MIN_SHIFT`]): the power of two nearest to `calls_per_sec /`
/// [`TARGET_SAMPLES_PER_SEC`], so a bucket gets 35–71 samples a second up to
/// [`MAX_SHIFT`]; a rare bucket times every call, or every fourth, so a wrong decision
/// in it corrects within a few calls (unless timing it costs more than
/// [`SAMPLING_SHARE`] of its time: see [`sampling_shift`]).
pub(super) fn shift_for_rate(calls_per_sec: f64) -> u8 {
    if !calls_per_sec.is_finite() || calls_per_sec <= 0.0 {
        return MIN_SHIFT;
    }
    let ideal = (calls_per_sec / TARGET_SAMPLES_PER_SEC).log2().round();
    ideal.clamp(0.0, f64::from(MAX_SHIFT)) as u8
}

/// The share of a settled bucket's own time that timing its calls may cost.
pub(super) const SAMPLING_SHARE: f64 = 0.01;

/// The largest cost of one timed call taken into account, in nanoseconds: a
/// measurement above it was preempted, not slowed by the router's work.
pub(super) const MAX_OVERHEAD_NS: f64 = 50_000.0;

/// The shortest interval exponent at which timing one call in `2^shift` costs at most
/// [`SAMPLING_SHARE`] of the bucket's time, when a timed call costs `overhead_ns` more
/// than an untimed one and a call takes `call_ns`: the smallest representable exponent
/// (see [`SHIFTS`]) with `overhead_ns / 2^shift ≤ SAMPLING_SHARE × call_ns`. 0 (no
/// bound) while either figure is unknown (0 or not finite).
pub(super) fn shift_for_cost(overhead_ns: f64, call_ns: f64) -> u8 {
    let known = |x: f64| x.is_finite() && x > 0.0;
    if !known(overhead_ns) || !known(call_ns) {
        return 0;
    }
    let interval = overhead_ns.min(MAX_OVERHEAD_NS) / (SAMPLING_SHARE * call_ns);
    if interval <= 1.0 {
        return 0;
    }
    let exact = interval.log2().ceil().min(f64::from(MAX_SHIFT)) as u8;
    // Round up to a nameable exponent, so the bound holds after encoding.
    SHIFTS.iter().copied().find(|&s| s >= exact).unwrap_or(MAX_SHIFT)
}

/// The sampling interval exponent of a settled bucket called `calls_per_sec` times a
/// second, whose calls take `call_ns` and whose timed calls cost `overhead_ns` on top:
/// the longer of [`shift_for_rate`] and [`shift_for_cost`]. So a bucket is timed about
/// [`TARGET_SAMPLES_PER_SEC`] times a second, or less often where that would cost more
/// than [`SAMPLING_SHARE`] of its time (a cheap kernel called rarely: a decision
/// worth nanoseconds is corrected more slowly, never at a tenfold cost).
pub(super) fn sampling_shift(calls_per_sec: f64, overhead_ns: f64, call_ns: f64) -> u8 {
    shift_for_rate(calls_per_sec).max(shift_for_cost(overhead_ns, call_ns))
}

/// The cost of a timed call as the router keeps it: `measured` (ns) folded into the
/// running estimate `old` (0: none yet) with weight 1/5, each measurement first capped
/// at 4× the estimate and at [`MAX_OVERHEAD_NS`], so a preempted measurement moves the
/// estimate by at most 1.6× and a few quiet ones bring it back.
pub(super) fn smooth_overhead(old: f64, measured: f64) -> f64 {
    if !measured.is_finite() || measured < 0.0 {
        return old;
    }
    let measured = measured.min(MAX_OVERHEAD_NS);
    if old <= 0.0 {
        return measured;
    }
    0.8 * old + 0.2 * measured.min(4.0 * old)
}

/// The code of the longest representable interval not longer than `2^shift`.
fn code_of(shift: u8) -> u8 {
    let shift = shift.min(MAX_SHIFT);
    SHIFTS.iter().rposition(|&s| s <= shift).unwrap_or(0) as u8
}

/// One bucket's decision byte (see the module docs for its bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(super) struct DecisionByte(u8);

impl DecisionByte {
    /// Nothing cached: the call takes the cold path.
    pub(super) const UNDECIDED: DecisionByte = DecisionByte(NONE);

    /// The byte caching `candidate`, timing one call in `2^shift` (or more often, where
    /// [`SHIFTS`] has no such exponent), spanned or not.
    pub(super) fn cached(candidate: Candidate, shift: u8, span: bool) -> DecisionByte {
        DecisionByte(if span { SPAN } else { 0 } | (code_of(shift) << SHIFT_AT) | candidate.index() as u8)
    }

    /// Whether a decision is cached: the fast path may use it.
    #[inline]
    pub(super) fn is_cached(self) -> bool {
        self.0 & CANDIDATE_MASK != NONE
    }

    /// The candidate the byte names (Scalar when none is cached).
    #[inline]
    pub(super) fn candidate(self) -> Candidate {
        candidate_of(self.0)
    }

    /// log2 of the sampling interval the byte names.
    #[inline]
    pub(super) fn shift(self) -> u8 {
        SHIFTS[usize::from((self.0 & SHIFT_MASK) >> SHIFT_AT)]
    }

    /// Whether calls are wrapped in a span.
    #[cfg(test)]
    fn spans(self) -> bool {
        self.0 & SPAN != 0
    }

    /// What a call of a bucket with this byte spends of the sampling allowance:
    /// `2^(MAX_SHIFT - shift)` ([`EVERY_CALL`] for an interval of 1).
    #[inline]
    pub(super) fn spend(self) -> i32 {
        SPEND[usize::from((self.0 & SHIFT_MASK) >> SHIFT_AT)]
    }
}

/// The candidate in the low bits of a byte or of a route's flags.
#[inline]
fn candidate_of(bits: u8) -> Candidate {
    Candidate::from_index((bits & CANDIDATE_MASK) as usize).unwrap_or(Candidate::Scalar)
}

/// Where a bucket's [`DecisionByte`] lives: read by every call, written by the cold path.
#[derive(Debug)]
pub(super) struct DecisionCell(AtomicU8);

impl DecisionCell {
    /// A cell holding [`DecisionByte::UNDECIDED`].
    pub(super) const fn new() -> DecisionCell {
        DecisionCell(AtomicU8::new(NONE))
    }

    /// The byte.
    #[inline]
    pub(super) fn load(&self) -> DecisionByte {
        // Relaxed: the byte is the entire message (no other data is published with
        // it); a stale read only sends this call through the cold path once more.
        DecisionByte(self.0.load(Ordering::Relaxed))
    }

    /// Replaces the byte.
    pub(super) fn store(&self, byte: DecisionByte) {
        // Relaxed: as in `load`.
        self.0.store(byte.0, Ordering::Relaxed);
    }
}

/// What a [`Route`](super::Route) carries: its bucket's candidate and span bits, and
/// whether this call is timed (see the module docs). Three words of `Route`
/// passed by value, so the fast path keeps it in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(super) struct RouteFlags(u8);

impl RouteFlags {
    /// This call is timed. (A route carries no interval, so one of its bits is free.)
    const TIMED: u8 = 0x40;

    /// The flags of an untimed call of a bucket whose byte is `byte`.
    #[inline]
    pub(super) fn untimed(byte: DecisionByte) -> RouteFlags {
        RouteFlags(byte.0 & (CANDIDATE_MASK | SPAN))
    }

    /// The flags of a call on `candidate`, timed or not, not spanned.
    pub(super) fn new(candidate: Candidate, timed: bool) -> RouteFlags {
        RouteFlags(candidate.index() as u8 | if timed { Self::TIMED } else { 0 })
    }

    /// The candidate.
    #[inline]
    pub(super) fn candidate(self) -> Candidate {
        candidate_of(self.0)
    }

    /// Whether the call is timed.
    #[inline]
    pub(super) fn is_timed(self) -> bool {
        self.0 & Self::TIMED != 0
    }

    /// Whether the call is wrapped in a span.
    #[inline]
    pub(super) fn spans(self) -> bool {
        self.0 & SPAN != 0
    }

    /// Whether the call is neither timed nor spanned and runs on the whole pool: whether
    /// [`Route::run`](super::Route::run) only calls. (The narrower Parallel candidates are
    /// indices 2 and 3 of [`Candidate::ALL`].)
    #[inline]
    pub(super) fn is_plain(self) -> bool {
        self.0 & (Self::TIMED | SPAN) == 0 && self.0 & 0b110 != 0b010
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_candidate_and_shift() {
        assert!(!DecisionByte::UNDECIDED.is_cached());
        for b in Candidate::ALL {
            for s in SHIFTS {
                for span in [false, true] {
                    let byte = DecisionByte::cached(b, s, span);
                    assert_eq!((byte.candidate(), byte.shift(), byte.spans()), (b, s, span));
                    let flags = RouteFlags::untimed(byte);
                    assert_eq!(flags.candidate(), b);
                    assert_eq!(flags.is_plain(), !span && !b.is_narrow(), "{b:?}");
                    assert!(!RouteFlags::new(b, true).is_plain());
                    assert_eq!(byte.spend(), if s == 0 { EVERY_CALL } else { 1 << (MAX_SHIFT - s) });
                    assert!(byte.is_cached());
                }
            }
        }
    }

    /// Samples a second a bucket called `rate` times a second gets.
    fn samples_per_sec(rate: f64) -> f64 {
        rate / f64::from(1u32 << DecisionByte::cached(Candidate::Simd, shift_for_rate(rate), false).shift())
    }

    #[test]
    fn a_busy_bucket_keeps_its_target_rate_up_to_millions_of_calls_a_second() {
        for rate in [800.0, 5_000.0, 40_000.0, 1e6, 2.6e6, 3.1e6, 6e6] {
            let got = samples_per_sec(rate);
            assert!(
                (TARGET_SAMPLES_PER_SEC / 2.0..=TARGET_SAMPLES_PER_SEC * 2.0).contains(&got),
                "{rate} calls/s gives {got} samples/s"
            );
        }
    }

    #[test]
    fn a_rare_bucket_times_most_of_its_calls_and_an_unknown_rate_starts_at_16() {
        assert_eq!(DecisionByte::cached(Candidate::Simd, shift_for_rate(20.0), false).shift(), 0);
        assert_eq!(DecisionByte::cached(Candidate::Simd, shift_for_rate(120.0), false).shift(), 0);
        assert_eq!(DecisionByte::cached(Candidate::Simd, shift_for_rate(150.0), false).shift(), 2, "every fourth call");
        assert_eq!(DecisionByte::cached(Candidate::Simd, shift_for_rate(400.0), false).shift(), 2);
        assert_eq!(shift_for_rate(0.0), MIN_SHIFT);
        assert_eq!(shift_for_rate(f64::NAN), MIN_SHIFT);
    }

    /// The share of a bucket's time that timing costs at `rate` calls a second.
    fn timing_share(rate: f64, overhead_ns: f64, call_ns: f64) -> f64 {
        let interval = f64::from(
            1u32 << DecisionByte::cached(Candidate::Simd, sampling_shift(rate, overhead_ns, call_ns), false).shift(),
        );
        overhead_ns / interval / call_ns
    }

    #[test]
    fn timing_a_cheap_rarely_called_bucket_costs_at_most_its_share() {
        // A 100 ns kernel called 200 times a second, timed calls costing 1.5 µs: by rate
        // alone every fourth call would be timed (375 ns a call on average, 3.75× the kernel).
        assert_eq!(shift_for_rate(200.0), 2);
        for (rate, overhead, call) in [(200.0, 1_500.0, 100.0), (20.0, 5_000.0, 80.0), (3_000.0, 800.0, 300.0)] {
            let share = timing_share(rate, overhead, call);
            assert!(share <= SAMPLING_SHARE, "{rate}/s, {overhead} ns per timed call, {call} ns a call: {share}");
            assert!(share > SAMPLING_SHARE / 4.0, "no longer than needed: {share}");
        }
        // 1.5 µs / (1% of 100 ns) = 1,500 calls between timed ones at least: 2^11.
        assert_eq!(sampling_shift(200.0, 1_500.0, 100.0), 11);
    }

    #[test]
    fn an_expensive_or_busy_bucket_keeps_the_rate_rule() {
        // 10 µs calls at 50 a second: timing every call costs 1.5 µs, 15% — over the share.
        assert_eq!(sampling_shift(50.0, 1_500.0, 10_000.0), 4);
        // 1 ms calls: every call is timed, as the rate rule says.
        assert_eq!(sampling_shift(50.0, 1_500.0, 1e6), 0);
        // Millions of calls a second: the rate rule's interval is already far longer.
        assert_eq!(sampling_shift(3e6, 1_500.0, 200.0), shift_for_rate(3e6));
        // Nothing measured yet: the rate rule alone.
        assert_eq!(sampling_shift(200.0, 0.0, 100.0), 2);
        assert_eq!(sampling_shift(200.0, 1_500.0, 0.0), 2);
        assert_eq!(sampling_shift(200.0, f64::NAN, 100.0), 2);
    }

    #[test]
    fn the_cost_bound_rounds_up_to_a_named_interval_and_stops_at_the_longest() {
        // 1% of 1 µs = 10 ns: 15 ns needs 2^1, which is not named, so 2^2.
        assert_eq!(shift_for_cost(15.0, 1_000.0), 2);
        assert_eq!(shift_for_cost(10.0, 1_000.0), 0);
        assert_eq!(shift_for_cost(1e12, 1.0), MAX_SHIFT);
        for s in [shift_for_cost(15.0, 1_000.0), shift_for_cost(1e12, 1.0)] {
            assert_eq!(DecisionByte::cached(Candidate::Simd, s, false).shift(), s);
        }
    }

    #[test]
    fn a_preempted_measurement_barely_moves_the_overhead_estimate() {
        let mut est = smooth_overhead(0.0, 2_000.0);
        assert_eq!(est, 2_000.0, "the first measurement is taken as it is");
        est = smooth_overhead(est, 8e6); // a time slice lost inside the cold path
        assert!(est <= 1.6 * 2_000.0, "{est}");
        for _ in 0..15 {
            est = smooth_overhead(est, 2_000.0);
        }
        assert!((est - 2_000.0).abs() < 100.0, "quiet measurements bring it back: {est}");
        assert_eq!(smooth_overhead(0.0, 1e9), MAX_OVERHEAD_NS, "a first measurement is capped too");
        assert_eq!(smooth_overhead(est, f64::NAN), est);
    }

    #[test]
    fn every_interval_from_16_to_the_longest_is_named_and_shorter_ones_round_down() {
        for s in MIN_SHIFT..=MAX_SHIFT {
            assert_eq!(DecisionByte::cached(Candidate::Simd, s, false).shift(), s);
        }
        assert_eq!(DecisionByte::cached(Candidate::Simd, 1, false).shift(), 0);
        assert_eq!(DecisionByte::cached(Candidate::Simd, 3, false).shift(), 2);
        assert_eq!(DecisionByte::cached(Candidate::Simd, 40, false).shift(), MAX_SHIFT);
    }
}
