use adaptive_kernel::{adaptive_kernel, ops};

// A body with no `ops::` call and no top-level loop to split across threads has no Parallel
// variant, so `double::parallel` does not exist.
#[adaptive_kernel(complexity = "Low")]
fn double(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v * 2.0).collect()
}

// Nor has a `serial` kernel, whatever its body calls: it stays on the calling thread.
#[adaptive_kernel(complexity = "Medium", serial)]
fn norm(x: &[f32]) -> f32 {
    ops::norm_l2(x)
}

fn main() {
    let _ = double::parallel(&[1.0]);
    let _ = norm::parallel(&[1.0]);
}
