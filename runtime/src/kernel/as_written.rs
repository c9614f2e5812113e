//! Calls that ran a kernel's body as written because an ndarray array they were
//! given was not in standard layout (a transposed view, a strided slice): the
//! variants' array rewrites read an array as one row-major slice
//! ([`crate::layout`]), and one that is not gets the loops as the user wrote them
//! for that call. Counted per kernel, said once per kernel (a `tracing` event and
//! a line on stderr unless quiet, as the runtime's other once-per-kernel notes),
//! and shown by [`Kernel::table`](crate::Kernel::table) ([`AsWritten`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::config;
use crate::layout::Strided;

/// A kernel's calls that ran as written, and the first array that made one do so.
#[derive(Debug)]
pub(super) struct AsWrittenCalls {
    calls: AtomicU64,
    first: OnceLock<Strided>,
}

impl AsWrittenCalls {
    pub(super) const fn new() -> AsWrittenCalls {
        AsWrittenCalls { calls: AtomicU64::new(0), first: OnceLock::new() }
    }

    /// What the table shows; `None` before the first such call.
    pub(super) fn report(&self) -> Option<AsWritten> {
        let first = self.first.get()?.clone();
        Some(AsWritten { calls: self.calls.load(Ordering::Relaxed), first })
    }
}

/// Calls of a kernel that ran its body as written because an array was not in
/// standard layout ([`KernelTable::as_written`](crate::KernelTable::as_written)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsWritten {
    /// How many, in this process.
    pub calls: u64,
    /// The array that made the first of them do so.
    pub first: Strided,
}

impl std::fmt::Display for AsWritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let calls = if self.calls == 1 { "1 call" } else { &format!("{} calls", self.calls) };
        write!(f, "{calls} ran the body as written: {} (the first)", self.first)
    }
}

impl AsWrittenCalls {
    /// Counts one call of the kernel `kernel` that ran as written for `param` (see
    /// [`Kernel::ran_as_written`](crate::Kernel::ran_as_written)), and reports the first.
    pub(super) fn record(&self, kernel: &str, param: &'static str, shape: &[usize], strides: &[isize]) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let mut first = false;
        let strided = self.first.get_or_init(|| {
            first = true;
            Strided { param, shape: shape.to_vec(), strides: strides.to_vec() }
        });
        if first {
            tracing::info!(target: "adaptive_kernel", kernel, param, shape = ?strided.shape, strides = ?strided.strides,
                "an array is not in standard layout; the call ran the body as written (further such calls are not reported)");
            config::say(format_args!(
                "{kernel}: {strided}, so the call ran the body as written: the variants' array loops read a \
                 contiguous row-major array (pass `{param}.as_standard_layout()` or an owned copy to get them); \
                 further such calls of this kernel are counted in its table, not reported"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_calls_and_names_the_first_array() {
        let first = Strided { param: "x", shape: vec![2, 3], strides: vec![1, 2] };
        let one = AsWritten { calls: 1, first: first.clone() };
        assert_eq!(
            one.to_string(),
            "1 call ran the body as written: `x` is not in standard layout (shape [2, 3], strides [1, 2]) (the first)"
        );
        assert!(AsWritten { calls: 12, first }.to_string().starts_with("12 calls ran the body as written: `x`"));
    }
}
