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

/// A value the dialect's enums do not have: the module was not verified
/// (IRDL rejects these), so nothing about it can be trusted.
fn unknown(what: &str, value: &str, at: &ir::Loc) -> String {
    format!(
        "{}: unknown {what} `{value}` in the rmir module",
        at.short()
    )
}

fn call_kind(kind: &str, at: &ir::Loc) -> Result<CallKind, String> {
    Ok(match kind {
        "local" => CallKind::Local,
        "registration" => CallKind::Registration,
        "core" => CallKind::Core,
        "panic" => CallKind::Panic,
        "indirect" => CallKind::Indirect,
        "foreign" => CallKind::Foreign,
        other => return Err(unknown("call kind", other, at)),
    })
}

/// Admission's facts of a module. Every enum value is checked: an unknown
/// one is an error, never a guess.
pub fn read(module: &Module) -> Result<ModuleFacts, String> {
    from_ir(&ir::facts(module))
}

pub fn from_ir(f: &ir::Facts) -> Result<ModuleFacts, String> {
    let registrations = f
        .registrations
        .iter()
        .enumerate()
        .map(|(index, r)| {
            Ok(RegistrationFact {
                index,
                caller: r.caller.clone(),
                function: r.function.clone(),
                provider: r.provider.clone(),
                callback: match r.callback_kind.as_str() {
                    "closure" => CallbackRef::Closure(r.callback.clone()),
                    "fn_item" => CallbackRef::FnItem(r.callback.clone()),
                    "other" => CallbackRef::Other(r.callback.clone()),
                    k => return Err(unknown("callback kind", k, &r.loc)),
                },
                loc: loc(&r.loc),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let closures = f
        .closures
        .iter()
        .map(|c| {
            let captures = f
                .captures_of(&c.body)
                .map(|k| {
                    Ok(CaptureFact {
                        name: k.name.clone(),
                        field: k.field,
                        ty: k.ty.clone(),
                        mode: match k.mode.as_str() {
                            "by_value" => CaptureMode::ByValue,
                            "by_ref" => CaptureMode::ByRef,
                            "by_mut_ref" => CaptureMode::ByMutRef,
                            m => return Err(unknown("capture mode", m, &k.loc)),
                        },
                        loc: loc(&k.loc),
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            let kind = match c.kind.as_str() {
                "fn" => ClosureKind::Fn,
                "fn_mut" => ClosureKind::FnMut,
                "fn_once" => ClosureKind::FnOnce,
                k => return Err(unknown("closure kind", k, &c.loc)),
            };
            Ok((
                c.body.clone(),
                ClosureFact {
                    body: c.body.clone(),
                    kind,
                    loc: loc(&c.loc),
                    captures,
                },
            ))
        })
        .collect::<Result<BTreeMap<_, _>, String>>()?;
    let mut bodies = BTreeMap::new();
    for b in &f.bodies {
        let calls = b
            .calls
            .iter()
            .map(|c| {
                let kind = call_kind(&c.kind, &c.loc)?;
                Ok(CallFact {
                    callee: c.callee.clone(),
                    kind,
                    target: (kind == CallKind::Local).then(|| c.callee.clone()),
                    text: c.text.clone(),
                    args: c.args,
                    loc: loc(&c.loc),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
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
    Ok(ModuleFacts {
        registrations,
        closures,
        bodies,
    })
}
