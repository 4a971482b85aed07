//! `driver cargo build`: a Cargo workspace built as `cargo build` builds it,
//! with every crate's callbacks compiled and embedded in the binaries.
//!
//! The hook is a `RUSTC_WRAPPER`: cargo runs the driver in place of rustc
//! for every crate ([`wrap`]). A crate that depends on `native` is first
//! compiled once more by the same rustc with the same arguments to MIR only;
//! its registrations are admitted and built (diagnostics are printed as
//! `driver build` prints them, and a rejection fails the crate, so cargo
//! stops with exit 1). The crate's compiled callbacks become a record
//! (`manifest::embed`) that goes
//!
//! - for a library, into a sidecar file beside its rlib
//!   (`libNAME-HASH.rmir`), with the records of the libraries it depends on,
//!   written before the real rustc runs (so before cargo's pipelining lets a
//!   dependent start);
//! - for a binary, a `cdylib`, a `dylib` or a test, with the records of
//!   every library it uses, into an object file of its own whose only
//!   content is the `rmir_artifacts` section, passed to the final link as
//!   `-C link-arg`. It is never inside an rlib: with LTO rustc reads an
//!   rlib's objects as bitcode, and a foreign object there breaks `lto =
//!   "fat"` and `"thin"`.
//!
//! Then the real rustc runs with the original arguments (plus that link
//! argument). Cargo's own fingerprints decide what is rebuilt, so a second
//! `driver cargo build` with no change runs no compiler work at all.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use frontend::pmir::{ModuleFile, SourceFacts};
use manifest::embed::{read_section, Record};

use passes::diagnostic::Format;

use crate::build::{build, Built, Config, Input};

/// Whether `file` is a source of the standard library as rustc names it
/// in spans of its expansions (remapped to `/rustc/COMMIT/library/…`).
fn is_std_source(file: &str) -> bool {
    file.strip_prefix("/rustc/")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(_, path)| path.starts_with("library/"))
}

/// Set (to `1`) in the environment of the cargo that `driver cargo` runs:
/// the driver, started by cargo as `RUSTC_WRAPPER`, then acts as a wrapper.
pub const WRAPPER_VAR: &str = "RMIR_CARGO_WRAPPER";
/// The GPU architecture callbacks are built for (default `sm_90`).
pub const ARCH_VAR: &str = "RMIR_ARCH";
/// The name of the API crate a crate must depend on to have callbacks.
const API_CRATE: &str = frontend::registry::API_CRATE;

/// Whether this process was started by cargo as the wrapper.
pub fn is_wrapper_invocation() -> bool {
    std::env::var_os(WRAPPER_VAR).is_some_and(|v| v == "1") && std::env::args_os().len() >= 2
}

/// Set (to `1`) by `driver cargo … --deny-warnings`: the wrapper then
/// fails a crate on a warning of ours, as rustc's `-D warnings` does.
pub const DENY_WARNINGS_VAR: &str = "RMIR_DENY_WARNINGS";

/// The cargo commands `driver cargo` runs. `check` and `clippy` admit
/// every callback (and lint it) without building device code.
pub const COMMANDS: &[&str] = &["build", "run", "test", "bench", "check", "clippy"];

