//! The reference backend: every op as a plain Rust loop.
//!
//! This is what `ops::…` means inside a kernel's Scalar variant, and the oracle
//! the other backends are tested against. Conventions shared by all
//! four backends (see the [`ops`](super) module docs): empty reductions give
//! the identity (`sum`, `dot`, `norm_l2` → 0, `max` → −∞, `min` → +∞) or NaN
//! (`mean`); a NaN anywhere in the input of `max`/`min` gives NaN.

use super::check;
use super::out::{producing, written, Slot};

/// Sets `out[i] = f(a[i])`, for an `out` as long as `a`.
#[inline]
fn map(out: &mut [Slot], a: &[f32], f: impl Fn(f32) -> f32) {
    for (o, &x) in out.iter_mut().zip(a) {
        o.set(f(x));
    }
}

macro_rules! unary {
    ($(#[$m:meta])* $name:ident / $into:ident, |$x:ident| $body:expr) => {
        producing! {
            $(#[$m])*
            pub fn $name / $into(a: &[f32])
            check: shape = check::unary(stringify!($name), a.len()),
            // Sets every slot: `out` is as long as `a`.
            kernel: |out| map(out, a, |$x| $body)
        }
    };
}

macro_rules! binary {
    ($(#[$m:meta])* $name:ident / $into:ident, $op:tt) => {
        producing! {
            $(#[$m])*
            ///
            /// # Panics
            /// If `a` and `b` differ in length.
            pub fn $name / $into(a: &[f32], b: &[f32])
            check: shape = check::binary(stringify!($name), a.len(), b.len()),
            // Sets every slot: `out`, `a` and `b` have the same length.
            kernel: |out| {
                for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                    o.set(x $op y);
                }
            }
        }
    };
}

binary!(
    /// `a[i] + b[i]`.
    add / add_into, +);
binary!(
    /// `a[i] - b[i]`.
    sub / sub_into, -);
binary!(
    /// `a[i] * b[i]`.
    mul / mul_into, *);
binary!(
    /// `a[i] / b[i]` (IEEE: `x / 0` is ±∞ or NaN).
    div / div_into, /);

producing! {
    /// `a[i] * s`.
    pub fn scale / scale_into(a: &[f32], s: f32)
    check: shape = check::unary("scale", a.len()),
    kernel: |out| map(out, a, |x| x * s)
}

unary!(
    /// `max(a[i], 0)`; NaN stays NaN.
    relu / relu_into, |x| if x > 0.0 || x.is_nan() { x } else { 0.0 });
unary!(
    /// `1 / (1 + e^(−a[i]))`.
    sigmoid / sigmoid_into, |x| 1.0 / (1.0 + (-x).exp()));
unary!(
    /// `tanh(a[i])`.
    tanh / tanh_into, |x| x.tanh());
unary!(
/// GELU, tanh approximation: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
gelu / gelu_into, |x| {
    const SQRT_2_OVER_PI: f32 = 0.797_884_6;
    0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x)).tanh())
});
unary!(
    /// `e^a[i]`.
    exp / exp_into, |x| x.exp());

/// `y[i] += alpha * x[i]`, in place.
///
/// # Panics
/// If `x` and `y` differ in length.
#[track_caller]
pub fn axpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    check::same_len("axpy", x.len(), y.len());
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// The sum of `a` (0 when empty).
pub fn sum(a: &[f32]) -> f32 {
    a.iter().sum()
}

/// `Σ a[i]·b[i]` (0 when empty).
///
/// # Panics
/// If `a` and `b` differ in length.
#[track_caller]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    check::same_len("dot", a.len(), b.len());
    a.iter().zip(b).map(|(&x, &y)| x * y).sum()
}

/// The largest element: −∞ when empty, NaN when any element is NaN.
pub fn max(a: &[f32]) -> f32 {
    a.iter().fold(f32::NEG_INFINITY, |m, &x| if x.is_nan() || m.is_nan() { f32::NAN } else { m.max(x) })
}

/// The smallest element: +∞ when empty, NaN when any element is NaN.
pub fn min(a: &[f32]) -> f32 {
    a.iter().fold(f32::INFINITY, |m, &x| if x.is_nan() || m.is_nan() { f32::NAN } else { m.min(x) })
}

