//! The fork–join of plain loops that `#[adaptive_kernel]` splits across
//! threads in a kernel's Parallel variant (the macro crate's `split` module
//! decides which loops and writes the calls). Not a public API: the generated
//! code reaches it through `adaptive_kernel::__private::split`.
//!
//! A split loop runs as
//!
//! ```text
//! let bounds = bounds(start, end);                        // units per chunk, from the thread count
//! let out_parts = parts(&mut out[..], stride, &bounds);  // `split_at_mut`: one `&mut` part per chunk
//! let jobs: Vec<((usize, usize), &mut [T], ..)> = ..;     // a chunk's bounds and its parts
//! let partials = (&Split::new((&shared, ..), jobs)).run(|job| { /* the loop over one chunk */ });
//! // the partial results of a reduction the loop carries, combined in chunk order
//! ```
//!
//! # Threads, and when it does not fork
//! The chunks run on the calling thread and on the pool [`ops::par`](super)
//! uses (the global rayon pool, or `ADAPTIVE_KERNEL_THREADS`' own): the caller
//! and `threads - 1` pool jobs each own a run of consecutive chunks and walk it
//! in order (consecutive memory, as rayon's halving gave: taking chunks
//! alternately made a memory-bound blur 12–21% slower); a thread done with its
//! run takes chunks from the end of the longest run left. The caller computes
//! from the start rather than waiting for the pool: on a 2-vCPU VM a pool
//! thread woken by another one was often placed on that one's vCPU, and for
//! milliseconds at a time a call that handed all its chunks to the pool ran on
//! one core while the caller's idled (BENCHMARKS.md, issue 23). On one thread
//! (a call made from inside a rayon worker, `ADAPTIVE_KERNEL_THREADS=1`, or
//! WebAssembly) there is one chunk, run on the calling thread.
//!
//! # Which runner: decided by the types, at compile time
//! Running chunks on other threads needs everything the loop shares to be
//! `Sync` and every part to be `Send`, which a macro that sees only tokens
//! cannot know (an `Rc`, a `Cell`, a generic `T` without those bounds). The
//! generated call is `(&Split::new(shared, jobs)).run(f)` with both traits in
//! scope: [`Across`] is implemented for `Split<C, J>` when `C: Sync` and
//! `J: Send` and is found first (method lookup tries the receiver before
//! borrowing it again); otherwise [`InOrder`], implemented for
//! `&Split<C, J>`, runs the chunks one after another on the calling thread
//! (autoref specialisation). `shared` holds a reference to every variable the
//! loop names from outside it, and the loop's closure names each of them
//! whole, so the closure is `Sync` exactly when `shared` is. Either way the
//! result is the same numbers; only the threads differ.
//!
//! # Width
//! A call in which a thread of the team started its first chunk only in the
//! second half of the call, or not at all (still waking: on a VM whose other
//! vCPU idled for a few milliseconds that takes up to several calls and
//! hundreds of microseconds), says so (`take_width`): the router does not
//! keep such a timing as the variant's, up to a bound (`kernel/cold.rs`),
//! since called back to back it runs at full width.
//!
//! # Results
//! Chunk boundaries depend only on the loop's range and the thread count, so
//! a reduction's partials, combined in chunk order, are the same numbers on
//! every run at a given thread count.

use std::cell::Cell;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use super::threads::Team;
use crate::clock;

pub use super::private::{keep_buffer, merge_private, private_buffer, private_parts, KEEP_BYTES};

/// Chunks per thread: more chunks than threads let work stealing even out a
/// core that another process is using, the usual state of a shared VM.
const CHUNKS_PER_THREAD: usize = 4;

/// The chunks `[lo, hi)` that a loop over `start..end` is cut into for a call
/// made here now: one per unit up to `CHUNKS_PER_THREAD` per thread, of
/// equal length but for the last; one chunk on one thread; none for an empty
/// range.
pub fn bounds(start: usize, end: usize) -> Vec<(usize, usize)> {
    chunks(start..end, Team::here().threads())
}

/// [`bounds`] at a given thread count.
fn chunks(range: Range<usize>, threads: usize) -> Vec<(usize, usize)> {
    let n = range.len();
    if n == 0 {
        return Vec::new();
    }
    let count = if threads <= 1 { 1 } else { n.min(threads * CHUNKS_PER_THREAD) };
    let len = n.div_ceil(count);
    (0..n.div_ceil(len)).map(|c| (range.start + c * len, range.start + ((c + 1) * len).min(n))).collect()
}

