//! `serial`: a kernel that must stay on the calling thread (called from a
//! real-time callback, or from a task of the program's own thread pool) has no
//! Parallel variant, whatever its body calls, and no variant it runs hands work
//! to the thread pool.
//!
//! How handing work to the pool is seen: the test holds every worker of rayon's
//! global pool (the Parallel backend's pool when no thread count is configured,
//! two threads here). A call that forks waits for a worker, so it does not
//! return while they are held; the same kernels without `serial` show that
//! their Parallel variants do wait.

mod common;

use std::sync::{mpsc, Arc, Barrier, Mutex, MutexGuard, Once, PoisonError};
use std::time::Duration;

use adaptive_kernel::config::Settings;
use adaptive_kernel::{adaptive_kernel, ops, with_backend, Backend};

/// A body of `ops::` calls; without `serial` its Parallel variant binds them to `ops::par`.
#[adaptive_kernel(complexity = "Medium", serial)]
fn energy(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b) + ops::sum(a)
}

/// [`energy`] without `serial`.
#[adaptive_kernel(complexity = "Medium")]
fn energy_anywhere(a: &[f32], b: &[f32]) -> f32 {
    ops::dot(a, b) + ops::sum(a)
}

/// A loop whose iterations are independent: without `serial` the Parallel variant splits it.
#[adaptive_kernel(complexity = "Low", serial)]
fn gain(g: f32, x: &mut [f32]) {
    for v in x.iter_mut() {
        *v *= g;
    }
}

/// [`gain`] without `serial`.
#[adaptive_kernel(complexity = "Low")]
fn gain_anywhere(g: f32, x: &mut [f32]) {
    for v in x.iter_mut() {
        *v *= g;
    }
}

/// Elements per input: above `ops::par`'s grain for reductions, so `ops::par::dot` forks.
const N: usize = 1 << 20;

/// Once per process, before any kernel runs: no history, a fixed cost model (no
/// calibration thread), the global pool (whatever `ADAPTIVE_KERNEL_THREADS` says) of two
/// threads. Returns the guard that keeps this file's tests one at a time, since one of
/// them holds the pool.
fn setup() -> MutexGuard<'static, ()> {
    static ONCE: Once = Once::new();
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    ONCE.call_once(|| {
        common::fixed_model();
        Settings::application().threads(0).apply().expect("the global pool, before any kernel ran");
        rayon::ThreadPoolBuilder::new().num_threads(2).build_global().expect("the global pool is not built yet");
    });
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

#[test]
fn a_serial_kernel_has_no_parallel_variant_whatever_its_body_calls() {
    let _one = setup();
    assert!(energy_anywhere::KERNEL.has_parallel(), "without `serial`, `ops::` gives a Parallel variant");
    assert!(!energy::KERNEL.has_parallel(), "`serial` with `ops::`: none");
    assert!(energy::KERNEL.has_gpu(), "the GPU variant runs on the device and stays");
    assert!(gain_anywhere::KERNEL.has_parallel() && gain_anywhere::KERNEL.spec().splits[0].reason.is_empty());
    assert!(!gain::KERNEL.has_parallel());
    assert_eq!(gain::KERNEL.spec().splits[0].reason, "serial");

    // Forced onto Parallel, a serial kernel runs its SIMD variant; the other kernels' routed calls agree.
    let mut y = vec![1.5f32; 1000];
    gain_anywhere(2.0, &mut y);
    assert_eq!(energy_anywhere(&[1.0, 2.0], &[3.0, 4.0]), 14.0);
    let (a, b) = (vec![0.5f32; 1000], vec![2.0f32; 1000]);
    assert_eq!(with_backend(Backend::Parallel, || energy(&a, &b)), energy::simd(&a, &b));
    let mut x = vec![1.5f32; 1000];
    with_backend(Backend::Parallel, || gain(2.0, &mut x));
    assert!(x.iter().all(|&v| v == 3.0));
    assert_eq!(x, y);
}

/// Every worker of rayon's global pool, held until [`Held::release`] (or drop).
struct Held {
    release: Option<Arc<Barrier>>,
}

impl Held {
    fn pool() -> Held {
        let workers = rayon::current_num_threads();
        assert!(workers >= 2, "the global pool has {workers} thread(s)");
        let (held, release) = (Arc::new(Barrier::new(workers + 1)), Arc::new(Barrier::new(workers + 1)));
        let (h, r) = (held.clone(), release.clone());
        rayon::spawn_broadcast(move |_| {
            h.wait();
            r.wait();
        });
        held.wait();
        Held { release: Some(release) }
    }

    fn release(&mut self) {
        if let Some(release) = self.release.take() {
            release.wait();
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.release();
    }
}

/// Runs `f` on a thread of its own; its result if it returned within `limit`.
fn within<R: Send + 'static>(limit: Duration, f: impl FnOnce() -> R + Send + 'static) -> Option<R> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).ok()
}

#[test]
fn no_variant_of_a_serial_kernel_hands_work_to_the_pool() {
    let _one = setup();
    let a: Arc<Vec<f32>> = Arc::new((0..N).map(|i| (i % 7) as f32).collect());
    let mut held = Held::pool();
    let limit = Duration::from_secs(60);

    for backend in Backend::ALL {
        let a = a.clone();
        let ran = within(limit, move || {
            let mut x = vec![1.0f32; N];
            with_backend(backend, || {
                gain(2.0, &mut x);
                energy(&a, &a)
            })
        });
        assert!(ran.is_some(), "forced onto {backend}, a serial kernel waited for the pool");
    }
    // Routed, exploring and then settled.
    let routed = a.clone();
    let ran = within(limit, move || {
        let mut x = vec![1.0f32; N];
        for _ in 0..30 {
            gain(1.0, &mut x);
            energy(&routed, &routed);
        }
    });
    assert!(ran.is_some(), "a routed call of a serial kernel waited for the pool");

    // The check can fail: the Parallel variants of the same bodies wait for the held workers.
    let (loop_a, ops_a) = (a.clone(), a.clone());
    let split = within(Duration::from_millis(300), move || {
        let mut x = loop_a.to_vec();
        gain_anywhere::parallel(2.0, &mut x);
    });
    let forked = within(Duration::from_millis(300), move || energy_anywhere::parallel(&ops_a, &ops_a));
    assert!(split.is_none() && forked.is_none(), "without `serial` the Parallel variants fork");
    held.release();
}
