//! `driver`: the command-line front of the compiler, in the spirit of rustc
//! and mlir-opt. Only this crate does file I/O for users' artifacts.
//!
//! Exit codes: 0 success, 1 rejected or failed input, 2 usage.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod admit;
mod embedded;
mod link;
mod opt;

use compiler::{build, input, output};

#[derive(Parser)]
#[command(
    name = "driver",
    version,
    about = "Compile Rust closures into callbacks for native CUDA providers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OnOff {
    On,
    Off,
}

/// How rustc builds a `.rs` input (ignored for `.mir` and `.pmir.json`).
#[derive(clap::Args)]
struct RustcArgs {
    /// Build with `-C opt-level=3` (default 0).
    #[arg(short = 'O', long = "optimize")]
    optimize: bool,
    /// `-C overflow-checks`.
    #[arg(long, value_enum, default_value = "on")]
    overflow_checks: OnOff,
}

impl RustcArgs {
    fn config(&self) -> frontend::toolchain::RustcConfig {
        frontend::toolchain::RustcConfig {
            opt_level: if self.optimize { 3 } else { 0 },
            overflow_checks: self.overflow_checks == OnOff::On,
            ..Default::default()
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Read a `.rs` file (through rustc) or a `.mir` file and write prepared MIR.
    Import {
        /// A Rust source file (`.rs`), rustc MIR text (`.mir`) or prepared MIR (`.pmir.json`).
        file: PathBuf,
        #[command(flatten)]
        rustc: RustcArgs,
        /// Where to write prepared MIR; `-` for standard output. Default: FILE's stem + `.pmir.json`.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        /// Print a readable summary instead of writing the document.
        #[arg(long)]
        summary: bool,
    },
    /// Decide, per registration, whether its callback can run on the GPU (exit 1 if any is rejected).
    Admit {
        /// `.rs`, `.mir` or `.pmir.json`.
        file: PathBuf,
        #[command(flatten)]
        rustc: RustcArgs,
        /// `human` (like rustc) or `json` (one object a line).
        #[arg(long, value_enum, default_value = "human")]
        error_format: admit::ErrorFormat,
        /// A device library that may define the `extern "C"` functions
        /// callbacks call (repeatable; see `driver build --link`).
        #[arg(long = "link", value_name = "FILE")]
        link: Vec<PathBuf>,
        /// Target architecture (what `.cu` libraries are compiled for).
        #[arg(long, default_value = "sm_90")]
        arch: String,
        /// Judge `extern "C"` calls for the PTX route (`build --no-lto`),
        /// which cannot call a definition that exists only as LTOIR.
        #[arg(long)]
        no_lto: bool,
    },
    /// Run named passes on a module, like `mlir-opt` (no `--passes`: verify and print).
    Opt {
        /// `.mlir` text, or `.rs` / `.mir` / `.pmir.json` (imported first).
        file: PathBuf,
        /// Comma-separated pass names, or `standard` for the whole lowering.
        #[arg(long)]
        passes: Option<String>,
        /// Print the module after every pass (to stderr), like `--mlir-print-ir-after-all`.
        #[arg(long)]
        print_ir_after_all: bool,
        /// Print locations.
        #[arg(long)]
        print_locations: bool,
        #[command(flatten)]
        rustc: RustcArgs,
        /// Output file (default: standard output).
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
    },
    /// The main job: compile every admitted callback with its provider into a cubin and a manifest.
    Build {
        /// A Rust source file (or `.mir` / `.pmir.json`).
        file: PathBuf,
        #[arg(long, default_value = "sm_90")]
        arch: String,
        /// Full debug information, for cuda-gdb: the Rust callback's lines,
        /// subprograms and inlining, the provider's too (unoptimised code).
        #[arg(short = 'g')]
        debug: bool,
        /// Line tables only (Rust and provider lines), with optimised code.
        #[arg(long)]
        lineinfo: bool,
        /// LTOIR on both sides, so nvJitLink inlines the callback (the default).
        #[arg(long, overrides_with = "no_lto")]
        lto: bool,
        /// PTX thunks and a PTX provider: the callback stays a call.
        #[arg(long)]
        no_lto: bool,
        /// Also write intermediate files (comma-separated).
        #[arg(long, value_enum, value_delimiter = ',')]
        emit: Vec<build::Emit>,
        #[command(flatten)]
        rustc: RustcArgs,
        /// Also write bundle.json: host-reference results for `gpu-run`.
        #[arg(long)]
        bundle: bool,
        /// Largest input size in the bundle (default 2^28).
        #[arg(long, requires = "bundle")]
        max_size: Option<u64>,
        /// Also build the PTX route, the copy kernel and a benchmark description.
        #[arg(long)]
        bench: bool,
        /// C++ expression for the benchmark's hand-written functor (of `a`, `b`, `env.NAME`).
        #[arg(long, requires = "bench")]
        cpp_baseline: Option<String>,
        /// Print the time of each stage (to stderr).
        #[arg(long)]
        timings: bool,
        /// Build everything, neither reading nor writing the build cache
        /// (`RMIR_CACHE_DIR`, default `~/.cache/rmir`; `RMIR_CACHE=off` also
        /// turns it off).
        #[arg(long)]
        no_cache: bool,
        /// A user device library linked into every cubin, whose `extern
        /// "C"` device functions callbacks may call: `.cu` (compiled by
        /// NVRTC), `.ptx`, `.ltoir`, `.cubin`, `.fatbin`, `.o` or `.a`.
        /// Repeatable; linked in the order given.
        #[arg(long = "link", value_name = "FILE")]
        link: Vec<PathBuf>,
        /// Do not run the operator contract lint (W0201: each tree-combining
        /// callback run on the host, checked associative and commutative).
        #[arg(long)]
        no_lint: bool,
        /// Warnings fail the build (exit 1, nothing written).
        #[arg(long)]
        deny_warnings: bool,
        /// When a registration is rejected, still build the admitted ones
        /// (the build fails all the same: exit 1).
        #[arg(long)]
        keep_going: bool,
        /// Output folder.
        #[arg(short = 'o', long, default_value = "out")]
        output: PathBuf,
    },
    /// The build cache: `stats` lists its entries by kind and its size
    /// limit, `clean` removes them (`RMIR_CACHE_DIR`, default
    /// `~/.cache/rmir`; `RMIR_CACHE_MAX_MIB`, default 2048).
    Cache {
        #[arg(value_enum)]
        action: CacheAction,
    },
    /// Link device code with nvJitLink, the options derived from what the inputs hold.
    Link {
        /// PTX, LTOIR, cubin, fatbin, host object (`.o`), static library (`.a`) or CUDA source (`.cu`).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Target architecture.
        #[arg(long, default_value = "sm_90")]
        arch: String,
        /// Debug information (`-g`).
        #[arg(short = 'g')]
        debug: bool,
        /// Line tables (`-lineinfo`).
        #[arg(long)]
        lineinfo: bool,
        /// Print the chosen options and the input that decided each, then link.
        #[arg(long)]
        explain: bool,
        /// Output cubin.
        #[arg(short = 'o', long, default_value = "a.cubin")]
        output: PathBuf,
    },
    /// Run a build's bundle on the GPU: hands over to `gpu-run` (beside this
    /// binary, or on PATH), which links no LLVM and is what the GPU machine runs.
    Run {
        /// A `driver build --bundle` output folder.
        dir: PathBuf,
        /// Run the bandwidth benchmark of a `--bench` build instead.
        #[arg(long)]
        bench: bool,
    },
    /// Say what a file is and list what it holds (PTX, cubin and LTOIR entries).
    Inspect { file: PathBuf },
    /// Print the long explanation of a diagnostic code, like `rustc --explain`.
    Explain {
        /// A code such as `E0101`.
        code: String,
    },
    /// Build a Cargo workspace with every crate's callbacks compiled and
    /// embedded in its binaries: `driver cargo build [cargo build options]`.
    Cargo {
        /// `build`, then any `cargo build` options.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Internal: run one nvJitLink job read from stdin (the child side of
    /// `backend_nvptx::isolate`), so a crash inside nvJitLink kills only it.
    #[command(name = link::CHILD_COMMAND, hide = true)]
    NvJitLinkChild,
}

fn main() -> ExitCode {
    process_hygiene();
    // Started by cargo as its rustc wrapper (`driver cargo build`)?
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if compiler::cargo::is_wrapper_invocation()
        && argv.get(1).is_some_and(|a| a != link::CHILD_COMMAND)
    {
        return match link::isolation() {
            Ok(isolation) => compiler::cargo::wrap(&argv, isolation),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
        };
    }
    let cli = Cli::parse();
    // The process's rustc, C++ compiler, rustc time limit and cache
    // setting: read here, once, for every stage below.
    let mut toolchain = frontend::toolchain::Toolchain::from_env();
    if let Command::Build { no_cache: true, .. } = cli.command {
        toolchain.cache = false;
    }
    if let Err(e) = configure(toolchain) {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    let result = match cli.command {
        Command::Import {
            file,
            rustc,
            output,
            summary,
        } => import(&file, &rustc.config(), output.as_deref(), summary),
        Command::Admit {
            file,
            rustc,
            error_format,
            link,
            arch,
            no_lto,
        } => admit::admit(&file, &rustc.config(), error_format, &link, &arch, no_lto),
        Command::Opt {
            file,
            passes,
            print_ir_after_all,
            print_locations,
            rustc,
            output,
        } => opt::opt(&opt::OptArgs {
            file: &file,
            config: &rustc.config(),
            passes: passes.as_deref(),
            print_ir_after_all,
            print_locations,
            output: output.as_deref(),
        }),
        Command::Build {
            file,
            arch,
            debug,
            lineinfo,
            lto: _,
            no_lto,
            emit,
            rustc,
            bundle,
            max_size,
            bench,
            cpp_baseline,
            timings,
            // Read into the toolchain where main starts.
            no_cache: _,
            link: link_files,
            no_lint,
            deny_warnings,
            keep_going,
            output,
        } => link::isolation().and_then(|isolation| {
            let arch: backend_nvptx::Arch = arch.parse().map_err(|e| format!("--arch: {e}"))?;
            let config = build::Config {
                debug,
                lineinfo,
                lto: !no_lto,
                emit,
                bundle: bundle.then_some(build::BundleRequest { max_size }),
                bench: bench.then_some(build::BenchRequest { cpp_baseline }),
                isolation,
                cache: compiler::buildcache::open(),
                cache_max_bytes: compiler::buildcache::max_bytes(),
                link: link_files,
                tuning: manifest::provider::Tuning::from_env()?,
                lint: !no_lint,
                deny_warnings,
                keep_going,
                diagnostics: passes::diagnostic::Format::human_for_stderr(),
                progress: std::io::stderr().is_terminal(),
                ..build::Config::new(arch)
            };
            build_to_folder(&file, &rustc.config(), &config, &output, timings)
        }),
        Command::Cache { action } => cache_command(action),
        Command::Cargo { args } => compiler::cargo::cargo(&args),
        Command::Link {
            inputs,
            arch,
            debug,
            lineinfo,
            explain,
            output,
        } => link::link(&link::LinkArgs {
            inputs: &inputs,
            arch: &arch,
            debug,
            lineinfo,
            explain,
            output: &output,
        }),
        Command::Inspect { file } => link::inspect(&file),
        Command::Run { dir, bench } => run_bundle(&dir, bench),
        Command::Explain { code } => explain(&code),
        Command::NvJitLinkChild => return link::serve_child(),
    };
    match result {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum CacheAction {
    Stats,
    Clean,
}

fn cache_command(action: CacheAction) -> Result<ExitCode, String> {
    let c = cache::Cache::from_env().map_err(|e| e.to_string())?;
    match action {
        CacheAction::Stats => {
            print!("{}", c.stats().map_err(|e| e.to_string())?);
            println!(
                "limit     {} MiB ({}; least recently used entries go first)",
                compiler::buildcache::max_bytes() / (1024 * 1024),
                compiler::buildcache::MAX_MIB_VAR
            );
        }
        CacheAction::Clean => println!("{}", c.clean().map_err(|e| e.to_string())?),
    }
    Ok(ExitCode::SUCCESS)
}

/// `driver build`: builds `file` in memory, prints its diagnostics, and
/// writes the artifacts into `output` (replaced only when everything
/// succeeded). Rejected registrations fail (exit 1), as rustc fails on an
/// error; with `--keep-going` the admitted ones are written first.
fn build_to_folder(
    file: &std::path::Path,
    rustc: &frontend::toolchain::RustcConfig,
    config: &build::Config,
    output: &std::path::Path,
    timings: bool,
) -> Result<ExitCode, String> {
    compiler::output::check_dir(output)?;
    let input = build::Input::File { path: file, rustc };
    let mut artifacts = match build::build(&input, config) {
        Ok(a) => a,
        Err(e) => {
            for d in &e.diagnostics {
                eprintln!("{d}");
            }
            return Err(e.message);
        }
    };
    for d in &artifacts.diagnostics {
        eprintln!("{d}");
    }
    let start = std::time::Instant::now();
    artifacts.write(output)?;
    artifacts.timings.add("write", start.elapsed());
    if timings {
        eprint!("{}", artifacts.render_timings());
    }
    eprintln!("{}", artifacts.summary(output));
    let counts = artifacts.counts;
    if counts.rejected > 0 {
        eprintln!(
            "error: {} rejected of {} registrations; the admitted ones are built (--keep-going)",
            counts.rejected,
            counts.rejected + counts.admitted
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Sets the process's toolchain (`frontend::toolchain`) before any stage
/// reads it.
fn configure(toolchain: frontend::toolchain::Toolchain) -> Result<(), String> {
    frontend::toolchain::configure(toolchain)
        .map_err(|set| format!("internal error: the toolchain was already fixed as {set:?}"))
}

/// Set up once, before anything else runs:
/// - a closed pipe on standard output or error ends the process quietly, as
///   it does rustc (`-Zon-broken-pipe=kill`) and other Unix tools, instead of
///   a panic in `println!` (`driver explain E0101 | head -1`);
/// - SIGINT and SIGTERM end running rustc children and remove scratch
///   folders and temporary outputs, then exit 130 / 143;
/// - scratch folders of earlier runs killed outright (SIGKILL) are removed.
fn process_hygiene() {
    // SAFETY: signal(2) with the default disposition, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    use signal_hook::consts::{SIGINT, SIGTERM};
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                frontend::scratch::cleanup_now();
                // SAFETY: _exit(2) ends the process at once: no destructors
                // race with the threads (rayon, MLIR) still running.
                unsafe { libc::_exit(128 + signal) }
            }
        });
    }
    frontend::scratch::remove_stale();
}

fn import(
    file: &Path,
    config: &frontend::toolchain::RustcConfig,
    output: Option<&Path>,
    summary: bool,
) -> Result<ExitCode, String> {
    let doc = input::load(file, config)?;
    if summary {
        print!("{}", frontend::summary::summary(&doc));
        return Ok(ExitCode::SUCCESS);
    }
    let json = doc.to_json();
    match output {
        Some(p) if p == Path::new("-") => print!("{json}"),
        Some(p) => output::write_atomic(p, json.as_bytes())?,
        None => {
            let p = input::default_output(file, ".pmir.json");
            output::write_atomic(&p, json.as_bytes())?;
            eprintln!(
                "wrote {} ({} bodies, {} registrations)",
                p.display(),
                doc.bodies.len(),
                doc.registrations.len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn explain(code: &str) -> Result<ExitCode, String> {
    match passes::codes::Code::parse(code) {
        Some(c) => {
            println!("{}", c.explain());
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let all: Vec<&str> = passes::codes::Code::ALL
                .iter()
                .map(|c| c.as_str())
                .collect();
            Err(format!(
                "no such code `{code}`; the codes are {}",
                all.join(", ")
            ))
        }
    }
}

/// `driver run`: the GPU side is a separate binary, `gpu-run`, so that what
/// runs on the GPU machine links neither LLVM nor MLIR.
fn run_bundle(dir: &Path, bench: bool) -> Result<ExitCode, String> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|p| p.join("gpu-run")))
        .filter(|p| p.exists());
    let program = beside.unwrap_or_else(|| PathBuf::from("gpu-run"));
    let mut cmd = std::process::Command::new(&program);
    if bench {
        cmd.arg("--bench");
    }
    let status = cmd.arg(dir).status().map_err(|e| {
        format!(
            "cannot run {}: {e} (build it with `cargo build --release -p runtime`)",
            program.display()
        )
    })?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(2) => ExitCode::from(2),
        _ => ExitCode::from(1),
    })
}
