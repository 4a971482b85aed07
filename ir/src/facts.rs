//! Typed, owned views of an rmir module for the admission passes.
//!
//! Everything here is read from the dialect (ops, attributes, locations),
//! not from prepared MIR, so passes that use it run on the module.

use std::collections::BTreeMap;

use melior::ir::{
    attribute::{ArrayAttribute, BoolAttribute, IntegerAttribute},
    block::BlockLike,
    operation::{OperationLike, WalkOrder, WalkResult},
    Attribute, Module, OperationRef, RegionLike,
};

use crate::loc::Loc;

#[derive(Debug, Clone, PartialEq)]
pub struct RegistrationFact {
    pub caller: String,
    pub block: u32,
    pub function: String,
    pub provider: String,
    /// `closure`, `fn_item` or `other`.
    pub callback_kind: String,
    /// The callback's body (a func.func symbol) or, for `other`, its type.
    pub callback: String,
    pub generics: Vec<String>,
    pub arg_types: Vec<String>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClosureFact {
    pub body: String,
    pub ty: String,
    /// `fn`, `fn_mut` or `fn_once`.
    pub kind: String,
    pub params: Vec<String>,
    pub ret: String,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaptureFact {
    pub closure: String,
    pub name: String,
    pub field: u32,
    pub ty: String,
    /// `by_value`, `by_ref` or `by_mut_ref`.
    pub mode: String,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CallFact {
    /// The body that makes the call.
    pub caller: String,
    /// Resolved name: the local body, registration function, core method,
    /// panic function, or the path for indirect/foreign calls.
    pub callee: String,
    /// The callee as MIR printed it.
    pub text: String,
    /// `local`, `registration`, `core`, `panic`, `indirect` or `foreign`.
    pub kind: String,
    pub args: usize,
    pub loc: Loc,
}

/// A capture op in a body: `rmir.capture_read`, `capture_addr`, `env_write`.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureUse {
    pub body: String,
    pub field: u32,
    pub name: String,
    pub ty: String,
    pub loc: Loc,
}

/// Any op of a body, with its attributes printed (`"i32"`, `3 : i64`).
#[derive(Debug, Clone, PartialEq)]
pub struct OpFact {
    pub body: String,
    /// Full op name, `rmir.deref`, `arith.addi`, …
    pub name: String,
    pub attributes: BTreeMap<String, String>,
    pub loc: Loc,
}

impl OpFact {
    /// A string attribute's value without quotes.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(|s| s.trim_matches('"'))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct BodyFact {
    pub name: String,
    /// `fn`, `closure` or `const`.
    pub kind: String,
    /// MIR types of the arguments (`rmir.ty` argument attributes).
    pub params: Vec<String>,
    /// MIR type of the result, when the function returns a value.
    pub ret: Option<String>,
    pub loc: Loc,
    pub calls: Vec<CallFact>,
    pub capture_reads: Vec<CaptureUse>,
    pub capture_addrs: Vec<CaptureUse>,
    pub env_writes: Vec<CaptureUse>,
    /// `rmir.unsupported`: `what` (MIR text) and `reason` attributes.
    pub unsupported: Vec<OpFact>,
    /// Every op of the body in order (the lists above included).
    pub ops: Vec<OpFact>,
}

/// The module's facts in op order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub registrations: Vec<RegistrationFact>,
    pub closures: Vec<ClosureFact>,
    pub captures: Vec<CaptureFact>,
    pub bodies: Vec<BodyFact>,
}

impl Facts {
    pub fn body(&self, name: &str) -> Option<&BodyFact> {
        self.bodies.iter().find(|b| b.name == name)
    }

    pub fn closure(&self, body: &str) -> Option<&ClosureFact> {
        self.closures.iter().find(|c| c.body == body)
    }

    pub fn captures_of<'f>(&'f self, closure: &'f str) -> impl Iterator<Item = &'f CaptureFact> {
        self.captures.iter().filter(move |c| c.closure == closure)
    }

