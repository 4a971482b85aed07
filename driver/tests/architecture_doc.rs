//! Keeps docs/architecture.md's code map true: every workspace member has a
//! `### `NAME/`` heading in the Code map section and every such heading names
//! a workspace crate (or, like `providers/`, an existing folder that is no
//! crate); every repository path the page names in backticks exists (and every
//! `docs/NAME.md` it names anywhere); every `crate::module::Item` of the Entry
//! points section resolves to a module file that defines the item.
//!
//! A failure lists every broken reference, one a line.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The root Cargo.toml's `members = [...]`.
fn members(root: &Path) -> Vec<String> {
    let toml = fs::read_to_string(root.join("Cargo.toml")).expect("read Cargo.toml");
    let start = toml.find("members").expect("Cargo.toml has no members");
    let open = start + toml[start..].find('[').expect("members without [");
    let close = open + toml[open..].find(']').expect("members without ]");
    toml[open + 1..close]
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

/// The text of the `## TITLE` section, up to the next `## ` heading.
fn section<'a>(doc: &'a str, title: &str) -> &'a str {
    let heading = format!("\n## {title}\n");
    let start = doc
        .find(&heading)
        .unwrap_or_else(|| panic!("architecture.md has no `## {title}`"));
    let body = &doc[start + heading.len()..];
    let end = body.find("\n## ").unwrap_or(body.len());
    &body[..end]
}

/// Every span between backticks (single-line spans only).
fn backticked(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else { break };
        let span = &after[..close];
        if !span.contains('\n') {
            spans.push(span);
        }
        rest = &after[close + 1..];
    }
    spans
}

/// A path component that stands for a name (`TARGET`, `NAME-HASH`, `*.cuh`).
fn is_placeholder(component: &str) -> bool {
    component.contains('*')
        || component
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase())
}

/// The part of a path-like token to check: up to its first placeholder
/// component. None when the token is not a path into the repository (its
/// first component is not a folder at the root, as in `src/keyed.rs`, which
/// is relative to an example crate).
fn repository_path(token: &str, root: &Path) -> Option<String> {
    let token = token.trim_matches(|c: char| "(),;:.".contains(c));
    if !token.contains('/')
        || token.contains("://")
        || token.starts_with('/')
        || token.starts_with('~')
    {
        return None;
    }
    if !token
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-*".contains(c))
    {
        return None;
    }
    let first = token.split('/').next()?;
    if first.is_empty() || !root.join(first).is_dir() {
        return None;
    }
    let kept: Vec<&str> = token
        .trim_end_matches('/')
        .split('/')
        .take_while(|c| !is_placeholder(c))
        .collect();
    Some(kept.join("/"))
}

/// `docs/NAME.md` anywhere in the text, in backticks or not.
fn doc_links(text: &str) -> BTreeSet<String> {
    let mut links = BTreeSet::new();
    for (at, _) in text.match_indices("docs/") {
        let name: String = text[at + 5..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_' || *c == '.')
            .collect();
        let name = name.trim_end_matches('.');
        if let Some(stem) = name.strip_suffix(".md") {
            if !stem.is_empty() {
                links.insert(format!("docs/{stem}.md"));
            }
        }
    }
    links
}

/// Whether `source` defines `item` (or re-exports it).
fn defines(source: &str, item: &str) -> bool {
    let kinds = [
        "fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union",
    ];
    source.lines().any(|line| {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        let declares = words
            .windows(2)
            .any(|w| kinds.contains(&w[0]) && w[1] == item);
        let reexports = line.trim_start().starts_with("pub use") && words.contains(&item);
        declares || reexports
    })
}

/// Resolves `crate::module::…::Item` to a file under the crate's `src/`;
/// Err says what is missing.
fn resolve(path: &str, root: &Path, members: &[String]) -> Result<(), String> {
    let mut segments = path.split("::");
    let krate = segments.next().unwrap_or_default().replace('_', "-");
    if !members.contains(&krate) {
        return Err(format!("`{path}`: `{krate}` is not a workspace member"));
    }
    let mut dir = root.join(&krate).join("src");
    let mut file = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| dir.join(f))
        .find(|f| f.is_file())
        .ok_or_else(|| format!("`{path}`: {krate}/src has no lib.rs or main.rs"))?;
    let segments: Vec<&str> = segments.collect();
    for (i, segment) in segments.iter().enumerate() {
        let as_file = dir.join(format!("{segment}.rs"));
        let as_dir = dir.join(segment).join("mod.rs");
        if as_file.is_file() || as_dir.is_file() {
            file = if as_file.is_file() { as_file } else { as_dir };
            dir = dir.join(segment);
            continue;
        }
        let source =
            fs::read_to_string(&file).map_err(|e| format!("`{path}`: {}: {e}", file.display()))?;
        if i + 1 == segments.len() && defines(&source, segment) {
            return Ok(());
        }
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        return Err(format!(
            "`{path}`: no module file for `{segment}` and {shown} does not define it"
        ));
    }
    Ok(())
}

