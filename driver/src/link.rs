//! `driver link` and `driver inspect`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use backend_nvptx::{describe, isolate, Arch, Isolation, LinkInput, LinkPlan};

use crate::output::write_atomic;

/// The hidden subcommand that runs one nvJitLink job.
pub const CHILD_COMMAND: &str = "__nvjitlink-child";

/// nvJitLink in a child process (this binary, re-executed with
/// [`CHILD_COMMAND`]): a crash inside NVIDIA's library on a malformed input
/// becomes a located error instead of killing the driver.
pub fn isolation() -> Result<Isolation, String> {
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find this program to run nvJitLink in a child: {e}"))?;
    Ok(Isolation::Child {
        program,
        args: vec![CHILD_COMMAND.to_string()],
    })
}

/// The child side: one job from stdin, progress and answer to stdout.
pub fn serve_child() -> ExitCode {
    let code = isolate::serve_child(&mut std::io::stdin().lock(), &mut std::io::stdout().lock());
    ExitCode::from(code as u8)
}

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
    plan.isolation = isolation()?;
    for path in args.inputs {
        let name = path.display().to_string();
        // The error names the input (and where inside it) itself.
        let input = LinkInput::new(name, read(path)?).map_err(|e| e.to_string())?;
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
    let bytes = read(path)?;
    if let Some(text) = crate::embedded::describe_program(&name, &bytes)? {
        print!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    let d = describe(&name, &bytes).map_err(|e| e.to_string())?;
    print!("{}", d.render());
    Ok(ExitCode::SUCCESS)
}
