//! The kernels the tester writes: a small typed syntax tree of the shapes the
//! loop table documents, from which [`crate::print`] writes the plain, the
//! annotated and the tracked copy, and on which [`crate::minimise`] works.
//!
//! Every tree the generator builds is a valid, terminating, panic-free body
//! for every input the harness feeds it (YARPGen's rule: the generator, not
//! a run-time check, rules out undefined behaviour and panics): indices stay
//! in bounds by construction, integer arithmetic stays far from overflow, and
//! `clamp` takes literal bounds in order.

/// The type of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `f32`.
    F32,
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `usize`.
    Usize,
    /// `bool`.
    Bool,
}

impl Ty {
    /// The type's name in Rust.
    pub fn rust(self) -> &'static str {
        match self {
            Ty::F32 => "f32",
            Ty::U32 => "u32",
            Ty::I32 => "i32",
            Ty::Usize => "usize",
            Ty::Bool => "bool",
        }
    }
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%` (integers only)
    Rem,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl Bin {
    /// The operator's token.
    pub fn token(self) -> &'static str {
        match self {
            Bin::Add => "+",
            Bin::Sub => "-",
            Bin::Mul => "*",
            Bin::Div => "/",
            Bin::Rem => "%",
            Bin::Lt => "<",
            Bin::Le => "<=",
            Bin::Gt => ">",
            Bin::Ge => ">=",
            Bin::Eq => "==",
            Bin::Ne => "!=",
            Bin::And => "&&",
            Bin::Or => "||",
        }
    }

    /// Rust's precedence, higher binds tighter.
    pub fn precedence(self) -> u8 {
        match self {
            Bin::Mul | Bin::Div | Bin::Rem => 10,
            Bin::Add | Bin::Sub => 9,
            Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge | Bin::Eq | Bin::Ne => 7,
            Bin::And => 6,
            Bin::Or => 5,
        }
    }

    /// Whether it compares (its value is a `bool` of two operands of one type).
    pub fn compares(self) -> bool {
        matches!(self, Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge | Bin::Eq | Bin::Ne)
    }
}

/// A method called on a value (`x.sqrt()`, `x.max(y)`, `n.saturating_sub(1)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// `f32::sqrt`
    Sqrt,
    /// `f32::abs`
    Abs,
    /// `f32::exp`
    Exp,
    /// `f32::ln`
    Ln,
    /// `f32::sin`
    Sin,
    /// `f32::cos`
    Cos,
    /// `f32::tanh`
    Tanh,
    /// `f32::floor`
    Floor,
    /// `f32::ceil`
    Ceil,
    /// `f32::round`
    Round,
    /// `f32::recip`
    Recip,
    /// `f32::max(self, other)`
    Max,
    /// `f32::min(self, other)`
    Min,
    /// `f32::clamp(self, lo, hi)`, literal bounds in order
    Clamp,
    /// `f32::mul_add(self, b, c)`
    MulAdd,
    /// `f32::powi(self, i32 literal)`
    Powi,
    /// `f32::powf(self, literal)`
    Powf,
    /// `f32::is_nan`
    IsNan,
    /// `f32::is_finite`
    IsFinite,
    /// `usize::saturating_sub`
    SatSub,
    /// `usize::min` (`a.len().min(b.len())`)
    UMin,
}

impl Func {
    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Func::Sqrt => "sqrt",
            Func::Abs => "abs",
            Func::Exp => "exp",
            Func::Ln => "ln",
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Tanh => "tanh",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::Round => "round",
            Func::Recip => "recip",
            Func::Max => "max",
            Func::Min => "min",
            Func::Clamp => "clamp",
            Func::MulAdd => "mul_add",
            Func::Powi => "powi",
            Func::Powf => "powf",
            Func::IsNan => "is_nan",
            Func::IsFinite => "is_finite",
            Func::SatSub => "saturating_sub",
            Func::UMin => "min",
        }
    }
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A float literal (finite, non-negative: a negative one is [`Expr::Neg`]).
    F(f32),
    /// An integer literal of the given type.
    I(i64, Ty),
    /// A named value: a parameter, a local or a loop variable.
    Var(String),
    /// An associated constant: `f32::INFINITY`, `f32::NEG_INFINITY`, `f32::MAX`.
    Const(&'static str),
    /// `slice[index]`.
    Index(String, Box<Expr>),
    /// `slice.len()`.
    Len(String),
    /// `-e`.
    Neg(Box<Expr>),
    /// `!e`.
    Not(Box<Expr>),
    /// `a op b`.
    Bin(Bin, Box<Expr>, Box<Expr>),
    /// `receiver.method(args)`.
    Call(Func, Box<Expr>, Vec<Expr>),
    /// `e as ty`.
    Cast(Box<Expr>, Ty),
    /// `if c { a } else { b }` as a value.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A reducing iterator chain.
    Chain(Box<Chain>),
}

