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
//!   environment ABI (rustc's layout, `plan::closure_env`, in the manifest;
//!   never recomputed here), then a load with the field's alignment (a
//!   `bool` is read as its byte);
//! - `rmir.constant` of a zero-sized value → a zero; of an enum
//!   (`const Option::<i32>::None`, `const Option::<Ordering>::Some(Equal)`)
//!   → a slot holding it; `rmir.aggregate` goes (its field stores follow it);
//! - structs and enums (`types::memory_type`): `rmir.downcast` → the
//!   address of the variant's part, `rmir.discriminant` → a load of the
//!   discriminant, `rmir.set_discriminant`/`rmir.write_discriminant` → a
//!   store of it.

use frontend::adt::{AdtDef, Adts};
use frontend::ty::Ty;
use melior::ir::{attribute::TypeAttribute, r#type::TypeLike, Attribute, Type};

use super::{
    rewrite::{self, Op, Patch, Val},
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
    "rmir.downcast",
    "rmir.discriminant",
    "rmir.set_discriminant",
    "rmir.write_discriminant",
    "rmir.env_write",
];

pub fn run(rw: &Patch<'_, '_>, plan: &Plan) -> Result<(), LowerError> {
    let module = rw.module();
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
                rewrite::operand(*op, 0).and_then(|v| place_ty(v, &plan.adts))
            }
            _ => None,
        })
        .collect();
    for (op, base) in ops.into_iter().zip(bases) {
        lower(rw, plan, op, base)?;
    }
    Ok(())
}

/// The MIR type of the place at address `v`, from the op that made it. A
/// variant's view of an enum (`rmir.downcast`) is the tuple of its fields.
fn place_ty(v: Val, adts: &Adts) -> Option<Ty> {
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
        "rmir.downcast" => {
            let variant = rewrite::str_attr(def, "variant")?;
            let (d, args) = adts.enum_of(&ty)?;
            Some(Ty::Tuple(d.fields(d.variant_index(&variant)?, args)?))
        }
        _ => None,
    }
}

/// The width of an integer type.
fn integer_width(t: Type<'_>) -> Option<i64> {
    let raw = t.to_raw();
    // SAFETY: queries on a live type.
    unsafe {
        mlir_sys::mlirTypeIsAInteger(raw).then(|| mlir_sys::mlirIntegerTypeGetWidth(raw) as i64)
    }
}

/// An enum's definition and arguments, for an op whose `ty` is the enum.
fn enum_def<'a>(
    rw: &Patch<'_, '_>,
    plan: &'a Plan,
    op: Op,
    ty: &'a Ty,
) -> Result<(&'a AdtDef, &'a [Ty]), LowerError> {
    plan.adts
        .enum_of(ty)
        .ok_or_else(|| rw.error(op, format!("the definition of the enum `{ty}` is unknown")))
}

/// The LLVM type of an enum's discriminant.
fn discr_type<'c>(rw: &Patch<'c, '_>, op: Op, def: &AdtDef) -> Result<Type<'c>, LowerError> {
    types::scalar_type(rw.ctx, def.discr)
        .ok_or_else(|| rw.error(op, format!("`{}` has no integer discriminant", def.path)))
}

/// The address of an enum place's discriminant and its LLVM type.
fn discriminant_addr<'c>(
    rw: &Patch<'c, '_>,
    plan: &Plan,
    op: Op,
    ty: &Ty,
) -> Result<(Val, Type<'c>, i64), LowerError> {
    let t = memory_type(rw, plan, op, ty)?;
    let (def, _) = enum_def(rw, plan, op, ty)?;
    let bits = def.discr.size() as i64 * 8;
    let dt = discr_type(rw, op, def)?;
    Ok((rw.gep(op, rw.operand(op, 0)?, &[0, 0], &[], t)?, dt, bits))
}

