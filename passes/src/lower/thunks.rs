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
//! key(&b)`, signed or unsigned as `K` is ([`Adapter`]). A `same`
//! (`(&T, &T) -> bool`, `Shape::Same`) and a partition's predicate
//! (`(&T) -> bool`, `Shape::RefPredicate`) take their operands by
//! reference and answer as they are.
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
    Attribute, Block, BlockRef, Location, Operation, Region, RegionLike, Type, Value,
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
        if thunk.adapter == Adapter::Chain {
            for combine in [false, true] {
                let op = build_chain(rw, plan, body, thunk, &callee, combine)?;
                module.body().append_operation(op);
            }
            continue;
        }
        if thunk.adapter == Adapter::ByKey {
            for fold in [false, true] {
                let op = build_by_key(rw, plan, body, thunk, &callee, fold)?;
                module.body().append_operation(op);
            }
            continue;
        }
        let op = if thunk.signature.has_composite() {
            build_in_memory(rw, plan, body, thunk, &callee)?
        } else {
            build(rw, body, thunk, &callee)?
        };
        module.body().append_operation(op);
        if let Some(fields) = super::plan::computed_key_fields(&thunk.adapter) {
            let op = build_key(rw, plan, body, thunk, &callee, &fields)?;
            module.body().append_operation(op);
        }
    }
    Ok(())
}

