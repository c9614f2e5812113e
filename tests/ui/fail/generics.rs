use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low")]
fn sum<T: Copy + std::iter::Sum<T>>(x: &[T]) -> T {
    x.iter().copied().sum()
}

#[adaptive_kernel(complexity = "Low")]
fn unrolled<'a, const UNROLL: usize>(x: &'a [f32]) -> &'a f32 {
    &x[UNROLL]
}

fn main() {}
