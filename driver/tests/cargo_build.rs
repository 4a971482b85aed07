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
    // Counted by cargo as rustc's errors are, with none of its "process
    // didn't exit successfully" lines.
    assert!(
        e.contains("error: could not compile `borrows` (lib) due to 1 previous error"),
        "{e}"
    );
    assert!(!e.contains("Caused by"), "{e}");
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

/// `cargo` itself, with the driver's environment removed.
fn plain_cargo(args: &[&str], target: &Path) -> Output {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RMIR_CARGO_WRAPPER")
        .current_dir(root())
        .output()
        .expect("cargo runs")
}

/// The first line of `driver inspect`: how many builds a program carries.
fn embedded(path: &Path, target: &Path) -> String {
    inspect(path, target)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// A plain `cargo build` and `driver cargo build`, in either order, never
/// take each other's binary for up to date: each keeps its own artifacts
/// (the driver's line in `rustc -vV` is part of cargo's fingerprints and
/// file names), and the program in `target/debug` is the one the last
/// command built, with nothing compiled again when switching back. A
/// rebuilt driver compiles the crate with callbacks again, and only it.
#[test]
fn plain_cargo_builds_and_driver_builds_never_leave_a_stale_binary() {
    let dir = scratch_package("stale", "stale");
    std::fs::write(
        dir.join("src/main.rs"),
        "use native::gpu::Gpu;

         fn main() {
    let data: Vec<u32> = (0..100).collect();
             let k = std::env::args().count() as u32;
             match Gpu::open(0).and_then(|gpu| gpu.reduce(&data, 0, move |a, b| a.max(b).min(k * 50))) {
                 Ok(v) => println!(\"{v}\"),
        Err(e) => {
            eprintln!(\"error: {e}\");
                     std::process::exit(1)
        }
    }
}
",
    )
    .unwrap();
    let target = dir.join("target");
    let manifest = dir.join("Cargo.toml");
    let manifest = manifest.to_str().unwrap();
    let cargo = || {
        plain_cargo(
            &["build", "--offline", "--manifest-path", manifest],
            &target,
        )
    };
    let app = target.join("debug/stale");
    let kernels = "program with 1 embedded build";
    let none = "program with 0 embedded builds";

    let o = cargo();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(embedded(&app, &target).contains(none));
    let o = build_package(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("Compiling stale"), "{}", stderr(&o));
    assert!(
        embedded(&app, &target).contains(kernels),
        "after driver cargo build"
    );
    // Back to plain cargo: its own binary again, nothing recompiled.
    let o = cargo();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("Compiling"), "{}", stderr(&o));
    assert!(embedded(&app, &target).contains(none));
    let o = build_package(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("Compiling"), "{}", stderr(&o));
    assert!(
        embedded(&app, &target).contains(kernels),
        "driver after plain cargo"
    );
    // Another provider tuning (`RMIR_TUNING`) makes other kernels: cargo
    // rebuilds the crate for it, and again when it is gone.
    let tuned = |tuning: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_driver"));
        c.args(["cargo", "build", "--offline", "--manifest-path", manifest])
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("RUSTC_WRAPPER")
            .current_dir(root());
        match tuning {
            Some(t) => c.env("RMIR_TUNING", t),
            None => c.env_remove("RMIR_TUNING"),
        };
        c.output().expect("driver runs")
    };
    for tuning in [Some("reduce.blocks_per_sm=4"), None] {
        let o = tuned(tuning);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("Compiling stale"),
            "{tuning:?}: {}",
            stderr(&o)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A workspace whose library and binary each register a reduce that is
/// neither associative nor commutative: `driver cargo build` prints both W0201 warnings as
/// cargo prints rustc's (counted per crate, passed on by
/// `--message-format=json`), with a summary line per crate; the driver's
/// `--deny-warnings` and cargo's `-D warnings` make them errors;
/// `cargo check` and `cargo clippy` admit and lint without building device
/// code.
#[test]
fn lint_warnings_reach_cargo_builds_checks_and_json_messages() {
    let dir = scratch("lint-workspace");
    for member in ["keyed/src", "app/src"] {
        std::fs::create_dir_all(dir.join(member)).unwrap();
    }
    std::fs::write(
        dir.join("Cargo.toml"),
        "[workspace]\nresolver = \"2\"\nmembers = [\"keyed\", \"app\"]\n",
    )
    .unwrap();
    std::fs::copy(
        root().join("examples/gpu-workspace/Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
    let native = root().join("native").display().to_string();
    std::fs::write(
        dir.join("keyed/Cargo.toml"),
        format!(
            "[package]\nname = \"keyed\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nnative = {{ path = {native:?}, features = [\"gpu\"] }}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("keyed/src/lib.rs"),
        "use native::gpu::{Error, Gpu};\n\n\
         pub fn keyed(gpu: &Gpu, data: &[u32], k: u32) -> Result<u32, Error> {\n    \
         gpu.reduce(data, 0, move |a, b| a.wrapping_sub(b) ^ k)\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("app/Cargo.toml"),
        format!(
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nnative = {{ path = {native:?}, features = [\"gpu\"] }}\n\
             keyed = {{ path = \"../keyed\" }}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("app/src/main.rs"),
        "use native::gpu::{Error, Gpu};\n\n\
         fn main() -> Result<(), Error> {\n    let gpu = Gpu::open(0)?;\n    \
         let data: Vec<i32> = (0..1000).collect();\n    \
         let (m, c) = (std::env::args().count() as i32, 3);\n    \
         let r = gpu.reduce(&data, i32::MIN, move |a, b| a.max((b & m) + c))?;\n    \
         let s = keyed::keyed(&gpu, &[1, 2, 3], 7)?;\n    println!(\"{r} {s}\");\n    Ok(())\n}\n",
    )
    .unwrap();
    let target = dir.join("target");
    let manifest = dir.join("Cargo.toml");
    let run = |args: &[&str], rustflags: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_driver"));
        c.arg("cargo")
            .args(args)
            .args(["--offline", "--manifest-path", manifest.to_str().unwrap()])
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("RUSTC_WRAPPER")
            .env_remove("RUSTFLAGS")
            .current_dir(root());
        if let Some(f) = rustflags {
            c.env("RUSTFLAGS", f);
        }
        c.output().expect("driver runs")
    };
    let warned = |e: &str| {
        assert!(
            e.contains("warning[W0201]: the operation of this `Gpu::reduce` is not associative"),
            "{e}"
        );
        assert!(e.contains("--> keyed/src/lib.rs:4:9"), "{e}");
        assert!(e.contains("--> app/src/main.rs:7:17"), "{e}");
        assert!(
            e.contains("warning: `keyed` (lib) generated 2 warnings"),
            "{e}"
        );
    };
    let o = run(&["build"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    warned(&e);
    assert!(
        e.contains("rmir keyed (lib): 1 callback admitted, 1 cubin, 2 warnings"),
        "{e}"
    );
    assert!(
        e.contains("rmir app (bin): 1 callback admitted, 1 cubin"),
        "{e}"
    );
    // The counterexample names the captured values that show it.
    assert!(e.contains(", with the captures k = "), "{e}");

    // JSON messages: our diagnostics are compiler messages, as rustc's.
    let o = run(&["build", "--message-format=json"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let w0201 = out
        .lines()
        .filter(|l| {
            l.contains("\"reason\":\"compiler-message\"") && l.contains("\"code\":\"W0201\"")
        })
        .count();
    assert_eq!(w0201, 4, "{out}");

    // Denied, by the driver's flag and by cargo's convention.
    for (args, rustflags, by) in [
        (&["build", "--deny-warnings"][..], None, "`--deny-warnings`"),
        (&["build"][..], Some("-D warnings"), "`-D warnings`"),
    ] {
        let o = run(args, rustflags);
        assert_eq!(o.status.code(), Some(1), "{by}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("error[W0201]"), "{by}: {e}");
        assert!(
            e.contains(&format!("= note: {by} makes this warning an error")),
            "{e}"
        );
        assert!(
            e.contains("error: could not compile `keyed` (lib) due to 2 previous errors"),
            "{e}"
        );
        assert!(!e.contains("Caused by"), "{e}");
    }

    // Checked: admitted and linted, no device code.
    for command in ["check", "clippy"] {
        let o = run(&[command], None);
        assert!(o.status.success(), "{command}: {}", stderr(&o));
        let e = stderr(&o);
        warned(&e);
        assert!(
            e.contains("rmir app (bin): 1 callback admitted, 2 warnings"),
            "{command}: {e}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `driver cargo run` and `driver cargo test` build as `driver cargo build`
/// does, then run: a `#[test]` calling the GPU carries its callbacks, and
/// without a GPU fails with a clear message (the program's own status is
/// cargo's). A fn item of another crate passed as the callback is a
/// located error.
#[test]
fn cargo_run_and_test_carry_the_callbacks() {
    let dir = scratch_package("run-test", "runs");
    std::fs::write(
        dir.join("src/main.rs"),
        "use native::gpu::{Error, Gpu};\n\n\
         fn total(gpu: &Gpu, data: &[u64]) -> Result<u64, Error> {\n    \
         gpu.reduce(data, 0, |a, b| a.wrapping_add(b))\n}\n\n\
         fn main() -> Result<(), Error> {\n    let gpu = Gpu::open(0)?;\n    \
         println!(\"{}\", total(&gpu, &[1, 2, 3])?);\n    Ok(())\n}\n\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn totals_on_the_gpu() {\n        \
         let gpu = Gpu::open(0).expect(\"a GPU\");\n        \
         let data: Vec<u64> = (0..100).collect();\n        \
         assert_eq!(total(&gpu, &data).unwrap(), 4950);\n        \
         let m = gpu.reduce(&data, 0, |a, b| a.max(b)).unwrap();\n        \
         assert_eq!(m, 99);\n    }\n}\n",
    )
    .unwrap();
    let target = dir.join("target");
    let manifest = dir.join("Cargo.toml");
    let manifest = manifest.to_str().unwrap();
    let gpu = Path::new("/dev/nvidia0").exists();
    let o = driver(
        &["cargo", "run", "--offline", "--manifest-path", manifest],
        &target,
    );
    let e = stderr(&o);
    assert!(
        e.contains("rmir runs (bin): 1 callback admitted, 1 cubin"),
        "{e}"
    );
    if !gpu {
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains("NoDevice"), "{e}");
    }
    let o = driver(
        &["cargo", "test", "--offline", "--manifest-path", manifest],
        &target,
    );
    let e = stderr(&o);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        e.contains("rmir runs (test): 2 callbacks admitted, 2 cubins"),
        "{e}"
    );
    if gpu {
        assert!(o.status.success(), "{out}\n{e}");
    } else {
        assert_eq!(o.status.code(), Some(101), "{out}\n{e}");
        assert!(
            out.contains("test tests::totals_on_the_gpu ... FAILED"),
            "{out}"
        );
        assert!(out.contains("no CUDA driver"), "{out}");
    }
    // The test program carries both callbacks, at their call sites.
    let o = driver(
        &[
            "cargo",
            "test",
            "--no-run",
            "--offline",
            "--message-format=json",
            "--manifest-path",
            manifest,
        ],
        &target,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let exe = out
        .lines()
        .filter(|l| l.contains("\"test\":true"))
        .find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            v["executable"].as_str().map(PathBuf::from)
        })
        .unwrap_or_else(|| panic!("no test executable in {out}"));
    let listing = inspect(&exe, &target);
    // A cubin per callback: an edit relinks one kernel.
    assert!(
        listing.contains("(test): sm_90, 2 callbacks, 2 cubins"),
        "{listing}"
    );
    assert!(listing.contains("called at src/main.rs:4:9"), "{listing}");
    assert!(listing.contains("called at src/main.rs:22:21"), "{listing}");

    // Another crate's function as the callback: located, E0105.
    std::fs::write(
        dir.join("src/main.rs"),
        "use native::gpu::{Error, Gpu};\n\n\
         fn main() -> Result<(), Error> {\n    let gpu = Gpu::open(0)?;\n    \
         println!(\"{}\", gpu.reduce(&[1u32, 2, 3], 0, u32::midpoint)?);\n    Ok(())\n}\n",
    )
    .unwrap();
    let o = driver(
        &["cargo", "build", "--offline", "--manifest-path", manifest],
        &target,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("is a function of another crate: it has no body to compile"),
        "{e}"
    );
    assert!(e.contains("--> src/main.rs:5:24"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