impl Expr {
    /// `op(a, b)`.
    pub fn bin(op: Bin, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }

    /// A variable.
    pub fn var(name: &str) -> Expr {
        Expr::Var(name.to_string())
    }

    /// `slice[index]`.
    pub fn index(slice: &str, index: Expr) -> Expr {
        Expr::Index(slice.to_string(), Box::new(index))
    }

    /// `usize` literal.
    pub fn us(n: i64) -> Expr {
        Expr::I(n, Ty::Usize)
    }
}

/// What an iterator chain walks.
#[derive(Clone, Debug, PartialEq)]
pub enum Src {
    /// `a.iter()`: the closure's pattern is `&x`.
    Iter(String),
    /// `a.iter().copied()`: `x`.
    Copied(String),
    /// `a.iter().zip(b)`: `(&x, &y)`.
    Zip(String, String),
}

/// How an iterator chain ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// `.sum::<f32>()`
    Sum,
    /// `.product::<f32>()`
    Product,
    /// `.fold(init, |acc, PAT| acc + term)`, the term over the element's names.
    FoldAdd(Expr, Expr),
    /// `.fold(init, f32::max)`
    FoldMax(Expr),
    /// `.fold(init, f32::min)`
    FoldMin(Expr),
}

/// A reducing iterator chain: `src[.map(|PAT| map)].term`.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    /// Identifies it (its line in the annotated copy is looked up by it).
    pub id: usize,
    /// What it walks.
    pub src: Src,
    /// The element's names (one, or two for a zip).
    pub names: Vec<String>,
    /// `.map(|PAT| e)`, if any (never with a `FoldAdd`).
    pub map: Option<Expr>,
    /// How it ends.
    pub term: Term,
}

/// What an assignment writes.
#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    /// A local.
    Var(String),
    /// `*item` (an `iter_mut` item).
    Deref(String),
    /// `slice[index]`.
    Index(String, Expr),
}

/// An assignment's operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AOp {
    /// `=`
    Set,
    /// `+=`
    Add,
    /// `-=`
    Sub,
    /// `*=`
    Mul,
    /// `/=`
    Div,
    /// `p = p.max(v)`
    Max,
    /// `p = p.min(v)`
    Min,
}

