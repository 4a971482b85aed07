//! Slices of arrays whose length is known where they are used.
//!
//! Optimised MIR borrows an array as a slice to iterate over it or to index
//! it (`TABLE.iter()`, `for v in &k`, `let s: &[u32] = &k`): it coerces a
//! `&[T; N]` to `&[T]`, a fat pointer, and `core`'s inlined code carries
//! it through `*const [T]` and `NonNull<[T]>` to thin pointers to the
//! elements. The GPU side has thin pointers only. Where the slice is made
//! from an array in the same body, its length is the array's, so the
//! slice's local and each pointer local made from it get the array's type
//! (`&[u32]` becomes `&[u32; 3]`), and reading the slice's length is the
//! constant. A slice whose length is not known where it is used (a `&[T]`
//! parameter) keeps its type, and the lowering reports it.
//!
//! Before that, on the MIR text ([`text`]): `NonNull<T>` is `*const T`
//! (it is `#[repr(transparent)]` over one), `MaybeUninit<T>` is `T` (the
//! same layout; an array's by-value iterator holds its elements in one,
//! always initialised where it is read), the lifetime argument of
//! `slice::Iter<'_, T>` is dropped (lifetimes are erased here), and the
//! constant `PhantomData::<T>` is a zero-sized value. On the bodies
//! ([`inline_promoted`]): a promoted constant that a body borrows
//! (`&PRIMES` made by `PRIMES.iter()`, `&[1, 2, 3]`) is built in a local of
//! that body, which the borrow then points to.

use std::collections::BTreeMap;

use crate::pmir::{
    AggregateKind, Body, BodyKind, Constant, Local, LocalDecl, Operand, Place, Projection, Rvalue,
    Statement, StatementKind, TerminatorKind, UnOp,
};
use crate::ty::Ty;

/// The MIR text with `NonNull<T>` as `*const T`, `slice::Iter`'s lifetime
/// dropped and `const PhantomData::<T>` a zero-sized constant.
pub(crate) fn text(mir: &str) -> String {
    const TOUCHED: [&str; 6] = [
        "NonNull<",
        "MaybeUninit<",
        "Iter<'_, ",
        "PhantomData::<",
        "{transmute(0x",
        "ops::index_range::IndexRange {{",
    ];
    if !TOUCHED.iter().any(|t| mir.contains(t)) {
        return mir.to_string();
    }
    mir.lines().map(line).collect::<Vec<_>>().join("\n")
        + if mir.ends_with('\n') { "\n" } else { "" }
}

fn line(l: &str) -> String {
    let mut out = l
        .replace("Iter<'_, ", "Iter<")
        .replace("Iter::<'_, ", "Iter::<")
        // A constant's type path is printed trimmed.
        .replace(
            "const ops::index_range::IndexRange {{",
            "const std::ops::index_range::IndexRange {{",
        );
    while let Some(next) = wrapper_once(&out, "NonNull", "*const ") {
        out = next;
    }
    while let Some(next) = wrapper_once(&out, "MaybeUninit", "") {
        out = next;
    }
    null_references(&phantom_constants(&out))
}

