//! `driver inspect` of a program or shared library built by `driver cargo
//! build`: the builds embedded in its `rmir_artifacts` section.

use manifest::embed::{elf_section, read_section, SECTION};
use manifest::Manifest;
use std::fmt::Write as _;

/// The listing, or `None` when `bytes` is not an ELF file with the section
/// (a cubin, PTX, or a program built without `driver cargo build`).
pub fn describe_program(name: &str, bytes: &[u8]) -> Result<Option<String>, String> {
    // A cubin is an ELF too (machine 190); it has no such section.
    let Ok(Some(section)) = elf_section(bytes, SECTION) else {
        return Ok(None);
    };
    let records = read_section(section).map_err(|e| format!("{name}: {e}"))?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{name}: program with {} embedded build{} ({SECTION}, {} bytes)",
        records.len(),
        if records.len() == 1 { "" } else { "s" },
        section.len()
    );
    for r in &records {
        let m =
            Manifest::from_json(&r.manifest).map_err(|e| format!("{name}: {}: {e}", r.target))?;
        let cubin_bytes: usize = r.cubins.iter().map(|(_, b)| b.len()).sum();
        let _ = writeln!(
            out,
            "build {}: {}, {} callback{}, {} cubin{} ({cubin_bytes} bytes), fingerprint {}",
            r.target,
            m.arch,
            m.callbacks.len(),
            if m.callbacks.len() == 1 { "" } else { "s" },
            r.cubins.len(),
            if r.cubins.len() == 1 { "" } else { "s" },
            &m.fingerprint.to_string()[..16],
        );
        for c in &m.callbacks {
            let kernel = m
                .kernel_for(c.registration)
                .map_or("(none)", |k| k.name.as_str());
            let at = match &c.site {
                Some(s) => format!(
                    "called at {}:{}:{}, {} `{}`{}",
                    s.file,
                    s.line,
                    s.column,
                    c.provider.name(),
                    c.signature,
                    s.closure_suffix
                        .as_ref()
                        .map(|t| match t.as_str() {
                            manifest::CHAIN_TYPE => format!(", a `par_iter` chain (`{t}`)"),
                            manifest::BY_KEY_TYPE => {
                                format!(", its `same` and `op` closures (`{t}`)")
                            }
                            _ => format!(
                                ", closure `{}::…::{t}`",
                                s.crate_name.as_deref().unwrap_or("…")
                            ),
                        })
                        .unwrap_or_default()
                ),
                None => format!(
                    "from {} (CPU registration: not callable at run time)",
                    c.origin.as_deref().unwrap_or("?")
                ),
            };
            let _ = writeln!(out, "  r{}: {at}; kernel {kernel}", c.registration);
            let env: Vec<String> = c
                .env
                .fields_by_offset()
                .iter()
                .map(|f| format!("{}: {} at {}", f.name, f.scalar, f.offset))
                .collect();
            let _ = writeln!(
                out,
                "      environment {} bytes, align {}{}{}",
                c.env.size,
                c.env.align,
                if env.is_empty() { "" } else { ": " },
                env.join(", ")
            );
            if let Some(pick) = c.pick {
                let _ = writeln!(out, "      pick: {}", pick.describe());
            }
            if let Some(sort) = &c.sort {
                let _ = writeln!(out, "      sort: {sort}");
                if let Some(note) = sort.gather_note(c.signature.element()) {
                    let _ = writeln!(out, "      sort moves: {note}");
                }
            }
        }
    }
    Ok(Some(out))
}
