//! A lowered loop body printed as the generated part of its shader (the
//! runtime prefixes `math.wgsl` and `loops.wgsl`, whose bindings, uniform layout
//! and `lp_` functions this relies on): one invocation per unit of the loop,
//! the body between its index or items and the per-workgroup combination of
//! the reductions it carries.
//!
//! Rust's meaning where WGSL's differs is the prelude's (`lp_max`, `lp_round`,
//! `lp_powi`, checked `usize` arithmetic, casts, …); float literals are printed
//! so that they are the `f32` rustc makes of them: an integral value below 2²⁴
//! as `3.0f`, anything else by its bits (`bitcast<f32>(0x3dcccccdu)`), never as
//! a decimal a WGSL compiler would round again.

use std::fmt::Write;

use super::ir::{AccOp, Bin, Elem, Func, Place, Un, View, ViewId, E, S};
use super::lower::{Lowered, R};
use super::ty::Ty;
use crate::reason::Reason;

/// The printed shader and the types the runtime checks the captured values against.
pub(super) struct Shader {
    /// The generated part of the WGSL module.
    pub text: String,
    /// Each argument's type, in order.
    pub scalars: Vec<Ty>,
    /// Each reduction's operator and accumulator type, in order.
    pub reductions: Vec<(AccOp, Ty)>,
}

