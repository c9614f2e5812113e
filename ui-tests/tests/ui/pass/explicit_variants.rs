//! `simd = path`, `parallel = path` and `gpu = path`: hand-written variants, named by plain, `self::`,
//! `super::` and `crate::` paths; a `gpu = path` gives a kernel its GPU variant.
#![deny(warnings)]

fn simd_sum(x: &[f32]) -> f32 {
    x.iter().sum::<f32>()
}

mod hand {
    pub fn gpu_sum(x: &[f32]) -> f32 {
        x.iter().sum::<f32>()
    }
}

mod kernels {
    use adaptive_kernel::adaptive_kernel;

    fn local_simd(x: &[f32]) -> f32 {
        x.iter().sum::<f32>()
    }

    #[adaptive_kernel(complexity = "Medium", simd = super::simd_sum, gpu = crate::hand::gpu_sum)]
    pub fn sum(x: &[f32]) -> f32 {
        x.iter().sum::<f32>()
    }

    #[adaptive_kernel(complexity = "Medium", simd = self::local_simd)]
    pub fn sum_local(x: &[f32]) -> f32 {
        x.iter().sum::<f32>()
    }

    #[adaptive_kernel(complexity = "Medium", gpu = local_simd)]
    pub fn sum_gpu_only(x: &[f32]) -> f32 {
        x.iter().sum::<f32>()
    }

    #[adaptive_kernel(complexity = "Medium", parallel = local_simd)]
    pub fn sum_parallel_only(x: &[f32]) -> f32 {
        x.iter().sum::<f32>()
    }
}

fn main() {
    let x = [1.0_f32, 2.0, 3.0];
    assert_eq!(kernels::sum(&x), 6.0);
    assert_eq!(kernels::sum::simd(&x) + kernels::sum::gpu(&x), 12.0);
    assert!(kernels::sum::KERNEL.has_gpu());
    assert_eq!(kernels::sum_local::simd(&x), 6.0);
    assert!(!kernels::sum_local::KERNEL.has_gpu());
    assert_eq!(kernels::sum_gpu_only::gpu(&x), 6.0);
    assert!(kernels::sum_gpu_only::KERNEL.has_gpu());
    assert_eq!(kernels::sum_parallel_only::parallel(&x), 6.0);
    assert!(kernels::sum_parallel_only::KERNEL.has_parallel() && !kernels::sum_parallel_only::KERNEL.has_gpu());
    assert!(!kernels::sum::KERNEL.has_parallel());
}
