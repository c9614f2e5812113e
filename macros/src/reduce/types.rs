//! What the macro can prove about a value from tokens alone: the scoped names
//! of a body and the type of an expression, when the expression is *pure*.
//!
//! A proc macro sees no types, so this is a small, deliberately conservative
//! inference. A name's type is known from:
//!
//! * a parameter's declared type (`x: &[f32]`, `n: usize`, `alpha: f32`);
//! * a `let` with a declared type, or with an initialiser whose type is known:
//!   a float literal (`0.0`, `0.0f32`, `1e-5_f64`), `f32::NEG_INFINITY`, an
//!   element of a known float slice (`x[0]`), `vec![0.0f32; n]`, arithmetic
//!   over such values;
//! * a `for` over a `usize` range (the index) or over a known slice (its
//!   elements).
//!
//! Anything else is [`Ty::Unknown`], and so is every name another pattern
//! (closure, `match`, `if let`, a macro's tokens) may rebind. An expression
//! has a known type only when it is built from known names, literals, the
//! built-in arithmetic, comparisons and casts of primitive numbers, indexing
//! of a known float slice, and the inherent float methods listed in
//! [`FLOAT_METHODS`]: operations with no side effect other than a panic. So
//! "known type" also means "pure": a user-defined operator, a function call,
//! a field, a macro is never known. (The names `f32` and `f64` are taken to
//! mean the primitive types.)

use syn::visit::Visit;
use syn::{BinOp, Expr, GenericArgument, Lit, Pat, PathArguments, Type, UnOp};

/// The width of a float.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Width {
    F32,
    F64,
    /// An unsuffixed float literal: `f32` or `f64`, as inference decides.
    Any,
}

impl Width {
    pub(crate) fn unify(self, other: Width) -> Option<Width> {
        match (self, other) {
            (Width::Any, w) | (w, Width::Any) => Some(w),
            (a, b) => (a == b).then_some(a),
        }
    }

    fn of_name(name: &str) -> Option<Width> {
        match name {
            "f32" => Some(Width::F32),
            "f64" => Some(Width::F64),
            _ => None,
        }
    }

    /// The type's name, when known.
    pub(crate) fn name(self) -> Option<&'static str> {
        match self {
            Width::F32 => Some("f32"),
            Width::F64 => Some("f64"),
            Width::Any => None,
        }
    }
}

/// An integer's type, as far as it matters for a loop index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Int {
    Usize,
    /// Another integer type.
    Other,
    /// An unsuffixed integer literal.
    Lit,
}

impl Int {
    fn unify(self, other: Int) -> Option<Int> {
        match (self, other) {
            (Int::Lit, k) | (k, Int::Lit) => Some(k),
            (Int::Usize, Int::Usize) => Some(Int::Usize),
            _ => None,
        }
    }
}

/// A value's type, as far as the rewrite needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    /// `f32` or `f64`.
    Float(Width),
    /// `&f32` or `&f64`.
    FloatRef(Width),
    /// A slice-like of floats: `[T]` behind a reference, `Vec<T>`, `[T; N]`.
    /// `shared` for a shared reference (`&[T]`, `&Vec<T>`, `&[T; N]`), whose
    /// `IntoIterator` yields `&T`.
    Slice {
        width: Width,
        shared: bool,
    },
    Int(Int),
    Bool,
    Unknown,
}

impl Ty {
    /// A float or a reference to one: what arithmetic accepts.
    pub(crate) fn float_width(self) -> Option<Width> {
        match self {
            Ty::Float(w) | Ty::FloatRef(w) => Some(w),
            _ => None,
        }
    }

    /// The type a declared type names.
    pub(crate) fn of_type(ty: &Type) -> Ty {
        match ty {
            Type::Paren(p) => Ty::of_type(&p.elem),
            Type::Group(g) => Ty::of_type(&g.elem),
            Type::Path(p) if p.qself.is_none() => {
                let Some(last) = p.path.segments.last() else { return Ty::Unknown };
                let name = last.ident.to_string();
                if p.path.segments.len() == 1 && last.arguments.is_empty() {
                    if let Some(w) = Width::of_name(&name) {
                        return Ty::Float(w);
                    }
                    if name == "usize" {
                        return Ty::Int(Int::Usize);
                    }
                    if INTEGERS.contains(&name.as_str()) {
                        return Ty::Int(Int::Other);
                    }
                    if name == "bool" {
                        return Ty::Bool;
                    }
                }
                match vec_element(last) {
                    Some(w) => Ty::Slice { width: w, shared: false },
                    None => Ty::Unknown,
                }
            }
            Type::Array(a) => match element_width(&a.elem) {
                Some(w) => Ty::Slice { width: w, shared: false },
                None => Ty::Unknown,
            },
            Type::Reference(r) => {
                let shared = r.mutability.is_none();
                match (Ty::of_type(&r.elem), &*r.elem) {
                    (Ty::Float(w), _) if shared => Ty::FloatRef(w),
                    (Ty::Slice { width, .. }, _) => Ty::Slice { width, shared },
                    (_, Type::Slice(s)) => match element_width(&s.elem) {
                        Some(width) => Ty::Slice { width, shared },
                        None => Ty::Unknown,
                    },
                    _ => Ty::Unknown,
                }
            }
            _ => Ty::Unknown,
        }
    }
}

