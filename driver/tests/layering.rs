//! The crate layering that docs/architecture.md documents, checked against
//! `cargo metadata` (rust-analyzer's tidy tests do the same): crates depend
//! downward only, and the crates that must not link LLVM or MLIR do not,
//! even transitively. Inside `frontend`, `passes` and `backend-nvptx`, the
//! top-level modules import each other without a cycle, read from their
//! sources (`modules_have_no_import_cycle`).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each workspace crate's normal (non-dev, non-build) dependencies on other
/// workspace crates, and on every package, transitively.
struct Graph {
    direct: BTreeMap<String, BTreeSet<String>>,
    all: BTreeMap<String, BTreeSet<String>>,
}

fn graph() -> Graph {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let name_of: BTreeMap<String, String> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap().to_string(),
                p["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let members: BTreeSet<String> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| name_of[id.as_str().unwrap()].clone())
        .collect();
    // Normal dependency edges of every package.
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for node in meta["resolve"]["nodes"].as_array().unwrap() {
        let from = name_of[node["id"].as_str().unwrap()].clone();
        let deps = edges.entry(from).or_default();
        for d in node["deps"].as_array().unwrap() {
            let normal = d["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null());
            if normal {
                deps.insert(name_of[d["pkg"].as_str().unwrap()].clone());
            }
        }
    }
    let mut direct = BTreeMap::new();
    let mut all = BTreeMap::new();
    for m in &members {
        direct.insert(
            m.clone(),
            edges[m]
                .iter()
                .filter(|d| members.contains(*d))
                .cloned()
                .collect(),
        );
        let mut seen = BTreeSet::new();
        let mut work: Vec<String> = edges[m].iter().cloned().collect();
        while let Some(p) = work.pop() {
            if seen.insert(p.clone()) {
                work.extend(edges.get(&p).into_iter().flatten().cloned());
            }
        }
        all.insert(m.clone(), seen);
    }
    Graph { direct, all }
}

#[test]
fn crates_depend_downward_only() {
    let g = graph();
    // The documented layering: each crate and the workspace crates it may use.
    let allowed: &[(&str, &[&str])] = &[
        // The GPU host API's backend, behind the `gpu` feature.
        ("native", &["runtime", "vocab"]),
        // The domain's vocabulary: a leaf every crate may use.
        ("vocab", &[]),
        ("manifest", &["vocab"]),
        ("cache", &[]),
        ("frontend", &["cache", "vocab"]),
        ("ir", &["frontend", "vocab"]),
        ("passes", &["ir", "frontend", "manifest", "vocab"]),
        ("backend-nvptx", &["passes", "ir", "frontend", "vocab"]),
        ("runtime", &["manifest", "vocab"]),
        (
            "compiler",
            &[
                "backend-nvptx",
                "passes",
                "ir",
                "frontend",
                "manifest",
                "cache",
                "vocab",
            ],
        ),
        // A thin CLI over `compiler`.
        (
            "driver",
            &[
                "compiler",
                "backend-nvptx",
                "passes",
                "ir",
                "frontend",
                "manifest",
                "cache",
                "vocab",
            ],
        ),
    ];
    assert_eq!(
        g.direct.keys().cloned().collect::<BTreeSet<_>>(),
        allowed.iter().map(|(c, _)| c.to_string()).collect(),
        "every workspace crate has a documented place"
    );
    for (krate, may) in allowed {
        for d in &g.direct[*krate] {
            assert!(
                may.contains(&d.as_str()),
                "`{krate}` depends on `{d}`, which its layer may not use"
            );
        }
    }
}

#[test]
fn llvm_and_mlir_stay_where_they_belong() {
    let g = graph();
    const COMPILER_LIBS: &[&str] = &["melior", "mlir-sys", "inkwell", "llvm-sys"];
    for krate in ["vocab", "frontend", "manifest", "runtime", "native"] {
        for lib in COMPILER_LIBS {
            assert!(!g.all[krate].contains(*lib), "`{krate}` links `{lib}`");
        }
    }
    // Only the backend reaches LLVM itself (through inkwell).
    for krate in ["frontend", "ir", "passes", "manifest", "runtime", "native"] {
        assert!(!g.all[krate].contains("inkwell"), "`{krate}` links inkwell");
    }
    // The GPU side loads CUDA through cudarc; the compiler never does.
    for krate in [
        "frontend",
        "ir",
        "passes",
        "backend-nvptx",
        "compiler",
        "driver",
    ] {
        assert!(!g.all[krate].contains("cudarc"), "`{krate}` links cudarc");
    }
}

#[test]
fn the_vocabulary_is_a_leaf_with_no_dependency_of_its_own() {
    let g = graph();
    // Without features `vocab` depends on nothing, so the bridge could
    // compile it with plain rustc; serde only comes with its feature.
    assert!(g.direct["vocab"].is_empty(), "{:?}", g.direct["vocab"]);
    let out = Command::new(env!("CARGO"))
        .args(["tree", "-p", "vocab", "-e", "normal", "--prefix", "none"])
        .args(["--no-default-features", "--locked", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        out.status.success() && lines.len() == 1 && lines[0].starts_with("vocab "),
        "vocab without features: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ----- modules inside a crate -----

/// The module-level import graph of one crate: its top-level modules (the
/// first path component under `src/`; `lib.rs` is the crate root, which
/// declares and re-exports every module and is no node), and an edge A → B
/// for every file of A that mentions `crate::B` (in a path, a grouped
/// `crate::{B, …}`, a doc link or an attribute string) outside
/// `#[cfg(test)]` items, or reaches B through enough `super::`s. Each edge
/// keeps the files that make it.
struct ModuleGraph {
    modules: BTreeSet<String>,
    edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

/// Every `.rs` file under `dir`, as (path relative to `dir`, text).
fn rust_files(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut work = vec![dir.to_path_buf()];
    while let Some(d) = work.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                work.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(dir).unwrap();
                let rel = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The end of the token at `i`: a comment, a string, byte-string or raw
/// string literal, a character literal, else one character.
fn token_end(src: &str, i: usize) -> usize {
    let b = src.as_bytes();
    let rest = &src[i..];
    let after_ident = i > 0 && is_ident(b[i - 1]);
    if rest.starts_with("//") {
        return rest.find('\n').map_or(src.len(), |n| i + n);
    }
    if rest.starts_with("/*") {
        let mut depth = 0;
        let mut j = i;
        while j < b.len() {
            if src[j..].starts_with("/*") {
                depth += 1;
                j += 2;
            } else if src[j..].starts_with("*/") {
                depth -= 1;
                j += 2;
                if depth == 0 {
                    return j;
                }
            } else {
                j += 1;
            }
        }
        return src.len();
    }
    // A raw string: `r"…"`, `r#"…"#`, `br#"…"#`.
    let raw = match rest.strip_prefix("br").or_else(|| rest.strip_prefix('r')) {
        Some(r) if !after_ident => {
            let hashes = r.len() - r.trim_start_matches('#').len();
            r[hashes..]
                .starts_with('"')
                .then_some((rest.len() - r.len(), hashes))
        }
        _ => None,
    };
    if let Some((prefix, hashes)) = raw {
        let open = i + prefix + hashes + 1;
        let close = format!("\"{}", "#".repeat(hashes));
        return src[open..]
            .find(&close)
            .map_or(src.len(), |n| open + n + close.len());
    }
    let quoted = if rest.starts_with('"') {
        Some(i)
    } else if rest.starts_with("b\"") && !after_ident {
        Some(i + 1)
    } else {
        None
    };
    if let Some(open) = quoted {
        let mut j = open + 1;
        while j < b.len() {
            match b[j] {
                b'\\' => j += 2,
                b'"' => return j + 1,
                _ => j += 1,
            }
        }
        return src.len();
    }
    if let Some(body) = rest.strip_prefix('\'') {
        // `'\n'`, `'\''`, `'x'`; anything else is a lifetime or a label.
        if body.starts_with('\\') {
            return src[i + 3..].find('\'').map_or(src.len(), |n| i + 3 + n + 1);
        }
        if let Some(c) = body.chars().next() {
            let end = i + 1 + c.len_utf8();
            if src[end..].starts_with('\'') {
                return end + 1;
            }
        }
        return i + 1;
    }
    i + rest.chars().next().map_or(1, char::len_utf8)
}

/// The end of the item that starts at `i` (after an attribute): its `;`,
/// or the `}` that closes its first `{`.
fn item_end(src: &str, mut i: usize) -> usize {
    let mut depth = 0;
    while i < src.len() {
        let end = token_end(src, i);
        if end == i + 1 {
            match src.as_bytes()[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return end;
                    }
                }
                b';' if depth == 0 => return end,
                _ => {}
            }
        }
        i = end;
    }
    src.len()
}

/// `src` without its `#[cfg(test)]` items (an attribute in a comment or a
/// string is text, not an attribute).
fn without_test_items(src: &str) -> String {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < src.len() {
        if src[i..].starts_with(ATTR) {
            i = item_end(src, i + ATTR.len());
            continue;
        }
        let end = token_end(src, i);
        out.push_str(&src[i..end]);
        i = end;
    }
    out
}

/// The first path segment of each item of a `{…}` group at the start of
/// `text` (`{a::B, c, d::{e, f}}` → a, c, d), or the one segment when
/// there is no group.
fn first_segments(text: &str) -> Vec<String> {
    let ident = |t: &str| -> String {
        t.trim_start()
            .bytes()
            .take_while(|&c| is_ident(c))
            .map(char::from)
            .collect()
    };
    let Some(group) = text.strip_prefix('{') else {
        return vec![ident(text)];
    };
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (k, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(ident(&group[start..k]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(ident(&group[start..k]));
                start = k + 1;
            }
            _ => {}
        }
    }
    out
}

/// The top-level modules `src` (the file `rel`, a module of `top`) names:
/// after `crate::`, or after as many `super::`s as lead out of `top`.
fn named_modules(rel: &str, src: &str) -> BTreeSet<String> {
    // The file's module path: `lower/calls.rs` is lower::calls,
    // `lower/mod.rs` is lower.
    let mut path: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
    if matches!(path.last(), Some(&"mod") | Some(&"lib")) {
        path.pop();
    }
    let b = src.as_bytes();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < src.len() {
        let boundary = i == 0 || !is_ident(b[i - 1]);
        if boundary && b[i..].starts_with(b"crate::") {
            i += "crate::".len();
            out.extend(first_segments(&src[i..]));
            continue;
        }
        if boundary && b[i..].starts_with(b"super::") {
            let mut ups = 0;
            while b[i..].starts_with(b"super::") {
                ups += 1;
                i += "super::".len();
            }
            // Leading out of the top-level module: what follows is one.
            if ups == path.len() {
                out.extend(first_segments(&src[i..]));
            }
            continue;
        }
        i += 1;
    }
    out
}

fn module_graph(files: &[(String, String)]) -> ModuleGraph {
    let top_of = |rel: &str| -> Option<String> {
        let first = rel.split('/').next().unwrap();
        let name = first.trim_end_matches(".rs");
        (!matches!(name, "lib" | "main")).then(|| name.to_string())
    };
    let modules: BTreeSet<String> = files.iter().filter_map(|(rel, _)| top_of(rel)).collect();
    let mut edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (rel, text) in files {
        let Some(from) = top_of(rel) else { continue };
        for to in named_modules(rel, &without_test_items(text)) {
            if to != from && modules.contains(&to) {
                edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(rel.clone());
            }
        }
    }
    ModuleGraph { modules, edges }
}

/// The strongly connected components of more than one module (Tarjan),
/// each as its modules in order.
fn cycles(g: &ModuleGraph) -> Vec<Vec<String>> {
    struct Tarjan<'g> {
        g: &'g ModuleGraph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.g.edges.get(v).into_iter().flat_map(|e| e.keys()) {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|m| *m == v).unwrap();
                let mut component: Vec<String> =
                    self.stack.drain(at..).map(str::to_string).collect();
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for m in &g.modules {
        if !t.index.contains_key(m.as_str()) {
            t.visit(m);
        }
    }
    t.found
}

/// A cycle through the first module of `component`, each step with the
/// files that make it: `pmir → validate (pmir.rs) → pmir (validate.rs)`.
fn describe_cycle(g: &ModuleGraph, component: &[String]) -> String {
    let start = &component[0];
    // Breadth-first inside the component, back to `start`.
    let mut came_from: BTreeMap<&String, &String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut last = None;
    'search: while let Some(v) = queue.pop_front() {
        for w in g.edges.get(v).into_iter().flat_map(|e| e.keys()) {
            if !component.contains(w) {
                continue;
            }
            if w == start {
                last = Some(v);
                break 'search;
            }
            if !came_from.contains_key(w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    let mut path = vec![start];
    let mut v = last.expect("a component of several modules has a cycle");
    while v != start {
        path.push(v);
        v = came_from[v];
    }
    path.push(start);
    path.reverse();
    let mut text = start.clone();
    for pair in path.windows(2) {
        let files: Vec<&str> = g.edges[pair[0]][pair[1]]
            .iter()
            .map(String::as_str)
            .collect();
        text.push_str(&format!(" → {} ({})", pair[1], files.join(", ")));
    }
    text
}

#[test]
fn modules_have_no_import_cycle() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut failures = Vec::new();
    for krate in ["frontend", "passes", "backend-nvptx"] {
        let g = module_graph(&rust_files(&root.join(krate).join("src")));
        let edges: usize = g.edges.values().map(BTreeMap::len).sum();
        // Nothing read would pass: each crate has several modules that
        // import each other.
        assert!(
            g.modules.len() > 3 && edges > 3,
            "{krate}: only {} modules and {edges} imports read",
            g.modules.len()
        );
        for component in cycles(&g) {
            failures.push(format!(
                "{krate}: the modules {} import each other: {}",
                component.join(", "),
                describe_cycle(&g, &component)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_import_graph_reads_paths_groups_supers_and_skips_tests() {
    let files = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    };
    let g = module_graph(&files(&[
        ("lib.rs", "pub mod a; pub mod b; pub mod c; use crate::a::X;"),
        ("a.rs", "use crate::{b::Y, Item};\n/// Not a test: `#[cfg(test)]`.\nfn f() {}"),
        ("b/mod.rs", "mod inner;"),
        ("b/inner.rs", "use super::super::c::Z; use super::Q;"),
        (
            "c.rs",
            "#[cfg(test)]\nmod tests { use crate::a; const S: &str = \"}\"; fn g() { let c = '{'; } }\nuse crate::b;",
        ),
    ]));
    let names = |m: &str| -> Vec<&str> {
        g.edges
            .get(m)
            .map(|e| e.keys().map(String::as_str).collect())
            .unwrap_or_default()
    };
    assert_eq!(g.modules.iter().collect::<Vec<_>>(), ["a", "b", "c"]);
    assert_eq!(names("a"), ["b"]);
    assert_eq!(names("b"), ["c"]);
    assert_eq!(names("c"), ["b"]);
    let found = cycles(&g);
    assert_eq!(found, [vec!["b".to_string(), "c".to_string()]]);
    assert_eq!(
        describe_cycle(&g, &found[0]),
        "b → c (b/inner.rs) → b (c.rs)"
    );
}
