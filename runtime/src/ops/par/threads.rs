//! How many threads the Parallel backend uses, and on which rayon pool.
//!
//! # Which pool
//! - `ADAPTIVE_KERNEL_THREADS` unset (or empty): rayon's **global pool**, so
//!   our ops and the program's own rayon code share one set of workers (they
//!   never run two pools' worth of threads against each other), and the
//!   program's choices apply: `RAYON_NUM_THREADS`, or a
//!   `ThreadPoolBuilder::build_global` made before the first par call; rayon's
//!   default is the available parallelism.
//! - `ADAPTIVE_KERNEL_THREADS=N` (or `config::Settings::threads(N)` in code): a
//!   **dedicated pool** of N threads
//!   (`adaptive-kernel-par-<i>`), built on the first par call that can use
//!   it. A rayon pool's size is fixed when it is built, so a count of our own
//!   needs a pool of our own.
//! - Inside [`with_threads`]: a pool of that many threads, for that scope and
//!   that calling thread only (tests and benches run the same call at 1, 2
//!   and 3 threads this way).
//!
//! # Calls from inside a pool
//! A par call made on a rayon worker thread (of any pool: inside a
//! `par_iter`, a `join`, a `scope`, or another par call) does not fork: it
//! runs on the calling thread ([`Team::threads`] is 1). The work around it is
//! already parallel, so forking again would only add tasks to the same
//! workers (or, with a second pool, oversubscribe the cores), and a worker
//! that blocks in another pool's `install` holds its own pool's thread while
//! it waits. Calls from many ordinary threads at once queue their chunks on
//! the one pool, whose size bounds the threads that compute.
//!
//! # A narrower width
//! The router may run a Parallel call on half or a quarter of the pool
//! (`kernel::route`, through [`Narrowed`]): for that call, on the calling
//! thread, [`threads`] is the narrower count and the fork–join starts that
//! many workers (the pool itself is not rebuilt; its other threads stay idle
//! or serve other callers). [`pool_threads`] is the pool's own count.
//!
//! # Without threads
//! On WebAssembly, which runs one thread, [`threads`] is 1: every par op runs
//! the SIMD op on the calling thread and the router never offers the Parallel
//! backend; [`with_threads`] panics there (no pool can be built).
//!
//! The variable itself is read and checked in [`crate::config`], with the
//! others.

use std::cell::{Cell, RefCell};
use std::sync::{Arc, OnceLock};

use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::config::configured_threads;

/// The dedicated pool `ADAPTIVE_KERNEL_THREADS` asks for, built on first use;
/// `None` when the variable is unset (the global pool is used).
fn dedicated_pool() -> Option<&'static ThreadPool> {
    static POOL: OnceLock<Option<ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| configured_threads().map(|n| build_pool(n.get(), crate::platform::thread_name::PAR))).as_ref()
}

fn build_pool(threads: usize, name: &'static str) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("{name}-{i}"))
        .build()
        .unwrap_or_else(|e| panic!("adaptive-kernel: cannot start {threads} threads for ops::par: {e}"))
}

thread_local! {
    /// The pool of the innermost [`with_threads`] scope on this thread.
    static SCOPED: RefCell<Option<Arc<ThreadPool>>> = const { RefCell::new(None) };
    /// The narrower width in force on this thread ([`Narrowed`]); 0: none.
    static NARROWED: Cell<usize> = const { Cell::new(0) };
}

/// While alive, par calls made on this thread compute on at most a given number of
/// threads (a narrower width of the pool, chosen by the router); dropping it restores
/// what was in force before, also when the call panics.
#[must_use = "the width holds while the guard is alive"]
pub(crate) struct Narrowed {
    previous: usize,
}

impl Narrowed {
    /// Par calls on this thread compute on at most `threads` threads (at least 1) until the guard drops.
    pub(crate) fn to(threads: usize) -> Narrowed {
        let threads = threads.max(1);
        let previous = NARROWED.with(|n| n.replace(if n.get() == 0 { threads } else { n.get().min(threads) }));
        Narrowed { previous }
    }
}

impl Drop for Narrowed {
    fn drop(&mut self) {
        NARROWED.with(|n| n.set(self.previous));
    }
}

/// The threads of the pool a par call made here would use, before any narrower width
/// the router put in force: 1 on a rayon worker or without threads.
pub(crate) fn pool_threads() -> usize {
    Team::pool_here().1
}

