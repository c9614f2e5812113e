use adaptive_kernel::adaptive_kernel;

fn sum_simd(x: &[f64]) -> f64 {
    x.iter().sum()
}

#[adaptive_kernel(complexity = "Medium", simd = sum_simd)]
fn sum(x: &[f32]) -> f32 {
    x.iter().sum()
}

fn main() {}
