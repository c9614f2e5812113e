//! Per-body physics as people write it: pairwise forces with accumulators
//! declared as a tuple, `let` temporaries, helper functions (plain, and one
//! taking `&mut`), per-point sub-slices (`let p = &pts[i * d..(i + 1) * d];`),
//! an energy reduction carried by the outer loop, a triangular double loop,
//! and a progress `println!` inside a loop. Each routed call, and each variant
//! called directly, matches an `f64` computation written out in `main` within
//! a relative 1e-4 (float sums may be regrouped), or bit for bit where
//! nothing is summed.
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;

const SOFTENING: f32 = 1e-2;

/// `|a − b|²` for two points of `a.len()` dimensions.
fn dist2(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0;
    for k in 0..a.len() {
        let t = a[k] - b[k];
        s += t * t;
    }
    s
}

/// Caps the speed of one body's velocity (a helper that writes through `&mut`).
fn cap_speed(v: &mut [f32], max: f32) {
    let speed = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if speed > max {
        for c in v.iter_mut() {
            *c *= max / speed;
        }
    }
}

/// Softened gravitational accelerations, structure of arrays, tuple accumulators.
#[adaptive_kernel(complexity = "High", size = x.len() * x.len())]
fn accelerations(x: &[f32], y: &[f32], z: &[f32], m: &[f32], ax: &mut [f32], ay: &mut [f32], az: &mut [f32]) {
    let n = x.len();
    for i in 0..n {
        let (mut fx, mut fy, mut fz) = (0.0f32, 0.0f32, 0.0f32);
        for j in 0..n {
            let dx = x[j] - x[i];
            let dy = y[j] - y[i];
            let dz = z[j] - z[i];
            let r2 = dx * dx + dy * dy + dz * dz + SOFTENING;
            let inv = 1.0 / (r2 * r2.sqrt());
            fx += m[j] * dx * inv;
            fy += m[j] * dy * inv;
            fz += m[j] * dz * inv;
        }
        ax[i] = fx;
        ay[i] = fy;
        az[i] = fz;
    }
}

/// Kinetic energy, `Σ ½·m·|v|²`, the reduction carried by the loop over bodies.
#[adaptive_kernel(complexity = "Medium", size = m.len())]
fn kinetic_energy(m: &[f32], vx: &[f32], vy: &[f32], vz: &[f32]) -> f32 {
    let mut energy = 0.0f32;
    for i in 0..m.len() {
        let v2 = vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i];
        energy += 0.5 * m[i] * v2;
    }
    energy
}

/// Potential energy over pairs `i < j` (a triangular double loop), points as rows of `d`.
#[adaptive_kernel(complexity = "High", size = pts.len() * m.len())]
fn potential_energy(pts: &[f32], m: &[f32], d: usize) -> f32 {
    let n = m.len();
    let mut energy = 0.0f32;
    for i in 0..n {
        let p = &pts[i * d..(i + 1) * d];
        for j in i + 1..n {
            let q = &pts[j * d..(j + 1) * d];
            energy -= m[i] * m[j] / (dist2(p, q) + SOFTENING).sqrt();
        }
    }
    energy
}

/// Per point, the distance to its nearest neighbour (rows of `d`, sub-slices, a helper call).
#[adaptive_kernel(complexity = "High", size = pts.len() * nearest.len())]
fn nearest_neighbour(pts: &[f32], d: usize, nearest: &mut [f32]) {
    let n = pts.len() / d;
    for i in 0..n {
        let p = &pts[i * d..(i + 1) * d];
        let mut best = f32::INFINITY;
        for j in 0..n {
            if j != i {
                let q = &pts[j * d..(j + 1) * d];
                let d2 = dist2(p, q);
                if d2 < best {
                    best = d2;
                }
            }
        }
        nearest[i] = best.sqrt();
    }
}

/// One kick–drift step of velocities (rows of 3) and positions, with a speed cap per body,
/// reporting progress every `every` bodies when `verbose`.
#[adaptive_kernel(complexity = "Low", size = pos.len())]
fn kick_drift(pos: &mut [f32], vel: &mut [f32], acc: &[f32], dt: f32, max_speed: f32, verbose: bool, every: usize) {
    for (i, (p, v)) in pos.chunks_exact_mut(3).zip(vel.chunks_exact_mut(3)).enumerate() {
        for c in 0..3 {
            v[c] += acc[3 * i + c] * dt;
        }
        cap_speed(v, max_speed);
        for c in 0..3 {
            p[c] += v[c] * dt;
        }
        if verbose && i % every == 0 {
            println!("body {i}: x = {:.3}", p[0]);
        }
    }
}

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| (((i as u32).wrapping_mul(2_246_822_519) ^ seed) % 2000) as f32 / 1000.0 - 1.0).collect()
}

