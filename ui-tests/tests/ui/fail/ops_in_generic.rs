use adaptive_kernel::{adaptive_kernel, ops};

// The op set is f32-only: a body generic over a type cannot call it.
#[adaptive_kernel(complexity = "Medium")]
fn total<T: Copy>(x: &[f32], _marker: T) -> f32 {
    ops::sum(x)
}

fn main() {}
