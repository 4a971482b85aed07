//! Rule: no mutable callback state: not `FnMut`/`FnOnce`, and no write
//! through the callback's environment.

use frontend::ty::Ty;

use super::captures::{is_numeric_scalar, move_copies_only};
use super::facts::ClosureKind;
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::{Applicability, Diagnostic, Edit, Hoist, Suggestion};

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
            let help = if mutable {
                format!(
                    "read `{name}` on the host into a local, and capture that local with `move`"
                )
            } else {
                format!(
                    "make `{name}` a `const` item, or read it into a local captured with `move`"
                )
            };
            let fix: Vec<Suggestion> = static_fix(ctx, name, ty, body, mutable)
                .map(|edits| Suggestion::new(help.clone(), Applicability::MachineApplicable, edits))
                .into_iter()
                .collect();
            let d = if mutable {
                Diagnostic::new(
                    Code::MutableState,
                    format!("callback uses the `static mut` `{name}`: shared mutable host state"),
                    label(*loc, format!("`{name}` is read or written in `{body}`")),
                )
                .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                .with_note("a `static` lives in host memory: its address means nothing on the GPU, and other threads may change it while the provider runs")
                .with_suggestions(help, fix)
            } else {
                Diagnostic::new(
                    Code::UnsupportedMir,
                    format!("callback reads the `static` `{name}`, which lives in host memory"),
                    label(*loc, format!("`{name}` is read in `{body}`")),
                )
                .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                .with_note("a `static` has one address, in host memory; the GPU cannot read it")
                .with_suggestions(help, fix)
            };
            out.push(d);
        }
    }
}

/// The change for a `static` of a numeric type: an immutable one becomes a
/// `const`; a `static mut` that the closure itself reads (`unsafe { NAME }`)
/// is read once on the host instead, into a local the closure captures.
fn static_fix(ctx: &Ctx<'_>, name: &str, ty: &Ty, body: &str, mutable: bool) -> Option<Vec<Edit>> {
    let pointee = match ty {
        Ty::Ptr { inner, .. } | Ty::Ref { inner, .. } => (**inner).clone(),
        _ => return None,
    };
    if !is_numeric_scalar(&pointee) || name.contains("::") {
        return None;
    }
    if !mutable {
        Some(vec![Edit::StaticToConst {
            name: name.to_string(),
        }])
    } else {
        let closure = ctx
            .closure
            .filter(|c| c.body == body && move_copies_only(c))?;
        let head = closure.loc.span?;
        Some(vec![
            Edit::Hoist(Hoist {
                closure: head,
                place: name.to_string(),
                expr: format!("unsafe {{ {name} }}"),
                name: name.to_lowercase(),
                keep_method_calls: false,
            }),
            Edit::MakeMove { closure: head },
        ])
    }
}

const TO_REDUCE: &str = "register the closure with `native::reduce`, which takes an `Fn`";

/// `reduce_mut` → `reduce` at the registration, for a closure that writes
/// nothing (so it is an `Fn` once nothing asks for an `FnMut`).
fn to_reduce(ctx: &Ctx<'_>, help: &str) -> Vec<Suggestion> {
    let span = ctx
        .reg
        .loc
        .span
        .filter(|_| ctx.reg.function == "reduce_mut");
    span.map(|span| {
        Suggestion::new(
            help,
            Applicability::MachineApplicable,
            vec![Edit::Replace {
                span,
                from: ctx.reg.function.clone(),
                to: "reduce".to_string(),
            }],
        )
    })
    .into_iter()
    .collect()
}

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    statics(ctx, out);
    // Only the callback's own environment is shared by the provider's
    // threads: a closure built inside the callback (a value on each
    // thread's stack, `enumerate`'s counter) may write its own captures.
    let writes: Vec<_> = ctx
        .root
        .and_then(|b| ctx.facts.bodies.get(b))
        .into_iter()
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
            .with_suggestions(TO_REDUCE, to_reduce(ctx, TO_REDUCE)),
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
