//! The command line as a user meets it: exit codes, messages, and no
//! artifact left behind on failure. Runs the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn driver(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_driver"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("driver runs")
}

fn text(o: &Output) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rmir-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn snapshot(name: &str, value: String) {
    insta::with_settings!({snapshot_path => root().join("snapshots/driver"), prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, value);
    });
}

#[test]
fn bad_mir_is_a_located_error_and_writes_nothing() {
    let dir = scratch("badmir");
    std::fs::copy(
        root().join("tests/mir-errors/truncated_body.mir"),
        dir.join("x.mir"),
    )
    .unwrap();
    let o = driver(&["import", "x.mir", "-o", "x.pmir.json"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert!(!dir.join("x.pmir.json").exists(), "no output on failure");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
    snapshot("import_bad_mir", text(&o));
}

#[test]
fn rustc_errors_are_shown() {
    let dir = scratch("rustcerr");
    std::fs::write(dir.join("bad.rs"), "pub fn f() -> i32 { undefined_name }\n").unwrap();
    let o = driver(&["import", "bad.rs"], &dir);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("rustc rejected bad.rs"), "{err}");
    assert!(err.contains("cannot find value `undefined_name`"), "{err}");
    assert!(!dir.join("bad.pmir.json").exists());
}

#[test]
fn prepared_mir_of_another_version_is_refused() {
    let dir = scratch("pmirver");
    std::fs::write(dir.join("old.pmir.json"), "{\"format\": \"pmir/0\"}").unwrap();
    let o = driver(&["admit", "old.pmir.json"], &dir);
    assert_eq!(o.status.code(), Some(1));
    std::fs::write(dir.join("broken.pmir.json"), "{\"format\": ").unwrap();
    let o2 = driver(&["admit", "broken.pmir.json"], &dir);
    assert_eq!(o2.status.code(), Some(1));
    snapshot("pmir_errors", format!("{}\n{}", text(&o), text(&o2)));
}

#[test]
fn empty_files_and_files_without_registrations_are_fine() {
    let dir = scratch("empty");
    std::fs::write(dir.join("empty.rs"), "").unwrap();
    std::fs::write(
        dir.join("plain.rs"),
        "pub fn f(a: i32) -> i32 { a.wrapping_add(1) }\n",
    )
    .unwrap();
    let a = driver(&["admit", "empty.rs"], &dir);
    let b = driver(&["admit", "plain.rs"], &dir);
    assert_eq!(a.status.code(), Some(0));
    assert_eq!(b.status.code(), Some(0));
    snapshot("admit_nothing", format!("{}\n{}", text(&a), text(&b)));
}

#[test]
fn admit_exit_codes_and_json() {
    let root = root();
    let ok = driver(&["admit", "tests/admission/03_wrapping_capture.rs"], &root);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    let rejected = driver(
        &[
            "admit",
            "--error-format=json",
            "tests/admission/16_cuda_call_chain.rs",
        ],
        &root,
    );
    assert_eq!(rejected.status.code(), Some(1));
    let out = String::from_utf8_lossy(&rejected.stdout);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["code"], "E0106");
    assert!(first["notes"][0]
        .as_str()
        .unwrap()
        .contains("level1 → level2 → cuCtxSynchronize"));
}

#[test]
fn usage_errors_exit_2_and_explain_works() {
    let root = root();
    let usage = driver(&["import"], &root);
    assert_eq!(usage.status.code(), Some(2));
    let unknown = driver(&["explain", "E0999"], &root);
    assert_eq!(unknown.status.code(), Some(1));
    let known = driver(&["explain", "E0101"], &root);
    assert_eq!(known.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&known.stdout).contains("add `move`"));
    for sub in ["import", "admit", "link", "inspect", "explain"] {
        let h = driver(&[sub, "--help"], &root);
        assert_eq!(h.status.code(), Some(0), "{sub} --help");
    }
}