fn memory_type<'c>(
    rw: &Patch<'c, '_>,
    plan: &Plan,
    op: Op,
    ty: &Ty,
) -> Result<Type<'c>, LowerError> {
    // A closure that captures nothing is zero-sized (called through
    // `Fn::call` with a pointer to it that its body never reads).
    if matches!(ty, Ty::Closure { .. }) && plan.empty_closures.contains(ty) {
        return Ok(rw.struct_type(&[]));
    }
    types::memory_type(rw.ctx, ty, &plan.adts).ok_or_else(|| {
        let why = match ty {
            Ty::Adt { path, .. } if plan.adts.of(ty).is_none() => format!(
                "`{path}` is defined outside this crate, or with a `Drop` impl: the GPU side \
                 lays out the crate's own structs and enums and `core`'s `Option`, `Result`, \
                 `Ordering`"
            ),
            _ => format!("the GPU lowering has no memory layout for `{ty}`"),
        };
        rw.error(op, why)
    })
}

/// Byte address of a capture, `env + offset` in the environment ABI, and
/// the field's alignment.
fn capture_address(rw: &Patch<'_, '_>, plan: &Plan, op: Op) -> Result<(Val, u64), LowerError> {
    let name = rw.str_attr(op, "name")?;
    let ty = rw.ty_attr(op, "ty")?;
    let func = rewrite::enclosing_function(op)
        .and_then(|f| rewrite::str_attr(f, "sym_name"))
        .ok_or_else(|| rw.error(op, "a capture read outside a function"))?;
    // A closure built and called inside a callback: its captures are the
    // fields of the closure value its first argument points at.
    if let Some(closure) = plan.inner_closures.get(&func) {
        let field = rw.int_attr(op, "field")?;
        let field =
            i32::try_from(field).map_err(|_| rw.error(op, "a capture field out of range"))?;
        let t = memory_type(rw, plan, op, closure)?;
        let align = types::align_of(&ty, &plan.adts).unwrap_or(1);
        return Ok((rw.gep(op, rw.operand(op, 0)?, &[0, field], &[], t)?, align));
    }
    let env = plan.envs.get(&func).ok_or_else(|| {
        rw.error(
            op,
            format!("`{func}` is not an admitted closure body: no environment layout"),
        )
    })?;
    if ty.scalar().is_none() {
        return aggregate_capture(rw, plan, op, env, &name, &ty);
    }
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
    let i8t = rw.int_type(8);
    Ok((rw.gep(op, env_ptr, &[offset], &[], i8t)?, field.align))
}

/// A capture that is an aggregate (a tuple, an array, a struct, a closure):
/// its scalars lie in the environment at rustc's offsets (fields `name.i.j`,
/// `closure_layout::leaf_name`), the lowering's value of its type in a
/// stack slot of our layout. The scalars are copied into the slot where the
/// capture is used; the environment is immutable, so every copy is the
/// same, and LLVM keeps them in registers.
fn aggregate_capture(
    rw: &Patch<'_, '_>,
    plan: &Plan,
    op: Op,
    env: &manifest::env::EnvLayout,
    name: &str,
    ty: &Ty,
) -> Result<(Val, u64), LowerError> {
    let leaves: Vec<(&manifest::env::EnvField, Vec<i32>)> = env
        .fields
        .iter()
        .filter_map(|f| {
            let path = f.name.strip_prefix(name)?.strip_prefix('.')?;
            let path = path
                .split('.')
                .map(|i| i.parse::<i32>().ok())
                .collect::<Option<Vec<i32>>>()?;
            Some((f, path))
        })
        .collect();
    // A closure capturing nothing (or only such closures) holds no bytes.
    if leaves.is_empty() && !matches!(ty, Ty::Closure { .. }) {
        return Err(rw.error(
            op,
            format!("the environment has no fields of the capture `{name}` (`{ty}`)"),
        ));
    }
    let t = memory_type(rw, plan, op, ty)?;
    let slot = rw.alloca(op, t)?;
    let env_ptr = rw.operand(op, 0)?;
    let i8t = rw.int_type(8);
    for (field, path) in leaves {
        let offset = i32::try_from(field.offset)
            .map_err(|_| rw.error(op, format!("capture `{name}` lies beyond 2 GiB")))?;
        let from = rw.gep(op, env_ptr, &[offset], &[], i8t)?;
        let leaf = memory_type(rw, plan, op, &Ty::Scalar(field.scalar))?;
        let align = rw.i64_attr(field.align as i64);
        let value = if field.scalar == frontend::ty::Scalar::Bool {
            // A byte holding 0 or 1, as in `rmir.capture_read`.
            let byte = rw.emit1(op, "llvm.load", &[from], i8t, &[("alignment", align)])?;
            rw.emit1(op, "arith.trunci", &[byte], leaf, &[])?
        } else {
            rw.emit1(op, "llvm.load", &[from], leaf, &[("alignment", align)])?
        };
        let mut indices = vec![0];
        indices.extend(path);
        let to = rw.gep(op, slot, &indices, &[], t)?;
        rw.emit(op, "llvm.store", &[value, to], &[], &[])?;
    }
    Ok((slot, types::align_of(ty, &plan.adts).unwrap_or(1)))
}

