//! Prepared MIR: the rustc-free document every later stage reads.
//!
//! `"format": "pmir/1"`. Field order is the declaration order here and is
//! part of the format (serde writes struct fields in order; maps are
//! `BTreeMap`s or vectors), so the same input gives the same bytes.
//!
//! Types are stored as their MIR spelling (`&&i32`, `(i32, bool)`) and parsed
//! back into [`Ty`] on read, which keeps documents readable and diffable.

use serde::{Deserialize, Serialize};

pub use crate::span::{FileId, Span, ROOT_FILE};
use crate::ty::{Scalar, Ty};
use vocab::Provider;

/// A registration's provider, read by name: one a registration can name
/// (an unknown name, or the benchmarks' copy kernel, is an error listing
/// the valid ones).
fn callback_provider<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Provider, D::Error> {
    let name = String::deserialize(d)?;
    Provider::parse(&name).map_err(serde::de::Error::custom)
}

/// The format tag written into every document and required on read.
pub const FORMAT: &str = "pmir/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedMir {
    pub format: String,
    pub source: SourceFacts,
    pub bodies: Vec<Body>,
    pub closures: Vec<Closure>,
    pub registrations: Vec<Registration>,
    /// The definitions of the structs and enums the bodies name
    /// (`crate::adt`), by the path MIR prints; absent when none is known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adts: Vec<crate::adt::AdtDef>,
    /// rustc's layout of each tuple or struct that a registration's
    /// callback takes or returns (`closure_layout::record`): the composite
    /// elements. Absent when every element is a scalar.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elements: Vec<ElementLayout>,
}

/// rustc's layout of a composite element type, measured as the layout of
/// a closure capturing one value of it: `offsets` is `[0]` and each leaf is
/// a scalar of the value (capture 0) at its offset from the value's start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElementLayout {
    #[serde(with = "crate::ty::as_string")]
    pub ty: Ty,
    pub layout: ObjectLayout,
}

/// Where the MIR came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceFacts {
    /// The Rust source file as rustc named it in closure spans (`user.rs`),
    /// or the `.mir` file when no Rust source is known.
    pub file: String,
    /// The MIR text file the document was parsed from (for MIR-line locations).
    pub mir_file: String,
    /// `rustc -vV` of the compiler that produced the MIR, when known.
    pub rustc: Option<String>,
    /// `-C opt-level`, when known.
    pub opt_level: Option<u8>,
    /// `-C overflow-checks`, when known.
    pub overflow_checks: Option<bool>,
    /// The Rust source text, so diagnostics can show snippets without the file.
    pub text: Option<String>,
    /// The crate's other source files (module files such as `src/keyed.rs`),
    /// in the order rustc read them: a [`Span`] whose `file` is `i ≥ 1` lies
    /// in `modules[i - 1]`. Absent for a crate of one file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<ModuleFile>,
}

/// A source file of the crate other than its root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleFile {
    /// The path as rustc names it in spans (`src/keyed.rs`).
    pub file: String,
    pub text: String,
}

impl SourceFacts {
    /// The name of file `id` (the root's name for an unknown id).
    pub fn file_name(&self, id: FileId) -> &str {
        match id.checked_sub(1) {
            Some(i) => self
                .modules
                .get(i as usize)
                .map_or(self.file.as_str(), |m| m.file.as_str()),
            None => &self.file,
        }
    }

    /// The text of file `id`, when known.
    pub fn text_of(&self, id: FileId) -> Option<&str> {
        match id.checked_sub(1) {
            Some(i) => self.modules.get(i as usize).map(|m| m.text.as_str()),
            None => self.text.as_deref(),
        }
    }

    /// The id of the file rustc names `name`.
    pub fn file_id(&self, name: &str) -> Option<FileId> {
        if name == self.file {
            return Some(ROOT_FILE);
        }
        self.modules
            .iter()
            .position(|m| m.file == name)
            .map(|i| i as FileId + 1)
    }

    /// Every file's id, name and text (when known), the root first.
    pub fn files(&self) -> impl Iterator<Item = (FileId, &str, Option<&str>)> {
        std::iter::once((ROOT_FILE, self.file.as_str(), self.text.as_deref())).chain(
            self.modules
                .iter()
                .enumerate()
                .map(|(i, m)| (i as FileId + 1, m.file.as_str(), Some(m.text.as_str()))),
        )
    }
}