/// `driver cargo COMMAND ARGS…`: runs `cargo COMMAND ARGS…` with the driver
/// as rustc's wrapper. `--deny-warnings` (before any `--`) is the driver's:
/// our warnings become errors.
pub fn cargo(args: &[OsString]) -> Result<ExitCode, String> {
    let usage = || {
        format!(
            "usage: driver cargo {{{}}} [cargo options]",
            COMMANDS.join("|")
        )
    };
    match args.first().and_then(|a| a.to_str()) {
        Some(c) if COMMANDS.contains(&c) => {}
        Some(other) => {
            return Err(format!(
                "`driver cargo {other}` is not supported: the commands are {}",
                COMMANDS
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
        None => return Err(usage()),
    }
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let deny = args[..end].iter().any(|a| a == "--deny-warnings");
    let args: Vec<&OsString> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| *i >= end || *a != "--deny-warnings")
        .map(|(_, a)| a)
        .collect();
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the driver's own executable: {e}"))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(&cargo);
    command
        .args(&args)
        .env("RUSTC_WRAPPER", &exe)
        .env(WRAPPER_VAR, "1");
    if deny {
        command.env(DENY_WARNINGS_VAR, "1");
    } else {
        command.env_remove(DENY_WARNINGS_VAR);
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    // `cargo run` and `cargo test` pass on the program's own status; a
    // build that fails is exit 1, as every failed command here.
    let runs_programs = matches!(args[0].to_str(), Some("run" | "test" | "bench"));
    Ok(if runs_programs || status.success() {
        exit_code(status)
    } else {
        ExitCode::from(1)
    })
}

/// rustc's arguments, with what the wrapper needs read out of them.
#[derive(Debug, Default)]
struct Invocation {
    args: Vec<OsString>,
    input: Option<String>,
    crate_name: Option<String>,
    crate_types: Vec<String>,
    test: bool,
    out_dir: Option<PathBuf>,
    extra_filename: String,
    externs: Vec<(String, PathBuf)>,
    target: Option<String>,
    opt_level: u8,
    overflow_checks: Option<bool>,
    debug_assertions: Option<bool>,
    /// `--emit` kinds (`dep-info`, `metadata`, `link`).
    emit: Vec<String>,
    /// `--error-format=json`: cargo reads our diagnostics as rustc's.
    json: bool,
    /// `--json=diagnostic-rendered-ansi`: cargo wants colour.
    ansi: bool,
    /// `-D warnings` (cargo's `RUSTFLAGS` convention).
    deny_warnings: bool,
    /// `--cap-lints allow`: cargo's setting for a dependency it does not
    /// own, whose warnings nobody can act on.
    lints_allowed: bool,
}

/// rustc flags followed by a separate value.
const VALUE_FLAGS: &[&str] = &[
    "--crate-name",
    "--edition",
    "--crate-type",
    "--emit",
    "-C",
    "--codegen",
    "--out-dir",
    "-o",
    "-L",
    "--extern",
    "--cfg",
    "--check-cfg",
    "--error-format",
    "--json",
    "--cap-lints",
    "--target",
    "--diagnostic-width",
    "-Z",
    "-W",
    "-A",
    "-D",
    "-F",
    "--warn",
    "--allow",
    "--deny",
    "--forbid",
    "--force-warn",
    "--remap-path-prefix",
    "--print",
    "--explain",
    "--env-set",
    "--sysroot",
    "-l",
];

fn on_off(v: &str) -> Option<bool> {
    match v {
        "" | "on" | "yes" | "y" | "true" => Some(true),
        "off" | "no" | "n" | "false" => Some(false),
        _ => None,
    }
}

impl Invocation {
    fn parse(args: &[OsString]) -> Invocation {
        let mut inv = Invocation {
            args: args.to_vec(),
            ..Invocation::default()
        };
        let strs: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let mut i = 0;
        while i < strs.len() {
            let a = strs[i].as_str();
            // `--flag value`, `--flag=value`, `-X value` or `-Xvalue`.
            let short = VALUE_FLAGS
                .iter()
                .find(|f| f.len() == 2 && a.len() > 2 && a.starts_with(**f));
            let (flag, value) =
                if let Some((f, v)) = a.split_once('=').filter(|_| a.starts_with("--")) {
                    (f.to_string(), Some(v.to_string()))
                } else if VALUE_FLAGS.contains(&a) {
                    i += 1;
                    (a.to_string(), strs.get(i).cloned())
                } else if let Some(f) = short {
                    (f.to_string(), Some(a[2..].to_string()))
                } else {
                    (a.to_string(), None)
                };
            let value = value.unwrap_or_default();
            match flag.as_str() {
                "--crate-name" => inv.crate_name = Some(value),
                "--crate-type" => inv.crate_types.extend(value.split(',').map(str::to_string)),
                "--test" => inv.test = true,
                "--out-dir" => inv.out_dir = Some(PathBuf::from(value)),
                "--emit" => inv.emit.extend(
                    value
                        .split(',')
                        .map(|k| k.split('=').next().unwrap_or(k).to_string()),
                ),
                "--error-format" => inv.json = value == "json",
                "--json" => inv.ansi |= value.split(',').any(|k| k == "diagnostic-rendered-ansi"),
                "-D" | "--deny" | "-F" | "--forbid" => inv.deny_warnings |= value == "warnings",
                "--cap-lints" => inv.lints_allowed = value == "allow",
                "--target" => inv.target = Some(value),
                "--extern" => {
                    if let Some((name, path)) = value.split_once('=') {
                        inv.externs.push((name.to_string(), PathBuf::from(path)));
                    }
                }
                "-C" | "--codegen" => {
                    let (k, v) = value.split_once('=').unwrap_or((value.as_str(), ""));
                    match k {
                        "opt-level" => inv.opt_level = v.parse().unwrap_or(3),
                        "overflow-checks" => inv.overflow_checks = on_off(v),
                        "debug-assertions" => inv.debug_assertions = on_off(v),
                        "extra-filename" => inv.extra_filename = v.to_string(),
                        _ => {}
                    }
                }
                f if !f.starts_with('-') && f.ends_with(".rs") => inv.input = Some(f.to_string()),
                _ => {}
            }
            i += 1;
        }
        inv
    }

    fn crate_name(&self) -> &str {
        self.crate_name.as_deref().unwrap_or("main")
    }

    fn uses_api(&self) -> bool {
        self.externs.iter().any(|(n, _)| n == API_CRATE)
    }

    fn is_lib(&self) -> bool {
        self.crate_types.iter().any(|t| t == "lib" || t == "rlib")
    }

    /// Linked by rustc into a program or shared library.
    fn is_final(&self) -> bool {
        self.test
            || self.crate_types.is_empty()
            || self
                .crate_types
                .iter()
                .any(|t| matches!(t.as_str(), "bin" | "cdylib" | "dylib"))
    }

    /// `-C debug-assertions`, rustc's default for the opt-level when absent.
    fn debug_assertions(&self) -> bool {
        self.debug_assertions.unwrap_or(self.opt_level == 0)
    }

    fn overflow_checks(&self) -> bool {
        self.overflow_checks
            .or(self.debug_assertions)
            .unwrap_or(self.opt_level == 0)
    }

    fn stem(&self) -> String {
        format!("{}{}", self.crate_name(), self.extra_filename)
    }

    fn sidecar(&self) -> Option<PathBuf> {
        Some(
            self.out_dir
                .as_ref()?
                .join(format!("lib{}.rmir", self.stem())),
        )
    }

    /// `cargo check` and `cargo clippy`: metadata only, nothing linked.
    fn check_only(&self) -> bool {
        !self.emit.is_empty() && !self.emit.iter().any(|k| k == "link")
    }

    /// How our diagnostics are printed: as cargo asked rustc for its own.
    fn diagnostics(&self) -> Format {
        if self.json {
            Format::RustcJson { ansi: self.ansi }
        } else {
            Format::human_for_stderr()
        }
    }

    /// Prints an error of the wrapper itself, as rustc would print it.
    fn error(&self, message: &str) {
        eprintln!("{}", self.diagnostics().message("error", message));
    }

    fn kind(&self) -> &str {
        if self.test {
            "test"
        } else {
            self.crate_types.first().map_or("bin", String::as_str)
        }
    }
}

/// The sidecar of a dependency given to rustc as `libNAME-HASH.rlib` (or
/// `.rmeta`): `libNAME-HASH.rmir` beside it.
fn dependency_sidecar(path: &Path) -> PathBuf {
    path.with_extension("rmir")
}

/// Runs as cargo's rustc wrapper: `argv` is `[driver, rustc, args…]`, or
/// `[driver, WRAPPER, rustc, args…]` when cargo also has a workspace wrapper
/// (`cargo clippy`'s `clippy-driver`): the real compilation runs through
/// it, our own runs of rustc (MIR, layout probe) run rustc itself.
pub fn wrap(argv: &[OsString], isolation: backend_nvptx::Isolation) -> ExitCode {
    let (compiler, rustc, args) = match argv.get(2) {
        Some(next) if is_program(next) => (&argv[1..3], argv[2].clone(), &argv[3..]),
        _ => (&argv[1..2], argv[1].clone(), &argv[2..]),
    };
    // The layout probe and `rustc -vV` (frontend::bridge::rustc) must run
    // the compiler cargo chose, not whichever `rustc` is on PATH: a closure's
    // layout belongs to one rustc. Configured before any stage reads it.
    let Some(path) = rustc.to_str() else {
        eprintln!("error: rmir: the rustc cargo runs has a path that is not UTF-8: {rustc:?}");
        return ExitCode::from(1);
    };
    let toolchain = frontend::toolchain::Toolchain {
        rustc: path.to_string(),
        ..frontend::toolchain::Toolchain::from_env()
    };
    if let Err(set) = frontend::toolchain::configure(toolchain) {
        eprintln!(
            "error: rmir: the wrapper's rustc is {path}, but {} was already in use",
            set.rustc
        );
        return ExitCode::from(1);
    }
    let inv = Invocation::parse(args);
    if inv.input.is_none() {
        if args.len() == 1 && args[0] == "-vV" {
            return verbose_version(compiler);
        }
        // A query (`--print cfg`): not a crate.
        return run_rustc(compiler, args, &[]);
    }
    match prepare(&rustc, &inv, isolation) {
        Ok(Prepared::Run(extra)) => {
            let code = run_rustc(compiler, args, &extra);
            if code == ExitCode::SUCCESS && inv.uses_api() {
                if let Err(e) = track_inputs(&inv) {
                    inv.error(&format!("rmir: crate `{}`: {e}", inv.crate_name()));
                    return ExitCode::from(1);
                }
            }
            code
        }
        Ok(Prepared::RustcFails) => run_rustc(compiler, args, &[]),
        Ok(Prepared::Failed) => ExitCode::from(1),
        Err(message) => {
            inv.error(&format!(
                "rmir: crate `{}` ({}): {message}",
                inv.crate_name(),
                inv.input.as_deref().unwrap_or("?")
            ));
            ExitCode::from(1)
        }
    }
}

/// Whether an argument of the wrapper names a program (the compiler behind
/// a workspace wrapper) rather than being one of rustc's arguments.
fn is_program(arg: &OsStr) -> bool {
    let path = Path::new(arg);
    !arg.to_string_lossy().starts_with('-')
        && path.extension().is_none_or(|e| e != "rs")
        && path.is_file()
}

/// `rustc -vV` with a last line naming this driver. Cargo hashes the
/// verbose version into every unit's fingerprint and file names (its
/// `-C metadata`), so what `driver cargo` builds is never taken for what a
/// plain `cargo build` built, nor the reverse: each keeps its own artifacts
/// in `deps/`, and the program cargo copies out is the one the last command
/// built (cargo copies it again even when nothing was compiled). The line
/// names the driver's version only: a rebuilt driver rebuilds the crates
/// with callbacks (the driver's executable is in their dep-info,
/// [`track_inputs`]), not every dependency.
fn verbose_version(compiler: &[OsString]) -> ExitCode {
    let out = match Command::new(&compiler[0])
        .args(&compiler[1..])
        .arg("-vV")
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!(
                "error: rmir: cannot run {}: {e}",
                Path::new(&compiler[0]).display()
            );
            return ExitCode::from(1);
        }
    };
    use std::io::Write;
    let _ = std::io::stderr().write_all(&out.stderr);
    if !out.status.success() {
        return exit_code(out.status);
    }
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("rmir-driver: {}\n", env!("CARGO_PKG_VERSION")));
    let _ = std::io::stdout().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

enum Prepared {
    /// Run the real rustc with these extra arguments.
    Run(Vec<OsString>),
    /// rustc rejects the crate: run it to report its own errors.
    RustcFails,
    /// The crate's callbacks failed (a rejection, a denied warning): what
    /// failed is printed.
    Failed,
}

fn prepare(
    rustc: &OsStr,
    inv: &Invocation,
    isolation: backend_nvptx::Isolation,
) -> Result<Prepared, String> {
    let mut records: Vec<Record> = Vec::new();
    for (_, path) in &inv.externs {
        let sidecar = dependency_sidecar(path);
        match std::fs::read(&sidecar) {
            Ok(bytes) => {
                for r in read_section(&bytes).map_err(|e| format!("{}: {e}", sidecar.display()))? {
                    if !records.contains(&r) {
                        records.push(r);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot read {}: {e}", sidecar.display())),
        }
    }
    if inv.uses_api() {
        match own_record(rustc, inv, isolation)? {
            Own::Record(r) => records.insert(0, r),
            Own::None => {}
            Own::RustcFails => return Ok(Prepared::RustcFails),
            Own::Failed => return Ok(Prepared::Failed),
        }
    }
    if inv.check_only() {
        // Nothing is linked, and no dependent reads a sidecar. A checked
        // crate's metadata holds no optimised MIR, which the MIR of a crate
        // that depends on it needs (rustc's MIR inliner reads it at
        // opt-level 3: "missing optimized MIR"); asking for MIR output
        // makes rustc encode it, for the cost of MIR optimisation alone.
        return Ok(Prepared::Run(vec!["--emit=mir=/dev/null".into()]));
    }
    let blob: Vec<u8> = records.iter().flat_map(Record::encode).collect();
    if inv.is_lib() {
        if let Some(sidecar) = inv.sidecar() {
            if blob.is_empty() {
                let _ = std::fs::remove_file(&sidecar);
            } else {
                crate::output::write_atomic(&sidecar, &blob)?;
            }
        }
    }
    let mut extra = Vec::new();
    if inv.is_final() && !blob.is_empty() {
        let object = artifacts_object(rustc, inv, &blob)?;
        let mut arg = OsString::from("link-arg=");
        arg.push(object.as_os_str());
        extra.push(OsString::from("-C"));
        extra.push(arg);
    }
    Ok(Prepared::Run(extra))
}

enum Own {
    Record(Record),
    /// The crate calls no registration (or, checked only, builds nothing).
    None,
    RustcFails,
    Failed,
}

/// Compiles the crate's callbacks: its MIR (same rustc, same arguments),
/// admission, the build; the record of its manifest and cubins.
fn own_record(
    rustc: &OsStr,
    inv: &Invocation,
    isolation: backend_nvptx::Isolation,
) -> Result<Own, String> {
    let input = inv.input.clone().unwrap_or_default();
    let scratch = frontend::scratch::Scratch::new("cargo")?;
    let mir_path = scratch.join("crate.mir");
    // The same compilation, to MIR only: no incremental state, no LTO, no
    // other outputs; its diagnostics are the real run's, shown by it.
    let mut args: Vec<OsString> = Vec::new();
    let mut it = inv.args.iter().peekable();
    while let Some(a) = it.next() {
        let s = a.to_string_lossy();
        if s == "--emit" || s == "-o" || s == "--json" || s == "--error-format" {
            it.next();
            continue;
        }
        if s.starts_with("--emit=") || s.starts_with("--json=") || s.starts_with("--error-format=")
        {
            continue;
        }
        if s == "-C" {
            if let Some(v) = it.peek().map(|v| v.to_string_lossy().into_owned()) {
                if v.starts_with("incremental=") || v.starts_with("lto") {
                    it.next();
                    continue;
                }
            }
        }
        if s.starts_with("-Cincremental=") || s.starts_with("-Clto") {
            continue;
        }
        args.push(a.clone());
    }
    // The dep-info names every source file of the crate, its modules' too.
    let dep_path = scratch.join("crate.d");
    let mut emit = OsString::from("--emit=mir=");
    emit.push(mir_path.as_os_str());
    emit.push(",dep-info=");
    emit.push(dep_path.as_os_str());
    args.push(emit);
    args.extend(
        frontend::bridge::mir_codegen_flags(inv.overflow_checks(), inv.debug_assertions())
            .into_iter()
            .map(OsString::from),
    );
    let out = Command::new(rustc)
        .args(&args)
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    if !out.status.success() {
        return Ok(Own::RustcFails);
    }
    let mir = std::fs::read_to_string(&mir_path)
        .map_err(|e| format!("cannot read rustc's MIR ({}): {e}", mir_path.display()))?;
    let text = std::fs::read_to_string(&input).map_err(|e| format!("cannot read {input}: {e}"))?;
    let dep_info = std::fs::read_to_string(&dep_path)
        .map_err(|e| format!("cannot read rustc's dep-info ({}): {e}", dep_path.display()))?;
    let mut modules = Vec::new();
    for file in frontend::source::dep_info_rust_files(&dep_info) {
        if file == input || modules.iter().any(|m: &ModuleFile| m.file == file) {
            continue;
        }
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("cannot read {file}: {e}"))?;
        modules.push(ModuleFile { file, text });
    }
    let version = frontend::bridge::rustc_version().map_err(|e| e.to_string())?;
    let facts = SourceFacts {
        file: input.clone(),
        mir_file: format!("{input}.mir"),
        rustc: Some(version),
        opt_level: Some(inv.opt_level),
        overflow_checks: Some(inv.overflow_checks()),
        text: Some(text),
        modules,
    };
    let doc = frontend::bridge::prepare_mir(&mir, facts).map_err(|e| e.to_string())?;
    if doc.registrations.is_empty() {
        return Ok(Own::None);
    }
    // Every closure's span must point into a file the document holds (a
    // file rustc read but did not list would be read as another's lines);
    // `core`'s closures, whose bodies the core model gives, have none, nor
    // have `par_iter` chains', and
    // the standard library's (a `thread_local!` expands to closures of its
    // own source, `/rustc/HASH/library/…`) are never a callback's.
    let unknown: Vec<String> = doc
        .closures
        .iter()
        .filter(|c| !frontend::core_model::is_model_closure(&c.ty))
        // A `par_iter` chain's closure is written by the frontend; its
        // span is its terminal's call, in the crate's files.
        .filter(|c| !frontend::chain::is_chain_closure(&c.ty))
        .filter(|c| !matches!(&c.ty, frontend::ty::Ty::Closure { file, .. } if is_std_source(file)))
        .filter_map(|c| match &c.ty {
            frontend::ty::Ty::Closure { file, span } if doc.source.file_id(file).is_none() => {
                Some(format!("{file}:{}:{}", span.lo_line, span.lo_col))
            }
            _ => None,
        })
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "closures in files rustc's dep-info does not list ({}): their source cannot be \
             read, so their calls cannot be located",
            unknown.join(", ")
        ));
    }
    let link = match std::env::var_os("CARGO_MANIFEST_DIR") {
        Some(dir) => metadata_links(Path::new(&dir))?,
        None => Vec::new(),
    };
    let arch = std::env::var(ARCH_VAR).unwrap_or_else(|_| "sm_90".into());
    let arch: backend_nvptx::Arch = arch.parse().map_err(|e| format!("{ARCH_VAR}: {e}"))?;
    let deny_warnings =
        inv.deny_warnings || std::env::var_os(DENY_WARNINGS_VAR).is_some_and(|v| v == "1");
    let config = Config {
        isolation,
        cache: crate::buildcache::open(),
        cache_max_bytes: crate::buildcache::max_bytes(),
        link,
        tuning: manifest::provider::Tuning::from_env()?,
        lint: !inv.lints_allowed,
        deny_warnings,
        deny_by: if inv.deny_warnings {
            "-D warnings"
        } else {
            "--deny-warnings"
        },
        // A rejection fails the crate's build before anything is embedded.
        keep_going: false,
        hint_keep_going: false,
        diagnostics: inv.diagnostics(),
        progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        check_only: inv.check_only(),
        // The records' cubins are read by the program, never by name:
        // a cubin per callback makes an edit relink one kernel.
        for_edits: true,
        ..Config::new(arch)
    };
    let input = Input::Prepared {
        doc: &doc,
        crate_name: inv.crate_name.as_deref(),
    };
    let artifacts = match build(&input, &config) {
        Ok(a) => a,
        // What failed was printed, as rustc prints its errors.
        Err(e) => {
            for d in &e.diagnostics {
                eprintln!("{d}");
            }
            if e.reported {
                return Ok(Own::Failed);
            }
            return Err(e.to_string());
        }
    };
    for d in &artifacts.diagnostics {
        eprintln!("{d}");
    }
    summary(inv, &artifacts.counts);
    let Some(manifest) = &artifacts.manifest else {
        return Ok(Own::None);
    };
    Ok(Own::Record(Record {
        target: format!("{} ({})", inv.stem(), inv.kind()),
        manifest: manifest.to_json(),
        cubins: artifacts.cubins,
    }))
}

