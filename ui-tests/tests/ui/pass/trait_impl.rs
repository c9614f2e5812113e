//! A kernel implementing a trait method: everything it generates lives inside
//! the method, since a trait impl takes no item the trait does not declare.
#![deny(warnings)]

use adaptive_kernel::{adaptive_kernel, kernel_named, ops, with_backend, Backend};

trait Reduce {
    fn total(&self) -> f32;
    fn scaled(&self, by: f32) -> Vec<f32>;
    fn make(x: &[f32]) -> Self;
}

struct Samples(Vec<f32>);

impl Reduce for Samples {
    #[adaptive_kernel(complexity = "Medium", size = self.0.len())]
    fn total(&self) -> f32 {
        ops::sum(&self.0)
    }

    #[adaptive_kernel(complexity = "Low", size = self.0.len())]
    fn scaled(&self, by: f32) -> Vec<f32> {
        self.0.iter().map(|v| v * by).collect()
    }

    #[adaptive_kernel(complexity = "Low")]
    fn make(x: &[f32]) -> Self {
        Samples(x.to_vec())
    }
}

fn main() {
    let s = Samples::make(&[1.0, 2.0, 3.0]);
    for b in [Backend::Scalar, Backend::Simd, Backend::Parallel, Backend::Gpu] {
        assert_eq!(with_backend(b, || s.total()), 6.0);
    }
    assert_eq!(s.scaled(2.0), [2.0, 4.0, 6.0]);
    let total = kernel_named(&format!("{}::Samples::total", module_path!())).expect("listed once called");
    assert!(total.has_gpu() && total.has_parallel());
}
