//! The driver never destroys the user's files, survives odd paths and
//! working directories, bounds and cleans up its rustc children, and never
//! panics on a closed pipe. Runs the real binary.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const CASE: &str = "// one capture\npub fn entry(data: &[i32], k: i32) -> i32 {\n    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k))\n}\n";

fn driver() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_driver"));
    // These tests watch rustc's runs: the build cache must not skip them.
    c.env_remove("RMIR_RUSTC_TIMEOUT")
        .env_remove("RUSTC")
        .env("RMIR_CACHE", "off");
    c
}

fn run(c: &mut Command) -> Output {
    c.output().expect("driver runs")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A fresh folder of this test, under the system's temporary folder.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rmir-files-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn real_rustc() -> String {
    let o = Command::new("rustup").args(["which", "rustc"]).output();
    match o {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => "rustc".to_string(),
    }
}

/// A `rustc` that answers `-vV` (and any run whose arguments do not contain
/// `slow_when`) with the real compiler, and otherwise records its PID in
/// `pid_file` and sleeps.
fn fake_rustc(dir: &Path, slow_when: &str) -> PathBuf {
    let path = dir.join("slow-rustc");
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n  *-vV*) exec {real} \"$@\" ;;\n  *{slow_when}*) echo $$ >> {pids}; exec sleep 60 ;;\n  *) exec {real} \"$@\" ;;\nesac\n",
        real = real_rustc(),
        pids = dir.join("pids").display()
    );
    std::fs::write(&path, script).unwrap();
    Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    path
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "waited too long for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: &str) -> bool {
    // A zombie has exited: it only waits for its parent to read its status.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

fn our_scratch(tmp: &Path) -> Vec<String> {
    names(tmp)
        .into_iter()
        .filter(|n| n.starts_with("rmir-bridge-") || n.starts_with("rmir-hostref-"))
        .collect()
}

// ---- 3. Never destroy the user's files ----

