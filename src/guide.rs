//! The guide: how to use adaptive kernels, chapter by chapter. Start with
//! [getting started](getting_started).
//!
//! | chapter | what it answers |
//! | --- | --- |
//! | [getting started](getting_started) | depend on the crate, annotate a function, run it, see what it learned |
//! | [what the attribute does](attribute) | the variants it compiles, what it does to your loops, the op set |
//! | [arrays] | ndarray's arrays and views as parameters: size, `verify`, the layout rule, supported versions, what each shape gets |
//! | [routing] | how a call picks a variant, and what the router learns |
//! | [data kept on the GPU](resident) | `Resident` handles and `k::resident`: iterative programs whose data stays on the device, and what each call moved |
//! | [persistence] | the history file, saving, sharing tables between machines and programs |
//! | [modes] | `frozen`, `verify`, `exact` and `serial`: when to reach for each |
//! | [configuration] | every setting, as a variable and in code |
//! | [the `adaptive-kernel` command](cli) | report, plot, calibrate, clear, export, import |
//! | [WebAssembly](webassembly) | browsers, Node and WASI |
//! | [telemetry] | logging decisions, and exporting them over OTLP |
//! | [library users](library_users) | a crate that uses kernels inside another program: dependencies, features, who decides, silence |
//!
//! The attribute's full reference (every key, what it generates, the rules of
//! its rewrites) is on [`adaptive_kernel`](crate::adaptive_kernel).
//!
//! # Why rustdoc pages, not an mdBook
//!
//! The chapters are Markdown files (`docs/guide/*.md`) included into this
//! module's submodules, so they ship with each version on docs.rs beside the API
//! they describe, their links to items are checked by `cargo doc` (CI builds the
//! docs with `-D warnings`), and every Rust example in them is a doctest that
//! `cargo test` compiles and runs against this very version of the crate. An
//! mdBook would need a tool of its own in CI, its examples could not link
//! against the workspace's dependencies without extra set-up, and it would be
//! one more site to host and keep in step with the version a reader uses.

#[doc = include_str!("../docs/guide/getting-started.md")]
pub mod getting_started {}

#[doc = include_str!("../docs/guide/attribute.md")]
pub mod attribute {}

#[doc = include_str!("../docs/guide/arrays.md")]
pub mod arrays {}

#[doc = include_str!("../docs/guide/routing.md")]
pub mod routing {}

#[doc = include_str!("../docs/guide/resident.md")]
pub mod resident {}

#[doc = include_str!("../docs/guide/persistence.md")]
pub mod persistence {}

#[doc = include_str!("../docs/guide/modes.md")]
pub mod modes {}

#[doc = include_str!("../docs/guide/configuration.md")]
pub mod configuration {}

#[doc = include_str!("../docs/guide/cli.md")]
pub mod cli {}

#[doc = include_str!("../docs/guide/webassembly.md")]
pub mod webassembly {}

#[doc = include_str!("../docs/guide/telemetry.md")]
pub mod telemetry {}

#[doc = include_str!("../docs/guide/library-users.md")]
pub mod library_users {}
