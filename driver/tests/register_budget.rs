//! A kernel compiled for a number of blocks a multiprocessor (the second
//! `__launch_bounds__` argument, the manifest's `min_blocks_per_sm`) must
//! fit them in its linked cubin, without spilling: that is what the hint
//! was for (`manifest::provider::radix_launch`: a radix pass of 12-byte
//! records takes 67 registers through LTOIR unless asked for three blocks
//! of 384 threads). Built from the verdict cases of composite sorts by
//! both routes, read back with cuobjdump's resource usage.

use std::path::Path;

mod common;

/// Per kernel of `cubin`: (name, registers, stack bytes, local bytes).
fn resource_usage(cubin: &Path) -> Vec<(String, u32, u32, u32)> {
    let out = std::process::Command::new(common::tool("cuobjdump"))
        .arg("--dump-resource-usage")
        .arg(cubin)
        .output()
        .expect("cuobjdump runs");
    assert!(out.status.success(), "cuobjdump {}", cubin.display());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut kernels = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.trim().strip_prefix("Function ") {
            name = Some(n.trim_end_matches(':').to_string());
        } else if let Some(n) = name.take() {
            let field = |key: &str| -> u32 {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(key))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("no {key} for {n} in `{line}`"))
            };
            kernels.push((n.clone(), field("REG:"), field("STACK:"), field("LOCAL:")));
        }
    }
    kernels
}

#[test]
fn kernels_asked_for_blocks_a_multiprocessor_fit_them_without_spilling() {
    let case = common::root().join("tests/verdicts/composite_sorts.rs");
    let mut checked = 0;
    for (route, args) in [("lto", &[][..]), ("ptx", &["--no-lto"][..])] {
        let out = common::scratch("register-budget", route);
        let mut argv = vec!["build", case.to_str().unwrap(), "-o", out.to_str().unwrap()];
        argv.extend_from_slice(args);
        let run = common::driver_uncached(&argv);
        assert!(
            run.status.success(),
            "driver build {route}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        let mut usage = Vec::new();
        for e in std::fs::read_dir(&out).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "cubin") {
                usage.extend(resource_usage(&p));
            }
        }
        for kernel in manifest["kernels"].as_array().unwrap() {
            let launch = &kernel["launch"];
            let blocks = launch["min_blocks_per_sm"].as_u64().unwrap_or(0) as u32;
            if blocks == 0 {
                continue;
            }
            let name = kernel["name"].as_str().unwrap();
            let threads = launch["block_size"].as_u64().unwrap() as u32
                + 32 * launch["extra_warps"].as_u64().unwrap_or(0) as u32;
            let (_, regs, stack, local) = usage
                .iter()
                .find(|(n, ..)| n == name)
                .unwrap_or_else(|| panic!("{route}: kernel {name} is in no cubin"));
            // sm_90: 65536 registers a multiprocessor, allotted a warp at a
            // time in units of 256 (8 a thread).
            let per_warp = (regs * 32).div_ceil(256) * 256;
            let fit = 65536 / (per_warp * threads.div_ceil(32)).max(1);
            assert!(
                fit >= blocks,
                "{route}: {name} asks for {blocks} blocks of {threads} threads, its {regs} \
                 registers fit {fit}"
            );
            assert!(
                *stack == 0 && *local == 0,
                "{route}: {name} spills ({stack} bytes of stack, {local} of local memory) \
                 to fit {blocks} blocks"
            );
            checked += 1;
        }
    }
    // Order by price and by id, by both routes.
    assert!(
        checked >= 4,
        "only {checked} kernels asked for blocks a multiprocessor"
    );
}
