//! The router knows where the data is: with the cost model's figures fixed (a GPU
//! fast at arithmetic behind a slow bus), the cold-start prior sends a sweep on
//! resident grids to the GPU and the same sweep on host grids to the CPU; and a
//! GPU call that moves more than it computes logs one `tracing` warning per
//! kernel. Each case in a child process (the installed figures and the routing
//! mode are the whole process's), on lavapipe.
//!
//! These tests need a device; without one they FAIL, unless
//! `ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1` asks to skip them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adaptive_kernel::cost::CostParams;
use adaptive_kernel::kernel::DecisionKind;
use adaptive_kernel::ops::gpu;
use adaptive_kernel::resident::Resident;
use adaptive_kernel::{adaptive_kernel, with_backend, Backend};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

mod common;

/// One Jacobi sweep on an `n`×`n` grid (as in `tests/resident.rs`).
#[adaptive_kernel(complexity = "Medium")]
fn jacobi(grid: &[f32], next: &mut [f32], n: usize) {
    for i in n..grid.len() - n {
        let x = i % n;
        if x != 0 && x != n - 1 {
            next[i] = 0.25 * (grid[i - 1] + grid[i + 1] + grid[i - n] + grid[i + n]);
        }
    }
}

/// `y += a·x`: linear work, all of it moved when the data is on the host.
#[adaptive_kernel(complexity = "Low")]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// A GPU 1,000× faster than SIMD at arithmetic, behind a 100 MB/s bus.
const FIGURES: CostParams = CostParams {
    scalar_flops: 1e9,
    simd_flops: 1e10,
    mem_bandwidth: 2e10,
    gpu_flops: 1e13,
    transfer_bandwidth: 1e8,
    gpu_latency: 10e-6,
    cpu_call_latency: 50e-9,
    gpu_available: true,
    parallel_threads: 1.0,
    fork_join_latency: 20e-6,
};

/// Warnings with target `adaptive_kernel`, by their fields.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<BTreeMap<String, String>>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}").trim_matches('"').to_owned());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let m = event.metadata();
        if m.target() == "adaptive_kernel" && *m.level() == tracing::Level::WARN {
            let mut fields = BTreeMap::new();
            event.record(&mut Fields(&mut fields));
            self.0.lock().unwrap().push(fields);
        }
    }
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    let role = common::child_role().expect("run by run_child");
    assert!(adaptive_kernel::cost::install_global(FIGURES), "installed before any kernel ran");
    assert!(gpu::wait_ready(Duration::from_secs(60)), "no usable GPU: {}", gpu::health());
    match role.as_str() {
        "prior" => {
            // Frozen (ADAPTIVE_KERNEL_MODE=frozen): each bucket keeps the cold-start prior.
            let n = 512;
            let size = 2 * n * n;
            let (mut a, mut b) = (vec![0.0f32; n * n], vec![0.0f32; n * n]);
            jacobi(&a, &mut b, n);
            let host = jacobi::KERNEL.table();
            let host_row = host.row_for(size).unwrap();
            assert_ne!(host_row.chosen, Some(Backend::Gpu), "on host data the bus costs more:\n{host}");
            assert_eq!(host_row.decided_by, DecisionKind::CostModel, "{host}");
            // The grids on the device first (a forced call decides nothing), then routed.
            let (mut ra, mut rb) = (Resident::new(a.clone()), Resident::new(b.clone()));
            with_backend(Backend::Gpu, || jacobi::resident(&ra, &mut rb, n));
            jacobi::resident(&rb, &mut ra, n);
            let res = jacobi::RESIDENT.table();
            let row = res.row_for(size).unwrap();
            assert_eq!(row.chosen, Some(Backend::Gpu), "on resident data nothing crosses the bus:\n{res}");
            jacobi::scalar(&b, &mut a, n);
            assert_eq!(ra.host(), &a[..]);
        }
        "warning" => {
            let warnings = Warnings::default();
            let subscriber = tracing_subscriber::registry().with(warnings.clone());
            tracing::subscriber::with_default(subscriber, || {
                let x = vec![1.0f32; 1 << 20];
                let mut y = vec![0.0f32; 1 << 20];
                // 12 MiB across a 100 MB/s bus is 126 ms: more than lavapipe takes to compute it.
                with_backend(Backend::Gpu, || {
                    for _ in 0..3 {
                        saxpy(2.0, &x, &mut y);
                    }
                });
                assert_eq!(y[7], 6.0);
                // On resident data only the first call moves them (not judged: a warm-up), the
                // others nothing: no warning for that kernel.
                let xr = Resident::new(x.clone());
                let mut yr = Resident::new(y.clone());
                with_backend(Backend::Gpu, || {
                    saxpy::resident(2.0, &xr, &mut yr);
                    for _ in 0..3 {
                        saxpy::resident(2.0, &xr, &mut yr);
                    }
                });
            });
            let got = warnings.0.lock().unwrap().clone();
            let moved: Vec<_> =
                got.iter().filter(|w| w.get("message").is_some_and(|m| m.contains("moved more"))).collect();
            assert_eq!(moved.len(), 1, "one warning for saxpy's host calls, none for the resident ones: {got:?}");
            let w = moved[0];
            assert!(w["kernel"].ends_with("saxpy"), "{w:?}");
            assert_eq!(w["bytes_up"], (8 << 20).to_string(), "x and y up on that call: {w:?}");
            assert!(w["message"].contains("Resident"), "it says what to do: {w:?}");
        }
        other => panic!("unknown role {other}"),
    }
    eprintln!("CHILD {role} OK");
}

fn run(role: &str, env: &[(&str, &str)]) {
    if std::env::var("ADAPTIVE_KERNEL_SKIP_GPU_TESTS").as_deref() == Ok("1") {
        eprintln!("skipped: ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1");
        return;
    }
    let mut all = vec![("ADAPTIVE_KERNEL_GPU", "software"), ("ADAPTIVE_KERNEL_HISTORY", "off")];
    all.extend_from_slice(env);
    let (ok, out) = common::run_child("child", role, &all);
    assert!(ok && out.contains(&format!("CHILD {role} OK")), "child {role} failed:\n{out}");
}

#[test]
fn the_prior_sends_a_resident_sweep_to_the_gpu_and_a_host_one_to_the_cpu() {
    run("prior", &[("ADAPTIVE_KERNEL_MODE", "frozen")]);
}

#[test]
fn a_gpu_call_that_moves_more_than_it_computes_is_warned_about_once() {
    run("warning", &[]);
}