#[test]
fn inspect_and_link_bad_inputs() {
    let dir = scratch("inspect");
    std::fs::write(dir.join("junk.bin"), b"\x7fELF\x02\x01\x01junk").unwrap();
    let o = driver(&["inspect", "junk.bin"], &dir);
    assert_eq!(o.status.code(), Some(1));
    let l = driver(&["link", "junk.bin", "-o", "out.cubin"], &dir);
    assert_eq!(l.status.code(), Some(1));
    assert!(!dir.join("out.cubin").exists());
}

#[test]
fn opt_reports_malformed_modules_and_unknown_passes() {
    let dir = scratch("opt");
    std::fs::write(
        dir.join("bad.mlir"),
        "module {\n  func.func @f() -> i32 {\n    %0 = arith.constant 1 : i64\n    return %0 : i32\n  }\n}\n",
    )
    .unwrap();
    let bad = driver(&["opt", "bad.mlir"], &dir);
    assert_eq!(bad.status.code(), Some(1));
    std::fs::write(dir.join("garbage.mlir"), "module { this is not mlir }\n").unwrap();
    let garbage = driver(&["opt", "garbage.mlir"], &dir);
    assert_eq!(garbage.status.code(), Some(1));
    // Nested far past what MLIR's parser can recurse on the main thread's
    // 8 MiB stack (about 2,000 regions): refused before it recurses.
    let deep = format!(
        "module {{\n{}",
        "  \"builtin.module\"() ({\n".repeat(20_000)
    );
    std::fs::write(dir.join("deep.mlir"), deep).unwrap();
    let deep = driver(&["opt", "deep.mlir"], &dir);
    assert_eq!(deep.status.code(), Some(1));
    let unknown = driver(
        &[
            "opt",
            &root()
                .join("tests/admission/03_wrapping_capture.rs")
                .display()
                .to_string(),
            "--passes=lower-rmir-arith,frobnicate",
        ],
        &dir,
    );
    assert_eq!(unknown.status.code(), Some(1));
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        err.contains("frobnicate") && err.contains("select-admitted"),
        "{err}"
    );
    snapshot(
        "opt_errors",
        format!("{}\n{}\n{}", text(&bad), text(&garbage), text(&deep)),
    );
}

