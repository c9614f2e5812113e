//! Which SIMD instruction set this CPU offers, detected once.
//!
//! Generated SIMD variants are compiled as `#[target_feature]` clones (like the
//! multiversion crate) and pick one with [`simd_level`] on each call: one
//! relaxed load of a cached byte.

use std::sync::atomic::{AtomicU8, Ordering};

/// The widest instruction set a generated SIMD variant is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SimdLevel {
    /// No clone: the target's baseline (SSE2 on x86_64, NEON on aarch64).
    Baseline,
    /// x86_64 with AVX2 and FMA.
    Avx2,
    /// x86_64 with AVX-512 F/BW/VL/DQ (and AVX2, FMA).
    Avx512,
}

static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);

/// The best [`SimdLevel`] of this CPU; detected on first call, then cached.
#[inline]
pub fn simd_level() -> SimdLevel {
    // Relaxed: the byte is the whole message; racing detections store the same value.
    match LEVEL.load(Ordering::Relaxed) {
        0 => SimdLevel::Baseline,
        1 => SimdLevel::Avx2,
        2 => SimdLevel::Avx512,
        _ => detect_and_cache(),
    }
}

#[cold]
fn detect_and_cache() -> SimdLevel {
    let level = detect();
    LEVEL.store(level as u8, Ordering::Relaxed);
    level
}

fn detect() -> SimdLevel {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            return SimdLevel::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            return SimdLevel::Avx2;
        }
    }
    SimdLevel::Baseline
}
