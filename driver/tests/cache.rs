//! The build cache, through the real driver: a warm build reads every
//! cached stage and writes the same bytes as a cold one; damaged entries are
//! rebuilt; concurrent builds share one cache; `driver cache stats|clean`.

mod common;

use common::root;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CASE: &str = "tests/admission/04_mixed_scalar_captures.rs";

fn scratch(name: &str) -> PathBuf {
    common::scratch("cache", name)
}

fn driver(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_driver"))
        .args(args)
        .env("RMIR_CACHE_DIR", cache)
        .env_remove("RMIR_CACHE")
        .current_dir(root())
        .output()
        .expect("driver runs")
}

fn build(cache: &Path, out: &Path, extra: &[&str]) -> String {
    let mut args = vec!["build", CASE, "--timings", "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = driver(cache, &args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{stderr}");
    stderr
}

/// Every file of a build's output folder, by name.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        m.insert(
            e.file_name().to_string_lossy().into_owned(),
            std::fs::read(e.path()).unwrap(),
        );
    }
    assert!(m.contains_key("manifest.json"), "{m:?}");
    m
}

/// The stages `--timings` printed.
fn stages(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.split("  ").next())
        .map(|s| s.trim().to_string())
        .collect()
}

fn entries(cache: &Path, kind: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dir = cache.join("v1").join(kind);
    for shard in std::fs::read_dir(dir).into_iter().flatten() {
        for e in std::fs::read_dir(shard.unwrap().path()).unwrap() {
            let p = e.unwrap().path();
            if !p.file_name().unwrap().to_string_lossy().starts_with('.') {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn warm_builds_read_the_cache_and_write_the_same_bytes() {
    let dir = scratch("warm");
    let cache = dir.join("cache");
    let cold = build(&cache, &dir.join("cold"), &[]);
    let s = stages(&cold);
    for stage in ["NVRTC (provider)", "nvJitLink", "libNVVM (LTOIR)"] {
        assert!(
            s.iter().any(|x| x == stage),
            "cold build runs {stage}: {cold}"
        );
    }
    assert!(!cold.contains("cache hit"), "{cold}");
    for kind in ["thunks", "provider", "linked-cubin", "contract"] {
        assert_eq!(entries(&cache, kind).len(), 1, "one {kind} entry");
    }

    let warm = build(&cache, &dir.join("warm"), &[]);
    let s = stages(&warm);
    for stage in [
        "callbacks (cache hit)",
        "NVRTC (cache hit)",
        "nvJitLink (cache hit)",
    ] {
        assert!(s.iter().any(|x| x == stage), "warm build: {stage}: {warm}");
    }
    for stage in ["NVRTC (provider)", "nvJitLink", "libNVVM (LTOIR)"] {
        assert!(
            !s.iter().any(|x| x == stage),
            "warm build runs {stage}: {warm}"
        );
    }
    let want = files(&dir.join("cold"));
    assert_eq!(
        files(&dir.join("warm")),
        want,
        "warm == cold, byte for byte"
    );

    // Damaged entries are found, rebuilt and replaced.
    for kind in ["thunks", "provider", "linked-cubin", "contract"] {
        for e in entries(&cache, kind) {
            let mut bytes = std::fs::read(&e).unwrap();
            let last = bytes.len() - 1;
            bytes[last] ^= 0x5a;
            std::fs::write(&e, bytes).unwrap();
        }
    }
    let again = build(&cache, &dir.join("again"), &[]);
    assert!(!again.contains("cache hit"), "{again}");
    assert_eq!(files(&dir.join("again")), want);
    let warm = build(&cache, &dir.join("warm2"), &[]);
    assert!(warm.contains("nvJitLink (cache hit)"), "{warm}");

    // `--no-cache` builds everything and writes the same bytes.
    let none = build(&cache, &dir.join("none"), &["--no-cache"]);
    assert!(!none.contains("cache hit"), "{none}");
    assert_eq!(files(&dir.join("none")), want);

    // Another architecture or `-g` is another key.
    let g = build(&cache, &dir.join("debug"), &["-g"]);
    assert!(!g.contains("nvJitLink (cache hit)"), "{g}");

    let o = driver(&cache, &["cache", "stats"]);
    let stats = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success());
    // The operator contract does not depend on the debug flags: one entry.
    assert!(
        stats
            .lines()
            .any(|l| l.split_whitespace().take(3).eq(["contract", "1", "entry"])),
        "{stats}"
    );
    for kind in ["thunks", "provider", "linked-cubin"] {
        let line = stats
            .lines()
            .find(|l| l.split_whitespace().next() == Some(kind));
        let words: Vec<&str> = line.unwrap_or("").split_whitespace().collect();
        assert_eq!(
            words.get(1..3),
            Some(&["2", "entries"][..]),
            "{kind}: {stats}"
        );
    }
    let o = driver(&cache, &["cache", "clean"]);
    assert!(o.status.success());
    let o = driver(&cache, &["cache", "stats"]);
    let stats = String::from_utf8_lossy(&o.stdout).into_owned();
    let total = stats.lines().find(|l| l.starts_with("total")).unwrap_or("");
    assert!(
        total
            .split_whitespace()
            .eq(["total", "0", "entries", "0", "B"]),
        "{stats}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A link's warnings are cached with its cubin: a warm build warns as the
/// cold link did (here nvJitLink 13.0's `-g` link of LTOIR that fails and
/// falls back to PTX thunks, docs/debug-info.md).
#[test]
fn warm_builds_warn_as_the_cold_link_did() {
    let dir = scratch("warnings");
    let cache = dir.join("cache");
    let run = |out: &str| {
        let out = dir.join(out);
        let o = driver(
            &cache,
            &[
                "build",
                "tests/verdicts/provider_sort_by_key.rs",
                "-g",
                "--timings",
                "-o",
                out.to_str().unwrap(),
            ],
        );
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{stderr}");
        let warnings: Vec<String> = stderr
            .lines()
            .filter(|l| l.starts_with("warning: nvJitLink"))
            .map(str::to_string)
            .collect();
        (warnings, stderr)
    };
    let (cold, stderr) = run("cold");
    assert!(!cold.is_empty(), "the cold -g link warns: {stderr}");
    let (warm, stderr) = run("warm");
    assert!(stderr.contains("nvJitLink (cache hit)"), "{stderr}");
    assert_eq!(warm, cold, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn concurrent_builds_share_one_cache() {
    let dir = scratch("concurrent");
    let cache = dir.join("cache");
    let reference = dir.join("reference");
    build(&dir.join("private"), &reference, &[]);
    let want = files(&reference);
    let handles: Vec<_> = (0..3)
        .map(|i| {
            let (cache, out) = (cache.clone(), dir.join(format!("b{i}")));
            std::thread::spawn(move || {
                build(&cache, &out, &[]);
                files(&out)
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), want);
    }
    let warm = build(&cache, &dir.join("after"), &[]);
    assert!(warm.contains("nvJitLink (cache hit)"), "{warm}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_build_trims_the_cache_to_its_limit() {
    let dir = scratch("limit");
    let cache = dir.join("cache");
    let o = Command::new(env!("CARGO_BIN_EXE_driver"))
        .args(["build", CASE, "-o"])
        .arg(dir.join("out"))
        .env("RMIR_CACHE_DIR", &cache)
        .env("RMIR_CACHE_MAX_MIB", "0")
        .env_remove("RMIR_CACHE")
        .current_dir(root())
        .output()
        .expect("driver runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for kind in ["thunks", "provider", "linked-cubin", "contract"] {
        assert!(
            entries(&cache, kind).is_empty(),
            "a 0 MiB cache keeps no {kind}"
        );
    }
    assert!(files(&dir.join("out")).contains_key("callbacks.cubin"));
    let o = driver(&cache, &["cache", "stats"]);
    let stats = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        stats.contains("limit     2048 MiB (RMIR_CACHE_MAX_MIB"),
        "{stats}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
