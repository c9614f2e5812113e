//! Generic kernels: type and const parameters, bounds, where-clauses and
//! lifetimes; `k::scalar::<T>` and friends, and one kernel per instantiation.
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low")]
fn sum<T: Copy + std::iter::Sum<T>>(x: &[T]) -> T {
    x.iter().copied().sum()
}

#[adaptive_kernel(complexity = "Low")]
fn unrolled<'a, const UNROLL: usize>(x: &'a [f32]) -> &'a f32 {
    &x[UNROLL]
}

/// A type parameter that appears only in the return type, and a where-clause.
#[adaptive_kernel(complexity = "Low")]
pub fn convert<T, U>(x: &[T]) -> Vec<U>
where
    T: Copy,
    U: From<T>,
{
    x.iter().map(|v| U::from(*v)).collect()
}

/// A type parameter that is not `'static`: lifetimes are erased in the instantiation's name.
#[adaptive_kernel(complexity = "Low")]
fn longest<'s, S: AsRef<str> + ?Sized>(words: &[&'s S]) -> usize {
    words.iter().map(|w| w.as_ref().len()).max().unwrap_or(0)
}

/// A type parameter instantiated with a borrowed type (`&'a str`): it need not be `'static`.
#[adaptive_kernel(complexity = "Low")]
fn count<T: PartialEq>(x: &[T], v: T) -> usize {
    x.iter().filter(|e| **e == v).count()
}

fn main() {
    assert_eq!(sum(&[1.0f32, 2.0]), 3.0);
    assert_eq!(sum(&[1u32, 2]), 3);
    assert_eq!(sum::scalar::<f64>(&[1.0, 2.0]), 3.0);
    assert_eq!(sum::simd::<f64>(&[1.0, 2.0]), 3.0);
    assert_eq!(*unrolled::<1>(&[1.0, 2.0]), 2.0);
    assert_eq!(convert::<f32, f64>(&[1.5]), [1.5f64]);
    let owned = String::from("three");
    assert_eq!(longest::<str>(&[owned.as_str(), "a"]), 5);
    let local = String::from("b");
    assert_eq!(count(&[local.as_str(), "a", "b"], local.as_str()), 2);
    let crate_name = module_path!();
    assert_eq!(sum::kernel::<f32>().name(), format!("{crate_name}::sum::<f32>"));
    assert_eq!(unrolled::kernel::<1>().name(), format!("{crate_name}::unrolled::<1>"));
    assert_eq!(convert::kernel::<f32, f64>().name(), format!("{crate_name}::convert::<f32, f64>"));
    assert_eq!(sum::FAMILY.instances().len(), 2);
    assert_eq!(count::FAMILY.instances()[0].name(), format!("{crate_name}::count::<&str>"));
}
