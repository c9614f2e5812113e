//! The golden expansions: every kernel of the workspace's tests, trybuild pass
//! cases, benches and examples, expanded and normalised, compared with the
//! files under `macros/golden/` (one per source file). A change of the macro
//! that changes an expansion shows here, kernel by kernel, as a diff.
//!
//! `AK_BLESS=1 cargo test -p adaptive-kernel-macros golden` writes the files
//! anew (and removes those whose source file is gone); review the diff before
//! committing it. Each kernel is expanded as the compiler would expand it,
//! but for where it sits: the attribute reads its source file to learn whether
//! a function without a receiver is in an `impl` or `trait` block, which a
//! unit test's tokens do not point to, so the walk says it
//! ([`crate::enclosing::assume`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::Visit;
use syn::{Attribute, ItemFn};

use crate::enclosing::{self, Enclosing};

/// The folders (relative to the workspace) whose `.rs` files hold the kernels, searched
/// recursively.
const SOURCES: [&str; 4] = ["tests", "ui-tests/tests/ui/pass", "benches", "examples"];

/// Tokens as syn prints a parsed file (comments gone, `///` as `#[doc]`), one token at a
/// time: punctuation spacing (`::<` against `:: <`, which inside a macro call's tokens
/// depends on how they were written) is left out. `lines`: a line break after each `;` and
/// around each `{ }` group, indented by depth, so that a change reads as a line diff.
pub(crate) fn normalised(tokens: TokenStream, lines: bool) -> String {
    struct Out {
        text: String,
        lines: bool,
        /// Whether the next token starts a line (no space before it).
        line_start: bool,
    }
    impl Out {
        fn token(&mut self, t: &str) {
            if !self.line_start {
                self.text.push(' ');
            }
            self.text.push_str(t);
            self.line_start = false;
        }
        fn newline(&mut self, depth: usize) {
            if self.lines {
                self.text.push('\n');
                self.text.push_str(&"  ".repeat(depth));
                self.line_start = true;
            }
        }
        fn render(&mut self, tokens: TokenStream, depth: usize) {
            for tt in tokens {
                match tt {
                    TokenTree::Group(g) => {
                        let (open, close) = crate::tokens::delimiters(g.delimiter());
                        let brace = g.delimiter() == Delimiter::Brace;
                        self.token(open);
                        if brace {
                            self.newline(depth + 1);
                        }
                        self.render(g.stream(), depth + usize::from(brace));
                        if brace {
                            self.newline(depth);
                        }
                        self.token(close);
                        if brace {
                            self.newline(depth);
                        }
                    }
                    TokenTree::Punct(p) if p.as_char() == ';' => {
                        self.token(";");
                        self.newline(depth);
                    }
                    other => self.token(&other.to_string()),
                }
            }
        }
    }
    let file = syn::parse2::<syn::File>(tokens).expect("an expansion is a file's items");
    let mut out = Out { text: String::new(), lines, line_start: true };
    out.render(file.into_token_stream(), 0);
    // No trailing blanks, no empty lines: the layout is only there for diffs.
    let mut text: String = out.text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n");
    text.push('\n');
    text
}

/// One kernel found in a source file.
struct Kernel {
    /// Its function, with the attribute removed.
    func: ItemFn,
    /// The attribute's arguments.
    args: TokenStream,
    /// Where the attribute finds it in its file (`crate::enclosing`): in an `impl` or `trait`
    /// block, free, or (written by a macro, in no such block there) unknown.
    enclosing: Enclosing,
}

/// Every function under `#[adaptive_kernel(..)]` (or `#[path::adaptive_kernel(..)]`) in a
/// file: free, in modules, in function bodies, in `impl` and `trait` blocks, and in the
/// bodies of `macro_rules!` where no metavariable stands for a part of the function (the
/// attribute itself may be one: `$(#[$annotate(..)])?`).
#[derive(Default)]
struct Kernels {
    found: Vec<Kernel>,
    /// How many `impl` or `trait` blocks enclose the item being visited, innermost last.
    in_impl: Vec<bool>,
}