#[test]
fn opt_prints_the_module_after_every_pass() {
    let o = driver(
        &[
            "opt",
            "tests/admission/03_wrapping_capture.rs",
            "--passes=standard",
            "--print-ir-after-all",
        ],
        &root(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let dumps: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("// -----// IR Dump After "))
        .map(|l| l.trim_end_matches(" //----- //"))
        .collect();
    assert_eq!(
        dumps,
        [
            "select-admitted",
            "lower-rmir-arith",
            "lower-rmir-calls",
            "lower-rmir-control",
            "lower-rmir-memory",
            "make-thunks",
            "convert-arith-to-llvm",
            "convert-cf-to-llvm",
            "convert-func-to-llvm",
            "reconcile-unrealized-casts"
        ]
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("llvm.func @rmir_cb0_entry_closure_0"), "{out}");
    assert!(!out.contains("rmir."), "no rmir op is left:\n{out}");
}

#[test]
fn every_admitted_case_builds_by_both_routes() {
    let dir = scratch("build");
    let root = root();
    for entry in std::fs::read_dir(root.join("tests/admission")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if stem.as_str() >= "09" {
            continue;
        }
        for route in ["--lto", "--no-lto"] {
            let out = dir.join(format!("{stem}{route}"));
            let mut args = vec![
                "build",
                path.to_str().unwrap(),
                route,
                "-o",
                out.to_str().unwrap(),
            ];
            if stem.contains("opt3") {
                args.push("-O");
            }
            let o = driver(&args, &root);
            assert_eq!(o.status.code(), Some(0), "{stem} {route}: {}", text(&o));
            let cubin = std::fs::read(out.join("callbacks.cubin")).unwrap();
            assert_eq!(&cubin[..4], b"\x7fELF", "{stem} {route}");
            let manifest: serde_json::Value =
                serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
            let kernel = manifest["kernels"][0]["name"].as_str().unwrap().to_string();
            let variant = if route == "--lto" {
                "rust_ltoir"
            } else {
                "rust_ptx"
            };
            assert!(kernel.ends_with(variant), "{stem}: {kernel}");
            let name = kernel.as_bytes();
            assert!(
                cubin.windows(name.len()).any(|w| w == name),
                "{stem}: {kernel} not in the cubin"
            );
        }
    }
}

#[test]
fn builds_are_deterministic_and_failures_leave_nothing() {
    let dir = scratch("determinism");
    let root = root();
    let file = root.join("examples/quickstart.rs");
    let mut outputs = Vec::new();
    for n in ["a", "b"] {
        let out = dir.join(n);
        let o = driver(
            &[
                "build",
                file.to_str().unwrap(),
                "--emit",
                "cu,ltoir",
                "-o",
                out.to_str().unwrap(),
            ],
            &root,
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().to_string(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        outputs.push(files);
    }
    assert_eq!(outputs[0], outputs[1], "same inputs, same bytes");
    // Only rejected registrations: an error, and no output folder.
    let out = dir.join("rejected");
    let o = driver(
        &[
            "build",
            root.join("tests/admission/15_cuda_call_direct.rs")
                .to_str()
                .unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        &root,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn missing_rustc_is_a_clear_error() {
    let o = Command::new(env!("CARGO_BIN_EXE_driver"))
        .args([
            "import",
            "tests/admission/03_wrapping_capture.rs",
            "-o",
            "-",
        ])
        .current_dir(root())
        .env("RUSTC", "/nonexistent/rustc")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot run rustc") && err.contains("set RUSTC"),
        "{err}"
    );
}

#[test]
fn panics_trap_and_const_items_are_values() {
    // `panic!`, `unreachable!` and `assert!` inside a callback become traps
    // (their messages are not imported); `const K` items are their values.
    let dir = scratch("panics");
    let root = root();
    for (case, traps) in [
        ("closure_panics", true),
        ("closure_assert", true),
        ("const_item", false),
    ] {
        let out = dir.join(case);
        let file = root.join(format!("tests/corpus/{case}.rs"));
        let o = driver(
            &[
                "build",
                file.to_str().unwrap(),
                "--emit",
                "llvm",
                "-o",
                out.to_str().unwrap(),
            ],
            &root,
        );
        assert_eq!(o.status.code(), Some(0), "{case}: {}", text(&o));
        let ll = std::fs::read_to_string(out.join("callbacks.0.ll")).unwrap();
        assert_eq!(ll.contains("llvm.trap"), traps, "{case}:\n{ll}");
    }
}

/// A host-API call without a closure (`gpu.sort(&d)`) is found by its
/// name in the caller's text: std's `want.sort()` on the line before, and
/// `v.iter().reduce(add)` beside `gpu.reduce(&d, 0, add)`, are not it
/// (they take other numbers of arguments), so the program finds each
/// kernel at its own call.
#[test]
fn calls_without_closures_are_told_from_std_methods_of_the_same_name() {
    let dir = scratch("sites");
    let file = dir.join("sites.rs");
    std::fs::write(
        &file,
        "use native::gpu::{DeviceVec, Error, Gpu};\n\
         fn add(a: u32, b: u32) -> u32 {\n\
         \x20   a.wrapping_add(b)\n\
         }\n\
         pub fn both(gpu: &Gpu, host: &[u32], d: &DeviceVec<u32>) -> Result<(Vec<u32>, u32), Error> {\n\
         \x20   let mut want = host.to_vec();\n\
         \x20   want.sort();\n\
         \x20   let total = host.iter().copied().reduce(add).unwrap_or(0);\n\
         \x20   let sorted = gpu.sort(d)?.to_vec()?;\n\
         \x20   let sum = gpu.reduce(d, 0, add)?;\n\
         \x20   Ok((sorted, sum + total))\n\
         }\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = driver(
        &["build", file.to_str().unwrap(), "-o", out.to_str().unwrap()],
        &root(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let sites: Vec<String> = m["callbacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{}:{}", c["site"]["line"], c["site"]["column"]))
        .collect();
    assert_eq!(sites, ["9:22", "10:19"], "{manifest}");
    let _ = std::fs::remove_dir_all(&dir);
}
