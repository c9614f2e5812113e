//! The macro's build-time bench (`scripts/build-time`, BENCHMARKS.md "Build time"): 60 kernels of
//! the shapes the attribute rewrites and of those it leaves alone, each under
//! `#[cfg_attr(feature = "annotated", adaptive_kernel(..))]`. Built with the `annotated` feature
//! and without it, the difference is what the attribute costs a crate's build: the macro's own
//! time and the compilation of the variants it writes, per function.
//!
//! Shapes: element-wise loops (items, indices, stencils, image rows), reductions (index, item,
//! zip, iterator chains, argmin, integer sums), reductions inside loops over items (jams, items
//! in lanes), row loops, scatter updates, vector math, `ops::` bodies, methods and associated
//! functions, generic kernels, loops left as written (a `break`, a call, a `while`), and loops
//! the GPU variant runs.
#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

#[cfg(feature = "annotated")]
use adaptive_kernel::adaptive_kernel;
use adaptive_kernel::ops;

const SOFTENING: f32 = 1e-3;
const GAMMA: f32 = 2.2;

// Element-wise loops.

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn scale(x: &mut [f32], by: f32) {
    for v in x.iter_mut() {
        *v *= by;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn add(a: &[f32], b: &[f32], out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = a[i] + b[i];
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn relu(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        out[i] = if x[i] > 0.0 { x[i] } else { 0.0 };
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn clamp_into(x: &[f64], lo: f64, hi: f64, out: &mut [f64]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = v.clamp(lo, hi);
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn axpby(a: f32, x: &[f32], b: f32, y: &mut [f32]) {
    for i in 0..y.len() {
        y[i] = a * x[i] + b * y[i];
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn indexed(out: &mut [f32]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = i as f32 * 0.5;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn diff(x: &[f32], out: &mut [f32]) {
    for i in 1..x.len() {
        out[i] = x[i] - x[i - 1];
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn to_u32(x: &[f32], out: &mut [u32]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = *v as u32;
    }
}

// Stencils and image rows.

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium"))]
pub fn blur_1d(x: &[f32], out: &mut [f32]) {
    for i in 1..x.len() - 1 {
        out[i] = (x[i - 1] + x[i] + x[i + 1]) / 3.0;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium", size = src.len()))]
pub fn box_blur(src: &[f32], dst: &mut [f32], w: usize) {
    let h = src.len() / w;
    for (y, out) in dst.chunks_exact_mut(w).enumerate() {
        let row = &src[y * w..(y + 1) * w];
        if y == 0 || y == h - 1 {
            out.copy_from_slice(row);
            continue;
        }
        let up = &src[(y - 1) * w..y * w];
        let down = &src[(y + 1) * w..(y + 2) * w];
        out[0] = row[0];
        out[w - 1] = row[w - 1];
        for x in 1..w - 1 {
            let sum = up[x - 1] + up[x] + up[x + 1] + row[x - 1] + row[x] + row[x + 1] + down[x - 1] + down[x] + down[x + 1];
            out[x] = sum / 9.0;
        }
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium", size = img.len()))]
pub fn laplacian(img: &[f32], out: &mut [f32], w: usize, h: usize) {
    for r in 1..h - 1 {
        out[r * w] = 0.0;
        out[r * w + w - 1] = 0.0;
        for c in 1..w - 1 {
            let at = r * w + c;
            out[at] = img[at - w] + img[at + w] + img[at - 1] + img[at + 1] - 4.0 * img[at];
        }
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium", size = rgb.len()))]
pub fn grey(rgb: &[f32], out: &mut [f32]) {
    for (o, px) in out.iter_mut().zip(rgb.chunks_exact(3)) {
        *o = 0.299 * px[0] + 0.587 * px[1] + 0.114 * px[2];
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium", size = x.len()))]
pub fn interleave(x: &[f32], out: &mut [f32], n: usize) {
    for i in 0..n {
        out[i * 2] = x[i];
        out[i * 2 + 1] = -x[i];
    }
}

// Reductions.

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium"))]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn total(x: &[f64]) -> f64 {
    let mut s = 0.0f64;
    for v in x {
        s += v;
    }
    s
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn sq_dist(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn peak(x: &[f32]) -> f32 {
    x.iter().copied().fold(f32::NEG_INFINITY, f32::max)
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn norm(x: &[f32]) -> f32 {
    x.iter().map(|v| v * v).sum::<f32>().sqrt()
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn stats(x: &[f32]) -> (f32, f32, f32) {
    let (mut s, mut q) = (0.0f32, 0.0f32);
    let mut m = f32::NEG_INFINITY;
    for &v in x.iter() {
        s += v;
        q += v * v;
        m = m.max(v);
    }
    (s, q, m)
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn argmax(x: &[f32]) -> usize {
    let mut best = f32::NEG_INFINITY;
    let mut at = 0;
    for (i, &v) in x.iter().enumerate() {
        if v > best {
            best = v;
            at = i;
        }
    }
    at
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn count_positive(x: &[f32]) -> usize {
    let mut n = 0usize;
    for v in x {
        if *v > 0.0 {
            n += 1;
        }
    }
    n
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn weighted_mean(x: &[f64], w: &[f64]) -> f64 {
    let mut num = 0.0;
    let mut den = 0.0;
    for (v, k) in x.iter().zip(w) {
        num += v * k;
        den += k;
    }
    num / den
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn potential(x: &[f32], m: &[f32], i: usize) -> f32 {
    let xi = x[i];
    let mut phi = 0.0f32;
    for (j, &xj) in x.iter().enumerate() {
        if j == i {
            continue;
        }
        phi -= m[j] / (xj - xi).abs();
    }
    phi
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn product(x: &[f64]) -> f64 {
    x.iter().product::<f64>()
}

// Reductions inside loops over items, rows.

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "High", size = w.len()))]
pub fn matvec(out: &mut [f32], x: &[f32], w: &[f32], n: usize, d: usize) {
    for i in 0..d {
        let mut val = 0.0f32;
        for j in 0..n {
            val += w[i * n + j] * x[j];
        }
        out[i] = val;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "High", size = points.len()))]
pub fn kmeans_assign(points: &[f32], cent: &[f32], labels: &mut [u32], n: usize, k: usize, d: usize) -> f32 {
    let mut inertia = 0.0f32;
    for i in 0..n {
        let p = &points[i * d..(i + 1) * d];
        let mut best = 0;
        let mut best_dist = f32::INFINITY;
        for c in 0..k {
            let q = &cent[c * d..(c + 1) * d];
            let mut dist = 0.0f32;
            for j in 0..d {
                let t = p[j] - q[j];
                dist += t * t;
            }
            if dist < best_dist {
                best_dist = dist;
                best = c;
            }
        }
        labels[i] = best as u32;
        inertia += best_dist;
    }
    inertia
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "High", size = rows.len()))]
pub fn row_distances(p: &[f64], rows: &[f64], out: &mut [f64], d: usize) {
    for r in 0..out.len() {
        let q = &rows[r * d..(r + 1) * d];
        let mut s = 0.0f64;
        for j in 0..d {
            s += (p[j] - q[j]) * (p[j] - q[j]);
        }
        out[r] = s;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium", size = x.len()))]
pub fn row_sums(x: &[f32], w: usize, out: &mut [f32]) {
    for (o, row) in out.iter_mut().zip(x.chunks_exact(w)) {
        let mut s = 0.0f32;
        for v in row {
            s += v;
        }
        *o = s;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium", size = x.len()))]
pub fn normalise_rows(x: &mut [f32], w: usize) {
    for row in x.chunks_mut(w) {
        let mut s = 0.0f32;
        for v in row.iter() {
            s += v * v;
        }
        let inv = 1.0 / (s.sqrt() + 1e-6);
        for v in row.iter_mut() {
            *v *= inv;
        }
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium", size = x.len()))]
pub fn layer_norm(x: &[f32], out: &mut [f32], d: usize, eps: f32) {
    for (row, o) in x.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
        let mut mean = 0.0f32;
        for v in row {
            mean += v;
        }
        mean /= d as f32;
        let mut var = 0.0f32;
        for v in row {
            var += (v - mean) * (v - mean);
        }
        let inv = 1.0 / (var / d as f32 + eps).sqrt();
        for (o, v) in o.iter_mut().zip(row) {
            *o = (v - mean) * inv;
        }
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "High", size = px.len() * px.len()))]
pub fn gravity(px: &[f32], py: &[f32], mass: &[f32], ax: &mut [f32], ay: &mut [f32]) {
    let n = px.len();
    for i in 0..n {
        let (xi, yi) = (px[i], py[i]);
        let (mut fx, mut fy) = (0.0, 0.0);
        for j in 0..n {
            let dx = px[j] - xi;
            let dy = py[j] - yi;
            let d2 = dx * dx + dy * dy + SOFTENING;
            let inv = 1.0 / (d2 * d2.sqrt());
            fx += mass[j] * dx * inv;
            fy += mass[j] * dy * inv;
        }
        ax[i] = fx;
        ay[i] = fy;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "High", size = a.len()))]
pub fn matmul_loops(a: &[f32], b: &[f32], c: &mut [f32], m: usize, n: usize, k: usize) {
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0f32;
            for p in 0..k {
                s += a[i * k + p] * b[p * n + j];
            }
            c[i * n + j] = s;
        }
    }
}

// Scatter updates.

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium", size = x.len()))]
pub fn histogram(x: &[f32], bins: &mut [u32], lo: f32, width: f32) {
    for v in x {
        let b = ((v - lo) / width) as usize;
        if b < bins.len() {
            bins[b] += 1;
        }
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium", size = labels.len()))]
pub fn cluster_max(labels: &[usize], x: &[f32], best: &mut [f32]) {
    for i in 0..labels.len() {
        let k = labels[i];
        best[k] = best[k].max(x[i]);
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium", size = labels.len()))]
pub fn cluster_sums(points: &[f32], labels: &[usize], sums: &mut [f32], d: usize) {
    for i in 0..labels.len() {
        for j in 0..d {
            sums[labels[i] * d + j] += points[i * d + j];
        }
    }
}

// Vector math.

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium"))]
pub fn softmax_row(row: &mut [f32]) {
    let mut max = f32::NEG_INFINITY;
    for v in row.iter() {
        max = max.max(*v);
    }
    let mut sum = 0.0f32;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    for v in row.iter_mut() {
        *v /= sum;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium"))]
pub fn silu(x: &[f32], out: &mut [f32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v / (1.0 + (-v).exp());
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium"))]
pub fn gelu(x: &[f32], out: &mut [f32]) {
    for i in 0..x.len() {
        let v = x[i];
        out[i] = 0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044_715 * v * v * v)).tanh());
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium"))]
pub fn gamma(x: &mut [f32]) {
    for v in x.iter_mut() {
        *v = v.powf(1.0 / GAMMA);
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium"))]
pub fn log_sum_exp(x: &[f32], m: f32) -> f32 {
    let mut z = 0.0;
    for i in 0..x.len() {
        z += (x[i] - m).exp();
    }
    z.ln() + m
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium"))]
pub fn polar(r: &[f32], t: &[f32], x: &mut [f32], y: &mut [f32]) {
    for i in 0..r.len() {
        x[i] = r[i] * t[i].cos();
        y[i] = r[i] * t[i].sin();
    }
}

// `ops::` bodies.

/// C = A·B, row-major; A is m×k, B is k×n.
#[cfg_attr(
    feature = "annotated",
    adaptive_kernel(complexity = "High", size = m * k + k * n, flops = 2 * m * n * k)
)]
pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    ops::matmul(a, b, m, n, k)
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn ops_add(a: &[f32], b: &[f32]) -> Vec<f32> {
    ops::add(a, b)
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn ops_sum(a: &[f32]) -> f32 {
    ops::sum(a)
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium"))]
pub fn ops_mean_dot(a: &[f32], b: &[f32]) -> f32 {
    let d = ops::dot(a, b);
    d / a.len() as f32
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Medium"))]
pub fn ops_then_loop(a: &[f32], out: &mut [f32]) -> f32 {
    let s = ops::sum(a);
    for (o, v) in out.iter_mut().zip(a) {
        *o = v / s;
    }
    s
}

// Methods and associated functions.

/// Samples with kernels as methods.
pub struct Signal {
    /// The samples.
    pub samples: Vec<f32>,
}

impl Signal {
    #[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low", size = self.samples.len()))]
    pub fn energy(&self) -> f32 {
        self.samples.iter().map(|s| s * s).sum()
    }

    #[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
    pub fn scale_by(&mut self, by: &[f32]) {
        for (s, b) in self.samples.iter_mut().zip(by) {
            *s *= b;
        }
    }

    #[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low", size = self.samples.len()))]
    pub fn peak(&self) -> f32 {
        let mut m = f32::NEG_INFINITY;
        for v in &self.samples {
            m = m.max(*v);
        }
        m
    }

    #[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
    pub fn from_slice(x: &[f32]) -> Self {
        Self { samples: x.to_vec() }
    }

    #[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
    pub fn mean_of(x: &[f32]) -> f32 {
        let s: f32 = x.iter().sum();
        s / x.len().max(1) as f32 * Self::UNIT
    }

    /// The unit of the samples.
    pub const UNIT: f32 = 1.0;
}

/// A trait whose implementation holds kernels.
pub trait Reduce {
    /// The sum of `x`.
    fn reduce(&self, x: &[f32]) -> f32;
}

/// Sums.
pub struct Summer;

impl Reduce for Summer {
    #[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low", size = x.len()))]
    fn reduce(&self, x: &[f32]) -> f32 {
        let mut s = 0.0f32;
        for v in x {
            s += v;
        }
        s
    }
}

// Generic kernels.

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn generic_sum<T: Copy + std::iter::Sum<T>>(x: &[T]) -> T {
    x.iter().copied().sum()
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn generic_axpy<T: Copy + std::ops::Mul<Output = T> + std::ops::AddAssign>(a: T, x: &[T], y: &mut [T]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * *xi;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn head<const N: usize>(x: &[f32]) -> [f32; N] {
    let mut out = [0.0; N];
    out.copy_from_slice(&x[..N]);
    out
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn convert<T: Copy, U: From<T>>(x: &[T]) -> Vec<U> {
    x.iter().map(|v| U::from(*v)).collect()
}

// Loops left as written.

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn first_negative(x: &[f32]) -> Option<usize> {
    for (i, v) in x.iter().enumerate() {
        if *v < 0.0 {
            return Some(i);
        }
    }
    None
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn prefix_sum(x: &mut [f32]) {
    for i in 1..x.len() {
        x[i] += x[i - 1];
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn sum_until(x: &[f32], limit: f32) -> f32 {
    let mut s = 0.0f32;
    for v in x {
        if s > limit {
            break;
        }
        s += v;
    }
    s
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn halvings(x: &[f32]) -> usize {
    let mut n = x.len();
    let mut steps = 0;
    while n > 1 {
        n /= 2;
        steps += 1;
    }
    steps
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn logged(x: &[f32], out: &mut [f32]) {
    for (i, v) in x.iter().enumerate() {
        if v.is_nan() {
            eprintln!("NaN at {i}");
        }
        out[i] = v * 2.0;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn mapped(x: &[f32], f: fn(f32) -> f32, out: &mut [f32]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = f(*v);
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub fn matched(x: &[i32], out: &mut [i32]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = match v {
            0 => 1,
            n if *n < 0 => -n,
            n => n * 2,
        };
    }
}

/// # Safety
/// `x` holds at least one element.
#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "Low"))]
pub unsafe fn last_unchecked(x: &[f32]) -> f32 {
    *x.get_unchecked(x.len() - 1)
}

// Loops the GPU variant runs (and the split cuts).

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "High"))]
pub fn mandelbrot(cx: &[f32], cy: &[f32], iters: &mut [u32], max: u32) {
    for i in 0..iters.len() {
        let (mut x, mut y) = (0.0f32, 0.0f32);
        let mut n = 0u32;
        while n < max && x * x + y * y < 4.0 {
            let t = x * x - y * y + cx[i];
            y = 2.0 * x * y + cy[i];
            x = t;
            n += 1;
        }
        iters[i] = n;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "High", size = out.len()))]
pub fn integer_mix(a: &[i32], b: &[i32], out: &mut [i32], shift: u32) {
    for i in 0..out.len() {
        out[i] = (a[i] ^ b[i]) >> shift;
    }
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "High", size = x.len()))]
pub fn threshold_count(x: &[f32], t: f32) -> u32 {
    let mut n = 0u32;
    for i in 0..x.len() {
        if x[i] > t {
            n += 1;
        }
    }
    n
}

#[cfg_attr(feature = "annotated", adaptive_kernel(complexity = "High", size = pos.len()))]
pub fn step(pos: &mut [f32], vel: &[f32], dt: f32) {
    for (p, v) in pos.iter_mut().zip(vel) {
        *p += dt * v;
    }
}
