//! Reliability: bad input (RELIABILITY.md, "Bad input").
//!
//! - Shape mismatches panic with the same documented message on every backend
//!   (Scalar, SIMD, Parallel, GPU), and a routed kernel's learned table is the
//!   same after hundreds of them.
//! - Shapes whose element counts overflow `usize` panic with a message saying
//!   so, before anything is allocated, on every backend.
//! - NaN and infinities give the same kind of result on every backend.
//! - Bad environment values give one message naming the variable and the
//!   accepted values, and the program goes on (an empty `ADAPTIVE_KERNEL_HISTORY`
//!   is in `tests/reliability_history.rs`).

mod common;

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use adaptive_kernel::ops::{gpu, par, scalar, simd};
use adaptive_kernel::{with_backend, Backend, Kernel, KernelSpec, OpComplexity, Work};
use common::*;

/// `matmul`'s signature.
type Matmul = fn(&[f32], &[f32], usize, usize, usize) -> Vec<f32>;
/// `conv2d`'s signature.
type Conv2d = fn(&[f32], &[f32], usize, usize, usize, usize) -> Vec<f32>;

/// One backend's ops, by function pointer (every backend has Scalar's signatures).
struct Ops {
    add: fn(&[f32], &[f32]) -> Vec<f32>,
    mul: fn(&[f32], &[f32]) -> Vec<f32>,
    relu: fn(&[f32]) -> Vec<f32>,
    exp: fn(&[f32]) -> Vec<f32>,
    softmax: fn(&[f32]) -> Vec<f32>,
    sum: fn(&[f32]) -> f32,
    dot: fn(&[f32], &[f32]) -> f32,
    max: fn(&[f32]) -> f32,
    min: fn(&[f32]) -> f32,
    axpy: fn(f32, &[f32], &mut [f32]),
    matmul: Matmul,
    matvec: fn(&[f32], &[f32], usize, usize) -> Vec<f32>,
    transpose: fn(&[f32], usize, usize) -> Vec<f32>,
    conv2d: Conv2d,
}

macro_rules! ops {
    ($m:ident) => {
        Ops {
            add: $m::add,
            mul: $m::mul,
            relu: $m::relu,
            exp: $m::exp,
            softmax: $m::softmax,
            sum: $m::sum,
            dot: $m::dot,
            max: $m::max,
            min: $m::min,
            axpy: $m::axpy,
            matmul: $m::matmul,
            matvec: $m::matvec,
            transpose: $m::transpose,
            conv2d: $m::conv2d,
        }
    };
}

const BACKENDS: [(Backend, Ops); 4] = [
    (Backend::Scalar, ops!(scalar)),
    (Backend::Simd, ops!(simd)),
    (Backend::Parallel, ops!(par)),
    (Backend::Gpu, ops!(gpu)),
];

thread_local! {
    /// Set while this thread runs a call that must panic: its report is not printed.
    static EXPECTING: Cell<bool> = const { Cell::new(false) };
}

