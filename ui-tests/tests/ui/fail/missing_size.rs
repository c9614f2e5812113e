use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "High")]
fn fill(n: usize, value: f32) -> Vec<f32> {
    vec![value; n * n]
}

fn main() {}
