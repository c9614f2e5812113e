//! `adaptive-kernel`: inspect and manage the history file that adaptive kernels
//! learn into.
//!
//! ```sh
//! cargo install --path . --features cli        # or: cargo run --release --features cli --bin adaptive-kernel -- …
//! adaptive-kernel report                       # per machine entry and kernel: the per-bucket table, exclusions
//! adaptive-kernel report --kernel tour::dot    # one kernel
//! adaptive-kernel report --json                # the same as JSON (schema below)
//! adaptive-kernel report --plot docs/x.svg     # time against size, log–log, one panel per kernel
//! adaptive-kernel calibrate                    # measure the cost model now, save it for this machine
//! adaptive-kernel clear [--kernel NAME]        # remove entries (under the library's lock)
//! adaptive-kernel export [--kernel NAME] > wisdom.json   # the table to ship with a program
//! adaptive-kernel import wisdom.json           # merge it in (under the library's lock)
//! ```
//!
//! `export` prints a history file (format 2) holding every machine's entry, or
//! with `--kernel` only that kernel's tables; `import` merges one into the
//! history file: entries it lacks are added, and where both hold a bucket of
//! the same kernel version the imported one wins (the rules are those of the
//! library's `import_history`). A fleet tunes once and ships the table.
//!
//! Every subcommand takes `--history PATH`; the default is the file the library
//! uses: `ADAPTIVE_KERNEL_HISTORY` if set, else
//! `adaptive-kernel/history.json` in the platform's user cache directory
//! (`$XDG_CACHE_HOME` or `~/.cache` on Linux; where there is none, pass `--history`).
//!
//! # Exit status
//!
//! 0 on success; 2 when the history file is corrupt, not a history file, from a
//! newer version, unreadable or cannot be written (the message names the file and
//! what is wrong; the file is not modified), and for a usage error; 1 for other
//! failures (`--kernel` names no kernel in the file, the plot cannot be written).
//!
//! # `report --json`, schema 1
//!
//! One JSON object. Fields are only added within a schema version; a removed or
//! changed field bumps `schema`. Times are nanoseconds, backends are named
//! `"Scalar"`, `"Simd"`, `"Parallel"` and `"Gpu"` (as in the history file),
//! complexities `"Low"`, `"Medium"`, `"High"`.
//!
//! ```json
//! {
//!   "schema": 1,
//!   "history": "/home/me/.cache/adaptive-kernel/history.json",
//!   "exists": true,                       // false: no file yet, "machines" is empty
//!   "format_version": 2,                  // the history file's format (null when none)
//!   "machines": [                         // this machine's entry first, then by key
//!     {
//!       "key": "9b1c0d6e2f3a4b5c",        // hash of CPU, CPU features, crate version (and profile, if debug)
//!       "this_machine": true,
//!       "cpu": "x86_64 AMD EPYC 7B13",
//!       "cpu_features": ["sse4.2", "avx", "avx2", "fma"],
//!       "gpu": null,                      // or "adapter | driver | info | API | vendor:device"
//!       "crate_version": "0.1.0",
//!       "profile": "release",             // the kind of build that recorded it: "release" or "debug"
//!       "nearest": null,                  // another entry near this machine: { "rank": 1, "rule": "same_features" }
//!       "calibration": {                  // null when none was saved; SI units
//!         "scalar_flops": 2.1e9, "simd_flops": 4.5e10, "mem_bandwidth": 1.2e10,
//!         "gpu_flops": 1e12, "transfer_bandwidth": 8e9, "gpu_latency": 1e-4,
//!         "cpu_call_latency": 6e-8, "gpu_available": false,
//!         "parallel_threads": 2.0, "fork_join_latency": 2e-5
//!       },
//!       "kernels": [                      // by name
//!         {
//!           "name": "tour::dot",
//!           "complexity": "Medium",
//!           "token_hash": "9f0c5e1a2b3c4d5e",
//!           "loops": [                    // float reductions of the body; null: not recorded
//!             { "line": 49, "idiom": "for range +=", "variants": ["Simd"], "reason": "" },
//!             { "line": 58, "idiom": "iter.sum()", "variants": [], "reason": "effect" }
//!           ],
//!           "splits": [                   // top-level loops, split across threads in Parallel or not; null: not recorded
//!             { "line": 49, "idiom": "for range", "reason": "" }
//!           ],
//!           "buckets": [                  // smallest sizes first
//!             {
//!               "sizes": [2049, 4096],    // first and last size, inclusive
//!               "typical_size": 4096,
//!               "chosen": "Simd",         // null while exploring
//!               "backends": [             // measured ones, in Scalar, Simd, Parallel, Gpu order
//!                 { "backend": "Scalar", "count": 4, "median_ns": 2510.0 },
//!                 { "backend": "Simd", "count": 52, "median_ns": 402.5 }
//!               ],
//!               "excluded": [             // backends `verify` excluded here (their result disagreed with Scalar's)
//!                 { "backend": "Gpu", "size": 3000, "largest_error": 0.5 }
//!               ],
//!               "transfers": {            // what the calls moved between host and device; absent when nothing
//!                 "gpu_calls": 200, "cpu_calls": 0, "submissions": 200,
//!                 "bytes_up": 8388608, "bytes_down": 800,
//!                 "moving_share": 0.02      // of the GPU calls' time, estimated; null without a GPU call
//!               }
//!             }
//!           ],
//!           "crossovers": [               // where the chosen backend changes
//!             { "size": 2049, "below": 2048, "from": "Scalar", "to": "Simd", "tie": false }
//!           ]
//!         }
//!       ]
//!     }
//!   ]
//! }
//! ```
//!
//! `transfers` (added in schema 1) counts the last run's calls of the bucket that
//! moved data: GPU calls, and CPU calls of a `k::resident` entry that first
//! downloaded data kept on the device; bytes each way and submissions are
//! counted, the share of the GPU calls' time spent moving data is estimated from
//! the bytes and the transfer bandwidth the cost model measured.
//!
//! A crossover compares consecutive *settled* buckets: `to` is chosen from
//! `size` on, `from` was chosen up to `below` (buckets between them were not
//! measured or are still exploring). `tie` (added in schema 1) is `true` when
//! `from` and `to` measured within the router's tie band of each other from
//! `size` on (`adaptive_kernel::report::TIE_BAND`): the choice between them is
//! the router's tie-break or noise, not a crossover, and the table and the plot
//! say "tie". A tie of the same two backends right after another is not listed
//! again.
//!
//! `nearest` marks the other machines' entries a program on this machine
//! starts from where its own entry has no decision (the library's
//! `HistoryFile::nearest_entries`): `rank` 1 is tried first for each kernel,
//! `rule` is `same_cpu` (same CPU model and features, another crate version),
//! `same_features` (another CPU model with the same SIMD features) or
//! `same_gpu` (same GPU adapter and driver; GPU decisions only). The table
//! says the same in words, and says when this machine has no entry.

