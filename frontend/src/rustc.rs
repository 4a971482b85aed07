//! Running the process's rustc ([`crate::toolchain`]): which one, its
//! version, a run under the time limit, and the `-C` flags of a MIR run;
//! [`BridgeError`], the error of any of them and of the bridge above.

use std::fmt;
use std::process::Command;

use crate::parse::MirError;
use crate::scratch::{self, Finished, RunError, Scratch};

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
    /// confirmed (`closure_layout`): nothing is built with a guess.
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
