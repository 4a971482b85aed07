//! The admission suite: every case under `tests/admission/`, through the real
//! rustc bridge, the `rmir` importer and admission, with one reviewed
//! snapshot each (the rendered diagnostics, or the admitted callback's ABI).

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

fn admit(bridge: &Bridge, rel: &Path) -> (frontend::PreparedMir, Vec<admission::Outcome>) {
    let doc = bridge
        .import(rel)
        .unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
    let context = ir::context().unwrap();
    let module = ir::import(&context, &doc).unwrap();
    let outcomes = pipeline::admit_module(&module).unwrap_or_else(|e| panic!("{e}"));
    (doc, outcomes)
}

#[test]
fn eighteen_outcomes() {
    std::env::set_current_dir(root()).unwrap();
    let mut cases: Vec<PathBuf> = std::fs::read_dir("tests/admission")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    cases.sort();
    assert_eq!(cases.len(), 18);
    let o0 = Bridge::new(RustcConfig::default()).unwrap();
    let o3 = Bridge::new(RustcConfig {
        opt_level: 3,
        ..Default::default()
    })
    .unwrap();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots/admission"));
    settings.set_prepend_module_to_snapshot(false);
    let _guard = settings.bind_to_scope();
    for (i, case) in cases.iter().enumerate() {
        let stem = case.file_stem().unwrap().to_string_lossy().to_string();
        let bridge = if stem.contains("opt3") { &o3 } else { &o0 };
        let (doc, outcomes) = admit(bridge, case);
        // Cases 1-8 are admitted, 9-18 rejected (17 also holds an admissible
        // inner registration).
        let rejected = outcomes
            .iter()
            .filter(|o| matches!(o.verdict, Verdict::Rejected(_)))
            .count();
        if i < 8 {
            assert_eq!(rejected, 0, "{stem} must be admitted");
        } else {
            assert!(rejected >= 1, "{stem} must be rejected");
        }
        insta::assert_snapshot!(stem, admission::report(&doc, &outcomes));
    }
}

#[test]
fn json_diagnostics_are_one_object_a_line() {
    std::env::set_current_dir(root()).unwrap();
    let bridge = Bridge::new(RustcConfig::default()).unwrap();
    // Case 11's help carries a suggestion; case 12's helps are advice.
    for (stem, suggested) in [("12_non_scalar_captures", 0), ("11_raw_pointer_capture", 2)] {
        let (doc, outcomes) = admit(
            &bridge,
            &Path::new("tests/admission").join(format!("{stem}.rs")),
        );
        let emitter = passes::diagnostic::Emitter::new(&doc.source, false);
        let Verdict::Rejected(diags) = &outcomes[0].verdict else {
            panic!("{stem} is rejected");
        };
        let lines: Vec<String> = diags.iter().map(|d| emitter.json(d)).collect();
        let mut edits = 0;
        for l in &lines {
            assert!(!l.contains('\n'));
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["code"].as_str().unwrap().starts_with("E01"));
            assert!(v["spans"][0]["is_primary"].as_bool().unwrap());
            assert_eq!(v["children"][0]["message"], v["help"]);
            for e in v["children"][0]["spans"].as_array().unwrap() {
                assert!(e["suggested_replacement"].is_string());
                assert_eq!(e["suggestion_applicability"], "MachineApplicable");
                edits += 1;
            }
        }
        assert_eq!(edits, suggested, "{stem}");
        insta::with_settings!({snapshot_path => root().join("snapshots/admission"), prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(format!("{stem}.json"), lines.join("\n"));
        });
    }
}
