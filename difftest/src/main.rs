//! `difftest`: generates, builds and runs random kernels against their plain copies.
//! See the library's docs (`difftest`) and `docs/guide/attribute.md`, "What the tester checks".

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use difftest::runner::{self, Config, Outcome};

/// Generates random kernels, writes them plain and annotated into a crate, builds it
/// under `#![deny(warnings)]`, forces every variant and compares it with the plain copy.
#[derive(Parser, Debug)]
#[command(name = "difftest")]
struct Args {
    /// The first seed (default: a fresh one from the clock, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// How many kernels to run in all (across seeds, `--batch` per seed).
    #[arg(long, default_value_t = 300)]
    kernels: usize,
    /// The first kernel's index in the first seed (to rerun one kernel: `--seed 206 --first 72
    /// --kernels 1`).
    #[arg(long, default_value_t = 0)]
    first: usize,
    /// Run for this many minutes instead, seed after seed (a nightly run).
    #[arg(long)]
    minutes: Option<f64>,
    /// Kernels per generated crate (one build each).
    #[arg(long, default_value_t = 300)]
    batch: usize,
    /// Build the generated crate in debug (the default is release).
    #[arg(long)]
    debug: bool,
    /// Also check the generated crate with clippy's default lints.
    #[arg(long)]
    clippy: bool,
    /// Minimisation rounds per failing kernel (0: none).
    #[arg(long, default_value_t = 6)]
    minimise: usize,
    /// Where the generated crates go (default: target/difftest).
    #[arg(long)]
    work: Option<PathBuf>,
    /// Only write the crate of the first batch into this folder, to read or build by hand.
    #[arg(long)]
    emit: Option<PathBuf>,
    /// Seconds a generated program may run before it counts as hung.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
}

fn main() {
    let args = Args::parse();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("the repository").to_path_buf();
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo.join("target"));
    let cfg = Config {
        work: args.work.clone().unwrap_or_else(|| target.join("difftest")),
        repo,
        target,
        release: !args.debug,
        clippy: args.clippy,
        minimise_rounds: args.minimise,
        timeout: Duration::from_secs(args.timeout),
    };
    let fresh = args.seed.is_none();
    if let Some(dir) = &args.emit {
        let seed = args.seed.unwrap_or(0);
        let count = args.kernels.min(args.batch);
        let kernels: Vec<_> = (args.first..args.first + count).map(|i| difftest::gen::kernel(seed, i)).collect();
        if let Err(e) = runner::write_crate(&cfg, dir, seed, &kernels) {
            eprintln!("difftest: could not write {}: {e}", dir.display());
            std::process::exit(2);
        }
        println!("difftest: wrote {} kernels of seed {seed} to {}", kernels.len(), dir.display());
        return;
    }
    let mut seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64 % 1_000_000_007)
            .unwrap_or(1)
    });
    println!("difftest: seed={seed}{}", if fresh { " (fresh: rerun with --seed to reproduce)" } else { "" });
    let started = Instant::now();
    let deadline = args.minutes.map(|m| Duration::from_secs_f64(m * 60.0));
    let mut out = Outcome::default();
    let mut seeds = Vec::new();
    // Only the first batch starts past kernel 0.
    let mut first = args.first;
    loop {
        let left = match deadline {
            Some(_) => args.batch,
            None => args.kernels.saturating_sub(out.kernels).min(args.batch),
        };
        if left == 0 {
            break;
        }
        seeds.push(seed);
        println!("difftest: batch seed={seed} kernels={left}");
        runner::batch(&cfg, seed, first, left, &mut out);
        first = 0;
        if deadline.is_some_and(|d| started.elapsed() >= d) {
            break;
        }
        seed = seed.wrapping_add(1);
    }
    summary(&out, &seeds, started.elapsed());
    if !out.failures.is_empty() {
        std::process::exit(1);
    }
}

fn summary(out: &Outcome, seeds: &[u64], took: Duration) {
    println!("difftest: seeds {seeds:?}");
    let shapes: Vec<String> = out.shapes.iter().map(|(s, n)| format!("{s}={n}")).collect();
    println!("difftest: kernels by shape: {}", shapes.join(" "));
    let variants: Vec<String> = out.variants.iter().map(|(v, n)| format!("{v}={n}")).collect();
    println!("difftest: comparisons by variant: {}", variants.join(" "));
    println!(
        "difftest: {} kernels, {} comparisons, {} unchecked, {} failures; built {:.0} s, ran {:.0} s, {:.0} s in all",
        out.kernels,
        out.checks,
        out.unchecked,
        out.failures.len(),
        out.build_s,
        out.run_s,
        took.as_secs_f64()
    );
    println!("{} passed, {} failed", out.kernels - failed_kernels(out), failed_kernels(out));
}

fn failed_kernels(out: &Outcome) -> usize {
    let mut k: Vec<&str> = out.failures.iter().map(|f| f.kernel.as_str()).collect();
    k.sort_unstable();
    k.dedup();
    k.len().min(out.kernels)
}
