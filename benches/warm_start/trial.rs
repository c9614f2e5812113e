//! The workload, and what one process of a trial does with it: `calibrate` (each
//! variant called directly at each size: their medians, written for the others to
//! read), `oracle` (the calls in their order, each on its size's fastest variant by those
//! medians), `cold` and `warm` (the calls routed; the history file, set by the parent,
//! is what differs). Each runs the workload as the first thing its process does, timed
//! as a whole and call by call, and writes its figures as JSON.

use std::cell::RefCell;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use serde_json::{json, Value};

use crate::kernels::{call, Variant, K, KERNELS, VARIANTS};

/// One (kernel, size) of the workload with its inputs.
pub(crate) struct Pair {
    pub(crate) k: K,
    pub(crate) n: usize,
    pub(crate) calls: usize,
    a: Vec<f32>,
    b: Vec<f32>,
}

/// splitmix64 with a fixed seed: the same inputs and order in every trial and build.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn vec(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n).map(|_| ((self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0) * scale).collect()
    }
}

pub(crate) const SEED: u64 = 0x5EED_0044;

/// Calls of each kernel's largest size; each size below gets twice as many, at most 2,048.
pub(crate) fn top_calls() -> usize {
    crate::smoke::pick(16, 1)
}

/// Every pair with its inputs.
pub(crate) fn pairs() -> Vec<Pair> {
    let mut rng = Rng(SEED);
    let top = top_calls();
    KERNELS
        .into_iter()
        .flat_map(|k| k.dims().into_iter().enumerate().map(move |(i, n)| (k, i, n)))
        .map(|(k, i, n)| {
            let calls = (top << (7 - i)).min(2048);
            let (a, b) = match k {
                K::Matmul => (rng.vec(n * n, 1.0), rng.vec(n * n, 1.0)),
                K::Sine => (rng.vec(n, 8.0), Vec::new()),
                K::Affine => (rng.vec(n, 1.0), Vec::new()),
            };
            Pair { k, n, calls, a, b }
        })
        .collect()
}

/// Every pair's calls, shuffled (Fisher–Yates, fixed seed).
pub(crate) fn order(pairs: &[Pair]) -> Vec<usize> {
    let mut order: Vec<usize> = pairs.iter().enumerate().flat_map(|(i, p)| std::iter::repeat_n(i, p.calls)).collect();
    let mut rng = Rng(SEED ^ 0xA5A5);
    for i in (1..order.len()).rev() {
        order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    order
}

fn time(p: &Pair, variant: Option<Variant>) -> u64 {
    let start = Instant::now();
    let out = call(p.k, variant, &p.a, &p.b, p.n);
    let ns = start.elapsed().as_nanos() as u64;
    drop(black_box(out));
    ns
}

thread_local! {
    /// The router's decision events of the routed call being made: `(backend, decision)`.
    static ROUTES: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
}

#[derive(Default)]
struct Fields {
    message: String,
    backend: String,
    decision: String,
}

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "backend" => self.backend = value.to_owned(),
            "decision" => self.decision = value.to_owned(),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

/// Keeps the router's `route` events (a call decided on the cold path, with the backend
/// it runs and why), so each routed call is known to have explored or not.
struct Recorder;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        if f.message == "route" {
            ROUTES.with(|r| r.borrow_mut().push((f.backend, f.decision)));
        }
    }
}

fn install_recorder() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::Layer;
    let filter = tracing_subscriber::filter::filter_fn(|m| m.is_event() && m.target() == "adaptive_kernel");
    let subscriber = tracing_subscriber::registry().with(Recorder.with_filter(filter));
    tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");
}

/// The backend a routed call explored, if it did: a decision made on the cold path by
/// anything but the bucket's decision (`historical`) or a forced backend.
fn explored() -> Option<String> {
    ROUTES.with(|r| {
        let mut r = r.borrow_mut();
        let found = r.iter().find(|(_, d)| d != "historical" && d != "forced").map(|(b, _)| b.clone());
        r.clear();
        found
    })
}

