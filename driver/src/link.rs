//! `driver link` and `driver inspect`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use backend_nvptx::{describe, Arch, LinkInput, LinkPlan};

use crate::output::write_atomic;

pub struct LinkArgs<'a> {
    pub inputs: &'a [PathBuf],
    pub arch: &'a str,
    pub debug: bool,
    pub lineinfo: bool,
    pub explain: bool,
    pub output: &'a Path,
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

pub fn link(args: &LinkArgs<'_>) -> Result<ExitCode, String> {
    let arch: Arch = args.arch.parse().map_err(|e| format!("--arch: {e}"))?;
    let mut plan = LinkPlan::new(arch);
    plan.debug = args.debug;
    plan.lineinfo = args.lineinfo;
    for path in args.inputs {
        let name = path.display().to_string();
        let input =
            LinkInput::new(name.clone(), read(path)?).map_err(|e| format!("{name}: {e}"))?;
        plan = plan.with_input(input);
    }
    if args.explain {
        let explanation = plan.explain().map_err(|e| e.to_string())?;
        print!("{}", explanation.render());
    }
    let linked = plan.link().map_err(|e| e.to_string())?;
    for (input, log) in &linked.compile_logs {
        if !log.trim().is_empty() {
            eprintln!("{input}: {}", log.trim_end());
        }
    }
    write_atomic(args.output, &linked.bytes)?;
    eprintln!(
        "wrote {} ({} bytes; options: {})",
        args.output.display(),
        linked.bytes.len(),
        linked.explanation.options().join(" ")
    );
    Ok(ExitCode::SUCCESS)
}

pub fn inspect(path: &Path) -> Result<ExitCode, String> {
    let name = path.display().to_string();
    let d = describe(&name, &read(path)?).map_err(|e| format!("{name}: {e}"))?;
    print!("{}", d.render());
    Ok(ExitCode::SUCCESS)
}
