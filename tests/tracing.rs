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
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        fields.insert("target".to_owned(), event.metadata().target().to_owned());
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(fields);
    }
}

static K: Kernel =
    Kernel::new(KernelSpec { name: "tracing::k", complexity: OpComplexity::High, has_gpu: false, token_hash: 1 });

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
