//! The in-place rewriting every lowering pass does, through one [`Patch`]
//! per pass: find ops, read their attributes, build an op at another op's
//! place, replace uses, erase, split a block.
//!
//! melior's safe API ties every handle to a borrow of its parent, which does
//! not fit a rewrite that inserts and erases while walking; so passes hold raw
//! MLIR handles (`MlirOperation`, `MlirValue`, `MlirBlock`) and wrap them in
//! melior types only to build ops.
//!
//! Soundness: a raw handle is live as long as the module it came from is
//! and no rewrite erased it. A [`Patch`] holds the module by `&mut` for the
//! whole pass (`Pipeline::run` makes one per pass), so while handles are
//! used no other borrow of the module exists, and the module outlives every
//! handle; every mutation is a method of the patch, so no code changes the
//! module without holding it. What the types do not carry: a handle is not
//! used after the op it names is erased (each pass erases an op only after
//! its last use of it). This module is crate-private (`pub(crate) mod
//! rewrite`) and its handles are never returned from the crate; the melior
//! wrappers made from raw handles (`op_ref`, `value`) are private to this
//! file.

use melior::dialect::llvm;
use melior::{
    ir::{
        attribute::{
            BoolAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, FlatSymbolRefAttribute,
            FloatAttribute, IntegerAttribute, StringAttribute,
        },
        operation::{
            OperationBuilder, OperationLike, OperationMutLike, OperationRef, OperationRefMut,
            WalkOrder, WalkResult,
        },
        r#type::IntegerType,
        Attribute, Block, BlockLike, Identifier, Location, Module, Operation, RegionLike, Type,
        Value,
    },
    Context,
};
use mlir_sys::{
    mlirBlockAppendOwnedOperation, mlirBlockGetParentRegion, mlirBlockInsertOwnedOperationBefore,
    mlirOpOperandGetNextUse, mlirOpOperandGetOwner, mlirOpOperandIsNull, mlirOperationDestroy,
    mlirOperationGetBlock, mlirOperationGetLocation, mlirOperationGetNextInBlock,
    mlirOperationGetNumOperands, mlirOperationGetNumResults, mlirOperationGetOperand,
    mlirOperationGetParentOperation, mlirOperationGetResult, mlirOperationRemoveFromParent,
    mlirRegionInsertOwnedBlockAfter, mlirValueGetFirstUse, mlirValueGetType,
    mlirValueReplaceAllUsesOfWith, MlirBlock, MlirOperation, MlirValue,
};

use super::LowerError;

/// A raw operation handle inside the module being lowered.
pub type Op = MlirOperation;
/// A raw value handle inside the module being lowered.
pub type Val = MlirValue;

/// One pass's rewrite of the module, and the only way the lowering changes
/// it (rustc's `MirPatch` is the model): it holds the module exclusively
/// (`&'m mut Module`) for as long as the pass runs, so no other reference
/// into the module lives while its raw handles are rewritten, and every
/// mutation (build, set or remove an attribute, replace uses, erase, split
/// a block) is one of its methods. Reading an op through a handle is a free
/// function of this module.
pub struct Patch<'c, 'm> {
    pub ctx: &'c Context,
    /// The pass, for errors.
    pub pass: &'static str,
    module: &'m mut Module<'c>,
}

fn op_ref<'c, 'a>(op: Op) -> OperationRef<'c, 'a> {
    // SAFETY: `op` is a live operation of the module being lowered.
    unsafe { OperationRef::from_raw(op) }
}

pub fn name(op: Op) -> String {
    ir::text_of(op_ref(op).name().as_string_ref())
}

pub fn location<'c>(op: Op) -> Location<'c> {
    // SAFETY: a live operation always has a location.
    unsafe { Location::from_raw(mlirOperationGetLocation(op)) }
}

pub fn operand(op: Op, i: usize) -> Option<Val> {
    // SAFETY: bounds are checked against the operand count.
    unsafe {
        (i < mlirOperationGetNumOperands(op) as usize)
            .then(|| mlirOperationGetOperand(op, i as isize))
    }
}

pub fn operands(op: Op) -> Vec<Val> {
    (0..unsafe { mlirOperationGetNumOperands(op) } as usize)
        .filter_map(|i| operand(op, i))
        .collect()
}

pub fn result(op: Op, i: usize) -> Option<Val> {
    // SAFETY: bounds are checked against the result count.
    unsafe {
        (i < mlirOperationGetNumResults(op) as usize)
            .then(|| mlirOperationGetResult(op, i as isize))
    }
}

