//! Upstream MLIR conversions, run by MLIR's pass manager one at a time (so
//! the pipeline prints and verifies between them), by their registered names.

use melior::{
    pass::PassManager,
    utility::{parse_pass_pipeline, register_all_passes},
};

use super::{rewrite::Patch, LowerError};

/// Registers MLIR's passes in its global registry, once per process.
/// The registry is an unsynchronised global and registering writes it, so
/// registering on every call raced when rayon workers lowered chunks in
/// parallel; `Once` makes the first caller register and every other caller
/// wait until it has. Call this before any pass is looked up by name.
pub fn register_passes_once() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(register_all_passes);
}

pub fn run(rw: &mut Patch<'_, '_>, pass: &str) -> Result<(), LowerError> {
    register_passes_once();
    let root = rw.root();
    let pm = PassManager::new(rw.ctx);
    parse_pass_pipeline(
        pm.as_operation_pass_manager(),
        &format!("builtin.module({pass})"),
    )
    .map_err(|e| rw.error(root, format!("MLIR does not know the pass `{pass}`: {e}")))?;
    pm.run(rw.module_mut())
        .map_err(|_| rw.error(root, format!("the upstream pass `{pass}` failed")))
}
