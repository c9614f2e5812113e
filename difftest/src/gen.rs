//! The generator: kernel `i` of seed `s` is a function of `(s, i)` alone, so a
//! failure is reproduced from the two numbers its line prints.
//!
//! Each kernel takes one of the shapes the loop table documents, chosen so that
//! a rewrite fires (YARPGen's *generation policies*: an element-wise loop for the
//! chunks, a reduction for the lanes, a row loop with borders for the split, a
//! math call in lanes), with random expression trees over the float methods the
//! GPU subset lists. It is valid and panic-free by construction (YARPGen's
//! value ranges, Csmith's safe operations): indices stay inside the slices the
//! harness passes (`ast::Len`), integer arithmetic stays far below overflow
//! (counts of at most a few thousand, bins below 16), and `clamp` takes literal
//! bounds in order.

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::ast::{AOp, Bin, Chain, Expr, Func, Head, Kernel, Len, PKind, Param, Place, Src, Stmt, Term, Ty};
use crate::harness::{SIZES, WIDTHS};

/// The shapes, each a documented row of the loop table (or a mix of them).
pub const SHAPES: [&str; 16] = [
    "items",
    "index",
    "stencil",
    "reduce-for",
    "reduce-iter",
    "keep",
    "argmin",
    "int-sum",
    "rows",
    "rows-border",
    "row-reduce",
    "scatter",
    "kmeans",
    "pipeline",
    "carried",
    "early-exit",
];

/// Literals the expressions use (no approximations of π or e: clippy would flag them).
const LITERALS: [f32; 12] = [0.0, 1.0, 2.0, 0.5, 0.25, 1.5, 3.0, 10.0, 0.1, 1e-3, 1e30, 1e-30];

/// Generates kernel `index` of `seed`, named `k{index}`.
pub fn kernel(seed: u64, index: usize) -> Kernel {
    let mut g =
        Gen { rng: ChaCha8Rng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)), ids: 0 };
    let shape = *SHAPES.choose(&mut g.rng).expect("shapes");
    g.shape(format!("k{index}"), shape)
}

struct Gen {
    rng: ChaCha8Rng,
    ids: usize,
}

/// Whether `e`'s float type is known from what it names (a variable, an element, a
/// constant), not only from literals, whose type an expression alone leaves open.
fn typed(e: &Expr) -> bool {
    match e {
        Expr::Var(_) | Expr::Index(..) | Expr::Const(_) | Expr::Cast(..) | Expr::Chain(_) => true,
        Expr::If(_, a, b) => typed(a) || typed(b),
        Expr::Bin(op, a, b) if !op.compares() => typed(a) || typed(b),
        Expr::Call(_, r, _) | Expr::Neg(r) => typed(r),
        _ => false,
    }
}

fn f(name: &str, len: Len) -> Param {
    Param { name: name.into(), kind: PKind::F32s(len) }
}

fn fm(name: &str, len: Len) -> Param {
    Param { name: name.into(), kind: PKind::F32sMut(len) }
}

fn scalar(name: &str) -> Param {
    Param { name: name.into(), kind: PKind::F32 }
}

fn v(n: &str) -> Expr {
    Expr::var(n)
}

fn idx(s: &str, i: Expr) -> Expr {
    Expr::index(s, i)
}

fn add(a: Expr, b: Expr) -> Expr {
    Expr::bin(Bin::Add, a, b)
}

fn sub(a: Expr, b: Expr) -> Expr {
    Expr::bin(Bin::Sub, a, b)
}

fn mul(a: Expr, b: Expr) -> Expr {
    Expr::bin(Bin::Mul, a, b)
}

fn len(s: &str) -> Expr {
    Expr::Len(s.into())
}

fn call(func: Func, r: Expr, args: Vec<Expr>) -> Expr {
    Expr::Call(func, Box::new(r), args)
}

impl Gen {
    fn id(&mut self) -> usize {
        self.ids += 1;
        self.ids
    }

