//! The GPU backend's life cycle in one process: untouched by empty inputs,
//! ready on first use, and after the device is lost every op still returns
//! the right result (on SIMD), `health()` says `Failed`, `is_available()` is
//! false, and the adapter is still reported. A loop the GPU variant runs on
//! the device runs there before, and on the host after, with the same result.
//!
//! One test in its own binary: losing the device is permanent for the
//! process. Like every GPU test it fails without a device unless
//! `ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1`.

use std::io;
use std::sync::{Arc, Mutex};

use adaptive_kernel::__private::gpu_loop;
use adaptive_kernel::adaptive_kernel;
use adaptive_kernel::ops::gpu::{self, GpuHealth};
use adaptive_kernel::ops::scalar;

/// `out = x² + 1`: a loop the GPU variant runs on the device.
#[adaptive_kernel(complexity = "Low")]
fn squares(x: &[f32], out: &mut [f32]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = v * v + 1.0;
    }
}

/// `squares`' GPU variant on `x`, against Scalar's, and where its loop ran (device, host).
fn squares_on_gpu(x: &[f32]) -> (u64, u64) {
    let (mut g, mut s) = (vec![0.0; x.len()], vec![0.0; x.len()]);
    squares::gpu(x, &mut g);
    squares::scalar(x, &mut s);
    assert_eq!(g, s);
    let runs = gpu_loop::runs(file!(), squares::KERNEL.spec().gpu_loops[0].line);
    (runs.on_device, runs.on_host)
}

/// Collects what the `tracing` subscriber writes.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl io::Write for Log {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Log {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[test]
fn a_lost_device_falls_back_to_simd_with_correct_results() {
    let log = Log::default();
    let writer = log.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();
    // Empty inputs return their conventions without creating the device.
    assert!(gpu::add(&[], &[]).is_empty());
    assert_eq!(gpu::sum(&[]), 0.0);
    assert_eq!(gpu::matmul(&[], &[], 3, 2, 0), vec![0.0; 6]);
    let before = gpu::health();
    if std::env::var("ADAPTIVE_KERNEL_SKIP_GPU_TESTS").as_deref() == Ok("1") {
        eprintln!("skipped: ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1");
        return;
    }
    assert_eq!(before, GpuHealth::Uninitialized, "empty inputs must not touch the device");

    assert!(gpu::is_available(), "no usable GPU device ({}); see tests/ops_gpu.rs", gpu::health());
    let adapter = gpu::adapter().expect("a ready device has an adapter");
    let a: Vec<f32> = (0..5000).map(|i| (i % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..5000).map(|i| (i % 3) as f32 + 0.5).collect();
    assert_eq!(gpu::add(&a, &b), scalar::add(&a, &b));
    assert!(gpu::health().is_ready());
    assert_eq!(squares_on_gpu(&a), (1, 0));

    gpu::__destroy_device_for_tests();

    // Every op still answers, and answers right.
    assert_eq!(gpu::add(&a, &b), scalar::add(&a, &b));
    let GpuHealth::Failed { reason } = gpu::health() else { panic!("after losing the device: {}", gpu::health()) };
    assert!(!reason.is_empty());
    assert!(!gpu::is_available());
    assert_eq!(gpu::adapter(), Some(adapter), "the hardware fingerprint survives a failure");

    assert_eq!(gpu::mul(&a, &b), scalar::mul(&a, &b));
    assert_eq!(gpu::sum(&a), scalar::sum(&a));
    assert_eq!(gpu::max(&a), 6.0);
    assert_eq!(gpu::transpose(&a, 50, 100), scalar::transpose(&a, 50, 100));
    let mut y = b.clone();
    gpu::axpy(2.0, &a, &mut y);
    let mut expected = b.clone();
    scalar::axpy(2.0, &a, &mut expected);
    assert_eq!(y, expected);
    let m = gpu::matmul(&a[..100], &b[..100], 10, 10, 10);
    let s = scalar::matmul(&a[..100], &b[..100], 10, 10, 10);
    assert!(m.iter().zip(&s).all(|(x, y)| (x - y).abs() <= 1e-4 * y.abs().max(1.0)));
    assert!(matches!(gpu::health(), GpuHealth::Failed { .. }), "a failure is final");
    assert_eq!(squares_on_gpu(&a), (1, 1), "the generated loop ran on the host, right");
    let mut routed = vec![0.0; a.len()];
    squares(&a, &mut routed);
    assert_eq!(routed, a.iter().map(|v| v * v + 1.0).collect::<Vec<_>>());

    let text = log.text();
    assert_eq!(text.matches("GPU backend failed").count(), 1, "the failure is logged once:\n{text}");
    assert!(text.contains("WARN adaptive_kernel"), "{text}");
    eprintln!("{text}");
}