fn value<'c, 'a>(v: Val) -> Value<'c, 'a> {
    // SAFETY: `v` is a live value of the module being lowered.
    unsafe { Value::from_raw(v) }
}

pub fn type_of<'c>(v: Val) -> Type<'c> {
    // SAFETY: every value has a type.
    unsafe { Type::from_raw(mlirValueGetType(v)) }
}

/// The op that uses `v`, for every use.
pub fn users(v: Val) -> Vec<Op> {
    let mut out = Vec::new();
    // SAFETY: walks the use list of a live value.
    unsafe {
        let mut u = mlirValueGetFirstUse(v);
        while !mlirOpOperandIsNull(u) {
            out.push(mlirOpOperandGetOwner(u));
            u = mlirOpOperandGetNextUse(u);
        }
    }
    out
}

pub fn next_in_block(op: Op) -> Option<Op> {
    // SAFETY: a null handle means "none".
    let next = unsafe { mlirOperationGetNextInBlock(op) };
    (!next.ptr.is_null()).then_some(next)
}

pub fn block_of(op: Op) -> Option<MlirBlock> {
    // SAFETY: a null handle means "none".
    let b = unsafe { mlirOperationGetBlock(op) };
    (!b.ptr.is_null()).then_some(b)
}

/// The enclosing `func.func`/`llvm.func` of an op.
pub fn enclosing_function(op: Op) -> Option<Op> {
    let mut cur = op;
    loop {
        // SAFETY: a null handle means "none".
        let parent = unsafe { mlirOperationGetParentOperation(cur) };
        if parent.ptr.is_null() {
            return None;
        }
        let n = name(parent);
        if n == "func.func" || n == "llvm.func" {
            return Some(parent);
        }
        cur = parent;
    }
}

/// The first op of the entry block of `op`'s enclosing function: where a
/// stack slot goes, so that it is allocated once a call, not once a loop
/// iteration.
pub fn function_entry(op: Op) -> Option<Op> {
    let f = enclosing_function(op)?;
    // SAFETY: null handles mean "none"; `f` is a live function op.
    unsafe {
        let region = mlir_sys::mlirOperationGetRegion(f, 0);
        let block = mlir_sys::mlirRegionGetFirstBlock(region);
        if block.ptr.is_null() {
            return None;
        }
        let first = mlir_sys::mlirBlockGetFirstOperation(block);
        (!first.ptr.is_null()).then_some(first)
    }
}

/// Every op under `root` (not `root` itself) whose name is in `names`, in
/// pre-order, collected before any rewriting.
pub fn collect(root: Op, names: &[&str]) -> Vec<Op> {
    let mut out = Vec::new();
    op_ref(root).walk(WalkOrder::PreOrder, |op| {
        if op.to_raw().ptr != root.ptr
            && names.contains(&ir::text_of(op.name().as_string_ref()).as_str())
        {
            out.push(op.to_raw());
        }
        WalkResult::Advance
    });
    out
}

pub fn attr<'c>(op: Op, name: &str) -> Option<Attribute<'c>> {
    op_ref::<'c, '_>(op).attribute(name).ok()
}

pub fn str_attr(op: Op, name: &str) -> Option<String> {
    ir::string_attr(attr(op, name)?)
}

/// A `TypeAttr`'s Rust type (see `ir::types`).
pub fn ty_attr(op: Op, name: &str) -> Option<frontend::ty::Ty> {
    ir::types::rust_type_of_attr(attr(op, name)?).ok()
}

/// A symbol reference's name (`@foo` → `foo`).
pub fn symbol_attr(op: Op, name: &str) -> Option<String> {
    ir::facts::symbol_attr(attr(op, name)?)
}

pub fn int_attr(op: Op, name: &str) -> Option<i64> {
    IntegerAttribute::try_from(attr(op, name)?)
        .ok()
        .map(|i| i.value())
}

pub fn bool_attr(op: Op, name: &str) -> Option<bool> {
    BoolAttribute::try_from(attr(op, name)?)
        .ok()
        .map(|b| b.value())
}

/// Names of an op's attributes.
pub fn attr_names(op: Op) -> Vec<String> {
    op_ref(op)
        .attributes()
        .map(|(n, _)| ir::text_of(n.as_string_ref()))
        .collect()
}

