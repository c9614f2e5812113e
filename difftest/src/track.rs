//! The tracked copy's number: a value computed exactly as the plain copy
//! computes it, with a bound on how far the variant under test may be from it
//! under the documented contract (a running error analysis, as in Higham's
//! *Accuracy and Stability of Numerical Algorithms*, §3).
//!
//! What the contract allows depends on the variant and on what the kernel's
//! report says that variant did to the loop an operation runs in
//! ([`Mode`], from `KernelSpec::loops`, `splits` and `gpu_loops`):
//!
//! * **bit for bit** everywhere else: an error bound of zero, so any
//!   difference fails;
//! * a **regrouped reduction** (a loop or chain the report puts in lanes for
//!   the variant, a split loop's carried reduction, a GPU loop's): at the end
//!   of the loop the sum gains `2·γₙ₋₁·Σ|xᵢ|` over the terms actually summed
//!   (`adaptive_kernel::tolerance`), a product its bound, `max`/`min` the sign
//!   of a zero; where a partial sum may overflow, nothing is promised;
//! * a **replaced libm function** (reported in `vector_math` for the
//!   variant): its `math::ULP_BOUNDS` entry plus libm's own half ulp;
//! * a **GPU loop**: the precision contract of the macro's reference
//!   ("Loops on the GPU"): `+ − ×` IEEE-rounded with `a·b + c` possibly fused,
//!   subnormals possibly flushed, `/` within 2.5 ULP, the functions within
//!   the macro's roundings per construct; a NaN or infinity in the loop makes
//!   the call run on the host, so special values must match exactly.
//!
//! Errors propagate through later operations (each operation's condition:
//! `|a|·e_b + |b|·e_a` for a product, the derivative for a function), so a
//! bound is computed from the values the call actually met. A comparison or
//! cast whose operands' bounds straddle its outcome cannot be predicted: it
//! *taints* the call, whose results for that variant are then counted
//! unchecked instead of compared.

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use adaptive_kernel::Backend;

/// What the variant under test may do, line by line (lines of the annotated copy).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mode {
    /// The variant (for messages).
    pub variant: Option<Backend>,
    /// Lines whose reductions the variant regroups.
    pub regroup: Vec<u32>,
    /// Lines the variant runs on the GPU.
    pub gpu: Vec<u32>,
    /// `(line, function, ulps)`: libm calls the variant computes with the runtime's formulas.
    pub math: Vec<(u32, &'static str, u32)>,
}

impl Mode {
    /// The contract of `variant` for a kernel whose report is `spec`.
    pub fn of(variant: Backend, spec: &adaptive_kernel::KernelSpec) -> Mode {
        let mut m = Mode { variant: Some(variant), ..Mode::default() };
        if variant == Backend::Scalar {
            return m;
        }
        for l in spec.loops {
            if l.variants.contains(&variant) {
                m.regroup.push(l.line);
                for &f in l.vector_math {
                    let ulps = adaptive_kernel::math::ulp_bound(f).unwrap_or(u32::MAX);
                    m.math.push((l.line, f, ulps));
                }
            }
        }
        if variant == Backend::Parallel {
            m.regroup.extend(spec.splits.iter().filter(|s| s.is_split()).map(|s| s.line));
        }
        if variant == Backend::Gpu {
            m.gpu.extend(spec.gpu_loops.iter().filter(|l| l.on_gpu()).map(|l| l.line));
            m.regroup.extend(m.gpu.clone());
        }
        m
    }
}

thread_local! {
    static MODE: RefCell<Mode> = RefCell::new(Mode::default());
    static LOOPS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    static TAINT: Cell<bool> = const { Cell::new(false) };
}

/// Starts a tracked run under `mode`.
pub fn begin(mode: Mode) {
    MODE.with(|m| *m.borrow_mut() = mode);
    LOOPS.with(|l| l.borrow_mut().clear());
    TAINT.with(|t| t.set(false));
}

/// Ends a tracked run: whether a comparison or cast could not be predicted.
pub fn end_run() -> bool {
    TAINT.with(|t| t.replace(false))
}

fn taint() {
    TAINT.with(|t| t.set(true));
}

/// Leaves the loop it was returned for when dropped.
#[derive(Debug)]
pub struct InLoop(());

