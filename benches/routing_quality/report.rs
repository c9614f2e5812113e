//! Printing and writing the results, and the machine they were measured on.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::kernels::KERNELS;
use crate::tally::{Strategy, Tally};

pub(crate) fn rows_json(rows: &[(Strategy, Tally, Vec<Tally>)]) -> Value {
    rows.iter()
        .map(|(pol, all, per)| {
            let covered = || KERNELS.iter().zip(per).filter(|(_, t)| t.calls > 0);
            let ratio: serde_json::Map<String, Value> =
                covered().map(|(k, t)| (k.label().to_owned(), json!(t.total / t.oracle))).collect();
            let exploring: serde_json::Map<String, Value> =
                covered().map(|(k, t)| (k.label().to_owned(), json!(t.exploring / t.oracle))).collect();
            (pol.label(), json!({ "all": all.json(), "ratio_per_kernel": ratio, "exploring_per_kernel": exploring }))
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

pub(crate) fn print_rows(pass: &str, rows: &[(Strategy, Tally, Vec<Tally>)], only: &[Strategy]) {
    for (pol, t, per) in rows.iter().filter(|r| only.contains(&r.0)) {
        let covered = per.iter().filter(|t| t.calls > 0).count();
        let label = if *pol == Strategy::Adaptive { format!("adaptive {pass}") } else { pol.label() };
        let exploring = if *pol == Strategy::Adaptive {
            format!("{:>7.1}%", 100.0 * t.exploring / t.oracle)
        } else {
            String::new()
        };
        println!(
            "  {label:<22} {covered:>2}/9  {:>9.3} s  {:>9.3} s  {:>7.3}x  {:>7.3}x  {:>5.1}%{exploring}",
            t.total / 1e9,
            t.oracle / 1e9,
            t.total / t.oracle,
            t.trimmed / t.trimmed_oracle,
            100.0 * t.extrapolated / t.total
        );
    }
}

/// The router against the oracle per kernel and in total, cold (pass 1), warm (pass 2) and
/// from a warm start (the child's `policies`), each with what its exploring calls cost
/// beyond the oracle, as a share of the oracle's time.
pub(crate) fn print_router(cold: &Value, warm: &Value, warm_start: Option<&Value>) {
    println!(
        "  {:<15} {:>8} {:>8} {:>8}   {:>8} {:>8} {:>8}",
        "kernel", "cold", "warm", "w.start", "explore", "explore", "explore"
    );
    let of = |v: Option<&Value>, key: &str, k: &str| {
        let a = v.map(|v| &v["adaptive"]);
        let x = a.and_then(|a| if k.is_empty() { a["all"][key].as_f64() } else { a[key][k].as_f64() });
        x.map_or(format!("{:>8}", "-"), |x| {
            if key.starts_with("exploring") {
                format!("{:>7.1}%", 100.0 * x)
            } else {
                format!("{x:>7.3}x")
            }
        })
    };
    let row = |label: &str, ratio: &str, exploring: &str, k: &str| {
        println!(
            "  {label:<15} {} {} {}   {} {} {}",
            of(Some(cold), ratio, k),
            of(Some(warm), ratio, k),
            of(warm_start, ratio, k),
            of(Some(cold), exploring, k),
            of(Some(warm), exploring, k),
            of(warm_start, exploring, k)
        );
    };
    for k in KERNELS {
        row(k.label(), "ratio_per_kernel", "exploring_per_kernel", k.label());
    }
    row("all", "ratio", "exploring_share", "");
}

pub(crate) fn print_per_kernel(rows: &[(Strategy, Tally, Vec<Tally>)]) {
    print!("  {:<15}", "kernel");
    for (pol, _, _) in rows {
        print!(" {:>9}", &pol.label()[..pol.label().len().min(9)]);
    }
    println!();
    for (ki, k) in KERNELS.iter().enumerate() {
        print!("  {:<15}", k.label());
        for (_, _, per) in rows {
            let t = per[ki];
            if t.calls > 0 {
                print!(" {:>9.2}", t.total / t.oracle);
            } else {
                print!(" {:>9}", "-");
            }
        }
        println!();
    }
}

pub(crate) fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_default()
}

pub(crate) fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Where a report named `name` goes: the target directory.
pub(crate) fn out_path(name: &str) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join(name)
}

pub(crate) fn letter(j: usize) -> char {
    ['S', 'V', 'P', 'G', 'T'][j]
}
