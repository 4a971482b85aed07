//! `make-thunks`: for every admitted registration, the exported thunk the
//! provider calls, in the thunk ABI:
//!
//! ```c
//! extern "C" R THUNK(const void *env, A a);          // (T) -> U, (T) -> bool
//! extern "C" R THUNK(const void *env, A a, B b);     // (T, T) -> T, (T, U) -> V, …
//! ```
//!
//! One shape per callback arity, whatever the provider. Integers narrower
//! than 32 bits and `bool` travel as 32-bit values (sign-extended for signed
//! types, zero-extended otherwise: `manifest::provider::abi_c_type`); the
//! thunk truncates its arguments to the body's types and widens the
//! result, which the optimiser folds away once the provider inlines it.
//!
//! A comparator (`(&T, &T) -> Ordering`, `vocab::Shape::Compare`) takes
//! its operands by reference and returns `Ordering` through a result slot
//! (`rmir.sret`); its thunk stores each operand in a stack slot, passes
//! their addresses and answers "less than": the `Ordering`'s discriminant
//! is `Less` (-1). A key function (`(&T) -> K`, `Shape::Key`) is called
//! once per operand, by reference too, and its thunk answers `key(&a) <
//! key(&b)`, signed or unsigned as `K` is ([`Adapter`]).
//!
//! A closure body already takes the environment pointer first (MIR passes
//! `&{closure}` as `_1`), so the thunk forwards it; an fn item's thunk
//! ignores `env`. The thunk has external linkage and its plain C name; the
//! bodies it calls are internal, so the optimiser inlines them.

use melior::ir::{
    attribute::{StringAttribute, TypeAttribute},
    block::BlockLike,
    operation::OperationBuilder,
    r#type::FunctionType,
    Block, Region, RegionLike, Type, Value,
};

use melior::dialect::{
    arith::{self, CmpiPredicate},
    llvm::{self, AllocaOptions, LoadStoreOptions},
};
use melior::ir::attribute::IntegerAttribute;
use vocab::{Element, Scalar};

use super::{
    plan::{Adapter, Thunk},
    rewrite::{self, Op, Patch},
    LowerError, Plan,
};

pub fn run(rw: &Patch<'_, '_>, plan: &Plan) -> Result<(), LowerError> {
    let module = rw.module();
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
        check_signature(rw, body, thunk)?;
        let op = build(rw, body, thunk, &callee)?;
        module.body().append_operation(op);
    }
    Ok(())
}

/// How an operand or the result of a callback crosses the thunk: its type
/// in the body (`i8` for `u8`, `i1` for `bool`: `types::scalar_type`) and
/// the type it travels as (narrow integers and `bool` as `i32`).
#[derive(Clone, Copy)]
struct Crossing<'c> {
    body: Type<'c>,
    abi: Type<'c>,
    signed: bool,
}

impl<'c> Crossing<'c> {
    fn of(rw: &Patch<'c, '_>, at: Op, e: &Element) -> Result<Crossing<'c>, LowerError> {
        let scalar = e.scalar().filter(|s| s.is_capturable());
        let Some((s, body)) = scalar.and_then(|s| Some((s, super::types::scalar_type(rw.ctx, s)?)))
        else {
            return Err(rw.error(
                at,
                format!("a thunk cannot pass elements of type `{e}` (scalar elements only)"),
            ));
        };
        let abi = match s {
            Scalar::Bool
            | Scalar::I8
            | Scalar::U8
            | Scalar::I16
            | Scalar::U16
            | Scalar::I32
            | Scalar::U32
            | Scalar::Char => rw.int_type(32),
            _ => body,
        };
        Ok(Crossing {
            body,
            abi,
            signed: s.is_signed(),
        })
    }

    fn widens(self) -> bool {
        self.abi != self.body
    }
}

fn check_signature(rw: &Patch<'_, '_>, body: Op, thunk: &Thunk) -> Result<(), LowerError> {
    let ty = rewrite::attr(body, "function_type").and_then(|a| TypeAttribute::try_from(a).ok());
    let mut params = Vec::new();
    if thunk.takes_env {
        params.push(rw.ptr_type());
    }
    let ret = Crossing::of(rw, body, &thunk.signature.ret)?.body;
    let expected: Type<'_> = match &thunk.adapter {
        Adapter::Direct => {
            for p in &thunk.signature.params {
                params.push(Crossing::of(rw, body, p)?.body);
            }
            FunctionType::new(rw.ctx, &params, &[ret]).into()
        }
        // Both operands, then the `Ordering`'s slot.
        Adapter::Compare => {
            params.extend([rw.ptr_type(); 3]);
            FunctionType::new(rw.ctx, &params, &[]).into()
        }
        Adapter::Key(k) => {
            params.push(rw.ptr_type());
            FunctionType::new(rw.ctx, &params, &[key_type(rw, body, *k)?]).into()
        }
        // The operand, then the tuple's slot.
        Adapter::TupleKey(_) => {
            params.extend([rw.ptr_type(); 2]);
            FunctionType::new(rw.ctx, &params, &[]).into()
        }
    };
    match ty {
        Some(t) if t.value() == expected => Ok(()),
        _ => Err(rw.error(
            body,
            format!(
                "the callback body has the type `{}`, the thunk needs `{expected}`",
                ty.map(|t| t.value().to_string()).unwrap_or_default()
            ),
        )),
    }
}