#[test]
fn build_refuses_a_folder_that_is_not_a_build_output() {
    let dir = scratch("foreign");
    let proj = dir.join("proj");
    std::fs::create_dir(&proj).unwrap();
    std::fs::write(proj.join("w.rs"), CASE).unwrap();
    std::fs::write(proj.join("notes.txt"), "mine\n").unwrap();
    let o = run(driver()
        .args(["build", "proj/w.rs", "-o", "proj"])
        .current_dir(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("proj exists and it is not the output of a build")
            && err.contains("left untouched"),
        "{err}"
    );
    assert_eq!(names(&proj), ["notes.txt", "w.rs"]);
    assert_eq!(std::fs::read_to_string(proj.join("w.rs")).unwrap(), CASE);
    assert_eq!(names(&dir), ["proj"], "no temporary left beside it");

    // A build output with a file of the user's in it is not replaced either.
    let o = run(driver()
        .args(["build", "proj/w.rs", "-o", "out"])
        .current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(dir.join("out/notes.txt"), "mine\n").unwrap();
    let o = run(driver()
        .args(["build", "proj/w.rs", "-o", "out"])
        .current_dir(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds files a build did not write: notes.txt"),
        "{}",
        text(&o)
    );
    assert!(dir.join("out/notes.txt").exists());

    // A file where the folder should go is not replaced.
    let o = run(driver()
        .args(["build", "proj/w.rs", "-o", "proj/notes.txt"])
        .current_dir(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(proj.join("notes.txt")).unwrap(),
        "mine\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn build_replaces_its_own_earlier_output_and_fills_an_empty_folder() {
    let dir = scratch("own");
    std::fs::write(dir.join("w.rs"), CASE).unwrap();
    std::fs::create_dir(dir.join("out")).unwrap();
    let first = run(driver()
        .args(["build", "w.rs", "--emit", "cu", "-o", "out"])
        .current_dir(&dir));
    assert!(first.status.success(), "{}", text(&first));
    assert_eq!(
        names(&dir.join("out")),
        ["callbacks.cubin", "manifest.json", "provider.cu"]
    );
    let second = run(driver()
        .args(["build", "w.rs", "-o", "out"])
        .current_dir(&dir));
    assert!(second.status.success(), "{}", text(&second));
    // Replaced, not merged: the `--emit cu` file of the first build is gone.
    assert_eq!(
        names(&dir.join("out")),
        ["callbacks.cubin", "manifest.json"]
    );
    assert_eq!(names(&dir), ["out", "w.rs"], "no temporary left beside it");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn temporaries_of_a_killed_run_are_removed_by_the_next_write_beside_them() {
    let dir = scratch("staletemp");
    std::fs::write(dir.join("w.rs"), CASE).unwrap();
    // PIDs above the kernel's limit (2^22) never run.
    std::fs::write(dir.join(".rmir-4999999-0.tmp"), "half").unwrap();
    std::fs::create_dir(dir.join(".rmir-4999999-1.tmp")).unwrap();
    let live = format!(".rmir-{}-0.tmp", std::process::id());
    std::fs::write(dir.join(&live), "in use").unwrap();
    let o = run(driver().args(["import", "w.rs"]).current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(names(&dir), [live.as_str(), "w.pmir.json", "w.rs"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn output_onto_a_fifo_is_written_through() {
    let dir = scratch("fifo");
    std::fs::write(dir.join("w.rs"), CASE).unwrap();
    let fifo = dir.join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = run(driver()
        .args(["import", "w.rs", "-o", "pipe"])
        .current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    let got = reader.join().unwrap();
    assert!(got.contains("\"format\": \"pmir/1\""), "{got}");
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "still a FIFO");
    assert_eq!(names(&dir), ["pipe", "w.rs"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn output_onto_a_character_device_is_written_through() {
    let dir = scratch("devnull");
    std::fs::write(dir.join("w.rs"), CASE).unwrap();
    let o = run(driver()
        .args(["import", "w.rs", "-o", "/dev/null"])
        .current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    let kind = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(kind.is_char_device(), "/dev/null is still a device");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn output_onto_a_symlink_writes_its_target() {
    let dir = scratch("symlink");
    std::fs::write(dir.join("w.rs"), CASE).unwrap();
    std::fs::create_dir(dir.join("real")).unwrap();
    std::fs::write(dir.join("real/doc.json"), "old").unwrap();
    std::os::unix::fs::symlink("real/doc.json", dir.join("link.json")).unwrap();
    let o = run(driver()
        .args(["import", "w.rs", "-o", "link.json"])
        .current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    let link = std::fs::symlink_metadata(dir.join("link.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link stays a link");
    let got = std::fs::read_to_string(dir.join("real/doc.json")).unwrap();
    assert!(got.contains("\"format\": \"pmir/1\""), "{got}");
    assert_eq!(names(&dir.join("real")), ["doc.json"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_250_character_output_name_works() {
    let dir = scratch("longname");
    std::fs::write(dir.join("w.rs"), CASE).unwrap();
    let name = format!("{}.json", "n".repeat(245));
    assert_eq!(name.len(), 250);
    let o = run(driver()
        .args(["import", "w.rs", "-o", &name])
        .current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    assert!(dir.join(&name).is_file());
    // In a folder that does not exist yet: it is created.
    let folder = format!("new/{}", "f".repeat(250));
    let o = run(driver()
        .args(["build", "w.rs", "-o", &folder])
        .current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    assert!(dir.join(&folder).join("manifest.json").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- 5. Paths, working directories, subprocesses, signals ----

#[test]
fn a_non_utf8_path_is_a_clear_error_and_a_non_utf8_working_directory_works() {
    let dir = scratch("nonutf8");
    let cafe = dir.join(OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir(&cafe).unwrap();
    std::fs::write(cafe.join("w.rs"), CASE).unwrap();
    // The path itself is not UTF-8: rustc cannot take it.
    let o = run(driver()
        .arg("import")
        .arg(OsStr::from_bytes(b"caf\xe9/w.rs"))
        .current_dir(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the path is not valid UTF-8"),
        "{}",
        text(&o)
    );
    // Inside that folder, the relative path is fine.
    let o = run(driver()
        .args(["import", "w.rs", "-o", "w.pmir.json"])
        .current_dir(&cafe));
    assert!(o.status.success(), "{}", text(&o));
    let doc = std::fs::read_to_string(cafe.join("w.pmir.json")).unwrap();
    assert!(
        doc.contains("{closure@w.rs:3:29: 3:40}"),
        "paths as the user gave them: {doc}"
    );
    // `opt` reads a `.mlir` file by a non-UTF-8 path.
    let o = run(driver()
        .args(["opt", "w.rs", "-o", "w.mlir"])
        .current_dir(&cafe));
    assert!(o.status.success(), "{}", text(&o));
    let o = run(driver()
        .arg("opt")
        .arg(OsStr::from_bytes(b"caf\xe9/w.mlir"))
        .current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("rmir."),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_working_directory_deeper_than_path_max_works() {
    let dir = scratch("deep");
    // 20 levels of 250 characters: 5,000 bytes, past PATH_MAX (4,096).
    let level = "d".repeat(250);
    let script = format!(
        "set -e\nfor i in $(seq 20); do mkdir {level}; cd -P {level}; done\nprintf '%s' \"$CASE\" > w.rs\nexec \"$DRIVER\" import w.rs -o w.pmir.json\n"
    );
    let o = Command::new("timeout")
        .args(["120", "sh", "-c", &script])
        .env("CASE", CASE)
        .env("DRIVER", env!("CARGO_BIN_EXE_driver"))
        .env("RMIR_RUSTC_TIMEOUT", "60")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let _ = Command::new("rm").arg("-rf").arg(&dir).status();
}

#[test]
fn rustc_past_its_time_limit_is_stopped_with_a_clear_error() {
    let dir = scratch("timeout");
    std::fs::write(dir.join("w.rs"), CASE).unwrap();
    let rustc = fake_rustc(&dir, "native");
    let start = Instant::now();
    let o = run(driver()
        .args(["import", "w.rs"])
        .env("RUSTC", &rustc)
        .env("RMIR_RUSTC_TIMEOUT", "1")
        .current_dir(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(start.elapsed() < Duration::from_secs(30));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("rustc did not finish building the provider API crate within 1 s and was stopped (set RMIR_RUSTC_TIMEOUT to allow more seconds)"),
        "{err}"
    );
    let pid = std::fs::read_to_string(dir.join("pids")).unwrap();
    assert!(!alive(pid.trim()), "the slow rustc was killed");
    // A limit that is not a number is refused.
    let o = run(driver()
        .args(["import", "w.rs"])
        .env("RMIR_RUSTC_TIMEOUT", "soon")
        .current_dir(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("RMIR_RUSTC_TIMEOUT=`soon`"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_host_reference_has_a_time_limit_too() {
    let dir = scratch("hosttimeout");
    std::fs::write(dir.join("w.rs"), CASE).unwrap();
    // Only the host reference builds a crate named `native_ref`.
    let rustc = fake_rustc(&dir, "native_ref");
    let o = run(driver()
        .args(["build", "w.rs", "--bundle", "--max-size", "33", "-o", "out"])
        .env("RUSTC", &rustc)
        .env("RMIR_RUSTC_TIMEOUT", "2")
        .current_dir(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "the host reference did not finish building the provider API crate within 2 s"
        ),
        "{err}"
    );
    assert!(!dir.join("out").exists(), "nothing written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigint_and_sigterm_end_children_and_remove_scratch() {
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let dir = scratch(&format!("sig{signal}"));
        let tmp = dir.join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        std::fs::write(dir.join("w.rs"), CASE).unwrap();
        let rustc = fake_rustc(&dir, "native");
        let mut child = driver()
            .args(["import", "w.rs"])
            .env("RUSTC", &rustc)
            .env("TMPDIR", &tmp)
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for("the slow rustc", || dir.join("pids").exists());
        assert_eq!(
            our_scratch(&tmp).len(),
            1,
            "a scratch folder while rustc runs"
        );
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "signal {signal}");
        assert_eq!(our_scratch(&tmp), Vec::<String>::new(), "scratch removed");
        let pid = std::fs::read_to_string(dir.join("pids")).unwrap();
        wait_for("the slow rustc to end", || !alive(pid.trim()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn scratch_of_a_killed_run_is_removed_by_the_next_run() {
    let dir = scratch("sigkill");
    let tmp = dir.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(dir.join("w.rs"), CASE).unwrap();
    let rustc = fake_rustc(&dir, "native");
    let mut child = driver()
        .args(["import", "w.rs"])
        .env("RUSTC", &rustc)
        .env("TMPDIR", &tmp)
        .current_dir(&dir)
        .spawn()
        .unwrap();
    wait_for("the slow rustc", || dir.join("pids").exists());
    child.kill().unwrap();
    child.wait().unwrap();
    let left = our_scratch(&tmp);
    assert_eq!(left.len(), 1, "SIGKILL leaves the scratch: {left:?}");
    // Scratch of a live process, and folders not ours, are kept.
    let live = format!("rmir-bridge-{}-1-0", std::process::id());
    std::fs::create_dir(tmp.join(&live)).unwrap();
    std::fs::create_dir(tmp.join("rmir-bridge-notes")).unwrap();
    let o = run(driver().args(["explain", "E0101"]).env("TMPDIR", &tmp));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(names(&tmp), [live.as_str(), "rmir-bridge-notes"]);
    let pid = std::fs::read_to_string(dir.join("pids")).unwrap();
    // SAFETY: kill(2) on the orphaned `sleep` our fake rustc became.
    unsafe { libc::kill(pid.trim().parse().unwrap(), libc::SIGKILL) };
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the driver with standard output (or error) already closed at the
/// far end, so its first write meets a broken pipe.
fn with_closed_pipe(args: &[&str], stderr: bool) -> std::process::ExitStatus {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut c = driver();
    c.args(args);
    let o = if stderr {
        c.stdout(Stdio::null()).stderr(writer).output().unwrap()
    } else {
        c.stdout(writer).stderr(Stdio::piped()).output().unwrap()
    };
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("panicked"),
        "{}",
        text(&o)
    );
    o.status
}

#[test]
fn a_closed_pipe_ends_the_driver_quietly() {
    // Like rustc and other Unix tools: SIGPIPE, never a panic (exit 101).
    let out = with_closed_pipe(&["explain", "E0101"], false);
    assert_eq!(out.signal(), Some(libc::SIGPIPE), "{out:?}");
    let err = with_closed_pipe(&["explain", "E9999"], true);
    assert_eq!(err.signal(), Some(libc::SIGPIPE), "{err:?}");
}

// ---- 5 and 6. `--bundle`: clear refusals, nothing left out ----

#[test]
fn bundle_needs_the_rust_source_and_some_cases() {
    let dir = scratch("bundleargs");
    std::fs::write(dir.join("w.rs"), CASE).unwrap();
    let o = run(driver().args(["import", "w.rs"]).current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    let o = run(driver()
        .args(["build", "w.pmir.json", "--bundle", "-o", "out"])
        .current_dir(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(
            "w.pmir.json: --bundle builds the host reference from the Rust source, so it needs the original `.rs` file"
        ),
        "{}",
        text(&o)
    );
    let o = run(driver()
        .args(["build", "w.rs", "--bundle", "--max-size", "0", "-o", "out"])
        .current_dir(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--max-size 0 leaves no case in the bundle"),
        "{}",
        text(&o)
    );
    assert!(!dir.join("out").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tuple_and_struct_arguments_are_generated() {
    let dir = scratch("tuples");
    let source = "pub struct Bias { pub x: i32, pub y: u8 }\n\
pub struct Pair(pub i16, pub i16);\n\
pub fn tuple(data: &[i32], pair: (i32, i32)) -> i32 {\n    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(pair.0 ^ pair.1))\n}\n\
pub fn named(data: &[i32], bias: Bias) -> i32 {\n    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(bias.x + bias.y as i32))\n}\n\
pub fn unnamed(data: &[i32], p: Pair) -> i32 {\n    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(p.0 as i32 - p.1 as i32))\n}\n";
    std::fs::write(dir.join("t.rs"), source).unwrap();
    let o = run(driver()
        .args([
            "build",
            "t.rs",
            "--bundle",
            "--max-size",
            "1025",
            "-o",
            "out",
        ])
        .current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    let bundle: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("out/bundle.json")).unwrap()).unwrap();
    let runs = bundle["registrations"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "{bundle:#}");
    let mut captures = Vec::new();
    for r in runs {
        // Sizes up to 1025: seven at offset 0 and two misaligned.
        assert_eq!(r["cases"].as_array().unwrap().len(), 9, "{r:#}");
        for c in r["captures"].as_array().unwrap() {
            assert!(c["value"].is_number(), "{c}");
            captures.push(c["name"].as_str().unwrap().to_string());
        }
    }
    captures.sort();
    assert_eq!(
        captures,
        ["bias.x", "bias.y", "p.0", "p.1", "pair.0", "pair.1"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_registration_the_host_cannot_check_fails_the_bundle() {
    let dir = scratch("leftout");
    let source = "pub fn two(data: &[i32], more: &[i32], k: i32) -> i32 {\n    native::reduce(data, more.len() as i32, move |a, b| a.wrapping_add(b).wrapping_add(k))\n}\n";
    std::fs::write(dir.join("l.rs"), source).unwrap();
    let o = run(driver()
        .args(["build", "l.rs", "--bundle", "-o", "out"])
        .current_dir(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--bundle: 1 of 1 callbacks cannot be checked against the host reference, so no bundle is written")
            && err.contains("registration #0: caller `two` must take exactly one `&[i32]`"),
        "{err}"
    );
    assert!(!dir.join("out").exists());
    // Without --bundle the same file builds.
    let o = run(driver()
        .args(["build", "l.rs", "-o", "out"])
        .current_dir(&dir));
    assert!(o.status.success(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
