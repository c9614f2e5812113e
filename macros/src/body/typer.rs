//! The typer: what the model can prove about a value from tokens alone, the one
//! bottom-up inference every rewrite reads. It answers two questions:
//!
//! * [`Env::ty`]: the type of an expression when the expression is *pure* (no
//!   side effect other than a panic), else [`Ty::Unknown`]: what the SIMD
//!   variant may evaluate once per lane and what a split chunk may recompute;
//! * [`Env::type_of`]: the type of an expression whatever its effects: what a
//!   name bound to it holds once the `let` has run (`let w = img.width as usize;`
//!   binds a `usize`, `let v = vec![f(x); n];` a vector).
//!
//! A name's type is known from:
//!
//! * a parameter's declared type (`x: &[f32]`, `n: usize`, `alpha: f32`:
//!   [`Ty::of_type`]);
//! * a `let` ([`Env::bind_let`]) with a declared type, or with an initialiser
//!   whose type is known: a literal (`0.0`, `0.0f32`, `1e-5_f64`, `3u32`),
//!   `f32::NEG_INFINITY`, an element of a known slice (`x[0]`), a sub-slice of one
//!   (`&x[a..b]`, `&x[a..]`, `&mut x[..b]`), `vec![v; n]`, `vec![a, b]`,
//!   `Vec::new()`, `Vec::with_capacity(n)`, `x.to_vec()`, arithmetic over such
//!   values; a tuple pattern takes a tuple of such values apart (`let (mut fx,
//!   mut fy) = (0.0f32, 0.0f32);`, `let (lo, hi) = x.split_at(m);`), see [`Value`];
//! * a `for` ([`Env::bind_for`]) over an integer range (the index), a known
//!   slice (`x`, `&x`, `x.iter()`, `.copied()`: its elements), its rows
//!   (`x.chunks(d)`, `x.chunks_exact(d)`: sub-slices), and `enumerate`/`zip`
//!   of those (tuples).
//!
//! Anything else is [`Ty::Unknown`], and so is every name another pattern
//! (closure, `match`, `if let`, a macro's tokens) may rebind. A pure expression
//! has a known type only when it is built from known names, literals, the
//! built-in arithmetic, comparisons and casts of primitive numbers (`as`,
//! `f64::from`), indexing and range-indexing of a known slice, the inherent
//! float methods listed in [`FLOAT_METHODS`], [`FLOAT_METHODS_WITH_ARGS`] and
//! [`FLOAT_PREDICATES`], `len`, `min` and `max`, `if`–`else` and blocks of pure
//! `let`s around such values. A user-defined operator, a function call, a field,
//! a macro other than `vec!` is never known. (The names `f32`, `f64` and the
//! integer types are taken to mean the primitive types.)

use syn::{BinOp, Expr, Lit, Pat, UnOp};

use super::names::Env;
use super::syntax::is_screaming;
use super::types::{Access, Elem, Int, IntTy, Prim, Ty, Value, Width};
use super::walk::{How, Walk};

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

impl Env {
    /// The type of a pure expression, or [`Ty::Unknown`] (also for anything with a possible side effect).
    pub(crate) fn ty(&self, e: &Expr) -> Ty {
        Typer { env: self, pure: true }.ty(e)
    }

    /// The type of an expression whatever its effects (`x as usize` is a `usize`,
    /// `vec![f(x); n]` a vector): what a name bound to it holds.
    pub(crate) fn type_of(&self, e: &Expr) -> Ty {
        Typer { env: self, pure: false }.ty(e)
    }

    /// The value of a pure expression, taken apart as far as a pattern can: a tuple
    /// expression part by part, `x.split_at(m)` as its two halves; otherwise
    /// [`Value::One`] of its [`ty`](Env::ty).
    pub(crate) fn value(&self, e: &Expr) -> Value {
        Typer { env: self, pure: true }.value(e)
    }

    /// [`value`](Env::value) whatever the expression's effects ([`type_of`](Env::type_of)).
    pub(crate) fn value_of(&self, e: &Expr) -> Value {
        Typer { env: self, pure: false }.value(e)
    }

