//! The cost model itself: [`CostParams`] (the machine's figures), [`Work`]
//! (what one call does) and [`CostModel`] (predicted time per backend).

use serde::{Deserialize, Serialize};

use crate::backend::{Backend, OpComplexity};
use crate::candidate::Candidate;
use crate::error::Error;
use crate::numeric::is_positive_finite;

/// The work one call does, for the cost model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    /// The size the call is bucketed by (elements, by default).
    pub size: usize,
    /// Floating-point operations the call performs.
    pub flops: u64,
    /// Bytes the call reads and writes (what a GPU variant must transfer).
    pub bytes: u64,
}

impl Work {
    /// The work of a call of `size` elements, with explicit `flops`/`bytes` where the
    /// attribute gave them and estimates from the complexity otherwise:
    ///
    /// | complexity | default flops | default bytes |
    /// | --- | --- | --- |
    /// | Low | `size` | `8 · size` (f32 in and out) |
    /// | Medium | `4 · size` | `4 · size` |
    /// | High | `2 · size^1.5` (a square matmul with `size = 2n²` does `2n³ ≈ 0.7 · size^1.5`; rounded up) | `6 · size` |
    ///
    /// All arithmetic saturates.
    pub fn estimate(complexity: OpComplexity, size: usize, flops: Option<u64>, bytes: Option<u64>) -> Work {
        let s = size as u64;
        let flops = flops.unwrap_or_else(|| match complexity {
            OpComplexity::Low => s,
            OpComplexity::Medium => s.saturating_mul(4),
            // `as` saturates for floats out of range.
            OpComplexity::High => (2.0 * (s as f64).powf(1.5)) as u64,
        });
        let bytes = bytes.unwrap_or_else(|| match complexity {
            OpComplexity::Low => s.saturating_mul(8),
            OpComplexity::Medium => s.saturating_mul(4),
            OpComplexity::High => s.saturating_mul(6),
        });
        Work { size, flops, bytes }
    }
}

/// What a call would move between host and device, by where it runs: what
/// [`CostModel::predict_placed`] charges over the bus in place of [`Work::bytes`]
/// (see the [`cost`](crate::cost) module docs, "Where the data is").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transfers {
    /// Bytes a GPU run would copy to and from the device: host data up, results back
    /// (nothing for data already on the device, nor for results that stay there).
    pub gpu: u64,
    /// Bytes a CPU run (Scalar, SIMD, Parallel) would first copy down from the device:
    /// data whose device copy is newer than the host's.
    pub cpu: u64,
}

impl Transfers {
    /// The transfers of a call on host data: everything it reads and writes crosses the
    /// bus on the GPU (`work.bytes`), nothing on the CPU.
    pub fn host(work: &Work) -> Transfers {
        Transfers { gpu: work.bytes, cpu: 0 }
    }
}

/// The machine figures the cost model predicts from. Every number must be finite
/// and positive ([`CostParams::validate`]).
///
/// Serialized as a flat JSON object with these field names (the history file
/// caches it so a restart need not recalibrate).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostParams {
    /// Throughput of the Scalar backend, in FLOP/s.
    pub scalar_flops: f64,
    /// Throughput of the SIMD backend, in FLOP/s.
    pub simd_flops: f64,
    /// Host memory bandwidth seen by a streaming CPU op, in bytes per second.
    pub mem_bandwidth: f64,
    /// Throughput of the GPU backend once the data is on the device, in FLOP/s.
    pub gpu_flops: f64,
    /// Host↔device bandwidth, upload and readback together, in bytes per second.
    pub transfer_bandwidth: f64,
    /// Fixed cost of one GPU dispatch and readback, in seconds.
    pub gpu_latency: f64,
    /// Fixed cost of one CPU op call (call, allocation of the result), in seconds.
    pub cpu_call_latency: f64,
    /// Whether a usable GPU existed when these figures were taken. When false, the
    /// GPU figures are not measurements and every GPU prediction is infinite.
    pub gpu_available: bool,
    /// Threads the Parallel backend computes on (`ops::par::threads`); at 1 it is
    /// SIMD plus a fork–join, predicted never to pay.
    #[serde(default = "one")]
    pub parallel_threads: f64,
    /// Fixed cost of one fork–join of the Parallel backend, in seconds.
    #[serde(default = "default_fork_join")]
    pub fork_join_latency: f64,
}

