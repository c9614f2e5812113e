//! What the generated crate's program runs: for each kernel, each case (a size,
//! a row width, an input set), the plain copy, then per variant the tracked
//! copy under that variant's contract and the variant itself, forced, compared
//! element by element. It prints one line per kernel and one per failure:
//!
//! ```text
//! difftest: BEGIN kernel=k3
//! difftest: FAIL seed=7 kernel=k3 shape=items variant=gpu size=4 width=1 input=special element=0 expected=NaN got=0 why=…
//! difftest: DONE kernel=k3 checks=96 unchecked=2 failures=1 variants=gpu:24:0,parallel:24:1,scalar:24:0,simd:24:1
//! ```
//!
//! The variants a process runs come from `DIFFTEST_VARIANTS` (`scalar,simd,parallel,gpu`), the
//! label of the Parallel one from `DIFFTEST_PARALLEL` (`parallel×3`): the parent runs one
//! process per thread count, since `ADAPTIVE_KERNEL_THREADS` is read once per process.

use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use adaptive_kernel::{Backend, Kernel};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::track::{self, Er, Mode};

/// How long a slice parameter is (see `ast::Len`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    /// `n`.
    N,
    /// `n * k`.
    Times(usize),
    /// `k`.
    Fixed(usize),
    /// The row width.
    W,
    /// `n / w` rows.
    H,
}

/// Which input values a case holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// Finite, normal values (many exactly representable, ties included).
    Normal,
    /// NaN, ±∞, ±0, subnormals, huge and tiny values among normal ones.
    Special,
}

impl Set {
    fn name(self) -> &'static str {
        match self {
            Set::Normal => "normal",
            Set::Special => "special",
        }
    }
}

/// One call's inputs.
#[derive(Clone, Debug)]
pub struct Case {
    /// The size.
    pub n: usize,
    /// The row width.
    pub w: usize,
    /// The input set.
    pub set: Set,
    seed: u64,
}

const SPECIALS: [f32; 14] = [
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    1e-40,
    -1e-40,
    f32::MIN_POSITIVE,
    f32::MAX,
    -f32::MAX,
    3e38,
    1e30,
    -1e-30,
    1.0,
];

