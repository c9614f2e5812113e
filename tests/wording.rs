//! One wording in everything a user reads: the README, the guide, the
//! attribute's reference, the crates' front pages, the packages' descriptions
//! and the command's help.
//!
//! - The kernel has four variants (Scalar, SIMD, Parallel, GPU), so no text may
//!   say it has three, and the README, the guide and the reference list them as
//!   `Backend::ALL` names them; the backend is spelled `Simd` only as the
//!   type's name (in code), SIMD in prose.
//! - The guide's list of rewrites (`docs/guide/attribute.md`, "What it does to
//!   your loops") is counted, and every "N rewrites" in the README, the guide
//!   and the reference must say that count.
//! - The loop table (`docs/guide/attribute.md`, "What your loop gets") says, by
//!   loop shape (rows) and by variant (columns), what each variant does; each
//!   row has a kernel of that shape below ([`row_kernel`]), and each cell's
//!   verdict (its leading `**bold**` text) and reason words (`overlap`) are
//!   checked against that kernel's spec ([`holds`]). A new row needs a kernel; a
//!   new verdict needs a line in `holds`.
//! - The README's first screen (40 lines) holds the dependency line, the
//!   attribute on a loop and the link to the loop table; the whole README stays
//!   under 250 lines.

use std::path::{Path, PathBuf};

use adaptive_kernel::kernel::{KernelSpec, LOOP_REASONS};
use adaptive_kernel::Backend;

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

/// A file of the repository, by its path from the root.
fn read(path: &str) -> String {
    let path = Path::new(ROOT).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The guide's chapter on what the attribute does: the variants, the loop table, the rewrites.
const GUIDE: &str = "docs/guide/attribute.md";

/// The documents whose wording of the variants and rewrites must agree.
const AGREEING: [&str; 3] = ["README.md", GUIDE, "macros/doc/reference.md"];

/// The part of Markdown `text` under the heading `## {heading}`, up to the next heading of level 1 or 2.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text.find(&format!("\n## {heading}\n")).unwrap_or_else(|| panic!("no heading `## {heading}`"))
        + heading.len()
        + 5;
    let rest = &text[start..];
    let end = rest.find("\n## ").or_else(|| rest.find("\n# ")).unwrap_or(rest.len());
    &rest[..end]
}

/// The first Markdown table of `text`: its rows (the header first, the `---` row left
/// out), each a list of trimmed cells. A `|` inside a code span does not end a cell.
fn table(text: &str) -> Vec<Vec<String>> {
    let lines = text.lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|'));
    lines
        .filter(|l| !l.starts_with("| ---"))
        .map(|line| {
            let (mut cells, mut cell, mut code) = (Vec::new(), String::new(), false);
            for c in line.trim().trim_matches('|').chars() {
                match c {
                    '`' => {
                        code = !code;
                        cell.push(c);
                    }
                    '|' if !code => cells.push(std::mem::take(&mut cell).trim().to_owned()),
                    _ => cell.push(c),
                }
            }
            cells.push(cell.trim().to_owned());
            cells
        })
        .collect()
}

/// The verdict of a cell: the text of the `**bold**` it starts with.
fn verdict(cell: &str) -> Option<&str> {
    let rest = cell.strip_prefix("**")?;
    rest.find("**").map(|end| &rest[..end])
}

/// The reason words (`LOOP_REASONS`) a cell names in code spans, in order.
fn cited_reasons(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).filter(|w| LOOP_REASONS.iter().any(|(r, _)| r == w)).collect()
}

/// The variants as prose lists them: "Scalar, SIMD, Parallel and GPU", from `Backend::ALL`.
fn variant_list() -> String {
    let names = Backend::ALL.map(Backend::name);
    let (last, rest) = names.split_last().expect("variants");
    format!("{} and {last}", rest.join(", "))
}

#[test]
fn the_readme_the_guide_and_the_reference_list_the_variants_as_the_code_does() {
    let list = variant_list();
    assert_eq!(list, "Scalar, SIMD, Parallel and GPU");
    for doc in AGREEING {
        let words = read(doc).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(&list), "{doc} lists the variants as \"{list}\"");
    }
    let guide = read(GUIDE);
    let rows = table(section(&guide, "The variants"));
    let named: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(named, Backend::ALL.map(Backend::name), "the guide's variants table, in order");
    let header = &table(section(&guide, "What your loop gets"))[0];
    assert_eq!(header[1..], Backend::ALL.map(Backend::name), "the loop table's columns");
}

