//! The module's facts: registrations, closures and their captures, and for
//! every body its signature, calls, environment writes and ops, read off
//! the `rmir` dialect. The one fact model of the project: admission's
//! rules and the lowering's plan both read it.
//!
//! Everything is typed: types are [`Ty`] (read from `TypeAttr`s by
//! [`crate::types`]), kinds are enums, local callees are symbols. A value
//! outside the dialect (an unknown enum value, a missing attribute, a type
//! that is not a Rust type) is an error, never a guess: [`read`] refuses the
//! module.

use std::collections::BTreeMap;

use frontend::{
    pmir::{FileId, Span},
    ty::{Scalar, Ty},
};
use melior::ir::{
    attribute::{ArrayAttribute, BoolAttribute, DictionaryAttribute, IntegerAttribute},
    block::BlockLike,
    operation::{OperationLike, WalkOrder, WalkResult},
    Attribute, Module, OperationRef, RegionLike,
};

use crate::loc::Loc as IrLoc;
use crate::types::rust_type_of_attr;
use vocab::Provider;

/// Where a fact came from: a source span when known, and the MIR line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Loc {
    pub span: Option<Span>,
    pub mir_line: Option<u32>,
}

impl Loc {
    /// The location of an op, its span naming the file by its place in
    /// `files` (the module's [`ModuleFacts::files`]; the root when absent).
    pub fn of(l: &IrLoc, files: &[String]) -> Loc {
        Loc {
            span: l.source.as_ref().map(|s| {
                let file = files.iter().position(|f| *f == s.file).unwrap_or(0);
                s.span.in_file(file as FileId)
            }),
            mir_line: l.mir.as_ref().map(|m| m.line),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallbackRef {
    Closure(String),
    FnItem(String),
    /// Neither: its type.
    Other(Ty),
}

impl CallbackRef {
    /// The callback's body, for a closure or fn item.
    pub fn body(&self) -> Option<&str> {
        match self {
            CallbackRef::Closure(b) | CallbackRef::FnItem(b) => Some(b),
            CallbackRef::Other(_) => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrationFact {
    pub index: usize,
    pub caller: String,
    pub function: String,
    pub provider: Provider,
    pub callback: CallbackRef,
    pub generics: Vec<Ty>,
    pub arg_types: Vec<Ty>,
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
    /// The environment field's type.
    pub ty: Ty,
    pub mode: CaptureMode,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosureFact {
    pub body: String,
    /// The closure's own type.
    pub ty: Ty,
    pub kind: ClosureKind,
    pub loc: Loc,
    /// In field order.
    pub captures: Vec<CaptureFact>,
    /// rustc's layout of the closure object (`rmir.env_layout`), when the
    /// frontend measured it.
    pub layout: Option<LayoutFact>,
}

/// rustc's layout of a closure object: size, alignment and each capture's
/// offset, in field order (the `captures`' order), and the scalars inside
/// its aggregate captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutFact {
    pub size: u64,
    pub align: u64,
    pub offsets: Vec<u64>,
    /// In capture and field order; empty when every capture is a scalar.
    pub leaves: Vec<LeafFact>,
}

/// One scalar inside an aggregate capture, at its offset from the start of
/// the closure object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafFact {
    pub capture: u32,
    /// Field (or element) indices inside the capture.
    pub path: Vec<u32>,
    pub scalar: vocab::Scalar,
    pub offset: u64,
}

pub use vocab::CallKind;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFact {
    /// The callee: for a local call the body called (a `func.func`
    /// symbol), else the path as MIR prints it, without generic arguments.
    pub callee: String,
    pub kind: CallKind,
    /// For a local call: the body called.
    pub target: Option<String>,
    /// The callee as MIR printed it, generic arguments included
    /// (`rotate_left::<u32>`): core calls take their receiver type from it.
    pub text: String,
    /// Operands passed.
    pub args: usize,
    /// A core method's receiver type (`None` for every other call, and for
    /// a core call whose receiver MIR does not say).
    pub receiver: Option<Scalar>,
    /// An `extern` call's declared signature: parameter types and the
    /// return type (`()` when it returns nothing); `None` for other calls.
    pub signature: Option<(Vec<Ty>, Ty)>,
    pub loc: Loc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    Fn,
    Closure,
    Const,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyFact {
    pub name: String,
    pub kind: BodyKind,
    /// Parameter types, the environment excluded for closures.
    pub params: Vec<Ty>,
    pub ret: Ty,
    pub loc: Loc,
    pub calls: Vec<CallFact>,
    /// Writes through the closure environment: (capture name, where).
    pub env_writes: Vec<(String, Loc)>,
    /// Statements and terminators the importer could not model.
    pub unsupported: Vec<UnsupportedFact>,
    /// Every op of the body: (full name, where), in order.
    pub ops: Vec<(String, Loc)>,
    /// Addresses of `static`s the body takes: (name, type, where).
    pub statics: Vec<(String, Ty, Loc)>,
    /// Fn items the body names as values (to make fn pointers of them):
    /// what a call through a fn pointer in this body may reach.
    pub fn_items: Vec<String>,
    /// The type parameters the body is written in (`rmir.generic_params`):
    /// a generic function's closure that no instance replaced.
    pub generic_params: Vec<String>,
}

/// A statement or terminator the importer could not model
/// (`rmir.unsupported`): its MIR text, why, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedFact {
    /// The MIR as printed (`_5 = copy _6 as &[i32] (PointerCoercion(…))`):
    /// for people debugging the compiler, never for a diagnostic.
    pub mir: String,
    /// Why, in terms of the types and values involved (empty when the
    /// construct itself is the reason).
    pub reason: String,
    pub loc: Loc,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleFacts {
    /// The crate's source files by [`FileId`]: the root, then its module
    /// files (`rmir.source_file`, `rmir.source_modules`).
    pub files: Vec<String>,
    pub registrations: Vec<RegistrationFact>,
    pub closures: BTreeMap<String, ClosureFact>,
    pub bodies: BTreeMap<String, BodyFact>,
    /// The structs and enums the bodies name (`rmir.adt_def`).
    pub adts: frontend::adt::Adts,
    /// rustc's layout of each tuple or struct a callback takes or returns
    /// (`rmir.element_layout`), by type.
    pub elements: Vec<(Ty, LayoutFact)>,
}

impl ModuleFacts {
    /// The location of an op of this module (see [`Loc::of`]).
    pub fn loc(&self, l: &IrLoc) -> Loc {
        Loc::of(l, &self.files)
    }

    pub fn body(&self, name: &str) -> Option<&BodyFact> {
        self.bodies.get(name)
    }

    pub fn closure(&self, body: &str) -> Option<&ClosureFact> {
        self.closures.get(body)
    }

    /// Every call of every body, bodies in name order.
    pub fn calls(&self) -> impl Iterator<Item = (&str, &CallFact)> {
        self.bodies
            .values()
            .flat_map(|b| b.calls.iter().map(move |c| (b.name.as_str(), c)))
    }
}

pub(crate) fn str_attr(op: &OperationRef<'_, '_>, name: &str) -> Option<String> {
    crate::string_attr(op.attribute(name).ok()?)
}

pub(crate) fn int_attr(op: &OperationRef<'_, '_>, name: &str) -> Option<i64> {
    let a = op.attribute(name).ok()?;
    IntegerAttribute::try_from(a).ok().map(|i| i.value())
}

pub use crate::symbol_attr;

/// Reads one op's attributes, each absence an error naming the op.
struct Reader<'o, 'c, 'a> {
    op: &'o OperationRef<'c, 'a>,
    name: String,
    at: IrLoc,
    loc: Loc,
}

impl<'c> Reader<'_, 'c, '_> {
    fn err(&self, what: &str) -> String {
        format!("{}: `{}` {what}", self.at.short(), self.name)
    }

    fn attr(&self, name: &str) -> Result<Attribute<'c>, String> {
        self.op
            .attribute(name)
            .map_err(|_| self.err(&format!("has no `{name}` attribute")))
    }

    fn str(&self, name: &str) -> Result<String, String> {
        crate::string_attr(self.attr(name)?)
            .ok_or_else(|| self.err(&format!("has a `{name}` that is not a string")))
    }

    fn symbol(&self, name: &str) -> Result<String, String> {
        symbol_attr(self.attr(name)?)
            .ok_or_else(|| self.err(&format!("has a `{name}` that is not a symbol reference")))
    }

    fn int(&self, name: &str) -> Result<i64, String> {
        IntegerAttribute::try_from(self.attr(name)?)
            .map(|i| i.value())
            .map_err(|_| self.err(&format!("has a `{name}` that is not an integer")))
    }

    /// A non-negative integer attribute.
    fn uint(&self, name: &str) -> Result<u64, String> {
        u64::try_from(self.int(name)?).map_err(|_| self.err(&format!("has a negative `{name}`")))
    }

    /// An array attribute whose every element `read` takes (`what` it
    /// must be, for the error).
    fn array<T>(
        &self,
        name: &str,
        what: &str,
        read: impl Fn(Attribute<'c>) -> Option<T>,
    ) -> Result<Vec<T>, String> {
        let a = ArrayAttribute::try_from(self.attr(name)?)
            .map_err(|_| self.err(&format!("has a `{name}` that is not an array")))?;
        (0..a.len())
            .map(|i| {
                let e = a.element(i).map_err(|e| self.err(&e.to_string()))?;
                read(e)
                    .ok_or_else(|| self.err(&format!("has a `{name}` element that is not {what}")))
            })
            .collect()
    }

    /// An array of non-negative integers.
    fn uints(&self, name: &str) -> Result<Vec<u64>, String> {
        self.array(name, "a non-negative integer", |e| {
            IntegerAttribute::try_from(e)
                .ok()
                .and_then(|v| u64::try_from(v.value()).ok())
        })
    }

    /// A boolean attribute.
    fn flag(&self, name: &str) -> Result<bool, String> {
        BoolAttribute::try_from(self.attr(name)?)
            .map(|b| b.value())
            .map_err(|_| self.err(&format!("has a `{name}` that is not a boolean")))
    }

    /// An array of integers.
    fn ints(&self, name: &str) -> Result<Vec<i64>, String> {
        self.array(name, "an integer", |e| {
            IntegerAttribute::try_from(e).ok().map(|v| v.value())
        })
    }

    /// An array of strings.
    fn strs(&self, name: &str) -> Result<Vec<String>, String> {
        self.array(name, "a string", crate::string_attr)
    }

    /// The scalars of an `rmir.env_layout`'s aggregate captures (none when
    /// it has no `leaf_captures`).
    fn leaves(&self) -> Result<Vec<LeafFact>, String> {
        if self.op.attribute("leaf_captures").is_err() {
            return Ok(Vec::new());
        }
        let captures = self.uints("leaf_captures")?;
        let paths = self.strs("leaf_paths")?;
        let types = self.tys("leaf_types")?;
        let offsets = self.uints("leaf_offsets")?;
        if paths.len() != captures.len()
            || types.len() != captures.len()
            || offsets.len() != captures.len()
        {
            return Err(self.err("has leaf arrays of different lengths"));
        }
        (0..captures.len())
            .map(|i| {
                let path = paths[i]
                    .split('.')
                    .map(|p| p.parse::<u32>().ok())
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(|| self.err(&format!("has the leaf path `{}`", paths[i])))?;
                let scalar = types[i]
                    .scalar()
                    .ok_or_else(|| self.err(&format!("has the leaf type `{}`", types[i])))?;
                Ok(LeafFact {
                    capture: u32::try_from(captures[i])
                        .map_err(|_| self.err("has a leaf capture out of range"))?,
                    path,
                    scalar,
                    offset: offsets[i],
                })
            })
            .collect()
    }

    /// An `rmir.adt_def` fact.
    fn adt(&self) -> Result<frontend::adt::AdtDef, String> {
        use frontend::adt::{AdtDef, AdtKind, VariantDef};
        let names = self.strs("variants")?;
        let discrs = self.ints("discrs")?;
        let fields = self.tys("fields")?;
        if discrs.len() != names.len() || fields.len() != names.len() {
            return Err(self.err("has `variants`, `discrs` and `fields` of different lengths"));
        }
        let discr = match self.ty("discr")? {
            Ty::Scalar(s) if s.is_int() => s,
            t => return Err(self.err(&format!("has the discriminant type `{t}`"))),
        };
        let variants = names
            .into_iter()
            .zip(discrs)
            .zip(fields)
            .map(|((name, discr), fields)| match fields {
                Ty::Tuple(fields) => Ok(VariantDef {
                    name,
                    discr: discr as i128,
                    fields,
                }),
                t => Err(self.err(&format!("has the variant fields `{t}`, not a tuple"))),
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(AdtDef {
            path: self.str("path")?,
            params: self.strs("params")?,
            kind: self.one_of(
                "kind",
                &[("struct", AdtKind::Struct), ("enum", AdtKind::Enum)],
            )?,
            discr,
            variants,
            // Only the frontend's layout probe reads a struct's repr.
            repr: Vec::new(),
        })
    }

    fn ty(&self, name: &str) -> Result<Ty, String> {
        rust_type_of_attr(self.attr(name)?).map_err(|e| self.err(&format!("`{name}`: {e}")))
    }

    fn tys(&self, name: &str) -> Result<Vec<Ty>, String> {
        let a = ArrayAttribute::try_from(self.attr(name)?)
            .map_err(|_| self.err(&format!("has a `{name}` that is not an array")))?;
        (0..a.len())
            .map(|i| {
                let e = a.element(i).map_err(|e| self.err(&e.to_string()))?;
                rust_type_of_attr(e).map_err(|e| self.err(&format!("`{name}`: {e}")))
            })
            .collect()
    }

    /// A string attribute that must be one of `values`.
    fn one_of<T: Copy>(&self, name: &str, values: &[(&str, T)]) -> Result<T, String> {
        let v = self.str(name)?;
        values
            .iter()
            .find(|(s, _)| *s == v)
            .map(|(_, t)| *t)
            .ok_or_else(|| self.err(&format!("has an unknown {name} `{v}`")))
    }

    /// A string attribute read by a vocabulary type's `parse`: an unknown
    /// name is an error that lists the valid ones.
    fn parsed<T>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, vocab::UnknownName>,
    ) -> Result<T, String> {
        let v = self.str(name)?;
        parse(&v).map_err(|e| self.err(&format!("attribute `{name}`: {e}")))
    }
}

fn reader<'o, 'c, 'a>(op: &'o OperationRef<'c, 'a>, files: &[String]) -> Reader<'o, 'c, 'a> {
    let at = IrLoc::decode(op.location());
    Reader {
        loc: Loc::of(&at, files),
        op,
        name: crate::text_of(op.name().as_string_ref()),
        at,
    }
}

/// The facts of a module built by [`crate::import`] (or parsed back).
pub fn read(module: &Module) -> Result<ModuleFacts, String> {
    let mut f = ModuleFacts::default();
    let mut closures: Vec<(ClosureFact, Vec<Ty>)> = Vec::new();
    let mut captures: Vec<(String, CaptureFact)> = Vec::new();
    let mut layouts: Vec<(String, LayoutFact)> = Vec::new();
    let mut adts = Vec::new();
    f.files = source_files(module);
    let mut top = module.body().first_operation();
    while let Some(op) = top {
        let r = reader(&op, &f.files);
        let loc = r.loc;
        match r.name.as_str() {
            "rmir.registration" => {
                let kind = r.one_of(
                    "callback_kind",
                    &[("closure", 0u8), ("fn_item", 1), ("other", 2)],
                )?;
                let callback = match kind {
                    0 => CallbackRef::Closure(r.symbol("callback")?),
                    1 => CallbackRef::FnItem(r.symbol("callback")?),
                    _ => CallbackRef::Other(r.ty("callback")?),
                };
                f.registrations.push(RegistrationFact {
                    index: f.registrations.len(),
                    caller: r.str("caller")?,
                    function: r.str("function")?,
                    provider: r.parsed("provider", Provider::parse)?,
                    callback,
                    generics: r.tys("generics")?,
                    arg_types: r.tys("arg_types")?,
                    loc,
                });
            }
            "rmir.closure" => closures.push((
                ClosureFact {
                    body: r.symbol("body")?,
                    ty: r.ty("ty")?,
                    kind: r.one_of(
                        "kind",
                        &[
                            ("fn", ClosureKind::Fn),
                            ("fn_mut", ClosureKind::FnMut),
                            ("fn_once", ClosureKind::FnOnce),
                        ],
                    )?,
                    loc,
                    captures: Vec::new(),
                    layout: None,
                },
                r.tys("params")?,
            )),
            "rmir.adt_def" => adts.push(r.adt()?),
            "rmir.element_layout" => f.elements.push((
                r.ty("ty")?,
                LayoutFact {
                    size: r.uint("size")?,
                    align: r.uint("align")?,
                    offsets: r.uints("offsets")?,
                    leaves: r.leaves()?,
                },
            )),
            "rmir.env_layout" => layouts.push((
                r.symbol("closure")?,
                LayoutFact {
                    size: r.uint("size")?,
                    align: r.uint("align")?,
                    offsets: r.uints("offsets")?,
                    leaves: r.leaves()?,
                },
            )),
            "rmir.capture" => captures.push((
                r.symbol("closure")?,
                CaptureFact {
                    name: r.str("name")?,
                    field: r.int("field")? as u32,
                    ty: r.ty("ty")?,
                    mode: r.one_of(
                        "mode",
                        &[
                            ("by_value", CaptureMode::ByValue),
                            ("by_ref", CaptureMode::ByRef),
                            ("by_mut_ref", CaptureMode::ByMutRef),
                        ],
                    )?,
                    loc,
                },
            )),
            "func.func" => {
                let b = body_facts(op, &r, &f.files)?;
                f.bodies.insert(b.name.clone(), b);
            }
            _ => {}
        }
        top = op.next_in_block();
    }
    let mut signatures = Vec::new();
    for (mut c, params) in closures {
        signatures.push((c.body.clone(), params));
        c.captures = captures
            .iter()
            .filter(|(owner, _)| *owner == c.body)
            .map(|(_, k)| k.clone())
            .collect();
        c.captures.sort_by_key(|k| k.field);
        let mut own = layouts.iter().filter(|(owner, _)| *owner == c.body);
        c.layout = own.next().map(|(_, l)| l.clone());
        if own.next().is_some() {
            return Err(format!(
                "the closure `{}` has two rmir.env_layout ops",
                c.body
            ));
        }
        if let Some(l) = &c.layout {
            if l.offsets.len() != c.captures.len() {
                return Err(format!(
                    "the rmir.env_layout of `{}` has {} offsets for {} captures",
                    c.body,
                    l.offsets.len(),
                    c.captures.len()
                ));
            }
        }
        f.closures.insert(c.body.clone(), c);
    }
    if let Some((owner, _)) = layouts.iter().find(|(o, _)| !f.closures.contains_key(o)) {
        return Err(format!(
            "an rmir.env_layout names `{owner}`, which is no closure of the module"
        ));
    }
    if let Some((owner, k)) = captures.iter().find(|(o, _)| !f.closures.contains_key(o)) {
        return Err(format!(
            "the capture `{}` names `{owner}`, which is no closure of the module",
            k.name
        ));
    }
    // A closure's signature is its closure op's (its body's first
    // parameter is the environment).
    for (name, params) in signatures {
        if let Some(b) = f.bodies.get_mut(&name) {
            b.params = params;
        }
    }
    f.adts = frontend::adt::Adts::new(&adts);
    for c in f.closures.values() {
        let captures = c.captures.iter().map(|k| k.ty.clone()).collect();
        f.adts.add_closure(&c.ty, captures);
    }
    Ok(f)
}

/// The Rust types of a `func.func`'s arguments or results (`rmir.ty` in
/// each argument's dictionary).
/// The `rmir.ty` of each argument or result, and whether it is the
/// caller's place for a result in memory (`rmir.sret`).
fn signature(r: &Reader<'_, '_, '_>, name: &str) -> Result<Vec<(Ty, bool)>, String> {
    let Ok(a) = r.attr(name) else {
        return Ok(Vec::new());
    };
    let a = ArrayAttribute::try_from(a)
        .map_err(|_| r.err(&format!("has a `{name}` that is not an array")))?;
    (0..a.len())
        .map(|i| {
            let d = a.element(i).map_err(|e| r.err(&e.to_string()))?;
            let d = DictionaryAttribute::try_from(d).ok();
            let t = d
                .and_then(|d| d.element_by_name("rmir.ty"))
                .ok_or_else(|| r.err(&format!("has an argument without `rmir.ty` in `{name}`")))?;
            let sret = d.and_then(|d| d.element_by_name("rmir.sret")).is_some();
            Ok((rust_type_of_attr(t).map_err(|e| r.err(&e))?, sret))
        })
        .collect()
}

/// The module's source files: `rmir.source_file`, then `rmir.source_modules`.
fn source_files(module: &Module) -> Vec<String> {
    let op = module.as_operation();
    let string = crate::string_attr;
    let mut files: Vec<String> = op
        .attribute("rmir.source_file")
        .ok()
        .and_then(string)
        .into_iter()
        .collect();
    if let Some(a) = op
        .attribute("rmir.source_modules")
        .ok()
        .and_then(|a| ArrayAttribute::try_from(a).ok())
    {
        files.extend((0..a.len()).filter_map(|i| a.element(i).ok().and_then(string)));
    }
    files
}

fn body_facts(
    func: OperationRef<'_, '_>,
    r: &Reader<'_, '_, '_>,
    files: &[String],
) -> Result<BodyFact, String> {
    let name = r.str("sym_name")?;
    let args = signature(r, "arg_attrs")?;
    // A result in memory is the type of the `rmir.sret` argument.
    let ret = args
        .iter()
        .find(|(_, sret)| *sret)
        .cloned()
        .or(signature(r, "res_attrs")?.into_iter().next())
        .map(|(t, _)| t)
        .unwrap_or(Ty::Tuple(Vec::new()));
    let mut b = BodyFact {
        name: name.clone(),
        kind: r.one_of(
            "rmir.kind",
            &[
                ("fn", BodyKind::Fn),
                ("closure", BodyKind::Closure),
                ("const", BodyKind::Const),
            ],
        )?,
        params: args
            .into_iter()
            .filter(|(_, sret)| !sret)
            .map(|(t, _)| t)
            .collect(),
        ret,
        loc: r.loc,
        calls: Vec::new(),
        env_writes: Vec::new(),
        unsupported: Vec::new(),
        ops: Vec::new(),
        statics: Vec::new(),
        fn_items: Vec::new(),
        generic_params: match func.attribute("rmir.generic_params") {
            Ok(_) => r.strs("rmir.generic_params")?,
            Err(_) => Vec::new(),
        },
    };
    let Ok(region) = func.region(0) else {
        return Ok(b);
    };
    let mut error = None;
    let mut block = region.first_block();
    while let Some(blk) = block {
        let mut next = blk.first_operation();
        while let Some(op) = next {
            op.walk(WalkOrder::PreOrder, |o| match visit(&mut b, o, files) {
                Ok(()) => WalkResult::Advance,
                Err(e) => {
                    error = Some(e);
                    WalkResult::Interrupt
                }
            });
            if let Some(e) = error {
                return Err(e);
            }
            next = op.next_in_block();
        }
        block = blk.next_in_region();
    }
    Ok(b)
}

fn visit(b: &mut BodyFact, op: OperationRef<'_, '_>, files: &[String]) -> Result<(), String> {
    let r = reader(&op, files);
    let loc = r.loc;
    match r.name.as_str() {
        "rmir.call" => {
            let kind = r.parsed("kind", CallKind::parse)?;
            let callee = if kind == CallKind::Local {
                r.symbol("callee")?
            } else {
                r.str("callee")?
            };
            b.calls.push(CallFact {
                target: (kind == CallKind::Local).then(|| callee.clone()),
                callee,
                kind,
                text: r.str("text")?,
                // The caller's place for a result in memory is not an
                // argument of the Rust call.
                args: op.operand_count() - usize::from(r.flag("sret")?),
                receiver: r.ty("receiver")?.scalar(),
                signature: match (kind, r.ty("receiver")?) {
                    (CallKind::Extern, Ty::FnPtr(sig)) => {
                        Some(parse_signature(&sig).ok_or_else(|| {
                            r.err(&format!(
                                "has an `extern` signature `{sig}` that is not `fn(..) -> ..`"
                            ))
                        })?)
                    }
                    _ => None,
                },
                loc,
            });
        }
        "rmir.env_write" => b.env_writes.push((r.str("name")?, loc)),
        "rmir.unsupported" => {
            b.unsupported.push(UnsupportedFact {
                mir: r.str("what")?,
                reason: r.str("reason")?,
                loc,
            });
        }
        "rmir.constant" => {
            let value = r.str("value")?;
            let ty = r.ty("ty")?;
            if let Some(name) = value.strip_prefix("static ") {
                b.statics.push((name.to_string(), ty, loc));
            } else if matches!(&ty, Ty::Other(t) if t.starts_with("fn item {")) {
                // A fn item used as a value (the importer's type for a fn
                // item constant that is about to become a fn pointer).
                b.fn_items.push(value);
            }
        }
        _ => {}
    }
    b.ops.push((r.name, loc));
    Ok(())
}

/// `fn(u32, f64) -> u32` → (`[u32, f64]`, `u32`); no arrow means `()`.
pub fn parse_signature(sig: &str) -> Option<(Vec<Ty>, Ty)> {
    let rest = sig.strip_prefix("fn(")?;
    let close = rest.find(')')?;
    let params = rest[..close].trim();
    let params = if params.is_empty() {
        Vec::new()
    } else {
        params.split(", ").map(Ty::parse).collect()
    };
    let after = rest[close + 1..].trim();
    let ret = match after.strip_prefix("->") {
        Some(r) => Ty::parse(r.trim()),
        None if after.is_empty() => Ty::Tuple(Vec::new()),
        None => return None,
    };
    Some((params, ret))
}
