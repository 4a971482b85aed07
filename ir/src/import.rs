//! Prepared MIR → an `rmir` module.
//!
//! Module-level facts (registrations, closures, captures) become attribute-only
//! ops; the bodies reachable from registered callbacks and every closure body
//! (plus, transitively, the local bodies they call) become `func.func`s.
//!
//! Memory model: every MIR local has a slot (`rmir.local`, an `!llvm.ptr`);
//! places are addresses built by `rmir.field`/`rmir.deref`/…; values are
//! scalars (builtin types) or thin pointers (`!llvm.ptr`). A value of any other
//! type (aggregate, fat pointer, closure) is represented by the address of
//! memory that holds it ("memory types"), copied with `rmir.copy`.
//!
//! Importing never fails on what MIR contains: a statement or terminator the
//! importer cannot model becomes `rmir.unsupported` with its MIR text, so
//! admission rejects it with a span. [`ImportError`] means MLIR rejected what
//! the importer built (a bug here), reported with MLIR's diagnostics.

use std::collections::{BTreeSet, HashMap};

use vocab::CallKind;

use frontend::{
    pmir::{
        place_ty, AggregateKind, BinOp, Block as MirBlock, Body, BodyKind, Callback, CaptureMode,
        Closure, ClosureKind, Constant, Operand, Place, PreparedMir, Projection, Resolution,
        Rvalue, Span, StatementKind, TerminatorKind, UnOp, UnwindAction,
    },
    ty::{Scalar, Ty},
};
use melior::{
    ir::{
        attribute::{
            ArrayAttribute, BoolAttribute, DenseElementsAttribute, DenseI32ArrayAttribute,
            DictionaryAttribute, IntegerAttribute, StringAttribute, TypeAttribute,
        },
        block::BlockLike,
        operation::{OperationBuilder, OperationLike, OperationMutLike},
        r#type::{FunctionType, IntegerType, RankedTensorType},
        Attribute, Block, BlockRef, Identifier, Location, Module, OperationRef, Region, RegionLike,
        Type, Value, ValueLike,
    },
    Context,
};

use crate::{
    diag::{capture_diagnostics, Diagnostic},
    loc::{Loc, MirPos, SourcePos},
    mirtext,
};

/// MLIR rejected an op the importer built: a bug in the importer.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportError {
    pub message: String,
    pub diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        for d in &self.diagnostics {
            write!(f, "\n  {d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ImportError {}

/// Imports prepared MIR into a new module of `context` (which must have the
/// rmir dialect loaded: see [`crate::context`]). The module is verified.
pub fn import<'c>(context: &'c Context, pmir: &PreparedMir) -> Result<Module<'c>, ImportError> {
    let (result, diagnostics) = capture_diagnostics(context, || import_inner(context, pmir));
    match result {
        Ok(module) if module.as_operation().verify() => Ok(module),
        Ok(_) => Err(ImportError {
            message: "the imported module does not verify".into(),
            diagnostics,
        }),
        Err(message) => Err(ImportError {
            message,
            diagnostics,
        }),
    }
}

fn import_inner<'c>(context: &'c Context, pmir: &PreparedMir) -> Result<Module<'c>, String> {
    let file_loc = Location::new(context, &pmir.source.file, 1, 1);
    let mut module = Module::new(file_loc);
    let attrs = module_attributes(context, pmir);
    {
        let mut op = module.as_operation_mut();
        for (name, value) in attrs {
            op.set_attribute(&name, value);
        }
    }
    let m = Importer {
        context,
        pmir,
        ptr: melior::dialect::llvm::r#type::pointer(context, 0),
        adts: adts_with_closures(pmir),
    };
    let body = module.body();
    for r in &pmir.registrations {
        body.append_operation(m.registration(r)?);
    }
    for c in &pmir.closures {
        body.append_operation(m.closure(c)?);
        for capture in &c.captures {
            body.append_operation(m.capture(c, capture)?);
        }
        if let Some(layout) = &c.layout {
            body.append_operation(m.env_layout(c, layout)?);
        }
    }
    for d in &pmir.adts {
        body.append_operation(m.adt(d)?);
    }
    for e in &pmir.elements {
        body.append_operation(m.element_layout(e)?);
    }
    for b in imported_bodies(pmir) {
        body.append_operation(m.body(b)?);
    }
    Ok(module)
}

fn module_attributes<'c>(context: &'c Context, pmir: &PreparedMir) -> Vec<(String, Attribute<'c>)> {
    let s = &pmir.source;
    let mut v: Vec<(String, Attribute<'c>)> = vec![
        (
            "rmir.format".into(),
            StringAttribute::new(context, &pmir.format).into(),
        ),
        (
            "rmir.source_file".into(),
            StringAttribute::new(context, &s.file).into(),
        ),
        (
            "rmir.mir_file".into(),
            StringAttribute::new(context, &s.mir_file).into(),
        ),
    ];
    if !s.modules.is_empty() {
        let files: Vec<Attribute<'c>> = s
            .modules
            .iter()
            .map(|m| StringAttribute::new(context, &m.file).into())
            .collect();
        v.push((
            "rmir.source_modules".into(),
            ArrayAttribute::new(context, &files).into(),
        ));
    }
    if let Some(r) = &s.rustc {
        v.push(("rmir.rustc".into(), StringAttribute::new(context, r).into()));
    }
    if let Some(o) = s.opt_level {
        v.push((
            "rmir.opt_level".into(),
            IntegerAttribute::new(IntegerType::new(context, 64).into(), o as i64).into(),
        ));
    }
    if let Some(c) = s.overflow_checks {
        v.push((
            "rmir.overflow_checks".into(),
            BoolAttribute::new(context, c).into(),
        ));
    }
    v
}

/// Registered callbacks and every closure body, then the local bodies they
/// call, transitively; in document order.
pub fn imported_bodies(pmir: &PreparedMir) -> Vec<&Body> {
    let mut wanted: BTreeSet<&str> = BTreeSet::new();
    let mut work: Vec<&str> = Vec::new();
    for r in &pmir.registrations {
        match &r.callback {
            Callback::Closure { body } | Callback::FnItem { body } => work.push(body),
            Callback::Other { .. } => {}
        }
    }
    work.extend(pmir.closures.iter().map(|c| c.body.as_str()));
    while let Some(name) = work.pop() {
        let Some(body) = pmir.body(name) else {
            continue;
        };
        if !wanted.insert(&body.name) {
            continue;
        }
        for block in &body.blocks {
            if let TerminatorKind::Call { callee, .. } = &block.terminator.kind {
                if let Resolution::Local { body } = &callee.resolution {
                    work.push(body);
                }
            }
        }
    }
    pmir.bodies
        .iter()
        .filter(|b| wanted.contains(b.name.as_str()))
        .collect()
}

/// How a MIR type is represented as an MLIR value.
#[derive(Clone, Copy)]
enum Repr<'c> {
    /// A builtin scalar or `!llvm.ptr` (thin pointer).
    Value(Type<'c>),
    /// An aggregate/fat pointer/…: an `!llvm.ptr` to memory holding it.
    Memory,
    /// `()` and `!`: no value.
    Nothing,
}

/// The builtin type of a scalar (`i8` for `u8`, `i1` for `bool`; the GPU
/// target is 64-bit), the one table the importer and the lowering share.
pub fn scalar_type<'c>(context: &'c Context, s: Scalar) -> Type<'c> {
    let int = |bits| IntegerType::new(context, bits).into();
    match s {
        Scalar::Bool => int(1),
        Scalar::I8 | Scalar::U8 => int(8),
        Scalar::I16 | Scalar::U16 => int(16),
        Scalar::I32 | Scalar::U32 | Scalar::Char => int(32),
        Scalar::I64 | Scalar::U64 | Scalar::Isize | Scalar::Usize => int(64),
        Scalar::I128 | Scalar::U128 => int(128),
        Scalar::F16 => Type::float16(context),
        Scalar::F32 => Type::float32(context),
        Scalar::F64 => Type::float64(context),
        Scalar::F128 => Type::parse(context, "f128").unwrap_or_else(|| Type::float64(context)),
    }
}

/// Why a pointer to an unsized type is refused: a slice's length is known
/// only where it is borrowed from an array (`frontend::slices`).
fn unsized_pointer(ty: &Ty) -> String {
    match ty {
        Ty::Ref { inner, .. } | Ty::Ptr { inner, .. } if matches!(**inner, Ty::Slice(_)) => {
            format!(
            "a slice whose length is not known here (`{ty}`): the GPU side knows the length of \
             a slice borrowed from an array in the same function"
        )
        }
        _ => format!("a `{ty}` is a fat pointer"),
    }
}

fn is_sized(ty: &Ty) -> bool {
    !matches!(ty, Ty::Slice(_) | Ty::Str | Ty::Other(_))
}

fn bits(s: Scalar) -> u32 {
    match s {
        Scalar::Bool => 1,
        Scalar::I8 | Scalar::U8 => 8,
        Scalar::I16 | Scalar::U16 | Scalar::F16 => 16,
        Scalar::I32 | Scalar::U32 | Scalar::Char | Scalar::F32 => 32,
        Scalar::I64 | Scalar::U64 | Scalar::Isize | Scalar::Usize | Scalar::F64 => 64,
        Scalar::I128 | Scalar::U128 | Scalar::F128 => 128,
    }
}

fn is_float(s: Scalar) -> bool {
    matches!(s, Scalar::F16 | Scalar::F32 | Scalar::F64 | Scalar::F128)
}

fn is_signed(s: Scalar) -> bool {
    matches!(
        s,
        Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::I128 | Scalar::Isize
    )
}

