//! `select-admitted`: the module keeps only what the GPU runs: the admitted
//! callbacks and the local bodies they reach, each with a C-safe symbol and
//! internal linkage (the exported thunks come later). The module-level fact
//! ops and `rmir.*` attributes go: the plan has read them.

use melior::dialect::llvm;

use super::{
    rewrite::{self, Patch},
    LowerError, Plan,
};

pub fn run(rw: &Patch<'_, '_>, plan: &Plan) -> Result<(), LowerError> {
    let module = rw.module();
    let m = module.as_operation().to_raw();
    for name in rewrite::attr_names(m) {
        if name.starts_with("rmir.") {
            rw.remove_attr(m, &name);
        }
    }
    let internal = llvm::attributes::linkage(rw.ctx, llvm::attributes::Linkage::Internal);
    for op in rewrite::top_level(m) {
        match rewrite::name(op).as_str() {
            "rmir.registration"
            | "rmir.closure"
            | "rmir.capture"
            | "rmir.env_layout"
            | "rmir.element_layout"
            | "rmir.adt_def" => rw.erase(op),
            "func.func" => {
                let name = rw.str_attr(op, "sym_name")?;
                match plan.symbols.get(&name) {
                    None if plan.symbols.values().any(|s| *s == name) => {}
                    None => rw.erase(op),
                    Some(symbol) => {
                        rw.set_attr(op, "sym_name", rw.str(symbol));
                        rw.set_attr(op, "llvm.linkage", internal);
                        for a in ["arg_attrs", "res_attrs", "rmir.kind"] {
                            rw.remove_attr(op, a);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}
