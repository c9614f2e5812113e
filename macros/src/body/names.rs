//! The scoped name table: the names in scope at one point of a body, innermost
//! last, each bound by a parameter, a `let`, a `for`, a closure, a `match` arm
//! or an item, with what is known of it. One implementation of Rust's scoping
//! for every walk: [`Scopes`] holds any payload (the typer's [`Env`] a type,
//! the GPU's lowering the shader local a name stands for), and a pattern binds
//! its names the same way everywhere ([`pat_names`], [`Env::bind_value`]).
//!
//! A name another construct may rebind without the walk seeing it (a macro's
//! tokens, a pattern the typer cannot take apart) is *poisoned*: bound as
//! unknown from there to the end of its scope.

use syn::visit::Visit;
use syn::{Expr, Pat};

use super::types::{Ty, Value};

/// Names in nested scopes, each with a `T`; the innermost binding of a name wins.
#[derive(Clone, Debug)]
pub(crate) struct Scopes<T> {
    scopes: Vec<Vec<(String, T)>>,
}

impl<T> Default for Scopes<T> {
    fn default() -> Self {
        Scopes { scopes: Vec::new() }
    }
}

impl<T> Scopes<T> {
    pub(crate) fn push(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub(crate) fn pop(&mut self) {
        self.scopes.pop();
    }

    /// Binds `name` in the innermost scope (opening one if there is none).
    pub(crate) fn bind(&mut self, name: String, value: T) {
        if self.scopes.is_empty() {
            self.push();
        }
        self.scopes.last_mut().expect("a scope was just pushed").push((name, value));
    }

    /// The innermost binding of `name`.
    pub(crate) fn lookup(&self, name: &str) -> Option<&T> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// One name in the typer's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    pub ty: Ty,
    /// Bound `mut`.
    pub mutable: bool,
}

/// The names in scope at one point of a body, with their types: the table the typer
/// (`crate::body::typer`) reads.
#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    names: Scopes<Binding>,
}

impl Env {
    pub(crate) fn push(&mut self) {
        self.names.push();
    }

    pub(crate) fn pop(&mut self) {
        self.names.pop();
    }

    pub(crate) fn bind(&mut self, name: String, ty: Ty, mutable: bool) {
        self.names.bind(name, Binding { ty, mutable });
    }

    /// Makes `name` unknown from here to the end of the current scope.
    pub(crate) fn poison(&mut self, name: String) {
        self.bind(name, Ty::Unknown, false);
    }

    /// Every name `pat` may bind, made unknown (and `mut` where the pattern says so).
    pub(crate) fn poison_pat(&mut self, pat: &Pat) {
        for (name, mutable) in pat_bindings(pat) {
            self.bind(name, Ty::Unknown, mutable);
        }
    }

    /// Binds `pat` to a value of type `ty`: `x`, `mut x`, `x: T`, `&x`, `_`; any
    /// other pattern makes its names unknown.
    pub(crate) fn bind_pat(&mut self, pat: &Pat, ty: Ty) {
        self.bind_value(pat, Value::One(ty));
    }

    /// Binds `pat` to `value`: what [`bind_pat`](Env::bind_pat) binds, and a tuple
    /// pattern (without `..`) to a tuple of as many parts, part by part. Any other
    /// pattern, or one whose shape differs from the value's, makes its names unknown.
    pub(crate) fn bind_value(&mut self, pat: &Pat, value: Value) {
        match (pat, value) {
            (Pat::Ident(p), Value::One(ty)) if p.by_ref.is_none() && p.subpat.is_none() => {
                self.bind(p.ident.to_string(), ty, p.mutability.is_some())
            }
            (Pat::Type(p), _) => {
                // The declared type wins; a declared type that differs from the value's does not compile.
                let declared = Value::of_type(&p.ty);
                self.bind_value(&p.pat, declared);
            }
            (Pat::Reference(r), Value::One(Ty::FloatRef(w))) if r.mutability.is_none() => {
                self.bind_value(&r.pat, Value::One(Ty::Float(w)))
            }
            (Pat::Paren(p), value) => self.bind_value(&p.pat, value),
            (Pat::Wild(_), _) => {}
            (Pat::Tuple(t), Value::Tuple(parts))
                if t.elems.len() == parts.len() && !t.elems.iter().any(|p| matches!(p, Pat::Rest(_))) =>
            {
                for (pat, part) in t.elems.iter().zip(parts) {
                    self.bind_value(pat, part);
                }
            }
            (other, _) => self.poison_pat(other),
        }
    }

