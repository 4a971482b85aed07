//! `lower-rmir-memory`: MIR's memory model onto LLVM's.
//!
//! - `rmir.local {ty}` → `llvm.alloca` of the local's memory type (a local
//!   the lowering has no layout for, and that nothing uses, is dropped);
//! - `rmir.load`/`rmir.store` → `llvm.load`/`llvm.store`; `rmir.copy` → a
//!   load and a store of the memory type;
//! - `rmir.field`/`rmir.index`/`rmir.const_index` → `llvm.getelementptr`
//!   into the base place's memory type (read off the op that made the base);
//! - `rmir.deref` → a load of the pointer; `rmir.ref` → the address itself;
//! - `rmir.capture_read`/`rmir.capture_addr` → a byte offset from the
//!   environment pointer, at the offset of the capture's field in the
//!   environment ABI (rustc's layout, admission's `closure_env`, in the manifest;
//!   never recomputed here), then a load with the field's alignment (a
//!   `bool` is read as its byte);
//! - `rmir.constant` of a zero-sized value → a zero; `rmir.aggregate` goes
//!   (its field stores follow it).

use frontend::ty::Ty;
use melior::ir::{attribute::TypeAttribute, Attribute, Module, Type};

use super::{
    rewrite::{self, Op, Rw, Val},
    types, LowerError, Plan,
};

const LOWERED: &[&str] = &[
    "rmir.local",
    "rmir.field",
    "rmir.deref",
    "rmir.index",
    "rmir.const_index",
    "rmir.capture_addr",
    "rmir.capture_read",
    "rmir.load",
    "rmir.store",
    "rmir.copy",
    "rmir.ref",
    "rmir.constant",
    "rmir.aggregate",
];

pub fn run(rw: &Rw<'_>, module: &Module<'_>, plan: &Plan) -> Result<(), LowerError> {
    let root = module.as_operation().to_raw();
    let not_lowered = super::not_lowered();
    let not_lowered: Vec<&str> = not_lowered.iter().map(String::as_str).collect();
    if let Some(op) = rewrite::collect(root, &not_lowered).first() {
        return Err(rw.error(*op, "not supported by the GPU lowering"));
    }
    let ops = rewrite::collect(root, LOWERED);
    // The MIR type of every base place, read before any op is rewritten.
    let bases: Vec<Option<Ty>> = ops
        .iter()
        .map(|op| match rewrite::name(*op).as_str() {
            "rmir.field" | "rmir.index" | "rmir.const_index" => {
                rewrite::operand(*op, 0).and_then(place_ty)
            }
            _ => None,
        })
        .collect();
    for (op, base) in ops.into_iter().zip(bases) {
        lower(rw, plan, op, base)?;
    }
    Ok(())
}

/// The MIR type of the place at address `v`, from the op that made it.
fn place_ty(v: Val) -> Option<Ty> {
    // SAFETY: `v` is a live value of the module.
    let def =
        unsafe { mlir_sys::mlirValueIsAOpResult(v).then(|| mlir_sys::mlirOpResultGetOwner(v)) }?;
    let ty = rewrite::ty_attr(def, "ty")?;
    match rewrite::name(def).as_str() {
        "rmir.local" | "rmir.field" | "rmir.capture_addr" | "rmir.index" | "rmir.const_index" => {
            Some(ty)
        }
        "rmir.deref" => match ty {
            Ty::Ref { inner, .. } | Ty::Ptr { inner, .. } => Some(*inner),
            _ => None,
        },
        _ => None,
    }
}

fn memory_type<'c>(rw: &Rw<'c>, plan: &Plan, op: Op, ty: &Ty) -> Result<Type<'c>, LowerError> {
    // A closure that captures nothing is zero-sized (called through
    // `Fn::call` with a pointer to it that its body never reads).
    if matches!(ty, Ty::Closure { .. }) && plan.empty_closures.contains(ty) {
        return rw.ty("!llvm.struct<()>", op);
    }
    let text = types::memory_type(ty).ok_or_else(|| {
        rw.error(
            op,
            format!("the GPU lowering has no memory layout for `{ty}`"),
        )
    })?;
    rw.ty(&text, op)
}

