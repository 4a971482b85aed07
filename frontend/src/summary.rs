//! A readable summary of a prepared-MIR document, for people and snapshots:
//! registrations, their callbacks with captures, and every call the callback
//! reaches with its resolution. Stable text: no versions, no absolute paths.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::pmir::{Callback, CaptureMode, PreparedMir, Resolution, Span, TerminatorKind};

fn span(s: Option<Span>) -> String {
    s.map(|s| s.to_string()).unwrap_or_else(|| "?".into())
}

fn resolution(r: &Resolution) -> String {
    match r {
        Resolution::Local { body } => format!("local `{body}`"),
        Resolution::Registration { function, provider } => {
            format!("registration `{function}` (provider {provider})")
        }
        Resolution::CoreScalar { method, ty } => format!("core scalar `{method}` on {ty}"),
        Resolution::Panic { .. } => "panic".to_string(),
        Resolution::Indirect => "indirect".to_string(),
        Resolution::Foreign {
            link_name,
            extern_c,
        } => {
            let mut s = if *extern_c { "extern \"C\"" } else { "foreign" }.to_string();
            if let Some(l) = link_name {
                s.push_str(&format!(", linked as `{l}`"));
            }
            s
        }
    }
}

pub fn summary(doc: &PreparedMir) -> String {
    let mut out = String::new();
    let s = &doc.source;
    let opt = s
        .opt_level
        .map(|o| o.to_string())
        .unwrap_or_else(|| "?".into());
    let oc = match s.overflow_checks {
        Some(true) => "on",
        Some(false) => "off",
        None => "?",
    };
    let _ = writeln!(
        out,
        "source {} (opt-level {opt}, overflow checks {oc})",
        s.file
    );
    let closures = doc.closures.len();
    let _ = writeln!(
        out,
        "{} bodies ({} closures), {} registrations",
        doc.bodies.len(),
        closures,
        doc.registrations.len()
    );
    for (i, r) in doc.registrations.iter().enumerate() {
        let _ = writeln!(
            out,
            "\nregistration #{i}: `{}` in {} (bb{}) at {} -> provider {}",
            r.function,
            r.caller,
            r.block.0,
            span(r.span),
            r.provider
        );
        let generics: Vec<String> = r.generics.iter().map(|t| t.to_string()).collect();
        let args: Vec<String> = r.arg_types.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(out, "  generics: [{}]", generics.join(", "));
        let _ = writeln!(out, "  arguments: ({})", args.join(", "));
        let root = match &r.callback {
            Callback::Closure { body } => {
                if let Some(c) = doc.closure(body) {
                    let params: Vec<String> = c.params.iter().map(|t| t.to_string()).collect();
                    let _ = writeln!(
                        out,
                        "  callback: closure `{body}` at {} ({:?}, ({}) -> {})",
                        c.span,
                        c.kind,
                        params.join(", "),
                        c.ret
                    );
                    if c.captures.is_empty() {
                        let _ = writeln!(out, "  captures: none");
                    }
                    for cap in &c.captures {
                        let mode = match cap.mode {
                            CaptureMode::ByValue => "by value",
                            CaptureMode::ByRef => "by reference",
                            CaptureMode::ByMutRef => "by mutable reference",
                        };
                        let _ = writeln!(
                            out,
                            "  capture `{}`: {} (field {}, {mode}) at {}",
                            cap.name,
                            cap.ty,
                            cap.field,
                            span(cap.span)
                        );
                    }
                }
                Some(body.clone())
            }
            Callback::FnItem { body } => {
                match doc.body(body) {
                    Some(b) => {
                        let params: Vec<String> = b.locals[1..=b.arg_count as usize]
                            .iter()
                            .map(|l| l.ty.to_string())
                            .collect();
                        let _ = writeln!(
                            out,
                            "  callback: fn item `{body}` at {} (({}) -> {})",
                            span(b.span),
                            params.join(", "),
                            b.locals[0].ty
                        );
                    }
                    None => {
                        let _ = writeln!(out, "  callback: fn item `{body}` (no body here)");
                    }
                }
                Some(body.clone())
            }
            Callback::Other { ty } => {
                let _ = writeln!(out, "  callback: other `{ty}`");
                None
            }
        };
        // Calls reachable from the callback through local bodies.
        let mut seen = BTreeSet::new();
        let mut stack: Vec<String> = root.into_iter().collect();
        while let Some(name) = stack.pop() {
            if !seen.insert(name.clone()) {
                continue;
            }
            let Some(b) = doc.body(&name) else { continue };
            for block in &b.blocks {
                if let TerminatorKind::Call { callee, .. } = &block.terminator.kind {
                    let _ = writeln!(
                        out,
                        "  call in `{name}`: `{}` -> {} at {}",
                        callee.path,
                        resolution(&callee.resolution),
                        span(callee.span)
                    );
                    if let Resolution::Local { body } = &callee.resolution {
                        stack.push(body.clone());
                    }
                }
            }
        }
    }
    out
}
