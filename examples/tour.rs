//! The tour: what adaptive kernels learn on this machine, in one run.
//!
//! Three annotated kernels, one per complexity class, are called over a sweep
//! of sizes: `saxpy` (Low) is a plain loop (which the GPU variant runs as a
//! generated shader), `dot` (Medium) is a plain-loop
//! reduction (which the SIMD variant computes in lanes) with a GPU alternative,
//! `matmul` (High) goes through the `ops` set. At each size the router explores
//! until the size's bucket settles; then the routed call, the backend the
//! static MoE table picks and SIMD alone are timed in interleaved rounds on the
//! same inputs. The tour prints, per kernel, what the attribute did to its
//! float reductions, the learned table with the speed-ups, the crossovers
//! found (a change between two backends that measured within the router's tie
//! band is said to be a tie, not a crossover), what the GPU calls moved between
//! host and device, the totals, and how many calls explored. With a usable GPU it
//! ends with `saxpy` on data kept on the device (`saxpy::resident` with
//! `Resident` handles) against the same calls on host slices: the bytes each moved.
//!
//! Run it twice: what the first run learned is saved (`adaptive_kernel::flush`),
//! and the second starts from it and explores nothing.
//!
//! ```sh
//! cargo run --release --example tour
//! ADAPTIVE_KERNEL_GPU=software cargo run --release --example tour   # let lavapipe count as a GPU
//! ADAPTIVE_KERNEL_HISTORY=/tmp/h.json cargo run --release --example tour   # a history file of its own
//! ```

use std::hint::black_box;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use adaptive_kernel::history::{Fingerprint, HistoryStatus};
use adaptive_kernel::report::{self, LoopSummary};
use adaptive_kernel::select::BackendSelector;
use adaptive_kernel::{adaptive_kernel, ops, Backend, Kernel};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

// Numbers printed as `adaptive-kernel report` prints them.
#[path = "../src/bin/adaptive-kernel/units.rs"]
mod units;
use units::{bytes, thousands};

/// `y += alpha·x`, a plain loop: the Scalar variant is this loop as written, the
/// SIMD variant the same loop compiled for this CPU's widest instruction set
/// (element-wise, so it vectorises as written), the GPU variant the loop as a
/// generated shader, one invocation per item (which a round trip per call never pays for).
#[adaptive_kernel(complexity = "Low")]
pub fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// `Σ aᵢ·bᵢ` as an index loop. Compilers keep the order of float additions, so
/// no instruction set vectorizes this reduction as written; the SIMD variant
/// computes it in independent lanes (equal to the loop within the rounding
/// `adaptive_kernel::tolerance` states), and `dot_on_gpu` is the GPU variant.
#[adaptive_kernel(complexity = "Medium", gpu = dot_on_gpu)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = 0.0;
    for i in 0..a.len().min(b.len()) {
        acc += a[i] * b[i];
    }
    acc
}

/// `dot` on the GPU: the op set's shader.
fn dot_on_gpu(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    ops::gpu::dot(&a[..n], &b[..n])
}

/// C = A·B, row-major f32; A is m×k, B is k×n.
#[adaptive_kernel(complexity = "High", size = m * k + k * n, flops = 2 * m * n * k)]
pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    ops::matmul(a, b, m, n, k)
}

/// How a call is made: routed, or one variant directly.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Via {
    Routed,
    Direct(Backend),
}

/// One size of a sweep: what the router buckets by, and a call on inputs made once.
struct Point {
    label: String,
    size: usize,
    call: Box<dyn FnMut(Via)>,
}

/// One kernel and its sizes.
struct Sweep {
    kernel: &'static Kernel,
    about: &'static str,
    points: Vec<Point>,
}

