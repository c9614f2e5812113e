//! Where a kernel's chosen backend changes with size, and whether that change
//! is a crossover (the new backend is faster) or a tie (the two measured within
//! the router's tie band, so either choice is as good and the router's
//! tie-break or noise picked one). The tour, [`KernelTable`](super::KernelTable)'s
//! `Display` and the `adaptive-kernel` command's report and plot all read their
//! sentences from here, so none of them announces a crossover where the figures
//! tie.

use std::fmt;
use std::ops::RangeInclusive;

use super::policy::Policy;
use crate::backend::Backend;
use crate::numeric::thousands;

/// The router's tie band: two backends whose figures are within this fraction
/// of each other tie (the router then keeps the simpler one; `policy` says how).
/// The crossover sentences use the same band.
pub const TIE_BAND: f64 = Policy::DEFAULT.tolerance;

/// A change of the chosen backend between two consecutive settled buckets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossover {
    /// The first size of the bucket where `to` is chosen.
    pub size: usize,
    /// The last size of the previous settled bucket, where `from` was chosen.
    pub below: usize,
    /// The backend chosen up to `below`.
    pub from: Backend,
    /// The backend chosen from `size` on.
    pub to: Backend,
    /// `from` and `to` measured within [`TIE_BAND`] of each other in the bucket
    /// from `size` on: not a crossover but a tie.
    pub tie: bool,
}

impl Crossover {
    /// Whether `a` and `b` (times of one bucket, any unit) are within [`TIE_BAND`] of each other.
    pub fn ties(a: f64, b: f64) -> bool {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        lo > 0.0 && hi <= lo * (1.0 + TIE_BAND)
    }
}

/// The changes of the chosen backend along `settled`: settled buckets, smallest
/// sizes first, each as its sizes, its chosen backend and its figures (a
/// backend's time there, `None` when it was not measured).
///
/// A change to a backend that measured within [`TIE_BAND`] of the one it
/// replaces is a tie; a tie of the same two backends as the change before it
/// is left out (the figures still tie: the choice flipped on noise).
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::{crossovers, Backend};
///
/// let us = |scalar: f64, simd: f64| move |b: Backend| match b {
///     Backend::Scalar => Some(scalar),
///     Backend::Simd => Some(simd),
///     _ => None,
/// };
/// let found = crossovers([
///     (1024..=2047, Backend::Scalar, us(1.0, 1.5)),
///     (2048..=4095, Backend::Simd, us(2.0, 1.0)),    // SIMD twice as fast: a crossover
///     (4096..=8191, Backend::Scalar, us(5.66, 5.68)), // within the band: a tie
/// ]);
/// assert_eq!(found[0].to_string(), "SIMD beats Scalar from 2,048 elements (Scalar was chosen up to 2,047).");
/// assert!(found[1].tie);
/// assert!(found[1].to_string().starts_with("Scalar and SIMD tie from 4,096 elements"));
/// ```
pub fn crossovers<F>(settled: impl IntoIterator<Item = (RangeInclusive<usize>, Backend, F)>) -> Vec<Crossover>
where
    F: Fn(Backend) -> Option<f64>,
{
    let mut out: Vec<Crossover> = Vec::new();
    let mut previous: Option<(usize, Backend)> = None;
    for (sizes, chosen, figure) in settled {
        if let Some((below, from)) = previous.filter(|&(_, from)| from != chosen) {
            let tie = matches!((figure(from), figure(chosen)), (Some(a), Some(b)) if Crossover::ties(a, b));
            let same_pair =
                |c: &Crossover| c.tie && (c.from == chosen && c.to == from || c.from == from && c.to == chosen);
            if !(tie && out.last().is_some_and(same_pair)) {
                out.push(Crossover { size: *sizes.start(), below, from, to: chosen, tie });
            }
        }
        previous = Some((*sizes.end(), chosen));
    }
    out
}

