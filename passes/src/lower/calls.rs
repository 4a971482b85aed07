//! `lower-rmir-calls`: every `rmir.call` of an admitted body.
//!
//! - `local` → `func.call` of the callee's symbol (from the plan);
//! - `panic` (a panic entry point or its message constructor) → `llvm.intr.trap`;
//!   a value it would have returned is poison (nothing runs after the trap);
//! - `core` (allowlisted scalar methods and intrinsics) → `arith` ops and
//!   LLVM intrinsics, with Rust's semantics: wrapping ops wrap, saturating
//!   ops saturate, shift and rotate amounts are taken modulo the width, and
//!   the panics of `abs`, `pow`, `clamp`, `wrapping_div`/`wrapping_rem` become
//!   `rmir.assert`s that `lower-rmir-control` lowers (so an overflow check is
//!   dropped with overflow checks off, exactly like an inlined one);
//! - `extern` (a function of an `extern "C"` block, which a device library
//!   given to the link defines: admission checked it) → `func.call` of the
//!   symbol, declared once in the module as a private `func.func` without a
//!   body, with the call's operand and result types;
//! - anything else (registration, indirect, foreign) was rejected by
//!   admission; here it is a located error.
//!
//! The receiver type (and so the signedness, which the signless operands
//! do not carry) is the call's `receiver` type attribute, resolved at import
//! from how MIR spelled the callee (`core::num::<impl i32>::abs`,
//! `<u8 as Ord>::max`, `rotate_left::<u32>`, `fabsf32`).

use frontend::pmir::AssertKind;
use frontend::registry::{self, CoreOp};
use frontend::ty::Scalar;
use melior::ir::{
    attribute::{BoolAttribute, StringAttribute, TypeAttribute},
    block::BlockLike,
    operation::OperationBuilder,
    operation::OperationLike,
    r#type::FunctionType,
    Location, Region, Type,
};
use vocab::CallKind;

use super::{
    rewrite::{self, Op, Patch, Val},
    LowerError, Plan,
};

pub fn run(rw: &Patch<'_, '_>, plan: &Plan) -> Result<(), LowerError> {
    let module = rw.module();
    let root = module.as_operation().to_raw();
    let mut externs = Externs::default();
    for op in rewrite::collect(root, &["rmir.call"]) {
        call(rw, plan, op, &mut externs)?;
    }
    for (symbol, (inputs, results)) in &externs.declared {
        let fty = FunctionType::new(rw.ctx, inputs, results);
        let decl = OperationBuilder::new("func.func", Location::unknown(rw.ctx))
            .add_attributes(&[
                (
                    rw.ident("sym_name"),
                    StringAttribute::new(rw.ctx, symbol).into(),
                ),
                (
                    rw.ident("function_type"),
                    TypeAttribute::new(fty.into()).into(),
                ),
                (
                    rw.ident("sym_visibility"),
                    StringAttribute::new(rw.ctx, "private").into(),
                ),
            ])
            .add_regions([Region::new()])
            .build()
            .map_err(|e| LowerError {
                pass: "lower-rmir-calls",
                loc: Box::new(ir::Loc::decode(module.as_operation().location())),
                op: String::new(),
                function: None,
                message: format!("cannot declare the extern function `{symbol}`: {e}"),
            })?;
        module.body().append_operation(decl);
    }
    Ok(())
}

/// The `extern "C"` functions called, each declared once with the types of
/// its first call (a second call with other types is an error).
#[derive(Default)]
struct Externs<'c> {
    declared: std::collections::BTreeMap<String, (Vec<Type<'c>>, Vec<Type<'c>>)>,
}

/// The op that defines `v`, when it is an op result.
fn defining_op(v: Val) -> Option<Op> {
    // SAFETY: `v` is a live value; the owner query is only made on results.
    unsafe { mlir_sys::mlirValueIsAOpResult(v).then(|| mlir_sys::mlirOpResultGetOwner(v)) }
}

fn call<'c>(
    rw: &Patch<'c, '_>,
    plan: &Plan,
    op: Op,
    externs: &mut Externs<'c>,
) -> Result<(), LowerError> {
    let kind = rw.str_attr(op, "kind")?;
    let kind = CallKind::parse(&kind).map_err(|e| rw.error(op, e.to_string()))?;
    // A local callee is a symbol; any other is a path.
    let callee = if kind == CallKind::Local {
        rw.symbol_attr(op, "callee")?
    } else {
        rw.str_attr(op, "callee")?
    };
    let text = rw.str_attr(op, "text")?;
    let mut arg_ops = Vec::new();
    let mut args = Vec::new();
    for a in rewrite::operands(op) {
        let def = defining_op(a)
            .filter(|d| rewrite::name(*d) == "rmir.arg")
            .ok_or_else(|| rw.error(op, "a call argument is not made by `rmir.arg`"))?;
        args.push(rw.operand(def, 0)?);
        arg_ops.push(def);
    }
    let result = rewrite::result(op, 0);
    let result_ty = result.map(rewrite::type_of);
    let value = match kind {
        CallKind::Local => {
            let symbol = plan.symbols.get(&callee).ok_or_else(|| {
                rw.error(op, format!("`{callee}` is not among the bodies being lowered"))
            })?;
            let sym = rw.symbol(symbol);
            let results: Vec<Type<'_>> = result_ty.into_iter().collect();
            let c = rw.emit(op, "func.call", &args, &results, &[("callee", sym)])?;
            rewrite::result(c, 0)
        }
        CallKind::Extern => {
            let inputs: Vec<Type<'c>> = args.iter().map(|a| rewrite::type_of(*a)).collect();
            let results: Vec<Type<'c>> = result_ty.into_iter().collect();
            let declared = externs
                .declared
                .entry(callee.clone())
                .or_insert_with(|| (inputs.clone(), results.clone()));
            if *declared != (inputs, results.clone()) {
                return Err(rw.error(
                    op,
                    format!("`{callee}` is called with two different signatures"),
                ));
            }
            let sym = rw.symbol(&callee);
            let c = rw.emit(op, "func.call", &args, &results, &[("callee", sym)])?;
            rewrite::result(c, 0)
        }
        CallKind::Panic => {
            rw.emit(op, "llvm.intr.trap", &[], &[], &[])?;
            match result_ty {
                Some(t) => Some(rw.emit1(op, "llvm.mlir.poison", &[], t, &[])?),
                None => None,
            }
        }
        CallKind::Core => {
            // Admission checked the same table; this only guards documents
            // that were not admitted (`driver opt` on any module).
            let receiver = rw.ty_attr(op, "receiver")?.scalar();
            let receiver_name = receiver.map(|s| s.name()).unwrap_or_default();
            if let Some(problem) = registry::core_call_problem(&callee, receiver_name, args.len()) {
                return Err(rw.error(op, problem));
            }
            let entry = registry::core_op(&callee)
                .ok_or_else(|| rw.error(op, format!("`{callee}` is not a core operation")))?;
            let externs = std::cell::RefCell::new(&mut *externs);
            Core {
                rw,
                at: op,
                args: &args,
                // Receiver-less hints (`cold_path`, `likely`) never read it.
                scalar: receiver.unwrap_or(Scalar::Bool),
                result_ty,
                externs: &externs,
            }
            .lower(entry.op)?
        }
        other @ (CallKind::Registration | CallKind::Indirect | CallKind::Foreign) => {
            return Err(rw.error(
                op,
                format!(
                    "a `{}` call of `{text}` cannot run on the GPU (admission should have rejected it)",
                    other.name()
                ),
            ))
        }
    };
    match (result, value) {
        (Some(r), Some(v)) => rw.replace_uses(r, v),
        (Some(_), None) => {
            return Err(rw.error(op, format!("`{text}` produced no value for its result")))
        }
        _ => {}
    }
    rw.erase(op);
    for a in arg_ops {
        rw.erase(a);
    }
    Ok(())
}

