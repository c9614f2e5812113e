//! Settings chosen in code (`config::Settings`): the application's win over a
//! library's, made before or after them, and over the environment; the GPU and
//! thread settings take from code; the quiet switch silences every line the
//! runtime writes to stderr. Each case runs in a child process (settings are
//! fixed once per process).

mod common;

use adaptive_kernel::config::{self, GpuPolicy, HistorySetting, Mode, NotApplied, Settings};
use adaptive_kernel::cost::Work;
use adaptive_kernel::{Backend, Kernel, OpComplexity};
use common::*;

static K: Kernel = Kernel::new(cpu_spec("settings::k", OpComplexity::Low));

fn route(size: usize) -> Backend {
    K.route(size, || Work::estimate(OpComplexity::Low, size, None, None)).backend()
}

/// What a library does at its initialisation, before the application's `main` speaks.
fn library_init(history: &str) {
    assert!(config::set_mode(Mode::Frozen), "the first library's choice takes, for now");
    assert!(adaptive_kernel::set_history(HistorySetting::Path(history.into())));
    Settings::library().gpu(GpuPolicy::Software).threads(1).quiet(false).apply().expect("nothing chosen yet");
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    match child_role().expect("run by run_child").as_str() {
        "application_after_library" => {
            library_init("/nonexistent/library-history.json");
            Settings::application()
                .mode(Mode::Learn)
                .history(HistorySetting::Off)
                .gpu(GpuPolicy::Off)
                .threads(3)
                .apply()
                .expect("the application's choices win");
            assert_eq!(Settings::library().mode(Mode::Verify).apply(), Err(NotApplied { settings: vec!["mode"] }));
            route(10);
            assert_eq!(config::mode(), Mode::Learn);
            assert_eq!(adaptive_kernel::history_file(), None);
            assert_eq!(config::gpu_policy(), GpuPolicy::Off);
            assert_eq!(adaptive_kernel::ops::par::threads(), 3);
            assert!(!adaptive_kernel::ops::gpu::is_available());
        }
        "application_before_library" => {
            Settings::application().mode(Mode::Verify).apply().unwrap();
            assert!(!config::set_mode(Mode::Frozen), "a library is told its choice does not take");
            assert_eq!(config::mode(), Mode::Verify);
        }
        "code_over_environment" => {
            Settings::application().gpu(GpuPolicy::Off).threads(2).apply().unwrap();
            assert_eq!(config::gpu_policy(), GpuPolicy::Off, "ADAPTIVE_KERNEL_GPU=software is overridden");
            assert_eq!(adaptive_kernel::ops::par::threads(), 2, "ADAPTIVE_KERNEL_THREADS=1 is overridden");
            assert_eq!(config::configured_threads().map(|n| n.get()), Some(2));
        }
        "environment_alone" => {
            assert_eq!(config::gpu_policy(), GpuPolicy::Off);
            assert_eq!(adaptive_kernel::ops::par::threads(), 1);
        }
        "fixed_at_first_use" => {
            no_history();
            route(10);
            assert_eq!(
                Settings::application().mode(Mode::Frozen).history(HistorySetting::Off).apply(),
                Err(NotApplied { settings: vec!["mode"] }),
                "the mode is in use; history is already off, so choosing it again is no change"
            );
            assert_eq!(config::mode(), Mode::Learn);
        }
        role @ ("loud" | "quiet") => {
            // A library asks for quiet = false; the application's choice decides.
            Settings::library().quiet(false).apply().unwrap();
            Settings::application().mode(Mode::Frozen).quiet(role == "quiet").apply().unwrap();
            // Three reports: a bad variable, a history file that is not ours, a frozen size without a decision.
            assert_eq!(config::gpu_policy(), GpuPolicy::On);
            assert_eq!(adaptive_kernel::history_status().to_string().split(':').next(), Some("ignored, not ours"));
            assert_eq!(route(10), Backend::Scalar);
        }
        other => panic!("unknown role {other}"),
    }
}

fn ok(role: &str, env: &[(&str, &str)]) -> String {
    let (ok, out) = run_child("child", role, env);
    assert!(ok, "child {role} failed:\n{out}");
    out
}

#[test]
fn the_applications_settings_win_over_a_librarys_made_before_them() {
    ok("application_after_library", &[("ADAPTIVE_KERNEL_MODE", "verify")]);
}

#[test]
fn a_librarys_settings_made_after_the_applications_do_not_take() {
    ok("application_before_library", &[]);
}

#[test]
fn gpu_and_threads_set_in_code_win_over_their_variables() {
    ok("code_over_environment", &[("ADAPTIVE_KERNEL_GPU", "software"), ("ADAPTIVE_KERNEL_THREADS", "1")]);
    ok("environment_alone", &[("ADAPTIVE_KERNEL_GPU", "off"), ("ADAPTIVE_KERNEL_THREADS", "1")]);
}

#[test]
fn a_setting_in_use_is_not_changed() {
    ok("fixed_at_first_use", &[]);
}

#[test]
fn quiet_silences_every_line_the_runtime_prints() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("history.json");
    std::fs::write(&foreign, "{\"something\": \"else\"}").unwrap();
    let env = [("ADAPTIVE_KERNEL_GPU", "bogus"), ("ADAPTIVE_KERNEL_HISTORY", foreign.to_str().unwrap())];
    let loud = ok("loud", &env);
    for line in [
        "adaptive-kernel: ADAPTIVE_KERNEL_GPU=\"bogus\" is not understood",
        "adaptive-kernel: history file",
        "adaptive-kernel: settings::k: frozen: no saved decision for size 10",
    ] {
        assert_eq!(loud.matches(line).count(), 1, "{line:?} once in:\n{loud}");
    }
    let quiet = ok("quiet", &env);
    assert!(!quiet.contains("adaptive-kernel:"), "quiet, yet:\n{quiet}");
}
