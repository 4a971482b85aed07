//! The operator contract lint (W0201): every case under `tests/lint` says
//! in its first line what the lint must find (`// expect: clean`, or
//! `// expect: W0201 LAW`: associative, commutative, for a sort's
//! comparator irreflexive, asymmetric, transitive, for `dedup_by`'s `same`
//! symmetric, transitive), and may name device
//! libraries in its second (`// link: FILE…`); `driver build` runs it on
//! the host and its warnings are snapshots. `--deny-warnings` fails the
//! build without writing anything; `driver explain W0201` explains it.

mod common;

use common::{root, scratch};
use std::process::Output;

fn driver(args: &[&str]) -> Output {
    common::driver_uncached(args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn lint_cases_warn_exactly_when_a_law_breaks() {
    let mut files: Vec<_> = std::fs::read_dir(root().join("tests/lint"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let expects: Vec<String> = files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.lines()
                .next()
                .and_then(|l| l.strip_prefix("// expect: "))
                .unwrap_or_else(|| panic!("{}: no `// expect:` line", p.display()))
                .to_string()
        })
        .collect();
    let clean = expects.iter().filter(|e| *e == "clean").count();
    assert!(
        clean >= 3 && expects.len() - clean >= 4,
        "the lint cases are missing"
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots/driver"));
    settings.set_prepend_module_to_snapshot(false);
    let _guard = settings.bind_to_scope();
    let out = scratch("lint", "cases");
    for (p, expect) in files.iter().zip(&expects) {
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let rel = format!("tests/lint/{stem}.rs");
        let dir = out.join(&stem);
        let text = std::fs::read_to_string(p).unwrap();
        let links: Vec<&str> = text
            .lines()
            .nth(1)
            .and_then(|l| l.strip_prefix("// link: "))
            .map(|l| l.split_whitespace().collect())
            .unwrap_or_default();
        let mut args = vec!["build", rel.as_str(), "-o", dir.to_str().unwrap()];
        for l in &links {
            args.extend(["--link", l]);
        }
        let o = driver(&args);
        assert!(o.status.success(), "{stem}: {}", stderr(&o));
        let e = stderr(&o);
        // The summary line names a scratch folder and the cubins' bytes
        // (which any change to a provider moves): keep the rest.
        let report: String = e
            .lines()
            .map(|l| match l.strip_prefix("wrote ") {
                Some(rest) => {
                    let rest = &rest[rest.find(" (").unwrap_or(0)..];
                    let (head, tail) = rest.split_once(" of ").unwrap_or((rest, ""));
                    let tail = tail.trim_start_matches(|c: char| c.is_ascii_digit());
                    match tail.is_empty() {
                        true => format!("wrote OUT{head}"),
                        false => format!("wrote OUT{head} of N{tail}"),
                    }
                }
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            !e.contains("not checked"),
            "{stem}: the lint must check every callback:\n{e}"
        );
        if expect == "clean" {
            assert!(!e.contains("warning"), "{stem} must be clean:\n{e}");
        } else {
            let law = expect.strip_prefix("W0201 ").unwrap();
            let title = e
                .lines()
                .find(|l| l.starts_with("warning[W0201]: the "))
                .unwrap_or_else(|| panic!("{stem}: no W0201 warning:\n{e}"));
            assert!(
                title.ends_with(&format!(" is not {law}")),
                "{stem} must break `{law}`:\n{e}"
            );
            let n = e.matches("warning[W0201]").count();
            let summary = if n == 1 {
                ", 1 warning".to_string()
            } else {
                format!(", {n} warnings")
            };
            assert!(e.contains(&summary), "{stem}:\n{e}");
            insta::assert_snapshot!(format!("lint__{stem}"), report);
        }
    }
    // Denied: exit 1, nothing written.
    let dir = out.join("denied");
    let o = driver(&[
        "build",
        "tests/lint/10_wrapping_sub.rs",
        "--deny-warnings",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("2 warnings denied (--deny-warnings)"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.exists());
    // Not run: no warning, the build as before.
    let dir = out.join("no-lint");
    let o = driver(&[
        "build",
        "tests/lint/10_wrapping_sub.rs",
        "--no-lint",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(
        o.status.success() && !stderr(&o).contains("W0201"),
        "{}",
        stderr(&o)
    );
    let o = driver(&["explain", "W0201"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("associative"));
    let _ = std::fs::remove_dir_all(&out);
}