/// A constant value as MIR prints it inside an enum or struct constant: a
/// variant with its fields (`Some(Equal)`, `Less`), a struct with its named
/// fields in order (`Range::<u32> {{ start: 0_u32, end: 4_u32 }}`), or a
/// scalar (`3_i32`, `true`).
#[derive(Debug, PartialEq)]
struct ConstTree {
    head: String,
    fields: Vec<ConstTree>,
}

fn const_tree(text: &str) -> Option<ConstTree> {
    let text = text.trim();
    if let Some((head, rest)) = text.split_once(" {{ ") {
        let inner = rest.strip_suffix(" }}")?;
        let mut fields = Vec::new();
        let parts = frontend::ty::split_top(inner, ',');
        for part in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
            let (_, value) = part.split_once(": ")?;
            fields.push(const_tree(value)?);
        }
        return Some(ConstTree {
            head: head.to_string(),
            fields,
        });
    }
    // The `(` that opens the variant's fields, not one inside the type's
    // generic arguments (`ControlFlow::<()>::Break(())`).
    let mut angle = 0i32;
    let open = text.char_indices().find_map(|(i, c)| {
        match c {
            '<' => angle += 1,
            '>' => angle -= 1,
            '(' if angle == 0 => return Some(i),
            _ => {}
        }
        None
    });
    let (head, fields) = match open {
        Some(open) if text.ends_with(')') => {
            let inner = &text[open + 1..text.len() - 1];
            let fields = if inner.trim().is_empty() {
                Vec::new()
            } else {
                frontend::ty::split_top(inner, ',')
                    .into_iter()
                    .map(const_tree)
                    .collect::<Option<Vec<_>>>()?
            };
            (&text[..open], fields)
        }
        _ => (text, Vec::new()),
    };
    Some(ConstTree {
        head: head.rsplit("::").next().unwrap_or(head).to_string(),
        fields,
    })
}

/// `const Option::<i32>::None`, `const Less`,
/// `const Option::<Ordering>::Some(Equal)`: a slot of the enum holding the
/// constant; `None` when the constant is not an enum value this reads.
fn enum_constant(
    rw: &Patch<'_, '_>,
    plan: &Plan,
    op: Op,
    ty: &Ty,
) -> Result<Option<Val>, LowerError> {
    let text = rewrite::str_attr(op, "value").unwrap_or_default();
    if let Some(slot) = folded_constant(rw, plan, op, ty, &text)? {
        return Ok(Some(slot));
    }
    let is_struct = plan.adts.struct_fields(ty).is_some() && text.contains(" {{ ");
    if plan.adts.enum_of(ty).is_none() && !is_struct {
        return Ok(None);
    }
    let Some(tree) = const_tree(&text) else {
        return Ok(None);
    };
    let t = memory_type(rw, plan, op, ty)?;
    let slot = rw.alloca(op, t)?;
    if !store_constant(rw, plan, op, slot, t, &mut vec![0], ty, &tree)? {
        return Err(rw.error(
            op,
            format!("the constant `{text}` of type `{ty}` is not supported by the GPU lowering"),
        ));
    }
    Ok(Some(slot))
}

