//! Methods of a generic impl: one routing table per instantiation of `Self`.
#![deny(warnings)]

use adaptive_kernel::{adaptive_kernel, kernel_named};

struct Buffer<T, const N: usize> {
    data: Vec<T>,
}

impl<T: Copy + Default + std::ops::Add<Output = T>, const N: usize> Buffer<T, N> {
    #[adaptive_kernel(complexity = "Low", size = self.data.len())]
    fn fold(&self) -> T {
        let mut acc = T::default();
        for v in self.data.iter().take(N) {
            acc = acc + *v;
        }
        acc
    }
}

trait Total<T> {
    fn total(&self) -> T;
}

impl<T> Total<T> for Buffer<T, 2>
where
    T: Copy + std::iter::Sum<T>,
{
    #[adaptive_kernel(complexity = "Low", size = self.data.len())]
    fn total(&self) -> T {
        self.data.iter().copied().sum()
    }
}

fn main() {
    let a: Buffer<f32, 2> = Buffer { data: vec![1.0, 2.0, 3.0] };
    let b: Buffer<f64, 3> = Buffer { data: vec![1.0, 2.0, 3.0] };
    assert_eq!(a.fold(), 3.0);
    assert_eq!(b.fold(), 6.0);
    assert_eq!(a.total(), 6.0);
    let crate_name = module_path!();
    let fa = kernel_named(&format!("{crate_name}::Buffer<f32, 2>::fold")).expect("one kernel for Buffer<f32, 2>");
    let fb = kernel_named(&format!("{crate_name}::Buffer<f64, 3>::fold")).expect("one for Buffer<f64, 3>");
    assert!(!std::ptr::eq(fa, fb));
}
