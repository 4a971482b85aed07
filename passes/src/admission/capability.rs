//! Rule: everything the callback reaches is something the lowering lowers.
//!
//! The rule reads the lowering's own tables rather than a list of its own,
//! so admission and lowering cannot disagree:
//! - an `rmir` op is lowerable when a pass of [`crate::lower::PASSES`]
//!   lowers it (its `lowers` list, which the pipeline also enforces as the
//!   phase invariant after each pass);
//! - a core call is lowerable when [`frontend::registry::CORE_OPS`] has its
//!   name with that operand count and receiver type (the lowering matches
//!   that table's `CoreOp` exhaustively).
//!
//! Writes through the environment and ops the importer could not model have
//! rules of their own (`mutable_state`, `unsupported`).

use std::collections::BTreeSet;

use frontend::registry;

use super::facts::CallKind;
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

/// Ops with a rule of their own.
const OWN_RULE: &[&str] = &["rmir.env_write", "rmir.unsupported"];

/// What an unlowered op is in the user's terms, and the cause it belongs to
/// (the enum ops are one cause: reported once).
fn describe(op: &str) -> (&'static str, String) {
    match op {
        "rmir.discriminant" | "rmir.set_discriminant" | "rmir.downcast" => (
            "enum",
            "uses an enum value (a `match`, `if let` or `?` on an `Option`, `Result`, `Ordering`…)"
                .into(),
        ),
        other => (
            "op",
            format!("uses `{other}`, which the GPU lowering has no lowering for"),
        ),
    }
}

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    for body in ctx.graph.bodies() {
        let Some(b) = ctx.facts.bodies.get(body) else {
            continue;
        };
        // Each distinct cause once per body, at its first occurrence.
        let mut seen = BTreeSet::new();
        for (name, loc) in &b.ops {
            if !name.starts_with("rmir.")
                || OWN_RULE.contains(&name.as_str())
                || crate::lower::is_lowered(name)
            {
                continue;
            }
            let (cause, what) = describe(name);
            let key = if cause == "enum" {
                cause.to_string()
            } else {
                name.clone()
            };
            if !seen.insert(key) {
                continue;
            }
            let chain = ctx.graph.chain_to(body).join(" → ");
            out.push(
                Diagnostic::new(
                    Code::UnsupportedMir,
                    format!("callback {what}, which the GPU cannot run"),
                    label(*loc, format!("in `{body}`, which runs on the GPU")),
                )
                .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                .with_note(format!("call chain: {chain}"))
                .with_help(super::WHAT_RUNS),
            );
        }
        for call in b.calls.iter().filter(|c| c.kind == CallKind::Local) {
            let Some(target) = call.target.as_deref() else {
                continue;
            };
            let Some(callee) = ctx.facts.bodies.get(target) else {
                continue;
            };
            let env = usize::from(ctx.facts.closures.contains_key(target));
            let expected = callee.params.len() + env;
            if call.args == expected || !seen.insert(format!("arity {target}")) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    Code::UnsupportedMir,
                    format!(
                        "callback calls `{target}` with {} operands, where it takes {expected}",
                        call.args
                    ),
                    label(
                        call.loc,
                        "the arguments do not match the callee's parameters",
                    ),
                )
                .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                .with_note(format!("call chain: {}", ctx.graph.chain_text(body, call)))
                .with_help("call the helper directly with its arguments"),
            );
        }
        for call in b.calls.iter().filter(|c| c.kind == CallKind::Core) {
            let receiver = call.receiver.map(|s| s.name()).unwrap_or_default();
            let Some(problem) = registry::core_call_problem(&call.callee, receiver, call.args)
            else {
                continue;
            };
            if !seen.insert(format!("core {} {}", call.callee, problem)) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    Code::UnsupportedMir,
                    format!("callback calls `{}`, which the GPU cannot run here", call.text),
                    label(call.loc, problem),
                )
                .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                .with_note(format!("call chain: {}", ctx.graph.chain_text(body, call)))
                .with_help("`driver explain E0109` lists the core methods the GPU side runs, and on which types"),
            );
        }
    }
}