    fn p(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn lit(&mut self) -> Expr {
        Expr::F(*LITERALS.choose(&mut self.rng).expect("literals"))
    }

    /// A float expression over `leaves` (non-literal values) of depth up to `depth`.
    fn fexpr(&mut self, depth: u32, leaves: &[Expr]) -> Expr {
        if depth == 0 || self.p(0.25) {
            return if leaves.is_empty() || self.p(0.2) {
                self.lit()
            } else {
                leaves.choose(&mut self.rng).expect("leaves").clone()
            };
        }
        let d = depth - 1;
        match self.rng.random_range(0..100) {
            0..=39 => {
                let op =
                    *[Bin::Add, Bin::Sub, Bin::Mul, Bin::Mul, Bin::Add, Bin::Sub].choose(&mut self.rng).expect("ops");
                Expr::bin(op, self.fexpr(d, leaves), self.fexpr(d, leaves))
            }
            40..=44 => Expr::bin(Bin::Div, self.fexpr(d, leaves), self.fexpr(d, leaves)),
            45..=48 => Expr::Neg(Box::new(self.recv(d, leaves))),
            49..=66 => {
                let func = *[
                    Func::Sqrt,
                    Func::Abs,
                    Func::Exp,
                    Func::Ln,
                    Func::Sin,
                    Func::Cos,
                    Func::Tanh,
                    Func::Floor,
                    Func::Ceil,
                    Func::Round,
                    Func::Recip,
                    Func::Exp,
                    Func::Tanh,
                ]
                .choose(&mut self.rng)
                .expect("functions");
                call(func, self.recv(d, leaves), vec![])
            }
            67..=73 => {
                let func = if self.p(0.5) { Func::Max } else { Func::Min };
                call(func, self.recv(d, leaves), vec![self.fexpr(d, leaves)])
            }
            74..=78 => call(Func::MulAdd, self.recv(d, leaves), vec![self.fexpr(d, leaves), self.fexpr(d, leaves)]),
            79..=81 => {
                let (a, b) =
                    (self.rng.random_range(-4i32..4) as f32 * 0.5, self.rng.random_range(0i32..6) as f32 * 0.5);
                let neg = |x: f32| if x < 0.0 { Expr::Neg(Box::new(Expr::F(-x))) } else { Expr::F(x) };
                call(Func::Clamp, self.recv(d, leaves), vec![neg(a), neg(a + b)])
            }
            82..=84 => call(Func::Powi, self.recv(d, leaves), vec![Expr::I(self.rng.random_range(-2..4), Ty::I32)]),
            85..=86 => {
                let y = *[0.5f32, 2.0, 1.5, 3.0, 0.25].choose(&mut self.rng).expect("exponents");
                call(Func::Powf, self.recv(d, leaves), vec![Expr::F(y)])
            }
            87..=95 => Expr::If(
                Box::new(self.cond(d, leaves)),
                Box::new(self.fexpr(d, leaves)),
                Box::new(self.fexpr(d, leaves)),
            ),
            _ => Expr::Cast(Box::new(Expr::Cast(Box::new(self.recv(d, leaves)), Ty::I32)), Ty::F32),
        }
    }

    /// A method's receiver or a comparison's operand: an expression whose type is known
    /// (`(0.25 * 2.0).sin()` is an ambiguous float, and a literal comparison is `f64`).
    fn recv(&mut self, depth: u32, leaves: &[Expr]) -> Expr {
        for _ in 0..6 {
            let e = self.fexpr(depth, leaves);
            if typed(&e) {
                return e;
            }
        }
        leaves.first().cloned().unwrap_or(Expr::Const("MAX"))
    }

    /// A condition over `leaves`.
    fn cond(&mut self, depth: u32, leaves: &[Expr]) -> Expr {
        match self.rng.random_range(0..10) {
            0 => call(Func::IsNan, self.recv(0, leaves), vec![]),
            1 => Expr::Not(Box::new(call(Func::IsFinite, self.recv(0, leaves), vec![]))),
            2 if depth > 0 => {
                let op = if self.p(0.5) { Bin::And } else { Bin::Or };
                Expr::bin(op, self.cond(0, leaves), self.cond(0, leaves))
            }
            _ => {
                let op = *[Bin::Lt, Bin::Le, Bin::Gt, Bin::Ge, Bin::Ne].choose(&mut self.rng).expect("comparisons");
                let right = if self.p(0.5) { self.lit() } else { self.fexpr(depth.min(1), leaves) };
                Expr::bin(op, self.recv(depth.min(2), leaves), right)
            }
        }
    }

    fn depth(&mut self) -> u32 {
        self.rng.random_range(1..=4)
    }

    fn complexity(&mut self) -> &'static str {
        ["Low", "Medium", "High"].choose(&mut self.rng).expect("complexities")
    }

