//! Whether a loop's iterations are independent, proved from its body's
//! tokens, and what the split needs to know to cut it: which slices each
//! iteration writes and at what stride (its *targets*), which reductions it
//! carries (its *accumulators*), and every name it shares with the rest of
//! the function.
//!
//! An iteration may
//!
//! * write a target only at its own item or row, in a range loop over `i`:
//!   `out[i]`, `out[i * w..(i + 1) * w]`, or `out[i * w + OFFSET]` with an
//!   offset proved to lie in `0..w` (`interval.rs`: a literal below the width,
//!   `w - k` with `k ≥ 1`, `j` from an enclosing `for j in 1..w - 1` of the
//!   body, their sums and differences; the border writes of a stencil), at
//!   one width per target; it may read those places too, and nothing else of
//!   the target (in a loop over an iterator of items, the target is the
//!   iterator's and the body cannot name it at all);
//! * update slots of a slice from outside chosen by data (`bins[idx] += 1`,
//!   `best[k] = best[k].max(v)`), by one operator, and name that slice
//!   otherwise only as `bins.len()`: each chunk updates a private copy
//!   (`reduction.rs`; the split's private copies: `crate::split`);
//! * update an accumulator declared `mut` before the loop only by
//!   accumulation statements (`acc += t`, `acc -= t`, `acc *= t`,
//!   `acc = acc.max(t)`, `acc = f32::min(acc, t)`, and `count += t` for an
//!   integer) and never read it otherwise: a float's partial results are
//!   combined in chunk order, an integer's sum is exact in any order;
//! * read anything else from outside, and call functions and methods, but not
//!   write through a name from outside: no assignment, no `&mut`, no method
//!   call on a binding declared `mut` or on a `&mut` reference;
//! * not leave the loop or the function (`break` out of it, `return`, `?`,
//!   `.await`, `yield`), hold `unsafe` code, or call a macro other than the
//!   standard ones and logging (`println!`, `assert!`, `log`/`tracing`'s
//!   `info!`, …, whose arguments are checked as the expressions they are);
//! * not rebind its index, a target, an accumulator or a row width.
//!
//! These rules make the chunk's closure `Fn` (so shareable across threads)
//! when what it names is `Sync`; whether it is, only the compiler knows, and
//! the runtime runs the chunks in order on the calling thread when not (see
//! `adaptive_kernel::__private::split`). What breaks a rule is reported with
//! its word.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::Ident;
use syn::punctuated::Punctuated;
use syn::visit::Visit;
use syn::{BinOp, Block, Expr, Pat, Stmt, Token};

use super::access::{is_compound, method_writes};
use super::interval::{self as offset, Inner};
use super::names::pat_names;
use super::names::{Env, Scopes};
use super::reduction::{self as scatter, accumulation, Op, Scatter, Update};
use super::scope::{Kind, Outer};
use super::syntax::{format_names, idents, item_name, path_names, plain_ident, pure};
use super::types::{Elem, Ty, Width};
use crate::reason::Reason;
use crate::tokens::{normalised, strip};

/// How many elements of a target one unit of the loop owns.
#[derive(Clone, Debug)]
pub(crate) enum Stride {
    /// `out[i]`.
    One,
    /// `out[i * 3 + c]`: an integer literal.
    Literal(u64),
    /// `out[i * w + j]` or `out[i * w..(i + 1) * w]`: an expression evaluated once.
    Expr(Box<Expr>),
}

impl Stride {
    fn key(&self) -> String {
        match self {
            Stride::One => "1".into(),
            Stride::Literal(n) => n.to_string(),
            Stride::Expr(e) => normalised(e),
        }
    }
}

/// A slice a range loop writes at its own item or row.
pub(crate) struct Target {
    pub name: Ident,
    pub stride: Stride,
    /// The least row width at which every access stays in its row (`interval.rs`): 0 for
    /// every width; above 0 only for a [`Stride::Expr`] (a literal width is checked here).
    /// The split form runs only when the width is at least this; a narrower row runs the
    /// loop as written.
    pub min_width: u64,
}

