//! `gpu-run BUNDLE_DIR` runs a bundle's cases and prints `N passed, M failed`
//! (exit 1 on any failure or error, and when no case ran); `gpu-run --bench
//! BUNDLE_DIR` runs its benchmark and prints a table; `gpu-run --check
//! BUNDLE_DIR` only checks the bundle against its build, without a GPU.
//! A bundle that does not hold together is refused before any launch, with
//! a message that starts `gpu-run: refused before launch:`. Exit 2 on usage
//! errors.

use runtime::{bench, run_checked, BenchOptions, Prepared, RunOptions};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: gpu-run [--device N] [--max-size N] BUNDLE_DIR\n       \
                     gpu-run --bench [--device N] [--blocks-per-sm N] BUNDLE_DIR\n       \
                     gpu-run --check BUNDLE_DIR";

struct Args {
    bench: bool,
    check: bool,
    device: usize,
    max_size: Option<u64>,
    blocks_per_sm: Option<u32>,
    dir: PathBuf,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut bench = false;
    let mut check = false;
    let mut device = 0;
    let mut max_size = None;
    let mut blocks_per_sm = None;
    let mut dir = None;
    while let Some(arg) = argv.next() {
        let mut value = |name: &str| argv.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--bench" => bench = true,
            "--check" => check = true,
            "--device" => {
                device = value("--device")?
                    .parse()
                    .map_err(|_| "--device takes a number")?
            }
            "--max-size" => {
                max_size = Some(
                    value("--max-size")?
                        .parse()
                        .map_err(|_| "--max-size takes a number")?,
                )
            }
            "--blocks-per-sm" => {
                let n: u32 = value("--blocks-per-sm")?
                    .parse()
                    .map_err(|_| "--blocks-per-sm takes a number")?;
                if n == 0 || n > 64 {
                    return Err("--blocks-per-sm must be in 1..=64".into());
                }
                blocks_per_sm = Some(n)
            }
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            path => {
                if dir.replace(PathBuf::from(path)).is_some() {
                    return Err("one BUNDLE_DIR only".into());
                }
            }
        }
    }
    let dir = dir.ok_or("missing BUNDLE_DIR")?;
    if check && bench {
        return Err("--check and --bench exclude each other".into());
    }
    if !bench && blocks_per_sm.is_some() {
        return Err("--blocks-per-sm applies to --bench only".into());
    }
    Ok(Args {
        bench,
        check,
        device,
        max_size,
        blocks_per_sm,
        dir,
    })
}

fn main() -> ExitCode {
    // A closed pipe (`gpu-run DIR | head -1`) ends the process quietly, as
    // it does the driver, instead of a panic in `println!`.
    // SAFETY: signal(2) with the default disposition, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("gpu-run: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if args.bench {
        let options = BenchOptions {
            device: args.device,
            blocks_per_sm: args.blocks_per_sm,
        };
        match bench(&args.dir, &options) {
            Ok(report) => {
                print!("{}", report.render());
                if report.all_checks_ok() {
                    ExitCode::SUCCESS
                } else {
                    eprintln!(
                        "gpu-run: some variants computed wrong results (see the check column)"
                    );
                    ExitCode::from(1)
                }
            }
            Err(e) => {
                eprintln!("gpu-run: {e}");
                ExitCode::from(1)
            }
        }
    } else {
        let prepared = match Prepared::load(&args.dir) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("gpu-run: refused before launch: {e}");
                return ExitCode::from(1);
            }
        };
        if args.check {
            let cases: usize = prepared
                .bundle
                .registrations
                .iter()
                .map(|r| r.cases.len())
                .sum();
            println!(
                "bundle ok: {} registrations, {} cases, checked against {} without a GPU",
                prepared.bundle.registrations.len(),
                cases,
                prepared.build.manifest_path.display()
            );
            return ExitCode::SUCCESS;
        }
        let options = RunOptions {
            device: args.device,
            max_size: args.max_size,
        };
        match run_checked(&prepared, &options) {
            Ok(report) => {
                println!("device {}", report.device);
                println!("{}", report.render());
                if report.ok() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                }
            }
            Err(e) => {
                eprintln!("gpu-run: {e}");
                ExitCode::from(1)
            }
        }
    }
}
