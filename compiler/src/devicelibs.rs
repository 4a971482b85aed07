//! User device libraries (`driver build --link FILE`, a Cargo package's
//! `[package.metadata.rmir] link`): loaded and classified, their symbols
//! read for admission (which `extern "C"` functions they define), and
//! checked together before any link runs (unresolved references and
//! multiple definitions, by name).

use std::path::{Path, PathBuf};

use backend_nvptx::symbols::{self, SymbolReader, SymbolTable};
use backend_nvptx::LinkInput;
use passes::admission::DeviceLibraries;

/// Reads and classifies each file, in order. An unreadable file, or one
/// that is not device code of a kind nvJitLink takes, is an error naming it.
pub fn load(paths: &[PathBuf]) -> Result<Vec<LinkInput>, String> {
    let mut out: Vec<LinkInput> = Vec::new();
    for p in paths {
        let name = p.display().to_string();
        if out.iter().any(|i| i.name == name) {
            return Err(format!("--link {name}: given twice"));
        }
        let bytes = std::fs::read(p).map_err(|e| format!("--link {name}: {e}"))?;
        let input = LinkInput::new(name.clone(), bytes).map_err(|e| format!("--link {e}"))?;
        let root = &input.description.root;
        if !input.description.carries_ltoir()
            && !root.carries_non_ltoir_code()
            && input.description.kind() != backend_nvptx::ItemKind::CudaSource
        {
            return Err(format!(
                "--link {name}: this {} holds no device code",
                input.description.kind()
            ));
        }
        out.push(input);
    }
    Ok(out)
}

/// The inputs' symbol tables, by input name, with what admission reads.
#[derive(Clone, Debug, Default)]
pub struct Resolved {
    pub tables: Vec<(String, SymbolTable)>,
    pub libraries: DeviceLibraries,
}

/// Reads every input's symbols. `wanted` are the symbols callbacks call;
/// what LTOIR parts define is asked for them, and again for whatever the
/// definitions found reference that no input is yet known to define,
/// until nothing new turns up.
pub fn resolve(
    inputs: &[LinkInput],
    wanted: &[String],
    reader: &SymbolReader,
    ptx_route: bool,
) -> Result<Resolved, String> {
    let mut wanted: Vec<String> = wanted.to_vec();
    let mut tables: Vec<(String, SymbolTable)>;
    // Each round asks about more names; a chain of definitions across
    // LTOIR inputs is rarely deeper than a few calls.
    let mut round = 0;
    loop {
        tables = inputs
            .iter()
            .map(|i| reader.read(i, &wanted).map(|t| (i.name.clone(), t)))
            .collect::<Result<_, _>>()?;
        round += 1;
        let mut more: Vec<String> = tables
            .iter()
            .flat_map(|(_, t)| t.references.iter().cloned())
            .filter(|r| {
                !wanted.contains(r)
                    && !symbols::is_toolkit_symbol(r)
                    && !tables.iter().any(|(_, t)| t.defines.contains_key(r))
            })
            .collect();
        more.sort();
        more.dedup();
        let any_ltoir = inputs.iter().any(|i| i.description.carries_ltoir());
        if more.is_empty() || !any_ltoir || round == 8 {
            break;
        }
        wanted.extend(more);
    }
    let mut libraries = DeviceLibraries {
        inputs: inputs.iter().map(|i| i.name.clone()).collect(),
        ptx_route,
        ..Default::default()
    };
    for (name, t) in &tables {
        for (symbol, def) in &t.defines {
            if !def.kernel {
                libraries.define(symbol, name, def.abi.clone(), def.ltoir_only);
            }
        }
        libraries.unreadable.extend(t.unreadable.iter().cloned());
    }
    Ok(Resolved { tables, libraries })
}

/// Checks the inputs together with the callbacks' calls (`used`: symbols
/// the admitted callbacks call): every reference defined, nothing defined
/// twice. The error names each symbol and the inputs involved.
pub fn check(resolved: &Resolved, used: &[String]) -> Result<(), String> {
    let mut tables = resolved.tables.clone();
    if !used.is_empty() {
        tables.push((
            "the callbacks".to_string(),
            SymbolTable {
                references: used.iter().cloned().collect(),
                ..Default::default()
            },
        ));
    }
    let problems = symbols::check(&tables);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the device libraries given to the link do not link (found before running \
             nvJitLink):\n{problems}"
        ))
    }
}

/// A path as given on the command line, relative to `base` when it is not
/// absolute (Cargo metadata paths are relative to the package).
pub fn under(base: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}
