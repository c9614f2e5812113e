//! The standard library's macros (and logging's) that the body analyses know
//! by name, and what their expansions may do: one list, read by `reduce`
//! (which names a macro may bind) and `split` (which calls a chunk may make).

/// Expand to code that only reads their arguments (and may print or panic).
const READING: [&str; 19] = [
    "vec",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "println",
    "print",
    "eprintln",
    "eprint",
    "format",
    "format_args",
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
    "matches",
    "dbg",
];

/// Also write to their first argument.
const WRITING: [&str; 2] = ["write", "writeln"];

/// `log`'s and `tracing`'s event macros: they read their arguments and record an event.
const LOGGING: [&str; 5] = ["trace", "debug", "info", "warn", "error"];

/// What a macro call may do, when its path names one of the macros above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Known {
    /// Reads its arguments (a standard macro, or logging).
    Reads,
    /// Reads its arguments and writes to the first (`write!`, `writeln!`).
    Writes,
}

/// What the macro at `path` may do: `name!`, `std::name!`, `core::name!` for the
/// standard ones, `name!`, `log::name!`, `tracing::name!` for logging; `None` for
/// any other macro.
pub(crate) fn known(path: &syn::Path) -> Option<Known> {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let std = |name: &str| match name {
        n if READING.contains(&n) => Some(Known::Reads),
        n if WRITING.contains(&n) => Some(Known::Writes),
        _ => None,
    };
    match segments.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [name] => std(name).or_else(|| LOGGING.contains(name).then_some(Known::Reads)),
        ["std" | "core" | "alloc", name] => std(name),
        ["log" | "tracing", name] if LOGGING.contains(name) => Some(Known::Reads),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn macros_by_path() {
        assert_eq!(known(&parse_quote!(println)), Some(Known::Reads));
        assert_eq!(known(&parse_quote!(::core::assert)), Some(Known::Reads));
        assert_eq!(known(&parse_quote!(std::writeln)), Some(Known::Writes));
        assert_eq!(known(&parse_quote!(tracing::info)), Some(Known::Reads));
        assert_eq!(known(&parse_quote!(std::info)), None);
        assert_eq!(known(&parse_quote!(my_macro)), None);
        assert_eq!(known(&parse_quote!(my::println)), None);
    }
}
