use adaptive_kernel::adaptive_kernel;

pub struct Signal;

// A macro writes an associated function without `self` or `Self` for its caller to
// put in an impl: nothing in this file shows where it goes, so the attribute takes it
// for a free function, and rustc rejects the module that gets in an impl.
// `associated` fixes it (see the docs).
macro_rules! peak_fn {
    () => {
        #[adaptive_kernel(complexity = "Low")]
        pub fn peak(x: &[f32]) -> f32 {
            x.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v))
        }
    };
}

impl Signal {
    peak_fn!();
}

fn main() {}
