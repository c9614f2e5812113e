//! Routing decisions exported to an OpenTelemetry collector (feature `otlp`).
//!
//! Start a collector that accepts OTLP over HTTP (port 4318 by default; Jaeger's
//! all-in-one image and the OpenTelemetry Collector both do), then:
//!
//! ```sh
//! OTEL_SERVICE_NAME=otlp-example cargo run --release --features otlp --example otlp
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 cargo run --release --features otlp --example otlp
//! ```
//!
//! Each decision arrives as a span `backend_selection: otlp::sum` with the
//! attributes `operation`, `input_size`, `selected_backend`, `has_history` and
//! `decision_type`. Without a collector the program runs the same and warns once.

use adaptive_kernel::{adaptive_kernel, ops};

/// The sum of `x`, routed by size.
#[adaptive_kernel(complexity = "Medium")]
pub fn sum(x: &[f32]) -> f32 {
    ops::sum(x)
}

fn main() {
    // Keep the guard until the end: dropping it sends what is still queued.
    let _otlp = match adaptive_kernel::telemetry::init_otlp() {
        Ok(guard) => Some(guard),
        Err(e) => {
            eprintln!("otlp: {e}; running without export");
            None
        }
    };
    let mut total = 0.0;
    for n in [100, 1_000, 10_000, 100_000, 1_000_000] {
        let x = vec![1.0f32; n];
        for _ in 0..200 {
            total += sum(&x);
        }
        println!(
            "{n:>9} elements: {}",
            sum::KERNEL.table().row_for(n).and_then(|r| r.chosen).map_or("exploring".into(), |b| b.to_string())
        );
    }
    println!("total {total}");
}
