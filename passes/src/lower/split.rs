//! Splitting a lowered module into compilation units.
//!
//! `build` lowers the admitted module once (admission's trial lowering is
//! that lowering) and generates code for it in parallel, in chunks of
//! thunks. MLIR contexts are not shared between threads, so each chunk
//! travels as text: the thunks it exports and every symbol they reach
//! (functions and globals, through any symbol reference in their bodies),
//! in module order, with the module's attributes. Each chunk costs what it
//! holds, not what the file holds.

use std::collections::{BTreeMap, BTreeSet};

use melior::ir::{
    block::BlockLike,
    operation::{OperationLike, WalkOrder, WalkResult},
    Module,
};

use super::LowerError;

/// The part of the lowered `module` that exports `roots` (thunk symbols),
/// as module text that `ir::parse` reads back.
pub fn extract(module: &Module<'_>, roots: &[&str]) -> Result<String, LowerError> {
    Parts::of(module).extract(roots, true)
}

/// A lowered module's top-level symbols and what each one references:
/// read once, then any number of parts taken.
pub struct Parts<'m, 'c> {
    module: &'m Module<'c>,
    refs: BTreeMap<String, BTreeSet<String>>,
}

impl<'m, 'c> Parts<'m, 'c> {
    pub fn of(module: &'m Module<'c>) -> Parts<'m, 'c> {
        let mut refs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut op = module.body().first_operation();
        while let Some(o) = op {
            if let Some(name) = o.attribute("sym_name").ok().and_then(ir::string_attr) {
                let mut used = BTreeSet::new();
                o.walk(WalkOrder::PreOrder, |inner| {
                    for (_, a) in inner.attributes() {
                        if let Some(s) = ir::facts::symbol_attr(a) {
                            used.insert(s);
                        }
                    }
                    WalkResult::Advance
                });
                refs.insert(name, used);
            }
            op = o.next_in_block();
        }
        Parts { module, refs }
    }

    /// The part that exports `roots`, as module text; with `locations`, the
    /// ops' source locations too (code generation's debug information
    /// reads them; without, the text is what the code computes).
    pub fn extract(&self, roots: &[&str], locations: bool) -> Result<String, LowerError> {
        let module = self.module;
        let error = |message: String| LowerError {
            pass: "split",
            loc: Box::new(ir::Loc::decode(module.as_operation().location())),
            op: String::new(),
            function: None,
            message,
        };
        let mut keep: BTreeSet<String> = BTreeSet::new();
        let mut work: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
        while let Some(name) = work.pop() {
            let Some(used) = self.refs.get(&name) else {
                return Err(error(format!(
                    "`{name}` is referenced but is not a symbol of the lowered module"
                )));
            };
            if keep.insert(name) {
                work.extend(used.iter().cloned());
            }
        }
        let mut part = Module::new(module.as_operation().location());
        {
            use melior::ir::operation::OperationMutLike;
            let mut top = part.as_operation_mut();
            for (name, value) in module.as_operation().attributes() {
                let name = name
                    .as_string_ref()
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if name != "sym_name" {
                    top.set_attribute(&name, value);
                }
            }
        }
        let mut op = module.body().first_operation();
        while let Some(o) = op {
            let named = o.attribute("sym_name").ok().and_then(ir::string_attr);
            if named.is_some_and(|n| keep.contains(&n)) {
                part.body().append_operation(ir::clone_operation(&o));
            }
            op = o.next_in_block();
        }
        Ok(if locations {
            ir::print(&part)
        } else {
            ir::print_without_locations(&part)
        })
    }
}
