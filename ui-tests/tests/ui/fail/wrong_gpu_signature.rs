use adaptive_kernel::adaptive_kernel;

mod gpu {
    pub fn saxpy(alpha: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        x.iter().zip(y).map(|(x, y)| alpha * x + y).collect()
    }
}

#[adaptive_kernel(complexity = "Medium", gpu = gpu::saxpy)]
fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

fn main() {}
