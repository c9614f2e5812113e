use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low", serial = "yes")]
fn k(x: &[f32], out: &mut [f32]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = v * 2.0;
    }
}

fn main() {}
