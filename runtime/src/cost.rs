//! TEMPORARY shim until the calibrated cost model lands (same interface).
use crate::backend::Backend;
use crate::site::Work;
use std::sync::OnceLock;

/// Predicts call times.
#[derive(Debug)]
pub struct CostModel;
impl CostModel {
    /// Predicted seconds.
    pub fn predict(&self, backend: Backend, work: &Work) -> f64 {
        match backend {
            Backend::Scalar => work.flops as f64 / 1e9,
            Backend::Simd => work.flops as f64 / 1e10,
            Backend::Gpu => 5e-5 + work.bytes as f64 / 1e10 + work.flops as f64 / 1e11,
        }
    }
    /// GPU predicted faster than SIMD.
    pub fn gpu_worth_it(&self, work: &Work) -> bool {
        self.predict(Backend::Gpu, work) < self.predict(Backend::Simd, work)
    }
}
/// The process-wide model.
pub fn global() -> &'static CostModel {
    static M: OnceLock<CostModel> = OnceLock::new();
    M.get_or_init(|| CostModel)
}
/// Calibrated parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CostParams {
    /// x
    pub x: f64,
}
/// Installs params.
pub fn install_global(_p: CostParams) -> bool {
    false
}
/// The calibrated params if calibrated.
pub fn calibrated() -> Option<CostParams> {
    None
}
