//! What the attribute did to a kernel's loops, in words: the one wording that
//! [`KernelTable`](super::KernelTable)'s `Display`, the `adaptive-kernel
//! report` command and the tour print, so a user sees per kernel whether
//! annotating it can make it faster (a reduction rewritten in lanes, a loop
//! split across threads) or where an `ops::` call would have to (a reduction
//! left as written, a loop left on one thread, and why).
//!
//! The live spec ([`LoopRewrite`], [`LoopSplit`]: `&'static` strings the macro
//! wrote) and the history file (`LoopRecord`, `SplitRecord`: owned strings)
//! both lend a [`LoopLine`] or a [`SplitLine`], so neither has to be converted
//! into the other to be printed.

use std::fmt;

use super::spec::{LoopRewrite, LoopSplit};
use crate::backend::Backend;
use crate::persist::format::{LoopRecord, SplitRecord};

/// Why a reduction was left as written, or a loop left on one thread: each word
/// a [`LoopRewrite::reason`] or a [`LoopSplit::reason`] can hold, and what it means.
pub const LOOP_REASONS: [(&str, &str); 23] = [
    ("exact", "the kernel opted out with `exact`"),
    ("simd", "the SIMD variant is the kernel's own `simd = path`"),
    ("break", "a `break` may end the loop early"),
    ("continue", "a `continue` skips part of an iteration"),
    ("return", "a `return` may leave the function from inside"),
    ("try", "a `?` may leave the function from inside"),
    ("label", "a labelled loop or block"),
    ("await", "an `.await` inside"),
    ("yield", "a `yield` inside"),
    ("macro", "a macro call whose expansion the attribute cannot see"),
    ("effect", "a store, or a call that may have side effects"),
    ("reads", "the loop reads its accumulator"),
    (
        "type",
        "an accumulator, term or written slice element not provably `f32`/`f64` (or, for a split, an integer sum; \
         for a slice updated at slots chosen by data, an element type its declaration does not name)",
    ),
    ("mixed", "two different operators on one accumulator, or on one slice updated at slots chosen by data"),
    ("shadow", "an accumulator, index, slice or row width rebound inside the loop"),
    ("op", "a fold that is not `+`, `*`, `max` or `min`"),
    ("source", "elements that cannot be taken in chunks"),
    ("serial", "the kernel opted out of splitting with `serial`"),
    ("parallel", "the Parallel variant is the kernel's own `parallel = path`"),
    (
        "writes",
        "a write through a name from outside the loop (an assignment, a `&mut`, a method that may mutate) that is \
         not the iteration's own item or row",
    ),
    ("overlap", "a slice the loop writes is also used beyond the iteration's own item or row"),
    ("unsafe", "an `unsafe` block"),
    ("nothing", "the loop writes no slice item and carries no reduction: nothing to share out"),
];

/// What a reason word means, from [`LOOP_REASONS`]; `None` for a word this build
/// does not know (a history file written by a newer one).
pub fn loop_reason(word: &str) -> Option<&'static str> {
    LOOP_REASONS.iter().find(|(w, _)| *w == word).map(|(_, meaning)| *meaning)
}

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
}

impl<'a> From<&'a LoopRewrite> for LoopLine<'a> {
    fn from(l: &'a LoopRewrite) -> LoopLine<'a> {
        LoopLine { line: l.line, idiom: l.idiom, variants: l.variants, reason: l.reason }
    }
}

impl<'a> From<&'a LoopRecord> for LoopLine<'a> {
    fn from(l: &'a LoopRecord) -> LoopLine<'a> {
        LoopLine { line: l.line, idiom: &l.idiom, variants: &l.variants, reason: &l.reason }
    }
}

