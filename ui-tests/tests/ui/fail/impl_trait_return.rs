use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low")]
fn doubled(x: &[f32]) -> impl Iterator<Item = f32> + '_ {
    x.iter().map(|v| v * 2.0)
}

fn main() {}
