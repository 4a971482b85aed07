//! Rule: nothing the lowering cannot handle in any body the callback reaches.
//!
//! One diagnostic per body, at its first such construct, saying why in
//! terms of the types involved; the others of the body are listed in a
//! note. The MIR text itself is never shown (it is in `driver opt`'s
//! output and the MIR file, at the lines the note gives).

use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    for body in ctx.graph.bodies() {
        let Some(b) = ctx.facts.bodies.get(body) else {
            continue;
        };
        // The `format_args!` values a reported sink (`println!`) consumes
        // are part of that sink's cause.
        let found: Vec<&ir::facts::UnsupportedFact> = b
            .unsupported
            .iter()
            .filter(|u| {
                !u.mir.contains("core::fmt::rt::Argument") && !u.mir.contains("fmt::Arguments")
            })
            .collect();
        let Some(first) = found.first() else { continue };
        let why = |u: &ir::facts::UnsupportedFact| {
            if u.reason.is_empty() {
                "a construct the GPU lowering does not model".to_string()
            } else {
                u.reason.clone()
            }
        };
        let mut d = Diagnostic::new(
            Code::UnsupportedMir,
            format!(
                "callback contains code the GPU lowering cannot handle: {}",
                why(first)
            ),
            label(first.loc, format!("in `{body}`, which runs on the GPU")),
        )
        .with_label(ctx.callback_label("in this callback, which runs on the GPU"));
        let chain = ctx.graph.chain_to(body).join(" → ");
        d = d.with_note(format!("call chain: {chain}"));
        let mut others: Vec<String> = Vec::new();
        for u in &found[1..] {
            let w = why(u);
            if w != why(first) && !others.contains(&w) {
                others.push(w);
            }
        }
        if !others.is_empty() {
            d = d.with_note(format!("also in `{body}`: {}", others.join("; ")));
        }
        let lines: Vec<String> = found
            .iter()
            .filter_map(|u| u.loc.mir_line)
            .map(|l| l.to_string())
            .collect();
        if !lines.is_empty() {
            d = d.with_note(format!(
                "at line{} {} of the MIR rustc printed",
                if lines.len() > 1 { "s" } else { "" },
                lines.join(", ")
            ));
        }
        out.push(d.with_help(super::WHAT_RUNS));
    }
}
