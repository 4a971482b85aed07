//! Verdict case files: every `tests/verdicts/*.rs` says what admission must
//! decide in its first line, `// expect: admitted` or
//! `// expect: rejected E0NNN` (every rejected registration carries that
//! code). Each case runs through the real rustc bridge for a dev profile
//! (opt-level 0, debug assertions on) and a release one (opt-level 3), and
//! must get the same verdict in both: the device side reads the MIR of one
//! optimised run for every profile (`frontend::bridge::MIR_OPT_LEVEL`). The
//! report (diagnostics or ABI) is a reviewed snapshot per profile. Every
//! mismatch of every case is listed before the test fails.

use std::path::{Path, PathBuf};

use frontend::bridge::Bridge;
use frontend::toolchain::RustcConfig;
use passes::admission::{self, Verdict};
use passes::pipeline;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

enum Expect {
    Admitted,
    Rejected(String),
}

fn expectation(path: &Path) -> Expect {
    let text = std::fs::read_to_string(path).unwrap();
    let first = text.lines().next().unwrap_or_default();
    let e = first
        .strip_prefix("// expect: ")
        .unwrap_or_else(|| panic!("{}: first line must be `// expect: …`", path.display()));
    match e.trim().split_once(' ') {
        None if e.trim() == "admitted" => Expect::Admitted,
        Some(("rejected", code)) => Expect::Rejected(code.trim().to_string()),
        _ => panic!("{}: unknown expectation `{e}`", path.display()),
    }
}

#[test]
fn verdict_cases() {
    std::env::set_current_dir(root()).unwrap();
    let mut cases: Vec<PathBuf> = std::fs::read_dir("tests/verdicts")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 15, "found only {} cases", cases.len());
    let bridges = [0u8, 3].map(|opt_level| {
        Bridge::new(RustcConfig {
            opt_level,
            ..Default::default()
        })
        .unwrap()
    });
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots/verdicts"));
    settings.set_prepend_module_to_snapshot(false);
    let _guard = settings.bind_to_scope();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for case in &cases {
        let stem = case.file_stem().unwrap().to_string_lossy().to_string();
        let expect = expectation(case);
        for (bridge, level) in bridges.iter().zip([0, 3]) {
            let doc = bridge
                .import(case)
                .unwrap_or_else(|e| panic!("{stem} -O{level}: {e}"));
            let context = ir::context().unwrap();
            let module = ir::import(&context, &doc).unwrap();
            let outcomes = pipeline::admit_module(&module).unwrap_or_else(|e| panic!("{e}"));
            assert!(!outcomes.is_empty(), "{stem} -O{level}: no registrations");
            let report = admission::report(&doc, &outcomes);
            for o in &outcomes {
                match (&expect, &o.verdict) {
                    (Expect::Admitted, Verdict::Admitted(_)) => {}
                    (Expect::Rejected(code), Verdict::Rejected(diags))
                        if diags.iter().any(|d| d.code.as_str() == code) => {}
                    _ => {
                        wrong.push(format!("{stem} -O{level}: unexpected verdict:\n{report}"));
                        break;
                    }
                }
                checked += 1;
            }
            insta::assert_snapshot!(format!("{stem}.O{level}"), report);
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 30, "only {checked} verdicts checked");
}
