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

/// The row of the docs' table for `t`, as every doc spells it.
fn doc_row(t: &adaptive_kernel::moe::Thresholds) -> String {
    fn n(v: usize) -> String {
        let s = v.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }
    let (scalar_max, gpu) = match t.gpu_above {
        Some(g) => (n(t.simd_above), format!("> {}", n(g))),
        None => (n(t.simd_above), "never".to_owned()),
    };
    format!("| {} | ≤ {scalar_max} | > {} | {gpu} |", t.complexity, n(t.simd_above))
}

#[test]
fn selection_bucketing_and_docs_all_read_the_one_table() {
    let docs = [
        ("runtime/src/moe.rs", include_str!("../runtime/src/moe.rs")),
        ("runtime/src/select/selector.rs", include_str!("../runtime/src/select/selector.rs")),
        ("docs/guide/routing.md", include_str!("../docs/guide/routing.md")),
    ];
    for t in adaptive_kernel::moe::THRESHOLDS {
        let c = t.complexity;
        assert_eq!(moe(c, t.simd_above), Backend::Scalar, "{c}");
        assert_ne!(moe(c, t.simd_above + 1), Backend::Scalar, "{c}");
        assert_ne!(adaptive_kernel::bucket_of(t.simd_above), adaptive_kernel::bucket_of(t.simd_above + 1), "{c}");
        if let Some(g) = t.gpu_above {
            assert_eq!(moe(c, g), Backend::Simd, "{c}");
            assert_eq!(moe(c, g + 1), Backend::Gpu, "{c}");
            assert_ne!(adaptive_kernel::bucket_of(g), adaptive_kernel::bucket_of(g + 1), "{c}");
        } else {
            assert_ne!(moe(c, usize::MAX), Backend::Gpu, "{c}");
        }
        let row = doc_row(&t);
        for (file, text) in docs {
            assert!(text.contains(&row), "{file} lacks the table row `{row}`");
        }
    }
}