fn one() -> f64 {
    1.0
}

fn default_fork_join() -> f64 {
    CostParams::conservative().fork_join_latency
}

/// The share of linear speed-up the Parallel backend is assumed to reach on compute-bound work.
const PARALLEL_EFFICIENCY: f64 = 0.8;

impl CostParams {
    /// Low-end figures for when calibration cannot run, GPU unavailable:
    ///
    /// | field | value |
    /// | --- | --- |
    /// | `scalar_flops` | 1e9 FLOP/s |
    /// | `simd_flops` | 4e9 FLOP/s |
    /// | `mem_bandwidth` | 5e9 B/s |
    /// | `gpu_flops` | 1e12 FLOP/s |
    /// | `transfer_bandwidth` | 8e9 B/s |
    /// | `gpu_latency` | 100 µs |
    /// | `cpu_call_latency` | 100 ns |
    /// | `parallel_threads` | 1 |
    /// | `fork_join_latency` | 50 µs |
    ///
    /// A single core of an old laptop beats these; the GPU figures only matter
    /// if a caller sets `gpu_available` itself.
    pub const fn conservative() -> CostParams {
        CostParams {
            scalar_flops: 1e9,
            simd_flops: 4e9,
            mem_bandwidth: 5e9,
            gpu_flops: 1e12,
            transfer_bandwidth: 8e9,
            gpu_latency: 100e-6,
            cpu_call_latency: 100e-9,
            gpu_available: false,
            parallel_threads: 1.0,
            fork_join_latency: 50e-6,
        }
    }

    /// Checks that every figure is finite and positive; the error names the first
    /// one that is not. Use it on figures read from a file before installing them.
    pub fn validate(&self) -> Result<(), Error> {
        let mut copy = *self;
        let invalid =
            copy.figures_mut().into_iter().map(|(name, value)| (name, *value)).find(|&(_, v)| !is_positive_finite(v));
        match invalid {
            Some((name, value)) => Err(Error::InvalidParameter { name, value }),
            None => Ok(()),
        }
    }

    /// The numeric fields with their names, in declaration order.
    fn figures_mut(&mut self) -> [(&'static str, &mut f64); 9] {
        [
            ("scalar_flops", &mut self.scalar_flops),
            ("simd_flops", &mut self.simd_flops),
            ("mem_bandwidth", &mut self.mem_bandwidth),
            ("gpu_flops", &mut self.gpu_flops),
            ("transfer_bandwidth", &mut self.transfer_bandwidth),
            ("gpu_latency", &mut self.gpu_latency),
            ("cpu_call_latency", &mut self.cpu_call_latency),
            ("parallel_threads", &mut self.parallel_threads),
            ("fork_join_latency", &mut self.fork_join_latency),
        ]
    }

    /// `self` with every figure that fails [`validate`](Self::validate) replaced by
    /// its [`conservative`](Self::conservative) value, and the names replaced.
    fn sanitized(mut self) -> (CostParams, Vec<&'static str>) {
        let mut fallback = CostParams::conservative();
        let mut replaced = Vec::new();
        for ((name, value), (_, default)) in self.figures_mut().into_iter().zip(fallback.figures_mut()) {
            if !is_positive_finite(*value) {
                *value = *default;
                replaced.push(name);
            }
        }
        (self, replaced)
    }
}

impl Default for CostParams {
    /// [`CostParams::conservative`].
    fn default() -> Self {
        CostParams::conservative()
    }
}

/// Predicts a call's time on each backend from [`CostParams`]; see the
/// [`cost`](crate::cost) module docs for the formulas and how the figures are measured.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::{Backend, CostModel, CostParams, Work};
/// let model = CostModel::from_params(CostParams { gpu_available: true, ..CostParams::conservative() });
/// let tiny = Work { size: 4, flops: 4, bytes: 48 };
/// let big = Work { size: 2 << 20, flops: 2 << 30, bytes: 12 << 20 };
/// assert!(!model.gpu_worth_it(&tiny));
/// assert!(model.gpu_worth_it(&big));
/// assert_eq!(model.fastest(&tiny, &Backend::ALL), Some(Backend::Scalar));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    params: CostParams,
}

