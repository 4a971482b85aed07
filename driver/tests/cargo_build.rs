//! `driver cargo build` on the example workspace (examples/gpu-workspace: a
//! library with callbacks, a binary with its own, a cdylib), in the dev
//! profile and with `lto = "fat"`, `lto = "thin"` and `codegen-units = 1`:
//! every binary carries every callback it can call, a rebuild with no change
//! does no work, the binary refuses clearly without a GPU, and a rejected
//! callback fails the build with exit 1.

mod common;

use common::root;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    common::scratch("cargo", name)
}

fn driver(args: &[&str], target: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_driver"))
        .args(args)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTC_WRAPPER")
        .current_dir(root())
        .output()
        .expect("driver runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `driver inspect` of a built program, hashes and fingerprints replaced.
fn inspect(path: &Path, target: &Path) -> String {
    let o = driver(&["inspect", path.to_str().unwrap()], target);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.lines()
        .map(|l| {
            let mut l = l.replace(target.to_str().unwrap(), "TARGET");
            if let Some(at) = l.find("(rmir_artifacts, ") {
                let start = at + "(rmir_artifacts, ".len();
                let digits = l[start..].chars().take_while(char::is_ascii_digit).count();
                l.replace_range(start..start + digits, "N");
            }
            let mut words: Vec<String> = l.split(' ').map(str::to_string).collect();
            for w in words.iter_mut() {
                // `app-0fbfca46b076871d`, a 16-hex fingerprint, byte counts.
                if let Some((stem, hash)) = w.rsplit_once('-') {
                    if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) {
                        *w = format!("{stem}-HASH");
                    }
                }
                if w.len() == 16 && w.chars().all(|c| c.is_ascii_hexdigit()) {
                    *w = "FINGERPRINT".into();
                }
                if w.trim_start_matches('(')
                    .chars()
                    .all(|c| c.is_ascii_digit())
                    && w.starts_with('(')
                {
                    *w = "(N".into();
                }
            }
            words.join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const WORKSPACE: &str = "examples/gpu-workspace/Cargo.toml";

/// The manifest of a one-crate package `name` depending on `native` with
/// the `gpu` feature, `extra` appended.
fn package_manifest(name: &str, extra: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [workspace]\n\n[dependencies]\nnative = {{ path = {:?}, features = [\"gpu\"] }}\n\n{extra}",
        root().join("native").display().to_string()
    )
}

/// A scratch folder holding the package `name` (its `src/` still empty),
/// with the example workspace's lock, which holds every package it needs:
/// no network.
fn scratch_package(folder: &str, name: &str) -> PathBuf {
    let dir = scratch(folder);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), package_manifest(name, "")).unwrap();
    std::fs::copy(
        root().join("examples/gpu-workspace/Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
    dir
}

/// `driver cargo build --offline` of the package in `dir`, into `dir/target`.
fn build_package(dir: &Path) -> Output {
    let manifest = dir.join("Cargo.toml");
    driver(
        &[
            "cargo",
            "build",
            "--offline",
            "--manifest-path",
            manifest.to_str().unwrap(),
        ],
        &dir.join("target"),
    )
}

#[test]
fn the_example_workspace_builds_runs_and_rebuilds_nothing() {
    let target = scratch("example");
    let build = |extra: &[&str]| {
        let mut args = vec!["cargo", "build", "--manifest-path", WORKSPACE, "--locked"];
        args.extend_from_slice(extra);
        driver(&args, &target)
    };
    let o = build(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let app = target.join("debug/app");
    let listing = inspect(&app, &target);
    insta::assert_snapshot!("app_dev", listing);
    // Both crates' callbacks, each call site with its environment in
    // rustc's layout.
    assert!(listing.contains("build app-HASH (bin)"), "{listing}");
    assert!(listing.contains("build sums-HASH (lib)"), "{listing}");
    assert!(
        listing.contains("d: f64 at 0, f: i64 at 8, c: u32 at 16, b: u16 at 20, g: u16 at 22, a: u8 at 24, e: i8 at 25"),
        "{listing}"
    );
    let ffi = inspect(&target.join("debug/libsumsffi.so"), &target);
    assert!(ffi.contains("build sums-HASH (lib)"), "{ffi}");

    // No change: cargo finds everything fresh and runs no compiler at all.
    let before = std::fs::metadata(&app).unwrap().modified().unwrap();
    let o = build(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("Compiling"), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&app).unwrap().modified().unwrap(), before);

    // Without a GPU (CI, this machine): a clear error, exit 1.
    if !Path::new("/dev/nvidia0").exists() {
        let o = Command::new(&app).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(e.starts_with("error: cannot use the GPU: no CUDA"), "{e}");
    }

    // The profiles with LTO and one codegen unit: the records survive.
    for profile in ["fat", "thin", "cgu1"] {
        let o = build(&["--profile", profile]);
        assert!(o.status.success(), "{profile}: {}", stderr(&o));
        for file in ["app", "libsumsffi.so"] {
            let l = inspect(&target.join(profile).join(file), &target);
            assert!(l.contains("build sums-HASH (lib)"), "{profile} {file}: {l}");
        }
        let l = inspect(&target.join(profile).join("app"), &target);
        let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
        assert_eq!(
            body(&l),
            body(&listing),
            "{profile}: the same callbacks as the dev build"
        );
    }
    let _ = std::fs::remove_dir_all(&target);
}

#[test]
fn a_rejected_callback_fails_the_cargo_build() {
    let dir = scratch_package("rejected", "borrows");
    // The callback sits in a module file: its diagnostic shows that file.
    std::fs::write(dir.join("src/lib.rs"), "pub mod keyed;\n").unwrap();
    std::fs::write(
        dir.join("src/keyed.rs"),
        "use native::gpu::{Error, Gpu};\n\n\
         pub fn keyed(gpu: &Gpu, data: &[i32], k: i32) -> Result<i32, Error> {\n    \
         gpu.reduce(data, 0, |a, b| a.wrapping_add(b).wrapping_add(k))\n}\n",
    )
    .unwrap();
    let o = build_package(&dir);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("error[E0101]: callback captures `k` by reference"),
        "{e}"
    );
    assert!(e.contains("--> src/keyed.rs:4:"), "{e}");
    assert!(
        e.contains("gpu.reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k))"),
        "the suggestion is shown in the module file: {e}"
    );
    assert!(e.contains("help: add `move` before the closure"), "{e}");
    assert!(e.contains("error: rmir: crate `borrows`"), "{e}");
    assert!(e.contains("1 rejected"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Callbacks as users write them, not only inline at the call: a closure
/// bound by `let`, one returned by an `impl Fn` factory, and closures
/// handed to a helper's `impl Fn` parameter (which rustc inlines, so the
/// call that registers them is the helper's). Each must carry its kernel at
/// the call site `#[track_caller]` reports; two closures the program could
/// not tell apart at one call site fail the build with a located error.
#[test]
fn closures_bound_by_let_made_by_factories_or_handed_to_helpers_find_their_call() {
    let dir = scratch_package("closure-shapes", "shapes");
    let main = |second_helper_closure: &str| {
        format!(
            "use native::gpu::{{Error, Gpu}};\n\
             fn helper(gpu: &Gpu, data: &[i32], op: impl Fn(i32, i32) -> i32) -> Result<i32, Error> {{\n\
             \x20   gpu.reduce(data, i32::MIN, op)\n\
             }}\n\
             fn factory(cap: i32) -> impl Fn(i32, i32) -> i32 {{\n\
             \x20   move |a, b| a.max(b).min(cap)\n\
             }}\n\
             fn main() -> Result<(), Error> {{\n\
             \x20   let gpu = Gpu::open(0)?;\n\
             \x20   let data: Vec<i32> = (0..1000).collect();\n\
             \x20   let cap = std::env::args().count() as i32 * 500;\n\
             \x20   let r = gpu.reduce(&data, i32::MIN, |a, b| a.max(b))?;\n\
             \x20   let op = move |a: i32, b: i32| a.max(b).min(cap);\n\
             \x20   let s = gpu.reduce(&data, i32::MIN, op)?;\n\
             \x20   let t = gpu.reduce(&data, i32::MIN, factory(cap))?;\n\
             \x20   let u = helper(&gpu, &data, move |a, b| a.max(b).min(cap))?;\n\
             \x20   let v = helper(&gpu, &data, {second_helper_closure})?;\n\
             \x20   println!(\"{{r}} {{s}} {{t}} {{u}} {{v}}\");\n\
             \x20   Ok(())\n\
             }}\n"
        )
    };
    std::fs::write(dir.join("src/main.rs"), main("|a, b| a.max(b)")).unwrap();
    let target = dir.join("target");
    let o = build_package(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let listing = inspect(&target.join("debug/shapes"), &target);
    let sites: Vec<&str> = listing
        .lines()
        .filter_map(|l| {
            l.split_once("called at ")
                .map(|(_, r)| r.split(',').next().unwrap())
        })
        .collect();
    // The inline closure, the `let`-bound one, the factory's, and the two
    // handed to `helper` at the helper's own call.
    assert_eq!(
        sites,
        [
            "src/main.rs:12:17",
            "src/main.rs:14:17",
            "src/main.rs:15:17",
            "src/main.rs:3:9",
            "src/main.rs:3:9"
        ],
        "{listing}"
    );
    // Two closures with the same types and environment size at one site.
    std::fs::write(
        dir.join("src/main.rs"),
        main("move |a, b| a.min(b).max(cap)"),
    )
    .unwrap();
    let o = build_package(&dir);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("src/main.rs:3:9: the callbacks `main::{closure#2}` and `main::{closure#3}` both reach this call of `Gpu::reduce`"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A package whose callback calls a CUDA C++ helper it names in
/// `[package.metadata.rmir] link`: the binary builds and holds the
/// callback; editing the `.cu` file rebuilds the crate (the library is in
/// rustc's dep-info, which cargo tracks); without the metadata the build
/// fails with E0107, and a malformed list is a located error.
#[test]
fn package_metadata_links_device_libraries() {
    let dir = scratch_package("ffi-metadata", "mixer");
    std::fs::create_dir_all(dir.join("cuda")).unwrap();
    let manifest_with = |link: &str| package_manifest("mixer", link);
    std::fs::write(
        dir.join("Cargo.toml"),
        manifest_with("[package.metadata.rmir]\nlink = [\"cuda/mix.cu\"]\n"),
    )
    .unwrap();
    let mix =
        "extern \"C\" __device__ unsigned int ffi_mix(unsigned int x, unsigned int k) {\n    \
               return (x ^ k) * 0x9E3779B1u;\n}\n";
    std::fs::write(dir.join("cuda/mix.cu"), mix).unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "use native::gpu::Gpu;\n\n\
         unsafe extern \"C\" {\n    safe fn ffi_mix(x: u32, k: u32) -> u32;\n}\n\n\
         fn main() {\n    let data = vec![1, 2, 3];\n    let k: u32 = std::env::args().count() as u32;\n    \
         match Gpu::open(0).and_then(|gpu| gpu.reduce(&data, 0, move |a, b| {\n        \
         if ffi_mix(a as u32, k) >= ffi_mix(b as u32, k) { a } else { b }\n    })) {\n        \
         Ok(v) => println!(\"{v}\"),\n        Err(e) => { eprintln!(\"error: {e}\"); std::process::exit(1) }\n    }\n}\n",
    )
    .unwrap();
    let target = dir.join("target");
    let build = || build_package(&dir);
    let o = build();
    assert!(o.status.success(), "{}", stderr(&o));
    let listing = inspect(&target.join("debug/mixer"), &target);
    assert!(listing.contains("build mixer-HASH (bin)"), "{listing}");
    assert!(listing.contains("k: u32 at 0"), "{listing}");
    // Unchanged: nothing runs. The library edited: the crate is rebuilt.
    let o = build();
    assert!(!stderr(&o).contains("Compiling mixer"), "{}", stderr(&o));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(
        dir.join("cuda/mix.cu"),
        mix.replace("0x9E3779B1u", "0x85EBCA77u"),
    )
    .unwrap();
    let o = build();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("Compiling mixer"), "{}", stderr(&o));

    // Without the metadata the call has no definition (and the crate is
    // rebuilt: its Cargo.toml is in the dep-info too).
    std::fs::write(dir.join("Cargo.toml"), manifest_with("")).unwrap();
    let o = build();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("error[E0107]: callback calls `ffi_mix`, which no device library given to the link defines"),
        "{e}"
    );
    assert!(e.contains("[package.metadata.rmir] link"), "{e}");

    // A list that is not of paths.
    std::fs::write(
        dir.join("Cargo.toml"),
        manifest_with("[package.metadata.rmir]\nlink = \"cuda/mix.cu\"\n"),
    )
    .unwrap();
    let o = build();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`package.metadata.rmir.link` must be a list of paths"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
