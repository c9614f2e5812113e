//! The loop body as the shader computes it: statements and expressions over
//! typed locals, captured scalars (the loop's arguments) and views of the
//! captured slices, built by `lower.rs` and printed as WGSL by `wgsl.rs`.
//! Every value carries a type variable ([`Tv`]), resolved once the whole body
//! has been read.

use proc_macro2::Ident;

use super::ty::{Tv, Ty};

/// A local of the shader (`v<n>`): the body's `let`s, loop counters, items.
pub(super) type Var = usize;

/// A view of a captured slice: the slice itself, one of its rows, a sub-slice.
pub(super) type ViewId = usize;

/// Where a view starts in its slice and how long it is.
#[derive(Clone, Debug)]
pub(super) struct View {
    /// The captured slice ([`Binding`]) it is part of.
    pub binding: usize,
    /// Its first element's index in the slice, a `usize` local; `None`: the slice's start.
    pub base: Option<Var>,
    /// Its length, a `usize` local; `None`: the slice's length.
    pub len: Option<Var>,
}

/// The element type of a captured slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Elem {
    F32,
    I32,
    U32,
    Usize,
}

impl Elem {
    pub(super) fn ty(self) -> Ty {
        match self {
            Elem::F32 => Ty::F32,
            Elem::I32 => Ty::I32,
            Elem::U32 => Ty::U32,
            Elem::Usize => Ty::Usize,
        }
    }
}

/// A slice the loop captures.
#[derive(Clone, Debug)]
pub(super) struct Binding {
    /// Its name, as the body first wrote it (its span resolves it where the loop is).
    pub name: Ident,
    pub elem: Elem,
    /// Whether the loop writes it (its iteration's own items or rows: the split proved that).
    pub written: bool,
}

/// What a loop argument (a uniform word) is, on the host.
#[derive(Clone, Debug)]
pub(super) enum ArgSource {
    /// A name from outside the loop: a parameter, a local before it, a constant.
    Name(Ident),
    /// A path: `f32::EPSILON`, `std::f32::consts::PI`, `consts::G`, `Self::SCALE`.
    Path(syn::ExprPath),
    /// The row width of the loop's `k`-th stream, evaluated once.
    Width(usize),
}

/// A scalar the loop takes from the host.
#[derive(Clone, Debug)]
pub(super) struct Arg {
    pub source: ArgSource,
    pub tv: Tv,
}

/// The operator of a carried reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AccOp {
    Sum,
    Product,
    Max,
    Min,
}

/// A reduction the loop carries (see `crate::body::independence`): each invocation's partial,
/// combined per workgroup, then across workgroups on the device.
#[derive(Clone, Debug)]
pub(super) struct Acc {
    /// The accumulator, as the body wrote it.
    pub name: Ident,
    pub op: AccOp,
    pub tv: Tv,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Un {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Bin {
    pub(super) fn is_comparison(self) -> bool {
        matches!(self, Bin::Eq | Bin::Ne | Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge)
    }
}

/// The functions of the subset (float methods, and the integer ones of the same name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Func {
    Sqrt,
    Abs,
    Exp,
    Ln,
    Sin,
    Cos,
    Tanh,
    Powi,
    Powf,
    Min,
    Max,
    Clamp,
    MulAdd,
    Floor,
    Ceil,
    Round,
    Recip,
    IsNan,
    IsFinite,
    IsInfinite,
}

/// An expression; `tv` is the type it computes in (for a comparison: its operands').
#[derive(Clone, Debug)]
pub(super) enum E {
    /// A float literal's digits, as written (no suffix).
    Float(String, Tv),
    Int(u128, Tv),
    Bool(bool),
    Local(Var),
    Arg(usize),
    /// WGSL the shader's frame provides (`lp_g`, the invocation's unit).
    Raw(&'static str),
    Load(ViewId, Box<E>),
    Len(ViewId),
    Unary(Un, Box<E>, Tv),
    Binary(Bin, Box<E>, Box<E>, Tv),
    Cast(Box<E>, Tv, Ty),
    Call(Func, Vec<E>, Tv),
}

/// A place an assignment writes.
#[derive(Clone, Debug)]
pub(super) enum Place {
    Local(Var),
    Elem(ViewId, E),
}

/// A statement.
#[derive(Clone, Debug)]
pub(super) enum S {
    /// `var v: T = init;` (zero without one).
    Decl(Var, Option<E>),
    Assign(Place, E),
    /// `place = place OP value` (the place evaluated once).
    Compound(Place, Bin, E, Tv),
    /// An expression evaluated for its checks only.
    Eval(E),
    If(E, Vec<S>, Vec<S>),
    /// `loop { body continuing { next; break if until; } }`.
    Loop {
        body: Vec<S>,
        next: Vec<S>,
        until: Option<E>,
    },
    Break,
    Continue,
    /// `v = v + 1`, wrapping: a loop counter's step.
    Step(Var),
    /// An accumulation into the carried reduction `acc` (`subtract`: `acc -= value`).
    Acc {
        acc: usize,
        value: E,
        subtract: bool,
    },
    /// A view of `parent` from `lo` to `hi` (its end when `None`), checked as Rust checks
    /// a sub-slice.
    Sub {
        view: ViewId,
        parent: ViewId,
        lo: E,
        hi: Option<E>,
    },
    /// A row of `parent`, unit `unit` of rows `width` wide (`exact`: only whole rows).
    Row {
        view: ViewId,
        parent: ViewId,
        unit: E,
        width: E,
        exact: bool,
    },
}
