//! Which read-only slices every invocation walks, so the shader keeps them in
//! workgroup memory: a k-means loop's centroids, an n-body loop's positions,
//! read by each invocation in an inner loop at indices that do not depend on
//! which invocation reads them. Each workgroup loads such a slice into
//! `var<workgroup>` memory once, all 64 invocations together, and its inner
//! loops read it from there instead of from the device's global memory, 64
//! times per element.
//!
//! Which slices: those the loop never writes and reads inside an inner loop at
//! an index (and through sub-slices and rows) computed without the invocation's
//! unit: found by following what each local is computed from ([`plan`]). Its
//! other reads (`x[i]` beside `x[j]` in an n-body loop) read the tile too. The
//! choice only decides speed: a load of a tiled slice reads the tile when the
//! slice fits it, else global memory (the shader checks the slice's length, a
//! uniform, at run time), so what it reads is the same either way.
//!
//! Workgroup memory is 16 KiB on every WebGPU device: the tiles share 3,584
//! words of it, less 64 per reduction the loop carries (its tree), equally, in
//! whole workgroups' worth (64 words), at least 256 words each.

use super::ir::{Place, Var, ViewId, E, S};
use super::lower::Lowered;

/// Words of workgroup memory the tiles of one shader share (of WebGPU's 4,096).
const TILE_WORDS: usize = 3_584;
/// The smallest tile worth loading, in words.
const MIN_TILE: usize = 256;
/// At most this many slices are tiled.
const MAX_TILES: usize = 4;

/// The slices to tile (binding indices) and each tile's length in elements.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Tiles {
    pub bindings: Vec<usize>,
    pub words: usize,
}

impl Tiles {
    pub(super) fn has(&self, binding: usize) -> bool {
        self.bindings.contains(&binding)
    }
}

/// The tiles of `l`, which carries `reductions` reductions.
pub(super) fn plan(l: &Lowered, reductions: usize) -> Tiles {
    let mut t = Taint { vars: vec![false; l.vars.len()], changed: true };
    for s in &l.header {
        if let S::Decl(v, _) = s {
            t.set(*v);
        }
    }
    // Until nothing changes: a loop may carry a value computed from the unit back to its start.
    while t.changed {
        t.changed = false;
        t.stmts(l, &l.body, false);
    }
    let mut walked = vec![false; l.bindings.len()];
    Seen { walked: &mut walked }.stmts(l, &t, &l.body, 0);
    let mut bindings: Vec<usize> =
        (0..l.bindings.len()).filter(|&b| !l.bindings[b].written && walked[b]).take(MAX_TILES).collect();
    let budget = TILE_WORDS.saturating_sub(64 * reductions);
    while !bindings.is_empty() && budget / bindings.len() / 64 * 64 < MIN_TILE {
        bindings.pop();
    }
    if bindings.is_empty() {
        return Tiles::default();
    }
    let words = budget / bindings.len() / 64 * 64;
    Tiles { bindings, words }
}

/// The locals whose values depend on the invocation.
struct Taint {
    vars: Vec<bool>,
    changed: bool,
}

impl Taint {
    fn set(&mut self, v: Var) {
        if !self.vars[v] {
            self.vars[v] = true;
            self.changed = true;
        }
    }

    fn var(&self, v: Option<Var>) -> bool {
        v.is_some_and(|v| self.vars[v])
    }

    fn view(&self, l: &Lowered, view: ViewId) -> bool {
        let v = &l.views[view];
        self.var(v.base) || self.var(v.len)
    }

    /// Whether `e`'s value depends on the invocation.
    fn expr(&self, l: &Lowered, e: &E) -> bool {
        match e {
            E::Float(..) | E::Int(..) | E::Bool(_) | E::Arg(_) => false,
            E::Local(v) => self.vars[*v],
            E::Raw(_) => true,
            E::Load(view, i) => self.view(l, *view) || self.expr(l, i),
            E::Len(view) => self.view(l, *view),
            E::Unary(_, a, _) | E::Cast(a, _, _) => self.expr(l, a),
            E::Binary(_, a, b, _) => self.expr(l, a) || self.expr(l, b),
            E::Call(_, args, _) => args.iter().any(|a| self.expr(l, a)),
        }
    }