mod model;
mod plot;
mod text;
mod units;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use adaptive_kernel::config::{self, HistorySetting};
use adaptive_kernel::cost::CostModel;
use adaptive_kernel::history::{Fingerprint, HistoryError};
use clap::{Args, Parser, Subcommand};

use model::Report;

/// Inspect and manage the history file adaptive kernels learn into.
#[derive(Debug, Parser)]
#[command(name = "adaptive-kernel", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print what was learned: per machine entry and kernel, each size bucket's
    /// median time per backend and the chosen backend, the variants `verify`
    /// excluded, and the crossovers and ties; and which entries a program on this
    /// machine starts from where its own entry has no decision.
    Report {
        /// Only this kernel (its full name, as printed by `report`).
        #[arg(long, value_name = "NAME")]
        kernel: Option<String>,
        /// Print JSON (schema 1, documented in the guide's CLI chapter) instead of a table.
        #[arg(long, conflicts_with = "plot")]
        json: bool,
        /// Write an SVG plot instead: time against size per backend, log–log, one
        /// panel per kernel, chosen ranges shaded, crossovers and ties marked.
        #[arg(long, value_name = "OUT.svg")]
        plot: Option<PathBuf>,
        #[command(flatten)]
        history: HistoryArg,
    },
    /// Measure the cost model's figures on this machine now (CPU, and the GPU when
    /// a usable one exists under ADAPTIVE_KERNEL_GPU), print them and save them into
    /// this machine's entry, so programs start with them instead of calibrating.
    Calibrate {
        #[command(flatten)]
        history: HistoryArg,
    },
    /// Remove entries from the history file: every machine's entry, or one kernel's
    /// table from every entry. Takes the library's lock (`<file>.lock`).
    Clear {
        /// Remove only this kernel's tables.
        #[arg(long, value_name = "NAME")]
        kernel: Option<String>,
        #[command(flatten)]
        history: HistoryArg,
    },
    /// Print the history file's tables as JSON (a history file another machine can
    /// import): every machine's entry, or one kernel's tables.
    Export {
        /// Only this kernel's tables.
        #[arg(long, value_name = "NAME")]
        kernel: Option<String>,
        #[command(flatten)]
        history: HistoryArg,
    },
    /// Merge an exported (or any) history file into the history file, under the
    /// library's lock: missing entries are added, imported buckets replace the same
    /// buckets of the same kernel version, everything else is kept.
    Import {
        /// The file to merge in.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        history: HistoryArg,
    },
}