/// Prints `l` (its types resolved), or the word for what WGSL cannot say as Rust means it.
pub(super) fn print(l: &mut Lowered) -> R<Shader> {
    let arg_types: Vec<usize> = l.args.iter().map(|a| a.tv).collect();
    let scalars = arg_types.into_iter().map(|tv| l.types.resolve(tv)).collect::<R<Vec<_>>>()?;
    let mut reductions = Vec::new();
    for a in &l.accs {
        let ty = l.types.resolve(a.tv)?;
        if ty == Ty::Bool || (ty != Ty::F32 && a.op != AccOp::Sum) {
            return Err(Reason::Type);
        }
        reductions.push((a.op, ty));
    }
    let tiles = super::tile::plan(l, reductions.len());
    let mut p = Printer { l, text: String::new(), indent: 2, tiles: &tiles };
    let header = p.l.header.clone();
    p.stmts(&header)?;
    let stmts = p.l.body.clone();
    if p.l.wrapped {
        p.line("loop {");
        p.indent += 1;
        p.stmts(&stmts)?;
        p.line("break;");
        p.indent -= 1;
        p.line("}");
    } else {
        p.stmts(&stmts)?;
    }
    let inner = std::mem::take(&mut p.text);
    let l = &*p.l;

    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "const LP_BINDINGS: u32 = {}u;", l.bindings.len());
    let _ = writeln!(w, "const LP_REDUCTIONS: u32 = {}u;", reductions.len());
    for (k, b) in l.bindings.iter().enumerate() {
        let access = if b.written { "read_write" } else { "read" };
        let _ =
            writeln!(w, "@group(0) @binding({}) var<storage, {access}> b{k}: array<{}>;", k + 2, b.elem.ty().wgsl());
    }
    for (r, (_, ty)) in reductions.iter().enumerate() {
        let _ = writeln!(w, "var<workgroup> lp_red{r}: array<{}, LP_WG>;", ty.wgsl());
    }
    // Slices every invocation walks, kept in workgroup memory when they fit (`tile.rs`).
    for &k in &tiles.bindings {
        let ty = l.bindings[k].elem.ty().wgsl();
        let words = tiles.words;
        let _ = writeln!(w, "var<workgroup> lp_tile{k}: array<{ty}, {words}>;");
        let _ = writeln!(w, "var<private> lp_tiled{k}: bool;");
        let _ = writeln!(
            w,
            "fn lp_ld{k}(i: u32) -> {ty} {{\n    if (lp_tiled{k}) {{\n        return lp_tile{k}[i];\n    }}\n    return b{k}[i];\n}}"
        );
    }
    let _ = writeln!(w, "@compute @workgroup_size(LP_WG)");
    let _ = writeln!(
        w,
        "fn main(@builtin(workgroup_id) lp_wid: vec3<u32>, @builtin(num_workgroups) lp_nwg: vec3<u32>, \
         @builtin(local_invocation_index) lp_lid: u32) {{"
    );
    let _ = writeln!(w, "    let lp_group = lp_wid.y * lp_nwg.x + lp_wid.x;");
    let _ = writeln!(w, "    let lp_g = lp_base() + lp_group * LP_WG + lp_lid;");
    for &k in &tiles.bindings {
        let words = tiles.words;
        let _ = writeln!(w, "    lp_tiled{k} = lp_len({k}u) <= {words}u;");
        let _ = writeln!(w, "    if (lp_tiled{k}) {{");
        let _ = writeln!(w, "        for (var lp_t = lp_lid; lp_t < lp_len({k}u); lp_t = lp_t + LP_WG) {{");
        let _ = writeln!(w, "            lp_tile{k}[lp_t] = b{k}[lp_t];");
        let _ = writeln!(w, "        }}");
        let _ = writeln!(w, "    }}");
    }
    if !tiles.bindings.is_empty() {
        let _ = writeln!(w, "    workgroupBarrier();");
    }
    for (k, ty) in scalars.iter().enumerate() {
        let value = match ty {
            Ty::F32 => format!("bitcast<f32>(lp_arg({k}u))"),
            Ty::I32 => format!("bitcast<i32>(lp_arg({k}u))"),
            Ty::U32 | Ty::Usize => format!("lp_arg({k}u)"),
            Ty::Bool => format!("lp_arg({k}u) != 0u"),
        };
        let _ = writeln!(w, "    let c{k}: {} = {value};", ty.wgsl());
    }
    for (r, (op, ty)) in reductions.iter().enumerate() {
        let _ = writeln!(w, "    var a{r}: {} = {};", ty.wgsl(), identity(*op, *ty));
    }
    let _ = writeln!(w, "    if (lp_g < lp_count()) {{");
    w.push_str(&inner);
    let _ = writeln!(w, "    }}");
    for (r, (op, ty)) in reductions.iter().enumerate() {
        let combine = combine(*op, *ty, &format!("lp_red{r}[lp_lid]"), &format!("lp_red{r}[lp_lid + lp_s]"));
        let bits = match ty {
            Ty::F32 | Ty::I32 => format!("bitcast<u32>(lp_red{r}[0])"),
            _ => format!("lp_red{r}[0]"),
        };
        let _ = writeln!(w, "    lp_red{r}[lp_lid] = a{r};");
        let _ = writeln!(w, "    workgroupBarrier();");
        let _ = writeln!(w, "    for (var lp_s = LP_WG / 2u; lp_s > 0u; lp_s = lp_s >> 1u) {{");
        let _ = writeln!(w, "        if (lp_lid < lp_s) {{");
        let _ = writeln!(w, "            lp_red{r}[lp_lid] = {combine};");
        let _ = writeln!(w, "        }}");
        let _ = writeln!(w, "        workgroupBarrier();");
        let _ = writeln!(w, "    }}");
        let _ = writeln!(w, "    if (lp_lid == 0u) {{");
        let _ = writeln!(w, "        lp_partial(lp_base() / LP_WG + lp_group, {r}u, {bits});");
        let _ = writeln!(w, "    }}");
    }
    out.push_str("}\n");
    Ok(Shader { text: out, scalars, reductions })
}

/// The starting value of a reduction's partial: its operator's identity.
fn identity(op: AccOp, ty: Ty) -> &'static str {
    match (op, ty) {
        (AccOp::Sum, Ty::F32) => "bitcast<f32>(0x80000000u)",
        (AccOp::Sum, Ty::I32) => "0i",
        (AccOp::Sum, _) => "0u",
        (AccOp::Product, _) => "1.0f",
        (AccOp::Max | AccOp::Min, _) => "nan()",
    }
}

