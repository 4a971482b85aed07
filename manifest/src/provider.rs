//! CUDA C++ text for provider instantiations, and each provider's kernel ABI.
//!
//! A translation unit emitted here is self-contained (the provider header is
//! embedded, no `#include`), so NVRTC compiles it with no include path and
//! `nvcc` with none but its own. For a Rust callback the functor calls the
//! thunk `extern "C" __device__ int NAME(const void *env, int a, int b)`,
//! defined elsewhere and linked by nvJitLink; the environment is a kernel
//! parameter passed by value as `__grid_constant__`, so the functor can hand
//! the thunk its address without a per-thread copy. The environment struct
//! spells out every field and padding byte, and `static_assert`s pin its
//! size, alignment and every field's offset, size and alignment to the
//! manifest's [`EnvLayout`]: a disagreement is a compile error, not a wrong
//! answer.

use crate::{
    is_c_identifier, EnvLayout, Kernel, LaunchFacts, Param, ParamKind, Provider, RegistrationId,
    Scalar, Variant,
};
use std::fmt::Write as _;

/// `providers/reduce.cuh`, embedded in every emitted translation unit.
pub const REDUCE_CUH: &str = include_str!("../../providers/reduce.cuh");

/// The stable kernel name for a provider, registration and variant, e.g.
/// `rcb_reduce_i32_r3_rust_ltoir`; the copy kernel is `rcb_copy_i32`.
pub fn kernel_name(
    provider: Provider,
    registration: Option<RegistrationId>,
    variant: Variant,
) -> String {
    match registration {
        Some(r) => format!("rcb_{}_r{}_{}", provider.name(), r.0, variant.name()),
        None => format!("rcb_{}", provider.name()),
    }
}

/// The parameter list of a provider's kernels, in order. `env` is the
/// callback environment (none, or empty, adds no parameter).
pub fn kernel_params(provider: Provider, env: Option<&EnvLayout>) -> Vec<Param> {
    let pointer = |kind| Param {
        kind,
        size: 8,
        align: 8,
    };
    match provider {
        Provider::ReduceI32 => {
            let mut params = vec![
                pointer(ParamKind::Input),
                Param {
                    kind: ParamKind::Len,
                    size: 8,
                    align: 8,
                },
                Param {
                    kind: ParamKind::Init,
                    size: 4,
                    align: 4,
                },
                pointer(ParamKind::Partials),
                pointer(ParamKind::Counter),
                pointer(ParamKind::Output),
            ];
            if let Some(env) = env.filter(|e| !e.is_empty()) {
                params.push(Param {
                    kind: ParamKind::Env,
                    size: env.size,
                    align: env.align,
                });
            }
            params
        }
        Provider::CopyI32 => vec![
            pointer(ParamKind::Input),
            Param {
                kind: ParamKind::Len,
                size: 8,
                align: 8,
            },
            pointer(ParamKind::Output),
        ],
    }
}