    /// The items of `for _ in e`, or of the iterator `e`, when `e` is known to be one
    /// of std's: an integer range (the integer), a known slice (`x`, `&x` of a shared one,
    /// `x.iter()`: a reference to its element; `.copied()`, `.cloned()`: the element;
    /// `x.iter_mut()`: unknown), its rows (`x.chunks(d)`, `chunks_exact`, `windows`,
    /// `rchunks`: shared sub-slices; `chunks_mut`, `chunks_exact_mut`: mutable ones),
    /// `enumerate` and `zip` of those (tuples), and `rev`, `skip`, `take`, `step_by` of
    /// those. `None` when `e` is not known to be a std iterable at all.
    pub(crate) fn item(&self, e: &Expr) -> Option<Value> {
        Typer { env: self, pure: false }.item(&Walk::of(e, true))
    }

    /// Binds the pattern of `let pat = init;` (or `let pat: T = init;`, `let pat;`): the
    /// initialiser is typed (whatever its effects: they have happened once the name is
    /// bound) before the pattern's names are in scope. A `let … else` pattern is
    /// refutable, so its names are made unknown.
    pub(crate) fn bind_let(&mut self, local: &syn::Local) {
        match &local.init {
            Some(init) if init.diverge.is_some() => self.poison_pat(&local.pat),
            Some(init) => {
                let value = self.value_of(&init.expr);
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

    /// Whether `e` names a constant or a static the body cannot have bound: a path whose
    /// last segment is `SCREAMING_CASE` (`EPS`, `consts::G`, `Self::SCALE`), not a local.
    pub(crate) fn is_constant(&self, e: &Expr) -> bool {
        let Expr::Path(p) = e else { return false };
        let Some(last) = p.path.segments.last() else { return false };
        let name = last.ident.to_string();
        p.qself.is_none()
            && p.attrs.is_empty()
            && p.path.segments.iter().all(|s| s.arguments.is_empty())
            && is_screaming(&name)
            && (p.path.segments.len() > 1 || self.lookup(&name).is_none())
    }
}

/// One typing of expressions: pure ones only ([`Env::ty`]), or any ([`Env::type_of`]).
#[derive(Clone, Copy)]
struct Typer<'e> {
    env: &'e Env,
    /// Whether an expression that may have a side effect is [`Ty::Unknown`].
    pure: bool,
}

impl Typer<'_> {
    fn ty(&self, e: &Expr) -> Ty {
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
                let number = |t: Ty| matches!(t, Ty::Float(_) | Ty::FloatRef(_) | Ty::Int(_));
                let (left, right) = match (self.env.is_constant(&b.left), self.env.is_constant(&b.right)) {
                    (true, false) if number(right) => (plain(right), right),
                    (false, true) if number(left) => (left, plain(left)),
                    _ => (left, right),
                };
                binary(&b.op, left, right)
            }
            Expr::Index(i) => match (self.place(&i.expr), self.ty(&i.index)) {
                (Ty::Slice { elem, .. }, Ty::Int(Int::Usize | Int::Lit)) => elem.ty(),
                _ => Ty::Unknown,
            },
            Expr::Reference(r) => {
                let mutable = r.mutability.is_some();
                match (self.place(&r.expr), mutable) {
                    (Ty::Float(w), false) => Ty::FloatRef(w),
                    // `&x[a..b]`, `&mut x[..]`, `&v` of a `Vec<f32>`: a reference to a slice.
                    (Ty::Slice { elem, .. }, _) => {
                        Ty::Slice { elem, access: if mutable { Access::Mut } else { Access::Shared } }
                    }
                    // What a reference to anything else is, whatever its effects: `&mut cfg` may
                    // write `cfg`.
                    (Ty::Float(_) | Ty::Int(_) | Ty::Bool, _) | (_, true) if !self.pure => match self.place(&r.expr) {
                        Ty::Float(w) => Ty::PrimRef { prim: Prim::Float(w), mutable },
                        Ty::Int(k) => match k {
                            Int::Usize => Ty::PrimRef { prim: Prim::Int(IntTy::Usize), mutable },
                            Int::Other(t) => Ty::PrimRef { prim: Prim::Int(t), mutable },
                            Int::Lit if mutable => Ty::MutRef,
                            Int::Lit => Ty::Unknown,
                        },
                        Ty::Bool => Ty::PrimRef { prim: Prim::Bool, mutable },
                        _ => Ty::MutRef,
                    },
                    _ => Ty::Unknown,
                }
            }
            Expr::Cast(c) => {
                let from = self.ty(&c.expr);
                let numeric = from.float_width().is_some() || matches!(from, Ty::Int(_)) || !self.pure;
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
            Expr::Call(c) => self.call(c),
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
                    (a, b) if a == b && a.is_known() => a,
                    _ => Ty::Unknown,
                }
            }
            Expr::Macro(m) if m.mac.path.is_ident("vec") => self.vec_macro(&m.mac),
            Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => self.block(&b.block),
            _ => Ty::Unknown,
        }
    }

    /// `f32::max(a, b)`, `f64::from(x)`, `Vec::new()`, `Vec::with_capacity(n)`.
    fn call(&self, c: &syn::ExprCall) -> Ty {
        let Expr::Path(p) = &*c.func else { return Ty::Unknown };
        let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let plain_path = p.qself.is_none() && p.path.segments.iter().all(|s| s.arguments.is_empty());
        let names: Vec<&str> = segments.iter().map(String::as_str).collect();
        match (plain_path, names.as_slice()) {
            // `f64::from(x)` of a primitive number: std's conversion (no other impl can exist).
            (true, [ty, "from"]) if c.args.len() == 1 => match (Width::of_name(ty), self.ty(&c.args[0])) {
                (Some(w), Ty::Float(_) | Ty::Int(_)) => Ty::Float(w),
                _ => Ty::Unknown,
            },
            // `Vec::new()`, `Vec::with_capacity(n)`: an empty vector of elements not known here.
            (true, ["Vec", "new"]) if c.args.is_empty() => Ty::Slice { elem: Elem::Other, access: Access::Owned },
            (true, ["Vec", "with_capacity"])
                if c.args.len() == 1 && (!self.pure || matches!(self.ty(&c.args[0]), Ty::Int(_))) =>
            {
                Ty::Slice { elem: Elem::Other, access: Access::Owned }
            }
            // `f32::max(a, b)`: an inherent method called through its type.
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

    /// A block of pure `let`s and a pure value (`{ let d = a - b; d * d }`): the value's type.
    fn block(&self, block: &syn::Block) -> Ty {
        let Some((syn::Stmt::Expr(value, None), lets)) = block.stmts.split_last() else { return Ty::Unknown };
        let mut inner = self.env.clone();
        inner.push();
        for stmt in lets {
            match stmt {
                syn::Stmt::Local(local)
                    if local.init.as_ref().is_some_and(|i| Typer { env: &inner, ..*self }.value(&i.expr).known()) =>
                {
                    inner.bind_let(local)
                }
                _ => return Ty::Unknown,
            }
        }
        Typer { env: &inner, ..*self }.ty(value)
    }

    /// The type of `e` as a place: see [`Env::place`].
    fn place(&self, e: &Expr) -> Ty {
        match e {
            Expr::Index(i) if i.attrs.is_empty() && self.is_index_range(&i.index) => match self.place(&i.expr) {
                slice @ Ty::Slice { .. } => slice,
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

    fn value(&self, e: &Expr) -> Value {
        match e {
            Expr::Paren(p) => self.value(&p.expr),
            Expr::Group(g) => self.value(&g.expr),
            Expr::Tuple(t) if t.attrs.is_empty() && !t.elems.is_empty() => {
                Value::Tuple(t.elems.iter().map(|e| self.value(e)).collect())
            }
            Expr::MethodCall(m) if m.turbofish.is_none() && m.args.len() == 1 => {
                let halves = |access| match self.place(&m.receiver) {
                    Ty::Slice { elem, .. } => {
                        let half = Value::One(Ty::Slice { elem, access });
                        Some(Value::Tuple(vec![half.clone(), half]))
                    }
                    _ => None,
                };
                let mid = matches!(self.ty(&m.args[0]), Ty::Int(Int::Usize | Int::Lit));
                let split = match m.method.to_string().as_str() {
                    "split_at" if mid => halves(Access::Shared),
                    "split_at_mut" if mid => halves(Access::Mut),
                    _ => None,
                };
                split.unwrap_or_else(|| Value::One(self.ty(e)))
            }
            e => Value::One(self.ty(e)),
        }
    }

    fn item(&self, walk: &Walk) -> Option<Value> {
        let usize_arg = |arg: Option<&Expr>| arg.is_some_and(|a| matches!(self.ty(a), Ty::Int(Int::Usize | Int::Lit)));
        match walk {
            Walk::Range { start: Some(start), end: Some(end), .. } => match (self.ty(start), self.ty(end)) {
                (Ty::Int(a), Ty::Int(b)) => a.unify(b).map(|k| Value::One(Ty::Int(k))),
                _ => None,
            },
            // `lo..`, as a split loop's chunk counts an enumeration from its first index.
            Walk::Range { start: Some(start), end: None, .. } => match self.ty(start) {
                Ty::Int(k) => Some(Value::One(Ty::Int(k))),
                _ => None,
            },
            Walk::Range { .. } | Walk::Other => None,
            Walk::Zip(a, b) => {
                let inner = self.item(a)?;
                let other = self.item(b).unwrap_or(Value::One(Ty::Unknown));
                Some(Value::Tuple(vec![inner, other]))
            }
            Walk::Enumerate(a) => Some(Value::Tuple(vec![Value::One(Ty::Int(Int::Usize)), self.item(a)?])),
            Walk::Copied(a, _) => match self.item(a)? {
                Value::One(Ty::FloatRef(w)) => Some(Value::One(Ty::Float(w))),
                Value::One(Ty::PrimRef { prim, mutable: false }) => Some(Value::One(prim.ty())),
                _ => Some(Value::One(Ty::Unknown)),
            },
            Walk::Adapted { inner, method, arg } => {
                let keeps = *method == "rev" || usize_arg(*arg);
                if keeps {
                    self.item(inner)
                } else {
                    None
                }
            }
            Walk::Items { of, how } => {
                let Ty::Slice { elem, access } = self.place(of) else { return None };
                match how {
                    How::Iter | How::Whole(Some(false)) => Some(Value::One(elem_ref(elem))),
                    How::IterMut => Some(Value::One(Ty::Unknown)),
                    How::Rows { width, mutable, .. } if usize_arg(Some(width)) => {
                        let access = if *mutable { Access::Mut } else { Access::Shared };
                        Some(Value::One(Ty::Slice { elem, access }))
                    }
                    How::Whole(None) if access == Access::Shared && self.ty(of).is_known() => {
                        Some(Value::One(elem_ref(elem)))
                    }
                    How::Rows { .. } | How::Whole(_) => None,
                }
            }
        }
    }

    /// The type of a method's argument: as [`ty`](Typer::ty) says, and a named constant
    /// (`x.powf(GAMMA)`) a float of any width, which the method's signature fixes (a
    /// constant of another type would not compile).
    fn argument(&self, e: &Expr) -> Ty {
        match self.ty(e) {
            Ty::Unknown if self.env.is_constant(e) => Ty::Float(Width::Any),
            ty => ty,
        }
    }

    fn path(&self, path: &syn::Path) -> Ty {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if path.segments.iter().any(|s| !s.arguments.is_empty()) {
            return Ty::Unknown;
        }
        let names: Vec<&str> = segments.iter().map(String::as_str).collect();
        let float = |ty: &str| Width::of_name(ty).map_or(Ty::Unknown, Ty::Float);
        // `consts::PI`, `consts::FRAC_1_SQRT_2`: a constant of the type's `consts`.
        let screaming = |c: &str| c.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit());
        match (path.leading_colon.is_some(), names.as_slice()) {
            (false, [name]) => self.env.lookup(name).map_or(Ty::Unknown, |(ty, _)| ty),
            (false, [ty, c]) if FLOAT_CONSTS.contains(c) && Width::of_name(ty).is_some() => float(ty),
            (false, [ty, "MAX" | "MIN"]) => match IntTy::of_name(ty) {
                Some(t) => Ty::Int(Int::of(t)),
                None => Ty::Unknown,
            },
            (false, [ty, "consts", c]) if screaming(c) => float(ty),
            (_, ["std" | "core", ty, "consts", c]) if screaming(c) => float(ty),
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
                if method == "powi" && matches!(args, [Ty::Int(Int::Other(_) | Int::Lit)]) {
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
            Ty::Slice { elem, .. } if method == "to_vec" && args.is_empty() => {
                Ty::Slice { elem, access: Access::Owned }
            }
            Ty::Int(k) if (method == "min" || method == "max") && args.len() == 1 => match args[0] {
                Ty::Int(a) => k.unify(a).map_or(Ty::Unknown, Ty::Int),
                _ => Ty::Unknown,
            },
            _ => Ty::Unknown,
        }
    }

    /// `vec![x; n]` (an integer `n`) and `vec![a, b, ..]`: an owned vector of their type.
    fn vec_macro(&self, mac: &syn::Macro) -> Ty {
        let repeat = |input: syn::parse::ParseStream| {
            let value: Expr = input.parse()?;
            input.parse::<syn::Token![;]>()?;
            let len: Expr = input.parse()?;
            Ok((value, len))
        };
        let vector = |elem| Ty::Slice { elem, access: Access::Owned };
        if let Ok((value, len)) = mac.parse_body_with(repeat) {
            return match (self.ty(&value), self.ty(&len)) {
                (ty @ (Ty::Float(_) | Ty::Int(_) | Ty::Bool), Ty::Int(_)) => vector(Elem::of(ty)),
                _ if !self.pure => vector(Elem::Other),
                _ => Ty::Unknown,
            };
        }
        let list = mac.parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated);
        let Ok(items) = list else { return Ty::Unknown };
        let types: Vec<Ty> = items.iter().map(|e| self.ty(e)).collect();
        let elem = types.iter().skip(1).try_fold(types.first().copied(), |acc, t| match (acc, t) {
            (Some(Ty::Float(a)), Ty::Float(b)) => a.unify(*b).map(|w| Some(Ty::Float(w))),
            (Some(Ty::Int(a)), Ty::Int(b)) => a.unify(*b).map(|k| Some(Ty::Int(k))),
            (Some(a), b) if a == *b => Some(Some(a)),
            _ => None,
        });
        match elem {
            Some(Some(ty @ (Ty::Float(_) | Ty::Int(_) | Ty::Bool))) => vector(Elem::of(ty)),
            _ if !self.pure => vector(Elem::Other),
            _ => Ty::Unknown,
        }
    }
}

fn binary(op: &BinOp, left: Ty, right: Ty) -> Ty {
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

/// What iterating a slice of `elem` by reference yields.
fn elem_ref(elem: Elem) -> Ty {
    match elem {
        Elem::Float(w) => Ty::FloatRef(w),
        Elem::Int(Int::Usize) => Ty::PrimRef { prim: Prim::Int(IntTy::Usize), mutable: false },
        Elem::Int(Int::Other(t)) => Ty::PrimRef { prim: Prim::Int(t), mutable: false },
        Elem::Bool => Ty::PrimRef { prim: Prim::Bool, mutable: false },
        Elem::Int(Int::Lit) | Elem::Other => Ty::Unknown,
    }
}

/// A value's type without its reference: what a constant beside it has.
fn plain(ty: Ty) -> Ty {
    match ty {
        Ty::FloatRef(w) => Ty::Float(w),
        ty => ty,
    }
}

/// A literal's type, by its suffix.
fn literal(lit: &Lit) -> Ty {
    match lit {
        Lit::Float(f) => match f.suffix() {
            "" => Ty::Float(Width::Any),
            s => Width::of_name(s).map_or(Ty::Unknown, Ty::Float),
        },
        Lit::Int(i) => match i.suffix() {
            "" => Ty::Int(Int::Lit),
            s => Prim::of_name(s).filter(|p| *p != Prim::Bool).map_or(Ty::Unknown, Prim::ty),
        },
        Lit::Bool(_) => Ty::Bool,
        _ => Ty::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::types::IntTy;
    use syn::parse_quote;

    fn env() -> Env {
        crate::body::declared(&[
            ("x", parse_quote!(&[f32])),
            ("w", parse_quote!(&Vec<f64>)),
            ("out", parse_quote!(&mut [f32])),
            ("a", parse_quote!([f32; 4])),
            ("n", parse_quote!(usize)),
            ("m", parse_quote!(u32)),
            ("s", parse_quote!(f32)),
            ("r", parse_quote!(&f32)),
            ("q", parse_quote!(Foo)),
        ])
    }

    fn ty(e: Expr) -> Ty {
        env().ty(&e)
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
        assert_eq!(ty(parse_quote!(i32::MIN)), Ty::Int(Int::Other(IntTy::I32)));
        assert_eq!(ty(parse_quote!(std::f64::consts::PI)), Ty::Float(Width::F64));
        assert_eq!(ty(parse_quote!(n as f32 * s)), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(if s > 0.0 { s } else { 0.0 })), Ty::Float(Width::F32));
        assert_eq!(ty(parse_quote!(x.len() - 1)), Ty::Int(Int::Usize));
        assert_eq!(
            ty(parse_quote!(vec![0.0f32; n])),
            Ty::Slice { elem: Elem::Float(Width::F32), access: Access::Owned }
        );
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
    fn an_unsuffixed_vec_is_a_float_of_either_width() {
        // Disagreement resolved: `vec![0.0; n]` held floats of either width to the SIMD rewrite
        // and `f32`s to the GPU's reading of lets. The model's answer is "a float, width not
        // known"; its elements take the width they meet. (The GPU variant guesses `f32` on top of
        // this answer, and its run-time probe checks the guess: `shader::outer`.)
        let any = Ty::Slice { elem: Elem::Float(Width::Any), access: Access::Owned };
        assert_eq!(ty(parse_quote!(vec![0.0; n])), any);
        assert_eq!(ty(parse_quote!(vec![0; n])), Ty::Slice { elem: Elem::Int(Int::Lit), access: Access::Owned });
        let mut e = env();
        let syn::Stmt::Local(local) = parse_quote!(let tmp = vec![0.0; n];) else { unreachable!() };
        e.bind_let(&local);
        assert_eq!(e.lookup("tmp"), Some((any, false)));
        assert_eq!(e.ty(&parse_quote!(tmp[n])), Ty::Float(Width::Any));
        assert_eq!(e.ty(&parse_quote!(tmp[n] * w[0])), Ty::Float(Width::F64));
        assert_eq!(e.ty(&parse_quote!(tmp[n] * s)), Ty::Float(Width::F32));
    }

    #[test]
    fn sub_slices_are_slices() {
        let shared = Ty::Slice { elem: Elem::Float(Width::F32), access: Access::Shared };
        assert_eq!(ty(parse_quote!(&x[n * 2..(n + 1) * 2])), shared);
        assert_eq!(ty(parse_quote!(&x[n..])), shared);
        assert_eq!(ty(parse_quote!(&x[..=n])), shared);
        assert_eq!(ty(parse_quote!(&x[..])), shared);
        assert_eq!(ty(parse_quote!(&x[1..][..n])), shared);
        assert_eq!(ty(parse_quote!(&w[2..])), Ty::Slice { elem: Elem::Float(Width::F64), access: Access::Shared });
        assert_eq!(ty(parse_quote!(&mut out[n..])), Ty::Slice { elem: Elem::Float(Width::F32), access: Access::Mut });
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
        assert_eq!(e.lookup("lo").unwrap().0, Ty::Slice { elem: Elem::Float(Width::F32), access: Access::Shared });
        assert_eq!(e.lookup("hi").unwrap().0, Ty::Slice { elem: Elem::Float(Width::F32), access: Access::Shared });
        bind(&mut e, parse_quote!(let (l, h) = out.split_at_mut(2);));
        assert_eq!(e.lookup("h").unwrap().0, Ty::Slice { elem: Elem::Float(Width::F32), access: Access::Mut });
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
        let row = Value::One(Ty::Slice { elem: Elem::Float(Width::F32), access: Access::Shared });
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
            Some(Value::Tuple(vec![Value::One(Ty::Slice { elem: Elem::Float(Width::F32), access: Access::Mut }), row]))
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
                Value::One(Ty::Slice { elem: Elem::Float(Width::F32), access: Access::Mut })
            ]))
        );
        assert_eq!(item(parse_quote!((s..))), None);
        let mut scoped = env();
        scoped.bind_for(&parse_quote!((i, (r, _))), &parse_quote!(x.chunks(n).zip(w.chunks(n)).enumerate()));
        assert_eq!(scoped.lookup("i").unwrap().0, Ty::Int(Int::Usize));
        assert_eq!(scoped.lookup("r").unwrap().0, Ty::Slice { elem: Elem::Float(Width::F32), access: Access::Shared });
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
}
