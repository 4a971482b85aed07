//! `driver admit`: import, run admission, print each verdict.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::ValueEnum;
use frontend::toolchain::RustcConfig;
use passes::admission::{self, Verdict};
use passes::diagnostic::Emitter;

use compiler::admit::{run_admission_with, DeviceInputs};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ErrorFormat {
    Human,
    Json,
}

pub fn admit(
    file: &Path,
    config: &RustcConfig,
    format: ErrorFormat,
    link: &[std::path::PathBuf],
    arch: &str,
    no_lto: bool,
) -> Result<ExitCode, String> {
    let arch: backend_nvptx::Arch = arch.parse().map_err(|e| format!("--arch: {e}"))?;
    let device = DeviceInputs {
        inputs: compiler::devicelibs::load(link)?,
        reader: backend_nvptx::symbols::SymbolReader {
            isolation: crate::link::isolation()?,
            ..backend_nvptx::symbols::SymbolReader::new(arch)
        },
        ptx_route: no_lto,
    };
    let (doc, outcomes) = run_admission_with(file, config, &device)?;
    let styled = format == ErrorFormat::Human && std::io::stderr().is_terminal();
    let emitter = Emitter::new(&doc.source, styled);
    let mut rejected = 0;
    for o in &outcomes {
        match &o.verdict {
            Verdict::Admitted(abi) => {
                if format == ErrorFormat::Human {
                    print!("{}", admission::abi_summary(&doc, &o.registration, abi));
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
