//! The thin bridge to rustc: builds the provider API crate as an rlib, runs
//! the machine's stable `rustc --emit=mir` on a user's file against it, and
//! prepares the MIR.
//!
//! The `native` crate's source is compiled into this library, so the bridge
//! needs nothing but `rustc` on the PATH (or `$RUSTC`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::parse::{MirError, ProtectedMir};
use crate::pmir::{PreparedMir, SourceFacts};
use crate::prepare::prepare_text;
use crate::scratch::{self, Finished, RunError, Scratch};

/// The provider API crate, as compiled into user code.
pub const NATIVE_SOURCE: &str = include_str!("../../native/src/lib.rs");
/// Its `gpu` module (the host API), which must sit beside it as `gpu.rs`.
pub const NATIVE_GPU_SOURCE: &str = include_str!("../../native/src/gpu.rs");

/// Writes the `native` crate's sources into `dir` as `ROOT` and `gpu.rs`.
pub fn write_native(dir: &Path, root: &str) -> Result<PathBuf, String> {
    let path = dir.join(root);
    for (p, text) in [
        (path.clone(), NATIVE_SOURCE),
        (dir.join("gpu.rs"), NATIVE_GPU_SOURCE),
    ] {
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    Ok(path)
}

/// How to run rustc. A struct rather than bool parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustcConfig {
    /// `-C opt-level`: 0 to 3.
    pub opt_level: u8,
    pub overflow_checks: bool,
    pub edition: String,
}

impl RustcConfig {
    /// `-C debug-assertions` as rustc sets it for this opt-level when a
    /// profile does not say: on at opt-level 0, as in Cargo's dev profile.
    pub fn debug_assertions(&self) -> bool {
        self.opt_level == 0
    }
}

/// The opt-level of every rustc run whose MIR the device side reads,
/// whatever the host profile's. rustc's MIR inliner runs from opt-level 1:
/// at 3 the small bodies of `core` (`checked_add`, `Option::unwrap_or`,
/// `Ord::cmp`, `Range::next`, `From::from`) are inlined into the callback,
/// where unoptimised MIR calls them and has no body for them. Reading one
/// level for every profile makes the verdict a property of the code, not of
/// how hard the host build optimises (docs/gpu.md, "One verdict for dev and
/// release").
pub const MIR_OPT_LEVEL: u8 = 3;

/// The `-C` flags of a MIR run for a profile: [`MIR_OPT_LEVEL`], and the
/// profile's own overflow checks and debug assertions, which decide what
/// the code means (`cfg(debug_assertions)`, the overflow checks of the
/// callback and of what is inlined into it). Later `-C` flags override
/// earlier ones, so these go last.
pub fn mir_codegen_flags(overflow_checks: bool, debug_assertions: bool) -> Vec<String> {
    let on = |b: bool| if b { "on" } else { "off" };
    vec![
        "-C".into(),
        format!("opt-level={MIR_OPT_LEVEL}"),
        "-C".into(),
        format!("overflow-checks={}", on(overflow_checks)),
        "-C".into(),
        format!("debug-assertions={}", on(debug_assertions)),
    ]
}

impl Default for RustcConfig {
    fn default() -> RustcConfig {
        RustcConfig {
            opt_level: 0,
            overflow_checks: true,
            edition: "2021".to_string(),
        }
    }
}

#[derive(Debug)]
pub enum BridgeError {
    /// No rustc could be run.
    NoRustc(String),
    /// rustc rejected the provider crate (a broken installation).
    Native(String),
    /// rustc rejected the user's file; its diagnostics, verbatim.
    Rustc {
        file: String,
        stderr: String,
    },
    Io(String),
    /// rustc ran past `$RMIR_RUSTC_TIMEOUT` and was stopped.
    Timeout {
        what: String,
        seconds: f64,
    },
    /// rustc's layout of a closure in `file` could not be measured or
    /// confirmed (`crate::closure_layout`): nothing is built with a guess.
    Layout {
        file: String,
        error: String,
    },
    /// The MIR rustc printed for `file` could not be read. That text is
    /// not kept on disk: the error's line and column are in it.
    Mir {
        file: String,
        error: MirError,
    },
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::NoRustc(m) => write!(
                f,
                "cannot run rustc ({m}): install a Rust toolchain or set RUSTC to the compiler"
            ),
            BridgeError::Native(m) => write!(
                f,
                "rustc failed to build the provider API crate `native`:\n{m}"
            ),
            BridgeError::Rustc { file, stderr } => {
                write!(f, "rustc rejected {file}:\n{}", stderr.trim_end())
            }
            BridgeError::Io(m) => write!(f, "{m}"),
            BridgeError::Timeout { what, seconds } => write!(
                f,
                "rustc did not finish {what} within {seconds} s and was stopped \
                 (set {} to allow more seconds)",
                scratch::TIMEOUT_VAR
            ),
            BridgeError::Layout { file, error } => write!(
                f,
                "{file}: rustc's layout of its closures is unknown: {error}"
            ),
            BridgeError::Mir { file, error } => write!(
                f,
                "{file}: unsupported MIR at line {}, column {} of rustc's `--emit=mir` output \
                 for it (-C opt-level={MIR_OPT_LEVEL}): {}",
                error.line, error.col, error.message
            ),
        }
    }
}

