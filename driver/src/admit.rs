//! `driver admit`: import, run admission, print each verdict.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::ValueEnum;
use frontend::bridge::RustcConfig;
use passes::admission::{self, Outcome, Verdict};
use passes::diagnostic::Emitter;

use crate::input;
use crate::timings::Timings;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ErrorFormat {
    Human,
    Json,
}

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
    let outcomes = timings.time("admission", || admission::admit_module(&module))?;
    Ok((doc, outcomes))
}

pub fn admit(file: &Path, config: &RustcConfig, format: ErrorFormat) -> Result<ExitCode, String> {
    let (doc, outcomes) = run_admission(file, config)?;
    let styled = format == ErrorFormat::Human && std::io::stderr().is_terminal();
    let emitter = Emitter::new(&doc.source, styled);
    let mut rejected = 0;
    for o in &outcomes {
        match &o.verdict {
            Verdict::Admitted(abi) => {
                if format == ErrorFormat::Human {
                    print!("{}", admission::abi_summary(&o.registration, abi));
                }
            }
            Verdict::Rejected(diags) => {
                rejected += 1;
                for d in diags {
                    match format {
                        ErrorFormat::Human => eprintln!("{}\n", emitter.render(d)),
                        ErrorFormat::Json => println!("{}", emitter.json(d)),
                    }
                }
            }
        }
    }
    let summary = admission::summary_line(&doc.source.file, outcomes.len(), rejected);
    match format {
        ErrorFormat::Human => println!("{summary}"),
        ErrorFormat::Json => eprintln!("{summary}"),
    }
    Ok(if rejected == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
