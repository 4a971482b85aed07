//! The host reference: the user's own code, built natively by rustc against
//! the `native` crate's CPU reference, run on the same seeded inputs the GPU
//! will regenerate.
//!
//! A generated harness calls each registration's caller (a `pub fn` whose
//! parameters are one `&[i32]` and scalars) with the generated input and
//! chosen scalar arguments. A shim `native` crate forwards every call to the
//! real provider API crate (the reference fold) and records the call's data
//! pointer, `init` and result, so the harness knows which registration
//! produced which result and that it folded the generated input.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use frontend::pmir::{Body, PreparedMir};
use frontend::ty::{Scalar, Ty};
use manifest::InputSpec;

/// A scalar argument of a caller, with the literal the harness passes.
#[derive(Debug, Clone, PartialEq)]
pub struct Argument {
    pub name: String,
    pub scalar: Scalar,
    /// The value as JSON (what a bundle stores for a capture).
    pub value: serde_json::Value,
}

/// One registration to evaluate on the host.
#[derive(Debug, Clone)]
pub struct HostJob {
    pub registration: usize,
    /// The caller's MIR path (`entry`, `m::entry`).
    pub caller: String,
    /// Which registration call of the caller, in call order (0-based).
    pub call_index: usize,
    pub arguments: Vec<Argument>,
    pub cases: Vec<InputSpec>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HostResult {
    pub registration: usize,
    pub spec: InputSpec,
    pub init: i32,
    pub expected: i32,
}

/// Why a registration cannot be evaluated on the host.
pub fn caller_arguments(
    doc: &PreparedMir,
    caller: &Body,
    seed: u64,
) -> Result<Vec<Argument>, String> {
    let source = doc.source.text.as_deref().unwrap_or("");
    let short = caller.name.rsplit("::").next().unwrap_or(&caller.name);
    if caller.name.contains('{') || caller.name.starts_with('<') {
        return Err(format!("caller `{}` is not a plain function", caller.name));
    }
    if !source.contains(&format!("pub fn {short}(")) {
        return Err(format!("caller `{}` is not a `pub fn`", caller.name));
    }
    let mut args = Vec::new();
    let mut slices = 0;
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let Some(params) = caller.locals.get(1..=caller.arg_count as usize) else {
        return Err(format!(
            "caller `{}` declares {} arguments but only {} locals",
            caller.name,
            caller.arg_count,
            caller.locals.len()
        ));
    };
    for (i, local) in params.iter().enumerate() {
        let name = caller
            .debug_vars
            .iter()
            .find(|d| {
                d.place
                    .as_ref()
                    .is_some_and(|p| p.local == local.local && p.projections.is_empty())
            })
            .map(|d| d.name.clone())
            .unwrap_or_else(|| format!("arg{i}"));
        match &local.ty {
            Ty::Ref {
                mutable: false,
                inner,
            } if matches!(**inner, Ty::Slice(ref e) if **e == Ty::Scalar(Scalar::I32)) => {
                slices += 1;
                args.push(Argument {
                    name,
                    scalar: Scalar::I32,
                    value: serde_json::Value::Null,
                });
            }
            Ty::Scalar(s) if *s != Scalar::Char => {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = (rng >> 33) % 97 + 1; // 1..=97: small, nonzero
                let value = match s {
                    Scalar::Bool => serde_json::json!(r.is_multiple_of(2)),
                    Scalar::F32 | Scalar::F64 => serde_json::json!(r as f64 / 8.0),
                    _ if s.is_signed() && r.is_multiple_of(3) => serde_json::json!(-(r as i64)),
                    _ => serde_json::json!(r),
                };
                args.push(Argument {
                    name,
                    scalar: *s,
                    value,
                });
            }
            t => {
                return Err(format!(
                    "caller `{}` takes `{t}`: only `&[i32]` and scalars can be generated",
                    caller.name
                ))
            }
        }
    }
    if slices != 1 {
        return Err(format!(
            "caller `{}` must take exactly one `&[i32]`",
            caller.name
        ));
    }
    Ok(args)
}

fn literal(a: &Argument) -> String {
    match (&a.value, a.scalar) {
        (serde_json::Value::Null, _) => "&data".to_string(),
        (v, Scalar::Bool) => v.to_string(),
        (v, s) if s.is_float() => format!("{}{}", v.as_f64().unwrap_or(0.0), s.name()),
        (v, s) => format!("{v}{}", s.name()),
    }
}

const SHIM: &str = r#"//! Forwards to the real provider API crate and records each call.
extern crate native_ref;
use std::cell::RefCell;
pub struct Call { pub data: usize, pub len: usize, pub init: String, pub result: String }
thread_local! { static LOG: RefCell<Vec<Call>> = const { RefCell::new(Vec::new()) }; }
pub fn take_log() -> Vec<Call> { LOG.with(|l| std::mem::take(&mut *l.borrow_mut())) }
fn record<T: core::fmt::Debug>(data: usize, len: usize, init: &T, result: &T) {
    LOG.with(|l| l.borrow_mut().push(Call { data, len, init: format!("{init:?}"), result: format!("{result:?}") }));
}
#[inline(never)]
pub fn reduce<T: Copy + core::fmt::Debug, F: Fn(T, T) -> T>(data: &[T], init: T, op: F) -> T {
    let r = native_ref::reduce(data, init, op);
    record(data.as_ptr() as usize, data.len(), &init, &r);
    r
}
#[inline(never)]
pub fn reduce_mut<T: Copy + core::fmt::Debug, F: FnMut(T, T) -> T>(data: &[T], init: T, op: F) -> T {
    let r = native_ref::reduce_mut(data, init, op);
    record(data.as_ptr() as usize, data.len(), &init, &r);
    r
}
"#;

fn rustc(args: &[&str], what: &str) -> Result<(), String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {rustc}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the host reference ({what}) failed:\n{}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    Ok(())
}