impl Case {
    fn rng(&self, slot: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(self.seed ^ slot.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn len(&self, len: Len) -> usize {
        match len {
            Len::N => self.n,
            Len::Times(k) => self.n * k,
            Len::Fixed(k) => k,
            Len::W => self.w,
            Len::H => self.n / self.w.max(1),
        }
    }

    fn value(&self, rng: &mut ChaCha8Rng) -> f32 {
        if self.set == Set::Special && rng.random_bool(0.2) {
            return SPECIALS[rng.random_range(0..SPECIALS.len())];
        }
        if rng.random_bool(0.5) {
            rng.random_range(-48i32..=48) as f32 / 16.0
        } else {
            rng.random_range(-8.0f32..8.0)
        }
    }

    /// A float slice for parameter `slot`.
    pub fn f32s(&self, slot: u64, len: Len) -> Vec<f32> {
        let mut rng = self.rng(slot);
        (0..self.len(len)).map(|_| self.value(&mut rng)).collect()
    }

    /// An integer slice for parameter `slot`, every value below `below`.
    pub fn u32s(&self, slot: u64, len: Len, below: u32) -> Vec<u32> {
        let mut rng = self.rng(slot);
        (0..self.len(len)).map(|_| rng.random_range(0..below.max(1))).collect()
    }

    /// A float scalar for parameter `slot`.
    pub fn f32(&self, slot: u64) -> f32 {
        let mut rng = self.rng(slot);
        if self.set == Set::Special && rng.random_bool(0.3) {
            return SPECIALS[rng.random_range(0..SPECIALS.len())];
        }
        [0.5, 1.5, -2.0, 0.0, 3.25, 0.1, -0.75, 2.0][rng.random_range(0..8)]
    }
}

/// What a case's closure is asked to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// The plain copy.
    Plain,
    /// The annotated copy, forced to one variant.
    Variant(Backend),
    /// The tracked copy.
    Tracked,
}

/// One observed result element.
#[derive(Clone, Copy, Debug)]
pub enum Val {
    /// A float.
    F(f32),
    /// An integer.
    I(u64),
    /// A tracked float.
    T(Er),
}

/// A call's results: its written slices, then its value.
pub type Obs = Vec<Val>;

/// Something a kernel returns or writes.
pub trait Observe {
    /// Appends its elements.
    fn observe(&self, out: &mut Obs);
}

impl Observe for f32 {
    fn observe(&self, out: &mut Obs) {
        out.push(Val::F(*self));
    }
}

impl Observe for u32 {
    fn observe(&self, out: &mut Obs) {
        out.push(Val::I(u64::from(*self)));
    }
}

impl Observe for usize {
    fn observe(&self, out: &mut Obs) {
        out.push(Val::I(*self as u64));
    }
}

impl Observe for () {
    fn observe(&self, _: &mut Obs) {}
}

impl Observe for Er {
    fn observe(&self, out: &mut Obs) {
        out.push(Val::T(*self));
    }
}

impl<T: Observe> Observe for Vec<T> {
    fn observe(&self, out: &mut Obs) {
        for x in self {
            x.observe(out);
        }
    }
}

impl<T: Observe + ?Sized> Observe for &T {
    fn observe(&self, out: &mut Obs) {
        (**self).observe(out);
    }
}

macro_rules! tuples {
    ($(($($t:ident $i:tt),*)),*) => {$(
        impl<$($t: Observe),*> Observe for ($($t,)*) {
            fn observe(&self, out: &mut Obs) {
                $(self.$i.observe(out);)*
            }
        }
    )*};
}

tuples!((A 0), (A 0, B 1), (A 0, B 1, C 2), (A 0, B 1, C 2, D 3));

/// A call's observed results.
pub fn obs(x: impl Observe) -> Obs {
    let mut out = Vec::new();
    x.observe(&mut out);
    out
}

/// The tracked copy's observed results.
pub fn tobs(x: impl Observe) -> Obs {
    obs(x)
}

/// Floats as tracked values (exact inputs).
pub fn lift(x: &[f32]) -> Vec<Er> {
    x.iter().map(|&v| track::c(v)).collect()
}

/// Integers stay integers in the tracked copy.
pub fn lift_u32(x: &[u32]) -> Vec<u32> {
    x.to_vec()
}

/// The sizes every kernel's cases are drawn around: the SIMD variant's lanes (32) and
/// chunks (64, 16, 4), the Parallel variant's chunks (up to four per thread, 1 and 3
/// threads), the GPU's workgroup (64).
pub const SIZES: [usize; 30] = [
    0, 1, 2, 3, 4, 5, 7, 12, 13, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 97, 127, 128, 129, 192, 255, 256, 257,
    1023, 1025,
];

/// Row widths: 1, around the lanes and around the workgroup.
pub const WIDTHS: [usize; 9] = [1, 2, 3, 4, 7, 16, 17, 64, 65];

/// The kernels of a generated crate, by name.
pub type Kernels = [(&'static str, fn(&mut Harness))];

/// Runs the kernels of one process and prints what it finds.
#[derive(Debug)]
pub struct Harness {
    seed: u64,
    variants: Vec<(Backend, String)>,
    checks: u64,
    unchecked: u64,
    failures: u64,
    /// Comparisons made and left unchecked by variant label, for the kernel being run.
    by_variant: std::collections::BTreeMap<String, (u64, u64)>,
    /// Failures printed per kernel and variant, at most.
    shown: u64,
}

/// The program of a generated crate: the generated `main` calls this with its seed and kernels.
pub fn main(seed: u64, kernels: &Kernels) {
    let parallel = std::env::var("DIFFTEST_PARALLEL").unwrap_or_else(|_| "parallel".into());
    let wanted = std::env::var("DIFFTEST_VARIANTS").unwrap_or_else(|_| "scalar,simd,parallel,gpu".into());
    let only: Option<String> = std::env::args().nth(1);
    let skip = std::env::var("DIFFTEST_SKIP").unwrap_or_default();
    let skip: Vec<&str> = skip.split(',').filter(|s| !s.is_empty()).collect();
    let variants = wanted
        .split(',')
        .filter_map(|w| match w.trim() {
            "scalar" => Some((Backend::Scalar, "scalar".to_string())),
            "simd" => Some((Backend::Simd, "simd".to_string())),
            "parallel" => Some((Backend::Parallel, parallel.clone())),
            "gpu" => Some((Backend::Gpu, "gpu".to_string())),
            _ => None,
        })
        .collect();
    // Panics of a variant are findings, reported on their line: not on stderr too.
    std::panic::set_hook(Box::new(|_| {}));
    let by_variant = Default::default();
    let mut h = Harness { seed, variants, checks: 0, unchecked: 0, failures: 0, by_variant, shown: 0 };
    for (name, check) in kernels {
        if only.as_deref().is_some_and(|o| o != *name) || skip.contains(name) {
            continue;
        }
        say(&format!("difftest: BEGIN kernel={name}"));
        let before = (h.checks, h.unchecked, h.failures);
        h.shown = 0;
        check(&mut h);
        let by: Vec<String> =
            std::mem::take(&mut h.by_variant).iter().map(|(v, (c, u))| format!("{v}:{c}:{u}")).collect();
        say(&format!(
            "difftest: DONE kernel={name} checks={} unchecked={} failures={} variants={}",
            h.checks - before.0,
            h.unchecked - before.1,
            h.failures - before.2,
            by.join(",")
        ));
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    let s = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
    s.unwrap_or_else(|| "a panic".into()).replace(char::is_whitespace, "_")
}

impl Harness {
    /// Runs every case of one kernel: `run` builds the case's inputs and runs what it is asked.
    pub fn kernel(
        &mut self,
        name: &str,
        shape: &str,
        sizes: &[usize],
        widths: &[usize],
        kernel: &'static Kernel,
        run: &dyn Fn(&Case, Run) -> Obs,
    ) {
        let spec = kernel.spec();
        for &n in sizes {
            for &w in widths {
                for set in [Set::Normal, Set::Special] {
                    let seed = self.seed
                        ^ (n as u64).wrapping_mul(0x100_0000_01B3)
                        ^ (w as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
                        ^ u64::from(set == Set::Special).wrapping_mul(0x1656_67B1_9E37_79F9)
                        ^ name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
                    let case = Case { n, w, set, seed };
                    let plain = match catch_unwind(AssertUnwindSafe(|| run(&case, Run::Plain))) {
                        Ok(p) => p,
                        Err(p) => {
                            self.fail(
                                name,
                                shape,
                                "plain",
                                &case,
                                0,
                                "-",
                                "-",
                                &format!("plain_copy_panicked:{}", panic_text(&*p)),
                            );
                            continue;
                        }
                    };
                    for (backend, label) in self.variants.clone() {
                        let exists = match backend {
                            Backend::Parallel => kernel.has_parallel(),
                            Backend::Gpu => kernel.has_gpu(),
                            _ => true,
                        };
                        if !exists {
                            continue;
                        }
                        track::begin(Mode::of(backend, spec));
                        let tracked = catch_unwind(AssertUnwindSafe(|| run(&case, Run::Tracked)));
                        let tainted = track::end_run();
                        // The tracked copy runs the plain copy's operations: a panic there is the tester's.
                        let tracked = match tracked {
                            Ok(t) => t,
                            Err(p) => {
                                let why = format!("tracked_copy_panicked:{}", panic_text(&*p));
                                self.fail(name, shape, "tracker", &case, 0, "-", "-", &why);
                                continue;
                            }
                        };
                        // The tracker computes the plain copy's values: if not, the tester is wrong.
                        if let Some((at, why)) = self_check(&plain, &tracked) {
                            self.fail(name, shape, "tracker", &case, at, "-", "-", &why);
                            continue;
                        }
                        let got = match catch_unwind(AssertUnwindSafe(|| run(&case, Run::Variant(backend)))) {
                            Ok(g) => g,
                            Err(p) => {
                                self.fail(
                                    name,
                                    shape,
                                    &label,
                                    &case,
                                    0,
                                    "-",
                                    "-",
                                    &format!("panicked:{}", panic_text(&*p)),
                                );
                                continue;
                            }
                        };
                        let counts = self.by_variant.entry(label.clone()).or_default();
                        if tainted {
                            counts.1 += 1;
                            self.unchecked += 1;
                            continue;
                        }
                        counts.0 += 1;
                        self.checks += 1;
                        if let Some((at, expected, found, why)) = compare(&got, &tracked) {
                            self.fail(name, shape, &label, &case, at, &expected, &found, why);
                        }
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fail(
        &mut self,
        name: &str,
        shape: &str,
        variant: &str,
        case: &Case,
        at: usize,
        expected: &str,
        got: &str,
        why: &str,
    ) {
        self.failures += 1;
        if self.shown >= 4 {
            return;
        }
        self.shown += 1;
        say(&format!(
            "difftest: FAIL seed={} kernel={name} shape={shape} variant={variant} size={} width={} input={} element={at} expected={expected} got={got} why={why}",
            self.seed,
            case.n,
            case.w,
            case.set.name()
        ));
    }
}

/// Where the tracked copy's values are not the plain copy's, bit for bit.
fn self_check(plain: &Obs, tracked: &Obs) -> Option<(usize, String)> {
    if plain.len() != tracked.len() {
        return Some((0, format!("tracked_copy_has_{}_results_the_plain_{}", tracked.len(), plain.len())));
    }
    for (i, (p, t)) in plain.iter().zip(tracked).enumerate() {
        let same = match (p, t) {
            (Val::F(p), Val::T(t)) => p.to_bits() == t.v.to_bits() || (p.is_nan() && t.v.is_nan()),
            (Val::I(p), Val::I(t)) => p == t,
            _ => false,
        };
        if !same {
            return Some((i, format!("tracked_copy_computes_{t:?}_the_plain_{p:?}").replace(' ', "")));
        }
    }
    None
}

/// The first element where the variant's result breaks the contract: its index, the
/// expected value with its bound, the value found, and why.
fn compare(got: &Obs, tracked: &Obs) -> Option<(usize, String, String, &'static str)> {
    if got.len() != tracked.len() {
        return Some((0, tracked.len().to_string(), got.len().to_string(), "result_count"));
    }
    for (i, (g, t)) in got.iter().zip(tracked).enumerate() {
        let why = match (g, t) {
            (Val::F(g), Val::T(t)) => agree(*g, t),
            (Val::I(g), Val::I(t)) => (g != t).then_some("integer_differs"),
            _ => Some("kind"),
        };
        if let Some(why) = why {
            let expected = match t {
                Val::T(t) if t.e > 0.0 => format!("{:?}±{:.3e}", t.v, t.e),
                Val::T(t) => format!("{:?}", t.v),
                Val::I(t) => t.to_string(),
                Val::F(t) => format!("{t:?}"),
            };
            let found = match g {
                Val::F(g) => format!("{g:?}"),
                Val::I(g) => g.to_string(),
                Val::T(g) => format!("{:?}", g.v),
            };
            return Some((i, expected, found, why));
        }
    }
    None
}

/// Whether `g` is a value the contract allows where the tracked copy says `t`; why not.
pub fn agree(g: f32, t: &Er) -> Option<&'static str> {
    if t.e.is_infinite() {
        return None;
    }
    if g.to_bits() == t.v.to_bits() || (g.is_nan() && t.v.is_nan()) {
        return None;
    }
    if g == 0.0 && t.v == 0.0 && (t.zero_free || t.e > 0.0) {
        return None;
    }
    let (gv, tv) = (f64::from(g), f64::from(t.v));
    if t.v.is_nan() {
        return Some("NaN_lost");
    }
    if g.is_nan() {
        return Some("NaN_where_none_is");
    }
    if t.v.is_infinite() || g.is_infinite() {
        // Past the largest finite value within the bound: overflow may go either way.
        let near = |x: f64, y: f64| x.is_finite() && x.abs() + t.e >= f64::from(f32::MAX) && x.signum() == y.signum();
        if t.e > 0.0 && (near(tv, gv) || near(gv, tv)) {
            return None;
        }
        return Some("infinity_differs");
    }
    if t.e == 0.0 {
        return Some("bits_differ_where_bit_for_bit_is_promised");
    }
    if (gv - tv).abs() <= t.e * (1.0 + 1e-9) {
        None
    } else {
        Some("beyond_the_contract's_bound")
    }
}
