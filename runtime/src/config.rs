//! The environment variables that steer the runtime, parsed in one place.
//!
//! | variable | meaning |
//! | --- | --- |
//! | `ADAPTIVE_KERNEL_BACKEND` | force `scalar`, `simd`, `parallel` or `gpu` for every kernel |
//! | `ADAPTIVE_KERNEL_GPU` | `off`, `on` (hardware adapters only, the default), `software` (also lavapipe/llvmpipe) |
//! | `ADAPTIVE_KERNEL_HISTORY` | history file path; `off` disables persistence |
//! | `ADAPTIVE_KERNEL_LOG` | decision log level for [`crate::init_logging`] |
//! | `ADAPTIVE_KERNEL_MODE` | `learn` (default), `frozen` or `verify`: see [`Mode`]; also [`set_mode`] in code |
//! | `ADAPTIVE_KERNEL_THREADS` | threads of the Parallel backend (a positive number; unset: rayon's global pool) |
//!
//! Each is read once, on the cold path, and cached. A bad value is reported
//! once (a `tracing` warning and a line on stderr) with the accepted values and
//! then treated as unset, so a typo never takes a program down; the `parse_*`
//! functions return the typed [`ConfigError`] for callers that want to fail hard.

use std::fmt;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::backend::Backend;

/// Name of the variable that forces one backend for every kernel.
pub const ENV_BACKEND: &str = "ADAPTIVE_KERNEL_BACKEND";
/// Name of the variable that sets the GPU adapter policy.
pub const ENV_GPU: &str = "ADAPTIVE_KERNEL_GPU";
/// Name of the variable that sets the history file (or `off`).
pub const ENV_HISTORY: &str = "ADAPTIVE_KERNEL_HISTORY";
/// Name of the variable that sets the bundled subscriber's log level.
pub const ENV_LOG: &str = "ADAPTIVE_KERNEL_LOG";
/// Name of the variable that sets the Parallel backend's thread count.
pub const ENV_THREADS: &str = "ADAPTIVE_KERNEL_THREADS";
/// Name of the variable that sets the routing [`Mode`].
pub const ENV_MODE: &str = "ADAPTIVE_KERNEL_MODE";

/// How the router treats what it has learned (`ADAPTIVE_KERNEL_MODE`, or [`set_mode`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Explore, measure, settle, correct and save. The default.
    #[default]
    Learn,
    /// Route by the saved table only: no exploration, no timed calls, no writes to the
    /// history file. A bucket the table has no decision for uses the cold-start prior
    /// (said once per kernel), computed from the saved calibration, or fixed
    /// conservative figures when none was saved, so two runs with the same file make
    /// the same decisions. For CI, benchmarks and reproducible experiments.
    Frozen,
    /// Learn, and while a bucket is being explored compare each variant's result with
    /// the Scalar variant's on the same inputs; a variant that disagrees beyond the
    /// kernel's tolerance is excluded from that bucket (reported once, kept in the
    /// history file). Applies to kernels whose signature can be verified (see the
    /// `verify` key of `#[adaptive_kernel]`).
    Verify,
}

impl Mode {
    /// The mode's name, as `ADAPTIVE_KERNEL_MODE` spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Learn => "learn",
            Mode::Frozen => "frozen",
            Mode::Verify => "verify",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Which wgpu adapters count as a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GpuPolicy {
    /// Never use a GPU; GPU variants run their SIMD fallback.
    Off,
    /// Hardware adapters only (discrete, integrated or virtual GPUs). The default.
    #[default]
    On,
    /// Also accept software rasterisers (lavapipe, llvmpipe, WARP), which report
    /// `DeviceType::Cpu`. Lets tests exercise the GPU path on machines without a GPU.
    Software,
}

/// Where timing history is kept between runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HistorySetting {
    /// The default file under `$XDG_CACHE_HOME/adaptive-kernel/` (or `~/.cache/…`).
    Default,
    /// An explicit file.
    Path(PathBuf),
    /// No persistence: learn within the process only.
    Off,
}

/// An environment variable holds a value the runtime does not accept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The variable's name.
    pub variable: &'static str,
    /// The value found.
    pub value: String,
    /// The accepted values.
    pub expected: &'static str,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={:?} is not understood; expected {} (the variable is ignored)",
            self.variable, self.value, self.expected
        )
    }
}

impl std::error::Error for ConfigError {}

/// Parses a value of `ADAPTIVE_KERNEL_BACKEND`. An empty value means "not forced".
pub fn parse_backend(value: &str) -> Result<Option<Backend>, ConfigError> {
    if value.trim().is_empty() {
        return Ok(None);
    }
    value.parse().map(Some).map_err(|_| ConfigError {
        variable: ENV_BACKEND,
        value: value.to_owned(),
        expected: "`scalar`, `simd`, `parallel` or `gpu`",
    })
}

/// Parses a value of `ADAPTIVE_KERNEL_GPU`. An empty value means the default, `on`.
pub fn parse_gpu_policy(value: &str) -> Result<GpuPolicy, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "on" => Ok(GpuPolicy::On),
        "off" => Ok(GpuPolicy::Off),
        "software" => Ok(GpuPolicy::Software),
        _ => Err(ConfigError { variable: ENV_GPU, value: value.to_owned(), expected: "`off`, `on` or `software`" }),
    }
}

