//! Differential testing of generated code, build half: random well-typed
//! callbacks (`tests/common/gen.rs`) are built by both routes, at opt-level
//! 0 and 3. Every build must write its cubin and manifest; a registration
//! may only be left out by an admission rejection with a code. Any other
//! failure is a bug: the failure names the seed, the configuration, and the
//! callbacks that fail alone, with their source.
//!
//! The GPU half (results against the rustc-built host reference, bit for
//! bit) is `scripts/gpu/random.sh` + `scripts/gpu/random-run.sh`.

mod common;

use common::gen;
use frontend::registry::{CoreKind, CORE_OPS};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Seeds of the CI run: 4 files of 50 callbacks, each built 4 ways.
const SEEDS: [u64; 4] = [1, 2, 3, 4];
const PER_FILE: usize = 50;

const CONFIGS: [(&str, &[&str]); 4] = [
    ("O0 lto", &[]),
    ("O3 lto", &["-O"]),
    ("O0 ptx", &["--no-lto"]),
    ("O3 ptx", &["-O", "--no-lto"]),
];

struct Built {
    admitted: usize,
    rejected: usize,
}

/// Builds `file`; `Ok` when the build wrote its artifacts and every error
/// printed is a coded admission rejection.
fn build(file: &Path, args: &[&str], checks: &str, out: &Path) -> Result<Built, String> {
    let o = Command::new(env!("CARGO_BIN_EXE_driver"))
        .arg("build")
        .arg(file)
        .args(args)
        .args(["--overflow-checks", checks, "--keep-going"])
        .arg("-o")
        .arg(out)
        .output()
        .expect("driver runs");
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    // A build with rejections ends with `error: N rejected of M
    // registrations` (exit 1) after writing the admitted ones.
    let uncoded: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            l.starts_with("error")
                && !l.starts_with("error[E")
                && !(l.starts_with("error: ") && l.contains(" rejected of "))
        })
        .collect();
    let summary = stderr
        .lines()
        .find(|l| l.starts_with("wrote "))
        .and_then(|l| {
            let tail = l.rsplit("); ").next()?;
            let mut n = tail.split(' ');
            let admitted = n.next()?.parse().ok()?;
            n.next();
            let rejected = n.next()?.parse().ok()?;
            Some(Built { admitted, rejected })
        });
    match (o.status.code(), summary) {
        (Some(0), Some(b))
            if b.rejected == 0 && uncoded.is_empty() && out.join("manifest.json").is_file() =>
        {
            Ok(b)
        }
        (Some(1), Some(b))
            if b.rejected > 0 && uncoded.is_empty() && out.join("manifest.json").is_file() =>
        {
            Ok(b)
        }
        (Some(1), _) if uncoded.is_empty() && stderr.contains("no admitted registration") => {
            Ok(Built {
                admitted: 0,
                rejected: 1,
            })
        }
        (code, _) => Err(format!("exit {code:?}\n{stderr}")),
    }
}

#[test]
fn random_callbacks_build_by_both_routes() {
    let scratch = std::env::temp_dir().join(format!("rmir-random-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut jobs: Vec<(u64, PathBuf, &str, &[&str])> = Vec::new();
    for seed in SEEDS {
        let path = scratch.join(format!("gen_{seed}.rs"));
        std::fs::write(&path, gen::file(seed, PER_FILE).0).unwrap();
        for (name, args) in CONFIGS {
            jobs.push((seed, path.clone(), name, args));
        }
    }
    let failures = Mutex::new(Vec::new());
    let counts = Mutex::new((0usize, 0usize));
    common::on_two_workers(&jobs, |w, (seed, file, name, args)| {
        let checks = if seed % 2 == 1 { "on" } else { "off" };
        let out = scratch.join(format!("w{w}"));
        match build(file, args, checks, &out) {
            Ok(b) => {
                let mut c = counts.lock().unwrap();
                c.0 += b.admitted;
                c.1 += b.rejected;
            }
            Err(why) => {
                let culprits = isolate(*seed, args, checks, &scratch.join(format!("i{w}")));
                failures.lock().unwrap().push(format!(
                    "seed {seed} [{name}, overflow checks {checks}]: {why}\n{culprits}"
                ));
            }
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
    let failures = failures.into_inner().unwrap();
    let (admitted, rejected) = counts.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} builds failed:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
    // Generated callbacks are meant to be admissible: a run that admitted
    // little built little. (At -O, MIR inlining exposes calls the table
    // lacks: `checked_pow`, `overflowing_div`, `copysignf32`.)
    let total = SEEDS.len() * PER_FILE * CONFIGS.len();
    assert_eq!(admitted + rejected, total, "counts do not add up");
    assert!(
        admitted * 10 >= total * 6,
        "only {admitted} of {total} generated callbacks were admitted"
    );
}

/// Builds each callback of `seed` alone with the failing configuration and
/// returns the source and error of those that fail.
fn isolate(seed: u64, args: &[&str], checks: &str, dir: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let mut report = String::new();
    for i in 0..PER_FILE {
        let cb = gen::callback(seed, i);
        let file = dir.join(format!("gen_{seed}_{i}.rs"));
        std::fs::write(&file, format!("{}{}", gen::header(seed), cb.source)).unwrap();
        if let Err(why) = build(&file, args, checks, &dir.join("out")) {
            report.push_str(&format!(
                "callback {i} of seed {seed} fails alone \
                 (`cargo run -p driver --example gen_callbacks -- {seed} --one {i}`):\n{}\n{why}\n",
                cb.source
            ));
        }
    }
    if report.is_empty() {
        report.push_str("no callback fails alone: the failure needs several callbacks");
    }
    report
}

/// The generator follows the capability table: every core method it can
/// call safely is drawn somewhere in the CI seeds.
#[test]
fn methods_in_table_are_generated() {
    let mut used = std::collections::BTreeSet::new();
    for seed in SEEDS {
        for c in gen::file(seed, PER_FILE).1 {
            used.extend(c.methods);
        }
    }
    let missing: Vec<&str> = CORE_OPS
        .iter()
        .filter(|e| e.kind == CoreKind::Method && !gen::UNDRAWN.contains(&e.name))
        .map(|e| e.name)
        .filter(|n| !used.contains(n))
        .collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

/// Enums as values and aggregates captured whole are drawn: every kind of
/// each somewhere in the CI seeds.
#[test]
fn enums_and_aggregates_are_generated() {
    let mut used = std::collections::BTreeMap::new();
    for seed in SEEDS {
        for c in gen::file(seed, PER_FILE).1 {
            for k in c.constructs {
                *used.entry(k).or_insert(0usize) += 1;
            }
        }
    }
    for kind in [
        "match cmp",
        "match total_cmp",
        "match partial_cmp",
        "if let Some",
        "own enum",
        "tuple capture",
        "struct capture",
    ] {
        assert!(
            used.get(kind).copied().unwrap_or(0) >= 5,
            "{kind} drawn too rarely: {used:?}"
        );
    }
}

/// Same seed, same file: failures can be reproduced from the seed alone,
/// and a callback alone is the same text as in its file.
#[test]
fn generation_is_reproducible() {
    let (a, cbs) = gen::file(7, 10);
    assert_eq!(a, gen::file(7, 10).0);
    assert_ne!(a, gen::file(8, 10).0);
    assert_eq!(cbs[3].source, gen::callback(7, 3).source);
    assert!(a.contains("pub fn entry9(data: &[i32]"));
}
