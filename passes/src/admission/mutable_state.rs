//! Rule: no mutable callback state: not `FnMut`/`FnOnce`, and no write
//! through the environment anywhere the callback reaches.

use super::facts::ClosureKind;
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    let writes: Vec<_> = ctx
        .graph
        .bodies()
        .into_iter()
        .filter_map(|b| ctx.facts.bodies.get(b))
        .flat_map(|b| b.env_writes.iter().copied())
        .collect();
    let kind = ctx.closure.map(|c| c.kind).unwrap_or(ClosureKind::Fn);
    if kind == ClosureKind::Fn && writes.is_empty() {
        return;
    }
    let message = match kind {
        ClosureKind::FnMut => "callback is `FnMut`: it mutates its captured state".to_string(),
        ClosureKind::FnOnce => "callback is `FnOnce`: it consumes its captured state".to_string(),
        ClosureKind::Fn => "callback writes through its environment".to_string(),
    };
    let mut d = Diagnostic::new(
        Code::MutableState,
        message,
        ctx.callback_label(format!(
            "this closure is registered with `{}` and runs on many GPU threads at once",
            ctx.reg.function
        )),
    );
    for w in writes {
        d = d.with_label(label(w, "captured state is written here"));
    }
    out.push(
        d.with_note("the provider calls the callback from many threads in an order it chooses: writes to captured state would race")
            .with_help("make the callback a pure function of its arguments and immutable captures, and register it with `native::reduce`"),
    );
}