fn gep(
    rw: &Rw<'_>,
    op: Op,
    base: Val,
    indices: &[i32],
    dynamic: &[Val],
    elem: Type<'_>,
) -> Result<Val, LowerError> {
    let list: Vec<String> = indices.iter().map(|i| i.to_string()).collect();
    let raw = rw.attr_text(&format!("array<i32: {}>", list.join(", ")), op)?;
    let elem: Attribute<'_> = TypeAttribute::new(elem).into();
    let ptr = rw.ty("!llvm.ptr", op)?;
    let mut operands = vec![base];
    operands.extend_from_slice(dynamic);
    rw.emit1(
        op,
        "llvm.getelementptr",
        &operands,
        ptr,
        &[("rawConstantIndices", raw), ("elem_type", elem)],
    )
}

/// Byte address of a capture, `env + offset` in the environment ABI, and
/// the field's alignment.
fn capture_address(rw: &Rw<'_>, plan: &Plan, op: Op) -> Result<(Val, u64), LowerError> {
    let name = rw.str_attr(op, "name")?;
    let ty = rw.ty_attr(op, "ty")?;
    let func = rewrite::enclosing_function(op)
        .and_then(|f| rewrite::str_attr(f, "sym_name"))
        .ok_or_else(|| rw.error(op, "a capture read outside a function"))?;
    let env = plan.envs.get(&func).ok_or_else(|| {
        rw.error(
            op,
            format!("`{func}` is not an admitted closure body: no environment layout"),
        )
    })?;
    let field = env.fields.iter().find(|f| f.name == name).ok_or_else(|| {
        rw.error(
            op,
            format!("the environment of `{func}` has no field `{name}`"),
        )
    })?;
    if ty.scalar().map(|s| s.name()) != Some(field.scalar.name()) {
        return Err(rw.error(
            op,
            format!(
                "capture `{name}` is read as `{ty}`, its environment field is `{}`",
                field.scalar.name()
            ),
        ));
    }
    let env_ptr = rw.operand(op, 0)?;
    if field.offset == 0 {
        return Ok((env_ptr, field.align));
    }
    let offset = i32::try_from(field.offset)
        .map_err(|_| rw.error(op, format!("capture `{name}` lies beyond 2 GiB")))?;
    let i8t = rw.ty("i8", op)?;
    Ok((gep(rw, op, env_ptr, &[offset], &[], i8t)?, field.align))
}