    fn sizes(&mut self) -> Vec<usize> {
        let mut s: Vec<usize> = SIZES.choose_multiple(&mut self.rng, 6).copied().collect();
        s.push(0);
        s.push(*[129usize, 257, 1025].choose(&mut self.rng).expect("sizes"));
        s.sort_unstable();
        s.dedup();
        s
    }

    fn widths(&mut self) -> Vec<usize> {
        let mut w: Vec<usize> = WIDTHS.choose_multiple(&mut self.rng, 3).copied().collect();
        w.sort_unstable();
        w
    }

    /// An element-wise store of `value` into `place`: `=`, a compound operator, or under an `if`.
    fn store(&mut self, place: Place, leaves: &[Expr]) -> Vec<Stmt> {
        let d = self.depth();
        let value = self.fexpr(d, leaves);
        let op = *[AOp::Set, AOp::Set, AOp::Set, AOp::Add, AOp::Sub, AOp::Mul].choose(&mut self.rng).expect("ops");
        let store = Stmt::Assign(place.clone(), op, value);
        match self.rng.random_range(0..10) {
            0..=5 => vec![store],
            6..=7 => {
                let c = self.cond(2, leaves);
                vec![Stmt::If(c, vec![store], vec![])]
            }
            _ => {
                let c = self.cond(2, leaves);
                let other = self.fexpr(2, leaves);
                vec![Stmt::If(c, vec![store], vec![Stmt::Assign(place, AOp::Set, other)])]
            }
        }
    }

    fn shape(&mut self, name: String, shape: &'static str) -> Kernel {
        let mut k = Kernel {
            name,
            shape,
            complexity: self.complexity(),
            params: Vec::new(),
            ret: None,
            body: Vec::new(),
            tail: None,
            sizes: self.sizes(),
            widths: vec![1],
        };
        match shape {
            "items" => self.items(&mut k),
            "index" => self.index(&mut k, false),
            "stencil" => self.index(&mut k, true),
            "reduce-for" => self.reduce_for(&mut k, false),
            "keep" => self.reduce_for(&mut k, true),
            "reduce-iter" => self.reduce_iter(&mut k),
            "argmin" => self.argmin(&mut k),
            "int-sum" => self.int_sum(&mut k),
            "rows" => self.rows(&mut k),
            "rows-border" => self.rows_border(&mut k),
            "row-reduce" => self.row_reduce(&mut k),
            "scatter" => self.scatter(&mut k),
            "kmeans" => self.kmeans(&mut k),
            "pipeline" => self.pipeline(&mut k),
            "carried" => self.carried(&mut k),
            _ => self.early_exit(&mut k),
        }
        k
    }

    /// `for (o, &x) in out.iter_mut().zip(a) { *o = f(x, s) }`, with one or two read slices.
    fn items(&mut self, k: &mut Kernel) {
        k.params = vec![f("a", Len::N), f("b", Len::N), fm("out", Len::N), scalar("s")];
        let mut reads = vec![("x".to_string(), "a".to_string())];
        let mut leaves = vec![v("x"), v("s")];
        if self.p(0.5) {
            reads.push(("y".into(), "b".into()));
            leaves.push(v("y"));
        }
        let body = self.store(Place::Deref("o".into()), &leaves);
        let id = self.id();
        k.body = vec![Stmt::For { id, head: Head::Items { out: Some(("o".into(), "out".into())), reads }, body }];
    }