/// Builds and runs the harness; returns one result per job and case.
pub fn run(
    file: &Path,
    overflow_checks: bool,
    jobs: &[HostJob],
) -> Result<Vec<HostResult>, String> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let dir = scratch()?;
    let d = |n: &str| dir.0.join(n).display().to_string();
    std::fs::write(d("native_ref.rs"), frontend::bridge::NATIVE_SOURCE)
        .map_err(|e| e.to_string())?;
    std::fs::write(d("shim.rs"), SHIM).map_err(|e| e.to_string())?;
    let oc = format!(
        "overflow-checks={}",
        if overflow_checks { "on" } else { "off" }
    );
    let ed = ["--edition", "2021", "-C", "opt-level=3"];
    rustc(
        &[
            &ed[..],
            &[
                "--crate-type",
                "rlib",
                "--crate-name",
                "native_ref",
                &d("native_ref.rs"),
                "-o",
                &d("libnative_ref.rlib"),
            ],
        ]
        .concat(),
        "provider API crate",
    )?;
    let ext_ref = format!("native_ref={}", d("libnative_ref.rlib"));
    rustc(
        &[
            &ed[..],
            &[
                "--crate-type",
                "rlib",
                "--crate-name",
                "native",
                "--extern",
                &ext_ref,
                &d("shim.rs"),
                "-o",
                &d("libnative.rlib"),
            ],
        ]
        .concat(),
        "provider API shim",
    )?;
    let ext_native = format!("native={}", d("libnative.rlib"));
    let lpath = format!("dependency={}", dir.0.display());
    let file_s = file.display().to_string();
    rustc(
        &[
            &ed[..],
            &[
                "-C",
                &oc,
                "--crate-type",
                "rlib",
                "--crate-name",
                "callbacks",
                "--extern",
                &ext_native,
                "-L",
                &lpath,
                &file_s,
                "-o",
                &d("libcallbacks.rlib"),
            ],
        ]
        .concat(),
        "the user's file",
    )?;
    std::fs::write(d("main.rs"), harness_source(jobs)).map_err(|e| e.to_string())?;
    let ext_cb = format!("callbacks={}", d("libcallbacks.rlib"));
    rustc(
        &[
            &ed[..],
            &[
                "-C",
                &oc,
                "--crate-type",
                "bin",
                "--extern",
                &ext_native,
                "--extern",
                &ext_cb,
                "-L",
                &lpath,
                &d("main.rs"),
                "-o",
                &d("harness"),
            ],
        ]
        .concat(),
        "the harness",
    )?;
    let out = Command::new(d("harness"))
        .output()
        .map_err(|e| format!("cannot run the host harness: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the host reference failed (a panic in the user's code on the generated inputs?):\n{}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    parse_results(&String::from_utf8_lossy(&out.stdout), jobs)
}

fn harness_source(jobs: &[HostJob]) -> String {
    let mut s = String::from("#![allow(unused)]\nmod gen {\n");
    s.push_str(manifest::GENERATOR_SOURCE);
    s.push_str("}\nextern crate callbacks;\nextern crate native;\nfn main() {\n");
    for (j, job) in jobs.iter().enumerate() {
        let cases: Vec<String> = job
            .cases
            .iter()
            .map(|c| format!("({}u64, {}u64)", c.size, c.seed))
            .collect();
        let args: Vec<String> = job.arguments.iter().map(literal).collect();
        let _ = writeln!(
            s,
            "    for &(size, seed) in &[{}] {{\n        let mut data = vec![0i32; size as usize];\n        gen::fill_inputs(seed, 0, &mut data);\n        native::take_log();\n        let _ = callbacks::{}({});\n        let log = native::take_log();\n        match log.get({}) {{\n            Some(c) if c.data == data.as_ptr() as usize && c.len == data.len() => println!(\"{j} {{size}} {{seed}} {{}} {{}}\", c.init, c.result),\n            Some(_) => println!(\"{j} {{size}} {{seed}} other-data\"),\n            None => println!(\"{j} {{size}} {{seed}} no-call\"),\n        }}\n    }}",
            cases.join(", "),
            job.caller,
            args.join(", "),
            job.call_index
        );
    }
    s.push_str("}\n");
    s
}

fn parse_results(out: &str, jobs: &[HostJob]) -> Result<Vec<HostResult>, String> {
    let mut results = Vec::new();
    for line in out.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let bad = || format!("unexpected host harness output `{line}`");
        let [j, size, seed, rest @ ..] = parts.as_slice() else {
            return Err(bad());
        };
        let job = &jobs[j.parse::<usize>().map_err(|_| bad())?];
        let spec = InputSpec {
            size: size.parse().map_err(|_| bad())?,
            seed: seed.parse().map_err(|_| bad())?,
        };
        match rest {
            [init, result] => results.push(HostResult {
                registration: job.registration,
                spec,
                init: init.parse().map_err(|_| bad())?,
                expected: result.parse().map_err(|_| bad())?,
            }),
            ["other-data"] => {
                return Err(format!(
                    "registration #{}: `{}` does not pass its `&[i32]` argument to the provider unchanged, so its result cannot be checked",
                    job.registration, job.caller
                ))
            }
            _ => {
                return Err(format!(
                    "registration #{}: `{}` did not make registration call {} on the host",
                    job.registration, job.caller, job.call_index
                ))
            }
        }
    }
    Ok(results)
}

struct Scratch(PathBuf);

fn scratch() -> Result<Scratch, String> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("rmir-hostref-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(Scratch(dir))
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
