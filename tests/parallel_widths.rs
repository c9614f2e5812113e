//! The thread count as a candidate: in a pool of more than 2 threads the
//! Parallel variant is explored on the whole pool, on half of it and on a quarter
//! (at least 2 threads each), each width a candidate of its own. These tests run
//! on any machine: the pool is a scoped one of 8 threads (`with_threads`), and the
//! timings are injected (`Kernel::observe`, `Kernel::observe_parallel`), so the
//! router's choice is the one the figures dictate, not this machine's cores.

use std::time::Duration;

use adaptive_kernel::history::{export_learned, import_learned};
use adaptive_kernel::ops::par::{threads, with_threads};
use adaptive_kernel::{Backend, Kernel, KernelSpec, OpComplexity, Work};

const fn spec(name: &'static str) -> KernelSpec {
    KernelSpec {
        name,
        complexity: OpComplexity::Low,
        has_gpu: false,
        has_parallel: true,
        token_hash: 34,
        loops: &[],
        splits: &[],
        gpu_loops: &[],
    }
}

static NORM: Kernel = Kernel::new(spec("parallel_widths::norm"));
/// The same kernel in a later run, under another name in this process (a kernel that
/// already ran keeps what it has): it starts from what `NORM` learned.
static NORM_AGAIN: Kernel = Kernel::new(spec("parallel_widths::norm_next_run"));
static TWO: Kernel = Kernel::new(spec("parallel_widths::two"));

const SIZE: usize = 393_216;

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// Routes one call of `kernel` and returns the threads a par call inside it computes on.
fn routed_threads(kernel: &'static Kernel) -> (Backend, usize) {
    let route = kernel.route(SIZE, || Work::estimate(OpComplexity::Low, SIZE, None, None));
    let backend = route.backend();
    (backend, route.run(threads))
}

#[test]
fn a_narrower_width_wins_where_the_timings_say_so_and_is_shown_saved_and_reloaded() {
    with_threads(8, || {
        assert!(!NORM.observe_parallel(SIZE, 3, us(10)), "3 is not a width of a pool of 8");
        assert!(!NORM.observe_parallel(SIZE, 1, us(10)), "nor is 1");
        // The first timing of each candidate is its warm-up; then a run's worth.
        for _ in 0..5 {
            NORM.observe(SIZE, Backend::Scalar, us(900));
            NORM.observe(SIZE, Backend::Simd, us(120));
            NORM.observe(SIZE, Backend::Parallel, us(80));
            assert!(NORM.observe_parallel(SIZE, 4, us(50)));
            assert!(NORM.observe_parallel(SIZE, 2, us(40)));
        }
        let mut seen = Vec::new();
        for _ in 0..20 {
            seen.push(routed_threads(&NORM));
        }
        assert_eq!(seen.last(), Some(&(Backend::Parallel, 2)), "the router runs it on 2 threads: {seen:?}");
        let table = NORM.table();
        let row = table.row_for(SIZE).expect("a row for the size");
        assert_eq!((row.chosen, row.chosen_threads), (Some(Backend::Parallel), Some(2)));
        assert_eq!(row.chosen_label().as_deref(), Some("Parallel ×2"));
        assert_eq!(row.parallel_on(4).and_then(|r| r.centre), Some(us(50)));
        let text = table.to_string();
        assert!(text.contains("Parallel ×4 µs (n)") && text.contains("Parallel ×2 historical"), "{text}");
    });
    // Saved with its thread count, and loaded by the next run of the kernel in a pool of 8.
    let saved = export_learned();
    assert!(saved.contains("\"chosen_threads\":2") && saved.contains("\"threads\":4"), "{saved}");
    let next_run = saved.replace("\"parallel_widths::norm\"", "\"parallel_widths::norm_next_run\"");
    let imported = import_learned(&next_run).expect("its own export imports");
    assert_eq!(imported.kernels_adopted, 1, "{imported:?}");
    with_threads(8, || {
        let table = NORM_AGAIN.table();
        let row = table.row_for(SIZE).expect("loaded");
        assert_eq!(row.chosen_label().as_deref(), Some("Parallel ×2"));
        assert_eq!(routed_threads(&NORM_AGAIN), (Backend::Parallel, 2));
    });
}

#[test]
fn two_threads_offer_no_narrower_width_and_nothing_changes() {
    with_threads(2, || {
        assert!(!TWO.observe_parallel(SIZE, 1, us(10)));
        assert!(TWO.observe_parallel(SIZE, 2, us(10)), "the whole pool is a width");
        for _ in 0..5 {
            TWO.observe(SIZE, Backend::Scalar, us(900));
            TWO.observe(SIZE, Backend::Simd, us(120));
            TWO.observe(SIZE, Backend::Parallel, us(70));
        }
        for _ in 0..10 {
            let _ = routed_threads(&TWO);
        }
        let table = TWO.table();
        let row = table.row_for(SIZE).expect("a row");
        assert_eq!((row.chosen, row.chosen_threads), (Some(Backend::Parallel), None));
        assert!(row.backends.iter().all(|b| b.threads.is_none()));
        assert!(!table.to_string().contains('×'), "{table}");
        assert_eq!(routed_threads(&TWO), (Backend::Parallel, 2));
    });
}