/// `{transmute(0x…): T}`: a value rustc folded to its bytes, for a type
/// holding one scalar that is not zero-sized (`enumerate`'s closure: a
/// zero-sized closure and a `usize` count): the bytes are that scalar
/// (whatever rustc's layout of the rest, which has no bytes). `None` for
/// any other constant.
fn folded_constant(
    rw: &Patch<'_, '_>,
    plan: &Plan,
    op: Op,
    ty: &Ty,
    text: &str,
) -> Result<Option<Val>, LowerError> {
    let Some(hex) = text
        .strip_prefix("{transmute(0x")
        .and_then(|r| r.split_once(')'))
        .map(|(h, _)| h)
    else {
        return Ok(None);
    };
    let mut leaves = Vec::new();
    if !sized_leaves(plan, ty, &mut vec![0], &mut leaves) {
        return Ok(None);
    }
    let [(path, scalar)] = leaves.as_slice() else {
        return Err(rw.error(
            op,
            format!(
                "the folded constant `{text}` holds {} scalars; the GPU lowering reads one",
                leaves.len()
            ),
        ));
    };
    let (Ok(bits), true) = (
        u128::from_str_radix(hex, 16),
        hex.len() as u64 == 2 * scalar.size(),
    ) else {
        return Ok(None);
    };
    let t = memory_type(rw, plan, op, ty)?;
    let slot = rw.alloca(op, t)?;
    let st = memory_type(rw, plan, op, &Ty::Scalar(*scalar))?;
    let it = rw.int_type(8 * scalar.size() as u32);
    let raw = rw.int_const(op, it, bits as i64)?;
    let value = if scalar.is_float() {
        rw.emit1(op, "llvm.bitcast", &[raw], st, &[])?
    } else if *scalar == vocab::Scalar::Bool {
        rw.emit1(op, "arith.trunci", &[raw], st, &[])?
    } else {
        raw
    };
    let addr = rw.gep(op, slot, path, &[], t)?;
    rw.emit(op, "llvm.store", &[value, addr], &[], &[])?;
    Ok(Some(slot))
}

/// The scalars of `ty` that are not zero-sized, each with its path in our
/// layout; false when a part has no known layout.
fn sized_leaves(
    plan: &Plan,
    ty: &Ty,
    path: &mut Vec<i32>,
    out: &mut Vec<(Vec<i32>, vocab::Scalar)>,
) -> bool {
    if let Some(s) = ty.scalar() {
        out.push((path.clone(), s));
        return true;
    }
    if ty.is_unit() || matches!(ty, Ty::FnDef { .. }) || plan.empty_closures.contains(ty) {
        return true;
    }
    let fields = match ty {
        Ty::Tuple(parts) => parts.clone(),
        _ if plan.adts.enum_of(ty).is_some() => return false,
        _ => match plan.adts.struct_fields(ty) {
            Some(f) => f,
            None => return false,
        },
    };
    for (j, f) in fields.iter().enumerate() {
        path.push(j as i32);
        let ok = sized_leaves(plan, f, path, out);
        path.pop();
        if !ok {
            return false;
        }
    }
    true
}

