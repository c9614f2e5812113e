//! Collecting every problem of one kernel before reporting, so one build shows
//! all of them (serde's `Ctxt` pattern, on top of [`syn::Error::combine`]).
//!
//! The collector must be consumed by [`Errors::finish`] or [`Errors::fail`];
//! one dropped unconsumed panics (serde's drop guard), so an error recorded on
//! some path can never be lost on the way out, and no code has to trust that
//! "an error was pushed somewhere" to justify an `expect`.

use proc_macro2::Span;

/// Accumulates errors; `finish` returns them all combined.
pub(crate) struct Errors {
    errors: Vec<syn::Error>,
    /// Set by `finish`/`fail`; checked on drop.
    consumed: bool,
}

impl Errors {
    pub(crate) fn new() -> Errors {
        Errors { errors: Vec::new(), consumed: false }
    }

    pub(crate) fn push(&mut self, e: syn::Error) {
        self.errors.push(e);
    }

    pub(crate) fn error(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Records the error of `result`, if any, and returns its value.
    pub(crate) fn take<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    /// `Ok` when nothing was recorded; otherwise every recorded error, combined in order.
    pub(crate) fn finish(mut self) -> syn::Result<()> {
        self.consume().map_or(Ok(()), Err)
    }

    /// Every recorded error followed by `last`: for a problem that ends the checks.
    pub(crate) fn fail(mut self, last: syn::Error) -> syn::Error {
        match self.consume() {
            Some(mut all) => {
                all.combine(last);
                all
            }
            None => last,
        }
    }

    fn consume(&mut self) -> Option<syn::Error> {
        self.consumed = true;
        std::mem::take(&mut self.errors).into_iter().reduce(|mut all, e| {
            all.combine(e);
            all
        })
    }
}

impl Drop for Errors {
    fn drop(&mut self) {
        if !self.consumed && !std::thread::panicking() {
            panic!(
                "adaptive_kernel: an error collector was dropped without `finish` ({} error(s) would be lost)",
                self.errors.len()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_combines_every_error_in_order() {
        let mut errors = Errors::new();
        errors.error(Span::call_site(), "first");
        assert_eq!(errors.take::<()>(Err(syn::Error::new(Span::call_site(), "second"))), None);
        assert_eq!(errors.take(Ok(3)), Some(3));
        let all: Vec<String> = errors.finish().unwrap_err().into_iter().map(|e| e.to_string()).collect();
        assert_eq!(all, ["first", "second"]);
        assert!(Errors::new().finish().is_ok());
    }

    #[test]
    fn fail_appends_the_final_error() {
        let mut errors = Errors::new();
        errors.error(Span::call_site(), "earlier");
        let all: Vec<String> =
            errors.fail(syn::Error::new(Span::call_site(), "fatal")).into_iter().map(|e| e.to_string()).collect();
        assert_eq!(all, ["earlier", "fatal"]);
    }

    #[test]
    #[should_panic(expected = "dropped without `finish`")]
    fn dropping_an_unfinished_collector_panics() {
        let mut errors = Errors::new();
        errors.error(Span::call_site(), "lost");
        drop(errors);
    }
}