impl Drop for InLoop {
    fn drop(&mut self) {
        LOOPS.with(|l| l.borrow_mut().pop());
    }
}

/// Enters the loop at `line` of the annotated copy.
pub fn enter(line: u32) -> InLoop {
    LOOPS.with(|l| l.borrow_mut().push(line));
    InLoop(())
}

/// Whether the operation now running runs on the GPU.
fn on_gpu() -> bool {
    MODE.with(|m| {
        let m = m.borrow();
        !m.gpu.is_empty() && LOOPS.with(|l| l.borrow().iter().any(|x| m.gpu.contains(x)))
    })
}

/// The ulp bound of `f` if the operation now running may compute it with a formula.
fn formula(f: &str) -> Option<u32> {
    MODE.with(|m| {
        let m = m.borrow();
        LOOPS.with(|l| {
            let l = l.borrow();
            m.math.iter().filter(|(line, name, _)| *name == f && l.contains(line)).map(|(_, _, u)| *u).max()
        })
    })
}

fn regrouped(line: u32) -> bool {
    MODE.with(|m| m.borrow().regroup.contains(&line))
}

/// A value of the tracked copy: `v`, the plain copy's value, bit for bit; `e`, how far the
/// variant's may be (infinite: anything).
#[derive(Clone, Copy, Debug)]
pub struct Er {
    /// The plain copy's value.
    pub v: f32,
    /// The contract's bound on `|variant − v|`.
    pub e: f64,
    /// Summands this value is a sum of (for a regrouped reduction's bound).
    pub n: u32,
    /// `Σ|xᵢ|` over those summands, their bounds included.
    pub abs: f64,
    /// A zero whose sign the contract leaves open (`max`/`min` regrouped).
    pub zero_free: bool,
    /// `(least, most)`: the smallest and largest magnitude a product of any subset of the
    /// factors this value is a product of may have (the empty one, 1, included). A regrouped
    /// product forms partial products of subsets in some order; where one may leave the normal
    /// range, its rounding is not relative and the contract promises nothing.
    pub partials: (f64, f64),
}

/// A constant (exact).
pub fn c(v: f32) -> Er {
    Er::with(v, 0.0)
}

/// The spacing of `f32` values at magnitude `x` (`f64`).
fn ulp(x: f64) -> f64 {
    let x = x.abs();
    if !x.is_finite() {
        return 0.0;
    }
    if x < f64::from(f32::MIN_POSITIVE) {
        return f64::from(f32::from_bits(1));
    }
    let exp = x.log2().floor();
    2f64.powf(exp - 23.0)
}

const MIN_NORMAL: f64 = f32::MIN_POSITIVE as f64;

/// Carries the open sign of a zero (`zero_free`: a regrouped `max`, `min` or compare-and-keep
/// may give either) through the operation `op` of `args` that gave `r`: `op` again with every
/// combination of those zeros' signs flipped. Where the results differ only in a zero's sign,
/// the result's sign is open too (`-0.0 · 1.5`); where they differ otherwise (`1 / ±0`, `±∞`)
/// the contract says nothing about the result, and the call is not compared.
fn signs<const N: usize>(mut r: Er, args: [Er; N], op: impl Fn([f32; N]) -> f32) -> Er {
    let open: Vec<usize> = (0..N).filter(|&i| args[i].zero_free && args[i].v == 0.0).collect();
    for mask in 1u32..(1 << open.len()) {
        let mut flipped = args.map(|a| a.v);
        for (bit, &i) in open.iter().enumerate() {
            if mask & (1 << bit) != 0 {
                flipped[i] = -flipped[i];
            }
        }
        let other = op(flipped);
        if other.to_bits() == r.v.to_bits() || (other.is_nan() && r.v.is_nan()) {
            continue;
        }
        if other == 0.0 && r.v == 0.0 {
            r.zero_free = true;
        } else {
            r.e = f64::INFINITY;
            taint();
            return r;
        }
    }
    r
}

