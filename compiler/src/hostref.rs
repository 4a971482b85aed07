//! The host reference: the user's own code, built natively by rustc against
//! the `native` crate's CPU reference, run on the same seeded inputs the GPU
//! will regenerate.
//!
//! A generated harness calls each registration's caller (a `pub fn` whose
//! parameters are one `&[i32]` and scalars, tuples of scalars, or structs of
//! `pub` scalar fields) with the generated input and seeded arguments. A shim `native` crate forwards every call to the
//! real provider API crate (the reference fold) and records the call's data
//! pointer, `init` and result, so the harness knows which registration
//! produced which result and that it folded the generated input.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use frontend::pmir::{Body, PreparedMir};
use frontend::scratch::{self, Scratch};
use frontend::ty::{Scalar, Ty};
use manifest::InputSpec;

/// An argument of a caller, with the literal the harness passes.
#[derive(Debug, Clone, PartialEq)]
pub struct Argument {
    pub name: String,
    pub kind: ArgKind,
    /// The value as JSON (`null` for the input slice, an array for a tuple
    /// or struct, in field order).
    pub value: serde_json::Value,
}

/// What the harness generates for an argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgKind {
    /// The `&[i32]` input.
    Input,
    /// A slice of another scalar type (`&[0, 1]` for `&[usize]`, segment
    /// offsets over the input); bundles take none.
    Slice(Scalar),
    Scalar(Scalar),
    /// A tuple of scalars.
    Tuple(Vec<Scalar>),
    /// A struct of the user's file with public scalar fields: its path in
    /// the crate, the field names (`0`, `1`… for a tuple struct) and types.
    Struct {
        path: String,
        fields: Vec<(String, Scalar)>,
    },
}

/// The value of a capture named like `k`, `pair.0` or `p.a` (a precise
/// capture of a field, edition 2021), read off the caller's arguments.
pub fn capture_value(args: &[Argument], capture: &str) -> Option<serde_json::Value> {
    if let Some(a) = args.iter().find(|a| a.name == capture) {
        return matches!(a.kind, ArgKind::Scalar(_)).then(|| a.value.clone());
    }
    let (base, field) = capture.split_once('.')?;
    let a = args.iter().find(|a| a.name == base)?;
    let index = match &a.kind {
        ArgKind::Tuple(_) => field.parse::<usize>().ok()?,
        ArgKind::Struct { fields, .. } => fields.iter().position(|(n, _)| n == field)?,
        _ => return None,
    };
    a.value.get(index).cloned()
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

/// Seeded values for scalar arguments: small and nonzero, so that a capture
/// read by mistake as zero shows.
struct Values(u64);

impl Values {
    fn next(&mut self, s: Scalar) -> serde_json::Value {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (self.0 >> 33) % 97 + 1; // 1..=97
        match s {
            Scalar::Bool => serde_json::json!(r.is_multiple_of(2)),
            // One to four UTF-8 bytes: the environment holds the code point.
            Scalar::Char => {
                let c = ['A', 'z', 'é', '€', '𝄞', '0'][r as usize % 6];
                serde_json::json!(c.to_string())
            }
            Scalar::F32 | Scalar::F64 => serde_json::json!(r as f64 / 8.0),
            _ if s.is_signed() && r.is_multiple_of(3) => serde_json::json!(-(r as i64)),
            _ => serde_json::json!(r),
        }
    }
}

/// A scalar the harness can write as a literal on stable Rust.
fn generable(s: Scalar) -> bool {
    !matches!(s, Scalar::F16 | Scalar::F128)
}

/// The caller's arguments with generated values, or why the caller cannot
/// be called by the harness.
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
    let mut values = Values(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let cannot = |t: &Ty, why: &str| {
        format!(
            "caller `{}` takes `{t}`{why}: only slices of scalars, scalars, and tuples and structs of scalars can be generated",
            caller.name
        )
    };
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
        let (kind, value) = match &local.ty {
            Ty::Ref {
                mutable: false,
                inner,
            } if matches!(**inner, Ty::Slice(ref e) if **e == Ty::Scalar(Scalar::I32)) => {
                (ArgKind::Input, serde_json::Value::Null)
            }
            Ty::Ref {
                mutable: false,
                inner,
            } if matches!(**inner, Ty::Slice(ref e) if e.scalar().is_some_and(generable)) => {
                let Ty::Slice(e) = &**inner else {
                    unreachable!("matched a slice")
                };
                let s = e.scalar().expect("matched a scalar");
                (ArgKind::Slice(s), serde_json::Value::Null)
            }
            Ty::Scalar(s) if generable(*s) => (ArgKind::Scalar(*s), values.next(*s)),
            t @ Ty::Tuple(elems) if !elems.is_empty() => {
                let scalars: Vec<Scalar> = elems
                    .iter()
                    .map(|e| e.scalar().filter(|s| generable(*s)))
                    .collect::<Option<_>>()
                    .ok_or_else(|| cannot(t, ""))?;
                let v = scalars.iter().map(|s| values.next(*s)).collect();
                (ArgKind::Tuple(scalars), serde_json::Value::Array(v))
            }
            t @ Ty::Adt {
                path,
                args: generic,
            } if generic.is_empty() => {
                let fields = struct_fields(source, path).map_err(|why| cannot(t, &why))?;
                let v = fields.iter().map(|(_, s)| values.next(*s)).collect();
                let kind = ArgKind::Struct {
                    path: path.clone(),
                    fields,
                };
                (kind, serde_json::Value::Array(v))
            }
            t => return Err(cannot(t, "")),
        };
        args.push(Argument { name, kind, value });
    }
    Ok(args)
}

