//! The names a top-level loop can see from outside it, and what the split
//! needs to know of each: whether it is a slice-like whose items a chunk may
//! write (a *target*), a slice-like only read, another `&mut` reference (which
//! no chunk may touch), bound `mut` (written only as an accumulator), or a
//! `usize` (a loop's bounds and row widths must be).
//!
//! Known from a parameter's declared type, a `let`'s declared type, or a
//! `let`'s initialiser: `vec![..]`, `Vec::new()`, `Vec::with_capacity(..)`,
//! `x.to_vec()`, `&x[..]`/`&x[a..b]`/`&mut x[..]` of a known slice-like, and
//! `usize` arithmetic such as `x.len() / d`. Anything else is
//! [`Kind::Other`]: a loop that writes it gets no split.

use std::collections::HashMap;

use syn::{Expr, FnArg, Pat, Signature, Type};

use super::types::{Env, Int, Ty, Width};

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

/// One name in scope before the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    pub kind: Kind,
    /// Bound `mut`: a loop may write it only as a reduction's accumulator.
    pub mutable: bool,
    /// Known to be a `usize`.
    pub usize: bool,
}

/// The primitive type of a slice-like's elements, where its declaration says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Element {
    Float(Width),
    /// An integer type by name (`u32`), or `None` for an unsuffixed literal's (inferred).
    Int(Option<&'static str>),
    Bool,
}

/// The names in scope before a top-level loop: the parameters, then the
/// body's top-level `let`s in order (a later one shadows an earlier one), with
/// the float and integer types the reduction analysis ([`Env`]) knows.
#[derive(Clone)]
pub(crate) struct Scope {
    names: HashMap<String, Binding>,
    /// The element types of slice-likes, where known.
    elements: HashMap<String, Element>,
    pub env: Env,
}

impl Scope {
    /// The parameters of `sig`.
    pub(crate) fn of(sig: &Signature) -> Scope {
        let mut scope = Scope { names: HashMap::new(), elements: HashMap::new(), env: Env::default() };
        scope.env.push();
        for input in &sig.inputs {
            match input {
                FnArg::Typed(pt) => {
                    scope.env.bind_pat(&pt.pat, Ty::of_type(&pt.ty));
                    scope.bind_typed(&pt.pat, &pt.ty);
                }
                // `self` by any form: never a slice the macro can split.
                FnArg::Receiver(r) => {
                    let kind = if r.mutability.is_some() && r.reference.is_some() { Kind::MutRef } else { Kind::Other };
                    let mutable = r.mutability.is_some();
                    scope.names.insert("self".into(), Binding { kind, mutable, usize: false });
                }
            }
        }
        scope.env.push();
        scope
    }

    /// What `name` is, if it was bound before the loop.
    pub(crate) fn get(&self, name: &str) -> Option<Binding> {
        self.names.get(name).copied()
    }

    /// The element type of the slice-like `name`, if known.
    pub(crate) fn element(&self, name: &str) -> Option<Element> {
        self.elements.get(name).copied()
    }