/// "SIMD beats Scalar from 4,096 elements (Scalar was chosen up to 4,095)." or
/// "Scalar and SIMD tie from 131,072 elements (within the router's 5% tie band; SIMD was chosen up to 65,535)."
impl fmt::Display for Crossover {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (to, from, size, below) = (self.to, self.from, thousands(self.size), thousands(self.below));
        if self.tie {
            let band = (TIE_BAND * 1000.0).round() / 10.0;
            write!(
                f,
                "{to} and {from} tie from {size} elements (within the router's {band}% tie band; \
                 {from} was chosen up to {below})."
            )
        } else {
            write!(f, "{to} beats {from} from {size} elements ({from} was chosen up to {below}).")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bucket `lo..=2lo-1` choosing `chosen`, with Scalar and SIMD at these times.
    fn bucket(lo: usize, chosen: Backend, scalar: f64, simd: f64) -> (RangeInclusive<usize>, Backend, [f64; 2]) {
        (lo..=2 * lo - 1, chosen, [scalar, simd])
    }

    fn find(buckets: &[(RangeInclusive<usize>, Backend, [f64; 2])]) -> Vec<Crossover> {
        crossovers(buckets.iter().map(|(sizes, chosen, [scalar, simd])| {
            let (scalar, simd) = (*scalar, *simd);
            (sizes.clone(), *chosen, move |b| match b {
                Backend::Scalar => Some(scalar),
                Backend::Simd => Some(simd),
                _ => None,
            })
        }))
    }

    #[test]
    fn the_band_is_the_routers() {
        assert_eq!(TIE_BAND, Policy::DEFAULT.tolerance);
        assert!(Crossover::ties(5.66, 5.68) && Crossover::ties(5.68, 5.66));
        assert!(Crossover::ties(100.0, 100.0 * (1.0 + TIE_BAND)));
        assert!(!Crossover::ties(100.0, 100.0 * (1.0 + TIE_BAND) * 1.001));
        assert!(!Crossover::ties(0.0, 0.0), "no figure to compare");
    }

    #[test]
    fn a_change_within_the_band_is_a_tie_and_one_beyond_it_a_crossover() {
        use Backend::{Scalar, Simd};
        let found = find(&[
            bucket(1024, Scalar, 1.0, 1.5),
            bucket(2048, Simd, 2.0, 1.0),
            bucket(4096, Simd, 4.0, 2.0),
            // The memory-bound saxpy of the issue: 5.68 µs against 5.66 µs.
            bucket(131_072, Scalar, 5.66, 5.68),
        ]);
        assert_eq!(
            found,
            vec![
                Crossover { size: 2048, below: 2047, from: Scalar, to: Simd, tie: false },
                Crossover { size: 131_072, below: 8191, from: Simd, to: Scalar, tie: true },
            ]
        );
        assert_eq!(
            found[1].to_string(),
            "Scalar and SIMD tie from 131,072 elements (within the router's 5% tie band; SIMD was chosen up to 8,191)."
        );
        assert!(!found[1].to_string().contains("beats"));
    }

    #[test]
    fn a_tie_flipping_back_and_forth_is_said_once_and_a_real_change_after_it_again() {
        use Backend::{Scalar, Simd};
        let found = find(&[
            bucket(1024, Simd, 2.0, 1.0),
            bucket(2048, Scalar, 2.00, 2.02),
            bucket(4096, Simd, 4.02, 4.00),
            bucket(8192, Scalar, 8.00, 8.03),
            bucket(16_384, Simd, 32.0, 16.0),
        ]);
        let said: Vec<(usize, bool)> = found.iter().map(|c| (c.size, c.tie)).collect();
        assert_eq!(said, vec![(2048, true), (16_384, false)]);
    }

    #[test]
    fn an_unmeasured_backend_makes_no_tie() {
        let found = crossovers([
            (1..=1, Backend::Scalar, (|_| None) as fn(Backend) -> Option<f64>),
            (2..=3, Backend::Gpu, |_| None),
        ]);
        assert_eq!(found, vec![Crossover { size: 2, below: 1, from: Backend::Scalar, to: Backend::Gpu, tie: false }]);
    }
}
