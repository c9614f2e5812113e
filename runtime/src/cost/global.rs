//! The process-wide model the router consults: figures installed by the
//! caller or loaded from history, else calibrated on first use.

use std::sync::OnceLock;

use super::model::{CostModel, CostParams};

static GLOBAL: OnceLock<CostModel> = OnceLock::new();

/// The process-wide model: the one [`install_global`] put there, or else one
/// calibrated ([`CostModel::calibrate`]) on first use. Racing first calls
/// calibrate once; the others wait for it.
pub fn global() -> &'static CostModel {
    global_in(&GLOBAL)
}

/// Makes `params` the process-wide model, so [`global`] does not calibrate (the
/// history file's cached figures, installed at load). Returns false, changing
/// nothing, when the model was already set, by an earlier install or a first
/// [`global`] call. Invalid figures are replaced as in [`CostModel::from_params`].
pub fn install_global(params: CostParams) -> bool {
    install_in(&GLOBAL, params)
}

/// The process-wide model's figures if it has been calibrated or installed; `None`
/// before first use (never calibrates). What the history file caches.
pub fn calibrated() -> Option<CostParams> {
    GLOBAL.get().map(CostModel::params)
}

fn global_in(cell: &OnceLock<CostModel>) -> &CostModel {
    cell.get_or_init(CostModel::calibrate)
}

fn install_in(cell: &OnceLock<CostModel>, params: CostParams) -> bool {
    let installed = cell.set(CostModel::from_params(params)).is_ok();
    if installed {
        tracing::debug!(target: "adaptive_kernel", ?params, "installed cost model figures");
    }
    installed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> CostParams {
        super::super::model::TEST_FIGURES
    }

    #[test]
    fn global_calibrates_once_unless_figures_were_installed() {
        let cell = OnceLock::new();
        let first = global_in(&cell) as *const CostModel;
        assert_eq!(global_in(&cell) as *const CostModel, first, "calibrated once");
        assert!(!install_in(&cell, params()), "too late to install");
        assert_ne!(global_in(&cell).params(), params());

        let cell = OnceLock::new();
        assert!(install_in(&cell, params()));
        assert!(!install_in(&cell, CostParams::conservative()));
        assert_eq!(global_in(&cell).params(), params());
    }
}