/// The ops directly in the first block of `op`'s first region (the
/// module's top-level ops).
pub fn top_level(op: Op) -> Vec<Op> {
    let mut out = Vec::new();
    let r = op_ref(op);
    let Ok(region) = r.region(0) else { return out };
    let Some(block) = region.first_block() else {
        return out;
    };
    let mut cur = block.first_operation().map(|o| o.to_raw());
    while let Some(o) = cur {
        out.push(o);
        cur = next_in_block(o);
    }
    out
}

impl<'c, 'm> Patch<'c, 'm> {
    /// A patch of `module` for the pass `pass`.
    pub fn new(ctx: &'c Context, pass: &'static str, module: &'m mut Module<'c>) -> Self {
        Patch { ctx, pass, module }
    }

    /// The module, to walk.
    pub fn module(&self) -> &Module<'c> {
        self.module
    }

    /// The module, for an upstream MLIR pass manager.
    pub fn module_mut(&mut self) -> &mut Module<'c> {
        self.module
    }

    /// The module's operation, where walks start.
    pub fn root(&self) -> Op {
        self.module.as_operation().to_raw()
    }

    pub fn set_attr(&self, op: Op, name: &str, attribute: Attribute<'_>) {
        // SAFETY: `op` is a live operation of the module being lowered.
        let mut r = unsafe { OperationRefMut::from_raw(op) };
        r.set_attribute(name, attribute);
    }

    /// Removes an attribute; absent is fine.
    pub fn remove_attr(&self, op: Op, name: &str) {
        // SAFETY: `op` is a live operation of the module being lowered.
        let mut r = unsafe { OperationRefMut::from_raw(op) };
        let _ = r.remove_attribute(name);
    }

    pub fn replace_uses(&self, old: Val, new: Val) {
        // SAFETY: both values are live and have the same type (callers ensure).
        unsafe { mlirValueReplaceAllUsesOfWith(old, new) }
    }

    /// Erases an op whose results have no uses left.
    pub fn erase(&self, op: Op) {
        // SAFETY: the op is live; `mlirOperationDestroy` unlinks it first.
        unsafe { mlirOperationDestroy(op) }
    }

    pub fn error(&self, op: Op, message: impl Into<String>) -> LowerError {
        LowerError {
            pass: self.pass,
            loc: Box::new(ir::Loc::decode(location(op))),
            op: name(op),
            function: enclosing_function(op).and_then(|f| str_attr(f, "sym_name")),
            message: message.into(),
        }
    }

    pub fn str_attr(&self, op: Op, name: &str) -> Result<String, LowerError> {
        str_attr(op, name)
            .ok_or_else(|| self.error(op, format!("missing string attribute `{name}`")))
    }

    /// The Rust type of a `TypeAttr` (every `ty`, `from` and `to`).
    pub fn ty_attr(&self, op: Op, name: &str) -> Result<frontend::ty::Ty, LowerError> {
        let a = attr(op, name)
            .ok_or_else(|| self.error(op, format!("missing type attribute `{name}`")))?;
        ir::types::rust_type_of_attr(a).map_err(|e| self.error(op, format!("`{name}`: {e}")))
    }

    pub fn symbol_attr(&self, op: Op, name: &str) -> Result<String, LowerError> {
        symbol_attr(op, name)
            .ok_or_else(|| self.error(op, format!("missing symbol attribute `{name}`")))
    }

    pub fn int_attr(&self, op: Op, name: &str) -> Result<i64, LowerError> {
        int_attr(op, name)
            .ok_or_else(|| self.error(op, format!("missing integer attribute `{name}`")))
    }

    pub fn operand(&self, op: Op, i: usize) -> Result<Val, LowerError> {
        operand(op, i).ok_or_else(|| self.error(op, format!("missing operand {i}")))
    }

    pub fn result(&self, op: Op, i: usize) -> Result<Val, LowerError> {
        result(op, i).ok_or_else(|| self.error(op, format!("missing result {i}")))
    }

    /// The builtin integer type of `bits` bits.
    pub fn int_type(&self, bits: u32) -> Type<'c> {
        IntegerType::new(self.ctx, bits).into()
    }

    /// `!llvm.ptr` (address space 0).
    pub fn ptr_type(&self) -> Type<'c> {
        llvm::r#type::pointer(self.ctx, 0)
    }

    /// `!llvm.struct<(fields…)>`, not packed.
    pub fn struct_type(&self, fields: &[Type<'c>]) -> Type<'c> {
        llvm::r#type::r#struct(self.ctx, fields, false)
    }

    pub fn ident(&self, name: &str) -> Identifier<'c> {
        Identifier::new(self.ctx, name)
    }

    pub fn str(&self, s: &str) -> Attribute<'c> {
        StringAttribute::new(self.ctx, s).into()
    }

    /// `@name`, a reference to a symbol of the module.
    pub fn symbol(&self, name: &str) -> Attribute<'c> {
        FlatSymbolRefAttribute::new(self.ctx, name).into()
    }

    /// An `i64` attribute (a predicate, an alignment).
    pub fn i64_attr(&self, v: i64) -> Attribute<'c> {
        IntegerAttribute::new(self.int_type(64), v).into()
    }

    /// `array<i64: v…>`.
    pub fn i64_array(&self, v: &[i64]) -> Attribute<'c> {
        DenseI64ArrayAttribute::new(self.ctx, v).into()
    }

    /// `array<i32: v…>`.
    pub fn i32_array(&self, v: &[i32]) -> Attribute<'c> {
        DenseI32ArrayAttribute::new(self.ctx, v).into()
    }

    /// A float attribute of float type `ty`; a finite `v` that the type
    /// cannot hold (it would round to an infinity) is an error.
    pub fn float_attr(&self, ty: Type<'c>, v: f64, at: Op) -> Result<Attribute<'c>, LowerError> {
        let max = match ty.float_width() {
            16 => 65504.0,
            32 => f64::from(f32::MAX),
            _ => f64::MAX,
        };
        if v.is_finite() && v.abs() > max {
            return Err(self.error(at, format!("the constant {v:?} does not fit `{ty}`")));
        }
        Ok(FloatAttribute::new(self.ctx, ty, v).into())
    }

    /// An integer attribute of integer type `ty` (up to 128 bits). MLIR's C
    /// API builds integer attributes from an `int64_t` only, so a value
    /// outside `i64` is the one attribute built from its text.
    pub fn wide_int_attr(
        &self,
        ty: Type<'c>,
        v: i128,
        at: Op,
    ) -> Result<Attribute<'c>, LowerError> {
        match i64::try_from(v) {
            Ok(small) => Ok(IntegerAttribute::new(ty, small).into()),
            Err(_) => Attribute::parse(self.ctx, &format!("{v} : {ty}"))
                .ok_or_else(|| self.error(at, format!("MLIR rejects the constant `{v} : {ty}`"))),
        }
    }

    /// Builds `name` at `at`'s location and inserts it before `at`.
    pub fn emit(
        &self,
        at: Op,
        name: &str,
        operands: &[Val],
        results: &[Type<'c>],
        attrs: &[(&str, Attribute<'c>)],
    ) -> Result<Op, LowerError> {
        let op = self.build(at, location(at), name, operands, results, attrs)?;
        let block = block_of(at).ok_or_else(|| self.error(at, "op is not in a block"))?;
        // SAFETY: `at` is in `block`; ownership of `op` moves to the block.
        Ok(unsafe {
            let raw = op.into_raw();
            mlirBlockInsertOwnedOperationBefore(block, at, raw);
            raw
        })
    }

    /// [`Self::emit`] of a one-result op; returns the result.
    pub fn emit1(
        &self,
        at: Op,
        name: &str,
        operands: &[Val],
        result: Type<'c>,
        attrs: &[(&str, Attribute<'c>)],
    ) -> Result<Val, LowerError> {
        let op = self.emit(at, name, operands, &[result], attrs)?;
        self.result(op, 0)
    }

    /// `llvm.getelementptr` from `base` (memory of type `elem`) by constant
    /// `indices` (`i32::MIN` marks where each `dynamic` index goes).
    pub fn gep(
        &self,
        at: Op,
        base: Val,
        indices: &[i32],
        dynamic: &[Val],
        elem: Type<'c>,
    ) -> Result<Val, LowerError> {
        let raw = self.i32_array(indices);
        let elem: Attribute<'c> = melior::ir::attribute::TypeAttribute::new(elem).into();
        let ptr = self.ptr_type();
        let mut operands = vec![base];
        operands.extend_from_slice(dynamic);
        self.emit1(
            at,
            "llvm.getelementptr",
            &operands,
            ptr,
            &[("rawConstantIndices", raw), ("elem_type", elem)],
        )
    }

    /// A stack slot of type `elem` at the start of the function that holds
    /// `at` (one allocation a call, even when `at` is in a loop).
    pub fn alloca(&self, at: Op, elem: Type<'c>) -> Result<Val, LowerError> {
        let place = function_entry(at).unwrap_or(at);
        let one = self.int_const(place, self.int_type(64), 1)?;
        let ptr = self.ptr_type();
        let elem: Attribute<'c> = melior::ir::attribute::TypeAttribute::new(elem).into();
        self.emit1(place, "llvm.alloca", &[one], ptr, &[("elem_type", elem)])
    }

    /// Builds an op; MLIR's verifier must accept it alone (parent-free checks).
    pub fn build(
        &self,
        at: Op,
        loc: Location<'c>,
        name: &str,
        operands: &[Val],
        results: &[Type<'c>],
        attrs: &[(&str, Attribute<'c>)],
    ) -> Result<Operation<'c>, LowerError> {
        let operands: Vec<Value<'c, '_>> = operands.iter().map(|v| value(*v)).collect();
        let attrs: Vec<(Identifier<'c>, Attribute<'c>)> =
            attrs.iter().map(|(n, a)| (self.ident(n), *a)).collect();
        OperationBuilder::new(name, loc)
            .add_operands(&operands)
            .add_results(results)
            .add_attributes(&attrs)
            .build()
            .map_err(|e| self.error(at, format!("cannot build `{name}`: {e}")))
    }

    /// An integer constant of builtin type `ty` (`arith.constant`).
    pub fn int_const(&self, at: Op, ty: Type<'c>, v: i64) -> Result<Val, LowerError> {
        let attr: Attribute<'c> = IntegerAttribute::new(ty, v).into();
        self.emit1(at, "arith.constant", &[], ty, &[("value", attr)])
    }

    /// Moves every op after `at` (exclusive) into a new block inserted after
    /// `at`'s block, and returns the new block. `at` becomes the last op of
    /// its block: the caller appends a terminator.
    pub fn split_after(&self, at: Op) -> Result<MlirBlock, LowerError> {
        let block = block_of(at).ok_or_else(|| self.error(at, "op is not in a block"))?;
        // SAFETY: the block is live and in a region (it is inside a function).
        unsafe {
            let region = mlirBlockGetParentRegion(block);
            let new = Block::new(&[]).into_raw();
            mlirRegionInsertOwnedBlockAfter(region, block, new);
            let mut cur = next_in_block(at);
            while let Some(op) = cur {
                cur = next_in_block(op);
                mlirOperationRemoveFromParent(op);
                mlirBlockAppendOwnedOperation(new, op);
            }
            Ok(new)
        }
    }

    /// A new empty block after `after` in the same region.
    pub fn new_block_after(&self, after: MlirBlock) -> MlirBlock {
        // SAFETY: `after` is a live block in a region.
        unsafe {
            let region = mlirBlockGetParentRegion(after);
            let new = Block::new(&[]).into_raw();
            mlirRegionInsertOwnedBlockAfter(region, after, new);
            new
        }
    }

    /// Builds `name` and appends it to `block` (a terminator or trap).
    pub fn append(
        &self,
        block: MlirBlock,
        at: Op,
        name: &str,
        operands: &[Val],
        successors: &[MlirBlock],
        attrs: &[(&str, Attribute<'c>)],
    ) -> Result<Op, LowerError> {
        let operands: Vec<Value<'c, '_>> = operands.iter().map(|v| value(*v)).collect();
        let attrs: Vec<(Identifier<'c>, Attribute<'c>)> =
            attrs.iter().map(|(n, a)| (self.ident(n), *a)).collect();
        // SAFETY: successor blocks are live blocks of the same region.
        let succ: Vec<melior::ir::BlockRef<'c, '_>> = successors
            .iter()
            .map(|b| unsafe { melior::ir::BlockRef::from_raw(*b) })
            .collect();
        let succ_refs: Vec<&Block<'c>> = succ.iter().map(|b| &**b).collect();
        let op = OperationBuilder::new(name, location(at))
            .add_operands(&operands)
            .add_successors(&succ_refs)
            .add_attributes(&attrs)
            .build()
            .map_err(|e| self.error(at, format!("cannot build `{name}`: {e}")))?;
        // SAFETY: ownership of the op moves to the block.
        Ok(unsafe {
            let raw = op.into_raw();
            mlirBlockAppendOwnedOperation(block, raw);
            raw
        })
    }
}
