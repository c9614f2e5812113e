//! The 5× dispatch rule: GPU when `flops / gpu_flops > ratio × bytes / pcie_bandwidth`.

use adaptive_kernel::{Backend, BackendSelector};

#[test]
fn defaults_are_the_documented_constants() {
    let s = BackendSelector::default();
    assert_eq!(s.pcie_bandwidth(), 32e9);
    assert_eq!(s.gpu_gflops(), 20e12);
    assert_eq!(s.min_dispatch_ratio(), 5.0);
    assert_eq!(s, BackendSelector::new());
}

#[test]
fn gpu_only_when_compute_exceeds_five_times_transfer() {
    let s = BackendSelector::new();
    // 32 kB take 1 µs over PCIe; 5 µs of GPU compute is 100 MFLOP.
    assert_eq!(s.select_backend(32_000, 100_000_000), Backend::Simd, "exactly 5x is not enough");
    assert_eq!(s.select_backend(32_000, 100_000_001), Backend::Gpu);
    assert_eq!(s.select_backend(0, 1), Backend::Gpu, "no transfer, some work");
    assert_eq!(s.select_backend(0, 0), Backend::Simd, "no work at all");
    assert_eq!(s.select_backend(usize::MAX, u64::MAX), Backend::Simd);
}

#[test]
fn square_matmul_crosses_over_near_18750() {
    let s = BackendSelector::new();
    // 2n³/20e12 > 5·12n²/32e9  ⇔  n > 18,750.
    assert_eq!(s.select_for_matmul(64, 64, 64), Backend::Simd);
    assert_eq!(
        s.select_for_matmul(1024, 1024, 1024),
        Backend::Simd,
        "the seed's prose said GPU; the formula says SIMD"
    );
    assert_eq!(s.select_for_matmul(18_750, 18_750, 18_750), Backend::Simd);
    assert_eq!(s.select_for_matmul(18_760, 18_760, 18_760), Backend::Gpu);
}

#[test]
fn parameters_move_the_crossover() {
    let slow_bus = BackendSelector::new().with_pcie_bandwidth(1e9);
    assert_eq!(slow_bus.select_for_matmul(20_000, 20_000, 20_000), Backend::Simd);
    let relaxed = BackendSelector::new().with_min_dispatch_ratio(0.01);
    assert_eq!(relaxed.select_for_matmul(1024, 1024, 1024), Backend::Gpu);
    // A faster GPU finishes the compute sooner, so the transfer weighs more.
    let fast_gpu = BackendSelector::new().with_gpu_gflops(1e15);
    assert_eq!(fast_gpu.select_for_matmul(20_000, 20_000, 20_000), Backend::Simd);
}

#[test]
fn matmul_and_vector_op_sizes_never_overflow() {
    let s = BackendSelector::new();
    for &(m, n, k) in &[
        (usize::MAX, usize::MAX, usize::MAX),
        (usize::MAX, 1, 1),
        (1, usize::MAX, 1),
        (1, 1, usize::MAX),
        (0, usize::MAX, usize::MAX),
        (1 << 40, 1 << 40, 1 << 40),
    ] {
        // Must neither panic (debug overflow checks are on in tests) nor wrap to a tiny number.
        let b = s.select_for_matmul(m, n, k);
        assert!(matches!(b, Backend::Simd | Backend::Gpu), "{m}×{n}×{k}: {b}");
    }
    assert_eq!(s.select_for_matmul(0, 0, 0), Backend::Simd);
    assert_eq!(s.select_for_vector_op(usize::MAX, u64::MAX), Backend::Gpu, "saturated, not wrapped");
    assert_eq!(s.select_for_vector_op(usize::MAX, 1), Backend::Simd);
}

#[test]
fn vector_ops_are_transfer_bound_unless_very_heavy() {
    let s = BackendSelector::new();
    // 12 bytes per element at 32 GB/s vs ops/20e12: GPU needs ops > 5·12·20e12/32e9 = 37,500.
    assert_eq!(s.select_for_vector_op(1_000_000, 1), Backend::Simd);
    assert_eq!(s.select_for_vector_op(1_000_000, 37_500), Backend::Simd);
    assert_eq!(s.select_for_vector_op(1_000_000, 37_501), Backend::Gpu);
}
