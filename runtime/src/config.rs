//! The settings that steer the runtime: the `ADAPTIVE_KERNEL_*` environment
//! variables, parsed in one place, and their equivalents in code.
//!
//! | variable | meaning | in code |
//! | --- | --- | --- |
//! | `ADAPTIVE_KERNEL_BACKEND` | force `scalar`, `simd`, `parallel` or `gpu` for every kernel, on every thread (the pool's workers included) | [`Settings::backend`] (every kernel), [`crate::Kernel::force`] (a kernel), [`crate::with_backend`] (a scope on one thread) |
//! | `ADAPTIVE_KERNEL_GPU` | `off`, `on` (hardware adapters only, the default), `software` (also lavapipe/llvmpipe) | [`Settings::gpu`] |
//! | `ADAPTIVE_KERNEL_HISTORY` | history file path; `off` disables persistence | [`Settings::history`], [`crate::set_history`] |
//! | `ADAPTIVE_KERNEL_LOG` | decision log level for [`crate::init_logging`] | your own `tracing` subscriber |
//! | `ADAPTIVE_KERNEL_MODE` | `learn` (default), `frozen` or `verify`: see [`Mode`] | [`Settings::mode`], [`set_mode`] |
//! | `ADAPTIVE_KERNEL_THREADS` | threads of the Parallel backend (a positive number; unset: rayon's global pool) | [`Settings::threads`] |
//! | — | silence every line the runtime writes to stderr | [`Settings::quiet`] |
//!
//! Each variable is read once, on the cold path, and cached. A bad value is
//! reported once (a `tracing` warning and a line on stderr) with the accepted
//! values and then treated as unset, so a typo never takes a program down; the
//! `parse_*` functions return the typed [`ConfigError`] for callers that want
//! to fail hard.
//!
//! # Who decides: the application, then libraries, then the environment
//!
//! A setting chosen in code wins over its variable. Code speaks at one of two
//! levels ([`Settings::application`], [`Settings::library`]): a library that
//! uses kernels states what it would like, and the application that links it
//! has the last word, whichever of them runs first. So, for the mode, history,
//! GPU, thread and backend settings:
//!
//! 1. the application's choice ([`Settings::application`]), the last one it made;
//! 2. else the first library's choice ([`Settings::library`], [`set_mode`],
//!    [`crate::set_history`]; a later library asking for another value is told
//!    it did not take effect);
//! 3. else the variable; else the default.
//!
//! Each of these five is fixed when it is first used (the mode, history and
//! backend when the first kernel runs, the GPU setting when the GPU starts, the
//! thread count at the first Parallel call), since what the runtime built on it
//! (an open history file, a device, a thread pool) is not rebuilt. A choice
//! made after that takes effect only if it is the value already in use; the
//! functions say so by their result. The quiet switch is read every time
//! something would be printed, so it can be set at any time.
//!
//! When a choice made in code is fixed while its variable is set to another
//! value, the operator's variable is not used, and one line says so, once per
//! setting: a `tracing` warning and a line on stderr (unless quiet), e.g.
//!
//! ```text
//! adaptive-kernel: ADAPTIVE_KERNEL_HISTORY="off" is overridden by a library's choice in code (the history file /srv/app/history.json); only the application's config::Settings::application() decides over a library
//! ```
//!
//! ```
//! # use adaptive_kernel_runtime as adaptive_kernel;
//! use adaptive_kernel::config::{self, GpuPolicy, Mode, Settings};
//!
//! // In a library, say at its initialisation: what it would like.
//! assert!(config::set_mode(Mode::Frozen));
//! // In the application's `main`, before the first kernel runs: what it wants.
//! Settings::application().mode(Mode::Learn).gpu(GpuPolicy::Off).threads(2).quiet(true).apply()?;
//! assert_eq!(config::mode(), Mode::Learn); // the application's choice, fixed from now on
//! assert!(config::quiet());
//! # Ok::<(), config::NotApplied>(())
//! ```

use std::fmt;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

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
    /// Route by the saved table only: no exploration, no timed calls, no comparison with
    /// Scalar (`verify` does nothing) and no exclusion, no writes to the history file. A bucket the table has no decision for uses the cold-start prior
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
    /// The default file, `adaptive-kernel/history.json` in the platform's user cache directory
    /// ([`crate::default_path`]).
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
        expected: BACKEND_EXPECTED,
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
    say(format_args!("{err}"));
}

