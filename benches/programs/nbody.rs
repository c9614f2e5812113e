//! Pairwise interactions: the gravitational accelerations of `n` bodies with
//! Plummer softening, positions and masses as separate `&[f32]` columns
//! (structure of arrays, as n-body codes lay them out for vector units), and
//! a leapfrog (kick–drift) step around it.
//!
//! Each interaction costs 20 floating-point operations by the customary count
//! (3 subtractions, 3 multiplications and 3 additions for `r²` with the
//! softening, a square root and a division counted as one each with the
//! product `r²·r`, and 6 for the three accumulations and the mass factor).

use rayon::prelude::*;

use super::{clones, Build, Case, WholeRun, Work};
use crate::common::Xorshift;

/// ε², the squared softening length: keeps close encounters finite (and the
/// self-interaction `j == i` exactly zero, since its offset is zero).
pub(crate) const SOFTENING2: f32 = 1e-3;

/// The program as its author writes it, with `$annotate` (if given) as its attribute.
macro_rules! program {
    ($($annotate:ident)?) => {
        /// `a[i] = Σⱼ m[j]·(r[j] − r[i]) / (|r[j] − r[i]|² + ε²)^{3/2}` for every body `i`.
        $(#[$annotate(complexity = "High", size = x.len() * x.len())])?
        pub(crate) fn accelerations(
            x: &[f32],
            y: &[f32],
            z: &[f32],
            m: &[f32],
            ax: &mut [f32],
            ay: &mut [f32],
            az: &mut [f32],
        ) {
            let n = x.len();
            for i in 0..n {
                let (mut sx, mut sy, mut sz) = (0.0f32, 0.0f32, 0.0f32);
                for j in 0..n {
                    let dx = x[j] - x[i];
                    let dy = y[j] - y[i];
                    let dz = z[j] - z[i];
                    let r2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
                    let inv = 1.0 / (r2 * r2.sqrt());
                    let s = m[j] * inv;
                    sx += dx * s;
                    sy += dy * s;
                    sz += dz * s;
                }
                ax[i] = sx;
                ay[i] = sy;
                az[i] = sz;
            }
        }
    };
}

/// The loops, unannotated.
pub(crate) mod plain {
    use super::SOFTENING2;
    program!();
}

/// The same loops under `#[adaptive_kernel]`.
pub(crate) mod annotated {
    use super::SOFTENING2;
    use adaptive_kernel::adaptive_kernel;
    program!(adaptive_kernel);
}

/// Hand-optimised: `L` bodies at once in lanes (no horizontal sums: every
/// lane is its own body `i`, and body `j` is broadcast), a clone per CPU
/// feature level, rayon over blocks of bodies. The same arithmetic as the
/// plain loops (an exact square root and division; the sums in the same
/// order), with fused multiply–adds.
pub(crate) mod hand {
    use super::*;

    /// Bodies per rayon task: 16 tasks at 4,096 bodies, enough to balance two threads.
    const BLOCK: usize = 256;

    /// [`super::plain::accelerations`], hand-optimised.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn accelerations(
        x: &[f32],
        y: &[f32],
        z: &[f32],
        m: &[f32],
        ax: &mut [f32],
        ay: &mut [f32],
        az: &mut [f32],
    ) {
        ax.par_chunks_mut(BLOCK)
            .zip(ay.par_chunks_mut(BLOCK))
            .zip(az.par_chunks_mut(BLOCK))
            .enumerate()
            .for_each(|(block, ((ax, ay), az))| block_accelerations(x, y, z, m, block * BLOCK, ax, ay, az));
    }

    clones! {
        /// The accelerations of bodies `first..first + ax.len()`.
        fn block_accelerations(
            x: &[f32], y: &[f32], z: &[f32], m: &[f32], first: usize,
            ax: &mut [f32], ay: &mut [f32], az: &mut [f32],
        ) = block_lanes::<16, 8, 4>
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn block_lanes<const L: usize>(
        x: &[f32],
        y: &[f32],
        z: &[f32],
        m: &[f32],
        first: usize,
        ax: &mut [f32],
        ay: &mut [f32],
        az: &mut [f32],
    ) {
        let n = x.len().min(y.len()).min(z.len()).min(m.len());
        let (x, y, z, m) = (&x[..n], &y[..n], &z[..n], &m[..n]);
        let count = ax.len().min(ay.len()).min(az.len());
        let mut i0 = 0;
        while i0 < count {
            // A full group of `L` bodies, or the last, partial one padded with copies of body `first`.
            let lanes = L.min(count - i0);
            let (mut xi, mut yi, mut zi) = ([0.0f32; L], [0.0f32; L], [0.0f32; L]);
            for l in 0..L {
                let i = first + i0 + if l < lanes { l } else { 0 };
                xi[l] = x[i];
                yi[l] = y[i];
                zi[l] = z[i];
            }
            let (mut sx, mut sy, mut sz) = ([0.0f32; L], [0.0f32; L], [0.0f32; L]);
            for j in 0..n {
                let (xj, yj, zj, mj) = (x[j], y[j], z[j], m[j]);
                for l in 0..L {
                    let dx = xj - xi[l];
                    let dy = yj - yi[l];
                    let dz = zj - zi[l];
                    let r2 = dx.mul_add(dx, dy.mul_add(dy, dz.mul_add(dz, SOFTENING2)));
                    let s = mj / (r2 * r2.sqrt());
                    sx[l] = dx.mul_add(s, sx[l]);
                    sy[l] = dy.mul_add(s, sy[l]);
                    sz[l] = dz.mul_add(s, sz[l]);
                }
            }
            ax[i0..i0 + lanes].copy_from_slice(&sx[..lanes]);
            ay[i0..i0 + lanes].copy_from_slice(&sy[..lanes]);
            az[i0..i0 + lanes].copy_from_slice(&sz[..lanes]);
            i0 += lanes;
        }
    }
}

/// Bodies in a unit ball with masses summing to 1 (G = 1).
pub(crate) struct Bodies {
    pub(crate) x: Vec<f32>,
    pub(crate) y: Vec<f32>,
    pub(crate) z: Vec<f32>,
    pub(crate) m: Vec<f32>,
}

impl Bodies {
    /// `n` bodies from a fixed seed.
    pub(crate) fn new(n: usize, seed: u32) -> Bodies {
        let mut rng = Xorshift::new(seed);
        let mass = rng.uniform(n, 0.5, 1.5);
        let total: f32 = mass.iter().sum();
        Bodies {
            x: rng.uniform(n, -1.0, 1.0),
            y: rng.uniform(n, -1.0, 1.0),
            z: rng.uniform(n, -1.0, 1.0),
            m: mass.iter().map(|m| m / total).collect(),
        }
    }

    /// The accelerations `(ax, ay, az)` in `build`.
    pub(crate) fn accelerations(&self, build: Build) -> [Vec<f32>; 3] {
        let n = self.x.len();
        let mut a = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        let [ax, ay, az] = &mut a;
        accelerations(build, self, ax, ay, az);
        a
    }
}

/// The signature every build's `accelerations` has.
pub(crate) type AccelerationsFn = fn(&[f32], &[f32], &[f32], &[f32], &mut [f32], &mut [f32], &mut [f32]);

/// The accelerations of `b` in `build`.
fn accelerations(build: Build, b: &Bodies, ax: &mut [f32], ay: &mut [f32], az: &mut [f32]) {
    let f: AccelerationsFn = match build {
        Build::Plain => plain::accelerations,
        Build::Annotated | Build::Twin => annotated::accelerations,
        Build::Hand => hand::accelerations,
    };
    f(&b.x, &b.y, &b.z, &b.m, ax, ay, az);
}

/// The per-call case: one evaluation of the accelerations of `n` bodies.
pub(crate) struct Accelerations {
    bodies: Bodies,
    a: [Vec<f32>; 3],
}

impl Accelerations {
    /// The case for `n` bodies.
    pub(crate) fn new(n: usize) -> Accelerations {
        Accelerations { bodies: Bodies::new(n, 0xB0D1E5), a: [vec![0.0; n], vec![0.0; n], vec![0.0; n]] }
    }
}

impl Case for Accelerations {
    fn label(&self) -> String {
        format!("n-body, {} bodies", self.bodies.x.len())
    }
    fn call(&mut self, build: Build) {
        let [ax, ay, az] = &mut self.a;
        accelerations(build, &self.bodies, ax, ay, az);
    }
    fn work(&self) -> Work {
        let n = self.bodies.x.len() as f64;
        Work::Flops(20.0 * n * n)
    }
    fn routed(&self) -> (&'static adaptive_kernel::Kernel, usize) {
        let n = self.bodies.x.len();
        (&annotated::accelerations::KERNEL, n * n)
    }
    fn target(&self) -> &'static str {
        "≥ 0.8× hand"
    }
}