/// The arithmetic mean: NaN when empty.
pub fn mean(a: &[f32]) -> f32 {
    sum(a) / a.len() as f32
}

/// The Euclidean norm `√(Σ a[i]²)` (0 when empty).
pub fn norm_l2(a: &[f32]) -> f32 {
    a.iter().map(|&x| x * x).sum::<f32>().sqrt()
}

producing! {
    /// `e^(a[i] − max) / Σ e^(a[j] − max)`, stable for large inputs; empty in, empty out.
    pub fn softmax / softmax_into(a: &[f32])
    check: shape = check::unary("softmax", a.len()),
    kernel: |out| {
        let m = max(a);
        map(out, a, |x| (x - m).exp());
        // SAFETY: `map` set every slot: `out` is as long as `a` (the check's length).
        let e = unsafe { written(out) };
        let s: f32 = e.iter().sum();
        for x in e {
            *x /= s;
        }
    }
}

producing! {
    /// C = A·B for row-major A (m×k) and B (k×n); C is m×n.
    ///
    /// # Panics
    /// If `a.len() != m·k`, `b.len() != k·n`, or a shape overflows `usize`.
    pub fn matmul / matmul_into(a: &[f32], b: &[f32], m: usize, n: usize, k: usize)
    check: shape = check::matmul(a.len(), b.len(), m, n, k),
    onto_zeros: |c| {
        for i in 0..m {
            let row = &mut c[i * n..(i + 1) * n];
            for p in 0..k {
                let aip = a[i * k + p];
                for (cij, &bpj) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                    *cij += aip * bpj;
                }
            }
        }
    }
}

producing! {
    /// y = A·x for row-major A (m×n); y has m elements.
    ///
    /// # Panics
    /// If `a.len() != m·n` or `x.len() != n`.
    pub fn matvec / matvec_into(a: &[f32], x: &[f32], m: usize, n: usize)
    check: shape = check::matvec(a.len(), x.len(), m, n),
    // Sets each of the `m` slots once.
    kernel: |y| {
        for (i, yi) in y.iter_mut().enumerate() {
            yi.set(dot(&a[i * n..(i + 1) * n], x));
        }
    }
}

producing! {
    /// The transpose of row-major `a` (rows×cols), as a cols×rows matrix.
    ///
    /// # Panics
    /// If `a.len() != rows·cols`.
    pub fn transpose / transpose_into(a: &[f32], rows: usize, cols: usize)
    check: shape = check::transpose(a.len(), rows, cols),
    // Sets each of the rows·cols slots once: (i, j) ↦ j·rows + i is a bijection.
    kernel: |t| {
        for i in 0..rows {
            for j in 0..cols {
                t[j * rows + i].set(a[i * cols + j]);
            }
        }
    }
}

producing! {
    /// Valid-mode 2-D convolution as deep-learning frameworks define it (cross-correlation:
    /// the kernel is not flipped): `out[i][j] = Σ_p Σ_q input[i+p][j+q] · kernel[p][q]`,
    /// output `(rows − krows + 1) × (cols − kcols + 1)`, empty when the kernel is larger than the input.
    ///
    /// # Panics
    /// If `input.len() != rows·cols`, `kernel.len() != krows·kcols`, or the kernel shape is empty.
    pub fn conv2d / conv2d_into(input: &[f32], kernel: &[f32], rows: usize, cols: usize, krows: usize, kcols: usize)
    check: shape = check::conv2d(input.len(), kernel.len(), rows, cols, krows, kcols),
    // Sets each of the orows·ocols slots once.
    kernel: |out| {
        let (orows, ocols) = shape.dims();
        for i in 0..orows {
            for j in 0..ocols {
                let mut acc = 0.0f32;
                for p in 0..krows {
                    let irow = &input[(i + p) * cols + j..(i + p) * cols + j + kcols];
                    let krow = &kernel[p * kcols..(p + 1) * kcols];
                    for (x, w) in irow.iter().zip(krow) {
                        acc += x * w;
                    }
                }
                out[i * ocols + j].set(acc);
            }
        }
    }
}