    /// `for i in lo..hi { out[i] = f(a[i], …) }`; a stencil reads neighbours too.
    fn index(&mut self, k: &mut Kernel, stencil: bool) {
        k.params = vec![f("a", Len::N), f("b", Len::N), fm("out", Len::N), scalar("s")];
        let i = v("i");
        let (lo, hi, mut leaves) = if stencil {
            let leaves = vec![
                idx("a", sub(i.clone(), Expr::us(1))),
                idx("a", i.clone()),
                idx("a", add(i.clone(), Expr::us(1))),
                idx("b", i.clone()),
                v("s"),
            ];
            (Expr::us(1), call(Func::SatSub, len("out"), vec![Expr::us(1)]), leaves)
        } else {
            let hi = match self.rng.random_range(0..3) {
                0 => len("out"),
                1 => call(Func::SatSub, len("out"), vec![Expr::us(1)]),
                _ => call(Func::UMin, len("out"), vec![len("a")]),
            };
            (Expr::us(0), hi, vec![idx("a", i.clone()), idx("b", i.clone()), v("s")])
        };
        if self.p(0.3) {
            leaves.push(Expr::Cast(Box::new(i.clone()), Ty::F32));
        }
        let mut body = Vec::new();
        if self.p(0.2) {
            let c = self.cond(1, &leaves);
            body.push(Stmt::If(c, vec![Stmt::Continue], vec![]));
        }
        if self.p(0.4) {
            let d = self.depth();
            let t = self.fexpr(d, &leaves);
            body.push(Stmt::Let { name: "t".into(), mutable: false, ty: Some(Ty::F32), init: t });
            leaves.push(v("t"));
        }
        body.extend(self.store(Place::Index("out".into(), i), &leaves));
        let id = self.id();
        k.body = vec![Stmt::For { id, head: Head::Range { var: "i".into(), lo, hi }, body }];
    }

    /// One to three accumulators over a range, a slice or two zipped.
    fn reduce_for(&mut self, k: &mut Kernel, keep: bool) {
        k.params = vec![f("a", Len::N), f("b", Len::N), scalar("s")];
        k.ret = Some(Ty::F32);
        let (head, leaves) = match self.rng.random_range(0..3) {
            0 => (
                Head::Range { var: "i".into(), lo: Expr::us(0), hi: call(Func::UMin, len("a"), vec![len("b")]) },
                vec![idx("a", v("i")), idx("b", v("i")), v("s")],
            ),
            1 => (Head::Items { out: None, reads: vec![("x".into(), "a".into())] }, vec![v("x"), v("s")]),
            _ => (
                Head::Items { out: None, reads: vec![("x".into(), "a".into()), ("y".into(), "b".into())] },
                vec![v("x"), v("y"), v("s")],
            ),
        };
        let count = self.rng.random_range(1..=3);
        let mut body = Vec::new();
        let mut accs = Vec::new();
        let mut leaves = leaves;
        if self.p(0.3) {
            let t = self.fexpr(2, &leaves);
            body.push(Stmt::Let { name: "t".into(), mutable: false, ty: Some(Ty::F32), init: t });
            leaves.push(v("t"));
        }
        for n in 0..count {
            let acc = format!("acc{n}");
            let d = self.depth().min(3);
            let term = self.fexpr(d, &leaves);
            let (init, stmt) = if keep || self.p(0.15) {
                let greater = self.p(0.5);
                let init = Expr::Const(if greater { "NEG_INFINITY" } else { "INFINITY" });
                let op = if greater { Bin::Gt } else { Bin::Lt };
                let cond = Expr::bin(op, term.clone(), v(&acc));
                (init, Stmt::If(cond, vec![Stmt::Assign(Place::Var(acc.clone()), AOp::Set, term)], vec![]))
            } else {
                let op = *[AOp::Add, AOp::Add, AOp::Add, AOp::Sub, AOp::Mul, AOp::Max, AOp::Min]
                    .choose(&mut self.rng)
                    .expect("ops");
                let init = match op {
                    AOp::Mul => Expr::F(1.0),
                    AOp::Max => Expr::Const("NEG_INFINITY"),
                    AOp::Min => Expr::Const("INFINITY"),
                    _ if self.p(0.2) => v("s"),
                    _ => Expr::F(0.0),
                };
                (init, Stmt::Assign(Place::Var(acc.clone()), op, term))
            };
            let ty = if self.p(0.5) || matches!(init, Expr::Var(_)) { Some(Ty::F32) } else { None };
            k.body.push(Stmt::Let { name: acc.clone(), mutable: true, ty, init });
            body.push(stmt);
            accs.push(acc);
        }
        let id = self.id();
        k.body.push(Stmt::For { id, head, body });
        let mut tail = v(&accs[0]);
        for a in &accs[1..] {
            let op = *[Bin::Add, Bin::Mul, Bin::Sub].choose(&mut self.rng).expect("ops");
            tail = Expr::bin(op, tail, v(a));
        }
        k.tail = Some(tail);
    }

