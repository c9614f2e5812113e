//! What the macro can prove about a value from tokens alone: the scoped names
//! of a body and the type of an expression, when the expression is *pure*.
//!
//! A proc macro sees no types, so this is a small, deliberately conservative
//! inference. A name's type is known from:
//!
//! * a parameter's declared type (`x: &[f32]`, `n: usize`, `alpha: f32`);
//! * a `let` ([`Env::bind_let`]) with a declared type, or with an initialiser
//!   whose type is known: a float literal (`0.0`, `0.0f32`, `1e-5_f64`),
//!   `f32::NEG_INFINITY`, an element of a known float slice (`x[0]`), a
//!   sub-slice of one (`&x[a..b]`, `&x[a..]`, `&mut x[..b]`),
//!   `vec![0.0f32; n]`, arithmetic over such values; a tuple pattern takes a
//!   tuple of such values apart (`let (mut fx, mut fy) = (0.0f32, 0.0f32);`,
//!   `let (lo, hi) = x.split_at(m);`), see [`Value`];
//! * a `for` ([`Env::bind_for`]) over an integer range (the index), a known
//!   slice (`x`, `&x`, `x.iter()`, `.copied()`: its elements), its rows
//!   (`x.chunks(d)`, `x.chunks_exact(d)`: sub-slices), and `enumerate`/`zip`
//!   of those (tuples).
//!
//! Anything else is [`Ty::Unknown`], and so is every name another pattern
//! (closure, `match`, `if let`, a macro's tokens) may rebind. An expression
//! has a known type only when it is built from known names, literals, the
//! built-in arithmetic, comparisons and casts of primitive numbers (`as`,
//! `f64::from`), indexing and range-indexing of a known float slice, the
//! inherent float methods listed in [`FLOAT_METHODS`],
//! [`FLOAT_METHODS_WITH_ARGS`] and [`FLOAT_PREDICATES`], `if`–`else` and
//! blocks of pure `let`s around such values: operations with no side effect
//! other than a panic. So "known type" also means "pure": a user-defined operator, a
//! function call, a field, a macro is never known. (The names `f32` and `f64`
//! are taken to mean the primitive types.)

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

/// A value as a pattern can take it apart: one value, or a tuple of values
/// (`(x[i], y[i])`, `x.split_at(m)`, an `enumerate`d or `zip`ped item).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    One(Ty),
    Tuple(Vec<Value>),
}

impl Value {
    /// Whether every part's type is known: the expression it came from is pure.
    pub(crate) fn known(&self) -> bool {
        match self {
            Value::One(ty) => *ty != Ty::Unknown,
            Value::Tuple(parts) => parts.iter().all(Value::known),
        }
    }