/// Bodies in the whole run, and its steps.
const RUN_BODIES: usize = 4_096;
const RUN_STEPS: usize = 20;

/// `RUN_STEPS` leapfrog steps of `RUN_BODIES` bodies starting at rest; the
/// final kinetic energy.
fn simulate(build: Build) -> f64 {
    let mut b = Bodies::new(RUN_BODIES, 0x51A7);
    let n = RUN_BODIES;
    let dt = 1e-3f32;
    let (mut vx, mut vy, mut vz) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
    let (mut ax, mut ay, mut az) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
    for _ in 0..RUN_STEPS {
        accelerations(build, &b, &mut ax, &mut ay, &mut az);
        for i in 0..n {
            vx[i] += ax[i] * dt;
            vy[i] += ay[i] * dt;
            vz[i] += az[i] * dt;
            b.x[i] += vx[i] * dt;
            b.y[i] += vy[i] * dt;
            b.z[i] += vz[i] * dt;
        }
    }
    (0..n).map(|i| 0.5 * f64::from(b.m[i]) * f64::from(vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i])).sum()
}

/// The whole run: `RUN_STEPS` steps of `RUN_BODIES` bodies.
pub(crate) const WHOLE_RUN: WholeRun =
    WholeRun { name: "nbody", describe: "n-body: 4,096 bodies, 20 leapfrog steps", run: simulate };
