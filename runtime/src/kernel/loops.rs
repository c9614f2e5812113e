//! What the attribute did to a kernel's loops, in words: the one wording that
//! [`KernelTable`](super::KernelTable)'s `Display`, the `adaptive-kernel
//! report` command and the tour print, so a user sees per kernel whether
//! annotating it can make it faster (a reduction rewritten in lanes, a loop
//! split across threads, a loop run on the GPU) or where an `ops::` call would
//! have to (a reduction left as written, a loop left on one thread or on the
//! host, and why).
//!
//! The live spec ([`LoopRewrite`], [`LoopSplit`], [`LoopGpu`]: `&'static`
//! strings the macro wrote) and the history file (`LoopRecord`, `SplitRecord`,
//! `GpuLoopRecord`: owned strings) both lend a [`LoopLine`], a [`SplitLine`] or
//! a [`GpuLine`], so neither has to be converted into the other to be printed.

use std::fmt;

use super::reason::loop_reason;
use super::spec::{LoopGpu, LoopRewrite, LoopSplit};
use crate::backend::Backend;
use crate::persist::format::{GpuLoopRecord, LoopRecord, SplitRecord};

/// One reduction as [`LoopSummary`] prints it, borrowed from a kernel's spec or
/// from a history record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopLine<'a> {
    /// The source line of its `for`, or of its `sum`/`product`/`fold`.
    pub line: u32,
    /// Its shape ([`LoopRewrite::idiom`]).
    pub idiom: &'a str,
    /// The variants that compute it in lanes; empty when left as written.
    pub variants: &'a [Backend],
    /// Why it was left as written, in one word; empty when rewritten.
    pub reason: &'a str,
    /// The libm functions it computes with the runtime's formulas ([`LoopRewrite::vector_math`]).
    pub vector_math: MathCalls<'a>,
}

/// The names of the libm functions a loop computes with the runtime's formulas
/// ([`LoopRewrite::vector_math`]), borrowed from a kernel's spec or from a history record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathCalls<'a> {
    /// A live kernel's, from its [`LoopRewrite`].
    Spec(&'a [&'static str]),
    /// A history file's, from its `LoopRecord`.
    Record(&'a [String]),
}

impl<'a> MathCalls<'a> {
    /// The functions' names, in the loop's order.
    pub fn names(self) -> impl Iterator<Item = &'a str> {
        let (spec, record): (&'a [&'static str], &'a [String]) = match self {
            MathCalls::Spec(names) => (names, &[]),
            MathCalls::Record(names) => (&[], names),
        };
        spec.iter().copied().chain(record.iter().map(String::as_str))
    }
}

impl<'a> From<&'a LoopRewrite> for LoopLine<'a> {
    fn from(l: &'a LoopRewrite) -> LoopLine<'a> {
        let vector_math = MathCalls::Spec(l.vector_math);
        LoopLine { line: l.line, idiom: l.idiom, variants: l.variants, reason: l.reason, vector_math }
    }
}

impl<'a> From<&'a LoopRecord> for LoopLine<'a> {
    fn from(l: &'a LoopRecord) -> LoopLine<'a> {
        let vector_math = MathCalls::Record(&l.vector_math);
        LoopLine { line: l.line, idiom: &l.idiom, variants: &l.variants, reason: &l.reason, vector_math }
    }
}

/// `line 12, for range +=: in lanes in SIMD, Parallel`,
/// `line 14, for iter_mut =: in lanes in SIMD, Parallel; exp in lanes, ≤ 1 ULP` or
/// `line 20, iter.sum(): as written (effect: a store, or a call that may have side effects)`.
impl fmt::Display for LoopLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, {}: ", self.line, self.idiom)?;
        if let Some((first, rest)) = self.variants.split_first() {
            write!(f, "in lanes in {first}")?;
            for v in rest {
                write!(f, ", {v}")?;
            }
            for name in self.vector_math.names() {
                match crate::math::ulp_bound(name) {
                    Some(ulps) => write!(f, "; {name} in lanes, ≤ {ulps} ULP")?,
                    None => write!(f, "; {name} in lanes")?,
                }
            }
            return Ok(());
        }
        match loop_reason(self.reason) {
            Some(meaning) => write!(f, "as written ({}: {meaning})", self.reason),
            None => write!(f, "as written ({})", self.reason),
        }
    }
}

