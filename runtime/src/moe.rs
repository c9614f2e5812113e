//! The MoE table: per-complexity size thresholds above which SIMD, then the GPU,
//! is the cold-start choice. The one definition of these numbers: the stateless
//! selection API ([`crate::BackendSelector::select_with_moe`]), the router's
//! prior, the size buckets (split at every threshold) and the docs' table all
//! read [`THRESHOLDS`].

use crate::backend::{Backend, OpComplexity};

/// One row of the table: sizes strictly above `simd_above` start on SIMD, strictly
/// above `gpu_above` on the GPU (`None`: never the GPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// The complexity class of the row.
    pub complexity: OpComplexity,
    /// SIMD for sizes `> simd_above`.
    pub simd_above: usize,
    /// GPU for sizes `> gpu_above`; `None` when the class never starts on the GPU.
    pub gpu_above: Option<usize>,
}

/// The table, one row per [`OpComplexity`], in declaration order.
///
/// | complexity | Scalar | SIMD | GPU |
/// | --- | --- | --- | --- |
/// | Low | ≤ 1,000,000 | > 1,000,000 | never |
/// | Medium | ≤ 10,000 | > 10,000 | > 100,000 |
/// | High | ≤ 1,000 | > 1,000 | > 10,000 |
pub const THRESHOLDS: [Thresholds; 3] = [
    Thresholds { complexity: OpComplexity::Low, simd_above: 1_000_000, gpu_above: None },
    Thresholds { complexity: OpComplexity::Medium, simd_above: 10_000, gpu_above: Some(100_000) },
    Thresholds { complexity: OpComplexity::High, simd_above: 1_000, gpu_above: Some(10_000) },
];

/// The row of `complexity`.
pub const fn thresholds(complexity: OpComplexity) -> Thresholds {
    THRESHOLDS[complexity as usize]
}

/// The table's backend for an operation of `complexity` over `size` elements
/// (every boundary a strict `>`).
pub const fn moe(complexity: OpComplexity, size: usize) -> Backend {
    let row = thresholds(complexity);
    match row.gpu_above {
        Some(gpu) if size > gpu => Backend::Gpu,
        _ if size > row.simd_above => Backend::Simd,
        _ => Backend::Scalar,
    }
}

/// Every distinct threshold of the table, ascending: the sizes buckets are split at.
pub(crate) const SPLITS: [usize; 4] = {
    // Low's SIMD (1e6), Medium's (1e4, 1e5), High's (1e3, 1e4): 1e4 appears twice.
    let all = [
        THRESHOLDS[0].simd_above,
        THRESHOLDS[1].simd_above,
        unwrap_or_max(THRESHOLDS[1].gpu_above),
        THRESHOLDS[2].simd_above,
        unwrap_or_max(THRESHOLDS[2].gpu_above),
    ];
    let mut out = [usize::MAX; 4];
    let mut n = 0;
    let mut i = 0;
    while i < all.len() {
        // Insertion sort without duplicates, in a const context.
        let v = all[i];
        let mut seen = false;
        let mut j = 0;
        while j < n {
            if out[j] == v {
                seen = true;
            }
            j += 1;
        }
        if !seen && v != usize::MAX {
            let mut k = n;
            while k > 0 && out[k - 1] > v {
                out[k] = out[k - 1];
                k -= 1;
            }
            out[k] = v;
            n += 1;
        }
        i += 1;
    }
    assert!(n == 4, "the MoE table has four distinct thresholds");
    out
};

const fn unwrap_or_max(v: Option<usize>) -> usize {
    match v {
        Some(v) => v,
        None => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_complexity_order() {
        for (i, row) in THRESHOLDS.iter().enumerate() {
            assert_eq!(row.complexity as usize, i);
        }
    }

    #[test]
    fn splits_are_the_distinct_thresholds() {
        assert_eq!(SPLITS, [1_000, 10_000, 100_000, 1_000_000]);
    }
}
