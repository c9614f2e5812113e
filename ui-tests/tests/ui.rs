//! Compile-time behaviour of `#[adaptive_kernel]`: every error message the
//! macro can emit, with its span (`tests/ui/fail`), and every supported shape
//! of kernel compiling warning-free and running (`tests/ui/pass`), among them
//! numerical code written as people write it, without reading the macro
//! (`numpy_style`, `image_rows`, `physics`, `loops_left_alone`: issue #23).
//!
//! Regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test -p adaptive-kernel-ui-tests`
//! and review each by eye: the caret must sit under the offending token.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
