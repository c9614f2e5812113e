//! The `adaptive-kernel` binary, run as a process on the fixed history files in
//! `tests/fixtures/history/`: the table, the JSON schema, the SVG plot,
//! calibrate, clear (under the library's lock), export and import, `--help`, and each kind of bad
//! input (corrupt, foreign, newer, unreadable: exit 2, the file named, the file
//! not modified).

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use adaptive_kernel::{Fingerprint, HistoryFile};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_adaptive-kernel");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/history");

/// The plot's colour per backend name, as `report --plot` documents them.
const COLOURS: [(&str, &str); 4] =
    [("Scalar", "#1F77B4"), ("Simd", "#FF7F0E"), ("Parallel", "#D62728"), ("Gpu", "#2CA02C")];

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

/// A copy of fixture `name` in a fresh temporary directory (kept alive by the returned guard).
fn copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.json");
    fs::copy(fixture(name), &path).unwrap();
    (dir, path)
}

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("ADAPTIVE_KERNEL_HISTORY")
        .env_remove("ADAPTIVE_KERNEL_BACKEND")
        .env("ADAPTIVE_KERNEL_GPU", "off");
    c
}

fn run(args: &[&str]) -> Output {
    command(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {:?}\n{}", o.status, stderr(&o));
    stdout(&o)
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).unwrap()
}

#[test]
fn report_prints_each_machine_and_kernel_as_a_table() {
    let good = fixture("good.json");
    let out = ok(&["report", "--history", good.to_str().unwrap()]);
    assert!(out.contains("(format 2)"), "{out}");
    let a = out.find("machine aaaa000011112222").expect("machine A");
    let b = out.find("machine bbbb333344445555").expect("machine B");
    assert!(a < b, "by key when neither is this machine:\n{out}");
    assert!(out.contains("x86_64 Test CPU A [avx2 fma]"), "{out}");
    assert!(out.contains("Scalar 2.10 GFLOP/s, SIMD 45.00 GFLOP/s, memory 12.0 GB/s, CPU call 60 ns"), "{out}");
    assert!(out.contains("GPU 5000.0 GFLOP/s, transfer 8.00 GB/s, GPU call 40.0 µs"), "{out}");
    assert!(out.contains("calibration  none saved"), "machine B has none:\n{out}");
    let row = out.lines().find(|l| l.contains("4,096..=8,191")).expect("a row per bucket");
    let cells: Vec<&str> = row.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
    // Medians: Scalar [4000, 4100] → 4050, SIMD [2000, 2100, 2050] → 2050, Parallel unmeasured, GPU → 91000.
    assert_eq!(cells, ["4,096..=8,191", "4.05 µs", "2.05 µs", "-", "91.00 µs", "SIMD"], "{row}");
    let exploring = out.lines().find(|l| l.contains("8,192..=10,000")).unwrap();
    assert!(exploring.trim_end().ends_with("exploring") && exploring.contains(" - "), "{exploring}");
    assert!(out.contains("SIMD beats Scalar from 4,096 elements (Scalar was chosen up to 4,095)."), "{out}");
    assert!(out.contains("GPU beats SIMD from 131,073 elements (SIMD was chosen up to 8,191)."), "{out}");
    assert_eq!(out.matches("kernel demo::dot").count(), 2, "{out}");
    assert_eq!(out.matches("kernel demo::saxpy").count(), 1, "{out}");
}