/// Parses a value of `ADAPTIVE_KERNEL_HISTORY`: `off`, or a path. Empty means the default file.
pub fn parse_history(value: &str) -> HistorySetting {
    match value.trim() {
        "" => HistorySetting::Default,
        v if v.eq_ignore_ascii_case("off") => HistorySetting::Off,
        v => HistorySetting::Path(PathBuf::from(v)),
    }
}

fn read_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Reports a bad value once per process per variable, then it is treated as unset.
fn report(err: &ConfigError) {
    tracing::warn!(target: "adaptive_kernel", variable = err.variable, value = %err.value, "{err}");
    eprintln!("adaptive-kernel: {err}");
}

/// The backend forced by `ADAPTIVE_KERNEL_BACKEND`, read once per process.
pub fn forced_backend() -> Option<Backend> {
    static CACHE: OnceLock<Option<Backend>> = OnceLock::new();
    *CACHE.get_or_init(|| {
        let raw = read_env(ENV_BACKEND)?;
        parse_backend(&raw).unwrap_or_else(|e| {
            report(&e);
            None
        })
    })
}

/// The GPU adapter policy from `ADAPTIVE_KERNEL_GPU`, read once per process.
pub fn gpu_policy() -> GpuPolicy {
    static CACHE: OnceLock<GpuPolicy> = OnceLock::new();
    *CACHE.get_or_init(|| match read_env(ENV_GPU) {
        None => GpuPolicy::On,
        Some(raw) => parse_gpu_policy(&raw).unwrap_or_else(|e| {
            report(&e);
            GpuPolicy::On
        }),
    })
}

/// What `ADAPTIVE_KERNEL_HISTORY` accepts, as messages spell it.
const HISTORY_EXPECTED: &str = "a history file path, or `off` to keep no history";

/// The history setting from `ADAPTIVE_KERNEL_HISTORY`, read once per process.
///
/// Set but empty (or blank) is most likely a script's unset variable: it is
/// reported once and treated as unset (the default file).
pub fn history_setting() -> HistorySetting {
    static CACHE: OnceLock<HistorySetting> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            let Some(raw) = read_env(ENV_HISTORY) else { return HistorySetting::Default };
            let setting = parse_history(&raw);
            if raw.trim().is_empty() {
                report(&ConfigError { variable: ENV_HISTORY, value: raw, expected: HISTORY_EXPECTED });
            }
            setting
        })
        .clone()
}

/// Parses a value of `ADAPTIVE_KERNEL_THREADS`: a positive integer, or empty
/// for the default (`None`: rayon's global pool).
pub fn parse_threads(value: &str) -> Result<Option<NonZeroUsize>, ConfigError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    trimmed.parse::<NonZeroUsize>().map(Some).map_err(|_| ConfigError {
        variable: ENV_THREADS,
        value: value.to_owned(),
        expected: "a positive whole number of threads such as `4`, or unset for the default \
                   (rayon's global pool: `RAYON_NUM_THREADS`, else the available parallelism)",
    })
}

/// The Parallel backend's thread count from `ADAPTIVE_KERNEL_THREADS`, read
/// once per process; `None` when unset, empty or bad (reported once).
pub fn configured_threads() -> Option<NonZeroUsize> {
    static CACHE: OnceLock<Option<NonZeroUsize>> = OnceLock::new();
    *CACHE.get_or_init(|| {
        let raw = read_env(ENV_THREADS)?;
        parse_threads(&raw).unwrap_or_else(|e| {
            report(&e);
            None
        })
    })
}

/// Parses a value of `ADAPTIVE_KERNEL_MODE`. An empty value means the default, `learn`.
pub fn parse_mode(value: &str) -> Result<Mode, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "learn" => Ok(Mode::Learn),
        "frozen" => Ok(Mode::Frozen),
        "verify" => Ok(Mode::Verify),
        _ => {
            Err(ConfigError { variable: ENV_MODE, value: value.to_owned(), expected: "`learn`, `frozen` or `verify`" })
        }
    }
}

static MODE: OnceLock<Mode> = OnceLock::new();

/// The routing mode: what [`set_mode`] chose, else `ADAPTIVE_KERNEL_MODE`, read once
/// per process (a bad value is reported once and means `learn`).
pub fn mode() -> Mode {
    *MODE.get_or_init(|| match read_env(ENV_MODE) {
        None => Mode::Learn,
        Some(raw) => parse_mode(&raw).unwrap_or_else(|e| {
            report(&e);
            Mode::Learn
        }),
    })
}

/// Chooses the routing mode in code, overriding `ADAPTIVE_KERNEL_MODE`. Must be
/// called before the first adaptive kernel runs (or anything else reads the mode).
///
/// Returns `false`, changing nothing, when the mode was already fixed to another one.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::config::{mode, set_mode, Mode};
/// assert!(set_mode(Mode::Frozen));
/// assert_eq!(mode(), Mode::Frozen);
/// assert!(!set_mode(Mode::Learn), "fixed for the process");
/// ```
pub fn set_mode(mode: Mode) -> bool {
    *MODE.get_or_init(|| mode) == mode
}

/// Parses a value of `ADAPTIVE_KERNEL_LOG`.
pub fn parse_log_level(value: &str) -> Result<tracing::Level, ConfigError> {
    value.trim().parse().map_err(|_| ConfigError {
        variable: ENV_LOG,
        value: value.to_owned(),
        expected: "`error`, `warn`, `info`, `debug` or `trace`",
    })
}