const INTEGERS: [&str; 11] = ["u8", "u16", "u32", "u64", "u128", "isize", "i8", "i16", "i32", "i64", "i128"];

/// `f32`/`f64` as an element type.
fn element_width(ty: &Type) -> Option<Width> {
    match Ty::of_type(ty) {
        Ty::Float(w) => Some(w),
        _ => None,
    }
}

/// The float width of `Vec<f32>`/`Vec<f64>` (any path ending in `Vec`).
fn vec_element(last: &syn::PathSegment) -> Option<Width> {
    if last.ident != "Vec" {
        return None;
    }
    match &last.arguments {
        PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
            GenericArgument::Type(t) => element_width(t),
            _ => None,
        },
        _ => None,
    }
}

/// Inherent float methods without arguments (beyond the receiver).
const FLOAT_METHODS: [&str; 29] = [
    "abs",
    "sqrt",
    "cbrt",
    "exp",
    "exp2",
    "exp_m1",
    "ln",
    "ln_1p",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "recip",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fract",
    "signum",
    "to_degrees",
    "to_radians",
    "sin_cos",
];

/// Inherent float methods with float arguments, and how many.
const FLOAT_METHODS_WITH_ARGS: [(&str, usize); 8] =
    [("max", 1), ("min", 1), ("powf", 1), ("atan2", 1), ("hypot", 1), ("copysign", 1), ("log", 1), ("mul_add", 2)];

/// Associated float constants (`f32::MAX`).
const FLOAT_CONSTS: [&str; 7] = ["MAX", "MIN", "MIN_POSITIVE", "EPSILON", "INFINITY", "NEG_INFINITY", "NAN"];

/// One name in scope.
#[derive(Clone, Debug)]
struct Binding {
    name: String,
    ty: Ty,
    mutable: bool,
}

/// The names in scope at one point of a body, innermost last.
#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    scopes: Vec<Vec<Binding>>,
}