#[test]
fn report_says_what_was_done_to_each_kernels_loops() {
    let good = fixture("good.json");
    let out = ok(&["report", "--history", good.to_str().unwrap()]);
    // Machine A's dot: one reduction in lanes, one left as written, one loop split and one not,
    // each on its own line.
    let expected = "    loops: 1 of 2 float reductions in lanes, in SIMD, Parallel\n\
                    \x20     line 12, for range +=: in lanes in SIMD, Parallel\n\
                    \x20     line 17, iter.sum(): as written (effect: a store, or a call that may have side effects)\n\
                    \x20   splits: 1 of 2 top-level loops split across threads in Parallel\n\
                    \x20     line 11, for range: split across threads in Parallel\n\
                    \x20     line 16, for iter_mut: on one thread (break: a `break` may end the loop early)\n\
                    \x20   gpu: 1 of 2 top-level loops on the GPU\n\
                    \x20     line 11, for range: on the GPU\n\
                    \x20     line 16, for iter_mut: on the host (break: a `break` may end the loop early)\n";
    let a = out.find("kernel demo::dot (Medium, token 00000000000000ff)\n").unwrap();
    let after_header = &out[a..][out[a..].find('\n').unwrap() + 1..];
    assert!(after_header.starts_with(expected), "{out}");
    // Machine B's dot recorded none; saxpy's record predates the field.
    let b = &out[out.find("machine bbbb").unwrap()..];
    assert!(b.contains("    loops: no float reduction to put in lanes\n"), "{b}");
    let saxpy = &out[out.find("kernel demo::saxpy").unwrap()..];
    assert!(saxpy.contains("    loops: not recorded (saved by an older version)\n"), "{saxpy}");

    let doc = json(&["report", "--history", good.to_str().unwrap(), "--json"]);
    let kernels = &doc["machines"][0]["kernels"];
    assert_eq!(
        kernels[0]["loops"],
        serde_json::json!([
            { "line": 12, "idiom": "for range +=", "variants": ["Simd", "Parallel"], "reason": "" },
            { "line": 17, "idiom": "iter.sum()", "variants": [], "reason": "effect" },
        ])
    );
    assert_eq!(
        kernels[0]["splits"],
        serde_json::json!([
            { "line": 11, "idiom": "for range", "reason": "" },
            { "line": 16, "idiom": "for iter_mut", "reason": "break" },
        ])
    );
    assert_eq!(
        kernels[0]["gpu_loops"],
        serde_json::json!([
            { "line": 11, "idiom": "for range", "reason": "" },
            { "line": 16, "idiom": "for iter_mut", "reason": "break" },
        ])
    );
    assert_eq!(kernels[1]["loops"], Value::Null, "not recorded");
    assert_eq!(kernels[1]["splits"], Value::Null, "not recorded");
    assert_eq!(kernels[1]["gpu_loops"], Value::Null, "not recorded");
    assert_eq!(doc["machines"][1]["kernels"][0]["loops"], serde_json::json!([]));
}

