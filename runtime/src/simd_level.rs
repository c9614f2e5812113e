//! Which SIMD instruction set this CPU offers, detected once, and the one
//! definition of the CPU feature sets each level stands for.
//!
//! Generated SIMD variants and the SIMD ops are compiled as `#[target_feature]`
//! clones (like the multiversion crate) and pick one with [`simd_level`] (or an
//! op class's cap of it) on each call: one relaxed load of a cached byte.
//!
//! The feature sets are spelled once, in [`__simd_feature_sets!`]. Everything
//! else derives from that macro: [`feature_sets`] (what detection checks and
//! what fingerprints read) and [`__simd_clones!`] (the `#[target_feature]`
//! clones plus the run-time pick, used by `ops::simd` and by every kernel the
//! attribute generates). `#[target_feature(enable = ..)]` takes only a string
//! literal, never a macro call or a constant, so the literal is handed to each
//! user by a callback macro rather than read from the table.

use std::sync::atomic::{AtomicU8, Ordering};

/// The widest instruction set a generated SIMD variant is compiled for.
///
/// Levels compare within one architecture (wider is greater); a level of
/// another architecture never runs here (`Simd128` on x86_64, `Avx2` on wasm32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SimdLevel {
    /// No clone: the target's baseline (SSE2 on x86_64, NEON on aarch64, scalar on wasm32).
    Baseline,
    /// wasm32 with SIMD128 (128-bit lanes; no fused multiply-add).
    Simd128,
    /// x86_64 with AVX2 and FMA.
    Avx2,
    /// x86_64 with AVX-512 F/BW/VL/DQ (and AVX2, FMA).
    Avx512,
}

/// The feature sets of the SIMD clones, per architecture, widest first: the
/// one place they are spelled. Not a public API.
///
/// `__simd_feature_sets!([path::to::callback] extra tokens)` expands to
/// `path::to::callback! { extra tokens [(Level, clone_name, "arch", "features") …] }`,
/// where `Level` is a [`SimdLevel`] variant and `"arch"` the `target_arch` its
/// clones are compiled for (on other architectures they do not exist).
///
/// On wasm32 the SIMD128 clone is always picked: a WebAssembly engine validates
/// the whole module before running any of it, so a module holding the clones
/// runs only on engines with SIMD128 (every current browser, Node ≥ 16.4).
#[doc(hidden)]
#[macro_export]
macro_rules! __simd_feature_sets {
    ([$($callback:tt)*] $($extra:tt)*) => {
        $($callback)*! {
            $($extra)*
            [
                (Avx512, avx512, "x86_64", "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")
                (Avx2, avx2, "x86_64", "avx2,fma")
                (Simd128, simd128, "wasm32", "simd128")
            ]
        }
    };
}

/// The body of one function compiled once per [`feature_sets`] entry as a
/// `#[target_feature]` clone, and the call of the clone `pick` names: the
/// dispatch of `ops::simd` and of every generated SIMD variant. Not a public
/// API.
///
/// ```text
/// __simd_clones! {
///     pick: <SimdLevel expression>,    // must not exceed simd_level(): the clones' safety rests on it
///     sig: { <'a>(x: &'a [f32]) -> R }, // generics, parameters, return type, where clause
///     unsafety: { },                  // or { unsafe } for an `unsafe fn`
///     turbofish: (::<T, N>),          // optional: the generic arguments a clone is called with
///     args: (x),                      // the parameter names, forwarded in order
///     simd: (body::<true>),           // what a clone calls
///     baseline: (body::<false>),      // what runs below every clone's level
/// }
/// ```
///
/// Expands to a block expression: the clones (named after the levels, in a
/// block of their own so they cannot capture a name of the caller's) and a
/// `match` that calls one. `simd` and `baseline` are usually an
/// `#[inline(always)]` function, so each clone compiles its own copy of it
/// with the clone's features.
#[doc(hidden)]
#[macro_export]
macro_rules! __simd_clones {
    (
        pick: $pick:expr,
        sig: $sig:tt,
        unsafety: $unsafety:tt,
        $(turbofish: ($($turbofish:tt)*),)?
        args: $args:tt,
        simd: $simd:tt,
        baseline: $baseline:tt $(,)?
    ) => {
        $crate::__simd_feature_sets!(
            [$crate::__simd_clones] @clones ($pick) $sig $unsafety [$($($turbofish)*)?] $args $simd $baseline
        )
    };
    (
        @clones ($pick:expr) $sig:tt $unsafety:tt $turbofish:tt $args:tt $simd:tt $baseline:tt
        [$(($level:ident, $clone:ident, $arch:literal, $features:literal))*]
    ) => {{
        $($crate::__simd_clones!(@clone $clone $arch $features $sig $unsafety $args $simd);)*
        match $pick {
            $(
                // SAFETY: `pick` names a level no wider than `simd_level()` detected on this CPU
                // (the macro's contract), and this clone enables exactly that level's features.
                // (On wasm32 calling a safe `#[target_feature]` function needs no `unsafe`.)
                #[cfg(target_arch = $arch)]
                #[allow(unused_unsafe)]
                $crate::SimdLevel::$level => unsafe { $crate::__simd_clones!(@turbofish $clone $turbofish $args) },
            )*
            _ => $crate::__simd_clones!(@call $unsafety $baseline $args),
        }
    }};
    (@turbofish $clone:ident [$($turbofish:tt)*] $args:tt) => {
        $clone $($turbofish)* $args
    };
    (@call {$($unsafety:tt)*} $callee:tt $args:tt) => {
        $($unsafety)* { $callee $args }
    };
    (@clone $clone:ident $arch:literal $features:literal {$($sig:tt)*} {$($unsafety:tt)*} $args:tt ($($simd:tt)*)) => {
        #[cfg(target_arch = $arch)]
        #[target_feature(enable = $features)]
        $($unsafety)* fn $clone $($sig)* {
            $crate::__simd_clones!(@call {$($unsafety)*} ($($simd)*) $args)
        }
    };
}

