//! Where the first call into a size bucket goes, for kernels fresh from the
//! macro: the MoE table of each complexity with its strict boundaries, and the
//! GPU choice vetoed (→ SIMD) when no usable GPU exists, when the cost model
//! says the transfer does not pay, or when the kernel has no GPU variant.
//!
//! Each kernel reports which variant ran by returning it: the body (the Scalar
//! variant) returns `Backend::Scalar`, its `simd =` and `gpu =` variants return
//! theirs. Decisions are cached per size bucket and the router may explore
//! other variants on later calls into an unsettled bucket, so every assertion
//! is about the first call into one bucket of a kernel that no other test
//! calls. `size = n` routes by `n` alone, so no test allocates its size.
//!
//! The cost model is installed with fixed figures (not calibrated) and history
//! is off, so nothing but the cold-start rules decides, on any machine and in
//! debug builds (where calibration measures unoptimised CPU code against a
//! native-speed driver). Run with no `ADAPTIVE_KERNEL_BACKEND`.

mod common;

use adaptive_kernel::{adaptive_kernel, Backend};

fn on_simd(_n: usize) -> Backend {
    Backend::Simd
}

fn on_gpu(_n: usize) -> Backend {
    Backend::Gpu
}

/// A kernel that reports which of its variants ran; one per test, so each starts with a fresh site.
/// (The parameter's name comes from the call, so that `flops = n …` there can name it.)
macro_rules! probe {
    ($name:ident($n:ident), $complexity:literal $(, $key:ident = $value:expr)*) => {
        #[adaptive_kernel(complexity = $complexity, size = $n, simd = on_simd $(, $key = $value)*)]
        fn $name($n: usize) -> Backend {
            let _ = $n;
            Backend::Scalar
        }
    };
}

probe!(low_simd(n), "Low");
probe!(low_never_gpu(n), "Low", gpu = on_gpu, flops = n as u64 * 1_000_000, bytes = n as u64);
probe!(medium_simd(n), "Medium", gpu = on_gpu);
probe!(medium_gpu(n), "Medium", gpu = on_gpu, flops = n as u64 * 1_000_000, bytes = n as u64);
probe!(medium_gpu_does_not_pay(n), "Medium", gpu = on_gpu, flops = n as u64, bytes = n as u64 * 1_000);
probe!(high_simd(n), "High", gpu = on_gpu);
probe!(high_gpu(n), "High", gpu = on_gpu, flops = n as u64 * 1_000_000, bytes = n as u64);
probe!(high_gpu_does_not_pay(n), "High", gpu = on_gpu, flops = n as u64, bytes = n as u64 * 1_000);
probe!(high_without_gpu_variant(n), "High", flops = n as u64 * 1_000_000, bytes = n as u64);

/// What the first call above a GPU boundary must run when the cost model says yes.
fn gpu_if_usable() -> Backend {
    if adaptive_kernel::ops::gpu::is_ready() {
        Backend::Gpu
    } else {
        Backend::Simd
    }
}

fn setup() {
    common::fixed_model();
    // The GPU starts in the background and joins the candidates when ready; these
    // tests are about the rules once it has (or has not, without a usable GPU).
    adaptive_kernel::ops::gpu::wait_ready(std::time::Duration::from_secs(60));
    assert_eq!(
        adaptive_kernel::config::forced_backend(),
        None,
        "ADAPTIVE_KERNEL_BACKEND forces every kernel; unset it to test routing"
    );
}

#[test]
fn low_goes_simd_above_one_million() {
    setup();
    assert_eq!(low_simd(1_000_000), Backend::Scalar);
    assert_eq!(low_simd(1_000_001), Backend::Simd);
}

#[test]
fn low_never_goes_gpu_even_when_it_would_pay() {
    setup();
    assert_eq!(low_never_gpu(1_000_000_000), Backend::Simd);
}

#[test]
fn medium_goes_simd_above_ten_thousand() {
    setup();
    assert_eq!(medium_simd(10_000), Backend::Scalar);
    assert_eq!(medium_simd(10_001), Backend::Simd);
}

#[test]
fn medium_goes_gpu_above_one_hundred_thousand_when_usable() {
    setup();
    assert_eq!(medium_gpu(100_000), Backend::Simd);
    assert_eq!(medium_gpu(100_001), gpu_if_usable());
}

#[test]
fn medium_gpu_is_vetoed_when_the_transfer_does_not_pay() {
    setup();
    assert_eq!(medium_gpu_does_not_pay(100_001), Backend::Simd);
}

#[test]
fn high_goes_simd_above_one_thousand() {
    setup();
    assert_eq!(high_simd(1_000), Backend::Scalar);
    assert_eq!(high_simd(1_001), Backend::Simd);
}

#[test]
fn high_goes_gpu_above_ten_thousand_when_usable() {
    setup();
    assert_eq!(high_gpu(10_000), Backend::Simd);
    assert_eq!(high_gpu(10_001), gpu_if_usable());
}

#[test]
fn high_gpu_is_vetoed_when_the_transfer_does_not_pay() {
    setup();
    assert_eq!(high_gpu_does_not_pay(10_001), Backend::Simd);
}

#[test]
fn a_kernel_without_gpu_variant_stays_on_simd() {
    setup();
    assert!(!high_without_gpu_variant::KERNEL.has_gpu());
    assert_eq!(high_without_gpu_variant(10_001), Backend::Simd);
}
