//! The importer on real rustc MIR: every case file of tests/corpus and
//! tests/admission at opt-level 0 and 3 imports, verifies, and its printed
//! module parses back to the same text. Three imports are snapshots.

use std::path::{Path, PathBuf};

use frontend::bridge::Bridge;
use frontend::toolchain::RustcConfig;

fn case_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["tests/corpus", "tests/admission"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn bridge(opt_level: u8) -> Bridge {
    Bridge::new(RustcConfig {
        opt_level,
        ..RustcConfig::default()
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Import, verify, print, parse, print: the two prints must be equal.
fn round_trip(pmir: &frontend::PreparedMir) -> Result<String, String> {
    let context = ir::context().map_err(|e| e.to_string())?;
    let module = ir::import(&context, pmir).map_err(|e| format!("import: {e}"))?;
    ir::verify(&module).map_err(|e| format!("verify: {e}"))?;
    let text = ir::print(&module);
    let again = ir::parse(&context, &text).map_err(|e| format!("parse: {e}"))?;
    let text2 = ir::print(&again);
    if text != text2 {
        return Err("the printed module does not parse back to the same module".into());
    }
    ir::verify(&again).map_err(|e| format!("verify after parse: {e}"))?;
    Ok(text)
}

#[test]
fn every_case_round_trips_at_o0_and_o3() {
    let files = case_files();
    assert!(
        files.len() >= 20,
        "expected the case corpus under tests/, found {} files",
        files.len()
    );
    let mut imported = 0usize;
    let mut frontend_failures = Vec::new();
    let mut failures = Vec::new();
    for opt in [0u8, 3] {
        let bridge = bridge(opt);
        for f in &files {
            let pmir = match bridge.import(f) {
                Ok(p) => p,
                // Not this crate's to fix; counted so the test cannot pass empty.
                Err(e) => {
                    frontend_failures.push(format!("{} -O{opt}: {e}", f.display()));
                    continue;
                }
            };
            imported += 1;
            if let Err(e) = round_trip(&pmir) {
                failures.push(format!("{} -O{opt}: {e}", f.display()));
            }
        }
    }
    eprintln!(
        "{imported} imports round-tripped; {} frontend failures",
        frontend_failures.len()
    );
    for f in &frontend_failures {
        eprintln!("  frontend: {}", f.lines().next().unwrap_or_default());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        imported * 10 >= files.len() * 2 * 9,
        "fewer than 90% of the cases reached the importer:\n{}",
        frontend_failures.join("\n")
    );
}

fn snapshot(case: &str) -> String {
    let file = Path::new("../tests/admission").join(case);
    let pmir = bridge(0).import(&file).unwrap_or_else(|e| panic!("{e}"));
    let text = round_trip(&pmir).unwrap_or_else(|e| panic!("{e}"));
    // The rustc version changes with the toolchain, not with the importer.
    text.lines()
        .map(|l| match l.find("rmir.rustc = \"") {
            Some(i) => {
                let end = l[i + 14..]
                    .find('"')
                    .map(|j| i + 14 + j + 1)
                    .unwrap_or(l.len());
                format!("{}rmir.rustc = \"<rustc>\"{}", &l[..i], &l[end..])
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn snapshot_capture_read() {
    insta::assert_snapshot!(snapshot("03_wrapping_capture.rs"));
}

#[test]
fn snapshot_local_call_chain() {
    insta::assert_snapshot!(snapshot("05_helper_chain.rs"));
}

#[test]
fn snapshot_fn_mut_env_write() {
    insta::assert_snapshot!(snapshot("13_fnmut_counter.rs"));
}

/// The facts admission reads come from the module, with locations.
#[test]
fn facts_name_captures_calls_and_env_writes() {
    let bridge = bridge(0);
    let context = ir::context().unwrap();

    let pmir = bridge
        .import(Path::new("../tests/admission/13_fnmut_counter.rs"))
        .unwrap_or_else(|e| panic!("{e}"));
    let module = ir::import(&context, &pmir).unwrap_or_else(|e| panic!("{e}"));
    let facts = ir::facts(&module).unwrap();
    assert_eq!(facts.registrations.len(), 1);
    let reg = &facts.registrations[0];
    assert_eq!(reg.function, "reduce_mut");
    let callback = reg.callback.body().expect("a closure");
    let closure = facts.closure(callback).expect("the callback's closure");
    assert_eq!(closure.kind, ir::facts::ClosureKind::FnMut);
    let body = facts.body(callback).expect("the callback's body");
    let writes: Vec<&str> = body.env_writes.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(writes, ["calls"]);
    let w = &body.env_writes[0].1;
    assert_eq!(w.span.map(|s| s.lo_line), Some(6));
    assert!(w.mir_line.is_some_and(|m| m > 0));

    let pmir = bridge
        .import(Path::new("../tests/admission/05_helper_chain.rs"))
        .unwrap_or_else(|e| panic!("{e}"));
    let module = ir::import(&context, &pmir).unwrap_or_else(|e| panic!("{e}"));
    let facts = ir::facts(&module).unwrap();
    let local: Vec<(&str, &str)> = facts
        .calls()
        .filter(|(_, c)| c.kind == ir::facts::CallKind::Local)
        .map(|(caller, c)| (caller, c.callee.as_str()))
        .collect();
    assert_eq!(
        local,
        [
            ("combine", "keep_smaller"),
            ("entry::{closure#0}", "combine")
        ]
    );
    assert!(facts.bodies.values().all(|b| b.unsupported.is_empty()));
}
