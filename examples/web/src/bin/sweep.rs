//! The sweep as a command-line program, for WASI (`wasm32-wasip1`) and native:
//! runs every kernel routed over the sizes of the sweep, checks each result,
//! prints the learned tables and exits non-zero when a result was wrong or a
//! bucket did not settle. `wasi.mjs` runs the wasm32-wasip1 build in Node.

fn main() {
    let report: serde_json::Value = serde_json::from_str(&adaptive_kernel_web::sweep(40)).expect("the sweep's JSON");
    println!("{}", adaptive_kernel_web::tables());
    let (ok, settled, buckets) = (report["results_ok"] == true, &report["settled"], &report["buckets"]);
    println!(
        "SIMD level: {}; results: {}; settled: {settled} of {buckets} buckets; backends chosen: {}",
        report["simd_level"],
        if ok { "all right" } else { "WRONG" },
        report["backends_used"]
    );
    if !ok || settled != buckets {
        std::process::exit(1);
    }
}
