//! The rules IRDL cannot state, checked over a whole module.
//!
//! IRDL checks each op alone (operand/result types, required attributes,
//! enum values, unknown `rmir.*` ops). These need the module:
//! - a `!rmir.call_arg` is made by `rmir.arg` and used exactly once, as an operand
//!   of `rmir.call`;
//! - `rmir.capture_read`/`capture_addr`/`env_write` appear only in closure
//!   bodies, read the body's first argument, and name a capture of that closure;
//! - `rmir.closure` names a `func.func` of the module; `rmir.capture` names an
//!   `rmir.closure`; a closure or fn-item `rmir.registration` names a `func.func`;
//!   a `local` `rmir.call` names a `func.func` (callees are symbols: checked
//!   in every pipeline, since admission verifies before it reads);
//! - every op has a known location.

use std::collections::{HashMap, HashSet};

use melior::ir::{
    block::BlockLike,
    operation::{OperationLike, WalkOrder, WalkResult},
    Module, OperationRef, ValueLike,
};

use crate::{
    diag::{capture_diagnostics, Diagnostic, Severity},
    facts::{int_attr, str_attr, symbol_attr},
    loc::Loc,
};

/// The module breaks the dialect's rules.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyError {
    pub diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for VerifyError {}

/// MLIR's verifier (IRDL included), then the module rules above.
pub fn verify(module: &Module) -> Result<(), VerifyError> {
    let context = module.context();
    // SAFETY: the module borrows its context, which outlives this call.
    let context = unsafe { context.to_ref() };
    let (ok, mut diagnostics) = capture_diagnostics(context, || module.as_operation().verify());
    if !ok {
        if diagnostics.is_empty() {
            diagnostics.push(error(
                module.as_operation(),
                "the module does not verify".into(),
            ));
        }
        return Err(VerifyError { diagnostics });
    }
    let mut errors = Vec::new();
    module_rules(module, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(VerifyError {
            diagnostics: errors,
        })
    }
}

fn error(op: OperationRef<'_, '_>, message: String) -> Diagnostic {
    Diagnostic::error_at(op.location(), format!("'{}' op {message}", op_name(&op)))
}

fn op_name(op: &OperationRef<'_, '_>) -> String {
    crate::text_of(op.name().as_string_ref())
}