#[test]
fn report_kernel_keeps_one_kernel_and_an_unknown_one_lists_the_known() {
    let good = fixture("good.json");
    let out = ok(&["report", "--history", good.to_str().unwrap(), "--kernel", "demo::saxpy"]);
    assert!(out.contains("kernel demo::saxpy") && !out.contains("kernel demo::dot"), "{out}");
    let o = run(&["report", "--history", good.to_str().unwrap(), "--kernel", "demo::nope"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("no kernel named `demo::nope`") && err.contains("demo::dot, demo::saxpy"), "{err}");
}

/// Every object key in `v`, recursively.
fn keys(v: &Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| {
            out.insert(k.clone());
            keys(v, out);
        }),
        Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

/// The guide's schema of `report --json` (docs/guide/cli.md) names every field the command writes.
#[test]
fn the_guides_json_schema_lists_every_field_the_report_writes() {
    let guide = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/cli.md")).unwrap();
    let schema = guide.split("## `report --json`").nth(1).expect("the schema section");
    // A loop computed with vector math, which the fixtures predate.
    let (_dir, with_math) = copy("good.json");
    let mut file: Value = serde_json::from_slice(&fs::read(&with_math).unwrap()).unwrap();
    file["machines"]["aaaa000011112222"]["kernels"]["demo::dot"]["loops"][0]["vector_math"] =
        serde_json::json!(["exp"]);
    fs::write(&with_math, serde_json::to_vec(&file).unwrap()).unwrap();
    let mut written = std::collections::BTreeSet::new();
    let files = ["widths.json", "tie.json"].map(fixture);
    for path in files.iter().chain([&with_math]) {
        keys(&json(&["report", "--history", path.to_str().unwrap(), "--json"]), &mut written);
    }
    for key in ["vector_math", "gpu_loops", "chosen_threads", "threads", "profile", "fork_join_latency"] {
        assert!(written.contains(key), "the fixtures exercise `{key}`: {written:?}");
    }
    let missing: Vec<&String> = written.iter().filter(|k| !schema.contains(&format!("\"{k}\""))).collect();
    assert!(missing.is_empty(), "fields `report --json` writes that docs/guide/cli.md does not list: {missing:?}");
}

#[test]
fn report_json_follows_schema_1() {
    let good = fixture("good.json");
    let doc = json(&["report", "--history", good.to_str().unwrap(), "--json"]);
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["history"], good.to_str().unwrap());
    assert_eq!(doc["exists"], true);
    assert_eq!(doc["format_version"], 2);
    let machines = doc["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 2);
    let a = &machines[0];
    assert_eq!(a["key"], "aaaa000011112222");
    assert_eq!(a["this_machine"], false);
    assert_eq!(a["cpu"], "x86_64 Test CPU A");
    assert_eq!(a["cpu_features"], serde_json::json!(["avx2", "fma"]));
    assert_eq!(a["crate_version"], "0.1.0");
    assert_eq!(a["profile"], "release", "an entry written before the profile was recorded");
    assert_eq!(a["calibration"]["simd_flops"], 4.5e10);
    assert_eq!(a["calibration"]["gpu_available"], true);
    assert_eq!(machines[1]["calibration"], Value::Null);
    assert_eq!(machines[1]["gpu"], Value::Null);
    let dot = &a["kernels"][0];
    assert_eq!(dot["name"], "demo::dot");
    assert_eq!(dot["complexity"], "Medium");
    assert_eq!(dot["token_hash"], "00000000000000ff");
    let buckets = dot["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 4);
    assert_eq!(buckets[0]["sizes"], serde_json::json!([2048, 4095]));
    assert_eq!(buckets[0]["typical_size"], 2048);
    assert_eq!(buckets[0]["chosen"], "Scalar");
    assert_eq!(
        buckets[0]["backends"],
        serde_json::json!([
            { "backend": "Scalar", "count": 5, "median_ns": 1000.0 },
            { "backend": "Simd", "count": 4, "median_ns": 1250.0 },
        ])
    );
    assert_eq!(buckets[1]["backends"][0]["median_ns"], 4050.0, "even count: the mean of the middle two");
    assert_eq!(buckets[2]["chosen"], Value::Null);
    assert_eq!(
        dot["crossovers"],
        serde_json::json!([
            { "size": 4096, "below": 4095, "from": "Scalar", "to": "Simd", "tie": false },
            { "size": 131073, "below": 8191, "from": "Simd", "to": "Gpu", "tie": false },
        ])
    );
    assert_eq!(a["kernels"][1]["crossovers"], serde_json::json!([]));
}

#[test]
fn report_lists_the_variants_verify_excluded() {
    let good = fixture("good.json");
    let out = ok(&["report", "--history", good.to_str().unwrap()]);
    let line = "    verify excluded Parallel from 4,096..=8,191: at 5,000 elements its result was off Scalar's by up to 5.0e-1\n";
    assert_eq!(out.matches(line).count(), 1, "{out}");
    let dot = &out[out.find("kernel demo::dot").unwrap()..];
    assert!(dot.find(line).unwrap() < dot.find("SIMD beats Scalar").unwrap(), "with its kernel's table:\n{out}");
    let doc = json(&["report", "--history", good.to_str().unwrap(), "--json"]);
    let buckets = &doc["machines"][0]["kernels"][0]["buckets"];
    assert_eq!(
        buckets[1]["excluded"],
        serde_json::json!([{ "backend": "Parallel", "size": 5000, "largest_error": 0.5 }])
    );
    assert_eq!(buckets[0]["excluded"], serde_json::json!([]));
}

#[test]
fn report_says_what_each_buckets_calls_moved_between_host_and_device() {
    let good = fixture("good.json");
    let out = ok(&["report", "--history", good.to_str().unwrap()]);
    let line = "    moved 131,073..=262,143: 40 GPU calls and 2 CPU calls downloading data kept on the device, 1.00 \
                submission per call, 8.0 MiB up, 160 B down, 25% of GPU time moving data\n";
    assert_eq!(out.matches(line).count(), 1, "{out}");
    let doc = json(&["report", "--history", good.to_str().unwrap(), "--json"]);
    let buckets = doc["machines"][0]["kernels"][0]["buckets"].as_array().unwrap();
    let gpu = buckets.iter().find(|b| b["sizes"] == serde_json::json!([131073, 262143])).unwrap();
    assert_eq!(
        gpu["transfers"],
        serde_json::json!({ "gpu_calls": 40, "cpu_calls": 2, "submissions": 42, "bytes_up": 8388608,
                            "bytes_down": 160, "moving_share": 0.25 })
    );
    assert!(buckets[0].get("transfers").is_none(), "absent where nothing moved: {}", buckets[0]);
}

/// A history file with one entry per fingerprint, each holding kernel `demo::k` with one settled bucket.
fn entries(fps: &[&Fingerprint]) -> String {
    let machines: serde_json::Map<String, Value> = fps
        .iter()
        .map(|fp| {
            let kernel = serde_json::json!({ "token_hash": "0000000000000007", "complexity": "Medium", "buckets": [
                { "sizes": [4096, 8191], "typical_size": 5000, "chosen": "Simd",
                  "timings": [ { "backend": "Simd", "count": 5, "recent_ns": [100, 110, 120] } ] } ] });
            (fp.key(), serde_json::json!({ "fingerprint": fp, "kernels": { "demo::k": kernel } }))
        })
        .collect();
    serde_json::json!({ "format": "adaptive-kernel-history", "version": 2, "machines": machines }).to_string()
}

#[test]
fn report_marks_the_entries_this_machine_would_start_from() {
    let here = Fingerprint::current();
    let arch = std::env::consts::ARCH;
    let near = Fingerprint { cpu: format!("{arch} Near CPU"), gpu: None, ..here.clone() };
    let mut features = here.cpu_features.clone();
    features.push("sve2".into());
    let far = Fingerprint { cpu: format!("{arch} Far CPU"), cpu_features: features, gpu: None, ..here.clone() };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.json");

    fs::write(&path, entries(&[&near, &far])).unwrap();
    let out = ok(&["report", "--history", path.to_str().unwrap()]);
    assert!(out.contains("\n  this machine has no entry: a program here starts each kernel from the nearest"), "{out}");
    assert!(
        out.contains(&format!("machine {} (nearest to this machine, #1: same CPU features)\n", near.key())),
        "{out}"
    );
    assert!(out.contains(&format!("machine {}\n", far.key())), "other SIMD features: not near\n{out}");
    let doc = json(&["report", "--history", path.to_str().unwrap(), "--json"]);
    let by_key = |key: &str| doc["machines"].as_array().unwrap().iter().find(|m| m["key"] == key).unwrap().clone();
    assert_eq!(by_key(&near.key())["nearest"], serde_json::json!({ "rank": 1, "rule": "same_features" }));
    assert_eq!(by_key(&far.key())["nearest"], Value::Null);

    fs::write(&path, entries(&[&far])).unwrap();
    let out = ok(&["report", "--history", path.to_str().unwrap()]);
    assert!(out.contains("this machine has no entry, and none is near it"), "{out}");

    fs::write(&path, entries(&[&here, &near])).unwrap();
    let out = ok(&["report", "--history", path.to_str().unwrap()]);
    assert!(!out.contains("has no entry"), "{out}");
    assert!(out.contains(&format!("machine {} (this machine)\n", here.key())), "{out}");
    assert!(out.contains(&format!("machine {} (nearest to this machine, #1", near.key())), "{out}");
}

#[test]
fn a_missing_file_is_reported_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none.json");
    let out = ok(&["report", "--history", path.to_str().unwrap()]);
    assert!(out.contains("no file yet"), "{out}");
    let doc = json(&["report", "--history", path.to_str().unwrap(), "--json"]);
    assert_eq!((doc["exists"].clone(), doc["machines"].clone()), (Value::Bool(false), serde_json::json!([])));
    assert!(!path.exists(), "reading creates nothing");
}

#[test]
fn the_default_file_is_the_libraries() {
    let good = fixture("good.json");
    let o = command(&["report", "--json"]).env("ADAPTIVE_KERNEL_HISTORY", &good).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["history"], good.to_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let o = command(&["report", "--json"]).env("XDG_CACHE_HOME", dir.path()).output().unwrap();
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let expected = dir.path().join("adaptive-kernel").join("history.json");
    assert_eq!(doc["history"], expected.to_str().unwrap());
    let o = command(&["report"]).env("ADAPTIVE_KERNEL_HISTORY", "off").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("ADAPTIVE_KERNEL_HISTORY is `off`"), "{}", stderr(&o));
}