/// `width`, the row width of a split loop's `chunks_mut(width)` (or another of
/// the chunking methods), checked as the method checks it.
///
/// # Panics
/// If `width` is 0, with the message of `slice::chunks_mut` and its kin.
#[track_caller]
pub fn row_width(width: usize) -> usize {
    assert!(width != 0, "chunk size must be non-zero");
    width
}

/// `slice` cut at the chunks of `bounds`, `stride` elements per unit: the part
/// of chunk `[lo, hi)` is `slice[lo · stride .. hi · stride]`, both ends
/// clamped to the slice's length (an access past it then panics in the part,
/// where the loop as written would have panicked in the slice). Safe
/// splitting (`split_at_mut`): the parts cannot overlap.
pub fn parts<'a, T>(slice: &'a mut [T], stride: usize, bounds: &[(usize, usize)]) -> Vec<&'a mut [T]> {
    let len = slice.len();
    let at = |unit: usize| unit.saturating_mul(stride).min(len);
    let mut rest = slice;
    let mut offset = 0;
    let mut out = Vec::with_capacity(bounds.len());
    for &(lo, hi) in bounds {
        let (start, end) = (at(lo), at(hi).max(at(lo)));
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - offset);
        let (part, tail) = tail.split_at_mut(end - start);
        out.push(part);
        rest = tail;
        offset = end;
    }
    out
}

/// A split loop's jobs (one per chunk) and references to what it shares,
/// whose types pick the runner: see the module docs.
pub struct Split<C, J> {
    _shared: C,
    jobs: Cell<Vec<J>>,
}

impl<C, J> Split<C, J> {
    /// The jobs of one split loop, and a tuple of references to every variable
    /// the loop names from outside it.
    pub fn new(shared: C, jobs: Vec<J>) -> Split<C, J> {
        Split { _shared: shared, jobs: Cell::new(jobs) }
    }
}

/// Runs the chunks across the pool: chosen when what the loop shares is
/// `Sync` and its parts are `Send`.
pub trait Across<J> {
    /// `f(job)` for every job, on the team's threads, the results in job order.
    fn run<P: Send, F: Fn(J) -> P + Sync + Send>(&self, f: F) -> Vec<P>;
}

impl<C: Sync, J: Send> Across<J> for Split<C, J> {
    fn run<P: Send, F: Fn(J) -> P + Sync + Send>(&self, f: F) -> Vec<P> {
        let jobs = self.jobs.take();
        let team = Team::here();
        if team.threads() == 1 || jobs.len() < 2 {
            return jobs.into_iter().map(f).collect();
        }
        let count = jobs.len();
        // No more threads than chunks: a job that could only find nothing to take would
        // still be started, and waited for.
        let threads = team.threads().min(count);
        // The calling thread and `threads - 1` jobs on the pool each own a run of
        // consecutive chunks; see `claim`.
        let mut jobs = jobs.into_iter().enumerate();
        let runs: Vec<VecDeque<(usize, J)>> =
            (0..threads).map(|t| jobs.by_ref().take(run_length(count, threads, t)).collect()).collect();
        let queue = Mutex::new(runs);
        let done: Mutex<Vec<(usize, P)>> = Mutex::new(Vec::with_capacity(count));
        // When each thread started its first chunk, in nanoseconds after the call began
        // (index 0: the calling thread). Relaxed: read after the scope, which orders every
        // write before it.
        let first: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(u64::MAX)).collect();
        let began = clock::now();
        let work = |thread: usize| {
            let mut mine = Vec::new();
            loop {
                // The lock is held for the claim only, never while a chunk runs.
                let claimed = claim(&mut lock(&queue), thread);
                let Some((index, job)) = claimed else { break };
                let at = u64::try_from(clock::since(began).as_nanos()).unwrap_or(u64::MAX - 1);
                first[thread].fetch_min(at, Ordering::Relaxed);
                mine.push((index, f(job)));
            }
            lock(&done).append(&mut mine);
        };
        team.in_place_scope(|scope| {
            for thread in 1..threads {
                let work = &work;
                scope.spawn(move |_| work(thread));
            }
            work(0);
        });
        let took = u64::try_from(clock::since(began).as_nanos()).unwrap_or(u64::MAX);
        let starts: Vec<u64> = first.iter().map(|t| t.load(Ordering::Relaxed)).filter(|&t| t != u64::MAX).collect();
        record_width(at_full_width(&starts, took, count, threads));
        let mut done = done.into_inner().unwrap_or_else(PoisonError::into_inner);
        done.sort_unstable_by_key(|&(index, _)| index);
        done.into_iter().map(|(_, result)| result).collect()
    }
}