impl Env {
    pub(crate) fn push(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub(crate) fn pop(&mut self) {
        self.scopes.pop();
    }

    pub(crate) fn bind(&mut self, name: String, ty: Ty, mutable: bool) {
        if self.scopes.is_empty() {
            self.push();
        }
        self.scopes.last_mut().expect("a scope was just pushed").push(Binding { name, ty, mutable });
    }

    /// Makes `name` unknown from here to the end of the current scope.
    pub(crate) fn poison(&mut self, name: String) {
        self.bind(name, Ty::Unknown, false);
    }

    /// Every name `pat` may bind, made unknown.
    pub(crate) fn poison_pat(&mut self, pat: &Pat) {
        for name in pat_names(pat) {
            self.poison(name);
        }
    }

    /// Binds `pat` to a value of type `ty`: `x`, `mut x`, `x: T`, `&x`, `_`; any
    /// other pattern makes its names unknown.
    pub(crate) fn bind_pat(&mut self, pat: &Pat, ty: Ty) {
        match pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                self.bind(p.ident.to_string(), ty, p.mutability.is_some())
            }
            Pat::Type(p) => {
                // The declared type wins; a declared type that differs from `ty` does not compile.
                let declared = Ty::of_type(&p.ty);
                self.bind_pat(&p.pat, declared);
            }
            Pat::Reference(r) if r.mutability.is_none() => match ty {
                Ty::FloatRef(w) => self.bind_pat(&r.pat, Ty::Float(w)),
                _ => self.poison_pat(&r.pat),
            },
            Pat::Paren(p) => self.bind_pat(&p.pat, ty),
            Pat::Wild(_) => {}
            other => self.poison_pat(other),
        }
    }

    /// The type of a name in scope.
    pub(crate) fn lookup(&self, name: &str) -> Option<(Ty, bool)> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|b| b.name == name).map(|b| (b.ty, b.mutable))
    }

    /// The type of a pure expression, or [`Ty::Unknown`] (also for anything with a possible side effect).
    pub(crate) fn ty(&self, e: &Expr) -> Ty {
        match e {
            Expr::Lit(l) if l.attrs.is_empty() => literal(&l.lit),
            Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => self.path(&p.path),
            Expr::Paren(p) => self.ty(&p.expr),
            Expr::Group(g) => self.ty(&g.expr),
            Expr::Unary(u) => {
                let inner = self.ty(&u.expr);
                match (&u.op, inner) {
                    (UnOp::Neg(_), Ty::Float(w) | Ty::FloatRef(w)) => Ty::Float(w),
                    (UnOp::Neg(_), Ty::Int(k)) if k != Int::Usize => Ty::Int(k),
                    (UnOp::Deref(_), Ty::FloatRef(w)) => Ty::Float(w),
                    (UnOp::Not(_), Ty::Bool) => Ty::Bool,
                    (UnOp::Not(_), Ty::Int(k)) => Ty::Int(k),
                    _ => Ty::Unknown,
                }
            }
            Expr::Binary(b) => self.binary(&b.op, self.ty(&b.left), self.ty(&b.right)),
            Expr::Index(i) => match (self.ty(&i.expr), self.ty(&i.index)) {
                (Ty::Slice { width, .. }, Ty::Int(Int::Usize | Int::Lit)) => Ty::Float(width),
                _ => Ty::Unknown,
            },
            Expr::Reference(r) if r.mutability.is_none() => match self.ty(&r.expr) {
                Ty::Float(w) => Ty::FloatRef(w),
                _ => Ty::Unknown,
            },
            Expr::Cast(c) => {
                let from = self.ty(&c.expr);
                let numeric = from.float_width().is_some() || matches!(from, Ty::Int(_));
                match Ty::of_type(&c.ty) {
                    Ty::Float(w) if numeric => Ty::Float(w),
                    Ty::Int(k) if numeric => Ty::Int(k),
                    _ => Ty::Unknown,
                }
            }
            Expr::MethodCall(m) if m.turbofish.is_none() => {
                let args: Vec<Ty> = m.args.iter().map(|a| self.ty(a)).collect();
                self.method(self.ty(&m.receiver), &m.method.to_string(), &args)
            }
            Expr::Call(c) => {
                // `f32::max(a, b)`: an inherent method called through its type.
                let Expr::Path(p) = &*c.func else { return Ty::Unknown };
                let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                match (p.qself.is_none(), segments.as_slice()) {
                    (true, [ty, method]) if Width::of_name(ty).is_some() && !c.args.is_empty() => {
                        let args: Vec<Ty> = c.args.iter().map(|a| self.ty(a)).collect();
                        let receiver = match args[0] {
                            Ty::Float(w) | Ty::FloatRef(w) => Ty::Float(w),
                            _ => return Ty::Unknown,
                        };
                        let width = Width::of_name(ty).expect("checked in the guard");
                        match self.method(receiver, method, &args[1..]) {
                            Ty::Float(w) => w.unify(width).map_or(Ty::Unknown, Ty::Float),
                            _ => Ty::Unknown,
                        }
                    }
                    _ => Ty::Unknown,
                }
            }
            Expr::If(i) => {
                let Some((_, otherwise)) = &i.else_branch else { return Ty::Unknown };
                if self.ty(&i.cond) != Ty::Bool {
                    return Ty::Unknown;
                }
                let then = match i.then_branch.stmts.as_slice() {
                    [syn::Stmt::Expr(e, None)] => self.ty(e),
                    _ => return Ty::Unknown,
                };
                let otherwise = match &**otherwise {
                    Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => match b.block.stmts.as_slice() {
                        [syn::Stmt::Expr(e, None)] => self.ty(e),
                        _ => return Ty::Unknown,
                    },
                    e @ Expr::If(_) => self.ty(e),
                    _ => return Ty::Unknown,
                };
                match (then, otherwise) {
                    (Ty::Float(a), Ty::Float(b)) => a.unify(b).map_or(Ty::Unknown, Ty::Float),
                    (Ty::Int(a), Ty::Int(b)) => a.unify(b).map_or(Ty::Unknown, Ty::Int),
                    (a, b) if a == b && a != Ty::Unknown => a,
                    _ => Ty::Unknown,
                }
            }
            Expr::Macro(m) if m.mac.path.is_ident("vec") => self.vec_macro(&m.mac),
            _ => Ty::Unknown,
        }
    }

    fn path(&self, path: &syn::Path) -> Ty {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if path.segments.iter().any(|s| !s.arguments.is_empty()) {
            return Ty::Unknown;
        }
        let names: Vec<&str> = segments.iter().map(String::as_str).collect();
        let float = |ty: &str| Width::of_name(ty).map_or(Ty::Unknown, Ty::Float);
        match (path.leading_colon.is_some(), names.as_slice()) {
            (false, [name]) => self.lookup(name).map_or(Ty::Unknown, |(ty, _)| ty),
            (false, [ty, c]) if FLOAT_CONSTS.contains(c) => float(ty),
            (false, [ty, "consts", c])
                if c.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()) =>
            {
                float(ty)
            }
            (_, ["std" | "core", ty, "consts", c])
                if c.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()) =>
            {
                float(ty)
            }
            _ => Ty::Unknown,
        }
    }

    fn binary(&self, op: &BinOp, left: Ty, right: Ty) -> Ty {
        let arithmetic = matches!(op, BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_));
        let comparison =
            matches!(op, BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) | BinOp::Eq(_) | BinOp::Ne(_));
        let floats = left.float_width().zip(right.float_width()).and_then(|(a, b)| a.unify(b));
        let ints = match (left, right) {
            (Ty::Int(a), Ty::Int(b)) => a.unify(b),
            _ => None,
        };
        match op {
            _ if arithmetic => match (floats, ints) {
                (Some(w), _) => Ty::Float(w),
                (_, Some(k)) => Ty::Int(k),
                _ => Ty::Unknown,
            },
            _ if comparison => {
                if floats.is_some() || ints.is_some() || (left == Ty::Bool && right == Ty::Bool) {
                    Ty::Bool
                } else {
                    Ty::Unknown
                }
            }
            BinOp::And(_) | BinOp::Or(_) if left == Ty::Bool && right == Ty::Bool => Ty::Bool,
            BinOp::BitAnd(_) | BinOp::BitOr(_) | BinOp::BitXor(_) => match (ints, left, right) {
                (Some(k), ..) => Ty::Int(k),
                (None, Ty::Bool, Ty::Bool) => Ty::Bool,
                _ => Ty::Unknown,
            },
            BinOp::Shl(_) | BinOp::Shr(_) => match (left, right) {
                (Ty::Int(k), Ty::Int(_)) => Ty::Int(k),
                _ => Ty::Unknown,
            },
            // `+=` and the other assignments: a side effect.
            _ => Ty::Unknown,
        }
    }

    fn method(&self, receiver: Ty, method: &str, args: &[Ty]) -> Ty {
        match receiver {
            Ty::Float(w) | Ty::FloatRef(w) => {
                if args.is_empty() && FLOAT_METHODS.contains(&method) && method != "sin_cos" {
                    return Ty::Float(w);
                }
                if method == "powi" && matches!(args, [Ty::Int(Int::Other | Int::Lit)]) {
                    return Ty::Float(w);
                }
                let arity = FLOAT_METHODS_WITH_ARGS.iter().find(|(m, _)| *m == method).map(|&(_, n)| n);
                if arity != Some(args.len()) {
                    return Ty::Unknown;
                }
                args.iter()
                    .try_fold(w, |w, a| a.float_width().and_then(|aw| w.unify(aw)))
                    .map_or(Ty::Unknown, Ty::Float)
            }
            Ty::Slice { .. } if method == "len" && args.is_empty() => Ty::Int(Int::Usize),
            Ty::Int(k) if (method == "min" || method == "max") && args.len() == 1 => match args[0] {
                Ty::Int(a) => k.unify(a).map_or(Ty::Unknown, Ty::Int),
                _ => Ty::Unknown,
            },
            _ => Ty::Unknown,
        }
    }

    /// `vec![x; n]` with a float `x` and an integer `n`: an owned float slice.
    fn vec_macro(&self, mac: &syn::Macro) -> Ty {
        let repeat = |input: syn::parse::ParseStream| {
            let value: Expr = input.parse()?;
            input.parse::<syn::Token![;]>()?;
            let len: Expr = input.parse()?;
            Ok((value, len))
        };
        let Ok((value, len)) = mac.parse_body_with(repeat) else { return Ty::Unknown };
        match (self.ty(&value), self.ty(&len)) {
            (Ty::Float(width), Ty::Int(_)) => Ty::Slice { width, shared: false },
            _ => Ty::Unknown,
        }
    }
}