    pub fn calls(&self) -> impl Iterator<Item = &CallFact> {
        self.bodies.iter().flat_map(|b| b.calls.iter())
    }
}

pub(crate) fn str_attr(op: &OperationRef<'_, '_>, name: &str) -> Option<String> {
    crate::string_attr(op.attribute(name).ok()?)
}

pub(crate) fn int_attr(op: &OperationRef<'_, '_>, name: &str) -> Option<i64> {
    let a = op.attribute(name).ok()?;
    IntegerAttribute::try_from(a).ok().map(|i| i.value())
}

/// The elements of an array attribute; empty when there is none.
fn array_elements<'c>(op: &OperationRef<'c, '_>, name: &str) -> Vec<Attribute<'c>> {
    let Some(a) = op
        .attribute(name)
        .ok()
        .and_then(|a| ArrayAttribute::try_from(a).ok())
    else {
        return Vec::new();
    };
    (0..a.len()).filter_map(|i| a.element(i).ok()).collect()
}

fn strs_attr(op: &OperationRef<'_, '_>, name: &str) -> Vec<String> {
    array_elements(op, name)
        .into_iter()
        .filter_map(crate::string_attr)
        .collect()
}

fn attr_text(a: Attribute<'_>) -> String {
    if let Ok(b) = BoolAttribute::try_from(a) {
        return b.value().to_string();
    }
    a.to_string()
}

/// Reads the facts of a module built by [`crate::import`] (or parsed back).
pub fn facts(module: &Module) -> Facts {
    let mut f = Facts::default();
    let mut top = module.body().first_operation();
    while let Some(op) = top {
        let loc = Loc::decode(op.location());
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        match name.as_str() {
            "rmir.registration" => f.registrations.push(RegistrationFact {
                caller: str_attr(&op, "caller").unwrap_or_default(),
                block: int_attr(&op, "block").unwrap_or(0) as u32,
                function: str_attr(&op, "function").unwrap_or_default(),
                provider: str_attr(&op, "provider").unwrap_or_default(),
                callback_kind: str_attr(&op, "callback_kind").unwrap_or_default(),
                callback: str_attr(&op, "callback").unwrap_or_default(),
                generics: strs_attr(&op, "generics"),
                arg_types: strs_attr(&op, "arg_types"),
                loc,
            }),
            "rmir.closure" => f.closures.push(ClosureFact {
                body: str_attr(&op, "body").unwrap_or_default(),
                ty: str_attr(&op, "ty").unwrap_or_default(),
                kind: str_attr(&op, "kind").unwrap_or_default(),
                params: strs_attr(&op, "params"),
                ret: str_attr(&op, "ret").unwrap_or_default(),
                loc,
            }),
            "rmir.capture" => f.captures.push(CaptureFact {
                closure: str_attr(&op, "closure").unwrap_or_default(),
                name: str_attr(&op, "name").unwrap_or_default(),
                field: int_attr(&op, "field").unwrap_or(0) as u32,
                ty: str_attr(&op, "ty").unwrap_or_default(),
                mode: str_attr(&op, "mode").unwrap_or_default(),
                loc,
            }),
            "func.func" => f.bodies.push(body_facts(op, loc)),
            _ => {}
        }
        top = op.next_in_block();
    }
    f
}

fn dict_strings(op: &OperationRef<'_, '_>, name: &str) -> Vec<String> {
    array_elements(op, name)
        .into_iter()
        .map(|d| {
            // `{rmir.ty = "i32"}`: the dictionary's one string.
            let text = d.to_string();
            text.split_once('"')
                .and_then(|(_, rest)| rest.rsplit_once('"'))
                .map(|(inner, _)| inner.replace("\\\"", "\""))
                .unwrap_or_default()
        })
        .collect()
}

fn body_facts(func: OperationRef<'_, '_>, loc: Loc) -> BodyFact {
    let name = str_attr(&func, "sym_name").unwrap_or_default();
    let mut b = BodyFact {
        name: name.clone(),
        kind: str_attr(&func, "rmir.kind").unwrap_or_default(),
        params: dict_strings(&func, "arg_attrs"),
        ret: dict_strings(&func, "res_attrs").into_iter().next(),
        loc,
        calls: Vec::new(),
        capture_reads: Vec::new(),
        capture_addrs: Vec::new(),
        env_writes: Vec::new(),
        unsupported: Vec::new(),
        ops: Vec::new(),
    };
    let Ok(region) = func.region(0) else { return b };
    let mut block = region.first_block();
    while let Some(blk) = block {
        let mut next = blk.first_operation();
        while let Some(op) = next {
            op.walk(WalkOrder::PreOrder, |o| {
                visit(&mut b, &name, o);
                WalkResult::Advance
            });
            next = op.next_in_block();
        }
        block = blk.next_in_region();
    }
    b
}

fn visit(b: &mut BodyFact, body: &str, op: OperationRef<'_, '_>) {
    let loc = Loc::decode(op.location());
    let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
    let attributes: BTreeMap<String, String> = op
        .attributes()
        .map(|(k, v)| {
            (
                k.as_string_ref().as_str().unwrap_or("").to_string(),
                attr_text(v),
            )
        })
        .collect();
    let capture = || CaptureUse {
        body: body.to_string(),
        field: int_attr(&op, "field").unwrap_or(0) as u32,
        name: str_attr(&op, "name").unwrap_or_default(),
        ty: str_attr(&op, "ty").unwrap_or_default(),
        loc: loc.clone(),
    };
    let fact = OpFact {
        body: body.to_string(),
        name: name.clone(),
        attributes,
        loc: loc.clone(),
    };
    match name.as_str() {
        "rmir.call" => b.calls.push(CallFact {
            caller: body.to_string(),
            callee: str_attr(&op, "callee").unwrap_or_default(),
            text: str_attr(&op, "text").unwrap_or_default(),
            kind: str_attr(&op, "kind").unwrap_or_default(),
            args: op.operand_count(),
            loc: loc.clone(),
        }),
        "rmir.capture_read" => b.capture_reads.push(capture()),
        "rmir.capture_addr" => b.capture_addrs.push(capture()),
        "rmir.env_write" => b.env_writes.push(capture()),
        "rmir.unsupported" => b.unsupported.push(fact.clone()),
        _ => {}
    }
    b.ops.push(fact);
}
