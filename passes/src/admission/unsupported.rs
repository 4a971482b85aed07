//! Rule: nothing the lowering cannot handle in any body the callback reaches.

use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    for body in ctx.graph.bodies() {
        let Some(b) = ctx.facts.bodies.get(body) else {
            continue;
        };
        let mut seen = std::collections::BTreeSet::new();
        for (what, loc) in &b.unsupported {
            // Each distinct construct once; and the `format_args!` values a
            // reported sink (`println!`) consumes are part of that cause.
            let construct = what.split_once(" = ").map_or(what.as_str(), |(_, r)| r);
            if what.contains("core::fmt::rt::Argument")
                || what.contains("fmt::Arguments")
                || !seen.insert(construct.to_string())
            {
                continue;
            }
            let mut d = Diagnostic::new(
                Code::UnsupportedMir,
                format!("callback contains MIR the lowering cannot handle: {what}"),
                label(*loc, format!("in `{body}`, which runs on the GPU")),
            )
            .with_label(ctx.callback_label("in this callback, which runs on the GPU"));
            let chain = ctx.graph.chain_to(body).join(" → ");
            d = d.with_note(format!("call chain: {chain}"));
            if let Some(line) = loc.mir_line {
                d = d.with_note(format!(
                    "the statement is at line {line} of the MIR rustc printed"
                ));
            }
            out.push(d.with_help(super::WHAT_RUNS));
        }
    }
}
