//! Reading any of the inputs a subcommand accepts into prepared MIR.

use std::path::{Path, PathBuf};

use frontend::bridge;
use frontend::toolchain::RustcConfig;
use frontend::PreparedMir;

/// Loads `.rs` (through rustc), `.mir` (rustc's MIR text) or `.pmir.json`.
pub fn load(file: &Path, config: &RustcConfig) -> Result<PreparedMir, String> {
    let name = file.display().to_string();
    if name.ends_with(".json") {
        let text = read(file)?;
        return PreparedMir::from_json(&text).map_err(|e| format!("{name}: {e}"));
    }
    if name.ends_with(".mir") {
        let text = read(file)?;
        let mut doc = bridge::import_mir_text(&name, &text).map_err(|e| format!("{name}:{e}"))?;
        // MIR text does not say which rustc made it: the layout is measured
        // with the rustc found here, which must be that one.
        frontend::closure_layout::record(&mut doc)
            .map_err(|e| format!("{name}: rustc's layout of its closures is unknown: {e}"))?;
        return Ok(doc);
    }
    if name.ends_with(".rs") {
        return bridge::import_rust(file, config).map_err(|e| e.to_string());
    }
    Err(format!(
        "{name}: unknown input kind: expected a `.rs`, `.mir` or `.pmir.json` file"
    ))
}

fn read(file: &Path) -> Result<String, String> {
    std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))
}

/// `dir/name.rs` → `name<suffix>` in the current directory.
pub fn default_output(file: &Path, suffix: &str) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let stem = name
        .strip_suffix(".pmir.json")
        .or_else(|| name.strip_suffix(".rs"))
        .or_else(|| name.strip_suffix(".mir"))
        .unwrap_or(&name);
    PathBuf::from(format!("{stem}{suffix}"))
}
