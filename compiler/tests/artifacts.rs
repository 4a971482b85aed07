//! `compiler::build::build` returns what it made in memory: the manifest,
//! the cubins and the diagnostics are inspected here without an output
//! folder, through real rustc, libNVVM, NVRTC and nvJitLink.

use std::path::{Path, PathBuf};

use compiler::build::{build, Config, Input};
use frontend::toolchain::RustcConfig;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

fn config() -> Config {
    Config::new("sm_90".parse().unwrap())
}

#[test]
fn a_build_returns_its_manifest_cubins_and_warnings() {
    let path = example("quickstart.rs");
    let rustc = RustcConfig::default();
    let artifacts = build(
        &Input::File {
            path: &path,
            rustc: &rustc,
        },
        &config(),
    )
    .unwrap();
    let manifest = artifacts.manifest.as_ref().expect("a manifest");
    assert_eq!(manifest.callbacks.len(), 4);
    assert_eq!(artifacts.counts.admitted, 4);
    assert_eq!(artifacts.counts.rejected, 0);
    assert_eq!(artifacts.counts.cubins, artifacts.cubins.len());
    // Every cubin the manifest names is there, and is an ELF.
    let names: Vec<&str> = artifacts.cubins.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(manifest.cubins(), names);
    for (name, bytes) in &artifacts.cubins {
        assert!(bytes.starts_with(b"\x7fELF"), "{name} is not an ELF");
    }
    // The lint's warning on the captured `^ k` (not associative) is
    // returned, rendered, not printed.
    assert_eq!(artifacts.counts.warnings, 1);
    assert_eq!(artifacts.diagnostics.len(), 1);
    assert!(
        artifacts.diagnostics[0].starts_with("warning[W0201]"),
        "{}",
        artifacts.diagnostics[0]
    );
    // The folder's files: the manifest first, then the cubins.
    let files = artifacts.files();
    assert_eq!(files[0].0, "manifest.json");
    assert_eq!(files[0].1, manifest.to_json().into_bytes());
    assert_eq!(files.len(), 1 + artifacts.cubins.len());
    assert!(artifacts
        .summary(Path::new("out"))
        .starts_with("wrote out (4 callbacks"));
}

#[test]
fn a_rejection_fails_with_its_diagnostics_unless_the_build_keeps_going() {
    // The quickstart's four admitted callbacks and the rejected one of
    // borrowed_capture.rs, in one file.
    let rejected = std::fs::read_to_string(example("borrowed_capture.rs")).unwrap();
    let rejected = rejected.replace("pub fn ", "pub fn borrowed_");
    let text = std::fs::read_to_string(example("quickstart.rs")).unwrap() + &rejected;
    let dir = std::env::temp_dir().join(format!("rmir-artifacts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mixed.rs");
    std::fs::write(&path, text).unwrap();
    let rustc = RustcConfig::default();
    let input = Input::File {
        path: &path,
        rustc: &rustc,
    };
    let failure = build(&input, &config()).unwrap_err();
    assert!(failure.reported, "{}", failure.message);
    assert_eq!(
        failure.message,
        "1 rejected of 5 registrations: nothing is written (`--keep-going` builds the admitted ones)"
    );
    let errors: Vec<&String> = failure
        .diagnostics
        .iter()
        .filter(|d| d.starts_with("error[E0101]"))
        .collect();
    assert_eq!(errors.len(), 1, "{:?}", failure.diagnostics);
    let kept = build(
        &input,
        &Config {
            keep_going: true,
            ..config()
        },
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let kept = kept.unwrap();
    assert_eq!((kept.counts.admitted, kept.counts.rejected), (4, 1));
    assert_eq!(kept.manifest.unwrap().callbacks.len(), 4);
    // The rejection, then the lint's warning on the admitted ones.
    assert_eq!(kept.diagnostics.len(), 2, "{:?}", kept.diagnostics);
    assert!(kept.diagnostics[0].starts_with("error[E0101]"));
    assert!(kept.diagnostics[1].starts_with("warning[W0201]"));
}

#[test]
fn a_file_with_nothing_admitted_fails_with_the_rejection() {
    let path = example("borrowed_capture.rs");
    let rustc = RustcConfig::default();
    let failure = build(
        &Input::File {
            path: &path,
            rustc: &rustc,
        },
        &config(),
    )
    .unwrap_err();
    assert!(failure.reported);
    assert!(
        failure
            .message
            .ends_with("no admitted registration to build (1 found, 1 rejected)"),
        "{}",
        failure.message
    );
    assert_eq!(failure.diagnostics.len(), 1);
    assert!(failure.diagnostics[0].contains("captures `k` by reference"));
}

#[test]
fn a_check_builds_no_device_code() {
    let path = example("quickstart.rs");
    let rustc = RustcConfig::default();
    let checked = build(
        &Input::File {
            path: &path,
            rustc: &rustc,
        },
        &Config {
            check_only: true,
            ..config()
        },
    )
    .unwrap();
    assert!(checked.manifest.is_none());
    assert!(checked.cubins.is_empty() && checked.files().is_empty());
    assert_eq!(checked.counts.admitted, 4);
    assert_eq!(checked.counts.warnings, 1);
}
