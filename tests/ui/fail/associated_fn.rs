use adaptive_kernel::adaptive_kernel;

pub struct Signal;

// The macro cannot see that it is inside an `impl`; rustc reports the generated `mod`.
impl Signal {
    #[adaptive_kernel(complexity = "Low")]
    pub fn peak(x: &[f32]) -> f32 {
        x.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v))
    }
}

fn main() {}
