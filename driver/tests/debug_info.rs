//! Rust lines survive into the linked cubin: every admitted admission case
//! (and the quickstart example) built with `--lineinfo` and with `-g`, by
//! the LTOIR route (where nvJitLink inlines the callback into the provider's
//! kernel) and the PTX route, shows its own file and lines in `nvdisasm -g`;
//! built with neither, it shows none. The nvJitLink options each build
//! reports are asserted, and the LTOIR route's kernels have no `CALL`.

mod common;

use common::{root, tool};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// (mode name, driver flags, nvJitLink flags the build must report).
const MODES: [(&str, &[&str], &str); 6] = [
    ("lto", &[], "-arch=sm_90 -lto -fma=0"),
    (
        "lto lineinfo",
        &["--lineinfo"],
        "-arch=sm_90 -lto -fma=0 -lineinfo",
    ),
    ("lto g", &["-g"], "-arch=sm_90 -lto -fma=0 -g"),
    ("ptx", &["--no-lto"], "-arch=sm_90"),
    (
        "ptx lineinfo",
        &["--no-lto", "--lineinfo"],
        "-arch=sm_90 -lineinfo",
    ),
    ("ptx g", &["--no-lto", "-g"], "-arch=sm_90 -g"),
];

/// The Rust source lines `nvdisasm -g` names for `file`, and whether any
/// instruction is a `CALL`.
fn lines_in(cubin: &Path, file: &str) -> (BTreeSet<u32>, bool) {
    let out = Command::new(tool("nvdisasm"))
        .args(["-g", "-c"])
        .arg(cubin)
        .output()
        .expect("nvdisasm runs");
    assert!(
        out.status.success(),
        "nvdisasm {}: {}",
        cubin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = BTreeSet::new();
    for l in text.lines() {
        // `//## File "tests/admission/05_helper_chain.rs", line 10`
        let Some(rest) = l.trim().strip_prefix("//## File \"") else {
            continue;
        };
        let Some((name, line)) = rest.split_once("\", line ") else {
            continue;
        };
        if name.ends_with(file) {
            let n: String = line.chars().take_while(char::is_ascii_digit).collect();
            lines.insert(n.parse().unwrap());
        }
    }
    let call = text
        .lines()
        .any(|l| l.split_whitespace().any(|w| w.starts_with("CALL")));
    (lines, call)
}

/// Builds whose `-g` link of LTOIR nvJitLink 13.0 refuses (docs/debug-info.md,
/// "A limit of nvJitLink's `-g` link"): the file and the mode. Each must
/// build through the fallback (its thunks linked as PTX, with a warning),
/// and then calls its callback; one that stops needing it is reported, so
/// that the entry goes.
const G_FALLBACKS: &[(&str, &str)] = &[("07_core_scalar_methods.rs", "lto g")];

#[test]
fn rust_lines_survive_lineinfo_and_g_on_both_routes() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root().join("tests/admission"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    cases.push(root().join("examples/quickstart.rs"));
    cases.sort();
    let scratch = std::env::temp_dir().join(format!("rmir-debug-info-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in &cases {
        let file = case.file_name().unwrap().to_string_lossy().into_owned();
        let source_lines = std::fs::read_to_string(case).unwrap().lines().count() as u32;
        for (mode, flags, link) in MODES {
            let out_dir = scratch.join(format!("{file}-{}", mode.replace(' ', "-")));
            let o = Command::new(env!("CARGO_BIN_EXE_driver"))
                .arg("build")
                .arg(case)
                .args(flags)
                .args(["--no-cache", "--keep-going", "-o"])
                .arg(&out_dir)
                .current_dir(root())
                .output()
                .expect("driver runs");
            let stderr = String::from_utf8_lossy(&o.stderr);
            let fallback = G_FALLBACKS.iter().any(|(f, m)| *f == file && *m == mode);
            if fallback != stderr.contains("are linked as PTX, called rather than inlined") {
                failures.push(format!(
                    "{file} [{mode}]: the `-g` PTX fallback was {}expected: {stderr}",
                    if fallback { "" } else { "not " }
                ));
            }
            if !o.status.success() {
                // A file whose every registration is rejected writes
                // nothing; one with some rejected builds the others
                // (`--keep-going`) and still fails.
                if stderr.contains("no admitted registration to build") {
                    continue;
                }
                let kept_going = stderr.lines().any(|l| l.starts_with("wrote "))
                    && stderr.contains(" rejected of ");
                if !kept_going {
                    failures.push(format!("{file} [{mode}]: build failed: {stderr}"));
                    continue;
                }
            }
            if !stderr.contains(&format!("nvJitLink {link})")) {
                failures.push(format!(
                    "{file} [{mode}]: expected `nvJitLink {link}`: {stderr}"
                ));
            }
            let cubin = out_dir.join("callbacks.cubin");
            let (lines, call) = lines_in(&cubin, &file);
            let wants_lines = mode.contains("lineinfo") || mode.ends_with(" g");
            match (wants_lines, lines.is_empty()) {
                (true, true) => {
                    failures.push(format!("{file} [{mode}]: no line of {file} in the cubin"))
                }
                (false, false) => failures.push(format!(
                    "{file} [{mode}]: lines {lines:?} without debug information"
                )),
                _ => {}
            }
            if let Some(bad) = lines.iter().find(|&&l| l == 0 || l > source_lines) {
                failures.push(format!(
                    "{file} [{mode}]: line {bad} is not a line of the file"
                ));
            }
            if mode.starts_with("lto") && call && !fallback {
                failures.push(format!("{file} [{mode}]: a CALL in the LTOIR route's SASS"));
            }
            if wants_lines {
                checked += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Eight admitted cases (and the example) × four modes with lines.
    assert!(
        checked >= 32,
        "only {checked} builds with debug information were checked"
    );
}

/// `-g` on the LTOIR route: the DWARF of the linked cubin holds the Rust
/// compile unit, the callback as a subprogram inlined into the provider's
/// kernel, and its arguments and capture as variables, the capture with a
/// location in at least one inlined instance (cuda-gdb printed `k = 4` on
/// the H200, docs/gpu.md).
#[test]
fn g_builds_describe_the_callbacks_variables() {
    let dwarfdump = Path::new("/usr/lib/llvm-22/bin/llvm-dwarfdump");
    assert!(dwarfdump.exists(), "LLVM 22 missing: run scripts/setup.sh");
    let out_dir = std::env::temp_dir().join(format!("rmir-debug-vars-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let o = Command::new(env!("CARGO_BIN_EXE_driver"))
        .args([
            "build",
            "tests/admission/03_wrapping_capture.rs",
            "-g",
            "--no-cache",
            "-o",
        ])
        .arg(&out_dir)
        .current_dir(root())
        .output()
        .expect("driver runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d = Command::new(dwarfdump)
        .arg("--debug-info")
        .arg(out_dir.join("callbacks.cubin"))
        .output()
        .expect("llvm-dwarfdump runs");
    let text = String::from_utf8_lossy(&d.stdout).into_owned();
    let _ = std::fs::remove_dir_all(&out_dir);
    let rust = text.find("DW_LANG_Rust").expect("a Rust compile unit");
    // The DIE offset of the Rust unit: every DIE after it is the unit's.
    let unit = text[..rust]
        .rfind("DW_TAG_compile_unit")
        .and_then(|at| text[..at].rsplit("0x").next())
        .and_then(|h| {
            u64::from_str_radix(h.trim_end_matches(|c: char| !c.is_ascii_hexdigit()), 16).ok()
        })
        .expect("the unit's offset");
    let mut declared = BTreeSet::new();
    let mut located = BTreeSet::new();
    for die in text.split("\n\n") {
        if let Some(at) = die.find("DW_AT_name\t(\"") {
            if die.contains("DW_TAG_formal_parameter") || die.contains("DW_TAG_variable") {
                let name = &die[at + 13..];
                let name = &name[..name.find('"').unwrap_or(0)];
                let offset = die.trim_start().split(':').next().unwrap_or("");
                if u64::from_str_radix(offset.trim_start_matches("0x"), 16).is_ok_and(|o| o > unit)
                {
                    declared.insert(name.to_string());
                }
            }
        }
        if let Some(at) = die.find("DW_AT_abstract_origin\t(0x") {
            let rest = &die[at + 25..];
            let origin = u64::from_str_radix(&rest[..rest.find(' ').unwrap_or(0)], 16).unwrap_or(0);
            if origin > unit && die.contains("DW_AT_location") {
                if let Some(q) = rest.find('"') {
                    let name = &rest[q + 1..];
                    located.insert(name[..name.find('"').unwrap_or(0)].to_string());
                }
            }
        }
    }
    for v in ["a", "b", "k"] {
        assert!(
            declared.contains(v),
            "`{v}` is not declared: {declared:?}\n{text}"
        );
    }
    assert!(located.contains("k"), "`k` has no location: {located:?}");
    assert!(
        text.contains("DW_TAG_inlined_subroutine") && text.contains("\"entry::{closure#0}\""),
        "the callback, inlined and named after the closure"
    );
}
