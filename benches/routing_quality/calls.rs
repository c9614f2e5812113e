//! Calling one strategy on a pair: a variant directly, trueno's dispatch, or the routed wrapper, timed.

use std::hint::black_box;
use std::time::Instant;

use adaptive_kernel::Backend;

use crate::kernels::{add, conv2d, dot, matmul, poly, saxpy, sine, softmax, sum, K};
use crate::workload::{Data, Pair};

/// What one call runs: a variant directly, trueno's dispatch, or the routed wrapper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    Scalar,
    Simd,
    Parallel,
    Gpu,
    Trueno,
    Routed,
}

/// Measured calls per item, by index: the variants at their [`Backend::index`], then trueno.
pub(crate) const DIRECT: [How; SLOTS] = [How::Scalar, How::Simd, How::Parallel, How::Gpu, How::Trueno];
/// The variants (every [`Backend`]).
pub(crate) const BACKENDS: usize = Backend::COUNT;
/// Where trueno's timings go, after the variants.
pub(crate) const TRUENO: usize = BACKENDS;
/// Timings kept per item: the variants and trueno.
pub(crate) const SLOTS: usize = BACKENDS + 1;
pub(crate) const NONE: u64 = u64::MAX;

pub(crate) fn time<R>(f: impl FnOnce() -> R) -> u64 {
    let start = Instant::now();
    let out = f();
    let ns = start.elapsed().as_nanos() as u64;
    drop(black_box(out));
    ns
}

/// Times one call of a variant, or of the routed wrapper; `all` kernels have every
/// variant (the `ops` kernels, and `saxpy`, whose loop is split and runs as a generated
/// shader), `par` kernels a Parallel one but no GPU one, the others only Scalar and SIMD.
/// [`check_arms`] holds each kernel's arms to the variants it has.
macro_rules! run {
    ($how:expr, $k:ident($($arg:expr),*), all) => {
        match $how {
            How::Scalar => time(|| $k::scalar($($arg),*)),
            How::Simd => time(|| $k::simd($($arg),*)),
            How::Parallel => time(|| $k::parallel($($arg),*)),
            How::Gpu => time(|| $k::gpu($($arg),*)),
            How::Routed => time(|| $k($($arg),*)),
            How::Trueno => unreachable!("handled by the caller"),
        }
    };
    ($how:expr, $k:ident($($arg:expr),*), par) => {
        match $how {
            How::Scalar => time(|| $k::scalar($($arg),*)),
            How::Simd => time(|| $k::simd($($arg),*)),
            How::Parallel => time(|| $k::parallel($($arg),*)),
            How::Routed => time(|| $k($($arg),*)),
            How::Gpu | How::Trueno => panic!("{NO_SUCH_VARIANT}"),
        }
    };
    ($how:expr, $k:ident($($arg:expr),*)) => {
        match $how {
            How::Scalar => time(|| $k::scalar($($arg),*)),
            How::Simd => time(|| $k::simd($($arg),*)),
            How::Routed => time(|| $k($($arg),*)),
            How::Parallel | How::Gpu | How::Trueno => panic!("{NO_SUCH_VARIANT}"),
        }
    };
}

/// What a `run!` arm for a variant the kernel was not written with panics with.
const NO_SUCH_VARIANT: &str = "no such variant";

/// Panics at start-up unless, for every kernel, [`call`] has an arm for its Parallel
/// variant exactly when the kernel has one (`has_parallel`), and one for its GPU variant
/// exactly when it has one (`has_gpu`; the arm runs SIMD when no GPU is usable). A kernel
/// that gains a variant (a plain loop the attribute learned to split) otherwise makes
/// every pass panic in the middle of a run; a kernel that loses one would not compile.
/// Calls each kernel's first pair once per variant.
pub(crate) fn check_arms(pairs: &mut [Pair]) {
    // The arms that panic are expected: quiet while calling, then judge.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let calls: Vec<(K, [std::thread::Result<u64>; 2])> = crate::kernels::KERNELS
        .into_iter()
        .map(|k| {
            let pair = pairs.iter_mut().find(|p| p.k == k).expect("every kernel has pairs");
            let mut try_call = |how| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call(pair, how)));
            (k, [try_call(How::Parallel), try_call(How::Gpu)])
        })
        .collect();
    std::panic::set_hook(hook);
    let mut wrong = Vec::new();
    for (k, [parallel, gpu]) in calls {
        let arm = |called: std::thread::Result<u64>| match called {
            Ok(_) => true,
            Err(panic) if panic.downcast_ref::<String>().is_some_and(|m| m == NO_SUCH_VARIANT) => false,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let (written, has) = ((arm(parallel), arm(gpu)), (has_parallel(k), has_gpu(k)));
        if written != has {
            wrong.push(format!("{}: arms (Parallel, GPU) {written:?}, variants {has:?}", k.label()));
        }
    }
    assert!(wrong.is_empty(), "routing_quality: `call` does not match the kernels' variants: {}", wrong.join("; "));
}

/// Runs one call of `how` on `p`, returning its wall time in nanoseconds.
pub(crate) fn call(p: &mut Pair, how: How) -> u64 {
    let n = p.n;
    match (&mut p.data, p.k) {
        (Data::Saxpy { x, y }, _) => run!(how, saxpy(1e-3, x, y), all),
        (Data::Two { t: Some((ta, tb)), .. }, K::Add) if how == How::Trueno => time(|| ta.add(tb).expect("add")),
        (Data::Two { t: Some((ta, tb)), .. }, K::Dot) if how == How::Trueno => time(|| ta.dot(tb).expect("dot")),
        (Data::Two { a, b, .. }, K::Add) => run!(how, add(a, b), all),
        (Data::Two { a, b, .. }, _) => run!(how, dot(a, b), all),
        (Data::One { t: Some(t), .. }, k) if how == How::Trueno => match k {
            K::Sum => time(|| t.sum().expect("sum")),
            K::Softmax => time(|| t.softmax().expect("softmax")),
            _ => time(|| t.sin().expect("sin")),
        },
        (Data::One { x, .. }, K::Sum) => run!(how, sum(x), all),
        (Data::One { x, .. }, K::Softmax) => run!(how, softmax(x), all),
        (Data::One { x, .. }, K::Sine) => run!(how, sine(x)),
        (Data::One { x, .. }, _) => run!(how, poly(x), par),
        (Data::Mat { t: Some((ta, tb)), .. }, K::Matmul) if how == How::Trueno => {
            time(|| ta.matmul(tb).expect("matmul"))
        }
        (Data::Mat { t: Some((ta, tb)), .. }, _) if how == How::Trueno => time(|| ta.convolve2d(tb).expect("conv2d")),
        (Data::Mat { a, b, .. }, K::Matmul) => run!(how, matmul(a, b, n), all),
        (Data::Mat { a, b, .. }, _) => run!(how, conv2d(a, b, n), all),
    }
}

pub(crate) fn has_gpu(k: K) -> bool {
    k.kernel().has_gpu()
}

pub(crate) fn has_parallel(k: K) -> bool {
    k.kernel().has_parallel()
}

pub(crate) const PARALLEL: usize = Backend::Parallel.index();
pub(crate) const GPU: usize = Backend::Gpu.index();

/// Whether the router may run variant `j` of `k` (and so whether the oracle considers it).
pub(crate) fn usable(k: K, j: usize, gpu: bool) -> bool {
    match j {
        PARALLEL => has_parallel(k),
        GPU => gpu && has_gpu(k),
        _ => j < BACKENDS,
    }
}
