//! Lowering on real rustc MIR: every admitted case of tests/admission lowers
//! to an LLVM-dialect module with one exported thunk per registration; the
//! pipeline prints after every pass, rejects unknown pass names, reads
//! captures at the environment ABI's offsets, drops optional overflow checks
//! exactly when overflow checks are off, and reports what it cannot lower
//! with a location.

use std::path::{Path, PathBuf};

use frontend::bridge::Bridge;
use frontend::toolchain::RustcConfig;
use passes::lower::{pass_names, Lowered, Options, Pipeline};
use passes::pipeline::admitted;

/// The admitted cases and how each is built (rustc's opt level, overflow checks).
const CASES: &[(&str, u8, bool)] = &[
    ("01_add_overflow_checks.rs", 0, true),
    ("02_fn_item_add.rs", 0, true),
    ("03_wrapping_capture.rs", 0, true),
    ("04_mixed_scalar_captures.rs", 0, true),
    ("05_helper_chain.rs", 0, true),
    ("06_if_else_while.rs", 0, true),
    ("07_core_scalar_methods.rs", 0, true),
    ("08_wrapping_capture_opt3.rs", 3, true),
];

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/admission")
        .join(name)
}

fn bridge(opt_level: u8, overflow_checks: bool) -> Bridge {
    Bridge::new(RustcConfig {
        opt_level,
        overflow_checks,
        ..RustcConfig::default()
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Imports, admits and lowers `file`; returns the lowering result and the
/// final module text (no locations).
fn lower_file(
    bridge: &Bridge,
    file: &Path,
    pipeline: &Pipeline,
    options: &Options,
) -> (Result<Lowered, passes::lower::LowerError>, String, usize) {
    let pmir = bridge
        .import(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let context = ir::context().unwrap_or_else(|e| panic!("{e}"));
    let mut module = ir::import(&context, &pmir).unwrap_or_else(|e| panic!("{e}"));
    let outcomes = passes::pipeline::admit_module(&module).unwrap_or_else(|e| panic!("{e}"));
    let callbacks = admitted(&outcomes);
    let n = callbacks.len();
    let result = pipeline.run(&mut module, &callbacks, options);
    let text = passes::lower::print(&module, false);
    (result, text, n)
}

/// Ops left in a module, by dialect prefix.
fn dialects(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.split_once(" = ").map(|(_, r)| r).unwrap_or(l);
            let word = l.split([' ', '(', '<']).next()?;
            let word = word.trim_matches('"');
            word.split_once('.').map(|(d, _)| d.to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn every_admitted_case_lowers_to_the_llvm_dialect() {
    let mut failures = Vec::new();
    for (name, opt, checks) in CASES {
        let (result, text, n) = lower_file(
            &bridge(*opt, *checks),
            &case(name),
            &Pipeline::standard(),
            &Options::default(),
        );
        let lowered = match result {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        assert_eq!(n, 1, "{name}: admission should admit its one registration");
        assert_eq!(lowered.thunks.len(), 1, "{name}");
        let thunk = &lowered.thunks[0];
        let header = format!(
            "llvm.func @{}(%arg0: !llvm.ptr, %arg1: i32, %arg2: i32) -> i32",
            thunk.symbol
        );
        assert!(text.contains(&header), "{name}: no `{header}` in\n{text}");
        assert_eq!(
            dialects(&text),
            vec!["llvm"],
            "{name}: not only LLVM dialect:\n{text}"
        );
        assert!(
            text.contains(&format!("llvm.func internal @{}", thunk.body_symbol)),
            "{name}: the body is not internal:\n{text}"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_admitted_case_lowers_at_both_opt_levels_and_overflow_settings() {
    let mut failures = Vec::new();
    for opt in [0u8, 3] {
        for checks in [true, false] {
            let b = bridge(opt, checks);
            for (name, _, _) in CASES {
                let (result, text, _) =
                    lower_file(&b, &case(name), &Pipeline::standard(), &Options::default());
                match result {
                    Err(e) => failures.push(format!("{name} -O{opt} checks={checks}: {e}")),
                    Ok(_) if dialects(&text) != ["llvm"] => {
                        failures.push(format!("{name} -O{opt} checks={checks}: not lowered"))
                    }
                    Ok(_) => {}
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn print_after_all_dumps_the_module_after_every_pass() {
    let (result, _, _) = lower_file(
        &bridge(0, true),
        &case("01_add_overflow_checks.rs"),
        &Pipeline::standard(),
        &Options {
            print_after_all: true,
            ..Options::default()
        },
    );
    let lowered = result.unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = lowered.dumps.iter().map(|d| d.pass).collect();
    assert_eq!(names, pass_names());
    let first = &lowered.dumps[0];
    assert!(first
        .render()
        .starts_with("// -----// IR Dump After select-admitted //----- //\n"));
    assert!(first.module.contains("rmir.checked"), "{}", first.module);
    let arith = &lowered.dumps[1];
    assert!(!arith.module.contains("rmir.checked"), "{}", arith.module);
    assert!(
        arith.module.contains("llvm.intr.sadd.with.overflow"),
        "{}",
        arith.module
    );
    let control = lowered
        .dumps
        .iter()
        .find(|d| d.pass == "lower-rmir-control")
        .unwrap();
    assert!(
        control.module.contains("llvm.intr.trap"),
        "{}",
        control.module
    );
    assert!(!lowered.dumps.last().unwrap().module.contains("rmir."));
}

#[test]
fn an_unknown_pass_name_lists_the_valid_ones() {
    let err = Pipeline::parse("lower-rmir-arith, lower-everything").unwrap_err();
    let message = err.to_string();
    assert!(message.starts_with("unknown pass `lower-everything`; the passes are: "));
    for name in pass_names() {
        assert!(message.contains(name), "{message}");
    }
    let p = Pipeline::parse("select-admitted,lower-rmir-arith").unwrap();
    assert_eq!(p.names(), vec!["select-admitted", "lower-rmir-arith"]);
}

#[test]
fn a_partial_pipeline_lowers_only_its_families() {
    let (result, text, _) = lower_file(
        &bridge(0, true),
        &case("01_add_overflow_checks.rs"),
        &Pipeline::parse("select-admitted,lower-rmir-arith").unwrap(),
        &Options::default(),
    );
    result.unwrap_or_else(|e| panic!("{e}"));
    assert!(!text.contains("rmir.checked"), "{text}");
    assert!(text.contains("\"rmir.assert\""), "{text}");
    assert!(text.contains("\"rmir.local\""), "{text}");
}

#[test]
fn captures_are_read_at_the_environment_abi_offsets() {
    // 04: the closure's fields, in rustc's capture order (first use): scale:
    // f32, offset: i64, shift: u8, negate: bool. rustc's layout of the
    // closure (measured by the frontend's probe) sorts them by alignment:
    // offset at 0, scale at 8, shift at 12, negate at 13 (size 16, align 8),
    // not the declaration-order 0, 8, 16, 17 (size 24) of a C struct.
    let (result, text, _) = lower_file(
        &bridge(0, true),
        &case("04_mixed_scalar_captures.rs"),
        &Pipeline::standard(),
        &Options::default(),
    );
    let lowered = result.unwrap_or_else(|e| panic!("{e}"));
    let env = &lowered.thunks[0].env;
    let offsets: Vec<(&str, u64)> = env
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.offset))
        .collect();
    assert_eq!((env.size, env.align), (16, 8));
    assert_eq!(
        offsets,
        vec![("scale", 8), ("offset", 0), ("shift", 12), ("negate", 13)]
    );
    for (_, offset) in offsets.iter().filter(|(_, o)| *o != 0) {
        let gep = format!("llvm.getelementptr %arg0[{offset}] : (!llvm.ptr) -> !llvm.ptr, i8");
        assert!(text.contains(&gep), "no `{gep}` in\n{text}");
    }
    assert!(
        text.contains("llvm.load %arg0 {alignment = 8 : i64} : !llvm.ptr -> i64"),
        "{text}"
    );
}

fn temp_case(name: &str, body: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lower-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[test]
fn optional_overflow_checks_follow_the_overflow_checks_setting() {
    let file = case("01_add_overflow_checks.rs");
    // Built with checks on: MIR has `AddWithOverflow` and its assert.
    let on = bridge(0, true);
    let (r, text, _) = lower_file(&on, &file, &Pipeline::standard(), &Options::default());
    r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(count(&text, "llvm.intr.trap"), 1, "{text}");
    // The same MIR lowered with checks off: the assert is dropped, as
    // rustc's code generation drops it.
    let off = Options {
        overflow_checks: Some(false),
        ..Options::default()
    };
    let (r, text, _) = lower_file(&on, &file, &Pipeline::standard(), &off);
    r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(count(&text, "llvm.intr.trap"), 0, "{text}");
    // Built with checks off: the module says so, and nothing traps.
    let (r, text, _) = lower_file(
        &bridge(0, false),
        &file,
        &Pipeline::standard(),
        &Options::default(),
    );
    r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(count(&text, "llvm.intr.trap"), 0, "{text}");
}

#[test]
fn division_asserts_trap_even_with_overflow_checks_off() {
    // `a / b` asserts b != 0 and !(a == MIN && b == -1): never optional.
    let file = temp_case(
        "div.rs",
        "pub fn entry(data: &[i32]) -> i32 {\n    native::reduce(data, 1, |a, b| a / b)\n}\n",
    );
    let (r, text, _) = lower_file(
        &bridge(0, false),
        &file,
        &Pipeline::standard(),
        &Options::default(),
    );
    r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(count(&text, "llvm.intr.trap"), 2, "{text}");
}

#[test]
fn checked_abs_traps_only_with_overflow_checks_on() {
    let file = temp_case(
        "abs.rs",
        "pub fn entry(data: &[i32]) -> i32 {\n    native::reduce(data, 0, |a, b| a.wrapping_add(b.abs()))\n}\n",
    );
    let b = bridge(0, true);
    let (r, text, _) = lower_file(&b, &file, &Pipeline::standard(), &Options::default());
    r.unwrap_or_else(|e| panic!("{e}"));
    // `abs` is inlined from `core` (a negation with its overflow check).
    assert_eq!(count(&text, "llvm.intr.trap"), 1, "{text}");
    let off = Options {
        overflow_checks: Some(false),
        ..Options::default()
    };
    let (r, text, _) = lower_file(&b, &file, &Pipeline::standard(), &off);
    r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(count(&text, "llvm.intr.trap"), 0, "{text}");
}

#[test]
fn what_cannot_be_lowered_is_a_located_error_and_never_admitted() {
    // An enum of another crate built inside the callback: the rules have
    // no objection, the lowering has no layout for it. Lowered anyway (as
    // `driver opt` can), the refusal is located at the op; through
    // `admit_module` the trial lowering turns it into E0109.
    let file = temp_case(
        "bound.rs",
        "use std::ops::Bound;\npub fn entry(data: &[i32]) -> i32 {\n    native::reduce(data, 0, |a, b| {\n        let bound = if a > b { Bound::Included(a) } else { Bound::Excluded(b) };\n        match bound { Bound::Included(x) => x, _ => b }\n    })\n}\n",
    );
    let pmir = bridge(0, true)
        .import(&file)
        .unwrap_or_else(|e| panic!("{e}"));
    let context = ir::context().unwrap_or_else(|e| panic!("{e}"));
    let mut module = ir::import(&context, &pmir).unwrap_or_else(|e| panic!("{e}"));
    let rules = passes::admission::admit(&ir::facts(&module).unwrap());
    let callbacks = admitted(&rules);
    assert_eq!(callbacks.len(), 1, "the rules alone admit the callback");
    let outcomes = passes::pipeline::admit_module(&module).unwrap_or_else(|e| panic!("{e}"));
    let passes::admission::Verdict::Rejected(diags) = &outcomes[0].verdict else {
        panic!("the trial lowering must reject it");
    };
    assert_eq!(diags[0].code.as_str(), "E0109");
    assert!(
        diags[0]
            .message
            .contains("Bound` is defined outside this crate"),
        "{}",
        diags[0].message
    );
    let err = Pipeline::standard()
        .run(&mut module, &callbacks, &Options::default())
        .unwrap_err();
    assert_eq!(err.pass, "lower-rmir-memory", "{err}");
    assert!(err.op.starts_with("rmir."), "{err}");
    assert!(err.function.is_some(), "the error names its function");
    let text = err.to_string();
    assert!(text.contains("bound.rs:3:"), "{text}");
}

#[test]
fn lowered_module_snapshot() {
    let (r, text, _) = lower_file(
        &bridge(0, true),
        &case("03_wrapping_capture.rs"),
        &Pipeline::standard(),
        &Options::default(),
    );
    r.unwrap_or_else(|e| panic!("{e}"));
    insta::with_settings!({
        snapshot_path => "../../snapshots/lower",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_snapshot!("lowered_03_wrapping_capture", text);
    });
}