/// How the body uses a slice-like from outside that it writes.
#[derive(Clone, Debug)]
enum Use {
    /// At the index's own item or row.
    Row(Access),
    /// A scatter update of a slot chosen by data (`reduction.rs`).
    Scatter(Update),
    /// `len()` or `is_empty()`.
    Len,
    /// Anything else.
    Other,
}

impl Use {
    fn of(row: Option<Access>) -> Use {
        row.map_or(Use::Other, Use::Row)
    }
}

/// How one access indexes a target: within the index's own item or row.
#[derive(Clone, Debug)]
struct Access {
    stride: Stride,
    /// See [`Target::min_width`].
    min_width: u64,
}

/// What an accumulator holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Float(Width),
    Int,
}

/// A reduction the loop carries: its accumulator, declared before the loop.
pub(crate) struct Carried {
    pub ident: Ident,
    pub op: Op,
    pub value: Value,
}

/// What the body of a loop that can be split shares and writes.
pub(crate) struct Facts {
    /// Range loops: the slices written at the index's item or row.
    pub targets: Vec<Target>,
    pub carried: Vec<Carried>,
    /// Every name from outside the loop that the body names, but the targets and scatters.
    pub shared: Vec<Ident>,
    /// The slices updated at slots chosen by data (`reduction.rs`): the split gives each chunk a private copy.
    pub scatters: Vec<Scatter>,
}

/// The loop being checked.
pub(crate) struct Loop<'a> {
    /// A range loop's index.
    pub index: Option<&'a Ident>,
    /// The loop's label, if any: `continue 'label` stays valid in a chunk.
    pub label: Option<&'a syn::Lifetime>,
    /// Slices the loop's iterator writes (a chain's `iter_mut`, `chunks_mut`): the body may not name them.
    pub streams: Vec<String>,
    /// Names the loop's pattern binds.
    pub pattern: Vec<String>,
    /// The kernel opted out of reassociation (`exact`): no float reduction may be split.
    pub exact: bool,
}

/// Checks `body` as the body of `the_loop`; `Err` holds the word for why its
/// iterations cannot be proved independent.
pub(crate) fn check(body: &Block, the_loop: &Loop, scope: &Env) -> Result<Facts, Reason> {
    let mut c = Checker {
        scope,
        the_loop,
        locals: Scopes::default(),
        bound: BTreeSet::new(),
        labels: Vec::new(),
        loops: 0,
        closures: 0,
        reason: None,
        accumulations: Vec::new(),
        read_mut: BTreeSet::new(),
        mentions: BTreeMap::new(),
        written: BTreeMap::new(),
        accesses: BTreeMap::new(),
        strides: Vec::new(),
    };
    for n in &the_loop.pattern {
        c.locals.bind(n.clone(), None);
    }
    c.visit_block_stmts(&body.stmts);
    c.finish()
}

/// Walks a body in order, knowing which names are its own.
struct Checker<'a> {
    scope: &'a Env,
    the_loop: &'a Loop<'a>,
    /// Names bound inside the body, innermost scope last; an inner `for j in a..b` tags `j`
    /// with its bounds when they name nothing the body binds.
    locals: Scopes<Option<Inner>>,
    /// Every name the body binds anywhere (the loop's pattern aside).
    bound: BTreeSet<String>,
    /// Labels defined inside the body.
    labels: Vec<String>,
    /// Loops inside the body around the current point (outside any closure).
    loops: usize,
    /// Closures and `async` blocks around the current point.
    closures: usize,
    reason: Option<Reason>,
    /// `(accumulator, operator, subtracts)` for each accumulation statement.
    accumulations: Vec<(Ident, Op, bool)>,
    /// Names from outside bound `mut` and read (not through an accumulation).
    read_mut: BTreeSet<String>,
    /// Names from outside the body names, in order of name, each as first written (its
    /// span, and so its hygiene, is the user's: a body a `macro_rules!` wrote resolves too).
    mentions: BTreeMap<String, Ident>,
    /// `MutSlice` names from outside the body writes into.
    written: BTreeMap<String, Ident>,
    /// For each `MutSlice` name from outside: how the body indexes it (`None`: some other use).
    accesses: BTreeMap<String, Vec<Use>>,
    /// Names a row width mentions.
    strides: Vec<String>,
}

