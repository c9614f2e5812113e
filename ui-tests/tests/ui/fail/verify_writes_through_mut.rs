use adaptive_kernel::adaptive_kernel;

// `verify` runs two variants on the same inputs: a kernel that writes its output
// through `&mut` cannot verify, and one that returns nothing has nothing to compare.
#[adaptive_kernel(complexity = "Low", verify = true)]
pub fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

#[adaptive_kernel(complexity = "Low", verify, tolerance = 0)]
pub fn scale(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v * 2.0).collect()
}

fn main() {}
