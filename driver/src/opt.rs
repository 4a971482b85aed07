//! `driver opt`: run named passes on a module, in the style of `mlir-opt`.

use std::path::Path;
use std::process::ExitCode;

use frontend::toolchain::RustcConfig;
use passes::lower::{self, Pipeline};
use passes::pipeline;

use crate::input;
use crate::output::write_atomic;

pub struct OptArgs<'a> {
    pub file: &'a Path,
    pub config: &'a RustcConfig,
    pub passes: Option<&'a str>,
    pub print_ir_after_all: bool,
    pub print_locations: bool,
    pub output: Option<&'a Path>,
}

pub fn opt(args: &OptArgs<'_>) -> Result<ExitCode, String> {
    // No `--passes`: verify and print, as `mlir-opt` does; `standard` is
    // the whole lowering.
    let pipeline = match args.passes {
        Some("standard") => Pipeline::standard(),
        Some(list) => Pipeline::parse(list).map_err(|e| e.to_string())?,
        None => Pipeline::parse("").map_err(|e| e.to_string())?,
    };
    let context = ir::context().map_err(|e| e.to_string())?;
    let name = args.file.display().to_string();
    // `.mlir` text is parsed (and verified) by MLIR; anything else is imported.
    let mut module = if name.ends_with(".mlir") {
        std::fs::metadata(args.file).map_err(|e| format!("cannot read {name}: {e}"))?;
        let parsed = match args.file.to_str() {
            Some(path) => ir::parse_file(&context, path),
            // MLIR opens files by a UTF-8 name: read the bytes here instead
            // (its diagnostics then say `-` for the file).
            None => {
                let text = std::fs::read_to_string(args.file)
                    .map_err(|e| format!("cannot read {name}: {e}"))?;
                ir::parse(&context, &text)
            }
        };
        parsed.map_err(|e| format!("{name} does not parse as MLIR:\n{e}"))?
    } else {
        let doc = input::load(args.file, args.config)?;
        ir::import(&context, &doc).map_err(|e| format!("{name}: {e}"))?
    };
    ir::verify(&module).map_err(|e| format!("{name}: {e}"))?;
    // Lowering works on the callbacks admission admits, read off the module.
    let outcomes = pipeline::admit_module(&module).map_err(|e| format!("{name}: {e}"))?;
    let callbacks = pipeline::admitted(&outcomes);
    let options = lower::Options {
        print_after_all: args.print_ir_after_all,
        print_locations: args.print_locations,
        overflow_checks: None,
    };
    let lowered = pipeline
        .run(&mut module, &callbacks, &options)
        .map_err(|e| e.to_string())?;
    for dump in &lowered.dumps {
        eprint!("{}", dump.render());
    }
    let text = lower::print(&module, args.print_locations);
    match args.output {
        Some(p) => write_atomic(p, text.as_bytes())?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
