//! Bad prepared-MIR documents: every file under `tests/pmir-errors/` is a
//! well-formed JSON document of the right shape that breaks one rule of the
//! format (a local, block or body index, an operand count, a type). Each
//! must be refused on read with an error that says where, never accepted
//! for a later stage to index out of bounds.

use std::path::{Path, PathBuf};

use frontend::validate::ReadError;
use frontend::PreparedMir;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The document every error case was derived from reads, and reads back to
/// the same bytes: the cases fail for their one edit, not for their base.
#[test]
fn base_document_reads() {
    let text = std::fs::read_to_string(root().join("tests/pmir/reduce_helper.pmir.json")).unwrap();
    let doc = PreparedMir::from_json(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc.registrations.len(), 1);
    assert_eq!(doc.to_json(), text);
}

#[test]
fn invalid_documents_are_located_errors() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/pmir-errors"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{} cases", files.len());
    let mut report = String::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        match PreparedMir::from_json(&text) {
            Ok(_) => panic!("{name}: accepted, expected an error"),
            // The shape is right in every case: the rules, not serde, refuse it.
            Err(e @ ReadError::Invalid(_)) => report.push_str(&format!("{name}: {e}\n")),
            Err(e) => panic!("{name}: refused for its shape, not its content: {e}"),
        }
    }
    insta::with_settings!({snapshot_path => root().join("snapshots/frontend"), prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("pmir_errors", report);
    });
}
