//! Per-backend values and sets of backends: [`PerBackend<T>`], indexed by a
//! [`Backend`], and [`BackendSet`].
//!
//! The router keeps one of many things per backend (samples, exclusions,
//! predictions) and asks set questions of others (which may run, which were
//! pruned, which were compared with Scalar). Indexing by the enum and a set type
//! say so in the types, where `[T; Backend::COUNT]` arrays indexed by
//! `b.index()` and `[bool; Backend::COUNT]` used as sets only said it in comments.

use std::fmt;
use std::ops::{Index, IndexMut};

use crate::backend::Backend;

/// One `T` per backend, indexed by [`Backend`].
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct PerBackend<T>([T; Backend::COUNT]);

impl<T> PerBackend<T> {
    /// The values in [`Backend::ALL`] order.
    pub(crate) const fn new(values: [T; Backend::COUNT]) -> Self {
        PerBackend(values)
    }

    /// `f(b)` for every backend.
    pub(crate) fn from_fn(mut f: impl FnMut(Backend) -> T) -> Self {
        PerBackend(Backend::ALL.map(&mut f))
    }

    /// `f` of each value, by reference.
    pub(crate) fn map_ref<U>(&self, f: impl FnMut(&T) -> U) -> PerBackend<U> {
        PerBackend(self.0.each_ref().map(f))
    }

    /// Each backend with its value, in [`Backend::ALL`] order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Backend, &T)> {
        Backend::ALL.into_iter().zip(&self.0)
    }

    /// The values, in [`Backend::ALL`] order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter()
    }

    /// The values, mutable, in [`Backend::ALL`] order.
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.0.iter_mut()
    }
}

impl<T> Index<Backend> for PerBackend<T> {
    type Output = T;

    #[inline]
    fn index(&self, b: Backend) -> &T {
        &self.0[b.index()]
    }
}

impl<T> IndexMut<Backend> for PerBackend<T> {
    #[inline]
    fn index_mut(&mut self, b: Backend) -> &mut T {
        &mut self.0[b.index()]
    }
}

impl<T: fmt::Debug> fmt::Debug for PerBackend<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A set of backends.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct BackendSet(u8);

impl BackendSet {
    /// No backend.
    pub(crate) const EMPTY: BackendSet = BackendSet(0);
    /// Every backend.
    #[cfg(test)]
    pub(crate) const ALL: BackendSet = BackendSet((1 << Backend::COUNT) - 1);

    const fn bit(b: Backend) -> u8 {
        1 << b.index()
    }

    /// The backends in `backends`.
    pub(crate) const fn of(backends: &[Backend]) -> BackendSet {
        let mut bits = 0;
        let mut i = 0;
        while i < backends.len() {
            bits |= Self::bit(backends[i]);
            i += 1;
        }
        BackendSet(bits)
    }

    /// The backends for which `f` holds.
    pub(crate) fn from_fn(mut f: impl FnMut(Backend) -> bool) -> BackendSet {
        Backend::ALL.into_iter().filter(|&b| f(b)).fold(BackendSet::EMPTY, BackendSet::with)
    }

    /// Whether `b` is in the set.
    #[inline]
    pub(crate) const fn contains(self, b: Backend) -> bool {
        self.0 & Self::bit(b) != 0
    }

    /// This set and `b`.
    pub(crate) const fn with(self, b: Backend) -> BackendSet {
        BackendSet(self.0 | Self::bit(b))
    }

    /// This set without `b`.
    pub(crate) const fn without(self, b: Backend) -> BackendSet {
        BackendSet(self.0 & !Self::bit(b))
    }

    /// Adds `b`; whether it was new.
    pub(crate) fn insert(&mut self, b: Backend) -> bool {
        let new = !self.contains(b);
        *self = self.with(b);
        new
    }

    /// The backends in both sets.
    pub(crate) const fn and(self, other: BackendSet) -> BackendSet {
        BackendSet(self.0 & other.0)
    }

    /// The backends in this set and not in `other`.
    pub(crate) const fn minus(self, other: BackendSet) -> BackendSet {
        BackendSet(self.0 & !other.0)
    }

    /// The backends in the set, in [`Backend::ALL`] order.
    pub(crate) fn iter(self) -> impl Iterator<Item = Backend> {
        Backend::ALL.into_iter().filter(move |&b| self.contains(b))
    }
}

impl fmt::Debug for BackendSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_what_was_put_in_and_nothing_else() {
        let mut s = BackendSet::of(&[Backend::Scalar, Backend::Gpu]);
        assert!(s.contains(Backend::Scalar) && s.contains(Backend::Gpu));
        assert!(!s.contains(Backend::Simd) && !s.contains(Backend::Parallel));
        assert!(s.insert(Backend::Simd));
        assert!(!s.insert(Backend::Simd), "already there");
        assert_eq!(s.without(Backend::Gpu).iter().collect::<Vec<_>>(), [Backend::Scalar, Backend::Simd]);
        assert_eq!(s.minus(BackendSet::ALL), BackendSet::EMPTY);
        assert_eq!(BackendSet::ALL.iter().collect::<Vec<_>>(), Backend::ALL);
        assert_eq!(BackendSet::from_fn(|b| b != Backend::Parallel), BackendSet::ALL.without(Backend::Parallel));
        assert_eq!(format!("{s:?}"), "{Scalar, Simd, Gpu}");
    }

    #[test]
    fn values_are_indexed_by_backend() {
        let mut v = PerBackend::from_fn(|b| b.index() * 10);
        v[Backend::Gpu] += 1;
        assert_eq!((v[Backend::Scalar], v[Backend::Parallel], v[Backend::Gpu]), (0, 20, 31));
        assert_eq!(v.map_ref(|x| x + 1).values().copied().collect::<Vec<_>>(), [1, 11, 21, 32]);
    }
}