    /// Adds what a top-level `let` binds.
    pub(crate) fn bind_local(&mut self, local: &syn::Local) {
        // What the kind below needs is read before the names are rebound.
        let pat = &local.pat;
        let before = match pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                let init = local.init.as_ref().filter(|i| i.diverge.is_none()).map(|i| &*i.expr);
                init.map(|e| (self.kind_of_init(e, p.mutability.is_some()), self.is_usize(e), self.element_of_init(e)))
            }
            _ => None,
        };
        for name in super::types::pat_names(pat) {
            self.elements.remove(&name);
        }
        self.env.bind_let(local);
        match pat {
            Pat::Type(t) => self.bind_typed(&t.pat, &t.ty),
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                let (kind, usize, element) = before.unwrap_or((Kind::Other, false, None));
                let binding = Binding { kind, mutable: p.mutability.is_some(), usize };
                self.names.insert(p.ident.to_string(), binding);
                if let Some(element) = element {
                    self.elements.insert(p.ident.to_string(), element);
                }
            }
            pat => self.bind_other(pat),
        }
    }

    /// A name bound by `pat` whose declared type is `ty`.
    fn bind_typed(&mut self, pat: &Pat, ty: &Type) {
        match pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                let mutable = p.mutability.is_some();
                let binding = Binding { kind: kind_of_type(ty, mutable), mutable, usize: is_usize_type(ty) };
                self.names.insert(p.ident.to_string(), binding);
                if let Some(element) = element_of_type(ty) {
                    self.elements.insert(p.ident.to_string(), element);
                }
            }
            pat => self.bind_other(pat),
        }
    }

    /// Every name of `pat`, as [`Kind::Other`], mutable where bound `mut` (or by `ref mut`).
    fn bind_other(&mut self, pat: &Pat) {
        struct Idents(Vec<(String, bool)>);
        impl<'ast> syn::visit::Visit<'ast> for Idents {
            fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
                self.0.push((p.ident.to_string(), p.mutability.is_some()));
                syn::visit::visit_pat_ident(self, p);
            }
            fn visit_expr(&mut self, _: &'ast Expr) {}
        }
        let mut idents = Idents(Vec::new());
        syn::visit::Visit::visit_pat(&mut idents, pat);
        for (name, mutable) in idents.0 {
            self.names.insert(name, Binding { kind: Kind::Other, mutable, usize: false });
        }
    }

    /// The kind a `let` gives its name from its initialiser.
    fn kind_of_init(&self, e: &Expr, mutable: bool) -> Kind {
        let owned = if mutable { Kind::MutSlice } else { Kind::Slice { by_ref: false } };
        match e {
            Expr::Paren(p) => self.kind_of_init(&p.expr, mutable),
            Expr::Macro(m) if m.mac.path.is_ident("vec") => owned,
            Expr::Call(c) if c.args.len() <= 1 => match &*c.func {
                Expr::Path(p) if path_is(&p.path, &["Vec", "new"]) || path_is(&p.path, &["Vec", "with_capacity"]) => {
                    owned
                }
                _ => Kind::Other,
            },
            Expr::MethodCall(m) if m.method == "to_vec" && m.args.is_empty() && self.is_slice(&m.receiver) => owned,
            Expr::Reference(r) => match (&*r.expr, r.mutability.is_some()) {
                (Expr::Index(i), mutable) if self.is_slice(&i.expr) && matches!(&*i.index, Expr::Range(_)) => {
                    if mutable {
                        Kind::MutSlice
                    } else {
                        Kind::Slice { by_ref: true }
                    }
                }
                (inner, false) if self.is_slice(inner) => Kind::Slice { by_ref: true },
                _ => Kind::Other,
            },
            _ => Kind::Other,
        }
    }

    /// The element type a `let`'s initialiser gives a slice-like: `vec![0u32; n]`,
    /// `vec![0.0f32; n]`, `vec![false; n]`, `x.to_vec()` or `&mut x[..]` of a known one.
    fn element_of_init(&self, e: &Expr) -> Option<Element> {
        match e {
            Expr::Paren(p) => self.element_of_init(&p.expr),
            Expr::Macro(m) if m.mac.path.is_ident("vec") => {
                let first = m.mac.parse_body_with(|input: syn::parse::ParseStream| {
                    let first: Expr = input.parse()?;
                    input.parse::<syn::Token![;]>()?;
                    let _: Expr = input.parse()?;
                    Ok(first)
                });
                match first.ok()? {
                    Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) => match n.suffix() {
                        "" => Some(Element::Int(None)),
                        suffix => INTEGERS.iter().find(|&&i| i == suffix).map(|&i| Element::Int(Some(i))),
                    },
                    Expr::Lit(syn::ExprLit { lit: syn::Lit::Float(f), .. }) => match f.suffix() {
                        "" => Some(Element::Float(Width::Any)),
                        "f32" => Some(Element::Float(Width::F32)),
                        "f64" => Some(Element::Float(Width::F64)),
                        _ => None,
                    },
                    Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(_), .. }) => Some(Element::Bool),
                    _ => None,
                }
            }
            Expr::MethodCall(m) if m.method == "to_vec" && m.args.is_empty() => {
                self.element(&super::syntax::plain_ident(&m.receiver)?.to_string())
            }
            Expr::Reference(r) => match &*r.expr {
                Expr::Index(i) if matches!(&*i.index, Expr::Range(_)) => {
                    self.element(&super::syntax::plain_ident(&i.expr)?.to_string())
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether `e` names a slice-like in scope.
    pub(crate) fn is_slice(&self, e: &Expr) -> bool {
        super::syntax::plain_ident(e)
            .and_then(|i| self.get(&i.to_string()))
            .is_some_and(|b| matches!(b.kind, Kind::MutSlice | Kind::Slice { .. }))
    }

    /// Whether `e` is known to be a `usize`: a `usize` name or literal, the
    /// `len()` of a slice-like, a cast to `usize`, or arithmetic, `min` and
    /// `max` of such values and integer literals.
    pub(crate) fn is_usize(&self, e: &Expr) -> bool {
        if self.env.ty(e) == Ty::Int(Int::Usize) {
            return true;
        }
        let literal = |e: &Expr| matches!(self.env.ty(e), Ty::Int(Int::Lit | Int::Usize));
        match e {
            Expr::Paren(p) => self.is_usize(&p.expr),
            Expr::Group(g) => self.is_usize(&g.expr),
            Expr::Path(_) => super::syntax::plain_ident(e)
                .and_then(|i| self.get(&i.to_string()))
                .is_some_and(|b| b.usize && !b.mutable),
            Expr::MethodCall(m) if m.method == "len" && m.args.is_empty() => self.is_slice(&m.receiver),
            Expr::MethodCall(m) if (m.method == "min" || m.method == "max") && m.args.len() == 1 => {
                self.is_usize(&m.receiver) && (self.is_usize(&m.args[0]) || literal(&m.args[0]))
            }
            Expr::Cast(c) => is_usize_type(&c.ty),
            Expr::Binary(b) => {
                use syn::BinOp::{Add, Div, Mul, Rem, Sub};
                matches!(b.op, Add(_) | Sub(_) | Mul(_) | Div(_) | Rem(_))
                    && ((self.is_usize(&b.left) && (self.is_usize(&b.right) || literal(&b.right)))
                        || (literal(&b.left) && self.is_usize(&b.right)))
            }
            _ => false,
        }
    }
}

/// Whether `path` is exactly the segments `names`, with no generic arguments.
fn path_is(path: &syn::Path, names: &[&str]) -> bool {
    path.leading_colon.is_none()
        && path.segments.len() == names.len()
        && path.segments.iter().zip(names).all(|(s, n)| s.ident == n && s.arguments.is_empty())
}

/// The kind of a name declared with type `ty`.
fn kind_of_type(ty: &Type, mutable: bool) -> Kind {
    match ty {
        Type::Paren(p) => kind_of_type(&p.elem, mutable),
        Type::Group(g) => kind_of_type(&g.elem, mutable),
        Type::Reference(r) => match (is_slice_like(&r.elem), r.mutability.is_some()) {
            (true, true) => Kind::MutSlice,
            (true, false) => Kind::Slice { by_ref: true },
            (false, true) => Kind::MutRef,
            (false, false) => Kind::Other,
        },
        ty if is_owned_slice_like(ty) => {
            if mutable {
                Kind::MutSlice
            } else {
                Kind::Slice { by_ref: false }
            }
        }
        _ => Kind::Other,
    }
}

/// `[T]`, `Vec<T>` or `[T; N]`.
fn is_slice_like(ty: &Type) -> bool {
    matches!(ty, Type::Slice(_)) || is_owned_slice_like(ty)
}

/// `Vec<T>` (also `std::vec::Vec<T>`) or `[T; N]`.
fn is_owned_slice_like(ty: &Type) -> bool {
    match ty {
        Type::Paren(p) => is_owned_slice_like(&p.elem),
        Type::Group(g) => is_owned_slice_like(&g.elem),
        Type::Array(_) => true,
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else { return false };
            let prefix: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            let std_path = matches!(
                prefix.iter().map(String::as_str).collect::<Vec<_>>().as_slice(),
                ["Vec"] | ["std" | "alloc", "vec", "Vec"]
            );
            std_path && matches!(&last.arguments, syn::PathArguments::AngleBracketed(a) if a.args.len() == 1)
        }
        _ => false,
    }
}