/// What `ADAPTIVE_KERNEL_BACKEND` accepts, as messages spell it.
const BACKEND_EXPECTED: &str = "`scalar`, `simd`, `parallel` or `gpu`";

static BACKEND: Chosen<Option<Backend>> = Chosen::new();

impl Setting for Option<Backend> {
    const VARIABLE: &'static str = ENV_BACKEND;

    fn from_variable(raw: &str) -> Option<Option<Backend>> {
        parse_backend(raw).ok()
    }

    fn describe(&self) -> String {
        match self {
            Some(b) => format!("every kernel forced onto {}", b.name()),
            None => "no backend forced".to_owned(),
        }
    }
}

/// The backend every kernel is forced onto, process-wide: what code chose
/// ([`Settings::backend`]), else `ADAPTIVE_KERNEL_BACKEND`; `None` when neither
/// forces one (or the variable is empty or bad, reported once). Fixed for the
/// process when first read (by the first kernel's first call).
///
/// It applies on every thread, a rayon pool's workers included, and beats a
/// decision saved in the history file or learned in this process; a kernel's own
/// [`crate::Kernel::force`] and a [`crate::with_backend`] scope beat it (the
/// precedence is in the guide's routing chapter). Forced calls are never timed,
/// compared or recorded, so they teach the router nothing.
pub fn forced_backend() -> Option<Backend> {
    BACKEND.get(|| {
        let raw = read_env(ENV_BACKEND)?;
        parse_backend(&raw).unwrap_or_else(|e| {
            report(&e);
            None
        })
    })
}

static GPU: Chosen<GpuPolicy> = Chosen::new();

impl GpuPolicy {
    /// The policy's name, as `ADAPTIVE_KERNEL_GPU` spells it.
    const fn name(self) -> &'static str {
        match self {
            GpuPolicy::Off => "off",
            GpuPolicy::On => "on",
            GpuPolicy::Software => "software",
        }
    }
}

impl Setting for GpuPolicy {
    const VARIABLE: &'static str = ENV_GPU;

    fn from_variable(raw: &str) -> Option<GpuPolicy> {
        parse_gpu_policy(raw).ok()
    }

    fn describe(&self) -> String {
        format!("GPU `{}`", self.name())
    }
}

/// The GPU adapter policy: what code chose ([`Settings::gpu`]), else
/// `ADAPTIVE_KERNEL_GPU`; fixed for the process when first read.
pub fn gpu_policy() -> GpuPolicy {
    GPU.get(|| match read_env(ENV_GPU) {
        None => GpuPolicy::On,
        Some(raw) => parse_gpu_policy(&raw).unwrap_or_else(|e| {
            report(&e);
            GpuPolicy::On
        }),
    })
}

/// What `ADAPTIVE_KERNEL_HISTORY` accepts, as messages spell it.
const HISTORY_EXPECTED: &str = "a history file path, or `off` to keep no history";

static HISTORY: Chosen<HistorySetting> = Chosen::new();

impl Setting for HistorySetting {
    const VARIABLE: &'static str = ENV_HISTORY;

    fn from_variable(raw: &str) -> Option<HistorySetting> {
        Some(parse_history(raw))
    }

    fn describe(&self) -> String {
        match self {
            HistorySetting::Default => "the default history file".to_owned(),
            HistorySetting::Path(path) => format!("the history file {}", path.display()),
            HistorySetting::Off => "no history file".to_owned(),
        }
    }
}

/// Where history is kept: what code chose ([`Settings::history`],
/// [`crate::set_history`]), else `ADAPTIVE_KERNEL_HISTORY`; fixed for the
/// process when first read (the history file is opened then).
///
/// Set but empty (or blank), the variable is most likely a script's unset
/// variable: it is reported once and treated as unset (the default file).
pub fn history_setting() -> HistorySetting {
    HISTORY.get(|| {
        let Some(raw) = read_env(ENV_HISTORY) else { return HistorySetting::Default };
        let setting = parse_history(&raw);
        if raw.trim().is_empty() {
            report(&ConfigError { variable: ENV_HISTORY, value: raw, expected: HISTORY_EXPECTED });
        }
        setting
    })
}

