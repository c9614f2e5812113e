//! The workspace's files import each other in one direction only: no import
//! cycles between the files of any crate (the runtime, the macros, the facade,
//! its command, the benches made of several files, the WebAssembly example).
//! A crate's files are found by following its `mod` declarations from its root.
//!
//! An edge `a → b` is a path in `a` (in a `use` or inline, outside comments,
//! `#[cfg(test)]` modules and the code a macro generates with `quote!`) that
//! names an item of file `b`: `crate::…`,
//! `super::…`, `self::…` and `$crate::…` paths are resolved to the deepest
//! module file they reach, and an item that a `mod.rs`/`lib.rs` re-exports
//! (`pub use child::Item`) is followed to its defining file. Module
//! declarations and re-exports themselves are structure, not dependencies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const RUNTIME: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/runtime/src/lib.rs");
const MACROS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/macros/src/lib.rs");
/// Every crate of more than one file, by its root file.
const CRATES: [&str; 7] = [
    RUNTIME,
    MACROS,
    concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs"),
    concat!(env!("CARGO_MANIFEST_DIR"), "/src/bin/adaptive-kernel/main.rs"),
    concat!(env!("CARGO_MANIFEST_DIR"), "/benches/routing_quality/main.rs"),
    concat!(env!("CARGO_MANIFEST_DIR"), "/benches/programs.rs"),
    concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web/src/lib.rs"),
];

/// A module path (`["kernel", "site"]`) and the file that holds it.
struct Module {
    path: Vec<String>,
    file: PathBuf,
    code: String,
}

/// The name a `mod name;` declaration line declares (any visibility), if it is one.
fn declared_module(line: &str) -> Option<&str> {
    let l = line.trim_start();
    let l = ["pub(crate) ", "pub(super) ", "pub "].iter().fold(l, |l, p| l.strip_prefix(p).unwrap_or(l));
    Some(l.strip_prefix("mod ")?.strip_suffix(';')?.trim())
}

/// Every file of the crate whose root file is `root`, found by following its `mod`
/// declarations (a `#[path]` attribute included), with its path relative to the
/// root's folder.
fn modules(root: &str) -> Vec<Module> {
    let root = PathBuf::from(root);
    let base = root.parent().unwrap().to_owned();
    let mut out = Vec::new();
    let mut todo = vec![(root.clone(), Vec::<String>::new())];
    while let Some((file, path)) = todo.pop() {
        let code = without_quoted(&strip(&std::fs::read_to_string(&file).unwrap()));
        let here = file.parent().unwrap();
        let owns_folder = file == root || matches!(file.file_name().and_then(|n| n.to_str()), Some("mod.rs"));
        let children = if owns_folder { here.to_owned() } else { here.join(file.file_stem().unwrap()) };
        let mut path_attr = None;
        // Inline modules (`mod name { … }`) open, with the brace depth each opened at.
        let (mut inline, mut depth) = (Vec::<(String, usize)>::new(), 0usize);
        for line in code.lines() {
            let l = line.trim();
            if let Some(p) = l.strip_prefix("#[path = \"").and_then(|r| r.strip_suffix("\"]")) {
                path_attr = Some(here.join(p));
            } else if let Some(name) = declared_module(l) {
                let folder = inline.iter().fold(children.clone(), |f, (m, _)| f.join(m));
                let child = path_attr.take().unwrap_or_else(|| {
                    let flat = folder.join(format!("{name}.rs"));
                    if flat.exists() {
                        flat
                    } else {
                        folder.join(name).join("mod.rs")
                    }
                });
                let mut child_path = path.clone();
                child_path.extend(inline.iter().map(|(m, _)| m.clone()));
                child_path.push(name.to_owned());
                todo.push((child, child_path));
            } else if !l.starts_with("#[") {
                path_attr = None;
            }
            let opens =
                l.strip_suffix('{').and_then(|l| declared_module(&format!("{};", l.trim_end())).map(str::to_owned));
            if let Some(name) = opens {
                inline.push((name, depth));
            }
            depth += l.matches('{').count();
            depth = depth.saturating_sub(l.matches('}').count());
            inline.retain(|&(_, at)| at < depth);
        }
        let rel = file.strip_prefix(&base).unwrap().to_owned();
        out.push(Module { path, file: rel, code: with_child_paths(&code) });
    }
    out
}

