//! Smaller kernels from a failing one, on the syntax tree (C-Reduce's and
//! Csmith's reducers work so too, but on text): drop a statement, take an
//! `if`'s branch, replace an expression by one of its operands or by a leaf.
//! The runner builds all the candidates of a round in one crate, keeps the
//! smallest that still fails the same way, and goes on from it.

use crate::ast::{exprs_mut, Expr, Kernel, Stmt};
use crate::print;

/// A kernel's size for the reducer: the length of its plain text.
pub fn size(k: &Kernel) -> usize {
    print::kernel_file(k, 0).len()
}

/// The candidates one step smaller than `k`, at most `limit`, largest cut first.
pub fn candidates(k: &Kernel, limit: usize) -> Vec<Kernel> {
    let mut out: Vec<Kernel> = Vec::new();
    // Statements: each removed, and each `if` replaced by its branches.
    let count = count_stmts(&k.body);
    for at in 0..count {
        let mut c = k.clone();
        let mut n = 0;
        if edit_stmt(&mut c.body, at, &mut n, &mut |_| Vec::new()) {
            out.push(c);
        }
        let mut c = k.clone();
        let mut n = 0;
        if edit_stmt(&mut c.body, at, &mut n, &mut |s| match s {
            Stmt::If(_, a, _) => a.clone(),
            Stmt::For { body, .. } => body.iter().filter(|s| matches!(s, Stmt::Let { .. })).cloned().collect(),
            s => vec![s.clone()],
        }) && c != *k
        {
            out.push(c);
        }
    }
    // Expressions: each replaced by an operand of the same kind, or by a literal.
    let mut total = 0;
    {
        let mut c = k.clone();
        exprs_mut(&mut c.body, &mut |_| total += 1);
    }
    for at in 0..total {
        for pick in 0..3 {
            let mut c = k.clone();
            let mut n = 0;
            let mut changed = false;
            exprs_mut(&mut c.body, &mut |e| {
                if n == at {
                    if let Some(r) = smaller(e, pick) {
                        *e = r;
                        changed = true;
                    }
                }
                n += 1;
            });
            if changed && c != *k {
                out.push(c);
            }
        }
    }
    if let Some(t) = &k.tail {
        for pick in 0..3 {
            if let Some(r) = smaller(t, pick) {
                let mut c = k.clone();
                c.tail = Some(r);
                out.push(c);
            }
        }
    }
    out.sort_by_key(size);
    out.dedup();
    out.truncate(limit);
    out
}

/// An operand of `e` (`pick` 0, 1) or a literal (2), if `e` is a float expression that has them.
fn smaller(e: &Expr, pick: usize) -> Option<Expr> {
    let floats = |x: &Expr| !matches!(x, Expr::I(..) | Expr::Len(_));
    match (e, pick) {
        (Expr::Bin(op, a, b), 0 | 1) if !op.compares() && !matches!(op, crate::ast::Bin::And | crate::ast::Bin::Or) => {
            let x = if pick == 0 { a } else { b };
            floats(x).then(|| (**x).clone())
        }
        (Expr::Call(_, r, args), 0) if floats(r) && !args.iter().any(|a| matches!(a, Expr::I(..))) => {
            Some((**r).clone())
        }
        (Expr::Call(_, _, args), 1) => args.first().filter(|a| matches!(a, Expr::Bin(..) | Expr::Call(..))).cloned(),
        (Expr::Neg(x), 0) => Some((**x).clone()),
        (Expr::If(_, a, b), 0 | 1) => Some(if pick == 0 { (**a).clone() } else { (**b).clone() }),
        (Expr::Cast(x, crate::ast::Ty::F32), 0) => match &**x {
            Expr::Cast(inner, _) => Some((**inner).clone()),
            _ => None,
        },
        (Expr::Bin(..) | Expr::Call(..) | Expr::Neg(_) | Expr::If(..), 2) => Some(Expr::F(1.0)),
        _ => None,
    }
}

fn count_stmts(stmts: &[Stmt]) -> usize {
    stmts
        .iter()
        .map(|s| {
            1 + match s {
                Stmt::If(_, a, b) => count_stmts(a) + count_stmts(b),
                Stmt::For { body, .. } => count_stmts(body),
                _ => 0,
            }
        })
        .sum()
}

/// Replaces statement number `at` (depth first) by `with(it)`; whether it was found.
fn edit_stmt(stmts: &mut Vec<Stmt>, at: usize, n: &mut usize, with: &mut dyn FnMut(&Stmt) -> Vec<Stmt>) -> bool {
    let mut i = 0;
    while i < stmts.len() {
        if *n == at {
            let replacement = with(&stmts[i]);
            let len = replacement.len();
            stmts.splice(i..=i, replacement);
            let _ = len;
            return true;
        }
        *n += 1;
        let found = match &mut stmts[i] {
            Stmt::If(_, a, b) => edit_stmt(a, at, n, with) || edit_stmt(b, at, n, with),
            Stmt::For { body, .. } => edit_stmt(body, at, n, with),
            _ => false,
        };
        if found {
            return true;
        }
        i += 1;
    }
    false
}