/// Attribute `name` of `node`, or "".
fn attr<'a>(node: &roxmltree::Node<'a, '_>, name: &str) -> &'a str {
    node.attribute(name).unwrap_or("")
}

#[test]
fn the_plot_is_svg_with_a_series_per_backend_shaded_choices_and_crossovers() {
    let good = fixture("good.json");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plot.svg");
    ok(&["report", "--history", good.to_str().unwrap(), "--kernel", "demo::dot", "--plot", out.to_str().unwrap()]);
    let svg = fs::read_to_string(&out).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let nodes: Vec<_> = doc.descendants().filter(|n| n.is_element()).collect();

    // What the fixture says, per backend: the panels (machines A and B's demo::dot) and,
    // in each, how many buckets measured it and how many chose it.
    let history: Value = serde_json::from_str(&fs::read_to_string(&good).unwrap()).unwrap();
    let dots: Vec<&Value> =
        history["machines"].as_object().unwrap().values().map(|m| &m["kernels"]["demo::dot"]).collect();
    for (backend, colour) in COLOURS {
        let measured: Vec<usize> = dots
            .iter()
            .map(|k| {
                let buckets = k["buckets"].as_array().unwrap();
                buckets
                    .iter()
                    .filter(|b| b["timings"].as_array().unwrap().iter().any(|t| t["backend"] == backend))
                    .count()
            })
            .filter(|&n| n > 0)
            .collect();
        let chosen: usize = dots
            .iter()
            .map(|k| k["buckets"].as_array().unwrap().iter().filter(|b| b["chosen"] == backend).count())
            .sum();

        let mut series: Vec<usize> = nodes
            .iter()
            .filter(|n| n.has_tag_name("polyline") && attr(n, "stroke").eq_ignore_ascii_case(colour))
            .map(|n| attr(n, "points").split_whitespace().count())
            .collect();
        series.sort_unstable();
        let mut expected = measured.clone();
        expected.sort_unstable();
        assert_eq!(series, expected, "{backend}: one line per panel that measured it, a point per bucket");

        let shaded = nodes
            .iter()
            .filter(|n| n.has_tag_name("rect") && attr(n, "fill").eq_ignore_ascii_case(colour))
            .inspect(|n| assert_eq!(attr(n, "opacity"), "0.15", "{backend}: a translucent range"))
            .count();
        assert_eq!(shaded, chosen, "{backend}: a shaded range per bucket that chose it");

        let legend = nodes.iter().any(|n| {
            n.has_tag_name("text")
                && attr(n, "fill").eq_ignore_ascii_case(colour)
                && n.text().is_some_and(|t| !t.trim().is_empty())
        });
        assert_eq!(legend, !measured.is_empty(), "{backend}: named in its colour when measured");
    }
    let texts: Vec<String> = nodes.iter().filter_map(|n| n.text()).map(|t| t.trim().to_owned()).collect();
    assert!(texts.iter().any(|t| t == "SIMD from 4,096"), "crossover marked: {texts:?}");
    assert!(texts.iter().any(|t| t == "GPU from 131,073"), "crossover marked: {texts:?}");
    assert_eq!(
        texts.iter().filter(|t| t.starts_with("demo::dot (Medium) on ")).count(),
        2,
        "a panel per entry: {texts:?}"
    );
}

