//! The router on WebAssembly, run by wasm-bindgen-test in Node (and, with
//! `WASM_BINDGEN_USE_BROWSER=1`, in headless Chromium): a representative subset
//! of the native routing tests, on this crate's annotated kernels.
//!
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//!  cargo test -p adaptive-kernel-web --target wasm32-unknown-unknown`
//! (`scripts/test-wasm` does this). Every test runs in one instance, one after
//! another, so each uses kernels or sizes of its own.
#![cfg(target_arch = "wasm32")]

use adaptive_kernel::config::{self, Mode};
use adaptive_kernel::{
    ops, AdaptiveBackend, Backend, DecisionKind, HistoryStatus, ImportError, Kernel, KernelSpec, OpComplexity,
    SimdLevel, Work,
};
use adaptive_kernel_web::sweep::data;
use adaptive_kernel_web::{dot, exp, matmul, saxpy, sum_squares};
use wasm_bindgen_test::wasm_bindgen_test;

fn close(got: f32, want: f32, scale: f32) -> bool {
    (got - want).abs() <= 1e-5 * scale + 1e-6
}

#[wasm_bindgen_test]
fn the_simd_variants_run_simd128_and_agree_with_scalar() {
    assert_eq!(adaptive_kernel::simd_level(), SimdLevel::Simd128);
    for len in [0, 1, 3, 4, 17, 1000, 4099] {
        let (a, b) = (data(len, 11), data(len, 12));
        let scale: f32 = a.iter().zip(&b).map(|(x, y)| (x * y).abs()).sum();
        let want = dot::scalar(&a, &b);
        for got in [dot::simd(&a, &b), dot::gpu(&a, &b), dot(&a, &b)] {
            assert!(close(got, want, scale), "dot of {len}: {got} vs {want}");
        }
        let want = sum_squares::scalar(&a);
        assert!(close(sum_squares::simd(&a), want, want), "sum_squares of {len}");
        let (mut y1, mut y2) = (b.clone(), b.clone());
        saxpy::scalar(0.25, &a, &mut y1);
        saxpy::simd(0.25, &a, &mut y2);
        assert_eq!(y1, y2, "saxpy of {len}");
        let (e1, e2) = (exp::scalar(&a), exp::simd(&a));
        assert!(e1.iter().zip(&e2).all(|(x, y)| close(*y, *x, x.abs())), "exp of {len}");
    }
    for n in [1, 5, 33] {
        let (a, b) = (data(n * n, 13), data(n * n, 14));
        let (c1, c2) = (matmul::scalar(&a, &b, n, n, n), matmul::simd(&a, &b, n, n, n));
        assert!(c1.iter().zip(&c2).all(|(x, y)| close(*y, *x, n as f32)), "matmul of side {n}");
    }
}

#[wasm_bindgen_test]
fn a_routed_kernel_settles_on_the_faster_measured_cpu_backend() {
    let len = 4096;
    let x = data(len, 21);
    let want = sum_squares::scalar(&x);
    for _ in 0..60 {
        assert!(close(sum_squares(&x), want, want));
    }
    let table = sum_squares::KERNEL.table();
    let row = table.row_for(len).expect("the bucket was called");
    let chosen = row.chosen.unwrap_or_else(|| panic!("not settled after 60 calls:\n{table}"));
    assert!(matches!(chosen, Backend::Scalar | Backend::Simd), "{table}");
    assert_eq!(row.decided_by, DecisionKind::Historical, "{table}");
    // The chosen backend was measured by the clock; the other one too unless the cost
    // model pruned it as hopeless, and then it is not the faster one by the measurements.
    let centre = |b: Backend| row.backend(b).filter(|r| r.count >= 3).and_then(|r| r.centre).map(|c| c.as_secs_f64());
    let mine = centre(chosen).unwrap_or_else(|| panic!("{chosen} was chosen on fewer than 3 samples:\n{table}"));
    assert!(mine > 0.0, "the clock measured nothing:\n{table}");
    let other = if chosen == Backend::Scalar { Backend::Simd } else { Backend::Scalar };
    if let Some(theirs) = centre(other) {
        assert!(mine <= theirs * 1.05, "the slower backend was chosen:\n{table}");
    }
}

#[wasm_bindgen_test]
fn the_router_never_offers_gpu_or_parallel_here() {
    assert!(!ops::gpu::is_available(), "no GPU on WebAssembly");
    assert_eq!(ops::par::threads(), 1, "one thread on WebAssembly");
    let (a, b) = (data(300_000, 31), data(300_000, 32));
    for _ in 0..40 {
        dot(&a, &b);
    }
    let table = dot::KERNEL.table();
    for row in &table.rows {
        for backend in [Backend::Gpu, Backend::Parallel] {
            assert!(row.backend(backend).is_none(), "{backend} was timed:\n{table}");
            assert_ne!(row.chosen, Some(backend), "{table}");
        }
    }
    assert_eq!(ops::par::dot(&a, &b), ops::simd::dot(&a, &b), "par is SIMD on the calling thread");
}

