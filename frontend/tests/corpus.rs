//! The corpus: every case file under `tests/corpus/`, `tests/admission/` and
//! `examples/`, imported through the real rustc bridge at opt-level 0 and 3.
//! Each gets a reviewed snapshot of its prepared-MIR summary, and each
//! document must survive write → read → write byte for byte.

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

fn case_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["tests/corpus", "tests/admission", "examples"] {
        let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        v.sort();
        files.extend(v);
    }
    files
}

/// Imports every case at one opt level; returns (snapshot name, summary).
fn import_all(opt_level: u8) -> Vec<(String, String)> {
    import_all_with(opt_level, true)
}

fn import_all_with(opt_level: u8, overflow_checks: bool) -> Vec<(String, String)> {
    let bridge = Bridge::new(RustcConfig {
        opt_level,
        overflow_checks,
        ..Default::default()
    })
    .expect("rustc and the native crate build");
    let root = root();
    std::env::set_current_dir(&root).unwrap();
    case_files()
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(&root).unwrap();
            let doc = bridge
                .import(rel)
                .unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
            // Round trip: written, read back, written again: same bytes.
            let json = doc.to_json();
            let back = PreparedMir::from_json(&json).expect("reads back");
            assert_eq!(back, doc, "{}: document changed on read", rel.display());
            assert_eq!(back.to_json(), json, "{}: bytes changed", rel.display());
            let dir = rel.parent().unwrap().file_name().unwrap().to_string_lossy();
            let stem = rel.file_stem().unwrap().to_string_lossy();
            (
                format!("{dir}__{stem}.O{opt_level}"),
                frontend::summary::summary(&doc),
            )
        })
        .collect()
}

/// With overflow checks off rustc emits other MIR (plain `Add` instead of
/// `AddWithOverflow`, fewer asserts): every case must import there too.
#[test]
fn corpus_imports_with_overflow_checks_off() {
    let (o0, o3) = std::thread::scope(|s| {
        let a = s.spawn(|| import_all_with(0, false));
        let b = s.spawn(|| import_all_with(3, false));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!(o0.len(), case_files().len());
    assert_eq!(o3.len(), case_files().len());
    for (name, summary) in o0.iter().chain(&o3) {
        assert!(summary.contains("overflow checks off"), "{name}");
    }
}

#[test]
fn corpus_imports_at_both_opt_levels() {
    let files = case_files();
    assert!(files.len() >= 25 + 18, "corpus too small: {}", files.len());
    let (o0, o3) = std::thread::scope(|s| {
        let a = s.spawn(|| import_all(0));
        let b = s.spawn(|| import_all(3));
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots/frontend"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (name, summary) in o0.into_iter().chain(o3) {
            insta::assert_snapshot!(name, summary);
        }
    });
}

/// Cargo's dev and release profiles pass `-C debuginfo`, with which
/// optimised MIR keeps debug info of inlined scopes, such as a function
/// item (`debug compare => <&usize as Ord>::cmp;`, from `Iterator::max`):
/// every case prints such MIR and imports.
#[test]
fn corpus_imports_mir_with_debug_info() {
    let bridge = Bridge::new(RustcConfig::default()).expect("rustc and the native crate build");
    let root = root();
    let out = std::env::temp_dir().join(format!("rmir-corpus-debuginfo-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut fn_item_debug_info = 0;
    for path in case_files() {
        let mir_path = out.join("case.mir");
        let o = std::process::Command::new("rustc")
            .args([
                "--edition",
                "2021",
                "--crate-type",
                "lib",
                "--crate-name",
                "callbacks",
            ])
            .args(frontend::bridge::mir_codegen_flags(true, true))
            .args(["-C", "debuginfo=2", "--emit=mir", "--extern"])
            .arg(format!("native={}", bridge.native_rlib().display()))
            .arg(&path)
            .arg("-o")
            .arg(&mir_path)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let mir = std::fs::read_to_string(&mir_path).unwrap();
        fn_item_debug_info += mir.contains("debug compare => <") as usize;
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        frontend::bridge::import_mir_text(&rel, &mir)
            .unwrap_or_else(|e| panic!("{rel} with -C debuginfo=2: {e}"));
    }
    std::fs::remove_dir_all(&out).ok();
    assert!(
        fn_item_debug_info >= 1,
        "no case has a function item as debug info"
    );
}
