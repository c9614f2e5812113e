use adaptive_kernel::adaptive_kernel;

// `associated` on a free function that a macro writes, where the file cannot tell: it is
// compiled as an associated function, and rustc's error about `Self` points at the key.
macro_rules! peak_fn {
    () => {
        #[adaptive_kernel(complexity = "Low", associated)]
        pub fn peak(x: &[f32]) -> f32 {
            x.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v))
        }
    };
}

peak_fn!();

fn main() {}
