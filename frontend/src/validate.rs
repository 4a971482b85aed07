//! Validation of prepared MIR on read, and the read itself
//! ([`PreparedMir::from_json`], which checks every document it returns).
//!
//! A `.pmir.json` document is input like any other: it can be hand-edited,
//! truncated or written by another tool. Every later stage indexes locals,
//! blocks and bodies by the numbers a document holds, so a document is
//! checked here, once, before anything reads it: local and block numbering,
//! `arg_count`, every index in a place, every jump target, calls to local
//! bodies (callee exists, operand count, scalar operand types), closures,
//! registrations and constants. A bad document is a located error naming
//! the document path of the fault (`bodies[2] `helper`, bb1 terminator`)
//! and, where known, its MIR line.
//!
//! The parser's own output passes by construction (it checks numbering and
//! locals as it reads); the bridge validates it too, so the rules hold for
//! every document whatever its origin.

use std::fmt;

use serde::Deserialize;

use crate::pmir::{
    Body, BodyKind, Callback, Constant, Operand, Place, PreparedMir, Projection, Resolution,
    Rvalue, StatementKind, TerminatorKind, UnwindAction, FORMAT,
};
use crate::ty::{Scalar, Ty};

impl PreparedMir {
    /// Reads a document, rejecting other format versions before anything else.
    pub fn from_json(text: &str) -> Result<PreparedMir, ReadError> {
        // Read the version first, so a document of another version is
        // reported as such rather than as whatever field changed.
        #[derive(Deserialize)]
        struct Header {
            format: Option<serde_json::Value>,
        }
        let header: Header = serde_json::from_str(text).map_err(|e| ReadError::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        match header.format.as_ref().map(|f| f.as_str()) {
            Some(Some(FORMAT)) => {}
            Some(Some(other)) => return Err(ReadError::Version(other.to_string())),
            Some(None) => return Err(ReadError::Version(header.format.unwrap().to_string())),
            None => return Err(ReadError::NoFormat),
        }
        // Parsed from text (not from a `Value`) so 128-bit constants survive.
        let doc: PreparedMir =
            serde_json::from_str(text).map_err(|e| ReadError::Schema(e.to_string()))?;
        // Later stages index locals, blocks and bodies by the numbers read
        // here: they are checked once, now.
        validate(&doc).map_err(ReadError::Invalid)?;
        Ok(doc)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    NoFormat,
    Version(String),
    Schema(String),
    /// Well-formed JSON of the right shape that breaks a rule of the format.
    Invalid(Invalid),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Json {
                line,
                column,
                message,
            } => write!(f, "{line}:{column}: not valid JSON: {message}"),
            ReadError::NoFormat => write!(
                f,
                "not a prepared-MIR document: no \"format\" field (expected \"{FORMAT}\")"
            ),
            ReadError::Version(v) => write!(
                f,
                "prepared-MIR format \"{v}\" is not supported: this build reads \"{FORMAT}\""
            ),
            ReadError::Schema(m) => write!(f, "malformed prepared MIR: {m}"),
            ReadError::Invalid(e) => write!(f, "malformed prepared MIR: {e}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// A fault in a prepared-MIR document, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The document path of the faulty item: `bodies[2] `helper`, bb1 terminator`.
    pub at: String,
    /// The MIR line the item came from, when the document records one.
    pub mir_line: Option<u32>,
    pub message: String,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.at)?;
        if let Some(line) = self.mir_line {
            write!(f, " (MIR line {line})")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for Invalid {}

type VResult = Result<(), Invalid>;

/// Checks a whole document; the first fault found is returned.
pub fn validate(doc: &PreparedMir) -> VResult {
    // Body names may repeat: rustc prints a `// MIR FOR CTFE` copy of
    // const-callable functions (tuple-struct constructors) under the same
    // name. Lookups by name take the first, as `PreparedMir::body` does.
    // Every body's shape first: a call is checked against its callee's
    // locals, which must be known good whatever the order of the bodies.
    for (i, b) in doc.bodies.iter().enumerate() {
        check_shape(i, b)?;
    }
    for (i, b) in doc.bodies.iter().enumerate() {
        check_contents(doc, i, b)?;
    }
    for (i, c) in doc.closures.iter().enumerate() {
        let at = format!("closures[{i}] `{}`", c.body);
        let err = |message: String| Invalid {
            at: at.clone(),
            mir_line: None,
            message,
        };
        let Some(body) = doc.body(&c.body) else {
            return Err(err(format!(
                "closure body `{}` is not in the document",
                c.body
            )));
        };
        if body.arg_count == 0 {
            return Err(err(format!(
                "closure body `{}` has no environment argument `_1`",
                c.body
            )));
        }
        if c.params.len() != body.arg_count as usize - 1 {
            return Err(err(format!(
                "{} parameters listed, but body `{}` takes {} after its environment",
                c.params.len(),
                c.body,
                body.arg_count - 1
            )));
        }
        if !matches!(c.ty, Ty::Closure { .. }) {
            return Err(err(format!("type `{}` is not a closure type", c.ty)));
        }
        for (j, k) in c.captures.iter().enumerate() {
            if let Some(other) = c.captures[..j].iter().position(|o| o.field == k.field) {
                return Err(err(format!(
                    "captures[{j}] `{}` and captures[{other}] `{}` both claim field {}",
                    k.name, c.captures[other].name, k.field
                )));
            }
            if k.name.is_empty() {
                return Err(err(format!("captures[{j}] has an empty name")));
            }
        }
        // A chain's layout is the `#[repr(C)]` nesting of its closures'
        // (which may capture nothing): it must be what they make.
        if crate::chain::is_chain_closure(&c.ty) {
            if let Some(layout) = &c.layout {
                let want = crate::chain::layout_of(c, &doc.closures);
                if want.as_ref() != Some(layout) {
                    return Err(err(format!(
                        "the chain's recorded layout is not the one its closures make ({})",
                        match want {
                            Some(w) => format!("size {}, align {}", w.size, w.align),
                            None => "a closure without a layout".to_string(),
                        }
                    )));
                }
            }
        } else if let Some(layout) = &c.layout {
            let shapes = crate::layout::measurable(c, doc).ok_or_else(|| {
                err("a layout is recorded, but not every capture is a by-value scalar or an aggregate of them".into())
            })?;
            crate::layout::ClosureLayout::of_recorded(&shapes, layout)
                .map_err(|e| err(format!("layout: {e}")))?;
        }
    }
    for (i, r) in doc.registrations.iter().enumerate() {
        let at = format!("registrations[{i}] `{}`", r.function);
        let err = |message: String| Invalid {
            at: at.clone(),
            mir_line: Some(r.mir_line),
            message,
        };
        let Some(caller) = doc.body(&r.caller) else {
            return Err(err(format!("caller `{}` is not in the document", r.caller)));
        };
        let Some(block) = caller.blocks.get(r.block.0 as usize) else {
            return Err(err(format!(
                "block bb{} is not in `{}`, which has {} blocks",
                r.block.0,
                r.caller,
                caller.blocks.len()
            )));
        };
        if !matches!(block.terminator.kind, TerminatorKind::Call { .. }) {
            return Err(err(format!(
                "bb{} of `{}` does not end in a call",
                r.block.0, r.caller
            )));
        }
        match &r.callback {
            Callback::Closure { body } => {
                if doc.closure(body).is_none() {
                    return Err(err(format!(
                        "callback closure `{body}` is not in the document"
                    )));
                }
            }
            Callback::FnItem { body } => {
                if doc.body(body).is_none() {
                    return Err(err(format!(
                        "callback function `{body}` is not in the document"
                    )));
                }
            }
            Callback::Other { .. } => {}
        }
    }
    Ok(())
}

fn body_at(i: usize, b: &Body) -> String {
    format!("bodies[{i}] `{}`", b.name)
}

/// Locals `_0…` in order, `arg_count` within them, blocks `bb0…` in order.
fn check_shape(index: usize, body: &Body) -> VResult {
    let at = body_at(index, body);
    let err = |message: String| Invalid {
        at: at.clone(),
        mir_line: Some(body.mir_line),
        message,
    };
    if body.locals.is_empty() {
        return Err(err("no locals: the return place `_0` is missing".into()));
    }
    for (i, l) in body.locals.iter().enumerate() {
        if l.local.0 as usize != i {
            return Err(err(format!(
                "locals[{i}] is `_{}`: locals must be `_0`, `_1`, … in order",
                l.local.0
            )));
        }
    }
    if body.arg_count as usize >= body.locals.len() {
        return Err(err(format!(
            "arg_count is {}, but only {} locals follow the return place",
            body.arg_count,
            body.locals.len() - 1
        )));
    }
    if body.kind == BodyKind::Closure && body.arg_count == 0 {
        return Err(err(
            "a closure body without its environment argument `_1`".into()
        ));
    }
    for (i, b) in body.blocks.iter().enumerate() {
        if b.id.0 as usize != i {
            return Err(err(format!(
                "blocks[{i}] is `bb{}`: blocks must be `bb0`, `bb1`, … in order",
                b.id.0
            )));
        }
    }
    Ok(())
}

/// Every local, block and callee a body's statements and terminators name.
fn check_contents(doc: &PreparedMir, index: usize, body: &Body) -> VResult {
    let at = body_at(index, body);
    let cx = BodyCx { doc, body };
    for d in &body.debug_vars {
        if let Some(p) = &d.place {
            cx.place(p, &format!("{at}, debug `{}`", d.name), d.mir_line)?;
        }
    }
    for b in &body.blocks {
        for (j, s) in b.statements.iter().enumerate() {
            let sat = format!("{at}, bb{} statement {j}", b.id.0);
            cx.statement(&s.kind, &sat, s.mir_line)?;
        }
        let tat = format!("{at}, bb{} terminator", b.id.0);
        cx.terminator(&b.terminator.kind, &tat, b.terminator.mir_line)?;
    }
    Ok(())
}

struct BodyCx<'a> {
    doc: &'a PreparedMir,
    body: &'a Body,
}

impl BodyCx<'_> {
    fn local(&self, l: u32, at: &str, line: u32) -> VResult {
        if (l as usize) < self.body.locals.len() {
            Ok(())
        } else {
            Err(Invalid {
                at: at.to_string(),
                mir_line: Some(line),
                message: format!(
                    "local `_{l}` is not declared in `{}` (it has `_0` to `_{}`)",
                    self.body.name,
                    self.body.locals.len() - 1
                ),
            })
        }
    }

    fn place(&self, p: &Place, at: &str, line: u32) -> VResult {
        self.local(p.local.0, at, line)?;
        for pr in &p.projections {
            if let Projection::Index(l) = pr {
                self.local(l.0, at, line)?;
            }
        }
        Ok(())
    }

    fn operand(&self, o: &Operand, at: &str, line: u32) -> VResult {
        match o {
            Operand::Copy(p) | Operand::Move(p) => self.place(p, at, line),
            Operand::Const(c) => constant(c, at, line),
        }
    }

    fn block(&self, b: u32, at: &str, line: u32) -> VResult {
        if (b as usize) < self.body.blocks.len() {
            Ok(())
        } else {
            Err(Invalid {
                at: at.to_string(),
                mir_line: Some(line),
                message: format!(
                    "jump to `bb{b}`, which is not in `{}` ({} blocks)",
                    self.body.name,
                    self.body.blocks.len()
                ),
            })
        }
    }

    fn unwind(&self, u: &UnwindAction, at: &str, line: u32) -> VResult {
        match u {
            UnwindAction::Cleanup(b) => self.block(b.0, at, line),
            _ => Ok(()),
        }
    }

    fn statement(&self, s: &StatementKind, at: &str, line: u32) -> VResult {
        match s {
            StatementKind::Assign { place, rvalue } => {
                self.place(place, at, line)?;
                self.rvalue(rvalue, at, line)
            }
            StatementKind::StorageLive(l) | StatementKind::StorageDead(l) => {
                self.local(l.0, at, line)
            }
            StatementKind::SetDiscriminant { place, .. } => self.place(place, at, line),
            StatementKind::Nop(_) | StatementKind::Opaque(_) | StatementKind::Unparsed { .. } => {
                Ok(())
            }
        }
    }

    fn rvalue(&self, r: &Rvalue, at: &str, line: u32) -> VResult {
        match r {
            Rvalue::Use(o)
            | Rvalue::UnaryOp { operand: o, .. }
            | Rvalue::Cast { operand: o, .. }
            | Rvalue::Repeat { operand: o, .. } => self.operand(o, at, line),
            Rvalue::BinaryOp { lhs, rhs, .. } | Rvalue::CheckedBinaryOp { lhs, rhs, .. } => {
                self.operand(lhs, at, line)?;
                self.operand(rhs, at, line)
            }
            Rvalue::Ref { place, .. }
            | Rvalue::RawPtr { place, .. }
            | Rvalue::Discriminant(place)
            | Rvalue::Len(place) => self.place(place, at, line),
            Rvalue::Aggregate { fields, .. } => fields
                .iter()
                .try_for_each(|(_, o)| self.operand(o, at, line)),
            Rvalue::Other(_) => Ok(()),
        }
    }

    fn terminator(&self, t: &TerminatorKind, at: &str, line: u32) -> VResult {
        match t {
            TerminatorKind::Goto(b) => self.block(b.0, at, line),
            TerminatorKind::SwitchInt {
                discr,
                targets,
                otherwise,
            } => {
                self.operand(discr, at, line)?;
                for (_, b) in targets {
                    self.block(b.0, at, line)?;
                }
                self.block(otherwise.0, at, line)
            }
            TerminatorKind::Return
            | TerminatorKind::Unreachable
            | TerminatorKind::UnwindResume
            | TerminatorKind::Unparsed { .. } => Ok(()),
            TerminatorKind::Assert {
                cond,
                target,
                unwind,
                ..
            } => {
                self.operand(cond, at, line)?;
                self.block(target.0, at, line)?;
                self.unwind(unwind, at, line)
            }
            TerminatorKind::Drop {
                place,
                target,
                unwind,
            } => {
                self.place(place, at, line)?;
                self.block(target.0, at, line)?;
                self.unwind(unwind, at, line)
            }
            TerminatorKind::Call {
                dest,
                callee,
                args,
                target,
                unwind,
            } => {
                self.place(dest, at, line)?;
                for a in args {
                    self.operand(a, at, line)?;
                }
                if let Some(b) = target {
                    self.block(b.0, at, line)?;
                }
                self.unwind(unwind, at, line)?;
                if let Resolution::Local { body } = &callee.resolution {
                    self.local_call(body, &callee.path, dest, args, at, line)?;
                }
                // A core operation's operand count is fixed by the
                // capability table (its receiver type is admission's to judge).
                if let Resolution::CoreScalar { method, .. } = &callee.resolution {
                    if let Some(op) = crate::registry::core_op(method) {
                        if !op.takes(args.len()) {
                            return Err(Invalid {
                                at: at.to_string(),
                                mir_line: Some(line),
                                message: format!(
                                    "call of the core operation `{method}` with {} operand{}; it takes {}",
                                    args.len(),
                                    if args.len() == 1 { "" } else { "s" },
                                    op.arity
                                ),
                            });
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// A call to a body of this document: the callee exists and gets as
    /// many operands as it has arguments, of its scalar types where both
    /// sides are known. A closure called through its `Fn*` trait method
    /// (`<{closure@…} as Fn<(i32,)>>::call(move _2, move _3)`) gets the
    /// environment and one tuple of the remaining arguments.
    fn local_call(
        &self,
        name: &str,
        path: &str,
        dest: &Place,
        args: &[Operand],
        at: &str,
        line: u32,
    ) -> VResult {
        let err = |message: String| Invalid {
            at: at.to_string(),
            mir_line: Some(line),
            message,
        };
        let Some(callee) = self.doc.body(name) else {
            return Err(err(format!(
                "call to the local body `{name}`, which is not in the document"
            )));
        };
        let params = &callee.locals[1..=callee.arg_count as usize];
        // `prepare` spreads the tuple when the callee is a closure of this
        // document (as code generation does), so both shapes are valid.
        let through_trait =
            callee.kind == BodyKind::Closure && path.starts_with('<') && args.len() != params.len();
        if through_trait {
            if args.len() != 2 {
                return Err(err(format!(
                    "call of closure `{name}` through its trait: {} operands, expected the environment and one tuple of arguments",
                    args.len()
                )));
            }
            if let Some(Ty::Tuple(elems)) = self.operand_ty(&args[1]) {
                if elems.len() != params.len() - 1 {
                    return Err(err(format!(
                        "call of closure `{name}` with a tuple of {} arguments; it takes {}",
                        elems.len(),
                        params.len() - 1
                    )));
                }
            }
        } else {
            if args.len() != params.len() {
                return Err(err(format!(
                    "call to `{name}` with {} operand{}; `{name}` takes {}",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" },
                    params.len()
                )));
            }
            for (i, (a, p)) in args.iter().zip(params).enumerate() {
                if let (Some(Ty::Scalar(have)), Ty::Scalar(want)) = (self.operand_ty(a), &p.ty) {
                    if have != *want {
                        return Err(err(format!(
                            "operand {i} of the call to `{name}` is `{}`; `{name}` takes `{}`",
                            have.name(),
                            want.name()
                        )));
                    }
                }
            }
        }
        let ret = &callee.locals[0].ty;
        if let (Some(Ty::Scalar(have)), Ty::Scalar(want)) = (self.place_ty(dest), ret) {
            if have != *want {
                return Err(err(format!(
                    "the result of `{name}` is `{}`, stored into a place of type `{}`",
                    want.name(),
                    have.name()
                )));
            }
        }
        Ok(())
    }

    /// The type of a place without projections; `None` when it has some
    /// (field types are checked where they are read, not here).
    fn place_ty(&self, p: &Place) -> Option<Ty> {
        if p.projections.is_empty() {
            self.body
                .locals
                .get(p.local.0 as usize)
                .map(|l| l.ty.clone())
        } else {
            None
        }
    }

    fn operand_ty(&self, o: &Operand) -> Option<Ty> {
        match o {
            Operand::Copy(p) | Operand::Move(p) => self.place_ty(p),
            Operand::Const(Constant::Int { ty, .. } | Constant::Float { ty, .. }) => {
                Some(ty.clone())
            }
            Operand::Const(Constant::Bool(_)) => Some(Ty::Scalar(Scalar::Bool)),
            Operand::Const(_) => None,
        }
    }
}

/// Constants carry their type: an integer's value must fit it, a float's
/// bits must fit its width.
fn constant(c: &Constant, at: &str, line: u32) -> VResult {
    let err = |message: String| Invalid {
        at: at.to_string(),
        mir_line: Some(line),
        message,
    };
    match c {
        Constant::Int { value, ty } => {
            let Some(s) = ty.scalar().filter(|s| s.int_bits().is_some()) else {
                return Err(err(format!(
                    "integer constant {value} of the non-integer type `{ty}`"
                )));
            };
            let bits = s.int_bits().unwrap_or(128);
            if !int_fits(*value, bits, s.is_signed()) {
                return Err(err(format!("integer constant {value} does not fit `{ty}`")));
            }
            Ok(())
        }
        Constant::Float { bits, ty, .. } => match ty.scalar() {
            Some(Scalar::F32) if *bits <= u32::MAX as u64 => Ok(()),
            Some(Scalar::F64) => Ok(()),
            Some(Scalar::F32) => Err(err(format!("f32 constant with 64-bit pattern {bits:#x}"))),
            _ => Err(err(format!("float constant of the non-float type `{ty}`"))),
        },
        _ => Ok(()),
    }
}

/// Whether `value` is representable in an integer of `bits` bits. Unsigned
/// 128-bit values above `i128::MAX` are stored as their bits (negative).
fn int_fits(value: i128, bits: u32, signed: bool) -> bool {
    if bits >= 128 {
        return true;
    }
    if signed {
        let min = -(1i128 << (bits - 1));
        let max = (1i128 << (bits - 1)) - 1;
        (min..=max).contains(&value)
    } else {
        (0..(1i128 << bits)).contains(&value)
    }
}
