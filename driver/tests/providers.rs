//! Every provider beyond the i32 reduce: the admitted provider cases of
//! `tests/verdicts` (`provider_*.rs`) build by both routes with the LTO
//! route's kernels free of `CALL` (the callback inlined into the provider)
//! and the PTX route's calling the thunk; the validation program
//! (`examples/gpu-providers`) is `gen_cases.py`'s output and builds with
//! `driver cargo build`, carrying a callable kernel per case and element
//! type. (Its run is on the GPU machine: docs/gpu.md.)

mod common;

use common::{has_call, root, scratch};
use std::path::PathBuf;
use std::process::Command;

fn admitted_provider_cases() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/verdicts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("provider_")
                && name.ends_with(".rs")
                && std::fs::read_to_string(p)
                    .unwrap()
                    .starts_with("// expect: admitted")
        })
        .collect();
    files.sort();
    files
}

#[test]
fn provider_cases_inline_by_lto_and_call_by_ptx() {
    let cases = admitted_provider_cases();
    assert!(
        cases.len() >= 7,
        "found only {} provider cases",
        cases.len()
    );
    let out = scratch("providers", "routes");
    let mut kernels = 0;
    for case in &cases {
        let stem = case.file_stem().unwrap().to_string_lossy().into_owned();
        for (route, flags) in [("lto", &[][..]), ("ptx", &["--no-lto"][..])] {
            let dir = out.join(format!("{stem}-{route}"));
            let mut args = vec![
                "build",
                case.to_str().unwrap(),
                "--no-lint",
                "-o",
                dir.to_str().unwrap(),
            ];
            args.extend_from_slice(flags);
            let o = common::driver_uncached(&args);
            assert!(
                o.status.success(),
                "{stem} by {route}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let manifest: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap())
                    .unwrap();
            kernels += manifest["kernels"].as_array().unwrap().len();
            let cubins: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "cubin"))
                .collect();
            assert!(!cubins.is_empty(), "{stem} by {route}: no cubin");
            for cubin in &cubins {
                let call = has_call(cubin);
                match route {
                    "lto" => assert!(!call, "{stem}: a CALL in {} (LTO route)", cubin.display()),
                    _ => assert!(call, "{stem}: no CALL in {} (PTX route)", cubin.display()),
                }
            }
        }
    }
    // Eight providers, the sort with three kernels, both routes.
    assert!(kernels >= 2 * (7 + 3), "only {kernels} kernels built");
    let _ = std::fs::remove_dir_all(&out);
}

/// The onesweep passes of the radix sorts fit the blocks a multiprocessor
/// their launch facts ask for (`manifest::provider::RADIX_PASS_MIN_BLOCKS`):
/// the registers nvJitLink gave each pass, read from the linked cubins, for
/// the sorts of composite elements and of computed keys (among them the
/// (key, index) pairs of 32-byte records and the `u8`s by a `char`, which
/// took 95 and 116 registers, one block a multiprocessor, without the
/// bound).
#[test]
fn radix_passes_fit_the_blocks_their_launch_facts_ask_for() {
    let out = scratch("providers", "radix-registers");
    let mut checked = 0;
    for case in ["composite_sorts", "provider_sort_by_key"] {
        let dir = out.join(case);
        let file = root().join(format!("tests/verdicts/{case}.rs"));
        let o = common::driver_uncached(&[
            "build",
            file.to_str().unwrap(),
            "--no-lint",
            "-o",
            dir.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // Each kernel's registers, as `cuobjdump --dump-resource-usage`
        // prints them: a `Function NAME:` line, then `REG:N ...`.
        let mut registers = std::collections::HashMap::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let cubin = e.unwrap().path();
            if cubin.extension().is_none_or(|x| x != "cubin") {
                continue;
            }
            let o = Command::new(common::tool("cuobjdump"))
                .arg("--dump-resource-usage")
                .arg(&cubin)
                .output()
                .expect("cuobjdump runs");
            assert!(o.status.success(), "cuobjdump {}", cubin.display());
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            let mut lines = text.lines();
            while let Some(line) = lines.next() {
                let Some(name) = line.trim().strip_prefix("Function ") else {
                    continue;
                };
                let usage = lines.next().unwrap_or_default();
                let regs = usage
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("REG:"))
                    .and_then(|n| n.parse::<u32>().ok())
                    .unwrap_or_else(|| panic!("{case}: no registers for {name}: {usage}"));
                registers.insert(name.trim_end_matches(':').to_string(), regs);
            }
        }
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap())
                .unwrap();
        for k in manifest["kernels"].as_array().unwrap() {
            if k["stage"] != "radix_pass" {
                continue;
            }
            let name = k["name"].as_str().unwrap();
            let threads = k["launch"]["block_size"].as_u64().unwrap();
            let blocks = k["launch"]["min_blocks_per_sm"].as_u64().unwrap_or(0);
            assert_eq!(blocks, 2, "{case}: {name} asks for {blocks} blocks");
            let regs = u64::from(registers[name]);
            // Registers are given a warp at a time, in eights.
            assert!(
                regs.div_ceil(8) * 8 * threads * blocks <= 65536,
                "{case}: {name} has {regs} registers, {threads} threads: fewer than {blocks} blocks fit"
            );
            checked += 1;
        }
    }
    // The seven sorts of composite_sorts.rs, the eight of
    // provider_sort_by_key.rs.
    assert!(checked >= 15, "only {checked} radix passes checked");
    let _ = std::fs::remove_dir_all(&out);
}

