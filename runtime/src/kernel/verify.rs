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
//! twice (shared references and `Copy` values; a kernel writing a slice through
//! `&mut` is a compile error with `verify = true`) and a result that implements
//! [`Comparable`]. A kernel that writes ndarray arrays (or returns one) is checked
//! in steps instead, through [`VerifiedCall`]: the wrapper runs the Scalar variant
//! on copies of the arrays, the chosen variant on the caller's, compares both with
//! [`compare_arrays`](crate::compare::compare_arrays) and hands the agreement back.

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
    let Some(check) = VerifiedCall::begin(kernel, &route, size, always, relative) else {
        return route.run(variant);
    };
    let reference = scalar();
    let out = route.run(variant);
    let agreement = out.compare(&reference, check.tolerance());
    if check.finish(agreement) {
        out
    } else {
        reference
    }
}

/// One call whose result `verify` compares with the Scalar variant's, in the steps a
/// kernel that writes ndarray arrays needs (generated code only; [`run_verified`] takes
/// the same steps for the others): [`begin`](VerifiedCall::begin) says whether the call
/// is checked, the caller runs the Scalar variant on copies and the chosen one through
/// its [`Route`], compares within [`tolerance`](VerifiedCall::tolerance), and
/// [`finish`](VerifiedCall::finish) records the agreement.
#[derive(Debug)]
#[must_use = "a comparison counts only once `finish` records it"]
pub struct VerifiedCall {
    kernel: &'static Kernel,
    size: usize,
    candidate: Candidate,
    tolerance: Tolerance,
}

impl VerifiedCall {
    /// The check of a call of `size` that `route` sends to its variant, or `None` when this
    /// call is not checked (see the module docs): verification off (`always` is the
    /// attribute's `verify = true`, else only `ADAPTIVE_KERNEL_MODE=verify` turns it on;
    /// never in frozen mode), the call untimed or Scalar's, or the variant already compared in this bucket.
    /// `relative` is the attribute's `tolerance = …`.
    pub fn begin(
        kernel: &'static Kernel,
        route: &Route,
        size: usize,
        always: bool,
        relative: Option<f64>,
    ) -> Option<VerifiedCall> {
        let candidate = route.candidate();
        let mode = config::mode();
        let on = (always || mode == Mode::Verify) && mode != Mode::Frozen;
        if !on || candidate == Candidate::Scalar || !route.is_timed() || !kernel.needs_comparison(size, candidate) {
            return None;
        }
        let mut tolerance = Tolerance::for_call(kernel.complexity(), size, relative);
        if candidate == Candidate::Gpu {
            // The GPU variant's generated loops are held to their precision contract.
            tolerance = tolerance.widened(kernel.spec().gpu_roundings());
        } else {
            // SIMD and Parallel compute libm's functions with the runtime's formulas.
            tolerance = tolerance.with_vector_math(kernel.spec().vector_math_ulps());
        }
        Some(VerifiedCall { kernel, size, candidate, tolerance })
    }

    /// The tolerance the variant's results are held to in this call.
    pub fn tolerance(&self) -> Tolerance {
        self.tolerance
    }

    /// Records `agreement`, the comparison of everything the variant returned and wrote
    /// with the Scalar variant's; a variant that disagrees is excluded from the bucket.
    /// Returns whether the variant's results stand (else the caller must hand back the
    /// Scalar variant's).
    pub fn finish(self, agreement: Agreement) -> bool {
        self.kernel.apply_comparison(self.size, self.candidate, agreement);
        agreement.agrees
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
