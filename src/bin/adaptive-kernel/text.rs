//! The report as a table for people: whether this machine has an entry (and
//! if not, which it would start from), per machine entry its fingerprint and
//! calibration, per kernel what the attribute did to its float reductions, one
//! row per size bucket (each backend's median time, the chosen backend), a line
//! per backend `verify` excluded, a line per bucket whose calls moved data between
//! host and device, and a sentence per crossover or tie.

use std::fmt::Write;

use adaptive_kernel::cost::CostParams;
use adaptive_kernel::report::{self, LoopSummary};

use crate::model::{Bucket, Kernel, Machine, Report};
use crate::units::{bytes, duration, thousands};

/// The whole report as text.
pub(crate) fn render(report: &Report) -> String {
    let mut out = String::new();
    if !report.exists {
        let _ = writeln!(out, "history {}: no file yet (nothing learned on this path)", report.history);
        return out;
    }
    let version = report.format_version.map_or(String::new(), |v| format!(" (format {v})"));
    let _ = writeln!(out, "history {}{version}", report.history);
    if report.machines.is_empty() {
        let _ = writeln!(out, "  no machine entries");
    } else if !report.machines.iter().any(|m| m.this_machine) {
        let line = if report.machines.iter().any(|m| m.nearest.is_some()) {
            "this machine has no entry: a program here starts each kernel from the nearest entry \
             holding it (marked below), re-timing its decisions before trusting them"
        } else {
            "this machine has no entry, and none is near it (same architecture and CPU features, or \
             GPU adapter): a program here starts fresh"
        };
        let _ = writeln!(out, "  {line}");
    }
    for m in &report.machines {
        out.push('\n');
        machine(&mut out, m);
    }
    out
}

fn machine(out: &mut String, m: &Machine) {
    let here = match &m.nearest {
        _ if m.this_machine => " (this machine)".to_owned(),
        Some(near) => format!(" (nearest to this machine, #{}: {})", near.rank, near.words),
        None => String::new(),
    };
    let _ = writeln!(out, "machine {}{here}", m.key);
    let _ = writeln!(out, "  CPU     {} [{}]", m.cpu, m.cpu_features.join(" "));
    let _ = writeln!(out, "  GPU     {}", m.gpu.as_deref().unwrap_or("none recorded"));
    let _ = writeln!(out, "  crate   {} ({} build)", m.crate_version, m.profile);
    match &m.calibration {
        Some(c) => {
            let _ = writeln!(out, "  calibration  {}", calibration_line(c));
        }
        None => {
            let _ = writeln!(out, "  calibration  none saved");
        }
    }
    if m.kernels.is_empty() {
        let _ = writeln!(out, "  no kernels");
    }
    for k in &m.kernels {
        out.push('\n');
        kernel(out, k);
    }
}

/// The calibration figures in one line, with units.
pub(crate) fn calibration_line(c: &CostParams) -> String {
    let mut s = format!(
        "Scalar {:.2} GFLOP/s, SIMD {:.2} GFLOP/s, memory {:.1} GB/s, CPU call {:.0} ns",
        c.scalar_flops / 1e9,
        c.simd_flops / 1e9,
        c.mem_bandwidth / 1e9,
        c.cpu_call_latency * 1e9
    );
    if c.gpu_available {
        let _ = write!(
            s,
            ", GPU {:.1} GFLOP/s, transfer {:.2} GB/s, GPU call {:.1} µs",
            c.gpu_flops / 1e9,
            c.transfer_bandwidth / 1e9,
            c.gpu_latency * 1e6
        );
    } else {
        s.push_str(", no GPU");
    }
    s
}

fn kernel(out: &mut String, k: &Kernel) {
    let _ = writeln!(out, "  kernel {} ({}, token {})", k.name, k.complexity, k.token_hash);
    match &k.loops {
        Some(loops) => {
            let summary = LoopSummary::new("    ", loops)
                .with_splits(k.splits.iter().flatten())
                .with_gpu(k.gpu_loops.iter().flatten());
            let _ = write!(out, "{summary}");
        }
        None => {
            let _ = writeln!(out, "    loops: not recorded (saved by an older version)");
        }
    }
    // A column per backend, and per narrower width of the Parallel variant recorded anywhere.
    let columns = report::backend_columns(k.buckets.iter().flat_map(|b| b.backends.iter().filter_map(|t| t.threads)));
    let _ = write!(out, "    {:>27}", "sizes");
    for &(backend, threads) in &columns {
        let _ = write!(out, "  {:>12}", report::backend_label(backend, threads));
    }
    let _ = writeln!(out, "  chosen");
    for b in &k.buckets {
        let sizes = format!("{}..={}", thousands(b.sizes[0]), thousands(b.sizes[1]));
        let _ = write!(out, "    {sizes:>27}");
        for &(backend, threads) in &columns {
            let cell = b.median_on(backend, threads).map_or("-".to_owned(), duration);
            let _ = write!(out, "  {cell:>12}");
        }
        let chosen = b.chosen_label().unwrap_or_else(|| "exploring".to_owned());
        let _ = writeln!(out, "  {chosen}");
    }
    if k.buckets.is_empty() {
        let _ = writeln!(out, "    no buckets");
    }
    for b in &k.buckets {
        excluded(out, b);
    }
    for b in &k.buckets {
        transfers(out, b);
    }
    for c in &k.crossovers {
        let _ = writeln!(out, "    {}", c.sentence());
    }
}

/// "moved 2,049..=4,096: 200 GPU calls, 1.00 submission per call, 8.0 MiB up, 800 B down, 2% of GPU time moving data"
fn transfers(out: &mut String, b: &Bucket) {
    let Some(t) = &b.transfers else { return };
    let mut calls = format!("{} GPU call{}", thousands(t.gpu_calls as usize), if t.gpu_calls == 1 { "" } else { "s" });
    if t.cpu_calls > 0 {
        let _ = write!(
            calls,
            " and {} CPU call{} downloading data kept on the device",
            thousands(t.cpu_calls as usize),
            if t.cpu_calls == 1 { "" } else { "s" }
        );
    }
    let per_call = t.submissions as f64 / (t.gpu_calls + t.cpu_calls).max(1) as f64;
    let share = t.moving_share.map_or(String::new(), |s| format!(", {:.0}% of GPU time moving data", 100.0 * s));
    let _ = writeln!(
        out,
        "    moved {}..={}: {calls}, {per_call:.2} submission{} per call, {} up, {} down{share}",
        thousands(b.sizes[0]),
        thousands(b.sizes[1]),
        if per_call == 1.0 { "" } else { "s" },
        bytes(t.bytes_up),
        bytes(t.bytes_down),
    );
}

/// "verify excluded SIMD from 8,192..=16,383: at 9,000 elements its result was off Scalar's by up to 5.0e-1"
fn excluded(out: &mut String, b: &Bucket) {
    for e in &b.excluded {
        let _ = writeln!(
            out,
            "    verify excluded {} from {}..={}: at {} elements its result was off Scalar's by up to {:.1e}",
            e.backend,
            thousands(b.sizes[0]),
            thousands(b.sizes[1]),
            thousands(e.size),
            e.largest_error
        );
    }
}
