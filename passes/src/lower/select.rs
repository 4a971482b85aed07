//! `select-admitted`: the module keeps only what the GPU runs: the admitted
//! callbacks and the local bodies they reach, each with a C-safe symbol and
//! internal linkage (the exported thunks come later). The module-level fact
//! ops and `rmir.*` attributes go: the plan has read them.

use melior::ir::Module;

use super::{
    rewrite::{self, Rw},
    LowerError, Plan,
};

pub fn run(rw: &Rw<'_>, module: &Module<'_>, plan: &Plan) -> Result<(), LowerError> {
    let m = module.as_operation().to_raw();
    for name in rewrite::attr_names(m) {
        if name.starts_with("rmir.") {
            rewrite::remove_attr(m, &name);
        }
    }
    let internal = rw.attr_text("#llvm.linkage<internal>", m)?;
    for op in rewrite::top_level(m) {
        match rewrite::name(op).as_str() {
            "rmir.registration" | "rmir.closure" | "rmir.capture" | "rmir.env_layout"
            | "rmir.adt_def" => rewrite::erase(op),
            "func.func" => {
                let name = rw.str_attr(op, "sym_name")?;
                match plan.symbols.get(&name) {
                    None if plan.symbols.values().any(|s| *s == name) => {}
                    None => rewrite::erase(op),
                    Some(symbol) => {
                        rewrite::set_attr(op, "sym_name", rw.str(symbol));
                        rewrite::set_attr(op, "llvm.linkage", internal);
                        for a in ["arg_attrs", "res_attrs", "rmir.kind"] {
                            rewrite::remove_attr(op, a);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}
