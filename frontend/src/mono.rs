//! Monomorphisation: the instances of the crate's generic functions that
//! calls name.
//!
//! rustc prints a generic function's MIR once, in terms of its parameters
//! (`fn lerp(_1: T, _2: T, _3: T) -> T`, calling `<T as Sub>::sub`), and
//! its callers name an instance (`lerp::<i16>(…)`). Optimised MIR inlines
//! the cheap instances itself; for the others this module makes the
//! instance's body: the generic body's MIR text with each parameter
//! replaced by its argument, parsed again, and named as the call prints it
//! (`lerp::<i16>`), so `prepare` resolves the call to it. A trait's default
//! method (`Twice::twice`, which names `Self`) is instantiated for each
//! `<i32 as Twice>::twice` call the same way.
//!
//! In an instance, the operator traits of `core` applied to scalars
//! (`<i16 as Sub>::sub`, `<f32 as PartialOrd>::lt`, `<u8 as Into<u32>>::into`)
//! are replaced by the MIR rustc inlines for them: the operation, with its
//! overflow, division and shift checks as `assert` terminators (dropped by
//! code generation with the profile's overflow checks, as rustc's are).
//!
//! The parameters come from the source: the `fn`'s generic list in order,
//! then one per `impl Trait` argument (rustc's synthetic parameters, named
//! in MIR by their bound, `impl Fn(i32) -> i32`). A body whose parameters
//! cannot be read stays generic, and a call of it is reported later as a
//! call of a body with no GPU form.

use std::collections::{BTreeMap, BTreeSet};

use crate::parse::parse_mir;
use crate::pmir::{
    AssertKind, BinOp, Block, BlockId, Body, BodyKind, Constant, LocalDecl, Operand, Place,
    Projection, Rvalue, SourceFacts, Statement, StatementKind, Terminator, TerminatorKind, UnOp,
};
use crate::source::{lex, Sources};
use crate::ty::{Scalar, Ty};

/// A model closure's instance that the routed MIR needs: the closure of the
/// model function `generic` with `args`, whose environment type is `ty`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClosureInstance {
    pub ty: String,
    pub generic: String,
    pub args: Vec<String>,
}

/// The most instances one document gets, and the longest generic argument
/// an instance is made for: bounds on polymorphic recursion
/// (`fn f<T>() { f::<(T, T)>() }`, whose arguments double at each step),
/// far above what a callback reaches.
const MAX_INSTANCES: usize = 512;
const MAX_ARGUMENT_TEXT: usize = 4096;

/// A generic body's parameters, in the order a call's generic arguments
/// give them.
struct Generic {
    params: Vec<String>,
    /// `Some(trait path)` for a trait's default method: the call names
    /// `Self` in its qualified path (`<i32 as Twice>::twice`).
    default_of: Option<String>,
}

/// Whether the body `name` is the generic function `generic` itself or one
/// of its closures (`lerp::{closure#0}`, nested ones too).
fn is_closure_of(name: &str, generic: &str) -> bool {
    name.strip_prefix(generic)
        .and_then(|rest| rest.strip_prefix("::{closure#"))
        .is_some()
}

/// Adds to `bodies` every instance of a generic body that a call names,
/// transitively, and the instances of the core model's closures that
/// `closures` asks for.
pub(crate) fn instantiate(
    mir: &str,
    bodies: &mut Vec<Body>,
    source: &SourceFacts,
    closures: &[ClosureInstance],
) {
    let sources = Sources::new(source);
    let lines: Vec<&str> = mir.lines().collect();
    let generics: BTreeMap<String, Generic> = bodies
        .iter()
        .filter(|b| b.kind == BodyKind::Fn)
        .filter_map(|b| Some((b.name.clone(), generic_of(b, &sources)?)))
        .collect();
    if generics.is_empty() {
        return;
    }
    for b in bodies.iter_mut() {
        let owner = generics
            .iter()
            .filter(|(g, _)| b.name == **g || is_closure_of(&b.name, g))
            .max_by_key(|(g, _)| g.len());
        if let Some((_, g)) = owner {
            b.generic_params = g.params.clone();
        }
    }
    let params: BTreeSet<String> = generics
        .values()
        .flat_map(|g| g.params.iter().cloned())
        .collect();
    let mut made: BTreeSet<String> = bodies.iter().map(|b| b.name.clone()).collect();
    let limit = bodies.len() + MAX_INSTANCES;
    let mut pending: Vec<usize> = (0..bodies.len()).collect();
    for c in closures {
        if !generics.contains_key(&c.generic) {
            continue;
        }
        let name = format!("{}::<{}>", c.generic, c.args.join(", "));
        for mut instance in
            make_instances(bodies, &generics, &c.generic, &c.args, &name, false, &lines)
        {
            retype_closure(&mut instance, &c.ty);
            made.insert(instance.name.clone());
            bodies.push(instance);
            pending.push(bodies.len() - 1);
        }
    }
    while let Some(i) = pending.pop() {
        for (name, generic, args) in instances_called(&bodies[i], &generics, &params) {
            if made.contains(&name) || bodies.len() >= limit {
                continue;
            }
            made.insert(name.clone());
            let with_body = true;
            for instance in
                make_instances(bodies, &generics, &generic, &args, &name, with_body, &lines)
            {
                made.insert(instance.name.clone());
                bodies.push(instance);
                pending.push(bodies.len() - 1);
            }
        }
    }
    instantiate_callbacks(bodies, &generics, &params, &lines, &mut made);
}

