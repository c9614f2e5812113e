use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low", sise = n)]
fn k(x: &[f32], n: usize) -> f32 {
    x[n]
}

#[adaptive_kernel(complexity = "Low", backend::gpu = true)]
fn j(x: &[f32]) -> f32 {
    x[0]
}

fn main() {}