/// Defines a function that runs a closure inside a `#[target_feature]` clone for this CPU's
/// widest [`SimdLevel`] (the target's baseline below every level), from
/// [`__simd_feature_sets!`]: [`simd_run`] and [`simd_cold`], which differ only in the
/// attributes of their clones.
///
/// `closure_runner!([closure_runner] { attributes of the function } name { attributes of each
/// clone })`. Each clone is generic over the closure, so it is instantiated with the body in
/// the caller's crate and the closure, called once there, is inlined into it and compiled with
/// the clone's features.
macro_rules! closure_runner {
    ({ $(#[$attr:meta])* } $name:ident $clone_attrs:tt [$(($level:ident, $clone:ident, $arch:literal, $features:literal))*]) => {
        $(#[$attr])*
        pub fn $name<R, F: FnOnce() -> R>(body: F) -> R {
            $(closure_runner!(@clone $clone_attrs $clone $arch $features);)*
            closure_runner!(@baseline $clone_attrs);
            match simd_level() {
                $(
                    // SAFETY: `simd_level()` detected this level on this CPU, and the clone
                    // enables exactly that level's features.
                    #[cfg(target_arch = $arch)]
                    SimdLevel::$level => unsafe { $clone(body) },
                )*
                _ => baseline(body),
            }
        }
    };
    (@clone { $(#[$clone_attr:meta])* } $clone:ident $arch:literal $features:literal) => {
        #[cfg(target_arch = $arch)]
        #[target_feature(enable = $features)]
        $(#[$clone_attr])*
        unsafe fn $clone<R, F: FnOnce() -> R>(body: F) -> R {
            body()
        }
    };
    (@baseline { $(#[$clone_attr:meta])* }) => {
        $(#[$clone_attr])*
        fn baseline<R, F: FnOnce() -> R>(body: F) -> R {
            body()
        }
    };
}

crate::__simd_feature_sets!([closure_runner] {
    /// Runs `body` inside a `#[target_feature]` clone for this CPU's widest
    /// [`SimdLevel`] (the target's baseline below every level): the SIMD
    /// variant of a kernel whose variants live inside the function (methods,
    /// associated functions), where no item can name `Self` or the impl's
    /// generics but a closure can. Not a public API.
    ///
    /// Each clone is generic over the closure, so it is instantiated with the
    /// body in the caller's crate; the closure is called once there and LLVM
    /// inlines it, compiling the body with the clone's features.
    #[doc(hidden)]
    #[inline]
} simd_run { #[inline] });

crate::__simd_feature_sets!([closure_runner] {
    /// Runs `body` out of line, as a cold call, inside a `#[target_feature]` clone for
    /// this CPU's widest [`SimdLevel`] (the target's baseline below every level): the
    /// path of a generated loop that almost never runs (an element-wise loop's slices'
    /// path, taken only where a window of the loop leaves its slice). Not a public API.
    ///
    /// Compiled in the same function as the loop's common path, such a path costs it
    /// even when it never runs: kept beside the windows of a 512 × 512 stencil it slowed
    /// them by 15 % (BENCHMARKS.md, "The 512² stencil at the hand stencil's speed"). A
    /// closure called from a `#[cold]` `#[inline(never)]` function moves it out, but a
    /// closure takes only its enclosing function's CPU features, and the SIMD variant's
    /// body has none of its own (its clones inline it). Here each clone is generic over
    /// the closure, so the closure is compiled inside the clone, with its features, as in
    /// [`simd_run`]; mark the closure `#[inline(always)]` so that it is.
    ///
    /// The level is [`simd_level`]'s, which is the level every generated SIMD variant
    /// runs at. Results do not depend on it: the same operations run in the same order at
    /// every level, only their instructions differ.
    #[doc(hidden)]
    #[inline(always)]
} simd_cold { #[cold] #[inline(never)] });

/// Builds the table behind [`feature_sets`] from [`__simd_feature_sets!`].
macro_rules! feature_table {
    ([$(($level:ident, $clone:ident, $arch:literal, $features:literal))*]) => {
        /// Each [`SimdLevel`] above `Baseline`, the architecture its clones exist on,
        /// and the comma-separated features they are compiled with, widest first.
        const ALL_FEATURE_SETS: &[(SimdLevel, &str, &str)] = &[$((SimdLevel::$level, $arch, $features)),*];
    };
}

crate::__simd_feature_sets!([feature_table]);

/// The entries of [`ALL_FEATURE_SETS`] for this architecture: each [`SimdLevel`]
/// above `Baseline` that can run here with its comma-separated features, widest
/// first. Detection picks the first entry whose features this CPU has.
pub(crate) fn feature_sets() -> impl Iterator<Item = (SimdLevel, &'static str)> {
    ALL_FEATURE_SETS.iter().filter(|(_, arch, _)| *arch == std::env::consts::ARCH).map(|&(level, _, f)| (level, f))
}

/// Whether code compiled for `level` can run on this CPU: the baseline, or a level of
/// this architecture no wider than [`simd_level`].
pub(crate) fn runs_here(level: SimdLevel) -> bool {
    level == SimdLevel::Baseline || (level <= simd_level() && feature_sets().any(|(l, _)| l == level))
}

static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);

/// The best [`SimdLevel`] of this CPU; detected on first call, then cached.
#[inline]
pub fn simd_level() -> SimdLevel {
    // Relaxed: the byte is the whole message; racing detections store the same value.
    match LEVEL.load(Ordering::Relaxed) {
        0 => SimdLevel::Baseline,
        1 => SimdLevel::Simd128,
        2 => SimdLevel::Avx2,
        3 => SimdLevel::Avx512,
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
    feature_sets()
        .find(|(_, features)| features.split(',').all(|f| has_feature(f) == Some(true)))
        .map_or(SimdLevel::Baseline, |(level, _)| level)
}

/// The features named in [`feature_sets`] that this CPU has, each once, widest
/// set first: what the SIMD variants may use, and what a hardware fingerprint records.
pub(crate) fn detected_features() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (_, features) in feature_sets() {
        for f in features.split(',') {
            if has_feature(f) == Some(true) && !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// Whether this CPU has the x86_64 feature `name`; `None` for a name this
/// function does not know (`is_x86_feature_detected!` takes only literals).
#[cfg(target_arch = "x86_64")]
fn has_feature(name: &str) -> Option<bool> {
    use std::arch::is_x86_feature_detected as has;
    Some(match name {
        "avx512f" => has!("avx512f"),
        "avx512bw" => has!("avx512bw"),
        "avx512vl" => has!("avx512vl"),
        "avx512dq" => has!("avx512dq"),
        "avx2" => has!("avx2"),
        "fma" => has!("fma"),
        _ => return None,
    })
}

/// Whether this engine has the wasm32 feature `name`; `None` for a name this
/// function does not know. SIMD128 is there whenever this code runs: the engine
/// validated the whole module, SIMD128 clones included, before running any of it.
#[cfg(target_arch = "wasm32")]
fn has_feature(name: &str) -> Option<bool> {
    match name {
        "simd128" => Some(true),
        _ => None,
    }
}

/// No feature of the table exists on other targets.
#[cfg(not(any(target_arch = "x86_64", target_arch = "wasm32")))]
fn has_feature(_name: &str) -> Option<bool> {
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_feature_in_the_table_is_detectable() {
        for (level, features) in feature_sets() {
            for feature in features.split(',') {
                assert!(has_feature(feature).is_some(), "{level:?}: `{feature}` is not known to has_feature");
            }
        }
    }

    #[test]
    fn the_table_lists_every_level_above_baseline_widest_first() {
        let levels: Vec<SimdLevel> = ALL_FEATURE_SETS.iter().map(|&(level, _, _)| level).collect();
        assert_eq!(levels, [SimdLevel::Avx512, SimdLevel::Avx2, SimdLevel::Simd128]);
        let here: Vec<SimdLevel> = feature_sets().map(|(level, _)| level).collect();
        #[cfg(target_arch = "x86_64")]
        assert_eq!(here, [SimdLevel::Avx512, SimdLevel::Avx2]);
        #[cfg(target_arch = "wasm32")]
        assert_eq!(here, [SimdLevel::Simd128]);
        assert!(!runs_here(SimdLevel::Simd128) || !runs_here(SimdLevel::Avx2), "one architecture's levels at a time");
    }

    #[test]
    fn a_wider_level_includes_the_features_of_the_narrower_ones() {
        // A clone may be picked for any CPU at or above its level, so each set must contain the next.
        let sets: Vec<(SimdLevel, &str)> = feature_sets().collect();
        for pair in sets.windows(2) {
            let (wide, narrow) = (pair[0].1, pair[1].1);
            assert!(narrow.split(',').all(|f| wide.split(',').any(|w| w == f)), "{wide} lacks part of {narrow}");
        }
    }

    #[test]
    fn the_attribute_reference_names_the_same_feature_sets() {
        let reference = include_str!("../../macros/doc/reference.md");
        for &(level, _, features) in ALL_FEATURE_SETS {
            assert!(
                reference.contains(&format!("`{features}`")),
                "macros/doc/reference.md does not name {level:?}'s `{features}`"
            );
        }
    }

    #[test]
    fn a_cold_run_returns_what_its_body_returns_and_runs_it_once() {
        let owned = vec![1.0f32, 2.0, 3.0];
        let mut runs = 0;
        let sum = simd_cold(|| {
            runs += 1;
            owned.into_iter().sum::<f32>()
        });
        assert_eq!((sum, runs), (6.0, 1));
        let panicked = std::panic::catch_unwind(|| simd_cold(|| -> u8 { panic!("from the cold path") }));
        let message = panicked.expect_err("the body's panic reaches the caller");
        assert_eq!(message.downcast_ref::<&str>(), Some(&"from the cold path"));
    }

    #[test]
    fn detection_agrees_with_the_table() {
        let level = simd_level();
        for (candidate, features) in feature_sets() {
            let has_all = features.split(',').all(|f| has_feature(f) == Some(true));
            if candidate > level {
                assert!(!has_all, "the CPU has every feature of {candidate:?} but detection said {level:?}");
            } else if candidate == level {
                assert!(has_all);
            }
        }
    }

    /// A function compiled by `__simd_clones!` at every level this CPU has computes what its
    /// body computes, with a lifetime, a `mut`-free forwarding signature and an `unsafe fn`.
    #[test]
    #[allow(clippy::needless_lifetimes, reason = "a named lifetime is what the `sig:` tokens must carry through")]
    fn clones_dispatch_to_the_body_at_every_level() {
        #[inline(always)]
        fn body<'a>(x: &'a [f32], k: usize) -> &'a f32 {
            &x[k]
        }
        fn picked<'a>(level: SimdLevel, x: &'a [f32], k: usize) -> &'a f32 {
            crate::__simd_clones! {
                pick: level,
                sig: { <'a>(x: &'a [f32], k: usize) -> &'a f32 },
                unsafety: {},
                args: (x, k),
                simd: (body),
                baseline: (body),
            }
        }
        #[inline(always)]
        unsafe fn raw(p: *const f32) -> f32 {
            // SAFETY: the caller passes a valid pointer.
            unsafe { *p }
        }
        unsafe fn picked_unsafe(level: SimdLevel, p: *const f32) -> f32 {
            crate::__simd_clones! {
                pick: level,
                sig: { (p: *const f32) -> f32 },
                unsafety: { unsafe },
                args: (p),
                simd: (raw),
                baseline: (raw),
            }
        }
        let x = [1.0, 2.0, 3.0];
        for level in [SimdLevel::Baseline, SimdLevel::Simd128, SimdLevel::Avx2, SimdLevel::Avx512] {
            if runs_here(level) {
                assert_eq!(*picked(level, &x, 2), 3.0);
                // SAFETY: `x` is alive and `level` is one this CPU has.
                assert_eq!(unsafe { picked_unsafe(level, x.as_ptr()) }, 1.0);
            }
        }
    }
}
