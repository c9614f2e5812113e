//! The Parallel backend (`ops::par`): agrees with Scalar within the SIMD
//! backend's tolerances (`ops_common/props.rs`) at 1, 2 and 3 threads, on the
//! small inputs `ops_simd.rs` uses (which run SIMD whole: empty, odd lengths,
//! NaN and ±∞) and on inputs of 2 to 5 grains, which are split into chunks;
//! reductions and `softmax` give the same bits at every thread count;
//! `matmul` above its grain (faer's GEMM) agrees on non-square, one-row,
//! one-column, depth-1 and empty shapes too, and gives the same bits on
//! every call at a thread count, calls at once included; the other ops give
//! SIMD's bits; shape mismatches panic with Scalar's message;
//! every `_into` form gives its returning form's bits, small and split, and an
//! `out` of the wrong length panics with Scalar's message;
//! calls from inside rayon tasks and from many threads at once finish without
//! forking again; `ADAPTIVE_KERNEL_THREADS` and `RAYON_NUM_THREADS` pick the
//! thread count, and a bad value is reported once and ignored.

mod common;
mod ops_common;

use std::sync::mpsc;
use std::time::Duration;

use adaptive_kernel::ops::par::{self, Grain};
use adaptive_kernel::ops::simd;
use ops_common::props::{self, agree, big_vector, mismatch, same, twins};
use ops_common::Impl;
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(cases) }
}

/// Lengths from just below two grains (one chunk: SIMD whole) to five grains (2–5 chunks), odd ones included.
fn across(grain: usize) -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(2 * grain - 1), 1 => Just(2 * grain), 6 => 2 * grain + 1..=5 * grain]
}

fn big_one(grain: usize, max_exp: i32) -> impl Strategy<Value = Vec<f32>> {
    across(grain).prop_flat_map(move |n| big_vector(n, max_exp))
}

fn big_two(grain: usize, max_exp: i32) -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    across(grain).prop_flat_map(move |n| (big_vector(n, max_exp), big_vector(n, max_exp)))
}

/// `count` rows of `per_row` units each, with at least two grains of work: 2 to 4 chunks.
fn rows_across(grain: usize, per_row: usize) -> impl Strategy<Value = usize> {
    let grain_rows = grain.div_ceil(per_row.max(1));
    2 * grain_rows..=4 * grain_rows + 3
}

// Small inputs: the SIMD path, with every convention of the op set.
proptest! {
    #![proptest_config(config(16))]

    #[test]
    fn small_inputs_agree_with_scalar((a, b) in props::two(16), s in prop_oneof![props::finite(37), props::special()]) {
        let imps = Impl::par_all();
        agree::binary_elementwise_is_exact(&imps, &a, &b)?;
        agree::scale_is_exact(&imps, &a, s)?;
        agree::relu_is_exact(&imps, &a)?;
        agree::axpy_is_exact(&imps, s, &a, &b)?;
        agree::exp_sigmoid_tanh_within_a_few_ulp(&imps, &a)?;
        agree::gelu_within_tanh_error(&imps, &a)?;
        agree::softmax_within_relative_tolerance(&imps, &a)?;
        agree::sum_and_mean_within_summation_bound(&imps, &a)?;
        agree::dot_within_summation_bound(&imps, &a, &b)?;
        agree::norm_l2_within_summation_bound(&imps, &a)?;
        agree::max_and_min_are_exact(&imps, &a)?;
    }

    #[test]
    fn small_matmul_within_summation_bound((a, b, m, n, k) in props::matmul_case()) {
        agree::matmul_within_summation_bound(&Impl::par_all(), (&a, &b, m, n, k))?;
    }

    #[test]
    fn small_matvec_and_transpose_agree_with_scalar((a, x, m, n) in props::matvec_case()) {
        agree::matvec_within_summation_bound(&Impl::par_all(), (&a, &x, m, n))?;
        agree::transpose_is_exact(&Impl::par_all(), &a, m, n)?;
    }

    #[test]
    fn small_conv2d_is_exact((input, kernel, rows, cols, krows, kcols) in props::conv2d_case()) {
        agree::conv2d_is_exact(&Impl::par_all(), (&input, &kernel, rows, cols, krows, kcols))?;
    }

    #[test]
    fn small_into_forms_give_the_returning_forms_bits(
        (a, b) in props::two(37),
        s in prop_oneof![props::finite(37), props::special()],
        (ma, mb, m, n, k) in props::matmul_case(),
        (va, x, vm, vn) in props::matvec_case(),
        (input, kernel, rows, cols, krows, kcols) in props::conv2d_case(),
    ) {
        let imps = Impl::par_all();
        twins::elementwise(&imps, &a, &b, s)?;
        twins::matmul(&imps, (&ma, &mb, m, n, k))?;
        twins::matvec(&imps, (&va, &x, vm, vn))?;
        twins::transpose(&imps, &va, vm, vn)?;
        twins::conv2d(&imps, (&input, &kernel, rows, cols, krows, kcols))?;
    }
}

