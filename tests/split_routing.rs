//! A plain-loop kernel's Parallel variant (its top-level loop split across
//! threads) is routed like every variant: the router keeps SIMD below the
//! split's break-even and settles on Parallel above it, the cost model's
//! fork–join figure predicts where, `verify` compares the split variant with
//! Scalar, and a frozen run uses a saved Parallel decision.
//!
//! Frozen runs are child processes (this test binary again, on the ignored
//! `child` entry point), because the mode and the history file are chosen
//! once per process.

mod common;

use std::path::Path;

use adaptive_kernel::config::ENV_MODE;
use adaptive_kernel::{adaptive_kernel, Backend, Work};
use common::*;

/// Softened pairwise potential of each body: O(n²), one split loop over bodies.
#[adaptive_kernel(complexity = "High", size = x.len(), flops = 8 * x.len() * x.len(), name = "split_routing::potential")]
fn potential(x: &[f32], y: &[f32], out: &mut [f32]) {
    for (i, o) in out.iter_mut().enumerate() {
        let mut p = 0.0f32;
        for j in 0..x.len() {
            let dx = x[j] - x[i];
            let dy = y[j] - y[i];
            p += 1.0 / (dx * dx + dy * dy + 1e-2).sqrt();
        }
        *o = p;
    }
}

/// The same potential summed, checked against Scalar while it explores. `n²` terms for
/// `size = n`: the default bound (`size` roundings) would be for `n` terms, so the accepted
/// difference is stated (at 500 bodies the variants differ from Scalar by about 5e-5).
#[adaptive_kernel(complexity = "High", size = x.len(), flops = 8 * x.len() * x.len(), verify = true, tolerance = 1e-3)]
fn total_potential(x: &[f32], y: &[f32]) -> f32 {
    let mut total = 0.0f32;
    for i in 0..x.len() {
        for j in 0..x.len().min(y.len()) {
            let dx = x[j] - x[i];
            let dy = y[j] - y[i];
            total += 1.0 / (dx * dx + dy * dy + 1e-2).sqrt();
        }
    }
    total
}

fn bodies(n: usize) -> (Vec<f32>, Vec<f32>) {
    ((0..n).map(|i| (i % 17) as f32 * 0.3).collect(), (0..n).map(|i| (i % 11) as f32 * 0.7).collect())
}

const SMALL: usize = 16;
const LARGE: usize = 4_096;

/// Injected timings: the split costs a fork–join that only pays from `LARGE` bodies on.
fn by_size(size: usize) -> impl Fn(Backend) -> std::time::Duration {
    move |b| match (b, size >= LARGE) {
        (Backend::Parallel, true) => us(400),
        (Backend::Parallel, false) => us(30),
        (Backend::Simd, true) => us(800),
        (Backend::Simd, false) => us(2),
        _ => us(5_000),
    }
}

#[test]
fn the_router_keeps_simd_below_the_split_s_break_even_and_takes_parallel_above_it() {
    fixed_model();
    assert!(adaptive_kernel::ops::par::threads() >= 2, "this test needs two or more threads");
    assert!(potential::KERNEL.has_parallel());
    settle_with(&potential::KERNEL, SMALL, by_size(SMALL));
    settle_with(&potential::KERNEL, LARGE, by_size(LARGE));
    assert_eq!(settled(&potential::KERNEL, SMALL), Some(Backend::Simd), "{}", potential::KERNEL.table());
    assert_eq!(settled(&potential::KERNEL, LARGE), Some(Backend::Parallel), "{}", potential::KERNEL.table());
    // Routed calls then run the chosen variant, with Scalar's results (element-wise: bit for bit).
    for n in [SMALL, LARGE] {
        let (x, y) = bodies(n);
        let (mut routed, mut scalar) = (vec![0.0; n], vec![0.0; n]);
        potential(&x, &y, &mut routed);
        potential::scalar(&x, &y, &mut scalar);
        let (lanes, rounding) = (routed.iter().zip(&scalar), 1e-4f32);
        for (r, s) in lanes {
            assert!((r - s).abs() <= rounding * s.abs(), "{r} vs {s}");
        }
    }
}

