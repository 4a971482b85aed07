//! Admitted means it builds: every case file in `tests/` (admission cases,
//! the corpus, the verdict cases) and `examples/` is built by `driver build`
//! at opt-level 0 and 3, with overflow checks on and off, by the LTOIR and
//! the PTX route, and with `-g` (both routes) and `--lineinfo`, with
//! `--keep-going`. A build either writes its cubin and
//! manifest (exit 0, or exit 1 when admission rejected some registrations)
//! or fails only because admission rejected every registration; any other
//! failure is an admitted callback that did not build, and fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

mod common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn cases() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [
        "tests/admission",
        "tests/corpus",
        "tests/verdicts",
        "examples",
    ] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

const CONFIGS: [(&str, &[&str]); 11] = [
    ("O0 checks lto -g", &["--overflow-checks", "on", "-g"]),
    (
        "O0 checks ptx -g",
        &["--overflow-checks", "on", "--no-lto", "-g"],
    ),
    (
        "O3 checks lto lineinfo",
        &["-O", "--overflow-checks", "on", "--lineinfo"],
    ),
    ("O0 checks lto", &["--overflow-checks", "on"]),
    ("O0 nochecks lto", &["--overflow-checks", "off"]),
    ("O3 checks lto", &["-O", "--overflow-checks", "on"]),
    ("O3 nochecks lto", &["-O", "--overflow-checks", "off"]),
    ("O0 checks ptx", &["--overflow-checks", "on", "--no-lto"]),
    ("O0 nochecks ptx", &["--overflow-checks", "off", "--no-lto"]),
    (
        "O3 checks ptx",
        &["-O", "--overflow-checks", "on", "--no-lto"],
    ),
    (
        "O3 nochecks ptx",
        &["-O", "--overflow-checks", "off", "--no-lto"],
    ),
];

#[test]
fn every_admitted_case_builds_by_both_routes() {
    let cases = cases();
    assert!(cases.len() >= 100, "found only {} case files", cases.len());
    let jobs: Vec<(PathBuf, &str, &[&str])> = cases
        .iter()
        .flat_map(|c| CONFIGS.iter().map(move |(n, a)| (c.clone(), *n, *a)))
        .collect();
    let failures = Mutex::new(Vec::new());
    let built = Mutex::new(0usize);
    let scratch = std::env::temp_dir().join(format!("rmir-admitted-builds-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    common::on_two_workers(&jobs, |w, (case, name, args)| {
        let out = scratch.join(format!("w{w}"));
        let o = Command::new(env!("CARGO_BIN_EXE_driver"))
            .arg("build")
            .arg(case)
            .args(*args)
            .arg("--keep-going")
            .arg("-o")
            .arg(&out)
            .current_dir(root())
            .output()
            .expect("driver runs");
        let stderr = String::from_utf8_lossy(&o.stderr);
        let stdout = String::from_utf8_lossy(&o.stdout);
        let wrote =
            stderr.lines().any(|l| l.starts_with("wrote ")) && out.join("manifest.json").is_file();
        let ok = match o.status.code() {
            Some(0) => wrote,
            Some(1) => {
                // Every error is a coded rejection, or the line that ends
                // a build with rejections.
                let coded = stderr.lines().filter(|l| l.starts_with("error")).all(|l| {
                    l.starts_with("error[E")
                        || l.contains(" rejected of ")
                        || l.contains("no admitted registration to build")
                });
                coded && (wrote || stderr.contains("no admitted registration to build"))
            }
            _ => false,
        };
        if ok && wrote {
            *built.lock().unwrap() += 1;
        }
        if !ok {
            failures.lock().unwrap().push(format!(
                "{} [{name}]: exit {:?}\n{stdout}{stderr}",
                case.strip_prefix(root()).unwrap_or(case).display(),
                o.status.code()
            ));
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
    let failures = failures.into_inner().unwrap();
    let built = built.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} builds failed:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
    // Most cases admit something: a run that built little checked little.
    assert!(
        built * 2 > jobs.len(),
        "only {built} of {} builds wrote a cubin",
        jobs.len()
    );
}
