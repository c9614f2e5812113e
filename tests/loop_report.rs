//! What the attribute did to each kernel's float reductions and top-level
//! loops, said wherever a user looks: `KERNEL.spec().loops` (which variants
//! compute a reduction in lanes, or why it was left as written),
//! `KERNEL.spec().splits` (which loops the Parallel variant splits across
//! threads, or why not), the kernel's table
//! (`KERNEL.table()`'s `Display`), the history file, and `adaptive-kernel
//! report` reading that file. (The tour prints the same `LoopSummary`; the
//! summary's wording is unit-tested in the runtime's `kernel/loops.rs`.)

// The kernels are written as index loops on purpose: that is the code under test.
#![allow(clippy::needless_range_loop)]

mod common;

use std::process::Command;

use adaptive_kernel::{adaptive_kernel, loop_reason, ops, Backend, Kernel, LoopSummary};

const FIRST_LINE: u32 = line!();

/// A plain loop: its reduction runs in lanes in the SIMD variant (`serial`: there is no Parallel one).
#[adaptive_kernel(complexity = "Medium", serial)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..a.len().min(b.len()) {
        s += a[i] * b[i];
    }
    s
}

/// A body that calls `ops::` has a Parallel variant built from the same rewritten body.
#[adaptive_kernel(complexity = "Medium")]
fn normalise(x: &[f32], y: &mut [f32]) -> f32 {
    let mut ss = 0.0f32;
    for v in x {
        ss += v * v;
    }
    let scaled = ops::scale(x, 1.0 / ss.sqrt());
    y.copy_from_slice(&scaled);
    ss
}

fn normalise_in_parallel(x: &[f32], y: &mut [f32]) -> f32 {
    normalise::simd(x, y)
}

/// `parallel = path`: the Parallel variant is the user's, so only SIMD rewrites.
#[adaptive_kernel(complexity = "Medium", parallel = normalise_in_parallel)]
fn normalise_own_parallel(x: &[f32], y: &mut [f32]) -> f32 {
    let mut ss = 0.0f32;
    for v in x {
        ss += v * v;
    }
    let scaled = ops::scale(x, 1.0 / ss.sqrt());
    y.copy_from_slice(&scaled);
    ss
}

