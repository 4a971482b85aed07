//! Upstream MLIR conversions, run by MLIR's pass manager one at a time (so
//! the pipeline prints and verifies between them), by their registered names.

use melior::{
    ir::Module,
    pass::PassManager,
    utility::{parse_pass_pipeline, register_all_passes},
};

use super::{rewrite::Rw, LowerError};

pub fn run(rw: &Rw<'_>, module: &mut Module<'_>, pass: &str) -> Result<(), LowerError> {
    register_all_passes();
    let root = module.as_operation().to_raw();
    let pm = PassManager::new(rw.ctx);
    parse_pass_pipeline(
        pm.as_operation_pass_manager(),
        &format!("builtin.module({pass})"),
    )
    .map_err(|e| rw.error(root, format!("MLIR does not know the pass `{pass}`: {e}")))?;
    pm.run(module)
        .map_err(|_| rw.error(root, format!("the upstream pass `{pass}` failed")))
}