    /// The value a declared type names: a tuple type part by part.
    pub(crate) fn of_type(ty: &Type) -> Value {
        match ty {
            Type::Tuple(t) if !t.elems.is_empty() => Value::Tuple(t.elems.iter().map(Value::of_type).collect()),
            Type::Paren(p) => Value::of_type(&p.elem),
            ty => Value::One(Ty::of_type(ty)),
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
const FLOAT_METHODS_WITH_ARGS: [(&str, usize); 9] = [
    ("max", 1),
    ("min", 1),
    ("powf", 1),
    ("atan2", 1),
    ("hypot", 1),
    ("copysign", 1),
    ("log", 1),
    ("mul_add", 2),
    ("clamp", 2),
];

/// Inherent float methods without arguments that return a `bool`.
const FLOAT_PREDICATES: [&str; 7] =
    ["is_nan", "is_finite", "is_infinite", "is_normal", "is_subnormal", "is_sign_positive", "is_sign_negative"];

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

    /// Binds the pattern of `let pat = init;` (or `let pat: T = init;`, `let pat;`): the
    /// initialiser is typed before the pattern's names are in scope. A `let … else`
    /// pattern is refutable, so its names are made unknown.
    pub(crate) fn bind_let(&mut self, local: &syn::Local) {
        match &local.init {
            Some(init) if init.diverge.is_some() => self.poison_pat(&local.pat),
            Some(init) => {
                let value = self.value(&init.expr);
                self.bind_value(&local.pat, value);
            }
            None => self.bind_pat(&local.pat, Ty::Unknown),
        }
    }

    /// Binds the pattern of `for pat in iterable` for the walk of its body: typed as
    /// [`item`](Env::item) says, unknown where it says nothing.
    pub(crate) fn bind_for(&mut self, pat: &Pat, iterable: &Expr) {
        match self.item(iterable) {
            Some(item) => self.bind_value(pat, item),
            None => self.poison_pat(pat),
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
            Expr::Binary(b) => {
                let (left, right) = (self.ty(&b.left), self.ty(&b.right));
                // A named constant (`EPS`, `consts::G`) takes the type of the number it meets.
                let (left, right) = match (self.is_constant(&b.left), self.is_constant(&b.right)) {
                    (true, false) if matches!(right, Ty::Float(_) | Ty::FloatRef(_) | Ty::Int(_)) => {
                        (plain(right), right)
                    }
                    (false, true) if matches!(left, Ty::Float(_) | Ty::FloatRef(_) | Ty::Int(_)) => (left, plain(left)),
                    _ => (left, right),
                };
                self.binary(&b.op, left, right)
            }
            Expr::Index(i) => match (self.place(&i.expr), self.ty(&i.index)) {
                (Ty::Slice { width, .. }, Ty::Int(Int::Usize | Int::Lit)) => Ty::Float(width),
                _ => Ty::Unknown,
            },
            Expr::Reference(r) => match (self.place(&r.expr), r.mutability.is_none()) {
                (Ty::Float(w), true) => Ty::FloatRef(w),
                // `&x[a..b]`, `&mut x[..]`, `&v` of a `Vec<f32>`: a reference to a slice.
                (Ty::Slice { width, .. }, shared) => Ty::Slice { width, shared },
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
                let args: Vec<Ty> = m.args.iter().map(|a| self.argument(a)).collect();
                self.method(self.place(&m.receiver), &m.method.to_string(), &args)
            }
            Expr::Call(c) => {
                // `f32::max(a, b)`: an inherent method called through its type.
                let Expr::Path(p) = &*c.func else { return Ty::Unknown };
                let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                match (p.qself.is_none(), segments.as_slice()) {
                    // `f64::from(x)` of a primitive number: std's conversion (no other impl can exist).
                    (true, [ty, from]) if from == "from" && c.args.len() == 1 => {
                        match (Width::of_name(ty), self.ty(&c.args[0])) {
                            (Some(w), Ty::Float(_) | Ty::Int(_)) => Ty::Float(w),
                            _ => Ty::Unknown,
                        }
                    }
                    (true, [ty, method]) if Width::of_name(ty).is_some() && !c.args.is_empty() => {
                        let args: Vec<Ty> = c.args.iter().map(|a| self.argument(a)).collect();
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
                let then = self.block(&i.then_branch);
                let otherwise = match &**otherwise {
                    Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => self.block(&b.block),
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
            Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => self.block(&b.block),
            _ => Ty::Unknown,
        }
    }

    /// A block of pure `let`s and a pure value (`{ let d = a - b; d * d }`): the value's type.
    fn block(&self, block: &syn::Block) -> Ty {
        let Some((syn::Stmt::Expr(value, None), lets)) = block.stmts.split_last() else { return Ty::Unknown };
        let mut inner = self.clone();
        inner.push();
        for stmt in lets {
            match stmt {
                syn::Stmt::Local(local) if local.init.as_ref().is_some_and(|i| inner.value(&i.expr).known()) => {
                    inner.bind_let(local)
                }
                _ => return Ty::Unknown,
            }
        }
        inner.ty(value)
    }

    /// The type of `e` as a place (what `&`, indexing and a method receiver see): as
    /// [`ty`](Env::ty) says, and a range of a known float slice (`x[a..b]`, `x[..]`, unsized,
    /// not a value) is a slice too.
    fn place(&self, e: &Expr) -> Ty {
        match e {
            Expr::Index(i) if i.attrs.is_empty() && self.is_index_range(&i.index) => match self.place(&i.expr) {
                Ty::Slice { width, shared } => Ty::Slice { width, shared },
                _ => Ty::Unknown,
            },
            Expr::Paren(p) => self.place(&p.expr),
            Expr::Group(g) => self.place(&g.expr),
            e => self.ty(e),
        }
    }

    /// `a..b`, `a..`, `..b`, `..`, `a..=b` over `usize` (or integer literals): a slice's range index.
    fn is_index_range(&self, e: &Expr) -> bool {
        let Expr::Range(r) = e else { return false };
        let end_ok = r.end.is_some() || matches!(r.limits, syn::RangeLimits::HalfOpen(_));
        let bound = |b: &Option<Box<Expr>>| match b {
            None => true,
            Some(b) => matches!(self.ty(b), Ty::Int(Int::Usize | Int::Lit)),
        };
        r.attrs.is_empty() && end_ok && bound(&r.start) && bound(&r.end)
    }

    /// The value of a pure expression, taken apart as far as a pattern can: a tuple
    /// expression part by part, `x.split_at(m)` as its two halves; otherwise
    /// [`Value::One`] of its [`ty`](Env::ty).
    pub(crate) fn value(&self, e: &Expr) -> Value {
        match e {
            Expr::Paren(p) => self.value(&p.expr),
            Expr::Group(g) => self.value(&g.expr),
            Expr::Tuple(t) if t.attrs.is_empty() && !t.elems.is_empty() => {
                Value::Tuple(t.elems.iter().map(|e| self.value(e)).collect())
            }
            Expr::MethodCall(m) if m.turbofish.is_none() && m.args.len() == 1 => {
                let halves = |shared| Value::Tuple(vec![Value::One(shared), Value::One(shared)]);
                let mid = matches!(self.ty(&m.args[0]), Ty::Int(Int::Usize | Int::Lit));
                match (self.place(&m.receiver), m.method.to_string().as_str()) {
                    (Ty::Slice { width, .. }, "split_at") if mid => halves(Ty::Slice { width, shared: true }),
                    (Ty::Slice { width, .. }, "split_at_mut") if mid => halves(Ty::Slice { width, shared: false }),
                    _ => Value::One(self.ty(e)),
                }
            }
            e => Value::One(self.ty(e)),
        }
    }

    /// The items of `for _ in e`, or of the iterator `e`, when `e` is known to be one
    /// of std's: an integer range (the integer), a known float slice (`x`, `&x`,
    /// `x.iter()`: `&f32`; `.copied()`, `.cloned()`: `f32`; `x.iter_mut()`: unknown),
    /// its rows (`x.chunks(d)`, `chunks_exact`, `windows`, `rchunks`: shared
    /// sub-slices; `chunks_mut`, `chunks_exact_mut`: mutable ones), `enumerate` and
    /// `zip` of those (tuples), and `rev`, `skip`, `take`, `step_by` of those.
    /// `None` when `e` is not known to be a std iterable at all.
    pub(crate) fn item(&self, e: &Expr) -> Option<Value> {
        let usize_arg = |m: &syn::ExprMethodCall| {
            m.args.len() == 1 && matches!(self.ty(&m.args[0]), Ty::Int(Int::Usize | Int::Lit))
        };
        match e {
            Expr::Paren(p) => self.item(&p.expr),
            Expr::Group(g) => self.item(&g.expr),
            Expr::Range(r) => match (&r.start, &r.end) {
                (Some(start), Some(end)) => match (self.ty(start), self.ty(end)) {
                    (Ty::Int(a), Ty::Int(b)) => a.unify(b).map(|k| Value::One(Ty::Int(k))),
                    _ => None,
                },
                // `lo..`, as a split loop's chunk counts an enumeration from its first index.
                (Some(start), None) => match self.ty(start) {
                    Ty::Int(k) => Some(Value::One(Ty::Int(k))),
                    _ => None,
                },
                _ => None,
            },
            // `::core::iter::Iterator::zip(a, b)`: `a.zip(b)` spelled as a path (a split loop's chunk).
            Expr::Call(c) if c.args.len() == 2 && is_iterator_zip(&c.func) => {
                let inner = self.item(&c.args[0])?;
                let other = self.item(&c.args[1]).unwrap_or(Value::One(Ty::Unknown));
                Some(Value::Tuple(vec![inner, other]))
            }
            Expr::Reference(r) if r.mutability.is_none() => match self.place(&r.expr) {
                Ty::Slice { width, .. } => Some(Value::One(Ty::FloatRef(width))),
                _ => None,
            },
            Expr::MethodCall(m) if m.turbofish.is_none() => {
                let method = m.method.to_string();
                if let Ty::Slice { width, .. } = self.place(&m.receiver) {
                    let row = |shared| Some(Value::One(Ty::Slice { width, shared }));
                    return match method.as_str() {
                        "iter" if m.args.is_empty() => Some(Value::One(Ty::FloatRef(width))),
                        "iter_mut" if m.args.is_empty() => Some(Value::One(Ty::Unknown)),
                        "chunks" | "chunks_exact" | "windows" | "rchunks" | "rchunks_exact" if usize_arg(m) => {
                            row(true)
                        }
                        "chunks_mut" | "chunks_exact_mut" | "rchunks_mut" | "rchunks_exact_mut" if usize_arg(m) => {
                            row(false)
                        }
                        _ => None,
                    };
                }
                let inner = self.item(&m.receiver)?;
                match method.as_str() {
                    "enumerate" if m.args.is_empty() => {
                        Some(Value::Tuple(vec![Value::One(Ty::Int(Int::Usize)), inner]))
                    }
                    "zip" if m.args.len() == 1 => {
                        let other = self.item(&m.args[0]).unwrap_or(Value::One(Ty::Unknown));
                        Some(Value::Tuple(vec![inner, other]))
                    }
                    "copied" | "cloned" if m.args.is_empty() => match inner {
                        Value::One(Ty::FloatRef(w)) => Some(Value::One(Ty::Float(w))),
                        _ => Some(Value::One(Ty::Unknown)),
                    },
                    "rev" if m.args.is_empty() => Some(inner),
                    "skip" | "take" | "step_by" if usize_arg(m) => Some(inner),
                    _ => None,
                }
            }
            e => match self.ty(e) {
                Ty::Slice { width, shared: true } => Some(Value::One(Ty::FloatRef(width))),
                _ => None,
            },
        }
    }

    /// The type of a method's argument: as [`ty`](Env::ty) says, and a named constant
    /// (`x.powf(GAMMA)`) a float of any width, which the method's signature fixes (a
    /// constant of another type would not compile).
    fn argument(&self, e: &Expr) -> Ty {
        match self.ty(e) {
            Ty::Unknown if self.is_constant(e) => Ty::Float(Width::Any),
            ty => ty,
        }
    }

    /// Whether `e` names a constant or a static the body cannot have bound: a path whose
    /// last segment is `SCREAMING_CASE` (`EPS`, `consts::G`, `Self::SCALE`), not a local.
    pub(crate) fn is_constant(&self, e: &Expr) -> bool {
        let Expr::Path(p) = e else { return false };
        let Some(last) = p.path.segments.last() else { return false };
        let name = last.ident.to_string();
        let screaming = name.chars().any(|c| c.is_ascii_uppercase())
            && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        p.qself.is_none()
            && p.attrs.is_empty()
            && p.path.segments.iter().all(|s| s.arguments.is_empty())
            && screaming
            && (p.path.segments.len() > 1 || self.lookup(&name).is_none())
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
            (false, [ty, c]) if FLOAT_CONSTS.contains(c) && Width::of_name(ty).is_some() => float(ty),
            (false, ["usize", "MAX" | "MIN"]) => Ty::Int(Int::Usize),
            (false, [ty, "MAX" | "MIN"]) if INTEGERS.contains(ty) => Ty::Int(Int::Other),
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
                if args.is_empty() && FLOAT_PREDICATES.contains(&method) {
                    return Ty::Bool;
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

/// `Iterator::zip` by path (`::core::iter::Iterator::zip`, `std::iter::Iterator::zip`).
fn is_iterator_zip(f: &Expr) -> bool {
    let Expr::Path(p) = f else { return false };
    let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
    p.qself.is_none() && names.ends_with(&["Iterator".to_string(), "zip".to_string()])
}

/// A value's type without its reference: what a constant beside it has.
fn plain(ty: Ty) -> Ty {
    match ty {
        Ty::FloatRef(w) => Ty::Float(w),
        ty => ty,
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
        // A named constant takes the type of the number it meets; alone, or beside another, it is unknown.
        assert_eq!(ty(parse_quote!(s * s + SOFTENING2)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(consts::G * *r)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(n * WIDTH + 1)), Ty::Int(Int::Usize));
        assert_eq!(ty(parse_quote!(EPS)), Ty::Unknown);
        assert_eq!(ty(parse_quote!(EPS * G)), Ty::Unknown);
        assert_eq!(ty(parse_quote!(s * q)), Ty::Unknown, "a lowercase name not in scope is no constant");
        assert_eq!(ty(parse_quote!(0.0)), Ty::Float(Width::Any));
        assert_eq!(ty(parse_quote!(-0.0f64)), Ty::Float(Width::F64));
        assert_eq!(ty(parse_quote!(*r + 1.0)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!((x[n] - s).abs().max(r.sqrt()))), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(f32::max(s, x[0]))), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(f32::NEG_INFINITY)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(usize::MAX)), Ty::Int(Int::Usize));
        assert_eq!(ty(parse_quote!(i32::MIN)), Ty::Int(Int::Other));
        assert_eq!(ty(parse_quote!(std::f64::consts::PI)), Ty::Float(Width::F64));
        assert_eq!(ty(parse_quote!(n as f32 * s)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(if s > 0.0 { s } else { 0.0 })), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(x.len() - 1)), Ty::Int(Int::Usize));
        assert_eq!(ty(parse_quote!(vec![0.0f32; n])), Ty::Slice { width: Width::F32, shared: false });
        assert_eq!(ty(parse_quote!(x[0].is_finite() && !r.is_nan())), Ty::Bool);
        assert_eq!(ty(parse_quote!(f64::from(s) * w[0])), Ty::Float(Width::F64));
        assert_eq!(ty(parse_quote!(f32::from(m as u16))), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(s.clamp(0.0, 1.0))), Ty::Float(Width::F32));
        assert_eq!(
            ty(parse_quote!({
                let d = x[n] - s;
                let (e, _) = (d, 1);
                e * e
            })),
            Ty::Float(Width::F32)
        );
    }

    #[test]
    fn sub_slices_are_slices() {
        let shared = Ty::Slice { width: Width::F32, shared: true };
        assert_eq!(ty(parse_quote!(&x[n * 2..(n + 1) * 2])), shared);
        assert_eq!(ty(parse_quote!(&x[n..])), shared);
        assert_eq!(ty(parse_quote!(&x[..=n])), shared);
        assert_eq!(ty(parse_quote!(&x[..])), shared);
        assert_eq!(ty(parse_quote!(&x[1..][..n])), shared);
        assert_eq!(ty(parse_quote!(&w[2..])), Ty::Slice { width: Width::F64, shared: true });
        assert_eq!(ty(parse_quote!(&mut out[n..])), Ty::Slice { width: Width::F32, shared: false });
        assert_eq!(ty(parse_quote!(x[n..][0] + s)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(x[1..n].len())), Ty::Int(Int::Usize));
    }

    #[test]
    fn lets_take_tuples_and_halves_apart() {
        let mut e = env();
        let bind = |e: &mut Env, stmt: syn::Stmt| {
            let syn::Stmt::Local(local) = stmt else { unreachable!() };
            e.bind_let(&local);
        };
        bind(&mut e, parse_quote!(let (mut fx, fy, _) = (0.0f32, x[n] - s, 3usize);));
        assert_eq!(e.lookup("fx"), Some((Ty::Float(Width::F32), true)));
        assert_eq!(e.lookup("fy"), Some((Ty::Float(Width::F32), false)));
        bind(&mut e, parse_quote!(let ((a, b), c): ((f64, f32), usize) = ((0.0, 1.0), 2);));
        assert_eq!(
            [e.lookup("a"), e.lookup("b"), e.lookup("c")].map(|l| l.unwrap().0),
            [Ty::Float(Width::F64), Ty::Float(Width::F32), Ty::Int(Int::Usize)]
        );
        bind(&mut e, parse_quote!(let (lo, hi) = x.split_at(n);));
        assert_eq!(e.lookup("lo").unwrap().0, Ty::Slice { width: Width::F32, shared: true });
        assert_eq!(e.lookup("hi").unwrap().0, Ty::Slice { width: Width::F32, shared: true });
        bind(&mut e, parse_quote!(let (l, h) = out.split_at_mut(2);));
        assert_eq!(e.lookup("h").unwrap().0, Ty::Slice { width: Width::F32, shared: false });
        // Shapes that differ, `..`, refutable and unknown initialisers: unknown.
        for stmt in [
            parse_quote!(let (p, t) = (1.0f32, 2.0f32, 3.0f32);),
            parse_quote!(let (p, t, ..) = (1.0f32, 2.0f32, 3.0f32);),
            parse_quote!(let (p, t) = pair();),
            parse_quote!(let (p, t) = q.split_at(1);),
            parse_quote!(let p = (1.0f32, 2.0f32);),
            parse_quote!(let Some((p, t)) = f() else { return };),
        ] {
            bind(&mut e, stmt);
            assert_eq!(e.lookup("p").unwrap().0, Ty::Unknown);
        }
    }

    #[test]
    fn for_items() {
        let e = env();
        let item = |iterable: Expr| e.item(&iterable);
        let f32ref = Value::One(Ty::FloatRef(Width::F32));
        let row = Value::One(Ty::Slice { width: Width::F32, shared: true });
        let index = Value::One(Ty::Int(Int::Usize));
        assert_eq!(item(parse_quote!(0..n)), Some(index.clone()));
        assert_eq!(item(parse_quote!(x)), Some(f32ref.clone()));
        assert_eq!(item(parse_quote!(&x[1..])), Some(f32ref.clone()));
        assert_eq!(item(parse_quote!(x.iter().rev())), Some(f32ref.clone()));
        assert_eq!(item(parse_quote!(x.iter().copied().skip(1))), Some(Value::One(Ty::Float(Width::F32))));
        assert_eq!(item(parse_quote!(x.chunks(n))), Some(row.clone()));
        assert_eq!(item(parse_quote!(x.chunks_exact(4).enumerate())), Some(Value::Tuple(vec![index, row.clone()])));
        assert_eq!(
            item(parse_quote!(out.chunks_mut(n).zip(x.chunks(n)))),
            Some(Value::Tuple(vec![Value::One(Ty::Slice { width: Width::F32, shared: false }), row]))
        );
        assert_eq!(
            item(parse_quote!(out.iter_mut().zip(v))),
            Some(Value::Tuple(vec![Value::One(Ty::Unknown), Value::One(Ty::Unknown)]))
        );
        // Not known to be std's: a user's `enumerate`, a method of an unknown receiver, an owned `Vec`.
        for iterable in
            [parse_quote!(q.enumerate()), parse_quote!(q.iter()), parse_quote!(a), parse_quote!(x.chunks(s))]
        {
            assert_eq!(item(iterable), None);
        }
        // How the Parallel variant's split walks a chunk of `out.chunks_mut(n).enumerate()`.
        assert_eq!(
            item(parse_quote!(::core::iter::Iterator::zip((n..), out.chunks_exact_mut(n)))),
            Some(Value::Tuple(vec![
                Value::One(Ty::Int(Int::Usize)),
                Value::One(Ty::Slice { width: Width::F32, shared: false })
            ]))
        );
        assert_eq!(item(parse_quote!((s..))), None);
        let mut scoped = env();
        scoped.bind_for(&parse_quote!((i, (r, _))), &parse_quote!(x.chunks(n).zip(w.chunks(n)).enumerate()));
        assert_eq!(scoped.lookup("i").unwrap().0, Ty::Int(Int::Usize));
        assert_eq!(scoped.lookup("r").unwrap().0, Ty::Slice { width: Width::F32, shared: true });
    }

    #[test]
    fn anything_that_may_have_an_effect_is_unknown() {
        for e in [
            parse_quote!(f(s)),
            parse_quote!(q * s),
            parse_quote!(q.x),
            parse_quote!(s.custom()),
            parse_quote!(x.iter().sum::<f32>()),
            parse_quote!({
                s;
                s
            }),
            parse_quote!({
                let t = f(s);
                t
            }),
            parse_quote!({
                let t;
                t
            }),
            parse_quote!(f64::from(q)),
            parse_quote!(f64::from(r)),
            parse_quote!(s += 1.0),
            parse_quote!(x[1..]),
            parse_quote!(&x[1.0..]),
            parse_quote!(&x[m..]),
            parse_quote!(&q[1..]),
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