/// Index of a local (`_3` is `Local(3)`); `_0` is the return place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Local(pub u32);

/// Index of a basic block (`bb4` is `BlockId(4)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BlockId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BodyKind {
    /// A plain `fn` item.
    Fn,
    /// A closure body (`run::{closure#0}`).
    Closure,
    /// A promoted constant or `const`/`static` item.
    Const,
}

/// One MIR body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Body {
    /// The path as MIR prints it: `helper`, `run::{closure#0}`, `run::promoted[0]`.
    pub name: String,
    pub kind: BodyKind,
    /// Line of the body's header in the MIR text.
    pub mir_line: u32,
    /// The definition's span in the Rust source (closure span, or the `fn`
    /// item's name located in the source text), when known.
    pub span: Option<Span>,
    /// Number of arguments: locals `_1 ..= _arg_count`.
    pub arg_count: u32,
    /// Every local, `_0` first, in index order.
    pub locals: Vec<LocalDecl>,
    /// `debug name => place;` lines: user-visible variable names.
    pub debug_vars: Vec<DebugVar>,
    /// Scopes of inlined callees (`scope 1 (inlined level2)`), in MIR order.
    pub inlined: Vec<String>,
    pub blocks: Vec<Block>,
    /// For an instance of a generic body (`lerp::<i16>`, made by
    /// monomorphisation), the generic body's name (`lerp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_of: Option<String>,
    /// For a generic function and its closures, the parameters its MIR is
    /// written in (`T`, `Self`, `impl Fn(i32) -> i32`); the GPU runs its
    /// instances only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generic_params: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalDecl {
    pub local: Local,
    #[serde(with = "crate::ty::as_string")]
    pub ty: Ty,
    pub mutable: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebugVar {
    pub name: String,
    /// The place, e.g. `(*((*_1).0: &i32))`; `None` for constant debug info
    /// (`debug x => const 3_i32;`).
    pub place: Option<Place>,
    pub mir_line: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    pub id: BlockId,
    pub mir_line: u32,
    pub statements: Vec<Statement>,
    pub terminator: Terminator,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    pub mir_line: u32,
    pub kind: StatementKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementKind {
    Assign {
        place: Place,
        rvalue: Box<Rvalue>,
    },
    /// `StorageLive`/`StorageDead`: kept so counts stay honest; no semantics here.
    StorageLive(Local),
    StorageDead(Local),
    /// `discriminant(_1) = 2`
    SetDiscriminant {
        place: Place,
        variant: u32,
    },
    /// `PlaceMention(_1)`, `FakeRead(...)`, `Nop`, `AscribeUserType`, `Coverage`,
    /// `ConstEvalCounter`, `assume`: no effect on codegen.
    Nop(String),
    /// A statement kept as MIR text that later stages cannot model
    /// (`copy_nonoverlapping(…)`, `Deinit(…)`); admission rejects it.
    Opaque(String),
    /// A statement the parser does not read (a construct outside the
    /// supported subset), kept with the reason. It fails nothing by itself:
    /// it is an error only when a callback reaches its body (E0109).
    Unparsed {
        text: String,
        reason: String,
    },
}

/// A place: a local and projections applied left to right.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Place {
    pub local: Local,
    pub projections: Vec<Projection>,
}