#[derive(Debug, Args)]
struct HistoryArg {
    /// The history file [default: $ADAPTIVE_KERNEL_HISTORY, else
    /// $XDG_CACHE_HOME/adaptive-kernel/history.json, else
    /// $HOME/.cache/adaptive-kernel/history.json]
    #[arg(long, value_name = "PATH")]
    history: Option<PathBuf>,
}

/// A failure, with its exit status.
struct Failure {
    status: u8,
    message: String,
}

impl From<HistoryError> for Failure {
    fn from(e: HistoryError) -> Failure {
        let message = match e {
            HistoryError::Corrupt { path, reason } => {
                format!("history file {} is corrupt: {reason}; it was not modified", path.display())
            }
            HistoryError::Refused { path, reason } => {
                format!("history file {}: {reason}; it was not modified", path.display())
            }
            HistoryError::Io { path, source } => format!("history file {}: {source}", path.display()),
            other => other.to_string(),
        };
        Failure { status: 2, message }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Report { kernel, json, plot, history } => {
            history.path().and_then(|p| report(&p, kernel.as_deref(), json, plot))
        }
        Command::Calibrate { history } => history.path().and_then(|p| calibrate(&p)),
        Command::Clear { kernel, history } => history.path().and_then(|p| clear(&p, kernel.as_deref())),
        Command::Export { kernel, history } => history.path().and_then(|p| export(&p, kernel.as_deref())),
        Command::Import { file, history } => history.path().and_then(|p| import(&p, &file)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.status)
        }
    }
}

impl HistoryArg {
    /// `--history`, else the library's file; a failure (status 2) when there is none.
    fn path(self) -> Result<PathBuf, Failure> {
        let none = |why: &str| Failure { status: 2, message: format!("no history file: {why}; pass --history PATH") };
        match self.history {
            Some(p) => Ok(p),
            None => match config::history_setting() {
                HistorySetting::Path(p) => Ok(p),
                HistorySetting::Default => adaptive_kernel::history::default_path()
                    .ok_or_else(|| none(&adaptive_kernel::history::HistoryStatus::NoLocation.to_string())),
                HistorySetting::Off => Err(none("ADAPTIVE_KERNEL_HISTORY is `off`")),
            },
        }
    }
}