/// A core model closure's instance made for a `core` closure type: its
/// environment is that type (`{closure@rmir-core:2:1: 2:1}`), not the
/// model's closure type, so each `core` closure value finds its own body.
fn retype_closure(body: &mut Body, ty: &str) {
    let Some(own) = crate::pmir::env_type(body).map(Ty::to_string) else {
        return;
    };
    for decl in &mut body.locals {
        let text = decl.ty.to_string();
        if text.contains(&own) {
            decl.ty = Ty::parse(&text.replace(&own, ty));
        }
    }
}

/// The instances of a generic body and of its closures (`lerp::{closure#0}`),
/// each with the same arguments: `name` (`lerp::<i16>`), and
/// `lerp::<i16>::{closure#0}`, …; the closures only, when `with_body` is false.
/// Empty when a body's text cannot be instantiated.
fn make_instances(
    bodies: &[Body],
    generics: &BTreeMap<String, Generic>,
    generic: &str,
    args: &[String],
    name: &str,
    with_body: bool,
    lines: &[&str],
) -> Vec<Body> {
    bodies
        .iter()
        .filter(|b| b.instance_of.is_none())
        .filter(|b| (with_body && b.name == generic) || is_closure_of(&b.name, generic))
        .map(|t| {
            let mut instance = instance_of(t, &generics[generic], args, lines)?;
            instance.name = format!("{name}{}", &t.name[generic.len()..]);
            instance.instance_of = Some(t.name.clone());
            instance.generic_params = Vec::new();
            expand_operators(&mut instance);
            Some(instance)
        })
        .collect::<Option<Vec<Body>>>()
        .unwrap_or_default()
}

/// A registration in a concrete body whose callback is a closure of a
/// generic function: the registering function was inlined into its caller
/// (`concrete` calls `generic_caller::<u32>`, which registers
/// `|a, b| if a > b { a } else { b }`), or is an instance. The closure's
/// body is written in the generic function's parameters; its instance's
/// arguments come from matching the registration's generic arguments
/// (`native::reduce::<u32, {closure}>`) with those of the same call in the
/// generic function (`native::reduce::<T, {closure}>`). The call records
/// the instance it passes ([`crate::pmir::Callee::callback_instance`]).
fn instantiate_callbacks(
    bodies: &mut Vec<Body>,
    generics: &BTreeMap<String, Generic>,
    params: &BTreeSet<String>,
    lines: &[&str],
    made: &mut BTreeSet<String>,
) {
    let templates: BTreeMap<String, String> = bodies
        .iter()
        .filter(|b| b.kind == BodyKind::Closure && b.instance_of.is_none())
        .filter_map(|b| {
            Some((
                crate::pmir::closure_key(crate::pmir::env_type(b)?)?,
                b.name.clone(),
            ))
        })
        .collect();
    for bi in 0..bodies.len() {
        for k in 0..bodies[bi].blocks.len() {
            let TerminatorKind::Call { callee, .. } = &bodies[bi].blocks[k].terminator.kind else {
                continue;
            };
            if crate::registry::registration(&callee.path).is_none()
                || callee
                    .generics
                    .iter()
                    .any(|t| is_param(&t.to_string(), params))
            {
                continue;
            }
            let Some(key) = callee
                .generics
                .iter()
                .find(|t| matches!(t, Ty::Closure { .. }))
                .map(|t| t.to_string())
            else {
                continue;
            };
            let Some(closure) = templates.get(&key) else {
                continue;
            };
            let Some(parent) = generics
                .keys()
                .filter(|g| is_closure_of(closure, g))
                .max_by_key(|g| g.len())
            else {
                continue;
            };
            let Some(template) = template_call(bodies, parent, &callee.path, &key) else {
                continue;
            };
            let mut bind = BTreeMap::new();
            let matched = template.len() == callee.generics.len()
                && template
                    .iter()
                    .zip(&callee.generics)
                    .all(|(t, c)| unify(t, c, &generics[parent].params, &mut bind));
            let args: Option<Vec<String>> = generics[parent]
                .params
                .iter()
                .map(|p| bind.get(p).cloned())
                .collect();
            let (true, Some(args)) = (matched, args) else {
                continue;
            };
            let instance = format!("{parent}::<{}>", args.join(", "));
            let closure_instance = format!("{instance}{}", &closure[parent.len()..]);
            if !made.contains(&closure_instance) {
                let made_now =
                    make_instances(bodies, generics, parent, &args, &instance, false, lines);
                for b in made_now {
                    made.insert(b.name.clone());
                    bodies.push(b);
                }
            }
            if !made.contains(&closure_instance) {
                continue;
            }
            if let TerminatorKind::Call { callee, .. } = &mut bodies[bi].blocks[k].terminator.kind {
                callee.callback_instance = Some(closure_instance);
            }
        }
    }
}