/// Number words as the documents write counts.
const NUMBERS: [&str; 11] = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

#[test]
fn every_count_of_the_rewrites_is_the_guides_list() {
    let guide = read(GUIDE);
    let list = section(&guide, "What it does to your loops");
    let count = list.lines().filter(|l| l.starts_with("- **")).count();
    assert!(count >= 4, "the guide lists the rewrites as `- **name.**` items: {count}");
    let mut stated = Vec::new();
    for doc in AGREEING {
        let text = read(doc).to_lowercase().replace('\n', " ");
        let words: Vec<&str> = text.split_whitespace().collect();
        for pair in words.windows(2) {
            if pair[1].trim_end_matches(|c: char| !c.is_alphanumeric()) == "rewrites" {
                let n = pair[0].trim_matches(|c: char| !c.is_alphanumeric());
                if let Some(n) = NUMBERS.iter().position(|w| *w == n).or_else(|| n.parse().ok()) {
                    stated.push((doc, n));
                }
            }
        }
    }
    for doc in AGREEING {
        assert!(stated.iter().any(|(d, _)| *d == doc), "{doc} states how many rewrites there are");
    }
    for (doc, n) in stated {
        assert_eq!(n, count, "{doc} says {} rewrites; the guide lists {count}", NUMBERS.get(n).unwrap_or(&"?"));
    }
}

/// The README's first screen: what a reader sees before scrolling.
const FIRST_SCREEN: usize = 40;

#[test]
fn the_readme_opens_with_a_loop_the_dependency_and_the_loop_table() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(lines < 250, "README.md has {lines} lines; keep it under 250 (details go in the guide)");
    let screen: String = readme.lines().take(FIRST_SCREEN).collect::<Vec<_>>().join("\n");
    for (what, needle) in [
        ("the dependency line", "adaptive-kernel = {"),
        ("the attribute", "#[adaptive_kernel("),
        ("a loop", "for "),
        ("the loop table", "docs/guide/attribute.md#what-your-loop-gets"),
    ] {
        assert!(screen.contains(needle), "{what} ({needle:?}) within the README's first {FIRST_SCREEN} lines");
    }
    assert!(read(GUIDE).contains("\n## What your loop gets\n"), "the README's link has its heading");
}

/// The anchor GitHub and rustdoc give a Markdown heading: lower case, spaces as `-`,
/// other punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c.to_ascii_lowercase() })
        .collect()
}

#[test]
fn the_readmes_links_into_the_repository_lead_somewhere() {
    let readme = read("README.md");
    let mut checked = 0;
    for target in readme.split("](").skip(1).filter_map(|rest| rest.split(')').next()) {
        if target.contains("://") {
            continue;
        }
        let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
        let text = read(path);
        if !fragment.is_empty() {
            let found = text
                .lines()
                .filter_map(|l| l.strip_prefix('#'))
                .any(|h| anchor(h.trim_start_matches('#').trim()) == fragment);
            assert!(found, "README.md links to {target}: {path} has no heading with that anchor");
        }
        checked += 1;
    }
    assert!(checked >= 10, "the README's links were found: {checked}");
    assert_eq!(anchor("Choosing `complexity`"), "choosing-complexity");
}