// Inputs of several chunks: the split paths.
proptest! {
    #![proptest_config(config(6))]

    #[test]
    fn split_stream_ops_are_exact((a, b) in big_two(Grain::STREAM, 37), s in prop_oneof![props::finite(37), props::special()]) {
        let imps = Impl::par_all();
        agree::binary_elementwise_is_exact(&imps, &a, &b)?;
        agree::scale_is_exact(&imps, &a, s)?;
        agree::relu_is_exact(&imps, &a)?;
        agree::axpy_is_exact(&imps, s, &a, &b)?;
        twins::stream(&imps, &a, &b, s)?;
    }

    #[test]
    fn split_transcendentals_agree_with_scalar(a in big_one(Grain::TRANSCENDENTAL, 37)) {
        let imps = Impl::par_all();
        agree::exp_sigmoid_tanh_within_a_few_ulp(&imps, &a)?;
        agree::gelu_within_tanh_error(&imps, &a)?;
        agree::softmax_within_relative_tolerance(&imps, &a)?;
        twins::transcendental(&imps, &a)?;
    }

    #[test]
    fn split_sums_within_summation_bound(a in big_one(Grain::REDUCTION, 33)) {
        agree::sum_and_mean_within_summation_bound(&Impl::par_all(), &a)?;
    }

    #[test]
    fn split_dot_and_norm_within_summation_bound((a, b) in big_two(Grain::REDUCTION, 16)) {
        let imps = Impl::par_all();
        agree::dot_within_summation_bound(&imps, &a, &b)?;
        agree::norm_l2_within_summation_bound(&imps, &a)?;
    }

    #[test]
    fn split_max_and_min_are_exact(a in big_one(Grain::REDUCTION, 37)) {
        agree::max_and_min_are_exact(&Impl::par_all(), &a)?;
    }

    #[test]
    fn split_reductions_and_softmax_do_not_depend_on_the_thread_count(
        a in big_one(Grain::REDUCTION, 16),
        t in big_one(Grain::TRANSCENDENTAL, 37),
    ) {
        let one_thread = |imp: Impl| {
            (imp.sum(&a), imp.mean(&a), imp.dot(&a, &a), imp.norm_l2(&a), imp.max(&a), imp.min(&a), imp.softmax(&t))
        };
        let want = one_thread(Impl::Par(1));
        // On a rayon worker a call runs its chunks on that thread: still the same bits.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let in_task = pool.install(|| one_thread(Impl::Par(3)));
        for (what, got) in [("2 threads", one_thread(Impl::Par(2))), ("3 threads", one_thread(Impl::Par(3))), ("in a rayon task", in_task)] {
            let scalars = [(want.0, got.0), (want.1, got.1), (want.2, got.2), (want.3, got.3), (want.4, got.4), (want.5, got.5)];
            for (i, (w, g)) in scalars.into_iter().enumerate() {
                prop_assert!(same(w, g), "{}: reduction {} gave {:e}, 1 thread {:e}", what, i, g, w);
            }
            prop_assert!(want.6.iter().zip(&got.6).all(|(&w, &g)| same(w, g)), "{}: softmax differs", what);
        }
    }

    #[test]
    fn split_element_wise_ops_give_simds_bits((a, b) in big_two(Grain::STREAM, 37)) {
        let t = &a[..3 * Grain::TRANSCENDENTAL + 5];
        for threads in [2, 3] {
            par::with_threads(threads, || -> Result<(), TestCaseError> {
                props::exact_vec("add", Impl::Par(threads), &simd::add(&a, &b), &par::add(&a, &b))?;
                props::exact_vec("div", Impl::Par(threads), &simd::div(&a, &b), &par::div(&a, &b))?;
                props::exact_vec("exp", Impl::Par(threads), &simd::exp(t), &par::exp(t))?;
                props::exact_vec("tanh", Impl::Par(threads), &simd::tanh(t), &par::tanh(t))?;
                props::exact_vec("gelu", Impl::Par(threads), &simd::gelu(t), &par::gelu(t))
            })?;
        }
    }
}