/// How many of `count` chunks thread `t` of `threads` owns at the start: equal runs, the
/// first ones a chunk longer where they cannot be.
fn run_length(count: usize, threads: usize, t: usize) -> usize {
    count / threads + usize::from(t < count % threads)
}

/// The next chunk for thread `t`: the first of its own run, in order (each thread walks
/// consecutive memory, as rayon's halving does); once its run is done, the last of the
/// longest run left, so a thread that started late or ran slow is relieved from its end.
fn claim<J>(runs: &mut [VecDeque<(usize, J)>], t: usize) -> Option<(usize, J)> {
    if let Some(job) = runs.get_mut(t).and_then(VecDeque::pop_front) {
        return Some(job);
    }
    runs.iter_mut().max_by_key(|run| run.len()).and_then(VecDeque::pop_back)
}

/// `mutex` locked; a thread that panicked while holding it (a chunk's panic is the call's,
/// propagated by the scope) left nothing half-written: the claim and the append are whole.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether a call of `chunks` chunks on `threads` threads, which took `took` ns, ran at full
/// width: as many threads as it had chunks for each started one within the first half of the
/// call (`starts`: when each participating thread started its first chunk). A pool thread
/// that woke late took a chunk or two at the end, or none: the call took one thread's time.
fn at_full_width(starts: &[u64], took: u64, chunks: usize, threads: usize) -> bool {
    let wanted = threads.min(chunks).min(64);
    starts.len() >= wanted && starts.iter().all(|&t| t <= took / 2)
}

thread_local! {
    /// Whether every split loop this thread ran since the last [`take_width`] ran at full width.
    static FULL_WIDTH: Cell<Option<bool>> = const { Cell::new(None) };
}

fn record_width(full: bool) {
    FULL_WIDTH.with(|w| w.set(Some(w.get().unwrap_or(true) && full)));
}

/// Whether the split loops the calling thread ran since the last call of this
/// function each ran on as many of the team's threads as they had chunks for
/// (`Some(false)`: part of the pool did not take part, as when it is still
/// waking); `None` when none was split across threads. Clears what it reports.
pub(crate) fn take_width() -> Option<bool> {
    FULL_WIDTH.with(|w| w.take())
}

/// Runs the chunks one after another on the calling thread: the fallback when
/// what the loop shares is not `Sync` or its parts are not `Send`.
pub trait InOrder<J> {
    /// `f(job)` for every job, in order, on the calling thread.
    fn run<P, F: Fn(J) -> P>(&self, f: F) -> Vec<P>;
}