/// A result `r` of finite operands `args` that overflowed (`±∞`) while one carried an error:
/// the variant's operands, within their bounds, may give a finite result, or the other
/// infinity; the contract promises nothing about which, so the call is not compared. Seed 613,
/// `k6`: `acc0 * acc1` with `acc1` a sum in lanes (bound ±8,000 around 256) and `acc0` near
/// `−f32::MAX`: `−∞` as written, `0` where the lanes' sum was 0.
fn overflow<const N: usize>(mut r: Er, args: [Er; N]) -> Er {
    if r.v.is_infinite() && args.iter().all(|a| a.v.is_finite()) && args.iter().any(|a| a.e > 0.0) {
        r.e = f64::INFINITY;
        taint();
    }
    r
}

impl Er {
    fn with(v: f32, e: f64) -> Er {
        let e = if e.is_nan() { f64::INFINITY } else { e };
        let m = f64::from(v.abs());
        let partials = ((m - e).clamp(0.0, 1.0), (m + e).max(1.0));
        Er { v, e, n: 1, abs: m + e, zero_free: false, partials }
    }

    /// The bound of a result `v` whose operands carried `carried` and whose
    /// operation may be off by `ulps` on the GPU (`cpu_ulps` in any variant).
    fn result(v: f32, carried: f64, gpu_ulps: f64, cpu_ulps: f64) -> Er {
        let gpu = on_gpu();
        let mut e = carried;
        if carried > 0.0 {
            // A different operand rounds to a result up to one ulp further.
            e += ulp(f64::from(v.abs()) + carried);
        }
        e += cpu_ulps * ulp(f64::from(v));
        if gpu {
            e += gpu_ulps * ulp(f64::from(v)) + MIN_NORMAL;
        }
        Er::with(v, e)
    }

    fn lo(self) -> f64 {
        f64::from(self.v) - self.e
    }

    fn hi(self) -> f64 {
        f64::from(self.v) + self.e
    }

    /// Whether every value the contract allows for `self` and `o` compares as theirs do:
    /// exact values, NaN (kept by every variant), or bounds that do not overlap.
    fn predictable(self, o: Er) -> bool {
        if self.v.is_nan() || o.v.is_nan() || (self.e == 0.0 && o.e == 0.0) {
            return true;
        }
        self.hi() < o.lo() || self.lo() > o.hi()
    }

    /// A monotone or Lipschitz function's bound: the largest move of `f` over `[v − e, v + e]`.
    fn through(self, r: f32, f: impl Fn(f64) -> f64, gpu_ulps: f64, name: &str) -> Er {
        let carried = if self.e == 0.0 {
            0.0
        } else {
            let (a, b, m) = (f(self.lo()), f(self.hi()), f64::from(r));
            let d = (a - m).abs().max((b - m).abs());
            if d.is_finite() {
                d
            } else {
                f64::INFINITY
            }
        };
        let cpu = formula(name).map_or(0.0, |u| f64::from(u) + 1.0);
        Er::result(r, carried, gpu_ulps, cpu)
    }