#[test]
fn the_cost_model_s_fork_join_figure_predicts_the_break_even() {
    fixed_model();
    let model = adaptive_kernel::cost::global();
    let work = |n: usize| Work { size: n, flops: 8 * (n * n) as u64, bytes: 8 * n as u64 };
    let faster = |n: usize| {
        let (par, simd) = (model.predict(Backend::Parallel, &work(n)), model.predict(Backend::Simd, &work(n)));
        par < simd
    };
    assert!(!faster(SMALL), "a fork–join costs more than 16 bodies' work");
    assert!(faster(LARGE), "4,096 bodies outlast a fork–join on two threads");
}

#[test]
fn verify_compares_the_split_variant_with_scalar_and_keeps_it() {
    fixed_model();
    let (x, y) = bodies(500);
    let right = total_potential::scalar(&x, &y);
    // Scalar, SIMD and the GPU (its loop runs there too) already measured (slow: more samples
    // than a round keeps, the first a warm-up), so that exploration's next timed calls go to the
    // split variant whatever this build's or this machine's speeds.
    for b in [Backend::Scalar, Backend::Simd, Backend::Gpu] {
        for _ in 0..8 {
            total_potential::KERNEL.observe(x.len(), b, us(50_000));
        }
    }
    for _ in 0..2_000 {
        let got = total_potential(&x, &y);
        assert!((got - right).abs() <= 1e-3 * right.abs(), "{got} returned, {right} is right");
        if settled(&total_potential::KERNEL, x.len()).is_some() {
            break;
        }
    }
    let table = total_potential::KERNEL.table();
    let row = table.row_for(x.len()).cloned().expect("called");
    assert_eq!(row.chosen, Some(Backend::Parallel), "{table}");
    assert_eq!(row.excluded, [], "the split variant agrees with Scalar: {table}");
    let parallel = row.backend(Backend::Parallel).map_or(0, |b| b.count);
    assert!(parallel > 0, "the split variant was timed (and so compared): {table}");
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    match child_role().expect("run by run_child").as_str() {
        "learn" => {
            fixed_model_keeping_history();
            settle_with(&potential::KERNEL, LARGE, by_size(LARGE));
            assert_eq!(settled(&potential::KERNEL, LARGE), Some(Backend::Parallel));
            adaptive_kernel::flush().unwrap();
        }
        "frozen" => {
            let route = potential::KERNEL.route(LARGE, || Work { size: LARGE, flops: 1, bytes: 1 });
            let chosen = route.backend();
            drop(route);
            let (x, y) = bodies(LARGE);
            let (mut routed, mut want) = (vec![0.0; LARGE], vec![0.0; LARGE]);
            potential(&x, &y, &mut routed);
            potential::parallel(&x, &y, &mut want);
            assert_eq!(routed, want, "the routed call ran the split variant");
            println!("FROZEN {} {}", chosen.name(), potential::KERNEL.table().row_for(LARGE).unwrap().decided_by);
        }
        other => panic!("unknown role {other}"),
    }
}

/// The fixed model, without turning the history off (the child's file is the test's).
fn fixed_model_keeping_history() {
    adaptive_kernel::cost::install_global(FIGURES);
}

fn run(role: &str, file: &Path, frozen: bool) -> String {
    let mut env = vec![("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()), ("ADAPTIVE_KERNEL_GPU", "off")];
    if frozen {
        env.push((ENV_MODE, "frozen"));
    }
    let (ok, out) = run_child("child", role, &env);
    assert!(ok, "child {role} failed:\n{out}");
    out
}

#[test]
fn a_frozen_run_uses_a_saved_parallel_decision() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    run("learn", &file, false);
    let out = run("frozen", &file, true);
    assert!(out.contains("FROZEN Parallel historical"), "{out}");
}
