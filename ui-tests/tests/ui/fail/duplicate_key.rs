use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low", size = x.len(), complexity = "High")]
fn k(x: &[f32]) -> f32 {
    x[0]
}

#[adaptive_kernel(complexity = "Low", size = x.len(), size = 2 * x.len())]
fn j(x: &[f32]) -> f32 {
    x[0]
}

fn main() {}
