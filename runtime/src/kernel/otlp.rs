//! Exporting routing decisions to an OpenTelemetry collector over OTLP (feature
//! `otlp`): [`init_otlp`] installs a `tracing` subscriber whose OpenTelemetry
//! layer sends this crate's decision spans and slow-call spans to a collector,
//! and returns an [`OtlpGuard`] that flushes what is queued when dropped.
//!
//! # What is exported
//! One span per routing decision (the cold path only: a settled call makes
//! none), named `backend_selection: {kernel}`, with the attributes
//! `operation` (the kernel), `input_size`, `selected_backend`, `has_history`,
//! `decision_type` (`exploring`, `moe_threshold`, `cost_model`, `historical`,
//! `forced`) and `bucket`; and the `kernel_call` spans of slow calls on sites
//! that are not hot ([`crate::set_span_threshold`]). Only target
//! `adaptive_kernel` is exported, at debug level and above.
//!
//! # Configuration
//! The standard variables, read by the OTLP exporter:
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`, to which
//! `/v1/traces` is appended) or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as
//! is), `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` (default
//! 10 s), `OTEL_SERVICE_NAME` (default: the executable's name) and
//! `OTEL_RESOURCE_ATTRIBUTES`; the batch processor's `OTEL_BSP_*`. The
//! transport is HTTP with protobuf bodies (`OTEL_EXPORTER_OTLP_PROTOCOL` may be
//! unset or `http/protobuf`; `grpc` and `http/json` are refused with a message).
//! Other events still go to stderr at the level `ADAPTIVE_KERNEL_LOG` names
//! (default `warn`), as with [`crate::init_logging`].
//!
//! # Never in the way
//! A span is handed to the batch processor with a non-blocking send into a
//! bounded queue of `OTEL_BSP_MAX_QUEUE_SIZE` spans (default 2,048, at most a
//! few hundred bytes each); when the queue is full, spans are dropped, never
//! waited for. Export runs on the processor's own thread (every
//! `OTEL_BSP_SCHEDULE_DELAY`, default 5 s, or when 512 spans are queued), each
//! request bounded by the exporter's timeout. So a collector that is down or
//! slow costs dropped spans and one warning (target `adaptive_kernel`, naming
//! the endpoint; another when export works again), never a stalled or failed
//! call. Dropping the guard flushes and shuts the exporter down, which waits at
//! most the exporter's timeout for a collector that does not answer.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::SpanExporter;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracerProvider, SpanData};
use opentelemetry_sdk::Resource;
use tracing_subscriber::prelude::*;

use super::telemetry;

/// Keeps the OTLP pipeline alive; dropping it flushes queued spans and shuts the exporter down.
#[must_use = "dropping the guard at once shuts the exporter down"]
pub struct OtlpGuard {
    provider: SdkTracerProvider,
}

impl fmt::Debug for OtlpGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtlpGuard").finish_non_exhaustive()
    }
}

impl Drop for OtlpGuard {
    fn drop(&mut self) {
        // Errors were reported by the exporter as they happened; at exit there is nobody to tell.
        let _ = self.provider.force_flush();
        let _ = self.provider.shutdown();
    }
}

/// Why [`init_otlp`] could not set up export.
#[derive(Debug)]
#[non_exhaustive]
pub enum OtlpError {
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` (or its traces variant) names a transport this build lacks.
    Protocol {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
    },
    /// The exporter could not be built (a malformed endpoint or header variable).
    Exporter(String),
    /// A global `tracing` subscriber is already installed; nothing was changed.
    SubscriberExists,
}

impl fmt::Display for OtlpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OtlpError::Protocol { variable, value } => write!(
                f,
                "{variable}={value:?} is not supported; expected `http/protobuf` (this build exports OTLP over HTTP with protobuf bodies)"
            ),
            OtlpError::Exporter(e) => write!(f, "cannot set up the OTLP exporter: {e}"),
            OtlpError::SubscriberExists => f.write_str(
                "a global tracing subscriber is already installed; add an OpenTelemetry layer to it instead",
            ),
        }
    }
}

