//! What admission needs to know about a module, read off the `rmir` dialect
//! by [`super::read`]: registrations, closures and their captures, and for
//! every imported body its signature, calls, writes through the environment
//! and ops the lowering cannot handle. Plain data, so each rule is a plain
//! function of it.

use std::collections::BTreeMap;

use frontend::pmir::Span;

/// Where a fact came from: a source span when known, and the MIR line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Loc {
    pub span: Option<Span>,
    pub mir_line: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallbackRef {
    Closure(String),
    FnItem(String),
    /// Neither: its MIR type.
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrationFact {
    pub index: usize,
    pub caller: String,
    pub function: String,
    pub provider: String,
    pub callback: CallbackRef,
    pub loc: Loc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosureKind {
    Fn,
    FnMut,
    FnOnce,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureMode {
    ByValue,
    ByRef,
    ByMutRef,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureFact {
    pub name: String,
    pub field: u32,
    /// The environment field's MIR type.
    pub ty: String,
    pub mode: CaptureMode,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosureFact {
    pub body: String,
    pub kind: ClosureKind,
    pub loc: Loc,
    pub captures: Vec<CaptureFact>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Local,
    Registration,
    Core,
    Panic,
    Indirect,
    Foreign,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFact {
    /// The callee as MIR prints it, without generic arguments.
    pub callee: String,
    pub kind: CallKind,
    /// For a local call: the body called.
    pub target: Option<String>,
    /// The callee as MIR printed it, generic arguments included
    /// (`rotate_left::<u32>`): core calls take their receiver type from it.
    pub text: String,
    /// Operands passed.
    pub args: usize,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyFact {
    pub name: String,
    /// Parameter MIR types, the environment excluded for closures.
    pub params: Vec<String>,
    pub ret: String,
    pub loc: Loc,
    pub calls: Vec<CallFact>,
    /// Writes through the closure environment.
    pub env_writes: Vec<Loc>,
    /// Ops the importer could not model: (what, where).
    pub unsupported: Vec<(String, Loc)>,
    /// Every op of the body: (full name, where), in order.
    pub ops: Vec<(String, Loc)>,
    /// Addresses of `static`s the body takes: (name, MIR type, where).
    pub statics: Vec<(String, String, Loc)>,
    /// Fn items the body names as values (to make fn pointers of them):
    /// what a call through a fn pointer in this body may reach.
    pub fn_items: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleFacts {
    pub registrations: Vec<RegistrationFact>,
    pub closures: BTreeMap<String, ClosureFact>,
    pub bodies: BTreeMap<String, BodyFact>,
}
