//! Size buckets: which sizes share one routing decision.
//!
//! A bucket is at most 2× wide (a power-of-two range), and the power-of-two
//! ranges that contain an MoE threshold (1,000, 10,000, 100,000, 1,000,000)
//! are split there, so the cold-start prior of every size in a bucket is the
//! same and a size just past a threshold never shares a decision with one just
//! below it. Computing a bucket is a leading-zero count and one table lookup.
//! The split points come from the one MoE table ([`crate::moe`]).

use std::ops::RangeInclusive;

use crate::moe::SPLITS;

/// Number of buckets: two per bit length of `usize`, plus one for size 0.
pub const BUCKETS: usize = 2 * (usize::BITS as usize) + 2;

/// `SPLIT_AT[bits]`: the threshold inside `[2^(bits-1), 2^bits)`, or `usize::MAX` when none is.
const SPLIT_AT: [usize; usize::BITS as usize + 1] = {
    let mut t = [usize::MAX; usize::BITS as usize + 1];
    let mut i = 0;
    while i < SPLITS.len() {
        let s = SPLITS[i];
        let bits = (usize::BITS - s.leading_zeros()) as usize;
        t[bits] = s;
        i += 1;
    }
    t
};

/// The bucket index of `size`.
#[inline]
pub const fn bucket_of(size: usize) -> usize {
    let bits = (usize::BITS - size.leading_zeros()) as usize;
    2 * bits + (size > SPLIT_AT[bits]) as usize
}

/// The sizes that fall into bucket `index` (`None` for the unused odd indices and out-of-range ones).
pub fn bucket_range(index: usize) -> Option<RangeInclusive<usize>> {
    if index >= BUCKETS {
        return None;
    }
    let bits = index / 2;
    if bits > usize::BITS as usize {
        return None;
    }
    let (lo, hi) = if bits == 0 {
        (0, 0)
    } else {
        let lo = 1usize << (bits - 1);
        let hi = if bits == usize::BITS as usize { usize::MAX } else { (1usize << bits) - 1 };
        (lo, hi)
    };
    let split = SPLIT_AT[bits];
    match (index % 2, split) {
        (0, usize::MAX) => Some(lo..=hi),
        (0, s) => Some(lo..=s),
        (_, usize::MAX) => None,
        (_, s) => Some(s + 1..=hi),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_at_most_twice_wide() {
        let mut next = 0usize;
        for i in 0..BUCKETS {
            if let Some(r) = bucket_range(i) {
                assert_eq!(*r.start(), next, "bucket {i}");
                assert!(*r.end() <= r.start().saturating_mul(2).max(1), "bucket {i} is {r:?}");
                assert_eq!(bucket_of(*r.start()), i);
                assert_eq!(bucket_of(*r.end()), i);
                if *r.end() == usize::MAX {
                    return;
                }
                next = r.end() + 1;
            }
        }
        panic!("buckets do not reach usize::MAX");
    }

    #[test]
    fn moe_thresholds_split_buckets() {
        for s in SPLITS {
            assert_ne!(bucket_of(s), bucket_of(s + 1), "{s}");
            assert_eq!(bucket_of(s), bucket_of(s - 1), "{s}");
        }
    }
}