/// [`crate::set_history`]: a library's choice of history file.
pub(crate) fn choose_history(setting: HistorySetting) -> bool {
    HISTORY.choose(Level::Library, setting)
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

static THREADS: Chosen<Option<NonZeroUsize>> = Chosen::new();

impl Setting for Option<NonZeroUsize> {
    const VARIABLE: &'static str = ENV_THREADS;

    fn from_variable(raw: &str) -> Option<Option<NonZeroUsize>> {
        parse_threads(raw).ok()
    }

    fn describe(&self) -> String {
        match self {
            Some(n) => format!("{n} threads"),
            None => "rayon's global pool".to_owned(),
        }
    }
}

/// The Parallel backend's own thread count: what code chose
/// ([`Settings::threads`]), else `ADAPTIVE_KERNEL_THREADS`; `None` (rayon's
/// global pool) when neither says, or the variable is empty or bad (reported
/// once). Fixed for the process when first read.
pub fn configured_threads() -> Option<NonZeroUsize> {
    THREADS.get(|| {
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

static MODE: Chosen<Mode> = Chosen::new();

impl Setting for Mode {
    const VARIABLE: &'static str = ENV_MODE;

    fn from_variable(raw: &str) -> Option<Mode> {
        parse_mode(raw).ok()
    }

    fn describe(&self) -> String {
        format!("mode `{self}`")
    }
}

/// The routing mode: what code chose ([`Settings::mode`], [`set_mode`]), else
/// `ADAPTIVE_KERNEL_MODE` (a bad value is reported once and means `learn`);
/// fixed for the process when first read.
pub fn mode() -> Mode {
    MODE.get(|| match read_env(ENV_MODE) {
        None => Mode::Learn,
        Some(raw) => parse_mode(&raw).unwrap_or_else(|e| {
            report(&e);
            Mode::Learn
        }),
    })
}

/// Chooses the routing mode in code, as a library would (`Settings::library().mode(mode)`):
/// it overrides `ADAPTIVE_KERNEL_MODE`, and the application's choice
/// ([`Settings::application`]) overrides it. Must be called before the first
/// adaptive kernel runs (or anything else reads the mode).
///
/// Returns `false`, changing nothing, when the mode is already fixed to another
/// one, or the application or an earlier library chose another one.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::config::{mode, set_mode, Mode};
/// assert!(set_mode(Mode::Frozen));
/// assert!(!set_mode(Mode::Learn), "the first library's choice stands");
/// assert_eq!(mode(), Mode::Frozen);
/// assert!(!set_mode(Mode::Learn), "fixed for the process");
/// ```
pub fn set_mode(mode: Mode) -> bool {
    MODE.choose(Level::Library, mode)
}

/// Parses a value of `ADAPTIVE_KERNEL_LOG`.
pub fn parse_log_level(value: &str) -> Result<tracing::Level, ConfigError> {
    value.trim().parse().map_err(|_| ConfigError {
        variable: ENV_LOG,
        value: value.to_owned(),
        expected: "`error`, `warn`, `info`, `debug` or `trace`",
    })
}

/// Who made a choice in code: a library's yields to the application's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Library,
    Application,
}

/// What code chose for a setting, before it is fixed.
struct Choices<T> {
    /// The first library's choice.
    library: Option<T>,
    /// The application's latest choice.
    application: Option<T>,
}

impl<T: Clone> Choices<T> {
    /// The choice that wins, and who made it: the application's, else the library's.
    fn winner(&self) -> Option<(Level, T)> {
        match (&self.application, &self.library) {
            (Some(a), _) => Some((Level::Application, a.clone())),
            (None, Some(l)) => Some((Level::Library, l.clone())),
            (None, None) => None,
        }
    }
}

/// A setting that both code and an environment variable can choose.
trait Setting: Clone + PartialEq {
    /// Its variable.
    const VARIABLE: &'static str;
    /// The value the variable's text means; `None` for a value it does not accept.
    fn from_variable(raw: &str) -> Option<Self>;
    /// The value in words, for the line saying a variable was overridden.
    fn describe(&self) -> String;
}

/// The line saying that `chosen`, chosen in code by `by`, overrides the variable's text `raw`;
/// `None` when the variable is unset, blank or means `chosen` too (nothing was overridden).
fn overridden<T: Setting>(raw: Option<&str>, by: Level, chosen: &T) -> Option<String> {
    let raw = raw.filter(|r| !r.trim().is_empty())?;
    if T::from_variable(raw).as_ref() == Some(chosen) {
        return None;
    }
    let (who, then) = match by {
        Level::Application => ("the application's", ""),
        Level::Library => {
            ("a library's", "; only the application's config::Settings::application() decides over a library")
        }
    };
    Some(format!("{}={raw:?} is overridden by {who} choice in code ({}){then}", T::VARIABLE, chosen.describe()))
}

/// Says once, when a setting is fixed, that code overrode its variable (see the module docs).
fn report_override<T: Setting>(by: Level, chosen: &T) {
    if let Some(line) = overridden(read_env(T::VARIABLE).as_deref(), by, chosen) {
        tracing::warn!(target: "adaptive_kernel", variable = T::VARIABLE, "{line}");
        say(format_args!("{line}"));
    }
}

/// A setting chosen in code (by the application, else a library) or by its
/// variable, fixed at its first read: what the runtime builds on it (an open
/// history file, a device, a pool) is built once.
struct Chosen<T: 'static> {
    /// The value in use, once read. Set only under `choices`' lock, so a choice
    /// either lands before the value is fixed or sees it fixed.
    fixed: OnceLock<T>,
    choices: Mutex<Choices<T>>,
}

impl<T: Clone + PartialEq> Chosen<T> {
    const fn new() -> Chosen<T> {
        Chosen { fixed: OnceLock::new(), choices: Mutex::new(Choices { library: None, application: None }) }
    }

    /// The value in use: fixed now if it is not yet, from the choices made in
    /// code (`fixed_by(level, value)` is called then), else `from_env()`.
    fn fix(&self, from_env: impl FnOnce() -> T, fixed_by: impl FnOnce(Level, &T)) -> T {
        if let Some(v) = self.fixed.get() {
            return v.clone();
        }
        let choices = self.choices.lock().unwrap_or_else(PoisonError::into_inner);
        self.fixed
            .get_or_init(|| match choices.winner() {
                Some((level, value)) => {
                    fixed_by(level, &value);
                    value
                }
                None => from_env(),
            })
            .clone()
    }

    /// Records a choice; whether `value` is (or, unless the application says
    /// otherwise before the first read, will be) the value in use.
    fn choose(&self, level: Level, value: T) -> bool {
        let mut choices = self.choices.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(v) = self.fixed.get() {
            return *v == value;
        }
        match level {
            Level::Application => {
                choices.application = Some(value);
                true
            }
            Level::Library => {
                let first = choices.library.get_or_insert_with(|| value.clone());
                *first == value && choices.application.as_ref().is_none_or(|a| *a == value)
            }
        }
    }
}

impl<T: Setting> Chosen<T> {
    /// The value in use: fixed now if it is not yet, from the choices made in
    /// code (saying so if that overrides the variable), else `from_env()`.
    fn get(&self, from_env: impl FnOnce() -> T) -> T {
        self.fix(from_env, report_override)
    }
}

/// The quiet switch's two levels: 0 unset, 1 off, 2 on.
static QUIET: [AtomicU8; 2] = [AtomicU8::new(0), AtomicU8::new(0)];

/// Sets the quiet switch at `level`; whether `quiet` is now in effect.
fn choose_quiet(level: Level, quiet: bool) -> bool {
    let slot = &QUIET[level as usize];
    let value = if quiet { 2 } else { 1 };
    // Relaxed: the switch guards nothing but the lines it silences.
    match level {
        Level::Application => slot.store(value, Ordering::Relaxed),
        Level::Library => {
            let _ = slot.compare_exchange(0, value, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
    self::quiet() == quiet
}

/// Whether the runtime keeps quiet on stderr ([`Settings::quiet`]): the
/// application's choice, else the first library's, else `false`.
pub fn quiet() -> bool {
    let [library, application] = &QUIET;
    match application.load(Ordering::Relaxed) {
        0 => library.load(Ordering::Relaxed) == 2,
        v => v == 2,
    }
}

/// Writes one of the runtime's own reports to stderr (`adaptive-kernel: ` and the
/// line), unless [`quiet`]. Every line the runtime prints goes through here; the
/// `tracing` events beside them go to the program's subscriber either way.
pub(crate) fn say(line: fmt::Arguments<'_>) {
    if !quiet() {
        eprintln!("adaptive-kernel: {line}");
    }
}

/// Settings chosen in code, applied together: by a library that uses kernels
/// ([`Settings::library`]) or by the application ([`Settings::application`]),
/// whose choices win. See the [module docs](self) for the order and for when
/// each setting is fixed. A setting left out is left to others (a library, the
/// variable, the default).
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::config::{HistorySetting, Settings};
///
/// // A library: no history file of its own unless the application wants one.
/// Settings::library().history(HistorySetting::Off).apply()?;
/// # Ok::<(), adaptive_kernel::config::NotApplied>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "nothing is set until `apply` is called"]
pub struct Settings {
    level: Level,
    mode: Option<Mode>,
    history: Option<HistorySetting>,
    gpu: Option<GpuPolicy>,
    threads: Option<Option<NonZeroUsize>>,
    backend: Option<Option<Backend>>,
    quiet: Option<bool>,
}

impl Settings {
    fn at(level: Level) -> Settings {
        Settings { level, mode: None, history: None, gpu: None, threads: None, backend: None, quiet: None }
    }

    /// The application's settings: they win over every library's, made before
    /// or after them. Call it in `main` before the first kernel runs.
    pub fn application() -> Settings {
        Settings::at(Level::Application)
    }

    /// A library's settings: they win over the variables; the application's
    /// and an earlier library's different choices win over them.
    pub fn library() -> Settings {
        Settings::at(Level::Library)
    }

    /// The routing mode (`ADAPTIVE_KERNEL_MODE`).
    pub fn mode(mut self, mode: Mode) -> Settings {
        self.mode = Some(mode);
        self
    }

    /// Where history is kept (`ADAPTIVE_KERNEL_HISTORY`).
    pub fn history(mut self, history: HistorySetting) -> Settings {
        self.history = Some(history);
        self
    }

    /// Which adapters count as a GPU (`ADAPTIVE_KERNEL_GPU`).
    pub fn gpu(mut self, gpu: GpuPolicy) -> Settings {
        self.gpu = Some(gpu);
        self
    }

    /// The Parallel backend's threads (`ADAPTIVE_KERNEL_THREADS`): a pool of
    /// its own with this many; `0`, as in rayon's `ThreadPoolBuilder`, means
    /// rayon's global pool (the default).
    pub fn threads(mut self, threads: usize) -> Settings {
        self.threads = Some(NonZeroUsize::new(threads));
        self
    }

    /// The backend every kernel is forced onto (`ADAPTIVE_KERNEL_BACKEND`), on every
    /// thread, the rayon pool's workers included: `Some(backend)` pins them all (a test
    /// suite checking Scalar's results, an application pinning SIMD), `None` forces
    /// nothing even when the variable is set. It beats a decision saved in the history
    /// file or learned in this process; [`crate::Kernel::force`] and
    /// [`crate::with_backend`] beat it. Forced calls are never timed, compared or
    /// recorded. A backend a kernel lacks runs its fallback (SIMD), said once per kernel.
    ///
    /// ```
    /// # use adaptive_kernel_runtime as adaptive_kernel;
    /// use adaptive_kernel::{config::{self, Settings}, Backend};
    /// Settings::application().backend(Some(Backend::Scalar)).apply()?;
    /// assert_eq!(config::forced_backend(), Some(Backend::Scalar));
    /// # Ok::<(), config::NotApplied>(())
    /// ```
    pub fn backend(mut self, backend: Option<Backend>) -> Settings {
        self.backend = Some(backend);
        self
    }

    /// `true`: the runtime writes nothing to stderr (bad variables, a failed GPU,
    /// a history file ignored or trimmed, a failed save, `verify`'s exclusions,
    /// frozen mode's unsaved sizes). Its `tracing` events are still emitted for
    /// the program's subscriber.
    pub fn quiet(mut self, quiet: bool) -> Settings {
        self.quiet = Some(quiet);
        self
    }

    /// Applies every setting given.
    ///
    /// # Errors
    /// [`NotApplied`], naming the settings that did not take effect (the others
    /// did): fixed already with another value, or, for a library, chosen
    /// otherwise by the application or an earlier library.
    pub fn apply(self) -> Result<(), NotApplied> {
        let level = self.level;
        let mut refused = Vec::new();
        let mut check = |took: bool, name: &'static str| {
            if !took {
                refused.push(name);
            }
        };
        if let Some(mode) = self.mode {
            check(MODE.choose(level, mode), "mode");
        }
        if let Some(history) = self.history {
            check(HISTORY.choose(level, history), "history");
        }
        if let Some(gpu) = self.gpu {
            check(GPU.choose(level, gpu), "gpu");
        }
        if let Some(threads) = self.threads {
            check(THREADS.choose(level, threads), "threads");
        }
        if let Some(backend) = self.backend {
            check(BACKEND.choose(level, backend), "backend");
        }
        if let Some(quiet) = self.quiet {
            check(choose_quiet(level, quiet), "quiet");
        }
        if refused.is_empty() {
            Ok(())
        } else {
            Err(NotApplied { settings: refused })
        }
    }
}

/// Settings that [`Settings::apply`] could not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotApplied {
    /// Their names: `mode`, `history`, `gpu`, `threads`, `backend`, `quiet`.
    pub settings: Vec<&'static str>,
}

impl fmt::Display for NotApplied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "adaptive-kernel settings not applied: {} (in use already with another value, or chosen otherwise by \
             the application or an earlier library)",
            self.settings.join(", ")
        )
    }
}