/// One line per crate after its callbacks are built, in cargo's style:
/// `rmir app (bin): 12 callbacks admitted, 3 cubins, 1 warning`.
fn summary(inv: &Invocation, built: &Built) {
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut line = format!(
        "{} ({}): {} admitted",
        inv.crate_name(),
        inv.kind(),
        plural(built.admitted, "callback")
    );
    if !inv.check_only() {
        line.push_str(&format!(", {}", plural(built.cubins, "cubin")));
    }
    if built.warnings > 0 {
        line.push_str(&format!(", {}", plural(built.warnings, "warning")));
    }
    // Cargo shows a compiler's plain lines as they are; its own status
    // words are bold green, right-aligned in 12 columns.
    let word = "rmir";
    if inv.diagnostics().styled() {
        eprintln!("\x1b[1m\x1b[32m{word:>12}\x1b[0m {line}");
    } else {
        eprintln!("{word:>12} {line}");
    }
}

/// An object file whose only content is `blob` in the `rmir_artifacts`
/// section (8-byte aligned), built by the same rustc for the same target.
fn artifacts_object(rustc: &OsStr, inv: &Invocation, blob: &[u8]) -> Result<PathBuf, String> {
    let out_dir = inv
        .out_dir
        .clone()
        .ok_or("rustc was given no --out-dir for a linked crate")?;
    let stem = inv.stem();
    let data = out_dir.join(format!("{stem}.rmir.bin"));
    let source = out_dir.join(format!("{stem}.rmir.rs"));
    let object = out_dir.join(format!("{stem}.rmir.o"));
    crate::output::write_atomic(&data, blob)?;
    let program = format!(
        "// Generated by `driver cargo build`: the compiled callbacks of `{stem}`.\n\
         #[repr(C, align(8))]\n\
         pub struct Records(pub [u8; {len}]);\n\
         #[used]\n\
         #[link_section = \"{section}\"]\n\
         pub static RMIR_ARTIFACTS: Records = Records(*include_bytes!({data:?}));\n",
        len = blob.len(),
        section = manifest::embed::SECTION,
        data = data.display().to_string(),
    );
    crate::output::write_atomic(&source, program.as_bytes())?;
    let mut cmd = Command::new(rustc);
    cmd.args(["--crate-type", "lib", "--emit", "obj", "--edition", "2021"])
        .args([
            "--crate-name",
            &format!("rmir_artifacts_{}", inv.crate_name()),
        ])
        .args(["-C", "opt-level=0", "-C", "debuginfo=0"]);
    if let Some(t) = &inv.target {
        cmd.args(["--target", t]);
    }
    let out = cmd
        .arg(&source)
        .arg("-o")
        .arg(&object)
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "rustc could not build the artifacts object {}:\n{}",
            object.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(object)
}

