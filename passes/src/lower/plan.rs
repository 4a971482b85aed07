//! The lowering plan, read once before the first pass: which bodies are
//! lowered, their C-safe symbols, each admitted registration's thunk, and
//! the environment layout capture reads use.

use std::collections::{BTreeMap, BTreeSet};

use manifest::env::EnvLayout;
use melior::ir::{operation::OperationLike, Module};

use super::{Callback, LowerError, Options};

/// An admitted registration's exported thunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Thunk {
    /// The registration's index in the module.
    pub registration: usize,
    /// The exported symbol: `int32_t SYMBOL(const void *env, int32_t, int32_t)`.
    pub symbol: String,
    /// The callback body, as prepared MIR names it (`entry::{closure#0}`).
    pub body: String,
    /// The body's symbol after lowering.
    pub body_symbol: String,
    /// Whether the body takes the environment pointer first (a closure).
    pub takes_env: bool,
    /// The environment ABI (admission's `EnvLayout::from_captures`).
    pub env: EnvLayout,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub overflow_checks: bool,
    pub thunks: Vec<Thunk>,
    /// Bodies to lower, as prepared MIR names them, in module order.
    pub kept: Vec<String>,
    /// Body name → its symbol after `select-admitted`.
    pub symbols: BTreeMap<String, String>,
    /// Environment layout of each closure body, by its name and its symbol.
    pub envs: BTreeMap<String, EnvLayout>,
    /// Types of the module's closures that capture nothing (`{closure@…}`):
    /// zero-sized values, so a local holding one has an empty layout.
    pub empty_closures: BTreeSet<String>,
}

fn module_error(module: &Module<'_>, message: String) -> LowerError {
    LowerError {
        pass: "pipeline",
        loc: Box::new(ir::Loc::decode(module.as_operation().location())),
        op: String::new(),
        function: None,
        message,
    }
}

/// `prefix` + the C-safe spelling of `name` (`entry::{closure#0}` →
/// `entry_closure_0`).
pub fn c_symbol(prefix: &str, name: &str) -> String {
    let mut s = prefix.to_string();
    let mut last_us = prefix.ends_with('_');
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c);
            last_us = false;
        } else if !last_us {
            s.push('_');
            last_us = true;
        }
    }
    while s.ends_with('_') {
        s.pop();
    }
    s
}

impl Plan {
    pub fn new(
        module: &Module<'_>,
        callbacks: &[Callback],
        options: &Options,
    ) -> Result<Plan, LowerError> {
        let facts = ir::facts(module);
        let overflow_checks = options
            .overflow_checks
            .unwrap_or_else(|| rewrite_bool_attr(module, "rmir.overflow_checks").unwrap_or(true));
        // Reachable bodies, through local calls.
        let mut wanted: BTreeSet<&str> = BTreeSet::new();
        let mut work: Vec<&str> = callbacks.iter().map(|c| c.abi.body.as_str()).collect();
        while let Some(b) = work.pop() {
            let Some(body) = facts.body(b) else {
                return Err(module_error(
                    module,
                    format!("the admitted callback reaches `{b}`, which has no body in the module"),
                ));
            };
            if !wanted.insert(&body.name) {
                continue;
            }
            for call in &body.calls {
                if call.kind == "local" {
                    work.push(&call.callee);
                }
            }
        }
        let kept: Vec<String> = facts
            .bodies
            .iter()
            .filter(|b| wanted.contains(b.name.as_str()))
            .map(|b| b.name.clone())
            .collect();
        let symbols: BTreeMap<String, String> = kept
            .iter()
            .enumerate()
            .map(|(i, b)| (b.clone(), c_symbol(&format!("rmir_fn{i}_"), b)))
            .collect();
        let mut envs = BTreeMap::new();
        let mut thunks = Vec::new();
        for c in callbacks {
            let body = facts.body(&c.abi.body).ok_or_else(|| {
                module_error(module, format!("no body `{}` in the module", c.abi.body))
            })?;
            let takes_env = body.kind == "closure";
            if takes_env {
                check_env(module, &facts, &c.abi.body, &c.abi.env)?;
                envs.insert(c.abi.body.clone(), c.abi.env.clone());
                envs.insert(symbols[&c.abi.body].clone(), c.abi.env.clone());
            }
            thunks.push(Thunk {
                registration: c.registration,
                symbol: c.abi.thunk.clone(),
                body: c.abi.body.clone(),
                body_symbol: symbols[&c.abi.body].clone(),
                takes_env,
                env: c.abi.env.clone(),
            });
        }
        let mut seen = BTreeSet::new();
        for t in &thunks {
            if !seen.insert(&t.symbol) {
                return Err(module_error(
                    module,
                    format!("two registrations export the thunk `{}`", t.symbol),
                ));
            }
        }
        let empty_closures = facts
            .closures
            .iter()
            .filter(|c| facts.captures_of(&c.body).next().is_none())
            .map(|c| c.ty.clone())
            .collect();
        Ok(Plan {
            overflow_checks,
            thunks,
            kept,
            symbols,
            envs,
            empty_closures,
        })
    }
}

/// The layout must hold exactly the closure's captures, in field order:
/// capture reads find their field by name, and the C++ side by position.
fn check_env(
    module: &Module<'_>,
    facts: &ir::Facts,
    body: &str,
    env: &EnvLayout,
) -> Result<(), LowerError> {
    let mut captures: Vec<&ir::facts::CaptureFact> = facts.captures_of(body).collect();
    captures.sort_by_key(|c| c.field);
    let names: Vec<&str> = captures.iter().map(|c| c.name.as_str()).collect();
    let layout: Vec<&str> = env.fields.iter().map(|f| f.name.as_str()).collect();
    if names != layout {
        return Err(module_error(
            module,
            format!(
                "the environment layout of `{body}` has fields [{}], its captures in field order are [{}]",
                layout.join(", "),
                names.join(", ")
            ),
        ));
    }
    for (c, f) in captures.iter().zip(&env.fields) {
        if c.ty != f.scalar.name() {
            return Err(module_error(
                module,
                format!(
                    "capture `{}` of `{body}` is `{}`, its environment field is `{}`",
                    c.name,
                    c.ty,
                    f.scalar.name()
                ),
            ));
        }
    }
    Ok(())
}

fn rewrite_bool_attr(module: &Module<'_>, name: &str) -> Option<bool> {
    super::rewrite::bool_attr(module.as_operation().to_raw(), name)
}
