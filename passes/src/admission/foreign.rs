//! Rule: every call the callback reaches has a body here (a local helper) or
//! is an allowlisted `core` method; panics are allowed (they trap).

use super::cuda::reaches_cuda;
use super::facts::CallKind;
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    for body in ctx.graph.bodies() {
        let Some(b) = ctx.facts.bodies.get(body) else {
            continue;
        };
        for call in &b.calls {
            if reaches_cuda(call) || !matches!(call.kind, CallKind::Foreign | CallKind::Indirect) {
                continue;
            }
            let chain = ctx.graph.chain_text(body, call);
            let (message, primary) = if call.kind == CallKind::Indirect {
                (
                    format!("callback makes an indirect call through `{}`", call.callee),
                    "the callee is not known at compile time".to_string(),
                )
            } else {
                (
                    format!(
                        "callback calls `{}`, which has no body to compile for the GPU",
                        call.callee
                    ),
                    format!("`{}` is defined outside this file", call.callee),
                )
            };
            out.push(
                Diagnostic::new(Code::ForeignCall, message, label(call.loc, primary))
                    .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                    .with_note(format!("call chain: {chain}"))
                    .with_help("call a helper written in Rust in this file, or an allowlisted `core` method (`wrapping_*`, `min`, `max`, `abs`, ...)"),
            );
        }
    }
}