impl Place {
    pub fn local(local: Local) -> Place {
        Place {
            local,
            projections: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Projection {
    Deref,
    /// `(_1.0: i32)`: field index and the field's type.
    Field {
        index: u32,
        #[serde(with = "crate::ty::as_string")]
        ty: Ty,
    },
    /// `_2[_3]`
    Index(Local),
    /// `_2[3 of 4]`
    ConstantIndex {
        offset: u64,
        min_length: u64,
        from_end: bool,
    },
    /// `(_1 as Some)`
    Downcast(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operand {
    Copy(Place),
    Move(Place),
    Const(Constant),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Constant {
    /// `const 3_i32`, `const -1_i64`, `const 255_u8`, `const i32::MIN`.
    Int {
        value: i128,
        #[serde(with = "crate::ty::as_string")]
        ty: Ty,
    },
    /// `const 1.5f32`; the text is kept exactly, `bits` is the IEEE value.
    Float {
        text: String,
        bits: u64,
        #[serde(with = "crate::ty::as_string")]
        ty: Ty,
    },
    Bool(bool),
    Char(char),
    /// `const ()`
    Unit,
    /// `const ZeroSized: {closure@…}`: a value of a zero-sized type.
    ZeroSized(#[serde(with = "crate::ty::as_string")] Ty),
    /// A function item named as a value: `add` in `reduce(…, add)`.
    FnItem(String),
    /// Anything else (`const "text"`, `const run::promoted[0]`,
    /// `const <T as Trait>::ALIGN`), kept as its MIR text.
    Other(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitXor,
    BitAnd,
    BitOr,
    Shl,
    Shr,
    Eq,
    Lt,
    Le,
    Ne,
    Ge,
    Gt,
    Cmp,
    Offset,
    AddUnchecked,
    SubUnchecked,
    MulUnchecked,
    ShlUnchecked,
    ShrUnchecked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnOp {
    Not,
    Neg,
    PtrMetadata,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rvalue {
    Use(Operand),
    BinaryOp {
        op: BinOp,
        lhs: Operand,
        rhs: Operand,
    },
    /// `AddWithOverflow(a, b)`: yields `(T, bool)`.
    CheckedBinaryOp {
        op: BinOp,
        lhs: Operand,
        rhs: Operand,
    },
    UnaryOp {
        op: UnOp,
        operand: Operand,
    },
    /// `copy _1 as i64 (IntToInt)`
    Cast {
        kind: String,
        operand: Operand,
        #[serde(with = "crate::ty::as_string")]
        ty: Ty,
    },
    /// `&_2`, `&mut _2`, `&((*_1).0: T)`
    Ref {
        mutable: bool,
        place: Place,
    },
    /// `&raw const _2`, `&raw mut _2`
    RawPtr {
        mutable: bool,
        place: Place,
    },
    Aggregate {
        kind: AggregateKind,
        /// `(field name, operand)`; tuples and arrays have no names.
        fields: Vec<(Option<String>, Operand)>,
    },
    /// `discriminant(_1)`
    Discriminant(Place),
    /// `[const 0_i32; 4]`
    Repeat {
        operand: Operand,
        count: String,
    },
    /// `Len(_1)` (older MIR) or `PtrMetadata` via UnaryOp.
    Len(Place),
    /// `CopyForDeref(_1)`, `ShallowInitBox(..)`, `NullaryOp` etc., kept as text.
    Other(String),
}

impl Body {
    /// For a body of one block that ends in `return` and only assigns
    /// (storage markers and no-ops aside), as a `const` item's or a
    /// promoted constant's body does: its assignments, in order.
    pub fn straight_assigns(&self) -> Option<Vec<(&Place, &Rvalue)>> {
        let [block] = self.blocks.as_slice() else {
            return None;
        };
        if !matches!(block.terminator.kind, TerminatorKind::Return) {
            return None;
        }
        block.assigns()
    }
}

impl Block {
    /// The block's assignments in order, storage markers and no-ops
    /// skipped; `None` when it holds any other statement.
    pub fn assigns(&self) -> Option<Vec<(&Place, &Rvalue)>> {
        let mut out = Vec::new();
        for st in &self.statements {
            match &st.kind {
                StatementKind::StorageLive(_)
                | StatementKind::StorageDead(_)
                | StatementKind::Nop(_) => {}
                StatementKind::Assign { place, rvalue } => out.push((place, &**rvalue)),
                _ => return None,
            }
        }
        Some(out)
    }
}

impl Constant {
    /// The constant's type, where its text says it (not for a fn item or
    /// a constant kept as text).
    pub fn ty(&self) -> Option<Ty> {
        match self {
            Constant::Int { ty, .. } | Constant::Float { ty, .. } => Some(ty.clone()),
            Constant::Bool(_) => Some(Ty::Scalar(Scalar::Bool)),
            Constant::Char(_) => Some(Ty::Scalar(Scalar::Char)),
            Constant::Unit => Some(Ty::Tuple(Vec::new())),
            Constant::ZeroSized(t) => Some(t.clone()),
            Constant::FnItem(_) | Constant::Other(_) => None,
        }
    }
}

impl Rvalue {
    /// Calls `f` on each operand the rvalue reads (a place it borrows is
    /// not an operand).
    pub fn for_each_operand(&mut self, mut f: impl FnMut(&mut Operand)) {
        match self {
            Rvalue::Use(o)
            | Rvalue::UnaryOp { operand: o, .. }
            | Rvalue::Cast { operand: o, .. }
            | Rvalue::Repeat { operand: o, .. } => f(o),
            Rvalue::BinaryOp { lhs, rhs, .. } | Rvalue::CheckedBinaryOp { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Rvalue::Aggregate { fields, .. } => fields.iter_mut().for_each(|(_, o)| f(o)),
            Rvalue::Ref { .. }
            | Rvalue::RawPtr { .. }
            | Rvalue::Discriminant(_)
            | Rvalue::Len(_)
            | Rvalue::Other(_) => {}
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AggregateKind {
    /// `{closure@user.rs:5:38: 5:49} { k: copy _2 }`
    Closure {
        #[serde(with = "crate::ty::as_string")]
        ty: Ty,
    },
    Tuple,
    Array,
    /// `*const [i32] from (copy _1, copy _2)`: a raw pointer from data and metadata.
    RawPtr {
        #[serde(with = "crate::ty::as_string")]
        ty: Ty,
    },
    /// `Foo { a: .. }`, `Option::<i32>::Some(..)`
    Adt(String),
}

/// What an `assert` checks, read from its message. Overflow checks
/// (`Overflow`, `OverflowNeg`) are *optional*: rustc's code generation drops
/// them when overflow checks are off, even in code inlined from `core`
/// (`#[rustc_inherit_overflow_checks]`), and so must ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AssertKind {
    /// `attempt to compute `{} + {}`, which would overflow`, and shifts.
    Overflow,
    /// `attempt to negate `{}`, which would overflow`.
    OverflowNeg,
    DivisionByZero,
    RemainderByZero,
    /// `attempt to compute `{} / {}`, which would overflow` for `MIN / -1`
    /// is `Overflow` in rustc too, but it is never optional.
    DivisionOverflow,
    BoundsCheck,
    MisalignedPointer,
    NullPointer,
    Other,
}

impl AssertKind {
    pub const ALL: [AssertKind; 9] = [
        AssertKind::Overflow,
        AssertKind::OverflowNeg,
        AssertKind::DivisionByZero,
        AssertKind::RemainderByZero,
        AssertKind::DivisionOverflow,
        AssertKind::BoundsCheck,
        AssertKind::MisalignedPointer,
        AssertKind::NullPointer,
        AssertKind::Other,
    ];

    /// The snake-case name (as in prepared MIR and the dialect).
    pub fn name(self) -> &'static str {
        match self {
            AssertKind::Overflow => "overflow",
            AssertKind::OverflowNeg => "overflow_neg",
            AssertKind::DivisionByZero => "division_by_zero",
            AssertKind::RemainderByZero => "remainder_by_zero",
            AssertKind::DivisionOverflow => "division_overflow",
            AssertKind::BoundsCheck => "bounds_check",
            AssertKind::MisalignedPointer => "misaligned_pointer",
            AssertKind::NullPointer => "null_pointer",
            AssertKind::Other => "other",
        }
    }

    pub fn from_name(name: &str) -> Option<AssertKind> {
        AssertKind::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn from_message(m: &str) -> AssertKind {
        if m.starts_with("attempt to negate") {
            AssertKind::OverflowNeg
        } else if m.starts_with("attempt to compute `{} / {}`")
            || m.starts_with("attempt to compute the remainder of `{} % {}`")
        {
            AssertKind::DivisionOverflow
        } else if m.starts_with("attempt to compute") || m.starts_with("attempt to shift") {
            AssertKind::Overflow
        } else if m.starts_with("attempt to divide") {
            AssertKind::DivisionByZero
        } else if m.starts_with("attempt to calculate the remainder") {
            AssertKind::RemainderByZero
        } else if m.starts_with("index out of bounds") {
            AssertKind::BoundsCheck
        } else if m.starts_with("misaligned pointer") {
            AssertKind::MisalignedPointer
        } else if m.starts_with("null pointer") {
            AssertKind::NullPointer
        } else {
            AssertKind::Other
        }
    }

    /// Dropped by code generation when overflow checks are off.
    pub fn is_optional_overflow_check(self) -> bool {
        matches!(self, AssertKind::Overflow | AssertKind::OverflowNeg)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnwindAction {
    Continue,
    Unreachable,
    Terminate,
    Cleanup(BlockId),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Terminator {
    pub mir_line: u32,
    pub kind: TerminatorKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminatorKind {
    Goto(BlockId),
    SwitchInt {
        discr: Operand,
        /// `(value, target)`; values are the raw bits as MIR prints them.
        targets: Vec<(u128, BlockId)>,
        otherwise: BlockId,
    },
    Return,
    Unreachable,
    UnwindResume,
    /// `assert(!move _4, "msg", args…) -> [success: bb2, unwind continue]`
    Assert {
        cond: Operand,
        /// The value `cond` must have to continue (`!` before it means false).
        expected: bool,
        kind: AssertKind,
        message: String,
        target: BlockId,
        unwind: UnwindAction,
    },
    Call {
        dest: Place,
        callee: Callee,
        args: Vec<Operand>,
        target: Option<BlockId>,
        unwind: UnwindAction,
    },
    Drop {
        place: Place,
        target: BlockId,
        unwind: UnwindAction,
    },
    /// A terminator the parser does not read, kept with the reason (see
    /// [`StatementKind::Unparsed`]). It has no successors.
    Unparsed {
        text: String,
        reason: String,
    },
}

/// What a call's callee resolves to, in the order the frontend tries them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Resolution {
    /// A body in this document.
    Local { body: String },
    /// A registration function of the provider API crate.
    Registration {
        function: String,
        #[serde(deserialize_with = "callback_provider")]
        provider: Provider,
    },
    /// An allowlisted pure `core` scalar method (`wrapping_add`, `min`, …).
    CoreScalar { method: String, ty: String },
    /// A panic entry point (`core::panicking::panic`, `std::rt::panic_fmt`)
    /// or a constructor of its message (`Arguments::new_const`): the GPU
    /// lowers the path that reaches it to a trap.
    Panic { function: String },
    /// A call through a local (a closure or fn pointer held in a local).
    Indirect,
    /// Anything else: no body here. `link_name` is the symbol it links to
    /// when the source's `extern` block renames it
    /// (`#[link_name = "cudaDeviceSynchronize"] fn wait();`); `extern_c`
    /// says that an `extern "C"` block of the crate declares it, so that a
    /// device library given to the link may define it.
    Foreign {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        link_name: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        extern_c: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Callee {
    /// The callee as printed, generics included: `native::reduce::<i32, {closure@…}>`.
    pub text: String,
    /// The path without generic arguments: `native::reduce`, `<i32 as Ord>::max`.
    pub path: String,
    /// Generic arguments of the last path segment.
    #[serde(with = "crate::ty::vec_as_string")]
    pub generics: Vec<Ty>,
    pub resolution: Resolution,
    /// Where the call appears in the Rust source, found by text search inside
    /// the caller's span; `None` when not found.
    pub span: Option<Span>,
    /// For a registration whose callback is a closure of a generic function
    /// (its body written in terms of the function's parameters), the body
    /// of the closure's instance this call passes
    /// (`generic_caller::<u32>::{closure#0}`), made by monomorphisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_instance: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClosureKind {
    /// Body takes `&{closure}`.
    Fn,
    /// Body takes `&mut {closure}`.
    FnMut,
    /// Body takes `{closure}` by value.
    FnOnce,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Closure {
    /// The closure body's name, `run::{closure#0}`.
    pub body: String,
    /// The closure's type as MIR prints it: `{closure@user.rs:5:38: 5:49}`.
    #[serde(with = "crate::ty::as_string")]
    pub ty: Ty,
    pub span: Span,
    pub kind: ClosureKind,
    /// Parameter types after the environment.
    #[serde(with = "crate::ty::vec_as_string")]
    pub params: Vec<Ty>,
    #[serde(with = "crate::ty::as_string")]
    pub ret: Ty,
    pub captures: Vec<Capture>,
    /// rustc's layout of the closure object, when it was measured
    /// (`closure_layout::record`): every capture a by-value scalar,
    /// or an aggregate of them. Absent in MIR text alone, and for closures
    /// capturing anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<ObjectLayout>,
}

/// rustc's layout of a closure object: its size, alignment, and each
/// capture's byte offset, in capture (field index) order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectLayout {
    pub size: u64,
    pub align: u64,
    pub offsets: Vec<u64>,
    /// The scalars inside the captures that are aggregates (a tuple, an
    /// array, a struct, a closure), in capture and field order; absent when
    /// every capture is a scalar.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leaves: Vec<LeafLayout>,
}

/// One scalar inside an aggregate capture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafLayout {
    pub capture: u32,
    /// Field (or element) indices inside the capture: `[1, 0]` is `.1.0`.
    pub path: Vec<u32>,
    #[serde(with = "crate::ty::as_string")]
    pub ty: Ty,
    /// From the start of the closure object.
    pub offset: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureMode {
    /// The environment field holds the value (`move`, or a by-value capture).
    ByValue,
    /// The environment field holds a reference to the captured variable:
    /// the debug line derefs the field (`(*((*_1).0: &i32))`).
    ByRef,
    /// As `ByRef`, but the reference is `&mut`.
    ByMutRef,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    /// The captured place as the user wrote it: `k`, or `p.a` for a precise
    /// capture of a field (rustc's debug name `p__a`).
    pub name: String,
    /// Field index in the environment.
    pub field: u32,
    /// The field's type in the environment (`&&i32` for a `&i32` captured by ref).
    #[serde(with = "crate::ty::as_string")]
    pub ty: Ty,
    pub mode: CaptureMode,
    /// First use of the name inside the closure's source span, when found.
    pub span: Option<Span>,
}

/// The callback handed to a registration function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Callback {
    Closure {
        body: String,
    },
    FnItem {
        body: String,
    },
    /// Something else (a fn pointer, a closure built elsewhere): its type.
    Other {
        ty: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Registration {
    /// Body that makes the call, and the block of the call terminator.
    pub caller: String,
    pub block: BlockId,
    pub mir_line: u32,
    /// Source location of the registration call, found by text search.
    pub span: Option<Span>,
    /// The provider API function (`reduce`) and the provider it maps to.
    pub function: String,
    #[serde(deserialize_with = "callback_provider")]
    pub provider: Provider,
    pub callback: Callback,
    /// The call's generic arguments, `[i32, {closure@…}]`.
    #[serde(with = "crate::ty::vec_as_string")]
    pub generics: Vec<Ty>,
    /// Types of the call's arguments (`&[i32]`, `i32`, the callback).
    #[serde(with = "crate::ty::vec_as_string")]
    pub arg_types: Vec<Ty>,
}

impl PreparedMir {
    pub fn body(&self, name: &str) -> Option<&Body> {
        self.bodies.iter().find(|b| b.name == name)
    }

    pub fn closure(&self, body: &str) -> Option<&Closure> {
        self.closures.iter().find(|c| c.body == body)
    }

    /// Serialises with a trailing newline; deterministic. Read back, and
    /// checked, by `PreparedMir::from_json` (in `validate`).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("prepared MIR serialises");
        s.push('\n');
        s
    }
}

/// The type of a closure body's environment (its first argument, `&{closure@…}`,
/// references peeled).
pub(crate) fn env_type(body: &Body) -> Option<&Ty> {
    Some(body.locals.get(1)?.ty.peel_refs())
}

pub(crate) fn closure_key(ty: &Ty) -> Option<String> {
    matches!(ty, Ty::Closure { .. }).then(|| ty.to_string())
}

/// Type of a place in a body, following projections.
pub fn place_ty(body: &Body, place: &Place) -> Option<Ty> {
    let mut ty = body.locals.get(place.local.0 as usize)?.ty.clone();
    for p in &place.projections {
        ty = match p {
            Projection::Deref => match ty {
                Ty::Ref { inner, .. } | Ty::Ptr { inner, .. } => *inner,
                Ty::Adt { path, mut args } if path.ends_with("Box") && !args.is_empty() => {
                    args.remove(0)
                }
                _ => return None,
            },
            Projection::Field { ty, .. } => ty.clone(),
            Projection::Index(_) | Projection::ConstantIndex { .. } => match ty {
                Ty::Array(e, _) | Ty::Slice(e) => *e,
                _ => return None,
            },
            Projection::Downcast(_) => ty,
        };
    }
    Some(ty)
}

pub fn operand_ty(body: &Body, op: &Operand) -> Option<Ty> {
    match op {
        Operand::Copy(p) | Operand::Move(p) => place_ty(body, p),
        Operand::Const(c) => c.ty(),
    }
}