/// Each variant's median per pair, called directly: rounds over the variants the kernel
/// has, a variant dropped once a call is over 20× the best so far and over 1 ms, or once
/// it has taken 60 ms in all.
fn direct_medians(pairs: &[Pair], gpu: bool) -> Vec<[Option<f64>; 4]> {
    let rounds = crate::smoke::pick(9, 1);
    pairs
        .iter()
        .map(|p| {
            let has: Vec<Variant> =
                VARIANTS.into_iter().filter(|&v| p.k.has(v) && (v != Variant::Gpu || gpu)).collect();
            let mut samples: [Vec<u64>; 4] = Default::default();
            let mut spent = [0u64; 4];
            let mut dropped = [false; 4];
            for _ in 0..rounds {
                for &v in &has {
                    let i = v as usize;
                    if dropped[i] {
                        continue;
                    }
                    let ns = time(p, Some(v));
                    samples[i].push(ns);
                    spent[i] += ns;
                    let best = samples.iter().filter_map(|s| s.iter().min()).min().copied().unwrap_or(ns);
                    dropped[i] = spent[i] > 60_000_000 || (ns > 20 * best && ns > 1_000_000);
                }
            }
            std::array::from_fn(|i| median(&samples[i]))
        })
        .collect()
}

fn median(ns: &[u64]) -> Option<f64> {
    adaptive_kernel::__private::median(&mut ns.iter().map(|&x| x as f64).collect::<Vec<_>>())
}