/// `tie.json`: saxpy settles on SIMD at 16,384 elements (twice as fast), then on Scalar at
/// 131,072, where the two measure 5.66 µs and 5.68 µs: within the router's tie band.
#[test]
fn a_change_between_backends_that_tie_is_reported_as_a_tie_in_the_table_json_and_plot() {
    let tie = fixture("tie.json");
    let out = ok(&["report", "--history", tie.to_str().unwrap()]);
    assert!(out.contains("    SIMD beats Scalar from 16,384 elements (Scalar was chosen up to 4,095).\n"), "{out}");
    assert!(
        out.contains("    Scalar and SIMD tie from 131,072 elements (within the router's 5% tie band; SIMD was chosen up to 32,767).\n"),
        "{out}"
    );
    assert!(!out.contains("Scalar beats SIMD"), "a tie is no crossover:\n{out}");

    let doc = json(&["report", "--history", tie.to_str().unwrap(), "--json"]);
    assert_eq!(
        doc["machines"][0]["kernels"][0]["crossovers"],
        serde_json::json!([
            { "size": 16384, "below": 4095, "from": "Scalar", "to": "Simd", "tie": false },
            { "size": 131072, "below": 32767, "from": "Simd", "to": "Scalar", "tie": true },
        ])
    );

    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("plot.svg");
    ok(&["report", "--history", tie.to_str().unwrap(), "--plot", plot.to_str().unwrap()]);
    let svg = fs::read_to_string(&plot).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).map(str::trim).collect();
    assert!(texts.contains(&"SIMD from 16,384"), "the crossover marked: {texts:?}");
    assert!(texts.contains(&"Scalar = SIMD from 131,072"), "the tie marked as one: {texts:?}");
    assert!(!texts.contains(&"Scalar from 131,072"), "not as a crossover: {texts:?}");
}

