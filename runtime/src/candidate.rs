//! What a bucket measures and chooses between ([`Candidate`]: a backend, and
//! for Parallel a [`Width`] of the thread pool), per-candidate values
//! ([`PerCandidate<T>`]) and sets of candidates ([`CandidateSet`]).
//!
//! The router keeps one of many things per candidate (samples, exclusions,
//! predictions) and asks set questions of others (which may run, which were
//! pruned, which were compared with Scalar). Indexing by the enum and a set type
//! say so in the types, where `[T; N]` arrays indexed by an integer and
//! `[bool; N]` used as sets only said it in comments.
//!
//! # Widths
//! The Parallel variant runs on the whole pool, or on half or a quarter of it:
//! on 16 threads, fork–join and wake-up can cost more than a short call's work
//! gains, and which count wins depends on the size and the machine. Each width
//! is a candidate of its own, measured, predicted, pruned and persisted like a
//! backend. A narrower width is offered only where it is at least 2 threads and
//! narrower than the next one ([`Width::offered`]): on 2 or 3 threads only the
//! whole pool is, and nothing changes. Among candidates that tie, fewer
//! threads are the simpler choice (the order of [`Candidate::ALL`]).

use std::fmt;
use std::ops::{Index, IndexMut};

use crate::backend::Backend;

/// How much of the thread pool a Parallel call computes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Width {
    /// A quarter of the pool's threads.
    Quarter,
    /// Half of them.
    Half,
    /// All of them.
    Full,
}

impl Width {
    /// The threads this width computes on in a pool of `pool` threads.
    pub(crate) const fn threads(self, pool: usize) -> usize {
        match self {
            Width::Full => pool,
            Width::Half => pool / 2,
            Width::Quarter => pool / 4,
        }
    }

    /// Whether a pool of `pool` threads offers this width: at least 2 threads, and for
    /// a narrower width fewer than the next wider one (so 4 threads offer 4 and 2; 8
    /// offer 8, 4 and 2; 2 or 3 only the whole pool).
    pub(crate) const fn offered(self, pool: usize) -> bool {
        match self {
            Width::Full => pool >= 2,
            Width::Half => pool / 2 >= 2,
            Width::Quarter => pool / 4 >= 2,
        }
    }

    /// The width of a pool of `pool` threads that computes on `threads` of them, if it offers one.
    pub(crate) fn of_threads(threads: usize, pool: usize) -> Option<Width> {
        [Width::Full, Width::Half, Width::Quarter].into_iter().find(|w| w.offered(pool) && w.threads(pool) == threads)
    }
}

/// What a bucket measures and chooses between: a backend, and for Parallel a width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Candidate {
    /// [`Backend::Scalar`].
    Scalar,
    /// [`Backend::Simd`].
    Simd,
    /// [`Backend::Parallel`] on a quarter of the pool.
    ParallelQuarter,
    /// [`Backend::Parallel`] on half of the pool.
    ParallelHalf,
    /// [`Backend::Parallel`] on the whole pool.
    Parallel,
    /// [`Backend::Gpu`].
    Gpu,
}

impl Candidate {
    /// Every candidate, in the order of deterministic tie-breaks (simplest first).
    pub(crate) const ALL: [Candidate; Candidate::COUNT] = [
        Candidate::Scalar,
        Candidate::Simd,
        Candidate::ParallelQuarter,
        Candidate::ParallelHalf,
        Candidate::Parallel,
        Candidate::Gpu,
    ];

    /// How many candidates there are (the length of per-candidate arrays).
    pub(crate) const COUNT: usize = 6;

    /// Position in [`Candidate::ALL`].
    pub(crate) const fn index(self) -> usize {
        self as usize
    }

    /// The candidate at `index` in [`Candidate::ALL`], if any.
    pub(crate) const fn from_index(index: usize) -> Option<Candidate> {
        if index < Candidate::COUNT {
            Some(Candidate::ALL[index])
        } else {
            None
        }
    }

    /// The variant it calls.
    pub(crate) const fn backend(self) -> Backend {
        match self {
            Candidate::Scalar => Backend::Scalar,
            Candidate::Simd => Backend::Simd,
            Candidate::ParallelQuarter | Candidate::ParallelHalf | Candidate::Parallel => Backend::Parallel,
            Candidate::Gpu => Backend::Gpu,
        }
    }

    /// Its width of the pool: [`Width::Full`] for every candidate but the narrower Parallel ones.
    pub(crate) const fn width(self) -> Width {
        match self {
            Candidate::ParallelQuarter => Width::Quarter,
            Candidate::ParallelHalf => Width::Half,
            _ => Width::Full,
        }
    }