    /// `a.iter().map(|&x| f(x)).sum::<f32>()`, `.fold(0.0f32, |acc, &x| acc + (x - s))`, …
    fn reduce_iter(&mut self, k: &mut Kernel) {
        k.params = vec![f("a", Len::N), f("b", Len::N), scalar("s")];
        k.ret = Some(Ty::F32);
        let (src, names, leaves) = match self.rng.random_range(0..3) {
            0 => (Src::Iter("a".into()), vec!["x".to_string()], vec![v("x"), v("s")]),
            1 => (Src::Copied("a".into()), vec!["x".to_string()], vec![v("x"), v("s")]),
            _ => {
                (Src::Zip("a".into(), "b".into()), vec!["x".to_string(), "y".to_string()], vec![v("x"), v("y"), v("s")])
            }
        };
        let d = self.depth().min(3);
        let e = self.fexpr(d, &leaves);
        let (map, term) = match self.rng.random_range(0..6) {
            0 | 1 => (Some(e), Term::Sum),
            2 => (Some(e), Term::Product),
            3 | 4 => (None, Term::FoldAdd(Expr::F(0.0), e)),
            _ => {
                let max = self.p(0.5);
                let init = Expr::Const(if max { "NEG_INFINITY" } else { "INFINITY" });
                (Some(e), if max { Term::FoldMax(init) } else { Term::FoldMin(init) })
            }
        };
        let id = self.id();
        let chain = Expr::Chain(Box::new(Chain { id, src, names, map, term }));
        if self.p(0.4) {
            k.body.push(Stmt::Let { name: "total".into(), mutable: false, ty: Some(Ty::F32), init: chain });
            let t = self.fexpr(1, &[v("total"), v("s")]);
            k.tail = Some(t);
        } else {
            k.tail = Some(chain);
        }
    }

    /// `if d < best { best = d; at = i; }`: the index of the least (or greatest) value.
    fn argmin(&mut self, k: &mut Kernel) {
        k.params = vec![f("a", Len::N), scalar("s")];
        k.ret = Some(Ty::Usize);
        let greater = self.p(0.5);
        let init = Expr::Const(if greater { "NEG_INFINITY" } else { "INFINITY" });
        k.body.push(Stmt::Let { name: "best".into(), mutable: true, ty: None, init });
        k.body.push(Stmt::Let { name: "at".into(), mutable: true, ty: Some(Ty::Usize), init: Expr::us(0) });
        let d = self.depth().min(3);
        let e = self.fexpr(d, &[idx("a", v("i")), v("s")]);
        let op = if greater { Bin::Gt } else { Bin::Lt };
        let body = vec![
            Stmt::Let { name: "d".into(), mutable: false, ty: None, init: e },
            Stmt::If(
                Expr::bin(op, v("d"), v("best")),
                vec![
                    Stmt::Assign(Place::Var("best".into()), AOp::Set, v("d")),
                    Stmt::Assign(Place::Var("at".into()), AOp::Set, v("i")),
                ],
                vec![],
            ),
        ];
        let id = self.id();
        k.body.push(Stmt::For { id, head: Head::Range { var: "i".into(), lo: Expr::us(0), hi: len("a") }, body });
        k.tail = Some(v("at"));
    }

    /// An integer count or sum: exact in every variant.
    fn int_sum(&mut self, k: &mut Kernel) {
        k.params = vec![f("a", Len::N), Param { name: "idx".into(), kind: PKind::U32s(Len::N, 16) }, scalar("s")];
        k.ret = Some(Ty::U32);
        k.body.push(Stmt::Let { name: "cnt".into(), mutable: true, ty: Some(Ty::U32), init: Expr::I(0, Ty::U32) });
        let c = self.cond(2, &[v("x"), v("s")]);
        let body = if self.p(0.5) {
            vec![Stmt::If(c, vec![Stmt::Assign(Place::Var("cnt".into()), AOp::Add, v("k"))], vec![])]
        } else {
            vec![Stmt::Assign(Place::Var("cnt".into()), AOp::Add, Expr::Cast(Box::new(c), Ty::U32))]
        };
        let id = self.id();
        let head = Head::Items { out: None, reads: vec![("x".into(), "a".into()), ("k".into(), "idx".into())] };
        k.body.push(Stmt::For { id, head, body });
        k.tail = Some(v("cnt"));
    }