fn close(got: f32, want: f64) -> bool {
    (f64::from(got) - want).abs() <= 1e-4 * want.abs().max(1.0)
}

fn main() {
    let n = 131;
    let (x, y, z) = (values(n, 1), values(n, 2), values(n, 3));
    let m: Vec<f32> = values(n, 4).iter().map(|v| 1.5 + v).collect();
    let f = |v: &[f32], i: usize| f64::from(v[i]);

    let mut want = [vec![0.0f64; n], vec![0.0f64; n], vec![0.0f64; n]];
    for i in 0..n {
        for j in 0..n {
            let d = [f(&x, j) - f(&x, i), f(&y, j) - f(&y, i), f(&z, j) - f(&z, i)];
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + f64::from(SOFTENING);
            for c in 0..3 {
                want[c][i] += f(&m, j) * d[c] / (r2 * r2.sqrt());
            }
        }
    }
    for k in [accelerations, accelerations::scalar, accelerations::simd] {
        let mut a = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        let [ax, ay, az] = &mut a;
        k(&x, &y, &z, &m, ax, ay, az);
        // Softened forces of up to ~1e3 summed over 131 bodies: compare against their scale.
        for c in 0..3 {
            assert!(a[c].iter().zip(&want[c]).all(|(g, w)| (f64::from(*g) - w).abs() <= 1e-4 * 1e3), "{c}");
        }
    }

    let ke: f64 = (0..n).map(|i| 0.5 * f(&m, i) * (f(&x, i).powi(2) + f(&y, i).powi(2) + f(&z, i).powi(2))).sum();
    for k in [kinetic_energy, kinetic_energy::scalar, kinetic_energy::simd] {
        assert!(close(k(&m, &x, &y, &z), ke));
    }

    let d = 3;
    let pts: Vec<f32> = (0..n).flat_map(|i| [x[i], y[i], z[i]]).collect();
    let dist = |i: usize, j: usize| -> f64 { (0..d).map(|c| (f(&pts, i * d + c) - f(&pts, j * d + c)).powi(2)).sum() };
    let mut pe = 0.0f64;
    for i in 0..n {
        for j in i + 1..n {
            pe -= f(&m, i) * f(&m, j) / (dist(i, j) + f64::from(SOFTENING)).sqrt();
        }
    }
    for k in [potential_energy, potential_energy::scalar, potential_energy::simd] {
        assert!(close(k(&pts, &m, d), pe), "{} vs {pe}", k(&pts, &m, d));
    }

    let want: Vec<f64> =
        (0..n).map(|i| (0..n).filter(|&j| j != i).map(|j| dist(i, j)).fold(f64::INFINITY, f64::min).sqrt()).collect();
    for k in [nearest_neighbour, nearest_neighbour::scalar, nearest_neighbour::simd] {
        let mut out = vec![0.0; n];
        k(&pts, d, &mut out);
        assert!(out.iter().zip(&want).all(|(g, w)| close(*g, *w)));
    }

    // The step, element-wise: every variant moves the bodies bit for bit alike.
    let acc: Vec<f32> = values(3 * n, 5);
    let mut want_pos = pts.clone();
    let mut want_vel = vec![0.5f32; 3 * n];
    for i in 0..n {
        let v = &mut want_vel[3 * i..3 * i + 3];
        for c in 0..3 {
            v[c] += acc[3 * i + c] * 0.1;
        }
        cap_speed(v, 0.8);
        for c in 0..3 {
            want_pos[3 * i + c] += v[c] * 0.1;
        }
    }
    type Step = fn(&mut [f32], &mut [f32], &[f32], f32, f32, bool, usize);
    let steps: [(Step, bool); 3] = [(kick_drift, true), (kick_drift::scalar, false), (kick_drift::simd, false)];
    for (k, verbose) in steps {
        let (mut pos, mut vel) = (pts.clone(), vec![0.5f32; 3 * n]);
        // Logs body 0 only (every 1,000th body, of 131).
        k(&mut pos, &mut vel, &acc, 0.1, 0.8, verbose, 1_000);
        assert!(pos.iter().zip(&want_pos).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert!(vel.iter().zip(&want_vel).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}