/// `widths.json`: a pool of 16 threads where the Parallel variant on 8 of them won (31 µs,
/// against 46 µs on all 16 and 42 µs on 4).
#[test]
fn a_narrower_width_of_the_pool_is_reported_with_its_thread_count() {
    let widths = fixture("widths.json");
    let out = ok(&["report", "--history", widths.to_str().unwrap()]);
    assert!(out.contains("Parallel ×4") && out.contains("Parallel ×8"), "a column per width:\n{out}");
    let row = out.lines().find(|l| l.contains("393,216") || l.contains("262,144")).unwrap_or_else(|| panic!("{out}"));
    assert!(row.trim_end().ends_with("Parallel ×8"), "the chosen width: {row}");
    let doc = json(&["report", "--history", widths.to_str().unwrap(), "--json"]);
    let bucket = &doc["machines"][0]["kernels"][0]["buckets"][0];
    assert_eq!(bucket["chosen_threads"], 8, "{bucket}");
}

#[test]
fn nothing_to_plot_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plot.svg");
    let o =
        run(&["report", "--history", dir.path().join("none.json").to_str().unwrap(), "--plot", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("nothing to plot"), "{}", stderr(&o));
    assert!(!out.exists());
}

/// Each kind of bad input, as (fixture or path, what the message must say).
fn bad_inputs(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let unreadable = dir.join("a-directory.json");
    fs::create_dir_all(&unreadable).unwrap();
    vec![
        (fixture("corrupt.json"), "is corrupt: it is truncated or damaged"),
        (fixture("foreign.json"), "it is not an adaptive-kernel history file"),
        (fixture("newer.json"), "written by a newer version (format 99 > 2)"),
        (unreadable, "cannot be read"),
    ]
}

