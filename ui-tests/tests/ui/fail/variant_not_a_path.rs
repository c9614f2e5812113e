use adaptive_kernel::adaptive_kernel;

fn simd_k(x: &[f32]) -> f32 {
    x[0]
}

#[adaptive_kernel(complexity = "Low", simd = "simd_k")]
fn k(x: &[f32]) -> f32 {
    x[0]
}

#[adaptive_kernel(complexity = "Low", gpu = |x: &[f32]| x[0])]
fn j(x: &[f32]) -> f32 {
    x[0]
}

fn main() {}
