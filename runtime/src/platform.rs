//! What the target can do that the runtime otherwise takes for granted, in one
//! place, so a target without it changes behaviour here and not in a fork of
//! the code that needs it.
//!
//! WebAssembly (`wasm32-unknown-unknown` in browsers and Node, `wasm32-wasip1`)
//! runs one thread: `std::thread::spawn` fails there and blocking waits
//! (`Condvar::wait`, `thread::sleep`) panic on `wasm32-unknown-unknown`. So on
//! WebAssembly the work native builds hand to background threads runs inline or
//! not at all:
//!
//! - the CPU calibration of the cost model does not run (it would stall a
//!   routed call, and a browser's clock is too coarse for its probes): the
//!   router prunes by its own measurements only (see `cost::global`);
//! - the history saver starts no thread: with a history file configured (WASI),
//!   [`crate::flush`] saves; the learned tables of a page travel as a JSON
//!   string instead ([`crate::export_learned`], [`crate::import_learned`]);
//! - the Parallel backend has one thread, so the router never offers it;
//! - the GPU is absent (see [`crate::ops::gpu`]): WebGPU is asynchronous in a
//!   browser and a synchronous kernel call cannot wait for it.

/// Whether this target can start threads (`std::thread::spawn`) and block on them.
pub(crate) const THREADS: bool = !cfg!(target_family = "wasm");

/// Whether this target has a user cache directory to keep a history file in by default.
pub(crate) const DEFAULT_HISTORY_FILE: bool = !cfg!(target_family = "wasm");
