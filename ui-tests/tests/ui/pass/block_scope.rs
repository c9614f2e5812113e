//! A kernel declared inside a function body (it sees the module's items).
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;

fn offset() -> f32 {
    1.0
}

fn main() {
    #[adaptive_kernel(complexity = "Low")]
    fn shifted(x: &[f32]) -> Vec<f32> {
        x.iter().map(|v| v + offset()).collect()
    }

    assert_eq!(shifted(&[1.0, 2.0]), [2.0, 3.0]);
    assert_eq!(shifted::simd(&[1.0]), [2.0]);
    // A block is not a module: the name is the enclosing module's path and the function's name.
    assert_eq!(shifted::KERNEL.name(), concat!(module_path!(), "::shifted"));
}
