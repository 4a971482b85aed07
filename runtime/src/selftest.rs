//! A self-contained bundle for checking the provider and this runtime on a
//! GPU without the compiler: thunks written in C++ (reading the environment
//! at the manifest's offsets, as lowered Rust callbacks do) stand in for
//! compiled callbacks, and the expected results come from the same
//! operations written in Rust, folded sequentially on the host.
//!
//! Registrations (every op associative and commutative, so the tree
//! reduction must equal the sequential fold exactly):
//! - r0 `(a & m) ^ (b & m)`, captures `m: i32`;
//! - r1 `max(max(a, b), floor + (bias >> 32))` if `enabled`, else `min(a, b)`,
//!   captures `enabled: bool, floor: i16, bias: i64` (padding inside);
//! - r2 `a.wrapping_add(b)`, no captures (the empty-environment path);
//! - r3 `a ^ b ^ k`, `k = c as i32 ^ (w >> 100) as i32 ^ f as i32`, captures
//!   `c: char, w: u128, f: f64` (16-byte alignment). It applies `k` once per
//!   op application, so any element folded twice, dropped, or an empty
//!   partial combined shows up as a wrong parity.

use crate::run::generate_parallel;
use manifest::bundle::standard_case_inputs;
use manifest::provider::{emit_translation_unit, KernelRequest, Operation};
use manifest::{
    BenchSpec, BenchVariant, Bundle, Callback, CaptureValue, Case, EnvLayout, Fingerprint,
    InputSpec, Manifest, Provider, RegistrationId, RegistrationRun, Scalar, Signature, Variant,
    BUNDLE_FORMAT, GENERATOR, MANIFEST_FORMAT,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The nvcc command line the selftest source is meant for (in the fingerprint).
pub const NVCC_FLAGS: &str = "-arch=sm_90 -cubin";
pub const SOURCE_FILE: &str = "selftest.cu";
pub const CUBIN_FILE: &str = "selftest.cubin";
pub const MANIFEST_FILE: &str = "manifest.json";

struct Registration {
    id: RegistrationId,
    captures: Vec<(&'static str, Scalar, Value)>,
    /// C++ body of the thunk given locals `a`, `b` and one local per capture.
    cpp_body: &'static str,
    /// The same operation for the C++ functor variant (captures as env.NAME),
    /// when the benchmark compares against one.
    cpp_expr: Option<&'static str>,
    host: fn(i32, i32) -> i32,
}

const M: i32 = 0x0F0F_0FF5;
const FLOOR: i16 = 995;
const BIAS: i64 = 3 << 32;
const C: char = 'λ';
const W: u128 = 5 << 100;
const F: f64 = 12.75;

fn op_r0(a: i32, b: i32) -> i32 {
    (a & M) ^ (b & M)
}
fn op_r1(a: i32, b: i32) -> i32 {
    a.max(b).max(i32::from(FLOOR) + (BIAS >> 32) as i32)
}
fn op_r2(a: i32, b: i32) -> i32 {
    a.wrapping_add(b)
}
fn op_r3(a: i32, b: i32) -> i32 {
    a ^ b ^ (C as i32 ^ (W >> 100) as i32 ^ F as i32)
}

fn registrations() -> Vec<Registration> {
    vec![
        Registration {
            id: RegistrationId(0),
            captures: vec![("m", Scalar::I32, json!(M))],
            cpp_body: "return (a & m) ^ (b & m);",
            cpp_expr: Some("(a & env.m) ^ (b & env.m)"),
            host: op_r0,
        },
        Registration {
            id: RegistrationId(1),
            captures: vec![
                ("enabled", Scalar::Bool, json!(true)),
                ("floor", Scalar::I16, json!(FLOOR)),
                ("bias", Scalar::I64, json!(BIAS)),
            ],
            cpp_body: "int m = a > b ? a : b; int f = (int)floor + (int)(bias >> 32); \
                       return enabled ? (m > f ? m : f) : (a < b ? a : b);",
            cpp_expr: None,
            host: op_r1,
        },
        Registration {
            id: RegistrationId(2),
            captures: vec![],
            cpp_body: "return (int)((unsigned)a + (unsigned)b);",
            cpp_expr: Some("(int)((unsigned)a + (unsigned)b)"),
            host: op_r2,
        },
        Registration {
            id: RegistrationId(3),
            captures: vec![
                ("c", Scalar::Char, json!(C.to_string())),
                ("w", Scalar::U128, json!(W.to_string())),
                ("f", Scalar::F64, json!(F)),
            ],
            cpp_body: "return a ^ b ^ ((int)c ^ (int)(w >> 100) ^ (int)f);",
            cpp_expr: None,
            host: op_r3,
        },
    ]
}

/// The thunk, reading each capture at its manifest offset.
fn cpp_thunk(name: &str, env: &EnvLayout, body: &str) -> String {
    let mut out = format!("extern \"C\" __device__ int {name}(const void *env, int a, int b) {{\n");
    out.push_str(
        "    const unsigned char *bytes = (const unsigned char *)env;\n    (void)bytes;\n",
    );
    for field in &env.fields {
        let _ = writeln!(
            out,
            "    const {ty} {name} = *(const {ty} *)(bytes + {offset});",
            ty = field.scalar.c_type().unwrap_or("void"),
            name = field.name,
            offset = field.offset
        );
    }
    let _ = writeln!(out, "    {body}\n}}");
    out
}

fn fold(op: fn(i32, i32) -> i32, init: i32, data: &[i32]) -> i32 {
    data.iter().fold(init, |acc, &x| op(acc, x))
}

/// The selftest's files: (file name, contents).
pub struct Selftest {
    pub files: Vec<(String, String)>,
}

/// Builds the selftest source, manifest and bundle. `max_size` drops larger
/// standard cases (and shrinks the benchmark) for quick runs.
pub fn make_selftest(max_size: Option<u64>) -> Result<Selftest, String> {
    let regs = registrations();
    let mut requests = Vec::new();
    let mut callbacks = Vec::new();
    let mut thunks = String::new();
    for reg in &regs {
        let captures: Vec<(&str, Scalar)> = reg.captures.iter().map(|(n, s, _)| (*n, *s)).collect();
        let env = EnvLayout::from_captures(&captures).map_err(|e| e.to_string())?;
        let thunk = format!("selftest_thunk_r{}", reg.id.0);
        thunks.push_str(&cpp_thunk(&thunk, &env, reg.cpp_body));
        let request = |op: Operation| KernelRequest::Callback {
            provider: Provider::Reduce,
            registration: reg.id,
            signature: Signature::fold(Scalar::I32),
            op,
            env: env.clone(),
            ties: manifest::Ties::ByPosition,
        };
        requests.push(request(Operation::Thunk {
            symbol: thunk,
            variant: Variant::RustLtoir,
        }));
        if let Some(expr) = reg.cpp_expr {
            requests.push(request(Operation::Cpp {
                expr: expr.to_string(),
            }));
        }
        callbacks.push(Callback {
            registration: reg.id,
            provider: Provider::Reduce,
            signature: Signature::fold(Scalar::I32),
            origin: Some(format!("runtime/src/selftest.rs (op_r{})", reg.id.0)),
            site: None,
            env,
            sort: None,
            pick: None,
        });
    }
    requests.push(KernelRequest::Copy);
    let tu = emit_translation_unit(&requests).map_err(|e| e.to_string())?;
    let source = format!(
        "{}\n// ---- C++ stand-ins for compiled Rust callbacks (runtime/src/selftest.rs)\n{thunks}",
        tu.source
    );
    let fingerprint = Fingerprint::of_inputs(&[
        (SOURCE_FILE, source.as_bytes()),
        ("nvcc flags", NVCC_FLAGS.as_bytes()),
    ]);
    let manifest = Manifest {
        format: MANIFEST_FORMAT.into(),
        fingerprint: fingerprint.clone(),
        arch: "sm_90".into(),
        cubin: CUBIN_FILE.into(),
        toolchain: BTreeMap::from([(
            "nvcc".to_string(),
            "13.0 (whole-program, C++ thunks)".to_string(),
        )]),
        callbacks,
        kernels: tu.kernels.clone(),
        device_libraries: Vec::new(),
    };
    manifest.validate().map_err(|e| e.to_string())?;

    let inputs: Vec<(InputSpec, u32)> = standard_case_inputs()
        .into_iter()
        .filter(|(spec, _)| max_size.is_none_or(|m| spec.size <= m))
        .collect();
    let mut runs: Vec<RegistrationRun> = Vec::new();
    let mut host = Vec::new();
    for (spec, offset) in &inputs {
        generate_parallel(*spec, &mut host);
        let init = 7 + spec.seed as i32;
        for reg in &regs {
            for kernel in tu.kernels.iter().filter(|k| k.registration == Some(reg.id)) {
                let case = Case {
                    size: spec.size,
                    seed: spec.seed,
                    offset: *offset,
                    init,
                    expected: fold(reg.host, init, &host),
                };
                match runs.iter_mut().find(|r| r.kernel == kernel.name) {
                    Some(run) => run.cases.push(case),
                    None => runs.push(RegistrationRun {
                        registration: reg.id,
                        kernel: kernel.name.clone(),
                        captures: reg
                            .captures
                            .iter()
                            .map(|(n, _, v)| CaptureValue {
                                name: n.to_string(),
                                value: v.clone(),
                            })
                            .collect(),
                        cases: vec![case],
                    }),
                }
            }
        }
    }

    let bench_size = max_size.map_or(1 << 28, |m| m.min(1 << 28));
    let seeds = vec![11, 12, 13, 14];
    let mut variants = Vec::new();
    for reg in regs.iter().filter(|r| r.cpp_expr.is_some()) {
        let mut expected = Vec::new();
        for &seed in &seeds {
            generate_parallel(
                InputSpec {
                    size: bench_size,
                    seed,
                },
                &mut host,
            );
            expected.push(fold(reg.host, 0, &host));
        }
        for kernel in tu.kernels.iter().filter(|k| k.registration == Some(reg.id)) {
            variants.push(BenchVariant::Kernel {
                label: match kernel.variant {
                    Variant::CppFunctor => format!("r{} C++ functor", reg.id.0),
                    _ => format!("r{} thunk (C++ stand-in)", reg.id.0),
                },
                kernel: kernel.name.clone(),
                init: 0,
                expected: expected.clone(),
            });
        }
    }
    variants.extend(manifest::bundle::copy_ceilings());
    let bundle = Bundle {
        format: BUNDLE_FORMAT.into(),
        fingerprint,
        manifest: MANIFEST_FILE.into(),
        generator: GENERATOR.into(),
        registrations: runs,
        bench: Some(BenchSpec {
            size: bench_size,
            seeds,
            warmup: 5,
            repeats: 50,
            passes: 2,
            variants,
        }),
    };
    bundle.validate().map_err(|e| e.to_string())?;
    bundle.check_against(&manifest).map_err(|e| e.to_string())?;
    Ok(Selftest {
        files: vec![
            (SOURCE_FILE.into(), source),
            (MANIFEST_FILE.into(), manifest.to_json()),
            (crate::run::BUNDLE_FILE.into(), bundle.to_json()),
        ],
    })
}
