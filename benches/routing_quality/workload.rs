//! The workload: every (kernel, size) pair with its inputs, and their calls in one shuffled order.

use adaptive_kernel::trueno::{Matrix, Vector};
use adaptive_kernel::Work;

use crate::kernels::{K, KERNELS};

pub(crate) const SEED: u64 = 0x5EED_0009;

/// splitmix64: a tiny, fixed-seed generator (no dependency).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub(crate) fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    pub(crate) fn vec(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n).map(|_| self.unit() * scale).collect()
    }
}

pub(crate) enum Data {
    One { x: Vec<f32>, t: Option<Vector<f32>> },
    Two { a: Vec<f32>, b: Vec<f32>, t: Option<(Vector<f32>, Vector<f32>)> },
    Saxpy { x: Vec<f32>, y: Vec<f32> },
    Mat { a: Vec<f32>, b: Vec<f32>, t: Option<(Matrix<f32>, Matrix<f32>)> },
}

/// One (kernel, size) of the workload with its inputs.
pub(crate) struct Pair {
    pub(crate) k: K,
    pub(crate) n: usize,
    pub(crate) size: usize,
    pub(crate) work: Work,
    pub(crate) calls: usize,
    pub(crate) data: Data,
}

/// Calls of each kernel's largest size: `ROUTING_QUALITY_TOP_CALLS`, else 32 (a smoke run: 1).
pub(crate) fn top_calls() -> usize {
    std::env::var("ROUTING_QUALITY_TOP_CALLS").ok().and_then(|v| v.parse().ok()).unwrap_or(crate::smoke::pick(32, 1))
}

/// Every pair with its inputs; trueno's copies of them only when `trueno`.
pub(crate) fn build_pairs(trueno: bool) -> Vec<Pair> {
    let mut rng = Rng(SEED);
    let top = top_calls();
    let mut pairs = Vec::new();
    for k in KERNELS {
        let dims = k.dims();
        for (i, &n) in dims.iter().enumerate() {
            let calls = (top << (dims.len() - 1 - i)).min(4096);
            let data = match k {
                K::Add | K::Dot => {
                    let (a, b) = (rng.vec(n, 1.0), rng.vec(n, 1.0));
                    let t = trueno.then(|| (Vector::from_slice(&a), Vector::from_slice(&b)));
                    Data::Two { a, b, t }
                }
                K::Saxpy => Data::Saxpy { x: rng.vec(n, 1.0), y: rng.vec(n, 1.0) },
                K::Sum | K::Softmax | K::Sine | K::Poly => {
                    let x = rng.vec(n, if k == K::Sine { 8.0 } else { 1.0 });
                    let t = (trueno && k.trueno().is_some()).then(|| Vector::from_slice(&x));
                    Data::One { x, t }
                }
                K::Matmul | K::Conv2d => {
                    let (a, b) = if k == K::Matmul {
                        (rng.vec(n * n, 1.0), rng.vec(n * n, 1.0))
                    } else {
                        (rng.vec(n * n, 1.0), rng.vec(9, 0.3))
                    };
                    let kb = if k == K::Matmul { n } else { 3 };
                    let t = trueno.then(|| {
                        let ta = Matrix::from_slice(n, n, &a).expect("trueno matrix");
                        let tb = Matrix::from_slice(kb, kb, &b).expect("trueno matrix");
                        (ta, tb)
                    });
                    Data::Mat { a, b, t }
                }
            };
            pairs.push(Pair { k, n, size: k.size(n), work: k.work(n), calls, data });
        }
    }
    pairs
}

/// Every pair repeated `calls` times, shuffled (Fisher–Yates, fixed seed).
pub(crate) fn workload(pairs: &[Pair]) -> Vec<usize> {
    let mut order: Vec<usize> = pairs.iter().enumerate().flat_map(|(i, p)| std::iter::repeat_n(i, p.calls)).collect();
    let mut rng = Rng(SEED ^ 0xA5A5);
    for i in (1..order.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}
