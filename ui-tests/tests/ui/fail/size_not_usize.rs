use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "High", size = n * n)]
fn fill(n: u32, value: f32) -> Vec<f32> {
    vec![value; (n * n) as usize]
}

fn main() {}
