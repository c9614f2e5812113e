use adaptive_kernel::adaptive_kernel;

// A body with no `ops::` call and no top-level loop to split across threads has no Parallel
// variant, so `double::parallel` does not exist.
#[adaptive_kernel(complexity = "Low")]
fn double(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v * 2.0).collect()
}

fn main() {
    let _ = double::parallel(&[1.0]);
}