impl std::error::Error for OtlpError {}

/// The protocol variables, most specific first.
const PROTOCOL_VARS: [&str; 2] = ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"];

/// Sets up export of this crate's decision and slow-call spans to the OTLP
/// collector named by the `OTEL_EXPORTER_OTLP_*` variables (module docs), and
/// installs it, with a stderr logger like [`crate::init_logging`]'s, as the
/// global `tracing` subscriber. Keep the guard until the program ends.
///
/// ```no_run
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// let _otlp = adaptive_kernel::telemetry::init_otlp().expect("OTLP export");
/// // ... routed calls; their decisions are exported ...
/// ```
///
/// # Errors
/// [`OtlpError::Protocol`] for a transport other than HTTP/protobuf,
/// [`OtlpError::Exporter`] for a malformed endpoint or header, and
/// [`OtlpError::SubscriberExists`] when a global subscriber is already set.
/// A collector that cannot be reached is not an error here: export warns when it fails.
pub fn init_otlp() -> Result<OtlpGuard, OtlpError> {
    for variable in PROTOCOL_VARS {
        if let Ok(value) = std::env::var(variable) {
            if !value.trim().is_empty() && value.trim() != "http/protobuf" {
                return Err(OtlpError::Protocol { variable, value });
            }
            break;
        }
    }
    let exporter = SpanExporter::builder().with_http().build().map_err(|e| OtlpError::Exporter(e.to_string()))?;
    let exporter = Reporting { inner: exporter, endpoint: endpoint(), failing: AtomicBool::new(false) };
    let mut resource = Resource::builder();
    if std::env::var("OTEL_SERVICE_NAME").map_or(true, |v| v.trim().is_empty()) {
        resource = resource.with_service_name(executable_name());
    }
    let provider = SdkTracerProvider::builder()
        .with_span_processor(BatchSpanProcessor::builder(exporter).build())
        .with_resource(resource.build())
        .build();
    let tracer = provider.tracer("adaptive-kernel");
    let exported = tracing_subscriber::filter::Targets::new().with_target("adaptive_kernel", tracing::Level::DEBUG);
    let logged = tracing_subscriber::filter::Targets::new().with_target("adaptive_kernel", telemetry::log_level());
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer).with_filter(exported))
        .with(tracing_subscriber::fmt::layer().with_target(true).with_writer(std::io::stderr).with_filter(logged));
    tracing::subscriber::set_global_default(subscriber).map_err(|_| OtlpError::SubscriberExists)?;
    telemetry::enable_decision_spans();
    Ok(OtlpGuard { provider })
}

/// Where spans go, as the exporter resolves it (for messages).
fn endpoint() -> String {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT").map(|e| format!("{}/v1/traces", e.trim_end_matches('/'))))
        .unwrap_or_else(|| "http://localhost:4318/v1/traces".to_owned())
}

/// The running program's file name, the default `service.name`.
fn executable_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "adaptive-kernel".to_owned())
}

/// The OTLP exporter, saying once when export starts failing (and once when it recovers).
#[derive(Debug)]
struct Reporting {
    inner: SpanExporter,
    endpoint: String,
    failing: AtomicBool,
}

impl opentelemetry_sdk::trace::SpanExporter for Reporting {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        let result = self.inner.export(batch).await;
        // Relaxed: the flag only keeps the warning to one per failing streak.
        match &result {
            Err(e) if !self.failing.swap(true, Ordering::Relaxed) => tracing::warn!(
                target: "adaptive_kernel",
                endpoint = %self.endpoint,
                "exporting {spans} decision spans to the OTLP collector at {} failed ({e}); spans are dropped \
                 while it cannot be reached, routing is not affected",
                self.endpoint
            ),
            Ok(()) if self.failing.swap(false, Ordering::Relaxed) => {
                tracing::info!(target: "adaptive_kernel", endpoint = %self.endpoint, "OTLP export works again");
            }
            _ => {}
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}