/// [`caller_arguments`] for a bundle, whose harness generates one `&[i32]`
/// input: the caller must take exactly that and no other slice.
pub fn bundle_arguments(
    doc: &PreparedMir,
    caller: &Body,
    seed: u64,
) -> Result<Vec<Argument>, String> {
    let args = caller_arguments(doc, caller, seed)?;
    let inputs = args.iter().filter(|a| a.kind == ArgKind::Input).count();
    let others = args.iter().any(|a| matches!(a.kind, ArgKind::Slice(_)));
    if inputs != 1 || others {
        return Err(format!(
            "caller `{}` must take exactly one `&[i32]` (and no other slice)",
            caller.name
        ));
    }
    Ok(args)
}

/// The fields of `struct NAME` in the user's source, found by token search
/// (prepared MIR does not describe structs): every field must be `pub` (the
/// harness is another crate) and of a scalar type.
fn struct_fields(source: &str, path: &str) -> Result<Vec<(String, Scalar)>, String> {
    let name = path.rsplit("::").next().unwrap_or(path);
    let header = format!("struct {name}");
    let mut found = None;
    for (at, _) in source.match_indices(&header) {
        let rest = &source[at + header.len()..];
        let body = rest.trim_start();
        if let Some(b) = body.strip_prefix('{') {
            found = Some((b.split_once('}').map(|(f, _)| f), false));
            break;
        }
        if let Some(b) = body.strip_prefix('(') {
            found = Some((b.split_once(')').map(|(f, _)| f), true));
            break;
        }
    }
    let (Some(body), tuple) = found.ok_or(", whose definition was not found")? else {
        return Err(", whose definition was not found".into());
    };
    let mut fields = Vec::new();
    for (i, field) in body
        .split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .enumerate()
    {
        let Some(field) = field.strip_prefix("pub ") else {
            return Err(format!(", whose field `{field}` is not `pub`"));
        };
        let (fname, ty) = if tuple {
            (i.to_string(), field.trim())
        } else {
            let (n, t) = field
                .split_once(':')
                .ok_or_else(|| format!(", whose field `{field}` was not understood"))?;
            (n.trim().to_string(), t.trim())
        };
        match Ty::parse(ty).scalar().filter(|s| generable(*s)) {
            Some(s) => fields.push((fname, s)),
            None => return Err(format!(", whose field `{fname}: {ty}` is not a scalar")),
        }
    }
    if fields.is_empty() {
        return Err(", which has no fields".into());
    }
    Ok(fields)
}

fn scalar_literal(v: &serde_json::Value, s: Scalar) -> String {
    match s {
        Scalar::Bool => v.to_string(),
        Scalar::Char => {
            let c = v.as_str().and_then(|t| t.chars().next()).unwrap_or('A');
            format!("{c:?}")
        }
        s if s.is_float() => format!("{:?}{}", v.as_f64().unwrap_or(0.0), s.name()),
        s => format!("{v}{}", s.name()),
    }
}