/// The generic arguments of the call of `path` passing the closure `key`
/// in the generic function `parent` or one of its closures.
fn template_call(bodies: &[Body], parent: &str, path: &str, key: &str) -> Option<Vec<Ty>> {
    bodies
        .iter()
        .filter(|b| b.instance_of.is_none() && (b.name == parent || is_closure_of(&b.name, parent)))
        .flat_map(|b| &b.blocks)
        .find_map(|blk| match &blk.terminator.kind {
            TerminatorKind::Call { callee, .. }
                if callee.path == path && callee.generics.iter().any(|t| t.to_string() == key) =>
            {
                Some(callee.generics.clone())
            }
            _ => None,
        })
}

/// Matches a type written in the parameters `params` with a concrete one,
/// binding each parameter to the text of its argument; false when they
/// differ or a parameter would be bound twice differently.
fn unify(
    template: &Ty,
    concrete: &Ty,
    params: &[String],
    bind: &mut BTreeMap<String, String>,
) -> bool {
    match (template, concrete) {
        (Ty::Adt { path, args }, _) if args.is_empty() && params.contains(path) => {
            let text = concrete.to_string();
            bind.entry(path.clone()).or_insert_with(|| text.clone()) == &text
        }
        (Ty::Other(t), _) if params.contains(t) => {
            let text = concrete.to_string();
            bind.entry(t.clone()).or_insert_with(|| text.clone()) == &text
        }
        (Ty::Tuple(a), Ty::Tuple(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| unify(x, y, params, bind))
        }
        (Ty::Array(a, n), Ty::Array(b, m)) => n == m && unify(a, b, params, bind),
        (Ty::Slice(a), Ty::Slice(b)) => unify(a, b, params, bind),
        (
            Ty::Ref {
                mutable: m1,
                inner: a,
            },
            Ty::Ref {
                mutable: m2,
                inner: b,
            },
        )
        | (
            Ty::Ptr {
                mutable: m1,
                inner: a,
            },
            Ty::Ptr {
                mutable: m2,
                inner: b,
            },
        ) => m1 == m2 && unify(a, b, params, bind),
        (Ty::Adt { path: p1, args: a }, Ty::Adt { path: p2, args: b }) => {
            p1 == p2
                && a.len() == b.len()
                && a.iter().zip(b).all(|(x, y)| unify(x, y, params, bind))
        }
        _ => template == concrete,
    }
}

/// The generic parameters of a `fn` body, when it has any: given already
/// (the core model's, `core_model::mark_generics`), else read from the
/// source.
fn generic_of(body: &Body, sources: &Sources<'_>) -> Option<Generic> {
    if !body.generic_params.is_empty() {
        return Some(Generic {
            params: body.generic_params.clone(),
            default_of: None,
        });
    }
    let (file, (open, _), name) = sources.fn_extent(&body.name)?;
    let text = sources.text(file)?;
    let mut params = declared_params(text.slice(text.span_start(name)?, open))?;
    // rustc's synthetic parameters: one per `impl Trait` argument, named
    // in MIR by its type.
    for decl in body.locals.iter().skip(1).take(body.arg_count as usize) {
        if let Ty::Other(t) = &decl.ty {
            if t.starts_with("impl ") && !params.contains(t) {
                params.push(t.clone());
            }
        }
    }
    // A trait's default method (`Twice::twice`) names `Self`.
    let default_of = body
        .name
        .rsplit_once("::")
        .map(|(tr, _)| tr.to_string())
        .filter(|tr| !tr.contains(['<', '{', ' ']) && mentions_self(body));
    if default_of.is_some() {
        params.insert(0, "Self".to_string());
    }
    (!params.is_empty()).then_some(Generic { params, default_of })
}

fn mentions_self(body: &Body) -> bool {
    body.locals
        .iter()
        .any(|l| words(&l.ty.to_string()).any(|w| w == "Self"))
}

