//! The MoE table: every boundary is a strict `>`.

use adaptive_kernel::{Backend, BackendSelector, OpComplexity};

fn moe(c: OpComplexity, n: usize) -> Backend {
    BackendSelector::new().select_with_moe(c, n)
}

#[test]
fn low_is_scalar_up_to_one_million_then_simd_and_never_gpu() {
    use OpComplexity::Low;
    assert_eq!(moe(Low, 0), Backend::Scalar);
    assert_eq!(moe(Low, 1_000_000), Backend::Scalar);
    assert_eq!(moe(Low, 1_000_001), Backend::Simd);
    assert_eq!(moe(Low, usize::MAX), Backend::Simd);
}

#[test]
fn medium_crosses_to_simd_above_ten_thousand_and_gpu_above_one_hundred_thousand() {
    use OpComplexity::Medium;
    assert_eq!(moe(Medium, 10_000), Backend::Scalar);
    assert_eq!(moe(Medium, 10_001), Backend::Simd);
    assert_eq!(moe(Medium, 100_000), Backend::Simd);
    assert_eq!(moe(Medium, 100_001), Backend::Gpu);
    assert_eq!(moe(Medium, usize::MAX), Backend::Gpu);
}

#[test]
fn high_crosses_to_simd_above_one_thousand_and_gpu_above_ten_thousand() {
    use OpComplexity::High;
    assert_eq!(moe(High, 0), Backend::Scalar);
    assert_eq!(moe(High, 1_000), Backend::Scalar);
    assert_eq!(moe(High, 1_001), Backend::Simd);
    assert_eq!(moe(High, 10_000), Backend::Simd);
    assert_eq!(moe(High, 10_001), Backend::Gpu);
}

#[test]
fn higher_complexity_never_picks_a_slower_class_than_lower() {
    for n in [0, 999, 1_000, 1_001, 9_999, 10_001, 100_001, 1_000_001, 50_000_000] {
        let picks: Vec<Backend> = OpComplexity::ALL.iter().map(|&c| moe(c, n)).collect();
        assert!(picks.windows(2).all(|w| w[0] <= w[1]), "size {n}: {picks:?}");
    }
}

#[test]
fn elementwise_is_simd_above_one_million_and_never_gpu() {
    let s = BackendSelector::new();
    assert_eq!(s.select_for_elementwise(1_000_000), Backend::Scalar);
    assert_eq!(s.select_for_elementwise(1_000_001), Backend::Simd);
    assert_eq!(s.select_for_elementwise(usize::MAX), Backend::Simd);
}