/// (m, n, k) with m·n·k from one to two `matmul` grains: faer's split (its other
/// paths, for one row, one column or depth 1, are in `matmul_of_every_shape_agrees_with_scalar`).
fn big_mnk() -> impl Strategy<Value = (usize, usize, usize)> {
    (16usize..=300, 8usize..=300)
        .prop_flat_map(|(m, n)| {
            let k_min = Grain::MATMUL.div_ceil(m * n);
            (Just(m), Just(n), k_min..=2 * k_min + 7)
        })
        .prop_filter("debug-build budget", |&(m, n, k)| m * k <= 400_000 && k * n <= 400_000)
}

proptest! {
    #![proptest_config(config(6))]

    #[test]
    fn split_matmul_within_summation_bound((a, b, m, n, k) in big_mnk().prop_flat_map(|(m, n, k)| {
        (big_vector(m * k, 16), big_vector(k * n, 16), Just(m), Just(n), Just(k))
    })) {
        agree::matmul_within_summation_bound(&Impl::par_all(), (&a, &b, m, n, k))?;
        twins::matmul(&Impl::par_all(), (&a, &b, m, n, k))?;
    }

    #[test]
    fn split_matvec_gives_simds_bits((a, x, m, n) in (1usize..=700).prop_flat_map(|n| (rows_across(Grain::MATVEC, n), Just(n)))
        .prop_flat_map(|(m, n)| (big_vector(m * n, 16), big_vector(n, 16), Just(m), Just(n)))
    ) {
        let imps = Impl::par_all();
        agree::matvec_within_summation_bound(&imps, (&a, &x, m, n))?;
        let want = simd::matvec(&a, &x, m, n);
        for &imp in &imps {
            props::exact_vec("matvec", imp, &want, &imp.matvec(&a, &x, m, n))?;
        }
        twins::matvec(&imps, (&a, &x, m, n))?;
    }

    #[test]
    fn split_transpose_is_exact((a, rows, cols) in (1usize..=700).prop_flat_map(|r| (Just(r), rows_across(Grain::TRANSPOSE, r)))
        .prop_flat_map(|(r, c)| (big_vector(r * c, 37), Just(r), Just(c)))
    ) {
        agree::transpose_is_exact(&Impl::par_all(), &a, rows, cols)?;
        twins::transpose(&Impl::par_all(), &a, rows, cols)?;
    }

    #[test]
    fn split_conv2d_is_exact((input, kernel, rows, cols, krows, kcols) in
        (1usize..=5, 1usize..=5, 8usize..=200).prop_flat_map(|(kr, kc, cols)| {
            let cols = cols.max(kc);
            let per_row = (cols - kc + 1) * kr * kc;
            (rows_across(Grain::CONV2D, per_row).prop_map(move |orows| orows + kr - 1), Just(cols), Just(kr), Just(kc))
        })
        .prop_flat_map(|(rows, cols, kr, kc)| (big_vector(rows * cols, 16), big_vector(kr * kc, 16), Just(rows), Just(cols), Just(kr), Just(kc)))
    ) {
        agree::conv2d_is_exact(&Impl::par_all(), (&input, &kernel, rows, cols, krows, kcols))?;
        twins::conv2d(&Impl::par_all(), (&input, &kernel, rows, cols, krows, kcols))?;
    }
}