fn literal(a: &Argument) -> String {
    let item = |i: usize| a.value.get(i).cloned().unwrap_or_default();
    match &a.kind {
        ArgKind::Input => "data".to_string(),
        // Segment offsets over the one-element data; one element otherwise.
        ArgKind::Slice(Scalar::Usize) => "&[0usize, 1][..]".to_string(),
        ArgKind::Slice(Scalar::Bool) => "&[true][..]".to_string(),
        ArgKind::Slice(s) if s.is_float() => format!("&[1.0{}][..]", s.name()),
        ArgKind::Slice(s) => format!("&[1{}][..]", s.name()),
        ArgKind::Scalar(s) => scalar_literal(&a.value, *s),
        ArgKind::Tuple(scalars) => {
            let items: Vec<String> = scalars
                .iter()
                .enumerate()
                .map(|(i, s)| scalar_literal(&item(i), *s))
                .collect();
            format!("({},)", items.join(", "))
        }
        ArgKind::Struct { path, fields } => {
            let items: Vec<String> = fields
                .iter()
                .enumerate()
                .map(|(i, (n, s))| format!("{n}: {}", scalar_literal(&item(i), *s)))
                .collect();
            format!("callbacks::{path} {{ {} }}", items.join(", "))
        }
    }
}

/// A value as `{:?}` prints it, for the shim's log (`native`'s functions
/// ask only `Copy` of `T`, not `Debug`): a numeric `T` by its name, another
/// by its type name.
const SHOW: &str = r#"
fn show<T: Copy>(x: &T) -> String {
    macro_rules! show {
        ($($t:ident)*) => {$(
            if core::any::type_name::<T>() == stringify!($t) {
                // SAFETY: T is $t, by name.
                return format!("{:?}", unsafe { core::mem::transmute_copy::<T, $t>(x) });
            }
        )*};
    }
    show!(i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char);
    format!("a value of `{}`", core::any::type_name::<T>())
}
"#;

const SHIM: &str = r#"//! Forwards to the real provider API crate and records each call.
extern crate native_ref;
pub use native_ref::gpu;
use std::cell::RefCell;
pub struct Call { pub data: usize, pub len: usize, pub init: String, pub result: String }
thread_local! { static LOG: RefCell<Vec<Call>> = const { RefCell::new(Vec::new()) }; }
pub fn take_log() -> Vec<Call> { LOG.with(|l| std::mem::take(&mut *l.borrow_mut())) }
fn record<T: Copy>(data: usize, len: usize, init: &T, result: &T) {
    LOG.with(|l| l.borrow_mut().push(Call { data, len, init: show(init), result: show(result) }));
}
#[inline(never)]
pub fn reduce<T: Copy, F: Fn(T, T) -> T>(data: &[T], init: T, op: F) -> T {
    let r = native_ref::reduce(data, init, op);
    record(data.as_ptr() as usize, data.len(), &init, &r);
    r
}
#[inline(never)]
pub fn reduce_mut<T: Copy, F: FnMut(T, T) -> T>(data: &[T], init: T, op: F) -> T {
    let r = native_ref::reduce_mut(data, init, op);
    record(data.as_ptr() as usize, data.len(), &init, &r);
    r
}
fn record_call(data: usize, len: usize) {
    LOG.with(|l| l.borrow_mut().push(Call { data, len, init: String::new(), result: String::new() }));
}
#[inline(never)]
pub fn inclusive_scan<T: Copy, F: Fn(T, T) -> T>(data: &[T], op: F) -> Vec<T> {
    record_call(data.as_ptr() as usize, data.len());
    native_ref::inclusive_scan(data, op)
}
#[inline(never)]
pub fn exclusive_scan<T: Copy, F: Fn(T, T) -> T>(data: &[T], init: T, op: F) -> Vec<T> {
    record_call(data.as_ptr() as usize, data.len());
    native_ref::exclusive_scan(data, init, op)
}
#[inline(never)]
pub fn segmented_reduce<T: Copy, F: Fn(T, T) -> T>(data: &[T], offsets: &[usize], init: T, op: F) -> Vec<T> {
    record_call(data.as_ptr() as usize, data.len());
    native_ref::segmented_reduce(data, offsets, init, op)
}
#[inline(never)]
pub fn sort_by<T: Copy, C: Fn(&T, &T) -> core::cmp::Ordering>(data: &[T], compare: C) -> Vec<T> {
    record_call(data.as_ptr() as usize, data.len());
    native_ref::sort_by(data, compare)
}
#[inline(never)]
pub fn sort_by_key<T: Copy, K: Ord, F: Fn(&T) -> K>(data: &[T], key: F) -> Vec<T> {
    record_call(data.as_ptr() as usize, data.len());
    native_ref::sort_by_key(data, key)
}
#[inline(never)]
pub fn transform<T: Copy, U, F: Fn(T) -> U>(data: &[T], op: F) -> Vec<U> {
    record_call(data.as_ptr() as usize, data.len());
    native_ref::transform(data, op)
}
#[inline(never)]
pub fn transform2<T: Copy, U: Copy, V, F: Fn(T, U) -> V>(a: &[T], b: &[U], op: F) -> Vec<V> {
    record_call(a.as_ptr() as usize, a.len());
    native_ref::transform2(a, b, op)
}
#[inline(never)]
pub fn select<T: Copy, P: Fn(T) -> bool>(data: &[T], pred: P) -> Vec<T> {
    record_call(data.as_ptr() as usize, data.len());
    native_ref::select(data, pred)
}
"#;