/// The integer types, by name.
const INTEGERS: [&str; 12] = ["u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize"];

/// The element type of a slice-like declared with type `ty` (`&mut [u32]`, `Vec<f64>`, `[bool; 8]`).
fn element_of_type(ty: &Type) -> Option<Element> {
    let elem = match ty {
        Type::Paren(p) => return element_of_type(&p.elem),
        Type::Group(g) => return element_of_type(&g.elem),
        Type::Reference(r) => return element_of_type(&r.elem),
        Type::Slice(s) => &*s.elem,
        Type::Array(a) => &*a.elem,
        Type::Path(p) if is_owned_slice_like(ty) => match &p.path.segments.last()?.arguments {
            syn::PathArguments::AngleBracketed(a) => match a.args.first()? {
                syn::GenericArgument::Type(t) => t,
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };
    let Type::Path(p) = elem else { return None };
    let name = p.path.get_ident()?.to_string();
    match name.as_str() {
        "f32" => Some(Element::Float(Width::F32)),
        "f64" => Some(Element::Float(Width::F64)),
        "bool" => Some(Element::Bool),
        n => INTEGERS.iter().find(|&&i| i == n).map(|&i| Element::Int(Some(i))),
    }
}

/// `usize`.
fn is_usize_type(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("usize"))
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
        let mut scope = Scope::of(&sig);
        let kind = |s: &Scope, n: &str| s.get(n).unwrap().kind;
        assert_eq!(kind(&scope, "out"), Kind::MutSlice);
        assert_eq!(kind(&scope, "v"), Kind::MutSlice);
        assert_eq!(kind(&scope, "a"), Kind::Slice { by_ref: true });
        assert_eq!(kind(&scope, "w"), Kind::Slice { by_ref: false });
        assert_eq!(kind(&scope, "own"), Kind::MutSlice);
        assert_eq!(kind(&scope, "cfg"), Kind::MutRef);
        assert_eq!(kind(&scope, "t"), Kind::Slice { by_ref: false });
        assert_eq!(kind(&scope, "s"), Kind::Other);
        assert!(scope.get("n").unwrap().usize);
        for stmt in [
            parse_quote!(let mut buf = vec![0.0f32; n];),
            parse_quote!(let rows = a.len() / n;),
            parse_quote!(let head = &a[..n];),
            parse_quote!(let mut tail = &mut own[1..];),
            parse_quote!(let mut acc = 0.0f32;),
            parse_quote!(let (p, q) = a.split_at(2);),
        ] {
            let syn::Stmt::Local(local) = stmt else { unreachable!() };
            scope.bind_local(&local);
        }
        assert_eq!(kind(&scope, "buf"), Kind::MutSlice);
        assert!(scope.get("rows").unwrap().usize);
        assert_eq!(kind(&scope, "head"), Kind::Slice { by_ref: true });
        assert_eq!(kind(&scope, "tail"), Kind::MutSlice);
        assert_eq!(scope.get("acc").unwrap(), Binding { kind: Kind::Other, mutable: true, usize: false });
        assert_eq!(kind(&scope, "p"), Kind::Other);
        assert!(!scope.get("p").unwrap().mutable);
        assert!(scope.is_usize(&parse_quote!((out.len() - 1) * 2)));
        assert!(!scope.is_usize(&parse_quote!(s.len())));
    }
}
