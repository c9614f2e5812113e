//! Decisions, not calls, are traced: events with target `adaptive_kernel` and the documented fields.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use adaptive_kernel::{Backend, Kernel, KernelSpec, OpComplexity, Work};
use common::*;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

type Events = Arc<Mutex<Vec<BTreeMap<String, String>>>>;

struct Capture(Events);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}").trim_matches('"').to_owned());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &tracing::span::Attributes<'_>, _: &tracing::span::Id, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        fields.insert("span".to_owned(), attrs.metadata().name().to_owned());
        attrs.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(fields);
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        fields.insert("target".to_owned(), event.metadata().target().to_owned());
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(fields);
    }
}

static K: Kernel = Kernel::new(KernelSpec {
    name: "tracing::k",
    complexity: OpComplexity::High,
    has_gpu: false,
    has_parallel: false,
    token_hash: 1,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

#[test]
fn decisions_are_events_with_the_documented_fields_and_settled_calls_are_silent() {
    no_history();
    let events: Events = Arc::default();
    let subscriber = tracing_subscriber::registry().with(Capture(events.clone()));
    tracing::subscriber::with_default(subscriber, || {
        let route = K.route(5_000, || Work::estimate(OpComplexity::High, 5_000, Some(1), Some(1)));
        assert_eq!(route.backend(), Backend::Simd);
        drop(route);
        settle_with(&K, 5_000, |b| if b == Backend::Scalar { us(200) } else { us(100) });
        let before = events.lock().unwrap().len();
        for _ in 0..100 {
            let r = K.route(5_000, || unreachable!());
            r.run(|| ());
        }
        assert_eq!(events.lock().unwrap().len(), before, "settled calls emit no events");
    });
    let events = events.lock().unwrap();
    let first = &events[0];
    assert_eq!(first["target"], "adaptive_kernel");
    assert_eq!(first["kernel"], "tracing::k");
    assert_eq!(first["size"], "5000");
    assert_eq!(first["bucket"], adaptive_kernel::bucket_of(5_000).to_string());
    assert_eq!(first["backend"], "SIMD");
    assert_eq!(first["decision"], "moe_threshold");
    assert_eq!(first["has_history"], "false");
    let kinds: Vec<&str> = events.iter().filter_map(|e| e.get("decision").map(String::as_str)).collect();
    assert!(kinds.contains(&"exploring"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"historical"), "{kinds:?}");
}

static SLOW: Kernel = Kernel::new(KernelSpec {
    name: "tracing::slow",
    complexity: OpComplexity::Low,
    has_gpu: false,
    has_parallel: false,
    token_hash: 1,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});
static FAST: Kernel = Kernel::new(KernelSpec {
    name: "tracing::fast",
    complexity: OpComplexity::Low,
    has_gpu: false,
    has_parallel: false,
    token_hash: 1,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

fn call(k: &'static Kernel, pause: std::time::Duration) {
    let r = k.route(10, || Work { size: 10, flops: 1, bytes: 1 });
    r.run(|| std::thread::sleep(pause));
}

fn spans_of(events: &Events, kernel: &str) -> usize {
    let events = events.lock().unwrap();
    events.iter().filter(|e| e.get("span").is_some() && e.get("kernel").map(String::as_str) == Some(kernel)).count()
}

#[test]
fn slow_calls_on_a_quiet_site_get_spans_and_fast_calls_do_not() {
    no_history();
    let events: Events = Arc::default();
    let subscriber = tracing_subscriber::registry().with(Capture(events.clone()));
    tracing::subscriber::with_default(subscriber, || {
        // ~300 µs calls, a few thousand a second at most: above the 100 µs threshold, not hot.
        for _ in 0..120 {
            call(&SLOW, std::time::Duration::from_micros(300));
        }
        for _ in 0..120 {
            call(&FAST, std::time::Duration::ZERO);
        }
    });
    assert!(spans_of(&events, "tracing::slow") > 0, "slow calls should be spanned once the bucket is known slow");
    assert_eq!(spans_of(&events, "tracing::fast"), 0);
    let events = events.lock().unwrap();
    let span = events.iter().find(|e| e.get("span").map(String::as_str) == Some("kernel_call")).unwrap();
    assert_eq!(span["size"], "10");
    assert!(span["backend"] == "Scalar" || span["backend"] == "SIMD", "{span:?}");
}
