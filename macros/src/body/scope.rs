//! The names a top-level loop sees from outside it, as a rewrite that cuts or
//! moves the loop needs them: whether each is a slice-like a chunk may write
//! its own part of (a *target*), a slice-like only read, another `&mut`
//! (which no chunk may touch), bound `mut` (written only as an accumulator),
//! or a `usize` (a loop's bounds and row widths must be). Read off the name
//! table and the typer (`names.rs`, `typer.rs`): a parameter's declared type,
//! a `let`'s declared type or its initialiser (`vec![..]`, `Vec::new()`,
//! `x.to_vec()`, `&x[..]`, `&mut x[a..b]`, `let r = cfg;` of a `&mut`, `usize`
//! arithmetic such as `x.len() / d`). Anything else is [`Kind::Other`]: a loop
//! that writes it gets no split.

use syn::{Expr, FnArg, Signature};

use super::names::Env;
use super::syntax::plain_ident;
use super::types::{Access, Elem, Int, Ty};

/// What a name from outside the loop is, as far as splitting it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A slice-like a chunk may write its own part of: `&mut [T]`, `&mut Vec<T>`,
    /// `&mut [T; N]`, or an owned `Vec<T>`/`[T; N]` bound `mut`.
    MutSlice,
    /// A slice-like only read; `by_ref`: iterating the name itself yields `&T`
    /// (`&[T]`, `&Vec<T>`, `&[T; N]`), as iterating a sub-slice of it does.
    Slice { by_ref: bool },
    /// Any other `&mut` reference: no chunk may touch it.
    MutRef,
    /// Anything else.
    Other,
}

/// One name in scope before the loop, as a loop sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Outer {
    pub kind: Kind,
    /// Bound `mut`: a loop may write it only as a reduction's accumulator.
    pub mutable: bool,
    /// Known to be a `usize`.
    pub usize: bool,
}

impl Outer {
    /// What a name of type `ty`, bound `mut` or not, is to a loop.
    pub(crate) fn of(ty: Ty, mutable: bool) -> Outer {
        let kind = match ty {
            Ty::Slice { access: Access::Mut, .. } => Kind::MutSlice,
            Ty::Slice { access: Access::Owned, .. } if mutable => Kind::MutSlice,
            Ty::Slice { access: Access::Owned, .. } => Kind::Slice { by_ref: false },
            Ty::Slice { access: Access::Shared, .. } => Kind::Slice { by_ref: true },
            Ty::MutRef | Ty::PrimRef { mutable: true, .. } => Kind::MutRef,
            _ => Kind::Other,
        };
        Outer { kind, mutable, usize: ty == Ty::Int(Int::Usize) }
    }
}

impl Env {
    /// The names of `sig`'s parameters, typed as declared (a receiver too: `&mut self` a
    /// `&mut`), with a scope above them for the body's own.
    pub(crate) fn of_signature(sig: &Signature) -> Env {
        let mut env = Env::default();
        env.push();
        for input in &sig.inputs {
            match input {
                FnArg::Typed(pt) => env.bind_pat(&pt.pat, Ty::of_type(&pt.ty)),
                // `self` by any form: never a slice the macro can split.
                FnArg::Receiver(r) => {
                    let ty = if r.mutability.is_some() && r.reference.is_some() { Ty::MutRef } else { Ty::Opaque };
                    env.bind("self".into(), ty, r.mutability.is_some());
                }
            }
        }
        env.push();
        env
    }

    /// What `name` is to a loop, if it is bound here.
    pub(crate) fn outer(&self, name: &str) -> Option<Outer> {
        self.binding(name).map(|b| Outer::of(b.ty, b.mutable))
    }

    /// The element type of the slice-like `name`, if it is one.
    pub(crate) fn element(&self, name: &str) -> Option<Elem> {
        match self.binding(name)?.ty {
            Ty::Slice { elem, .. } => Some(elem),
            _ => None,
        }
    }

    /// Whether `e` names a slice-like in scope.
    pub(crate) fn is_slice(&self, e: &Expr) -> bool {
        plain_ident(e)
            .and_then(|i| self.outer(&i.to_string()))
            .is_some_and(|b| matches!(b.kind, Kind::MutSlice | Kind::Slice { .. }))
    }