proptest! {
    #![proptest_config(config(12))]

    #[test]
    fn length_mismatches_panic_like_scalar((la, lb) in (0usize..40).prop_flat_map(|la| (Just(la), props::wrong(la)))) {
        mismatch::lengths_panic_like_scalar(&Impl::par_all(), la, lb)?;
    }

    #[test]
    fn matrix_shape_mismatches_panic_like_scalar(mnk in (0usize..6, 0usize..6, 0usize..6), which in 0usize..3, extra in 1usize..4) {
        mismatch::matrix_shapes_panic_like_scalar(&Impl::par_all(), mnk, which, extra)?;
    }

    #[test]
    fn wrong_out_lengths_panic_like_scalar(mnk in (0usize..6, 0usize..6, 0usize..6), extra in 1usize..4, shorter in any::<bool>()) {
        mismatch::wrong_out_lengths_panic_like_scalar(&Impl::par_all(), mnk, extra, shorter)?;
    }
}

/// Finite `m·k` and `k·n` values for a matmul test.
fn finite_inputs((m, n, k): (usize, usize, usize), seed: u64) -> (Vec<f32>, Vec<f32>) {
    (props::seeded_vector(m * k, 16, seed), props::seeded_vector(k * n, 16, seed + 1))
}

/// [`finite_inputs`] with a NaN in the last row of A where C has other rows,
/// and +∞ in the first column of B where C has other columns (so that the
/// rest of C stays finite).
fn matmul_inputs(m: usize, n: usize, k: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let (mut a, mut b) = finite_inputs((m, n, k), seed);
    if let (true, Some(x)) = (m > 1, a.last_mut()) {
        *x = f32::NAN;
    }
    if let (true, Some(x)) = (n > 1, b.first_mut()) {
        *x = f32::INFINITY;
    }
    (a, b)
}

#[test]
fn matmul_of_every_shape_agrees_with_scalar() {
    let g = Grain::MATMUL;
    // Above the grain: one row of C, one column, depth 1 (faer's matrix-vector and
    // outer-product paths), odd and non-square shapes; then the empty ones (SIMD's path).
    let split = [
        (1, 2048, g / 2048),
        (g / 4096, 1, 4096),
        (4096, g / 4096, 1),
        (7, 1201, 1001),
        (1003, 5, 1677),
        (130, 257, 263),
    ];
    let empty = [(0, 3000, 3000), (3000, 0, 3000), (3000, 3000, 0)];
    for (m, n, k) in split.into_iter().chain(empty) {
        assert!(m * n * k >= g || m * n * k == 0, "{m}×{n}×{k} is meant to be split or empty");
        let (a, b) = matmul_inputs(m, n, k, (m * n + k) as u64);
        agree::matmul_within_summation_bound(&Impl::par_all(), (&a, &b, m, n, k))
            .unwrap_or_else(|e| panic!("{m}×{n}×{k}: {e}"));
        if k == 0 {
            assert!(
                par::with_threads(2, || par::matmul(&a, &b, m, n, k)).iter().all(|&c| c == 0.0),
                "{m}×{n}×0 is zeros"
            );
        }
    }
}

/// A matmul shape above the grain, with tiles left over at every edge, whose
/// faer result differs from SIMD's in some bits (the two GEMMs block and
/// order the depth differently; `a_call_on_a_rayon_worker_does_not_fork` checks it).
const ODD_MNK: (usize, usize, usize) = (301, 289, 517);

#[test]
fn a_matmul_result_depends_only_on_the_input_and_the_thread_count() {
    let bits = |c: Vec<f32>| c.into_iter().map(f32::to_bits).collect::<Vec<_>>();
    // The general split (threads race for tiles) and a C of one row (faer's
    // matrix-vector path, whose split follows the thread count).
    for (m, n, k) in [ODD_MNK, (1, 2048, Grain::MATMUL / 2048)] {
        let (a, b) = finite_inputs((m, n, k), 7);
        for threads in [2, 3] {
            par::with_threads(threads, || {
                let first = bits(par::matmul(&a, &b, m, n, k));
                for call in 1..6 {
                    assert!(
                        bits(par::matmul(&a, &b, m, n, k)) == first,
                        "{m}×{n}×{k}, {threads} threads: call {call} differs from the first"
                    );
                }
            });
        }
    }
}