/// What a variant does with a loop, as a cell's verdict says, checked against `spec`, the
/// spec of a kernel of the row's shape; `cited`: the reason words the cell names, at least
/// one of which the spec must report (when it names any).
fn holds(variant: Backend, verdict: &str, cited: &[&str], spec: &KernelSpec) -> Result<(), String> {
    let in_simd = |l: &&adaptive_kernel::kernel::LoopRewrite| l.variants.contains(&Backend::Simd);
    let chunked = spec.loops.iter().filter(in_simd).any(|l| l.idiom == "for range =");
    let in_lanes = spec.loops.iter().filter(in_simd).any(|l| l.idiom != "for range =");
    let split = !spec.splits.is_empty() && spec.splits.iter().all(|s| s.reason.is_empty());
    let reported: Vec<&str> = match variant {
        Backend::Parallel => spec.splits.iter().map(|s| s.reason).collect(),
        Backend::Gpu => spec.gpu_loops.iter().map(|l| l.reason).collect(),
        _ => spec.loops.iter().map(|l| l.reason).collect(),
    };
    let on_gpu = !spec.gpu_loops.is_empty() && spec.gpu_loops.iter().all(|l| l.on_gpu());
    let cites = cited.is_empty() || cited.iter().any(|w| reported.contains(w));
    let ok = match (variant, verdict) {
        // Scalar is the body verbatim, whatever its shape.
        (Backend::Scalar, "as written") => true,
        (Backend::Simd, "vectorised as written" | "not vectorised") => !chunked && !in_lanes,
        (Backend::Simd, "as written") => !chunked && !in_lanes && cites,
        (Backend::Simd, "in chunks") => chunked,
        (Backend::Simd, "in lanes") => in_lanes,
        // Only a body that calls `ops::` has a GPU variant of its own making.
        (Backend::Simd, "SIMD ops") => spec.has_gpu,
        (Backend::Parallel, "split") => spec.has_parallel && split,
        (Backend::Parallel, "not split") => !spec.has_parallel && !split && cites,
        (Backend::Parallel, "across the pool") => spec.has_parallel && spec.splits.is_empty(),
        (Backend::Parallel, "no variant") => !spec.has_parallel,
        (Backend::Gpu, "none") => !spec.has_gpu && cites,
        (Backend::Gpu, "on the GPU") => spec.has_gpu && on_gpu,
        (Backend::Gpu, "shader") => spec.has_gpu && spec.gpu_loops.is_empty(),
        _ => return Err(format!("unknown verdict **{verdict}** for {variant}: say in `holds` what it means")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{variant}: **{verdict}** {cited:?}, but the kernel's spec reports loops {:?}, splits {:?}, Parallel variant {}, GPU variant {}",
            spec.loops, spec.splits, spec.has_parallel, spec.has_gpu))
    }
}

/// One kernel per row of the loop table, written in the row's shape; the row's bold name
/// is the key. Never called: only their specs are read.
#[allow(dead_code)]
mod rows {
    use adaptive_kernel::{adaptive_kernel, ops};

    #[adaptive_kernel(complexity = "Low")]
    pub(crate) fn by_item(a: &[f32], out: &mut [f32]) {
        for (o, x) in out.iter_mut().zip(a) {
            *o = 2.0 * x;
        }
    }

    #[adaptive_kernel(complexity = "Low")]
    pub(crate) fn by_index(a: &[f32], out: &mut [f32], n: usize) {
        for i in 1..n - 1 {
            out[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
        }
    }

    #[adaptive_kernel(complexity = "Medium")]
    pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
        let mut acc = 0.0f32;
        for i in 0..a.len().min(b.len()) {
            acc += a[i] * b[i];
        }
        acc
    }

    #[adaptive_kernel(complexity = "Medium")]
    pub(crate) fn total(x: &[f32]) -> f32 {
        x.iter().copied().sum::<f32>()
    }

    #[adaptive_kernel(complexity = "Low")]
    pub(crate) fn halve_rows(a: &[f32], out: &mut [f32], w: usize) {
        for (row, src) in out.chunks_mut(w).zip(a.chunks(w)) {
            for (o, x) in row.iter_mut().zip(src) {
                *o = 0.5 * x;
            }
        }
    }

    #[adaptive_kernel(complexity = "Medium", size = src.len())]
    pub(crate) fn stencil(src: &[f32], out: &mut [f32], w: usize, h: usize) {
        for r in 1..h - 1 {
            out[r * w] = src[r * w];
            out[r * w + w - 1] = src[r * w + w - 1];
            for c in 1..w - 1 {
                out[r * w + c] =
                    0.25 * (src[r * w + c - 1] + src[r * w + c + 1] + src[(r - 1) * w + c] + src[(r + 1) * w + c]);
            }
        }
    }

    #[adaptive_kernel(complexity = "Low")]
    pub(crate) fn drift(x: &mut [f32], v: &mut [f32], dt: f32, n: usize, steps: usize) {
        for _ in 0..steps {
            for i in 0..n {
                v[i] -= dt * x[i];
                x[i] += dt * v[i];
            }
        }
    }