/// The panic message of `f`, which must panic (its report is kept off the output).
fn panic_message(f: impl FnOnce()) -> String {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !EXPECTING.with(Cell::get) {
                default(info);
            }
        }));
    });
    EXPECTING.with(|e| e.set(true));
    let caught = catch_unwind(AssertUnwindSafe(f));
    EXPECTING.with(|e| e.set(false));
    let payload = caught.expect_err("must panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// Each bad call, on one backend's ops.
type BadCall = (&'static str, fn(&Ops));

const MISMATCHES: [BadCall; 8] = [
    ("add", |o| drop((o.add)(&[1.0; 5], &[1.0; 4]))),
    ("mul", |o| drop((o.mul)(&[1.0; 3], &[1.0; 9]))),
    ("dot", |o| {
        let _ = (o.dot)(&[1.0; 7], &[1.0; 8]);
    }),
    ("axpy", |o| (o.axpy)(2.0, &[1.0; 4], &mut [0.0; 6])),
    ("matmul", |o| drop((o.matmul)(&[1.0; 6], &[1.0; 6], 2, 2, 2))),
    ("matvec", |o| drop((o.matvec)(&[1.0; 6], &[1.0; 2], 2, 3))),
    ("transpose", |o| drop((o.transpose)(&[1.0; 5], 2, 3))),
    ("conv2d", |o| drop((o.conv2d)(&[1.0; 9], &[1.0; 3], 3, 3, 2, 2))),
];

const OVERFLOWS: [BadCall; 4] = [
    ("matmul", |o| drop((o.matmul)(&[], &[], usize::MAX, 3, 2))),
    ("matvec", |o| drop((o.matvec)(&[], &[], 1 << 40, 1 << 40))),
    ("transpose", |o| drop((o.transpose)(&[], usize::MAX / 2, 3))),
    ("conv2d", |o| drop((o.conv2d)(&[], &[1.0], usize::MAX, usize::MAX, 1, 1))),
];

#[test]
fn shape_mismatches_panic_alike_on_every_backend() {
    let mut checked = 0;
    for (op, call) in MISMATCHES {
        let reference = panic_message(|| call(&BACKENDS[0].1));
        assert!(reference.starts_with(&format!("{op}: ")), "the message names the op: {reference}");
        for (backend, ops) in &BACKENDS[1..] {
            assert_eq!(panic_message(|| call(ops)), reference, "{op} on {backend:?}");
            checked += 1;
        }
    }
    eprintln!("FIGURES input mismatches={} backend_checks={checked}", MISMATCHES.len());
}

#[test]
fn overflowing_shapes_are_caught_before_any_allocation() {
    for (op, call) in OVERFLOWS {
        let reference = panic_message(|| call(&BACKENDS[0].1));
        assert!(reference.starts_with(op) && reference.contains("overflows usize"), "{reference}");
        for (backend, ops) in &BACKENDS[1..] {
            assert_eq!(panic_message(|| call(ops)), reference, "{op} on {backend:?}");
        }
    }
}

/// The same kind of value: both NaN, the same infinity, or finite and close.
fn same_kind(got: f32, want: f32, what: &str) {
    let ok = if want.is_nan() || got.is_nan() {
        want.is_nan() && got.is_nan()
    } else if want.is_infinite() || got.is_infinite() {
        got == want
    } else {
        (got - want).abs() <= 1e-4 * want.abs().max(1.0)
    };
    assert!(ok, "{what}: got {got}, want {want}");
}

#[test]
fn nan_and_infinities_come_out_alike_on_every_backend() {
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, f32::MAX, f32::MIN_POSITIVE];
    let mut cases = 0;
    for len in [1usize, 7, 8, 9, 33, 100] {
        for (s, &special) in specials.iter().enumerate() {
            for at in [0, len / 2, len - 1] {
                let mut a: Vec<f32> = (0..len).map(|i| (i % 5) as f32 - 2.0).collect();
                a[at] = special;
                let b: Vec<f32> = (0..len).map(|i| ((i + s) % 3) as f32 + 0.5).collect();
                let reference = &BACKENDS[0].1;
                for (backend, ops) in &BACKENDS[1..] {
                    let what = |op: &str| format!("{op} on {backend:?}, {special} at {at} of {len}");
                    for (op, f) in [("add", ops.add), ("mul", ops.mul)] {
                        let want = if op == "add" { (reference.add)(&a, &b) } else { (reference.mul)(&a, &b) };
                        for (g, w) in f(&a, &b).iter().zip(&want) {
                            same_kind(*g, *w, &what(op));
                        }
                    }
                    for (op, f, r) in [
                        ("relu", ops.relu, reference.relu),
                        ("exp", ops.exp, reference.exp),
                        ("softmax", ops.softmax, reference.softmax),
                    ] {
                        for (g, w) in f(&a).iter().zip(&r(&a)) {
                            same_kind(*g, *w, &what(op));
                        }
                    }
                    for (op, f, r) in [
                        ("sum", ops.sum, reference.sum),
                        ("max", ops.max, reference.max),
                        ("min", ops.min, reference.min),
                    ] {
                        same_kind(f(&a), r(&a), &what(op));
                    }
                    same_kind((ops.dot)(&a, &b), (reference.dot)(&a, &b), &what("dot"));
                    cases += 1;
                }
            }
        }
    }
    eprintln!("FIGURES input special_value_cases={cases} ops_each=9");
}

static MATMUL: Kernel = Kernel::new(KernelSpec {
    name: "reliability_input::matmul",
    complexity: OpComplexity::High,
    has_gpu: true,
    has_parallel: true,
    token_hash: 1,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

/// One routed matmul of `n`×`n` matrices (sizes as the macro's default: both lengths).
fn routed_matmul(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let size = a.len() + b.len();
    let route = MATMUL.route(size, || Work { size, flops: 1, bytes: 1 });
    let backend = route.backend();
    let ops = &BACKENDS.iter().find(|(b, _)| *b == backend).unwrap().1;
    route.run(|| (ops.matmul)(a, b, n, n, n))
}

#[test]
fn mismatches_leave_the_router_s_state_intact() {
    no_history();
    let n = 8;
    let (a, b) = (vec![1.5f32; n * n], vec![2.0f32; n * n]);
    let size = 2 * n * n;
    settle_with(&MATMUL, size, |b| if b == Backend::Simd { us(10) } else { us(40) });
    let before = MATMUL.table().to_string();
    // The same total size (so the same bucket), the wrong shapes.
    let (long, short) = (vec![1.5f32; n * n + 1], &b[..n * n - 1]);
    let said = "matmul: a (m×k) is 8×8 = 64 elements, but 65 were passed";
    let mut panics = 0;
    for _ in 0..300 {
        assert_eq!(panic_message(|| drop(routed_matmul(&long, short, n))), said);
        panics += 1;
    }
    for backend in Backend::ALL {
        let msg = panic_message(|| drop(with_backend(backend, || routed_matmul(&long, short, n))));
        assert_eq!(msg, said, "{backend:?}");
        panics += 1;
    }
    assert_eq!(MATMUL.table().to_string(), before, "the learned table changed");
    assert_eq!(routed_matmul(&a, &b, n), scalar::matmul(&a, &b, n, n, n));
    eprintln!("FIGURES input routed_mismatches={panics} table_unchanged=true");
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    no_history();
    adaptive_kernel::init_logging();
    let n = 4;
    let (a, b) = (vec![1.0f32; n * n], vec![3.0f32; n * n]);
    for _ in 0..50 {
        assert_eq!(routed_matmul(&a, &b, n), vec![12.0; n * n]);
    }
    assert!(!adaptive_kernel::ops::par::matmul(&a, &b, n, n, n).is_empty());
}

fn one_message(var: &str, value: &str, accepted: &str) {
    let (ok, out) = run_child("child", "env", &[(var, value)]);
    assert!(ok, "{var}={value:?}: the program must go on:\n{out}");
    let said = format!("adaptive-kernel: {var}={value:?} is not understood; expected {accepted}");
    assert_eq!(out.matches(&said).count(), 1, "one message `{said}`:\n{out}");
}

#[test]
fn bad_environment_values_name_the_variable_and_the_accepted_values() {
    one_message("ADAPTIVE_KERNEL_BACKEND", "cuda", "`scalar`, `simd`, `parallel` or `gpu`");
    one_message("ADAPTIVE_KERNEL_GPU", "maybe", "`off`, `on` or `software`");
    one_message("ADAPTIVE_KERNEL_THREADS", "many", "a positive whole number of threads");
    one_message("ADAPTIVE_KERNEL_LOG", "loud", "`error`, `warn`, `info`, `debug` or `trace`");
}
