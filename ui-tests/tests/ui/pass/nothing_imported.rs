//! Modules that import nothing, or only the attribute: every generated path is absolute.
#![deny(warnings)]
#![no_implicit_prelude]

mod kernels {
    #[::adaptive_kernel::adaptive_kernel(complexity = "Low")]
    pub fn double(x: &[f32], out: &mut [f32]) {
        for i in 0..x.len() {
            out[i] = x[i] * 2.0;
        }
    }

    #[::adaptive_kernel::adaptive_kernel(complexity = "Medium", size = x.len())]
    pub fn total(x: &[f32]) -> f32 {
        let mut s = 0.0;
        for v in x {
            s += v;
        }
        s
    }
}

mod only_the_attribute {
    use ::adaptive_kernel::adaptive_kernel;

    #[adaptive_kernel(complexity = "High", size = n * n)]
    pub fn identity(n: usize, out: &mut [f32]) {
        for i in 0..n {
            out[i * n + i] = 1.0;
        }
    }
}

fn main() {
    let mut eye = [0.0_f32; 4];
    only_the_attribute::identity(2, &mut eye);
    ::std::assert_eq!(eye, [1.0, 0.0, 0.0, 1.0]);
    let x = [1.0_f32, 2.0];
    let mut out = [0.0_f32; 2];
    kernels::double(&x, &mut out);
    ::std::assert_eq!(out, [2.0, 4.0]);
    ::std::assert_eq!(kernels::total(&x), 3.0);
}