    #[adaptive_kernel(complexity = "Low")]
    pub(crate) fn running_sum(a: &[f32], out: &mut [f32], n: usize) {
        for i in 1..n {
            out[i] = out[i - 1] + a[i];
        }
    }

    #[adaptive_kernel(complexity = "Low")]
    pub(crate) fn histogram(samples: &[u32], hist: &mut [u32]) {
        for &s in samples {
            hist[s as usize] += 1;
        }
    }

    #[adaptive_kernel(complexity = "Low")]
    pub(crate) fn exps(a: &[f32], out: &mut [f32]) {
        for (o, x) in out.iter_mut().zip(a) {
            *o = x.exp();
        }
    }

    #[adaptive_kernel(complexity = "Medium")]
    pub(crate) fn sum_until_negative(a: &[f32]) -> f32 {
        let mut acc = 0.0f32;
        for v in a {
            if *v < 0.0 {
                break;
            }
            acc += v;
        }
        acc
    }

    #[adaptive_kernel(complexity = "Medium")]
    pub(crate) fn layer(w: &[f32], x: &[f32], m: usize, n: usize) -> Vec<f32> {
        ops::matvec(w, x, m, n)
    }
}

/// The kernel of the loop table's row named `key`.
fn row_kernel(key: &str) -> Option<&'static KernelSpec> {
    Some(match key {
        "element-wise, by item" => rows::by_item::KERNEL.spec(),
        "element-wise, by index" => rows::by_index::KERNEL.spec(),
        "float reduction in a `for` loop" => rows::dot::KERNEL.spec(),
        "float reduction as an iterator chain" => rows::total::KERNEL.spec(),
        "rows" => rows::halve_rows::KERNEL.spec(),
        "rows with border writes" => rows::stencil::KERNEL.spec(),
        "a loop inside a time-stepping loop" => rows::drift::KERNEL.spec(),
        "carried dependency" => rows::running_sum::KERNEL.spec(),
        "scatter" => rows::histogram::KERNEL.spec(),
        "calls of `exp`, `ln`, `tanh`, `sin`, `cos`" => rows::exps::KERNEL.spec(),
        "early exit" => rows::sum_until_negative::KERNEL.spec(),
        "`ops::` calls" => rows::layer::KERNEL.spec(),
        _ => return None,
    })
}

/// The rows [`row_kernel`] knows, so that a row dropped from the table is noticed.
const ROWS: usize = 12;

#[test]
fn the_loop_table_says_what_each_variant_does() {
    let guide = read(GUIDE);
    let rows = table(section(&guide, "What your loop gets"));
    assert_eq!(rows.len() - 1, ROWS, "one row per kernel of `row_kernel`");
    let mut wrong = Vec::new();
    for row in &rows[1..] {
        assert_eq!(row.len(), 1 + Backend::COUNT, "a cell per variant: {row:?}");
        let key = verdict(&row[0]).unwrap_or_else(|| panic!("a row starts with its **name**: {row:?}"));
        let spec = row_kernel(key).unwrap_or_else(|| panic!("no kernel for the row **{key}**: add one to `rows`"));
        for (cell, variant) in row[1..].iter().zip(Backend::ALL) {
            let v = verdict(cell).unwrap_or_else(|| panic!("row **{key}**, {variant}: no **verdict** in {cell:?}"));
            if let Err(e) = holds(variant, v, &cited_reasons(cell), spec) {
                wrong.push(format!("row **{key}**: {e}"));
            }
        }
    }
    assert!(wrong.is_empty(), "the loop table disagrees with the macro:\n{}", wrong.join("\n"));
}

#[test]
fn the_table_checks_see_what_they_look_for() {
    let rows = table("x\n| a | b |\n| --- | --- |\n| **c**: `d | e` | **f** (`overlap`) |\nafter");
    assert_eq!(rows, [vec!["a", "b"], vec!["**c**: `d | e`", "**f** (`overlap`)"]]);
    assert_eq!(verdict(&rows[1][1]), Some("f"));
    assert_eq!(cited_reasons("**not split** (`overlap`, `i`)"), ["overlap"]);
    assert_eq!(section("# t\n## A\nbody\n## B\nother", "A"), "body");
}
