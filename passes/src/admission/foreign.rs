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
            if reaches_cuda(call, b)
                || !matches!(call.kind, CallKind::Foreign | CallKind::Indirect)
                // `format_args!` machinery: the sink it feeds (`println!`,
                // `format!`) is the one cause reported.
                || frontend::registry::is_fmt_machinery(&call.callee)
            {
                continue;
            }
            let chain = ctx.graph.chain_text(body, call);
            if call.kind == CallKind::Indirect {
                let mut d = Diagnostic::new(
                    Code::ForeignCall,
                    "callback calls through a function pointer, whose target is chosen at run time",
                    label(call.loc, format!("`{}` is a fn pointer here", call.callee)),
                )
                .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                .with_note(format!("call chain: {chain}"));
                if !b.fn_items.is_empty() {
                    let mut items = b.fn_items.clone();
                    items.dedup();
                    d = d.with_note(format!(
                        "the pointer is made from {}",
                        items
                            .iter()
                            .map(|i| format!("`{i}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                out.push(d.with_help(
                    "call the function directly (`if c { f(a, b) } else { g(a, b) }`): the GPU code is compiled from each callee's body",
                ));
                continue;
            }
            let (message, primary) = {
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
