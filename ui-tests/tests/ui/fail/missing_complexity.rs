use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(size = x.len())]
fn k(x: &[f32]) -> f32 {
    x[0]
}

#[adaptive_kernel]
fn j(x: &[f32]) -> f32 {
    x[0]
}

fn main() {}