impl Checker<'_> {
    fn fail(&mut self, reason: Reason) {
        self.reason.get_or_insert(reason);
    }

    /// The name `n` as this point of the body sees it: from outside the loop (with what
    /// the scope knows), or `None` for the body's own.
    fn outer(&self, n: &str) -> Option<Outer> {
        if self.locals.lookup(n).is_some() {
            return None;
        }
        self.scope.outer(n)
    }

    /// The bounds an inner `for n in START..END` of the body gives `n`, if the innermost `n`
    /// in scope is that.
    fn inner_range(&self, n: &str) -> Option<Inner> {
        self.locals.lookup(n).cloned().flatten()
    }

    fn bind(&mut self, pat: &Pat) {
        for n in pat_names(pat) {
            self.bind_name(n, None);
        }
    }

    fn bind_name(&mut self, n: String, range: Option<Inner>) {
        self.bound.insert(n.clone());
        self.locals.bind(n, range);
    }

    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        self.locals.push();
        f(self);
        self.locals.pop();
    }

    fn visit_block_stmts(&mut self, stmts: &[Stmt]) {
        // Items of a block are in scope in all of it.
        for stmt in stmts {
            if let Stmt::Item(item) = stmt {
                if let Some(ident) = item_name(item) {
                    self.bind_name(ident, None);
                }
            }
        }
        for stmt in stmts {
            self.statement(stmt);
        }
    }

    fn statement(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Expr(e, _) if self.closures == 0 => match accumulation(e) {
                Some((acc, op, term)) if self.accumulates(&acc) => {
                    let subtracts = matches!(e, Expr::Binary(b) if matches!(b.op, BinOp::SubAssign(_)));
                    self.accumulations.push((acc, op, subtracts));
                    self.visit_expr(term);
                }
                _ => self.visit_expr(e),
            },
            stmt => self.visit_stmt(stmt),
        }
    }

    /// Whether `acc` may be an accumulator: a `mut` name from outside that is no slice.
    fn accumulates(&self, acc: &Ident) -> bool {
        let name = acc.to_string();
        self.outer(&name).is_some_and(|b| b.mutable && matches!(b.kind, Kind::Other))
            && self.the_loop.index.is_none_or(|i| *i != name)
    }

    /// A place written (assigned, `&mut`-borrowed, or the receiver of `method`): the name at its root.
    fn write(&mut self, place: &Expr, method: Option<&Ident>) {
        match place {
            Expr::Paren(p) => self.write(&p.expr, method),
            Expr::Group(g) => self.write(&g.expr, method),
            Expr::Field(f) => self.write(&f.base, method),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => self.write(&u.expr, method),
            Expr::Index(i) => match plain_ident(&i.expr).and_then(|n| self.outer(&n.to_string()).map(|b| (n, b))) {
                Some((n, b)) if b.kind == Kind::MutSlice => {
                    self.written.entry(n.to_string()).or_insert_with(|| n.clone());
                    self.mentions.entry(n.to_string()).or_insert_with(|| n.clone());
                    let row = self.row(&i.index);
                    self.accesses.entry(n.to_string()).or_default().push(Use::of(row));
                    self.visit_expr(&i.index);
                }
                _ => {
                    self.write(&i.expr, method);
                    self.visit_expr(&i.index);
                }
            },
            Expr::Path(_) => match plain_ident(place) {
                Some(n) => {
                    let name = n.to_string();
                    match self.outer(&name) {
                        // A length a chunk's private copy has too (the split's scatter).
                        Some(b)
                            if b.kind == Kind::MutSlice && method.is_some_and(|m| m == "len" || m == "is_empty") =>
                        {
                            self.mentions.entry(name.clone()).or_insert(n);
                            self.accesses.entry(name).or_default().push(Use::Len);
                        }
                        // A method that cannot write what the name holds (`access.rs`).
                        Some(_)
                            if method.is_some_and(|m| !method_writes(self.scope.binding(&name), &m.to_string())) =>
                        {
                            self.read(&n)
                        }
                        Some(_) => {
                            self.mentions.entry(name).or_insert(n);
                            self.fail(Reason::Writes);
                        }
                        None => {}
                    }
                }
                None => self.visit_expr(place),
            },
            e => self.visit_expr(e),
        }
    }

    /// `e` when it names a `&mut` from outside (a [`Kind::MutRef`] or [`Kind::MutSlice`]).
    fn mut_ref(&self, e: &Expr) -> Option<Ident> {
        let n = plain_ident(strip(e))?;
        self.outer(&n.to_string()).filter(|b| matches!(b.kind, Kind::MutRef | Kind::MutSlice)).map(|_| n)
    }

    /// A name read.
    fn read(&mut self, n: &Ident) {
        let name = n.to_string();
        let Some(b) = self.outer(&name) else { return };
        self.mentions.entry(name.clone()).or_insert_with(|| n.clone());
        if b.mutable {
            self.read_mut.insert(name.clone());
        }
        if self.the_loop.streams.contains(&name) {
            self.fail(Reason::Overlap);
        }
        if b.kind == Kind::MutSlice {
            self.accesses.entry(name).or_default().push(Use::Other);
        }
    }

    /// Records `e` if it is a scatter update of a slice from outside (`reduction.rs`) that is
    /// not at the index's own item or row; whether it was.
    fn scatter(&mut self, e: &Expr) -> bool {
        let Some(update) = scatter::update(e) else { return false };
        let name = update.slice.to_string();
        let ours = self.outer(&name).is_some_and(|b| b.kind == Kind::MutSlice);
        if !ours || self.the_loop.streams.contains(&name) || self.row(update.index).is_some() {
            return false;
        }
        self.written.entry(name.clone()).or_insert_with(|| update.slice.clone());
        self.mentions.entry(name.clone()).or_insert_with(|| update.slice.clone());
        self.accesses.entry(name).or_default().push(Use::Scatter(update.update));
        self.visit_expr(update.index);
        self.visit_expr(update.value);
        true
    }

    /// How `index` stays in the index's own item or row, if it does.
    fn row(&self, index: &Expr) -> Option<Access> {
        let i = self.the_loop.index?;
        let is_i = |e: &Expr| plain_ident(e).is_some_and(|n| n == *i) && self.outer(&i.to_string()).is_none();
        let literal = |e: &Expr| match strip(e) {
            Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) => n.base10_parse::<u64>().ok(),
            _ => None,
        };
        // A width the body cannot change, evaluated once before the loop instead of at each
        // access: a literal, or a pure expression of names from outside not bound `mut`.
        let width = |w: &Expr| -> Option<Stride> {
            if let Some(n) = literal(w) {
                return (n > 0).then_some(Stride::Literal(n));
            }
            let outside = path_names(w).iter().all(|n| self.outer(n).is_some_and(|b| !b.mutable));
            (outside && pure(w)).then(|| Stride::Expr(Box::new(w.clone())))
        };
        let whole = |stride| Some(Access { stride, min_width: 0 });
        match strip(index) {
            e if is_i(e) => whole(Stride::One),
            // `i * w..(i + 1) * w` (`interval.rs`).
            Expr::Range(r) => whole(width(&offset::row_range(r, &is_i)?)?),
            // `i * w + OFFSET`, `OFFSET` within the row (`interval.rs`).
            e => {
                let proved = offset::row_index(e, &is_i, &|n| self.inner_range(n))?;
                match width(&proved.width)? {
                    Stride::Literal(w) if w >= proved.min_width => whole(Stride::Literal(w)),
                    Stride::Literal(_) => None,
                    stride => Some(Access { stride, min_width: proved.min_width }),
                }
            }
        }
    }

    /// A macro call: the standard ones and logging, with arguments parsed as expressions.
    fn mac(&mut self, mac: &syn::Macro) {
        // Whatever it expands to can only name what its tokens hold: share all of them.
        for n in idents(mac.tokens.clone()).into_iter().chain(format_names(mac.tokens.clone())) {
            if self.outer(&n.to_string()).is_some() {
                self.mentions.entry(n.to_string()).or_insert(n);
            }
        }
        if crate::std_macros::known(&mac.path) != Some(crate::std_macros::Known::Reads) {
            return self.fail(Reason::Macro);
        }
        // A write, or a target named at its own row, inside a macro cannot be followed.
        let names = idents(mac.tokens.clone());
        if names
            .iter()
            .any(|n| self.outer(&n.to_string()).is_some_and(|b| matches!(b.kind, Kind::MutSlice | Kind::MutRef)))
        {
            return self.fail(Reason::Macro);
        }
        let args = if mac.path.is_ident("vec") {
            mac.parse_body_with(|input: syn::parse::ParseStream| {
                let first: Expr = input.parse()?;
                if input.parse::<Option<Token![;]>>()?.is_some() {
                    let len: Expr = input.parse()?;
                    return Ok(vec![first, len]);
                }
                let mut all = vec![first];
                while input.parse::<Option<Token![,]>>()?.is_some() && !input.is_empty() {
                    all.push(input.parse()?);
                }
                Ok(all)
            })
        } else {
            mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated).map(|p| p.into_iter().collect())
        };
        match args {
            Ok(args) => {
                for a in &args {
                    self.visit_expr(a);
                }
                for n in format_names(mac.tokens.clone()) {
                    self.read(&n);
                }
            }
            Err(_) => self.fail(Reason::Macro),
        }
    }

    fn finish(mut self) -> Result<Facts, Reason> {
        if let Some(reason) = self.reason {
            return Err(reason);
        }
        // Accumulators: one operator each, never read otherwise, of a known kind.
        let mut carried: Vec<Carried> = Vec::new();
        let mut subtracted: BTreeSet<String> = BTreeSet::new();
        for (acc, op, subtracts) in std::mem::take(&mut self.accumulations) {
            if subtracts {
                subtracted.insert(acc.to_string());
            }
            match carried.iter().find(|c| c.ident == acc) {
                Some(seen) if seen.op != op => return Err(Reason::Mixed),
                Some(_) => {}
                None => carried.push(Carried { ident: acc, op, value: Value::Int }),
            }
        }
        for c in &mut carried {
            c.value = match self.scope.lookup(&c.ident.to_string()) {
                Some((Ty::Float(w), true)) => {
                    if self.the_loop.exact {
                        return Err(Reason::Exact);
                    }
                    if matches!(c.op, Op::Max | Op::Min) && w == Width::Any {
                        return Err(Reason::Type);
                    }
                    Value::Float(w)
                }
                // An integer sum is exact in any order; a difference of unsigned partials is not.
                Some((Ty::Int(_), true)) if c.op == Op::Sum && !subtracted.contains(&c.ident.to_string()) => Value::Int,
                _ => return Err(Reason::Type),
            };
        }
        if carried.iter().any(|c| self.read_mut.contains(&c.ident.to_string())) {
            return Err(Reason::Reads);
        }
        // Targets: written, and named only at their own item or row, at one stride. Scatters:
        // updated by one operator at slots chosen by data, and otherwise only measured.
        let mut targets = Vec::new();
        let mut scatters = Vec::new();
        for (name, ident) in &self.written {
            let uses = &self.accesses[name];
            let rows: Vec<&Access> =
                uses.iter().filter_map(|u| if let Use::Row(a) = u { Some(a) } else { None }).collect();
            let updates: Vec<Update> =
                uses.iter().filter_map(|u| if let Use::Scatter(op) = u { Some(*op) } else { None }).collect();
            if let (Some(first), true) = (rows.first(), rows.len() == uses.len()) {
                let key = first.stride.key();
                if rows.iter().any(|a| a.stride.key() != key) {
                    return Err(Reason::Overlap);
                }
                if let Stride::Expr(w) = &first.stride {
                    self.strides.extend(path_names(w));
                }
                let min_width = rows.iter().map(|a| a.min_width).max().unwrap_or(0);
                targets.push(Target { name: ident.clone(), stride: first.stride.clone(), min_width });
                continue;
            }
            let measured = uses.iter().all(|u| matches!(u, Use::Scatter(_) | Use::Len));
            let Some(&update) = updates.first().filter(|_| measured) else { return Err(Reason::Overlap) };
            if updates.iter().any(|&u| u != update) {
                return Err(Reason::Mixed);
            }
            let element = self.scope.element(name).unwrap_or(Elem::Other);
            Scatter::check(update, element, self.the_loop.exact)?;
            scatters.push(Scatter { name: ident.clone(), update, element });
        }
        // Nothing the rewrite relies on may be rebound inside.
        let protected = self
            .the_loop
            .index
            .map(ToString::to_string)
            .into_iter()
            .chain(self.written.keys().cloned())
            .chain(carried.iter().map(|c| c.ident.to_string()))
            .chain(self.strides.iter().cloned());
        for name in protected {
            if self.bound.contains(&name) {
                return Err(Reason::Shadow);
            }
        }
        if targets.is_empty() && carried.is_empty() && scatters.is_empty() && self.the_loop.streams.is_empty() {
            return Err(Reason::Nothing);
        }
        let shared = self
            .mentions
            .iter()
            .filter(|(n, _)| !self.written.contains_key(*n))
            .map(|(_, ident)| ident.clone())
            .collect();
        Ok(Facts { targets, carried, shared, scatters })
    }
}

