//! Admission with its trial lowering: every rule on every registration
//! (`admission`), then the admitted callbacks lowered together ([`trial`]),
//! so that admitted means it lowers. Above both: the rules read the
//! lowering's tables, and the trial reads the rules' verdicts.

pub mod trial;

use crate::admission::{admit_with, DeviceLibraries, Outcome, Verdict};
use crate::lower::Callback;

/// Admission of a module: every rule on every registration, then the trial
/// lowering of what they admit ([`trial`]), so that admitted means it lowers.
/// The module is verified first (MLIR, IRDL and `ir::verify`'s module
/// rules: every local callee is a `func.func`); an error is a module that
/// does not verify, or whose facts cannot be read.
pub fn admit_module(module: &melior::ir::Module<'_>) -> Result<Vec<Outcome>, String> {
    admit_and_lower(module).map(|a| a.outcomes)
}

/// What admission decided, and the admitted callbacks lowered.
pub struct Admission<'c> {
    pub outcomes: Vec<Outcome>,
    /// The trial lowering's module (LLVM dialect) and its thunks, when
    /// something was admitted: what code generation reads, so the module
    /// admission judged is the module that is built.
    pub lowered: Option<(melior::ir::Module<'c>, crate::lower::Lowered)>,
}

/// [`admit_module`], keeping the lowering of what it admitted.
pub fn admit_and_lower<'c>(module: &melior::ir::Module<'c>) -> Result<Admission<'c>, String> {
    admit_and_lower_with(module, &DeviceLibraries::default())
}

/// [`admit_and_lower`] with the device libraries given to the link, which
/// may define the `extern "C"` functions callbacks call.
pub fn admit_and_lower_with<'c>(
    module: &melior::ir::Module<'c>,
    libraries: &DeviceLibraries,
) -> Result<Admission<'c>, String> {
    ir::verify(module).map_err(|e| e.to_string())?;
    let facts = ir::facts(module)?;
    let mut outcomes = admit_with(&facts, libraries);
    let lowered = trial::confirm(module, &facts, &mut outcomes);
    Ok(Admission { outcomes, lowered })
}

/// The admitted callbacks of admission's outcomes, in registration order.
pub fn admitted(outcomes: &[Outcome]) -> Vec<Callback> {
    outcomes
        .iter()
        .filter_map(|o| match &o.verdict {
            Verdict::Admitted(abi) => Some(Callback {
                registration: o.registration.index,
                abi: abi.clone(),
            }),
            Verdict::Rejected(_) => None,
        })
        .collect()
}
