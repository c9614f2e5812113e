//! One wording of the variants in everything a user reads: the README, the
//! guide, the attribute's reference, the crates' front pages, the packages'
//! descriptions and the command's help. The kernel has four variants (Scalar,
//! SIMD, Parallel, GPU), so no text may say it has three; and the backend is
//! spelled `Simd` only as the type's name (in code), SIMD in prose.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Phrases from before the Parallel variant existed (compared in lower case).
const OLD: [&str; 6] = [
    "three variants",
    "three compiled variants",
    "type-checked three times",
    "(scalar, simd, gpu)",
    "scalar, simd and gpu variants",
    "`\"scalar\"`, `\"simd\"` and `\"gpu\"`",
];

/// What a user reads, as (file, is Markdown).
fn documents() -> Vec<(PathBuf, bool)> {
    let root = Path::new(ROOT);
    let mut out: Vec<(PathBuf, bool)> =
        ["README.md", "CHANGELOG.md", "macros/doc/reference.md"].iter().map(|p| (root.join(p), true)).collect();
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root.join("docs/guide"))
        .expect("the guide's chapters")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    guide.sort();
    assert!(guide.len() >= 10, "the guide has its chapters: {guide:?}");
    out.extend(guide.into_iter().map(|p| (p, true)));
    for code in [
        "src/lib.rs",
        "src/guide.rs",
        "runtime/src/lib.rs",
        "macros/src/lib.rs",
        "src/bin/adaptive-kernel/main.rs",
        "Cargo.toml",
        "macros/Cargo.toml",
        "runtime/Cargo.toml",
        "examples/web/Cargo.toml",
    ] {
        out.push((root.join(code), false));
    }
    out
}

/// `text` without fenced code blocks and inline code spans: the prose, line for line
/// (a line of code becomes an empty line).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if fenced {
            out.push('\n');
            continue;
        }
        // Inline code spans alternate with prose at each backtick.
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                out.push_str(part);
            }
        }
        out.push('\n');
    }
    out
}

#[test]
fn no_text_says_the_kernel_has_three_variants() {
    let mut found = Vec::new();
    for (path, _) in documents() {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            for old in OLD {
                if lower.contains(old) {
                    found.push(format!("{}:{}: {old:?} in {line:?}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "old wording of the variants:\n{}", found.join("\n"));
}

#[test]
fn prose_spells_the_backend_simd() {
    let mut found = Vec::new();
    for (path, markdown) in documents() {
        if !markdown {
            continue;
        }
        let text = prose(&std::fs::read_to_string(&path).unwrap());
        for (n, line) in text.lines().enumerate() {
            let words = line.split(|c: char| !c.is_alphanumeric() && c != '_');
            if let Some(w) = words.into_iter().find(|w| *w == "Simd" || *w == "simd") {
                found.push(format!("{}:{}: {w:?} in prose: {line:?}", path.display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "write SIMD in prose (`Simd` only as code):\n{}", found.join("\n"));
}

#[test]
fn the_checks_see_what_they_look_for() {
    assert_eq!(prose("a `Simd` b\n```\nSimd\n```\nc"), "a  b\n\n\n\nc\n");
    let lower = "it has three compiled variants (Scalar, SIMD, GPU)".to_lowercase();
    assert!(OLD.iter().any(|old| lower.contains(old)));
}