    /// Taints what `stmts` compute from the invocation; `under`: they run under a condition
    /// that depends on it (everything they assign then does too).
    fn stmts(&mut self, l: &Lowered, stmts: &[S], under: bool) {
        for s in stmts {
            match s {
                S::Decl(v, init) if under || init.as_ref().is_some_and(|e| self.expr(l, e)) => self.set(*v),
                S::Assign(Place::Local(v), e) | S::Compound(Place::Local(v), _, e, _) if under || self.expr(l, e) => {
                    self.set(*v);
                }
                S::Step(v) if under => self.set(*v),
                S::If(c, a, b) => {
                    let under = under || self.expr(l, c);
                    self.stmts(l, a, under);
                    self.stmts(l, b, under);
                }
                S::Loop { body, next, until } => {
                    let under = under || until.as_ref().is_some_and(|u| self.expr(l, u));
                    self.stmts(l, body, under);
                    self.stmts(l, next, under);
                }
                S::Sub { view, parent, lo, hi } => {
                    let varying = under
                        || self.view(l, *parent)
                        || self.expr(l, lo)
                        || hi.as_ref().is_some_and(|h| self.expr(l, h));
                    if varying {
                        self.view_vars(l, *view);
                    }
                }
                S::Row { view, parent, unit, width, .. }
                    if under || self.view(l, *parent) || self.expr(l, unit) || self.expr(l, width) =>
                {
                    self.view_vars(l, *view);
                }
                _ => {}
            }
        }
    }

    fn view_vars(&mut self, l: &Lowered, view: ViewId) {
        let v = &l.views[view];
        for var in [v.base, v.len].into_iter().flatten() {
            self.set(var);
        }
    }
}

/// Per binding: whether an inner loop reads it at an index that does not depend on the invocation.
struct Seen<'w> {
    walked: &'w mut Vec<bool>,
}

impl Seen<'_> {
    fn stmts(&mut self, l: &Lowered, t: &Taint, stmts: &[S], depth: usize) {
        for s in stmts {
            match s {
                S::Decl(_, Some(e)) | S::Eval(e) | S::Assign(Place::Local(_), e) => self.expr(l, t, e, depth),
                S::Assign(Place::Elem(_, i), e) | S::Compound(Place::Elem(_, i), _, e, _) => {
                    self.expr(l, t, i, depth);
                    self.expr(l, t, e, depth);
                }
                S::Compound(Place::Local(_), _, e, _) | S::Acc { value: e, .. } => self.expr(l, t, e, depth),
                S::If(c, a, b) => {
                    self.expr(l, t, c, depth);
                    self.stmts(l, t, a, depth);
                    self.stmts(l, t, b, depth);
                }
                S::Loop { body, next, until } => {
                    self.stmts(l, t, body, depth + 1);
                    self.stmts(l, t, next, depth + 1);
                    if let Some(u) = until {
                        self.expr(l, t, u, depth + 1);
                    }
                }
                S::Sub { lo, hi, .. } => {
                    self.expr(l, t, lo, depth);
                    if let Some(h) = hi {
                        self.expr(l, t, h, depth);
                    }
                }
                S::Row { unit, width, .. } => {
                    self.expr(l, t, unit, depth);
                    self.expr(l, t, width, depth);
                }
                S::Decl(_, None) | S::Break | S::Continue | S::Step(_) => {}
            }
        }
    }

    fn expr(&mut self, l: &Lowered, t: &Taint, e: &E, depth: usize) {
        match e {
            E::Load(view, i) => {
                if depth > 0 && !t.view(l, *view) && !t.expr(l, i) {
                    self.walked[l.views[*view].binding] = true;
                }
                self.expr(l, t, i, depth);
            }
            E::Unary(_, a, _) | E::Cast(a, _, _) => self.expr(l, t, a, depth),
            E::Binary(_, a, b, _) => {
                self.expr(l, t, a, depth);
                self.expr(l, t, b, depth);
            }
            E::Call(_, args, _) => args.iter().for_each(|a| self.expr(l, t, a, depth)),
            _ => {}
        }
    }
}
