use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low")]
fn map(x: &[f32], f: impl Fn(f32) -> f32) -> Vec<f32> {
    x.iter().map(|v| f(*v)).collect()
}

#[adaptive_kernel(complexity = "Low")]
fn map_ref(x: &[f32], f: &impl Fn(f32) -> f32) -> Vec<f32> {
    x.iter().map(|v| f(*v)).collect()
}

fn main() {}
