//! Associated functions that name neither `self` nor `Self` (the attribute sees
//! them as free functions, token for token) are found in their `impl` or
//! `trait` and compiled as methods are: they route, every variant runs
//! (`with_backend`), their kernels are found by name, forced and learn, one
//! per instantiation of `Self`: written in an impl, in a trait, or in an impl
//! that a macro writes. One that a macro writes for its caller to put in an
//! impl, which the source file cannot show, says so with the `associated` key.

mod common;

use adaptive_kernel::{adaptive_kernel, kernel_named, with_backend, Backend, Kernel};
use common::{settle_with, settled, wins};

/// The element types the generic kernels are written over.
pub trait Float: Copy + Default + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> + 'static {}
impl Float for f32 {}
impl Float for f64 {}

/// A signal's helpers.
pub struct Signal;

impl Signal {
    /// The largest sample: an associated function without `self` or `Self`.
    #[adaptive_kernel(complexity = "Low")]
    pub fn peak(x: &[f32]) -> f32 {
        x.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v))
    }
}

/// Statistics over any float type.
pub struct Stats<T>(std::marker::PhantomData<T>);

impl<T: Float> Stats<T> {
    /// The sum of squares: generic through the impl's `T`, which a module beside the impl
    /// could not name.
    #[adaptive_kernel(complexity = "Low")]
    pub fn energy(x: &[T]) -> T {
        let mut acc = T::default();
        for v in x {
            acc = acc + *v * *v;
        }
        acc
    }
}

/// A norm, as a trait's associated function.
pub trait Norm {
    /// The L1 norm of `x`.
    fn norm(x: &[f32]) -> f32;

    /// The number of non-zero samples: a default body with a kernel on it.
    #[adaptive_kernel(complexity = "Low")]
    fn nonzero(x: &[f32]) -> usize {
        x.iter().filter(|v| **v != 0.0).count()
    }
}

impl Norm for Signal {
    #[adaptive_kernel(complexity = "Low")]
    fn norm(x: &[f32]) -> f32 {
        x.iter().map(|v| v.abs()).sum()
    }
}

/// Another implementor of `Norm`: its default `nonzero` is a kernel of its own.
pub struct Other;

impl Norm for Other {
    fn norm(x: &[f32]) -> f32 {
        x.len() as f32
    }
}

/// Writes an impl with a kernel: found in the macro's tokens, in an `impl` block.
macro_rules! with_mean {
    ($t:ident) => {
        impl $t {
            /// The mean of `x`.
            #[adaptive_kernel(complexity = "Low")]
            pub fn mean(x: &[f32]) -> f32 {
                x.iter().sum::<f32>() / x.len() as f32
            }
        }
    };
}

/// Writes a kernel that its caller puts in an impl: nothing in this file says where it
/// goes, so it says `associated`.
macro_rules! spread_fn {
    () => {
        /// The largest sample minus the smallest.
        #[adaptive_kernel(complexity = "Low", associated)]
        pub fn spread(x: &[f32]) -> f32 {
            let (lo, hi) = x.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
            hi - lo
        }
    };
}

/// A type whose impls macros write.
pub struct Written;
with_mean!(Written);

impl Written {
    spread_fn!();
}

const X: [f32; 5] = [1.0, -2.0, 3.0, 0.0, 5.0];

fn every_backend<R: PartialEq + std::fmt::Debug>(call: impl Fn() -> R) -> R {
    let want = call();
    for b in [Backend::Scalar, Backend::Simd, Backend::Parallel, Backend::Gpu] {
        assert_eq!(with_backend(b, &call), want, "on {b:?}");
    }
    want
}

fn named(name: &str) -> &'static Kernel {
    kernel_named(name).unwrap_or_else(|| panic!("no kernel named {name}"))
}

#[test]
fn every_associated_function_computes_the_same_on_every_backend() {
    common::no_history();
    assert_eq!(every_backend(|| Signal::peak(&X)), 5.0);
    assert_eq!(every_backend(|| Stats::<f32>::energy(&X)), 39.0);
    assert_eq!(every_backend(|| Stats::<f64>::energy(&[1.0, 2.0])), 5.0);
    assert_eq!(every_backend(|| Signal::norm(&X)), 11.0);
    assert_eq!(every_backend(|| Signal::nonzero(&X)), 4);
    assert_eq!(every_backend(|| Written::mean(&X)), 1.4);
    assert_eq!(every_backend(|| Written::spread(&X)), 7.0);
}

#[test]
fn each_is_named_after_its_self_type_and_can_be_forced() {
    common::no_history();
    Signal::peak(&X);
    Signal::norm(&X);
    Signal::nonzero(&X);
    Other::nonzero(&X);
    Written::mean(&X);
    Written::spread(&X);
    let peak = named("associated_fns::Signal::peak");
    named("associated_fns::Signal::norm");
    named("associated_fns::Written::mean");
    named("associated_fns::Written::spread");
    // A trait's default body: one kernel per implementor.
    assert!(!std::ptr::eq(named("associated_fns::Signal::nonzero"), named("associated_fns::Other::nonzero")));
    // No `ops::` in the body: Scalar and SIMD only.
    assert!(!peak.has_gpu() && !peak.has_parallel());
    // The handle the calls route through: forcing it shows in its table.
    peak.force(Some(Backend::Scalar));
    assert_eq!(Signal::peak(&[7.0, 1.0]), 7.0);
    assert_eq!(peak.table().forced, Some(Backend::Scalar));
    assert!(peak.table().row_for(X.len()).is_some(), "the first call's bucket:\n{}", peak.table());
    peak.force(None);
    assert_eq!(peak.forced(), None);
}

const SIZE: usize = 3_000;

#[test]
fn a_generic_impls_associated_function_learns_per_instantiation() {
    common::no_history();
    Stats::<f32>::energy(&[1.0]);
    Stats::<f64>::energy(&[1.0]);
    let k32 = named("associated_fns::Stats<f32>::energy");
    let k64 = named("associated_fns::Stats<f64>::energy");
    assert!(!std::ptr::eq(k32, k64));
    settle_with(k32, SIZE, wins(Backend::Scalar));
    settle_with(k64, SIZE, wins(Backend::Simd));
    assert_eq!(settled(k32, SIZE), Some(Backend::Scalar));
    assert_eq!(settled(k64, SIZE), Some(Backend::Simd));
    // The routed calls follow their own instantiation's table.
    assert_eq!(Stats::<f32>::energy(&vec![1.0; SIZE]), 3000.0);
    assert_eq!(Stats::<f64>::energy(&vec![1.0; SIZE]), 3000.0);
    assert_eq!(settled(k32, SIZE), Some(Backend::Scalar));
    assert_eq!(settled(k64, SIZE), Some(Backend::Simd));
}