impl CostModel {
    /// A model over `params`. Figures that are not finite and positive are replaced
    /// by their [`CostParams::conservative`] value (with a `tracing` warning), so a
    /// model never predicts NaN; check with [`CostParams::validate`] first to
    /// reject such figures instead.
    pub fn from_params(params: CostParams) -> CostModel {
        let (params, replaced) = params.sanitized();
        if !replaced.is_empty() {
            tracing::warn!(target: "adaptive_kernel", ?replaced, "invalid cost figures replaced by conservative ones");
        }
        CostModel { params }
    }

    /// The figures this model predicts from.
    pub fn params(&self) -> CostParams {
        self.params
    }

    /// Predicted seconds for `work` on `backend`; `f64::INFINITY` for the GPU when
    /// none is available. (Parallel on one thread is predicted as SIMD plus a fork–join:
    /// never the faster.) Never NaN; non-decreasing in `work.flops` and `work.bytes`.
    pub fn predict(&self, backend: Backend, work: &Work) -> f64 {
        self.predict_placed(backend, work, &Transfers::host(work))
    }

    /// Predicted seconds for `work` on `backend` when the call would move `transfers`
    /// between host and device (see the [`cost`](crate::cost) module docs, "Where the
    /// data is"): the GPU pays for `transfers.gpu` bytes instead of `work.bytes`, every
    /// CPU backend for downloading `transfers.cpu` first. With [`Transfers::host`] it is
    /// [`predict`](Self::predict).
    ///
    /// ```
    /// # use adaptive_kernel_runtime as adaptive_kernel;
    /// use adaptive_kernel::{Backend, CostModel, CostParams, Transfers, Work};
    /// let model = CostModel::from_params(CostParams { gpu_available: true, ..CostParams::conservative() });
    /// let sweep = Work { size: 1 << 22, flops: 6 << 22, bytes: 32 << 20 };
    /// let on_host = model.predict_placed(Backend::Gpu, &sweep, &Transfers::host(&sweep));
    /// let resident = model.predict_placed(Backend::Gpu, &sweep, &Transfers { gpu: 0, cpu: 16 << 20 });
    /// assert!(resident < on_host);
    /// assert!(model.predict_placed(Backend::Simd, &sweep, &Transfers { gpu: 0, cpu: 16 << 20 })
    ///     > model.predict(Backend::Simd, &sweep));
    /// ```
    pub fn predict_placed(&self, backend: Backend, work: &Work, transfers: &Transfers) -> f64 {
        let p = &self.params;
        let flops = work.flops as f64;
        let bytes = work.bytes as f64;
        let download = transfers.cpu as f64 / p.transfer_bandwidth;
        match backend {
            Backend::Scalar => p.cpu_call_latency + (flops / p.scalar_flops).max(bytes / p.mem_bandwidth) + download,
            Backend::Simd => p.cpu_call_latency + (flops / p.simd_flops).max(bytes / p.mem_bandwidth) + download,
            Backend::Parallel => self.predict_parallel(p.parallel_threads, work) + download,
            Backend::Gpu if !p.gpu_available => f64::INFINITY,
            Backend::Gpu => p.gpu_latency + transfers.gpu as f64 / p.transfer_bandwidth + flops / p.gpu_flops,
        }
    }