/// Runs `f` with every par call made on this thread (not on threads `f`
/// starts) using a pool of `threads` threads, then drops that pool.
///
/// For tests and benchmarks that compare thread counts; a program sets
/// `ADAPTIVE_KERNEL_THREADS` instead. Each call starts and stops its threads
/// (tens of µs), so wrap the whole measured loop, not each op. Scopes nest;
/// the innermost wins.
///
/// # Panics
/// If `threads` is 0, or the threads cannot be started. A panic in `f` is
/// propagated after the previous scope is restored.
pub fn with_threads<R>(threads: usize, f: impl FnOnce() -> R) -> R {
    assert!(threads > 0, "ops::par::with_threads: the thread count must be at least 1, got 0");
    let pool = Arc::new(build_pool(threads, crate::platform::thread_name::PAR_SCOPED));
    let previous = SCOPED.with(|s| s.replace(Some(pool)));
    /// Puts the outer scope back, on return and on unwind.
    struct Restore(Option<Option<Arc<ThreadPool>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take().flatten();
            SCOPED.with(|s| *s.borrow_mut() = previous);
        }
    }
    let _restore = Restore(Some(previous));
    f()
}

/// The number of threads a par call made here would compute on: 1 on a rayon
/// worker thread (see the module docs), the innermost [`with_threads`] count
/// in such a scope, else the dedicated pool's size (`ADAPTIVE_KERNEL_THREADS`)
/// or the global pool's (`RAYON_NUM_THREADS`, else the available parallelism).
///
/// 1 means the Parallel backend would compute exactly what SIMD does, at
/// SIMD's speed; a router should not offer it then.
pub fn threads() -> usize {
    Team::here().threads
}

/// The workers a par call may use: see [`threads`].
pub(super) struct Team {
    /// The pool to `install` into; `None` for the global pool, or when `threads` is 1.
    pool: Option<Pooled>,
    threads: usize,
}

enum Pooled {
    Dedicated(&'static ThreadPool),
    Scoped(Arc<ThreadPool>),
}

impl Team {
    /// The team for a call made on this thread now: its pool, narrowed where the router
    /// put a narrower width in force ([`Narrowed`]).
    pub(super) fn here() -> Team {
        let (pool, threads) = Team::pool_here();
        let narrowed = NARROWED.with(Cell::get);
        let threads = if narrowed == 0 { threads } else { threads.min(narrowed) };
        Team { pool, threads }
    }

    /// The pool a call made on this thread now would use, and its size.
    fn pool_here() -> (Option<Pooled>, usize) {
        // Without threads (WebAssembly) every par op is its SIMD op on the calling thread.
        if !crate::platform::THREADS || rayon::current_thread_index().is_some() {
            return (None, 1);
        }
        let pooled = match SCOPED.with(|s| s.borrow().clone()) {
            Some(scoped) => Some(Pooled::Scoped(scoped)),
            None => dedicated_pool().map(Pooled::Dedicated),
        };
        let threads = match &pooled {
            Some(Pooled::Dedicated(pool)) => pool.current_num_threads(),
            Some(Pooled::Scoped(pool)) => pool.current_num_threads(),
            // Outside any pool this is the global pool's size (building it if needed).
            None => rayon::current_num_threads(),
        };
        (pooled, threads)
    }

    /// Whether it computes on fewer threads than its pool has (a narrower width).
    pub(super) fn is_narrowed(&self) -> bool {
        self.threads < Team::pool_here().1
    }

    /// How many threads this team computes on (at least 1).
    pub(super) fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `op` on the calling thread with a rayon scope whose spawned jobs
    /// run on this team's pool; returns once every spawned job has finished
    /// (a panic in any of them is then propagated).
    pub(super) fn in_place_scope<'scope, R>(&self, op: impl FnOnce(&rayon::Scope<'scope>) -> R) -> R {
        match &self.pool {
            Some(Pooled::Dedicated(pool)) => pool.in_place_scope(op),
            Some(Pooled::Scoped(pool)) => pool.in_place_scope(op),
            None => rayon::in_place_scope(op),
        }
    }

    /// Runs `job` so that rayon's parallel iterators inside it use this team's
    /// pool; `job` itself may run on a worker thread.
    pub(super) fn run<R: Send>(&self, job: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(Pooled::Dedicated(pool)) => pool.install(job),
            Some(Pooled::Scoped(pool)) => pool.install(job),
            None => job(),
        }
    }
}