struct Importer<'c, 'p> {
    context: &'c Context,
    pmir: &'p PreparedMir,
    ptr: Type<'c>,
    /// The definitions of the document's structs and enums.
    adts: frontend::adt::Adts,
}

impl<'c, 'p> Importer<'c, 'p> {
    fn repr(&self, ty: &Ty) -> Repr<'c> {
        match ty {
            Ty::Scalar(s) => Repr::Value(scalar_type(self.context, *s)),
            Ty::Ref { inner, .. } | Ty::Ptr { inner, .. } if is_sized(inner) => {
                Repr::Value(self.ptr)
            }
            Ty::FnPtr(_) => Repr::Value(self.ptr),
            Ty::Never => Repr::Nothing,
            t if t.is_unit() => Repr::Nothing,
            _ => Repr::Memory,
        }
    }

    fn str(&self, s: &str) -> Attribute<'c> {
        StringAttribute::new(self.context, s).into()
    }

    /// A `TypeAttr` of the Rust type `ty` (see [`crate::types`]).
    fn ty(&self, ty: &Ty) -> Attribute<'c> {
        crate::types::type_attr(self.context, ty).unwrap_or_else(|_| {
            // Every `Ty` has a spelling that parses (`types` tests each
            // kind); should one not, the type is kept whole, never lost.
            debug_assert!(false, "no MLIR form for `{ty}`");
            let other = Ty::Other(ty.to_string());
            crate::types::type_attr(self.context, &other)
                .unwrap_or_else(|_| self.str(&ty.to_string()))
        })
    }

    /// A reference to the top-level symbol `name` (a `func.func`).
    fn symbol(&self, name: &str) -> Attribute<'c> {
        melior::ir::attribute::FlatSymbolRefAttribute::new(self.context, name).into()
    }

    fn tys(&self, items: &[Ty]) -> Attribute<'c> {
        let v: Vec<Attribute<'c>> = items.iter().map(|t| self.ty(t)).collect();
        ArrayAttribute::new(self.context, &v).into()
    }

    fn int(&self, v: i64) -> Attribute<'c> {
        IntegerAttribute::new(IntegerType::new(self.context, 64).into(), v).into()
    }

    fn bool(&self, v: bool) -> Attribute<'c> {
        BoolAttribute::new(self.context, v).into()
    }

    fn attrs(&self, list: &[(&str, Attribute<'c>)]) -> Vec<(Identifier<'c>, Attribute<'c>)> {
        list.iter()
            .map(|(n, a)| (Identifier::new(self.context, n), *a))
            .collect()
    }

    fn loc(&self, span: Option<Span>, mir_line: u32) -> Location<'c> {
        Loc {
            source: span.map(|span| SourcePos {
                file: self.pmir.source.file_name(span.file).to_string(),
                span,
            }),
            mir: Some(MirPos {
                file: self.pmir.source.mir_file.clone(),
                line: mir_line,
            }),
        }
        .build(self.context)
    }

    fn fact_op(
        &self,
        name: &str,
        attrs: &[(&str, Attribute<'c>)],
        loc: Location<'c>,
    ) -> Result<melior::ir::Operation<'c>, String> {
        OperationBuilder::new(name, loc)
            .add_attributes(&self.attrs(attrs))
            .build()
            .map_err(|e| format!("cannot build {name}: {e}"))
    }

    fn registration(
        &self,
        r: &frontend::pmir::Registration,
    ) -> Result<melior::ir::Operation<'c>, String> {
        let (kind, callback) = match &r.callback {
            Callback::Closure { body } => ("closure", self.symbol(body)),
            Callback::FnItem { body } => ("fn_item", self.symbol(body)),
            Callback::Other { ty } => ("other", self.ty(&Ty::parse(ty))),
        };
        self.fact_op(
            "rmir.registration",
            &[
                ("caller", self.str(&r.caller)),
                ("block", self.int(r.block.0 as i64)),
                ("function", self.str(&r.function)),
                ("provider", self.str(r.provider.name())),
                ("callback_kind", self.str(kind)),
                ("callback", callback),
                ("generics", self.tys(&r.generics)),
                ("arg_types", self.tys(&r.arg_types)),
            ],
            self.loc(r.span, r.mir_line),
        )
    }

    fn adt(&self, d: &frontend::adt::AdtDef) -> Result<melior::ir::Operation<'c>, String> {
        let strs = |v: Vec<&str>| -> Attribute<'c> {
            let v: Vec<Attribute<'c>> = v.into_iter().map(|s| self.str(s)).collect();
            ArrayAttribute::new(self.context, &v).into()
        };
        let discrs = d
            .variants
            .iter()
            .map(|v| {
                i64::try_from(v.discr).map(|x| self.int(x)).map_err(|_| {
                    format!(
                        "`{}::{}`'s discriminant {} does not fit 64 bits",
                        d.path, v.name, v.discr
                    )
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let fields: Vec<Ty> = d
            .variants
            .iter()
            .map(|v| Ty::Tuple(v.fields.clone()))
            .collect();
        self.fact_op(
            "rmir.adt_def",
            &[
                ("path", self.str(&d.path)),
                (
                    "params",
                    strs(d.params.iter().map(String::as_str).collect()),
                ),
                ("kind", self.str(d.kind.name())),
                ("discr", self.ty(&Ty::Scalar(d.discr))),
                (
                    "variants",
                    strs(d.variants.iter().map(|v| v.name.as_str()).collect()),
                ),
                ("discrs", ArrayAttribute::new(self.context, &discrs).into()),
                ("fields", self.tys(&fields)),
            ],
            Location::new(self.context, &self.pmir.source.file, 1, 1),
        )
    }

    fn closure_loc(&self, c: &Closure) -> Location<'c> {
        let line = self.pmir.body(&c.body).map(|b| b.mir_line).unwrap_or(0);
        self.loc(Some(c.span), line)
    }

    fn closure(&self, c: &Closure) -> Result<melior::ir::Operation<'c>, String> {
        let kind = match c.kind {
            ClosureKind::Fn => "fn",
            ClosureKind::FnMut => "fn_mut",
            ClosureKind::FnOnce => "fn_once",
        };
        self.fact_op(
            "rmir.closure",
            &[
                ("body", self.symbol(&c.body)),
                ("ty", self.ty(&c.ty)),
                ("kind", self.str(kind)),
                ("params", self.tys(&c.params)),
                ("ret", self.ty(&c.ret)),
            ],
            self.closure_loc(c),
        )
    }

    fn env_layout(
        &self,
        c: &Closure,
        layout: &frontend::pmir::ObjectLayout,
    ) -> Result<melior::ir::Operation<'c>, String> {
        let attrs = self.layout_attrs(("closure", self.symbol(&c.body)), layout)?;
        self.fact_op("rmir.env_layout", &attrs, self.closure_loc(c))
    }

    /// A composite element's measured layout (`pmir::ElementLayout`): as
    /// an `rmir.env_layout`'s, of one capture at offset 0.
    fn element_layout(
        &self,
        e: &frontend::pmir::ElementLayout,
    ) -> Result<melior::ir::Operation<'c>, String> {
        let attrs = self.layout_attrs(("ty", self.ty(&e.ty)), &e.layout)?;
        // A type has no one place in the source: the file's.
        let file = Location::new(self.context, &self.pmir.source.file, 1, 1);
        self.fact_op("rmir.element_layout", &attrs, file)
    }

    /// A layout's attributes after `owner`: size, alignment, offsets and
    /// the aggregate captures' scalars in parallel arrays (absent when
    /// every capture is a scalar).
    fn layout_attrs(
        &self,
        owner: (&'static str, Attribute<'c>),
        layout: &frontend::pmir::ObjectLayout,
    ) -> Result<Vec<(&'static str, Attribute<'c>)>, String> {
        let int = |v: u64| i64::try_from(v).map_err(|_| format!("layout value {v} too large"));
        let offsets = layout
            .offsets
            .iter()
            .map(|&o| Ok(self.int(int(o)?)))
            .collect::<Result<Vec<_>, String>>()?;
        let mut attrs = vec![
            owner,
            ("size", self.int(int(layout.size)?)),
            ("align", self.int(int(layout.align)?)),
            (
                "offsets",
                ArrayAttribute::new(self.context, &offsets).into(),
            ),
        ];
        // The scalars of aggregate captures, in parallel arrays (absent
        // when every capture is a scalar).
        if !layout.leaves.is_empty() {
            let mut captures = Vec::new();
            let mut paths = Vec::new();
            let mut types = Vec::new();
            let mut at = Vec::new();
            for l in &layout.leaves {
                captures.push(self.int(i64::from(l.capture)));
                let path: Vec<String> = l.path.iter().map(u32::to_string).collect();
                paths.push(self.str(&path.join(".")));
                types.push(l.ty.clone());
                at.push(self.int(int(l.offset)?));
            }
            attrs.push((
                "leaf_captures",
                ArrayAttribute::new(self.context, &captures).into(),
            ));
            attrs.push((
                "leaf_paths",
                ArrayAttribute::new(self.context, &paths).into(),
            ));
            attrs.push(("leaf_types", self.tys(&types)));
            attrs.push((
                "leaf_offsets",
                ArrayAttribute::new(self.context, &at).into(),
            ));
        }
        Ok(attrs)
    }

    fn capture(
        &self,
        c: &Closure,
        capture: &frontend::pmir::Capture,
    ) -> Result<melior::ir::Operation<'c>, String> {
        let mode = match capture.mode {
            CaptureMode::ByValue => "by_value",
            CaptureMode::ByRef => "by_ref",
            CaptureMode::ByMutRef => "by_mut_ref",
        };
        // The `debug name => …` line in the closure body is the MIR fact.
        let body = self.pmir.body(&c.body);
        let line = body
            .and_then(|b| b.debug_vars.iter().find(|d| d.name == capture.name))
            .map(|d| d.mir_line)
            .or(body.map(|b| b.mir_line))
            .unwrap_or(0);
        self.fact_op(
            "rmir.capture",
            &[
                ("closure", self.symbol(&c.body)),
                ("name", self.str(&capture.name)),
                ("field", self.int(capture.field as i64)),
                ("ty", self.ty(&capture.ty)),
                ("mode", self.str(mode)),
            ],
            self.loc(capture.span.or(Some(c.span)), line),
        )
    }

    fn body(&self, body: &'p Body) -> Result<melior::ir::Operation<'c>, String> {
        let context = self.context;
        // Documents are validated on read; a body built in memory may not be.
        let (Some(ret), Some(args)) = (
            body.locals.first(),
            body.locals.get(1..=body.arg_count as usize),
        ) else {
            return Err(format!(
                "body `{}`: {} locals cannot hold the return place and {} arguments",
                body.name,
                body.locals.len(),
                body.arg_count
            ));
        };
        let mut inputs = Vec::new();
        let mut arg_attrs = Vec::new();
        for a in args {
            inputs.push(match self.repr(&a.ty) {
                Repr::Value(t) => t,
                Repr::Memory | Repr::Nothing => self.ptr,
            });
            arg_attrs.push(self.ty_dict(&a.ty));
        }
        let ret_ty = &ret.ty;
        // A result in memory (a tuple, a struct, an enum) is written by the
        // callee to the caller's place, whose address comes last
        // (`rmir.sret`): a pointer to the callee's own slot would dangle
        // once it returns.
        let results: Vec<Type<'c>> = match self.repr(ret_ty) {
            Repr::Value(t) => vec![t],
            Repr::Memory => {
                inputs.push(self.ptr);
                arg_attrs.push(
                    DictionaryAttribute::new(
                        context,
                        &[
                            (Identifier::new(context, "rmir.ty"), self.ty(ret_ty)),
                            (
                                Identifier::new(context, "rmir.sret"),
                                BoolAttribute::new(context, true).into(),
                            ),
                        ],
                    )
                    .into(),
                );
                vec![]
            }
            Repr::Nothing => vec![],
        };
        let res_attrs: Vec<Attribute<'c>> = if results.is_empty() {
            vec![]
        } else {
            vec![self.ty_dict(ret_ty)]
        };
        let loc = self.loc(body.span, body.mir_line);
        let region = Region::new();
        let entry = region.append_block(Block::new(
            &inputs.iter().map(|t| (*t, loc)).collect::<Vec<_>>(),
        ));
        let blocks: Vec<BlockRef<'c, '_>> = body
            .blocks
            .iter()
            .map(|_| region.append_block(Block::new(&[])))
            .collect();
        let closure = match body.kind {
            BodyKind::Closure => self.pmir.closure(&body.name),
            _ => None,
        };
        let mut b = BodyBuilder {
            m: self,
            body,
            closure,
            env: closure.and_then(|_| entry.argument(0).ok().map(Into::into)),
            slots: Vec::new(),
            sret: None,
            block_index: body
                .blocks
                .iter()
                .enumerate()
                .map(|(i, blk)| (blk.id.0, i))
                .collect(),
            blocks: blocks.clone(),
            cur: entry,
            loc,
            span: body.span,
        };
        b.prologue(entry)?;
        let panics = frontend::panics::panic_blocks(body);
        let live = frontend::parse::reachable_without_unwinding(body);
        for (i, blk) in body.blocks.iter().enumerate() {
            b.cur = blocks[i];
            if !live[i] {
                // Cleanup code: a GPU does not unwind, so nothing reaches it.
                b.loc = self.loc(body.span, blk.mir_line);
                b.op("llvm.unreachable", &[], &[], &[]).map_err(|u| u.0)?;
            } else if panics[i] {
                b.panic_block(blk)?;
            } else {
                b.block(blk)?;
            }
        }
        drop(b);
        let kind = match body.kind {
            BodyKind::Fn => "fn",
            BodyKind::Closure => "closure",
            BodyKind::Const => "const",
        };
        let mut attrs = vec![("sym_name", self.str(&body.name))];
        if !body.generic_params.is_empty() {
            let params: Vec<Attribute<'c>> =
                body.generic_params.iter().map(|p| self.str(p)).collect();
            attrs.push((
                "rmir.generic_params",
                ArrayAttribute::new(self.context, &params).into(),
            ));
        }
        OperationBuilder::new("func.func", loc)
            .add_attributes(&self.attrs(&[
                attrs[0],
                (
                    "function_type",
                    TypeAttribute::new(FunctionType::new(context, &inputs, &results).into()).into(),
                ),
                ("arg_attrs", ArrayAttribute::new(context, &arg_attrs).into()),
                ("res_attrs", ArrayAttribute::new(context, &res_attrs).into()),
                ("rmir.kind", self.str(kind)),
            ]))
            .add_attributes(&self.attrs(&attrs[1..]))
            .add_regions([region])
            .build()
            .map_err(|e| format!("cannot build func.func @{}: {e}", body.name))
    }

    fn ty_dict(&self, ty: &Ty) -> Attribute<'c> {
        DictionaryAttribute::new(
            self.context,
            &[(Identifier::new(self.context, "rmir.ty"), self.ty(ty))],
        )
        .into()
    }
}