/// One top-level loop as [`LoopSummary`] prints it, borrowed from a kernel's
/// spec or from a history record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitLine<'a> {
    /// The source line of its `for`.
    pub line: u32,
    /// What it walks ([`LoopSplit::idiom`]).
    pub idiom: &'a str,
    /// Why it was left on one thread, in one word; empty when split.
    pub reason: &'a str,
}

impl<'a> From<&'a LoopSplit> for SplitLine<'a> {
    fn from(l: &'a LoopSplit) -> SplitLine<'a> {
        SplitLine { line: l.line, idiom: l.idiom, reason: l.reason }
    }
}

impl<'a> From<&'a SplitRecord> for SplitLine<'a> {
    fn from(l: &'a SplitRecord) -> SplitLine<'a> {
        SplitLine { line: l.line, idiom: &l.idiom, reason: &l.reason }
    }
}

/// `line 10, for range: split across threads in Parallel` or
/// `line 30, for iter_mut: on one thread (break: a `break` may end the loop early)`.
impl fmt::Display for SplitLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, {}: ", self.line, self.idiom)?;
        if self.reason.is_empty() {
            return write!(f, "split across threads in Parallel");
        }
        match loop_reason(self.reason) {
            Some(meaning) => write!(f, "on one thread ({}: {meaning})", self.reason),
            None => write!(f, "on one thread ({})", self.reason),
        }
    }
}

/// One top-level loop as [`LoopSummary`] prints its GPU line, borrowed from a
/// kernel's spec or from a history record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuLine<'a> {
    /// The source line of its `for`.
    pub line: u32,
    /// What it walks ([`LoopGpu::idiom`]).
    pub idiom: &'a str,
    /// Why it stays on the host, in one word; empty when it runs on the GPU.
    pub reason: &'a str,
}

impl<'a> From<&'a LoopGpu> for GpuLine<'a> {
    fn from(l: &'a LoopGpu) -> GpuLine<'a> {
        GpuLine { line: l.line, idiom: l.idiom, reason: l.reason }
    }
}

impl<'a> From<&'a GpuLoopRecord> for GpuLine<'a> {
    fn from(l: &'a GpuLoopRecord) -> GpuLine<'a> {
        GpuLine { line: l.line, idiom: &l.idiom, reason: &l.reason }
    }
}

/// `line 10, for range: on the GPU` or
/// `line 30, for iter_mut: on the host (call: a call of a function or method the GPU variant does not translate)`.
impl fmt::Display for GpuLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, {}: ", self.line, self.idiom)?;
        if self.reason.is_empty() {
            return write!(f, "on the GPU");
        }
        match loop_reason(self.reason) {
            Some(meaning) => write!(f, "on the host ({}: {meaning})", self.reason),
            None => write!(f, "on the host ({})", self.reason),
        }
    }
}

/// A kernel's reductions and top-level loops in words, one line each, every
/// line starting with `indent` and ending with a newline:
///
/// ```text
/// loops: 1 of 2 float reductions in lanes, in SIMD, Parallel
///   line 12, for range +=: in lanes in SIMD, Parallel
///   line 20, iter.sum(): as written (effect: a store, or a call that may have side effects)
/// splits: 1 of 2 top-level loops split across threads in Parallel
///   line 10, for range: split across threads in Parallel
///   line 30, for iter_mut: on one thread (break: a `break` may end the loop early)
/// gpu: 1 of 2 top-level loops on the GPU
///   line 10, for range: on the GPU
///   line 30, for iter_mut: on the host (break: a `break` may end the loop early)
/// ```
///
/// (`index loops` for element-wise index loops taken in chunks, `loops` for
/// a mix or when a loop over items is taken several items at a time),
/// `loops: no float reduction to put in lanes` for a body without one; the
/// `splits` and `gpu` lines only for a body with a top-level `for` loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopSummary<'a> {
    /// Printed before every line.
    pub indent: &'a str,
    /// The reductions, in source order.
    pub loops: Vec<LoopLine<'a>>,
    /// The top-level loops, in source order.
    pub splits: Vec<SplitLine<'a>>,
    /// The top-level loops and whether the GPU variant runs them, in source order.
    pub gpu: Vec<GpuLine<'a>>,
}