/// A `sort_by_key`'s key thunk, for the radix sort of computed keys
/// (`vocab::SortChoice::ComputedKey`):
///
/// ```c
/// extern "C" void SYMBOL_key(const void *env, A x, K *out);        // x: T as the thunk ABI passes it
/// ```
///
/// It calls the key function on `x` (by reference) and writes the key to
/// `out` as `vocab::computed_key` lays it out: a scalar as itself (`bool`
/// as one byte, 0 or 1), a tuple field by field at that C layout's
/// offsets, whatever the body's own layout of the tuple.
fn build_key<'c>(
    rw: &Patch<'c, '_>,
    plan: &Plan,
    body: Op,
    thunk: &Thunk,
    callee: &str,
    fields: &[Scalar],
) -> Result<melior::ir::Operation<'c>, LowerError> {
    let Some((_, keys)) = vocab::computed_key(fields) else {
        return Err(rw.error(body, "a key with no radix order has no key thunk"));
    };
    let element = Pass::of(rw, plan, body, thunk.signature.element())?;
    let inputs: Vec<Type<'c>> = vec![
        rw.ptr_type(),
        match &element {
            Pass::Value(c) => c.abi,
            Pass::Memory(_) => rw.ptr_type(),
        },
        rw.ptr_type(),
    ];
    let region = Region::new();
    let e = Emit::entry(rw, body, callee, &region, &inputs);
    let mut args = Vec::new();
    if thunk.takes_env {
        args.push(e.argument(0)?);
    }
    let x = e.operand(&element, e.argument(1)?)?;
    args.push(match &element {
        Pass::Value(c) => e.by_ref(x, c.body)?,
        Pass::Memory(_) => x,
    });
    let out = e.argument(2)?;
    let types = fields
        .iter()
        .map(|k| key_type(rw, body, *k))
        .collect::<Result<Vec<_>, _>>()?;
    let values = match thunk.adapter {
        Adapter::Key(_) => vec![e
            .call(&args, &types)?
            .ok_or_else(|| rw.error(body, "a key call with no result"))?],
        _ => {
            let tuple = llvm::r#type::r#struct(rw.ctx, &types, false);
            let slot = e.slot(tuple)?;
            args.push(slot);
            e.call(&args, &[])?;
            types
                .iter()
                .enumerate()
                .map(|(i, t)| e.load_field(slot, tuple, i, *t))
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    for ((v, k), scalar) in values.into_iter().zip(&keys).zip(fields) {
        // A `bool` (`i1` in the body) is stored as the byte 0 or 1.
        let v = match scalar {
            Scalar::Bool => e.unary("arith.extui", v, rw.int_type(8))?,
            _ => v,
        };
        let at = e.byte_offset(out, k.offset)?;
        e.block.append_operation(llvm::store(
            rw.ctx,
            v,
            at,
            e.loc,
            LoadStoreOptions::default(),
        ));
    }
    e.ret(&[])?;
    function(
        rw,
        body,
        &format!("{}_key", thunk.symbol),
        &inputs,
        None,
        region,
    )
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
    if thunk.signature.has_composite() && thunk.adapter == Adapter::Direct {
        // A composite operand in memory, a composite result through the
        // caller's slot, last (`rmir.sret`). A comparator's or key's body
        // takes references whatever the element (below).
        let mut results = Vec::new();
        for p in &thunk.signature.params {
            params.push(match p {
                Element::Composite(_) => rw.ptr_type(),
                _ => Crossing::of(rw, body, p)?.body,
            });
        }
        match &thunk.signature.ret {
            Element::Composite(_) => params.push(rw.ptr_type()),
            r => results.push(Crossing::of(rw, body, r)?.body),
        }
        let expected: Type<'_> = FunctionType::new(rw.ctx, &params, &results).into();
        return match ty {
            Some(t) if t.value() == expected => Ok(()),
            _ => Err(rw.error(
                body,
                format!(
                    "the callback body has the type `{}`, the thunk needs `{expected}`",
                    ty.map(|t| t.value().to_string()).unwrap_or_default()
                ),
            )),
        };
    }
    let ret = || Crossing::of(rw, body, &thunk.signature.ret).map(|c| c.body);
    let expected: Type<'_> = match &thunk.adapter {
        Adapter::Direct => {
            for p in &thunk.signature.params {
                params.push(Crossing::of(rw, body, p)?.body);
            }
            FunctionType::new(rw.ctx, &params, &[ret()?]).into()
        }
        // Every operand by reference, the answer as it is.
        Adapter::Refs => {
            params.extend(thunk.signature.params.iter().map(|_| rw.ptr_type()));
            FunctionType::new(rw.ctx, &params, &[ret()?]).into()
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
        // `(mode, x, a, b, out) -> bool` (`frontend::chain`), an indexed
        // chain's `(mode, x, i, a, b, out)`.
        // A composite item or value in memory (as any composite operand).
        Adapter::Chain => {
            let in_body = |e: &Element| match e {
                Element::Composite(_) => Ok(rw.ptr_type()),
                e => Crossing::of(rw, body, e).map(|c| c.body),
            };
            let (t, r) = (
                in_body(thunk.signature.element())?,
                in_body(&thunk.signature.ret)?,
            );
            params.extend([rw.int_type(1), t]);
            if thunk.signature.is_indexed_chain() {
                params.push(rw.int_type(64));
            }
            params.extend([r, r, rw.ptr_type()]);
            FunctionType::new(rw.ctx, &params, &[rw.int_type(1)]).into()
        }
        // `(mode, ka: &K, kb: &K, a: V, b: V, out: &mut V) -> bool`
        // (`frontend::chain`); a composite value in memory.
        Adapter::ByKey => {
            let v = match &thunk.signature.ret {
                Element::Composite(_) => rw.ptr_type(),
                e => Crossing::of(rw, body, e)?.body,
            };
            let ptr = rw.ptr_type();
            params.extend([rw.int_type(1), ptr, ptr, v, v, ptr]);
            FunctionType::new(rw.ctx, &params, &[rw.int_type(1)]).into()
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

/// What the thunk's ops are appended with: its block, the body it calls
/// and where errors point.
struct Emit<'c, 'a, 'r, 'p> {
    rw: &'r Patch<'c, 'p>,
    body: Op,
    block: BlockRef<'c, 'a>,
    loc: Location<'c>,
    callee: Attribute<'c>,
}

impl<'c, 'a, 'r, 'p> Emit<'c, 'a, 'r, 'p> {
    /// The thunk's entry block in `region`, with an argument of each of
    /// `inputs`, located at the callback body, calling `callee`.
    fn entry(
        rw: &'r Patch<'c, 'p>,
        body: Op,
        callee: &str,
        region: &'a Region<'c>,
        inputs: &[Type<'c>],
    ) -> Emit<'c, 'a, 'r, 'p> {
        let loc = rewrite::location(body);
        let arguments: Vec<(Type<'c>, _)> = inputs.iter().map(|t| (*t, loc)).collect();
        Emit {
            rw,
            body,
            block: region.append_block(Block::new(&arguments)),
            loc,
            callee: rw.symbol(callee),
        }
    }
}

impl<'c, 'a> Emit<'c, 'a, '_, '_> {
    fn append(&self, op: Operation<'c>) -> Result<Value<'c, 'a>, LowerError> {
        first_result(self.rw, self.body, self.block.append_operation(op))
    }

    /// `name` of one operand with one result (`arith.trunci`, …).
    fn unary(
        &self,
        name: &str,
        operand: Value<'c, 'a>,
        result: Type<'c>,
    ) -> Result<Value<'c, 'a>, LowerError> {
        let op = OperationBuilder::new(name, self.loc)
            .add_operands(&[operand])
            .add_results(&[result])
            .build()
            .map_err(|e| {
                self.rw
                    .error(self.body, format!("cannot build the thunk's `{name}`: {e}"))
            })?;
        self.append(op)
    }

    /// The thunk's argument `i`.
    fn argument(&self, i: usize) -> Result<Value<'c, 'a>, LowerError> {
        Ok(self
            .block
            .argument(i)
            .map_err(|err| {
                self.rw
                    .error(self.body, format!("thunk argument {i}: {err}"))
            })?
            .into())
    }

    /// Returns `results` (the result, or nothing) from the thunk.
    fn ret(&self, results: &[Value<'c, 'a>]) -> Result<(), LowerError> {
        let op = OperationBuilder::new("func.return", self.loc)
            .add_operands(results)
            .build()
            .map_err(|err| {
                self.rw
                    .error(self.body, format!("cannot build the thunk's return: {err}"))
            })?;
        self.block.append_operation(op);
        Ok(())
    }

    /// A result of the body's type as the thunk ABI's (narrow integers
    /// widen, signed or unsigned as they are).
    fn widen(&self, r: Value<'c, 'a>, c: Crossing<'c>) -> Result<Value<'c, 'a>, LowerError> {
        match (c.widens(), c.signed) {
            (false, _) => Ok(r),
            (true, true) => self.unary("arith.extsi", r, c.abi),
            (true, false) => self.unary("arith.extui", r, c.abi),
        }
    }

    /// The body called as `adapter` says, with `args` (a comparator's and
    /// a key's operands already by reference): its answer or result, of
    /// the body's type `ret`.
    fn by_adapter(
        &self,
        adapter: &Adapter,
        args: Vec<Value<'c, 'a>>,
        first: usize,
        ret: Crossing<'c>,
    ) -> Result<Value<'c, 'a>, LowerError> {
        match adapter {
            Adapter::Direct | Adapter::Refs => self
                .call(&args, &[ret.body])?
                .ok_or_else(|| self.rw.error(self.body, "the body's call has no result")),
            Adapter::Compare => self.compare_adapter(args),
            Adapter::Key(k) => self.key_adapter(&args, first, *k),
            Adapter::TupleKey(fields) => self.tuple_key_adapter(&args, first, fields),
            Adapter::Chain => Err(self
                .rw
                .error(self.body, "a chain's thunks are built by `build_chain`")),
            Adapter::ByKey => Err(self
                .rw
                .error(self.body, "a by-key's thunks are built by `build_by_key`")),
        }
    }

    /// `base + offset` bytes.
    fn byte_offset(&self, base: Value<'c, 'a>, offset: u64) -> Result<Value<'c, 'a>, LowerError> {
        let offset = i32::try_from(offset).map_err(|_| {
            self.rw
                .error(self.body, "an element field lies beyond 2 GiB")
        })?;
        self.append(llvm::get_element_ptr(
            self.rw.ctx,
            base,
            melior::ir::attribute::DenseI32ArrayAttribute::new(self.rw.ctx, &[offset]),
            self.rw.int_type(8),
            self.rw.ptr_type(),
            self.loc,
        ))
    }

    /// The field at `path` of a value of the body's type `t` at `at`.
    fn field_at(
        &self,
        at: Value<'c, 'a>,
        t: Type<'c>,
        path: &[i32],
    ) -> Result<Value<'c, 'a>, LowerError> {
        let mut indices = vec![0];
        indices.extend(path);
        self.append(llvm::get_element_ptr(
            self.rw.ctx,
            at,
            melior::ir::attribute::DenseI32ArrayAttribute::new(self.rw.ctx, &indices),
            t,
            self.rw.ptr_type(),
            self.loc,
        ))
    }

    /// Copies each scalar of a composite between rustc's layout (`rust`,
    /// the provider's memory: each field at its measured offset) and the
    /// body's (`ours`, of type `c.body`: a struct of the fields in
    /// declaration order), one way or the other. Padding is never read.
    fn copy_fields(
        &self,
        c: &InMemory<'c>,
        rust: Value<'c, 'a>,
        ours: Value<'c, 'a>,
        into_ours: bool,
    ) -> Result<(), LowerError> {
        for (field, path, scalar) in &c.fields {
            let at_rust = self.byte_offset(rust, field.offset)?;
            let at_ours = self.field_at(ours, c.body, path)?;
            let (from, to) = match into_ours {
                true => (at_rust, at_ours),
                false => (at_ours, at_rust),
            };
            let v = self.load(from, *scalar)?;
            self.block.append_operation(llvm::store(
                self.rw.ctx,
                v,
                to,
                self.loc,
                LoadStoreOptions::default(),
            ));
        }
        Ok(())
    }

    /// An argument of the thunk ABI as the body's type.
    fn narrow(&self, v: Value<'c, 'a>, c: Crossing<'c>) -> Result<Value<'c, 'a>, LowerError> {
        match c.widens() {
            true => self.unary("arith.trunci", v, c.body),
            false => Ok(v),
        }
    }

    /// A stack slot of type `t`.
    fn slot(&self, t: Type<'c>) -> Result<Value<'c, 'a>, LowerError> {
        let one = self.append(arith::constant(
            self.rw.ctx,
            IntegerAttribute::new(self.rw.int_type(64), 1).into(),
            self.loc,
        ))?;
        let options = AllocaOptions::new().elem_type(Some(TypeAttribute::new(t)));
        self.append(llvm::alloca(
            self.rw.ctx,
            one,
            self.rw.ptr_type(),
            self.loc,
            options,
        ))
    }

    /// An operand in a stack slot, for a body that takes it by reference.
    fn by_ref(&self, v: Value<'c, 'a>, t: Type<'c>) -> Result<Value<'c, 'a>, LowerError> {
        let at = self.slot(t)?;
        self.block.append_operation(llvm::store(
            self.rw.ctx,
            v,
            at,
            self.loc,
            LoadStoreOptions::default(),
        ));
        Ok(at)
    }

    /// An operand as the body takes it: a scalar narrowed to its type, a
    /// composite copied from rustc's layout into a slot of the body's.
    fn operand(&self, p: &Pass<'c>, v: Value<'c, 'a>) -> Result<Value<'c, 'a>, LowerError> {
        match p {
            Pass::Value(c) => self.narrow(v, *c),
            Pass::Memory(m) => {
                let slot = self.slot(m.body)?;
                self.copy_fields(m, v, slot, true)?;
                Ok(slot)
            }
        }
    }

    /// An operand of a moded body's other mode, which it does not read: a
    /// zero, or an unwritten slot for a composite.
    fn unused(&self, p: &Pass<'c>) -> Result<Value<'c, 'a>, LowerError> {
        match p {
            Pass::Value(c) => {
                let op = OperationBuilder::new("llvm.mlir.zero", self.loc)
                    .add_results(&[c.body])
                    .build()
                    .map_err(|err| {
                        self.rw
                            .error(self.body, format!("cannot build the thunk's zero: {err}"))
                    })?;
                self.append(op)
            }
            Pass::Memory(m) => self.slot(m.body),
        }
    }

    /// Field `i`, of the body's type `t`, of the struct `tuple` at `at`.
    fn load_field(
        &self,
        at: Value<'c, 'a>,
        tuple: Type<'c>,
        i: usize,
        t: Type<'c>,
    ) -> Result<Value<'c, 'a>, LowerError> {
        let gep = self.append(llvm::get_element_ptr(
            self.rw.ctx,
            at,
            melior::ir::attribute::DenseI32ArrayAttribute::new(self.rw.ctx, &[0, i as i32]),
            tuple,
            self.rw.ptr_type(),
            self.loc,
        ))?;
        self.load(gep, t)
    }

    fn load(&self, at: Value<'c, 'a>, t: Type<'c>) -> Result<Value<'c, 'a>, LowerError> {
        self.append(llvm::load(
            self.rw.ctx,
            at,
            t,
            self.loc,
            LoadStoreOptions::default(),
        ))
    }

    /// A call of the body; its result, when it returns one.
    fn call(
        &self,
        operands: &[Value<'c, 'a>],
        results: &[Type<'c>],
    ) -> Result<Option<Value<'c, 'a>>, LowerError> {
        let op = OperationBuilder::new("func.call", self.loc)
            .add_operands(operands)
            .add_results(results)
            .add_attributes(&[(self.rw.ident("callee"), self.callee)])
            .build()
            .map_err(|e| {
                self.rw
                    .error(self.body, format!("cannot build the thunk's call: {e}"))
            })?;
        let call = self.block.append_operation(op);
        match results {
            [] => Ok(None),
            _ => first_result(self.rw, self.body, call).map(Some),
        }
    }

    fn compare(
        &self,
        predicate: CmpiPredicate,
        a: Value<'c, 'a>,
        b: Value<'c, 'a>,
    ) -> Result<Value<'c, 'a>, LowerError> {
        self.append(arith::cmpi(self.rw.ctx, predicate, a, b, self.loc))
    }

    /// `Adapter::Compare`: both operands by reference and a slot for the
    /// `Ordering`, which is one byte, its discriminant
    /// (`frontend::adt::std_def`); the answer is whether it is `Less` (-1).
    fn compare_adapter(&self, mut args: Vec<Value<'c, 'a>>) -> Result<Value<'c, 'a>, LowerError> {
        let i8t = self.rw.int_type(8);
        let ordering = self.slot(i8t)?;
        args.push(ordering);
        self.call(&args, &[])?;
        let d = self.load(ordering, i8t)?;
        let less = self.append(arith::constant(
            self.rw.ctx,
            IntegerAttribute::new(i8t, -1).into(),
            self.loc,
        ))?;
        self.compare(CmpiPredicate::Eq, d, less)
    }

    /// `Adapter::Key`: the key of each operand (by reference), compared
    /// as `k` orders.
    fn key_adapter(
        &self,
        args: &[Value<'c, 'a>],
        first: usize,
        k: Scalar,
    ) -> Result<Value<'c, 'a>, LowerError> {
        let kt = key_type(self.rw, self.body, k)?;
        let mut keys = Vec::new();
        for operand in &args[first..] {
            let mut operands = args[..first].to_vec();
            operands.push(*operand);
            let key = self.call(&operands, &[kt])?;
            keys.push(key.ok_or_else(|| self.rw.error(self.body, "a key call with no result"))?);
        }
        self.compare(less_than(k), keys[0], keys[1])
    }

    /// `Adapter::TupleKey`: each operand's key tuple written by the body
    /// into a slot in the body's own layout (`types::memory_type`: a
    /// struct of the fields' types), compared field by field.
    fn tuple_key_adapter(
        &self,
        args: &[Value<'c, 'a>],
        first: usize,
        fields: &[Scalar],
    ) -> Result<Value<'c, 'a>, LowerError> {
        let types = fields
            .iter()
            .map(|k| key_type(self.rw, self.body, *k))
            .collect::<Result<Vec<_>, _>>()?;
        let tuple = melior::dialect::llvm::r#type::r#struct(self.rw.ctx, &types, false);
        let mut slots = Vec::new();
        for operand in &args[first..] {
            let mut operands = args[..first].to_vec();
            operands.push(*operand);
            let at = self.slot(tuple)?;
            operands.push(at);
            self.call(&operands, &[])?;
            slots.push(at);
        }
        let field = |at: Value<'c, 'a>, i: usize| self.load_field(at, tuple, i, types[i]);
        // Lexicographic, from the last field: less_i | (equal_i & rest).
        let mut answer: Option<Value<'c, 'a>> = None;
        for (i, k) in fields.iter().enumerate().rev() {
            let (a, b) = (field(slots[0], i)?, field(slots[1], i)?);
            let less = self.compare(less_than(*k), a, b)?;
            answer = Some(match answer {
                None => less,
                Some(rest) => {
                    let equal = self.compare(CmpiPredicate::Eq, a, b)?;
                    let tie = self.append(arith::andi(equal, rest, self.loc))?;
                    self.append(arith::ori(less, tie, self.loc))?
                }
            });
        }
        answer.ok_or_else(|| self.rw.error(self.body, "a tuple key with no field"))
    }
}

/// The thunk `func.func`: its arguments narrowed to the body's types, the
/// body called as the thunk's [`Adapter`] says, the result widened.
fn build<'c>(
    rw: &Patch<'c, '_>,
    body: Op,
    thunk: &Thunk,
    callee: &str,
) -> Result<melior::ir::Operation<'c>, LowerError> {
    let sig = &thunk.signature;
    let mut inputs: Vec<Type<'c>> = vec![rw.ptr_type()];
    let params = sig
        .params
        .iter()
        .map(|p| Crossing::of(rw, body, p))
        .collect::<Result<Vec<_>, _>>()?;
    inputs.extend(params.iter().map(|p| p.abi));
    let ret = Crossing::of(rw, body, &sig.ret)?;
    let region = Region::new();
    let e = Emit::entry(rw, body, callee, &region, &inputs);
    let mut args = Vec::new();
    if thunk.takes_env {
        args.push(e.argument(0)?);
    }
    for (i, p) in params.iter().enumerate() {
        args.push(e.narrow(e.argument(i + 1)?, *p)?);
    }
    let first = usize::from(thunk.takes_env);
    if thunk.adapter != Adapter::Direct {
        // A comparator or key takes its operands by reference: each in a
        // stack slot (which the optimiser removes once inlined).
        for (i, p) in params.iter().enumerate() {
            args[first + i] = e.by_ref(args[first + i], p.body)?;
        }
    }
    let r = e.by_adapter(&thunk.adapter, args, first, ret)?;
    let r = e.widen(r, ret)?;
    e.ret(&[r])?;
    function(rw, body, &thunk.symbol, &inputs, Some(ret.abi), region)
}

/// A composite element as the thunk moves it: the body's type of it
/// (`types::memory_type`) and each scalar with its path in that type and
/// its body type.
struct InMemory<'c> {
    body: Type<'c>,
    fields: Vec<(vocab::Field, Vec<i32>, Type<'c>)>,
}

impl<'c> InMemory<'c> {
    fn of(
        rw: &Patch<'c, '_>,
        plan: &Plan,
        at: Op,
        layout: &vocab::Layout,
    ) -> Result<InMemory<'c>, LowerError> {
        let ty = frontend::ty::Ty::parse(&layout.name);
        let body = super::types::memory_type(rw.ctx, &ty, &plan.adts).ok_or_else(|| {
            rw.error(
                at,
                format!("the element `{}` has no body type", layout.name),
            )
        })?;
        let fields = layout
            .fields
            .iter()
            .map(|f| {
                let path = f
                    .name
                    .split('.')
                    .map(|i| i.parse::<i32>().ok())
                    .collect::<Option<Vec<i32>>>();
                let scalar = f
                    .element
                    .scalar()
                    .and_then(|s| super::types::scalar_type(rw.ctx, s));
                match (path, scalar) {
                    (Some(path), Some(t)) => Ok((f.clone(), path, t)),
                    _ => Err(rw.error(
                        at,
                        format!("the element `{}` has the field `{}`", layout.name, f.name),
                    )),
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(InMemory { body, fields })
    }
}

/// The thunk of a callback that takes or returns a composite element:
///
/// ```c
/// extern "C" void THUNK(const void *env, const T *a, const T *b, T *out);  // (T, T) -> T
/// extern "C" U THUNK(const void *env, const T *a);                         // (T) -> U, U a scalar
/// extern "C" unsigned THUNK(const void *env, const T *a, const T *b);      // a comparator or key: "less"
/// ```
///
/// A composite operand is read from the provider's memory in rustc's
/// layout into a slot of the body's, whose address the body takes; a
/// composite result is written by the body into a slot of its own layout
/// (`rmir.sret`) and copied to `out` in rustc's. A comparator or key
/// function takes those slots' addresses as its references. Scalars cross
/// as in [`build`].
fn build_in_memory<'c>(
    rw: &Patch<'c, '_>,
    plan: &Plan,
    body: Op,
    thunk: &Thunk,
    callee: &str,
) -> Result<melior::ir::Operation<'c>, LowerError> {
    if matches!(thunk.adapter, Adapter::Chain | Adapter::ByKey) {
        return Err(rw.error(
            body,
            "a chain's and a by-key's thunks are built by `build_chain` and `build_by_key`",
        ));
    }
    let sig = &thunk.signature;
    let pass = |e: &Element| Pass::of(rw, plan, body, e);
    let params = sig.params.iter().map(pass).collect::<Result<Vec<_>, _>>()?;
    let ret = pass(&sig.ret)?;
    let mut inputs: Vec<Type<'c>> = vec![rw.ptr_type()];
    for p in &params {
        inputs.push(match p {
            Pass::Value(c) => c.abi,
            Pass::Memory(_) => rw.ptr_type(),
        });
    }
    if let Pass::Memory(_) = ret {
        inputs.push(rw.ptr_type());
    }
    let region = Region::new();
    let e = Emit::entry(rw, body, callee, &region, &inputs);
    let mut args = Vec::new();
    if thunk.takes_env {
        args.push(e.argument(0)?);
    }
    // A comparator or key takes its operands by reference: a scalar in a
    // stack slot, a composite in the slot it is copied to anyway.
    let by_ref = thunk.adapter != Adapter::Direct;
    for (i, p) in params.iter().enumerate() {
        let arg = e.argument(i + 1)?;
        args.push(match p {
            Pass::Value(c) if by_ref => e.by_ref(e.narrow(arg, *c)?, c.body)?,
            Pass::Value(c) => e.narrow(arg, *c)?,
            Pass::Memory(m) => {
                let slot = e.slot(m.body)?;
                e.copy_fields(m, arg, slot, true)?;
                slot
            }
        });
    }
    let first = usize::from(thunk.takes_env);
    match &ret {
        Pass::Memory(m) => {
            let slot = e.slot(m.body)?;
            args.push(slot);
            e.call(&args, &[])?;
            let out = e.argument(params.len() + 1)?;
            e.copy_fields(m, out, slot, false)?;
            e.ret(&[])?;
            function(rw, body, &thunk.symbol, &inputs, None, region)
        }
        Pass::Value(c) => {
            let r = e.by_adapter(&thunk.adapter, args, first, *c)?;
            let r = e.widen(r, *c)?;
            e.ret(&[r])?;
            function(rw, body, &thunk.symbol, &inputs, Some(c.abi), region)
        }
    }
}

/// How an operand or result crosses a thunk: a scalar as itself
/// (widened), a composite in memory, copied between the provider's
/// (rustc's layout) and a slot of the body's.
enum Pass<'c> {
    Value(Crossing<'c>),
    Memory(InMemory<'c>),
}

impl<'c> Pass<'c> {
    fn of(rw: &Patch<'c, '_>, plan: &Plan, body: Op, e: &Element) -> Result<Pass<'c>, LowerError> {
        match e {
            Element::Composite(l) => InMemory::of(rw, plan, body, l).map(Pass::Memory),
            e => Crossing::of(rw, body, e).map(Pass::Value),
        }
    }
}

/// The `func.func` of a thunk named `name`, of type `inputs -> ret`,
/// whose code is `region`.
fn function<'c>(
    rw: &Patch<'c, '_>,
    body: Op,
    name: &str,
    inputs: &[Type<'c>],
    ret: Option<Type<'c>>,
    region: Region<'c>,
) -> Result<melior::ir::Operation<'c>, LowerError> {
    let results: Vec<Type<'c>> = ret.into_iter().collect();
    let fty = FunctionType::new(rw.ctx, inputs, &results);
    OperationBuilder::new("func.func", rewrite::location(body))
        .add_attributes(&[
            (
                rw.ident("sym_name"),
                StringAttribute::new(rw.ctx, name).into(),
            ),
            (
                rw.ident("function_type"),
                TypeAttribute::new(fty.into()).into(),
            ),
        ])
        .add_regions([region])
        .build()
        .map_err(|err| rw.error(body, format!("cannot build the thunk `{name}`: {err}")))
}

/// One of a `par_iter` chain's two thunks (`vocab::Shape::Chain`), each a
/// call of the chain's body with its `mode` constant:
///
/// ```c
/// extern "C" unsigned SYMBOL_stage(const void *env, T x, R *out);            // mode false: kept?
/// extern "C" unsigned SYMBOL_combine(const void *env, R a, R b, R *out);     // mode true
/// ```
///
/// An indexed chain's stage (`enumerate`) takes the element's index in the
/// input after it, `SYMBOL_stage(const void *env, T x, uint64_t i, R
/// *out)`; its combine passes the body index 0, which the terminal never
/// reads.
///
/// A composite `T` or `R` (a tuple or a struct) is passed by pointer
/// instead (`const T *x`, `const R *a`), in rustc's layout, as in every
/// thunk. The operands the mode does not read are zeros (unwritten slots
/// for composites); the optimiser removes the other mode's code once the
/// provider inlines the thunk.
fn build_chain<'c>(
    rw: &Patch<'c, '_>,
    plan: &Plan,
    body: Op,
    thunk: &Thunk,
    callee: &str,
    combine: bool,
) -> Result<melior::ir::Operation<'c>, LowerError> {
    let loc = rewrite::location(body);
    let pass = |e: &Element| Pass::of(rw, plan, body, e);
    let (t, r) = (
        pass(thunk.signature.element())?,
        pass(&thunk.signature.ret)?,
    );
    let ptr = rw.ptr_type();
    let i32t = rw.int_type(32);
    let abi = |p: &Pass<'c>| match p {
        Pass::Value(c) => c.abi,
        Pass::Memory(_) => ptr,
    };
    let indexed = thunk.signature.is_indexed_chain();
    let i64t = rw.int_type(64);
    let inputs: Vec<Type<'c>> = match (combine, indexed) {
        (false, false) => vec![ptr, abi(&t), ptr],
        (false, true) => vec![ptr, abi(&t), i64t, ptr],
        (true, _) => vec![ptr, abi(&r), abi(&r), ptr],
    };
    let region = Region::new();
    let e = Emit::entry(rw, body, callee, &region, &inputs);
    let mode = e.append(arith::constant(
        rw.ctx,
        IntegerAttribute::new(rw.int_type(1), i64::from(combine)).into(),
        loc,
    ))?;
    // The operands the body reads, and the other mode's, which it does not.
    let (x, a, b, provider_out) = match combine {
        false => (
            e.operand(&t, e.argument(1)?)?,
            e.unused(&r)?,
            e.unused(&r)?,
            e.argument(if indexed { 3 } else { 2 })?,
        ),
        true => (
            e.unused(&t)?,
            e.operand(&r, e.argument(1)?)?,
            e.operand(&r, e.argument(2)?)?,
            e.argument(3)?,
        ),
    };
    // A composite value is written in the body's layout into a slot, then
    // copied to the provider's (where the answer says there is none, the
    // provider does not read what was copied).
    let out = match &r {
        Pass::Value(_) => provider_out,
        Pass::Memory(m) => e.slot(m.body)?,
    };
    let mut args = vec![e.argument(0)?, mode, x];
    if indexed {
        args.push(match combine {
            false => e.argument(2)?,
            true => e.append(arith::constant(
                rw.ctx,
                IntegerAttribute::new(i64t, 0).into(),
                loc,
            ))?,
        });
    }
    args.extend([a, b, out]);
    let answer = e
        .call(&args, &[rw.int_type(1)])?
        .ok_or_else(|| rw.error(body, "the chain body's call has no result"))?;
    if let Pass::Memory(m) = &r {
        e.copy_fields(m, provider_out, out, false)?;
    }
    e.ret(&[e.unary("arith.extui", answer, i32t)?])?;
    let name = format!(
        "{}_{}",
        thunk.symbol,
        if combine { "combine" } else { "stage" }
    );
    function(rw, body, &name, &inputs, Some(i32t), region)
}

