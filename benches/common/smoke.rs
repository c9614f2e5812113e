//! Smoke mode, shared by every bench: run each bench's every path once, on its
//! smallest inputs, in seconds, so that CI notices a bench that panics
//! (`scripts/bench-smoke`; BENCHMARKS.md, "Smoke runs").
//!
//! A bench runs in smoke mode when its command line has `--test`
//! (`cargo bench --bench NAME -- --test`) or lacks `--bench` (`cargo test
//! --benches`, which builds without optimisation): the convention criterion
//! follows, so a criterion bench's measured routines run once each. A bench's
//! child processes take their parent's mode from [`VAR`] ([`pass_to`]).
//!
//! Each count, duration and size a bench chooses goes through [`pick`]
//! (`pick(ROUNDS, 1)`), so a new case, column or group is covered in both
//! modes by the code that runs it. Smoke figures mean nothing and are labelled so.

use std::process::Command;
use std::sync::OnceLock;

/// Carries the mode to a bench's child processes: `1` smoke, `0` measuring.
pub(crate) const VAR: &str = "ADAPTIVE_KERNEL_BENCH_SMOKE";

/// Whether this run is a smoke run (see the module docs). Says so once on stderr.
pub(crate) fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        let args: Vec<String> = std::env::args().collect();
        let has = |flag: &str| args.iter().any(|a| a == flag);
        let on = match std::env::var(VAR).as_deref() {
            Ok("1") => true,
            Ok("0") => false,
            _ => has("--test") || !has("--bench"),
        };
        if on {
            eprintln!("smoke run ({VAR}=1, `--test`, or no `--bench`): every path once, figures meaningless");
        }
        on
    })
}

/// `full` in a measuring run, `smoke` in a smoke run.
pub(crate) fn pick<T>(full: T, smoke: T) -> T {
    if on() {
        smoke
    } else {
        full
    }
}

/// Gives a child process of this bench the parent's mode.
#[allow(dead_code, reason = "only the benches that start child processes call it")]
pub(crate) fn pass_to(child: &mut Command) -> &mut Command {
    child.env(VAR, if on() { "1" } else { "0" })
}
