//! The reason words: why the attribute left a reduction as written, or a loop on
//! one thread or on the host. One list, [`LoopReason`], from which the table of
//! words and meanings ([`LOOP_REASONS`]) is derived; the macro crate has the
//! same list as an enum of its own, and the facade checks at compile time that
//! the two hold the same words (`adaptive_kernel_macros::__loop_reasons!`), so a
//! word cannot be written by the macro without a meaning here, nor listed here
//! and never written.

/// Declares [`LoopReason`] and [`LOOP_REASONS`] from one list of variants, words and meanings.
macro_rules! loop_reasons {
    ($($variant:ident = $word:literal: $meaning:expr;)*) => {
        /// Why a reduction was left as written, or a loop left on one thread or on the host:
        /// each word a [`LoopRewrite::reason`](crate::LoopRewrite::reason), a
        /// [`LoopSplit::reason`](crate::LoopSplit::reason) or a
        /// [`LoopGpu::reason`](crate::LoopGpu::reason) can hold ([`word`](LoopReason::word)),
        /// and what it means ([`meaning`](LoopReason::meaning)).
        ///
        /// A kernel's spec holds the words as strings (a history file may hold one a newer
        /// build wrote); [`LoopReason::from_word`] reads one back.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum LoopReason {
            $(
                #[doc = concat!("`", $word, "`: ", $meaning, ".")]
                $variant,
            )*
        }

        impl LoopReason {
            /// Every reason, in the order of [`LOOP_REASONS`].
            pub const ALL: &'static [LoopReason] = &[$(LoopReason::$variant),*];

            /// The word a kernel's spec and its reports hold.
            pub const fn word(self) -> &'static str {
                match self {
                    $(LoopReason::$variant => $word,)*
                }
            }

            /// What the word means, as the reports print it.
            pub const fn meaning(self) -> &'static str {
                match self {
                    $(LoopReason::$variant => $meaning,)*
                }
            }
        }

        /// Each [`LoopReason`]'s word and meaning, in order.
        pub const LOOP_REASONS: [(&str, &str); [$($word),*].len()] = [$(($word, $meaning)),*];
    };
}

loop_reasons! {
    Exact = "exact": "the kernel opted out with `exact`";
    Simd = "simd": "the SIMD variant is the kernel's own `simd = path`";
    Break = "break": "a `break` may end the loop early";
    Continue = "continue": "a `continue` skips part of an iteration";
    Return = "return": "a `return` may leave the function from inside";
    Try = "try": "a `?` may leave the function from inside";
    Label = "label": "a labelled loop or block";
    Await = "await": "an `.await` inside";
    Yield = "yield": "a `yield` inside";
    Macro = "macro": "a macro call whose expansion the attribute cannot see";
    Effect = "effect": "a store, or a call that may have side effects";
    Reads = "reads": "the loop reads its accumulator";
    Type = "type":
        "an accumulator, term or written slice element not provably `f32`/`f64` (or, for a split, an integer sum; \
         for a slice updated at slots chosen by data, an element type its declaration does not name; on the GPU, a \
         value not provably `f32`, `i32`, `u32`, `usize` or `bool`)";
    Mixed = "mixed": "two different operators on one accumulator, or on one slice updated at slots chosen by data";
    Shadow = "shadow": "an accumulator, index, slice or row width rebound inside the loop";
    Op = "op": "a fold that is not `+`, `*`, `max` or `min`";
    Source = "source": "elements that cannot be taken in chunks";
    Serial = "serial": "the kernel opted out of splitting with `serial`";
    Parallel = "parallel": "the Parallel variant is the kernel's own `parallel = path`";
    Writes = "writes":
        "a write through a name from outside the loop (an assignment, a `&mut`, a method that may mutate) that is \
         not the iteration's own item or row";
    Overlap = "overlap": "a slice the loop writes is also used beyond the iteration's own item or row";
    Unsafe = "unsafe": "an `unsafe` block";
    Nothing = "nothing": "the loop writes no slice item and carries no reduction: nothing to share out";
    Gpu = "gpu": "the GPU variant is the kernel's own `gpu = path`";
    F64 = "f64": "an `f64` value: the GPU variant computes in `f32`";
    Call = "call": "a call of a function or method the GPU variant does not translate";
    Value = "value": "an array, tuple, struct, field or reference the GPU variant cannot hold";
    Size = "size": "a 64-bit integer, or a constant beyond `u32`: the GPU variant computes integers in 32 bits";
    Syntax = "syntax": "a construct the GPU variant does not translate (`match`, a closure, float `%`, …)";
    Carried = "carried":
        "an item writes what the next items' reductions read, or accumulates into what is not its own: items \
         cannot be taken several at a time";
}

impl LoopReason {
    /// The reason a word names; `None` for a word this build does not know (a history file
    /// written by a newer one).
    pub fn from_word(word: &str) -> Option<LoopReason> {
        LoopReason::ALL.iter().copied().find(|r| r.word() == word)
    }
}

/// What a reason word means, from [`LOOP_REASONS`]; `None` for a word this build
/// does not know (a history file written by a newer one).
pub fn loop_reason(word: &str) -> Option<&'static str> {
    LoopReason::from_word(word).map(LoopReason::meaning)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_word_is_listed_once_with_its_meaning() {
        assert_eq!(LoopReason::ALL.len(), LOOP_REASONS.len());
        for (i, (&reason, (word, meaning))) in LoopReason::ALL.iter().zip(LOOP_REASONS).enumerate() {
            assert_eq!((reason.word(), reason.meaning()), (word, meaning));
            assert!(!meaning.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric()));
            assert_eq!(LOOP_REASONS.iter().position(|(w, _)| *w == word), Some(i), "{word} twice");
            assert_eq!(LoopReason::from_word(word), Some(reason));
            assert_eq!(loop_reason(word), Some(meaning));
        }
        assert_eq!(LoopReason::from_word("erf"), None);
    }
}
