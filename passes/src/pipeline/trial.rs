//! Admitted means it lowers: after the rules, the admitted callbacks are
//! lowered together, through the standard pipeline, on a copy of the
//! module. A failure is located at an op inside one function; every
//! admitted callback that reaches that function is rejected with E0109 and
//! the lowering's own message, and the rest are tried again, until the
//! lowering succeeds or nothing is left.
//!
//! The rules give the precise, early diagnostics (they read the lowering's
//! tables: `capability`); this step is the guarantee, so that no refusal of
//! the lowering that a rule does not foresee (a type-dependent one, say)
//! can turn an admitted callback into a failed build. One run of the
//! pipeline when everything lowers, which is the common case.

use melior::ir::Module;

use crate::admission::facts::{CallbackRef, ModuleFacts};
use crate::admission::{Outcome, Verdict, WHAT_RUNS};
use crate::call_graph::CallGraph;
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, Label};
use crate::lower::{self, LowerError, Lowered, Options, Pipeline, Plan};

/// Lowers the admitted callbacks of `outcomes` and rejects those the
/// lowering refuses (see the module documentation). Returns the lowered
/// copy of the module when something was admitted: the module code
/// generation reads.
pub fn confirm<'c>(
    module: &Module<'c>,
    facts: &ModuleFacts,
    outcomes: &mut [Outcome],
) -> Option<(Module<'c>, Lowered)> {
    loop {
        let callbacks = super::admitted(outcomes);
        if callbacks.is_empty() {
            return None;
        }
        let error = match lower_copy(module, &callbacks) {
            Ok(lowered) => return Some(lowered),
            Err(e) => e,
        };
        let body = error.function.as_deref().and_then(|symbol| {
            let plan = Plan::new(module, &callbacks, &Options::default()).ok()?;
            plan.symbols
                .iter()
                .find(|(_, s)| s.as_str() == symbol)
                .map(|(b, _)| b.clone())
                .or_else(|| {
                    plan.thunks
                        .iter()
                        .find(|t| t.symbol == symbol)
                        .map(|t| t.body.clone())
                })
        });
        let mut rejected = false;
        for o in outcomes.iter_mut() {
            if !matches!(o.verdict, Verdict::Admitted(_)) {
                continue;
            }
            let root = match &o.registration.callback {
                CallbackRef::Closure(b) | CallbackRef::FnItem(b) => Some(b.as_str()),
                CallbackRef::Other(_) => None,
            };
            let graph = CallGraph::build(facts, root);
            // An error outside any known body rejects every callback: the
            // loop must make progress, and nothing tells them apart.
            let reaches = body.as_deref().is_none_or(|b| graph.nodes.contains_key(b));
            if !reaches {
                continue;
            }
            let chain = body
                .as_deref()
                .map(|b| graph.chain_to(b).join(" → "))
                .unwrap_or_else(|| "?".into());
            o.verdict = Verdict::Rejected(vec![diagnostic(&error, facts, root, &chain)]);
            rejected = true;
        }
        if !rejected {
            // The failing function is reached by no admitted callback (it
            // cannot be, but never loop): reject them all.
            for o in outcomes.iter_mut() {
                if matches!(o.verdict, Verdict::Admitted(_)) {
                    o.verdict = Verdict::Rejected(vec![diagnostic(&error, facts, None, "?")]);
                }
            }
        }
    }
}

/// The standard pipeline on a copy of `module`.
fn lower_copy<'c>(
    module: &Module<'c>,
    callbacks: &[lower::Callback],
) -> Result<(Module<'c>, Lowered), LowerError> {
    let mut copy = ir::clone_module(module).ok_or_else(|| LowerError {
        pass: "admission",
        loc: Box::default(),
        op: String::new(),
        function: None,
        message: "the module could not be copied for the trial lowering".into(),
    })?;
    let lowered = Pipeline::standard().run(&mut copy, callbacks, &Options::default())?;
    Ok((copy, lowered))
}

fn diagnostic(
    error: &LowerError,
    facts: &ModuleFacts,
    root: Option<&str>,
    chain: &str,
) -> Diagnostic {
    let loc = facts.loc(&error.loc);
    let mut d = Diagnostic::new(
        Code::UnsupportedMir,
        format!(
            "callback contains code the GPU lowering cannot handle: {}",
            error.message
        ),
        // The op and the pass are the lowering's names, not the user's:
        // `driver opt` shows them; the diagnostic points at the code.
        Label::new(
            loc.span,
            loc.mir_line,
            "this cannot be compiled for the GPU",
        ),
    );
    if let Some(b) = root.and_then(|r| facts.bodies.get(r)) {
        if b.loc != loc {
            d = d.with_label(Label::new(
                b.loc.span,
                b.loc.mir_line,
                "in this callback, which runs on the GPU",
            ));
        }
    }
    d.with_note(format!("call chain: {chain}"))
        .with_help(WHAT_RUNS)
}