    /// `f32::sqrt`.
    pub fn sqrt(self) -> Er {
        signs(self.through(self.v.sqrt(), |x| x.max(0.0).sqrt(), 5.0, "sqrt"), [self], |[x]| x.sqrt())
    }
    /// `f32::exp`.
    pub fn exp(self) -> Er {
        signs(self.through(self.v.exp(), f64::exp, 4.0, "exp"), [self], |[x]| x.exp())
    }
    /// `f32::ln`.
    pub fn ln(self) -> Er {
        if self.e > 0.0 && self.lo() <= 0.0 && self.v > 0.0 {
            return Er::with(self.v.ln(), f64::INFINITY);
        }
        signs(self.through(self.v.ln(), f64::ln, 4.0, "ln"), [self], |[x]| x.ln())
    }
    /// `f32::sin`.
    pub fn sin(self) -> Er {
        let r = self.v.sin();
        // Beyond 8192 the GPU variant computes on the host (the reference's contract).
        let gpu = if self.v.abs() > 8192.0 { 0.0 } else { 4.0 };
        let cpu = formula("sin").map_or(0.0, |u| f64::from(u) + 1.0);
        signs(Er::result(r, self.e.min(2.0), gpu, cpu), [self], |[x]| x.sin())
    }
    /// `f32::cos`.
    pub fn cos(self) -> Er {
        let r = self.v.cos();
        let gpu = if self.v.abs() > 8192.0 { 0.0 } else { 4.0 };
        let cpu = formula("cos").map_or(0.0, |u| f64::from(u) + 1.0);
        signs(Er::result(r, self.e.min(2.0), gpu, cpu), [self], |[x]| x.cos())
    }
    /// `f32::tanh`.
    pub fn tanh(self) -> Er {
        let r = self.v.tanh();
        let cpu = formula("tanh").map_or(0.0, |u| f64::from(u) + 1.0);
        signs(Er::result(r, self.e.min(2.0), 4.0, cpu), [self], |[x]| x.tanh())
    }
    /// `f32::abs`.
    pub fn abs(self) -> Er {
        Er { v: self.v.abs(), zero_free: false, ..self }
    }
    /// `f32::recip`.
    pub fn recip(self) -> Er {
        c(1.0) / self
    }
    fn step(self, r: f32, f: impl Fn(f64) -> f64) -> Er {
        if self.e == 0.0 && !on_gpu() {
            return Er::with(r, 0.0);
        }
        if self.e == 0.0 || f(self.lo()) == f(self.hi()) {
            return Er::with(r, if on_gpu() { MIN_NORMAL } else { 0.0 });
        }
        Er::with(r, self.e + 1.0)
    }
    /// `f32::floor`.
    pub fn floor(self) -> Er {
        signs(self.step(self.v.floor(), f64::floor), [self], |[x]| x.floor())
    }
    /// `f32::ceil`.
    pub fn ceil(self) -> Er {
        signs(self.step(self.v.ceil(), f64::ceil), [self], |[x]| x.ceil())
    }
    /// `f32::round`.
    pub fn round(self) -> Er {
        signs(self.step(self.v.round(), f64::round), [self], |[x]| x.round())
    }
    /// `f32::max`.
    pub fn max(self, o: Er) -> Er {
        let r = self.v.max(o.v);
        let zero = self.v == 0.0 && o.v == 0.0;
        let e = if self.v.is_nan() {
            o.e
        } else if o.v.is_nan() {
            self.e
        } else {
            self.e.max(o.e)
        };
        Er { zero_free: zero || self.zero_free || o.zero_free, ..Er::with(r, e) }
    }
    /// `f32::min`.
    pub fn min(self, o: Er) -> Er {
        let r = self.v.min(o.v);
        let zero = self.v == 0.0 && o.v == 0.0;
        let e = if self.v.is_nan() {
            o.e
        } else if o.v.is_nan() {
            self.e
        } else {
            self.e.max(o.e)
        };
        Er { zero_free: zero || self.zero_free || o.zero_free, ..Er::with(r, e) }
    }
    /// `f32::clamp` with exact bounds.
    pub fn clamp(self, lo: Er, hi: Er) -> Er {
        signs(Er::with(self.v.clamp(lo.v, hi.v), self.e), [self, lo, hi], |[x, lo, hi]| x.clamp(lo, hi))
    }
    /// `f32::mul_add`.
    pub fn mul_add(self, b: Er, c: Er) -> Er {
        let r = self.v.mul_add(b.v, c.v);
        let carried = f64::from(self.v.abs()) * b.e + f64::from(b.v.abs()) * self.e + self.e * b.e + c.e;
        // The GPU may round the product (the contract's `mul_add`).
        let product = if on_gpu() { ulp(f64::from(self.v) * f64::from(b.v)) } else { 0.0 };
        let mut out = Er::result(r, carried + product, 0.0, 0.0);
        out.n = c.n.saturating_add(1);
        out.abs = c.abs + (f64::from(self.v) * f64::from(b.v)).abs() + carried;
        signs(overflow(out, [self, b, c]), [self, b, c], |[a, b, c]| a.mul_add(b, c))
    }
    /// `f32::powi`.
    pub fn powi(self, k: i32) -> Er {
        let r = self.v.powi(k);
        let f = |x: f64| x.powi(k);
        let carried = if self.e == 0.0 {
            0.0
        } else {
            let m = f64::from(r);
            let mut d = (f(self.lo()) - m).abs().max((f(self.hi()) - m).abs());
            if self.lo() <= 0.0 && self.hi() >= 0.0 {
                d = if k < 0 { f64::INFINITY } else { d.max(m.abs()) };
            }
            d
        };
        let gpu = 2.0 * f64::from(k.unsigned_abs()) + if k < 0 { 2.5 } else { 0.0 };
        signs(Er::result(r, carried, gpu, 0.0), [self], |[x]| x.powi(k))
    }
    /// `f32::powf`.
    pub fn powf(self, y: Er) -> Er {
        let r = self.v.powf(y.v);
        let yv = f64::from(y.v);
        let gpu = 3.0 + 2.0 * (yv * f64::from(self.v.abs()).ln()).abs().min(88.0);
        let gpu = if gpu.is_finite() { gpu } else { 180.0 };
        if self.e > 0.0 && self.lo() <= 0.0 {
            return Er::with(r, f64::INFINITY);
        }
        signs(self.through(r, |x| x.powf(yv), gpu, "powf"), [self, y], |[x, y]| x.powf(y))
    }
    /// `f32::is_nan` (exact: NaN is kept by every variant, the GPU's included).
    pub fn is_nan(self) -> bool {
        self.v.is_nan()
    }
    /// `f32::is_finite`.
    pub fn is_finite(self) -> bool {
        self.v.is_finite()
    }
    fn int(self, r: f64) -> f64 {
        if self.e > 0.0 && self.lo().trunc() != self.hi().trunc() {
            taint();
        }
        r
    }
    /// `as i32`.
    pub fn to_i32(self) -> i32 {
        self.int(0.0);
        self.v as i32
    }
    /// `as u32`.
    pub fn to_u32(self) -> u32 {
        self.int(0.0);
        self.v as u32
    }
    /// `as usize`.
    pub fn to_usize(self) -> usize {
        self.int(0.0);
        self.v as usize
    }
}