fn literal(lit: &Lit) -> Ty {
    match lit {
        Lit::Float(f) => match f.suffix() {
            "" => Ty::Float(Width::Any),
            s => Width::of_name(s).map_or(Ty::Unknown, Ty::Float),
        },
        Lit::Int(i) => match i.suffix() {
            "" => Ty::Int(Int::Lit),
            "usize" => Ty::Int(Int::Usize),
            s if INTEGERS.contains(&s) => Ty::Int(Int::Other),
            s => Width::of_name(s).map_or(Ty::Unknown, Ty::Float),
        },
        Lit::Bool(_) => Ty::Bool,
        _ => Ty::Unknown,
    }
}

/// Every identifier a pattern may bind (also constants and unit structs it
/// only matches: making those unknown too is conservative).
pub(crate) fn pat_names(pat: &Pat) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.push(p.ident.to_string());
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
    use syn::parse_quote;

    fn env() -> Env {
        let mut env = Env::default();
        for (name, ty) in [
            ("x", parse_quote!(&[f32])),
            ("w", parse_quote!(&Vec<f64>)),
            ("out", parse_quote!(&mut [f32])),
            ("a", parse_quote!([f32; 4])),
            ("n", parse_quote!(usize)),
            ("m", parse_quote!(u32)),
            ("s", parse_quote!(f32)),
            ("r", parse_quote!(&f32)),
            ("q", parse_quote!(Foo)),
        ] {
            env.bind(name.to_string(), Ty::of_type(&ty), false);
        }
        env
    }

    fn ty(e: Expr) -> Ty {
        env().ty(&e)
    }

    #[test]
    fn declared_types() {
        let e = env();
        assert_eq!(e.lookup("x"), Some((Ty::Slice { width: Width::F32, shared: true }, false)));
        assert_eq!(e.lookup("w").unwrap().0, Ty::Slice { width: Width::F64, shared: true });
        assert_eq!(e.lookup("out").unwrap().0, Ty::Slice { width: Width::F32, shared: false });
        assert_eq!(e.lookup("a").unwrap().0, Ty::Slice { width: Width::F32, shared: false });
        assert_eq!(e.lookup("r").unwrap().0, Ty::FloatRef(Width::F32));
        assert_eq!(e.lookup("q").unwrap().0, Ty::Unknown);
        assert_eq!(Ty::of_type(&parse_quote!(&mut f32)), Ty::Unknown);
    }

    #[test]
    fn pure_float_expressions_are_known() {
        assert_eq!(ty(parse_quote!(x[n * 2 + 1] * s)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(0.0)), Ty::Float(Width::Any));
        assert_eq!(ty(parse_quote!(-0.0f64)), Ty::Float(Width::F64));
        assert_eq!(ty(parse_quote!(*r + 1.0)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!((x[n] - s).abs().max(r.sqrt()))), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(f32::max(s, x[0]))), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(f32::NEG_INFINITY)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(std::f64::consts::PI)), Ty::Float(Width::F64));
        assert_eq!(ty(parse_quote!(n as f32 * s)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(if s > 0.0 { s } else { 0.0 })), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(x.len() - 1)), Ty::Int(Int::Usize));
        assert_eq!(ty(parse_quote!(vec![0.0f32; n])), Ty::Slice { width: Width::F32, shared: false });
    }

    #[test]
    fn anything_that_may_have_an_effect_is_unknown() {
        for e in [
            parse_quote!(f(s)),
            parse_quote!(q * s),
            parse_quote!(q.x),
            parse_quote!(s.custom()),
            parse_quote!(x.iter().sum::<f32>()),
            parse_quote!({ s }),
            parse_quote!(s += 1.0),
            parse_quote!(x[1..]),
            parse_quote!(m as f32 * w[0]),
            parse_quote!(unknown),
            parse_quote!(format!("{s}")),
        ] {
            assert_eq!(ty(e), Ty::Unknown);
        }
        // Mixed widths do not compile, so they are not known either.
        assert_eq!(ty(parse_quote!(s * w[0])), Ty::Unknown);
    }

    #[test]
    fn shadowing_and_patterns() {
        let mut e = env();
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
        e.pop();
        assert_eq!(e.lookup("s").unwrap().0, Ty::Float(Width::F32));
        assert_eq!(pat_names(&parse_quote!(Some((x, ref y @ 1..=2, Foo { z, .. })))), ["x", "y", "z"]);
    }
}