impl std::error::Error for NotApplied {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_application_wins_over_libraries_before_or_after_them() {
        let setting: Chosen<u8> = Chosen::new();
        assert!(setting.choose(Level::Library, 1), "the first library's choice");
        assert!(!setting.choose(Level::Library, 2), "a later library's other choice does not take");
        assert!(setting.choose(Level::Application, 3), "the application overrides the library's");
        assert!(!setting.choose(Level::Library, 4), "and a library choosing after it");
        assert!(setting.choose(Level::Application, 5), "the application's latest choice counts");
        assert_eq!(setting.fix(|| 0, |_, _| ()), 5);
        assert!(!setting.choose(Level::Application, 6), "fixed once read");
        assert!(setting.choose(Level::Library, 5), "the value in use is no change");
        assert_eq!(setting.fix(|| 0, |_, _| ()), 5);
    }

    #[test]
    fn without_choices_the_variable_decides_once() {
        let setting: Chosen<u8> = Chosen::new();
        assert_eq!(setting.fix(|| 7, |_, _| ()), 7);
        assert_eq!(setting.fix(|| 8, |_, _| ()), 7, "read once");
        assert!(!setting.choose(Level::Application, 1));
        let library: Chosen<u8> = Chosen::new();
        assert!(library.choose(Level::Library, 2));
        assert_eq!(library.fix(|| 7, |_, _| ()), 2, "code wins over the variable");
    }