fn saxpy_at(n: usize) -> Point {
    let x: Vec<f32> = (0..n).map(|i| (i % 17) as f32 * 0.25).collect();
    // Written now (`vec![0.0; n]` would map zero pages lazily): no page faults in the timings.
    let mut y = vec![1.0f32; n];
    let call = move |via| match via {
        Via::Routed => saxpy(1e-3, black_box(&x), black_box(&mut y)),
        Via::Direct(Backend::Scalar) => saxpy::scalar(1e-3, black_box(&x), black_box(&mut y)),
        Via::Direct(Backend::Gpu) => saxpy::gpu(1e-3, black_box(&x), black_box(&mut y)),
        Via::Direct(_) => saxpy::simd(1e-3, black_box(&x), black_box(&mut y)),
    };
    Point { label: format!("n = {}", thousands(n)), size: 2 * n, call: Box::new(call) }
}

fn dot_at(n: usize) -> Point {
    let a: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.1).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.2).collect();
    let call = move |via| {
        black_box(match via {
            Via::Routed => dot(black_box(&a), black_box(&b)),
            Via::Direct(Backend::Scalar) => dot::scalar(black_box(&a), black_box(&b)),
            Via::Direct(Backend::Gpu) => dot::gpu(black_box(&a), black_box(&b)),
            Via::Direct(_) => dot::simd(black_box(&a), black_box(&b)),
        });
    };
    Point { label: format!("n = {}", thousands(n)), size: 2 * n, call: Box::new(call) }
}

fn matmul_at(n: usize) -> Point {
    let a: Vec<f32> = (0..n * n).map(|i| (i % 13) as f32 * 0.1).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.2).collect();
    let call = move |via| {
        black_box(match via {
            Via::Routed => matmul(black_box(&a), black_box(&b), n, n, n),
            Via::Direct(Backend::Scalar) => matmul::scalar(black_box(&a), black_box(&b), n, n, n),
            Via::Direct(Backend::Gpu) => matmul::gpu(black_box(&a), black_box(&b), n, n, n),
            Via::Direct(_) => matmul::simd(black_box(&a), black_box(&b), n, n, n),
        });
    };
    Point { label: format!("{n}×{n}×{n}"), size: 2 * n * n, call: Box::new(call) }
}

fn sweeps() -> Vec<Sweep> {
    vec![
        Sweep {
            kernel: &saxpy::KERNEL,
            about: "a plain loop; SIMD is the loop compiled for this CPU, GPU the loop as a generated shader",
            points: [1 << 10, 1 << 13, 1 << 16, 1 << 19].map(saxpy_at).into(),
        },
        Sweep {
            kernel: &dot::KERNEL,
            about: "a plain-loop reduction; SIMD computes it in lanes, GPU is `dot_on_gpu`",
            points: [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 19].map(dot_at).into(),
        },
        Sweep {
            kernel: &matmul::KERNEL,
            about: "`ops::matmul`; size = m·k + k·n",
            points: [8, 16, 32, 64, 128, 256].map(matmul_at).into(),
        },
    ]
}

/// At most this many exploring rounds per size before moving on (a bucket settles in about ten).
const MAX_EXPLORING: u32 = 200;
/// Interleaved rounds per size: at least this many…
const MIN_ROUNDS: u32 = 5;
/// …until the size's measured calls took this long…
const ROUNDS_BUDGET: Duration = Duration::from_millis(100);
/// …or this many rounds.
const MAX_ROUNDS: u32 = 2_000;

/// What one size of a sweep measured.
struct Measured {
    label: String,
    size: usize,
    /// The backend a static router following the MoE table runs.
    moe: Backend,
    /// Calls made while the size's bucket was not settled, and their time.
    exploring: u32,
    explore_time: Duration,
    /// Each contender's time per call in the interleaved rounds: routed, MoE pick, SIMD.
    times: [Vec<Duration>; 3],
}

impl Measured {
    fn rounds(&self) -> u32 {
        self.times[0].len() as u32
    }

    /// The median time per call of contender `i` (0 routed, 1 MoE pick, 2 SIMD): robust to
    /// the preemptions a shared machine inflicts on single calls.
    fn median(&self, i: usize) -> Duration {
        let mut t = self.times[i].clone();
        t.sort_unstable();
        t.get(t.len() / 2).copied().unwrap_or_default()
    }