/// `{transmute(0x0000000000000000): Option<&u32>}`: rustc folded `None` of
/// an `Option` of a reference to its niche, the null address (a reference
/// is never null); the GPU side lays `Option` out without niches, so it is
/// written as the variant: `Option::<&u32>::None`.
fn null_references(l: &str) -> String {
    let mut out = String::with_capacity(l.len());
    let mut rest = l;
    while let Some(at) = rest.find("{transmute(0x") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "{transmute(0x".len()..];
        let zeros = after.bytes().take_while(|&b| b == b'0').count();
        let tail = &after[zeros..];
        let folded = (zeros == 16 && tail.starts_with("): Option<&"))
            .then(|| {
                let open = "): Option".len();
                let close = closing_angle(tail, open)?;
                (tail.as_bytes().get(close + 1) == Some(&b'}'))
                    .then(|| (close, &tail[open + 1..close]))
            })
            .flatten();
        match folded {
            Some((close, inner)) => {
                out.push_str(&format!("Option::<{inner}>::None"));
                rest = &tail[close + 2..];
            }
            None => {
                out.push_str("{transmute(0x");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The first `std::ptr::NonNull<X>` (or `NonNull<X>`, `core::ptr::NonNull<X>`)
/// in a type → `*const X` (`name` `NonNull`, `by` `*const `), or the first
/// `std::mem::MaybeUninit<X>` → `X`; `None` when there is none.
fn wrapper_once(text: &str, name: &str, by: &str) -> Option<String> {
    let mut from = 0;
    let open_at = format!("{name}<");
    while let Some(rel) = text[from..].find(&open_at) {
        let at = from + rel;
        from = at + 1;
        // The path before the name: only `std`, `core`, `ptr`, `mem`,
        // `non_null`, `maybe_uninit`.
        let mut start = at;
        loop {
            let before = &text[..start];
            let Some(seg_end) = before.strip_suffix("::").map(str::len) else {
                break;
            };
            let seg_start = before[..seg_end]
                .char_indices()
                .rev()
                .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |(i, c)| i + c.len_utf8());
            match &before[seg_start..seg_end] {
                "std" | "core" | "ptr" | "mem" | "non_null" | "maybe_uninit" => start = seg_start,
                _ => break,
            }
        }
        let prev = text[..start].chars().next_back();
        if prev.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let open = at + name.len();
        let close = closing_angle(text, open)?;
        let inner = &text[open + 1..close];
        return Some(format!(
            "{}{by}{inner}{}",
            &text[..start],
            &text[close + 1..]
        ));
    }
    None
}

/// The `>` closing the `<` at `open` (`->` is not one).
fn closing_angle(text: &str, open: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0i32;
    for (i, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' if i > 0 && b[i - 1] == b'-' => {}
            b'>' | b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return (c == b'>').then_some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `const PhantomData::<&u32>` → `const ZeroSized: PhantomData<&u32>`.
fn phantom_constants(l: &str) -> String {
    let mut out = String::with_capacity(l.len());
    let mut rest = l;
    while let Some(at) = rest.find("const PhantomData::<") {
        out.push_str(&rest[..at]);
        let open = at + "const PhantomData::".len();
        match closing_angle(rest, open) {
            Some(close) => {
                out.push_str("const ZeroSized: PhantomData");
                out.push_str(&rest[open..=close]);
                rest = &rest[close + 1..];
            }
            None => {
                out.push_str(&rest[at..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------------------
// Promoted constants.

/// Every promoted constant whose body builds a value from constants and
/// returns a reference to it (`_1 = const PRIMES; _0 = &_1;`), by name:
/// the value's type and how it is built.
fn promoted_values(bodies: &[Body]) -> BTreeMap<String, (Ty, Rvalue)> {
    let mut out = BTreeMap::new();
    for b in bodies.iter().filter(|b| b.kind == BodyKind::Const) {
        if !b.name.contains("::promoted[") {
            continue;
        }
        let Some(assigns) = b.straight_assigns() else {
            if let Some(value) = inclusive_range_of_constants(b) {
                out.insert(b.name.clone(), value);
            }
            continue;
        };
        let mut value: Option<(Local, Rvalue)> = None;
        let mut returns = None;
        let mut plain = true;
        for (place, rvalue) in assigns {
            if !place.projections.is_empty() {
                plain = false;
                continue;
            }
            match rvalue {
                Rvalue::Ref {
                    mutable: false,
                    place: target,
                } if place.local == Local(0) && target.projections.is_empty() => {
                    returns = Some(target.local);
                }
                r if value.is_none() && place.local != Local(0) && constant_only(r) => {
                    value = Some((place.local, r.clone()));
                }
                _ => plain = false,
            }
        }
        let (Some((local, rvalue)), Some(target), true) = (value, returns, plain) else {
            continue;
        };
        if local != target {
            continue;
        }
        if let Some(decl) = b.locals.get(local.0 as usize) {
            out.insert(b.name.clone(), (decl.ty.clone(), rvalue));
        }
    }
    out
}

/// A promoted inclusive range of two constants (`(b'a'..=b'z')`), which
/// rustc builds with a call of `RangeInclusive::new`, not in place:
/// `_1 = RangeInclusive::<T>::new(const A, const B) -> bb1`, then
/// `_0 = &_1; return`. Its value is the range the call makes, as the
/// inlined call builds it in any other body: `{ start: A, end: B,
/// exhausted: false }`.
fn inclusive_range_of_constants(b: &Body) -> Option<(Ty, Rvalue)> {
    let [call, ret] = b.blocks.as_slice() else {
        return None;
    };
    let TerminatorKind::Call {
        dest, callee, args, ..
    } = &call.terminator.kind
    else {
        return None;
    };
    if !call.assigns()?.is_empty() || !dest.projections.is_empty() {
        return None;
    }
    let ty = callee
        .text
        .strip_prefix("std::ops::RangeInclusive::<")
        .or_else(|| callee.text.strip_prefix("core::ops::RangeInclusive::<"))?
        .strip_suffix(">::new")?;
    let [start @ Operand::Const(_), end @ Operand::Const(_)] = args.as_slice() else {
        return None;
    };
    // `_0 = &_1; return`.
    let assigns = ret.assigns()?;
    let [(place, rvalue)] = assigns.as_slice() else {
        return None;
    };
    let returns_borrow = place.local == Local(0)
        && place.projections.is_empty()
        && matches!(&**rvalue, Rvalue::Ref { mutable: false, place: target }
            if target.local == dest.local && target.projections.is_empty());
    if !returns_borrow || !matches!(ret.terminator.kind, TerminatorKind::Return) {
        return None;
    }
    let decl = b.locals.get(dest.local.0 as usize)?;
    let value = Rvalue::Aggregate {
        kind: AggregateKind::Adt(format!("std::ops::RangeInclusive::<{ty}>")),
        fields: vec![
            (Some("start".to_string()), start.clone()),
            (Some("end".to_string()), end.clone()),
            (
                Some("exhausted".to_string()),
                Operand::Const(Constant::Bool(false)),
            ),
        ],
    };
    Some((decl.ty.clone(), value))
}

fn constant_only(r: &Rvalue) -> bool {
    match r {
        Rvalue::Use(Operand::Const(_)) => true,
        Rvalue::Aggregate { fields, .. } => {
            fields.iter().all(|(_, o)| matches!(o, Operand::Const(_)))
        }
        Rvalue::Repeat {
            operand: Operand::Const(_),
            ..
        } => true,
        _ => false,
    }
}

/// Each use of a promoted constant [`promoted_values`] knows becomes a
/// local of the using body holding the value, and a borrow of it.
pub(crate) fn inline_promoted(bodies: &mut [Body]) {
    let values = promoted_values(bodies);
    if values.is_empty() {
        return;
    }
    for body in bodies.iter_mut() {
        for b in 0..body.blocks.len() {
            let mut k = 0;
            while k <= body.blocks[b].statements.len() {
                // The value's local, then the borrow's, are the next two.
                let borrow = Local(body.locals.len() as u32 + 1);
                let mut found = None;
                {
                    let block = &mut body.blocks[b];
                    let mut visit = |op: &mut Operand| {
                        if found.is_some() {
                            return;
                        }
                        if let Operand::Const(Constant::Other(name)) = op {
                            if let Some(v) = values.get(name.as_str()) {
                                found = Some(v.clone());
                                *op = Operand::Copy(Place::local(borrow));
                            }
                        }
                    };
                    if k < block.statements.len() {
                        if let StatementKind::Assign { rvalue, .. } = &mut block.statements[k].kind
                        {
                            rvalue.for_each_operand(&mut visit);
                        }
                    } else {
                        match &mut block.terminator.kind {
                            TerminatorKind::Call { args, .. } => {
                                args.iter_mut().for_each(&mut visit)
                            }
                            TerminatorKind::SwitchInt { discr, .. } => visit(discr),
                            _ => {}
                        }
                    }
                }
                let Some((ty, rvalue)) = found else {
                    k += 1;
                    continue;
                };
                let value = new_local(body, ty.clone());
                let made = new_local(
                    body,
                    Ty::Ref {
                        mutable: false,
                        inner: Box::new(ty),
                    },
                );
                debug_assert_eq!(made, borrow);
                let block = &mut body.blocks[b];
                let mir_line = block
                    .statements
                    .get(k)
                    .map_or(block.terminator.mir_line, |s| s.mir_line);
                let assign = |place: Local, rvalue: Rvalue| Statement {
                    mir_line,
                    kind: StatementKind::Assign {
                        place: Place::local(place),
                        rvalue: Box::new(rvalue),
                    },
                };
                block.statements.insert(k, assign(value, rvalue));
                block.statements.insert(
                    k + 1,
                    assign(
                        borrow,
                        Rvalue::Ref {
                            mutable: false,
                            place: Place::local(value),
                        },
                    ),
                );
                // The statement that used the constant is looked at again.
                k += 2;
            }
        }
    }
}

fn new_local(body: &mut Body, ty: Ty) -> Local {
    let local = Local(body.locals.len() as u32);
    body.locals.push(LocalDecl {
        local,
        ty,
        mutable: false,
    });
    local
}

/// `const PRIMES as [u32; 6] (Transmute)` to the constant's own type (an
/// array made `[MaybeUninit<u32>; 6]` for its by-value iterator, once
/// `MaybeUninit` is gone): the constant itself; `x as [T; 1]` (`[x]`
/// iterated by value): the array of it.
pub(crate) fn identity_transmutes(bodies: &mut [Body]) {
    let const_types: BTreeMap<String, Ty> = bodies
        .iter()
        .filter(|b| b.kind == BodyKind::Const)
        .filter_map(|b| Some((b.name.clone(), b.locals.first()?.ty.clone())))
        .collect();
    for body in bodies.iter_mut() {
        let locals: Vec<Ty> = body.locals.iter().map(|d| d.ty.clone()).collect();
        for st in body.blocks.iter_mut().flat_map(|b| &mut b.statements) {
            let StatementKind::Assign { rvalue, .. } = &mut st.kind else {
                continue;
            };
            let Rvalue::Cast { kind, operand, ty } = &**rvalue else {
                continue;
            };
            if kind != "Transmute" {
                continue;
            }
            let from = match operand {
                Operand::Const(Constant::Other(name)) => const_types.get(name).cloned(),
                Operand::Const(c) => c.ty(),
                Operand::Copy(p) | Operand::Move(p) if p.projections.is_empty() => {
                    locals.get(p.local.0 as usize).cloned()
                }
                _ => None,
            };
            let from = from.as_ref();
            if from == Some(ty) {
                **rvalue = Rvalue::Use(operand.clone());
            } else if matches!(ty, Ty::Array(e, n)
                if array_len(n).as_deref() == Some("1") && Some(&**e) == from)
            {
                // `[x]` iterated by value: `x as [MaybeUninit<T>; 1]`.
                **rvalue = Rvalue::Aggregate {
                    kind: crate::pmir::AggregateKind::Array,
                    fields: vec![(None, operand.clone())],
                };
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Lengths.

/// Before monomorphisation: slices get their arrays' lengths, and the
/// `next` of an array's by-value iterator (`for v in ARRAY`,
/// `ARRAY.into_iter()`) calls the core model's, whose length parameter is
/// the array's (`rmir_array_iter_next::<u32, 6>`), for monomorphisation
/// to instantiate.
pub(crate) fn before_mono(bodies: &mut [Body]) {
    known_lengths(bodies);
    for body in bodies.iter_mut() {
        route_array_next(body);
    }
}

/// `array::iter::iter_inner::PolymorphicIter::<[u32]>::next`.
fn is_array_next(path: &str) -> bool {
    path.contains("PolymorphicIter") && path.ends_with("::next")
}

fn route_array_next(body: &mut Body) {
    let locals = &body.locals;
    for block in &mut body.blocks {
        let TerminatorKind::Call { callee, args, .. } = &mut block.terminator.kind else {
            continue;
        };
        if !is_array_next(&callee.path) {
            continue;
        }
        let Some(arg) = args.first().and_then(operand_local) else {
            continue;
        };
        let Some(Ty::Ref { inner, .. }) = locals.get(arg.0 as usize).map(|d| &d.ty) else {
            continue;
        };
        let Ty::Adt {
            path,
            args: iter_args,
        } = &**inner
        else {
            continue;
        };
        if !path.ends_with("PolymorphicIter") {
            continue;
        }
        let [Ty::Array(elem, len)] = iter_args.as_slice() else {
            continue;
        };
        let Some(n) = array_len(len) else {
            continue;
        };
        callee.text = format!("rmir_array_iter_next::<{elem}, {n}>");
        callee.path = "rmir_array_iter_next".to_string();
        callee.generics = vec![(**elem).clone(), Ty::parse(&n)];
    }
}

/// Gives every slice made from an array in the same body that array's
/// length (see the module's documentation).
pub(crate) fn known_lengths(bodies: &mut [Body]) {
    for body in bodies.iter_mut() {
        let lengths = lengths(body, false);
        apply(body, &lengths);
    }
}

/// A function of the crate that takes slices (`fn total(xs: &[u32])`),
/// called with slices of known length, is compiled once per lengths: a
/// copy of it whose parameters are the arrays (`total::<[3]>`, taking
/// `&[u32; 3]`), which the call then names, as monomorphisation does for
/// generic parameters. A function that registers a callback is not
/// copied (its registrations are the program's own), nor is a generic
/// body (its instances are).
pub(crate) fn specialize_slice_parameters(bodies: &mut Vec<Body>) {
    // Copies may call slice-taking functions in turn: a few rounds.
    for _ in 0..4 {
        let mut made: Vec<Body> = Vec::new();
        let names: Vec<String> = bodies.iter().map(|b| b.name.clone()).collect();
        for b in 0..bodies.len() {
            let lengths = lengths(&bodies[b], true);
            let locals = bodies[b].locals.clone();
            for k in 0..bodies[b].blocks.len() {
                let TerminatorKind::Call { callee, args, .. } =
                    &bodies[b].blocks[k].terminator.kind
                else {
                    continue;
                };
                let Some(c) = bodies.iter().position(|c| {
                    c.kind == BodyKind::Fn && c.name == callee.text && c.generic_params.is_empty()
                }) else {
                    continue;
                };
                let callee_body = &bodies[c];
                if registers(callee_body) {
                    continue;
                }
                // The length of each slice parameter's argument.
                let mut lens = Vec::new();
                let mut complete = true;
                for (i, arg) in args.iter().enumerate() {
                    let Some(param) = callee_body.locals.get(i + 1) else {
                        complete = false;
                        break;
                    };
                    if !has_slice(&param.ty) {
                        continue;
                    }
                    let known = operand_local(arg).and_then(|l| {
                        lengths.get(&l).cloned().or_else(|| {
                            // An array reference handed to a slice parameter.
                            unsized_from(&locals.get(l.0 as usize)?.ty, &param.ty)
                        })
                    });
                    match known {
                        Some(len) => lens.push((i + 1, len)),
                        None => complete = false,
                    }
                }
                if lens.is_empty() || !complete {
                    continue;
                }
                let list: Vec<&str> = lens.iter().map(|(_, l)| l.as_str()).collect();
                let name = slice_copy_name(&callee_body.name, &list);
                if !names.contains(&name) && !made.iter().any(|m| m.name == name) {
                    let mut copy = callee_body.clone();
                    copy.name = name.clone();
                    for (param, len) in &lens {
                        if let Some(decl) = copy.locals.get_mut(*param) {
                            decl.ty = with_len(&decl.ty, len);
                        }
                    }
                    made.push(copy);
                }
                if let TerminatorKind::Call { callee, .. } =
                    &mut bodies[b].blocks[k].terminator.kind
                {
                    callee.text = name.clone();
                    callee.path = name;
                    callee.generics = Vec::new();
                }
            }
        }
        if made.is_empty() {
            return;
        }
        bodies.extend(made);
    }
}

/// The name of `function`'s copy for slices of these lengths:
/// `total::<[3]>`, `dot::<[4, 4]>`.
fn slice_copy_name(function: &str, lengths: &[&str]) -> String {
    format!("{function}::<[{}]>", lengths.join(", "))
}

/// Whether `path` names a copy made by [`slice_copy_name`] (a generic
/// instance's arguments are types, never bare lengths).
fn is_slice_copy(path: &str) -> bool {
    path.rsplit_once("::<[")
        .and_then(|(_, rest)| rest.strip_suffix("]>"))
        .is_some_and(|list| {
            list.split(", ")
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// Whether a body calls a registration function.
fn registers(body: &Body) -> bool {
    body.blocks.iter().any(|b| {
        matches!(&b.terminator.kind, TerminatorKind::Call { callee, .. }
            if crate::registry::registration(&callee.path).is_some())
    })
}

/// `[T]` somewhere in `ty` (behind references, pointers or ADT arguments).
fn has_slice(ty: &Ty) -> bool {
    match ty {
        Ty::Slice(_) => true,
        Ty::Ref { inner, .. } | Ty::Ptr { inner, .. } => has_slice(inner),
        Ty::Adt { args, .. } => args.iter().any(has_slice),
        _ => false,
    }
}

/// The length a slice in `to` takes from the array at the same place in
/// `from`: `&[u32; 3]` → `&[u32]`, `&mut P<[T; 6]>` → `&mut P<[T]>`.
fn unsized_from(from: &Ty, to: &Ty) -> Option<String> {
    match (from, to) {
        (Ty::Array(_, len), Ty::Slice(_)) => array_len(len),
        (
            Ty::Ref { inner: a, .. } | Ty::Ptr { inner: a, .. },
            Ty::Ref { inner: b, .. } | Ty::Ptr { inner: b, .. },
        ) => unsized_from(a, b),
        (Ty::Adt { args: a, .. }, Ty::Adt { args: b, .. }) => {
            a.iter().zip(b).find_map(|(x, y)| unsized_from(x, y))
        }
        _ => None,
    }
}

/// `3`, `3_usize` → `3`.
fn array_len(text: &str) -> Option<String> {
    let digits: String = text.chars().take_while(|c| c.is_ascii_digit()).collect();
    (!digits.is_empty()).then_some(digits)
}

/// `ty` with its `[T]` made `[T; len]`.
fn with_len(ty: &Ty, len: &str) -> Ty {
    match ty {
        Ty::Slice(e) => Ty::Array(e.clone(), len.to_string()),
        Ty::Ref { mutable, inner } => Ty::Ref {
            mutable: *mutable,
            inner: Box::new(with_len(inner, len)),
        },
        Ty::Ptr { mutable, inner } => Ty::Ptr {
            mutable: *mutable,
            inner: Box::new(with_len(inner, len)),
        },
        Ty::Adt { path, args } => Ty::Adt {
            path: path.clone(),
            args: args.iter().map(|a| with_len(a, len)).collect(),
        },
        t => t.clone(),
    }
}

/// The local a plain operand reads.
fn operand_local(op: &Operand) -> Option<Local> {
    match op {
        Operand::Copy(p) | Operand::Move(p) if p.projections.is_empty() => Some(p.local),
        _ => None,
    }
}

/// The length each slice local of `body` gets; a local two sources give
/// different lengths, or one handed to a call, gets none.
fn lengths(body: &Body, through_calls: bool) -> BTreeMap<Local, String> {
    let ty_of = |l: Local| body.locals.get(l.0 as usize).map(|d| &d.ty);
    // A slice handed to a call keeps its type: the callee takes a slice
    // (a registration's data, a helper's `&[T]` parameter), unless the
    // callee is a copy taking the array (`specialize_slice_parameters`);
    // `through_calls` asks for the lengths of such arguments too. The
    // `next` of an array's by-value iterator is the model's
    // (`route_array_next`).
    let mut known: BTreeMap<Local, Option<String>> = body
        .blocks
        .iter()
        .filter_map(|b| match &b.terminator.kind {
            TerminatorKind::Call { args, callee, .. }
                if !through_calls
                    && !is_array_next(&callee.path)
                    && !is_slice_copy(&callee.path) =>
            {
                Some(args)
            }
            _ => None,
        })
        .flatten()
        .filter_map(operand_local)
        .filter(|l| ty_of(*l).is_some_and(has_slice))
        .map(|l| (l, None))
        .collect();
    loop {
        let mut changed = false;
        for st in body.blocks.iter().flat_map(|b| &b.statements) {
            let StatementKind::Assign { place, rvalue } = &st.kind else {
                continue;
            };
            if !place.projections.is_empty() {
                continue;
            }
            let dest = place.local;
            if !ty_of(dest).is_some_and(has_slice) {
                continue;
            }
            let source_len = |l: Local| -> Option<Option<String>> {
                match known.get(&l) {
                    Some(len) => Some(len.clone()),
                    None => unsized_from(ty_of(l)?, ty_of(dest)?).map(Some),
                }
            };
            let len = match &**rvalue {
                Rvalue::Use(op) => operand_local(op).and_then(source_len),
                Rvalue::Cast { kind, operand, .. }
                    if kind.starts_with("PointerCoercion(Unsize")
                        || kind.starts_with("Transmute")
                        || kind.starts_with("PtrToPtr") =>
                {
                    operand_local(operand).and_then(source_len)
                }
                // `&raw const (*_4)`, `&(*_4)`: a reborrow of the slice.
                Rvalue::Ref { place: p, .. } | Rvalue::RawPtr { place: p, .. }
                    if p.projections == [Projection::Deref] =>
                {
                    source_len(p.local)
                }
                _ => None,
            };
            let Some(len) = len else {
                continue;
            };
            let merged = match known.get(&dest) {
                None => len,
                // Settled: the same length, or already two.
                Some(old) if *old == len || old.is_none() => continue,
                Some(_) => None,
            };
            known.insert(dest, merged);
            changed = true;
        }
        if !changed {
            break;
        }
    }
    known
        .into_iter()
        .filter_map(|(l, len)| Some((l, len?)))
        .collect()
}

fn apply(body: &mut Body, lengths: &BTreeMap<Local, String>) {
    for (local, len) in lengths {
        if let Some(decl) = body.locals.get_mut(local.0 as usize) {
            decl.ty = with_len(&decl.ty, len);
        }
    }
    let types: Vec<Ty> = body.locals.iter().map(|d| d.ty.clone()).collect();
    for st in body.blocks.iter_mut().flat_map(|b| &mut b.statements) {
        let StatementKind::Assign { place, rvalue } = &mut st.kind else {
            continue;
        };
        // A cast to a slice type now casts to the destination's type; an
        // unsizing one has nothing left to do.
        if let Rvalue::Cast { kind, operand, ty } = &mut **rvalue {
            if place.projections.is_empty() && lengths.contains_key(&place.local) {
                if kind.starts_with("PointerCoercion(Unsize") {
                    **rvalue = Rvalue::Use(operand.clone());
                } else if let Some(t) = types.get(place.local.0 as usize) {
                    *ty = t.clone();
                }
                continue;
            }
        }
        // `PtrMetadata(copy _3)` of a slice of known length, or of a
        // parameter that is now an array's reference.
        if let Rvalue::UnaryOp {
            op: UnOp::PtrMetadata,
            operand,
        } = &**rvalue
        {
            // Either way the local's type is now a pointer to the array.
            let len = operand_local(operand).and_then(|l| match types.get(l.0 as usize) {
                Some(Ty::Ref { inner, .. } | Ty::Ptr { inner, .. }) => match &**inner {
                    Ty::Array(_, n) => array_len(n),
                    _ => None,
                },
                _ => None,
            });
            if let Some(len) = len.as_ref() {
                if let Ok(value) = len.parse::<i128>() {
                    **rvalue = Rvalue::Use(Operand::Const(Constant::Int {
                        value,
                        ty: Ty::Scalar(crate::ty::Scalar::Usize),
                    }));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_null_is_a_const_pointer() {
        assert_eq!(
            line("        _7 = copy _11 as std::ptr::NonNull<[u32]> (Transmute);"),
            "        _7 = copy _11 as *const [u32] (Transmute);"
        );
        assert_eq!(
            line("        _24 = copy (_3.0: std::ptr::NonNull<u32>);"),
            "        _24 = copy (_3.0: *const u32);"
        );
        assert_eq!(
            line("    let mut _7: NonNull<NonNull<u8>>;"),
            "    let mut _7: *const *const u8;"
        );
        // Another crate's `NonNull`, and a call, stay.
        assert_eq!(line("let _1: my::NonNull<u8>;"), "let _1: my::NonNull<u8>;");
        assert_eq!(line("é::NonNull<u8> ü"), "é::NonNull<u8> ü");
        assert_eq!(line("(ptr::NonNull<é>"), "(*const é");
        assert_eq!(
            line("_2 = NonNull::<u8>::dangling()"),
            "_2 = NonNull::<u8>::dangling()"
        );
    }

    #[test]
    fn slice_copies_are_told_from_generic_instances() {
        assert_eq!(slice_copy_name("dot", &["4", "4"]), "dot::<[4, 4]>");
        assert!(is_slice_copy("dot::<[4, 4]>"));
        assert!(is_slice_copy("lerp::<i16>::<[3]>"));
        assert!(!is_slice_copy("sum::<[u32; 3]>"));
        assert!(!is_slice_copy("total"));
    }

    #[test]
    fn null_references_are_none() {
        assert_eq!(
            line("_0 = const {transmute(0x0000000000000000): Option<&u32>};"),
            "_0 = const Option::<&u32>::None;"
        );
        // Not zero, or not an `Option` of a reference: as it was.
        for l in [
            "_0 = const {transmute(0x0000000000000001): Option<&u32>};",
            "_0 = const {transmute(0x0000000000000000): Option<u64>};",
        ] {
            assert_eq!(line(l), l);
        }
    }

    #[test]
    fn slice_iterators_lose_their_lifetime_and_phantoms_are_zero_sized() {
        assert_eq!(
            line("_3 = std::slice::Iter::<'_, u32> { ptr: copy _6, end_or_len: copy _8, _marker: const PhantomData::<&u32> };"),
            "_3 = std::slice::Iter::<u32> { ptr: copy _6, end_or_len: copy _8, _marker: const ZeroSized: PhantomData<&u32> };"
        );
        assert_eq!(
            line("    let mut _3: std::slice::Iter<'_, u32>;"),
            "    let mut _3: std::slice::Iter<u32>;"
        );
    }
}
