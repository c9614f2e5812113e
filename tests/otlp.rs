//! OTLP export of decisions (feature `otlp`), end to end: a child process sets up
//! `telemetry::init_otlp` with the standard `OTEL_*` variables pointing at an OTLP
//! receiver this test runs on loopback (HTTP with protobuf bodies, decoded with
//! `opentelemetry-proto`), routes calls until a kernel settles, and drops the guard.
//! The spans that arrive must carry the seed's names and attributes. A collector
//! that is down, or that never answers, must cost one warning and no stalled call.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adaptive_kernel::{Backend, Kernel, OpComplexity};
use common::*;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use prost::Message;

static K: Kernel = Kernel::new(cpu_spec("otlp::k", OpComplexity::Medium));
const SIZE: usize = 5_000;

/// A span as received: its name and attributes rendered as text.
#[derive(Debug, Clone)]
struct Received {
    name: String,
    attributes: BTreeMap<String, String>,
    service: String,
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::StringValue(s)) => s.clone(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::BoolValue(b)) => b.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

fn decode(body: &[u8]) -> Vec<Received> {
    let request = ExportTraceServiceRequest::decode(body).expect("a valid ExportTraceServiceRequest");
    let mut out = Vec::new();
    for rs in request.resource_spans {
        let service = rs
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|kv| kv.key == "service.name")
            .map(|kv| text(kv.value.as_ref().and_then(|v| v.value.as_ref())))
            .unwrap_or_default();
        for span in rs.scope_spans.into_iter().flat_map(|s| s.spans) {
            let attributes = span
                .attributes
                .iter()
                .map(|kv| (kv.key.clone(), text(kv.value.as_ref().and_then(|v| v.value.as_ref()))))
                .collect();
            out.push(Received { name: span.name, attributes, service: service.clone() });
        }
    }
    out
}

/// Serves one connection: HTTP/1.1 requests with `Content-Length` bodies, answered 200.
fn serve(stream: TcpStream, spans: Arc<Mutex<Vec<Received>>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        assert!(request_line.starts_with("POST /v1/traces "), "{request_line}");
        let mut length = 0;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                }
                if name.eq_ignore_ascii_case("content-type") {
                    assert_eq!(value.trim(), "application/x-protobuf");
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        spans.lock().unwrap().extend(decode(&body));
        let reply = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if stream.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// An OTLP/HTTP receiver on a loopback port; returns its endpoint and what it received.
fn receiver() -> (String, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let spans = Arc::new(Mutex::new(Vec::new()));
    let sink = spans.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let sink = sink.clone();
            std::thread::spawn(move || serve(stream, sink));
        }
    });
    (endpoint, spans)
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    // Fixed cost-model figures: no calibration on the first call, which is not export's doing.
    fixed_model();
    let otlp = adaptive_kernel::telemetry::init_otlp().expect("OTLP set up");
    let began = Instant::now();
    let mut slowest = Duration::ZERO;
    for round in 0..20 {
        let size = SIZE << (round % 4);
        for _ in 0..500 {
            let t = Instant::now();
            call_spinning(&K, size, |b| if b == Backend::Simd { us(2) } else { us(6) });
            slowest = slowest.max(t.elapsed());
        }
    }
    assert_eq!(settled(&K, SIZE), Some(Backend::Simd), "{}", K.table());
    eprintln!(
        "FIGURES otlp calls=10000 slowest_call_us={} routing_s={:.2}",
        slowest.as_micros(),
        began.elapsed().as_secs_f64()
    );
    assert!(slowest < Duration::from_millis(250), "a call stalled for {slowest:?}");
    let flushing = Instant::now();
    drop(otlp);
    eprintln!("FIGURES otlp guard_drop_ms={}", flushing.elapsed().as_millis());
}

fn run_with(endpoint: &str, extra: &[(&str, &str)]) -> String {
    let mut env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
        ("OTEL_SERVICE_NAME", "adaptive-kernel-otlp-test"),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ("ADAPTIVE_KERNEL_GPU", "off"),
    ];
    env.extend_from_slice(extra);
    let (ok, out) = run_child("child", "otlp", &env);
    assert!(ok, "{out}");
    for line in out.lines().filter_map(|l| l.split_once("FIGURES ").map(|(_, f)| f)) {
        eprintln!("FIGURES {line}");
    }
    out
}

#[test]
fn decisions_arrive_at_a_real_receiver_with_their_attributes() {
    let (endpoint, spans) = receiver();
    let out = run_with(&endpoint, &[]);
    assert!(!out.contains("OTLP collector"), "no export failed:\n{out}");
    let spans = spans.lock().unwrap().clone();
    let decisions: Vec<&Received> = spans.iter().filter(|s| s.name == "backend_selection: otlp::k").collect();
    assert!(decisions.len() >= 4, "one span per decision; got {} spans: {spans:?}", spans.len());
    for d in &decisions {
        assert_eq!(d.service, "adaptive-kernel-otlp-test");
        assert_eq!(d.attributes["operation"], "otlp::k");
        assert!(d.attributes["input_size"].parse::<usize>().unwrap() >= SIZE, "{d:?}");
        assert!(["Scalar", "SIMD"].contains(&d.attributes["selected_backend"].as_str()), "{d:?}");
        assert!(["true", "false"].contains(&d.attributes["has_history"].as_str()), "{d:?}");
    }
    let kinds: Vec<&str> = decisions.iter().map(|d| d.attributes["decision_type"].as_str()).collect();
    assert!(kinds.contains(&"exploring") && kinds.contains(&"historical"), "{kinds:?}");
    let settled = decisions.iter().find(|d| d.attributes["decision_type"] == "historical").unwrap();
    assert_eq!(settled.attributes["selected_backend"], "SIMD");
    assert_eq!(settled.attributes["has_history"], "true");
    eprintln!("FIGURES otlp spans_received={} decision_spans={}", spans.len(), decisions.len());
}

#[test]
fn a_collector_that_is_down_costs_one_warning_and_no_stall() {
    // A port that was just free: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let out = run_with(&endpoint, &[("OTEL_EXPORTER_OTLP_TIMEOUT", "500")]);
    let warnings = out.lines().filter(|l| l.contains("WARN") && l.contains("OTLP collector")).count();
    assert_eq!(warnings, 1, "{out}");
    assert!(out.contains(&format!("{endpoint}/v1/traces")), "the warning names the endpoint:\n{out}");
}

#[test]
fn a_collector_that_never_answers_costs_one_warning_and_no_stall() {
    // Accepts connections and reads, but never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let out = run_with(&endpoint, &[("OTEL_EXPORTER_OTLP_TIMEOUT", "300")]);
    let warnings = out.lines().filter(|l| l.contains("WARN") && l.contains("OTLP collector")).count();
    assert_eq!(warnings, 1, "{out}");
}
