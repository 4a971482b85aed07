//! `lower-rmir-control`: the panic edges.
//!
//! - `rmir.assert(cond) {expected, kind, message}`: a GPU has no unwinding, so a
//!   failed assert traps: the block is split after the assert and ends in
//!   `cf.cond_br %ok, ^continue, ^trap`, where `^trap` is `llvm.intr.trap`
//!   and `llvm.unreachable` (one trap block per assert, keeping its location).
//!   An assert that is an optional overflow check (`attempt to compute … which
//!   would overflow`, `attempt to negate …`, `attempt to shift …`) is dropped
//!   when overflow checks are off, as rustc's code generation drops it, even
//!   in code inlined from `core`. Division by zero and `MIN / -1` always trap.
//! - `rmir.unreachable` and `rmir.resume`: markers before `llvm.unreachable`;
//!   they go. Cleanup blocks become unreachable code.
//! - `rmir.drop` of a type without drop glue does nothing; any other is an
//!   error (admitted callbacks only hold scalars).

use frontend::pmir::AssertKind;

use super::{
    rewrite::{self, Op, Patch},
    types, LowerError, Plan,
};

pub fn run(rw: &Patch<'_, '_>, plan: &Plan) -> Result<(), LowerError> {
    let module = rw.module();
    let root = module.as_operation().to_raw();
    let ops = rewrite::collect(
        root,
        &[
            "rmir.assert",
            "rmir.unreachable",
            "rmir.resume",
            "rmir.drop",
        ],
    );
    for op in ops {
        match rewrite::name(op).as_str() {
            "rmir.assert" => assert(rw, plan, op)?,
            "rmir.drop" => {
                let ty = rw.ty_attr(op, "ty")?;
                if !types::is_trivially_dropped(&ty, &plan.adts) {
                    return Err(rw.error(
                        op,
                        format!("dropping a `{ty}` runs drop glue, which the GPU lowering does not have"),
                    ));
                }
                rw.erase(op);
            }
            _ => rw.erase(op),
        }
    }
    Ok(())
}

fn assert(rw: &Patch<'_, '_>, plan: &Plan, op: Op) -> Result<(), LowerError> {
    let kind = rw.str_attr(op, "kind")?;
    let kind = AssertKind::from_name(&kind)
        .ok_or_else(|| rw.error(op, format!("unknown assert kind `{kind}`")))?;
    if kind.is_optional_overflow_check() && !plan.overflow_checks {
        rw.erase(op);
        return Ok(());
    }
    let expected = rewrite::bool_attr(op, "expected")
        .ok_or_else(|| rw.error(op, "missing boolean attribute `expected`"))?;
    let cond = rw.operand(op, 0)?;
    let ok = if expected {
        cond
    } else {
        let i1 = rw.int_type(1);
        let t = rw.int_const(op, i1, 1)?;
        rw.emit1(op, "arith.xori", &[cond, t], i1, &[])?
    };
    let block = rewrite::block_of(op).ok_or_else(|| rw.error(op, "assert is not in a block"))?;
    let cont = rw.split_after(op)?;
    let trap = rw.new_block_after(block);
    rw.append(trap, op, "llvm.intr.trap", &[], &[], &[])?;
    rw.append(trap, op, "llvm.unreachable", &[], &[], &[])?;
    let segments = rw.i32_array(&[1, 0, 0]);
    rw.append(
        block,
        op,
        "cf.cond_br",
        &[ok],
        &[cont, trap],
        &[("operandSegmentSizes", segments)],
    )?;
    rw.erase(op);
    Ok(())
}
