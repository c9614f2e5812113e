//! The hardware fingerprint that keys saved history: timings learned on one
//! machine (CPU model and features), by another version of this crate or by
//! another kind of build ([`BuildProfile`]: a debug build's unoptimised timings
//! say nothing of a release build's) are not trusted on another. A machine whose own entry has no decision starts from the
//! nearest other entry instead, as a prior that is re-timed before it is trusted
//! (`nearest`).
//!
//! The GPU adapter is recorded with each entry but is not part of the key: it
//! is known only once the GPU has started, which happens in the background so
//! that no call waits for it, while history is needed at the first call. GPU
//! figures are never trusted blindly instead: a loaded GPU decision is re-timed on
//! its first calls and re-explored when its figure is off (see the router's
//! warm start), and the GPU joins a bucket only after it has been measured.

use serde::{Deserialize, Serialize};

/// What identifies "this machine and this build" for saved timings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// CPU architecture and model name.
    pub cpu: String,
    /// The SIMD features the SIMD variants may use (those of the runtime's one table of feature sets).
    pub cpu_features: Vec<String>,
    /// GPU adapter, driver and API when the GPU had started (`None` when it had
    /// not, or no usable GPU exists under the current policy). Not part of [`key`](Self::key).
    pub gpu: Option<String>,
    /// Version of the runtime crate.
    pub crate_version: String,
    /// The kind of build that recorded the entry (absent in files written before it was
    /// recorded, which read as [`BuildProfile::Release`]: their key is a release build's).
    #[serde(default)]
    pub profile: BuildProfile,
}

/// Which kind of build recorded a history entry: part of its key, so a debug build
/// (`cargo test`, `cargo run`) neither reads nor overwrites a release build's table,
/// and the other way round.
///
/// Told by the runtime crate's `debug_assertions`, which cargo turns on in its `dev`
/// profile (and `test`) and off in `release` (and `bench`). It is the build's kind, not
/// its optimisation level: the usual `[profile.dev.package."*"] opt-level = 3` (the
/// dependencies optimised, the program not) still counts as a debug build, which it is
/// for the kernels, whose code is compiled in the program's crate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildProfile {
    /// `debug_assertions` off: `cargo build --release`, `cargo bench`.
    #[default]
    Release,
    /// `debug_assertions` on: `cargo build`, `cargo run`, `cargo test`.
    Debug,
}

impl BuildProfile {
    /// The kind of this build.
    pub const fn current() -> BuildProfile {
        if cfg!(debug_assertions) {
            BuildProfile::Debug
        } else {
            BuildProfile::Release
        }
    }

    /// Its name in the history file and the `adaptive-kernel` command: `release` or `debug`.
    pub const fn name(self) -> &'static str {
        match self {
            BuildProfile::Release => "release",
            BuildProfile::Debug => "debug",
        }
    }
}

impl std::fmt::Display for BuildProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl Fingerprint {
    /// The fingerprint of this process. Never waits for the GPU: its adapter is
    /// included when the GPU has started.
    pub fn current() -> Fingerprint {
        let gpu = match crate::ops::gpu::health() {
            crate::ops::gpu::GpuHealth::Ready(a) => Some(format!(
                "{} | {} | {} | {} | {:04x}:{:04x}",
                a.name, a.driver, a.driver_info, a.backend, a.vendor, a.device
            )),
            _ => None,
        };
        Fingerprint {
            cpu: format!("{} {}", std::env::consts::ARCH, cpu_model()),
            cpu_features: cpu_features(),
            gpu,
            crate_version: env!("CARGO_PKG_VERSION").to_owned(),
            profile: BuildProfile::current(),
        }
    }

    /// A short stable key for this fingerprint: hex of a 64-bit FNV-1a over the
    /// CPU, its features, the crate version and, for a debug build, its profile (not the
    /// GPU: see the module docs). A release build's key is what it was before the profile
    /// was recorded, so its saved tables still load.
    pub fn key(&self) -> String {
        let mut h = Fnv::default();
        h.write(self.cpu.as_bytes());
        for f in &self.cpu_features {
            h.write(b"\0");
            h.write(f.as_bytes());
        }
        h.write(b"\x01");
        h.write(self.crate_version.as_bytes());
        if self.profile != BuildProfile::Release {
            h.write(b"\x02");
            h.write(self.profile.name().as_bytes());
        }
        format!("{:016x}", h.0)
    }
}

/// 64-bit FNV-1a: stable across builds and platforms (unlike `DefaultHasher`).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model") || l.starts_with("CPU part"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The SIMD features the variants may use, from the one table of feature sets.
fn cpu_features() -> Vec<String> {
    crate::simd_level::detected_features().into_iter().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_stable_and_sensitive() {
        let a = Fingerprint {
            cpu: "x".into(),
            cpu_features: vec!["avx2".into()],
            gpu: None,
            crate_version: "1".into(),
            profile: BuildProfile::Release,
        };
        assert_eq!(a.key(), a.clone().key());
        let debug = Fingerprint { profile: BuildProfile::Debug, ..a.clone() };
        assert_ne!(a.key(), debug.key(), "a debug build's table is not a release build's");
        let b = Fingerprint { gpu: Some("lavapipe".into()), ..a.clone() };
        assert_eq!(a.key(), b.key(), "the GPU is recorded, not keyed");
        let d = Fingerprint { cpu_features: vec!["avx2".into(), "avx512f".into()], ..a.clone() };
        assert_ne!(a.key(), d.key());
        let c = Fingerprint { crate_version: "2".into(), ..a.clone() };
        assert_ne!(a.key(), c.key());
    }

    #[test]
    fn an_entry_written_before_the_profile_was_recorded_keeps_its_key_as_a_release_build() {
        let old = r#"{"cpu":"x","cpu_features":["avx2"],"gpu":null,"crate_version":"1"}"#;
        let old: Fingerprint = serde_json::from_str(old).unwrap();
        assert_eq!(old.profile, BuildProfile::Release);
        // The key such an entry was written under: FNV-1a over the CPU, features and version.
        assert_eq!(old.key(), "82a8e4477bc7fe56");
    }
}
