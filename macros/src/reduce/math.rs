//! Vector math in lanes: inside a loop the SIMD variant puts in lanes, calls of
//! libm's functions on `f32` values become the runtime's branch-free formulas
//! (`adaptive_kernel::math`), so that the loop vectorises: a call stops it.
//!
//! Replaced, when the receiver (or the argument of the path form) is provably
//! an `f32` (see [`types`](super::types)):
//!
//! * `x.exp()`, `x.exp2()`, `x.ln()`, `x.log2()`, `x.tanh()`, `x.sin()`,
//!   `x.cos()` and `f32::exp(x)` …;
//! * `x.powf(c)` with a constant exponent `c` (a literal, a named constant, or
//!   arithmetic of them: `2.2`, `-0.5`, `1.0 / 2.4`, `GAMMA`), which includes
//!   the `sqrt`-based powers ½, −½ and 1½;
//! * `a.hypot(b)` (`√(a² + b²)` in `f64`, so without overflow).
//!
//! `sqrt`, `abs`, `min`, `max`, `mul_add` and the other inherent methods are
//! instructions already. `f64` calls, and anything whose type the macro cannot
//! see, keep libm. Each replacement is `::adaptive_kernel::__private::math::f(..)`
//! with the receiver as the first argument (dereferenced when it is a `&f32`),
//! so it has the type and the value (within the bound the runtime states) of
//! the call it replaces. The names replaced are reported with the loop.

use proc_macro2::{Ident, Span};
use quote::{quote, ToTokens};
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Lit, UnOp};

use crate::body::{Env, Ty, Width};
use crate::tokens::strip;

/// The replaced functions: the method's name (also the runtime's), and its arguments after
/// the receiver.
const FUNCTIONS: [(&str, usize); 9] =
    [("exp", 0), ("exp2", 0), ("ln", 0), ("log2", 0), ("tanh", 0), ("sin", 0), ("cos", 0), ("powf", 1), ("hypot", 1)];

fn function(name: &str) -> Option<(&'static str, usize)> {
    FUNCTIONS.iter().find(|(f, _)| *f == name).copied()
}

/// Whether `block` calls a method or an `f32::` function named like one this module replaces:
/// whether a loop without accumulators is worth looking at.
pub(crate) fn calls_any(block: &Block) -> bool {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            self.0 |= function(&m.method.to_string()).is_some();
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            self.0 |= f32_path(&c.func).is_some();
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut find = Find(false);
    find.visit_block(block);
    find.0
}

/// `f32::exp` and the like: the function.
fn f32_path(func: &Expr) -> Option<(&'static str, usize)> {
    let Expr::Path(p) = func else { return None };
    let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
    let plain =
        p.qself.is_none() && p.path.leading_colon.is_none() && p.path.segments.iter().all(|s| s.arguments.is_empty());
    match names.as_slice() {
        [ty, name] if plain && ty == "f32" => function(name),
        _ => None,
    }
}

/// Replaces the calls in `block` (a loop's body, whose names `env` types as at the start of
/// an iteration) and returns the functions replaced, each once, in order of first appearance.
pub(crate) fn replace(block: &mut Block, env: &Env) -> Vec<&'static str> {
    let mut walk = Replace { env: env.clone(), found: Vec::new() };
    walk.env.push();
    for stmt in &mut block.stmts {
        walk.visit_stmt_mut(stmt);
    }
    walk.found
}

struct Replace {
    env: Env,
    found: Vec<&'static str>,
}