/// The type and const parameters of a `fn` header from its name on
/// (`lerp<T: Copy>(a: T) -> T`), in order, lifetimes left out; empty for a
/// `fn` with no generic list. `None` when the list does not close.
pub(crate) fn declared_params(header: &str) -> Option<Vec<String>> {
    let toks: Vec<&str> = lex(header).into_iter().map(|r| &header[r]).collect();
    // The name, then `<` when the function is generic.
    if toks.get(1) != Some(&"<") {
        return Some(Vec::new());
    }
    let mut params = Vec::new();
    let mut depth = 0usize;
    let mut start_of_param = true;
    for (k, &t) in toks.iter().enumerate().skip(1) {
        match t {
            "<" | "(" | "[" => depth += 1,
            ">" if k > 0 && toks[k - 1] == "-" => {}
            ">" | ")" | "]" => {
                depth -= 1;
                if depth == 0 {
                    return Some(params);
                }
            }
            "," if depth == 1 => start_of_param = true,
            _ if depth == 1 && start_of_param => {
                start_of_param = false;
                if t == "const" {
                    start_of_param = true;
                } else if !t.starts_with('\'') {
                    params.push(t.to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// The instances `body` names, called or passed as a fn item (`larger::<i32>`
/// handed to a registration): (instance name, generic body, arguments).
fn instances_called(
    body: &Body,
    generics: &BTreeMap<String, Generic>,
    params: &BTreeSet<String>,
) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    for block in &body.blocks {
        let TerminatorKind::Call { callee, args, .. } = &block.terminator.kind else {
            continue;
        };
        let fn_items = args.iter().filter_map(|a| match a {
            Operand::Const(Constant::FnItem(name)) => Some(name.as_str()),
            _ => None,
        });
        for text in std::iter::once(callee.text.as_str()).chain(fn_items) {
            if let Some(found) = instance_named(text, generics, params) {
                out.push(found);
            }
        }
    }
    out
}

/// The instance a callee's text names (`lerp::<i16>`, `<i32 as Thrice>::thrice`),
/// when it is one of a generic body with concrete arguments.
fn instance_named(
    text: &str,
    generics: &BTreeMap<String, Generic>,
    params: &BTreeSet<String>,
) -> Option<(String, String, Vec<String>)> {
    let (path, generic_args) = crate::parse::split_generics(text);
    let mut args: Vec<String> = generic_args.iter().map(|t| t.to_string()).collect();
    let generic = if generics.contains_key(&path) {
        path
    } else {
        let (self_ty, tr, method) = qualified(&path)?;
        let name = format!("{tr}::{method}");
        let g = generics.get(&name)?;
        if g.default_of.as_deref() != Some(tr) {
            return None;
        }
        args.insert(0, self_ty.to_string());
        name
    };
    if args.len() != generics[&generic].params.len()
        || args
            .iter()
            .any(|a| is_param(a, params) || a.len() > MAX_ARGUMENT_TEXT)
    {
        return None;
    }
    Some((text.to_string(), generic, args))
}

/// `<S as Trait>::method` → (`S`, `Trait`, `method`), the trait without
/// its generic arguments.
pub(crate) fn qualified(path: &str) -> Option<(&str, &str, &str)> {
    let inner = path.strip_prefix('<')?;
    let (head, method) = inner.rsplit_once(">::")?;
    let (self_ty, tr) = head.split_once(" as ")?;
    let tr = tr.split_once('<').map_or(tr, |(t, _)| t);
    Some((self_ty, tr, method))
}

/// Whether a generic argument still names a parameter (of any generic
/// body): an instance is made only for concrete arguments, from a caller
/// that is itself concrete or an instance.
fn is_param(arg: &str, params: &BTreeSet<String>) -> bool {
    arg.starts_with("impl ") || words(arg).any(|w| w == "Self" || params.contains(w))
}

/// The identifiers of a MIR text, outside string literals and closure
/// types (whose file names are not Rust).
fn words(text: &str) -> impl Iterator<Item = &str> {
    pieces(text).filter_map(|(word, s)| word.then_some(s))
}

/// `text` cut into identifiers (`true`) and everything between them.
fn pieces(text: &str) -> impl Iterator<Item = (bool, &str)> {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= b.len() {
            return None;
        }
        let start = i;
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if text[i..].starts_with("{closure@") {
            i = text[i..].find('}').map_or(b.len(), |n| i + n + 1);
            return Some((false, &text[start..i]));
        }
        if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            return Some((false, &text[start..i]));
        }
        if ident(b[i]) && (i == 0 || !ident(b[i - 1])) {
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            return Some((true, &text[start..i]));
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
        Some((false, &text[start..i]))
    })
}

/// The generic body's MIR text with each parameter replaced, parsed.
fn instance_of(
    template: &Body,
    generic: &Generic,
    args: &[String],
    lines: &[&str],
) -> Option<Body> {
    let first = template.mir_line.checked_sub(1)? as usize;
    let last = first + lines.get(first..)?.iter().position(|l| *l == "}")?;
    let mut text = "\n".repeat(first);
    let synthetic: Vec<(&String, &String)> = generic
        .params
        .iter()
        .zip(args)
        .filter(|(p, _)| p.starts_with("impl "))
        .collect();
    for line in &lines[first..=last] {
        let mut line = line.to_string();
        for (p, a) in &synthetic {
            line = line.replace(p.as_str(), a);
        }
        for (word, piece) in pieces(&line) {
            match generic.params.iter().position(|p| word && p == piece) {
                Some(k) => text.push_str(&args[k]),
                None => text.push_str(piece),
            }
        }
        text.push('\n');
    }
    let mut parsed = parse_mir(&text).ok()?;
    (parsed.len() == 1).then(|| parsed.remove(0))
}

/// Replaces each call of a `core` operator trait on scalars by the MIR
/// rustc inlines for it.
fn expand_operators(body: &mut Body) {
    for b in 0..body.blocks.len() {
        let TerminatorKind::Call {
            dest,
            callee,
            args,
            target: Some(target),
            unwind,
        } = &body.blocks[b].terminator.kind
        else {
            continue;
        };
        let Some((self_ty, tr, method)) = qualified(&callee.path) else {
            continue;
        };
        let Some(s) = Ty::parse(self_ty).scalar() else {
            continue;
        };
        let tr = tr.rsplit("::").next().unwrap_or(tr);
        let Some(op) = Operator::of(tr, method, s) else {
            continue;
        };
        let (dest, args, target, unwind) = (dest.clone(), args.clone(), *target, *unwind);
        let line = body.blocks[b].terminator.mir_line;
        let mut e = Expander {
            body,
            block: b,
            line,
            unwind,
        };
        // Every check that can refuse comes before the first change.
        let _ = e.expand(op, s, dest, &args, target);
    }
}

/// A `core` operator trait method on a scalar.
#[derive(Clone, Copy)]
enum Operator {
    /// `add`, `sub`, …: a binary operation; `assign` for `add_assign`.
    Binary {
        op: BinOp,
        assign: bool,
    },
    /// `eq`, `lt`, `cmp`, …: a comparison of two references.
    Compare(BinOp),
    Neg,
    Not,
    /// `clone`: the value behind the reference.
    Clone,
    /// `From::from`, `Into::into`: a lossless conversion.
    Convert,
    Default,
}

impl Operator {
    fn of(tr: &str, method: &str, s: Scalar) -> Option<Operator> {
        let binary = |op| Some(Operator::Binary { op, assign: false });
        let assign = |op| Some(Operator::Binary { op, assign: true });
        let int_or_bool = s.is_int() || s == Scalar::Bool;
        match (tr, method) {
            ("Add", "add") => binary(BinOp::Add),
            ("Sub", "sub") => binary(BinOp::Sub),
            ("Mul", "mul") => binary(BinOp::Mul),
            ("Div", "div") => binary(BinOp::Div),
            ("Rem", "rem") => binary(BinOp::Rem),
            ("BitAnd", "bitand") if int_or_bool => binary(BinOp::BitAnd),
            ("BitOr", "bitor") if int_or_bool => binary(BinOp::BitOr),
            ("BitXor", "bitxor") if int_or_bool => binary(BinOp::BitXor),
            ("Shl", "shl") if s.is_int() => binary(BinOp::Shl),
            ("Shr", "shr") if s.is_int() => binary(BinOp::Shr),
            ("AddAssign", "add_assign") => assign(BinOp::Add),
            ("SubAssign", "sub_assign") => assign(BinOp::Sub),
            ("MulAssign", "mul_assign") => assign(BinOp::Mul),
            ("DivAssign", "div_assign") => assign(BinOp::Div),
            ("RemAssign", "rem_assign") => assign(BinOp::Rem),
            ("BitAndAssign", "bitand_assign") if int_or_bool => assign(BinOp::BitAnd),
            ("BitOrAssign", "bitor_assign") if int_or_bool => assign(BinOp::BitOr),
            ("BitXorAssign", "bitxor_assign") if int_or_bool => assign(BinOp::BitXor),
            ("ShlAssign", "shl_assign") if s.is_int() => assign(BinOp::Shl),
            ("ShrAssign", "shr_assign") if s.is_int() => assign(BinOp::Shr),
            ("PartialEq", "eq") => Some(Operator::Compare(BinOp::Eq)),
            ("PartialEq", "ne") => Some(Operator::Compare(BinOp::Ne)),
            ("PartialOrd", "lt") => Some(Operator::Compare(BinOp::Lt)),
            ("PartialOrd", "le") => Some(Operator::Compare(BinOp::Le)),
            ("PartialOrd", "gt") => Some(Operator::Compare(BinOp::Gt)),
            ("PartialOrd", "ge") => Some(Operator::Compare(BinOp::Ge)),
            ("Ord", "cmp") if s != Scalar::F32 && s != Scalar::F64 => {
                Some(Operator::Compare(BinOp::Cmp))
            }
            ("Neg", "neg") if s.is_signed() || s.is_float() => Some(Operator::Neg),
            ("Not", "not") if int_or_bool => Some(Operator::Not),
            ("Clone", "clone") => Some(Operator::Clone),
            ("From", "from") | ("Into", "into") => Some(Operator::Convert),
            ("Default", "default") => Some(Operator::Default),
            _ => None,
        }
    }
}

/// Rewrites one call terminator into statements, asserts and new blocks.
struct Expander<'b> {
    body: &'b mut Body,
    /// The block whose call is replaced; it is extended in place.
    block: usize,
    line: u32,
    unwind: crate::pmir::UnwindAction,
}

impl Expander<'_> {
    fn expand(
        &mut self,
        op: Operator,
        s: Scalar,
        dest: Place,
        args: &[Operand],
        target: BlockId,
    ) -> Option<()> {
        let ty = Ty::Scalar(s);
        match op {
            Operator::Binary { op, assign } => {
                let [lhs, rhs] = args else { return None };
                // `add_assign(&mut a, b)` writes `*a`.
                let (place, lhs) = if assign {
                    let p = deref(lhs)?;
                    (p.clone(), Operand::Copy(p))
                } else {
                    (dest, lhs.clone())
                };
                self.binary(op, s, place, lhs, rhs.clone(), target)
            }
            Operator::Compare(op) => {
                let [a, b] = args else { return None };
                let rvalue = Rvalue::BinaryOp {
                    op,
                    lhs: Operand::Copy(deref(a)?),
                    rhs: Operand::Copy(deref(b)?),
                };
                self.finish(vec![assign(dest, rvalue)], target)
            }
            Operator::Neg => {
                let [a] = args else { return None };
                if s.is_int() {
                    let min = Operand::Const(int_const(min_of(s)?, &ty));
                    let is_min = self.equals(a.clone(), min);
                    self.assert(
                        is_min,
                        AssertKind::OverflowNeg,
                        "attempt to negate `{}`, which would overflow",
                    );
                }
                let rvalue = Rvalue::UnaryOp {
                    op: UnOp::Neg,
                    operand: a.clone(),
                };
                self.finish(vec![assign(dest, rvalue)], target)
            }
            Operator::Not => {
                let [a] = args else { return None };
                let rvalue = Rvalue::UnaryOp {
                    op: UnOp::Not,
                    operand: a.clone(),
                };
                self.finish(vec![assign(dest, rvalue)], target)
            }
            Operator::Clone => {
                let [a] = args else { return None };
                let rvalue = Rvalue::Use(Operand::Copy(deref(a)?));
                self.finish(vec![assign(dest, rvalue)], target)
            }
            Operator::Convert => {
                let [a] = args else { return None };
                let from = crate::pmir::operand_ty(self.body, a)?.scalar()?;
                let to = crate::pmir::place_ty(self.body, &dest)?.scalar()?;
                let kind = match (from.is_float(), to.is_float()) {
                    (false, false) => "IntToInt",
                    (false, true) => "IntToFloat",
                    (true, true) => "FloatToFloat",
                    (true, false) => return None,
                };
                let rvalue = if from == to {
                    Rvalue::Use(a.clone())
                } else {
                    Rvalue::Cast {
                        kind: kind.to_string(),
                        operand: a.clone(),
                        ty: Ty::Scalar(to),
                    }
                };
                self.finish(vec![assign(dest, rvalue)], target)
            }
            Operator::Default => {
                let zero = match s {
                    Scalar::Bool => Constant::Bool(false),
                    Scalar::Char => Constant::Char('\0'),
                    _ if s.is_float() => Constant::Float {
                        text: format!("0{s}"),
                        bits: 0,
                        ty: ty.clone(),
                    },
                    _ => int_const(0, &ty),
                };
                let rvalue = Rvalue::Use(Operand::Const(zero));
                self.finish(vec![assign(dest, rvalue)], target)
            }
        }
    }

    /// `place = lhs op rhs` with the checks rustc's `core` makes: overflow
    /// for `+ - *` and shifts, zero and `MIN / -1` for `/` and `%`.
    fn binary(
        &mut self,
        op: BinOp,
        s: Scalar,
        place: Place,
        lhs: Operand,
        rhs: Operand,
        target: BlockId,
    ) -> Option<()> {
        let ty = Ty::Scalar(s);
        let bool_ty = Ty::Scalar(Scalar::Bool);
        if !s.is_int() {
            let rvalue = Rvalue::BinaryOp { op, lhs, rhs };
            return self.finish(vec![assign(place, rvalue)], target);
        }
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                let pair = self.compute(
                    Ty::Tuple(vec![ty.clone(), bool_ty.clone()]),
                    Rvalue::CheckedBinaryOp { op, lhs, rhs },
                );
                let field = |index, ty| Place {
                    local: pair,
                    projections: vec![Projection::Field { index, ty }],
                };
                let sign = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    _ => "*",
                };
                let flag = self.compute(
                    bool_ty.clone(),
                    Rvalue::Use(Operand::Copy(field(1, bool_ty))),
                );
                self.assert(
                    flag,
                    AssertKind::Overflow,
                    &format!("attempt to compute `{{}} {sign} {{}}`, which would overflow"),
                );
                let value = Rvalue::Use(Operand::Move(field(0, ty)));
                self.finish(vec![assign(place, value)], target)
            }
            BinOp::Div | BinOp::Rem => {
                let min = min_of(s)?;
                let zero = self.equals(rhs.clone(), Operand::Const(int_const(0, &ty)));
                let (kind, message) = if op == BinOp::Div {
                    (AssertKind::DivisionByZero, "attempt to divide `{}` by zero")
                } else {
                    (
                        AssertKind::RemainderByZero,
                        "attempt to calculate the remainder of `{}` with a divisor of zero",
                    )
                };
                self.assert(zero, kind, message);
                if s.is_signed() {
                    let minus_one = self.equals(rhs.clone(), Operand::Const(int_const(-1, &ty)));
                    let is_min = self.equals(lhs.clone(), Operand::Const(int_const(min, &ty)));
                    let both = self.compute(
                        bool_ty,
                        Rvalue::BinaryOp {
                            op: BinOp::BitAnd,
                            lhs: Operand::Move(Place::local(minus_one)),
                            rhs: Operand::Move(Place::local(is_min)),
                        },
                    );
                    let message = if op == BinOp::Div {
                        "attempt to compute `{} / {}`, which would overflow"
                    } else {
                        "attempt to compute the remainder of `{} % {}`, which would overflow"
                    };
                    self.assert(both, AssertKind::DivisionOverflow, message);
                }
                let rvalue = Rvalue::BinaryOp { op, lhs, rhs };
                self.finish(vec![assign(place, rvalue)], target)
            }
            BinOp::Shl | BinOp::Shr => {
                // The shift amount, as unsigned, must be below the width.
                let amount_ty = crate::pmir::operand_ty(self.body, &rhs)?.scalar()?;
                let unsigned = unsigned_of(amount_ty)?;
                let amount = if amount_ty == unsigned {
                    rhs.clone()
                } else {
                    let cast = self.compute(
                        Ty::Scalar(unsigned),
                        Rvalue::Cast {
                            kind: "IntToInt".into(),
                            operand: rhs.clone(),
                            ty: Ty::Scalar(unsigned),
                        },
                    );
                    Operand::Move(Place::local(cast))
                };
                let width =
                    Operand::Const(int_const(i128::from(s.int_bits()?), &Ty::Scalar(unsigned)));
                let fits = self.compute(
                    bool_ty,
                    Rvalue::BinaryOp {
                        op: BinOp::Lt,
                        lhs: amount,
                        rhs: width,
                    },
                );
                let message = if op == BinOp::Shl {
                    "attempt to shift left by `{}`, which would overflow"
                } else {
                    "attempt to shift right by `{}`, which would overflow"
                };
                self.assert_true(fits, AssertKind::Overflow, message);
                let rvalue = Rvalue::BinaryOp { op, lhs, rhs };
                self.finish(vec![assign(place, rvalue)], target)
            }
            _ => {
                let rvalue = Rvalue::BinaryOp { op, lhs, rhs };
                self.finish(vec![assign(place, rvalue)], target)
            }
        }
    }

    /// A new local of type `ty` assigned `rvalue` in the current block.
    fn compute(&mut self, ty: Ty, rvalue: Rvalue) -> crate::pmir::Local {
        let local = self.temp(ty);
        self.push(assign(Place::local(local), rvalue));
        local
    }

    /// A new `bool` local holding `lhs == rhs`.
    fn equals(&mut self, lhs: Operand, rhs: Operand) -> crate::pmir::Local {
        let rvalue = Rvalue::BinaryOp {
            op: BinOp::Eq,
            lhs,
            rhs,
        };
        self.compute(Ty::Scalar(Scalar::Bool), rvalue)
    }

    fn temp(&mut self, ty: Ty) -> crate::pmir::Local {
        let local = crate::pmir::Local(self.body.locals.len() as u32);
        self.body.locals.push(LocalDecl {
            local,
            ty,
            mutable: false,
        });
        local
    }

    fn push(&mut self, kind: StatementKind) {
        let line = self.line;
        self.body.blocks[self.block].statements.push(Statement {
            mir_line: line,
            kind,
        });
    }

    /// Ends the current block with `assert(!flag)` and continues in a new one.
    fn assert(&mut self, flag: crate::pmir::Local, kind: AssertKind, message: &str) {
        self.assert_value(flag, false, kind, message);
    }

    /// Ends the current block with `assert(flag)` and continues in a new one.
    fn assert_true(&mut self, flag: crate::pmir::Local, kind: AssertKind, message: &str) {
        self.assert_value(flag, true, kind, message);
    }

    fn assert_value(
        &mut self,
        flag: crate::pmir::Local,
        expected: bool,
        kind: AssertKind,
        message: &str,
    ) {
        let next = BlockId(self.body.blocks.len() as u32);
        self.body.blocks[self.block].terminator = Terminator {
            mir_line: self.line,
            kind: TerminatorKind::Assert {
                cond: Operand::Move(Place::local(flag)),
                expected,
                kind,
                message: message.to_string(),
                target: next,
                unwind: self.unwind,
            },
        };
        self.body.blocks.push(Block {
            id: next,
            mir_line: self.line,
            statements: Vec::new(),
            terminator: Terminator {
                mir_line: self.line,
                kind: TerminatorKind::Unreachable,
            },
        });
        self.block = next.0 as usize;
    }

    /// Appends the statements and ends the current block with a `goto`.
    fn finish(&mut self, statements: Vec<StatementKind>, target: BlockId) -> Option<()> {
        for s in statements {
            self.push(s);
        }
        self.body.blocks[self.block].terminator = Terminator {
            mir_line: self.line,
            kind: TerminatorKind::Goto(target),
        };
        Some(())
    }
}

