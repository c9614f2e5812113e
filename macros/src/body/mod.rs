//! The model of a kernel's body: what the three rewrites (`crate::reduce` for the
//! SIMD variant, `crate::split` for the Parallel one, `crate::shader` for the GPU)
//! know about the user's code, answered once, in one vocabulary, and read by each.
//! The rewrites are emitters over this model: none of them imports another.
//!
//! | file | concept |
//! | --- | --- |
//! | `types` | what a type is: the vocabulary, and the one reading of a declared type |
//! | `names` | the scoped name table |
//! | `typer` | the types of expressions (one typer), and so what a `let` holds |
//! | `walk` | what a `for` walks: the one grammar of loop sources |
//! | `space` | the iteration space of a top-level loop, as the split and the GPU cut it |
//! | `access` | what counts as a write: the one classifier of the places an expression writes |
//! | `reduction` | reductions and scatter updates as statements write them |
//! | `interval` | the index-range facts: which indices stay in the loop index's own row |
//! | `independence` | whether a loop's iterations are independent, and what it writes and carries |
//! | `scope` | the names a top-level loop sees from outside it |
//! | `record` | each `for` loop recorded once: its walk, index, lets, what it holds, how it exits |
//! | `loops` | the model of one body ([`Body`]), built once per kernel: its parameters and each top-level loop analysed |
//! | `syntax` | questions about expressions and tokens that every analysis asks |
//! | `lower` | ndarray's shapes lowered to slice shapes: the body the model is built over when the kernel takes arrays |
//!
//! ## Where each question is answered
//!
//! Each question the rewrites ask about a body has one implementation here (issue 41 lists
//! where the answers used to disagree; `tests/body_model.rs` holds a kernel for each case):
//!
//! | question | file | function |
//! | --- | --- | --- |
//! | what a declared type is (`Vec` is std's; the twelve integers) | `types` | [`Ty::of_type`], `Value::of_type`, `IntTy::ALL` |
//! | what a `let` holds (`vec![v; n]`, `to_vec`, `&x[a..b]`, `split_at`) | `typer` | `Env::bind_let`, `Env::value_of` (`vec![0.0; n]` is a float of either width, `Width::Any`) |
//! | the type of an expression (one typer) | `typer` | `Env::ty` (a pure expression), `Env::type_of` (any), `Env::item` (a walk's item) |
//! | names in scope (one table) | `names` | [`Scopes`], [`Env`] (`bind`, `poison`, `binding`); `scope`: `Env::outer` (a loop's outside names as [`Kind`]s) |
//! | read or write (one classifier; the ten compound assignments; the sixteen read-only methods) | `access` | [`Write::of`], [`is_compound`], [`method_writes`], [`whole_use_writes`], [`root`] |
//! | reductions and scatter updates | `reduction` | [`accumulation`], [`extremum_of`], [`keep`], [`slot`], `update_of`, `Scatter::check` |
//! | what a `for` walks (one grammar; `Iterator::zip(a, b)` is `a.zip(b)`) | `walk` | [`Walk::of`]; `space`: [`Space::of`], `Chain::of`, `Space::idiom` (the report's word) |
//! | index ranges (one interval analysis; the row `&x[i*d..(i+1)*d]` however written) | `interval` | `row_index`, [`row_range`], [`unit_base`], [`moves_with`] |
//! | whether a loop's iterations are independent | `independence` | `check` → [`Facts`] |
//! | each loop recorded once | `record`, `loops` | [`ForLoop::new`] (any `for`), [`Body::new`] → [`TopLoop`] (each top-level one, analysed) |
//! | why a loop is left alone (one list of words, shared with the runtime) | `crate::reason` | `Reason` |
//!
//! Rules stricter than the model's answer stay in the rewrite that needs them, on top of it:
//! the GPU variant's guesses (`f32` for a float of either width, `i32` for an unsuffixed
//! integer; `crate::shader`'s `outer` and its unification of shader types, checked at run
//! time), and the element-wise rewrite's borrow rule (`crate::reduce`'s `elementwise`).
//!
//! A kernel over ndarray arrays is modelled over its *lowered* body (`lower`): each array
//! parameter read as one row-major slice, `a[[i, j]]` as `a[i * cols + j]`, `a.rows()` as
//! `a.chunks_exact(cols)`. The emitters then rewrite it as they rewrite slice code, and
//! `crate::layout_guard` runs their output only on a call whose arrays are in standard
//! layout (else the body as written).

mod access;
mod independence;
mod interval;
mod loops;
mod lower;
mod names;
mod record;
mod reduction;
mod scope;
mod space;
mod syntax;
mod typer;
mod types;
mod walk;

pub(crate) use access::{is_compound, method_writes, root, whole_use_writes, Write};
pub(crate) use independence::{Carried, Facts, Stride, Target, Value};
pub(crate) use interval::{moves_with, row_range, unit_base};
pub(crate) use loops::{Body, Independent, TopLoop};
pub(crate) use lower::{lower, Lowered};
#[cfg(test)]
pub(crate) use names::declared;
pub(crate) use names::{let_names, pat_names, Env, Scopes};
pub(crate) use record::{continue_guard, forbidden, ForLoop, Holds};
pub(crate) use reduction::{accumulation, extremum_of, keep, slot, Fold, Op, Scatter, Update};
pub(crate) use scope::Kind;
pub(crate) use space::{Chain, Rows, Space, Stream};
pub(crate) use syntax::{holds_expr, is_screaming, plain_ident, pure};
pub(crate) use types::{Access, Elem, Int, IntTy, Prim, Ty, Value as TyValue, Width};
pub(crate) use walk::{How, Walk};