#[test]
fn empty_conv2d_kernel_and_overflowing_shapes_panic_like_scalar() {
    mismatch::degenerate_shapes_panic_like_scalar(&Impl::par_all());
}

#[test]
fn large_mismatches_panic_before_any_work_with_scalars_message() {
    let (a, b) = (vec![1.0f32; 4 * Grain::STREAM], vec![1.0f32; 4 * Grain::STREAM + 1]);
    props::same_panic(&Impl::par_all(), "add", |imp| drop(imp.add(&a, &b))).unwrap();
    props::same_panic(&Impl::par_all(), "dot", |imp| {
        imp.dot(&a, &b);
    })
    .unwrap();
}

/// Runs `f` on another thread and fails if it has not finished within `secs`
/// (a deadlock would otherwise hang the test run).
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(f()).ok());
    rx.recv_timeout(Duration::from_secs(secs)).unwrap_or_else(|_| panic!("{what}: not finished after {secs} s"))
}

#[test]
fn a_call_on_a_rayon_worker_does_not_fork() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    assert_eq!(pool.install(par::threads), 1, "inside install");
    assert_eq!(
        par::with_threads(3, || pool.install(par::threads)),
        1,
        "a with_threads scope does not reach into a worker"
    );
    let from_tasks: Vec<usize> = pool.install(|| {
        use rayon::prelude::*;
        (0..6).into_par_iter().map(|_| par::with_threads(3, par::threads)).collect()
    });
    assert_eq!(from_tasks, [1; 6], "inside parallel iterator tasks");
    // With one thread a matmul is SIMD's, bit for bit, above the grain too (faer's GEMM gives other bits).
    let ((m, n, k), (a, b)) = (ODD_MNK, finite_inputs(ODD_MNK, 5));
    let want = simd::matmul(&a, &b, m, n, k);
    assert_ne!(par::with_threads(2, || par::matmul(&a, &b, m, n, k)), want, "split: faer's bits");
    assert_eq!(pool.install(|| par::with_threads(2, || par::matmul(&a, &b, m, n, k))), want);
}

#[test]
fn calls_from_workers_and_from_many_threads_at_once_finish_and_agree() {
    let n = 3 * Grain::REDUCTION + 17;
    let a: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 250.0 - 2.0).collect();
    let want = (par::with_threads(2, || par::sum(&a)), par::with_threads(2, || par::add(&a, &a)));
    within(300, "nested and concurrent par calls", move || {
        use rayon::prelude::*;
        let a = &a;
        // From the tasks of a pool: each call runs on its worker.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let in_tasks: Vec<_> = pool.install(|| (0..4).into_par_iter().map(|_| (par::sum(a), par::add(a, a))).collect());
        // From eight ordinary threads at once, all on the same scoped pool of three threads each.
        let concurrent: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> =
                (0..8).map(|_| s.spawn(|| par::with_threads(3, || (par::sum(a), par::add(a, a))))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        // And from threads that share the process's default pool.
        let shared: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8).map(|_| s.spawn(|| (par::sum(a), par::add(a, a)))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (sum, add) in in_tasks.into_iter().chain(concurrent).chain(shared) {
            assert!(same(sum, want.0), "sum {sum} vs {}", want.0);
            assert!(add == want.1, "add differs");
        }
    });
}

