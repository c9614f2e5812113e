use adaptive_kernel::adaptive_kernel;

// `associated` on a function its source file shows to be free.
#[adaptive_kernel(complexity = "Low", associated)]
pub fn peak(x: &[f32]) -> f32 {
    x.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v))
}

fn main() {}
