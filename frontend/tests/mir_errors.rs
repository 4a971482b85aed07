//! Bad input: every file under `tests/mir-errors/` must give a located
//! error (never a panic), either for the whole file (a broken structure:
//! items, headers, blocks, locals) or, for a statement or terminator
//! outside the subset the parser reads, as an `Unparsed` entry of its body
//! with the line and reason, which becomes an error only when a callback
//! reaches that body. The parser must also survive arbitrary and mutated
//! MIR text.

use std::path::{Path, PathBuf};

use frontend::bridge::import_mir_text;
use frontend::PreparedMir;
use proptest::prelude::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn malformed_mir_is_a_located_error() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/mir-errors"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10);
    let mut report = String::new();
    let (mut whole_file, mut per_body) = (0, 0);
    for f in files {
        let name = format!(
            "tests/mir-errors/{}",
            f.file_name().unwrap().to_string_lossy()
        );
        let text = std::fs::read_to_string(&f).unwrap();
        match import_mir_text(&name, &text) {
            Ok(doc) => {
                let kept = unparsed(&doc);
                assert!(!kept.is_empty(), "{name}: accepted with nothing unparsed");
                for (body, line, reason) in kept {
                    report.push_str(&format!("{name}:{line}: kept in `{body}`: {reason}\n"));
                    per_body += 1;
                }
            }
            Err(e) => {
                report.push_str(&format!("{name}:{e}\n"));
                whole_file += 1;
            }
        }
    }
    assert!(
        whole_file >= 5 && per_body >= 5,
        "{whole_file} whole-file, {per_body} per-body"
    );
    insta::with_settings!({snapshot_path => root().join("snapshots/frontend"), prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("mir_errors", report);
    });
}

/// `(body, MIR line, reason)` of every statement or terminator the parser
/// kept unread.
fn unparsed(doc: &PreparedMir) -> Vec<(String, u32, String)> {
    use frontend::pmir::{StatementKind, TerminatorKind};
    let mut out = Vec::new();
    for b in &doc.bodies {
        for block in &b.blocks {
            for st in &block.statements {
                if let StatementKind::Unparsed { reason, .. } = &st.kind {
                    out.push((b.name.clone(), st.mir_line, reason.clone()));
                }
            }
            if let TerminatorKind::Unparsed { reason, .. } = &block.terminator.kind {
                out.push((b.name.clone(), block.terminator.mir_line, reason.clone()));
            }
        }
    }
    out
}

#[test]
fn real_mir_files_import() {
    for f in ["quickstart.O0.mir", "quickstart.O3.mir"] {
        let text = std::fs::read_to_string(root().join("tests/mir").join(f)).unwrap();
        let doc = import_mir_text(f, &text).unwrap_or_else(|e| panic!("{f}:{e}"));
        assert_eq!(doc.registrations.len(), 5, "{f}");
        assert!(doc
            .closures
            .iter()
            .any(|c| c.captures.iter().any(|k| k.name == "k")));
    }
}

/// A registration whose call cannot be read is an error at the call, never
/// a registration skipped: here its initial value is a constant the parser
/// does not know.
#[test]
fn an_unreadable_registration_call_is_an_error() {
    let text = std::fs::read_to_string(root().join("tests/mir/quickstart.O3.mir")).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("native::reduce::<") && l.contains("const 0_i32, move _3"))
        .expect("the keyed_sum call")
        + 1;
    let broken = text.replacen("const 0_i32, move _3", "const 0_q32, move _3", 1);
    let err = import_mir_text("quickstart.O3.mir", &broken).expect_err("an unreadable call");
    let message = err.to_string();
    assert!(message.starts_with(&format!("{line}:")), "{message}");
    assert!(
        message.contains("a call of `native::reduce` that cannot be read"),
        "{message}"
    );
    assert!(message.contains("0_q32"), "{message}");
}

#[test]
fn prepared_mir_reader_rejects_bad_documents() {
    let cases = [
        ("not json", "{ \"format\": "),
        ("other version", "{\"format\": \"pmir/2\", \"bodies\": []}"),
        ("no format", "{\"bodies\": []}"),
        ("format not a string", "{\"format\": 1}"),
        ("missing fields", "{\"format\": \"pmir/1\"}"),
    ];
    let mut report = String::new();
    for (what, text) in cases {
        let err = PreparedMir::from_json(text).expect_err(what);
        report.push_str(&format!("{what}: {err}\n"));
    }
    insta::with_settings!({snapshot_path => root().join("snapshots/frontend"), prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("pmir_reader_errors", report);
    });
}

fn quickstart() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        std::fs::read_to_string(root().join("tests/mir/quickstart.O3.mir")).unwrap()
    })
}

/// Characters MIR is made of, so mutations look almost like MIR.
const ALPHABET: &[char] = &[
    '_', '1', '(', ')', '{', '}', '[', ']', '<', '>', ':', ';', ',', '.', '*', '&', '"', ' ', '\n',
    '-', '=', 'b', 'c', 'o', 'p', 'y', 'é', '→',
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,400}") {
        let _ = import_mir_text("fuzz.mir", &s);
    }

    #[test]
    fn mutated_mir_never_panics(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..40, prop::sample::select(ALPHABET), 0u8..4), 1..6)
    ) {
        let mut text: Vec<char> = quickstart().chars().collect();
        for (at, len, c, kind) in edits {
            if text.is_empty() {
                break;
            }
            let i = at.index(text.len());
            match kind {
                0 => { let end = (i + len).min(text.len()); text.drain(i..end); }
                1 => text.insert(i, c),
                2 => text[i] = c,
                _ => text.truncate(i),
            }
        }
        let s: String = text.into_iter().collect();
        let _ = import_mir_text("mutated.mir", &s);
    }
}