    /// The Parallel candidate of `width`.
    pub(crate) const fn parallel(width: Width) -> Candidate {
        match width {
            Width::Full => Candidate::Parallel,
            Width::Half => Candidate::ParallelHalf,
            Width::Quarter => Candidate::ParallelQuarter,
        }
    }

    /// Whether it is a Parallel candidate narrower than the whole pool.
    pub(crate) const fn is_narrow(self) -> bool {
        matches!(self, Candidate::ParallelQuarter | Candidate::ParallelHalf)
    }

    /// The threads a narrower Parallel candidate computes on in a pool of `pool`; `None`
    /// for every other candidate.
    pub(crate) const fn narrow_threads(self, pool: usize) -> Option<usize> {
        if self.is_narrow() {
            Some(self.width().threads(pool))
        } else {
            None
        }
    }
}

impl Candidate {
    /// The backend's candidate; Parallel on the whole pool.
    pub(crate) const fn of(b: Backend) -> Candidate {
        match b {
            Backend::Scalar => Candidate::Scalar,
            Backend::Simd => Candidate::Simd,
            Backend::Parallel => Candidate::Parallel,
            Backend::Gpu => Candidate::Gpu,
        }
    }
}

impl From<Backend> for Candidate {
    fn from(b: Backend) -> Candidate {
        Candidate::of(b)
    }
}

/// One `T` per candidate, indexed by [`Candidate`] (or by a [`Backend`], for its candidate).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct PerCandidate<T>([T; Candidate::COUNT]);

impl<T> PerCandidate<T> {
    /// The values in [`Candidate::ALL`] order.
    pub(crate) const fn new(values: [T; Candidate::COUNT]) -> Self {
        PerCandidate(values)
    }

    /// `f(c)` for every candidate.
    pub(crate) fn from_fn(mut f: impl FnMut(Candidate) -> T) -> Self {
        PerCandidate(Candidate::ALL.map(&mut f))
    }

    /// `f` of each value, by reference.
    pub(crate) fn map_ref<U>(&self, f: impl FnMut(&T) -> U) -> PerCandidate<U> {
        PerCandidate(self.0.each_ref().map(f))
    }

    /// Each candidate with its value, in [`Candidate::ALL`] order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Candidate, &T)> {
        Candidate::ALL.into_iter().zip(&self.0)
    }

    /// The values, in [`Candidate::ALL`] order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter()
    }

    /// The values, mutable, in [`Candidate::ALL`] order.
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.0.iter_mut()
    }
}

impl<T> Index<Candidate> for PerCandidate<T> {
    type Output = T;

    #[inline]
    fn index(&self, c: Candidate) -> &T {
        &self.0[c.index()]
    }
}

impl<T> IndexMut<Candidate> for PerCandidate<T> {
    #[inline]
    fn index_mut(&mut self, c: Candidate) -> &mut T {
        &mut self.0[c.index()]
    }
}

impl<T> Index<Backend> for PerCandidate<T> {
    type Output = T;

    #[inline]
    fn index(&self, b: Backend) -> &T {
        &self[Candidate::of(b)]
    }
}

impl<T> IndexMut<Backend> for PerCandidate<T> {
    #[inline]
    fn index_mut(&mut self, b: Backend) -> &mut T {
        &mut self[Candidate::of(b)]
    }
}

impl<T: fmt::Debug> fmt::Debug for PerCandidate<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A set of candidates.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct CandidateSet(u8);

impl CandidateSet {
    /// No candidate.
    pub(crate) const EMPTY: CandidateSet = CandidateSet(0);
    /// Every candidate.
    #[cfg(test)]
    pub(crate) const ALL: CandidateSet = CandidateSet((1 << Candidate::COUNT) - 1);

    const fn bit(c: Candidate) -> u8 {
        1 << c.index()
    }

    /// The candidates in `candidates`.
    pub(crate) const fn of(candidates: &[Candidate]) -> CandidateSet {
        let mut bits = 0;
        let mut i = 0;
        while i < candidates.len() {
            bits |= Self::bit(candidates[i]);
            i += 1;
        }
        CandidateSet(bits)
    }

    /// The candidates of `backends` (Parallel on the whole pool).
    #[cfg(test)]
    pub(crate) const fn of_backends(backends: &[Backend]) -> CandidateSet {
        let mut bits = 0;
        let mut i = 0;
        while i < backends.len() {
            bits |= Self::bit(Candidate::of(backends[i]));
            i += 1;
        }
        CandidateSet(bits)
    }