fn module_rules(module: &Module, errors: &mut Vec<Diagnostic>) {
    let mut funcs: HashSet<String> = HashSet::new();
    let mut closures: HashMap<String, Vec<(i64, String)>> = HashMap::new();
    let mut top = module.body().first_operation();
    while let Some(op) = top {
        match op_name(&op).as_str() {
            "func.func" => {
                if let Some(n) = str_attr(&op, "sym_name") {
                    funcs.insert(n);
                }
            }
            "rmir.closure" => {
                closures.insert(sym_attr(&op, "body").unwrap_or_default(), Vec::new());
            }
            _ => {}
        }
        top = op.next_in_block();
    }
    let mut top = module.body().first_operation();
    while let Some(op) = top {
        match op_name(&op).as_str() {
            "rmir.closure" => {
                let body = sym_attr(&op, "body").unwrap_or_default();
                if !funcs.contains(&body) {
                    errors.push(error(
                        op,
                        format!("names the body `{body}`, which is not a func.func of this module"),
                    ));
                }
            }
            "rmir.capture" => {
                let c = sym_attr(&op, "closure").unwrap_or_default();
                match closures.get_mut(&c) {
                    Some(list) => list.push((
                        int_attr(&op, "field").unwrap_or(-1),
                        str_attr(&op, "name").unwrap_or_default(),
                    )),
                    None => errors.push(error(
                        op,
                        format!("names the closure `{c}`, which has no rmir.closure"),
                    )),
                }
            }
            "rmir.env_layout" => {
                let c = sym_attr(&op, "closure").unwrap_or_default();
                if !closures.contains_key(&c) {
                    errors.push(error(
                        op,
                        format!("names the closure `{c}`, which has no rmir.closure"),
                    ));
                }
            }
            "rmir.registration" => {
                let kind = str_attr(&op, "callback_kind").unwrap_or_default();
                let cb = sym_attr(&op, "callback");
                if kind == "other" && cb.is_some() {
                    errors.push(error(
                        op,
                        "names a symbol as the callback of kind `other`, which is a type".into(),
                    ));
                }
                let cb = cb.unwrap_or_default();
                if kind != "other" && !funcs.contains(&cb) {
                    errors.push(error(
                        op,
                        format!(
                            "names the callback `{cb}`, which is not a func.func of this module"
                        ),
                    ));
                }
            }
            _ => {}
        }
        top = op.next_in_block();
    }

    // Per-op rules, over every op of the module.
    let mut arg_uses: HashMap<usize, usize> = HashMap::new();
    let mut arg_ops: Vec<(usize, String, String)> = Vec::new();
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        let name = op_name(&op);
        if op.location().to_string() == "loc(unknown)" {
            errors.push(error(op, "has no location".into()));
        }
        if name == "rmir.arg" {
            arg_ops.push((op.hash_value(), op.location().to_string(), name.clone()));
        }
        for v in op.operands() {
            if v.r#type().to_string() != "!rmir.call_arg" {
                continue;
            }
            if name != "rmir.call" {
                errors.push(error(
                    op,
                    "uses a !rmir.call_arg; only rmir.call may".into(),
                ));
            } else if v.is_operation_result() {
                if let Ok(r) = melior::ir::operation::OperationResult::try_from(v) {
                    *arg_uses.entry(r.owner().hash_value()).or_default() += 1;
                }
            }
        }
        let local = str_attr(&op, "kind").as_deref() == Some(vocab::CallKind::Local.name());
        if name == "rmir.call" && !local && sym_attr(&op, "callee").is_some() {
            errors.push(error(
                op,
                "names a symbol as the callee of a call that is not local".into(),
            ));
        }
        if name == "rmir.call" && local {
            let callee = sym_attr(&op, "callee").unwrap_or_default();
            if !funcs.contains(&callee) {
                errors.push(error(
                    op,
                    format!(
                        "calls the local body `{callee}`, which is not a func.func of this module"
                    ),
                ));
            }
        }
        if matches!(
            name.as_str(),
            "rmir.capture_read" | "rmir.capture_addr" | "rmir.env_write"
        ) {
            env_rule(op, &name, &closures, errors);
        }
        WalkResult::Advance
    });
    for (hash, location, _) in arg_ops {
        let uses = arg_uses.get(&hash).copied().unwrap_or(0);
        if uses != 1 {
            let loc = location.clone();
            errors.push(Diagnostic {
                severity: Severity::Error,
                location: loc,
                loc: Loc::default(),
                message: format!(
                    "'rmir.arg' op result is used by {uses} calls; expected exactly one"
                ),
            });
        }
    }
}

fn env_rule(
    op: OperationRef<'_, '_>,
    name: &str,
    closures: &HashMap<String, Vec<(i64, String)>>,
    errors: &mut Vec<Diagnostic>,
) {
    // The enclosing func.func.
    let mut parent = op.parent_operation();
    while let Some(p) = parent {
        if op_name(&p) == "func.func" {
            break;
        }
        parent = p.parent_operation();
    }
    let Some(func) = parent else {
        errors.push(error(op, "is outside any function".into()));
        return;
    };
    let body = str_attr(&func, "sym_name").unwrap_or_default();
    let Some(captures) = closures.get(&body) else {
        errors.push(error(
            op,
            format!("is in `{body}`, which is not a closure body"),
        ));
        return;
    };
    if name != "rmir.env_write" {
        let env_ok = op
            .operand(0)
            .ok()
            .and_then(|v| melior::ir::block::BlockArgument::try_from(v).ok())
            .map(|a| {
                a.argument_number() == 0
                    && a.owner()
                        .parent_operation()
                        .map(|f| f == func)
                        .unwrap_or(false)
            })
            .unwrap_or(false);
        if !env_ok {
            errors.push(error(
                op,
                "must read the environment: the closure body's first argument".into(),
            ));
        }
    }
    let field = int_attr(&op, "field").unwrap_or(-1);
    let cname = str_attr(&op, "name").unwrap_or_default();
    if !captures.iter().any(|(f, n)| *f == field && *n == cname) {
        errors.push(error(
            op,
            format!("names capture `{cname}` (field {field}), which `{body}` does not have"),
        ));
    }
}

/// A symbol-reference attribute's name.
fn sym_attr(op: &OperationRef<'_, '_>, name: &str) -> Option<String> {
    symbol_attr(op.attribute(name).ok()?)
}