impl Kernels {
    fn kernel(&mut self, attrs: &[Attribute], func: impl FnOnce(Vec<Attribute>) -> ItemFn) {
        let is_ours = |a: &Attribute| a.path().segments.last().is_some_and(|s| s.ident == "adaptive_kernel");
        let Some(at) = attrs.iter().position(is_ours) else { return };
        let mut attrs = attrs.to_vec();
        let attr = attrs.remove(at);
        let args = match &attr.meta {
            syn::Meta::List(list) => list.tokens.clone(),
            _ => TokenStream::new(),
        };
        let enclosing =
            if self.in_impl.last().copied().unwrap_or(false) { Enclosing::Associated } else { Enclosing::Free };
        self.found.push(Kernel { func: func(attrs), args, enclosing });
    }

    /// The kernels in a macro's tokens; `associated`: the tokens are an `impl` or `trait` block's.
    fn in_macro(&mut self, tokens: TokenStream, associated: bool) {
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let punct = |i: usize, c: char| matches!(tts.get(i), Some(TokenTree::Punct(p)) if p.as_char() == c);
        let mut i = 0;
        while i < tts.len() {
            // `#[adaptive_kernel(ARGS)]`, `#[$annotate(ARGS)]`, or either in `$( .. )?`.
            let found = match (&tts[i], tts.get(i + 1)) {
                (TokenTree::Punct(p), Some(TokenTree::Group(g))) if p.as_char() == '#' => {
                    attribute_args(g.stream()).map(|args| (args, i + 2))
                }
                (TokenTree::Punct(p), Some(TokenTree::Group(g)))
                    if p.as_char() == '$' && g.delimiter() == Delimiter::Parenthesis && punct(i + 2, '?') =>
                {
                    let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                    match inner.as_slice() {
                        [TokenTree::Punct(p), TokenTree::Group(attr)] if p.as_char() == '#' => {
                            attribute_args(attr.stream()).map(|args| (args, i + 3))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some((args, start)) = found {
                // The function: its tokens up to the first braces after `fn`.
                let mut seen_fn = false;
                let end = (start..tts.len()).find(|&j| {
                    seen_fn |= matches!(&tts[j], TokenTree::Ident(id) if id == "fn");
                    seen_fn && matches!(&tts[j], TokenTree::Group(g) if g.delimiter() == Delimiter::Brace)
                });
                if let Some(end) = end {
                    let func: TokenStream = tts[start..=end].iter().cloned().collect();
                    let metavariable = func.to_string().contains('$');
                    if let (false, Ok(func)) = (metavariable, syn::parse2::<ItemFn>(func)) {
                        let enclosing = if associated { Enclosing::Associated } else { Enclosing::Unknown };
                        self.found.push(Kernel { func, args, enclosing });
                    }
                    i = end + 1;
                    continue;
                }
            }
            if let TokenTree::Group(g) = &tts[i] {
                // A block headed by `impl` or `trait` (since the last `;` or block).
                let head = tts[..i]
                    .iter()
                    .rev()
                    .take_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
                    .take_while(|t| !matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace));
                let block =
                    head.into_iter().any(|t| matches!(t, TokenTree::Ident(id) if id == "impl" || id == "trait"));
                self.in_macro(g.stream(), g.delimiter() == Delimiter::Brace && block);
            }
            i += 1;
        }
    }
}

/// The arguments of an attribute's tokens (inside `#[..]`) that name the macro:
/// `adaptive_kernel(ARGS)`, `path::adaptive_kernel(ARGS)` or `$name(ARGS)`.
fn attribute_args(attr: TokenStream) -> Option<TokenStream> {
    let tts: Vec<TokenTree> = attr.into_iter().collect();
    let (TokenTree::Group(args), head) = tts.split_last()? else { return None };
    let name = match head.last()? {
        TokenTree::Ident(id) => id.to_string(),
        _ => return None,
    };
    let metavariable = head.len() == 2 && matches!(&head[0], TokenTree::Punct(p) if p.as_char() == '$');
    (args.delimiter() == Delimiter::Parenthesis && (name == "adaptive_kernel" || metavariable)).then(|| args.stream())
}

impl<'ast> Visit<'ast> for Kernels {
    fn visit_item_fn(&mut self, f: &'ast ItemFn) {
        self.kernel(&f.attrs, |attrs| ItemFn { attrs, ..f.clone() });
        // Items in a function's body are free functions, whatever encloses the function.
        self.in_impl.push(false);
        syn::visit::visit_item_fn(self, f);
        self.in_impl.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.kernel(&f.attrs, |attrs| ItemFn {
            attrs,
            vis: f.vis.clone(),
            sig: f.sig.clone(),
            block: Box::new(f.block.clone()),
        });
        self.in_impl.push(false);
        syn::visit::visit_impl_item_fn(self, f);
        self.in_impl.pop();
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.kernel(&f.attrs, |attrs| ItemFn {
                attrs,
                vis: syn::Visibility::Inherited,
                sig: f.sig.clone(),
                block: Box::new(block.clone()),
            });
        }
        self.in_impl.push(false);
        syn::visit::visit_trait_item_fn(self, f);
        self.in_impl.pop();
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        self.in_impl.push(true);
        syn::visit::visit_item_impl(self, i);
        self.in_impl.pop();
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.in_impl.push(true);
        syn::visit::visit_item_trait(self, t);
        self.in_impl.pop();
    }

    fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
        if m.mac.path.is_ident("macro_rules") {
            self.in_macro(m.mac.tokens.clone(), false);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.in_impl.push(false);
        syn::visit::visit_item_mod(self, m);
        self.in_impl.pop();
    }
}

/// The kernels of the workspace's sources, with their file's path relative to the workspace.
fn workspace_kernels() -> Vec<(PathBuf, Vec<Kernel>)> {
    let root = workspace();
    let mut sources = Vec::new();
    for folder in SOURCES {
        rust_files(&root.join(folder), &mut sources);
    }
    assert!(sources.len() > 50, "the workspace's sources are where this test looks: {}", root.display());
    sources
        .into_iter()
        .map(|source| {
            let text = std::fs::read_to_string(&source).expect("a readable source file");
            let relative = source.strip_prefix(&root).expect("under the workspace").to_path_buf();
            (relative, kernels_of(&text))
        })
        .collect()
}

/// Every kernel of a source file's text.
fn kernels_of(src: &str) -> Vec<Kernel> {
    let file = syn::parse_file(src).expect("a source file of the workspace parses");
    let mut kernels = Kernels::default();
    kernels.visit_file(&file);
    kernels.found
}

/// The expansion of one kernel, where it sits.
fn expand(k: &Kernel) -> TokenStream {
    enclosing::assume(k.enclosing, || {
        crate::expand::adaptive_kernel(k.args.clone(), k.func.to_token_stream())
            .unwrap_or_else(syn::Error::into_compile_error)
    })
}

/// The golden text of one source file: each kernel's expansion under a header naming it
/// and its line; `None` when the file holds no kernel.
fn golden_text(kernels: &[Kernel]) -> Option<String> {
    if kernels.is_empty() {
        return None;
    }
    let mut out = String::new();
    for k in kernels {
        let line = k.func.sig.ident.span().start().line;
        let _ = writeln!(out, "==== {} (line {line}): #[adaptive_kernel({})]", k.func.sig.ident, k.args);
        out.push_str(&normalised(expand(k), true));
    }
    Some(out)
}

/// The workspace's root (the macro crate's parent).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the macro crate is in the workspace").to_path_buf()
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.expect("a directory entry").path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The golden file of the source file `relative` (a path in the workspace).
fn golden_name(relative: &Path) -> String {
    format!("{}.txt", relative.to_string_lossy().replace(['/', '\\'], "__"))
}

#[test]
fn every_kernel_expands_as_its_golden_file_says() {
    let dir = workspace().join("macros/golden");
    let bless = std::env::var_os("AK_BLESS").is_some_and(|v| v == "1");
    let mut expected_files = Vec::new();
    let mut stale = Vec::new();
    let mut kernels = 0;
    for (relative, found) in workspace_kernels() {
        kernels += found.len();
        let Some(golden) = golden_text(&found) else { continue };
        let name = golden_name(&relative);
        let path = dir.join(&name);
        expected_files.push(name);
        if bless {
            std::fs::create_dir_all(&dir).expect("the golden folder");
            std::fs::write(&path, &golden).expect("a golden file written");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(old) if old == golden => {}
            Ok(old) => stale.push(format!("{}: {}", relative.display(), first_difference(&old, &golden))),
            Err(_) => stale.push(format!("{}: no golden file {}", relative.display(), path.display())),
        }
    }
    // A golden file whose source has no kernel any more.
    for entry in std::fs::read_dir(&dir).expect("the golden folder exists") {
        let name = entry.expect("a directory entry").file_name().to_string_lossy().into_owned();
        if !expected_files.contains(&name) {
            if bless {
                std::fs::remove_file(dir.join(&name)).expect("a stale golden file removed");
            } else {
                stale.push(format!("{name}: no source file with kernels"));
            }
        }
    }
    assert!(kernels > 400, "the walk finds the workspace's kernels: {kernels}");
    assert!(
        stale.is_empty(),
        "{} golden expansion file(s) differ; if the change is meant, regenerate them with \
         `AK_BLESS=1 cargo test -p adaptive-kernel-macros golden`, read the diff (`git diff macros/golden`) and list \
         the kernels it changes and why in the commit message:\n{}",
        stale.len(),
        stale.join("\n")
    );
}

/// The first line where `old` and `new` differ, with the kernel header above it.
fn first_difference(old: &str, new: &str) -> String {
    let mut header = "";
    for (n, (a, b)) in old.lines().zip(new.lines()).enumerate() {
        if a.starts_with("==== ") {
            header = a;
        }
        if a != b {
            return format!("line {}: in `{header}`:\n  - {a}\n  + {b}", n + 1);
        }
    }
    format!("one is longer ({} lines against {})", old.lines().count(), new.lines().count())
}

#[test]
fn the_walk_finds_kernels_wherever_they_sit() {
    let src = r#"
        #[adaptive_kernel(complexity = "Low")]
        fn free(x: &[f32]) -> f32 { x[0] }
        mod m {
            impl S {
                #[::adaptive_kernel::adaptive_kernel(complexity = "Low")]
                fn assoc(x: &[f32]) -> f32 { x[0] }
            }
            trait T {
                #[adaptive_kernel(complexity = "Low")]
                fn default(x: &[f32]) -> f32 { x[0] }
            }
        }
        fn outer() {
            #[adaptive_kernel(complexity = "High")]
            fn inner(x: &[f32]) -> f32 { x[0] }
        }
        macro_rules! program {
            ($($annotate:ident)?) => {
                $(#[$annotate(complexity = "Low")])?
                pub fn stamped(x: &[f32]) -> f32 { x[0] }
            };
            ($t:ident) => {
                impl $t {
                    #[adaptive_kernel(complexity = "Low")]
                    fn in_impl(x: &[f32]) -> f32 { x[0] }
                }
                #[adaptive_kernel(complexity = "Low")]
                fn $t(x: &[f32]) -> f32 { x[0] }
            };
        }
    "#;
    let kernels = kernels_of(src);
    let found: Vec<(String, Enclosing)> = kernels.iter().map(|k| (k.func.sig.ident.to_string(), k.enclosing)).collect();
    let (free, assoc, unknown) = (Enclosing::Free, Enclosing::Associated, Enclosing::Unknown);
    let expected = [
        ("free", free),
        ("assoc", assoc),
        ("default", assoc),
        ("inner", free),
        ("stamped", unknown),
        ("in_impl", assoc),
    ];
    assert_eq!(found, expected.map(|(n, e)| (n.to_string(), e)));
    assert!(kernels.iter().all(|k| !k.func.attrs.iter().any(|a| a.path().is_ident("adaptive_kernel"))));
    // An associated function's expansion keeps its variants inside it: no `mod` beside it.
    let text = golden_text(&kernels).unwrap();
    let assoc = &text[text.find("==== assoc").unwrap()..text.find("==== default").unwrap()];
    assert!(!assoc.contains("mod assoc"), "{assoc}");
    assert!(text.contains("mod free"), "{text}");
}

/// The macro's own time per kernel (BENCHMARKS.md, "Build time"): every kernel of the
/// workspace expanded, round after round; the median round's time divided by the kernels.
/// `cargo test -p adaptive-kernel-macros --release --lib -- --ignored --nocapture expansion_time`
#[test]
#[ignore = "a measurement: run it alone, in release"]
fn expansion_time() {
    let kernels: Vec<Kernel> = workspace_kernels().into_iter().flat_map(|(_, k)| k).collect();
    let rounds = 15;
    let mut times: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = std::time::Instant::now();
            for k in &kernels {
                std::hint::black_box(expand(k));
            }
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let per_kernel = |t: f64| t / kernels.len() as f64 * 1e6;
    println!(
        "expansion_time: {} kernels, {rounds} rounds; per kernel: median {:.1} µs (fastest round {:.1} µs, slowest {:.1} µs)",
        kernels.len(),
        per_kernel(times[rounds / 2]),
        per_kernel(times[0]),
        per_kernel(times[rounds - 1])
    );
}