impl Replace {
    /// The replacement of `e` when it is a call to replace, its arguments already walked.
    fn call(&mut self, e: &mut Expr) -> Option<Expr> {
        let (name, args) = match e {
            Expr::MethodCall(m) if m.turbofish.is_none() && m.attrs.is_empty() => {
                let (name, arity) = function(&m.method.to_string())?;
                // Typed before anything inside is replaced: the inference cannot read a replacement.
                let deref = match self.env.ty(&m.receiver) {
                    Ty::Float(Width::F32) => false,
                    Ty::FloatRef(Width::F32) => true,
                    _ => return None,
                };
                if m.args.len() != arity || !m.args.iter().all(|a| self.argument(name, a)) {
                    return None;
                }
                self.visit_expr_mut(&mut m.receiver);
                for a in &mut m.args {
                    self.visit_expr_mut(a);
                }
                // Without parentheses of its own: an argument needs none (and rustc would warn).
                let receiver = strip(&m.receiver);
                let first = match (deref, receiver) {
                    (false, receiver) => receiver.to_token_stream(),
                    (true, Expr::Path(_)) => quote!(*#receiver),
                    (true, receiver) => quote!(*(#receiver)),
                };
                let rest = m.args.iter();
                (name, quote!(#first #(, #rest)*))
            }
            Expr::Call(c) if c.attrs.is_empty() => {
                let (name, arity) = f32_path(&c.func)?;
                let receiver = c.args.first()?;
                if c.args.len() != arity + 1
                    || !matches!(self.env.ty(receiver), Ty::Float(Width::F32))
                    || !c.args.iter().skip(1).all(|a| self.argument(name, a))
                {
                    return None;
                }
                for a in &mut c.args {
                    self.visit_expr_mut(a);
                }
                let args = c.args.iter();
                (name, quote!(#(#args),*))
            }
            _ => return None,
        };
        if !self.found.contains(&name) {
            self.found.push(name);
        }
        let f = Ident::new(name, Span::call_site());
        // Parsed, not `Expr::Verbatim`: the lanes' rewrite must reach the reads in the arguments.
        Some(syn::parse2(quote!(::adaptive_kernel::__private::math::#f(#args))).expect("a call is an expression"))
    }

    /// Whether `a` may be the argument after the receiver: `powf`'s exponent a constant,
    /// `hypot`'s other side an `f32`.
    fn argument(&self, function: &str, a: &Expr) -> bool {
        let float = matches!(self.env.ty(a), Ty::Float(Width::F32 | Width::Any));
        match function {
            "powf" => constant(a, &self.env) && (float || !self.env.ty(a).is_known()),
            _ => matches!(self.env.ty(a), Ty::Float(Width::F32)),
        }
    }
}

/// A constant expression: float literals, named constants (`GAMMA`, `f32::consts::E`),
/// and their negations, parentheses and arithmetic.
fn constant(e: &Expr, env: &Env) -> bool {
    match e {
        Expr::Lit(l) => matches!(&l.lit, Lit::Float(_)),
        Expr::Paren(p) => constant(&p.expr, env),
        Expr::Group(g) => constant(&g.expr, env),
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => constant(&u.expr, env),
        Expr::Binary(b) => {
            use syn::BinOp::{Add, Div, Mul, Sub};
            matches!(b.op, Add(_) | Sub(_) | Mul(_) | Div(_)) && constant(&b.left, env) && constant(&b.right, env)
        }
        Expr::Path(_) => env.is_constant(e) || matches!(env.ty(e), Ty::Float(_)) && is_associated_const(e),
        _ => false,
    }
}

/// `f32::MAX`, `f32::consts::PI`: a path of more than one segment the inference types.
fn is_associated_const(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.path.segments.len() > 1)
}

impl VisitMut for Replace {
    fn visit_block_mut(&mut self, block: &mut Block) {
        self.env.push();
        for stmt in &mut block.stmts {
            self.visit_stmt_mut(stmt);
        }
        self.env.pop();
    }

    fn visit_local_mut(&mut self, local: &mut syn::Local) {
        // Bound as written: the inference cannot read a replacement.
        let written = local.clone();
        if let Some(init) = &mut local.init {
            self.visit_expr_mut(&mut init.expr);
            if let Some((_, diverge)) = &mut init.diverge {
                self.visit_expr_mut(diverge);
            }
        }
        self.env.bind_let(&written);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match self.call(e) {
            Some(replacement) => *e = replacement,
            None => syn::visit_mut::visit_expr_mut(self, e),
        }
    }

    fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
        self.env.push();
        for input in &c.inputs {
            self.env.poison_pat(input);
        }
        self.visit_expr_mut(&mut c.body);
        self.env.pop();
    }

    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        self.env.push();
        self.env.poison_pat(&arm.pat);
        syn::visit_mut::visit_arm_mut(self, arm);
        self.env.pop();
    }

    fn visit_expr_let_mut(&mut self, l: &mut syn::ExprLet) {
        self.visit_expr_mut(&mut l.expr);
        self.env.poison_pat(&l.pat);
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}

    fn visit_macro_mut(&mut self, _: &mut syn::Macro) {}
}

/// The replacement tokens of a whole body, for tests.
#[cfg(test)]
fn replaced(body: proc_macro2::TokenStream, env: &Env) -> (String, Vec<&'static str>) {
    let mut block: Block = syn::parse2(body).unwrap();
    let found = replace(&mut block, env);
    (block.into_token_stream().to_string(), found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn env() -> Env {
        crate::body::declared(&[
            ("x", parse_quote!(&[f32])),
            ("w", parse_quote!(&[f64])),
            ("s", parse_quote!(f32)),
            ("r", parse_quote!(&f32)),
            ("i", parse_quote!(usize)),
            ("d", parse_quote!(f64)),
        ])
    }

    #[test]
    fn f32_calls_become_the_runtimes() {
        let (body, found) = replaced(
            quote!({
                let e = (x[i] - s).exp();
                let t = f32::tanh(e) + r.sin() + x[i].powf(2.2) + s.hypot(x[i]) + e.ln().cos();
            }),
            &env(),
        );
        assert_eq!(found, ["exp", "tanh", "sin", "powf", "hypot", "ln", "cos"]);
        assert!(body.contains(":: adaptive_kernel :: __private :: math :: exp (x [i] - s)"), "{body}");
        assert!(body.contains("math :: tanh (e)"), "{body}");
        assert!(body.contains("math :: sin (* r)"), "{body}");
        assert!(body.contains("math :: powf (x [i] , 2.2)"), "{body}");
        assert!(body.contains("math :: cos (:: adaptive_kernel :: __private :: math :: ln (e))"), "{body}");
    }

    #[test]
    fn other_calls_keep_libm() {
        for body in [
            quote!({
                let a = w[i].exp();
            }),
            quote!({
                let a = d.sin();
            }),
            quote!({
                let a = f64::exp(d);
            }),
            quote!({
                let a = s.powf(x[i]);
            }),
            quote!({
                let a = s.exp_m1() + s.sqrt() + s.tan();
            }),
            quote!({
                let a = unknown.exp();
            }),
            quote!({
                let a = s.hypot(d);
            }),
        ] {
            let (text, found) = replaced(body, &env());
            assert!(found.is_empty(), "{text}");
        }
    }

    #[test]
    fn constant_exponents() {
        for exponent in [quote!(0.5), quote!(-0.5), quote!(1.0 / 2.4), quote!(GAMMA), quote!(f32::consts::E)] {
            let (text, found) = replaced(quote!({ let a = s.powf(#exponent); }), &env());
            assert_eq!(found, ["powf"], "{text}");
        }
    }
}