/// `driver cargo build` of the example workspace `dir` (in a scratch
/// target folder), and `driver inspect` of its program `bin`: the folder
/// and what the program holds.
fn build_and_inspect(dir: &str, bin: &str) -> (PathBuf, String) {
    let target = scratch("providers", bin);
    let manifest = format!("{dir}/Cargo.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_driver"))
        .args(["cargo", "build", "--manifest-path", &manifest, "--locked"])
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTC_WRAPPER")
        .current_dir(root())
        .output()
        .expect("driver runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let program = target.join("debug").join(bin);
    let o = Command::new(env!("CARGO_BIN_EXE_driver"))
        .args(["inspect", program.to_str().unwrap()])
        .current_dir(root())
        .output()
        .expect("driver runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (target, String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn the_validation_program_is_generated() {
    let o = Command::new("python3")
        .arg(root().join("examples/gpu-providers/gen_cases.py"))
        .arg("--check")
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_validation_program_builds_with_every_case_callable() {
    let (target, text) = build_and_inspect("examples/gpu-providers", "validate");
    let program = target.join("debug/validate");
    // 28 cases a type, ten types, one more for each float (a float sum
    // per segment) and two more for each integer (`sort` and
    // `sort_unstable`): a GPU call and a CPU reference each.
    let callable = text.lines().filter(|l| l.contains(": called at ")).count();
    let reference = text
        .lines()
        .filter(|l| l.contains("(CPU registration"))
        .count();
    assert_eq!((callable, reference), (298, 298), "{text}");
    for provider in [
        "reduce",
        "inclusive_scan",
        "exclusive_scan",
        "transform",
        "transform2",
        "segmented_reduce",
        "select",
        "sort_by",
        "segmented_sort_by",
        "dedup_by",
        "partition",
        "partition_point",
        "histogram",
        "merge_by",
        "reduce_by_key",
        "scan_by_key",
    ] {
        assert!(
            text.contains(&format!(", {provider} `(")),
            "no {provider} in\n{text}"
        );
    }
    // The host's models of the scans' and the reduce's combining orders
    // (what float sums are compared with bit for bit) agree with the
    // sequential scan and fold wherever the operation is associative (and,
    // for the reduce, commutative); they need no GPU.
    let o = Command::new(&program)
        .arg("--check-order")
        .output()
        .expect("validate runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("the GPU-order models: 832 scans and reduces equal the sequential ones"),
        "{out}"
    );
    // Without a GPU it says why and fails.
    let o = Command::new(&program).output().expect("validate runs");
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("validate: no CUDA"), "{e}");
    // The pipeline program of the same workspace (device-resident results,
    // the `_into` forms, further streams, 57 `par_iter` chains, 15 of them
    // with `enumerate`, 62 calls of composites.rs: on tuples and structs,
    // five `sort_by_key`s on computed keys, and nine sorts of records of
    // 24 and 32 bytes, which the radix sort gathers; three `total_cmp`
    // sorts of special floats; five sorts whose keys leave radix passes to
    // skip; 19 calls of sharded.rs, 18 of them `GpuSet`'s)
    // carries a kernel for each of its GPU calls, and without a GPU says
    // why.
    let pipeline = target.join("debug/pipeline");
    let o = Command::new(env!("CARGO_BIN_EXE_driver"))
        .args(["inspect", pipeline.to_str().unwrap()])
        .output()
        .expect("driver runs");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    let callable = text.lines().filter(|l| l.contains(": called at ")).count();
    assert_eq!(callable, 170, "{text}");
    let composites = text
        .lines()
        .filter(|l| l.contains("composites.rs") && l.contains("kernel rcb_"))
        .count();
    assert_eq!(composites, 62, "{text}");
    let gathered = text
        .lines()
        .filter(|l| l.contains("sort moves: the 24-byte") || l.contains("sort moves: the 32-byte"))
        .count();
    assert_eq!(gathered, 9, "{text}");
    let chains = text
        .lines()
        .filter(|l| l.contains("a `par_iter` chain"))
        .count();
    assert_eq!(chains, 57, "{text}");
    // The picks whose order is proved to hold only identical values equal
    // (`max_by(total_cmp)` of f32, `min`/`max` of integers, a pair by both
    // fields, keys that hold the value whole beside a capture or a call)
    // carry no index; `min_by_key`s on part of the value, `enumerate`'s
    // arg-min and a pair by one field do.
    let picks = |what: &str| text.lines().filter(|l| l.contains(what)).count();
    assert_eq!(picks("pick: values alone"), 9, "{text}");
    assert_eq!(picks("pick: equal values may differ"), 14, "{text}");
    let sharded = text
        .lines()
        .filter(|l| l.contains("sharded.rs") && l.contains("kernel rcb_"))
        .count();
    assert_eq!(sharded, 19, "{text}");
    // Each chain's kernel is the one of its own call: of the two `sum`s of
    // u64 chains in one loop (rustc puts their blocks the other way round),
    // the one whose stage captures the mask has its 8 bytes.
    let source =
        std::fs::read_to_string(root().join("examples/gpu-providers/pipeline/src/chains.rs"))
            .expect("chains.rs reads");
    let line = 1 + source
        .lines()
        .position(|l| {
            l.contains("let hits: u64 = gpu.par_iter(&k).map(move |v: u64| (v & mask == 0)")
        })
        .expect("the masked sum is in chains.rs");
    let site = format!("called at pipeline/src/chains.rs:{line}:");
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains(&site))
        .unwrap_or_else(|| panic!("no callback {site}\n{text}"));
    assert!(
        lines[at + 1].contains("environment 8 bytes, align 8: stage0.0: u64 at 0"),
        "{}\n{}",
        lines[at],
        lines[at + 1]
    );
    let o = Command::new(&pipeline)
        .arg("check")
        .output()
        .expect("pipeline runs");
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("pipeline: no CUDA"), "{e}");
    let _ = std::fs::remove_dir_all(&target);
}

/// `examples/gpu-math` (the float methods on the GPU against the host,
/// the ulp table of docs/gpu.md) builds with `driver cargo build`, a kernel
/// for each of its 56 calls: 25 one-argument and 3 two-argument methods,
/// each for `f32` and `f64`.
#[test]
fn the_float_math_program_builds_with_every_call_callable() {
    let (target, text) = build_and_inspect("examples/gpu-math", "ulp");
    let callable = text.lines().filter(|l| l.contains(": called at ")).count();
    assert_eq!(callable, 56, "{text}");
    for provider in ["transform `(f32) -> f32`", "transform2 `(f64, f64) -> f64`"] {
        assert!(text.contains(provider), "no {provider} in\n{text}");
    }
    let _ = std::fs::remove_dir_all(&target);
}