/// The result of an op the thunk built.
fn first_result<'c, 'a>(
    rw: &Patch<'c, '_>,
    body: Op,
    op: melior::ir::OperationRef<'c, 'a>,
) -> Result<Value<'c, 'a>, LowerError> {
    Ok(op
        .result(0)
        .map_err(|e| rw.error(body, format!("a result in the thunk: {e}")))?
        .into())
}

/// `Ord`'s "less than" for keys of type `k`.
fn less_than(k: Scalar) -> CmpiPredicate {
    if k.is_signed() {
        CmpiPredicate::Slt
    } else {
        CmpiPredicate::Ult
    }
}

/// The body type of a key function's result.
fn key_type<'c>(rw: &Patch<'c, '_>, body: Op, k: Scalar) -> Result<Type<'c>, LowerError> {
    super::types::scalar_type(rw.ctx, k).ok_or_else(|| {
        rw.error(
            body,
            format!("a key of type `{}` has no body type", k.name()),
        )
    })
}

fn build<'c>(
    rw: &Patch<'c, '_>,
    body: Op,
    thunk: &Thunk,
    callee: &str,
) -> Result<melior::ir::Operation<'c>, LowerError> {
    let loc = rewrite::location(body);
    let sig = &thunk.signature;
    let mut inputs: Vec<Type<'c>> = vec![rw.ptr_type()];
    let params = sig
        .params
        .iter()
        .map(|p| Crossing::of(rw, body, p))
        .collect::<Result<Vec<_>, _>>()?;
    inputs.extend(params.iter().map(|p| p.abi));
    let ret = Crossing::of(rw, body, &sig.ret)?;
    let (ret_abi, ret_body) = (ret.abi, ret.body);
    let region = Region::new();
    let arguments: Vec<(Type<'c>, _)> = inputs.iter().map(|t| (*t, loc)).collect();
    let block = region.append_block(Block::new(&arguments));
    let op = |name: &str, operand: Value<'c, '_>, result: Type<'c>| {
        OperationBuilder::new(name, loc)
            .add_operands(&[operand])
            .add_results(&[result])
            .build()
            .map_err(|e| rw.error(body, format!("cannot build the thunk's `{name}`: {e}")))
    };
    let mut args: Vec<Value<'c, '_>> = Vec::new();
    if thunk.takes_env {
        let env = block
            .argument(0)
            .map_err(|e| rw.error(body, format!("thunk argument 0: {e}")))?;
        args.push(env.into());
    }
    for (i, p) in params.iter().enumerate() {
        let a: Value<'c, '_> = block
            .argument(i + 1)
            .map_err(|e| rw.error(body, format!("thunk argument {}: {e}", i + 1)))?
            .into();
        if !p.widens() {
            args.push(a);
        } else {
            let t = block.append_operation(op("arith.trunci", a, p.body)?);
            args.push(
                t.result(0)
                    .map_err(|e| rw.error(body, format!("the thunk's trunci: {e}")))?
                    .into(),
            );
        }
    }
    let slot = |t: Type<'c>| -> Result<Value<'c, '_>, LowerError> {
        let i64t = rw.int_type(64);
        let one = block.append_operation(arith::constant(
            rw.ctx,
            IntegerAttribute::new(i64t, 1).into(),
            loc,
        ));
        let one = one.result(0).map_err(|e| rw.error(body, e.to_string()))?;
        let options = AllocaOptions::new().elem_type(Some(TypeAttribute::new(t)));
        let a = block.append_operation(llvm::alloca(
            rw.ctx,
            one.into(),
            rw.ptr_type(),
            loc,
            options,
        ));
        Ok(a.result(0)
            .map_err(|e| rw.error(body, e.to_string()))?
            .into())
    };
    // An operand in a stack slot, for a body that takes it by reference.
    let by_ref = |v: Value<'c, '_>, t: Type<'c>| -> Result<Value<'c, '_>, LowerError> {
        let at = slot(t)?;
        block.append_operation(llvm::store(rw.ctx, v, at, loc, LoadStoreOptions::default()));
        Ok(at)
    };
    let sym = rw.symbol(callee);
    let call = |operands: &[Value<'c, '_>], results: &[Type<'c>]| {
        let op = OperationBuilder::new("func.call", loc)
            .add_operands(operands)
            .add_results(results)
            .add_attributes(&[(rw.ident("callee"), sym)])
            .build()
            .map_err(|e| rw.error(body, format!("cannot build the thunk's call: {e}")))?;
        Ok::<_, LowerError>(block.append_operation(op))
    };
    let result = |op| first_result(rw, body, op);
    let compare = |predicate: CmpiPredicate, a: Value<'c, '_>, b: Value<'c, '_>| {
        result(block.append_operation(arith::cmpi(rw.ctx, predicate, a, b, loc)))
    };
    let first = usize::from(thunk.takes_env);
    let mut r: Value<'c, '_> = match &thunk.adapter {
        Adapter::Direct => result(call(&args, &[ret_body])?)?,
        Adapter::Compare => {
            for (i, p) in params.iter().enumerate() {
                args[first + i] = by_ref(args[first + i], p.body)?;
            }
            // `Ordering` is one byte, its discriminant
            // (`frontend::adt::std_def`): `Less` is -1.
            let i8t = rw.int_type(8);
            let ordering = slot(i8t)?;
            args.push(ordering);
            call(&args, &[])?;
            let d = result(block.append_operation(llvm::load(
                rw.ctx,
                ordering,
                i8t,
                loc,
                LoadStoreOptions::default(),
            )))?;
            let less = result(block.append_operation(arith::constant(
                rw.ctx,
                IntegerAttribute::new(i8t, -1).into(),
                loc,
            )))?;
            compare(CmpiPredicate::Eq, d, less)?
        }
        Adapter::Key(k) => {
            let kt = key_type(rw, body, *k)?;
            let mut keys = Vec::new();
            for (i, p) in params.iter().enumerate() {
                let mut operands = args[..first].to_vec();
                operands.push(by_ref(args[first + i], p.body)?);
                keys.push(result(call(&operands, &[kt])?)?);
            }
            compare(less_than(*k), keys[0], keys[1])?
        }
        Adapter::TupleKey(fields) => {
            // The tuple in the body's own layout (`types::memory_type`: a
            // struct of the fields' types).
            let types = fields
                .iter()
                .map(|k| key_type(rw, body, *k))
                .collect::<Result<Vec<_>, _>>()?;
            let tuple = melior::dialect::llvm::r#type::r#struct(rw.ctx, &types, false);
            let mut slots = Vec::new();
            for (i, p) in params.iter().enumerate() {
                let mut operands = args[..first].to_vec();
                operands.push(by_ref(args[first + i], p.body)?);
                let at = slot(tuple)?;
                operands.push(at);
                call(&operands, &[])?;
                slots.push(at);
            }
            let field = |at: Value<'c, '_>, i: usize| -> Result<Value<'c, '_>, LowerError> {
                let gep = block.append_operation(llvm::get_element_ptr(
                    rw.ctx,
                    at,
                    melior::ir::attribute::DenseI32ArrayAttribute::new(rw.ctx, &[0, i as i32]),
                    tuple,
                    rw.ptr_type(),
                    loc,
                ));
                let load = block.append_operation(llvm::load(
                    rw.ctx,
                    result(gep)?,
                    types[i],
                    loc,
                    LoadStoreOptions::default(),
                ));
                result(load)
            };
            // Lexicographic, from the last field: less_i | (equal_i & rest).
            let mut answer: Option<Value<'c, '_>> = None;
            for (i, k) in fields.iter().enumerate().rev() {
                let (a, b) = (field(slots[0], i)?, field(slots[1], i)?);
                let less = compare(less_than(*k), a, b)?;
                answer = Some(match answer {
                    None => less,
                    Some(rest) => {
                        let equal = compare(CmpiPredicate::Eq, a, b)?;
                        let tie = result(block.append_operation(arith::andi(equal, rest, loc)))?;
                        result(block.append_operation(arith::ori(less, tie, loc)))?
                    }
                });
            }
            answer.ok_or_else(|| rw.error(body, "a tuple key with no field"))?
        }
    };
    if ret.widens() {
        let widen = if ret.signed {
            "arith.extsi"
        } else {
            "arith.extui"
        };
        let w = block.append_operation(op(widen, r, ret_abi)?);
        r = w
            .result(0)
            .map_err(|e| rw.error(body, format!("the thunk's {widen}: {e}")))?
            .into();
    }
    let ret = OperationBuilder::new("func.return", loc)
        .add_operands(&[r])
        .build()
        .map_err(|e| rw.error(body, format!("cannot build the thunk's return: {e}")))?;
    block.append_operation(ret);
    let fty = FunctionType::new(rw.ctx, &inputs, &[ret_abi]);
    OperationBuilder::new("func.func", loc)
        .add_attributes(&[
            (
                rw.ident("sym_name"),
                StringAttribute::new(rw.ctx, &thunk.symbol).into(),
            ),
            (
                rw.ident("function_type"),
                TypeAttribute::new(fty.into()).into(),
            ),
        ])
        .add_regions([region])
        .build()
        .map_err(|e| {
            rw.error(
                body,
                format!("cannot build the thunk `{}`: {e}", thunk.symbol),
            )
        })
}