impl<'ast> Visit<'ast> for Checker<'_> {
    fn visit_block(&mut self, b: &'ast Block) {
        self.scoped(|c| c.visit_block_stmts(&b.stmts));
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let Some(init) = &l.init {
            self.visit_expr(&init.expr);
            if let Some((_, diverge)) = &init.diverge {
                self.visit_expr(diverge);
            }
        }
        self.bind(&l.pat);
    }

    fn visit_stmt_macro(&mut self, m: &'ast syn::StmtMacro) {
        self.mac(&m.mac);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {
        // A nested item is a function of its own: it captures nothing.
    }

    fn visit_expr(&mut self, e: &'ast Expr) {
        if self.reason.is_some() {
            return;
        }
        match e {
            Expr::Path(_) => match plain_ident(e) {
                Some(n) => match self.outer(&n.to_string()) {
                    // A `&mut` (or a slice a chunk writes) used whole may be reborrowed or moved.
                    Some(b) if matches!(b.kind, Kind::MutRef | Kind::MutSlice) => {
                        self.read(&n);
                        self.fail(Reason::Writes);
                    }
                    Some(_) => self.read(&n),
                    None => {}
                },
                None => syn::visit::visit_expr(self, e),
            },
            // Reading through a `&mut` (`cfg.scale`, `*r`, `&cfg`) is a read.
            Expr::Field(f) if self.mut_ref(&f.base).is_some() => {
                let n = self.mut_ref(&f.base).expect("checked in the guard");
                self.read(&n);
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) && self.mut_ref(&u.expr).is_some() => {
                let n = self.mut_ref(&u.expr).expect("checked in the guard");
                self.read(&n);
            }
            Expr::Reference(r) if r.mutability.is_none() && self.mut_ref(&r.expr).is_some() => {
                let n = self.mut_ref(&r.expr).expect("checked in the guard");
                self.read(&n);
            }
            Expr::Index(i) => match plain_ident(&i.expr).and_then(|n| self.outer(&n.to_string()).map(|b| (n, b))) {
                Some((n, b)) if b.kind == Kind::MutSlice => {
                    self.mentions.entry(n.to_string()).or_insert_with(|| n.clone());
                    if self.the_loop.streams.contains(&n.to_string()) {
                        self.fail(Reason::Overlap);
                    }
                    let row = self.row(&i.index);
                    self.accesses.entry(n.to_string()).or_default().push(Use::of(row));
                    self.visit_expr(&i.index);
                }
                _ => syn::visit::visit_expr(self, e),
            },
            e if self.scatter(e) => {}
            Expr::Assign(a) => {
                self.write(&a.left, None);
                self.visit_expr(&a.right);
            }
            Expr::Binary(b) if is_compound(&b.op) => {
                self.write(&b.left, None);
                self.visit_expr(&b.right);
            }
            Expr::Reference(r) if r.mutability.is_some() => self.write(&r.expr, None),
            Expr::MethodCall(m) => {
                self.write(&m.receiver, Some(&m.method));
                for a in &m.args {
                    self.visit_expr(a);
                }
            }
            Expr::Break(b) => {
                let inside = b.label.as_ref().is_some_and(|l| self.labels.contains(&l.ident.to_string()));
                if (b.label.is_none() && self.loops == 0 && self.closures == 0) || (b.label.is_some() && !inside) {
                    return self.fail(Reason::Break);
                }
                syn::visit::visit_expr_break(self, b);
            }
            Expr::Continue(c) => {
                if let Some(l) = &c.label {
                    let own = self.the_loop.label.is_some_and(|s| s.ident == l.ident);
                    // A top-level loop's body can name no other label; kept in case that changes.
                    if !own && !self.labels.contains(&l.ident.to_string()) {
                        self.fail(Reason::Label);
                    }
                }
            }
            Expr::Return(_) if self.closures == 0 => self.fail(Reason::Return),
            Expr::Try(_) if self.closures == 0 => self.fail(Reason::Try),
            Expr::Await(_) | Expr::Async(_) => self.fail(Reason::Await),
            Expr::Yield(_) => self.fail(Reason::Yield),
            Expr::Unsafe(_) => self.fail(Reason::Unsafe),
            Expr::Macro(m) => self.mac(&m.mac),
            Expr::Closure(cl) => {
                let (loops, labels) = (self.loops, std::mem::take(&mut self.labels));
                self.loops = 0;
                self.closures += 1;
                self.scoped(|c| {
                    for p in &cl.inputs {
                        c.bind(p);
                    }
                    c.visit_expr(&cl.body);
                });
                self.closures -= 1;
                (self.loops, self.labels) = (loops, labels);
            }
            Expr::ForLoop(f) => {
                self.visit_expr(&f.expr);
                // `for j in a..b`: `j` is at least `a` and below `b` in the body, when `a` and `b`
                // name nothing the body binds (what they name means the same at every access).
                let range = match (&*f.expr, &*f.pat) {
                    (Expr::Range(r), Pat::Ident(p))
                        if p.mutability.is_none()
                            && p.by_ref.is_none()
                            && p.subpat.is_none()
                            && matches!(r.limits, syn::RangeLimits::HalfOpen(_)) =>
                    {
                        let outside = |e: &Expr| path_names(e).iter().all(|n| self.outer(n).is_some());
                        // A `usize` is at least 0 whatever the start names.
                        let start = match r.start.as_deref().map(strip) {
                            Some(Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. })) => {
                                n.base10_parse().unwrap_or(0)
                            }
                            _ => 0,
                        };
                        let end = r.end.as_deref().filter(|e| outside(e));
                        end.map(|end| Inner { start, end: end.clone() })
                    }
                    _ => None,
                };
                self.in_loop(f.label.as_ref(), |c| {
                    c.scoped(|c| {
                        match range {
                            Some(range) => c.bind_name(pat_names(&f.pat).remove(0), Some(range)),
                            None => c.bind(&f.pat),
                        }
                        c.visit_block(&f.body);
                    })
                });
            }
            Expr::While(w) => self.in_loop(w.label.as_ref(), |c| {
                c.scoped(|c| {
                    c.visit_expr(&w.cond);
                    c.visit_block(&w.body);
                })
            }),
            Expr::Loop(l) => self.in_loop(l.label.as_ref(), |c| c.visit_block(&l.body)),
            Expr::Block(b) => {
                let label = b.label.as_ref().map(|l| l.name.ident.to_string());
                self.labels.extend(label.clone());
                self.visit_block(&b.block);
                if label.is_some() {
                    self.labels.pop();
                }
            }
            Expr::If(i) => {
                self.scoped(|c| {
                    c.visit_expr(&i.cond);
                    c.visit_block(&i.then_branch);
                });
                if let Some((_, otherwise)) = &i.else_branch {
                    self.visit_expr(otherwise);
                }
            }
            Expr::Let(l) => {
                // Binds into the scope its `if`/`while` opened.
                self.visit_expr(&l.expr);
                self.bind(&l.pat);
            }
            Expr::Match(m) => {
                self.visit_expr(&m.expr);
                for arm in &m.arms {
                    self.scoped(|c| {
                        c.bind(&arm.pat);
                        if let Some((_, guard)) = &arm.guard {
                            c.visit_expr(guard);
                        }
                        c.visit_expr(&arm.body);
                    });
                }
            }
            e => syn::visit::visit_expr(self, e),
        }
    }
}

impl Checker<'_> {
    fn in_loop(&mut self, label: Option<&syn::Label>, f: impl FnOnce(&mut Self)) {
        let label = label.map(|l| l.name.ident.to_string());
        self.labels.extend(label.clone());
        self.loops += 1;
        f(self);
        self.loops -= 1;
        if label.is_some() {
            self.labels.pop();
        }
    }
}