/// A child's status as this process's: 0 stays 0, a failure (or a signal)
/// is 1 to 255.
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    match status.code() {
        Some(0) => ExitCode::SUCCESS,
        code => ExitCode::from(code.map_or(1, |c| c.clamp(1, 255) as u8)),
    }
}

fn run_rustc(compiler: &[OsString], args: &[OsString], extra: &[OsString]) -> ExitCode {
    let rustc = &compiler[0];
    match Command::new(rustc)
        .args(&compiler[1..])
        .args(args)
        .args(extra)
        .status()
    {
        Ok(s) => exit_code(s),
        Err(e) => {
            eprintln!(
                "error: rmir: cannot run {}: {e}",
                Path::new(rustc).display()
            );
            ExitCode::from(1)
        }
    }
}

/// The environment variables a crate's callbacks depend on: cargo
/// rebuilds the crate when one changes, as it does for a variable read by
/// `env!`.
const TRACKED_VARS: &[&str] = &[ARCH_VAR, DENY_WARNINGS_VAR, manifest::provider::TUNING_VAR];

/// Adds to the dep-info file rustc wrote for the crate
/// (`OUT_DIR/NAME-HASH.d`) what its callbacks depend on beyond its source
/// files, so that cargo rebuilds the crate when one of them changes:
///
/// - the package's device libraries, and its `Cargo.toml` (which lists
///   them: cargo does not rebuild for a change of `package.metadata`);
/// - this driver's executable: a rebuilt driver compiles the callbacks
///   again, as a new rustc compiles the crate again;
/// - [`TRACKED_VARS`], as rustc's `# env-dep:` lines.
fn track_inputs(inv: &Invocation) -> Result<(), String> {
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return Ok(());
    };
    let mut links = metadata_links(Path::new(&dir))?;
    links.insert(0, Path::new(&dir).join("Cargo.toml"));
    if let Ok(exe) = std::env::current_exe() {
        links.push(exe);
    }
    let Some(out_dir) = &inv.out_dir else {
        return Ok(());
    };
    let dep_info = out_dir.join(format!("{}{}.d", inv.crate_name(), inv.extra_filename));
    if !dep_info.exists() {
        return Ok(());
    }
    let text = std::fs::read_to_string(&dep_info)
        .map_err(|e| format!("cannot read {}: {e}", dep_info.display()))?;
    let escape = |p: &Path| p.display().to_string().replace(' ', "\\ ");
    let mut out = String::new();
    let mut added = false;
    for line in text.lines() {
        out.push_str(line);
        // A rule whose target is one of the crate's outputs lists its
        // prerequisites on its line (`OUT: src/lib.rs src/m.rs`); a source
        // file's own rule has none (`src/lib.rs:`): the libraries join
        // the former.
        if !line.starts_with('#') && line.contains(": ") {
            for l in &links {
                out.push(' ');
                out.push_str(&escape(l));
            }
            added = true;
        }
        out.push('\n');
    }
    if !added {
        return Ok(());
    }
    // An empty rule per library, as rustc writes for each source file, so
    // that a removed library is not an error for make-style readers.
    for l in &links {
        out.push_str(&format!("\n{}:\n", escape(l)));
    }
    out.push('\n');
    for var in TRACKED_VARS {
        match std::env::var(var) {
            Ok(value) => out.push_str(&format!("# env-dep:{var}={value}\n")),
            Err(_) => out.push_str(&format!("# env-dep:{var}\n")),
        }
    }
    crate::output::write_atomic(&dep_info, out.as_bytes())
}

