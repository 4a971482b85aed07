//! Reads admission's [`ModuleFacts`] off an `rmir` module, through the
//! dialect's own views (`ir::facts`): attributes and locations of
//! `rmir.registration`, `rmir.closure`, `rmir.capture`, `rmir.call`,
//! `rmir.env_write` and `rmir.unsupported` ops, and the bodies' signatures.

use std::collections::BTreeMap;

use melior::ir::Module;

use super::facts::{
    BodyFact, CallFact, CallKind, CallbackRef, CaptureFact, CaptureMode, ClosureFact, ClosureKind,
    Loc, ModuleFacts, RegistrationFact,
};

/// MLIR prints string attributes with `\XX` hex escapes (`\22` for `"`).
fn unescape(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        if let (b'\\', Some(Ok(v))) = (b[i], hex.map(|h| u8::from_str_radix(h, 16))) {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn loc(l: &ir::Loc) -> Loc {
    Loc {
        span: l.source.as_ref().map(|s| s.span),
        mir_line: l.mir.as_ref().map(|m| m.line),
    }
}

fn call_kind(kind: &str) -> CallKind {
    match kind {
        "local" => CallKind::Local,
        "registration" => CallKind::Registration,
        "core" => CallKind::Core,
        "panic" => CallKind::Panic,
        "indirect" => CallKind::Indirect,
        // An unknown kind is treated as the most restrictive.
        _ => CallKind::Foreign,
    }
}

pub fn read(module: &Module) -> ModuleFacts {
    from_ir(&ir::facts(module))
}

pub fn from_ir(f: &ir::Facts) -> ModuleFacts {
    let registrations = f
        .registrations
        .iter()
        .enumerate()
        .map(|(index, r)| RegistrationFact {
            index,
            caller: r.caller.clone(),
            function: r.function.clone(),
            provider: r.provider.clone(),
            callback: match r.callback_kind.as_str() {
                "closure" => CallbackRef::Closure(r.callback.clone()),
                "fn_item" => CallbackRef::FnItem(r.callback.clone()),
                _ => CallbackRef::Other(r.callback.clone()),
            },
            loc: loc(&r.loc),
        })
        .collect();
    let closures = f
        .closures
        .iter()
        .map(|c| {
            let captures = f
                .captures_of(&c.body)
                .map(|k| CaptureFact {
                    name: k.name.clone(),
                    field: k.field,
                    ty: k.ty.clone(),
                    mode: match k.mode.as_str() {
                        "by_ref" => CaptureMode::ByRef,
                        "by_mut_ref" => CaptureMode::ByMutRef,
                        _ => CaptureMode::ByValue,
                    },
                    loc: loc(&k.loc),
                })
                .collect();
            let kind = match c.kind.as_str() {
                "fn_mut" => ClosureKind::FnMut,
                "fn_once" => ClosureKind::FnOnce,
                _ => ClosureKind::Fn,
            };
            (
                c.body.clone(),
                ClosureFact {
                    body: c.body.clone(),
                    kind,
                    loc: loc(&c.loc),
                    captures,
                },
            )
        })
        .collect();
    let mut bodies = BTreeMap::new();
    for b in &f.bodies {
        let calls = b
            .calls
            .iter()
            .map(|c| {
                let kind = call_kind(&c.kind);
                CallFact {
                    callee: c.callee.clone(),
                    kind,
                    target: (kind == CallKind::Local).then(|| c.callee.clone()),
                    text: c.text.clone(),
                    args: c.args,
                    loc: loc(&c.loc),
                }
            })
            .collect();
        let closure_params = f.closure(&b.name).map(|c| c.params.clone());
        bodies.insert(
            b.name.clone(),
            BodyFact {
                name: b.name.clone(),
                params: closure_params.unwrap_or_else(|| b.params.clone()),
                ret: b.ret.clone().unwrap_or_else(|| "()".into()),
                loc: loc(&b.loc),
                calls,
                env_writes: b.env_writes.iter().map(|w| loc(&w.loc)).collect(),
                unsupported: b
                    .unsupported
                    .iter()
                    .map(|u| {
                        let what = unescape(u.str("what").unwrap_or("?"));
                        let reason = unescape(u.str("reason").unwrap_or(""));
                        let text = if reason.is_empty() {
                            format!("`{what}`")
                        } else {
                            format!("`{what}` ({reason})")
                        };
                        (text, loc(&u.loc))
                    })
                    .collect(),
                ops: b
                    .ops
                    .iter()
                    .map(|o| (o.name.clone(), loc(&o.loc)))
                    .collect(),
                statics: b
                    .ops
                    .iter()
                    .filter(|o| o.name == "rmir.constant")
                    .filter_map(|o| {
                        let name = o.str("value")?.strip_prefix("static ")?;
                        Some((name.to_string(), o.str("ty")?.to_string(), loc(&o.loc)))
                    })
                    .collect(),
                fn_items: b
                    .ops
                    .iter()
                    .filter(|o| o.name == "rmir.constant")
                    .filter(|o| o.str("ty").is_some_and(|t| t.starts_with("fn item {")))
                    .filter_map(|o| o.str("value").map(str::to_string))
                    .collect(),
            },
        );
    }
    ModuleFacts {
        registrations,
        closures,
        bodies,
    }
}
