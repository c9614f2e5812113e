//! Shape checks shared by the three op backends, so a mismatch panics with the
//! same message whichever variant runs.
//!
//! Every function here panics with a message naming the op and both shapes;
//! the ops document this under `# Panics`.

/// Panics unless `a` and `b` have the same length.
#[inline]
#[track_caller]
pub(crate) fn same_len(op: &str, a: usize, b: usize) {
    if a != b {
        mismatch(format_args!("{op}: length mismatch: a has {a} elements, b has {b}"));
    }
}

/// The element count `rows × cols`, panicking with the op's name on overflow.
#[inline]
#[track_caller]
pub(crate) fn elements(op: &str, what: &str, rows: usize, cols: usize) -> usize {
    rows.checked_mul(cols).unwrap_or_else(|| mismatch(format_args!("{op}: {what} shape {rows}×{cols} overflows usize")))
}

/// Panics unless `len == rows × cols`.
#[inline]
#[track_caller]
pub(crate) fn matrix(op: &str, what: &str, len: usize, rows: usize, cols: usize) {
    let expected = elements(op, what, rows, cols);
    if len != expected {
        mismatch(format_args!("{op}: {what} is {rows}×{cols} = {expected} elements, but {len} were passed"));
    }
}

/// Checks `matmul(a, b, m, n, k)`: A is m×k, B is k×n.
#[inline]
#[track_caller]
pub(crate) fn matmul(a: usize, b: usize, m: usize, n: usize, k: usize) {
    matrix("matmul", "a (m×k)", a, m, k);
    matrix("matmul", "b (k×n)", b, k, n);
    elements("matmul", "c (m×n)", m, n);
}

/// Checks `matvec(a, x, m, n)`: A is m×n, x has n elements.
#[inline]
#[track_caller]
pub(crate) fn matvec(a: usize, x: usize, m: usize, n: usize) {
    matrix("matvec", "a (m×n)", a, m, n);
    if x != n {
        mismatch(format_args!("matvec: x has {x} elements, but a is {m}×{n} and needs {n}"));
    }
}

/// Checks `conv2d` and returns the valid-mode output shape `(rows − krows + 1, cols − kcols + 1)`.
///
/// A kernel larger than the input in either dimension gives an empty output
/// `(0, 0)`, as numpy's `convolve(mode="valid")` convention for empty results.
#[inline]
#[track_caller]
pub(crate) fn conv2d(
    input: usize,
    kernel: usize,
    rows: usize,
    cols: usize,
    krows: usize,
    kcols: usize,
) -> (usize, usize) {
    matrix("conv2d", "input (rows×cols)", input, rows, cols);
    matrix("conv2d", "kernel (krows×kcols)", kernel, krows, kcols);
    if krows == 0 || kcols == 0 {
        mismatch(format_args!("conv2d: kernel shape {krows}×{kcols} is empty"));
    }
    if krows > rows || kcols > cols {
        return (0, 0);
    }
    (rows - krows + 1, cols - kcols + 1)
}

#[cold]
#[inline(never)]
#[track_caller]
fn mismatch(msg: std::fmt::Arguments<'_>) -> ! {
    panic!("{msg}")
}
