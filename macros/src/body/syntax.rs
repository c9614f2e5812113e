//! What the analyses ask of tokens and expressions apart from their walks: the
//! names an expression or a macro's tokens read, whether an expression is pure,
//! the one identifier an expression names.

use proc_macro2::{Ident, TokenStream, TokenTree};
use syn::visit::Visit;
use syn::Expr;

/// The name an item binds in a block's scope.
pub(crate) fn item_name(item: &syn::Item) -> Option<String> {
    match item {
        syn::Item::Fn(f) => Some(f.sig.ident.to_string()),
        syn::Item::Const(c) => Some(c.ident.to_string()),
        syn::Item::Static(s) => Some(s.ident.to_string()),
        _ => None,
    }
}

/// The names `e` reads as variables (not its field names).
pub(crate) fn path_names(e: &Expr) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if let Some(i) = p.path.get_ident() {
                self.0.push(i.to_string());
            }
        }
    }
    let mut names = Names(Vec::new());
    names.visit_expr(e);
    names.0
}

/// An expression with no effect that can be evaluated again with the same result (a row
/// width, evaluated once before a loop and again on the device): names and paths (a
/// constant), fields, integer literals, arithmetic, casts and `len()`.
pub(crate) fn pure(e: &Expr) -> bool {
    match e {
        Expr::Path(p) => p.qself.is_none() && p.path.segments.iter().all(|s| s.arguments.is_empty()),
        Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(_), .. }) => true,
        Expr::Field(f) => pure(&f.base),
        Expr::Paren(p) => pure(&p.expr),
        Expr::Group(g) => pure(&g.expr),
        Expr::Cast(c) => pure(&c.expr),
        Expr::Binary(b) => {
            use syn::BinOp::{Add, Div, Mul, Rem, Sub};
            matches!(b.op, Add(_) | Sub(_) | Mul(_) | Div(_) | Rem(_)) && pure(&b.left) && pure(&b.right)
        }
        Expr::MethodCall(m) => m.method == "len" && m.args.is_empty() && pure(&m.receiver),
        _ => false,
    }
}

/// A name in `SCREAMING_CASE` (`EPS`, `G2`): a constant's or a static's, by Rust's convention.
pub(crate) fn is_screaming(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Every identifier in `tokens`, also inside groups.
pub(crate) fn idents(tokens: TokenStream) -> Vec<Ident> {
    let mut out = Vec::new();
    for tt in tokens {
        match tt {
            TokenTree::Ident(i) => out.push(i),
            TokenTree::Group(g) => out.extend(idents(g.stream())),
            _ => {}
        }
    }
    out
}

/// The names a format string captures inline (`"{x}"`, `"{x:.3}"`), in any string literal of
/// `tokens`, spanned at the literal (where the capture resolves them).
pub(crate) fn format_names(tokens: TokenStream) -> Vec<Ident> {
    let mut out = Vec::new();
    for tt in tokens {
        match tt {
            TokenTree::Literal(l) => {
                let span = l.span();
                let Ok(syn::Lit::Str(s)) = syn::parse2::<syn::Lit>(TokenTree::Literal(l).into()) else { continue };
                let text = s.value();
                let mut rest = text.as_str();
                while let Some(open) = rest.find('{') {
                    rest = &rest[open + 1..];
                    if rest.starts_with('{') {
                        rest = &rest[1..];
                        continue;
                    }
                    let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') {
                        out.push(Ident::new(&name, span));
                    }
                }
            }
            TokenTree::Group(g) => out.extend(format_names(g.stream())),
            _ => {}
        }
    }
    out
}

/// `x` as an expression: a path of one identifier.
pub(crate) fn plain_ident(e: &Expr) -> Option<Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => p.path.get_ident().cloned(),
        Expr::Paren(p) => plain_ident(&p.expr),
        Expr::Group(g) => plain_ident(&g.expr),
        _ => None,
    }
}

/// Whether `block` holds an expression for which `is` holds, at any depth (in a nested loop or
/// closure too).
pub(crate) fn holds_expr(block: &syn::Block, is: impl Fn(&Expr) -> bool) -> bool {
    struct Find<F> {
        is: F,
        found: bool,
    }
    impl<'ast, F: Fn(&Expr) -> bool> Visit<'ast> for Find<F> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            self.found |= (self.is)(e);
            syn::visit::visit_expr(self, e);
        }
    }
    let mut find = Find { is, found: false };
    find.visit_block(block);
    find.found
}
