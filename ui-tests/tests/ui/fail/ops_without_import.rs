use adaptive_kernel::adaptive_kernel;

// `ops::` in a body names the op set of the variant being compiled; like any path,
// it needs the import (`use adaptive_kernel::ops;`).
#[adaptive_kernel(complexity = "Medium")]
fn total(x: &[f32]) -> f32 {
    ops::sum(x)
}

fn main() {}