/// Stores the constant `tree` of type `ty` at `path` in the slot of type
/// `t`; `false` when the constant is not one this reads.
#[allow(clippy::too_many_arguments)]
fn store_constant<'c>(
    rw: &Patch<'c, '_>,
    plan: &Plan,
    op: Op,
    slot: Val,
    t: Type<'c>,
    path: &mut Vec<i32>,
    ty: &Ty,
    tree: &ConstTree,
) -> Result<bool, LowerError> {
    if let Some((def, args)) = plan.adts.enum_of(ty) {
        let Some(index) = def.variant_index(&tree.head) else {
            return Ok(false);
        };
        let fields = def.fields(index, args).unwrap_or_default();
        if fields.len() != tree.fields.len() {
            return Ok(false);
        }
        let dt = discr_type(rw, op, def)?;
        let value = rw.int_const(op, dt, def.variants[index].discr as i64)?;
        path.push(0);
        let addr = rw.gep(op, slot, path, &[], t)?;
        rw.emit(op, "llvm.store", &[value, addr], &[], &[])?;
        path.pop();
        for (j, (fty, field)) in fields.iter().zip(&tree.fields).enumerate() {
            path.extend([index as i32 + 1, j as i32]);
            let ok = store_constant(rw, plan, op, slot, t, path, fty, field)?;
            path.truncate(path.len() - 2);
            if !ok {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    // `()`: nothing to store.
    if ty.is_unit() {
        return Ok((tree.head.is_empty() || tree.head == "()") && tree.fields.is_empty());
    }
    // A zero-sized field (`predicate: ZeroSized: {closure@…}`) has one value.
    if plan.empty_closures.contains(ty) || matches!(ty, Ty::FnDef { .. }) {
        return Ok(tree.head.starts_with("ZeroSized"));
    }
    if let Some(fields) = plan.adts.struct_fields(ty) {
        if fields.len() != tree.fields.len() {
            return Ok(false);
        }
        for (j, (fty, field)) in fields.iter().zip(&tree.fields).enumerate() {
            path.push(j as i32);
            let ok = store_constant(rw, plan, op, slot, t, path, fty, field)?;
            path.pop();
            if !ok {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    let Some(s) = ty.scalar() else {
        return Ok(false);
    };
    if !tree.fields.is_empty() {
        return Ok(false);
    }
    let Some(st) = types::scalar_type(rw.ctx, s) else {
        return Ok(false);
    };
    let value = match (tree.head.as_str(), s) {
        ("true", vocab::Scalar::Bool) => rw.int_const(op, st, 1)?,
        ("false", vocab::Scalar::Bool) => rw.int_const(op, st, 0)?,
        (lit, s) if s.is_int() => {
            let digits = lit
                .strip_suffix(s.name())
                .unwrap_or(lit)
                .trim_end_matches('_');
            let Ok(v) = digits.replace('_', "").parse::<i128>() else {
                return Ok(false);
            };
            rw.int_const(op, st, v as i64)?
        }
        _ => return Ok(false),
    };
    let addr = rw.gep(op, slot, path, &[], t)?;
    rw.emit(op, "llvm.store", &[value, addr], &[], &[])?;
    Ok(true)
}

fn lower(rw: &Patch<'_, '_>, plan: &Plan, op: Op, base: Option<Ty>) -> Result<(), LowerError> {
    let name = rewrite::name(op);
    let new: Option<Val> = match name.as_str() {
        "rmir.local" => {
            let ty = rw.ty_attr(op, "ty")?;
            let result = rw.result(op, 0)?;
            if memory_type(rw, plan, op, &ty).is_err() && rewrite::users(result).is_empty() {
                None
            } else {
                let t = memory_type(rw, plan, op, &ty)?;
                let i64t = rw.int_type(64);
                let one = rw.int_const(op, i64t, 1)?;
                let elem: Attribute<'_> = TypeAttribute::new(t).into();
                let ptr = rw.ptr_type();
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
        // A closure built inside a callback writing its own capture
        // (`enumerate`'s counter): admission refused any write through the
        // callback's environment, so what is left is such a value's field.
        "rmir.env_write" => {
            let ty = rw.ty_attr(op, "ty")?;
            let t = memory_type(rw, plan, op, &ty)?;
            let value = rw.operand(op, 1)?;
            let is_ptr = rewrite::type_of(value).to_string() == "!llvm.ptr";
            let value = if is_ptr && t.to_string() != "!llvm.ptr" {
                rw.emit1(op, "llvm.load", &[value], t, &[])?
            } else {
                value
            };
            rw.emit(op, "llvm.store", &[value, rw.operand(op, 0)?], &[], &[])?;
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
            // A struct's fields are laid out as a tuple of them.
            let base = match plan.adts.struct_fields(&base) {
                Some(fields) => Ty::Tuple(fields),
                None => base,
            };
            // An array aggregate (`[const 1_i32, …]`) writes its elements
            // as fields, in order.
            if !matches!(base, Ty::Tuple(_) | Ty::Array(..)) {
                return Err(rw.error(
                    op,
                    format!("fields of `{base}` are not supported by the GPU lowering"),
                ));
            }
            let t = memory_type(rw, plan, op, &base)?;
            let index =
                i32::try_from(index).map_err(|_| rw.error(op, "field index out of range"))?;
            Some(rw.gep(op, rw.operand(op, 0)?, &[0, index], &[], t)?)
        }
        "rmir.index" => {
            let elem = rw.ty_attr(op, "ty")?;
            let t = memory_type(rw, plan, op, &elem)?;
            let idx = rw.operand(op, 1)?;
            Some(rw.gep(op, rw.operand(op, 0)?, &[i32::MIN], &[idx], t)?)
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
            Some(rw.gep(op, rw.operand(op, 0)?, &[index], &[], t)?)
        }
        "rmir.deref" => {
            let ptr = rw.ptr_type();
            Some(rw.emit1(op, "llvm.load", &[rw.operand(op, 0)?], ptr, &[])?)
        }
        "rmir.ref" => Some(rw.operand(op, 0)?),
        "rmir.capture_addr" => Some(capture_address(rw, plan, op)?.0),
        "rmir.capture_read" => {
            let (addr, align) = capture_address(rw, plan, op)?;
            let t = rewrite::type_of(rw.result(op, 0)?);
            let align = rw.i64_attr(align as i64);
            if t.to_string() == "i1" {
                // A `bool` is a byte holding 0 or 1 (the C++ side writes it
                // as `bool`): read the byte, keep the low bit, as rustc does.
                let i8t = rw.int_type(8);
                let byte = rw.emit1(op, "llvm.load", &[addr], i8t, &[("alignment", align)])?;
                Some(rw.emit1(op, "arith.trunci", &[byte], t, &[])?)
            } else {
                Some(rw.emit1(op, "llvm.load", &[addr], t, &[("alignment", align)])?)
            }
        }
        "rmir.downcast" => {
            let ty = rw.ty_attr(op, "ty")?;
            let variant = rw.str_attr(op, "variant")?;
            let (def, _) = enum_def(rw, plan, op, &ty)?;
            let index = def
                .variant_index(&variant)
                .ok_or_else(|| rw.error(op, format!("`{ty}` has no variant `{variant}`")))?;
            let t = memory_type(rw, plan, op, &ty)?;
            Some(rw.gep(op, rw.operand(op, 0)?, &[0, index as i32 + 1], &[], t)?)
        }
        "rmir.discriminant" => {
            let ty = rw.ty_attr(op, "ty")?;
            let (addr, dt, bits) = discriminant_addr(rw, plan, op, &ty)?;
            let d = rw.emit1(op, "llvm.load", &[addr], dt, &[])?;
            let want = rewrite::type_of(rw.result(op, 0)?);
            let want_bits = integer_width(want)
                .ok_or_else(|| rw.error(op, format!("a discriminant read as `{want}`")))?;
            let signed = enum_def(rw, plan, op, &ty)?.0.discr.is_signed();
            Some(match want_bits.cmp(&bits) {
                std::cmp::Ordering::Equal => d,
                std::cmp::Ordering::Less => rw.emit1(op, "arith.trunci", &[d], want, &[])?,
                std::cmp::Ordering::Greater if signed => {
                    rw.emit1(op, "arith.extsi", &[d], want, &[])?
                }
                std::cmp::Ordering::Greater => rw.emit1(op, "arith.extui", &[d], want, &[])?,
            })
        }
        "rmir.set_discriminant" => {
            let ty = rw.ty_attr(op, "ty")?;
            let index = rw.int_attr(op, "variant")?;
            let (def, _) = enum_def(rw, plan, op, &ty)?;
            let discr = usize::try_from(index)
                .ok()
                .and_then(|i| def.variants.get(i))
                .map(|v| v.discr)
                .ok_or_else(|| rw.error(op, format!("`{ty}` has no variant {index}")))?;
            let (addr, dt, _) = discriminant_addr(rw, plan, op, &ty)?;
            let value = rw.int_const(op, dt, discr as i64)?;
            rw.emit(op, "llvm.store", &[value, addr], &[], &[])?;
            None
        }
        "rmir.write_discriminant" => {
            let ty = rw.ty_attr(op, "ty")?;
            let (addr, _, _) = discriminant_addr(rw, plan, op, &ty)?;
            rw.emit(op, "llvm.store", &[rw.operand(op, 1)?, addr], &[], &[])?;
            None
        }
        "rmir.constant" => {
            let ty = rw.ty_attr(op, "ty")?;
            if let Some(slot) = enum_constant(rw, plan, op, &ty)? {
                rw.replace_uses(rw.result(op, 0)?, slot);
                rw.erase(op);
                return Ok(());
            }
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
        rw.replace_uses(old, new);
    }
    rw.erase(op);
    Ok(())
}