    /// Predicted seconds for `work` on the Parallel backend computing on `threads`
    /// threads: its fork–join, then the work shared at [`PARALLEL_EFFICIENCY`] per thread
    /// beyond the first, or the memory traffic, whichever is longer.
    fn predict_parallel(&self, threads: f64, work: &Work) -> f64 {
        let p = &self.params;
        let speedup = 1.0 + (threads.max(1.0) - 1.0) * PARALLEL_EFFICIENCY;
        p.fork_join_latency + (work.flops as f64 / (p.simd_flops * speedup)).max(work.bytes as f64 / p.mem_bandwidth)
    }

    /// Predicted seconds for `work` on `candidate` in a pool of `pool` threads: its
    /// backend's prediction ([`CostModel::predict`]), a narrower Parallel width predicted
    /// on its share of the pool (so its fork–join term weighs against fewer threads).
    pub(crate) fn predict_candidate(
        &self,
        candidate: Candidate,
        work: &Work,
        transfers: &Transfers,
        pool: usize,
    ) -> f64 {
        match candidate.narrow_threads(pool) {
            Some(threads) => {
                self.predict_parallel(threads as f64, work) + transfers.cpu as f64 / self.params.transfer_bandwidth
            }
            None => self.predict_placed(candidate.backend(), work, transfers),
        }
    }

    /// The candidate with the lowest predicted time for `work`; equal predictions go
    /// to the earlier backend in [`Backend::ALL`] (Scalar, then SIMD, then GPU),
    /// whatever the order of `candidates`. Candidates predicted infinite (the GPU
    /// when none is available) are skipped; `None` when no candidate is left.
    pub fn fastest(&self, work: &Work, candidates: &[Backend]) -> Option<Backend> {
        cheapest(candidates.iter().map(|&b| (self.predict(b, work), b)).filter(|(t, _)| t.is_finite()))
    }

    /// Whether the GPU is predicted strictly faster than SIMD for `work`: the
    /// cold-start veto on the MoE table's GPU choice. False when no GPU is available.
    pub fn gpu_worth_it(&self, work: &Work) -> bool {
        self.predict(Backend::Gpu, work) < self.predict(Backend::Simd, work)
    }
}

/// The backend with the lowest cost; equal costs go to the earlier backend in
/// [`Backend::ALL`], so the answer does not depend on the iteration order.
pub(crate) fn cheapest(costs: impl Iterator<Item = (f64, Backend)>) -> Option<Backend> {
    costs.min_by(|(ta, a), (tb, b)| ta.total_cmp(tb).then(a.cmp(b))).map(|(_, b)| b)
}

/// Plausible figures of a machine with a GPU, for tests.
#[cfg(test)]
pub(crate) const TEST_FIGURES: CostParams = CostParams {
    scalar_flops: 2e9,
    simd_flops: 3e10,
    mem_bandwidth: 2e10,
    gpu_flops: 5e12,
    transfer_bandwidth: 1.2e10,
    gpu_latency: 40e-6,
    cpu_call_latency: 60e-9,
    gpu_available: true,
    parallel_threads: 2.0,
    fork_join_latency: 20e-6,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> CostParams {
        TEST_FIGURES
    }

    #[test]
    fn invalid_figures_are_replaced_by_conservative_ones() {
        let bad = CostParams { simd_flops: f64::NAN, gpu_latency: -1.0, mem_bandwidth: 0.0, ..params() };
        assert!(matches!(bad.validate(), Err(Error::InvalidParameter { name: "simd_flops", .. })));
        let got = CostModel::from_params(bad).params();
        let c = CostParams::conservative();
        assert_eq!(
            got,
            CostParams {
                simd_flops: c.simd_flops,
                gpu_latency: c.gpu_latency,
                mem_bandwidth: c.mem_bandwidth,
                ..params()
            }
        );
    }
}