/// The fastest variant of a pair by its medians, and its median (ns).
pub(crate) fn best(medians: &[Option<f64>; 4]) -> (usize, f64) {
    medians
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.map(|m| (i, m)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("every pair has Scalar")
}

/// Reads the medians a `calibrate` process wrote.
pub(crate) fn read_medians(file: &Path) -> Vec<[Option<f64>; 4]> {
    let v: Value = serde_json::from_slice(&std::fs::read(file).expect("the calibration")).expect("json");
    v["medians_ns"].as_array().expect("medians").iter().map(|m| std::array::from_fn(|i| m[i].as_f64())).collect()
}

/// Runs one process of a trial (`mode`: `calibrate`, `oracle`, `cold` or `warm`) and writes
/// its figures to `out`; `calibration` is the file a `calibrate` process wrote (read by
/// the others).
pub(crate) fn run(mode: &str, calibration: &Path, out: &Path) {
    let pairs = pairs();
    let order = order(&pairs);
    if mode == "calibrate" {
        let gpu = adaptive_kernel::ops::gpu::is_available();
        let medians = direct_medians(&pairs, gpu);
        let best: Vec<&str> = medians.iter().map(|m| VARIANTS[best(m).0].name()).collect();
        let v = json!({ "gpu": gpu, "medians_ns": medians, "best": best });
        return std::fs::write(out, serde_json::to_vec(&v).expect("json")).expect("write the calibration");
    }
    let routed = mode != "oracle";
    if routed {
        install_recorder();
    }
    assert!(!K::Sine.has(Variant::Parallel), "sine gained a Parallel variant: give `kernels::call` its arm");
    let medians = read_medians(calibration);
    let bests: Vec<(usize, f64)> = medians.iter().map(best).collect();

    // The workload, first thing in the process, timed as a whole and call by call.
    let mut calls = Vec::with_capacity(order.len());
    let start = Instant::now();
    for &pi in &order {
        let variant = if routed { None } else { Some(VARIANTS[bests[pi].0]) };
        let ns = time(&pairs[pi], variant);
        calls.push((ns, if routed { explored() } else { None }));
    }
    let wall_s = start.elapsed().as_secs_f64();
    let saved = if routed { adaptive_kernel::flush().is_ok() } else { false };
    if let Ok(want) = std::env::var("WARM_START_DUMP") {
        for k in KERNELS {
            eprintln!("{}", k.kernel().table());
        }
        for (pi, p) in pairs.iter().enumerate().filter(|(_, p)| format!("{:?}:{}", p.k, p.n) == want) {
            let mine: Vec<String> = order
                .iter()
                .zip(&calls)
                .filter(|(&x, _)| x == pi)
                .map(|(_, (ns, e))| format!("{ns}{}", if e.is_some() { "*" } else { "" }))
                .collect();
            eprintln!("{:?} {}: {}", p.k, p.n, mine.join(" "));
        }
    }

    // Per pair, and what exploring cost: each exploring call beyond its size's best median.
    let mut per_pair_ns = vec![0u64; pairs.len()];
    let mut per_pair_explore = vec![(0u32, 0.0f64); pairs.len()];
    let (mut explore_ns, mut explore_calls, mut over_10x, mut candidates_over_10x) = (0.0, 0, 0, 0);
    let mut worst: Option<Value> = None;
    let (mut worst_ratio, mut worst_candidate_ratio) = (0.0, 0.0);
    let mut worst_candidate: Option<Value> = None;
    let mut over_10x_calls = Vec::new();
    for (&pi, (ns, explored)) in order.iter().zip(&calls) {
        per_pair_ns[pi] += ns;
        let Some(backend) = explored else { continue };
        let best_ns = bests[pi].1.max(1.0);
        explore_calls += 1;
        explore_ns += (*ns as f64 - best_ns).max(0.0);
        per_pair_explore[pi].0 += 1;
        per_pair_explore[pi].1 += (*ns as f64 - best_ns).max(0.0) / 1e6;
        let ratio = *ns as f64 / best_ns;
        over_10x += usize::from(ratio > 10.0);
        // The candidate it explored, by its median here: the router's own cold-path cost
        // (microseconds) left out, which alone puts every exploring call of a sub-microsecond
        // size over 10×.
        let variant = VARIANTS.iter().position(|v| v.name() == backend.as_str());
        if let Some(m) = variant.and_then(|v| medians[pi][v]) {
            let candidate_ratio = m / best_ns;
            candidates_over_10x += usize::from(candidate_ratio > 10.0);
            if candidate_ratio > 10.0 && over_10x_calls.len() < 40 {
                let p = &pairs[pi];
                over_10x_calls.push(json!([
                    p.k.label(),
                    p.n,
                    backend,
                    (*ns as f64 / 1e3).round(),
                    candidate_ratio.round()
                ]));
            }
            if candidate_ratio > worst_candidate_ratio {
                worst_candidate_ratio = candidate_ratio;
                let p = &pairs[pi];
                worst_candidate = Some(json!({ "kernel": p.k.label(), "n": p.n, "backend": backend,
                    "median_us": m / 1e3, "best_us": best_ns / 1e3, "ratio": candidate_ratio, "call_us": *ns as f64 / 1e3 }));
            }
        }
        if ratio > worst_ratio {
            worst_ratio = ratio;
            let p = &pairs[pi];
            worst = Some(json!({ "kernel": p.k.label(), "n": p.n, "backend": backend, "call_us": *ns as f64 / 1e3,
                "best_us": best_ns / 1e3, "ratio": ratio }));
        }
    }
    let per_kernel: serde_json::Map<String, Value> = KERNELS
        .iter()
        .map(|&k| {
            let ns: u64 = pairs.iter().zip(&per_pair_ns).filter(|(p, _)| p.k == k).map(|(_, &ns)| ns).sum();
            (k.label().to_owned(), json!(ns as f64 / 1e9))
        })
        .collect();
    let result = json!({
        "mode": mode, "calls": order.len(), "history_saved": saved, "wall_s": wall_s, "per_kernel_s": per_kernel,
        "per_pair_ms": per_pair_ns.iter().map(|&ns| ns as f64 / 1e6).collect::<Vec<_>>(),
        "per_pair_exploring": per_pair_explore.iter().map(|&(n, ms)| json!({ "calls": n, "beyond_best_ms": ms })).collect::<Vec<_>>(),
        "exploring_calls": explore_calls, "exploration_s": explore_ns / 1e9,
        "exploring_calls_over_10x": over_10x, "worst_exploring_call": worst,
        "exploring_candidates_over_10x": candidates_over_10x, "worst_exploring_candidate": worst_candidate,
        "exploring_candidates_over_10x_calls": over_10x_calls,
    });
    std::fs::write(out, serde_json::to_vec_pretty(&result).expect("json")).expect("write the trial's figures");
}
