use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low")]
fn scaled(x: &[f32], (a, b): (f32, f32)) -> Vec<f32> {
    x.iter().map(|v| a * v + b).collect()
}

#[adaptive_kernel(complexity = "Low")]
fn first(x: &[f32], _: usize) -> f32 {
    x[0]
}

fn main() {}
