//! The kernel's slice parameters, read from its signature: which loops' bindings a
//! `k::resident` call may pass a resident handle's host memory as.

use proc_macro2::Ident;
use syn::{FnArg, Pat, Signature, Type};

/// The kernel's slice parameters, by name: `&[T]` (shared) and `&mut [T]` (mutable), the
/// ones a `k::resident` call may pass a resident handle's host memory as.
pub(crate) struct ParamSlices {
    /// The `&[T]` parameters: name and identifier.
    pub(super) shared: Vec<(String, Ident)>,
    /// The `&mut [T]` parameters' names.
    pub(super) mutable: Vec<String>,
    idents: Vec<Ident>,
}

impl ParamSlices {
    pub(crate) fn of(sig: &Signature) -> ParamSlices {
        let mut p = ParamSlices { shared: Vec::new(), mutable: Vec::new(), idents: Vec::new() };
        for input in &sig.inputs {
            let FnArg::Typed(pt) = input else { continue };
            let Pat::Ident(id) = &*pt.pat else { continue };
            let Type::Reference(r) = &*pt.ty else { continue };
            if !matches!(&*r.elem, Type::Slice(_)) {
                continue;
            }
            let name = id.ident.to_string();
            if r.mutability.is_some() {
                p.mutable.push(name);
            } else {
                p.shared.push((name, id.ident.clone()));
            }
            p.idents.push(id.ident.clone());
        }
        p
    }

    pub(super) fn is_shared(&self, name: &Ident) -> bool {
        self.shared.iter().any(|(n, _)| name == n)
    }

    pub(super) fn is_mutable(&self, name: &Ident) -> bool {
        self.mutable.iter().any(|n| name == n)
    }

    pub(super) fn is_slice(&self, name: &Ident) -> bool {
        self.is_shared(name) || self.is_mutable(name)
    }

    /// The parameter named `name`, as the signature spells it.
    pub(super) fn ident(&self, name: &str) -> Ident {
        self.idents.iter().find(|i| *i == name).cloned().expect("a slice parameter")
    }
}
