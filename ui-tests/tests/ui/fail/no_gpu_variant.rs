use adaptive_kernel::adaptive_kernel;

// An iterator chain (no `ops::`, no top-level `for`) has no GPU variant: `double::gpu` does not exist.
#[adaptive_kernel(complexity = "Low")]
fn double(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v * 2.0).collect()
}

fn main() {
    let _ = double::gpu(&[1.0]);
}
