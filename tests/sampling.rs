//! Settled buckets are sampled per bucket: interleaved kernels each get timed
//! calls at their own rate, none starves another.

mod common;

use adaptive_kernel::{Backend, Kernel, OpComplexity};
use common::{cpu_spec, no_history, settle_with, us};

static A: Kernel = Kernel::new(cpu_spec("sampling::a", OpComplexity::Medium));
static B: Kernel = Kernel::new(cpu_spec("sampling::b", OpComplexity::Medium));
static C: Kernel = Kernel::new(cpu_spec("sampling::c", OpComplexity::Medium));

const SIZE: usize = 5_000;

fn settle(k: &'static Kernel) {
    settle_with(k, SIZE, |b| if b == Backend::Simd { us(10) } else { us(50) });
}

/// Timed calls per kernel when `pattern` is called round-robin `rounds` times.
fn timed_calls(pattern: &[&'static Kernel], rounds: usize) -> Vec<usize> {
    let mut timed = vec![0; pattern.len()];
    for _ in 0..rounds {
        for (i, k) in pattern.iter().enumerate() {
            let route = k.route(SIZE, || unreachable!("settled"));
            timed[i] += usize::from(route.is_timed());
            route.run(|| ());
        }
    }
    timed
}

#[test]
fn two_kernels_alternating_on_one_thread_are_sampled_alike() {
    no_history();
    settle(&A);
    settle(&B);
    let timed = timed_calls(&[&A, &B], 1_000_000);
    let (lo, hi) = (timed[0].min(timed[1]), timed[0].max(timed[1]));
    // At the longest interval (2^17) 1,000,000 calls still give ~7 samples each.
    assert!(lo >= 3, "a kernel was starved: {timed:?}");
    assert!(hi <= 2 * lo + 8, "sampling is not per bucket: {timed:?}");
}

#[test]
fn kernels_called_from_several_threads_are_each_sampled() {
    no_history();
    settle(&C);
    let per_thread: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3).map(|_| s.spawn(|| timed_calls(&[&C], 100_000)[0])).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(per_thread.iter().all(|&n| n > 0), "a thread never timed a call: {per_thread:?}");
}

static RARE: Kernel = Kernel::new(cpu_spec("sampling::rare", OpComplexity::Medium));
static CHEAP: Kernel = Kernel::new(cpu_spec("sampling::cheap", OpComplexity::Medium));

/// Injected costs of a kernel whose calls dwarf the cost of timing one (SIMD 20 ms).
fn dear(b: Backend) -> std::time::Duration {
    if b == Backend::Simd {
        us(20_000)
    } else {
        us(100_000)
    }
}

/// Injected costs of a kernel cheaper than timing one of its calls (SIMD 100 ns).
fn cheap(b: Backend) -> std::time::Duration {
    std::time::Duration::from_nanos(if b == Backend::Simd { 100 } else { 500 })
}

#[test]
fn a_rarely_called_bucket_times_every_call_unless_timing_costs_more_than_its_share() {
    no_history();
    settle_with(&RARE, SIZE, dear);
    settle_with(&CHEAP, SIZE, cheap);
    // Both called 100 times a second (10 ms apart). Once the rate is known, every call of
    // RARE is timed; timing CHEAP's calls (microseconds in the cold path, for a 100 ns call)
    // would cost it many times its own time, so it is timed at most once in ~1,000 calls.
    let (mut in_a_row, mut cheap_timed) = (0, 0);
    for round in 0..300 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        for (k, cost) in [(&RARE, dear as fn(Backend) -> _), (&CHEAP, cheap)] {
            let route = k.route(SIZE, || unreachable!("settled"));
            let (timed, b) = (route.is_timed(), route.backend());
            drop(route);
            if timed {
                k.observe(SIZE, b, cost(b));
            }
            if std::ptr::eq(k, &RARE) {
                in_a_row = if timed { in_a_row + 1 } else { 0 };
            } else if round >= 50 {
                cheap_timed += usize::from(timed);
            }
        }
        if in_a_row >= 8 && round >= 100 {
            assert!(cheap_timed <= 3, "a 100 ns bucket was timed on {cheap_timed} of {} calls", round - 49);
            return;
        }
    }
    panic!("a bucket called 100 times a second was not timed on every call");
}
