//! Settings chosen in code (`config::Settings`): the application's win over a
//! library's, made before or after them, and over the environment, saying so in
//! one line when the variable they override is set; the GPU and thread settings
//! take from code; the quiet switch silences every line the runtime writes to
//! stderr. Each case runs in a child process (settings are
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
        "library_over_environment" => {
            // A library keeps its own history file; the operator asked for none.
            assert!(adaptive_kernel::set_history(HistorySetting::Path("/nonexistent/library.json".into())));
            assert_eq!(adaptive_kernel::history_file(), Some("/nonexistent/library.json".into()));
            route(10);
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
            // Four reports: a bad variable, a variable overridden by code, a history file that is not ours,
            // a frozen size without a decision.
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
    let out = ok("application_after_library", &[("ADAPTIVE_KERNEL_MODE", "verify")]);
    let line = "adaptive-kernel: ADAPTIVE_KERNEL_MODE=\"verify\" is overridden by the application's choice in code \
                (mode `learn`)\n";
    assert_eq!(out.matches(line).count(), 1, "one line says the variable was overridden:\n{out}");
}

#[test]
fn a_variable_overridden_by_code_is_said_once() {
    let out = ok("library_over_environment", &[("ADAPTIVE_KERNEL_HISTORY", "off")]);
    let line = "adaptive-kernel: ADAPTIVE_KERNEL_HISTORY=\"off\" is overridden by a library's choice in code (the \
                history file /nonexistent/library.json); only the application's config::Settings::application() \
                decides over a library\n";
    assert_eq!(out.matches(line).count(), 1, "{out}");
    assert_eq!(out.matches("is overridden").count(), 1, "nothing else was overridden:\n{out}");
    // The same value in code and in the variable overrides nothing.
    let same = ok("code_over_environment", &[("ADAPTIVE_KERNEL_GPU", "off"), ("ADAPTIVE_KERNEL_THREADS", "2")]);
    assert!(!same.contains("is overridden"), "{same}");
}

#[test]
fn a_librarys_settings_made_after_the_applications_do_not_take() {
    ok("application_before_library", &[]);
}

#[test]
fn gpu_and_threads_set_in_code_win_over_their_variables() {
    let out = ok("code_over_environment", &[("ADAPTIVE_KERNEL_GPU", "software"), ("ADAPTIVE_KERNEL_THREADS", "1")]);
    for line in [
        "ADAPTIVE_KERNEL_GPU=\"software\" is overridden by the application's choice in code (GPU `off`)",
        "ADAPTIVE_KERNEL_THREADS=\"1\" is overridden by the application's choice in code (2 threads)",
    ] {
        assert_eq!(out.matches(line).count(), 1, "{line:?} once in:\n{out}");
    }
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
    let env = [
        ("ADAPTIVE_KERNEL_GPU", "bogus"),
        ("ADAPTIVE_KERNEL_HISTORY", foreign.to_str().unwrap()),
        ("ADAPTIVE_KERNEL_MODE", "learn"),
    ];
    let loud = ok("loud", &env);
    for line in [
        "adaptive-kernel: ADAPTIVE_KERNEL_GPU=\"bogus\" is not understood",
        "adaptive-kernel: ADAPTIVE_KERNEL_MODE=\"learn\" is overridden by the application's choice in code",
        "adaptive-kernel: history file",
        "adaptive-kernel: settings::k: frozen: no saved decision for size 10",
    ] {
        assert_eq!(loud.matches(line).count(), 1, "{line:?} once in:\n{loud}");
    }
    let quiet = ok("quiet", &env);
    assert!(!quiet.contains("adaptive-kernel:"), "quiet, yet:\n{quiet}");
}