impl std::error::Error for BridgeError {}

/// The rustc every part of the frontend runs ([`crate::toolchain`]).
pub(crate) fn rustc() -> String {
    crate::toolchain::get().rustc.clone()
}

/// `rustc -vV`, first line and host, e.g. `rustc 1.95.0 (… 2026-04-14) host x86_64-…`.
pub fn rustc_version() -> Result<String, BridgeError> {
    // One `rustc -vV` per rustc per process: every import and layout
    // measurement asks.
    static SEEN: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
    let which = rustc();
    if let Some((_, v)) = SEEN
        .lock()
        .ok()
        .and_then(|seen| seen.iter().find(|(r, _)| *r == which).cloned())
    {
        return Ok(v);
    }
    let version = rustc_version_uncached()?;
    if let Ok(mut seen) = SEEN.lock() {
        seen.push((which, version.clone()));
    }
    Ok(version)
}

fn rustc_version_uncached() -> Result<String, BridgeError> {
    let out = run_rustc(Command::new(rustc()).arg("-vV"), "`rustc -vV`", None)?;
    if !out.status.success() {
        return Err(BridgeError::NoRustc(format!(
            "`{} -vV` exited with {}",
            rustc(),
            out.status
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap_or("").trim().to_string();
    let host = text
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap_or("unknown");
    Ok(format!("{first} host {host}"))
}

/// Runs rustc (in `dir`, else in the temporary folder: never in the user's
/// working directory, which may be unusable) under the time limit.
pub(crate) fn run_rustc(
    cmd: &mut Command,
    what: &str,
    dir: Option<&Scratch>,
) -> Result<Finished, BridgeError> {
    let limit = scratch::timeout().map_err(BridgeError::Io)?;
    let dir = dir.map_or_else(std::env::temp_dir, |s| s.path().to_path_buf());
    scratch::run(cmd.current_dir(dir), limit).map_err(|e| match e {
        RunError::Spawn(e) => BridgeError::NoRustc(format!("`{}`: {e}", rustc())),
        RunError::Timeout(limit) => BridgeError::Timeout {
            what: what.to_string(),
            seconds: limit.as_secs_f64(),
        },
    })
}

/// A built provider API crate, ready to compile user files against. Build
/// one and import many files with it: the rlib is built once.
pub struct Bridge {
    config: RustcConfig,
    version: String,
    scratch: Scratch,
    rlib: PathBuf,
}

impl Bridge {
    /// Finds rustc and builds the `native` rlib.
    pub fn new(config: RustcConfig) -> Result<Bridge, BridgeError> {
        let version = rustc_version()?;
        let scratch = Scratch::new("bridge").map_err(BridgeError::Io)?;
        let rlib = scratch.join("libnative.rlib");
        // The rlib depends only on rustc, the edition and the embedded
        // sources: built once, then read from the build cache.
        let key = crate::cached::key(
            "native-rlib",
            &[
                ("rustc", version.as_bytes()),
                ("edition", config.edition.as_bytes()),
                (
                    "flags",
                    b"--crate-type rlib --crate-name native -C opt-level=3",
                ),
                ("lib.rs", NATIVE_SOURCE.as_bytes()),
                ("gpu.rs", NATIVE_GPU_SOURCE.as_bytes()),
            ],
        );
        if let Some(bytes) = crate::cached::get("native-rlib", &key) {
            if std::fs::write(&rlib, bytes).is_ok() {
                return Ok(Bridge {
                    config,
                    version,
                    scratch,
                    rlib,
                });
            }
        }
        let native_rs = write_native(scratch.path(), "native.rs").map_err(BridgeError::Io)?;
        let out = run_rustc(
            Command::new(rustc())
                .args(["--edition", &config.edition, "--crate-type", "rlib"])
                .args(["--crate-name", "native", "-C", "opt-level=3"])
                .arg(&native_rs)
                .arg("-o")
                .arg(&rlib),
            "building the provider API crate",
            Some(&scratch),
        )?;
        if !out.status.success() {
            return Err(BridgeError::Native(
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        if let Ok(bytes) = std::fs::read(&rlib) {
            crate::cached::put("native-rlib", &key, &bytes);
        }
        Ok(Bridge {
            config,
            version,
            scratch,
            rlib,
        })
    }

    pub fn config(&self) -> &RustcConfig {
        &self.config
    }

    /// The path of the built provider API rlib (for building host code).
    pub fn native_rlib(&self) -> &Path {
        &self.rlib
    }

    /// Runs rustc on `file` and returns its MIR text.
    pub fn emit_mir(&self, file: &Path) -> Result<String, BridgeError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let mir = self
            .scratch
            .join(&format!("user{}.mir", N.fetch_add(1, Ordering::Relaxed)));
        let config = &self.config;
        let (input, remap) = scratch::rustc_input(file, &self.scratch).map_err(BridgeError::Io)?;
        let mut cmd = Command::new(rustc());
        cmd.args(["--edition", &config.edition, "--crate-type", "lib"])
            // A fixed crate name: file stems such as `01_add` are not valid names.
            .args(["--crate-name", "callbacks", "--emit=mir"])
            .args(mir_codegen_flags(
                config.overflow_checks,
                config.debug_assertions(),
            ))
            .arg("--extern")
            .arg(format!("native={}", self.rlib.display()))
            .arg(&input)
            .arg("-o")
            .arg(&mir);
        if let Some(remap) = remap {
            cmd.arg(format!("--remap-path-prefix={remap}"));
        }
        let what = format!("with {}", file.display());
        let out = run_rustc(&mut cmd, &what, Some(&self.scratch))?;
        if !out.status.success() {
            return Err(BridgeError::Rustc {
                file: file.display().to_string(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        let text = std::fs::read_to_string(&mir)
            .map_err(|e| BridgeError::Io(format!("cannot read rustc's MIR output: {e}")));
        let _ = std::fs::remove_file(&mir);
        text
    }

    /// The whole bridge: `.rs` → prepared MIR.
    pub fn import(&self, file: &Path) -> Result<PreparedMir, BridgeError> {
        let source = std::fs::read_to_string(file)
            .map_err(|e| BridgeError::Io(format!("cannot read {}: {e}", file.display())))?;
        let mir = self.emit_mir(file)?;
        let name = file.display().to_string();
        let mir_file = format!("{name}.O{MIR_OPT_LEVEL}.mir");
        let facts = SourceFacts {
            file: name.clone(),
            mir_file,
            rustc: Some(self.version.clone()),
            opt_level: Some(self.config.opt_level),
            overflow_checks: Some(self.config.overflow_checks),
            text: Some(source),
            modules: Vec::new(),
        };
        prepare_mir(&mir, facts)
    }
}

/// rustc's MIR text of a crate whose root source file is `facts.file`
/// (with its text) → prepared MIR, validated, with the closures' layouts
/// measured (by the rustc on this machine, which must be the one that
/// printed the MIR: `facts.rustc`).
pub fn prepare_mir(mir: &str, facts: SourceFacts) -> Result<PreparedMir, BridgeError> {
    let name = facts.file.clone();
    // rustc prints `name` unescaped inside closure types: make it one token.
    let protected = ProtectedMir::new(mir, &name);
    match prepare_text(&protected.text, facts).and_then(checked) {
        Ok(mut doc) => {
            protected.restore_lines(&mut doc);
            crate::closure_layout::record(&mut doc).map_err(|e| BridgeError::Layout {
                file: name.clone(),
                error: e.to_string(),
            })?;
            Ok(doc)
        }
        Err(mut error) => {
            error.line = protected.original_line(error.line);
            Err(BridgeError::Mir { file: name, error })
        }
    }
}

/// One-shot `.rs` → prepared MIR.
pub fn import_rust(file: &Path, config: &RustcConfig) -> Result<PreparedMir, BridgeError> {
    Bridge::new(config.clone())?.import(file)
}

/// MIR text already on disk: `.mir` → prepared MIR. The Rust source is read
/// when a closure span names a file that exists next to it.
pub fn import_mir_text(mir_file: &str, mir: &str) -> Result<PreparedMir, MirError> {
    let rust_file = crate::parse::first_closure_file(mir);
    let text = rust_file.as_ref().and_then(|f| {
        let candidates = [
            PathBuf::from(f),
            Path::new(mir_file)
                .parent()
                .unwrap_or(Path::new("."))
                .join(f),
        ];
        candidates
            .iter()
            .find_map(|p| std::fs::read_to_string(p).ok())
    });
    let facts = SourceFacts {
        file: rust_file.unwrap_or_else(|| mir_file.to_string()),
        mir_file: mir_file.to_string(),
        rustc: None,
        opt_level: None,
        overflow_checks: None,
        text,
        modules: Vec::new(),
    };
    prepare_text(mir, facts).and_then(checked)
}

/// The rules every prepared document keeps ([`crate::validate`]), checked on
/// the parser's output too: a fault is reported at its MIR line.
fn checked(doc: PreparedMir) -> Result<PreparedMir, MirError> {
    crate::validate::validate(&doc).map_err(|e| MirError {
        line: e.mir_line.unwrap_or(1),
        col: 1,
        message: format!("{}: {}", e.at, e.message),
    })?;
    Ok(doc)
}
