//! How long a program's call takes to find its compiled callback
//! (`runtime::host::Registry::find`), over the builds a program embeds:
//! the host-side part of every GPU call before anything is launched.
//!
//! ```text
//! objcopy -O binary --only-section=rmir_artifacts PROGRAM section.bin
//! cargo run --release -p runtime --example lookup -- section.bin [LOOKUPS]
//! ```
//!
//! Each call site whose callback takes scalars alone is looked up LOOKUPS
//! times (10^5 unless given) as its call would look it up; the mean and
//! the slowest site are printed. No GPU is needed.

use runtime::host::{CallInfo, ElementType, Registry};
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: lookup SECTION_FILE [LOOKUPS]");
        return ExitCode::from(2);
    };
    let lookups: u32 = match args.get(1).map(|n| n.parse()) {
        None => 100_000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("lookup: LOOKUPS must be a positive number");
            return ExitCode::FAILURE;
        }
    };
    let section = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("lookup: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let registry = match Registry::from_section(&section) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lookup: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut timed: Vec<(f64, String)> = Vec::new();
    let mut skipped = 0;
    for build in &registry.builds {
        for callback in &build.manifest.callbacks {
            let Some(site) = &callback.site else {
                continue;
            };
            let signature = &callback.signature;
            let types: Option<Vec<ElementType>> = signature
                .params
                .iter()
                .chain([&signature.ret])
                .map(|e| e.scalar().map(ElementType::Scalar))
                .collect();
            let Some(types) = types else {
                skipped += 1;
                continue;
            };
            let file: &'static str = Box::leak(site.file.clone().into_boxed_str());
            // A closure's type is its crate's path to it; a chain or a
            // by-key call passes `native`'s object of its closures.
            let suffix = site.closure_suffix.as_deref().unwrap_or_default();
            let closure_type = match suffix {
                manifest::CHAIN_TYPE | manifest::BY_KEY_TYPE => suffix.to_string(),
                _ => format!(
                    "{}::{suffix}",
                    site.crate_name.as_deref().unwrap_or_default()
                ),
            };
            let call = CallInfo {
                file,
                line: site.line,
                column: site.column,
                provider: callback.provider,
                types: &types,
                closure_type: &closure_type,
                closure_size: callback.env.size as usize,
                closure_align: callback.env.align as usize,
            };
            if let Err(e) = registry.find(&call) {
                eprintln!("lookup: {}:{}: {e}", site.file, site.line);
                return ExitCode::FAILURE;
            }
            let start = Instant::now();
            for _ in 0..lookups {
                let found = registry.find(std::hint::black_box(&call));
                std::hint::black_box(found.is_ok());
            }
            let ns = start.elapsed().as_nanos() as f64 / f64::from(lookups);
            timed.push((ns, format!("{}:{}:{}", site.file, site.line, site.column)));
        }
    }
    let Some((slowest, at)) = timed.iter().max_by(|a, b| a.0.total_cmp(&b.0)) else {
        eprintln!("lookup: {path} holds no call site of scalar callbacks to time");
        return ExitCode::FAILURE;
    };
    let mean = timed.iter().map(|t| t.0).sum::<f64>() / timed.len() as f64;
    let kernels: usize = registry
        .builds
        .iter()
        .map(|b| b.manifest.kernels.len())
        .sum();
    println!(
        "{} call sites ({skipped} with composite types not timed), {} callbacks, {kernels} kernels: \
         lookup mean {mean:.1} ns, slowest {slowest:.1} ns ({at})",
        timed.len(),
        registry.callbacks()
    );
    ExitCode::SUCCESS
}