    /// The binding of a name in scope.
    pub(crate) fn binding(&self, name: &str) -> Option<Binding> {
        self.names.lookup(name).copied()
    }

    /// The type of a name in scope, and whether it is bound `mut`.
    pub(crate) fn lookup(&self, name: &str) -> Option<(Ty, bool)> {
        self.binding(name).map(|b| (b.ty, b.mutable))
    }
}

/// A table of the names `declared` (name, declared type), for tests.
#[cfg(test)]
pub(crate) fn declared(declared: &[(&str, syn::Type)]) -> Env {
    let mut env = Env::default();
    for (name, ty) in declared {
        env.bind(name.to_string(), Ty::of_type(ty), false);
    }
    env
}

/// Every name a `let` of `stmts` binds, in any of their blocks: taken as bound
/// everywhere in them (conservative where a nested `let` shadows a name only for a while).
pub(crate) fn let_names(stmts: &[syn::Stmt]) -> Vec<String> {
    struct Lets(Vec<String>);
    impl<'ast> Visit<'ast> for Lets {
        fn visit_local(&mut self, l: &'ast syn::Local) {
            self.0.extend(pat_names(&l.pat));
            syn::visit::visit_local(self, l);
        }
    }
    let mut lets = Lets(Vec::new());
    stmts.iter().for_each(|s| lets.visit_stmt(s));
    lets.0
}

/// Every identifier a pattern may bind (also constants and unit structs it
/// only matches: making those unknown too is conservative).
pub(crate) fn pat_names(pat: &Pat) -> Vec<String> {
    pat_bindings(pat).into_iter().map(|(name, _)| name).collect()
}

/// [`pat_names`], each with whether it is bound `mut`.
pub(crate) fn pat_bindings(pat: &Pat) -> Vec<(String, bool)> {
    struct Names(Vec<(String, bool)>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.push((p.ident.to_string(), p.mutability.is_some()));
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_expr(&mut self, _: &'ast Expr) {
            // Range bounds and constants in a pattern bind nothing.
        }
    }
    let mut names = Names(Vec::new());
    names.visit_pat(pat);
    names.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::types::Width;
    use syn::parse_quote;

    #[test]
    fn shadowing_and_patterns() {
        let mut e = Env::default();
        e.bind("s".into(), Ty::Float(Width::F32), false);
        e.push();
        e.bind_pat(&parse_quote!(mut s), Ty::Unknown);
        assert_eq!(e.lookup("s"), Some((Ty::Unknown, true)));
        e.bind_pat(&parse_quote!(&v), Ty::FloatRef(Width::F64));
        assert_eq!(e.lookup("v").unwrap().0, Ty::Float(Width::F64));
        e.bind_pat(&parse_quote!((a, b)), Ty::Float(Width::F32));
        assert_eq!(e.lookup("a").unwrap().0, Ty::Unknown);
        let syn::Stmt::Local(typed) = parse_quote!(let k: f64;) else { unreachable!() };
        e.bind_pat(&typed.pat, Ty::Unknown);
        assert_eq!(e.lookup("k").unwrap().0, Ty::Float(Width::F64));
        // A pattern taken apart by nothing keeps what it says of mutability.
        e.poison_pat(&parse_quote!(Foo { mut m, n }));
        assert_eq!((e.lookup("m"), e.lookup("n")), (Some((Ty::Unknown, true)), Some((Ty::Unknown, false))));
        e.pop();
        assert_eq!(e.lookup("s").unwrap().0, Ty::Float(Width::F32));
        assert_eq!(pat_names(&parse_quote!(Some((x, ref y @ 1..=2, Foo { z, .. })))), ["x", "y", "z"]);
    }
}
