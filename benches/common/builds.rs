//! Two or more builds of one bench, measured in the same run: `--against LABEL=PATH`
//! names another build's binary of the same bench source (built on another commit of
//! the runtime, say main before a change), and the bench runs its trials in that binary
//! and in its own, alternately, so that both sides see the same machine (BENCHMARKS.md:
//! "compare as ratios measured in the same run, interleave the two sides").
//!
//! How to build the other side: a worktree of the other commit with this checkout's
//! bench files copied over it (`scripts/bench-against`), so both binaries time the same
//! workload and differ only in the runtime.

use std::path::PathBuf;
use std::process::Command;

/// One build of the bench: a label, and the binary that runs its trials.
#[derive(Clone, Debug)]
pub(crate) struct Build {
    /// How tables name it (`this` for the running binary).
    pub(crate) label: String,
    /// Its bench binary.
    pub(crate) exe: PathBuf,
}

/// The builds named on the command line: this binary first (`this`), then each
/// `--against LABEL=PATH` (or `--against PATH`, labelled `other`, `other2`, …), in order.
/// Panics with what is expected on a malformed argument or a path that does not exist.
pub(crate) fn builds() -> Vec<Build> {
    let this = std::env::current_exe().expect("the bench's own path");
    let mut out = vec![Build { label: "this".to_owned(), exe: this }];
    let args: Vec<String> = std::env::args().collect();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--against" {
            let value = args
                .get(i + 1)
                .unwrap_or_else(|| panic!("--against needs LABEL=PATH (the other build's bench binary)"));
            let (label, path) = match value.split_once('=') {
                Some((l, p)) => (l.to_owned(), p),
                None if out.len() == 1 => ("other".to_owned(), value.as_str()),
                None => (format!("other{}", out.len()), value.as_str()),
            };
            let exe = PathBuf::from(path);
            assert!(exe.is_file(), "--against {value}: no such file (build it with scripts/bench-against)");
            out.push(Build { label, exe });
            i += 1;
        }
        i += 1;
    }
    out
}

/// The value of `--NAME N` on the command line, else `default`.
pub(crate) fn count_arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    let flag = format!("--{name}");
    match args.iter().position(|a| *a == flag) {
        Some(i) => {
            args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{flag} needs a whole number"))
        }
        None => default,
    }
}

/// The order the builds run in round `round`: rotated by one each round, so that no
/// build always runs first (after a quiet moment) or last.
pub(crate) fn order(builds: &[Build], round: usize) -> Vec<&Build> {
    let n = builds.len();
    (0..n).map(|i| &builds[(i + round) % n]).collect()
}

/// A command running `build`'s binary with the bench's smoke mode passed on.
pub(crate) fn command(build: &Build) -> Command {
    let mut c = Command::new(&build.exe);
    crate::smoke::pass_to(&mut c);
    c
}