impl Add for Er {
    type Output = Er;
    fn add(self, o: Er) -> Er {
        let mut r = Er::result(self.v + o.v, self.e + o.e, 0.0, 0.0);
        r.n = self.n.saturating_add(o.n);
        r.abs = self.abs + o.abs;
        signs(overflow(r, [self, o]), [self, o], |[a, b]| a + b)
    }
}

impl Sub for Er {
    type Output = Er;
    fn sub(self, o: Er) -> Er {
        let mut r = Er::result(self.v - o.v, self.e + o.e, 0.0, 0.0);
        r.n = self.n.saturating_add(o.n);
        r.abs = self.abs + o.abs;
        signs(overflow(r, [self, o]), [self, o], |[a, b]| a - b)
    }
}

impl Mul for Er {
    type Output = Er;
    fn mul(self, o: Er) -> Er {
        let v = self.v * o.v;
        let (a, b) = (f64::from(self.v.abs()), f64::from(o.v.abs()));
        let carried = a * o.e + b * self.e + self.e * o.e;
        // Fused into a following add on the GPU: the product unrounded.
        let fused = if on_gpu() { 0.5 * ulp(a * b) } else { 0.0 };
        let mut r = Er::result(v, carried + fused, 0.0, 0.0);
        r.partials = (self.partials.0 * o.partials.0, self.partials.1 * o.partials.1);
        signs(overflow(r, [self, o]), [self, o], |[a, b]| a * b)
    }
}

impl Div for Er {
    type Output = Er;
    fn div(self, o: Er) -> Er {
        let v = self.v / o.v;
        let b = f64::from(o.v.abs());
        if o.e > 0.0 && b <= o.e {
            return Er::with(v, f64::INFINITY);
        }
        if on_gpu() && !(MIN_NORMAL..=2f64.powi(126)).contains(&b) {
            // WGSL bounds `/` only for divisors in [2⁻¹²⁶, 2¹²⁶].
            return Er::with(v, f64::INFINITY);
        }
        let a = f64::from(self.v.abs());
        let carried = if o.e > 0.0 || self.e > 0.0 { (a * o.e + b * self.e) / (b * (b - o.e)) } else { 0.0 };
        signs(overflow(Er::result(v, carried, 2.5, 0.0), [self, o]), [self, o], |[a, b]| a / b)
    }
}

impl Neg for Er {
    type Output = Er;
    fn neg(self) -> Er {
        Er { v: -self.v, ..self }
    }
}

impl AddAssign for Er {
    fn add_assign(&mut self, o: Er) {
        *self = *self + o;
    }
}

impl SubAssign for Er {
    fn sub_assign(&mut self, o: Er) {
        *self = *self - o;
    }
}

