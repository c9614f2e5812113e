//! Compile-time tests of `#[adaptive_kernel]`, run by trybuild from `tests/ui.rs`.
//!
//! This library is empty: the crate exists so that trybuild's project builds
//! `adaptive-kernel` with its default features and no other dependency. The
//! cases are `tests/ui/fail` (every error message the macro can emit, with its
//! span) and `tests/ui/pass` (every supported shape of kernel compiling
//! warning-free and running).