/// The document's structs and enums, and its closures as the structs of
/// their captures ([`frontend::adt::Adts::add_closure`]).
fn adts_with_closures(pmir: &PreparedMir) -> frontend::adt::Adts {
    let mut adts = frontend::adt::Adts::new(&pmir.adts);
    for c in &pmir.closures {
        let mut captures: Vec<&frontend::pmir::Capture> = c.captures.iter().collect();
        captures.sort_by_key(|k| k.field);
        adts.add_closure(&c.ty, captures.into_iter().map(|k| k.ty.clone()).collect());
    }
    adts
}

/// Why a statement or terminator became `rmir.unsupported`.
struct Unsupported(String);

type Res<T> = Result<T, Unsupported>;

fn unsupported<T>(reason: impl Into<String>) -> Res<T> {
    Err(Unsupported(reason.into()))
}

/// Where a place lives: in the closure environment (capture field/name) or not.
#[derive(Clone)]
struct EnvRoot {
    field: u32,
    name: String,
}

struct BodyBuilder<'c, 'a, 'm, 'p> {
    m: &'m Importer<'c, 'p>,
    body: &'p Body,
    closure: Option<&'p Closure>,
    /// The environment pointer (argument 0 of a closure body).
    env: Option<Value<'c, 'a>>,
    slots: Vec<Value<'c, 'a>>,
    /// The caller's place for a result in memory (`rmir.sret`): `_0` is a
    /// local like any other, copied there at each `return`.
    sret: Option<Value<'c, 'a>>,
    block_index: HashMap<u32, usize>,
    blocks: Vec<BlockRef<'c, 'a>>,
    cur: BlockRef<'c, 'a>,
    loc: Location<'c>,
    span: Option<Span>,
}