    /// Rows: `for (row, src) in out.chunks_mut(w).zip(a.chunks(w))`, or `out[r * w + c]`.
    fn rows(&mut self, k: &mut Kernel) {
        k.params = vec![f("a", Len::N), fm("out", Len::N), Param { name: "w".into(), kind: PKind::Width }, scalar("s")];
        k.widths = self.widths();
        let id = self.id();
        let inner = self.id();
        if self.p(0.5) {
            let body = self.store(Place::Index("row".into(), v("j")), &[idx("src", v("j")), v("s")]);
            let j =
                Stmt::For { id: inner, head: Head::Range { var: "j".into(), lo: Expr::us(0), hi: len("row") }, body };
            let head = Head::Rows {
                out: Some(("row".into(), "out".into())),
                reads: vec![("src".into(), "a".into())],
                width: v("w"),
            };
            k.body.push(Stmt::For { id, head, body: vec![j] });
        } else {
            k.body.push(Stmt::Let {
                name: "h".into(),
                mutable: false,
                ty: None,
                init: Expr::bin(Bin::Div, len("out"), v("w")),
            });
            let at = add(mul(v("r"), v("w")), v("col"));
            let body = self.store(Place::Index("out".into(), at.clone()), &[idx("a", at), v("s")]);
            let c = Stmt::For { id: inner, head: Head::Range { var: "col".into(), lo: Expr::us(0), hi: v("w") }, body };
            k.body.push(Stmt::For {
                id,
                head: Head::Range { var: "r".into(), lo: Expr::us(0), hi: v("h") },
                body: vec![c],
            });
        }
    }

    /// A stencil over rows that writes its row's borders.
    fn rows_border(&mut self, k: &mut Kernel) {
        k.params = vec![f("a", Len::N), fm("out", Len::N), Param { name: "w".into(), kind: PKind::Width }, scalar("s")];
        k.widths = self.widths();
        k.body.push(Stmt::Let {
            name: "h".into(),
            mutable: false,
            ty: None,
            init: Expr::bin(Bin::Div, len("out"), v("w")),
        });
        let rw = mul(v("r"), v("w"));
        let at = add(rw.clone(), v("col"));
        let leaves = vec![
            idx("a", sub(at.clone(), Expr::us(1))),
            idx("a", at.clone()),
            idx("a", add(at.clone(), Expr::us(1))),
            idx("a", add(mul(sub(v("r"), Expr::us(1)), v("w")), v("col"))),
            idx("a", add(mul(add(v("r"), Expr::us(1)), v("w")), v("col"))),
            v("s"),
        ];
        let d = self.depth();
        let value = self.fexpr(d, &leaves);
        let inner = self.id();
        let c = Stmt::For {
            id: inner,
            head: Head::Range { var: "col".into(), lo: Expr::us(1), hi: call(Func::SatSub, v("w"), vec![Expr::us(1)]) },
            body: vec![Stmt::Assign(Place::Index("out".into(), at), AOp::Set, value)],
        };
        let left = self.fexpr(2, &[idx("a", rw.clone()), v("s")]);
        let last = sub(add(rw.clone(), v("w")), Expr::us(1));
        let right = self.fexpr(2, &[idx("a", last.clone()), v("s")]);
        let body = vec![
            Stmt::Assign(Place::Index("out".into(), rw), AOp::Set, left),
            Stmt::Assign(Place::Index("out".into(), last), AOp::Set, right),
            c,
        ];
        let id = self.id();
        let hi = call(Func::SatSub, v("h"), vec![Expr::us(1)]);
        k.body.push(Stmt::For { id, head: Head::Range { var: "r".into(), lo: Expr::us(1), hi }, body });
    }

