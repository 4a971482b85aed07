//! Rule: no mutable callback state: not `FnMut`/`FnOnce`, and no write
//! through the environment anywhere the callback reaches.

use frontend::ty::Ty;

use super::facts::ClosureKind;
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

/// Uses of a `static` in the bodies the callback reaches: the frontend
/// names a static's address constant `static NAME`, typed `*mut T` for a
/// `static mut` and `&T` for an immutable one.
fn statics(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    let mut seen = std::collections::BTreeSet::new();
    for body in ctx.graph.bodies() {
        let Some(b) = ctx.facts.bodies.get(body) else {
            continue;
        };
        for (name, ty, loc) in &b.statics {
            if !seen.insert(name.clone()) {
                continue;
            }
            let mutable = matches!(
                ty,
                Ty::Ptr { mutable: true, .. } | Ty::Ref { mutable: true, .. }
            );
            let d = if mutable {
                Diagnostic::new(
                    Code::MutableState,
                    format!("callback uses the `static mut` `{name}`: shared mutable host state"),
                    label(*loc, format!("`{name}` is read or written in `{body}`")),
                )
                .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                .with_note("a `static` lives in host memory: its address means nothing on the GPU, and other threads may change it while the provider runs")
                .with_help(format!("read `{name}` on the host into a local, and capture that local with `move`"))
            } else {
                Diagnostic::new(
                    Code::UnsupportedMir,
                    format!("callback reads the `static` `{name}`, which lives in host memory"),
                    label(*loc, format!("`{name}` is read in `{body}`")),
                )
                .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                .with_note("a `static` has one address, in host memory; the GPU cannot read it")
                .with_help(format!(
                    "make `{name}` a `const` item, or read it into a local captured with `move`"
                ))
            };
            out.push(d);
        }
    }
}

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    statics(ctx, out);
    let writes: Vec<_> = ctx
        .graph
        .bodies()
        .into_iter()
        .filter_map(|b| ctx.facts.bodies.get(b))
        .flat_map(|b| b.env_writes.iter().map(|(_, at)| *at))
        .collect();
    let kind = ctx.closure.map(|c| c.kind).unwrap_or(ClosureKind::Fn);
    if kind == ClosureKind::Fn && writes.is_empty() {
        return;
    }
    let mut_borrows: Vec<&str> = ctx
        .closure
        .map(|c| {
            c.captures
                .iter()
                .filter(|k| k.mode == super::facts::CaptureMode::ByMutRef)
                .map(|k| k.name.as_str())
                .collect()
        })
        .unwrap_or_default();
    if kind == ClosureKind::FnMut && writes.is_empty() && mut_borrows.is_empty() {
        // Nothing is written: rustc made the closure `FnMut` because the
        // registration function asks for one.
        out.push(
            Diagnostic::new(
                Code::MutableState,
                format!(
                    "callback is registered with `{}`, which takes an `FnMut`, so rustc compiled it as one",
                    ctx.reg.function
                ),
                ctx.callback_label("this closure writes nothing, but its body receives its state by `&mut`"),
            )
            .with_label(ctx.registration_label(format!("`{}` accepts callbacks that mutate their state", ctx.reg.function)))
            .with_note("the GPU provider calls the callback from many threads at once; it runs only `Fn` callbacks, which cannot mutate their state")
            .with_help("register the closure with `native::reduce`, which takes an `Fn`"),
        );
        return;
    }
    let message = match kind {
        ClosureKind::FnMut if writes.is_empty() => format!(
            "callback is `FnMut`: it writes through the captured `&mut` borrow{} {}",
            if mut_borrows.len() == 1 { "" } else { "s" },
            mut_borrows
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
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