impl MulAssign for Er {
    fn mul_assign(&mut self, o: Er) {
        let n = self.n;
        *self = *self * o;
        self.n = n.saturating_add(1);
    }
}

impl DivAssign for Er {
    fn div_assign(&mut self, o: Er) {
        *self = *self / o;
    }
}

impl PartialEq for Er {
    fn eq(&self, o: &Er) -> bool {
        if !self.predictable(*o) {
            taint();
        }
        self.v == o.v
    }
}

impl PartialOrd for Er {
    fn partial_cmp(&self, o: &Er) -> Option<Ordering> {
        if !self.predictable(*o) {
            taint();
        }
        self.v.partial_cmp(&o.v)
    }
}

impl std::iter::Sum for Er {
    fn sum<I: Iterator<Item = Er>>(iter: I) -> Er {
        // `Sum::sum` starts from -0.0, as std's does for floats.
        iter.fold(c(-0.0), |a, b| a + b)
    }
}

impl<'a> std::iter::Sum<&'a Er> for Er {
    fn sum<I: Iterator<Item = &'a Er>>(iter: I) -> Er {
        iter.copied().sum()
    }
}

impl std::iter::Product for Er {
    fn product<I: Iterator<Item = Er>>(iter: I) -> Er {
        iter.fold(c(1.0), |a, b| {
            let mut r = a * b;
            r.n = a.n.saturating_add(1);
            r
        })
    }
}

impl<'a> std::iter::Product<&'a Er> for Er {
    fn product<I: Iterator<Item = &'a Er>>(iter: I) -> Er {
        iter.copied().product()
    }
}

/// What a loop or chain carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carry {
    /// A sum.
    Sum,
    /// A product.
    Product,
    /// `max`, `min`, compare-and-keep.
    Extremum,
}

/// Widens a reduction's bound at the end of the loop at `line`, if the variant regroups it.
pub fn end(acc: &mut Er, line: u32, carry: Carry) {
    if !regrouped(line) {
        return;
    }
    let eps = f64::from(f32::EPSILON);
    match carry {
        Carry::Sum => {
            let n = acc.n as usize;
            let g = adaptive_kernel::tolerance::gamma(n, eps);
            if !(acc.abs * (1.0 + g)).is_finite() || acc.abs * (1.0 + g) > f64::from(f32::MAX) {
                // A partial sum may overflow in one order and not in another: no promise at
                // all (`tolerance::sums_agree`), not even that no NaN arises (∞ − ∞ in lanes
                // where the sequential sum stayed at −∞), so the call is not compared.
                acc.e = f64::INFINITY;
                taint();
            } else {
                acc.e +=
                    adaptive_kernel::tolerance::sum_bound(n, acc.abs, eps) + if on_gpu() { MIN_NORMAL } else { 0.0 };
            }
        }
        Carry::Product => {
            let m = f64::from(acc.v.abs());
            let (least, most) = acc.partials;
            let margin = 2f64.powi(30);
            if m < MIN_NORMAL * margin
                || m > f64::from(f32::MAX) / margin
                || !acc.v.is_finite()
                || least < MIN_NORMAL * margin
                || most > f64::from(f32::MAX) / margin
            {
                // Overflow or underflow in some order: no promise (`tolerance::products_agree`).
                // Seed 508, `k183`: twelve factors whose product is 1.06, but a subnormal and a
                // factor near `f32::MAX` among them; the partial products in lanes passed
                // through the subnormal range where the sequential ones did not.
                acc.e = f64::INFINITY;
                taint();
            } else {
                acc.e += adaptive_kernel::tolerance::product_bound(acc.n as usize, m, eps);
            }
        }
        Carry::Extremum => acc.zero_free = true,
    }
}

/// [`end`] for each slot of a slice updated at slots chosen by data.
pub fn end_slice(slots: &mut [Er], line: u32, carry: Carry) {
    for s in slots {
        end(s, line, carry);
    }
}