    /// A short reduction per row (a matrix–vector product), stored in the row's slot.
    fn row_reduce(&mut self, k: &mut Kernel) {
        k.params =
            vec![f("a", Len::N), f("x", Len::W), fm("out", Len::H), Param { name: "w".into(), kind: PKind::Width }];
        k.widths = self.widths();
        let at = add(mul(v("r"), v("w")), v("j"));
        let d = self.depth().min(2);
        let term = self.fexpr(d, &[idx("a", at.clone()), idx("x", v("j"))]);
        let term = if self.p(0.6) { mul(idx("a", at), idx("x", v("j"))) } else { term };
        let inner = self.id();
        let j = Stmt::For {
            id: inner,
            head: Head::Range { var: "j".into(), lo: Expr::us(0), hi: v("w") },
            body: vec![Stmt::Assign(Place::Var("acc".into()), AOp::Add, term)],
        };
        let store = self.recv(1, &[v("acc")]);
        let body = vec![
            Stmt::Let { name: "acc".into(), mutable: true, ty: Some(Ty::F32), init: Expr::F(0.0) },
            j,
            Stmt::Assign(Place::Index("out".into(), v("r")), AOp::Set, store),
        ];
        let id = self.id();
        k.body.push(Stmt::For { id, head: Head::Range { var: "r".into(), lo: Expr::us(0), hi: len("out") }, body });
    }

    /// Updates at slots chosen by data: a histogram, sums or maxima per bin.
    fn scatter(&mut self, k: &mut Kernel) {
        let float = self.p(0.6);
        let name = if float { "bins" } else { "counts" };
        let bins = if float {
            fm(name, Len::Fixed(16))
        } else {
            Param { name: name.into(), kind: PKind::U32sMut(Len::Fixed(16)) }
        };
        k.params = vec![f("a", Len::N), Param { name: "idx".into(), kind: PKind::U32s(Len::N, 16) }, bins];
        let slot = Expr::Cast(Box::new(v("k")), Ty::Usize);
        let stmt = if float {
            let d = self.depth().min(2);
            let t = self.fexpr(d, &[v("x")]);
            if self.p(0.7) {
                Stmt::Assign(Place::Index("bins".into(), slot), AOp::Add, t)
            } else {
                Stmt::Assign(Place::Index("bins".into(), slot), AOp::Max, t)
            }
        } else {
            Stmt::Assign(Place::Index(name.into(), slot), AOp::Add, Expr::I(1, Ty::U32))
        };
        let id = self.id();
        let head = Head::Items { out: None, reads: vec![("k".into(), "idx".into()), ("x".into(), "a".into())] };
        k.body.push(Stmt::For { id, head, body: vec![stmt] });
    }

    /// A k-means assignment: for each point, the nearest of the centroids.
    fn kmeans(&mut self, k: &mut Kernel) {
        let d: usize = self.rng.random_range(2..=4);
        let cents: usize = self.rng.random_range(2..=5);
        k.params = vec![
            f("x", Len::Times(d)),
            f("cent", Len::Fixed(cents * d)),
            Param { name: "labels".into(), kind: PKind::U32sMut(Len::N) },
        ];
        let dl = || Expr::us(d as i64);
        let t = sub(idx("p", v("j")), idx("cent", add(mul(v("col"), dl()), v("j"))));
        let jl = Stmt::For {
            id: self.id(),
            head: Head::Range { var: "j".into(), lo: Expr::us(0), hi: dl() },
            body: vec![
                Stmt::Let { name: "t".into(), mutable: false, ty: None, init: t },
                Stmt::Assign(Place::Var("acc".into()), AOp::Add, mul(v("t"), v("t"))),
            ],
        };
        let cl = Stmt::For {
            id: self.id(),
            head: Head::Range { var: "col".into(), lo: Expr::us(0), hi: Expr::bin(Bin::Div, len("cent"), dl()) },
            body: vec![
                Stmt::Let { name: "acc".into(), mutable: true, ty: Some(Ty::F32), init: Expr::F(0.0) },
                jl,
                Stmt::If(
                    Expr::bin(Bin::Lt, v("acc"), v("best")),
                    vec![
                        Stmt::Assign(Place::Var("best".into()), AOp::Set, v("acc")),
                        Stmt::Assign(Place::Var("at".into()), AOp::Set, Expr::Cast(Box::new(v("col")), Ty::U32)),
                    ],
                    vec![],
                ),
            ],
        };
        let body = vec![
            Stmt::Slice {
                name: "p".into(),
                of: "x".into(),
                lo: mul(v("i"), dl()),
                hi: mul(add(v("i"), Expr::us(1)), dl()),
            },
            Stmt::Let { name: "best".into(), mutable: true, ty: None, init: Expr::Const("INFINITY") },
            Stmt::Let { name: "at".into(), mutable: true, ty: None, init: Expr::I(0, Ty::U32) },
            cl,
            Stmt::Assign(Place::Index("labels".into(), v("i")), AOp::Set, v("at")),
        ];
        let id = self.id();
        k.body.push(Stmt::For { id, head: Head::Range { var: "i".into(), lo: Expr::us(0), hi: len("labels") }, body });
    }

