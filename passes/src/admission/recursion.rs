//! Rule: no recursion, direct or mutual, among the bodies the callback reaches.

use petgraph::algo::tarjan_scc;

use super::facts::CallKind;
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    let g = &ctx.graph.graph;
    let mut cycles: Vec<Vec<String>> = tarjan_scc(g)
        .into_iter()
        .filter(|scc| scc.len() > 1 || g.contains_edge(scc[0], scc[0]))
        .map(|scc| {
            let mut names: Vec<String> = scc.iter().map(|n| g[*n].clone()).collect();
            names.sort();
            names
        })
        .collect();
    cycles.sort();
    for cycle in cycles {
        // Point at the call that closes the cycle, in the first body of it.
        let head = &cycle[0];
        let Some(b) = ctx.facts.bodies.get(head) else {
            continue;
        };
        let Some(call) = b.calls.iter().find(|c| {
            c.kind == CallKind::Local && c.target.as_ref().is_some_and(|t| cycle.contains(t))
        }) else {
            continue;
        };
        let mut ring = cycle.clone();
        ring.push(cycle[0].clone());
        let message = if cycle.len() == 1 {
            format!("callback reaches the recursive function `{head}`")
        } else {
            format!(
                "callback reaches mutually recursive functions `{}`",
                cycle.join("`, `")
            )
        };
        let mut chain = ctx.graph.chain_to(head);
        chain.push(call.callee.clone());
        out.push(
            Diagnostic::new(
                Code::Recursion,
                message,
                label(call.loc, "recursive call here"),
            )
            .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
            .with_note(format!("call chain: {}", chain.join(" → ")))
            .with_note(format!("cycle: {}", ring.join(" → ")))
            .with_help(format!("rewrite `{head}` as a loop")),
        );
    }
}