/// `(input:8/8, len:8/8, ...)`, for messages.
pub fn describe_params(params: &[Param]) -> String {
    let parts: Vec<String> = params
        .iter()
        .map(|p| {
            let kind = serde_json::to_value(p.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            format!("{kind}:{}/{}", p.size, p.align)
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// One kernel to emit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelRequest {
    /// The reduce provider with a functor that calls a Rust callback's thunk.
    /// `variant` is [`Variant::RustLtoir`] or [`Variant::RustPtx`] (the text
    /// is the same; the variant records how the thunk will be linked).
    ReduceWithThunk {
        registration: RegistrationId,
        variant: Variant,
        thunk: String,
        env: EnvLayout,
    },
    /// The reduce provider with the operation written in C++: `expr` is a C++
    /// expression of `int a`, `int b` and the captures as `env.NAME` (NAME
    /// from [`c_field_names`]), e.g. `"a + b * env.k"`.
    ReduceWithCpp {
        registration: RegistrationId,
        expr: String,
        env: EnvLayout,
    },
    /// The device-to-device copy kernel.
    Copy,
}

/// An emitted translation unit and the manifest entries of its kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranslationUnit {
    pub source: String,
    pub kernels: Vec<Kernel>,
    /// Options NVRTC needs for this source beyond the target and `-dlto`/
    /// `-rdc=true`: `--device-int128` when an environment holds an `i128`
    /// or `u128` (NVRTC rejects the type otherwise; nvcc accepts it).
    pub nvrtc_options: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    #[error("launch facts: {0}")]
    Launch(String),
    #[error("registration {registration}: {source}")]
    Layout {
        registration: RegistrationId,
        source: crate::LayoutError,
    },
    #[error("registration {registration}: thunk `{thunk}` is not a C identifier")]
    Thunk {
        registration: RegistrationId,
        thunk: String,
    },
    #[error("registration {registration}: variant {variant} does not call a thunk")]
    ThunkVariant {
        registration: RegistrationId,
        variant: String,
    },
    #[error("registration {registration}: C++ expression {expr:?} {why}")]
    Expr {
        registration: RegistrationId,
        expr: String,
        why: String,
    },
    #[error("registration {registration}: captures `{first}` and `{second}` both become the C++ field `{c_name}`")]
    FieldCollision {
        registration: RegistrationId,
        first: String,
        second: String,
        c_name: String,
    },
    #[error("kernel `{0}` is requested twice")]
    DuplicateKernel(String),
}

const CPP_KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
];

/// The C++ member name of each environment field: the capture's own name
/// when it is a plain, unreserved C++ identifier (`k`), else `capture{i}_`
/// (a C++ keyword such as `class`, a raw identifier, non-ASCII, or `__`).
pub fn c_field_names(env: &EnvLayout) -> Vec<String> {
    env.fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let name = field.name.as_str();
            let plain = is_c_identifier(name)
                && !name.starts_with('_')
                && !name.contains("__")
                && !name.starts_with("rcb_")
                && !CPP_KEYWORDS.contains(&name);
            if plain {
                name.to_string()
            } else {
                format!("capture{i}_")
            }
        })
        .collect()
}

/// Emits one self-contained translation unit holding `requests`.
pub fn emit_translation_unit(
    requests: &[KernelRequest],
    launch: &LaunchFacts,
) -> Result<TranslationUnit, EmitError> {
    launch.check().map_err(EmitError::Launch)?;
    let mut source = String::new();
    source
        .push_str("// Generated by the `manifest` crate (provider instantiation). Do not edit.\n");
    source.push_str("// Provider header providers/reduce.cuh follows, embedded.\n");
    source.push_str(REDUCE_CUH);
    if !REDUCE_CUH.ends_with('\n') {
        source.push('\n');
    }
    let mut kernels = Vec::with_capacity(requests.len());
    let mut nvrtc_options = Vec::new();
    let wide = |env: &EnvLayout| {
        env.fields
            .iter()
            .any(|f| matches!(f.scalar, Scalar::I128 | Scalar::U128))
    };
    if requests.iter().any(|r| match r {
        KernelRequest::ReduceWithThunk { env, .. } | KernelRequest::ReduceWithCpp { env, .. } => {
            wide(env)
        }
        KernelRequest::Copy => false,
    }) {
        nvrtc_options.push("--device-int128".to_string());
    }
    for request in requests {
        let kernel = emit_kernel(&mut source, request, launch)?;
        if kernels.iter().any(|k: &Kernel| k.name == kernel.name) {
            return Err(EmitError::DuplicateKernel(kernel.name));
        }
        kernels.push(kernel);
    }
    Ok(TranslationUnit {
        source,
        kernels,
        nvrtc_options,
    })
}

