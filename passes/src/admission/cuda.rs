//! Rule: the callback never reaches CUDA: no CUDA driver/runtime/library API
//! and no other registration, through any chain of local helpers.

use super::facts::{BodyFact, CallFact, CallKind};
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

/// Prefixes of host-side CUDA APIs: driver (`cuCtxSynchronize`), runtime
/// (`cudaMalloc`), and the libraries. A prefix matches when followed by an
/// upper-case letter or `_`, so `cube` or `curve` do not.
pub const CUDA_API_PREFIXES: &[&str] = &[
    "cu",
    "cuda",
    "nvrtc",
    "nvJitLink",
    "nvvm",
    "cublas",
    "cufft",
    "curand",
    "cusparse",
    "cusolver",
    "cudnn",
    "nccl",
    "nvml",
    "cupti",
];

pub fn is_cuda_api(path: &str) -> bool {
    let name = path.rsplit("::").next().unwrap_or(path);
    CUDA_API_PREFIXES.iter().any(|p| {
        name.strip_prefix(p)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
    })
}

/// Whether a call reaches CUDA (and so belongs to this rule, not `foreign`):
/// a registration, a CUDA API, or a call through a fn pointer that the body
/// may have made from a CUDA API (`body`'s fn items).
pub fn reaches_cuda(call: &CallFact, body: &BodyFact) -> bool {
    cuda_target(call, body).is_some()
}

/// The CUDA API (or registration) a call reaches, by name.
fn cuda_target<'a>(call: &'a CallFact, body: &'a BodyFact) -> Option<&'a str> {
    match call.kind {
        CallKind::Registration => Some(&call.callee),
        CallKind::Foreign | CallKind::Extern if is_cuda_api(&call.callee) => Some(&call.callee),
        CallKind::Indirect => body
            .fn_items
            .iter()
            .find(|f| is_cuda_api(f))
            .map(String::as_str),
        _ => None,
    }
}

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    for body in ctx.graph.bodies() {
        let Some(b) = ctx.facts.bodies.get(body) else {
            continue;
        };
        for call in b.calls.iter().filter(|c| reaches_cuda(c, b)) {
            let chain = ctx.graph.chain_text(body, call);
            let (message, primary, help) = if call.kind == CallKind::Indirect {
                let api = cuda_target(call, b).unwrap_or_default();
                (
                    format!("callback may call the CUDA API `{api}` through a function pointer"),
                    format!(
                        "`{}` holds a pointer made from `{api}` in this function",
                        call.callee
                    ),
                    "call CUDA APIs on the host, before or after the provider runs",
                )
            } else if call.kind == CallKind::Registration {
                (
                    format!(
                        "callback registers another provider through `{}`",
                        call.callee
                    ),
                    "a provider is registered from device code here".to_string(),
                    "register providers on the host, one after another, not from inside a callback",
                )
            } else if !call.text.is_empty() && call.text != call.callee {
                // An extern declared under another name (`link_name`).
                (
                    format!(
                        "callback reaches the CUDA API `{}` through `{}`",
                        call.callee, call.text
                    ),
                    format!("`{}` links to the host API `{}`", call.text, call.callee),
                    "call CUDA APIs on the host, before or after the provider runs",
                )
            } else {
                (
                    format!("callback reaches the CUDA API `{}`", call.callee),
                    format!("`{}` is a host API", call.callee),
                    "call CUDA APIs on the host, before or after the provider runs",
                )
            };
            out.push(
                Diagnostic::new(Code::ReachesCuda, message, label(call.loc, primary))
                    .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                    .with_note(format!("call chain: {chain}"))
                    .with_help(help),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_cuda_api;

    #[test]
    fn cuda_names() {
        for yes in [
            "cuCtxSynchronize",
            "cudaMalloc",
            "cuMemAlloc_v2",
            "nvrtcCompileProgram",
            "cublasSgemm",
            "ffi::cuInit",
        ] {
            assert!(is_cuda_api(yes), "{yes}");
        }
        for no in ["cube", "curve", "abs", "custom", "cuda"] {
            assert!(!is_cuda_api(no), "{no}");
        }
    }
}
