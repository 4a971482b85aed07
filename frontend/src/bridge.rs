//! The thin bridge to rustc: builds the provider API crate as an rlib, runs
//! the machine's stable `rustc --emit=mir` on a user's file against it, and
//! prepares the MIR.
//!
//! The `native` crate's source is compiled into this library, so the bridge
//! needs nothing but `rustc` on the PATH (or `$RUSTC`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::parse::{MirError, ProtectedMir};
use crate::pmir::{PreparedMir, SourceFacts};
use crate::prepare::prepare_text;
pub use crate::rustc::{mir_codegen_flags, rustc_version, BridgeError, MIR_OPT_LEVEL};
use crate::rustc::{run_rustc, rustc};
use crate::scratch::{self, Scratch};
/// The settings [`Bridge::new`] takes, also at their old path here.
use crate::toolchain::RustcConfig;

/// The provider API crate, as compiled into user code.
pub const NATIVE_SOURCE: &str = include_str!("../../native/src/lib.rs");
/// Its modules, each at its path beside the root: `gpu` (the host API),
/// its `set` (several GPUs), and `shard` (the host's part of calls over
/// shards).
pub const NATIVE_MODULES: &[(&str, &str)] = &[
    ("gpu.rs", include_str!("../../native/src/gpu.rs")),
    ("gpu/set.rs", include_str!("../../native/src/gpu/set.rs")),
    ("shard.rs", include_str!("../../native/src/shard.rs")),
];

/// Writes the `native` crate's sources into `dir`: the root as `ROOT`,
/// its modules at their paths beside it.
pub fn write_native(dir: &Path, root: &str) -> Result<PathBuf, String> {
    let path = dir.join(root);
    let write = |p: &Path, text: &str| {
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    write(&path, NATIVE_SOURCE)?;
    for (module, text) in NATIVE_MODULES {
        write(&dir.join(module), text)?;
    }
    Ok(path)
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
                ("gpu.rs", NATIVE_MODULES[0].1.as_bytes()),
                ("gpu/set.rs", NATIVE_MODULES[1].1.as_bytes()),
                ("shard.rs", NATIVE_MODULES[2].1.as_bytes()),
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
