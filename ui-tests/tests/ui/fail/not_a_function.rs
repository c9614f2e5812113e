use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low")]
struct Kernel {
    data: Vec<f32>,
}

#[adaptive_kernel(complexity = "Low")]
const K: f32 = 1.0;

fn main() {
    let _ = Kernel { data: vec![K] }.data;
}