    /// What the rounds would take at the median: median per call × rounds.
    fn total(&self, i: usize) -> Duration {
        self.median(i) * self.rounds()
    }
}

/// Whether the bucket of `size` is settled now (what makes a call "exploring" when it is not).
fn settled(kernel: &'static Kernel, size: usize) -> bool {
    kernel.table().row_for(size).and_then(|r| r.chosen).is_some()
}

/// The backend the MoE table picks for `size`, as a static router would run it: a GPU
/// pick runs SIMD when the kernel has no GPU variant or no usable GPU exists.
fn moe_pick(kernel: &'static Kernel, size: usize) -> Backend {
    match BackendSelector::new().select_with_moe(kernel.complexity(), size) {
        Backend::Gpu if !(kernel.has_gpu() && ops::gpu::is_available()) => Backend::Simd,
        other => other,
    }
}

fn time(call: &mut dyn FnMut(Via), via: Via) -> Duration {
    let start = Instant::now();
    call(via);
    start.elapsed()
}

/// Calls the kernel at one size in rounds: each round starts with the settled check
/// (outside any timing), then times the routed call, the MoE pick and SIMD on the same
/// inputs, in an order that rotates. Rounds whose check found the bucket unsettled
/// are exploring calls (only the routed call reaches the router, so the check is
/// exact); the rounds after it settles are the measured ones. Exploring and measured
/// calls thus run in the same surroundings, so what the router saved in a first run
/// matches what a second run sees when it re-times its loaded decisions.
fn measure(kernel: &'static Kernel, point: &mut Point, forced: bool) -> Measured {
    let moe = moe_pick(kernel, point.size);
    let mut m = Measured {
        label: point.label.clone(),
        size: point.size,
        moe,
        exploring: 0,
        explore_time: Duration::ZERO,
        times: Default::default(),
    };
    let call = &mut point.call;
    let contenders = [Via::Routed, Via::Direct(moe), Via::Direct(Backend::Simd)];
    let mut measuring_since = None;
    for round in 0.. {
        let exploring = !forced && !settled(kernel, point.size);
        if exploring && m.exploring >= MAX_EXPLORING {
            break;
        }
        if !exploring {
            let since = *measuring_since.get_or_insert_with(Instant::now);
            let rounds = m.rounds();
            if rounds >= MAX_ROUNDS || (rounds >= MIN_ROUNDS && since.elapsed() >= ROUNDS_BUDGET) {
                break;
            }
        }
        for slot in 0..3 {
            let which = (slot + round) % 3;
            let took = time(call, contenders[which]);
            if !exploring {
                m.times[which].push(took);
            } else if which == 0 {
                m.explore_time += took;
            }
        }
        m.exploring += u32::from(exploring);
    }
    m
}

fn main() {
    adaptive_kernel::init_logging();
    let started = Instant::now();
    header();
    let forced = adaptive_kernel::config::forced_backend();
    if let Some(b) = forced {
        println!("  note     ADAPTIVE_KERNEL_BACKEND forces {b}: every call runs it and nothing is learned");
    }

    let mut sweeps = sweeps();
    let total: usize = sweeps.iter().map(|s| s.points.len()).sum();
    let bar = progress_bar(total as u64);
    let mut results: Vec<Vec<Measured>> = Vec::new();
    for sweep in &mut sweeps {
        let mut measured = Vec::new();
        for point in &mut sweep.points {
            bar.set_message(format!("{} {}", short_name(sweep.kernel), point.label));
            measured.push(measure(sweep.kernel, point, forced.is_some()));
            bar.inc(1);
        }
        results.push(measured);
    }
    bar.finish_and_clear();

    for (sweep, measured) in sweeps.iter().zip(&results) {
        println!();
        print_kernel(sweep, measured);
    }
    let all: Vec<&Measured> = results.iter().flatten().collect();
    println!();
    print_totals(&all);
    resident();
    save();
    println!("the tour took {:.1} s", started.elapsed().as_secs_f64());
}