/// One of a by-key's two thunks (`vocab::Shape::ByKey`), each a call of
/// its body with `mode` constant:
///
/// ```c
/// extern "C" unsigned SYMBOL_same(const void *env, K a, K b);      // mode false: same(&a, &b)
/// extern "C" V SYMBOL_op(const void *env, V a, V b);               // mode true: op(a, b)
/// ```
///
/// A composite `K` is passed by pointer (`const K *a`), a composite `V`
/// too, its result written through `V *out` (`void SYMBOL_op(const void
/// *env, const V *a, const V *b, V *out)`), in rustc's layout, as in every
/// thunk: `op`'s is a fold's thunk, `same`'s a `dedup_by`'s. The operands
/// the mode does not read are zeros (unwritten slots); the optimiser
/// removes the other mode's code once the provider inlines the thunk.
fn build_by_key<'c>(
    rw: &Patch<'c, '_>,
    plan: &Plan,
    body: Op,
    thunk: &Thunk,
    callee: &str,
    fold: bool,
) -> Result<melior::ir::Operation<'c>, LowerError> {
    let loc = rewrite::location(body);
    let pass = |e: &Element| Pass::of(rw, plan, body, e);
    let (k, v) = (
        pass(thunk.signature.element())?,
        pass(&thunk.signature.ret)?,
    );
    let ptr = rw.ptr_type();
    let i32t = rw.int_type(32);
    let abi = |p: &Pass<'c>| match p {
        Pass::Value(c) => c.abi,
        Pass::Memory(_) => ptr,
    };
    let mut inputs: Vec<Type<'c>> = match fold {
        false => vec![ptr, abi(&k), abi(&k)],
        true => vec![ptr, abi(&v), abi(&v)],
    };
    if fold && matches!(v, Pass::Memory(_)) {
        inputs.push(ptr);
    }
    let region = Region::new();
    let e = Emit::entry(rw, body, callee, &region, &inputs);
    let body_type = |p: &Pass<'c>| match p {
        Pass::Value(c) => c.body,
        Pass::Memory(m) => m.body,
    };
    // A key by reference: a scalar stored in a slot, a composite in the
    // slot it is copied to anyway.
    let key_ref = |arg| match &k {
        Pass::Value(c) => e.by_ref(e.narrow(arg, *c)?, c.body),
        Pass::Memory(_) => e.operand(&k, arg),
    };
    let mode = e.append(arith::constant(
        rw.ctx,
        IntegerAttribute::new(rw.int_type(1), i64::from(fold)).into(),
        loc,
    ))?;
    let (ka, kb, a, b) = match fold {
        false => (
            key_ref(e.argument(1)?)?,
            key_ref(e.argument(2)?)?,
            e.unused(&v)?,
            e.unused(&v)?,
        ),
        true => (
            e.slot(body_type(&k))?,
            e.slot(body_type(&k))?,
            e.operand(&v, e.argument(1)?)?,
            e.operand(&v, e.argument(2)?)?,
        ),
    };
    let out = e.slot(body_type(&v))?;
    let answer = e
        .call(
            &[e.argument(0)?, mode, ka, kb, a, b, out],
            &[rw.int_type(1)],
        )?
        .ok_or_else(|| rw.error(body, "the by-key body's call has no result"))?;
    let name = format!("{}_{}", thunk.symbol, if fold { "op" } else { "same" });
    if !fold {
        e.ret(&[e.unary("arith.extui", answer, i32t)?])?;
        return function(rw, body, &name, &inputs, Some(i32t), region);
    }
    match &v {
        Pass::Value(c) => {
            let r = e.widen(e.load(out, c.body)?, *c)?;
            e.ret(&[r])?;
            function(rw, body, &name, &inputs, Some(c.abi), region)
        }
        Pass::Memory(m) => {
            e.copy_fields(m, e.argument(3)?, out, false)?;
            e.ret(&[])?;
            function(rw, body, &name, &inputs, None, region)
        }
    }
}
