use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low", name = my_kernel)]
fn k(x: &[f32]) -> f32 {
    x[0]
}

#[adaptive_kernel(complexity = "Low", name = "  ")]
fn j(x: &[f32]) -> f32 {
    x[0]
}

fn main() {}
