//! `gpu-bench BUILD_DIR --cub libcubbench.so [--sizes 10,16,20,24,28]
//! [--repeats N] [--passes N] [--only PROVIDER] [--sweep] [--variant DIR]...
//! [--tsv FILE] [--device N]`:
//! every registration of a build of benches/providers.rs against CUB's own
//! algorithm in the same process (runtime::providers_bench). Prints a table;
//! exit 1 on an error or when an output disagrees with CUB's, 2 on usage.

use runtime::providers_bench::{run, Options};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: gpu-bench BUILD_DIR --cub LIB [--sizes 10,16,20,24,28] [--repeats N] \
                     [--passes N] [--only PROVIDER] [--sweep] [--variant DIR]... [--tsv FILE] [--device N]";

fn parse(
    mut argv: impl Iterator<Item = String>,
) -> Result<(PathBuf, Options, Option<PathBuf>), String> {
    let mut options = Options::default();
    let mut dir = None;
    let mut tsv = None;
    while let Some(arg) = argv.next() {
        let mut value = |name: &str| argv.next().ok_or_else(|| format!("{name} needs a value"));
        let number = |name: &str, v: String| {
            v.parse::<u32>()
                .map_err(|_| format!("{name} takes a number, not `{v}`"))
        };
        match arg.as_str() {
            "--cub" => options.cub = PathBuf::from(value("--cub")?),
            "--sizes" => {
                options.sizes = value("--sizes")?
                    .split(',')
                    .map(|s| number("--sizes", s.to_string()))
                    .collect::<Result<_, _>>()?;
                if options.sizes.iter().any(|&s| s > 32) {
                    return Err("--sizes are log2 of element counts, at most 32".into());
                }
            }
            "--repeats" => options.repeats = number("--repeats", value("--repeats")?)?.max(1),
            "--passes" => options.passes = number("--passes", value("--passes")?)?.max(1),
            "--device" => options.device = number("--device", value("--device")?)? as usize,
            "--only" => options.only = Some(value("--only")?),
            "--tsv" => tsv = Some(PathBuf::from(value("--tsv")?)),
            "--sweep" => options.sweep = true,
            "--variant" => options.variants.push(PathBuf::from(value("--variant")?)),
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            path => {
                if dir.replace(PathBuf::from(path)).is_some() {
                    return Err("one BUILD_DIR only".into());
                }
            }
        }
    }
    Ok((dir.ok_or("missing BUILD_DIR")?, options, tsv))
}

fn main() -> ExitCode {
    let (dir, options, tsv) = match parse(std::env::args().skip(1)) {
        Ok(p) => p,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("gpu-bench: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&dir, &options) {
        Ok(report) => {
            print!("{}", report.render());
            if let Some(path) = tsv {
                if let Err(e) = std::fs::write(&path, report.tsv()) {
                    eprintln!("gpu-bench: {}: {e}", path.display());
                    return ExitCode::from(1);
                }
            }
            if report.all_checks_ok() {
                ExitCode::SUCCESS
            } else {
                eprintln!("gpu-bench: some outputs disagree with CUB's (see the check column), or nothing ran");
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("gpu-bench: {e}");
            ExitCode::from(1)
        }
    }
}