/// The code without comments and without the trailing `#[cfg(test)] mod … { … }` block
/// (a `#[cfg(test)] mod tests;` declaration stays: the file it names is read on its own).
fn strip(src: &str) -> String {
    let block = src.match_indices("#[cfg(test)]\nmod ").map(|(i, _)| i).find(|&i| {
        let line = src[i..].lines().nth(1).unwrap_or("");
        line.trim_end().ends_with('{')
    });
    let src = match block {
        Some(i) => &src[..i],
        None => src,
    };
    src.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `code` without the bodies of `quote!`, `quote_spanned!` and `parse_quote!` invocations:
/// paths there are code the macro generates for its user's crate, not imports of this file.
fn without_quoted(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..chars.len().min(i + 20)].iter().collect();
        let starts_word = i == 0 || !is_ident(chars[i - 1]);
        let quoted = ["quote!", "quote_spanned!", "parse_quote!", "parse_quote_spanned!"]
            .into_iter()
            .find(|m| starts_word && rest.starts_with(m));
        let Some(m) = quoted else {
            out.push(chars[i]);
            i += 1;
            continue;
        };
        out.push_str(m);
        i += m.len();
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        // Skip the balanced body, whatever its delimiter.
        let mut depth = 0usize;
        while let Some(&c) = chars.get(i) {
            i += 1;
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push_str("{}");
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `line` re-exports (`pub use`, `pub(crate) use`, `pub(super) use`).
fn is_reexport(line: &str) -> bool {
    let l = line.trim_start();
    ["pub use ", "pub(crate) use ", "pub(super) use "].iter().any(|p| l.starts_with(p))
}

/// `code` with paths through the file's own child modules (`mod x;` … `x::y`) spelled `self::x::y`.
fn with_child_paths(code: &str) -> String {
    let children: Vec<String> = code.lines().filter_map(declared_module).map(str::to_owned).collect();
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':' || chars[i - 1] == '$');
        let child = children.iter().find(|c| {
            let end = i + c.len();
            starts_word
                && chars.get(i..end).is_some_and(|w| w.iter().copied().eq(c.chars()))
                && chars.get(end) == Some(&':')
                && chars.get(end + 1) == Some(&':')
        });
        if let Some(c) = child {
            out.push_str("self::");
            out.push_str(c);
            i += c.len();
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Every path in `code` that starts with `crate`, `super`, `self` or `$crate`,
/// with `use` trees (`a::{b, c::d}`) expanded.
fn paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':');
        let rest: String = chars[i..chars.len().min(i + 8)].iter().collect();
        let head = ["$crate::", "crate::", "super::", "self::"].into_iter().find(|h| rest.starts_with(h));
        match head {
            Some(h) if starts_word => {
                let (trees, end) = tree(&chars, i + h.len() - 2);
                let root = h.trim_start_matches('$').trim_end_matches("::").to_owned();
                for mut t in trees {
                    t.insert(0, root.clone());
                    out.push(t);
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

/// Parses `::a::b::{c, d::e}` at `i` (pointing at the first `:`); returns the paths and where parsing stopped.
fn tree(chars: &[char], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    loop {
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            return (vec![prefix], i);
        }
        if chars.get(i) == Some(&'{') {
            i += 1;
            let mut all = Vec::new();
            loop {
                while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                if chars.get(i).is_none_or(|c| *c == '}') {
                    return (all, i + 1);
                }
                let start = i;
                while chars.get(i).is_some_and(|c| is_ident(*c) || *c == '*') {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                let (subs, end) = tree(chars, i);
                for mut s in subs {
                    let mut p = prefix.clone();
                    if !name.is_empty() {
                        p.push(name.clone());
                    }
                    p.append(&mut s);
                    all.push(p);
                }
                i = end;
                // Skip `as alias` and anything else up to the next separator.
                while chars.get(i).is_some_and(|c| *c != ',' && *c != '}') {
                    i += 1;
                }
            }
        }
        let start = i;
        while chars.get(i).is_some_and(|c| is_ident(*c) || *c == '*') {
            i += 1;
        }
        if i == start {
            return (vec![prefix], i);
        }
        prefix.push(chars[start..i].iter().collect());
    }
}

/// The module path a path starting at `from` names, and the rest of it.
fn absolute(from: &Module, path: &[String]) -> Vec<String> {
    let mut base: Vec<String> = from.path.clone();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        _ => {}
    }
    while rest.first().map(String::as_str) == Some("super") {
        // `a/b.rs` is module `a::b` and `a/mod.rs` is `a`: either way `super` drops one segment.
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    base
}

/// Whether `m` is a crate root or a `mod.rs`: a folder's file, whose declarations and
/// re-exports are structure.
fn is_folder(m: &Module) -> bool {
    m.path.is_empty() || m.file.file_name().is_some_and(|n| n == "mod.rs")
}

fn resolve(mods: &BTreeMap<Vec<String>, &Module>, full: &[String], depth: usize) -> Option<PathBuf> {
    // The deepest module the path reaches.
    let n = (0..=full.len()).rev().find(|&n| mods.contains_key(&full[..n]))?;
    let module = mods[&full[..n]];
    if is_folder(module) && n < full.len() && depth < 8 {
        // A re-exported item: follow `pub use x::…::Item` (or `… as Item`, or a glob) in that file.
        let item = &full[n];
        let reexports: Vec<&str> = module.code.lines().filter(|l| is_reexport(l)).collect();
        for p in paths(&reexports.join("\n")) {
            let names_item = p.last() == Some(item) || p.last().is_some_and(|l| l == "*");
            if p.first().map(String::as_str) == Some("self") && names_item {
                let mut target = absolute(module, &p);
                if target.last().is_some_and(|l| l == "*") {
                    target.pop();
                    target.push(item.clone());
                }
                if let Some(f) = resolve(mods, &target, depth + 1) {
                    return Some(f);
                }
            }
        }
    }
    Some(module.file.clone())
}

/// The import edges between the files of the crate whose root file is `root`.
fn graph(root: &str) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let all = modules(root);
    let mods: BTreeMap<Vec<String>, &Module> = all.iter().map(|m| (m.path.clone(), m)).collect();
    let mut edges = BTreeMap::new();
    for m in &all {
        let code: String = if is_folder(m) {
            // Declarations and re-exports are the folder's structure, not its dependencies.
            m.code.lines().filter(|l| !is_reexport(l)).collect::<Vec<_>>().join("\n")
        } else {
            m.code.clone()
        };
        let mut to = BTreeSet::new();
        for p in paths(&code) {
            if p.last().is_some_and(|l| l == "*") && p.len() == 2 && p[0] == "super" {
                continue; // `use super::*` in an inline module
            }
            let full = absolute(m, &p);
            if let Some(f) = resolve(&mods, &full, 0) {
                if f != m.file {
                    to.insert(f);
                }
            }
        }
        edges.insert(m.file.clone(), to);
    }
    edges
}

/// A cycle in `edges`, if any (depth-first search).
fn find_cycle(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    fn visit(
        n: &Path,
        edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        state: &mut BTreeMap<PathBuf, u8>,
        stack: &mut Vec<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        state.insert(n.to_owned(), 1);
        stack.push(n.to_owned());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == m).unwrap();
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(m, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if state.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// Fails with the cycle when `edges` have one.
fn assert_acyclic(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>, what: &str) {
    if let Some(cycle) = find_cycle(edges) {
        let shown: Vec<String> = cycle.iter().map(|p| p.display().to_string()).collect();
        panic!("import cycle between {what} files: {}", shown.join(" → "));
    }
}

#[test]
fn runtime_files_import_each_other_in_one_direction() {
    let edges = graph(RUNTIME);
    assert!(edges.len() > 30, "found only {} files under {RUNTIME}", edges.len());
    let cold = PathBuf::from("kernel/cold.rs");
    assert!(edges[&cold].contains(&PathBuf::from("kernel/policy/mod.rs")), "the resolver must see cold → policy");
    let step = PathBuf::from("kernel/policy/mod.rs");
    assert!(edges[&step].contains(&PathBuf::from("kernel/policy/explore.rs")), "and a folder's own children");
    assert_acyclic(&edges, "runtime");
}

#[test]
fn macro_files_import_each_other_in_one_direction() {
    let edges = graph(MACROS);
    assert!(edges.len() > 15, "found only {} files under {MACROS}", edges.len());
    // The generators read the parsed kernel, which lives apart from what drives them.
    let expand = PathBuf::from("expand.rs");
    for (from, to) in [("expand.rs", "kernel_def.rs"), ("in_impl.rs", "kernel_def.rs"), ("expand.rs", "in_impl.rs")] {
        assert!(edges[&PathBuf::from(from)].contains(&PathBuf::from(to)), "the resolver must see {from} → {to}");
    }
    assert!(!edges[&PathBuf::from("kernel_def.rs")].contains(&expand), "the parsed kernel does not reach its driver");
    assert_acyclic(&edges, "macro");
}

#[test]
fn the_three_rewrites_stand_side_by_side_above_the_body_model() {
    // `reduce/` (SIMD), `split/` (Parallel) and `shader/` (GPU) read the model of the body
    // (`body/`) and nothing of each other; the model reads none of them.
    let edges = graph(MACROS);
    let folder = |p: &Path| p.components().next().and_then(|c| c.as_os_str().to_str()).map(str::to_owned);
    let rewrites = ["reduce", "split", "shader"];
    for (from, to) in &edges {
        let Some(here) = folder(from) else { continue };
        for target in to {
            let there = folder(target).unwrap_or_default();
            if rewrites.contains(&here.as_str()) {
                assert!(
                    there == here || !rewrites.contains(&there.as_str()),
                    "{} reads {}: a rewrite reads the model, not another rewrite",
                    from.display(),
                    target.display()
                );
            }
            if here == "body" {
                assert!(
                    !rewrites.contains(&there.as_str()),
                    "the model reads a rewrite: {} → {}",
                    from.display(),
                    target.display()
                );
            }
        }
    }
    for rewrite in rewrites {
        let reads_model = edges.iter().any(|(from, to)| {
            folder(from).as_deref() == Some(rewrite) && to.iter().any(|t| folder(t).as_deref() == Some("body"))
        });
        assert!(reads_model, "{rewrite}/ reads the model");
    }
}

#[test]
fn every_crate_s_files_import_each_other_in_one_direction() {
    for src in CRATES {
        let edges = graph(src);
        assert!(edges.len() > 1, "found only {} files under {src}", edges.len());
        assert_acyclic(&edges, src);
    }
    let bench = graph(CRATES[4]);
    assert!(bench[&PathBuf::from("pass.rs")].contains(&PathBuf::from("calls.rs")), "a bench's modules are read too");
}

#[test]
#[ignore = "prints the graphs, for eyes"]
fn print_graph() {
    for src in CRATES {
        for (from, to) in graph(src) {
            println!("{} -> {:?}", from.display(), to);
        }
    }
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let p = |s: &str| PathBuf::from(s);
    let mut edges = BTreeMap::new();
    edges.insert(p("a.rs"), BTreeSet::from([p("b.rs")]));
    edges.insert(p("b.rs"), BTreeSet::from([p("c.rs")]));
    edges.insert(p("c.rs"), BTreeSet::from([p("a.rs")]));
    assert_eq!(find_cycle(&edges).map(|c| c.len()), Some(4));
    edges.insert(p("c.rs"), BTreeSet::new());
    assert_eq!(find_cycle(&edges), None);
}

#[test]
fn generated_code_is_not_an_import() {
    let code =
        "use crate::a::B;\nlet t = quote! { use super::super::*; crate::c::D };\nlet u = parse_quote!(self::e::F);";
    let s: Vec<String> = paths(&without_quoted(code)).iter().map(|p| p.join("::")).collect();
    assert_eq!(s, ["crate::a::B"]);
}

#[test]
fn use_trees_are_expanded() {
    let got = paths("use super::{a, b::{c, d as e}};\nlet x = crate::ops::gpu::is_available();");
    let s: Vec<String> = got.iter().map(|p| p.join("::")).collect();
    assert_eq!(s, ["super::a", "super::b::c", "super::b::d", "crate::ops::gpu::is_available"]);
}