/// The user's device libraries compiled for the host, so that the
/// reference runs the same helpers, into one static library. Returns its
/// `-l` argument (`static=rmir_device_host`), or `None` without libraries.
fn host_device_libraries(
    inputs: &[backend_nvptx::LinkInput],
    dir: &Scratch,
) -> Result<Option<String>, String> {
    if inputs.is_empty() {
        return Ok(None);
    }
    let objects = device_objects(inputs, dir, "the host reference")?;
    let lib = dir.join("librmir_device_host.a");
    let out = run(
        Command::new("ar").arg("rcs").arg(&lib).args(&objects),
        dir,
        "archiving the device libraries for the host",
    )
    .map_err(|e| e.replace("{program}", "ar"))?;
    if !out.status.success() {
        return Err(format!(
            "ar failed on the host device libraries:\n{}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    Ok(Some("static=rmir_device_host".to_string()))
}

/// The user's device libraries compiled for the host as one shared library
/// (`DIR/librmir_device_host.so`), for the operator contract lint's JIT to
/// resolve their functions in. An error says which library has no host
/// code, or why one did not compile.
pub fn host_device_shared_library(
    inputs: &[backend_nvptx::LinkInput],
    dir: &Scratch,
) -> Result<std::path::PathBuf, String> {
    let objects = device_objects(inputs, dir, "the lint")?;
    let cxx = &frontend::toolchain::get().cxx;
    let lib = dir.join("librmir_device_host.so");
    let out = run(
        Command::new(cxx)
            .arg("-shared")
            .arg("-o")
            .arg(&lib)
            .args(&objects),
        dir,
        "linking the device libraries for the host",
    )
    .map_err(|e| e.replace("{program}", cxx))?;
    if !out.status.success() {
        return Err(format!(
            "linking the device libraries for the host ({cxx}) failed:\n{}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    Ok(lib)
}

/// Each `.cu` library compiled by the host C++ compiler (`CXX`, default
/// `c++`) as C++, with `__host__`, `__device__` and `__forceinline__`
/// defined away: the object files' paths. A library that is not CUDA
/// source has no host code: an error naming it (`what` needs host code).
fn device_objects(
    inputs: &[backend_nvptx::LinkInput],
    dir: &Scratch,
    what: &str,
) -> Result<Vec<String>, String> {
    let cxx = &frontend::toolchain::get().cxx;
    let mut objects = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        if input.description.kind() != backend_nvptx::ItemKind::CudaSource {
            return Err(format!(
                "{what} needs host code for every device library, and `{}` is {} \
                 (only `.cu` libraries are compiled for the host); link the `.cu` source",
                input.name,
                input.description.kind()
            ));
        }
        let src = dir.join(&format!("device_{i}.cc"));
        std::fs::write(&src, &input.bytes)
            .map_err(|e| format!("cannot write {}: {e}", src.display()))?;
        let obj = dir.join(&format!("device_{i}.o"));
        let out = run(
            Command::new(cxx).args([
                "-x",
                "c++",
                "-O2",
                "-fPIC",
                "-D__host__=",
                "-D__device__=",
                "-D__forceinline__=inline",
                "-c",
                &src.display().to_string(),
                "-o",
                &obj.display().to_string(),
            ]),
            dir,
            &format!("compiling {} for the host", input.name),
        )
        .map_err(|e| e.replace("{program}", cxx))?;
        if !out.status.success() {
            return Err(format!(
                "compiling the device library `{}` for {what} ({cxx}) failed:\n{}",
                input.name,
                String::from_utf8_lossy(&out.stderr).trim_end()
            ));
        }
        objects.push(obj.display().to_string());
    }
    Ok(objects)
}

/// Runs rustc in the scratch folder under the time limit.
fn rustc(args: &[&str], what: &str, dir: &Scratch) -> Result<(), String> {
    let rustc = &frontend::toolchain::get().rustc;
    let out = run(
        Command::new(rustc).args(args),
        dir,
        &format!("building {what}"),
    )
    .map_err(|e| e.replace("{program}", rustc))?;
    if !out.status.success() {
        return Err(format!(
            "building the host reference ({what}) failed:\n{}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    Ok(())
}

/// Runs a program of the host reference in `dir`, under the time limit.
fn run(cmd: &mut Command, dir: &Scratch, what: &str) -> Result<scratch::Finished, String> {
    let limit = scratch::timeout()?;
    scratch::run(cmd.current_dir(dir.path()), limit).map_err(|e| match e {
        scratch::RunError::Spawn(e) => format!("cannot run {{program}}: {e}"),
        scratch::RunError::Timeout(limit) => format!(
            "the host reference did not finish {what} within {} s and was stopped (set {} to allow more seconds)",
            limit.as_secs_f64(),
            scratch::TIMEOUT_VAR
        ),
    })
}

/// Builds and runs the harness; returns one result per job and case.
pub fn run_jobs(
    file: &Path,
    overflow_checks: bool,
    jobs: &[HostJob],
    device_libraries: &[backend_nvptx::LinkInput],
) -> Result<Vec<HostResult>, String> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let crates = host_crates(file, overflow_checks, device_libraries)?;
    let out = crates.run_harness(&harness_source(jobs))?;
    parse_results(&out, jobs)
}

/// Which registration call of its caller registration `index` is, in call
/// order (0-based): what a harness picks out of the shim's log.
pub fn call_index(doc: &PreparedMir, index: usize) -> usize {
    let caller = &doc.registrations[index].caller;
    doc.registrations
        .iter()
        .take(index)
        .filter(|r| &r.caller == caller)
        .count()
}

/// The user's crate and its dependencies built natively, in a scratch
/// folder: what a harness links.
struct HostCrates {
    dir: Scratch,
    overflow_checks: bool,
}

/// Builds the provider API crate, the shim, the input generator and the
/// user's file (with the device libraries' host build).
fn host_crates(
    file: &Path,
    overflow_checks: bool,
    device_libraries: &[backend_nvptx::LinkInput],
) -> Result<HostCrates, String> {
    let dir = Scratch::new("hostref")?;
    let d = |n: &str| dir.join(n).display().to_string();
    let write = |n: &str, text: &str| {
        std::fs::write(dir.join(n), text).map_err(|e| format!("cannot write {}: {e}", d(n)))
    };
    frontend::bridge::write_native(dir.path(), "native_ref.rs")?;
    write("shim.rs", &format!("{SHIM}{SHOW}"))?;
    write("gen.rs", manifest::GENERATOR_SOURCE)?;
    let oc = format!(
        "overflow-checks={}",
        if overflow_checks { "on" } else { "off" }
    );
    let ed = ["--edition", "2021", "-C", "opt-level=3"];
    let lib = |name: &str, src: &str, out: &str, extra: &[&str], what: &str| {
        rustc(
            &[
                &ed[..],
                &["--crate-type", "rlib", "--crate-name", name],
                extra,
                &[d(src).as_str(), "-o", d(out).as_str()],
            ]
            .concat(),
            what,
            &dir,
        )
    };
    lib(
        "native_ref",
        "native_ref.rs",
        "libnative_ref.rlib",
        &[],
        "the provider API crate",
    )?;
    let ext_ref = format!("native_ref={}", d("libnative_ref.rlib"));
    lib(
        "native",
        "shim.rs",
        "libnative.rlib",
        &["--extern", &ext_ref],
        "the provider API shim",
    )?;
    // The generator runs over up to 2^28 elements per case: optimised, in
    // its own crate, so that the harness itself can be built without.
    lib(
        "rmir_gen",
        "gen.rs",
        "librmir_gen.rlib",
        &[],
        "the input generator",
    )?;
    let ext_native = format!("native={}", d("libnative.rlib"));
    let lpath = format!("dependency={}", dir.path().display());
    let (input, remap) = scratch::rustc_input(file, &dir)?;
    let input = input.display().to_string();
    let remap = remap.map(|r| format!("--remap-path-prefix={r}"));
    let mut user = vec![
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
        &input,
        "-o",
    ];
    let out_cb = d("libcallbacks.rlib");
    user.push(&out_cb);
    // The device libraries' host build goes into the user's rlib, which
    // is what references their symbols.
    let host_lib = host_device_libraries(device_libraries, &dir)?;
    let native_dir = format!("native={}", dir.path().display());
    if let Some(l) = &host_lib {
        user.extend(["-l", l.as_str(), "-L", native_dir.as_str()]);
    }
    if let Some(r) = &remap {
        user.push(r);
    }
    rustc(&[&ed[..], &user].concat(), "the user's file", &dir)?;
    Ok(HostCrates {
        dir,
        overflow_checks,
    })
}

impl HostCrates {
    /// Builds `main` against the crates and runs it: its standard output.
    fn run_harness(&self, main: &str) -> Result<String, String> {
        let dir = &self.dir;
        let d = |n: &str| dir.join(n).display().to_string();
        std::fs::write(dir.join("main.rs"), main)
            .map_err(|e| format!("cannot write {}: {e}", d("main.rs")))?;
        let oc = format!(
            "overflow-checks={}",
            if self.overflow_checks { "on" } else { "off" }
        );
        let ext_native = format!("native={}", d("libnative.rlib"));
        let lpath = format!("dependency={}", dir.path().display());
        let ext_cb = format!("callbacks={}", d("libcallbacks.rlib"));
        let ext_gen = format!("rmir_gen={}", d("librmir_gen.rlib"));
        // The harness is thousands of small calls into optimised crates: built
        // at opt-level 0, it compiles in seconds where -O3 took minutes and GBs.
        rustc(
            &[
                "--edition",
                "2021",
                "-C",
                &oc,
                "--crate-type",
                "bin",
                "--extern",
                &ext_native,
                "--extern",
                &ext_cb,
                "--extern",
                &ext_gen,
                "-L",
                &lpath,
                &d("main.rs"),
                "-o",
                &d("harness"),
            ],
            "the harness",
            dir,
        )?;
        let out = run(&mut Command::new(d("harness")), dir, "running the harness")
            .map_err(|e| e.replace("{program}", "the host harness"))?;
        if !out.status.success() {
            return Err(format!(
            "the host reference failed (a panic in the user's code on the generated inputs?):\n{}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// The harness: every distinct input generated once, then every job that
/// asks for it called on it (one small function per job).
fn harness_source(jobs: &[HostJob]) -> String {
    let mut cases: Vec<InputSpec> = jobs.iter().flat_map(|j| j.cases.iter().copied()).collect();
    cases.sort_by_key(|c| (c.size, c.seed));
    cases.dedup();
    let mut s = String::from(
        "#![allow(unused)]\nextern crate callbacks;\nextern crate native;\nextern crate rmir_gen;\n",
    );
    let _ = writeln!(s, "const CASES: &[(u64, u64)] = &[");
    for c in &cases {
        let _ = writeln!(s, "    ({}, {}),", c.size, c.seed);
    }
    let _ = writeln!(
        s,
        "];\nconst JOBS: &[(fn(&[i32], u64, u64), &[usize])] = &["
    );
    for (j, job) in jobs.iter().enumerate() {
        let mine: Vec<String> = job
            .cases
            .iter()
            .filter_map(|c| cases.iter().position(|k| k == c))
            .map(|i| i.to_string())
            .collect();
        let _ = writeln!(s, "    (job{j}, &[{}]),", mine.join(", "));
    }
    s.push_str("];\n");
    for (j, job) in jobs.iter().enumerate() {
        let args: Vec<String> = job.arguments.iter().map(literal).collect();
        let _ = writeln!(
            s,
            "fn job{j}(data: &[i32], size: u64, seed: u64) {{\n    native::take_log();\n    let _ = callbacks::{}({});\n    let log = native::take_log();\n    match log.get({}) {{\n        Some(c) if c.data == data.as_ptr() as usize && c.len == data.len() => println!(\"{j} {{size}} {{seed}} {{}} {{}}\", c.init, c.result),\n        Some(_) => println!(\"{j} {{size}} {{seed}} other-data\"),\n        None => println!(\"{j} {{size}} {{seed}} no-call\"),\n    }}\n}}",
            job.caller,
            args.join(", "),
            job.call_index
        );
    }
    s.push_str(
        "fn main() {\n    for (c, &(size, seed)) in CASES.iter().enumerate() {\n        let mut data = vec![0i32; size as usize];\n        rmir_gen::fill_inputs(seed, 0, &mut data);\n        for (run, wanted) in JOBS {\n            if wanted.contains(&c) {\n                run(&data, size, seed);\n            }\n        }\n    }\n}\n",
    );
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
        let job = j
            .parse::<usize>()
            .ok()
            .and_then(|j| jobs.get(j))
            .ok_or_else(bad)?;
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
