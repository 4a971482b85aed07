//! Every suggestion compiles and fixes what it was made for. For every case
//! file of `tests/admission`, `tests/verdicts` and `tests/corpus`, at
//! opt-level 0 and 3: the suggestions admission makes are applied to a copy
//! of the file (all of them at once, as `cargo fix` applies rustc's), the
//! copy goes through rustc again (the real bridge) and admission again. The
//! copy must compile, and no registration may still carry a diagnostic that
//! a suggestion was made to fix: it is admitted, or rejected for other codes
//! (or, where a code also had diagnostics without a suggestion, other
//! messages).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use frontend::bridge::Bridge;
use frontend::toolchain::RustcConfig;
use passes::admission::{Outcome, Verdict};
use passes::diagnostic::{Applicability, Emitter};
use passes::pipeline;
use passes::suggestion;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn admit(bridge: &Bridge, path: &Path) -> Result<(frontend::PreparedMir, Vec<Outcome>), String> {
    let doc = bridge.import(path).map_err(|e| e.to_string())?;
    let context = ir::context().unwrap();
    let module = ir::import(&context, &doc).unwrap();
    let outcomes = pipeline::admit_module(&module)?;
    Ok((doc, outcomes))
}

/// What a registration's suggestions are to fix: the diagnostics that
/// carried one, as (code, message), and the codes whose every diagnostic did.
#[derive(Default)]
struct Fixes {
    messages: BTreeSet<(String, String)>,
    codes: BTreeSet<String>,
}

fn diags(o: &Outcome) -> &[passes::diagnostic::Diagnostic] {
    match &o.verdict {
        Verdict::Admitted(_) => &[],
        Verdict::Rejected(d) => d,
    }
}

#[test]
fn every_suggestion_compiles_and_fixes_its_diagnostic() {
    std::env::set_current_dir(root()).unwrap();
    let mut cases: Vec<PathBuf> = ["tests/admission", "tests/verdicts", "tests/corpus"]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 100, "found only {} case files", cases.len());
    let bridges = [0u8, 3].map(|opt_level| {
        Bridge::new(RustcConfig {
            opt_level,
            ..Default::default()
        })
        .unwrap()
    });
    let scratch = std::env::temp_dir().join(format!("rmir-suggestions-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut applied = 0;
    let mut maybe_incorrect = 0;
    let mut listing = Vec::new();
    let mut unresolved = Vec::new();
    let mut failures = Vec::new();
    for case in &cases {
        let stem = case.file_stem().unwrap().to_string_lossy().to_string();
        let source = std::fs::read_to_string(case).unwrap();
        for (bridge, level) in bridges.iter().zip([0, 3]) {
            let what = format!("{} -O{level}", case.display());
            let (doc, before) = admit(bridge, case).unwrap_or_else(|e| panic!("{what}: {e}"));
            let emitter = Emitter::new(&doc.source, false);
            let mut edits = Vec::new();
            // Per registration: the diagnostics a suggestion is to fix, and
            // the codes whose every diagnostic had one.
            let mut fixed: Vec<Fixes> = Vec::new();
            for o in &before {
                let mut f = Fixes::default();
                let mut partial = BTreeSet::new();
                for d in diags(o) {
                    let code = d.code.as_str().to_string();
                    match emitter.suggestion(d) {
                        Some(s) => {
                            applied += 1;
                            listing.push(format!("{what}: {code} {}", d.message));
                            if s.applicability == Applicability::MaybeIncorrect {
                                maybe_incorrect += 1;
                            }
                            edits.push(s.edits);
                            f.messages.insert((code.clone(), d.message.clone()));
                            f.codes.insert(code);
                        }
                        None => {
                            if !d.suggestions.is_empty() {
                                unresolved.push(format!("{what}: {}", d.message));
                            }
                            partial.insert(code);
                        }
                    }
                }
                f.codes = &f.codes - &partial;
                fixed.push(f);
            }
            if edits.is_empty() {
                continue;
            }
            let patched = match suggestion::apply(&source, &edits) {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{what}: {e}"));
                    continue;
                }
            };
            let dir = scratch.join(format!("{stem}.O{level}"));
            std::fs::create_dir_all(&dir).unwrap();
            let copy = dir.join(case.file_name().unwrap());
            std::fs::write(&copy, &patched).unwrap();
            let after = match admit(bridge, &copy) {
                Ok((_, after)) => after,
                Err(e) => {
                    failures.push(format!(
                        "{what}: the fixed file does not compile:\n{patched}\n{e}"
                    ));
                    continue;
                }
            };
            if after.len() != before.len() {
                failures.push(format!(
                    "{what}: {} registrations before the fix, {} after",
                    before.len(),
                    after.len()
                ));
                continue;
            }
            for (o, f) in after.iter().zip(&fixed) {
                for d in diags(o) {
                    let code = d.code.as_str().to_string();
                    if f.codes.contains(&code) || f.messages.contains(&(code, d.message.clone())) {
                        failures.push(format!(
                            "{what}: registration #{} still has {} after the fix: {}\n{patched}",
                            o.registration.index,
                            d.code.as_str(),
                            d.message
                        ));
                    }
                }
            }
        }
    }
    std::fs::remove_dir_all(&scratch).ok();
    eprintln!(
        "{applied} suggestions applied ({maybe_incorrect} MaybeIncorrect):\n  {}\n{} left out (did not resolve):\n  {}",
        listing.join("\n  "),
        unresolved.len(),
        unresolved.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(applied >= 40, "only {applied} suggestions applied");
}