/// A reducing chain at `line`: its value, its bound widened as [`end`] does.
pub fn chain(line: u32, carry: Carry, f: impl FnOnce() -> Er) -> Er {
    let guard = enter(line);
    let mut r = f();
    end(&mut r, line, carry);
    drop(guard);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 508, kernel `k183`: a product of twelve factors whose value is ordinary (1.06)
    /// but whose factors hold a subnormal and values near `f32::MAX`: in lanes a partial
    /// product passed through the subnormal range, so the relative bound did not hold. A
    /// product whose factors allow such a partial product is not compared; one whose factors
    /// do not keeps its bound.
    #[test]
    fn a_product_whose_partial_products_may_leave_the_normal_range_is_not_compared() {
        begin(Mode { variant: Some(Backend::Simd), regroup: vec![3], ..Mode::default() });
        let wild = [c(1e-40), c(3e38), c(1.5), c(1e-30), c(1e30), c(0.25)];
        let mut acc = c(1.0);
        for f in wild {
            acc *= f;
        }
        assert!(acc.v.is_normal());
        end(&mut acc, 3, Carry::Product);
        assert!(acc.e.is_infinite());
        assert!(end_run());

        begin(Mode { variant: Some(Backend::Simd), regroup: vec![3], ..Mode::default() });
        let tame: Er = [c(1.5), c(-0.75), c(2.0), c(3.25)].into_iter().product();
        let mut acc = tame;
        end(&mut acc, 3, Carry::Product);
        assert!(acc.e.is_finite() && acc.e > 0.0);
        assert!(!end_run());
    }

    /// Seed 613, kernel `k6`: a product of a value near `-f32::MAX` and a regrouped sum
    /// overflows as written; the variant's sum, within its bound, may make it finite. Not
    /// compared; a product of exact operands that overflows keeps its exact infinity.
    #[test]
    fn an_overflow_of_operands_that_carry_an_error_is_not_compared() {
        begin(Mode { variant: Some(Backend::Simd), regroup: vec![5], ..Mode::default() });
        let mut sum = c(2.0e9) + c(-2.0e9) + c(256.0);
        end(&mut sum, 5, Carry::Sum);
        assert!(sum.e > 256.0);
        let r = c(-3.0e38) * sum;
        assert!(r.v.is_infinite() && r.e.is_infinite());
        assert!(end_run());

        begin(Mode { variant: Some(Backend::Simd), ..Mode::default() });
        let r = c(-3.0e38) * c(256.0);
        assert_eq!((r.v, r.e), (f32::NEG_INFINITY, 0.0));
        assert!(!end_run());
    }

    /// Seed 209, kernel `k228`: `out[i] = out[i - 1] + out[i - 1].mul_add(a[i], out[i - 1])`
    /// doubles the count of terms each step; the count saturates instead of overflowing
    /// (which panicked the tracked copy and read as a crashed program).
    #[test]
    fn a_carried_chain_of_multiply_adds_saturates_its_term_count() {
        let mut x = c(0.5);
        for _ in 0..40 {
            x = x + x.mul_add(c(0.5), x);
        }
        assert_eq!(x.n, u32::MAX);
    }

    /// Seed 209, kernel `k135`: a compare-and-keep in lanes may keep `-0.0` where the loop
    /// as written keeps `+0.0` (the contract: exact up to the sign of a zero); the open
    /// sign goes on through arithmetic (`acc0 * 1.5`), and where it decides more than a
    /// zero's sign (`1 / acc0`) the call is not compared.
    #[test]
    fn an_open_zero_sign_is_carried_through_arithmetic() {
        begin(Mode { variant: Some(Backend::Simd), regroup: vec![7], ..Mode::default() });
        let mut acc = c(0.0);
        end(&mut acc, 7, Carry::Extremum);
        let product = acc * c(1.5);
        assert!(product.zero_free && product.e == 0.0);
        assert_eq!(crate::harness::agree(-0.0, &product), None);
        assert!(!end_run(), "a zero's sign taints nothing");
        let sum = acc + c(2.0);
        assert!(!sum.zero_free && sum.e == 0.0, "2 + ±0 is 2");
        let quotient = c(1.0) / acc;
        assert!(quotient.e.is_infinite());
        assert!(end_run(), "1 / ±0 is ±∞: not compared");
        assert!(!acc.abs().zero_free);
        // Two open zeros: +0 + −0 is +0, −0 + −0 is −0.
        let mut other = c(-0.0);
        end(&mut other, 7, Carry::Extremum);
        assert!((acc + other).zero_free);
        begin(Mode::default());
    }
}
