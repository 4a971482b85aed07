//! The repository speaks of the product, not of when it was made: no tracked
//! file's name, and no line of a tracked text file, numbers the work sittings
//! it came from (a script named for a sitting, a docs folder suffixed with
//! one's number, a line that says in which one something was measured).
//! History lives in git. A failure lists every offending name and line.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The words for a sitting of work, spelled in pieces so that this file
/// does not name one itself.
fn words() -> [String; 2] {
    [["sess", "ion"].concat(), ["sit", "ting"].concat()]
}

/// Whether `text` (a line, lowercased) numbers a sitting: one of the words
/// followed by a number (`… 21`, `…s 20-22`, `gpu-…21.sh`).
fn numbers_a_sitting(text: &str) -> bool {
    words().iter().any(|word| {
        text.match_indices(word.as_str()).any(|(at, _)| {
            // cuda-gdb's own scratch folders (`/tmp/cuda-dbg/764/…1/elf.…`),
            // in the raw logs of its runs, are the tool's, not a sitting.
            let token = text[..at].rsplit(' ').next().unwrap_or("");
            if token.contains("/cuda-dbg/") {
                return false;
            }
            let rest = text[at + word.len()..].trim_start_matches('s');
            let rest = rest.strip_prefix([' ', '-', '_']).unwrap_or(rest);
            rest.starts_with(|c: char| c.is_ascii_digit())
        })
    })
}

/// Whether a path component ends in `-sNN` (a folder or file named for a
/// numbered sitting, as `2026-11-29-s14` was).
fn named_for_a_sitting(path: &str) -> bool {
    path.split('/').any(|part| {
        let stem = part.split('.').next().unwrap_or(part);
        stem.rsplit_once("-s").is_some_and(|(_, n)| {
            !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit())
        })
    })
}

fn tracked_files() -> Vec<String> {
    let o = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output()
        .expect("git runs (the check reads the tracked files)");
    assert!(
        o.status.success(),
        "git ls-files failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .expect("tracked paths are UTF-8")
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn no_tracked_name_or_line_records_work_history() {
    let files = tracked_files();
    assert!(files.len() > 100, "only {} tracked files", files.len());
    let mut found = Vec::new();
    let mut texts = 0;
    for path in &files {
        let lower = path.to_lowercase();
        // A name says what a file does: no name speaks of a sitting at all.
        if words().iter().any(|w| lower.contains(w.as_str())) || named_for_a_sitting(&lower) {
            found.push(format!("{path}: the file name"));
        }
        // Binary files (cubins, pickles) are not text and say nothing.
        let Ok(text) = std::fs::read_to_string(root().join(path)) else {
            continue;
        };
        texts += 1;
        for (n, line) in text.lines().enumerate() {
            if numbers_a_sitting(&line.to_lowercase()) {
                found.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(texts > 100, "only {texts} text files were read");
    assert!(
        found.is_empty(),
        "work history in the tree:\n{}",
        found.join("\n")
    );
}

/// The check finds what it is for, and passes what only looks like it.
#[test]
fn the_check_finds_numbered_sittings() {
    let [w, t] = words();
    for flagged in [
        format!("measured in {w} 21 on the h200"),
        format!("{w}s 20-22 moved the hand-off"),
        format!("scripts/gpu-{w}21.sh"),
        format!("({w}-14)"),
        format!("the {t} 9 figures"),
    ] {
        assert!(numbers_a_sitting(&flagged), "{flagged}");
    }
    for fine in [
        format!("one nvjitlink {w}: create with options"),
        format!("the cuda-gdb {w} preloads it"),
        "let [s1, s2] = pair;".to_string(),
        format!("in one {t}, every step"),
        format!("/tmp/cuda-dbg/764/{w}1/elf.5555556cbc90.o.ligwrz:"),
    ] {
        assert!(!numbers_a_sitting(&fine), "{fine}");
    }
    assert!(named_for_a_sitting("docs/gpu-runs/2026-11-29-s14/log.txt"));
    assert!(!named_for_a_sitting(
        "docs/gpu-runs/2026-12-04-float-methods/a.log"
    ));
    assert!(!named_for_a_sitting(
        "benches/experiments/transform_shape.cu"
    ));
}
