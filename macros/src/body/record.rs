//! Each `for` loop recorded once, for every analysis that looks at it: what it
//! walks (parsed once: [`Walk`]), the name its pattern binds, what its body
//! binds, what it holds (loops, closures, items), and how it may end an
//! iteration, the loop or the function early. The SIMD rewrites (a reduction, an
//! element-wise loop, a jam, items in lanes) each read the same record of a loop
//! instead of parsing it again.

use proc_macro2::Ident;
use syn::visit::Visit;
use syn::{Block, Expr, ExprForLoop, Pat, Stmt};

use super::names::let_names;
use super::walk::Walk;
use crate::reason::Reason;

/// One `for` loop, recorded once.
pub(crate) struct ForLoop<'a> {
    pub f: &'a ExprForLoop,
    /// What it walks.
    pub walk: Walk<'a>,
    /// The name its pattern binds when the pattern is one plain name (`i` of `for i in ..`).
    pub index: Option<Ident>,
    /// Every name a `let` of its body binds.
    pub lets: Vec<String>,
    /// The first construct of its body that ends an iteration early or leaves the loop or the
    /// function, or hides what it does (a macro, a label), as the word reported ([`forbidden`]).
    pub exits: Option<Reason>,
    /// What its body holds.
    pub holds: Holds,
}

impl<'a> ForLoop<'a> {
    pub(crate) fn new(f: &'a ExprForLoop) -> ForLoop<'a> {
        let index = match &*f.pat {
            Pat::Ident(p)
                if p.attrs.is_empty() && p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() =>
            {
                Some(p.ident.clone())
            }
            _ => None,
        };
        ForLoop {
            f,
            walk: Walk::of(&f.expr, true),
            index,
            lets: let_names(&f.body.stmts),
            exits: forbidden(&f.body),
            holds: Holds::of(&f.body.stmts),
        }
    }
}

/// What statements hold besides straight-line code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Holds {
    /// A `for`, `while` or `loop` (outside any closure or item).
    pub loops: bool,
    /// A closure, whose body runs when it is called.
    pub closures: bool,
    /// An item (a nested function, a constant): code of its own.
    pub items: bool,
}

impl Holds {
    pub(crate) fn of(stmts: &[Stmt]) -> Holds {
        let mut holds = Holds::default();
        stmts.iter().for_each(|s| holds.visit_stmt(s));
        holds
    }

    /// Any code that does not run straight through here: a loop, a closure or an item.
    pub(crate) fn any(self) -> bool {
        self.loops || self.closures || self.items
    }
}

/// The first construct that rules a body out, as the word reported. An unlabelled
/// `break` or `continue` inside a nested loop is that loop's own (the nested loop rules
/// the body out anyway, as an `effect`).
pub(crate) fn forbidden(block: &Block) -> Option<Reason> {
    struct Find {
        found: Option<Reason>,
        /// How many loops of the body enclose the expression visited.
        nested: usize,
    }
    impl<'ast> Visit<'ast> for Find {
        fn visit_expr(&mut self, e: &'ast Expr) {
            if self.found.is_some() {
                return;
            }
            let ours = |label: &Option<syn::Lifetime>| label.is_some() || self.nested == 0;
            self.found = match e {
                Expr::Break(b) if ours(&b.label) => Some(Reason::Break),
                Expr::Continue(c) if ours(&c.label) => Some(Reason::Continue),
                Expr::Return(_) => Some(Reason::Return),
                Expr::Try(_) => Some(Reason::Try),
                Expr::Await(_) => Some(Reason::Await),
                Expr::Yield(_) => Some(Reason::Yield),
                Expr::Macro(_) => Some(Reason::Macro),
                _ => None,
            };
            let is_loop = matches!(e, Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_));
            self.nested += usize::from(is_loop);
            syn::visit::visit_expr(self, e);
            self.nested -= usize::from(is_loop);
        }
        fn visit_stmt_macro(&mut self, _: &'ast syn::StmtMacro) {
            self.found = self.found.or(Some(Reason::Macro));
        }
        fn visit_label(&mut self, _: &'ast syn::Label) {
            self.found = self.found.or(Some(Reason::Label));
        }
    }
    let mut find = Find { found: None, nested: 0 };
    for stmt in &block.stmts {
        match continue_guard(stmt) {
            Some(cond) => find.visit_expr(cond),
            None => find.visit_stmt(stmt),
        }
    }
    find.found
}

impl<'ast> Visit<'ast> for Holds {
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Closure(_) => self.closures = true,
            e => {
                self.loops |= matches!(e, Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_));
                syn::visit::visit_expr(self, e);
            }
        }
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {
        self.items = true;
    }
}

/// `if cond { continue; }` (no label, no `else`) as a statement of a loop's body: a
/// guard that skips the rest of the iteration. Its condition.
///
/// A guard is allowed only there, at the top level of the body, which the rewrite
/// copies into a `for` over the lanes of a chunk, one lane per element, and into the
/// verbatim tail: either way the `continue` ends this element's iteration and goes
/// on with the next element, as in the loop as written. (`continue` elsewhere, as a
/// value or inside a branch, is reported as `continue`.)
pub(crate) fn continue_guard(stmt: &Stmt) -> Option<&Expr> {
    let Stmt::Expr(Expr::If(i), _) = stmt else { return None };
    if !i.attrs.is_empty() || i.else_branch.is_some() {
        return None;
    }
    match i.then_branch.stmts.as_slice() {
        [Stmt::Expr(Expr::Continue(c), _)] if c.label.is_none() && c.attrs.is_empty() => Some(&i.cond),
        _ => None,
    }
}
