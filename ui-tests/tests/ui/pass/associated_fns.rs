//! Associated functions without `self` or `Self`, which the attribute cannot
//! tell from free functions by their tokens: found in their `impl` or `trait`
//! (an inherent, a generic and a trait impl, a trait's default body) and
//! compiled as methods are, and so is one in an impl a macro writes; one a
//! macro writes for its caller's impl says `associated`. A free function
//! naming `Self` in an item of its body stays free.
#![deny(warnings)]

use adaptive_kernel::{adaptive_kernel, kernel_named, with_backend, Backend};

pub struct Signal;

impl Signal {
    #[adaptive_kernel(complexity = "Low")]
    pub fn lowest(x: &[f32]) -> f32 {
        x.iter().copied().fold(f32::INFINITY, f32::min)
    }
}

pub struct Sums<T>(std::marker::PhantomData<T>);

impl<T: Copy + Default + std::ops::Add<Output = T>> Sums<T> {
    /// The impl's `T`, which a module beside the impl could not name.
    #[adaptive_kernel(complexity = "Low")]
    pub fn total(x: &[T]) -> T {
        let mut acc = T::default();
        for v in x {
            acc = acc + *v;
        }
        acc
    }
}

pub trait Norm {
    fn norm(x: &[f32]) -> f32;

    #[adaptive_kernel(complexity = "Low")]
    fn count(x: &[f32]) -> usize {
        x.len()
    }
}

impl Norm for Signal {
    #[adaptive_kernel(complexity = "Low")]
    fn norm(x: &[f32]) -> f32 {
        x.iter().map(|v| v.abs()).sum()
    }
}

// A macro that writes an impl: the function is found in its tokens, in the `impl` block.
macro_rules! with_last {
    ($t:ty) => {
        impl $t {
            #[adaptive_kernel(complexity = "Low")]
            pub fn last(x: &[f32]) -> f32 {
                x[x.len() - 1]
            }
        }
    };
}

// A macro whose caller puts its function in an impl: `associated` says where it goes.
macro_rules! first_fn {
    () => {
        #[adaptive_kernel(complexity = "Low", associated)]
        pub fn first(x: &[f32]) -> f32 {
            x[0]
        }
    };
}

pub struct Written;
with_last!(Written);

impl Written {
    first_fn!();
}

// A free kernel whose body holds an impl naming `Self`: its file shows it free, so it
// keeps `mod pairs`.
#[adaptive_kernel(complexity = "Low")]
pub fn pairs(x: &[f32]) -> usize {
    struct Pair(f32, f32);
    impl Pair {
        fn new(a: f32, b: f32) -> Self {
            Pair(a, b)
        }
    }
    x.chunks_exact(2).map(|c| Pair::new(c[0], c[1])).filter(|p| p.0 < p.1).count()
}

fn main() {
    let x = [1.0, -4.0, 3.0];
    for b in [Backend::Scalar, Backend::Simd, Backend::Parallel, Backend::Gpu] {
        assert_eq!(with_backend(b, || Signal::lowest(&x)), -4.0);
        assert_eq!(with_backend(b, || Signal::norm(&x)), 8.0);
    }
    assert_eq!(Sums::<f32>::total(&x), 0.0);
    assert_eq!(Sums::<i64>::total(&[1, 2]), 3);
    assert_eq!(Signal::count(&x), 3);
    assert_eq!(Written::last(&x), 3.0);
    assert_eq!(Written::first(&x), 1.0);
    assert_eq!(pairs(&[1.0, 2.0, 4.0, 3.0]), 1);
    assert_eq!(pairs::scalar(&[1.0, 2.0]) + pairs::simd(&[1.0, 2.0]), 2);
    let crate_name = module_path!();
    for name in ["Signal::lowest", "Signal::norm", "Signal::count", "Sums<f32>::total", "Sums<i64>::total", "Written::last", "Written::first"] {
        assert!(kernel_named(&format!("{crate_name}::{name}")).is_some(), "{name}");
    }
}