fn dot_lanes(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `simd = path`: the body is not the SIMD variant, nothing is rewritten.
#[adaptive_kernel(complexity = "Medium", simd = dot_lanes)]
fn dot_own_simd(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..a.len().min(b.len()) {
        s += a[i] * b[i];
    }
    s
}

#[adaptive_kernel(complexity = "Medium", exact)]
fn dot_exact(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..a.len().min(b.len()) {
        s += a[i] * b[i];
    }
    s
}

/// A call that may have an effect in the loop: left as written. (A store into the
/// loop's own element alone, `out[i] = 2.0 * x[i]`, would be in lanes.)
#[adaptive_kernel(complexity = "Medium")]
fn doubled_sum(x: &[f32], out: &mut [f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..x.len() {
        out[i] = 2.0 * x[i];
        s += x[i];
        std::hint::black_box(i);
    }
    s
}

/// No reduction at all: element-wise loops vectorise without help, and split across threads.
#[adaptive_kernel(complexity = "Low")]
fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// The same dot product without `serial`: split across threads, each chunk in lanes.
#[adaptive_kernel(complexity = "Medium")]
fn dot_split(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..a.len().min(b.len()) {
        s += a[i] * b[i];
    }
    s
}

/// A running sum: left on one thread.
#[adaptive_kernel(complexity = "Low")]
fn running(x: &[f32], out: &mut [f32]) {
    for i in 1..x.len().min(out.len()) {
        out[i] = out[i - 1] + x[i];
    }
}

const LAST_LINE: u32 = line!();

/// (variants, reason) of each reduction of `kernel`, checking each line is in this file's kernels.
fn outcomes(kernel: &Kernel) -> Vec<(&'static [Backend], &'static str)> {
    let loops = kernel.spec().loops;
    assert!(loops.iter().all(|l| (FIRST_LINE..LAST_LINE).contains(&l.line)), "{loops:?}");
    loops.iter().map(|l| (l.variants, l.reason)).collect()
}

#[test]
fn the_spec_names_the_variants_that_compute_each_reduction_in_lanes() {
    common::no_history();
    const SIMD: &[Backend] = &[Backend::Simd];
    assert_eq!(outcomes(&dot::KERNEL), [(SIMD, "")]);
    assert_eq!(outcomes(&normalise::KERNEL), [(&[Backend::Simd, Backend::Parallel][..], "")]);
    assert_eq!(outcomes(&normalise_own_parallel::KERNEL), [(SIMD, "")]);
    assert_eq!(outcomes(&dot_own_simd::KERNEL), [(&[][..], "simd")]);
    assert_eq!(outcomes(&dot_exact::KERNEL), [(&[][..], "exact")]);
    assert_eq!(outcomes(&doubled_sum::KERNEL), [(&[][..], "effect")]);
    assert_eq!(outcomes(&saxpy::KERNEL), []);
    assert_eq!(outcomes(&dot_split::KERNEL), [(&[Backend::Simd, Backend::Parallel][..], "")]);
    // Every one of them runs, routed, to the same result.
    let (a, b) = (vec![0.5f32; 100], vec![2.0f32; 100]);
    for d in [dot(&a, &b), dot_own_simd(&a, &b), dot_exact(&a, &b), dot_split(&a, &b)] {
        assert_eq!(d, 100.0);
    }
    let (mut y, mut z) = (vec![0.0f32; 100], vec![0.0f32; 100]);
    assert_eq!(normalise(&a, &mut y), 25.0);
    assert_eq!(normalise_own_parallel(&a, &mut z), 25.0);
    assert_eq!((y[0], z[0]), (0.1, 0.1));
    for k in [&dot_own_simd::KERNEL, &dot_exact::KERNEL, &doubled_sum::KERNEL] {
        let l = &k.spec().loops[0];
        assert!(!l.rewritten() && loop_reason(l.reason).is_some(), "{l:?} has a meaning");
    }
}

/// The table's lines between its title and the column header.
fn table_loops(kernel: &'static Kernel) -> String {
    let table = kernel.table().to_string();
    let body = &table[table.find('\n').unwrap() + 1..];
    body[..body.find("sizes").unwrap()].trim_end_matches(' ').to_owned()
}

#[test]
fn the_kernel_table_says_it_under_its_title() {
    common::no_history();
    let line = |k: &Kernel| k.spec().loops[0].line;
    assert_eq!(
        table_loops(&dot::KERNEL),
        format!(
            "  loops: 1 of 1 float reduction in lanes, in SIMD\n    line {0}, for range +=: in lanes in SIMD\n  \
             splits: 0 of 1 top-level loop split across threads in Parallel\n    line {0}, for range: on one thread \
             (serial: the kernel opted out of splitting with `serial`)\n  gpu: 1 of 1 top-level loop on the GPU\n    \
             line {0}, for range: on the GPU\n",
            line(&dot::KERNEL)
        )
    );
    assert_eq!(
        table_loops(&dot_split::KERNEL),
        format!(
            "  loops: 1 of 1 float reduction in lanes, in SIMD, Parallel\n    line {0}, for range +=: in lanes in SIMD, \
             Parallel\n  splits: 1 of 1 top-level loop split across threads in Parallel\n    line {0}, for range: \
             split across threads in Parallel\n  gpu: 1 of 1 top-level loop on the GPU\n    line {0}, for range: on the \
             GPU\n",
            line(&dot_split::KERNEL)
        )
    );
    assert_eq!(
        table_loops(&doubled_sum::KERNEL),
        format!(
            "  loops: 0 of 1 float reduction in lanes; the SIMD variant is the body as written\n    line {0}, for \
             range +=: as written (effect: a store, or a call that may have side effects)\n  splits: 1 of 1 \
             top-level loop split across threads in Parallel\n    line {0}, for range: split across threads in \
             Parallel\n  gpu: 0 of 1 top-level loop on the GPU\n    line {0}, for range: on the host (call: a \
             call of a function or method the GPU variant does not translate)\n",
            line(&doubled_sum::KERNEL)
        )
    );
    assert!(table_loops(&dot_own_simd::KERNEL).contains("as written (simd: the SIMD variant is the kernel's own"));
    let saxpy_line = saxpy::KERNEL.spec().splits[0].line;
    assert_eq!(
        table_loops(&saxpy::KERNEL),
        format!(
            "  loops: no float reduction to put in lanes\n  splits: 1 of 1 top-level loop split across threads in \
             Parallel\n    line {saxpy_line}, for iter_mut.zip: split across threads in Parallel\n  gpu: 1 of 1 \
             top-level loop on the GPU\n    line {saxpy_line}, for iter_mut.zip: on the GPU\n"
        )
    );
    assert!(
        table_loops(&running::KERNEL).ends_with(&format!(
            "for range: on one thread (overlap: a slice the loop writes is also used beyond the iteration's own \
             item or row)\n  gpu: 0 of 1 top-level loop on the GPU\n    line {}, for range: on the host (overlap: a \
             slice the loop writes is also used beyond the iteration's own item or row)\n",
            running::KERNEL.spec().splits[0].line
        )),
        "{}",
        table_loops(&running::KERNEL)
    );
    // The same text as the summary of the spec, which the tour prints.
    assert!(dot::KERNEL.table().to_string().contains(&LoopSummary::of("  ", dot::KERNEL.spec()).to_string()));
}

#[test]
#[ignore = "entry point of the child process `the_history_file_and_the_report_say_it` starts"]
fn child() {
    // Each kernel called once (registered, so a save includes it), then saved.
    let (a, b) = (vec![1.0f32; 64], vec![2.0f32; 64]);
    assert_eq!(dot(&a, &b), 128.0);
    let mut out = vec![0.0f32; 64];
    assert_eq!(doubled_sum(&a, &mut out), 64.0);
    let mut y = vec![0.0f32; 64];
    saxpy(2.0, &a, &mut y);
    running(&a, &mut y);
    adaptive_kernel::flush().unwrap();
}

#[test]
fn the_history_file_and_the_report_say_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let env = [("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()), ("ADAPTIVE_KERNEL_GPU", "off")];
    let (ok, out) = common::run_child("child", "save", &env);
    assert!(ok, "child failed:\n{out}");

    let history = adaptive_kernel::read_history(&file).unwrap().expect("the child saved a file");
    let here = adaptive_kernel::Fingerprint::current().key();
    let kernels = &history.machines[&here].kernels;
    let dot_loops = kernels["loop_report::dot"].loops.as_ref().expect("recorded");
    assert_eq!(dot_loops.len(), 1);
    let l = &dot_loops[0];
    assert_eq!(
        (l.line, l.idiom.as_str(), l.variants.as_slice(), l.reason.as_str()),
        (dot::KERNEL.spec().loops[0].line, "for range +=", &[Backend::Simd][..], "")
    );
    let stores = kernels["loop_report::doubled_sum"].loops.as_ref().expect("recorded");
    assert_eq!((stores[0].variants.len(), stores[0].reason.as_str()), (0, "effect"));
    assert_eq!(kernels["loop_report::saxpy"].loops.as_deref(), Some(&[][..]));
    let splits = |name: &str| -> Vec<(u32, String, String)> {
        let recorded = kernels[name].splits.as_ref().expect("recorded");
        recorded.iter().map(|s| (s.line, s.idiom.clone(), s.reason.clone())).collect()
    };
    let line = |k: &Kernel| k.spec().splits[0].line;
    assert_eq!(splits("loop_report::saxpy"), [(line(&saxpy::KERNEL), "for iter_mut.zip".into(), String::new())]);
    assert_eq!(splits("loop_report::running"), [(line(&running::KERNEL), "for range".into(), "overlap".into())]);

    let report = Command::new(env!("CARGO_BIN_EXE_adaptive-kernel"))
        .args(["report", "--history", file.to_str().unwrap()])
        .env("ADAPTIVE_KERNEL_GPU", "off")
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let text = String::from_utf8_lossy(&report.stdout);
    let kernel = |name: &str| {
        let at = text.find(&format!("kernel loop_report::{name} ")).unwrap_or_else(|| panic!("{name}:\n{text}"));
        text[at..].lines().nth(1).unwrap_or_default().to_owned()
    };
    assert_eq!(kernel("dot"), "    loops: 1 of 1 float reduction in lanes, in SIMD");
    assert_eq!(
        kernel("doubled_sum"),
        "    loops: 0 of 1 float reduction in lanes; the SIMD variant is the body as written"
    );
    assert_eq!(kernel("saxpy"), "    loops: no float reduction to put in lanes");
    let dot_line = format!("      line {}, for range +=: in lanes in SIMD", dot::KERNEL.spec().loops[0].line);
    assert!(text.lines().any(|l| l == dot_line), "{text}");
    let saxpy_split =
        format!("      line {}, for iter_mut.zip: split across threads in Parallel", line(&saxpy::KERNEL));
    assert!(text.lines().any(|l| l == saxpy_split), "{text}");
}