fn report(path: &Path, kernel: Option<&str>, json: bool, plot: Option<PathBuf>) -> Result<(), Failure> {
    let file = adaptive_kernel::history::read_history(path)?;
    let report = Report::new(path, file, kernel);
    if let Some(name) = kernel {
        if report.kernel_names().is_empty() {
            return Err(unknown_kernel(path, name)?);
        }
    }
    if let Some(out) = plot {
        let svg = plot::svg(&report).map_err(|message| Failure { status: 1, message })?;
        std::fs::write(&out, svg)
            .map_err(|e| Failure { status: 1, message: format!("cannot write {}: {e}", out.display()) })?;
        println!(
            "wrote {} ({} kernels)",
            out.display(),
            report.machines.iter().map(|m| m.kernels.len()).sum::<usize>()
        );
    } else if json {
        let doc = serde_json::to_string_pretty(&report).expect("the report serializes");
        println!("{doc}");
    } else {
        print!("{}", text::render(&report));
    }
    Ok(())
}

/// The failure (status 1) for `--kernel NAME` naming no kernel in the file, listing those it holds.
fn unknown_kernel(path: &Path, name: &str) -> Result<Failure, Failure> {
    let all = Report::new(path, adaptive_kernel::history::read_history(path)?, None);
    let known = all.kernel_names().join(", ");
    let known = if known.is_empty() { "none".to_owned() } else { known };
    Ok(Failure { status: 1, message: format!("no kernel named `{name}` in {} (kernels: {known})", path.display()) })
}

fn calibrate(path: &Path) -> Result<(), Failure> {
    // Refuse a bad file before spending the time to measure.
    adaptive_kernel::history::read_history(path)?;
    let started = Instant::now();
    let model = CostModel::calibrate();
    let took = started.elapsed();
    let p = model.params();
    let fp = Fingerprint::current();
    println!("calibrated in {:.2} s on {}", took.as_secs_f64(), fp.cpu);
    println!("  Scalar throughput   {:>10.2} GFLOP/s", p.scalar_flops / 1e9);
    println!("  SIMD throughput     {:>10.2} GFLOP/s", p.simd_flops / 1e9);
    println!("  memory bandwidth    {:>10.2} GB/s", p.mem_bandwidth / 1e9);
    println!("  CPU call latency    {:>10.1} ns", p.cpu_call_latency * 1e9);
    if p.gpu_available {
        println!("  GPU throughput      {:>10.2} GFLOP/s", p.gpu_flops / 1e9);
        println!("  GPU transfer        {:>10.2} GB/s", p.transfer_bandwidth / 1e9);
        println!("  GPU call latency    {:>10.1} µs", p.gpu_latency * 1e6);
        println!("  GPU                 {}", adaptive_kernel::ops::gpu::health());
    } else {
        println!("  GPU                 {}", adaptive_kernel::ops::gpu::health());
    }
    adaptive_kernel::history::save_calibration(path, p)?;
    println!("saved into {} (this machine's entry {})", path.display(), fp.key());
    Ok(())
}

fn clear(path: &Path, kernel: Option<&str>) -> Result<(), Failure> {
    let removed = adaptive_kernel::history::clear_history(path, kernel)?;
    match kernel {
        None => {
            println!("removed {removed} machine entr{} from {}", if removed == 1 { "y" } else { "ies" }, path.display())
        }
        Some(k) => println!(
            "removed kernel `{k}` from {removed} machine entr{} in {}",
            if removed == 1 { "y" } else { "ies" },
            path.display()
        ),
    }
    Ok(())
}

fn export(path: &Path, kernel: Option<&str>) -> Result<(), Failure> {
    let file = adaptive_kernel::history::export_history(path, kernel)?;
    if let Some(name) = kernel {
        if file.machines.is_empty() {
            return Err(unknown_kernel(path, name)?);
        }
    }
    let doc = serde_json::to_string_pretty(&file).expect("a history file serializes");
    println!("{doc}");
    Ok(())
}

fn import(path: &Path, from: &Path) -> Result<(), Failure> {
    let s = adaptive_kernel::history::import_history(path, from)?;
    if s.is_empty() {
        println!("{} holds everything in {} already; nothing changed", path.display(), from.display());
    } else {
        println!(
            "merged {} into {}: {} machine entries added, {} kernel tables added, {} buckets replaced, {} added",
            from.display(),
            path.display(),
            s.machines_added,
            s.kernels_added,
            s.buckets_replaced,
            s.buckets_added
        );
    }
    Ok(())
}