#[test]
fn bad_files_exit_2_naming_the_file_and_are_not_modified() {
    let dir = tempfile::tempdir().unwrap();
    for (source, why) in bad_inputs(dir.path()) {
        // Work on a copy, so a modification would show (the directory is used in place).
        let path = if source.is_dir() { source.clone() } else { dir.path().join(source.file_name().unwrap()) };
        if source.is_file() {
            fs::copy(&source, &path).unwrap();
        }
        let before = if path.is_file() { Some(fs::read(&path).unwrap()) } else { None };
        let p = path.to_str().unwrap();
        for args in [
            vec!["report", "--history", p],
            vec!["report", "--history", p, "--json"],
            vec!["report", "--history", p, "--plot", "/nonexistent/never.svg"],
            vec!["clear", "--history", p],
            vec!["clear", "--history", p, "--kernel", "demo::dot"],
            vec!["calibrate", "--history", p],
            vec!["export", "--history", p],
        ] {
            let o = run(&args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.starts_with("error: history file ") && err.contains(p) && err.contains(why), "{args:?}: {err}");
            assert!(err.contains("not modified"), "{args:?}: {err}");
            assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
            assert_eq!(before, if path.is_file() { Some(fs::read(&path).unwrap()) } else { None }, "{args:?}");
            let siblings: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
            assert!(!siblings.iter().any(|n| n.to_string_lossy().ends_with(".corrupt")), "{siblings:?}");
        }
    }
}

#[test]
fn clear_removes_a_kernel_from_every_entry_or_every_entry() {
    let (_dir, path) = copy("good.json");
    let p = path.to_str().unwrap();
    let out = ok(&["clear", "--history", p, "--kernel", "demo::dot"]);
    assert!(out.contains("removed kernel `demo::dot` from 2 machine entries"), "{out}");
    let doc = json(&["report", "--history", p, "--json"]);
    let names: Vec<&str> = doc["machines"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["kernels"].as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap()))
        .collect();
    assert_eq!(names, ["demo::saxpy"]);
    assert!(path.with_file_name("history.json.lock").exists(), "the library's lock file");
    let unchanged = fs::read(&path).unwrap();
    let out = ok(&["clear", "--history", p, "--kernel", "demo::dot"]);
    assert!(out.contains("from 0 machine entries"), "{out}");
    assert_eq!(fs::read(&path).unwrap(), unchanged, "nothing to remove: not rewritten");

    let out = ok(&["clear", "--history", p]);
    assert!(out.contains("removed 2 machine entries"), "{out}");
    let doc = json(&["report", "--history", p, "--json"]);
    assert_eq!((doc["exists"].clone(), doc["machines"].clone()), (Value::Bool(true), serde_json::json!([])));
}

#[test]
fn clear_waits_for_the_librarys_lock() {
    let (_dir, path) = copy("good.json");
    let lock = File::create(path.with_file_name("history.json.lock")).unwrap();
    lock.lock().unwrap();
    let mut child = command(&["clear", "--history", path.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "clear must wait while another process holds the lock");
    assert!(fs::read_to_string(&path).unwrap().contains("demo::dot"), "nothing removed under another's lock");
    drop(lock);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!fs::read_to_string(&path).unwrap().contains("demo::dot"));
}

#[test]
fn clear_on_a_missing_file_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("history.json");
    let out = ok(&["clear", "--history", path.to_str().unwrap()]);
    assert!(out.contains("removed 0 machine entries"), "{out}");
    assert!(!dir.path().join("sub").exists());
}