/// `line 12, for range +=: in lanes in SIMD, Parallel` or
/// `line 20, iter.sum(): as written (effect: a store, or a call that may have side effects)`.
impl fmt::Display for LoopLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, {}: ", self.line, self.idiom)?;
        if let Some((first, rest)) = self.variants.split_first() {
            write!(f, "in lanes in {first}")?;
            for v in rest {
                write!(f, ", {v}")?;
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
/// ```
///
/// (`index loops` for element-wise index loops taken in chunks, `loops` for
/// both kinds), `loops: no float reduction to put in lanes` for a body
/// without one; the
/// `splits` lines only for a body with a top-level `for` loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopSummary<'a> {
    /// Printed before every line.
    pub indent: &'a str,
    /// The reductions, in source order.
    pub loops: Vec<LoopLine<'a>>,
    /// The top-level loops, in source order.
    pub splits: Vec<SplitLine<'a>>,
}

impl<'a> LoopSummary<'a> {
    /// The summary of `loops` (a spec's [`LoopRewrite`]s or a history file's records).
    pub fn new<L>(indent: &'a str, loops: impl IntoIterator<Item = &'a L>) -> LoopSummary<'a>
    where
        L: 'a,
        &'a L: Into<LoopLine<'a>>,
    {
        LoopSummary { indent, loops: loops.into_iter().map(Into::into).collect(), splits: Vec::new() }
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

    /// The summary of a kernel's spec: its reductions and its top-level loops.
    pub fn of(indent: &'a str, spec: &'a super::KernelSpec) -> LoopSummary<'a> {
        LoopSummary::new(indent, spec.loops).with_splits(spec.splits)
    }
}

/// Whether a reported loop is an element-wise index loop (the SIMD variant's
/// bounds-checked loops taken in chunks, reported under the idiom `for range =`)
/// rather than a float reduction (whose idioms end in its operator: `+=`, `max`,
/// `.sum()`, …).
fn is_elementwise(idiom: &str) -> bool {
    idiom.ends_with(" =")
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
            let noun = match (elementwise, total) {
                (0, 1) => "float reduction",
                (0, _) => "float reductions",
                (e, 1) if e == total => "index loop",
                (e, _) if e == total => "index loops",
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
            LoopRewrite { line: 12, idiom: "for range +=", variants: BOTH, reason: "" },
            LoopRewrite { line: 20, idiom: "iter.sum()", variants: &[], reason: "effect" },
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
        let exact = [LoopRewrite { line: 3, idiom: "for iter +=", variants: &[], reason: "exact" }];
        let text = LoopSummary::new("", &exact).to_string();
        assert!(text.starts_with("loops: 0 of 1 float reduction in lanes; the SIMD variant is the body as written\n"));
        assert!(text.contains("as written (exact: the kernel opted out with `exact`)"), "{text}");
        assert_eq!(LoopSummary::new::<LoopRewrite>("", &[]).to_string(), "loops: no float reduction to put in lanes\n");
        let newer = LoopRecord { line: 1, idiom: "x".into(), variants: vec![], reason: "novel".into() };
        assert_eq!(LoopLine::from(&newer).to_string(), "line 1, x: as written (novel)");
    }

    #[test]
    fn split_and_unsplit_loops_are_said_in_words() {
        let splits = [
            LoopSplit { line: 10, idiom: "for range", reason: "" },
            LoopSplit { line: 30, idiom: "for iter_mut", reason: "break" },
        ];
        let loops = [LoopRewrite { line: 12, idiom: "for range +=", variants: &[Backend::Simd], reason: "" }];
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
    fn element_wise_loops_are_counted_as_what_they_are() {
        let simd: &[Backend] = &[Backend::Simd];
        let loops = [LoopRewrite { line: 3, idiom: "for range =", variants: simd, reason: "" }];
        assert!(LoopSummary::new("", &loops).to_string().starts_with("loops: 1 of 1 index loop in lanes, in SIMD\n"));
        let both = [loops[0], LoopRewrite { line: 5, idiom: "for range +=", variants: &[], reason: "effect" }];
        assert!(LoopSummary::new("", &both).to_string().starts_with("loops: 1 of 2 loops in lanes, in SIMD\n"));
    }

    #[test]
    fn every_reason_word_is_listed_once() {
        for (i, (word, meaning)) in LOOP_REASONS.iter().enumerate() {
            assert!(!meaning.is_empty());
            assert_eq!(LOOP_REASONS.iter().position(|(w, _)| w == word), Some(i), "{word} twice");
        }
    }
}