    /// The candidates for which `f` holds.
    pub(crate) fn from_fn(mut f: impl FnMut(Candidate) -> bool) -> CandidateSet {
        Candidate::ALL.into_iter().filter(|&c| f(c)).fold(CandidateSet::EMPTY, CandidateSet::with)
    }

    /// Whether `c` is in the set.
    #[inline]
    pub(crate) fn contains(self, c: impl Into<Candidate>) -> bool {
        self.0 & Self::bit(c.into()) != 0
    }

    /// This set and `c`.
    pub(crate) fn with(self, c: impl Into<Candidate>) -> CandidateSet {
        CandidateSet(self.0 | Self::bit(c.into()))
    }

    /// This set without `c`.
    pub(crate) fn without(self, c: impl Into<Candidate>) -> CandidateSet {
        CandidateSet(self.0 & !Self::bit(c.into()))
    }

    /// Adds `c`; whether it was new.
    pub(crate) fn insert(&mut self, c: impl Into<Candidate>) -> bool {
        let c = c.into();
        let new = !self.contains(c);
        *self = self.with(c);
        new
    }

    /// The candidates in both sets.
    pub(crate) const fn and(self, other: CandidateSet) -> CandidateSet {
        CandidateSet(self.0 & other.0)
    }

    /// The candidates in this set and not in `other`.
    pub(crate) const fn minus(self, other: CandidateSet) -> CandidateSet {
        CandidateSet(self.0 & !other.0)
    }

    /// The candidates in the set, in [`Candidate::ALL`] order.
    pub(crate) fn iter(self) -> impl Iterator<Item = Candidate> {
        Candidate::ALL.into_iter().filter(move |&c| self.contains(c))
    }
}

impl fmt::Debug for CandidateSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_what_was_put_in_and_nothing_else() {
        let mut s = CandidateSet::of_backends(&[Backend::Scalar, Backend::Gpu]);
        assert!(s.contains(Backend::Scalar) && s.contains(Candidate::Gpu));
        assert!(!s.contains(Backend::Simd) && !s.contains(Backend::Parallel));
        assert!(s.insert(Backend::Simd));
        assert!(!s.insert(Candidate::Simd), "already there");
        assert_eq!(s.without(Backend::Gpu).iter().collect::<Vec<_>>(), [Candidate::Scalar, Candidate::Simd]);
        assert_eq!(s.minus(CandidateSet::ALL), CandidateSet::EMPTY);
        assert_eq!(CandidateSet::ALL.iter().collect::<Vec<_>>(), Candidate::ALL);
        assert_eq!(CandidateSet::from_fn(|c| c != Candidate::Parallel), CandidateSet::ALL.without(Backend::Parallel));
        assert_eq!(format!("{s:?}"), "{Scalar, Simd, Gpu}");
    }

    #[test]
    fn values_are_indexed_by_candidate_and_by_backend() {
        let mut v = PerCandidate::from_fn(|c| c.index() * 10);
        v[Backend::Gpu] += 1;
        v[Candidate::ParallelHalf] += 2;
        assert_eq!((v[Backend::Scalar], v[Backend::Parallel], v[Candidate::Gpu]), (0, 40, 51));
        assert_eq!(v.map_ref(|x| x + 1).values().copied().collect::<Vec<_>>(), [1, 11, 21, 33, 41, 52]);
    }

    #[test]
    fn widths_are_offered_from_two_threads_and_only_where_narrower() {
        let offered = |pool: usize| -> Vec<usize> {
            [Width::Full, Width::Half, Width::Quarter]
                .iter()
                .filter(|w| w.offered(pool))
                .map(|w| w.threads(pool))
                .collect()
        };
        assert_eq!(offered(1), Vec::<usize>::new());
        assert_eq!(offered(2), [2]);
        assert_eq!(offered(3), [3]);
        assert_eq!(offered(4), [4, 2]);
        assert_eq!(offered(6), [6, 3]);
        assert_eq!(offered(8), [8, 4, 2]);
        assert_eq!(offered(16), [16, 8, 4]);
        assert_eq!(Width::of_threads(8, 16), Some(Width::Half));
        assert_eq!(Width::of_threads(2, 16), None, "not a width of 16");
        assert_eq!(Width::of_threads(16, 16), Some(Width::Full));
        assert_eq!(Candidate::ParallelHalf.narrow_threads(16), Some(8));
        assert_eq!(Candidate::Parallel.narrow_threads(16), None);
        assert!(Candidate::Simd < Candidate::ParallelQuarter && Candidate::ParallelHalf < Candidate::Parallel);
        assert_eq!(Candidate::from(Backend::Parallel).width(), Width::Full);
    }
}