#[test]
fn concurrent_matmuls_finish_with_their_thread_counts_bits() {
    // Above the grain: faer's GEMM wherever the team has more than one thread.
    let ((m, n, k), (a, b)) = (ODD_MNK, finite_inputs(ODD_MNK, 5));
    let mm = move |a: &[f32], b: &[f32]| par::matmul(a, b, m, n, k);
    let (one, three, shared) = (simd::matmul(&a, &b, m, n, k), par::with_threads(3, || mm(&a, &b)), mm(&a, &b));
    within(300, "concurrent par matmuls", move || {
        use rayon::prelude::*;
        let (a, b) = (&a, &b);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let in_tasks: Vec<_> = pool.install(|| (0..4).into_par_iter().map(|_| mm(a, b)).collect());
        let (scoped, default): (Vec<_>, Vec<_>) = std::thread::scope(|s| {
            let scoped: Vec<_> = (0..4).map(|_| s.spawn(|| par::with_threads(3, || mm(a, b)))).collect();
            let default: Vec<_> = (0..4).map(|_| s.spawn(|| mm(a, b))).collect();
            let join = |h: Vec<std::thread::ScopedJoinHandle<'_, Vec<f32>>>| -> Vec<_> {
                h.into_iter().map(|h| h.join().unwrap()).collect()
            };
            (join(scoped), join(default))
        });
        assert!(in_tasks.iter().all(|c| *c == one), "on a rayon worker: SIMD's bits");
        assert!(scoped.iter().all(|c| *c == three), "3 threads at once: the 3-thread bits");
        assert!(default.iter().all(|c| *c == shared), "on the shared default pool at once: its bits");
    });
}

#[test]
fn with_threads_scopes_nest_and_restore_on_panic() {
    let outside = par::threads();
    par::with_threads(3, || {
        assert_eq!(par::threads(), 3);
        par::with_threads(1, || assert_eq!(par::threads(), 1));
        assert_eq!(par::threads(), 3, "restored after the inner scope");
        let panicked = std::panic::catch_unwind(|| par::with_threads(2, || panic!("inside"))).is_err();
        assert!(panicked);
        assert_eq!(par::threads(), 3, "restored after a panic");
        // Other threads do not see this thread's scope.
        assert_eq!(std::thread::spawn(par::threads).join().unwrap(), outside);
    });
    assert_eq!(par::threads(), outside);
    let msg = props::panic_message(|| par::with_threads(0, || ())).expect("0 threads panics");
    assert!(msg.contains("at least 1"), "{msg}");
}

#[test]
fn the_threads_variable_parses_positive_counts_and_names_itself_otherwise() {
    assert_eq!(par::parse_threads("4").unwrap().map(|n| n.get()), Some(4));
    assert_eq!(par::parse_threads(" 12 ").unwrap().map(|n| n.get()), Some(12));
    assert_eq!(par::parse_threads("").unwrap(), None);
    for bad in ["0", "-2", "two", "2.5", "auto"] {
        let e = par::parse_threads(bad).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}={bad:?} is not understood", par::ENV_THREADS)), "{e}");
        assert!(e.contains("a positive whole number") && e.contains("RAYON_NUM_THREADS"), "{e}");
    }
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    let role = common::child_role().expect("run by run_child");
    let (name, want) = role.split_once('=').expect("role is name=threads");
    let want: usize = want.parse().unwrap();
    assert_eq!(par::threads(), want, "{name}");
    // Twice: a bad value is reported once.
    let a = vec![1.0f32; 3 * Grain::REDUCTION];
    assert_eq!(par::sum(&a), a.len() as f32);
    assert_eq!(par::threads(), want, "{name}");
}

#[test]
fn the_dedicated_pool_follows_adaptive_kernel_threads() {
    let (ok, out) =
        common::run_child("child", "dedicated=3", &[("ADAPTIVE_KERNEL_THREADS", "3"), ("RAYON_NUM_THREADS", "1")]);
    assert!(ok, "{out}");
}

#[test]
fn without_the_variable_the_global_pool_follows_rayon_num_threads() {
    let (ok, out) =
        common::run_child("child", "global=3", &[("ADAPTIVE_KERNEL_THREADS", ""), ("RAYON_NUM_THREADS", "3")]);
    assert!(ok, "{out}");
}

#[test]
fn a_bad_threads_value_is_reported_once_and_ignored() {
    let (ok, out) =
        common::run_child("child", "bad=2", &[("ADAPTIVE_KERNEL_THREADS", "many"), ("RAYON_NUM_THREADS", "2")]);
    assert!(ok, "{out}");
    assert_eq!(out.matches("ADAPTIVE_KERNEL_THREADS=\"many\" is not understood").count(), 1, "{out}");
    assert!(out.contains("a positive whole number of threads"), "{out}");
}