fn lower(rw: &Rw<'_>, plan: &Plan, op: Op, base: Option<Ty>) -> Result<(), LowerError> {
    let name = rewrite::name(op);
    let new: Option<Val> = match name.as_str() {
        "rmir.local" => {
            let ty = rw.ty_attr(op, "ty")?;
            let result = rw.result(op, 0)?;
            if memory_type(rw, plan, op, &ty).is_err() && rewrite::users(result).is_empty() {
                None
            } else {
                let t = memory_type(rw, plan, op, &ty)?;
                let i64t = rw.ty("i64", op)?;
                let one = rw.int_const(op, i64t, 1)?;
                let elem: Attribute<'_> = TypeAttribute::new(t).into();
                let ptr = rw.ty("!llvm.ptr", op)?;
                Some(rw.emit1(op, "llvm.alloca", &[one], ptr, &[("elem_type", elem)])?)
            }
        }
        "rmir.load" => {
            let t = rewrite::type_of(rw.result(op, 0)?);
            Some(rw.emit1(op, "llvm.load", &[rw.operand(op, 0)?], t, &[])?)
        }
        "rmir.store" => {
            rw.emit(
                op,
                "llvm.store",
                &[rw.operand(op, 1)?, rw.operand(op, 0)?],
                &[],
                &[],
            )?;
            None
        }
        "rmir.copy" => {
            let ty = rw.ty_attr(op, "ty")?;
            let t = memory_type(rw, plan, op, &ty)?;
            let v = rw.emit1(op, "llvm.load", &[rw.operand(op, 1)?], t, &[])?;
            rw.emit(op, "llvm.store", &[v, rw.operand(op, 0)?], &[], &[])?;
            None
        }
        "rmir.field" => {
            let index = rw.int_attr(op, "index")?;
            let base = base.ok_or_else(|| rw.error(op, "the type of the base place is unknown"))?;
            if !matches!(base, Ty::Tuple(_)) {
                return Err(rw.error(
                    op,
                    format!("fields of `{base}` are not supported by the GPU lowering"),
                ));
            }
            let t = memory_type(rw, plan, op, &base)?;
            let index =
                i32::try_from(index).map_err(|_| rw.error(op, "field index out of range"))?;
            Some(gep(rw, op, rw.operand(op, 0)?, &[0, index], &[], t)?)
        }
        "rmir.index" => {
            let elem = rw.ty_attr(op, "ty")?;
            let t = memory_type(rw, plan, op, &elem)?;
            let idx = rw.operand(op, 1)?;
            Some(gep(rw, op, rw.operand(op, 0)?, &[i32::MIN], &[idx], t)?)
        }
        "rmir.const_index" => {
            let elem = rw.ty_attr(op, "ty")?;
            let t = memory_type(rw, plan, op, &elem)?;
            let offset = rw.int_attr(op, "offset")?;
            let from_end = rewrite::bool_attr(op, "from_end").unwrap_or(false);
            let index = if from_end {
                let len = match &base {
                    Some(Ty::Array(_, len)) => types::array_len(len),
                    _ => None,
                }
                .ok_or_else(|| rw.error(op, "indexing from the end of a slice"))?;
                len as i64 - offset
            } else {
                offset
            };
            let index = i32::try_from(index).map_err(|_| rw.error(op, "index out of range"))?;
            Some(gep(rw, op, rw.operand(op, 0)?, &[index], &[], t)?)
        }
        "rmir.deref" => {
            let ptr = rw.ty("!llvm.ptr", op)?;
            Some(rw.emit1(op, "llvm.load", &[rw.operand(op, 0)?], ptr, &[])?)
        }
        "rmir.ref" => Some(rw.operand(op, 0)?),
        "rmir.capture_addr" => Some(capture_address(rw, plan, op)?.0),
        "rmir.capture_read" => {
            let (addr, align) = capture_address(rw, plan, op)?;
            let t = rewrite::type_of(rw.result(op, 0)?);
            let align = rw.attr_text(&format!("{align} : i64"), op)?;
            if t.to_string() == "i1" {
                // A `bool` is a byte holding 0 or 1 (the C++ side writes it
                // as `bool`): read the byte, keep the low bit, as rustc does.
                let i8t = rw.ty("i8", op)?;
                let byte = rw.emit1(op, "llvm.load", &[addr], i8t, &[("alignment", align)])?;
                Some(rw.emit1(op, "arith.trunci", &[byte], t, &[])?)
            } else {
                Some(rw.emit1(op, "llvm.load", &[addr], t, &[("alignment", align)])?)
            }
        }
        "rmir.constant" => {
            let ty = rw.ty_attr(op, "ty")?;
            let zero_sized = ty.is_unit()
                || matches!(ty, Ty::FnDef { .. } | Ty::Never)
                || rewrite::str_attr(op, "value").as_deref() == Some("ZeroSized");
            if !zero_sized {
                let value = rewrite::str_attr(op, "value").unwrap_or_default();
                return Err(rw.error(
                    op,
                    format!("the constant `{value}` of type `{ty}` is not supported by the GPU lowering"),
                ));
            }
            let t = rewrite::type_of(rw.result(op, 0)?);
            Some(rw.emit1(op, "llvm.mlir.zero", &[], t, &[])?)
        }
        // "rmir.aggregate": its field stores follow.
        _ => None,
    };
    if let (Some(old), Some(new)) = (rewrite::result(op, 0), new) {
        rewrite::replace_uses(old, new);
    }
    rewrite::erase(op);
    Ok(())
}