/// Every broken reference of the page, one message each.
fn broken_references(doc: &str, root: &Path, members: &[String]) -> Vec<String> {
    let mut broken = Vec::new();

    let code_map = section(doc, "Code map");
    let headings: Vec<&str> = code_map
        .lines()
        .filter_map(|l| l.strip_prefix("### `")?.strip_suffix("/`"))
        .collect();
    for member in members {
        if !headings.contains(&member.as_str()) {
            broken.push(format!(
                "workspace member `{member}` has no `### `{member}/`` heading in the Code map"
            ));
        }
    }
    for heading in &headings {
        let dir = root.join(heading);
        let is_member = members.iter().any(|m| m == heading);
        if !is_member && !dir.is_dir() {
            broken.push(format!(
                "Code map heading `{heading}/` names no crate or folder"
            ));
        } else if !is_member && dir.join("Cargo.toml").is_file() {
            broken.push(format!(
                "Code map heading `{heading}/` is a crate outside the workspace's members"
            ));
        }
    }

    let mut paths = BTreeSet::new();
    for span in backticked(doc) {
        for token in span.split_whitespace() {
            if let Some(path) = repository_path(token, root) {
                paths.insert(path);
            }
        }
    }
    paths.extend(doc_links(doc));
    for path in paths {
        if !root.join(&path).exists() {
            broken.push(format!("`{path}` does not exist"));
        }
    }

    for span in backticked(section(doc, "Entry points")) {
        let is_item_path = span.contains("::")
            && span
                .split("::")
                .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if is_item_path {
            if let Err(e) = resolve(span, root, members) {
                broken.push(format!("entry point {e}"));
            }
        }
    }
    broken
}

#[test]
fn architecture_doc_names_what_exists() {
    let root = root();
    let doc =
        fs::read_to_string(root.join("docs/architecture.md")).expect("read docs/architecture.md");
    let members = members(&root);
    assert!(
        members.len() > 1,
        "no workspace members read from Cargo.toml"
    );
    let broken = broken_references(&doc, &root, &members);
    assert!(
        broken.is_empty(),
        "docs/architecture.md is out of date ({} broken references):\n  {}",
        broken.len(),
        broken.join("\n  ")
    );
}

/// The checks can fail: a page with a missing heading, a missing file, an
/// entry point that names no item and one that names no module.
#[test]
fn broken_references_are_reported() {
    let root = root();
    let members = members(&root);
    let doc = "\n## Entry points\n\n- `compiler::build::no_such_fn`: x.\n- `compiler::no_such_module::f`.\n- `compiler::build::build`: fine.\n\n## Code map\n\n### `compiler/`\nSee `compiler/src/no_such_file.rs`, `scripts/no-such.sh`, docs/no-such.md, `src/relative.rs`, `fuzz/corpus/TARGET/`.\n\n### `no-such-crate/`\nx\n\n## Data flow\n";
    let broken = broken_references(doc, &root, &members);
    let expect = [
        "workspace member `driver` has no",
        "Code map heading `no-such-crate/` names no crate or folder",
        "`compiler/src/no_such_file.rs` does not exist",
        "`scripts/no-such.sh` does not exist",
        "`docs/no-such.md` does not exist",
        "entry point `compiler::build::no_such_fn`",
        "entry point `compiler::no_such_module::f`",
    ];
    for e in expect {
        assert!(
            broken.iter().any(|b| b.contains(e)),
            "not reported: {e}\nreported:\n  {}",
            broken.join("\n  ")
        );
    }
    let expected_count = expect.len() + members.len() - 2; // every member but compiler and driver has no heading, driver counted above
    assert_eq!(
        broken.len(),
        expected_count,
        "reported:\n  {}",
        broken.join("\n  ")
    );
}
