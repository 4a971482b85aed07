//! Loading, import and admission: the first half of every job.

use std::path::Path;

use frontend::toolchain::RustcConfig;
use passes::admission::{self, Outcome};
use passes::pipeline;

use crate::input;
use crate::timings::Timings;

/// Loads any input, imports it into the dialect and runs admission.
pub fn run_admission(
    file: &Path,
    config: &RustcConfig,
) -> Result<(frontend::PreparedMir, Vec<Outcome>), String> {
    run_admission_timed(file, config, &mut Timings::default())
}

/// [`run_admission`], recording the time of each stage.
pub fn run_admission_timed(
    file: &Path,
    config: &RustcConfig,
    timings: &mut Timings,
) -> Result<(frontend::PreparedMir, Vec<Outcome>), String> {
    let doc = timings.time("load (rustc, parse)", || input::load(file, config))?;
    let context = timings
        .time("MLIR context", ir::context)
        .map_err(|e| e.to_string())?;
    let module = timings
        .time("import to rmir", || ir::import(&context, &doc))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let outcomes = timings.time("admission", || pipeline::admit_module(&module))?;
    Ok((doc, outcomes))
}

/// [`run_admission`] with device libraries given to the link.
pub fn run_admission_with(
    file: &Path,
    config: &RustcConfig,
    device: &DeviceInputs,
) -> Result<(frontend::PreparedMir, Vec<Outcome>), String> {
    let mut timings = Timings::default();
    let context = ir::context().map_err(|e| e.to_string())?;
    let admitted = admit_and_lower(file, config, &context, &mut timings, device)?;
    Ok((admitted.doc, admitted.outcomes))
}

/// A file imported, admitted, and what was admitted lowered: the module
/// every later stage of `build` reads.
pub struct Admitted<'c> {
    pub doc: frontend::PreparedMir,
    /// The imported `rmir` module admission judged.
    pub module: melior::ir::Module<'c>,
    pub outcomes: Vec<Outcome>,
    /// Its admitted callbacks lowered (the trial lowering), when any.
    pub lowered: Option<(melior::ir::Module<'c>, passes::lower::Lowered)>,
    /// The device libraries' symbols (empty without `--link`).
    pub resolved: crate::devicelibs::Resolved,
    /// The symbols the module's `extern "C"` calls name.
    pub wanted: Vec<String>,
}

/// Loads any input, imports it into `context`, runs admission and keeps
/// the lowering of what it admitted.
pub fn admit_and_lower<'c>(
    file: &Path,
    config: &RustcConfig,
    context: &'c melior::Context,
    timings: &mut Timings,
    device: &DeviceInputs,
) -> Result<Admitted<'c>, String> {
    let doc = timings.time("load (rustc, parse)", || input::load(file, config))?;
    admit_and_lower_doc(doc, context, timings, device)
}

/// The device libraries given to the link, and how their symbols are read.
pub struct DeviceInputs {
    pub inputs: Vec<backend_nvptx::LinkInput>,
    pub reader: backend_nvptx::symbols::SymbolReader,
    /// The callbacks are built by the PTX route.
    pub ptx_route: bool,
}

/// [`admit_and_lower`] of a document already prepared (a Cargo crate's MIR).
pub fn admit_and_lower_doc<'c>(
    doc: frontend::PreparedMir,
    context: &'c melior::Context,
    timings: &mut Timings,
    device: &DeviceInputs,
) -> Result<Admitted<'c>, String> {
    let module = timings
        .time("import to rmir", || ir::import(context, &doc))
        .map_err(|e| format!("{}: {e}", doc.source.file))?;
    // The symbols the callbacks' `extern "C"` calls name, looked up in the
    // device libraries (read only when there are both).
    let wanted = admission::libraries::wanted(&ir::facts(&module)?);
    let resolved = if device.inputs.is_empty() {
        crate::devicelibs::Resolved::default()
    } else {
        timings.time("device library symbols", || {
            crate::devicelibs::resolve(&device.inputs, &wanted, &device.reader, device.ptx_route)
        })?
    };
    let admission = timings.time("admission + lowering", || {
        pipeline::admit_and_lower_with(&module, &resolved.libraries)
    })?;
    Ok(Admitted {
        doc,
        module,
        outcomes: admission.outcomes,
        lowered: admission.lowered,
        resolved,
        wanted,
    })
}
