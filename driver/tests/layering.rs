//! The crate layering that docs/architecture.md documents, checked against
//! `cargo metadata` (rust-analyzer's tidy tests do the same): crates depend
//! downward only, and the crates that must not link LLVM or MLIR do not,
//! even transitively.

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