impl<'c, 'a> BodyBuilder<'c, 'a, '_, '_> {
    fn context(&self) -> &'c Context {
        self.m.context
    }

    /// Appends an op at the current location; MLIR-level build failures are
    /// importer bugs and surface as an unsupported construct with the reason.
    fn op(
        &self,
        name: &str,
        operands: &[Value<'c, 'a>],
        results: &[Type<'c>],
        attrs: &[(&str, Attribute<'c>)],
    ) -> Res<OperationRef<'c, 'a>> {
        self.op_at(name, operands, results, attrs, self.loc)
    }

    fn op_at(
        &self,
        name: &str,
        operands: &[Value<'c, 'a>],
        results: &[Type<'c>],
        attrs: &[(&str, Attribute<'c>)],
        loc: Location<'c>,
    ) -> Res<OperationRef<'c, 'a>> {
        let op = OperationBuilder::new(name, loc)
            .add_operands(operands)
            .add_results(results)
            .add_attributes(&self.m.attrs(attrs))
            .build()
            .map_err(|e| Unsupported(format!("cannot build {name}: {e}")))?;
        // IRDL constraints (one type per constraint, required attributes)
        // are checked here so a violation is one unsupported statement, not
        // a failed import. Upstream ops need their parent to verify.
        if name.starts_with("rmir.") && !op.verify() {
            return unsupported(format!("{name} does not verify with these operand types"));
        }
        Ok(self.cur.append_operation(op))
    }

    fn value(
        &self,
        name: &str,
        operands: &[Value<'c, 'a>],
        result: Type<'c>,
        attrs: &[(&str, Attribute<'c>)],
    ) -> Res<Value<'c, 'a>> {
        let op = self.op(name, operands, &[result], attrs)?;
        result_of(op, 0)
    }

    fn ty_of(&self, place: &Place) -> Res<Ty> {
        match place_ty(self.body, place) {
            Some(t) => Ok(t),
            None => unsupported(format!("cannot type the place `{}`", mirtext::place(place))),
        }
    }

    fn prologue(&mut self, entry: BlockRef<'c, 'a>) -> Result<(), String> {
        for l in &self.body.locals {
            let op = self
                .op(
                    "rmir.local",
                    &[],
                    &[self.m.ptr],
                    &[
                        ("index", self.m.int(l.local.0 as i64)),
                        ("ty", self.m.ty(&l.ty)),
                    ],
                )
                .map_err(|u| u.0)?;
            self.slots.push(result_of(op, 0).map_err(|u| u.0)?);
        }
        let params = self.body.arg_count as usize;
        if entry.argument_count() > params {
            // The caller's place for a result in memory (`rmir.sret`).
            let sret = entry.argument(params).map_err(|e| e.to_string())?;
            self.sret = Some(sret.into());
        }
        for i in 0..params.min(entry.argument_count()) {
            let arg: Value<'c, 'a> = entry.argument(i).map_err(|e| e.to_string())?.into();
            let local = &self.body.locals[i + 1];
            let slot = self.slots[i + 1];
            let ty = self.m.ty(&local.ty);
            match self.m.repr(&local.ty) {
                Repr::Value(_) => self.op("rmir.store", &[slot, arg], &[], &[("ty", ty)]),
                Repr::Memory => self.op("rmir.copy", &[slot, arg], &[], &[("ty", ty)]),
                Repr::Nothing => continue,
            }
            .map_err(|u| u.0)?;
        }
        let Some(first) = self.blocks.first().copied() else {
            // A body without blocks: nothing to run.
            self.op("rmir.unreachable", &[], &[], &[])
                .map_err(|u| u.0)?;
            self.op("llvm.unreachable", &[], &[], &[])
                .map_err(|u| u.0)?;
            return Ok(());
        };
        self.cur
            .append_operation(melior::dialect::cf::br(&first, &[], self.loc));
        Ok(())
    }

    /// A block from which every path panics (`frontend::panics`): one trap,
    /// located at the call that panics; what the block computed only built
    /// the message.
    fn panic_block(&mut self, blk: &MirBlock) -> Result<(), String> {
        let t = &blk.terminator;
        let (function, span) = match &t.kind {
            TerminatorKind::Unreachable => {
                self.loc = self.m.loc(self.span, t.mir_line);
                self.op("rmir.unreachable", &[], &[], &[])
                    .map_err(|u| u.0)?;
                self.op("llvm.unreachable", &[], &[], &[])
                    .map_err(|u| u.0)?;
                return Ok(());
            }
            TerminatorKind::Call { callee, .. } => {
                (callee.path.as_str(), callee.span.or(self.span))
            }
            _ => ("core::panicking::panic", self.span),
        };
        self.loc = self.m.loc(span, t.mir_line);
        self.op(
            "rmir.call",
            &[],
            &[],
            &[
                ("callee", self.m.str(function)),
                ("text", self.m.str(function)),
                ("kind", self.m.str(CallKind::Panic.name())),
                ("receiver", self.m.ty(&Ty::Tuple(Vec::new()))),
                ("unwind", self.m.str("unreachable")),
                ("sret", self.m.bool(false)),
            ],
        )
        .map_err(|u| u.0)?;
        self.op("llvm.unreachable", &[], &[], &[])
            .map_err(|u| u.0)?;
        Ok(())
    }

    fn block(&mut self, blk: &MirBlock) -> Result<(), String> {
        for st in &blk.statements {
            self.loc = self.m.loc(self.span, st.mir_line);
            if let Err(Unsupported(reason)) = self.statement(&st.kind) {
                self.op(
                    "rmir.unsupported",
                    &[],
                    &[],
                    &[
                        ("what", self.m.str(&mirtext::statement(&st.kind))),
                        ("reason", self.m.str(&reason)),
                    ],
                )
                .map_err(|u| u.0)?;
            }
        }
        let t = &blk.terminator;
        self.loc = match &t.kind {
            TerminatorKind::Call { callee, .. } => {
                self.m.loc(callee.span.or(self.span), t.mir_line)
            }
            _ => self.m.loc(self.span, t.mir_line),
        };
        if let Err(Unsupported(reason)) = self.terminator(&t.kind) {
            // Whatever the failed terminator emitted stays, followed by the
            // marker and a real terminator.
            self.op(
                "rmir.unsupported",
                &[],
                &[],
                &[
                    ("what", self.m.str(&mirtext::terminator(&t.kind))),
                    ("reason", self.m.str(&reason)),
                ],
            )
            .map_err(|u| u.0)?;
            self.op("llvm.unreachable", &[], &[], &[])
                .map_err(|u| u.0)?;
        }
        Ok(())
    }

    // ----- places -----

    /// The capture a place starts from, and how many projections that took.
    fn env_root(&self, place: &Place) -> Option<(EnvRoot, Ty, usize)> {
        let closure = self.closure?;
        if place.local.0 != 1 {
            return None;
        }
        let (field, ty, used) = match (closure.kind, place.projections.as_slice()) {
            (ClosureKind::FnOnce, [Projection::Field { index, ty }, ..]) => (*index, ty, 1),
            (_, [Projection::Deref, Projection::Field { index, ty }, ..])
                if closure.kind != ClosureKind::FnOnce =>
            {
                (*index, ty, 2)
            }
            _ => return None,
        };
        let name = closure
            .captures
            .iter()
            .find(|c| c.field == field)
            .map(|c| c.name.clone())
            .unwrap_or_else(|| format!("field{field}"));
        Some((EnvRoot { field, name }, ty.clone(), used))
    }

    fn capture_loc(&self, root: &EnvRoot) -> Location<'c> {
        let span = self
            .closure
            .and_then(|c| c.captures.iter().find(|k| k.field == root.field))
            .and_then(|k| k.span);
        match span {
            Some(s) => {
                let mut l = Loc::decode(self.loc);
                l.source = Some(SourcePos {
                    file: self.m.pmir.source.file_name(s.file).to_string(),
                    span: s,
                });
                l.build(self.context())
            }
            None => self.loc,
        }
    }

    /// The address of a place, and the capture it lies in, if any.
    fn place_addr(&self, place: &Place) -> Res<(Value<'c, 'a>, Option<EnvRoot>)> {
        let (mut addr, mut ty, rest, root) = match (self.env, self.env_root(place)) {
            (Some(env), Some((root, ty, used))) => {
                let op = self.op_at(
                    "rmir.capture_addr",
                    &[env],
                    &[self.m.ptr],
                    &[
                        ("field", self.m.int(root.field as i64)),
                        ("name", self.m.str(&root.name)),
                        ("ty", self.m.ty(&ty)),
                    ],
                    self.capture_loc(&root),
                )?;
                (
                    result_of(op, 0)?,
                    ty,
                    &place.projections[used..],
                    Some(root),
                )
            }
            _ => {
                let Some(slot) = self.slots.get(place.local.0 as usize) else {
                    return unsupported(format!("no local _{}", place.local.0));
                };
                let ty = self.body.locals[place.local.0 as usize].ty.clone();
                (*slot, ty, &place.projections[..], None)
            }
        };
        for p in rest {
            let ptr = self.m.ptr;
            (addr, ty) = match p {
                Projection::Deref => {
                    let inner = match &ty {
                        Ty::Ref { inner, .. } | Ty::Ptr { inner, .. } => (**inner).clone(),
                        Ty::Adt { path, args } if path.ends_with("Box") && !args.is_empty() => {
                            args[0].clone()
                        }
                        t => return unsupported(format!("deref of the non-pointer type `{t}`")),
                    };
                    let v = self.value("rmir.deref", &[addr], ptr, &[("ty", self.m.ty(&ty))])?;
                    (v, inner)
                }
                Projection::Field { index, ty: fty } => {
                    let v = self.value(
                        "rmir.field",
                        &[addr],
                        ptr,
                        &[("index", self.m.int(*index as i64)), ("ty", self.m.ty(fty))],
                    )?;
                    (v, fty.clone())
                }
                Projection::Index(local) => {
                    let elem = element(&ty)?;
                    let idx_place = Place::local(*local);
                    let idx = self.read(&idx_place)?;
                    let v =
                        self.value("rmir.index", &[addr, idx], ptr, &[("ty", self.m.ty(&elem))])?;
                    (v, elem)
                }
                Projection::ConstantIndex {
                    offset,
                    min_length,
                    from_end,
                } => {
                    let elem = element(&ty)?;
                    let v = self.value(
                        "rmir.const_index",
                        &[addr],
                        ptr,
                        &[
                            ("offset", self.m.int(*offset as i64)),
                            ("min_length", self.m.int(*min_length as i64)),
                            ("from_end", self.m.bool(*from_end)),
                            ("ty", self.m.ty(&elem)),
                        ],
                    )?;
                    (v, elem)
                }
                Projection::Downcast(variant) => {
                    let v = self.value(
                        "rmir.downcast",
                        &[addr],
                        ptr,
                        &[("variant", self.m.str(variant)), ("ty", self.m.ty(&ty))],
                    )?;
                    (v, ty)
                }
            };
        }
        Ok((addr, root))
    }

    /// Reads a place of value type.
    fn read(&self, place: &Place) -> Res<Value<'c, 'a>> {
        let ty = self.ty_of(place)?;
        let Repr::Value(t) = self.m.repr(&ty) else {
            return unsupported(format!("`{ty}` is not a scalar or thin pointer"));
        };
        // `(*_1).N` read whole: a capture read.
        if let (Some(env), Some((root, _, used))) = (self.env, self.env_root(place)) {
            if used == place.projections.len() {
                let op = self.op_at(
                    "rmir.capture_read",
                    &[env],
                    &[t],
                    &[
                        ("field", self.m.int(root.field as i64)),
                        ("name", self.m.str(&root.name)),
                        ("ty", self.m.ty(&ty)),
                    ],
                    self.capture_loc(&root),
                )?;
                return result_of(op, 0);
            }
        }
        let (addr, _) = self.place_addr(place)?;
        self.value("rmir.load", &[addr], t, &[("ty", self.m.ty(&ty))])
    }

    /// Writes `value` (of MIR type `ty`) to the place at `addr`.
    fn write(
        &self,
        addr: Value<'c, 'a>,
        root: &Option<EnvRoot>,
        value: Option<Value<'c, 'a>>,
        ty: &Ty,
    ) -> Res<()> {
        let Some(value) = value else { return Ok(()) };
        let tya = self.m.ty(ty);
        if let Some(root) = root {
            self.op_at(
                "rmir.env_write",
                &[addr, value],
                &[],
                &[
                    ("field", self.m.int(root.field as i64)),
                    ("name", self.m.str(&root.name)),
                    ("ty", tya),
                ],
                self.capture_loc(root),
            )?;
            return Ok(());
        }
        match self.m.repr(ty) {
            Repr::Value(_) => self.op("rmir.store", &[addr, value], &[], &[("ty", tya)])?,
            Repr::Memory => self.op("rmir.copy", &[addr, value], &[], &[("ty", tya)])?,
            Repr::Nothing => return Ok(()),
        };
        Ok(())
    }

    fn assign_value(&self, place: &Place, value: Option<Value<'c, 'a>>, ty: &Ty) -> Res<()> {
        if value.is_none() {
            return Ok(());
        }
        let (addr, root) = self.place_addr(place)?;
        self.write(addr, &root, value, ty)
    }

    // ----- operands -----

    fn operand_ty(&self, op: &Operand) -> Option<Ty> {
        frontend::pmir::operand_ty(self.body, op)
    }

    /// Evaluates an operand: its value (value types), its address (memory
    /// types), or nothing (`()`). `want` types constants MIR leaves untyped.
    fn operand(&self, op: &Operand, want: Option<&Ty>) -> Res<(Option<Value<'c, 'a>>, Ty)> {
        match op {
            Operand::Copy(p) | Operand::Move(p) => {
                let ty = self.ty_of(p)?;
                match self.m.repr(&ty) {
                    Repr::Value(_) => Ok((Some(self.read(p)?), ty)),
                    Repr::Memory => Ok((Some(self.place_addr(p)?.0), ty)),
                    Repr::Nothing => Ok((None, ty)),
                }
            }
            Operand::Const(c) => self.constant(c, want),
        }
    }

    /// As [`Self::operand`], but `()` is passed by address too (call arguments).
    fn operand_always(&self, op: &Operand) -> Res<Value<'c, 'a>> {
        let (v, ty) = self.operand(op, None)?;
        match v {
            Some(v) => Ok(v),
            None => match op {
                Operand::Copy(p) | Operand::Move(p) => Ok(self.place_addr(p)?.0),
                Operand::Const(_) => self.value(
                    "rmir.constant",
                    &[],
                    self.m.ptr,
                    &[
                        ("value", self.m.str(&ty.to_string())),
                        ("ty", self.m.ty(&ty)),
                    ],
                ),
            },
        }
    }

    fn constant(&self, c: &Constant, want: Option<&Ty>) -> Res<(Option<Value<'c, 'a>>, Ty)> {
        let ctx = self.context();
        let arith = |attr: Attribute<'c>, ty: Ty| -> Res<(Option<Value<'c, 'a>>, Ty)> {
            let op = self
                .cur
                .append_operation(melior::dialect::arith::constant(ctx, attr, self.loc));
            Ok((Some(result_of(op, 0)?), ty))
        };
        match c {
            Constant::Int { value, ty } => {
                let Some(s) = ty.scalar() else {
                    return unsupported(format!("integer constant of type `{ty}`"));
                };
                let t = scalar_type(ctx, s);
                let attr = if bits(s) <= 64 {
                    IntegerAttribute::new(t, *value as i64).into()
                } else {
                    parse_attr(ctx, &format!("{value} : {t}"))?
                };
                arith(attr, ty.clone())
            }
            Constant::Float { bits: b, ty, .. } => {
                let Some(s) = ty.scalar() else {
                    return unsupported(format!("float constant of type `{ty}`"));
                };
                let t = scalar_type(ctx, s);
                let digits = (bits(s) / 4) as usize;
                arith(
                    parse_attr(ctx, &format!("0x{b:0digits$X} : {t}"))?,
                    ty.clone(),
                )
            }
            Constant::Bool(v) => arith(
                IntegerAttribute::new(IntegerType::new(ctx, 1).into(), *v as i64).into(),
                Ty::Scalar(Scalar::Bool),
            ),
            Constant::Char(ch) => arith(
                IntegerAttribute::new(IntegerType::new(ctx, 32).into(), *ch as i64).into(),
                Ty::Scalar(Scalar::Char),
            ),
            Constant::Unit => Ok((None, Ty::Tuple(vec![]))),
            Constant::ZeroSized(ty) => self.opaque_constant("ZeroSized", ty),
            Constant::FnItem(name) => {
                let ty = want
                    .cloned()
                    .unwrap_or_else(|| Ty::Other(format!("fn item {{{name}}}")));
                self.opaque_constant(name, &ty)
            }
            Constant::Other(text) => match want {
                Some(ty) => self.opaque_constant(text, ty),
                // `const f::promoted[0]`: a constant rustc placed in memory
                // and borrows (`&[1, 2, 3]`, `W.iter()` on a `const` array).
                None if text.contains("::promoted[") => unsupported(
                    "a borrowed constant (`&` of a literal or of a `const` item), which the GPU \
                     lowering does not place in memory",
                ),
                // `Range::<u32> {{ start: 0_u32, end: 4_u32 }}`: a struct
                // constant names its type.
                None => match frontend::adt::struct_constant_type(text) {
                    Some(ty) => self.opaque_constant(text, &ty),
                    None => unsupported(format!(
                        "the constant `{text}`, whose type is not known here"
                    )),
                },
            },
        }
    }

    fn opaque_constant(&self, text: &str, ty: &Ty) -> Res<(Option<Value<'c, 'a>>, Ty)> {
        let t = match self.m.repr(ty) {
            Repr::Value(t) => t,
            Repr::Memory | Repr::Nothing => self.m.ptr,
        };
        let v = self.value(
            "rmir.constant",
            &[],
            t,
            &[("value", self.m.str(text)), ("ty", self.m.ty(ty))],
        )?;
        Ok((Some(v), ty.clone()))
    }

    // ----- statements -----

    fn statement(&self, kind: &StatementKind) -> Res<()> {
        match kind {
            StatementKind::Assign { place, rvalue } => self.assign(place, rvalue),
            // No semantics for code generation.
            StatementKind::StorageLive(_)
            | StatementKind::StorageDead(_)
            | StatementKind::Nop(_) => Ok(()),
            StatementKind::Opaque(text) => {
                unsupported(format!("the statement `{text}` is not modelled"))
            }
            StatementKind::Unparsed { reason, .. } => unsupported(reason.clone()),
            StatementKind::SetDiscriminant { place, variant } => {
                let ty = self.ty_of(place)?;
                let (addr, _) = self.place_addr(place)?;
                self.set_discriminant(addr, *variant as usize, &ty)
            }
        }
    }

    fn assign(&self, place: &Place, rvalue: &Rvalue) -> Res<()> {
        let dest = self.ty_of(place)?;
        match rvalue {
            Rvalue::Use(op) => {
                let (v, _) = self.operand(op, Some(&dest))?;
                self.assign_value(place, v, &dest)
            }
            Rvalue::BinaryOp {
                op: BinOp::Cmp,
                lhs,
                rhs,
            } => self.three_way(place, lhs, rhs, &dest),
            Rvalue::BinaryOp { op, lhs, rhs } => {
                let v = self.binary(*op, lhs, rhs, &dest)?;
                self.assign_value(place, Some(v), &dest)
            }
            Rvalue::CheckedBinaryOp { op, lhs, rhs } => self.checked(place, *op, lhs, rhs, &dest),
            Rvalue::UnaryOp { op, operand } => {
                let v = self.unary(*op, operand, &dest)?;
                self.assign_value(place, Some(v), &dest)
            }
            Rvalue::Cast { kind, operand, ty } => {
                let v = self.cast(kind, operand, ty)?;
                self.assign_value(place, Some(v), &dest)
            }
            Rvalue::Ref {
                mutable,
                place: target,
            } => self.reference(
                place,
                target,
                if *mutable { "mut" } else { "shared" },
                &dest,
            ),
            Rvalue::RawPtr {
                mutable,
                place: target,
            } => self.reference(
                place,
                target,
                if *mutable { "raw_mut" } else { "raw_const" },
                &dest,
            ),
            Rvalue::Aggregate { kind, fields } => self.aggregate(place, kind, fields, &dest),
            Rvalue::Discriminant(target) => {
                let Repr::Value(t) = self.m.repr(&dest) else {
                    return unsupported(format!("discriminant of type `{dest}`"));
                };
                let ty = self.ty_of(target)?;
                let (addr, _) = self.place_addr(target)?;
                let v = self.value("rmir.discriminant", &[addr], t, &[("ty", self.m.ty(&ty))])?;
                self.assign_value(place, Some(v), &dest)
            }
            Rvalue::Repeat { .. } => unsupported("array repeat expressions are not modelled"),
            Rvalue::Len(_) => unsupported("`Len` is not modelled"),
            Rvalue::Other(text) => unsupported(format!("rvalue `{text}` is not modelled")),
        }
    }

    fn reference(&self, dest_place: &Place, target: &Place, kind: &str, dest: &Ty) -> Res<()> {
        let Repr::Value(_) = self.m.repr(dest) else {
            return unsupported(unsized_pointer(dest));
        };
        let (addr, _) = self.place_addr(target)?;
        let v = self.value(
            "rmir.ref",
            &[addr],
            self.m.ptr,
            &[("kind", self.m.str(kind)), ("ty", self.m.ty(dest))],
        )?;
        self.assign_value(dest_place, Some(v), dest)
    }

    fn aggregate(
        &self,
        place: &Place,
        kind: &AggregateKind,
        fields: &[(Option<String>, Operand)],
        dest: &Ty,
    ) -> Res<()> {
        if let Repr::Nothing = self.m.repr(dest) {
            return Ok(());
        }
        if let AggregateKind::Adt(name) = kind {
            if self.m.adts.enum_of(dest).is_some() {
                // `Option::<i32>::Some`, `Less`: the variant is the last segment.
                let variant = name.rsplit("::").next().unwrap_or(name);
                return self.enum_aggregate(place, variant, fields, dest);
            }
        }
        let (kind, name) = match kind {
            AggregateKind::Tuple => ("tuple", String::new()),
            AggregateKind::Array => ("array", String::new()),
            AggregateKind::Closure { ty } => ("closure", ty.to_string()),
            AggregateKind::Adt(name) => ("adt", name.clone()),
            AggregateKind::RawPtr { ty } => {
                return unsupported(format!("building the fat pointer `{ty}` from parts"))
            }
        };
        let (addr, root) = self.place_addr(place)?;
        self.op(
            "rmir.aggregate",
            &[addr],
            &[],
            &[
                ("kind", self.m.str(kind)),
                ("name", self.m.str(&name)),
                ("ty", self.m.ty(dest)),
            ],
        )?;
        let field_tys: Vec<Option<Ty>> = match dest {
            Ty::Tuple(tys) => tys.iter().cloned().map(Some).collect(),
            t => match self.m.adts.struct_fields(t) {
                Some(tys) => tys.into_iter().map(Some).collect(),
                None => vec![],
            },
        };
        for (i, (_, op)) in fields.iter().enumerate() {
            let want = field_tys.get(i).cloned().flatten().or_else(|| match dest {
                Ty::Array(e, _) => Some((**e).clone()),
                _ => None,
            });
            let (v, ty) = self.operand(op, want.as_ref())?;
            let ty = want.unwrap_or(ty);
            let faddr = self.value(
                "rmir.field",
                &[addr],
                self.m.ptr,
                &[("index", self.m.int(i as i64)), ("ty", self.m.ty(&ty))],
            )?;
            self.write(faddr, &root, v, &ty)?;
        }
        Ok(())
    }

    fn set_discriminant(&self, addr: Value<'c, 'a>, variant: usize, ty: &Ty) -> Res<()> {
        self.op(
            "rmir.set_discriminant",
            &[addr],
            &[],
            &[
                ("variant", self.m.int(variant as i64)),
                ("ty", self.m.ty(ty)),
            ],
        )?;
        Ok(())
    }

    /// `Option::<i32>::Some(copy _2)`: the discriminant of the variant,
    /// then each field through the variant's view of the place.
    fn enum_aggregate(
        &self,
        place: &Place,
        variant: &str,
        fields: &[(Option<String>, Operand)],
        dest: &Ty,
    ) -> Res<()> {
        let Some((def, args)) = self.m.adts.enum_of(dest) else {
            return unsupported(format!("`{dest}` is not an enum whose definition is known"));
        };
        let Some(index) = def.variant_index(variant) else {
            return unsupported(format!("`{dest}` has no variant `{variant}`"));
        };
        let field_tys = def.fields(index, args).unwrap_or_default();
        let (addr, root) = self.place_addr(place)?;
        if root.is_some() {
            return unsupported("building an enum inside the closure environment");
        }
        self.set_discriminant(addr, index, dest)?;
        if fields.is_empty() {
            return Ok(());
        }
        let view = self.value(
            "rmir.downcast",
            &[addr],
            self.m.ptr,
            &[("variant", self.m.str(variant)), ("ty", self.m.ty(dest))],
        )?;
        for (i, (_, op)) in fields.iter().enumerate() {
            let want = field_tys.get(i);
            let (v, ty) = self.operand(op, want)?;
            let ty = want.cloned().unwrap_or(ty);
            let faddr = self.value(
                "rmir.field",
                &[view],
                self.m.ptr,
                &[("index", self.m.int(i as i64)), ("ty", self.m.ty(&ty))],
            )?;
            self.write(faddr, &None, v, &ty)?;
        }
        Ok(())
    }

    fn scalar_operands(
        &self,
        lhs: &Operand,
        rhs: &Operand,
    ) -> Res<(Value<'c, 'a>, Scalar, Value<'c, 'a>, Scalar)> {
        let rt = self.operand_ty(rhs);
        let (l, lt) = self.operand(lhs, rt.as_ref())?;
        let (r, rt) = self.operand(rhs, Some(&lt))?;
        // Thin pointers compare as their addresses (`Eq(p, end)` of an
        // iterator over an array).
        let (l, lt) = self.address_of_pointer(l, lt)?;
        let (r, rt) = self.address_of_pointer(r, rt)?;
        match (l, lt.scalar(), r, rt.scalar()) {
            (Some(l), Some(ls), Some(r), Some(rs)) => Ok((l, ls, r, rs)),
            _ => unsupported(format!(
                "operands of type `{lt}` and `{rt}` are not scalars"
            )),
        }
    }

    /// A thin pointer's address as a `usize`; any other value as it is.
    fn address_of_pointer(
        &self,
        v: Option<Value<'c, 'a>>,
        ty: Ty,
    ) -> Res<(Option<Value<'c, 'a>>, Ty)> {
        let (Some(v), Ty::Ref { inner, .. } | Ty::Ptr { inner, .. }) = (v, &ty) else {
            return Ok((v, ty));
        };
        if !is_sized(inner) {
            return Ok((Some(v), ty));
        }
        let usize = Ty::Scalar(Scalar::Usize);
        let address = self.value(
            "rmir.cast",
            &[v],
            scalar_type(self.context(), Scalar::Usize),
            &[
                ("kind", self.m.str("PointerExposeProvenance")),
                ("from", self.m.ty(&ty)),
                ("to", self.m.ty(&usize)),
            ],
        )?;
        Ok((Some(address), usize))
    }

    /// `Offset(p, n)`: the address `n` elements of `p`'s pointee type past
    /// `p` (`p.add(n)`, inlined).
    fn offset(&self, lhs: &Operand, rhs: &Operand) -> Res<Value<'c, 'a>> {
        let (p, pt) = self.operand(lhs, None)?;
        let (n, nt) = self.operand(rhs, None)?;
        let pointee = match &pt {
            Ty::Ref { inner, .. } | Ty::Ptr { inner, .. } if is_sized(inner) => (**inner).clone(),
            _ => return unsupported(format!("`Offset` of a `{pt}`")),
        };
        let (Some(p), Some(n), Some(_)) = (p, n, nt.scalar()) else {
            return unsupported(format!("`Offset` of a `{pt}` by a `{nt}`"));
        };
        self.value(
            "rmir.index",
            &[p, n],
            self.m.ptr,
            &[("ty", self.m.ty(&pointee))],
        )
    }

    fn arith(&self, name: &str, l: Value<'c, 'a>, r: Value<'c, 'a>) -> Res<Value<'c, 'a>> {
        self.value(name, &[l, r], l.r#type(), &[])
    }

    fn binary(&self, op: BinOp, lhs: &Operand, rhs: &Operand, dest: &Ty) -> Res<Value<'c, 'a>> {
        if op == BinOp::Offset {
            return self.offset(lhs, rhs);
        }
        let (l, s, r, rs) = self.scalar_operands(lhs, rhs)?;
        let float = is_float(s);
        let signed = is_signed(s);
        let ctx = self.context();
        let pick = |f: &'static str, si: &'static str, ui: &'static str| {
            if float {
                f
            } else if signed {
                si
            } else {
                ui
            }
        };
        // Predicates are stored as their enum values (`arith.cmpi`'s
        // `predicate = 4 : i64` is `sgt`); the `#arith<cmpi …>` spelling is
        // not an attribute MLIR parses on its own.
        let cmp = |ipred: &str, upred: &str, fpred: &str| -> Res<Value<'c, 'a>> {
            let (name, pred) = if float {
                ("arith.cmpf", predicate_attr(ctx, CMPF_PREDICATES, fpred)?)
            } else if signed {
                ("arith.cmpi", predicate_attr(ctx, CMPI_PREDICATES, ipred)?)
            } else {
                ("arith.cmpi", predicate_attr(ctx, CMPI_PREDICATES, upred)?)
            };
            self.value(
                name,
                &[l, r],
                IntegerType::new(ctx, 1).into(),
                &[("predicate", pred)],
            )
        };
        let _ = dest;
        match op {
            BinOp::Add | BinOp::AddUnchecked => {
                self.arith(pick("arith.addf", "arith.addi", "arith.addi"), l, r)
            }
            BinOp::Sub | BinOp::SubUnchecked => {
                self.arith(pick("arith.subf", "arith.subi", "arith.subi"), l, r)
            }
            BinOp::Mul | BinOp::MulUnchecked => {
                self.arith(pick("arith.mulf", "arith.muli", "arith.muli"), l, r)
            }
            BinOp::Div => self.arith(pick("arith.divf", "arith.divsi", "arith.divui"), l, r),
            BinOp::Rem => self.arith(pick("arith.remf", "arith.remsi", "arith.remui"), l, r),
            BinOp::BitXor if !float => self.arith("arith.xori", l, r),
            BinOp::BitAnd if !float => self.arith("arith.andi", l, r),
            BinOp::BitOr if !float => self.arith("arith.ori", l, r),
            BinOp::Shl | BinOp::Shr | BinOp::ShlUnchecked | BinOp::ShrUnchecked if !float => {
                // MIR's `Shl`/`Shr` take the amount modulo the bit width;
                // the `*Unchecked` forms promise it is in range.
                let amount = self.resize(r, rs, bits(s))?;
                let amount = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    let mask = self.int_const(l.r#type(), (bits(s) - 1) as i64)?;
                    self.arith("arith.andi", amount, mask)?
                } else {
                    amount
                };
                let name = match op {
                    BinOp::Shl | BinOp::ShlUnchecked => "arith.shli",
                    _ if signed => "arith.shrsi",
                    _ => "arith.shrui",
                };
                self.arith(name, l, amount)
            }
            BinOp::Eq => cmp("eq", "eq", "oeq"),
            BinOp::Ne => cmp("ne", "ne", "une"),
            BinOp::Lt => cmp("slt", "ult", "olt"),
            BinOp::Le => cmp("sle", "ule", "ole"),
            BinOp::Gt => cmp("sgt", "ugt", "ogt"),
            BinOp::Ge => cmp("sge", "uge", "oge"),
            _ => unsupported(format!("binary operator `{op:?}` on `{}`", s.name())),
        }
    }

    /// `Cmp(a, b)`: an `Ordering`, -1, 0 or 1 in its discriminant type.
    fn three_way(&self, place: &Place, lhs: &Operand, rhs: &Operand, dest: &Ty) -> Res<()> {
        let Some((def, _)) = self.m.adts.enum_of(dest) else {
            return unsupported(format!("`Cmp` into `{dest}`, not a known enum"));
        };
        let lt = self.binary(BinOp::Lt, lhs, rhs, dest)?;
        let gt = self.binary(BinOp::Gt, lhs, rhs, dest)?;
        let t = scalar_type(self.context(), def.discr);
        let [less, equal, greater] = [-1, 0, 1].map(|v| self.int_const(t, v));
        let above = self.value("arith.select", &[gt, greater?, equal?], t, &[])?;
        let d = self.value("arith.select", &[lt, less?, above], t, &[])?;
        let (addr, root) = self.place_addr(place)?;
        if root.is_some() {
            return unsupported("writing an `Ordering` into the closure environment");
        }
        self.op(
            "rmir.write_discriminant",
            &[addr, d],
            &[],
            &[("ty", self.m.ty(dest))],
        )?;
        Ok(())
    }

    fn int_const(&self, t: Type<'c>, v: i64) -> Res<Value<'c, 'a>> {
        let op = self.cur.append_operation(melior::dialect::arith::constant(
            self.context(),
            IntegerAttribute::new(t, v).into(),
            self.loc,
        ));
        result_of(op, 0)
    }

    /// Zero-extends or truncates an unsigned amount to `to` bits.
    fn resize(&self, v: Value<'c, 'a>, from: Scalar, to: u32) -> Res<Value<'c, 'a>> {
        let t: Type<'c> = IntegerType::new(self.context(), to).into();
        match bits(from).cmp(&to) {
            std::cmp::Ordering::Equal => Ok(v),
            std::cmp::Ordering::Less => self.value("arith.extui", &[v], t, &[]),
            std::cmp::Ordering::Greater => self.value("arith.trunci", &[v], t, &[]),
        }
    }

    fn checked(
        &self,
        place: &Place,
        op: BinOp,
        lhs: &Operand,
        rhs: &Operand,
        dest: &Ty,
    ) -> Res<()> {
        let name = match op {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            _ => return unsupported(format!("checked `{op:?}`")),
        };
        let (l, s, r, rs) = self.scalar_operands(lhs, rhs)?;
        if s != rs {
            return unsupported(format!(
                "checked `{name}` of `{}` and `{}`",
                s.name(),
                rs.name()
            ));
        }
        let checked = self.op(
            "rmir.checked",
            &[l, r],
            &[l.r#type(), IntegerType::new(self.context(), 1).into()],
            &[("op", self.m.str(name))],
        )?;
        let (addr, root) = self.place_addr(place)?;
        let Ty::Tuple(parts) = dest else {
            return unsupported(format!("checked result stored in `{dest}`"));
        };
        for (i, part) in parts.iter().enumerate().take(2) {
            let faddr = self.value(
                "rmir.field",
                &[addr],
                self.m.ptr,
                &[("index", self.m.int(i as i64)), ("ty", self.m.ty(part))],
            )?;
            self.write(faddr, &root, Some(result_of(checked, i)?), part)?;
        }
        Ok(())
    }

    fn unary(&self, op: UnOp, operand: &Operand, dest: &Ty) -> Res<Value<'c, 'a>> {
        let (v, ty) = self.operand(operand, Some(dest))?;
        let (Some(v), Some(s)) = (v, ty.scalar()) else {
            return unsupported(format!("unary `{op:?}` on `{ty}`"));
        };
        match op {
            UnOp::Not if !is_float(s) => {
                let ones = self.int_const(v.r#type(), -1)?;
                self.arith("arith.xori", v, ones)
            }
            UnOp::Neg if is_float(s) => self.value("arith.negf", &[v], v.r#type(), &[]),
            UnOp::Neg => {
                let zero = self.int_const(v.r#type(), 0)?;
                self.arith("arith.subi", zero, v)
            }
            _ => unsupported(format!("unary `{op:?}` on `{ty}`")),
        }
    }

    fn cast(&self, kind: &str, operand: &Operand, to: &Ty) -> Res<Value<'c, 'a>> {
        let (v, from) = self.operand(operand, None)?;
        // `Shape::B as i32` of a fieldless enum: its discriminant, cast.
        let (v, from) = match (v, self.m.adts.enum_of(&from)) {
            (Some(addr), Some((def, _))) if kind == "IntToInt" => {
                let d = Ty::Scalar(def.discr);
                let t = scalar_type(self.context(), def.discr);
                let value =
                    self.value("rmir.discriminant", &[addr], t, &[("ty", self.m.ty(&from))])?;
                (Some(value), d)
            }
            (v, _) => (v, from),
        };
        let Some(v) = v else {
            return unsupported(format!("cast of `{from}`"));
        };
        let Repr::Value(t) = self.m.repr(to) else {
            if let Ty::Ref { .. } | Ty::Ptr { .. } = to {
                return unsupported(unsized_pointer(to));
            }
            return unsupported(format!("cast to the memory type `{to}`"));
        };
        let generic = || {
            self.value(
                "rmir.cast",
                &[v],
                t,
                &[
                    ("kind", self.m.str(kind)),
                    ("from", self.m.ty(&from)),
                    ("to", self.m.ty(to)),
                ],
            )
        };
        let (Some(fs), Some(ts)) = (from.scalar(), to.scalar()) else {
            return generic();
        };
        let (fb, tb) = (bits(fs), bits(ts));
        let name = match kind {
            "IntToInt" if tb == fb => return Ok(v),
            "IntToInt" if tb < fb => "arith.trunci",
            "IntToInt" if is_signed(fs) => "arith.extsi",
            "IntToInt" => "arith.extui",
            "IntToFloat" if is_signed(fs) => "arith.sitofp",
            "IntToFloat" => "arith.uitofp",
            "FloatToFloat" if tb == fb => return Ok(v),
            "FloatToFloat" if tb < fb => "arith.truncf",
            "FloatToFloat" => "arith.extf",
            // Rust's float→int casts saturate; `arith.fpto*i` would be poison.
            _ => return generic(),
        };
        self.value(name, &[v], t, &[])
    }

    // ----- terminators -----

    fn target(&self, b: frontend::pmir::BlockId) -> Res<BlockRef<'c, 'a>> {
        match self.block_index.get(&b.0) {
            Some(i) => Ok(self.blocks[*i]),
            None => unsupported(format!("jump to the missing block bb{}", b.0)),
        }
    }

    fn br(&self, b: frontend::pmir::BlockId) -> Res<()> {
        let dest = self.target(b)?;
        self.cur
            .append_operation(melior::dialect::cf::br(&dest, &[], self.loc));
        Ok(())
    }

    fn terminator(&self, kind: &TerminatorKind) -> Res<()> {
        match kind {
            TerminatorKind::Goto(b) => self.br(*b),
            TerminatorKind::SwitchInt {
                discr,
                targets,
                otherwise,
            } => self.switch(discr, targets, *otherwise),
            TerminatorKind::Return => {
                let ret = &self.body.locals[0].ty;
                let values = match self.m.repr(ret) {
                    Repr::Value(_) => vec![self.read(&Place::local(frontend::pmir::Local(0)))?],
                    // Copied to the caller's slot.
                    Repr::Memory | Repr::Nothing => {
                        if let Some(sret) = self.sret {
                            let ty = self.m.ty(ret);
                            self.op("rmir.copy", &[sret, self.slots[0]], &[], &[("ty", ty)])?;
                        }
                        vec![]
                    }
                };
                self.op("func.return", &values, &[], &[])?;
                Ok(())
            }
            TerminatorKind::Unreachable => {
                self.op("rmir.unreachable", &[], &[], &[])?;
                self.op("llvm.unreachable", &[], &[], &[])?;
                Ok(())
            }
            TerminatorKind::UnwindResume => {
                self.op("rmir.resume", &[], &[], &[])?;
                self.op("llvm.unreachable", &[], &[], &[])?;
                Ok(())
            }
            TerminatorKind::Unparsed { reason, .. } => unsupported(reason.clone()),
            TerminatorKind::Assert {
                cond,
                expected,
                message,
                kind,
                target,
                ..
            } => {
                let (c, ty) = self.operand(cond, Some(&Ty::Scalar(Scalar::Bool)))?;
                let Some(c) = c else {
                    return unsupported(format!("assert on `{ty}`"));
                };
                self.op(
                    "rmir.assert",
                    &[c],
                    &[],
                    &[
                        ("expected", self.m.bool(*expected)),
                        ("kind", self.m.str(kind.name())),
                        ("message", self.m.str(message)),
                    ],
                )?;
                self.br(*target)
            }
            TerminatorKind::Call {
                dest,
                callee,
                args,
                target,
                unwind,
            } => {
                let dest_ty = self.ty_of(dest)?;
                // A panic's arguments and result (its message: string
                // constants, `fmt::Arguments`) are not imported: the call
                // only ever traps, and nothing it builds is used but by
                // another panic call.
                let is_panic = matches!(callee.resolution, Resolution::Panic { .. });
                // A local callee writes a result in memory to `dest`
                // itself (`rmir.sret`); any other call returns its address.
                let sret = matches!(callee.resolution, Resolution::Local { .. })
                    && matches!(self.m.repr(&dest_ty), Repr::Memory);
                let results: Vec<Type<'c>> = match self.m.repr(&dest_ty) {
                    _ if is_panic || sret => vec![],
                    Repr::Value(t) => vec![t],
                    Repr::Memory => vec![self.m.ptr],
                    Repr::Nothing => vec![],
                };
                // Every argument is evaluated before any `rmir.arg` is made,
                // so an unsupported argument leaves no argument unused.
                let values = args
                    .iter()
                    .filter(|_| !is_panic)
                    .map(|a| self.operand_always(a))
                    .collect::<Res<Vec<_>>>()?;
                let mut values = values;
                if sret {
                    let (addr, root) = self.place_addr(dest)?;
                    if root.is_some() {
                        return unsupported(
                            "a call whose result is written into the closure environment",
                        );
                    }
                    values.push(addr);
                }
                let arg_ty = arg_type(self.context())?;
                let mut packed = Vec::new();
                for v in values {
                    packed.push(self.value("rmir.arg", &[v], arg_ty, &[])?);
                }
                let (kind, name) = match &callee.resolution {
                    Resolution::Local { body } => (CallKind::Local, body.as_str()),
                    Resolution::Registration { function, .. } => {
                        (CallKind::Registration, function.as_str())
                    }
                    Resolution::CoreScalar { method, .. } => (CallKind::Core, method.as_str()),
                    Resolution::Panic { function } => (CallKind::Panic, function.as_str()),
                    Resolution::Indirect => (CallKind::Indirect, callee.path.as_str()),
                    // An `extern "C"` function is called by the symbol it
                    // links to; a renamed extern is judged by that symbol.
                    Resolution::Foreign {
                        link_name,
                        extern_c,
                    } => {
                        let symbol = link_name.as_deref();
                        match (extern_c, symbol) {
                            (true, Some(l)) => (CallKind::Extern, l),
                            (true, None) => (
                                CallKind::Extern,
                                callee.path.rsplit("::").next().unwrap_or(&callee.path),
                            ),
                            (false, Some(l)) => (CallKind::Foreign, l),
                            (false, None) => (CallKind::Foreign, callee.path.as_str()),
                        }
                    }
                };
                // A local callee is a symbol (of a `func.func`: verified);
                // any other is a path, for diagnostics and the tables.
                let callee_attr = if kind == CallKind::Local {
                    self.m.symbol(name)
                } else {
                    self.m.str(name)
                };
                // A core method's receiver type, resolved once here from
                // how MIR spelled the callee; an `extern` call's signature
                // as a fn pointer type (`fn(u32, u32) -> u32`, from the
                // operands and the destination); `()` for every other call.
                let receiver = match &callee.resolution {
                    Resolution::CoreScalar { method, ty } => Scalar::from_name(ty)
                        .or_else(|| frontend::registry::core_receiver(&callee.text, method))
                        .map(Ty::Scalar)
                        .unwrap_or(Ty::Tuple(Vec::new())),
                    _ if kind == CallKind::Extern => {
                        let params = args
                            .iter()
                            .map(|a| {
                                self.operand_ty(a)
                                    .map_or_else(|| "_".to_string(), |t| t.to_string())
                            })
                            .collect::<Vec<_>>()
                            .join(", ");
                        let ret = match &dest_ty {
                            Ty::Tuple(t) if t.is_empty() => String::new(),
                            t => format!(" -> {t}"),
                        };
                        Ty::FnPtr(format!("fn({params}){ret}"))
                    }
                    _ => Ty::Tuple(Vec::new()),
                };
                let call = self.op(
                    "rmir.call",
                    &packed,
                    &results,
                    &[
                        ("receiver", self.m.ty(&receiver)),
                        ("callee", callee_attr),
                        ("text", self.m.str(&callee.text)),
                        ("kind", self.m.str(kind.name())),
                        ("unwind", self.m.str(&unwind_text(*unwind))),
                        ("sret", self.m.bool(sret)),
                    ],
                )?;
                if !results.is_empty() {
                    self.assign_value(dest, Some(result_of(call, 0)?), &dest_ty)?;
                }
                match target {
                    Some(t) => self.br(*t),
                    None => {
                        // A diverging call: nothing follows it.
                        self.op("llvm.unreachable", &[], &[], &[])?;
                        Ok(())
                    }
                }
            }
            TerminatorKind::Drop { place, target, .. } => {
                let ty = self.ty_of(place)?;
                let (addr, _) = self.place_addr(place)?;
                self.op("rmir.drop", &[addr], &[], &[("ty", self.m.ty(&ty))])?;
                self.br(*target)
            }
        }
    }

    fn switch(
        &self,
        discr: &Operand,
        targets: &[(u128, frontend::pmir::BlockId)],
        otherwise: frontend::pmir::BlockId,
    ) -> Res<()> {
        let (v, ty) = self.operand(discr, None)?;
        let (Some(v), Some(s)) = (v, ty.scalar()) else {
            return unsupported(format!("switch on `{ty}`"));
        };
        if is_float(s) || bits(s) > 64 {
            return unsupported(format!("switch on `{ty}`"));
        }
        let ctx = self.context();
        let default = self.target(otherwise)?;
        if s == Scalar::Bool && targets.len() == 1 && targets[0].0 == 0 {
            let on_false = self.target(targets[0].1)?;
            let op = OperationBuilder::new("cf.cond_br", self.loc)
                .add_operands(&[v])
                .add_successors(&[&default, &on_false])
                .add_attributes(&[(
                    Identifier::new(ctx, "operandSegmentSizes"),
                    DenseI32ArrayAttribute::new(ctx, &[1, 0, 0]).into(),
                )])
                .build()
                .map_err(|e| Unsupported(format!("cannot build cf.cond_br: {e}")))?;
            self.cur.append_operation(op);
            return Ok(());
        }
        let flag = v.r#type();
        let mut dests = Vec::new();
        let mut values = Vec::new();
        for (value, b) in targets {
            dests.push(self.target(*b)?);
            values.push(IntegerAttribute::new(flag, *value as u64 as i64).into());
        }
        let case_values = DenseElementsAttribute::new(
            RankedTensorType::new(&[values.len() as u64], flag, None).into(),
            &values,
        )
        .map_err(|e| Unsupported(format!("switch values: {e}")))?;
        let mut succ: Vec<&Block<'c>> = vec![&default];
        succ.extend(dests.iter().map(|d| &**d));
        let op = OperationBuilder::new("cf.switch", self.loc)
            .add_operands(&[v])
            .add_successors(&succ)
            .add_attributes(&[
                (Identifier::new(ctx, "case_values"), case_values.into()),
                (
                    Identifier::new(ctx, "case_operand_segments"),
                    DenseI32ArrayAttribute::new(ctx, &vec![0; targets.len()]).into(),
                ),
                (
                    Identifier::new(ctx, "operandSegmentSizes"),
                    DenseI32ArrayAttribute::new(ctx, &[1, 0, 0]).into(),
                ),
            ])
            .build()
            .map_err(|e| Unsupported(format!("cannot build cf.switch: {e}")))?;
        self.cur.append_operation(op);
        Ok(())
    }
}

fn element(ty: &Ty) -> Res<Ty> {
    match ty {
        Ty::Array(e, _) | Ty::Slice(e) => Ok((**e).clone()),
        t => unsupported(format!("index into the non-array type `{t}`")),
    }
}

fn result_of<'c, 'a>(op: OperationRef<'c, 'a>, i: usize) -> Res<Value<'c, 'a>> {
    op.result(i)
        .map(Into::into)
        .map_err(|e| Unsupported(format!("no result {i}: {e}")))
}

/// An attribute from its text: only for what MLIR's C API cannot build,
/// integers wider than 64 bits and floats from their exact bit pattern.
fn parse_attr<'c>(context: &'c Context, text: &str) -> Res<Attribute<'c>> {
    Attribute::parse(context, text)
        .ok_or_else(|| Unsupported(format!("MLIR rejects the attribute `{text}`")))
}

fn arg_type(context: &Context) -> Res<Type<'_>> {
    Type::parse(context, "!rmir.call_arg")
        .ok_or_else(|| Unsupported("the rmir dialect is not loaded".into()))
}

fn unwind_text(u: UnwindAction) -> String {
    match u {
        UnwindAction::Continue => "continue".into(),
        UnwindAction::Unreachable => "unreachable".into(),
        UnwindAction::Terminate => "terminate".into(),
        UnwindAction::Cleanup(b) => format!("cleanup(bb{})", b.0),
    }
}

/// `arith.cmpi` predicates in enum order.
const CMPI_PREDICATES: &[&str] = &[
    "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
];
/// `arith.cmpf` predicates in enum order.
const CMPF_PREDICATES: &[&str] = &[
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
    "une", "uno", "true",
];

fn predicate_attr<'c>(ctx: &'c Context, table: &[&str], name: &str) -> Res<Attribute<'c>> {
    match table.iter().position(|p| *p == name) {
        Some(i) => Ok(IntegerAttribute::new(IntegerType::new(ctx, 64).into(), i as i64).into()),
        None => unsupported(format!("comparison predicate `{name}`")),
    }
}