struct Core<'r, 'c> {
    rw: &'r Patch<'c, 'r>,
    at: Op,
    args: &'r [Val],
    scalar: Scalar,
    result_ty: Option<Type<'c>>,
    /// Where libdevice's functions are declared.
    externs: &'r std::cell::RefCell<&'r mut Externs<'c>>,
}

impl<'c> Core<'_, 'c> {
    fn arg(&self, i: usize) -> Result<Val, LowerError> {
        self.args.get(i).copied().ok_or_else(|| {
            self.rw
                .error(self.at, format!("expected at least {} arguments", i + 1))
        })
    }

    fn ty(&self) -> Result<Type<'c>, LowerError> {
        Ok(rewrite::type_of(self.arg(0)?))
    }

    fn width(&self) -> Result<u32, LowerError> {
        self.scalar
            .int_bits()
            .ok_or_else(|| self.rw.error(self.at, "an integer method on a non-integer"))
    }

    fn op(&self, name: &str, operands: &[Val], ty: Type<'c>) -> Result<Val, LowerError> {
        self.rw.emit1(self.at, name, operands, ty, &[])
    }

    /// A call of libdevice's `__nv_NAME` (`f64`) or `__nv_NAMEf` (`f32`),
    /// declared once in the module; libNVVM (the LTOIR route) and the PTX
    /// route's link of `libdevice.10.bc` define it.
    fn libdevice(&self, base: &str, operands: &[Val]) -> Result<Val, LowerError> {
        let (symbol, ty) = match self.scalar {
            Scalar::F32 => (format!("__nv_{base}f"), Type::float32(self.rw.ctx)),
            Scalar::F64 => (format!("__nv_{base}"), Type::float64(self.rw.ctx)),
            s => {
                return Err(self.rw.error(
                    self.at,
                    format!("libdevice's `{base}` is not defined on `{}`", s.name()),
                ))
            }
        };
        let inputs: Vec<Type<'c>> = operands.iter().map(|a| rewrite::type_of(*a)).collect();
        let declared = (inputs, vec![ty]);
        let mut externs = self.externs.borrow_mut();
        let known = externs
            .declared
            .entry(symbol.clone())
            .or_insert_with(|| declared.clone());
        if *known != declared {
            return Err(self.rw.error(
                self.at,
                format!("`{symbol}` is called with two different signatures"),
            ));
        }
        let sym = self.rw.symbol(&symbol);
        let c = self
            .rw
            .emit(self.at, "func.call", operands, &[ty], &[("callee", sym)])?;
        rewrite::result(c, 0).ok_or_else(|| self.rw.error(self.at, "a call without a result"))
    }

    /// `x.powi(n)` as the host computes it (compiler-rt's `__powisf2`, and
    /// LLVM's expansion for a constant `n`): binary powering over the bits
    /// of `|n|`, `x`, `x²`, `x⁴`, … multiplied in for each set bit, low bit
    /// first, then the reciprocal for a negative `n`. Unrolled over the 32
    /// bits (a constant `n` folds to its few multiplications); libdevice's
    /// `__nv_powif` rounds differently and does not build with `-g`.
    fn powi(&self) -> Result<Val, LowerError> {
        let (x, n) = (self.arg(0)?, self.arg(1)?);
        let i32t = rewrite::type_of(n);
        let zero = self.int(i32t, 0)?;
        let negative = self.cmpi("slt", n, zero)?;
        let neg_n = self.bin("arith.subi", zero, n)?;
        let bits = self.select(negative, neg_n, n)?;
        let one = self.int(i32t, 1)?;
        let mut r = self.float(1.0)?;
        let mut a = x;
        for i in 0..32 {
            let shift = self.int(i32t, i)?;
            let b = self.bin("arith.shrui", bits, shift)?;
            let b = self.bin("arith.andi", b, one)?;
            let set = self.cmpi("ne", b, zero)?;
            let times = self.bin("arith.mulf", r, a)?;
            r = self.select(set, times, r)?;
            if i < 31 {
                a = self.bin("arith.mulf", a, a)?;
            }
        }
        let unit = self.float(1.0)?;
        let inverse = self.bin("arith.divf", unit, r)?;
        self.select(negative, inverse, r)
    }

    /// `isqrt` of an unsigned integer: the square root of the value as an
    /// `f64`, truncated, is exact below 2^52 (the root of `k² - 1` lies
    /// more than an `f64` ulp below `k`); a 64-bit value, rounded on the
    /// way to `f64`, gets one correction each way, its squares in 128 bits.
    fn isqrt(&self, x: Val) -> Result<Val, LowerError> {
        let t = rewrite::type_of(x);
        let bits = self.scalar.int_bits().unwrap_or(0);
        if bits > 64 {
            return Err(self.rw.error(
                self.at,
                format!(
                    "`isqrt` of `{}` is not supported by the GPU lowering",
                    self.scalar.name()
                ),
            ));
        }
        let f64t = Type::float64(self.rw.ctx);
        let xf = self.op("arith.uitofp", &[x], f64t)?;
        let rf = self.op("llvm.intr.sqrt", &[xf], f64t)?;
        let r = self.op("arith.fptoui", &[rf], t)?;
        if bits < 64 {
            return Ok(r);
        }
        let wide = self.rw.int_type(128);
        let x128 = self.op("arith.extui", &[x], wide)?;
        let one = self.int(t, 1)?;
        let square = |v: Val| -> Result<Val, LowerError> {
            let w = self.op("arith.extui", &[v], wide)?;
            self.bin("arith.muli", w, w)
        };
        let too_big = self.cmpi("ugt", square(r)?, x128)?;
        let less = self.bin("arith.subi", r, one)?;
        let r = self.select(too_big, less, r)?;
        let more = self.bin("arith.addi", r, one)?;
        let fits = self.cmpi("ule", square(more)?, x128)?;
        self.select(fits, more, r)
    }

    /// `x > 0`.
    fn positive(&self, x: Val) -> Result<Val, LowerError> {
        let zero = self.int(self.ty()?, 0)?;
        self.cmpi(self.pick("sgt", "ne"), x, zero)
    }

    /// `ilog2` or `ilog10` of a positive `x`, as `u32`: for base 2 the
    /// width less one less the leading zeros; for base 10 how many of
    /// 10, 100, … the value reaches (no division, no loop).
    fn ilog(&self, ten: bool, x: Val) -> Result<Val, LowerError> {
        let t = self.ty()?;
        let bits = self.width()?;
        let u32t = self.rw.int_type(32);
        if !ten {
            let no: melior::ir::Attribute<'c> = BoolAttribute::new(self.rw.ctx, false).into();
            let zeros = self.rw.emit1(
                self.at,
                "llvm.intr.ctlz",
                &[x],
                t,
                &[("is_zero_poison", no)],
            )?;
            let top = self.int(t, i64::from(bits) - 1)?;
            let log = self.bin("arith.subi", top, zeros)?;
            return self.resize(log, u32t);
        }
        let max: u128 = if self.signed() {
            (1u128 << (bits - 1)) - 1
        } else if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        let mut log = self.int(u32t, 0)?;
        let mut power: u128 = 10;
        while power <= max {
            // Every power of ten below the type's maximum fits an `i128`.
            let p = self.wide_const(t, power as i128)?;
            let reached = self.cmpi(self.pick("sge", "uge"), x, p)?;
            let step = self.op("arith.extui", &[reached], u32t)?;
            log = self.bin("arith.addi", log, step)?;
            match power.checked_mul(10) {
                Some(next) => power = next,
                None => break,
            }
        }
        Ok(log)
    }

    fn bin(&self, name: &str, a: Val, b: Val) -> Result<Val, LowerError> {
        self.op(name, &[a, b], rewrite::type_of(a))
    }

    fn int(&self, ty: Type<'c>, v: i64) -> Result<Val, LowerError> {
        self.rw.int_const(self.at, ty, v)
    }

    fn cmpi(&self, pred: &str, a: Val, b: Val) -> Result<Val, LowerError> {
        let p = self.predicate(CMPI_PREDICATES, pred)?;
        let i1 = self.rw.int_type(1);
        self.rw
            .emit1(self.at, "arith.cmpi", &[a, b], i1, &[("predicate", p)])
    }

    fn cmpf(&self, pred: &str, a: Val, b: Val) -> Result<Val, LowerError> {
        let p = self.predicate(CMPF_PREDICATES, pred)?;
        let i1 = self.rw.int_type(1);
        self.rw
            .emit1(self.at, "arith.cmpf", &[a, b], i1, &[("predicate", p)])
    }

    /// Predicates are stored as their enum values: `#arith<cmpi …>` is not
    /// an attribute MLIR parses on its own.
    fn predicate(
        &self,
        table: &[&str],
        pred: &str,
    ) -> Result<melior::ir::Attribute<'c>, LowerError> {
        let i = table
            .iter()
            .position(|p| *p == pred)
            .ok_or_else(|| self.rw.error(self.at, format!("no predicate `{pred}`")))?;
        Ok(self.rw.i64_attr(i as i64))
    }

    fn select(&self, c: Val, a: Val, b: Val) -> Result<Val, LowerError> {
        self.op("arith.select", &[c, a, b], rewrite::type_of(a))
    }

    fn signed(&self) -> bool {
        self.scalar.is_signed()
    }

    fn pick(&self, signed: &'static str, unsigned: &'static str) -> &'static str {
        if self.signed() {
            signed
        } else {
            unsigned
        }
    }

    /// An unsigned amount (`u32`) resized to `ty`'s width.
    fn resize(&self, v: Val, ty: Type<'c>) -> Result<Val, LowerError> {
        let from = int_width(rewrite::type_of(v));
        let to = int_width(ty);
        match from.cmp(&to) {
            std::cmp::Ordering::Equal => Ok(v),
            std::cmp::Ordering::Less => self.op("arith.extui", &[v], ty),
            std::cmp::Ordering::Greater => self.op("arith.trunci", &[v], ty),
        }
    }

    /// `rmir.assert(cond == expected, message)`, lowered by the control pass.
    fn assert(&self, cond: Val, kind: AssertKind, message: &str) -> Result<(), LowerError> {
        let t: melior::ir::Attribute<'c> = BoolAttribute::new(self.rw.ctx, true).into();
        self.rw.emit(
            self.at,
            "rmir.assert",
            &[cond],
            &[],
            &[
                ("expected", t),
                ("kind", self.rw.str(kind.name())),
                ("message", self.rw.str(message)),
            ],
        )?;
        Ok(())
    }

    fn result_ty(&self) -> Result<Type<'c>, LowerError> {
        self.result_ty
            .ok_or_else(|| self.rw.error(self.at, "the call has no result"))
    }

    fn float(&self, v: f64) -> Result<Val, LowerError> {
        let ty = self.ty()?;
        let attr = self.rw.float_attr(ty, v, self.at)?;
        self.rw
            .emit1(self.at, "arith.constant", &[], ty, &[("value", attr)])
    }

    /// Lowers one operation of the capability table. The match is
    /// exhaustive over [`CoreOp`], and every arm handles each receiver class
    /// the table admits for it (`registry::CORE_OPS`), so nothing admission
    /// accepts lacks a lowering.
    fn lower(&self, op: CoreOp) -> Result<Option<Val>, LowerError> {
        let float = self.scalar.is_float();
        let some = |v: Val| Ok(Some(v));
        match op {
            CoreOp::ColdPath | CoreOp::UbCheck => Ok(None),
            CoreOp::Powi => some(self.powi()?),
            CoreOp::Isqrt => {
                let x = self.arg(0)?;
                if self.signed() {
                    let zero = self.int(self.ty()?, 0)?;
                    let ok = self.cmpi("sge", x, zero)?;
                    self.assert(
                        ok,
                        AssertKind::Other,
                        "argument of integer square root cannot be negative",
                    )?;
                }
                some(self.isqrt(x)?)
            }
            CoreOp::CheckedIsqrt => {
                let x = self.arg(0)?;
                let zero = self.int(self.ty()?, 0)?;
                let ok = self.cmpi("sge", x, zero)?;
                let x = self.select(ok, x, zero)?;
                some(self.option_of(self.scalar, ok, self.isqrt(x)?)?)
            }
            CoreOp::Ilog2 | CoreOp::Ilog10 => {
                let x = self.arg(0)?;
                let ok = self.positive(x)?;
                self.assert(
                    ok,
                    AssertKind::Other,
                    "argument of integer logarithm must be positive",
                )?;
                some(self.ilog(op == CoreOp::Ilog10, x)?)
            }
            CoreOp::CheckedIlog2 | CoreOp::CheckedIlog10 => {
                let x = self.arg(0)?;
                let ok = self.positive(x)?;
                let one = self.int(self.ty()?, 1)?;
                let x = self.select(ok, x, one)?;
                let log = self.ilog(op == CoreOp::CheckedIlog10, x)?;
                some(self.option_of(Scalar::U32, ok, log)?)
            }

            // `self.ln() / base.ln()`, as std computes it.
            CoreOp::Log => {
                let x = self.libdevice("log", &[self.arg(0)?])?;
                let b = self.libdevice("log", &[self.arg(1)?])?;
                some(self.bin("arith.divf", x, b)?)
            }
            CoreOp::Exp
            | CoreOp::Exp2
            | CoreOp::ExpM1
            | CoreOp::Ln
            | CoreOp::Ln1p
            | CoreOp::Log2
            | CoreOp::Log10
            | CoreOp::Powf
            | CoreOp::Cbrt
            | CoreOp::Sin
            | CoreOp::Cos
            | CoreOp::Tan
            | CoreOp::Asin
            | CoreOp::Acos
            | CoreOp::Atan
            | CoreOp::Atan2
            | CoreOp::Sinh
            | CoreOp::Cosh
            | CoreOp::Tanh
            | CoreOp::Asinh
            | CoreOp::Acosh
            | CoreOp::Atanh
            | CoreOp::Hypot => {
                let base = op.libdevice().ok_or_else(|| {
                    self.rw
                        .error(self.at, format!("no libdevice function for {op:?}"))
                })?;
                some(self.libdevice(base, self.args)?)
            }
            CoreOp::Likely | CoreOp::Unlikely | CoreOp::BlackBox => some(self.arg(0)?),
            CoreOp::WrappingAdd | CoreOp::UncheckedAdd => {
                some(self.bin("arith.addi", self.arg(0)?, self.arg(1)?)?)
            }
            CoreOp::WrappingSub | CoreOp::UncheckedSub => {
                some(self.bin("arith.subi", self.arg(0)?, self.arg(1)?)?)
            }
            CoreOp::WrappingMul | CoreOp::UncheckedMul => {
                some(self.bin("arith.muli", self.arg(0)?, self.arg(1)?)?)
            }
            CoreOp::WrappingNeg => {
                let zero = self.int(self.ty()?, 0)?;
                some(self.bin("arith.subi", zero, self.arg(0)?)?)
            }
            CoreOp::WrappingShl | CoreOp::WrappingShr => {
                let (x, ty) = (self.arg(0)?, self.ty()?);
                let n = self.resize(self.arg(1)?, ty)?;
                let mask = self.int(ty, i64::from(self.width()? - 1))?;
                let n = self.bin("arith.andi", n, mask)?;
                let name = if op == CoreOp::WrappingShl {
                    "arith.shli"
                } else {
                    self.pick("arith.shrsi", "arith.shrui")
                };
                some(self.bin(name, x, n)?)
            }
            CoreOp::UncheckedShl | CoreOp::UncheckedShr => {
                let (x, ty) = (self.arg(0)?, self.ty()?);
                let n = self.resize(self.arg(1)?, ty)?;
                let name = if op == CoreOp::UncheckedShl {
                    "arith.shli"
                } else {
                    self.pick("arith.shrsi", "arith.shrui")
                };
                some(self.bin(name, x, n)?)
            }
            CoreOp::UncheckedDiv | CoreOp::ExactDiv => some(self.bin(
                self.pick("arith.divsi", "arith.divui"),
                self.arg(0)?,
                self.arg(1)?,
            )?),
            CoreOp::UncheckedRem => some(self.bin(
                self.pick("arith.remsi", "arith.remui"),
                self.arg(0)?,
                self.arg(1)?,
            )?),
            CoreOp::WrappingDiv | CoreOp::WrappingRem => {
                some(self.wrapping_div_rem(op == CoreOp::WrappingDiv)?)
            }
            CoreOp::SaturatingAdd | CoreOp::SaturatingSub => {
                let name = match (op, self.signed()) {
                    (CoreOp::SaturatingAdd, true) => "llvm.intr.sadd.sat",
                    (CoreOp::SaturatingAdd, false) => "llvm.intr.uadd.sat",
                    (_, true) => "llvm.intr.ssub.sat",
                    (_, false) => "llvm.intr.usub.sat",
                };
                some(self.op(name, &[self.arg(0)?, self.arg(1)?], self.ty()?)?)
            }
            CoreOp::SaturatingMul => some(self.saturating_mul()?),
            CoreOp::RotateLeft | CoreOp::RotateRight => {
                let (x, ty) = (self.arg(0)?, self.ty()?);
                let n = self.resize(self.arg(1)?, ty)?;
                let name = if op == CoreOp::RotateLeft {
                    "llvm.intr.fshl"
                } else {
                    "llvm.intr.fshr"
                };
                some(self.op(name, &[x, x, n], ty)?)
            }
            CoreOp::CountOnes => {
                let c = self.op("llvm.intr.ctpop", &[self.arg(0)?], self.ty()?)?;
                some(self.resize(c, self.result_ty()?)?)
            }
            CoreOp::CountZeros => {
                let ones = self.int(self.ty()?, -1)?;
                let inv = self.bin("arith.xori", self.arg(0)?, ones)?;
                let c = self.op("llvm.intr.ctpop", &[inv], self.ty()?)?;
                some(self.resize(c, self.result_ty()?)?)
            }
            CoreOp::LeadingZeros | CoreOp::TrailingZeros => {
                let name = if op == CoreOp::LeadingZeros {
                    "llvm.intr.ctlz"
                } else {
                    "llvm.intr.cttz"
                };
                let no: melior::ir::Attribute<'c> = BoolAttribute::new(self.rw.ctx, false).into();
                let c = self.rw.emit1(
                    self.at,
                    name,
                    &[self.arg(0)?],
                    self.ty()?,
                    &[("is_zero_poison", no)],
                )?;
                some(self.resize(c, self.result_ty()?)?)
            }
            CoreOp::SwapBytes if self.width()? == 8 => some(self.arg(0)?),
            CoreOp::SwapBytes => some(self.op("llvm.intr.bswap", &[self.arg(0)?], self.ty()?)?),
            CoreOp::ReverseBits => {
                some(self.op("llvm.intr.bitreverse", &[self.arg(0)?], self.ty()?)?)
            }
            CoreOp::Abs if float => some(self.op("llvm.intr.fabs", &[self.arg(0)?], self.ty()?)?),
            CoreOp::Abs if self.signed() => {
                let x = self.arg(0)?;
                let min = self.min_const()?;
                let ok = self.cmpi("ne", x, min)?;
                self.assert(
                    ok,
                    AssertKind::OverflowNeg,
                    &format!(
                        "attempt to negate `{}::MIN`, which would overflow",
                        self.scalar.name()
                    ),
                )?;
                some(self.abs(x)?)
            }
            CoreOp::Abs => some(self.arg(0)?),
            CoreOp::WrappingAbs | CoreOp::UnsignedAbs => some(self.abs(self.arg(0)?)?),
            CoreOp::AbsDiff => {
                let (a, b) = (self.arg(0)?, self.arg(1)?);
                let gt = self.cmpi(self.pick("sgt", "ugt"), a, b)?;
                let ab = self.bin("arith.subi", a, b)?;
                let ba = self.bin("arith.subi", b, a)?;
                some(self.select(gt, ab, ba)?)
            }
            CoreOp::Signum if float => {
                let x = self.arg(0)?;
                let one = self.float(1.0)?;
                let s = self.op("llvm.intr.copysign", &[one, x], self.ty()?)?;
                let nan = self.cmpf("uno", x, x)?;
                some(self.select(nan, x, s)?)
            }
            CoreOp::Signum => {
                let x = self.arg(0)?;
                let ty = self.ty()?;
                let (zero, one, minus) = (self.int(ty, 0)?, self.int(ty, 1)?, self.int(ty, -1)?);
                let pos = self.cmpi("sgt", x, zero)?;
                let neg = self.cmpi("slt", x, zero)?;
                let n = self.select(neg, minus, zero)?;
                some(self.select(pos, one, n)?)
            }
            CoreOp::IsNegative | CoreOp::IsPositive => {
                let zero = self.int(self.ty()?, 0)?;
                let pred = if op == CoreOp::IsNegative {
                    "slt"
                } else {
                    "sgt"
                };
                some(self.cmpi(pred, self.arg(0)?, zero)?)
            }
            CoreOp::IsPowerOfTwo => {
                let c = self.op("llvm.intr.ctpop", &[self.arg(0)?], self.ty()?)?;
                let one = self.int(self.ty()?, 1)?;
                some(self.cmpi("eq", c, one)?)
            }
            CoreOp::Min | CoreOp::Max if float => {
                let name = if op == CoreOp::Min {
                    "llvm.intr.minnum"
                } else {
                    "llvm.intr.maxnum"
                };
                some(self.op(name, &[self.arg(0)?, self.arg(1)?], self.ty()?)?)
            }
            CoreOp::Min | CoreOp::Max => {
                let name = match (op, self.signed()) {
                    (CoreOp::Min, true) => "llvm.intr.smin",
                    (CoreOp::Min, false) => "llvm.intr.umin",
                    (_, true) => "llvm.intr.smax",
                    (_, false) => "llvm.intr.umax",
                };
                some(self.op(name, &[self.arg(0)?, self.arg(1)?], self.ty()?)?)
            }
            CoreOp::Clamp if float => {
                let (x, lo, hi) = (self.arg(0)?, self.arg(1)?, self.arg(2)?);
                let ok = self.cmpf("ole", lo, hi)?;
                self.assert(ok, AssertKind::Other, "min > max, or either was NaN")?;
                let below = self.cmpf("olt", x, lo)?;
                let y = self.select(below, lo, x)?;
                let above = self.cmpf("ogt", y, hi)?;
                some(self.select(above, hi, y)?)
            }
            CoreOp::Clamp => {
                let (x, lo, hi) = (self.arg(0)?, self.arg(1)?, self.arg(2)?);
                let ok = self.cmpi(self.pick("sle", "ule"), lo, hi)?;
                self.assert(ok, AssertKind::Other, "assertion failed: min <= max")?;
                let (max, min) = if self.signed() {
                    ("llvm.intr.smax", "llvm.intr.smin")
                } else {
                    ("llvm.intr.umax", "llvm.intr.umin")
                };
                let ty = self.ty()?;
                let y = self.op(max, &[x, lo], ty)?;
                some(self.op(min, &[y, hi], ty)?)
            }
            CoreOp::CheckedPow => {
                let (acc, overflow) = self.pow_parts(false)?;
                let i1 = self.rw.int_type(1);
                let no = self.rw.int_const(self.at, i1, 0)?;
                let ok = self.cmpi("eq", overflow, no)?;
                some(self.option(ok, acc)?)
            }
            CoreOp::OverflowingPow => {
                let (acc, overflow) = self.pow_parts(false)?;
                some(self.pair(acc, overflow)?)
            }
            // The wrapped result, and `MIN / -1` (signed only) as the flag.
            CoreOp::OverflowingDiv | CoreOp::OverflowingRem => {
                let v = self.wrapping_div_rem(op == CoreOp::OverflowingDiv)?;
                let i1 = self.rw.int_type(1);
                let flag = if self.signed() {
                    let (a, b, ty) = (self.arg(0)?, self.arg(1)?, self.ty()?);
                    let min = self.min_const()?;
                    let minus = self.int(ty, -1)?;
                    let is_min = self.cmpi("eq", a, min)?;
                    let is_minus = self.cmpi("eq", b, minus)?;
                    self.bin("arith.andi", is_min, is_minus)?
                } else {
                    self.rw.int_const(self.at, i1, 0)?
                };
                some(self.pair(v, flag)?)
            }
            CoreOp::RemEuclid | CoreOp::DivEuclid => some(self.euclid(op == CoreOp::DivEuclid)?),
            CoreOp::Pow => some(self.pow(Pow::Checked)?),
            CoreOp::WrappingPow => some(self.pow(Pow::Wrapping)?),
            CoreOp::SaturatingPow => some(self.pow(Pow::Saturating)?),
            CoreOp::Sqrt | CoreOp::Floor | CoreOp::Ceil | CoreOp::Round | CoreOp::Trunc => {
                let name = match op {
                    CoreOp::Sqrt => "llvm.intr.sqrt",
                    CoreOp::Floor => "llvm.intr.floor",
                    CoreOp::Ceil => "llvm.intr.ceil",
                    CoreOp::Round => "llvm.intr.round",
                    _ => "llvm.intr.trunc",
                };
                some(self.op(name, &[self.arg(0)?], self.ty()?)?)
            }
            CoreOp::MulAdd => some(self.op(
                "llvm.intr.fma",
                &[self.arg(0)?, self.arg(1)?, self.arg(2)?],
                self.ty()?,
            )?),
            CoreOp::Copysign => some(self.op(
                "llvm.intr.copysign",
                &[self.arg(0)?, self.arg(1)?],
                self.ty()?,
            )?),
            CoreOp::Recip => {
                let one = self.float(1.0)?;
                some(self.bin("arith.divf", one, self.arg(0)?)?)
            }
            CoreOp::RoundTiesEven => {
                some(self.op("llvm.intr.roundeven", &[self.arg(0)?], self.ty()?)?)
            }
            // `self - self.trunc()`, as std has it.
            CoreOp::Fract => {
                let x = self.arg(0)?;
                let t = self.op("llvm.intr.trunc", &[x], self.ty()?)?;
                some(self.bin("arith.subf", x, t)?)
            }
            CoreOp::ToBits | CoreOp::FromBits => {
                some(self.op("arith.bitcast", &[self.arg(0)?], self.result_ty()?)?)
            }
            // Classification reads the bits: the magnitude (sign cleared)
            // against the infinity's bit pattern.
            CoreOp::IsNan | CoreOp::IsFinite | CoreOp::IsInfinite => {
                let (magnitude, inf) = self.magnitude_bits()?;
                let pred = match op {
                    CoreOp::IsNan => "ugt",
                    CoreOp::IsFinite => "ult",
                    _ => "eq",
                };
                some(self.cmpi(pred, magnitude, inf)?)
            }
            CoreOp::IsSignNegative | CoreOp::IsSignPositive => {
                let bits = self.bits()?;
                let zero = self.int(rewrite::type_of(bits), 0)?;
                let pred = if op == CoreOp::IsSignNegative {
                    "slt"
                } else {
                    "sge"
                };
                some(self.cmpi(pred, bits, zero)?)
            }
            // core's constants: `180 / PI` and `PI / 180` rounded in the
            // receiver's type (f32's to_degrees multiplies by a literal).
            CoreOp::ToDegrees | CoreOp::ToRadians => {
                let k = match (op, self.scalar) {
                    (CoreOp::ToDegrees, Scalar::F32) => f64::from(57.295_78_f32),
                    (CoreOp::ToDegrees, _) => 180.0f64 / std::f64::consts::PI,
                    (_, Scalar::F32) => f64::from(std::f32::consts::PI / 180.0f32),
                    _ => std::f64::consts::PI / 180.0f64,
                };
                let k = self.float(k)?;
                some(self.bin("arith.mulf", self.arg(0)?, k)?)
            }
        }
    }

    /// The receiver's bits as an integer of its width.
    fn bits(&self) -> Result<Val, LowerError> {
        let width = match self.scalar {
            Scalar::F32 => 32,
            _ => 64,
        };
        let ty = melior::ir::r#type::IntegerType::new(self.rw.ctx, width).into();
        self.op("arith.bitcast", &[self.arg(0)?], ty)
    }

    /// The receiver's bits with the sign cleared, and infinity's bits.
    fn magnitude_bits(&self) -> Result<(Val, Val), LowerError> {
        let bits = self.bits()?;
        let ty = rewrite::type_of(bits);
        let (mask, inf) = match self.scalar {
            Scalar::F32 => (0x7fff_ffff, 0x7f80_0000),
            _ => (i64::MAX, 0x7ff0_0000_0000_0000),
        };
        let mask = self.int(ty, mask)?;
        let magnitude = self.bin("arith.andi", bits, mask)?;
        Ok((magnitude, self.int(ty, inf)?))
    }

    /// `iN::MIN`, at any width (128-bit constants are built from text).
    fn min_const(&self) -> Result<Val, LowerError> {
        self.wide_const(self.ty()?, min_value(self.width()?))
    }

    /// `iN::MAX` (`uN::MAX` is all ones: -1).
    fn max_const(&self) -> Result<Val, LowerError> {
        let v = if self.signed() {
            !min_value(self.width()?)
        } else {
            -1
        };
        self.wide_const(self.ty()?, v)
    }

    /// An integer constant of `ty` from its value sign-extended to 128 bits.
    fn wide_const(&self, ty: Type<'c>, v: i128) -> Result<Val, LowerError> {
        let attr = self.rw.wide_int_attr(ty, v, self.at)?;
        self.rw
            .emit1(self.at, "arith.constant", &[], ty, &[("value", attr)])
    }

    fn abs(&self, x: Val) -> Result<Val, LowerError> {
        let no: melior::ir::Attribute<'c> = BoolAttribute::new(self.rw.ctx, false).into();
        self.rw.emit1(
            self.at,
            "llvm.intr.abs",
            &[x],
            self.ty()?,
            &[("is_int_min_poison", no)],
        )
    }

    /// `wrapping_div`/`wrapping_rem`: divide by zero panics; `MIN / -1`
    /// wraps to `MIN` (remainder 0) instead of being undefined.
    fn wrapping_div_rem(&self, div: bool) -> Result<Val, LowerError> {
        let (a, b, ty) = (self.arg(0)?, self.arg(1)?, self.ty()?);
        let zero = self.int(ty, 0)?;
        let nonzero = self.cmpi("ne", b, zero)?;
        self.assert(
            nonzero,
            if div {
                AssertKind::DivisionByZero
            } else {
                AssertKind::RemainderByZero
            },
            if div {
                "attempt to divide by zero"
            } else {
                "attempt to calculate the remainder with a divisor of zero"
            },
        )?;
        if !self.signed() {
            let name = if div { "arith.divui" } else { "arith.remui" };
            return self.bin(name, a, b);
        }
        let minus = self.int(ty, -1)?;
        let one = self.int(ty, 1)?;
        let is_minus = self.cmpi("eq", b, minus)?;
        let safe = self.select(is_minus, one, b)?;
        if div {
            let q = self.bin("arith.divsi", a, safe)?;
            let neg = self.bin("arith.subi", zero, a)?;
            self.select(is_minus, neg, q)
        } else {
            let r = self.bin("arith.remsi", a, safe)?;
            self.select(is_minus, zero, r)
        }
    }

    fn saturating_mul(&self) -> Result<Val, LowerError> {
        let (a, b, ty) = (self.arg(0)?, self.arg(1)?, self.ty()?);
        let (p, o) = self.mul_overflow(a, b)?;
        let sat = if self.signed() {
            let zero = self.int(ty, 0)?;
            let an = self.cmpi("slt", a, zero)?;
            let bn = self.cmpi("slt", b, zero)?;
            let neg = self.bin("arith.xori", an, bn)?;
            let min = self.min_const()?;
            let max = self.max_const()?;
            self.select(neg, min, max)?
        } else {
            self.int(ty, -1)?
        };
        self.select(o, sat, p)
    }

    /// `(a * b, overflowed)`.
    fn mul_overflow(&self, a: Val, b: Val) -> Result<(Val, Val), LowerError> {
        let ty = rewrite::type_of(a);
        let pair = self.rw.struct_type(&[ty, self.rw.int_type(1)]);
        let name = self.pick(
            "llvm.intr.smul.with.overflow",
            "llvm.intr.umul.with.overflow",
        );
        let both = self.op(name, &[a, b], pair)?;
        let i1 = self.rw.int_type(1);
        let p0 = self.rw.i64_array(&[0]);
        let p1 = self.rw.i64_array(&[1]);
        let p = self.rw.emit1(
            self.at,
            "llvm.extractvalue",
            &[both],
            ty,
            &[("position", p0)],
        )?;
        let o = self.rw.emit1(
            self.at,
            "llvm.extractvalue",
            &[both],
            i1,
            &[("position", p1)],
        )?;
        Ok((p, o))
    }

    /// Exponentiation by squaring over the 32 bits of the `u32` exponent,
    /// without branches (the optimiser folds it for constant exponents).
    /// An overflow is an overflow of any multiplication Rust's loop performs
    /// (the accumulator at a set bit; the base while higher bits remain):
    /// `pow` asserts there is none, `saturating_pow` saturates on one (to
    /// `MIN` when the exact result is negative: a negative base and an odd
    /// exponent), `wrapping_pow` ignores it.
    /// A slot laid out as the lowering lays out `ty`, for a result the call
    /// returns by address (an `Option`, a tuple), as the importer expects
    /// of a call whose destination is not a scalar.
    fn slot(&self, ty: &frontend::ty::Ty) -> Result<(Val, Type<'c>), LowerError> {
        let adts = frontend::adt::Adts::new(
            &frontend::adt::std_def("std::option::Option")
                .into_iter()
                .collect::<Vec<_>>(),
        );
        let t = super::types::memory_type(self.rw.ctx, ty, &adts).ok_or_else(|| {
            self.rw
                .error(self.at, format!("no memory layout for `{ty}`"))
        })?;
        Ok((self.rw.alloca(self.at, t)?, t))
    }

    /// Stores `v` at field path `path` of the slot of type `t`.
    fn store_at(&self, slot: Val, t: Type<'c>, path: &[i32], v: Val) -> Result<(), LowerError> {
        let addr = self.rw.gep(self.at, slot, path, &[], t)?;
        self.rw.emit(self.at, "llvm.store", &[v, addr], &[], &[])?;
        Ok(())
    }

    /// `Option::<T>::Some(v)` when `some`, else `None`, in a slot laid out
    /// as the lowering lays out `Option<T>` (`types::memory_type`).
    fn option(&self, some: Val, v: Val) -> Result<Val, LowerError> {
        self.option_of(self.scalar, some, v)
    }

    /// As [`Self::option`], for a payload of type `payload`.
    fn option_of(&self, payload: Scalar, some: Val, v: Val) -> Result<Val, LowerError> {
        let option = frontend::ty::Ty::Adt {
            path: "std::option::Option".into(),
            args: vec![frontend::ty::Ty::Scalar(payload)],
        };
        let (slot, t) = self.slot(&option)?;
        let i64t = self.rw.int_type(64);
        let discr = self.op("arith.extui", &[some], i64t)?;
        self.store_at(slot, t, &[0, 0], discr)?;
        self.store_at(slot, t, &[0, 2, 0], v)?;
        Ok(slot)
    }

    /// The tuple `(v, flag)`.
    fn pair(&self, v: Val, flag: Val) -> Result<Val, LowerError> {
        use frontend::ty::Ty;
        let tuple = Ty::Tuple(vec![Ty::Scalar(self.scalar), Ty::Scalar(Scalar::Bool)]);
        let (slot, t) = self.slot(&tuple)?;
        self.store_at(slot, t, &[0, 0], v)?;
        self.store_at(slot, t, &[0, 1], flag)?;
        Ok(slot)
    }

    /// `rem_euclid`/`div_euclid` as `core` defines them: `%` and `/` with
    /// their panics (a zero divisor; `MIN` by `-1` for a signed type), then
    /// the remainder made non-negative and the quotient adjusted to match.
    fn euclid(&self, div: bool) -> Result<Val, LowerError> {
        let (a, b, ty) = (self.arg(0)?, self.arg(1)?, self.ty()?);
        let zero = self.int(ty, 0)?;
        let nonzero = self.cmpi("ne", b, zero)?;
        let (kind, message) = if div {
            (AssertKind::DivisionByZero, "attempt to divide by zero")
        } else {
            (
                AssertKind::RemainderByZero,
                "attempt to calculate the remainder with a divisor of zero",
            )
        };
        self.assert(nonzero, kind, message)?;
        if !self.signed() {
            return self.bin(if div { "arith.divui" } else { "arith.remui" }, a, b);
        }
        let min = self.min_const()?;
        let minus = self.int(ty, -1)?;
        let a_min = self.cmpi("eq", a, min)?;
        let b_minus = self.cmpi("eq", b, minus)?;
        let both = self.bin("arith.andi", a_min, b_minus)?;
        let i1 = self.rw.int_type(1);
        let no = self.rw.int_const(self.at, i1, 0)?;
        let fine = self.cmpi("eq", both, no)?;
        self.assert(
            fine,
            AssertKind::DivisionOverflow,
            if div {
                "attempt to divide with overflow"
            } else {
                "attempt to calculate the remainder with overflow"
            },
        )?;
        let r = self.bin("arith.remsi", a, b)?;
        let negative = self.cmpi("slt", r, zero)?;
        if div {
            let q = self.bin("arith.divsi", a, b)?;
            let one = self.int(ty, 1)?;
            let b_pos = self.cmpi("sgt", b, zero)?;
            let down = self.bin("arith.subi", q, one)?;
            let up = self.bin("arith.addi", q, one)?;
            let adjusted = self.select(b_pos, down, up)?;
            self.select(negative, adjusted, q)
        } else {
            // `r.wrapping_add(rhs.wrapping_abs())`
            let nb = self.bin("arith.subi", zero, b)?;
            let b_neg = self.cmpi("slt", b, zero)?;
            let abs = self.select(b_neg, nb, b)?;
            let up = self.bin("arith.addi", r, abs)?;
            self.select(negative, up, r)
        }
    }

    /// The wrapped power `x^e` by binary powering, and whether any step
    /// overflowed (`wrapping` skips that flag).
    fn pow_parts(&self, wrapping: bool) -> Result<(Val, Val), LowerError> {
        let (x, e, ty) = (self.arg(0)?, self.arg(1)?, self.ty()?);
        let et = rewrite::type_of(e);
        let (e0, e1) = (self.int(et, 0)?, self.int(et, 1)?);
        let i1 = self.rw.int_type(1);
        let mut acc = self.int(ty, 1)?;
        let mut base = x;
        let mut overflow = self.rw.int_const(self.at, i1, 0)?;
        for i in 0..int_width(et) {
            let sh = self.int(et, i64::from(i))?;
            let shifted = self.bin("arith.shrui", e, sh)?;
            let bit = self.bin("arith.andi", shifted, e1)?;
            let set = self.cmpi("ne", bit, e0)?;
            let (prod, o1) = self.mul_overflow(acc, base)?;
            acc = self.select(set, prod, acc)?;
            let sh1 = self.int(et, i64::from(i + 1))?;
            let higher = if i + 1 < int_width(et) {
                let h = self.bin("arith.shrui", e, sh1)?;
                self.cmpi("ne", h, e0)?
            } else {
                self.rw.int_const(self.at, i1, 0)?
            };
            let (sq, o2) = self.mul_overflow(base, base)?;
            base = self.select(higher, sq, base)?;
            if !wrapping {
                let a = self.bin("arith.andi", set, o1)?;
                let b = self.bin("arith.andi", higher, o2)?;
                let ab = self.bin("arith.ori", a, b)?;
                overflow = self.bin("arith.ori", overflow, ab)?;
            }
        }
        Ok((acc, overflow))
    }

    fn pow(&self, mode: Pow) -> Result<Val, LowerError> {
        let (x, e, ty) = (self.arg(0)?, self.arg(1)?, self.ty()?);
        let et = rewrite::type_of(e);
        let (e0, e1) = (self.int(et, 0)?, self.int(et, 1)?);
        let (acc, overflow) = self.pow_parts(mode == Pow::Wrapping)?;
        let i1 = self.rw.int_type(1);
        match mode {
            Pow::Wrapping => Ok(acc),
            Pow::Checked => {
                let ok = self.cmpi("eq", overflow, self.rw.int_const(self.at, i1, 0)?)?;
                self.assert(
                    ok,
                    AssertKind::Overflow,
                    "attempt to compute `{} * {}`, which would overflow",
                )?;
                Ok(acc)
            }
            Pow::Saturating => {
                let max = self.max_const()?;
                let sat = if self.signed() {
                    let zero = self.int(ty, 0)?;
                    let neg_base = self.cmpi("slt", x, zero)?;
                    let odd = self.bin("arith.andi", e, e1)?;
                    let odd = self.cmpi("ne", odd, e0)?;
                    let neg = self.bin("arith.andi", neg_base, odd)?;
                    let min = self.min_const()?;
                    self.select(neg, min, max)?
                } else {
                    max
                };
                self.select(overflow, sat, acc)
            }
        }
    }
}

/// What `pow` does on overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pow {
    Checked,
    Wrapping,
    Saturating,
}

const CMPI_PREDICATES: &[&str] = &[
    "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
];
const CMPF_PREDICATES: &[&str] = &[
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
    "une", "uno", "true",
];

fn int_width(t: Type<'_>) -> u32 {
    melior::ir::r#type::IntegerType::try_from(t)
        .map(|i| i.width())
        .unwrap_or(0)
}

/// The bit pattern of `iN::MIN`, sign-extended to 128 bits.
fn min_value(width: u32) -> i128 {
    if width >= 128 {
        i128::MIN
    } else {
        -(1i128 << (width - 1))
    }
}