impl<'a> LoopSummary<'a> {
    /// The summary of `loops` (a spec's [`LoopRewrite`]s or a history file's records).
    pub fn new<L>(indent: &'a str, loops: impl IntoIterator<Item = &'a L>) -> LoopSummary<'a>
    where
        L: 'a,
        &'a L: Into<LoopLine<'a>>,
    {
        LoopSummary { indent, loops: loops.into_iter().map(Into::into).collect(), splits: Vec::new(), gpu: Vec::new() }
    }

    /// The same summary, also saying what happened to `splits` (a spec's
    /// [`LoopSplit`]s or a history file's records).
    pub fn with_splits<S>(mut self, splits: impl IntoIterator<Item = &'a S>) -> LoopSummary<'a>
    where
        S: 'a,
        &'a S: Into<SplitLine<'a>>,
    {
        self.splits = splits.into_iter().map(Into::into).collect();
        self
    }

    /// The same summary, also saying whether the GPU variant runs each of `gpu`
    /// (a spec's [`LoopGpu`]s or a history file's records) on the device.
    pub fn with_gpu<G>(mut self, gpu: impl IntoIterator<Item = &'a G>) -> LoopSummary<'a>
    where
        G: 'a,
        &'a G: Into<GpuLine<'a>>,
    {
        self.gpu = gpu.into_iter().map(Into::into).collect();
        self
    }

    /// The summary of a kernel's spec: its reductions and its top-level loops.
    pub fn of(indent: &'a str, spec: &'a super::KernelSpec) -> LoopSummary<'a> {
        LoopSummary::new(indent, spec.loops).with_splits(spec.splits).with_gpu(spec.gpu_loops)
    }
}

/// Whether a reported loop is an element-wise loop (the SIMD variant's
/// bounds-checked index loops taken in chunks, reported under the idiom `for
/// range =`, or `iter_mut` loops calling the vector math, `for iter_mut =`)
/// rather than a float reduction (whose idioms end in its operator: `+=`, `max`,
/// `.sum()`, …) or a loop over items taken several at a time (`for range jam`).
fn is_elementwise(idiom: &str) -> bool {
    idiom.ends_with(" =")
}

/// Whether a reported loop is a loop over items around a reduction, taken several
/// items at a time (`for range jam`, or with its items in lanes, `for range items`).
fn is_jam(idiom: &str) -> bool {
    idiom.ends_with(" jam") || idiom.ends_with(" items")
}

impl fmt::Display for LoopSummary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let indent = self.indent;
        if self.loops.is_empty() {
            writeln!(f, "{indent}loops: no float reduction to put in lanes")?;
        } else {
            let rewritten = self.loops.iter().filter(|l| !l.variants.is_empty()).count();
            let total = self.loops.len();
            let elementwise = self.loops.iter().filter(|l| is_elementwise(l.idiom)).count();
            let jams = self.loops.iter().filter(|l| is_jam(l.idiom)).count();
            let noun = match (elementwise, jams, total) {
                (0, 0, 1) => "float reduction",
                (0, 0, _) => "float reductions",
                (e, 0, 1) if e == total => "index loop",
                (e, 0, _) if e == total => "index loops",
                _ => "loops",
            };
            write!(f, "{indent}loops: {rewritten} of {total} {noun} in lanes")?;
            // Every variant that computes some reduction in lanes, in backend order.
            let variants: Vec<String> = Backend::ALL
                .into_iter()
                .filter(|b| self.loops.iter().any(|l| l.variants.contains(b)))
                .map(|b| b.to_string())
                .collect();
            if variants.is_empty() {
                writeln!(f, "; the SIMD variant is the body as written")?;
            } else {
                writeln!(f, ", in {}", variants.join(", "))?;
            }
            for l in &self.loops {
                writeln!(f, "{indent}  {l}")?;
            }
        }
        if !self.splits.is_empty() {
            let split = self.splits.iter().filter(|l| l.reason.is_empty()).count();
            let total = self.splits.len();
            let noun = if total == 1 { "top-level loop" } else { "top-level loops" };
            writeln!(f, "{indent}splits: {split} of {total} {noun} split across threads in Parallel")?;
            for l in &self.splits {
                writeln!(f, "{indent}  {l}")?;
            }
        }
        if !self.gpu.is_empty() {
            let on = self.gpu.iter().filter(|l| l.reason.is_empty()).count();
            let total = self.gpu.len();
            let noun = if total == 1 { "top-level loop" } else { "top-level loops" };
            writeln!(f, "{indent}gpu: {on} of {total} {noun} on the GPU")?;
            for l in &self.gpu {
                writeln!(f, "{indent}  {l}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: &[Backend] = &[Backend::Simd, Backend::Parallel];

    #[test]
    fn rewritten_and_left_alone_loops_are_said_in_words() {
        let loops = [
            LoopRewrite { line: 12, idiom: "for range +=", variants: BOTH, reason: "", vector_math: &[] },
            LoopRewrite { line: 20, idiom: "iter.sum()", variants: &[], reason: "effect", vector_math: &[] },
        ];
        let text = LoopSummary::new("  ", &loops).to_string();
        assert_eq!(
            text,
            "  loops: 1 of 2 float reductions in lanes, in SIMD, Parallel\n\
             \x20   line 12, for range +=: in lanes in SIMD, Parallel\n\
             \x20   line 20, iter.sum(): as written (effect: a store, or a call that may have side effects)\n"
        );
    }

    #[test]
    fn none_rewritten_none_found_and_unknown_words() {
        let exact = [LoopRewrite { line: 3, idiom: "for iter +=", variants: &[], reason: "exact", vector_math: &[] }];
        let text = LoopSummary::new("", &exact).to_string();
        assert!(text.starts_with("loops: 0 of 1 float reduction in lanes; the SIMD variant is the body as written\n"));
        assert!(text.contains("as written (exact: the kernel opted out with `exact`)"), "{text}");
        assert_eq!(LoopSummary::new::<LoopRewrite>("", &[]).to_string(), "loops: no float reduction to put in lanes\n");
        let newer = LoopRecord {
            line: 1,
            idiom: "x".into(),
            variants: vec![],
            reason: "novel".into(),
            vector_math: vec!["exp".into()],
        };
        assert_eq!(LoopLine::from(&newer).to_string(), "line 1, x: as written (novel)");
    }

    #[test]
    fn split_and_unsplit_loops_are_said_in_words() {
        let splits = [
            LoopSplit { line: 10, idiom: "for range", reason: "" },
            LoopSplit { line: 30, idiom: "for iter_mut", reason: "break" },
        ];
        let loops =
            [LoopRewrite { line: 12, idiom: "for range +=", variants: &[Backend::Simd], reason: "", vector_math: &[] }];
        let text = LoopSummary::new("", &loops).with_splits(&splits).to_string();
        assert_eq!(
            text,
            "loops: 1 of 1 float reduction in lanes, in SIMD\n\
             \x20 line 12, for range +=: in lanes in SIMD\n\
             splits: 1 of 2 top-level loops split across threads in Parallel\n\
             \x20 line 10, for range: split across threads in Parallel\n\
             \x20 line 30, for iter_mut: on one thread (break: a `break` may end the loop early)\n"
        );
        let newer = SplitRecord { line: 1, idiom: "for x".into(), reason: "novel".into() };
        assert_eq!(SplitLine::from(&newer).to_string(), "line 1, for x: on one thread (novel)");
    }

    #[test]
    fn loops_on_the_gpu_and_on_the_host_are_said_in_words() {
        let gpu = [
            LoopGpu { line: 10, idiom: "for range", reason: "", roundings: 4 },
            LoopGpu { line: 30, idiom: "for iter_mut", reason: "call", roundings: 0 },
        ];
        let text = LoopSummary::new::<LoopRewrite>("", &[]).with_gpu(&gpu).to_string();
        assert_eq!(
            text,
            "loops: no float reduction to put in lanes\n\
             gpu: 1 of 2 top-level loops on the GPU\n\
             \x20 line 10, for range: on the GPU\n\
             \x20 line 30, for iter_mut: on the host (call: a call of a function or method the GPU variant does not \
             translate)\n"
        );
        let newer = GpuLoopRecord { line: 1, idiom: "for x".into(), reason: "novel".into() };
        assert_eq!(GpuLine::from(&newer).to_string(), "line 1, for x: on the host (novel)");
    }

    #[test]
    fn element_wise_loops_are_counted_as_what_they_are() {
        let simd: &[Backend] = &[Backend::Simd];
        let loops = [LoopRewrite { line: 3, idiom: "for range =", variants: simd, reason: "", vector_math: &[] }];
        assert!(LoopSummary::new("", &loops).to_string().starts_with("loops: 1 of 1 index loop in lanes, in SIMD\n"));
        let both = [
            loops[0],
            LoopRewrite { line: 5, idiom: "for range +=", variants: &[], reason: "effect", vector_math: &[] },
        ];
        assert!(LoopSummary::new("", &both).to_string().starts_with("loops: 1 of 2 loops in lanes, in SIMD\n"));
    }

    #[test]
    fn a_jammed_loop_makes_the_count_of_loops() {
        let loops = [
            LoopRewrite { line: 3, idiom: "for range jam", variants: BOTH, reason: "", vector_math: &[] },
            LoopRewrite { line: 6, idiom: "for range +=", variants: BOTH, reason: "", vector_math: &[] },
        ];
        let text = LoopSummary::new("", &loops).to_string();
        assert!(text.starts_with("loops: 2 of 2 loops in lanes, in SIMD, Parallel\n"), "{text}");
        let carried =
            LoopRewrite { line: 3, idiom: "for range jam", variants: &[], reason: "carried", vector_math: &[] };
        assert!(LoopLine::from(&carried).to_string().contains("as written (carried: an item writes"));
    }

    #[test]
    fn replaced_calls_are_named_with_their_bound() {
        let ulps = |name| crate::math::ulp_bound(name).expect("a listed function");
        let loops = [LoopRewrite {
            line: 7,
            idiom: "for iter_mut =",
            variants: BOTH,
            reason: "",
            vector_math: &["exp", "sin"],
        }];
        let text = LoopSummary::new("", &loops).to_string();
        let expected = format!(
            "line 7, for iter_mut =: in lanes in SIMD, Parallel; exp in lanes, ≤ {} ULP; sin in lanes, ≤ {} ULP\n",
            ulps("exp"),
            ulps("sin")
        );
        assert!(text.ends_with(&expected), "{text}");
        // From a history file: the same words; a name this build does not know, without a bound.
        let record = LoopRecord {
            line: 7,
            idiom: "for iter_mut =".into(),
            variants: BOTH.to_vec(),
            reason: String::new(),
            vector_math: vec!["exp".into(), "erf".into()],
        };
        let line = LoopLine::from(&record).to_string();
        assert!(line.ends_with(&format!("; exp in lanes, ≤ {} ULP; erf in lanes", ulps("exp"))), "{line}");
    }
}