    /// A softmax-like pipeline: a maximum, an element-wise loop, a sum, a normalisation.
    fn pipeline(&mut self, k: &mut Kernel) {
        k.params = vec![f("a", Len::N), fm("out", Len::N), scalar("s")];
        let m = Chain {
            id: self.id(),
            src: Src::Copied("a".into()),
            names: vec!["x".into()],
            map: None,
            term: Term::FoldMax(Expr::Const("NEG_INFINITY")),
        };
        k.body.push(Stmt::Let { name: "best".into(), mutable: false, ty: None, init: Expr::Chain(Box::new(m)) });
        let e = if self.p(0.6) {
            call(Func::Exp, sub(v("x"), v("best")), vec![])
        } else {
            self.fexpr(2, &[v("x"), v("best"), v("s")])
        };
        let id = self.id();
        k.body.push(Stmt::For {
            id,
            head: Head::Items { out: Some(("o".into(), "out".into())), reads: vec![("x".into(), "a".into())] },
            body: vec![Stmt::Assign(Place::Deref("o".into()), AOp::Set, e)],
        });
        let total =
            Chain { id: self.id(), src: Src::Iter("out".into()), names: vec!["x".into()], map: None, term: Term::Sum };
        k.body.push(Stmt::Let {
            name: "total".into(),
            mutable: false,
            ty: Some(Ty::F32),
            init: Expr::Chain(Box::new(total)),
        });
        let id = self.id();
        k.body.push(Stmt::For {
            id,
            head: Head::Items { out: Some(("o".into(), "out".into())), reads: vec![] },
            body: vec![Stmt::Assign(Place::Deref("o".into()), AOp::Div, v("total"))],
        });
    }

    /// A loop-carried dependency: each element from the one before.
    fn carried(&mut self, k: &mut Kernel) {
        k.params = vec![f("a", Len::N), fm("out", Len::N), scalar("s")];
        let prev = idx("out", sub(v("i"), Expr::us(1)));
        let d = self.depth().min(3);
        let e = self.fexpr(d, &[prev, idx("a", v("i")), v("s")]);
        let id = self.id();
        k.body.push(Stmt::For {
            id,
            head: Head::Range { var: "i".into(), lo: Expr::us(1), hi: call(Func::UMin, len("out"), vec![len("a")]) },
            body: vec![Stmt::Assign(Place::Index("out".into(), v("i")), AOp::Set, e)],
        });
    }

    /// A reduction that may stop early.
    fn early_exit(&mut self, k: &mut Kernel) {
        k.params = vec![f("a", Len::N), scalar("s")];
        k.ret = Some(Ty::F32);
        k.body.push(Stmt::Let { name: "acc".into(), mutable: true, ty: Some(Ty::F32), init: Expr::F(0.0) });
        let c = self.cond(1, &[v("x"), v("s")]);
        let d = self.depth().min(3);
        let t = self.fexpr(d, &[v("x"), v("s")]);
        let id = self.id();
        k.body.push(Stmt::For {
            id,
            head: Head::Items { out: None, reads: vec![("x".into(), "a".into())] },
            body: vec![Stmt::If(c, vec![Stmt::Break], vec![]), Stmt::Assign(Place::Var("acc".into()), AOp::Add, t)],
        });
        k.tail = Some(v("acc"));
    }
}