impl<C, J> InOrder<J> for &Split<C, J> {
    fn run<P, F: Fn(J) -> P>(&self, f: F) -> Vec<P> {
        self.jobs.take().into_iter().map(f).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_range_in_order_and_depend_on_the_thread_count_only() {
        assert_eq!(chunks(3..3, 4), []);
        assert_eq!(chunks(0..10, 1), [(0, 10)]);
        assert_eq!(chunks(2..5, 2), [(2, 3), (3, 4), (4, 5)]);
        let c = chunks(0..100, 2);
        assert_eq!(c.len(), 8);
        assert_eq!(c.first(), Some(&(0, 13)));
        assert_eq!(c.last(), Some(&(91, 100)));
        assert!(c.windows(2).all(|w| w[0].1 == w[1].0));
        assert_eq!(chunks(0..100, 2), c);
        assert_eq!(chunks(0..100, 3).len(), 12);
    }

    #[test]
    fn each_thread_walks_its_own_run_then_relieves_the_longest_from_its_end() {
        assert_eq!((0..3).map(|t| run_length(8, 3, t)).collect::<Vec<_>>(), [3, 3, 2]);
        assert_eq!((0..4).map(|t| run_length(2, 4, t)).collect::<Vec<_>>(), [1, 1, 0, 0]);
        let mut runs: Vec<VecDeque<(usize, ())>> =
            vec![(0..4).map(|i| (i, ())).collect(), (4..8).map(|i| (i, ())).collect()];
        let mut order = |t: usize| claim(&mut runs, t).map(|(i, ())| i);
        assert_eq!([order(0), order(0), order(1)], [Some(0), Some(1), Some(4)]);
        // Thread 1 stalls; thread 0 finishes its run, then takes thread 1's from the end.
        assert_eq!([order(0), order(0), order(0), order(0)], [Some(2), Some(3), Some(7), Some(6)]);
        assert_eq!([order(1), order(1), order(0)], [Some(5), None, None]);
    }

    #[test]
    fn full_width_means_every_thread_started_in_the_first_half_of_the_call() {
        assert!(at_full_width(&[0, 4_000], 50_000, 8, 2));
        assert!(!at_full_width(&[0, 30_000], 50_000, 8, 2), "a thread that woke late");
        assert!(!at_full_width(&[0], 50_000, 8, 2), "a thread that never came");
        assert!(at_full_width(&[0, 1, 2], 10, 3, 16), "fewer chunks than threads");
        assert!(at_full_width(&[], 0, 0, 2));
    }

    #[test]
    fn a_split_says_whether_it_ran_at_full_width_once() {
        #[allow(unused_imports)]
        use super::{Across as _, InOrder as _};
        assert_eq!(take_width(), None, "nothing split yet on this thread");
        record_width(true);
        record_width(false);
        record_width(true);
        assert_eq!(take_width(), Some(false), "one short loop makes the call short");
        assert_eq!(take_width(), None, "reported once");
        let data = [1.0f32; 64];
        let shared: &[f32] = &data;
        crate::ops::par::with_threads(2, || {
            let split = Split::new((&shared,), (0..8).collect::<Vec<usize>>());
            #[allow(clippy::needless_borrow)]
            let sums = (&split).run(|j: usize| shared[j] * 2.0);
            assert_eq!(sums, [2.0; 8]);
        });
        assert!(take_width().is_some(), "a split across threads says how wide it ran");
    }

    #[test]
    fn parts_follow_the_chunks_at_a_stride_and_clamp_to_the_length() {
        let mut v: Vec<u32> = (0..10).collect();
        let parts = parts(&mut v, 3, &[(1, 2), (2, 4)]);
        let parts: Vec<Vec<u32>> = parts.into_iter().map(|p| p.to_vec()).collect();
        assert_eq!(parts, [vec![3, 4, 5], vec![6, 7, 8, 9]]);
        let mut v = [0u8; 4];
        assert_eq!(super::parts(&mut v, 1, &[(5, 9)]).into_iter().map(|p| p.len()).collect::<Vec<_>>(), [0]);
    }

    #[test]
    // The generated call's `&`: without it, method lookup never reaches `InOrder`'s `&&Split`.
    #[allow(clippy::needless_borrow)]
    fn the_runner_is_chosen_by_what_the_loop_shares() {
        // The generated call, with both traits in scope.
        #[allow(unused_imports)]
        use super::{Across as _, InOrder as _};
        let caller = std::thread::current().id();
        // The first two chunks meet at a barrier: the caller, holding the first, cannot take
        // the second, so another thread must.
        let met = std::sync::Barrier::new(2);
        let ran = crate::ops::par::with_threads(2, || {
            let shared: &[f32] = &[1.0];
            let split = Split::new((&shared, &met), vec![0, 1, 2, 3]);
            (&split).run(|j: usize| {
                if j < 2 {
                    met.wait();
                }
                std::thread::current().id()
            })
        });
        assert_eq!(ran[0], caller, "the calling thread takes the first chunk");
        assert_ne!(ran[1], caller, "shared data that is Sync runs on the pool too");
        let rc = std::rc::Rc::new(1.0f32);
        let ran = crate::ops::par::with_threads(2, || {
            let split = Split::new((&rc,), vec![0, 1, 2, 3]);
            (&split).run(|j: usize| (std::thread::current().id(), *rc + j as f32))
        });
        assert!(ran.iter().all(|&(id, _)| id == caller), "an Rc is not Sync: the chunks run in order on the caller");
        assert_eq!(ran.iter().map(|&(_, v)| v).collect::<Vec<_>>(), [1.0, 2.0, 3.0, 4.0]);
    }
}