/// The machine, the GPU and the history file the run starts from.
fn header() {
    // Asked first: opening history reads this machine's entry before any kernel runs.
    let status = adaptive_kernel::history::history_status();
    let path = adaptive_kernel::history::history_file();
    // Starts the device when a usable GPU exists, so the line below names the adapter.
    let asked = Instant::now();
    ops::gpu::is_available();
    let start_up = asked.elapsed();
    println!("adaptive-kernel tour");
    println!("  CPU      {}, SIMD level {:?}", Fingerprint::current().cpu, adaptive_kernel::kernel::simd_level());
    match ops::gpu::health() {
        h @ adaptive_kernel::ops::gpu::GpuHealth::Ready(_) => {
            println!("  GPU      {h} (start-up took {})", duration(start_up));
        }
        h => println!("  GPU      {h}"),
    }
    match (&path, &status) {
        (None, s) => println!("  history  {s}"),
        (Some(p), s) => println!("  history  {}: {s}", p.display()),
    }
}

fn progress_bar(len: u64) -> ProgressBar {
    let target =
        if std::io::stdout().is_terminal() { ProgressDrawTarget::stdout() } else { ProgressDrawTarget::hidden() };
    let bar = ProgressBar::with_draw_target(Some(len), target);
    if let Ok(style) = ProgressStyle::with_template("  exploring and timing [{bar:30}] {pos}/{len} {msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// `tour::saxpy` → `saxpy`.
fn short_name(kernel: &Kernel) -> &'static str {
    let name = kernel.name();
    name.rsplit("::").next().unwrap_or(name)
}

fn print_kernel(sweep: &Sweep, measured: &[Measured]) {
    let kernel = sweep.kernel;
    let table = kernel.table();
    println!("{} ({}): {}", short_name(kernel), kernel.complexity(), sweep.about);
    print!("{}", LoopSummary::of("  ", kernel.spec()));
    print!("  {:<12} {:>23}", "swept", "sizes (its bucket)");
    for b in Backend::ALL {
        print!(" {:>10}", b.to_string());
    }
    println!("   {:<12} {:<8} {:>7} {:>7} {:>8}", "routed", "MoE pick", "vs MoE", "vs SIMD", "explored");
    for m in measured {
        let row = table.row_for(m.size);
        let sizes = row
            .map_or(thousands(m.size), |r| format!("{}..={}", thousands(*r.sizes.start()), thousands(*r.sizes.end())));
        print!("  {:<12} {sizes:>23}", m.label);
        for b in Backend::ALL {
            let centre = row.and_then(|r| r.backend(b)).and_then(|s| s.centre);
            print!(" {:>10}", centre.map_or("-".to_owned(), duration));
        }
        // `Parallel ×2` where a narrower width of the pool won.
        let routed = row.and_then(|r| r.chosen_label());
        // A decision taken from another machine's entry and not yet confirmed here.
        let borrowed = if row.is_some_and(|r| r.from.is_some()) { "*" } else { "" };
        let routed = routed.map_or("exploring".to_owned(), |b| format!("{b}{borrowed}"));
        println!(
            "   {routed:<12} {:<8} {:>7} {:>7} {:>8}",
            m.moe.to_string(),
            ratio(m.median(1), m.median(0)),
            ratio(m.median(2), m.median(0)),
            m.exploring
        );
    }
    for line in crossovers(kernel, measured) {
        println!("  {line}");
    }
    for m in measured {
        let Some(row) = table.row_for(m.size) else { continue };
        let Some(t) = row.transfers else { continue };
        let share = t.moving_share().map_or(String::new(), |s| format!(", {:.0}% of GPU time moving data", 100.0 * s));
        println!(
            "  GPU calls at {}: {} call(s), {:.2} submission(s) per call, {} up, {} down{share}",
            m.label,
            t.gpu_calls,
            t.submissions_per_call(),
            bytes(t.bytes_up),
            bytes(t.bytes_down)
        );
    }
    if let Some(from) = measured.iter().find_map(|m| table.row_for(m.size)?.from.as_ref()) {
        println!("  * decided on another machine, not yet confirmed here: {from}");
    }
}

/// One sentence per change of the chosen backend between consecutive swept buckets,
/// a crossover or a tie ([`report::crossovers`]: what `KERNEL.table()` and
/// `adaptive-kernel report` say too).
fn crossovers(kernel: &'static Kernel, measured: &[Measured]) -> Vec<String> {
    let table = kernel.table();
    let mut rows: Vec<&adaptive_kernel::report::BucketReport> =
        measured.iter().filter_map(|m| table.row_for(m.size)).filter(|r| r.chosen.is_some()).collect();
    rows.dedup_by_key(|r| r.bucket);
    let changes = report::crossovers(rows.iter().filter_map(|r| {
        let figure = |b| Some(r.backend(b)?.centre?.as_secs_f64());
        Some((r.sizes.clone(), r.chosen?, figure))
    }));
    match (changes.is_empty(), rows.first(), rows.last()) {
        (true, Some(first), Some(last)) => vec![format!(
            "No crossover in this sweep: {} is chosen from {} to {} elements.",
            first.chosen.map_or("-".to_owned(), |b| b.to_string()),
            thousands(*first.sizes.start()),
            thousands(*last.sizes.end())
        )],
        _ => changes.iter().map(ToString::to_string).collect(),
    }
}

fn print_totals(all: &[&Measured]) {
    let total = |i| all.iter().map(|m| m.total(i)).sum::<Duration>();
    let (routed, moe, simd) = (total(0), total(1), total(2));
    let rounds: u32 = all.iter().map(|m| m.rounds()).sum();
    println!(
        "Totals for the same {} interleaved rounds (per size: median time per call × rounds):",
        thousands(rounds as usize)
    );
    println!("  routed            {:>10}", duration(routed));
    println!("  MoE table alone   {:>10}   routed: {}", duration(moe), versus(moe, routed));
    println!("  always SIMD       {:>10}   routed: {}", duration(simd), versus(simd, routed));
    let exploring: u32 = all.iter().map(|m| m.exploring).sum();
    let explore_time = all.iter().map(|m| m.explore_time).sum::<Duration>();
    let loaded = matches!(
        adaptive_kernel::history::history_status(),
        HistoryStatus::Loaded { .. } | HistoryStatus::Nearest { .. }
    );
    let why = match (exploring, loaded) {
        (0, true) => "every bucket started settled from the saved history".to_owned(),
        (0, false) => "nothing to learn".to_owned(),
        (_, true) => format!("{} spent on buckets the saved history did not settle", duration(explore_time)),
        (_, false) => format!("{} spent learning; a second run starts from what was saved", duration(explore_time)),
    };
    println!("exploring calls: {exploring} ({why})");
}

/// `saxpy` on 1M elements, 20 calls forced onto the GPU (forced calls teach the router
/// nothing), on `Resident` handles through `saxpy::resident` and on host slices: what
/// each moved between host and device, and how long it took. Only with a usable GPU.
fn resident() {
    if !ops::gpu::is_ready() {
        return;
    }
    use adaptive_kernel::resident::Resident;
    let (n, calls) = (1 << 20, 20);
    let (x, y) = (vec![1.0f32; n], vec![0.0f32; n]);
    let run = |on_device: bool| {
        let (xr, mut yr) = (Resident::new(x.clone()), Resident::new(y.clone()));
        let mut yh = y.clone();
        let before = ops::gpu::thread_traffic();
        let started = Instant::now();
        adaptive_kernel::with_backend(Backend::Gpu, || {
            for _ in 0..calls {
                if on_device {
                    saxpy::resident(0.5, &xr, &mut yr);
                } else {
                    saxpy(0.5, &x, &mut yh);
                }
            }
            // The result on the host, as the program would use it.
            let last = if on_device { yr.host()[n - 1] } else { yh[n - 1] };
            black_box(last);
        });
        (started.elapsed(), ops::gpu::thread_traffic() - before)
    };
    let (host_time, host) = run(false);
    let (resident_time, kept) = run(true);
    println!();
    println!("Data kept on the GPU: saxpy of {} elements, {calls} calls forced onto the GPU", thousands(n));
    for (what, time, t) in [("host slices", host_time, host), ("Resident handles", resident_time, kept)] {
        println!(
            "  {what:<17} {:>10}   {} up, {} down, {} submissions",
            duration(time),
            bytes(t.bytes_up),
            bytes(t.bytes_down),
            t.submissions
        );
    }
}

/// Saves what was learned, and says where.
fn save() {
    let Some(path) = adaptive_kernel::history::history_file() else { return };
    match adaptive_kernel::flush() {
        Ok(()) => println!("saved to {}", path.display()),
        Err(e) => eprintln!("error: could not save history: {e}"),
    }
}

/// `other / routed` as a speed-up, e.g. `1.63×`.
fn ratio(other: Duration, routed: Duration) -> String {
    if routed.is_zero() || other.is_zero() {
        return "-".to_owned();
    }
    format!("{:.2}×", other.as_secs_f64() / routed.as_secs_f64())
}

fn versus(other: Duration, routed: Duration) -> String {
    let r = other.as_secs_f64() / routed.as_secs_f64().max(f64::MIN_POSITIVE);
    if r >= 1.0 {
        format!("{r:.2}× faster")
    } else {
        format!("{:.2}× slower", 1.0 / r)
    }
}

fn duration(d: Duration) -> String {
    units::duration(d.as_secs_f64() * 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use adaptive_kernel::kernel::{KernelSpec, OpComplexity, Work};

    static K: Kernel = Kernel::new(KernelSpec {
        name: "tour_test::saxpy",
        complexity: OpComplexity::Low,
        has_gpu: false,
        has_parallel: false,
        token_hash: 1,
        loops: &[],
        splits: &[],
        gpu_loops: &[],
    });

    /// Settles `size`'s bucket of `K` on injected times per backend (microseconds).
    fn settle(size: usize, scalar: f64, simd: f64) {
        for _ in 0..200 {
            let route = K.route(size, || Work { size, flops: 1, bytes: 1 });
            let b = route.backend();
            drop(route);
            if K.table().row_for(size).and_then(|r| r.chosen).is_some() {
                return;
            }
            let us = if b == Backend::Scalar { scalar } else { simd };
            K.observe(size, b, Duration::from_secs_f64(us * 1e-6));
        }
        panic!("{size} never settled:\n{}", K.table());
    }

    fn swept(size: usize) -> Measured {
        let label = thousands(size);
        Measured {
            label,
            size,
            moe: Backend::Scalar,
            exploring: 0,
            explore_time: Duration::ZERO,
            times: Default::default(),
        }
    }

    #[test]
    fn the_tour_says_tie_where_two_backends_measured_within_the_routers_band() {
        adaptive_kernel::history::set_history(adaptive_kernel::config::HistorySetting::Off);
        settle(2048, 1.0, 2.0);
        settle(16_384, 20.0, 10.0);
        // The memory-bound saxpy of the issue: Scalar 5.68 µs, SIMD 5.66 µs.
        settle(131_072, 5.68, 5.66);
        let lines = crossovers(&K, &[2048, 16_384, 131_072].map(swept));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("SIMD beats Scalar from 16,384 elements"), "{lines:?}");
        assert!(lines[1].starts_with("Scalar and SIMD tie from 131,072 elements"), "{lines:?}");
        assert!(lines.iter().all(|l| !l.contains("Scalar beats SIMD")), "{lines:?}");
    }
}