fn emit_kernel(
    out: &mut String,
    request: &KernelRequest,
    launch: &LaunchFacts,
) -> Result<Kernel, EmitError> {
    let block = launch.block_size;
    let unroll = launch.items_per_thread / 4;
    match request {
        KernelRequest::Copy => {
            let name = kernel_name(Provider::CopyI32, None, Variant::Plain);
            let _ = write!(
                out,
                "\n// ---- {name}: device-to-device copy (bandwidth ceiling)\n\
                 extern \"C\" __global__ void __launch_bounds__({block}) {name}(\n\
                 \x20   const int *__restrict__ input, unsigned long long len, int *__restrict__ output) {{\n\
                 \x20   rcb::copy_i32<{block}, {unroll}>(input, len, output);\n\
                 }}\n"
            );
            Ok(Kernel {
                name,
                provider: Provider::CopyI32,
                variant: Variant::Plain,
                registration: None,
                thunk: None,
                params: kernel_params(Provider::CopyI32, None),
                launch: *launch,
                cubin: None,
            })
        }
        KernelRequest::ReduceWithThunk {
            registration,
            variant,
            thunk,
            env,
        } => {
            let registration = *registration;
            if !matches!(variant, Variant::RustLtoir | Variant::RustPtx) {
                return Err(EmitError::ThunkVariant {
                    registration,
                    variant: variant.name().to_string(),
                });
            }
            if !is_c_identifier(thunk) {
                return Err(EmitError::Thunk {
                    registration,
                    thunk: thunk.clone(),
                });
            }
            let name = kernel_name(Provider::ReduceI32, Some(registration), *variant);
            let _ = write!(
                out,
                "\n// ---- {name}: reduce_i32, registration {registration}, callback thunk {thunk}\n"
            );
            let env_type = emit_env_struct(out, &name, registration, env)?;
            let _ = writeln!(
                out,
                "extern \"C\" __device__ int {thunk}(const void *env, int a, int b);"
            );
            let op_call = if env_type.is_some() {
                format!("{thunk}(env, a, b)")
            } else {
                format!("{thunk}(rcb::empty_env, a, b)")
            };
            emit_reduce_kernel(out, &name, env_type.as_deref(), &op_call, false, launch);
            Ok(reduce_kernel(
                name,
                registration,
                *variant,
                Some(thunk.clone()),
                env,
                launch,
            ))
        }
        KernelRequest::ReduceWithCpp {
            registration,
            expr,
            env,
        } => {
            let registration = *registration;
            check_expr(registration, expr)?;
            let name = kernel_name(Provider::ReduceI32, Some(registration), Variant::CppFunctor);
            let _ = write!(
                out,
                "\n// ---- {name}: reduce_i32, registration {registration}, hand-written C++ operation\n"
            );
            let env_type = emit_env_struct(out, &name, registration, env)?;
            emit_reduce_kernel(
                out,
                &name,
                env_type.as_deref(),
                &format!("({expr})"),
                true,
                launch,
            );
            Ok(reduce_kernel(
                name,
                registration,
                Variant::CppFunctor,
                None,
                env,
                launch,
            ))
        }
    }
}

fn reduce_kernel(
    name: String,
    registration: RegistrationId,
    variant: Variant,
    thunk: Option<String>,
    env: &EnvLayout,
    launch: &LaunchFacts,
) -> Kernel {
    Kernel {
        name,
        provider: Provider::ReduceI32,
        variant,
        registration: Some(registration),
        thunk,
        params: kernel_params(Provider::ReduceI32, Some(env)),
        launch: *launch,
        cubin: None,
    }
}

fn check_expr(registration: RegistrationId, expr: &str) -> Result<(), EmitError> {
    let fail = |why: &str| EmitError::Expr {
        registration,
        expr: expr.to_string(),
        why: why.to_string(),
    };
    if expr.trim().is_empty() {
        return Err(fail("is empty"));
    }
    // One expression, not statements or preprocessor lines smuggled in.
    if let Some(c) = expr
        .chars()
        .find(|c| matches!(c, ';' | '{' | '}' | '#' | '\\') || c.is_control())
    {
        return Err(fail(&format!(
            "contains {c:?}, which no single expression needs"
        )));
    }
    Ok(())
}

