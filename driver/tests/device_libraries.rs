//! User device libraries (`--link FILE`): the FFI cases under `tests/ffi`,
//! each with its libraries named in a `// link:` header and what must
//! happen in an `// expect:` header (`admitted`, `rejected`, or
//! `link-error`: admitted, then stopped before nvJitLink), with a reviewed
//! snapshot of what `driver admit` (and for a link error `driver build`)
//! says. Admitted cases build by both routes: the LTO route's kernels have
//! no `CALL` (the helper is inlined), the PTX route's call it; the manifest
//! lists each library with its SHA-256. Then every kind of input nvcc and
//! NVRTC write, built from the same sources, links by both routes.

mod common;

use common::{has_call, root, scratch, tool};
use std::path::PathBuf;
use std::process::{Command, Output};

fn driver(args: &[&str]) -> Output {
    common::driver_uncached(args)
}

struct Case {
    file: String,
    stem: String,
    links: Vec<String>,
    expect: String,
}

fn cases() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/ffi"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let header = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(&format!("// {key}:")))
                    .unwrap_or_else(|| panic!("{}: no `// {key}:` header", p.display()))
                    .split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            };
            Case {
                file: format!("tests/ffi/{}", p.file_name().unwrap().to_string_lossy()),
                stem: p.file_stem().unwrap().to_string_lossy().into_owned(),
                links: header("link")
                    .iter()
                    .map(|l| format!("tests/ffi/{l}"))
                    .collect(),
                expect: header("expect").join(" "),
            }
        })
        .collect()
}

fn link_args(links: &[String]) -> Vec<&str> {
    links.iter().flat_map(|l| ["--link", l.as_str()]).collect()
}

/// Diagnostics (standard error), then the summary (standard output).
fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    )
}

