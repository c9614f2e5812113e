//! Decision tracing: `tracing` events for decisions (never for plain calls) and
//! spans for slow calls on sites that are not hot. Everything has target
//! `adaptive_kernel`; [`init_logging`] installs a subscriber for programs that
//! have none. With OTLP export on (`otlp.rs`), each decision event sits in a
//! `backend_selection` span carrying its fields under the names the collector shows.

use tracing::{debug, info, warn};
use tracing_subscriber::prelude::*;

use super::spec::{Decision, DecisionKind, KernelSpec};
use crate::backend::Backend;
use crate::config;

/// Whether decisions also open a `backend_selection` span (set by `init_otlp`).
#[cfg(feature = "otlp")]
static DECISION_SPANS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every decision open a `backend_selection: {kernel}` span around its event, with
/// the attributes an OpenTelemetry collector shows (`otlp.rs`).
#[cfg(feature = "otlp")]
pub(super) fn enable_decision_spans() {
    DECISION_SPANS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The span of one decision, at the level of its event; `None` unless OTLP export is on.
#[cfg(feature = "otlp")]
fn decision_span(kernel: &str, size: usize, bucket: usize, d: Decision, has_history: bool) -> Option<tracing::Span> {
    if !DECISION_SPANS.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    macro_rules! span {
        ($level:expr) => {
            tracing::span!(
                target: "adaptive_kernel",
                $level,
                "backend_selection",
                otel.name = %format_args!("backend_selection: {kernel}"),
                operation = kernel,
                input_size = size,
                selected_backend = d.backend.name(),
                has_history,
                decision_type = d.kind.name(),
                bucket,
            )
        };
    }
    Some(match d.kind {
        DecisionKind::Exploring | DecisionKind::MoeThreshold | DecisionKind::CostModel => span!(tracing::Level::DEBUG),
        DecisionKind::Historical | DecisionKind::Forced => span!(tracing::Level::INFO),
    })
}

/// One routing decision: fields kernel, size, bucket, backend, decision, has_history.
pub(crate) fn decision(spec: &KernelSpec, size: usize, bucket: usize, d: Decision, has_history: bool) {
    let (kernel, backend, decision) = (spec.name, d.backend.name(), d.kind.name());
    #[cfg(feature = "otlp")]
    let _span = decision_span(kernel, size, bucket, d, has_history).map(tracing::Span::entered);
    match d.kind {
        DecisionKind::Exploring | DecisionKind::MoeThreshold | DecisionKind::CostModel => {
            debug!(target: "adaptive_kernel", kernel, size, bucket, backend, decision, has_history, "route")
        }
        DecisionKind::Historical | DecisionKind::Forced => {
            info!(target: "adaptive_kernel", kernel, size, bucket, backend, decision, has_history, "route")
        }
    }
}

/// A settled bucket drifted and is exploring again.
pub(crate) fn reexplore(spec: &KernelSpec, size: usize, bucket: usize) {
    info!(target: "adaptive_kernel", kernel = spec.name, size, bucket, decision = "exploring", "chosen backend degraded; re-exploring");
}

/// A decision from another machine's entry was confirmed by this machine's timings.
pub(crate) fn confirmed(spec: &KernelSpec, size: usize, bucket: usize, backend: Backend) {
    info!(target: "adaptive_kernel", kernel = spec.name, size, bucket, backend = backend.name(), decision = "historical", "another machine's decision confirmed here");
}

/// A settled bucket's re-timed alternative beat its choice and took over.
pub(crate) fn corrected(spec: &KernelSpec, size: usize, bucket: usize, from: Backend, to: Backend) {
    info!(target: "adaptive_kernel", kernel = spec.name, size, bucket, from = from.name(), backend = to.name(), decision = "historical", "re-timed alternative is faster; switched");
}

/// A forced backend cannot run; said once per kernel, as a warning and on stderr
/// (like a bad environment value, it must be seen even without a subscriber).
pub(crate) fn forced_fallback(kernel: &str, forced: Backend, why: &str) {
    let forced = forced.name();
    warn!(target: "adaptive_kernel", kernel, "{forced} forced but {why}; running SIMD instead");
    config::say(format_args!("{kernel}: {forced} forced but {why}; running SIMD instead"));
}

/// Frozen mode met a bucket the saved table has no decision for (said once per kernel).
pub(crate) fn frozen_prior(kernel: &str, size: usize, d: Decision) {
    let why = d.kind.name();
    warn!(target: "adaptive_kernel", kernel, size, backend = d.backend.name(), decision = why,
        "frozen: no saved decision for this size; using the cold-start prior (further such sizes are not reported)");
    config::say(format_args!(
        "{kernel}: frozen: no saved decision for size {size}; using the cold-start prior {} ({why}); \
         further such sizes of this kernel are not reported",
        d.backend.name()
    ));
}

/// `verify` found `backend` disagreeing with Scalar (said once per kernel and backend).
pub(crate) fn excluded(kernel: &str, size: usize, backend: Backend, largest_error: f64) {
    warn!(target: "adaptive_kernel", kernel, size, backend = backend.name(), largest_error,
        "verify: the variant's result disagrees with the Scalar variant's; excluded from this size bucket");
    config::say(format_args!(
        "{kernel}: verify: the {} variant's result differs from Scalar's by up to {largest_error:e} \
         at size {size}; it is excluded from that size bucket (further disagreements of this variant are not reported)",
        backend.name()
    ));
}

/// The span around one slow call.
pub(crate) fn call_span(kernel: &'static str, backend: Backend, size: usize) -> tracing::span::EnteredSpan {
    tracing::debug_span!(target: "adaptive_kernel", "kernel_call", kernel, backend = backend.name(), size).entered()
}

/// Installs a `tracing` subscriber printing this crate's events to stderr at the
/// level named by `ADAPTIVE_KERNEL_LOG` (`error`, `warn`, `info`, `debug`, `trace`;
/// default `warn`), for programs that do not set up their own. Returns `false`
/// when a global subscriber was already installed (it is left as it is).
///
/// An unknown level is reported on stderr and `warn` is used.
pub fn init_logging() -> bool {
    let level = log_level();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_target(true).with_writer(std::io::stderr))
        .with(tracing_subscriber::filter::Targets::new().with_target("adaptive_kernel", level));
    tracing::subscriber::set_global_default(subscriber).is_ok()
}

/// The level `ADAPTIVE_KERNEL_LOG` names (default `warn`); an unknown one is reported on stderr.
pub(super) fn log_level() -> tracing::Level {
    match std::env::var(config::ENV_LOG) {
        Err(_) => tracing::Level::WARN,
        Ok(v) => config::parse_log_level(&v).unwrap_or_else(|e| {
            config::say(format_args!("{e}"));
            tracing::Level::WARN
        }),
    }
}