/// Emits the environment struct and its `static_assert`s; returns its type
/// name, or `None` for an empty environment (which has no struct).
fn emit_env_struct(
    out: &mut String,
    kernel: &str,
    registration: RegistrationId,
    env: &EnvLayout,
) -> Result<Option<String>, EmitError> {
    env.check().map_err(|source| EmitError::Layout {
        registration,
        source,
    })?;
    if env.is_empty() {
        let _ = writeln!(
            out,
            "// No captures: the thunk gets rcb::empty_env, which it never reads."
        );
        return Ok(None);
    }
    let names = c_field_names(env);
    for (i, name) in names.iter().enumerate() {
        if let Some(j) = names[..i].iter().position(|n| n == name) {
            return Err(EmitError::FieldCollision {
                registration,
                first: env.fields[j].name.clone(),
                second: env.fields[i].name.clone(),
                c_name: name.clone(),
            });
        }
    }
    let ty = format!("{kernel}_env");
    let _ = writeln!(out, "struct {ty} {{");
    // Members in memory order (rustc's layout is not declaration order).
    let mut members: Vec<(&crate::env::EnvField, &String)> =
        env.fields.iter().zip(&names).collect();
    members.sort_by_key(|(f, _)| f.offset);
    let mut at = 0u64;
    for (field, c_name) in members {
        if field.offset > at {
            let _ = writeln!(
                out,
                "    unsigned char rcb_pad_{at}[{}];",
                field.offset - at
            );
        }
        let _ = writeln!(
            out,
            "    {} {c_name};  // capture `{}`: {}, offset {}",
            field.scalar.c_type(),
            field.name,
            field.scalar,
            field.offset
        );
        at = field.offset + field.size;
    }
    if env.size > at {
        let _ = writeln!(out, "    unsigned char rcb_pad_{at}[{}];", env.size - at);
    }
    let _ = writeln!(out, "}};");
    let what = format!("environment ABI of registration {registration}");
    let _ = writeln!(
        out,
        "static_assert(sizeof({ty}) == {}, \"{what}: size\");",
        env.size
    );
    let _ = writeln!(
        out,
        "static_assert(alignof({ty}) == {}, \"{what}: alignment\");",
        env.align
    );
    // Every field sits at a multiple of its alignment right after the
    // previous member (padding is explicit), so once each field's size and
    // alignment and the total size match, the compiler has inserted no
    // padding of its own and every offset is ours. NVRTC has no constant
    // offsetof, so there that argument is the check; nvcc checks the offsets
    // directly as well.
    let _ = writeln!(out, "#if !defined(__CUDACC_RTC__)");
    for (field, c_name) in env.fields.iter().zip(&names) {
        let _ = writeln!(
            out,
            "static_assert(__builtin_offsetof({ty}, {c_name}) == {}, \"{what}: offset of `{}`\");",
            field.offset, field.name
        );
    }
    let _ = writeln!(out, "#endif");
    for (field, c_name) in env.fields.iter().zip(&names) {
        let f = &field.name;
        let _ = writeln!(
            out,
            "static_assert(sizeof({ty}::{c_name}) == {}, \"{what}: size of `{f}`\");",
            field.size
        );
        let _ = writeln!(
            out,
            "static_assert(alignof(decltype({ty}::{c_name})) == {}, \"{what}: alignment of `{f}`\");",
            field.align
        );
    }
    Ok(Some(ty))
}

fn emit_reduce_kernel(
    out: &mut String,
    name: &str,
    env_type: Option<&str>,
    op_call: &str,
    cpp_expr: bool,
    launch: &LaunchFacts,
) {
    let block = launch.block_size;
    let unroll = launch.items_per_thread / 4;
    let op = format!("{name}_op");
    let _ = writeln!(out, "struct {op} {{");
    match (env_type, cpp_expr) {
        (Some(ty), false) => {
            let _ = writeln!(out, "    const {ty} *env;");
            let _ = writeln!(
                out,
                "    __device__ __forceinline__ int operator()(int a, int b) const {{ return {op_call}; }}"
            );
        }
        (Some(ty), true) => {
            let _ = writeln!(out, "    const {ty} *env_ptr;");
            let _ = writeln!(
                out,
                "    __device__ __forceinline__ int operator()(int a, int b) const {{\n\
                 \x20       const {ty} &env = *env_ptr;\n\
                 \x20       (void)env;\n\
                 \x20       return {op_call};\n\
                 \x20   }}"
            );
        }
        (None, _) => {
            let _ = writeln!(
                out,
                "    __device__ __forceinline__ int operator()(int a, int b) const {{ return {op_call}; }}"
            );
        }
    }
    let _ = writeln!(out, "}};");
    let (env_param, op_value) = match env_type {
        Some(ty) => (
            format!(",\n    const __grid_constant__ {ty} env"),
            format!("{op}{{&env}}"),
        ),
        None => (String::new(), format!("{op}{{}}")),
    };
    let _ = write!(
        out,
        "extern \"C\" __global__ void __launch_bounds__({block}) {name}(\n\
         \x20   const int *__restrict__ input, unsigned long long len, int init, int2 *partials,\n\
         \x20   unsigned int *counter, int *output{env_param}) {{\n\
         \x20   rcb::reduce_i32<{block}, {unroll}>(input, len, init, partials, counter, output, {op_value});\n\
         }}\n"
    );
}
