//! The `ADAPTIVE_KERNEL_*` environment variables, each checked in a child process
//! (they are read once per process).

mod common;

use adaptive_kernel::config::{self, GpuPolicy, HistorySetting};
use adaptive_kernel::{Backend, Kernel, KernelSpec, OpComplexity, Work};
use common::*;

static K: Kernel = Kernel::new(KernelSpec {
    name: "env::k",
    complexity: OpComplexity::Low,
    has_gpu: false,
    has_parallel: false,
    token_hash: 1,
    loops: &[],
    splits: &[],
    gpu_loops: &[],
});

fn first_backend(size: usize) -> Backend {
    K.route(size, || Work::estimate(OpComplexity::Low, size, None, None)).backend()
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    no_history();
    match child_role().expect("run by run_child").as_str() {
        "forced_simd" => {
            assert_eq!(first_backend(10), Backend::Simd, "MoE alone would say Scalar");
            assert_eq!(K.table().row_for(10).map(|r| r.chosen), None, "forcing learns nothing");
        }
        "forced_gpu_without_gpu" => {
            assert_eq!(first_backend(10), Backend::Simd);
            assert_eq!(first_backend(100_000), Backend::Simd);
        }
        "not_forced" => assert_eq!(first_backend(10), Backend::Scalar),
        "scope_beats_env" => {
            assert_eq!(adaptive_kernel::with_backend(Backend::Scalar, || first_backend(10)), Backend::Scalar);
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn backend_variable_forces_every_kernel() {
    let (ok, out) = run_child("child", "forced_simd", &[("ADAPTIVE_KERNEL_BACKEND", "simd")]);
    assert!(ok, "{out}");
    let (ok, out) = run_child("child", "scope_beats_env", &[("ADAPTIVE_KERNEL_BACKEND", "SIMD")]);
    assert!(ok, "{out}");
}

#[test]
fn forcing_an_unavailable_gpu_falls_back_and_says_why_once() {
    let (ok, out) = run_child("child", "forced_gpu_without_gpu", &[("ADAPTIVE_KERNEL_BACKEND", "gpu")]);
    assert!(ok, "{out}");
    assert_eq!(out.matches("env::k: GPU forced but the kernel has no GPU variant").count(), 1, "{out}");
}

#[test]
fn a_bad_backend_value_is_reported_and_ignored() {
    let (ok, out) = run_child("child", "not_forced", &[("ADAPTIVE_KERNEL_BACKEND", "cuda")]);
    assert!(ok, "{out}");
    assert_eq!(out.matches("ADAPTIVE_KERNEL_BACKEND=\"cuda\" is not understood").count(), 1, "{out}");
    assert!(out.contains("`scalar`, `simd`, `parallel` or `gpu`"), "{out}");
}

#[test]
fn parsers_accept_documented_values_and_name_the_variable_otherwise() {
    assert_eq!(config::parse_backend("GPU").unwrap(), Some(Backend::Gpu));
    assert_eq!(config::parse_backend(" ").unwrap(), None);
    assert_eq!(config::parse_gpu_policy("software").unwrap(), GpuPolicy::Software);
    assert_eq!(config::parse_gpu_policy("OFF").unwrap(), GpuPolicy::Off);
    assert_eq!(config::parse_gpu_policy("").unwrap(), GpuPolicy::On);
    let e = config::parse_gpu_policy("lavapipe").unwrap_err();
    assert_eq!(e.to_string(), "ADAPTIVE_KERNEL_GPU=\"lavapipe\" is not understood; expected `off`, `on` or `software` (the variable is ignored)");
    assert_eq!(config::parse_history("off"), HistorySetting::Off);
    assert_eq!(config::parse_history("/tmp/h.json"), HistorySetting::Path("/tmp/h.json".into()));
    assert_eq!(config::parse_history(""), HistorySetting::Default);
    assert!(config::parse_log_level("loud").unwrap_err().to_string().contains("ADAPTIVE_KERNEL_LOG"));
    assert_eq!(config::parse_log_level("debug").unwrap(), tracing::Level::DEBUG);
}
