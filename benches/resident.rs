//! Data kept on the GPU (issue 43), against the whole CPU, in one run: the
//! Jacobi sweep on a 4,096² grid and the k-means assignment of 1M points × 16
//! dimensions to 64 centroids (`benches/programs/{jacobi,kmeans}.rs`), each
//! timed as
//!
//! - **Parallel**: the annotated kernel's Parallel variant on host data, on
//!   every thread of the pool (`ADAPTIVE_KERNEL_THREADS`, else rayon's: 16 on a
//!   16-core machine);
//! - **GPU, host data**: the routed function forced onto its GPU variant: each
//!   call uploads what it reads and reads back what it writes;
//! - **GPU, resident**: `k::resident` on `Resident` handles forced onto the GPU:
//!   the grids (k-means: the points and labels) stay on the device; per call only
//!   status words and results come back (k-means: the centroids, updated on the
//!   host in a Lloyd iteration, go up).
//!
//! Rounds interleave the three (a sample is a batch of calls of about 200 ms
//! after one untimed call); each figure is the median over rounds, each ratio the
//! median of the per-round ratios. It also prints what each way moved per call,
//! counted (`ops::gpu::traffic`), and the adapter and thread count, so the figures
//! can go to BENCHMARKS.md with their machine. `scripts/gpu-check --full` runs it on
//! a GPU owner's machine; without a GPU it says so and times Parallel alone
//! (`ADAPTIVE_KERNEL_GPU=software` lets lavapipe count, whose figures say nothing
//! about a GPU).
//!
//! ```sh
//! cargo bench --bench resident             # a few minutes on 2 vCPUs
//! cargo bench --bench resident -- --test   # smoke: small sizes, one round
//! ```

#![allow(missing_docs)]

mod common;
#[path = "programs/mod.rs"]
mod programs;
#[path = "common/smoke.rs"]
mod smoke;

use std::hint::black_box;
use std::time::{Duration, Instant};

use adaptive_kernel::ops::gpu;
use adaptive_kernel::resident::Resident;
use adaptive_kernel::{with_backend, Backend};
use programs::{jacobi, kmeans};

/// The work in one timed sample.
const SAMPLE: Duration = Duration::from_millis(200);
/// Rounds per case.
const ROUNDS: usize = 9;

/// One way of running a case.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Way {
    Parallel,
    GpuHost,
    GpuResident,
}

impl Way {
    const ALL: [Way; 3] = [Way::Parallel, Way::GpuHost, Way::GpuResident];

    fn name(self) -> &'static str {
        match self {
            Way::Parallel => "Parallel, host data",
            Way::GpuHost => "GPU, host data",
            Way::GpuResident => "GPU, resident",
        }
    }
}

/// A case: one call in a way.
trait Case {
    fn label(&self) -> String;
    fn call(&mut self, way: Way);
}

struct Sweeps {
    n: usize,
    host: [Vec<f32>; 2],
    resident: [Resident<f32>; 2],
}

impl Sweeps {
    fn new(n: usize) -> Sweeps {
        let g = jacobi::grid(n, 0x7AC0);
        Sweeps { n, resident: [Resident::new(g.clone()), Resident::new(g.clone())], host: [g.clone(), g] }
    }
}

impl Case for Sweeps {
    fn label(&self) -> String {
        format!("Jacobi sweep, {0} × {0}", self.n)
    }
    fn call(&mut self, way: Way) {
        let n = self.n;
        match way {
            Way::Parallel => {
                let [a, b] = &mut self.host;
                jacobi::annotated::sweep::parallel(a, b, n);
                self.host.swap(0, 1);
            }
            Way::GpuHost => {
                let [a, b] = &mut self.host;
                with_backend(Backend::Gpu, || jacobi::annotated::sweep(a, b, n));
                self.host.swap(0, 1);
            }
            Way::GpuResident => {
                let [a, b] = &mut self.resident;
                with_backend(Backend::Gpu, || jacobi::annotated::sweep::resident(&*a, b, n));
                self.resident.swap(0, 1);
            }
        }
    }
}

struct Assign {
    data: kmeans::Data,
    n: usize,
    k: usize,
    labels: Vec<u32>,
    resident: (Resident<f32>, Resident<u32>),
}