    #[test]
    fn a_choice_in_code_that_overrides_a_set_variable_is_said_once_fixed() {
        let setting: Chosen<u8> = Chosen::new();
        assert!(setting.choose(Level::Library, 1));
        let mut said = Vec::new();
        assert_eq!(setting.fix(|| 9, |level, v| said.push((level, *v))), 1);
        assert_eq!(setting.fix(|| 9, |level, v| said.push((level, *v))), 1, "fixed once");
        assert_eq!(said, [(Level::Library, 1)], "said when fixed, by whom");
        let unchosen: Chosen<u8> = Chosen::new();
        assert_eq!(unchosen.fix(|| 9, |_, _| panic!("nothing chosen in code")), 9);
    }

    #[test]
    fn the_override_line_names_the_variable_the_choice_and_who_made_it() {
        let off = HistorySetting::Off;
        let by_library = overridden(Some("/tmp/h.json"), Level::Library, &off).expect("overridden");
        assert_eq!(
            by_library,
            "ADAPTIVE_KERNEL_HISTORY=\"/tmp/h.json\" is overridden by a library's choice in code (no history file); \
             only the application's config::Settings::application() decides over a library"
        );
        let by_app = overridden(Some("frozen"), Level::Application, &Mode::Learn).expect("overridden");
        assert_eq!(
            by_app,
            "ADAPTIVE_KERNEL_MODE=\"frozen\" is overridden by the application's choice in code (mode `learn`)"
        );
        let threads = overridden(Some("8"), Level::Application, &NonZeroUsize::new(2)).expect("overridden");
        assert!(threads.contains("ADAPTIVE_KERNEL_THREADS=\"8\"") && threads.contains("(2 threads)"), "{threads}");
        let gpu =
            overridden(Some("bogus"), Level::Application, &GpuPolicy::Off).expect("a bad value is overridden too");
        assert!(gpu.contains("(GPU `off`)"), "{gpu}");
        assert_eq!(overridden(None, Level::Application, &off), None, "unset: nothing overridden");
        assert_eq!(overridden(Some(" "), Level::Application, &off), None, "blank: unset");
        assert_eq!(overridden(Some("OFF"), Level::Library, &off), None, "the same value: nothing overridden");
        assert_eq!(overridden(Some("learn"), Level::Application, &Mode::Learn), None);
    }

    #[test]
    fn not_applied_names_the_settings() {
        let e = NotApplied { settings: vec!["mode", "gpu"] };
        assert!(e.to_string().starts_with("adaptive-kernel settings not applied: mode, gpu ("), "{e}");
    }
}