/// The package's device libraries: `[package.metadata.rmir] link = [...]`
/// in `DIR/Cargo.toml`, each path relative to `DIR`. No table, no list.
pub fn metadata_links(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let path = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let Some(link) = doc
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("rmir"))
        .and_then(|r| r.get("link"))
    else {
        return Ok(Vec::new());
    };
    let bad = || {
        format!(
            "{}: `package.metadata.rmir.link` must be a list of paths to device libraries \
             (`link = [\"cuda/mix.cu\"]`)",
            path.display()
        )
    };
    let array = link.as_array().ok_or_else(bad)?;
    array
        .iter()
        .map(|v| {
            v.as_str()
                .map(|p| crate::devicelibs::under(dir, p))
                .ok_or_else(bad)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(args: &[&str]) -> Invocation {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        Invocation::parse(&args)
    }

    #[test]
    fn reads_what_cargo_passes() {
        let i = inv(&[
            "--crate-name",
            "sums",
            "--edition=2021",
            "lib/src/lib.rs",
            "--error-format=json",
            "--crate-type",
            "lib",
            "--emit=dep-info,metadata,link",
            "-C",
            "opt-level=3",
            "-C",
            "extra-filename=-0abc",
            "--out-dir",
            "/t/release/deps",
            "--extern",
            "native=/t/release/deps/libnative-1.rmeta",
        ]);
        assert_eq!(i.input.as_deref(), Some("lib/src/lib.rs"));
        assert_eq!(i.crate_name(), "sums");
        assert!(i.is_lib() && !i.is_final() && i.uses_api());
        assert_eq!(i.opt_level, 3);
        assert!(!i.overflow_checks());
        assert_eq!(
            i.sidecar().unwrap(),
            PathBuf::from("/t/release/deps/libsums-0abc.rmir")
        );
        assert_eq!(
            dependency_sidecar(&i.externs[0].1),
            PathBuf::from("/t/release/deps/libnative-1.rmir")
        );
        let b = inv(&[
            "--crate-name",
            "app",
            "app/src/main.rs",
            "--crate-type",
            "bin",
        ]);
        assert!(b.is_final() && !b.is_lib() && !b.uses_api() && b.overflow_checks());
        let t = inv(&[
            "--crate-name",
            "app",
            "app/src/main.rs",
            "--test",
            "-Coverflow-checks=off",
            "-Dwarnings",
            "--cap-lints",
            "allow",
        ]);
        assert!(t.is_final() && !t.overflow_checks());
        assert!(t.deny_warnings && t.lints_allowed);
        assert!(inv(&["-D", "warnings", "a.rs"]).deny_warnings);
        assert!(!inv(&["-Dunused", "a.rs"]).deny_warnings);
        assert!(inv(&["-vV"]).input.is_none());
    }
}