fn assign(place: Place, rvalue: Rvalue) -> StatementKind {
    StatementKind::Assign {
        place,
        rvalue: Box::new(rvalue),
    }
}

/// The place behind a reference operand: `move _3` → `(*_3)`.
fn deref(op: &Operand) -> Option<Place> {
    let (Operand::Copy(p) | Operand::Move(p)) = op else {
        return None;
    };
    let mut p = p.clone();
    p.projections.push(Projection::Deref);
    Some(p)
}

/// The smallest value of a signed integer type.
fn min_of(s: Scalar) -> Option<i128> {
    if !s.is_signed() {
        return None;
    }
    let bits = s.int_bits()?;
    Some(if bits == 128 {
        i128::MIN
    } else {
        -(1i128 << (bits - 1))
    })
}

/// The unsigned integer type of an integer type's width.
fn unsigned_of(s: Scalar) -> Option<Scalar> {
    if s.is_unsigned() {
        return Some(s);
    }
    Some(match s {
        Scalar::I8 => Scalar::U8,
        Scalar::I16 => Scalar::U16,
        Scalar::I32 => Scalar::U32,
        Scalar::I64 => Scalar::U64,
        Scalar::I128 => Scalar::U128,
        Scalar::Isize => Scalar::Usize,
        _ => return None,
    })
}

fn int_const(value: i128, ty: &Ty) -> Constant {
    Constant::Int {
        value,
        ty: ty.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_params_skip_lifetimes_bounds_and_arrows() {
        let p = |t: &str| declared_params(t).unwrap();
        assert_eq!(p("f(a: i32) -> i32 "), Vec::<String>::new());
        assert_eq!(
            p("lerp<'a, T: Copy + Add<Output = T>, F: Fn(T) -> T, const N: usize>(x: T) "),
            ["T", "F", "N"]
        );
        assert_eq!(declared_params("f<T"), None);
    }

    #[test]
    fn words_leave_closure_types_and_strings_alone() {
        let w: Vec<&str> = words("<T as Add>::add({closure@T.rs:1:2: 1:3}, \"T\")").collect();
        assert_eq!(w, ["T", "as", "Add", "add"]);
    }

    #[test]
    fn qualified_paths() {
        assert_eq!(
            qualified("<i16 as Shl<u32>>::shl"),
            Some(("i16", "Shl", "shl"))
        );
        assert_eq!(qualified("lerp"), None);
    }
}
