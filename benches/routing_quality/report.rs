//! Printing and writing the results, and the machine they were measured on.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::kernels::KERNELS;
use crate::tally::{Strategy, Tally};

pub(crate) fn rows_json(rows: &[(Strategy, Tally, Vec<Tally>)]) -> Value {
    rows.iter()
        .map(|(pol, all, per)| {
            let per: serde_json::Map<String, Value> = KERNELS
                .iter()
                .zip(per)
                .filter(|(_, t)| t.calls > 0)
                .map(|(k, t)| (k.label().to_owned(), json!(t.total / t.oracle)))
                .collect();
            (pol.label(), json!({ "all": all.json(), "ratio_per_kernel": per }))
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

pub(crate) fn print_rows(pass: &str, rows: &[(Strategy, Tally, Vec<Tally>)], only: &[Strategy]) {
    for (pol, t, per) in rows.iter().filter(|r| only.contains(&r.0)) {
        let covered = per.iter().filter(|t| t.calls > 0).count();
        let label = if *pol == Strategy::Adaptive { format!("adaptive {pass}") } else { pol.label() };
        println!(
            "  {label:<22} {covered:>2}/9  {:>9.3} s  {:>9.3} s  {:>7.3}x  {:>7.3}x  {:>5.1}%",
            t.total / 1e9,
            t.oracle / 1e9,
            t.total / t.oracle,
            t.trimmed / t.trimmed_oracle,
            100.0 * t.extrapolated / t.total
        );
    }
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

pub(crate) fn out_path() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("routing_quality.json")
}

pub(crate) fn letter(j: usize) -> char {
    ['S', 'V', 'P', 'G', 'T'][j]
}
