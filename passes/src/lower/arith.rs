//! `lower-rmir-arith`: checked arithmetic and the casts `arith` has no exact
//! op for.
//!
//! - `rmir.checked {op}` → `llvm.intr.{s,u}{add,sub,mul}.with.overflow` and
//!   two `llvm.extractvalue`s. The op's operands are signless; the
//!   signedness is the MIR type of the stored result (`rmir.store {ty}`),
//!   which the importer always writes into the `(T, bool)` tuple.
//! - `rmir.cast`: `FloatToInt` saturates in Rust (NaN → 0), so it becomes
//!   `fpto{s,u}i` guarded by compares and selects (NaN → 0, out of range →
//!   MIN/MAX; MLIR 22 cannot translate `llvm.intr.fptosi.sat`); `Transmute` between equal widths is a
//!   bitcast; pointer-to-pointer casts are the identity (`!llvm.ptr` is
//!   untyped); pointer ↔ address casts are `ptrtoint`/`inttoptr`.

use super::{
    rewrite::{self, Op, Patch},
    types, LowerError, Plan,
};

pub fn run(rw: &Patch<'_, '_>, _plan: &Plan) -> Result<(), LowerError> {
    let module = rw.module();
    let root = module.as_operation().to_raw();
    for op in rewrite::collect(root, &["rmir.checked", "rmir.cast"]) {
        match rewrite::name(op).as_str() {
            "rmir.checked" => checked(rw, op)?,
            _ => cast(rw, op)?,
        }
    }
    Ok(())
}

/// The MIR type the checked result is stored as.
fn stored_type(op: Op) -> Option<frontend::ty::Ty> {
    let value = rewrite::result(op, 0)?;
    rewrite::users(value)
        .into_iter()
        .find_map(|u| match rewrite::name(u).as_str() {
            "rmir.store" | "rmir.env_write" => rewrite::ty_attr(u, "ty"),
            _ => None,
        })
}

fn checked(rw: &Patch<'_, '_>, op: Op) -> Result<(), LowerError> {
    let kind = rw.str_attr(op, "op")?;
    let (l, r) = (rw.operand(op, 0)?, rw.operand(op, 1)?);
    let ty = rewrite::type_of(l);
    let stored = stored_type(op).ok_or_else(|| {
        rw.error(
            op,
            "the checked result is not stored with its MIR type, so its signedness is unknown",
        )
    })?;
    let signed = types::is_signed(&stored).ok_or_else(|| {
        rw.error(
            op,
            format!("checked arithmetic on the non-integer type `{stored}`"),
        )
    })?;
    let pair = rw.struct_type(&[ty, rw.int_type(1)]);
    let intrinsic = format!(
        "llvm.intr.{}{kind}.with.overflow",
        if signed { "s" } else { "u" }
    );
    let both = rw.emit1(op, &intrinsic, &[l, r], pair, &[])?;
    for i in 0..2 {
        let part_ty = if i == 0 { ty } else { rw.int_type(1) };
        let pos = rw.i64_array(&[i as i64]);
        let part = rw.emit1(
            op,
            "llvm.extractvalue",
            &[both],
            part_ty,
            &[("position", pos)],
        )?;
        rw.replace_uses(rw.result(op, i)?, part);
    }
    rw.erase(op);
    Ok(())
}

fn cast(rw: &Patch<'_, '_>, op: Op) -> Result<(), LowerError> {
    let kind = rw.str_attr(op, "kind")?;
    let from = rw.ty_attr(op, "from")?;
    let to = rw.ty_attr(op, "to")?;
    let v = rw.operand(op, 0)?;
    let out = rw.result(op, 0)?;
    let (vt, ot) = (rewrite::type_of(v), rewrite::type_of(out));
    let new = if kind == "FloatToInt" {
        let signed = types::is_signed(&to)
            .ok_or_else(|| rw.error(op, format!("float-to-int cast to `{to}`")))?;
        saturating_float_to_int(rw, op, v, ot, signed)?
    } else if vt == ot && (kind.starts_with("PtrToPtr") || kind.starts_with("Transmute")) {
        v
    } else if kind.starts_with("Transmute")
        && melior::ir::r#type::IntegerType::try_from(vt).is_ok()
            != melior::ir::r#type::IntegerType::try_from(ot).is_ok()
    {
        rw.emit1(op, "llvm.bitcast", &[v], ot, &[])?
    } else if kind.starts_with("PointerExposeProvenance") {
        rw.emit1(op, "llvm.ptrtoint", &[v], ot, &[])?
    } else if kind.starts_with("PointerWithExposedProvenance") {
        rw.emit1(op, "llvm.inttoptr", &[v], ot, &[])?
    } else {
        return Err(rw.error(
            op,
            format!("the cast `{kind}` from `{from}` to `{to}` is not supported on the GPU"),
        ));
    };
    rw.replace_uses(out, new);
    rw.erase(op);
    Ok(())
}

/// Rust's `as` from float to int: NaN → 0, below the range → MIN, above →
/// MAX, else truncation toward zero. The bounds are powers of two, exact in
/// every float type that can reach them.
fn saturating_float_to_int<'c>(
    rw: &Patch<'c, '_>,
    op: Op,
    v: rewrite::Val,
    ot: melior::ir::Type<'c>,
    signed: bool,
) -> Result<rewrite::Val, LowerError> {
    let width = melior::ir::r#type::IntegerType::try_from(ot)
        .map(|t| t.width())
        .map_err(|_| rw.error(op, "a float-to-int cast to a non-integer"))?;
    if width > 64 {
        return Err(rw.error(
            op,
            "float-to-int casts to 128-bit integers are not supported",
        ));
    }
    let ft = rewrite::type_of(v);
    let (lo, hi) = if signed {
        (-(2f64.powi(width as i32 - 1)), 2f64.powi(width as i32 - 1))
    } else {
        (0.0, 2f64.powi(width as i32))
    };
    let (min, max): (i64, i64) = match (signed, width) {
        (true, 64) => (i64::MIN, i64::MAX),
        (true, w) => (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1),
        (false, _) => (0, -1),
    };
    let float = |x: f64| -> Result<rewrite::Val, LowerError> {
        let attr = rw.float_attr(ft, x, op)?;
        rw.emit1(op, "arith.constant", &[], ft, &[("value", attr)])
    };
    let i1 = rw.int_type(1);
    let cmpf = |pred: i64, a: rewrite::Val, b: rewrite::Val| -> Result<rewrite::Val, LowerError> {
        let p = rw.i64_attr(pred);
        rw.emit1(op, "arith.cmpf", &[a, b], i1, &[("predicate", p)])
    };
    let select = |c, a, b| rw.emit1(op, "arith.select", &[c, a, b], ot, &[]);
    let name = if signed {
        "arith.fptosi"
    } else {
        "arith.fptoui"
    };
    let raw = rw.emit1(op, name, &[v], ot, &[])?;
    let (lo, hi) = (float(lo)?, float(hi)?);
    // arith.cmpf predicates: 3 = oge, 4 = olt, 14 = uno.
    let nan = cmpf(14, v, v)?;
    let big = cmpf(3, v, hi)?;
    let small = cmpf(4, v, lo)?;
    let (min, max, zero) = (
        rw.int_const(op, ot, min)?,
        rw.int_const(op, ot, max)?,
        rw.int_const(op, ot, 0)?,
    );
    let s1 = select(small, min, raw)?;
    let s2 = select(big, max, s1)?;
    select(nan, zero, s2)
}