#[test]
fn calibrate_prints_figures_with_units_and_saves_them_for_this_machine() {
    let (_dir, path) = copy("good.json");
    let p = path.to_str().unwrap();
    let out = ok(&["calibrate", "--history", p]);
    for unit in ["Scalar throughput", "GFLOP/s", "memory bandwidth", "GB/s", "CPU call latency", " ns"] {
        assert!(out.contains(unit), "{unit}: {out}");
    }
    assert!(out.contains("GPU                 unavailable"), "ADAPTIVE_KERNEL_GPU=off: {out}");
    assert!(out.contains("saved into"), "{out}");
    let doc = json(&["report", "--history", p, "--json"]);
    let machines = doc["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 3, "a new entry; the others kept");
    let here = &machines[0];
    assert_eq!(here["this_machine"], true);
    assert!(here["calibration"]["simd_flops"].as_f64().unwrap() > 0.0);
    assert_eq!(here["calibration"]["gpu_available"], false);
    assert_eq!(machines[1]["calibration"]["simd_flops"], 4.5e10, "other entries untouched");
}

#[test]
fn every_subcommand_has_help() {
    let top = ok(&["--help"]);
    for sub in ["report", "calibrate", "clear", "export", "import"] {
        assert!(top.contains(sub), "{top}");
    }
    for (sub, flags) in [
        ("report", &["--kernel", "--json", "--plot", "--history"][..]),
        ("calibrate", &["--history"][..]),
        ("clear", &["--kernel", "--history"][..]),
        ("export", &["--kernel", "--history"][..]),
        ("import", &["FILE", "--history"][..]),
    ] {
        let help = ok(&[sub, "--help"]);
        for flag in flags {
            assert!(help.contains(flag), "{sub} --help lacks {flag}:\n{help}");
        }
    }
    let o = run(&["report", "--json", "--plot", "x.svg"]);
    assert_eq!(o.status.code(), Some(2), "a usage error");
}

#[test]
fn export_then_import_round_trips_and_merges_under_the_lock() {
    let good = fixture("good.json");
    let dir = tempfile::tempdir().unwrap();
    let wisdom = dir.path().join("wisdom.json");
    fs::write(&wisdom, ok(&["export", "--history", good.to_str().unwrap()])).unwrap();
    let history = |p: &Path| -> HistoryFile { serde_json::from_slice(&fs::read(p).unwrap()).unwrap() };
    let original = history(&good);
    assert_eq!(history(&wisdom), original, "an export of a whole file is that file");

    // Into a machine with no file: the same tables, and the library's lock was taken.
    let fresh = dir.path().join("fleet").join("history.json");
    let out = ok(&["import", wisdom.to_str().unwrap(), "--history", fresh.to_str().unwrap()]);
    assert!(out.contains("2 machine entries added"), "{out}");
    assert!(fresh.with_file_name("history.json.lock").exists(), "the library's lock file");
    let round: HistoryFile = serde_json::from_str(&ok(&["export", "--history", fresh.to_str().unwrap()])).unwrap();
    assert_eq!(round, original, "export → import → export is the identity");
    let again = ok(&["import", wisdom.to_str().unwrap(), "--history", fresh.to_str().unwrap()]);
    assert!(again.contains("nothing changed"), "{again}");

    // One kernel only: into a file that has lost it, the rest untouched.
    let (_d, partial) = copy("good.json");
    ok(&["clear", "--history", partial.to_str().unwrap(), "--kernel", "demo::dot"]);
    let dot = dir.path().join("dot.json");
    fs::write(&dot, ok(&["export", "--history", good.to_str().unwrap(), "--kernel", "demo::dot"])).unwrap();
    let only: Value = serde_json::from_slice(&fs::read(&dot).unwrap()).unwrap();
    for m in only["machines"].as_object().unwrap().values() {
        assert_eq!(m["kernels"].as_object().unwrap().keys().collect::<Vec<_>>(), ["demo::dot"]);
    }
    let out = ok(&["import", dot.to_str().unwrap(), "--history", partial.to_str().unwrap()]);
    assert!(out.contains("2 kernel tables added"), "{out}");
    assert_eq!(history(&partial), original, "both kernels again, calibrations kept");

    let o = run(&["export", "--history", good.to_str().unwrap(), "--kernel", "demo::nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no kernel named `demo::nope`") && stderr(&o).contains("demo::dot"), "{}", stderr(&o));
}

#[test]
fn importing_a_bad_file_changes_nothing() {
    let (_d, path) = copy("good.json");
    let before = fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (bad, what) in bad_inputs(dir.path()) {
        let o = run(&["import", bad.to_str().unwrap(), "--history", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
        assert!(stderr(&o).contains(bad.to_str().unwrap()), "{what}: names the file: {}", stderr(&o));
        assert_eq!(fs::read(&path).unwrap(), before, "{what}: the history file is untouched");
    }
    let missing = dir.path().join("missing.json");
    let o = run(&["import", missing.to_str().unwrap(), "--history", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no such file to import"), "{}", stderr(&o));
}