    /// Whether `e` is known to be a `usize` (whatever its effects): a `usize` name not
    /// bound `mut`, a literal, the `len()` of a slice-like, a cast to `usize`, or
    /// arithmetic, `min` and `max` of such values and integer literals.
    pub(crate) fn is_usize(&self, e: &Expr) -> bool {
        let literal = |e: &Expr| matches!(self.ty(e), Ty::Int(Int::Lit | Int::Usize));
        match e {
            Expr::Paren(p) => self.is_usize(&p.expr),
            Expr::Group(g) => self.is_usize(&g.expr),
            Expr::Path(_) => {
                plain_ident(e).and_then(|i| self.outer(&i.to_string())).is_some_and(|b| b.usize && !b.mutable)
            }
            Expr::MethodCall(m) if m.method == "len" && m.args.is_empty() => self.is_slice(&m.receiver),
            Expr::MethodCall(m) if (m.method == "min" || m.method == "max") && m.args.len() == 1 => {
                self.is_usize(&m.receiver) && (self.is_usize(&m.args[0]) || literal(&m.args[0]))
            }
            Expr::Binary(b) => {
                use syn::BinOp::{Add, Div, Mul, Rem, Sub};
                matches!(b.op, Add(_) | Sub(_) | Mul(_) | Div(_) | Rem(_))
                    && ((self.is_usize(&b.left) && (self.is_usize(&b.right) || literal(&b.right)))
                        || (literal(&b.left) && self.is_usize(&b.right)))
            }
            e => self.type_of(e) == Ty::Int(Int::Usize),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn parameters_and_lets() {
        let sig: Signature = parse_quote!(fn k(
            out: &mut [f32], v: &mut Vec<u8>, a: &[f32], w: Vec<f32>, mut own: Vec<f32>,
            cfg: &mut Config, n: usize, t: [f32; 4], s: &str
        ));
        let mut env = Env::of_signature(&sig);
        let kind = |e: &Env, n: &str| e.outer(n).unwrap().kind;
        assert_eq!(kind(&env, "out"), Kind::MutSlice);
        assert_eq!(kind(&env, "v"), Kind::MutSlice);
        assert_eq!(kind(&env, "a"), Kind::Slice { by_ref: true });
        assert_eq!(kind(&env, "w"), Kind::Slice { by_ref: false });
        assert_eq!(kind(&env, "own"), Kind::MutSlice);
        assert_eq!(kind(&env, "cfg"), Kind::MutRef);
        assert_eq!(kind(&env, "t"), Kind::Slice { by_ref: false });
        assert_eq!(kind(&env, "s"), Kind::Other);
        assert!(env.outer("n").unwrap().usize);
        for stmt in [
            parse_quote!(let mut buf = vec![0.0f32; n];),
            parse_quote!(let rows = a.len() / n;),
            parse_quote!(let head = &a[..n];),
            parse_quote!(let mut tail = &mut own[1..];),
            parse_quote!(let mut acc = 0.0f32;),
            parse_quote!(let (p, q) = a.split_at(2);),
            parse_quote!(let r = cfg;),
            parse_quote!(let m = &mut cfg.items;),
            parse_quote!(let width = img.width as usize;),
        ] {
            let syn::Stmt::Local(local) = stmt else { unreachable!() };
            env.bind_let(&local);
        }
        assert_eq!(kind(&env, "buf"), Kind::MutSlice);
        assert!(env.outer("rows").unwrap().usize);
        assert_eq!(kind(&env, "head"), Kind::Slice { by_ref: true });
        assert_eq!(kind(&env, "tail"), Kind::MutSlice);
        assert_eq!(env.outer("acc").unwrap(), Outer { kind: Kind::Other, mutable: true, usize: false });
        assert_eq!(kind(&env, "p"), Kind::Slice { by_ref: true });
        assert!(!env.outer("p").unwrap().mutable);
        // Disagreement resolved: a `&mut` bound by a `let` (`let r = cfg;`, `let m = &mut cfg.items;`)
        // was "anything else" to the split, whose methods it then took for reads; it is a `&mut`.
        assert_eq!(kind(&env, "r"), Kind::MutRef);
        assert_eq!(kind(&env, "m"), Kind::MutRef);
        assert!(env.outer("width").unwrap().usize, "a cast to `usize` is one, whatever it casts");
        assert!(env.is_usize(&parse_quote!((out.len() - 1) * 2)));
        assert!(!env.is_usize(&parse_quote!(s.len())));
        assert_eq!(env.element("v"), Some(Elem::Int(Int::Other(crate::body::types::IntTy::U8))));
    }
}
