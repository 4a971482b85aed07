//! Source paths rustc prints verbatim inside MIR (`{closure@PATH:3:5: 3:16}`,
//! `<impl at PATH:…>`): folders named with `}`, `{@`, `"`, a newline, `%`
//! or brackets must import like any other. Each case copies
//! `tests/odd-paths/keyed.rs` into such a folder under a fresh temporary
//! directory and imports it through rustc at opt-level 0 and 3.

use std::path::{Path, PathBuf};

use frontend::bridge::Bridge;
use frontend::toolchain::RustcConfig;
use frontend::PreparedMir;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

const FOLDERS: &[&str] = &[
    "plain",
    "a}b",
    "{@x",
    "q\"uote",
    "new\nline",
    "a}b{@c\"d\ne",
    "100% (sure) <a> [b], c;",
];

#[test]
fn odd_folder_names_import() {
    let case = std::fs::read_to_string(root().join("tests/odd-paths/keyed.rs")).unwrap();
    let tmp = std::env::temp_dir().join(format!("rmir-odd-paths-{}", std::process::id()));
    let mut report = String::new();
    for opt_level in [0, 3] {
        let bridge = Bridge::new(RustcConfig {
            opt_level,
            ..Default::default()
        })
        .unwrap();
        for folder in FOLDERS {
            let dir = tmp.join(folder);
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join("keyed.rs");
            std::fs::write(&file, &case).unwrap();
            let shown = format!("{folder:?}/keyed.rs O{opt_level}");
            let doc = bridge
                .import(&file)
                .unwrap_or_else(|e| panic!("{shown}: {e}"));
            // The source facts name the real file, not its escaped spelling.
            assert_eq!(doc.source.file, file.display().to_string(), "{shown}");
            assert_eq!(doc.registrations.len(), 1, "{shown}");
            let closure = &doc.closures[0];
            assert_eq!(closure.captures.len(), 1, "{shown}");
            assert_eq!(closure.captures[0].name, "k", "{shown}");
            // MIR lines are rustc's, even where the path held newlines.
            let mir = bridge.emit_mir(&file).unwrap();
            let reg = &doc.registrations[0];
            let line = mir.lines().nth(reg.mir_line as usize - 1).unwrap_or("");
            assert!(
                line.contains("reduce"),
                "{shown}: line {} is {line:?}",
                reg.mir_line
            );
            // The document survives the reader, byte for byte.
            let json = doc.to_json();
            let back = PreparedMir::from_json(&json).unwrap_or_else(|e| panic!("{shown}: {e}"));
            assert_eq!(back, doc, "{shown}");
            report.push_str(&format!(
                "{shown}: closure type {}\n",
                closure
                    .ty
                    .to_string()
                    .replace(&tmp.display().to_string(), "$TMP")
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    insta::with_settings!({snapshot_path => root().join("snapshots/frontend"), prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("odd_paths", report);
    });
}