/// `a OP b` for a reduction.
fn combine(op: AccOp, ty: Ty, a: &str, b: &str) -> String {
    match (op, ty) {
        (AccOp::Sum, Ty::Usize) => format!("lp_uadd({a}, {b})"),
        (AccOp::Sum, _) => format!("({a} + {b})"),
        (AccOp::Product, _) => format!("({a} * {b})"),
        (AccOp::Max, _) => format!("lp_max({a}, {b})"),
        (AccOp::Min, _) => format!("lp_min({a}, {b})"),
    }
}

/// An `f32` literal: the value rustc makes of `digits`, exactly.
fn float(digits: &str) -> R<String> {
    let v: f32 = digits.parse().map_err(|_| Reason::Type)?;
    if v.is_finite() && v == v.trunc() && v.abs() < 16_777_216.0 && !(v == 0.0 && v.is_sign_negative()) {
        Ok(format!("{v:.1}f"))
    } else {
        Ok(format!("bitcast<f32>(0x{:08x}u)", v.to_bits()))
    }
}

/// `l OP r` in `ty`, as Rust computes it.
fn binary(op: Bin, ty: Ty, l: &str, r: &str) -> R<String> {
    let sym = match op {
        Bin::Add => "+",
        Bin::Sub => "-",
        Bin::Mul => "*",
        Bin::Div => "/",
        Bin::Rem => "%",
        Bin::And => "&&",
        Bin::Or => "||",
        Bin::BitAnd => "&",
        Bin::BitOr => "|",
        Bin::BitXor => "^",
        Bin::Shl => "<<",
        Bin::Shr => ">>",
        Bin::Eq => "==",
        Bin::Ne => "!=",
        Bin::Lt => "<",
        Bin::Le => "<=",
        Bin::Gt => ">",
        Bin::Ge => ">=",
    };
    let plain = || format!("({l} {sym} {r})");
    Ok(match (ty, op) {
        (_, op) if op.is_comparison() && (ty != Ty::Bool || matches!(op, Bin::Eq | Bin::Ne)) => plain(),
        // Each float result through `lp_fin`: a NaN or infinity it creates runs the call on the host.
        (Ty::F32, Bin::Add | Bin::Sub | Bin::Mul) => format!("lp_fin{}", plain()),
        // A zero divisor too (`lp_div`): a driver may fold `0 / b` or `b / b` before `lp_fin` sees it.
        (Ty::F32, Bin::Div) => format!("lp_div({l}, {r})"),
        (Ty::Usize, Bin::Add) => format!("lp_uadd({l}, {r})"),
        (Ty::Usize, Bin::Sub) => format!("lp_usub({l}, {r})"),
        (Ty::Usize, Bin::Mul) => format!("lp_umul({l}, {r})"),
        (Ty::Usize | Ty::U32, Bin::Div) => format!("lp_udiv({l}, {r})"),
        (Ty::Usize | Ty::U32, Bin::Rem) => format!("lp_urem({l}, {r})"),
        (Ty::I32, Bin::Div) => format!("lp_idiv({l}, {r})"),
        (Ty::I32, Bin::Rem) => format!("lp_irem({l}, {r})"),
        (Ty::I32 | Ty::U32, Bin::Add | Bin::Sub | Bin::Mul) => plain(),
        (Ty::I32 | Ty::U32 | Ty::Usize, Bin::BitAnd | Bin::BitOr | Bin::BitXor) => plain(),
        (Ty::I32 | Ty::U32, Bin::Shl | Bin::Shr) => format!("({l} {sym} (u32({r}) & 31u))"),
        (Ty::Usize, Bin::Shl | Bin::Shr) => return Err(Reason::Size),
        (Ty::Bool, Bin::And | Bin::Or | Bin::BitAnd | Bin::BitOr) => plain(),
        (Ty::Bool, Bin::BitXor) => format!("({l} != {r})"),
        // `%` of floats (Rust's is exact, WGSL's is not), and what Rust does not compile.
        _ => return Err(Reason::Syntax),
    })
}

