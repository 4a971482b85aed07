//! `make-thunks`: for every admitted registration, the exported thunk the
//! provider calls:
//!
//! ```c
//! extern "C" int32_t THUNK(const void *env, int32_t a, int32_t b);
//! ```
//!
//! A closure body already takes the environment pointer first (MIR passes
//! `&{closure}` as `_1`), so the thunk forwards all three arguments; an fn
//! item's thunk ignores `env`. The thunk has external linkage and its plain
//! C name; the bodies it calls are internal, so the optimiser inlines them.

use melior::ir::{
    attribute::{StringAttribute, TypeAttribute},
    block::BlockLike,
    operation::OperationBuilder,
    r#type::FunctionType,
    Block, Module, Region, RegionLike, Type,
};

use super::{
    rewrite::{self, Op, Rw},
    LowerError, Plan,
};

pub fn run(rw: &Rw<'_>, module: &Module<'_>, plan: &Plan) -> Result<(), LowerError> {
    let root = module.as_operation().to_raw();
    let funcs = rewrite::top_level(root);
    for thunk in &plan.thunks {
        let body = funcs
            .iter()
            .copied()
            .find(|f| {
                let n = rewrite::str_attr(*f, "sym_name");
                n.as_deref() == Some(&thunk.body_symbol) || n.as_deref() == Some(&thunk.body)
            })
            .ok_or_else(|| {
                rw.error(
                    root,
                    format!("no function `{}` to make a thunk for", thunk.body_symbol),
                )
            })?;
        let callee = rewrite::str_attr(body, "sym_name").unwrap_or_default();
        check_signature(rw, body, thunk.takes_env)?;
        let op = build(rw, body, &thunk.symbol, &callee, thunk.takes_env)?;
        module.body().append_operation(op);
    }
    Ok(())
}

fn check_signature(rw: &Rw<'_>, body: Op, takes_env: bool) -> Result<(), LowerError> {
    let ty = rewrite::attr(body, "function_type")
        .and_then(|a| TypeAttribute::try_from(a).ok())
        .map(|t| t.value().to_string())
        .unwrap_or_default();
    let expected = if takes_env {
        "(!llvm.ptr, i32, i32) -> i32"
    } else {
        "(i32, i32) -> i32"
    };
    if ty != expected {
        return Err(rw.error(
            body,
            format!("the callback body has the type `{ty}`, the thunk needs `{expected}`"),
        ));
    }
    Ok(())
}

fn build<'c>(
    rw: &Rw<'c>,
    body: Op,
    symbol: &str,
    callee: &str,
    takes_env: bool,
) -> Result<melior::ir::Operation<'c>, LowerError> {
    let loc = rewrite::location(body);
    let ptr = rw.ty("!llvm.ptr", body)?;
    let i32t = rw.ty("i32", body)?;
    let inputs: [Type<'c>; 3] = [ptr, i32t, i32t];
    let region = Region::new();
    let block = region.append_block(Block::new(&inputs.map(|t| (t, loc))));
    let mut args = Vec::new();
    for i in usize::from(!takes_env)..3 {
        let a = block
            .argument(i)
            .map_err(|e| rw.error(body, format!("thunk argument {i}: {e}")))?;
        args.push(melior::ir::Value::from(a));
    }
    let sym = rw.attr_text(&format!("@{callee}"), body)?;
    let call = OperationBuilder::new("func.call", loc)
        .add_operands(&args)
        .add_results(&[i32t])
        .add_attributes(&[(rw.ident("callee"), sym)])
        .build()
        .map_err(|e| rw.error(body, format!("cannot build the thunk's call: {e}")))?;
    let call = block.append_operation(call);
    let r = call
        .result(0)
        .map_err(|e| rw.error(body, format!("the thunk's call: {e}")))?;
    let ret = OperationBuilder::new("func.return", loc)
        .add_operands(&[r.into()])
        .build()
        .map_err(|e| rw.error(body, format!("cannot build the thunk's return: {e}")))?;
    block.append_operation(ret);
    let fty = FunctionType::new(rw.ctx, &inputs, &[i32t]);
    OperationBuilder::new("func.func", loc)
        .add_attributes(&[
            (
                rw.ident("sym_name"),
                StringAttribute::new(rw.ctx, symbol).into(),
            ),
            (
                rw.ident("function_type"),
                TypeAttribute::new(fty.into()).into(),
            ),
        ])
        .add_regions([region])
        .build()
        .map_err(|e| rw.error(body, format!("cannot build the thunk `{symbol}`: {e}")))
}