#[test]
fn ffi_cases_admit_build_and_say_why_not() {
    let cases = cases();
    assert!(cases.len() >= 10, "the FFI cases are missing");
    let kinds = |k: &str| cases.iter().filter(|c| c.expect == k).count();
    assert!(kinds("admitted") >= 3 && kinds("rejected") >= 5 && kinds("link-error") >= 2);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots/driver"));
    settings.set_prepend_module_to_snapshot(false);
    let _guard = settings.bind_to_scope();
    let out = scratch("ffi", "cases");
    for c in &cases {
        let mut args = vec!["admit", c.file.as_str()];
        args.extend(link_args(&c.links));
        let admit = driver(&args);
        let admitted = admit.status.success();
        assert_eq!(
            admitted,
            c.expect != "rejected",
            "{}: admission said:\n{}",
            c.stem,
            text(&admit)
        );
        let mut report = text(&admit);
        if c.expect == "rejected" {
            assert_eq!(admit.status.code(), Some(1), "{}", c.stem);
            insta::assert_snapshot!(format!("ffi__{}", c.stem), report);
            continue;
        }
        for (route, flags) in [("lto", &[][..]), ("ptx", &["--no-lto"][..])] {
            let dir = out.join(format!("{}-{route}", c.stem));
            let dir_s = dir.display().to_string();
            let mut args = vec!["build", c.file.as_str(), "-o", dir_s.as_str()];
            args.extend(flags);
            args.extend(link_args(&c.links));
            let build = driver(&args);
            if c.expect == "link-error" {
                assert_eq!(build.status.code(), Some(1), "{} [{route}]", c.stem);
                assert!(
                    !dir.exists(),
                    "{} [{route}]: a failed build wrote {dir_s}",
                    c.stem
                );
                if route == "lto" {
                    report.push_str(&format!("\n$ driver build ...\n{}", text(&build)));
                }
                continue;
            }
            assert!(
                build.status.success(),
                "{} [{route}]:\n{}",
                c.stem,
                text(&build)
            );
            let call = has_call(&dir.join("callbacks.cubin"));
            assert_eq!(
                call,
                route == "ptx",
                "{} [{route}]: the helper must be inlined on the LTO route and called on the PTX route",
                c.stem
            );
            let m: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap())
                    .unwrap();
            let listed: Vec<(String, String)> = m["device_libraries"]
                .as_array()
                .expect("the manifest lists the device libraries")
                .iter()
                .map(|d| {
                    (
                        d["path"].as_str().unwrap().to_string(),
                        d["sha256"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            let expected: Vec<(String, String)> = c
                .links
                .iter()
                .map(|l| {
                    let bytes = std::fs::read(root().join(l)).unwrap();
                    let d = manifest::DeviceLibrary::new(l, "", &bytes);
                    (d.path, d.sha256)
                })
                .collect();
            assert_eq!(listed, expected, "{} [{route}]", c.stem);
        }
        insta::assert_snapshot!(format!("ffi__{}", c.stem), report);
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// A library's bytes go into the fingerprint and the cache key: changing
/// the helper changes both the fingerprint and the cubin.
#[test]
fn a_changed_library_changes_the_fingerprint_and_the_cubin() {
    let dir = scratch("ffi", "fingerprint");
    let lib = dir.join("helpers.cu");
    let source = std::fs::read_to_string(root().join("tests/ffi/lib/helpers.cu")).unwrap();
    let cache = dir.join("cache");
    let build = |n: usize| {
        let out = dir.join(format!("out{n}"));
        let o = Command::new(env!("CARGO_BIN_EXE_driver"))
            .current_dir(root())
            .env("RMIR_CACHE_DIR", &cache)
            .args(["build", "tests/ffi/01_extern_call.rs", "-o"])
            .arg(&out)
            .arg("--link")
            .arg(&lib)
            .args(["--link", "tests/ffi/lib/leaf.cu"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap())
                .unwrap();
        (
            m["fingerprint"].as_str().unwrap().to_string(),
            std::fs::read(out.join("callbacks.cubin")).unwrap(),
        )
    };
    std::fs::write(&lib, &source).unwrap();
    let first = build(0);
    // Warm: the same bytes give the same outputs.
    assert_eq!(build(1), first);
    std::fs::write(&lib, source.replace("0x9E3779B1u", "0x85EBCA77u")).unwrap();
    let changed = build(2);
    assert_ne!(
        changed.0, first.0,
        "the fingerprint must hold the library's bytes"
    );
    assert_ne!(
        changed.1, first.1,
        "a cached cubin must not survive a changed library"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The libraries of case 03 (`ffi_twice` in helpers, `ffi_leaf` in leaf),
/// built into every kind of input, each linked by both routes. LTOIR-only
/// kinds cannot serve the PTX route (nvJitLink drops LTOIR definitions
/// only PTX references), which admission says (E0107).
#[test]
fn every_kind_of_library_links_by_both_routes() {
    let dir = scratch("ffi", "kinds");
    for f in ["helpers.cu", "leaf.cu"] {
        std::fs::copy(root().join("tests/ffi/lib").join(f), dir.join(f)).unwrap();
    }
    let nvcc = |args: &[&str]| {
        let bin = tool("nvcc");
        let path = format!(
            "{}:{}",
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let o = Command::new(&bin)
            .current_dir(&dir)
            .env("PATH", path)
            .arg("-arch=sm_90")
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "nvcc {args:?}: {}", text(&o));
    };
    // (kind, file suffix, nvcc flags, holds LTOIR (inlined on the LTO
    // route), holds only LTOIR (no use to the PTX route)). nvcc's `-dc
    // -dlto` object holds PTX beside the LTOIR, so both routes can use it.
    let kinds: [(&str, &str, &[&str], bool, bool); 7] = [
        ("ptx", "ptx", &["-rdc=true", "-ptx"], false, false),
        ("cubin", "cubin", &["-rdc=true", "-cubin"], false, false),
        ("fatbin", "fatbin", &["-rdc=true", "-fatbin"], false, false),
        ("object", "o", &["-dc"], false, false),
        ("ltoir", "ltoir", &[], true, true),
        ("lto object", "lto.o", &["-dc", "-dlto"], true, false),
        ("library", "a", &[], false, false),
    ];
    let case = "tests/ffi/03_across_libraries.rs";
    let mut checked = 0;
    for (kind, ext, flags, ltoir, ltoir_only) in kinds {
        let mut libs = Vec::new();
        for stem in ["helpers", "leaf"] {
            let out = dir.join(format!("{stem}.{ext}"));
            if kind == "library" {
                nvcc(&["-dc", &format!("{stem}.cu"), "-o", &format!("{stem}.a.o")]);
                let o = Command::new("ar")
                    .current_dir(&dir)
                    .arg("rcs")
                    .arg(&out)
                    .arg(format!("{stem}.a.o"))
                    .output()
                    .unwrap();
                assert!(o.status.success());
            } else if kind == "ltoir" {
                // A bare LTOIR file: NVRTC's output.
                let source = std::fs::read_to_string(dir.join(format!("{stem}.cu"))).unwrap();
                let mut options = backend_nvptx::nvrtc::NvrtcOptions::new(
                    backend_nvptx::Arch::SM_90,
                    backend_nvptx::nvrtc::NvrtcTarget::Ltoir,
                );
                options.relocatable = true;
                let bytes = backend_nvptx::nvrtc::compile(stem, &source, &options)
                    .unwrap_or_else(|e| panic!("NVRTC {stem}: {e}"))
                    .bytes;
                std::fs::write(&out, bytes).unwrap();
            } else {
                let mut a: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
                a.extend([format!("{stem}.cu"), "-o".into(), out.display().to_string()]);
                let a: Vec<&str> = a.iter().map(String::as_str).collect();
                nvcc(&a);
            }
            libs.push(out.display().to_string());
        }
        for (route, flags) in [("lto", &[][..]), ("ptx", &["--no-lto"][..])] {
            let out = dir.join(format!("out-{ext}-{route}"));
            let out_s = out.display().to_string();
            let mut args = vec!["build", case, "-o", out_s.as_str()];
            args.extend(flags);
            args.extend(link_args(&libs));
            let o = driver(&args);
            if ltoir_only && route == "ptx" {
                assert_eq!(o.status.code(), Some(1), "{kind} [{route}]: {}", text(&o));
                assert!(
                    text(&o).contains("defines only as LTOIR"),
                    "{kind} [{route}]: {}",
                    text(&o)
                );
            } else {
                assert!(o.status.success(), "{kind} [{route}]: {}", text(&o));
                let call = has_call(&out.join("callbacks.cubin"));
                // Only LTOIR is inlined into the LTO route's kernel.
                assert_eq!(call, !(ltoir && route == "lto"), "{kind} [{route}]");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 14);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The example (examples/ffi): three callbacks calling helpers of mix.cu,
/// built by both routes; the LTO route inlines every helper.
#[test]
fn the_ffi_example_builds_by_both_routes() {
    let dir = scratch("ffi", "example");
    for (route, flags) in [("lto", &[][..]), ("ptx", &["--no-lto"][..])] {
        let out = dir.join(route);
        let out_s = out.display().to_string();
        let mut args = vec![
            "build",
            "examples/ffi/ffi.rs",
            "--link",
            "examples/ffi/mix.cu",
            "-o",
            out_s.as_str(),
        ];
        args.extend(flags);
        let o = driver(&args);
        assert!(o.status.success(), "{route}: {}", text(&o));
        assert!(
            text(&o).contains("3 admitted, 0 rejected"),
            "{route}: {}",
            text(&o)
        );
        assert_eq!(
            has_call(&out.join("callbacks.cubin")),
            route == "ptx",
            "{route}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
