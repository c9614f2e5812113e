//! Shape checks shared by the four op backends, so a mismatch panics with the
//! same message whichever variant runs.
//!
//! Every function here panics with a message naming the op and both shapes;
//! the ops document this under `# Panics`. The checks of ops that produce an
//! array return their [`Output`]: the length of the result, which the
//! returning form allocates and the `_into` form requires of its `out`.

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

/// The result an op produces, as its input check found it: how many
/// elements, and how to say what an `out` of another length should have been.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Output {
    op: &'static str,
    len: usize,
    shape: OutShape,
}

#[derive(Clone, Copy, Debug)]
enum OutShape {
    /// One element per element of the input `a`.
    LikeA,
    /// A `rows × cols` matrix, named `what` in messages.
    Matrix { what: &'static str, rows: usize, cols: usize },
    /// `matvec`'s y: one element per row of an `m × n` A.
    PerRow { m: usize, n: usize },
}

impl Output {
    /// The number of elements of the result.
    #[inline]
    pub(crate) fn len(self) -> usize {
        self.len
    }

    /// The result's shape as (rows, columns): a matrix's, else `(len, 1)`.
    #[inline]
    pub(crate) fn dims(self) -> (usize, usize) {
        match self.shape {
            OutShape::Matrix { rows, cols, .. } => (rows, cols),
            OutShape::LikeA | OutShape::PerRow { .. } => (self.len, 1),
        }
    }

    /// Panics unless an output of `out` elements is the right length.
    #[inline]
    #[track_caller]
    pub(crate) fn check(self, out: usize) {
        if out == self.len {
            return;
        }
        let Output { op, len, shape } = self;
        match shape {
            OutShape::LikeA => mismatch(format_args!("{op}: length mismatch: a has {len} elements, out has {out}")),
            OutShape::Matrix { what, rows, cols } => {
                mismatch(format_args!("{op}: {what} is {rows}×{cols} = {len} elements, but {out} were passed"))
            }
            OutShape::PerRow { m, n } => {
                mismatch(format_args!("{op}: out has {out} elements, but a is {m}×{n} and y needs {m}"))
            }
        }
    }
}

/// An element-wise op of one input `a` of `a` elements.
#[inline]
pub(crate) fn unary(op: &'static str, a: usize) -> Output {
    Output { op, len: a, shape: OutShape::LikeA }
}

/// Checks an element-wise op of `a` and `b`: panics unless they have the same length.
#[inline]
#[track_caller]
pub(crate) fn binary(op: &'static str, a: usize, b: usize) -> Output {
    same_len(op, a, b);
    unary(op, a)
}

/// Checks `matmul(a, b, m, n, k)`: A is m×k, B is k×n; C is m×n.
#[inline]
#[track_caller]
pub(crate) fn matmul(a: usize, b: usize, m: usize, n: usize, k: usize) -> Output {
    matrix("matmul", "a (m×k)", a, m, k);
    matrix("matmul", "b (k×n)", b, k, n);
    let len = elements("matmul", "c (m×n)", m, n);
    Output { op: "matmul", len, shape: OutShape::Matrix { what: "out (m×n)", rows: m, cols: n } }
}

/// Checks `matvec(a, x, m, n)`: A is m×n, x has n elements; y has m.
#[inline]
#[track_caller]
pub(crate) fn matvec(a: usize, x: usize, m: usize, n: usize) -> Output {
    matrix("matvec", "a (m×n)", a, m, n);
    if x != n {
        mismatch(format_args!("matvec: x has {x} elements, but a is {m}×{n} and needs {n}"));
    }
    Output { op: "matvec", len: m, shape: OutShape::PerRow { m, n } }
}

/// Checks `transpose(a, rows, cols)`: A is rows×cols; its transpose cols×rows.
#[inline]
#[track_caller]
pub(crate) fn transpose(a: usize, rows: usize, cols: usize) -> Output {
    matrix("transpose", "a (rows×cols)", a, rows, cols);
    Output { op: "transpose", len: a, shape: OutShape::Matrix { what: "out (cols×rows)", rows: cols, cols: rows } }
}

/// Checks `conv2d` and returns its output, of the valid-mode shape
/// `(rows − krows + 1) × (cols − kcols + 1)` ([`Output::dims`]).
///
/// A kernel larger than the input in either dimension gives an empty output
/// `(0, 0)`, as numpy's `convolve(mode="valid")` convention for empty results.
#[inline]
#[track_caller]
pub(crate) fn conv2d(input: usize, kernel: usize, rows: usize, cols: usize, krows: usize, kcols: usize) -> Output {
    matrix("conv2d", "input (rows×cols)", input, rows, cols);
    matrix("conv2d", "kernel (krows×kcols)", kernel, krows, kcols);
    if krows == 0 || kcols == 0 {
        mismatch(format_args!("conv2d: kernel shape {krows}×{kcols} is empty"));
    }
    let (orows, ocols) = if krows > rows || kcols > cols { (0, 0) } else { (rows - krows + 1, cols - kcols + 1) };
    let shape = OutShape::Matrix { what: "out (rows−krows+1 × cols−kcols+1)", rows: orows, cols: ocols };
    Output { op: "conv2d", len: orows * ocols, shape }
}

#[cold]
#[inline(never)]
#[track_caller]
fn mismatch(msg: std::fmt::Arguments<'_>) -> ! {
    panic!("{msg}")
}