/// A loop's header.
#[derive(Clone, Debug, PartialEq)]
pub enum Head {
    /// `for var in lo..hi`.
    Range {
        /// The index.
        var: String,
        /// The start.
        lo: Expr,
        /// The end (exclusive).
        hi: Expr,
    },
    /// `for (o, &x) in out.iter_mut().zip(a)`, `for (&x, &y) in a.iter().zip(b)`, …:
    /// an optional written slice's items and read slices' items, zipped.
    Items {
        /// `(item, slice)` written through `iter_mut`.
        out: Option<(String, String)>,
        /// `(item, slice)` read.
        reads: Vec<(String, String)>,
    },
    /// `for (row, src) in out.chunks_mut(w).zip(a.chunks(w))`.
    Rows {
        /// `(row, slice)` written.
        out: Option<(String, String)>,
        /// `(row, slice)` read.
        reads: Vec<(String, String)>,
        /// The row width.
        width: Expr,
    },
    /// `for _ in 0..count`.
    Repeat(Expr),
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let [mut] name[: ty] = init;`
    Let {
        /// The name.
        name: String,
        /// `let mut`.
        mutable: bool,
        /// A declared type.
        ty: Option<Ty>,
        /// The value.
        init: Expr,
    },
    /// `let name = &slice[lo..hi];`
    Slice {
        /// The name.
        name: String,
        /// The slice it views.
        of: String,
        /// Its start.
        lo: Expr,
        /// Its end.
        hi: Expr,
    },
    /// `place op value;`
    Assign(Place, AOp, Expr),
    /// `if cond { then } [else { els }]`
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// A `for` loop; `id` identifies it (its line in the annotated copy is looked up by it).
    For {
        /// Identity.
        id: usize,
        /// What it walks.
        head: Head,
        /// Its body.
        body: Vec<Stmt>,
    },
    /// `break;`
    Break,
    /// `continue;`
    Continue,
}

/// How long a slice parameter is, given the case's size `n` and width `w`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    /// `n` elements.
    N,
    /// `n * k`.
    Times(usize),
    /// `k`, whatever the size (at least 1).
    Fixed(usize),
    /// The case's row width `w`.
    W,
    /// The case's row count `n / w`.
    H,
}

/// A parameter's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PKind {
    /// `&[f32]`.
    F32s(Len),
    /// `&mut [f32]`.
    F32sMut(Len),
    /// `&[u32]` with every value below `below`.
    U32s(Len, u32),
    /// `&mut [u32]`.
    U32sMut(Len),
    /// `f32`.
    F32,
    /// `usize`: the case's row width.
    Width,
}

impl PKind {
    /// Whether the kernel writes it.
    pub fn written(self) -> bool {
        matches!(self, PKind::F32sMut(_) | PKind::U32sMut(_))
    }
}

/// A parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its type and length.
    pub kind: PKind,
}

/// One generated kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Its function's name (`k17`).
    pub name: String,
    /// The shape the generator chose (`reduce-for`, `stencil`, …).
    pub shape: &'static str,
    /// `Low`, `Medium` or `High`.
    pub complexity: &'static str,
    /// Its parameters.
    pub params: Vec<Param>,
    /// Its return type (`f32`, `u32`, `usize`), if any.
    pub ret: Option<Ty>,
    /// Its statements.
    pub body: Vec<Stmt>,
    /// Its value, if it returns one.
    pub tail: Option<Expr>,
    /// The sizes (`n`) it is called with.
    pub sizes: Vec<usize>,
    /// The row widths (`w`) it is called with (`[1]` when it takes none).
    pub widths: Vec<usize>,
}

/// Visits every expression of statements, mutably, depth first (children before parents).
pub fn exprs_mut(stmts: &mut [Stmt], f: &mut dyn FnMut(&mut Expr)) {
    for s in stmts {
        match s {
            Stmt::Let { init, .. } => expr_mut(init, f),
            Stmt::Slice { lo, hi, .. } => {
                expr_mut(lo, f);
                expr_mut(hi, f);
            }
            Stmt::Assign(place, _, value) => {
                if let Place::Index(_, i) = place {
                    expr_mut(i, f);
                }
                expr_mut(value, f);
            }
            Stmt::If(c, a, b) => {
                expr_mut(c, f);
                exprs_mut(a, f);
                exprs_mut(b, f);
            }
            Stmt::For { head, body, .. } => {
                match head {
                    Head::Range { lo, hi, .. } => {
                        expr_mut(lo, f);
                        expr_mut(hi, f);
                    }
                    Head::Rows { width, .. } => expr_mut(width, f),
                    Head::Repeat(n) => expr_mut(n, f),
                    Head::Items { .. } => {}
                }
                exprs_mut(body, f);
            }
            Stmt::Break | Stmt::Continue => {}
        }
    }
}

/// Visits `e` and every expression inside it, children first.
pub fn expr_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    match e {
        Expr::Index(_, i) | Expr::Neg(i) | Expr::Not(i) | Expr::Cast(i, _) => expr_mut(i, f),
        Expr::Bin(_, a, b) => {
            expr_mut(a, f);
            expr_mut(b, f);
        }
        Expr::Call(_, r, args) => {
            expr_mut(r, f);
            for a in args {
                expr_mut(a, f);
            }
        }
        Expr::If(c, a, b) => {
            expr_mut(c, f);
            expr_mut(a, f);
            expr_mut(b, f);
        }
        Expr::Chain(c) => {
            if let Some(m) = &mut c.map {
                expr_mut(m, f);
            }
            match &mut c.term {
                Term::FoldAdd(i, t) => {
                    expr_mut(i, f);
                    expr_mut(t, f);
                }
                Term::FoldMax(i) | Term::FoldMin(i) => expr_mut(i, f),
                Term::Sum | Term::Product => {}
            }
        }
        Expr::F(_) | Expr::I(..) | Expr::Var(_) | Expr::Const(_) | Expr::Len(_) => {}
    }
    f(e);
}