struct Printer<'a> {
    l: &'a mut Lowered,
    text: String,
    indent: usize,
    tiles: &'a super::tile::Tiles,
}

impl Printer<'_> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.text.push_str("    ");
        }
        self.text.push_str(s);
        self.text.push('\n');
    }

    fn ty(&mut self, tv: usize) -> R<Ty> {
        self.l.types.resolve(tv)
    }

    fn view(&self, view: ViewId) -> View {
        self.l.views[view].clone()
    }

    fn len(&self, view: ViewId) -> String {
        let v = self.view(view);
        match v.len {
            Some(len) => format!("v{len}"),
            None => format!("lp_len({}u)", v.binding),
        }
    }

    /// The element `index` of `view`, checked against its length.
    fn elem(&mut self, view: ViewId, index: &E) -> R<String> {
        let index = self.expr(index)?;
        let v = self.view(view);
        let len = self.len(view);
        let at = match v.base {
            Some(base) => format!("v{base} + lp_at({index}, {len})"),
            None => format!("lp_at({index}, {len})"),
        };
        Ok(if self.tiles.has(v.binding) {
            format!("lp_ld{}({at})", v.binding)
        } else {
            format!("b{}[{at}]", v.binding)
        })
    }

    fn expr(&mut self, e: &E) -> R<String> {
        Ok(match e {
            E::Float(digits, tv) => match self.ty(*tv)? {
                Ty::F32 => float(digits)?,
                _ => return Err(Reason::Type),
            },
            E::Int(v, tv) => match self.ty(*tv)? {
                Ty::I32 if *v <= i32::MAX as u128 => format!("{v}i"),
                // `-2147483648i32`: the negation wraps to itself.
                Ty::I32 if *v == 1 << 31 => "bitcast<i32>(0x80000000u)".into(),
                Ty::U32 | Ty::Usize if *v <= u128::from(u32::MAX) => format!("{v}u"),
                Ty::I32 | Ty::U32 | Ty::Usize => return Err(Reason::Size),
                _ => return Err(Reason::Type),
            },
            E::Bool(b) => b.to_string(),
            E::Local(v) => format!("v{v}"),
            E::Arg(k) => format!("c{k}"),
            E::Raw(s) => (*s).to_string(),
            E::Load(view, index) => self.elem(*view, index)?,
            E::Len(view) => self.len(*view),
            E::Unary(Un::Neg, e, _) => format!("(-{})", self.expr(e)?),
            E::Unary(Un::Not, e, tv) => match self.ty(*tv)? {
                Ty::Bool => format!("(!{})", self.expr(e)?),
                Ty::F32 => return Err(Reason::Type),
                _ => format!("(~{})", self.expr(e)?),
            },
            E::Binary(op, l, r, tv) => {
                let ty = self.ty(*tv)?;
                let (l, r) = (self.expr(l)?, self.expr(r)?);
                binary(*op, ty, &l, &r)?
            }
            E::Cast(e, from, to) => {
                let from = self.ty(*from)?;
                let e = self.expr(e)?;
                match (from, *to) {
                    (a, b) if a == b => e,
                    (Ty::U32 | Ty::Usize, Ty::U32 | Ty::Usize) => e,
                    (Ty::F32, Ty::I32) => format!("lp_f2i({e})"),
                    (Ty::F32, Ty::U32) => format!("lp_f2u({e})"),
                    (Ty::F32, Ty::Usize) => format!("lp_f2usize({e})"),
                    (Ty::I32 | Ty::U32 | Ty::Usize, Ty::F32) => format!("f32({e})"),
                    (Ty::I32, Ty::U32) => format!("bitcast<u32>({e})"),
                    (Ty::I32, Ty::Usize) => format!("lp_i2usize({e})"),
                    (Ty::U32 | Ty::Usize, Ty::I32) => format!("bitcast<i32>({e})"),
                    (Ty::Bool, Ty::I32) => format!("i32({e})"),
                    (Ty::Bool, Ty::U32 | Ty::Usize) => format!("u32({e})"),
                    _ => return Err(Reason::Type),
                }
            }
            E::Call(f, args, tv) => {
                let ty = self.ty(*tv)?;
                let args = args.iter().map(|a| self.expr(a)).collect::<R<Vec<_>>>()?.join(", ");
                let name = match (f, ty) {
                    (Func::Sqrt, _) => "lp_sqrt",
                    (Func::Abs, Ty::F32) => "lp_abs",
                    (Func::Abs, _) => "abs",
                    (Func::Exp, _) => "exp_acc",
                    (Func::Ln, _) => "lp_ln",
                    (Func::Sin, _) => "lp_sin",
                    (Func::Cos, _) => "lp_cos",
                    (Func::Tanh, _) => "tanh_acc",
                    (Func::Powi, _) => "lp_powi",
                    (Func::Powf, _) => "lp_powf",
                    (Func::Min, Ty::F32) => "lp_min",
                    (Func::Min, _) => "min",
                    (Func::Max, Ty::F32) => "lp_max",
                    (Func::Max, _) => "max",
                    (Func::Clamp, Ty::F32) => "lp_clamp",
                    (Func::Clamp, Ty::I32) => "lp_iclamp",
                    (Func::Clamp, _) => "lp_uclamp",
                    (Func::MulAdd, _) => "fma",
                    (Func::Floor, _) => "floor",
                    (Func::Ceil, _) => "ceil",
                    (Func::Round, _) => "lp_round",
                    (Func::Recip, _) => return Ok(format!("lp_div(1.0f, {args})")),
                    (Func::IsNan, _) => "is_nan",
                    (Func::IsFinite, _) => "lp_is_finite",
                    (Func::IsInfinite, _) => "lp_is_infinite",
                };
                let creates = matches!(f, Func::Sqrt | Func::Exp | Func::Ln | Func::Powi | Func::Powf | Func::MulAdd);
                if creates && ty == Ty::F32 {
                    format!("lp_fin({name}({args}))")
                } else {
                    format!("{name}({args})")
                }
            }
        })
    }

    fn stmts(&mut self, stmts: &[S]) -> R<()> {
        stmts.iter().try_for_each(|s| self.stmt(s))
    }

    fn place(&mut self, place: &Place) -> R<String> {
        match place {
            Place::Local(v) => Ok(format!("v{v}")),
            Place::Elem(view, index) => self.elem(*view, index),
        }
    }

    fn stmt(&mut self, s: &S) -> R<()> {
        match s {
            S::Decl(v, init) => {
                let ty = self.ty(self.l.vars[*v])?.wgsl();
                let line = match init {
                    Some(e) => format!("var v{v}: {ty} = {};", self.expr(e)?),
                    None => format!("var v{v}: {ty};"),
                };
                self.line(&line);
            }
            S::Assign(place, e) => {
                let line = format!("{} = {};", self.place(place)?, self.expr(e)?);
                self.line(&line);
            }
            S::Compound(place, op, e, tv) => {
                let ty = self.ty(*tv)?;
                let value = self.expr(e)?;
                match place {
                    Place::Local(v) => {
                        let line = format!("v{v} = {};", binary(*op, ty, &format!("v{v}"), &value)?);
                        self.line(&line);
                    }
                    Place::Elem(..) => {
                        // The element is found once, as Rust's `x[i] op= v` finds it.
                        let at = self.place(place)?;
                        let line = format!("*lp_p = {};", binary(*op, ty, "*lp_p", &value)?);
                        self.line("{");
                        self.indent += 1;
                        self.line(&format!("let lp_p = &{at};"));
                        self.line(&line);
                        self.indent -= 1;
                        self.line("}");
                    }
                }
            }
            S::Eval(e) => {
                let line = format!("_ = {};", self.expr(e)?);
                self.line(&line);
            }
            S::If(c, then, els) => {
                let line = format!("if ({}) {{", self.expr(c)?);
                self.line(&line);
                self.block(then)?;
                if !els.is_empty() {
                    self.line("} else {");
                    self.block(els)?;
                }
                self.line("}");
            }
            S::Loop { body, next, until } => {
                self.line("loop {");
                self.block(body)?;
                if !next.is_empty() || until.is_some() {
                    self.indent += 1;
                    self.line("continuing {");
                    self.block(next)?;
                    if let Some(until) = until {
                        self.indent += 1;
                        let line = format!("break if {};", self.expr(until)?);
                        self.line(&line);
                        self.indent -= 1;
                    }
                    self.line("}");
                    self.indent -= 1;
                }
                self.line("}");
            }
            S::Break => self.line("break;"),
            S::Continue => self.line("continue;"),
            S::Step(v) => {
                let one = match self.ty(self.l.vars[*v])? {
                    Ty::I32 => "1i",
                    Ty::U32 | Ty::Usize => "1u",
                    _ => return Err(Reason::Type),
                };
                self.line(&format!("v{v} = v{v} + {one};"));
            }
            S::Acc { acc, value, subtract } => {
                let (op, tv) = (self.l.accs[*acc].op, self.l.accs[*acc].tv);
                let ty = self.ty(tv)?;
                let value = self.expr(value)?;
                let a = format!("a{acc}");
                let line = match (op, subtract) {
                    (AccOp::Sum, true) => format!("{a} = {};", binary(Bin::Sub, ty, &a, &value)?),
                    (op, _) => format!("{a} = {};", combine(op, ty, &a, &value)),
                };
                self.line(&line);
            }
            S::Sub { view, parent, lo, hi } => {
                let v = self.view(*view);
                let (base, len) = (v.base.expect("a sub-slice has a base"), v.len.expect("and a length"));
                let lo = self.expr(lo)?;
                let hi = match hi {
                    Some(hi) => self.expr(hi)?,
                    None => self.len(*parent),
                };
                let parent_len = self.len(*parent);
                let parent_base = self.view(*parent).base.map(|b| format!("v{b} + ")).unwrap_or_default();
                self.line(&format!("let lp_lo{view} = {lo};"));
                self.line(&format!("var v{len}: u32 = lp_sub(lp_lo{view}, {hi}, {parent_len});"));
                self.line(&format!("var v{base}: u32 = {parent_base}lp_lo{view};"));
            }
            S::Row { view, parent, unit, width, exact } => {
                let v = self.view(*view);
                let (base, len) = (v.base.expect("a row has a base"), v.len.expect("and a length"));
                let unit = self.expr(unit)?;
                let width = self.expr(width)?;
                let parent_len = self.len(*parent);
                self.line(&format!("let lp_w{view} = {width};"));
                self.line(&format!("var v{base}: u32 = lp_umul({unit}, lp_w{view});"));
                if *exact {
                    self.line(&format!("var v{len}: u32 = lp_w{view};"));
                } else {
                    self.line(&format!("var v{len}: u32 = min(lp_w{view}, {parent_len} - v{base});"));
                }
            }
        }
        Ok(())
    }

    fn block(&mut self, stmts: &[S]) -> R<()> {
        self.indent += 1;
        let result = self.stmts(stmts);
        self.indent -= 1;
        result
    }
}

impl Elem {
    /// The runtime's `Elem`.
    pub(super) fn runtime(self) -> proc_macro2::TokenStream {
        let name = match self {
            Elem::F32 => quote::quote!(F32),
            Elem::I32 => quote::quote!(I32),
            Elem::U32 => quote::quote!(U32),
            Elem::Usize => quote::quote!(Usize),
        };
        quote::quote!(::adaptive_kernel::__private::gpu_loop::Elem::#name)
    }
}
