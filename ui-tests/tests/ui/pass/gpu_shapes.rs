//! Numerical loops as people write them, each of whose top-level loops the GPU variant runs on
//! the device: they compile warning-free, every loop is reported on the GPU, and the GPU variant
//! (on a device, or on its host fallback where there is none) agrees with Scalar.
#![deny(warnings)]
#![allow(clippy::needless_range_loop)]

use adaptive_kernel::adaptive_kernel;

const SOFTENING: f32 = 1e-3;

/// Gravitational accelerations of `n` bodies (structure of arrays), with Plummer softening.
#[adaptive_kernel(complexity = "High", size = px.len() * px.len())]
pub fn gravity(px: &[f32], py: &[f32], pz: &[f32], mass: &[f32], ax: &mut [f32], ay: &mut [f32], az: &mut [f32]) {
    let n = px.len();
    for i in 0..n {
        let (xi, yi, zi) = (px[i], py[i], pz[i]);
        let (mut fx, mut fy, mut fz) = (0.0, 0.0, 0.0);
        for j in 0..n {
            let dx = px[j] - xi;
            let dy = py[j] - yi;
            let dz = pz[j] - zi;
            let d2 = dx * dx + dy * dy + dz * dz + SOFTENING;
            let inv = 1.0 / (d2 * d2.sqrt());
            fx += mass[j] * dx * inv;
            fy += mass[j] * dy * inv;
            fz += mass[j] * dz * inv;
        }
        ax[i] = fx;
        ay[i] = fy;
        az[i] = fz;
    }
}

/// k-means assignment: each point's nearest centroid (an argmin over centroids), and the inertia.
#[adaptive_kernel(complexity = "High", size = points.len() * centroids.len() / dim)]
pub fn assign(points: &[f32], centroids: &[f32], dim: usize, labels: &mut [usize]) -> f32 {
    let k = centroids.len() / dim;
    let mut inertia = 0.0f32;
    for (p, label) in points.chunks_exact(dim).zip(labels.iter_mut()) {
        let mut best = 0;
        let mut best_d = f32::MAX;
        for c in 0..k {
            let centre = &centroids[c * dim..(c + 1) * dim];
            let mut d = 0.0;
            for (a, b) in p.iter().zip(centre) {
                d += (a - b) * (a - b);
            }
            if d < best_d {
                best_d = d;
                best = c;
            }
        }
        *label = best;
        inertia += best_d;
    }
    inertia
}

/// Softmax of each row of a matrix, in place.
#[adaptive_kernel(complexity = "Medium")]
pub fn softmax_rows(x: &mut [f32], cols: usize) {
    for row in x.chunks_mut(cols) {
        let mut max = f32::NEG_INFINITY;
        for v in row.iter() {
            max = max.max(*v);
        }
        let mut total = 0.0;
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            total += *v;
        }
        for v in row.iter_mut() {
            *v /= total;
        }
    }
}

/// One Jacobi step of the 2-D Laplace equation: the 5-point stencil over each interior row, its
/// border pixels copied in the same loop; the first and last rows copied around it.
#[adaptive_kernel(complexity = "Medium", size = grid.len())]
pub fn jacobi(grid: &[f32], next: &mut [f32], w: usize) {
    let h = grid.len() / w;
    next[..w].copy_from_slice(&grid[..w]);
    for y in 1..h - 1 {
        let row = y * w;
        next[y * w] = grid[row];
        next[y * w + w - 1] = grid[row + w - 1];
        for x in 1..w - 1 {
            let at = row + x;
            next[y * w + x] = 0.25 * (grid[at - 1] + grid[at + 1] + grid[at - w] + grid[at + w]);
        }
    }
    next[(h - 1) * w..].copy_from_slice(&grid[(h - 1) * w..]);
}

/// A polynomial response, clamped to the unit interval, element by element.
#[adaptive_kernel(complexity = "Low")]
pub fn response(x: &[f32], out: &mut [f32], gain: f32) {
    for i in 0..x.len() {
        let t = x[i] * gain;
        out[i] = (0.5 + 1.5 * t - 0.25 * t.powi(3) + 0.01 * t.powi(5)).clamp(0.0, 1.0);
    }
}

fn all_on_gpu(name: &str, spec: &adaptive_kernel::kernel::KernelSpec) {
    assert!(spec.has_gpu, "{name}");
    assert!(!spec.gpu_loops.is_empty(), "{name}");
    for l in spec.gpu_loops {
        assert!(l.on_gpu(), "{name}: line {} stays on the host ({})", l.line, l.reason);
    }
}

fn close(a: &[f32], b: &[f32], tol: f32) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{x} vs {y}");
    }
}

fn main() {
    all_on_gpu("gravity", gravity::KERNEL.spec());
    all_on_gpu("assign", assign::KERNEL.spec());
    all_on_gpu("softmax_rows", softmax_rows::KERNEL.spec());
    all_on_gpu("jacobi", jacobi::KERNEL.spec());
    all_on_gpu("response", response::KERNEL.spec());

    let n = 100;
    let p: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
    let m = vec![1.0f32; n];
    let (mut g, mut s) = ([vec![0.0; n], vec![0.0; n], vec![0.0; n]], [vec![0.0; n], vec![0.0; n], vec![0.0; n]]);
    {
        let [gx, gy, gz] = &mut g;
        gravity::gpu(&p, &p[..n], &p, &m, gx, gy, gz);
        let [sx, sy, sz] = &mut s;
        gravity::scalar(&p, &p[..n], &p, &m, sx, sy, sz);
    }
    for axis in 0..3 {
        close(&g[axis], &s[axis], 1e-3);
    }

    let points: Vec<f32> = (0..300).map(|i| (i as f32 * 0.11).cos()).collect();
    let centroids = [0.0f32, 0.0, 1.0, 1.0, -1.0, 0.5];
    let (mut lg, mut ls) = (vec![0usize; 150], vec![0usize; 150]);
    let (ig, is) = (assign::gpu(&points, &centroids, 2, &mut lg), assign::scalar(&points, &centroids, 2, &mut ls));
    assert_eq!(lg, ls);
    assert!((ig - is).abs() <= 1e-3 * is.abs());

    let mut xg: Vec<f32> = (0..70).map(|i| i as f32 * 0.1).collect();
    let mut xs = xg.clone();
    softmax_rows::gpu(&mut xg, 8);
    softmax_rows::scalar(&mut xs, 8);
    close(&xg, &xs, 1e-5);

    let grid: Vec<f32> = (0..48).map(|i| (i * i % 7) as f32).collect();
    let (mut ng, mut ns) = (vec![0.0; 48], vec![0.0; 48]);
    jacobi::gpu(&grid, &mut ng, 8);
    jacobi::scalar(&grid, &mut ns, 8);
    close(&ng, &ns, 1e-6);

    let (mut og, mut os) = (vec![0.0; 33], vec![0.0; 33]);
    response::gpu(&p[..33], &mut og, 1.7);
    response::scalar(&p[..33], &mut os, 1.7);
    close(&og, &os, 1e-6);
}
