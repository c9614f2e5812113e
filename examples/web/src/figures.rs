//! The figures BENCHMARKS.md records for WebAssembly: each op's Scalar and SIMD
//! variants called directly over a size sweep (where SIMD128 starts to pay),
//! and what a settled routed call costs above a direct call of its variant.
//!
//! Times are medians of batches of calls, each batch at least 2 ms long, so a
//! browser's coarse `performance.now()` (100 µs, or 5 µs cross-origin isolated)
//! still resolves a call of a few nanoseconds; Scalar and SIMD batches alternate.

use std::hint::black_box;
use std::time::Duration;

use adaptive_kernel::Backend;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use web_time::Instant;

use crate::sweep::data;
use crate::{dot, exp, matmul, saxpy, sum_squares};

/// A batch is at least this long.
const BATCH: Duration = Duration::from_millis(2);
/// Batches per figure (the median is kept).
const ROUNDS: usize = 7;
/// Vector lengths measured.
const SIZES: [usize; 9] = [16, 64, 256, 1024, 4096, 16_384, 65_536, 262_144, 1 << 20];
/// Square matrix sides measured.
const SIDES: [usize; 7] = [4, 8, 16, 32, 64, 128, 256];
/// SIMD pays from the smallest size at and above which it is faster by more than this fraction.
const PAYS: f64 = 0.05;

/// Calls per batch so that one batch of `f` lasts at least [`BATCH`].
fn batch_len(f: &mut impl FnMut()) -> u32 {
    let mut n = 1u32;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        if t.elapsed() >= BATCH || n >= 1 << 24 {
            return n;
        }
        n *= 2;
    }
}

/// Keeps a result alive, so the call that made it is not optimised away.
fn keep<T>(x: T) {
    black_box(x);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median nanoseconds per call of `a` and of `b`, their batches alternating.
fn pair_ns(mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    let (na, nb) = (batch_len(&mut a), batch_len(&mut b));
    let (mut ta, mut tb) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..na {
            a();
        }
        ta.push(t.elapsed().as_secs_f64() * 1e9 / f64::from(na));
        let t = Instant::now();
        for _ in 0..nb {
            b();
        }
        tb.push(t.elapsed().as_secs_f64() * 1e9 / f64::from(nb));
    }
    (median(ta), median(tb))
}

/// One op's rows and the size from which SIMD pays (`null` when it never does).
fn op(name: &str, sizes: &[usize], mut measure: impl FnMut(usize) -> (f64, f64)) -> Value {
    let rows: Vec<(usize, f64, f64)> = sizes
        .iter()
        .map(|&n| {
            let (s, v) = measure(n);
            (n, s, v)
        })
        .collect();
    let pays = |&(_, s, v): &(usize, f64, f64)| s > v * (1.0 + PAYS);
    let from = rows.iter().rposition(|r| !pays(r)).map_or(0, |i| i + 1);
    json!({
        "op": name,
        "rows": rows.iter().map(|&(n, s, v)| json!({
            "size": n, "scalar_ns": s.round(), "simd_ns": v.round(), "speedup": (s / v * 100.0).round() / 100.0,
        })).collect::<Vec<_>>(),
        "simd_pays_from": rows.get(from).map(|r| r.0),
    })
}

/// What a settled routed `dot` call of `len` elements costs above a direct call of
/// the variant its bucket chose: (direct ns, routed ns, chosen backend).
fn overhead(len: usize) -> (f64, f64, Backend) {
    let (a, b) = (data(len, 1), data(len, 2));
    for _ in 0..2_000 {
        black_box(dot(black_box(&a), black_box(&b)));
    }
    let chosen = dot::KERNEL.table().row_for(2 * len).and_then(|r| r.chosen).unwrap_or(Backend::Scalar);
    let variant: fn(&[f32], &[f32]) -> f32 = match chosen {
        Backend::Scalar => dot::scalar,
        _ => dot::simd,
    };
    let (direct, routed) = pair_ns(
        || {
            black_box(variant(black_box(&a), black_box(&b)));
        },
        || {
            black_box(dot(black_box(&a), black_box(&b)));
        },
    );
    (direct, routed, chosen)
}

/// The Scalar vs SIMD figures of `dot`, `sum_squares`, `saxpy`, `exp` over vector
/// lengths and `matmul` over square sides (ns per call, speedup, and the size from
/// which SIMD pays), and the settled-call overhead of a routed 16-element `dot`,
/// as JSON. Takes a few seconds.
#[wasm_bindgen]
pub fn figures() -> String {
    let vectors = |name: &str, f: fn(usize) -> (f64, f64)| op(name, &SIZES, f);
    let ops = vec![
        vectors("dot", |n| {
            let (a, b) = (data(n, 1), data(n, 2));
            pair_ns(|| keep(dot::scalar(black_box(&a), &b)), || keep(dot::simd(black_box(&a), &b)))
        }),
        vectors("sum_squares", |n| {
            let x = data(n, 3);
            pair_ns(|| keep(sum_squares::scalar(black_box(&x))), || keep(sum_squares::simd(black_box(&x))))
        }),
        vectors("saxpy", |n| {
            let x = data(n, 4);
            let (mut y1, mut y2) = (data(n, 5), data(n, 5));
            pair_ns(
                || saxpy::scalar(1e-3, black_box(&x), black_box(&mut y1)),
                || saxpy::simd(1e-3, black_box(&x), black_box(&mut y2)),
            )
        }),
        vectors("exp", |n| {
            let x = data(n, 6);
            pair_ns(|| keep(exp::scalar(black_box(&x))), || keep(exp::simd(black_box(&x))))
        }),
        op("matmul", &SIDES, |n| {
            let (a, b) = (data(n * n, 7), data(n * n, 8));
            pair_ns(
                || drop(black_box(matmul::scalar(black_box(&a), &b, n, n, n))),
                || drop(black_box(matmul::simd(black_box(&a), &b, n, n, n))),
            )
        }),
    ];
    let (direct, routed, chosen) = overhead(16);
    json!({
        "simd_level": format!("{:?}", adaptive_kernel::simd_level()),
        "ops": ops,
        "settled_call": { "op": "dot", "len": 16, "chosen": chosen.to_string(), "direct_ns": (direct * 10.0).round() / 10.0, "routed_ns": (routed * 10.0).round() / 10.0 },
    })
    .to_string()
}
