//! `verify`: comparing a variant's result with the Scalar variant's on the same
//! inputs, and excluding a variant that disagrees from that size bucket.
//!
//! The generated wrapper of a kernel that can verify hands every *timed* call of
//! a variant other than Scalar to [`run_verified`] (settled calls that are not
//! timed never get here, so a settled call costs the same in every mode). A
//! backend is checked once per bucket and process, on its first timed call
//! there: while the bucket explores, when a settled bucket re-times it, or when
//! a decision loaded from history is re-timed. The Scalar variant runs first,
//! untimed; the variant runs timed as usual; the results are compared within
//! the kernel's [`Tolerance`] (for the GPU variant widened by the roundings its
//! generated loops may add: [`KernelSpec::gpu_roundings`](crate::KernelSpec::gpu_roundings)).
//! A variant that disagrees is excluded from the
//! bucket for good (kept in the history file), the call returns the Scalar
//! result, the disagreement is reported once per kernel and backend (kernel,
//! size, largest error), and a bucket that had settled on it explores again.
//!
//! In frozen mode nothing is compared, `verify = true` or not: a frozen run routes by
//! the saved table alone, so that two runs with the same file decide alike, and an
//! exclusion would change the table (frozen calls are not timed either).
//!
//! Which kernels can verify is the macro's business: parameters it can pass
//! twice (shared references and `Copy` values; a kernel writing through `&mut`
//! is a compile error with `verify = true`) and a result that implements
//! [`Comparable`].

use super::bucket_state::BucketState;
use super::cold::Source;
use super::policy::{self, Event, Policy};
use super::route::Route;
use super::site::Kernel;
use crate::bucket::bucket_of;
use crate::candidate::Candidate;
use crate::compare::{Agreement, Comparable, Tolerance};
use crate::config::{self, Mode};

/// Runs one call that `route` sends to `variant`, checking its result against
/// `scalar` first when it needs checking (see the module docs). `always` is the
/// attribute's `verify = true` (else only `ADAPTIVE_KERNEL_MODE=verify` turns it
/// on); `relative` its `tolerance = …`. Called by generated code.
pub fn run_verified<R: Comparable>(
    kernel: &'static Kernel,
    route: Route,
    size: usize,
    always: bool,
    relative: Option<f64>,
    scalar: impl FnOnce() -> R,
    variant: impl FnOnce() -> R,
) -> R {
    let candidate = route.candidate();
    let mode = config::mode();
    let on = (always || mode == Mode::Verify) && mode != Mode::Frozen;
    if !on || candidate == Candidate::Scalar || !route.is_timed() || !kernel.needs_comparison(size, candidate) {
        return route.run(variant);
    }
    let reference = scalar();
    let out = route.run(variant);
    let mut tolerance = Tolerance::for_call(kernel.complexity(), size, relative);
    if candidate == Candidate::Gpu {
        // The GPU variant's generated loops are held to their precision contract.
        tolerance = tolerance.widened(kernel.spec().gpu_roundings());
    } else {
        // SIMD and Parallel compute libm's functions with the runtime's formulas.
        tolerance = tolerance.with_vector_math(kernel.spec().vector_math_ulps());
    }
    let agreement = out.compare(&reference, tolerance);
    kernel.apply_comparison(size, candidate, agreement);
    if agreement.agrees {
        out
    } else {
        reference
    }
}

impl Kernel {
    /// Whether `backend`'s result in `size`'s bucket has yet to be compared in this process.
    #[cold]
    #[inline(never)]
    fn needs_comparison(&'static self, size: usize, candidate: Candidate) -> bool {
        let st = self.lock();
        st.buckets.get(&bucket_of(size)).is_none_or(|bs| !bs.compared.contains(candidate))
    }

    /// Applies a comparison of `backend` against Scalar in `size`'s bucket (`policy`
    /// excludes a backend that disagreed).
    #[cold]
    #[inline(never)]
    fn apply_comparison(&'static self, size: usize, candidate: Candidate, agreement: Agreement) {
        let bucket = bucket_of(size);
        let mut st = self.lock();
        let bs = st.buckets.entry(bucket).or_insert_with(|| BucketState::new(size));
        let disagreement = (!agreement.agrees).then_some(agreement.largest_error);
        let outcome = policy::step(bs, Event::Compared { candidate, size, disagreement }, &Policy::DEFAULT);
        if outcome.dirty {
            st.touched.insert(bucket);
        }
        self.publish(st, bucket, size, outcome, Source::Policy);
    }
}