impl Assign {
    fn new(n: usize, d: usize, k: usize) -> Assign {
        let data = kmeans::Data::new(n, k, d, 0xC1A55);
        let resident = (Resident::new(data.points.clone()), Resident::new(vec![0; n]));
        Assign { data, n, k, labels: vec![0; n], resident }
    }
}

impl Case for Assign {
    fn label(&self) -> String {
        format!("k-means assignment, {} × {}d, k = {}", self.n, self.data.d, self.k)
    }
    fn call(&mut self, way: Way) {
        let (p, c, d) = (&self.data.points, &self.data.centroids, self.data.d);
        let inertia = match way {
            Way::Parallel => kmeans::annotated::assign::parallel(p, c, d, &mut self.labels),
            Way::GpuHost => with_backend(Backend::Gpu, || kmeans::annotated::assign(p, c, d, &mut self.labels)),
            Way::GpuResident => {
                let (points, labels) = &mut self.resident;
                with_backend(Backend::Gpu, || kmeans::annotated::assign::resident(&*points, c, d, labels))
            }
        };
        black_box(inertia);
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn time(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.1} µs", seconds * 1e6)
    }
}

/// Seconds per call of `reps` calls in `way`, after one untimed call.
fn sample(case: &mut dyn Case, way: Way, reps: usize) -> f64 {
    case.call(way);
    let start = Instant::now();
    for _ in 0..reps {
        case.call(way);
    }
    start.elapsed().as_secs_f64() / reps as f64
}

fn measure(case: &mut dyn Case, ways: &[Way]) {
    // What one call moves in each way, counted, after a first call (the resident one uploads).
    let mut moved = Vec::new();
    for &way in ways {
        case.call(way);
        let before = gpu::thread_traffic();
        case.call(way);
        moved.push(gpu::thread_traffic() - before);
    }
    let reps: Vec<usize> = ways
        .iter()
        .map(|&w| ((smoke::pick(SAMPLE, Duration::ZERO).as_secs_f64() / sample(case, w, 1)).ceil() as usize).max(1))
        .collect();
    let rounds = smoke::pick(ROUNDS, 1);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); ways.len()];
    for r in 0..rounds {
        for k in 0..ways.len() {
            let w = (r + k) % ways.len();
            times[w].push(sample(case, ways[w], reps[w]));
        }
    }
    println!("\n{}", case.label());
    println!("| way | median per call | × Parallel | up per call | down per call | submissions per call |");
    println!("|---|---|---|---|---|---|");
    for (w, way) in ways.iter().enumerate() {
        let ratio = median(times[0].iter().zip(&times[w]).map(|(p, t)| p / t).collect());
        let m = moved[w];
        println!(
            "| {} | {} | {ratio:.2} | {} | {} | {} |",
            way.name(),
            time(median(times[w].clone())),
            adaptive_kernel::__private::bytes(m.bytes_up),
            adaptive_kernel::__private::bytes(m.bytes_down),
            m.submissions
        );
    }
}

fn main() {
    let started = Instant::now();
    if std::env::var_os("ADAPTIVE_KERNEL_HISTORY").is_none() {
        std::env::set_var("ADAPTIVE_KERNEL_HISTORY", "off");
    }
    let on_gpu = gpu::wait_ready(Duration::from_secs(30));
    println!(
        "resident: {}; {} threads in the Parallel pool; GPU {}",
        adaptive_kernel::history::Fingerprint::current().cpu,
        adaptive_kernel::ops::par::threads(),
        gpu::health()
    );
    let ways: Vec<Way> = if on_gpu { Way::ALL.to_vec() } else { vec![Way::Parallel] };
    if !on_gpu {
        println!("no usable GPU: Parallel alone (ADAPTIVE_KERNEL_GPU=software admits lavapipe)");
    }
    let mut cases: Vec<Box<dyn Case>> = vec![
        Box::new(Sweeps::new(smoke::pick(4_096, 256))),
        Box::new(Assign::new(smoke::pick(1 << 20, 4_096), 16, smoke::pick(64, 8))),
    ];
    for case in &mut cases {
        measure(case.as_mut(), &ways);
    }
    if on_gpu {
        println!("\n{}", jacobi::annotated::sweep::RESIDENT.table());
        println!("{}", kmeans::annotated::assign::RESIDENT.table());
    }
    println!("total: {:.0} s", started.elapsed().as_secs_f64());
}