/// A kernel declared by hand, so the tests can ask for its route.
static FORCED: Kernel = Kernel::new(KernelSpec {
    name: "wasm_tests::forced",
    complexity: OpComplexity::Medium,
    has_gpu: false,
    has_parallel: false,
    token_hash: 7,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

#[wasm_bindgen_test]
fn a_backend_forced_from_code_is_used() {
    let work = || Work::estimate(OpComplexity::Medium, 10, None, None);
    FORCED.force(Some(Backend::Simd));
    assert_eq!(FORCED.route(10, work).backend(), Backend::Simd);
    adaptive_kernel::with_backend(Backend::Scalar, || assert_eq!(FORCED.route(10, work).backend(), Backend::Scalar));
    FORCED.force(None);
    assert_ne!(FORCED.route(10, work).backend(), Backend::Gpu);
}

#[wasm_bindgen_test]
fn without_environment_the_defaults_hold_and_code_sets_the_rest() {
    assert_eq!(config::forced_backend(), None);
    assert_eq!(config::configured_threads(), None);
    assert_eq!(adaptive_kernel::history_file(), None, "no history file by default on WebAssembly");
    assert_eq!(adaptive_kernel::history_status(), HistoryStatus::NoLocation, "no cache directory there");
    assert!(adaptive_kernel::flush().is_ok(), "flushing with persistence off does nothing");
    assert!(config::set_mode(Mode::Learn));
    assert_eq!(config::mode(), Mode::Learn);
    assert!(!config::set_mode(Mode::Frozen), "fixed for the instance once set");
}

/// Two kernels of the same tokens (hash) and complexity, under two names: what one
/// learned is exported, renamed, and imported for the other before its first call.
static LEARNER: Kernel = Kernel::new(KernelSpec {
    name: "wasm_tests::learner",
    complexity: OpComplexity::Medium,
    has_gpu: false,
    has_parallel: false,
    token_hash: 42,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});
static HEIR: Kernel = Kernel::new(KernelSpec {
    name: "wasm_tests::heir",
    complexity: OpComplexity::Medium,
    has_gpu: false,
    has_parallel: false,
    token_hash: 42,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

fn call(kernel: &'static Kernel, x: &[f32]) -> (Backend, f32) {
    let route = kernel.route(x.len(), || Work::estimate(OpComplexity::Medium, x.len(), None, None));
    let backend = route.backend();
    let sum = match backend {
        Backend::Scalar => route.run(|| ops::scalar::sum(x)),
        _ => route.run(|| ops::simd::sum(x)),
    };
    (backend, sum)
}

#[wasm_bindgen_test]
fn learned_tables_round_trip_through_a_json_string() {
    let x = data(20_000, 41);
    for _ in 0..40 {
        call(&LEARNER, &x);
    }
    let learned = LEARNER.table().row_for(x.len()).and_then(|r| r.chosen).expect("the learner settled");
    let json = adaptive_kernel::export_learned();
    assert!(json.contains("wasm_tests::learner"), "{json}");
    let renamed = json.replace("wasm_tests::learner", "wasm_tests::heir");
    let import = adaptive_kernel::import_learned(&renamed).expect("an export imports");
    assert!(import.kernels_adopted >= 1, "{import:?}");
    assert!(!import.already_running.contains(&"wasm_tests::heir".to_owned()), "{import:?}");

    // The heir's first call already takes the imported decision (re-timed while it is confirmed).
    let (first, _) = call(&HEIR, &x);
    assert_eq!(first, learned, "{}", HEIR.table());
    let row = HEIR.table().row_for(x.len()).cloned().expect("imported");
    assert_eq!(row.chosen, Some(learned));

    // Importing again for a kernel that already ran leaves it alone and says so.
    let again = adaptive_kernel::import_learned(&renamed).expect("imports again");
    assert!(again.already_running.contains(&"wasm_tests::heir".to_owned()), "{again:?}");
    assert!(adaptive_kernel::export_learned().contains("wasm_tests::heir"), "exported with the rest");
}

#[wasm_bindgen_test]
fn text_that_is_not_a_table_is_refused_and_changes_nothing() {
    let before = adaptive_kernel::export_learned();
    let refused = adaptive_kernel::import_learned(r#"{"name":"my-app"}"#).unwrap_err();
    assert!(matches!(refused, ImportError::Refused { .. }), "{refused}");
    assert!(refused.to_string().contains("not an adaptive-kernel history file"), "{refused}");
    let cut = &before[..before.len() / 2];
    let corrupt = adaptive_kernel::import_learned(cut).unwrap_err();
    assert!(matches!(corrupt, ImportError::Corrupt { .. }), "{corrupt}");
    assert_eq!(adaptive_kernel::export_learned(), before);
}

#[wasm_bindgen_test]
fn the_stateless_selector_reads_the_clock_here() {
    let selector = AdaptiveBackend::new();
    let backend = selector.select("matmul", 1 << 20);
    assert!(matches!(backend, Backend::Scalar | Backend::Simd), "{backend}");
    assert_eq!(selector.recent_calls("matmul"), 1);
}
