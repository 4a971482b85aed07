//! From parsed MIR bodies to a prepared-MIR document: callee resolution,
//! closures with their capture facts, registrations, and source spans.

use std::collections::{BTreeMap, BTreeSet};

use crate::parse::{parse_mir_items, MirError};
use crate::pmir::{
    closure_key, env_type, operand_ty, AggregateKind, BlockId, Body, BodyKind, Callback, Capture,
    CaptureMode, Closure, ClosureKind, Constant, DebugVar, FileId, Local, LocalDecl, Operand,
    Place, PreparedMir, Projection, Registration, Resolution, Rvalue, SourceFacts, Span, Statement,
    StatementKind, TerminatorKind, FORMAT, ROOT_FILE,
};
use crate::registry;
use crate::source::lex;
use crate::source::{SourceText, Sources};
use crate::ty::Ty;

/// Parses MIR text and prepares it.
pub fn prepare_text(mir: &str, source: SourceFacts) -> Result<PreparedMir, MirError> {
    // Slices' pointers as thin pointers (line for line).
    let thin = crate::slices::text(mir);
    let mir = thin.as_str();
    // `core`'s iterator calls and closures, routed to the core model.
    let routed = crate::core_model::route(mir, source.overflow_checks.unwrap_or(true)).map_err(
        |message| MirError {
            line: 1,
            col: 1,
            message,
        },
    )?;
    let (mir, model_closures) = match &routed {
        Some(r) => (r.text.as_str(), r.closures.as_slice()),
        None => (mir, &[][..]),
    };
    let (mut bodies, consts) = parse_mir_items(mir)?;
    if routed.is_some() {
        crate::core_model::mark_generics(&mut bodies);
    }
    // `const {alloc1: *mut i32}` is the address of a static's allocation;
    // its dump (`alloc1 (static: BIAS, size: 4, align: 4) {`) names it.
    let statics = static_allocations(mir);
    if !statics.is_empty() {
        for b in &mut bodies {
            for_each_operand(b, |op| {
                if let Operand::Const(Constant::Other(text)) = op {
                    let id = text
                        .strip_prefix('{')
                        .and_then(|t| t.split_once(':'))
                        .map(|(id, _)| id);
                    if let Some((_, name)) = statics.iter().find(|(a, _)| Some(a.as_str()) == id) {
                        *text = format!("static {name}");
                    }
                }
            });
        }
    }
    // `const K` in a body is the item's value: MIR at opt-level 0 names
    // `const` items where opt-level 3 inlines them.
    if !consts.is_empty() {
        for b in &mut bodies {
            for_each_operand(b, |op| {
                if let Operand::Const(Constant::Other(name)) = op {
                    if let Some((_, v)) = consts.iter().find(|(n, _)| n == name) {
                        *op = Operand::Const(v.clone());
                    }
                }
            });
        }
    }
    complete_closure_aggregates(&mut bodies);
    crate::slices::inline_promoted(&mut bodies);
    crate::slices::identity_transmutes(&mut bodies);
    inline_const_items(&mut bodies);
    crate::slices::before_mono(&mut bodies);
    direct_fn_item_calls(&mut bodies);
    crate::mono::instantiate(mir, &mut bodies, &source, model_closures);
    direct_fn_item_calls(&mut bodies);
    if routed.is_some() {
        crate::core_model::prune(&mut bodies);
    }
    crate::niche::expand(&mut bodies);
    crate::slices::specialize_slice_parameters(&mut bodies);
    crate::slices::known_lengths(&mut bodies);
    crate::chain::synthesize(&mut bodies, source.overflow_checks.unwrap_or(true));
    Ok(prepare(bodies, source))
}

/// One environment field of a closure: its type, and, where the body's
/// debug lines name it, the captured place's path (`["t", "2"]` for
/// rustc's `t__2`) and whether it holds the value (not a reference).
struct EnvField {
    ty: Ty,
    path: Option<Vec<String>>,
    by_value: bool,
}

/// The environment fields of each closure type whose body the document
/// holds, by field index: from the body's debug lines (which name every
/// capture) and the fields it reads.
fn closure_env_fields(bodies: &[Body]) -> Vec<(Ty, BTreeMap<u32, EnvField>)> {
    let mut out = Vec::new();
    for body in bodies {
        let Some(env) = body.locals.get(1).filter(|_| body.arg_count >= 1) else {
            continue;
        };
        let (self_deref, closure_ty) = match &env.ty {
            Ty::Ref { inner, .. } if matches!(**inner, Ty::Closure { .. }) => {
                (true, (**inner).clone())
            }
            t @ Ty::Closure { .. } => (false, t.clone()),
            _ => continue,
        };
        let mut fields: BTreeMap<u32, EnvField> = env_fields_read(body, self_deref)
            .into_iter()
            .map(|(i, ty)| {
                let field = EnvField {
                    ty,
                    path: None,
                    by_value: false,
                };
                (i, field)
            })
            .collect();
        for d in &body.debug_vars {
            let Some((index, ty, rest)) = d.place.as_ref().and_then(|p| env_field(p, self_deref))
            else {
                continue;
            };
            let field = EnvField {
                ty: ty.clone(),
                path: Some(d.name.split("__").map(str::to_string).collect()),
                by_value: rest.is_empty(),
            };
            fields.insert(index, field);
        }
        out.push((closure_ty, fields));
    }
    out
}

/// rustc prints a closure aggregate with one field per captured
/// *variable*: a closure capturing two fields of one variable (`|acc|
/// acc + s.a + s.b`, edition 2021's precise captures) prints as
/// `{closure@…} { s: copy _8 }`, its second operand lost, and the names of
/// the fields after it shifted (`{ s: copy _7, a: copy _8 }` for four
/// captures of `s.0`, `s.1`, `s.2` and `a`). The operands it prints are
/// the first ones, in order. Where they are locals assigned one after the
/// other just before the aggregate (a capture by reference is a borrow
/// made there; a capture of a field by value a copy made there), the
/// locals assigned from the first operand's on are the operands, and the
/// missing ones are taken from them, each checked against the type of its
/// environment field. Failing that, a capture by value of a variable
/// (`x`) or of a tuple's field (`t.2`) is read from its place: the
/// variable's one debug line in the body, or the base of a printed operand
/// that reads another field of the same tuple (`copy (_3.0: u8)` for
/// `t.0`). Anything else is an unparsed statement (E0109 where a callback
/// reaches it), never a closure built with fields left unset.
fn complete_closure_aggregates(bodies: &mut [Body]) {
    let envs = closure_env_fields(bodies);
    for body in bodies.iter_mut() {
        let Body {
            locals,
            debug_vars,
            blocks,
            ..
        } = body;
        for block in blocks {
            for at in 0..block.statements.len() {
                let StatementKind::Assign { rvalue, .. } = &block.statements[at].kind else {
                    continue;
                };
                let Rvalue::Aggregate {
                    kind: AggregateKind::Closure { ty },
                    fields,
                } = &**rvalue
                else {
                    continue;
                };
                let Some((_, env)) = envs.iter().find(|(t, _)| t == ty) else {
                    continue;
                };
                let wanted = env.keys().last().map_or(0, |k| *k as usize + 1);
                if fields.len() >= wanted {
                    continue;
                }
                let printed = fields.len();
                let found =
                    missing_closure_operands(&block.statements[..at], fields, env, wanted, locals)
                        .or_else(|| captured_places(fields, env, wanted, debug_vars));
                let kind = &mut block.statements[at].kind;
                match (found, kind) {
                    (Some(extra), StatementKind::Assign { rvalue, .. }) => {
                        if let Rvalue::Aggregate { fields, .. } = &mut **rvalue {
                            fields.extend(extra);
                        }
                    }
                    (Some(_), _) => {}
                    (None, kind) => {
                        let text = format!("{printed} closure fields of {wanted}");
                        *kind = StatementKind::Unparsed {
                            text,
                            reason: format!(
                                "rustc's MIR text lists {printed} of the {wanted} captures of a closure \
                                 built here (it prints one per captured variable, and this \
                                 closure captures several fields of one); make it capture the \
                                 whole value: read it whole first inside that closure \
                                 (`let v = s;`, then `v.a`, `v.b`)"
                            ),
                        };
                    }
                }
            }
        }
    }
}

/// The operands after `printed` of a closure aggregate with `wanted`
/// fields, from the locals `before` assigns from the first printed
/// operand's assignment on (see [`complete_closure_aggregates`]); `None`
/// unless every one is found and has its field's type.
fn missing_closure_operands(
    before: &[Statement],
    printed: &[(Option<String>, Operand)],
    env: &BTreeMap<u32, EnvField>,
    wanted: usize,
    locals: &[LocalDecl],
) -> Option<Vec<(Option<String>, Operand)>> {
    let bare = |op: &Operand| match op {
        Operand::Copy(p) | Operand::Move(p) if p.projections.is_empty() => Some(p.local),
        _ => None,
    };
    let first = bare(&printed.first()?.1)?;
    let start = before.iter().rposition(
        |s| matches!(&s.kind, StatementKind::Assign { place, .. } if place == &Place::local(first)),
    )?;
    let assigned: Vec<Local> = before[start..]
        .iter()
        .filter_map(|s| match &s.kind {
            StatementKind::Assign { place, .. } if place.projections.is_empty() => {
                Some(place.local)
            }
            StatementKind::StorageLive(_)
            | StatementKind::StorageDead(_)
            | StatementKind::Nop(_) => None,
            _ => Some(Local(u32::MAX)),
        })
        .collect();
    if assigned.len() != wanted
        || printed
            .iter()
            .zip(&assigned)
            .any(|((_, op), l)| bare(op) != Some(*l))
    {
        return None;
    }
    assigned[printed.len()..]
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let field = (printed.len() + i) as u32;
            let ty = &locals.get(l.0 as usize)?.ty;
            (env.get(&field).map(|f| &f.ty) == Some(ty))
                .then(|| (None, Operand::Copy(Place::local(*l))))
        })
        .collect()
}

/// The operands after `printed` of a closure aggregate with `wanted`
/// fields, each a capture by value read from its place (see
/// [`complete_closure_aggregates`]); `None` unless every one is found.
fn captured_places(
    printed: &[(Option<String>, Operand)],
    env: &BTreeMap<u32, EnvField>,
    wanted: usize,
    debug_vars: &[DebugVar],
) -> Option<Vec<(Option<String>, Operand)>> {
    // The base of a tuple a printed operand reads a field of: `t` → `_3`.
    let mut bases: BTreeMap<&str, Place> = BTreeMap::new();
    for (i, (_, op)) in printed.iter().enumerate() {
        let (Operand::Copy(p) | Operand::Move(p)) = op else {
            continue;
        };
        let Some(path) = env.get(&(i as u32)).and_then(|f| f.path.as_ref()) else {
            continue;
        };
        if let ([root, _], Some((Projection::Field { .. }, base))) =
            (path.as_slice(), p.projections.split_last())
        {
            let base = Place {
                local: p.local,
                projections: base.to_vec(),
            };
            bases.insert(root.as_str(), base);
        }
    }
    (printed.len()..wanted)
        .map(|i| {
            let field = env.get(&(i as u32)).filter(|f| f.by_value)?;
            let place = match field.path.as_deref()? {
                [name] => {
                    let mut named = debug_vars.iter().filter(|d| &d.name == name);
                    let only = named.next()?.place.clone()?;
                    named.next().is_none().then_some(only)?
                }
                [root, index] => {
                    let mut place = bases.get(root.as_str())?.clone();
                    place.projections.push(Projection::Field {
                        index: index.parse().ok()?,
                        ty: field.ty.clone(),
                    });
                    place
                }
                _ => return None,
            };
            Some((None, Operand::Copy(place)))
        })
        .collect()
}

/// `_8 = const W;` where the `const` item `W` has a body that only builds
/// its value from constants (`const W: [i32; 4] = [1, 2, 3, 4];` prints
/// `_0 = [const 1_i32, …]; return;`): the statement becomes that value,
/// as rustc would fold it. Optimised MIR names such items (a lookup table)
/// instead of copying their value; a callback then indexes the local.
fn inline_const_items(bodies: &mut [Body]) {
    let mut values: BTreeMap<String, Rvalue> = BTreeMap::new();
    for b in bodies.iter().filter(|b| b.kind == BodyKind::Const) {
        if let Some([(place, rvalue)]) = b.straight_assigns().as_deref() {
            if **place == Place::local(Local(0)) && only_constants(rvalue) {
                values.insert(b.name.clone(), (*rvalue).clone());
            }
        }
    }
    if values.is_empty() {
        return;
    }
    for b in bodies.iter_mut() {
        for block in &mut b.blocks {
            for st in &mut block.statements {
                if let StatementKind::Assign { rvalue, .. } = &mut st.kind {
                    if let Rvalue::Use(Operand::Const(Constant::Other(name))) = &**rvalue {
                        if let Some(v) = values.get(name) {
                            **rvalue = v.clone();
                        }
                    }
                }
            }
        }
    }
}

/// An aggregate, repeat or use whose operands are all literal constants.
fn only_constants(rvalue: &Rvalue) -> bool {
    let literal = |o: &Operand| {
        matches!(
            o,
            Operand::Const(
                Constant::Int { .. }
                    | Constant::Float { .. }
                    | Constant::Bool(_)
                    | Constant::Char(_)
            )
        )
    };
    match rvalue {
        Rvalue::Aggregate {
            kind: AggregateKind::Array | AggregateKind::Tuple,
            fields,
        } => fields.iter().all(|(_, o)| literal(o)),
        Rvalue::Repeat { operand, .. } => literal(operand),
        _ => false,
    }
}

/// `(allocN, NAME)` for every `allocN (static: NAME, …) {` dump line.
fn static_allocations(mir: &str) -> Vec<(String, String)> {
    mir.lines()
        .filter_map(|l| {
            let (id, rest) = l.split_once(" (static: ")?;
            if !id.starts_with("alloc") || !id[5..].bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let name = rest.split([',', ')']).next()?.trim();
            Some((id.to_string(), name.to_string()))
        })
        .collect()
}

/// Calls `f` on every operand of a body.
fn for_each_operand(body: &mut Body, mut f: impl FnMut(&mut Operand)) {
    for block in &mut body.blocks {
        for s in &mut block.statements {
            if let StatementKind::Assign { rvalue, .. } = &mut s.kind {
                rvalue.for_each_operand(&mut f);
            }
        }
        match &mut block.terminator.kind {
            TerminatorKind::SwitchInt { discr, .. } => f(discr),
            TerminatorKind::Assert { cond, .. } => f(cond),
            TerminatorKind::Call { args, .. } => args.iter_mut().for_each(&mut f),
            _ => {}
        }
    }
}

/// Resolves and annotates parsed bodies. Infallible: anything it cannot
/// resolve is recorded as such (a foreign callee, a callback of another kind).
pub fn prepare(mut bodies: Vec<Body>, source: SourceFacts) -> PreparedMir {
    separate_test_descriptors(&mut bodies);
    let sources = Sources::new(&source);
    let impl_ranges = name_impl_methods(&mut bodies, &sources);
    let names = local_names(&bodies, &sources);
    let closure_bodies = ClosureBodies::new(&bodies);

    // Source extents of bodies (for spans of calls inside them), each in
    // its own file.
    let mut extents: BTreeMap<String, Extent> = BTreeMap::new();
    for b in bodies.iter_mut() {
        match b.kind {
            // A `par_iter` chain's body (`chain::synthesize`) has no text.
            BodyKind::Closure if env_type(b).is_some_and(crate::chain::is_chain_closure) => {}
            BodyKind::Closure => {
                if let Some((file, span)) = env_type(b).and_then(|t| closure_span(&sources, t)) {
                    b.span = Some(span);
                    if let Some(ext) = sources.text(file).and_then(|t| t.closure_extent(span)) {
                        extents.insert(b.name.clone(), (file, ext));
                    }
                }
            }
            BodyKind::Fn => {
                let extent = match impl_ranges.get(&b.name) {
                    Some((file, range)) => sources.text(*file).and_then(|t| {
                        t.fn_extent_in(last_segment(&b.name), *range)
                            .map(|(lo, hi, span)| (*file, (lo, hi), span))
                    }),
                    // An instance (`lerp::<i16>`) is found as its generic `fn`.
                    None => sources.fn_extent(&crate::parse::split_generics(&b.name).0),
                };
                if let Some((file, range, name_span)) = extent {
                    b.span = Some(name_span);
                    extents.insert(b.name.clone(), (file, range));
                }
            }
            BodyKind::Const => {}
        }
    }

    // Resolve every call, and give it a source span where one is found.
    for b in bodies.iter_mut() {
        let ext = extents.get(&b.name).copied();
        let text = ext.and_then(|(file, _)| sources.text(file));
        let closure_head_end = match (b.kind, text, b.span) {
            (BodyKind::Closure, Some(t), Some(s)) => t.offset(s.hi_line, s.hi_col),
            _ => None,
        };
        let body_file = ext.map_or(ROOT_FILE, |(file, _)| file);
        let locals = b.locals.clone();
        let caller_name = b.name.clone();
        let caller = Caller {
            name: &caller_name,
            generic: !b.generic_params.is_empty(),
        };
        let mut pending: Vec<Unplaced<'_, '_, usize>> = Vec::new();
        for (i, block) in b.blocks.iter_mut().enumerate() {
            if let TerminatorKind::Call { callee, args, .. } = &mut block.terminator.kind {
                callee.resolution = match names.get(&callee.text) {
                    // An instance of a generic body (`lerp::<i16>`, made by `mono`).
                    Some(body) => Resolution::Local { body: body.clone() },
                    _ => resolve(
                        &callee.path,
                        &callee.generics,
                        &names,
                        &closure_bodies,
                        caller,
                    ),
                };
                if let Resolution::Foreign {
                    link_name,
                    extern_c,
                } = &mut callee.resolution
                {
                    let name = last_segment(&callee.path);
                    *link_name = sources.link_name(name, body_file);
                    *extern_c = sources.declares_extern_c(name, body_file);
                }
                if is_closure_trait_call(&callee.path) {
                    if let Resolution::Local { .. } = callee.resolution {
                        untuple_args(args, &locals);
                    }
                }
                if let (Some(t), Some((_, (lo, hi)))) = (text, ext) {
                    let lo = closure_head_end.unwrap_or(lo);
                    let (key, hits) = match registry::source_token(&callee.path) {
                        registry::SourceToken::None => continue,
                        registry::SourceToken::Word(w) => {
                            (w.to_string(), t.find_word((lo, hi), w, true))
                        }
                        registry::SourceToken::Macro(names) => {
                            (names.join("|"), t.find_macros((lo, hi), names))
                        }
                        registry::SourceToken::Index => ("[".to_string(), t.find_index((lo, hi))),
                    };
                    let anchors = mentioned_closures(&callee.text)
                        .iter()
                        .filter_map(|c| closure_head(&sources, c))
                        .filter(|(file, _)| *file == body_file)
                        .collect();
                    pending.push(Unplaced {
                        id: i,
                        key,
                        hits: hits.into_iter().map(|h| (t, lo, h)).collect(),
                        anchors,
                    });
                }
            }
        }
        for (block, span) in place(pending) {
            if let TerminatorKind::Call { callee, .. } = &mut b.blocks[block].terminator.kind {
                callee.span = span;
            }
        }
    }

    let mut closures: Vec<Closure> = bodies
        .iter()
        .filter(|b| b.kind == BodyKind::Closure)
        .filter(|b| !env_type(b).is_some_and(crate::chain::is_chain_closure))
        .filter_map(|b| closure_facts(b, &bodies, &sources, extents.get(&b.name).copied()))
        .collect();
    let mut registrations = registrations(&bodies, &closure_bodies, &sources, &extents);
    let chains = crate::chain::closures(&bodies, &registrations, &closures);
    // A chain's body has no text of its own: its code is at the terminal's
    // call (its locations, and its debug information's).
    for c in &chains {
        if let Some(b) = bodies.iter_mut().find(|b| b.name == c.body) {
            b.span = Some(c.span);
        }
    }
    closures.extend(chains);
    // A generic function's registration whose call site a concrete copy
    // (rustc inlined the function into its callers) also registers is that
    // copy's template: the copies are what run.
    let generic_bodies: BTreeSet<&str> = bodies
        .iter()
        .filter(|b| !b.generic_params.is_empty())
        .map(|b| b.name.as_str())
        .collect();
    let generic = |caller: &str| generic_bodies.contains(caller);
    let concrete_sites: BTreeSet<(FileId, u32, u32)> = registrations
        .iter()
        .filter(|r| !generic(&r.caller))
        .filter_map(|r| r.span.map(|s| (s.file, s.lo_line, s.lo_col)))
        .collect();
    registrations.retain(|r| {
        !generic(&r.caller)
            || !r
                .span
                .is_some_and(|s| concrete_sites.contains(&(s.file, s.lo_line, s.lo_col)))
    });
    fn_items_without_bodies(&mut bodies, &mut registrations);

    let mut doc = PreparedMir {
        format: FORMAT.to_string(),
        source,
        bodies,
        closures,
        registrations,
        adts: Vec::new(),
        elements: Vec::new(),
    };
    crate::adt_items::collect(&mut doc);
    doc
}

/// Methods of `impl` blocks print as `<impl at f.rs:12:1: 12:20>::settle`;
/// they are renamed to the path a user reads and calls print,
/// `<i32 as Settle>::settle` or `Params::apply` (closures inside them
/// follow), unless two impls would get the same name. Returns each renamed
/// method's `impl` block range, where its `fn` is looked up for spans.
fn name_impl_methods(bodies: &mut [Body], sources: &Sources<'_>) -> BTreeMap<String, Extent> {
    let mut ranges = BTreeMap::new();
    let mut renames: BTreeMap<String, (String, Extent)> = BTreeMap::new();
    for b in bodies.iter() {
        let Some(rest) = b.name.strip_prefix("<impl at ") else {
            continue;
        };
        let Some((loc, _)) = rest.split_once(">::") else {
            continue;
        };
        let prefix = format!("<impl at {loc}>");
        if renames.contains_key(&prefix) {
            continue;
        }
        let Some((t, lo, path)) = impl_at(sources, loc) else {
            continue;
        };
        let Some(range) = t.block_from(lo) else {
            continue;
        };
        renames.insert(prefix, (path, (t.file(), range)));
    }
    let taken: Vec<&String> = renames.values().map(|(p, _)| p).collect();
    let unique = |p: &String| taken.iter().filter(|q| **q == p).count() == 1;
    for b in bodies.iter_mut() {
        let Some((prefix, (path, range))) = renames
            .iter()
            .find(|(prefix, _)| b.name.starts_with(prefix.as_str()))
        else {
            continue;
        };
        if !unique(path) {
            continue;
        }
        let renamed = format!("{path}{}", &b.name[prefix.len()..]);
        if b.kind == BodyKind::Fn {
            ranges.insert(renamed.clone(), *range);
        }
        b.name = renamed;
    }
    ranges
}

/// The `impl` header at `loc` (`f.rs:12:1: 12:20`, as MIR names impl
/// methods): the text of its file, its offset there and the path it gives
/// its methods.
fn impl_at<'s, 'a>(
    sources: &'s Sources<'a>,
    loc: &str,
) -> Option<(&'s SourceText<'a>, usize, String)> {
    let (file, span) = crate::ty::parse_file_span(loc)?;
    let t = sources.text(sources.file_id(&file)?)?;
    let lo = t.offset(span.lo_line, span.lo_col)?;
    let hi = t.offset(span.hi_line, span.hi_col)?;
    Some((t, lo, impl_path(t.slice(lo, hi))?))
}

/// `impl Settle for i32` → `<i32 as Settle>`; `impl Params` → `Params`.
fn impl_path(header: &str) -> Option<String> {
    let h = header.trim().strip_prefix("impl")?;
    // Skip the impl's own generic parameters: `impl<T> Foo<T>`.
    let h = if h.starts_with('<') {
        match crate::ty::split_top(h, ' ').first() {
            Some(g) => &h[g.len()..],
            None => h,
        }
    } else {
        h
    };
    let h = h.trim();
    if h.is_empty() {
        return None;
    }
    Some(match h.split_once(" for ") {
        Some((tr, ty)) => format!("<{} as {}>", ty.trim(), tr.trim()),
        None => h.to_string(),
    })
}

/// Every name a call can use for a local body: its MIR name, and for methods
/// still named `<impl at f.rs:8:1: 8:12>::apply` (two impls with one path,
/// which `name_impl_methods` leaves as they are) the path calls print
/// (`Params::apply`, or `<Params as Trait>::apply`).
fn local_names(bodies: &[Body], sources: &Sources<'_>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for b in bodies {
        names.insert(b.name.clone(), b.name.clone());
        let Some(rest) = b.name.strip_prefix("<impl at ") else {
            continue;
        };
        let Some((loc, method)) = rest.split_once(">::") else {
            continue;
        };
        let Some((_, _, path)) = impl_at(sources, loc) else {
            continue;
        };
        let alias = format!("{path}::{method}");
        names.insert(alias, b.name.clone());
    }
    names
}

/// `<{closure@…} as Fn<(i32,)>>::call` (and `FnMut::call_mut`,
/// `FnOnce::call_once`): the "rust-call" ABI, whose arguments after the
/// closure come as one tuple.
fn is_closure_trait_call(path: &str) -> bool {
    path.starts_with("<{closure@") && calls_through_closure_trait(path)
}

/// Whether `path` is a closure trait's method (`<F as FnMut<(…)>>::call_mut`).
fn calls_through_closure_trait(path: &str) -> bool {
    ["::call", "::call_mut", "::call_once"]
        .iter()
        .any(|m| path.ends_with(m))
}

/// Spreads a rust-call's argument tuple into one argument per field, as
/// rustc's code generation does, so the call matches the closure body's
/// parameters (`sq(b)` is `call(move _6, move _7)` with `_7 = (copy _3,)`;
/// the body takes `(_1: &{closure}, _2: i32)`). An argument that is not a
/// tuple-typed place is left as it is (admission then reports the arity).
fn untuple_args(args: &mut Vec<Operand>, locals: &[crate::pmir::LocalDecl]) {
    let [_, tuple] = args.as_slice() else {
        return;
    };
    // A closure of no arguments is called with `const ()`.
    if matches!(tuple, Operand::Const(Constant::Unit)) {
        args.truncate(1);
        return;
    }
    let place = match tuple {
        Operand::Copy(p) | Operand::Move(p) if p.projections.is_empty() => p.clone(),
        _ => return,
    };
    let Some(Ty::Tuple(fields)) = locals.get(place.local.0 as usize).map(|l| l.ty.clone()) else {
        return;
    };
    let spread = fields.into_iter().enumerate().map(|(i, ty)| {
        Operand::Copy(Place {
            local: place.local,
            projections: vec![Projection::Field {
                index: i as u32,
                ty,
            }],
        })
    });
    let first = args[0].clone();
    *args = std::iter::once(first).chain(spread).collect();
}

/// `<fn(&u32, &u32) -> Ordering {<u32 as Ord>::cmp} as FnMut<(&u32,
/// &u32)>>::call_mut(move f, move t)`: a call of a fn item through the
/// closure traits (a fn item handed to a generic function, as in
/// `fold(f32::MIN, f32::max)`, or `max()`'s comparator) becomes a direct
/// call of the function with the tuple spread, as rustc's code generation
/// makes it; `Ord::cmp` of integers (or references to them) becomes the
/// `Cmp` of the values, which is what that method computes.
pub(crate) fn direct_fn_item_calls(bodies: &mut [Body]) {
    for b in bodies.iter_mut() {
        let locals = b.locals.clone();
        for block in &mut b.blocks {
            let TerminatorKind::Call {
                dest,
                callee,
                args,
                target,
                ..
            } = &mut block.terminator.kind
            else {
                continue;
            };
            let Some(name) = fn_item_of_trait_call(&callee.path) else {
                continue;
            };
            if args.len() != 2 {
                continue;
            }
            untuple_args(args, &locals);
            args.remove(0);
            if let (Some(cmp), Some(next)) = (int_cmp(&name, args), *target) {
                let mir_line = block.terminator.mir_line;
                block.statements.push(crate::pmir::Statement {
                    mir_line,
                    kind: StatementKind::Assign {
                        place: dest.clone(),
                        rvalue: Box::new(cmp),
                    },
                });
                block.terminator.kind = TerminatorKind::Goto(next);
                continue;
            }
            let (path, generics) = crate::parse::split_generics(&name);
            callee.text = name;
            callee.path = path;
            callee.generics = generics;
        }
    }
}

/// The fn item a closure-trait call's self type names, when it is one
/// (`fn(f32, f32) -> f32 {core::f32::<impl f32>::max}`).
fn fn_item_of_trait_call(path: &str) -> Option<String> {
    let inner = path.strip_prefix('<')?;
    if !calls_through_closure_trait(path) {
        return None;
    }
    if !(inner.starts_with("fn(") || inner.starts_with("for<") || inner.starts_with("unsafe fn(")) {
        return None;
    }
    let close = inner.find("} as Fn")?;
    let bytes = inner.as_bytes();
    let mut depth = 0i32;
    for i in (0..=close).rev() {
        match bytes[i] {
            b'}' => depth += 1,
            b'{' => {
                depth -= 1;
                if depth == 0 {
                    return Some(inner[i + 1..close].to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// `<T as Ord>::cmp(a, b)` of an integer `T` (or a reference to one), its
/// arguments references: `Cmp(*a, *b)`.
fn int_cmp(name: &str, args: &[Operand]) -> Option<Rvalue> {
    let (self_ty, tr, method) = crate::mono::qualified(name)?;
    if method != "cmp" || !matches!(tr, "Ord" | "std::cmp::Ord" | "core::cmp::Ord") {
        return None;
    }
    let mut ty = Ty::parse(self_ty);
    let mut derefs = 1;
    while let Ty::Ref { inner, .. } = ty {
        ty = *inner;
        derefs += 1;
    }
    if !ty
        .scalar()
        .is_some_and(|s| s.is_int() || s == crate::ty::Scalar::Bool || s == crate::ty::Scalar::Char)
    {
        return None;
    }
    let value = |op: &Operand| -> Option<Operand> {
        let (Operand::Copy(p) | Operand::Move(p)) = op else {
            return None;
        };
        let mut p = p.clone();
        p.projections
            .extend(std::iter::repeat_n(Projection::Deref, derefs));
        Some(Operand::Copy(p))
    };
    let [a, b] = args else { return None };
    Some(Rvalue::BinaryOp {
        op: crate::pmir::BinOp::Cmp,
        lhs: value(a)?,
        rhs: value(b)?,
    })
}

/// A body's source file and byte range in it.
type Extent = (FileId, (usize, usize));

/// The file and span of a closure type's head (`{closure@src/k.rs:5:38:
/// 5:49}`), the span naming its file. A file the document does not hold
/// counts as the root, as every file did before documents held several
/// (a Cargo build refuses such a document before it gets here).
fn closure_span(sources: &Sources<'_>, ty: &Ty) -> Option<(FileId, Span)> {
    let Ty::Closure { file, span } = ty else {
        return None;
    };
    let id = sources.file_id(file).unwrap_or(ROOT_FILE);
    Some((id, span.in_file(id)))
}

/// A call whose source span is still to be chosen: who it is (a block),
/// the word (or macro, or `[`) that spells it, that word's occurrences it
/// may be (each in its text, with the offset its expression reads back
/// to), and where the closures its type names start.
struct Unplaced<'t, 'a, Id> {
    id: Id,
    key: String,
    hits: Vec<(&'t SourceText<'a>, usize, Span)>,
    anchors: Vec<(FileId, usize)>,
}

/// Each call's span among its word's occurrences, in two rounds. A call
/// whose type names closures of the text (`reduce::<{closure@…}>`,
/// `ParIter<…, Map<(), {closure@…}, u64>>::sum`) takes the innermost
/// occurrence whose whole call expression holds every one of them (its
/// arguments, or its receiver chain). The rest take the occurrences left,
/// the k-th call of a word in block order the k-th occurrence in the
/// text. Block order is not source order (rustc reverses two chains in a
/// loop), so the closures, whose spans are exact, go first.
fn place<Id>(calls: Vec<Unplaced<'_, '_, Id>>) -> Vec<(Id, Option<Span>)> {
    let mut taken: BTreeSet<(String, usize)> = BTreeSet::new();
    let mut out = Vec::new();
    let mut rest = Vec::new();
    for c in calls {
        match innermost_call(&c.hits, &c.anchors, |k| taken.contains(&(c.key.clone(), k))) {
            Some(k) => {
                taken.insert((c.key.clone(), k));
                out.push((c.id, Some(c.hits[k].2)));
            }
            None => rest.push(c),
        }
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for c in rest {
        let next = seen.entry(c.key.clone()).or_insert(0);
        while taken.contains(&(c.key.clone(), *next)) {
            *next += 1;
        }
        out.push((c.id, c.hits.get(*next).map(|h| h.2)));
        *next += 1;
    }
    out
}

/// Of a call's candidate occurrences (each in its text, read back no
/// further than its offset), the index of the innermost not `taken` whose
/// whole call expression ([`SourceText::call_extent`]: receiver chain,
/// word, arguments) holds every anchor (a closure's head, by file and
/// offset); `None` without anchors or without such an occurrence.
fn innermost_call(
    hits: &[(&SourceText<'_>, usize, Span)],
    anchors: &[(FileId, usize)],
    taken: impl Fn(usize) -> bool,
) -> Option<usize> {
    if anchors.is_empty() {
        return None;
    }
    hits.iter()
        .enumerate()
        .filter(|(k, _)| !taken(*k))
        .filter_map(|(k, (t, from, h))| {
            let (lo, hi) = t.call_extent(*h, *from)?;
            anchors
                .iter()
                .all(|(file, a)| *file == t.file() && (lo..hi).contains(a))
                .then_some((hi - lo, k))
        })
        .min()
        .map(|(_, k)| k)
}

/// The closure types a callee's printed form names, in order:
/// `{closure@src/lib.rs:4:31: 4:39}` in `reduce::<i32, {closure@…}>`.
fn mentioned_closures(text: &str) -> Vec<Ty> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("{closure@") {
        let Some(len) = rest[at..].find('}') else {
            break;
        };
        out.push(Ty::parse(&rest[at..at + len + 1]));
        rest = &rest[at + len + 1..];
    }
    out
}

fn last_segment(path: &str) -> &str {
    // `a::b::helper` → `helper`; `<i32 as Ord>::max` → `max`.
    path.rsplit("::").next().unwrap_or(path)
}

/// A closure's identity is its span (MIR names the type by it).
/// The closure bodies by closure type. MIR prints a closure's type without
/// its parent's generic arguments, so the closures of a generic function
/// and of each of its instances (`lerp::{closure#0}`,
/// `lerp::<i16>::{closure#0}`) share one type: a caller gets the one whose
/// name shares the longest prefix with its own, an instance's before the
/// generic body's.
/// A body that names a closure: its name, and whether it is generic.
#[derive(Clone, Copy)]
struct Caller<'a> {
    name: &'a str,
    generic: bool,
}

impl<'a> Caller<'a> {
    fn of(b: &'a Body) -> Caller<'a> {
        Caller {
            name: &b.name,
            generic: !b.generic_params.is_empty(),
        }
    }
}

struct ClosureBodies {
    by_key: BTreeMap<String, Vec<(String, bool)>>,
}

impl ClosureBodies {
    fn new(bodies: &[Body]) -> ClosureBodies {
        let mut by_key: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
        for b in bodies.iter().filter(|b| b.kind == BodyKind::Closure) {
            if let Some(key) = env_type(b).and_then(closure_key) {
                let instance = b.instance_of.is_some();
                by_key
                    .entry(key)
                    .or_default()
                    .push((b.name.clone(), instance));
            }
        }
        ClosureBodies { by_key }
    }

    fn get(&self, key: &str, caller: Caller<'_>) -> Option<&String> {
        // A generic body's own closures are generic; an instance's, or a
        // concrete caller's, are instances.
        let (caller, want_instance) = (caller.name, !caller.generic);
        let shared = |name: &str| {
            name.bytes()
                .zip(caller.bytes())
                .take_while(|(a, b)| a == b)
                .count()
        };
        self.by_key
            .get(key)?
            .iter()
            .max_by_key(|(name, instance)| (shared(name), *instance == want_instance))
            .map(|(name, _)| name)
    }
}

/// `#[test]` (in a crate built with `--test`) makes a `const` of the test
/// function's own path, its descriptor, holding a closure that calls the
/// function: MIR prints them as `tests::t` and `tests::t::{closure#0}`,
/// names the function and its own first closure also have. Such a const
/// and its closures are renamed `tests::t::{const}` and
/// `tests::t::{const}::{closure#0}`, so that each name is one body's.
fn separate_test_descriptors(bodies: &mut [Body]) {
    let fns: BTreeSet<String> = bodies
        .iter()
        .filter(|b| b.kind == BodyKind::Fn)
        .map(|b| b.name.clone())
        .collect();
    let mut renamed: Vec<(String, BTreeSet<String>)> = Vec::new();
    for b in bodies.iter_mut() {
        if b.kind == BodyKind::Const && fns.contains(&b.name) {
            let closures = b.locals.iter().filter_map(|l| closure_key(&l.ty)).collect();
            renamed.push((b.name.clone(), closures));
            b.name = format!("{}::{{const}}", b.name);
        }
    }
    for b in bodies.iter_mut().filter(|b| b.kind == BodyKind::Closure) {
        let Some(key) = env_type(b).and_then(closure_key) else {
            continue;
        };
        for (item, closures) in &renamed {
            if closures.contains(&key) {
                if let Some(rest) = b.name.strip_prefix(item.as_str()) {
                    b.name = format!("{item}::{{const}}{rest}");
                }
            }
        }
    }
}

/// Where a closure's head starts: its file and byte offset.
fn closure_head(sources: &Sources<'_>, ty: &Ty) -> Option<(FileId, usize)> {
    let (file, span) = closure_span(sources, ty)?;
    Some((file, sources.text(file)?.offset(span.lo_line, span.lo_col)?))
}

/// Resolution order (SPEC): local bodies, provider registrations, allowlisted
/// core scalar methods and intrinsics, panic entry points, else foreign.
fn resolve(
    path: &str,
    generics: &[Ty],
    names: &BTreeMap<String, String>,
    closure_bodies: &ClosureBodies,
    caller: Caller<'_>,
) -> Resolution {
    if path.starts_with("copy ") || path.starts_with("move ") || path.starts_with('_') {
        return Resolution::Indirect;
    }
    if let Some(body) = names.get(path) {
        return Resolution::Local { body: body.clone() };
    }
    // `<{closure@…} as Fn<(i32, i32)>>::call`: a call of a closure of this file.
    if let Some(inner) = path.strip_prefix('<') {
        if let Some((self_ty, _)) = inner.split_once(" as ") {
            if let Some(body) =
                closure_key(&Ty::parse(self_ty)).and_then(|k| closure_bodies.get(&k, caller))
            {
                return Resolution::Local { body: body.clone() };
            }
            if self_ty.starts_with("fn(") {
                return Resolution::Indirect;
            }
        }
    }
    if let Some(r) = registry::registration(path) {
        return Resolution::Registration {
            function: r.display_name(),
            provider: r.provider,
        };
    }
    if let Some((method, ty)) = registry::core_scalar(path) {
        return Resolution::CoreScalar { method, ty };
    }
    if let Some(method) = registry::core_intrinsic(path, !generics.is_empty()) {
        let suffix = ["f16", "f32", "f64", "f128"]
            .into_iter()
            .find(|s| method.ends_with(s))
            .unwrap_or("");
        let ty = generics
            .first()
            .map(|t| t.to_string())
            .unwrap_or_else(|| suffix.to_string());
        return Resolution::CoreScalar { method, ty };
    }
    if let Some((method, ty)) = registry::cmath(path) {
        return Resolution::CoreScalar { method, ty };
    }
    if registry::is_ub_check(path) {
        return Resolution::CoreScalar {
            method: "precondition_check".into(),
            ty: String::new(),
        };
    }
    if registry::is_panic_path(path) {
        return Resolution::Panic {
            function: path.to_string(),
        };
    }
    Resolution::Foreign {
        link_name: None,
        extern_c: false,
    }
}

fn closure_facts(
    body: &Body,
    all: &[Body],
    sources: &Sources<'_>,
    extent: Option<Extent>,
) -> Option<Closure> {
    let env = body.locals.get(1)?;
    let (kind, closure_ty) = match &env.ty {
        Ty::Ref {
            mutable: false,
            inner,
        } => (ClosureKind::Fn, (**inner).clone()),
        Ty::Ref {
            mutable: true,
            inner,
        } => (ClosureKind::FnMut, (**inner).clone()),
        t @ Ty::Closure { .. } => (ClosureKind::FnOnce, t.clone()),
        _ => return None,
    };
    let (file, span) = closure_span(sources, &closure_ty)?;
    let text = sources.text(file);
    let extent = extent.map(|(_, range)| range);
    let params = body.locals[2..=body.arg_count as usize]
        .iter()
        .map(|l| l.ty.clone())
        .collect();
    let ret = body.locals[0].ty.clone();

    // Fields from the construction site: names in field order, operand types.
    let mut fields: Vec<(String, Option<Ty>)> = Vec::new();
    'outer: for b in all {
        for block in &b.blocks {
            for s in &block.statements {
                let StatementKind::Assign { rvalue, .. } = &s.kind else {
                    continue;
                };
                if let Rvalue::Aggregate {
                    kind: AggregateKind::Closure { ty },
                    fields: fs,
                } = &**rvalue
                {
                    if *ty == closure_ty {
                        fields = fs
                            .iter()
                            .enumerate()
                            .map(|(i, (name, op))| {
                                (
                                    name.clone().unwrap_or_else(|| format!("{i}")),
                                    operand_ty(b, op),
                                )
                            })
                            .collect();
                        break 'outer;
                    }
                }
            }
        }
    }
    // Debug lines in the body name captures and give their exact access path.
    let self_deref = kind != ClosureKind::FnOnce;
    let mut from_debug: BTreeMap<u32, (String, Ty, CaptureMode)> = BTreeMap::new();
    for d in &body.debug_vars {
        let Some((index, ty, rest)) = d.place.as_ref().and_then(|p| env_field(p, self_deref))
        else {
            continue;
        };
        let mode = match (rest, ty) {
            ([], _) => CaptureMode::ByValue,
            ([Projection::Deref], Ty::Ref { mutable: true, .. }) => CaptureMode::ByMutRef,
            ([Projection::Deref], _) => CaptureMode::ByRef,
            _ => CaptureMode::ByValue,
        };
        // Precise captures of a field are named `p__a` by rustc.
        from_debug.insert(index, (d.name.replace("__", "."), ty.clone(), mode));
    }
    // Fields the body reads that neither names: a capture of a zero-size
    // value (`debug x => const ();`) of a closure that is never built.
    let read = env_fields_read(body, self_deref);
    let count = fields
        .len()
        .max(from_debug.keys().last().map_or(0, |k| *k as usize + 1))
        .max(read.keys().last().map_or(0, |k| *k as usize + 1));
    let mut captures = Vec::new();
    for i in 0..count {
        let unknown = || {
            read.get(&(i as u32))
                .cloned()
                .unwrap_or(Ty::Other("?".into()))
        };
        let (name, ty, mode) = match (from_debug.get(&(i as u32)), fields.get(i)) {
            (Some((n, t, m)), _) => (n.clone(), t.clone(), *m),
            (None, Some((n, Some(t)))) => (n.clone(), t.clone(), CaptureMode::ByValue),
            (None, Some((n, None))) => (n.clone(), unknown(), CaptureMode::ByValue),
            (None, None) => (format!("{i}"), unknown(), CaptureMode::ByValue),
        };
        let span = match (text, extent) {
            (Some(t), Some((lo, hi))) => {
                let head_end = t.offset(span.hi_line, span.hi_col).unwrap_or(lo);
                // For `p.a`, find `p.a` itself, else `p` (the root).
                let root = name.split('.').next().unwrap_or(&name);
                t.find_word((head_end, hi), &name, false)
                    .first()
                    .copied()
                    .or_else(|| t.find_word((head_end, hi), root, false).first().copied())
            }
            _ => None,
        };
        captures.push(Capture {
            name,
            field: i as u32,
            ty,
            mode,
            span,
        });
    }
    Some(Closure {
        body: body.name.clone(),
        ty: closure_ty.clone(),
        span,
        kind,
        params,
        ret,
        captures,
        layout: None,
    })
}

/// The environment field a place of a closure body names: `(*_1).N`
/// (`_1.N` for an `FnOnce` body, whose environment is not behind a
/// reference), with the field's type and the projections after it.
fn env_field(place: &Place, self_deref: bool) -> Option<(u32, &Ty, &[Projection])> {
    if place.local != Local(1) {
        return None;
    }
    match (self_deref, place.projections.as_slice()) {
        (true, [Projection::Deref, Projection::Field { index, ty }, rest @ ..])
        | (false, [Projection::Field { index, ty }, rest @ ..]) => Some((*index, ty, rest)),
        _ => None,
    }
}

/// The environment fields a closure body reads (`(*_1).N`), with their types.
fn env_fields_read(body: &Body, self_deref: bool) -> BTreeMap<u32, Ty> {
    let mut out = BTreeMap::new();
    let mut see = |p: &Place| {
        if let Some((index, ty, _)) = env_field(p, self_deref) {
            out.entry(index).or_insert_with(|| ty.clone());
        }
    };
    for block in &body.blocks {
        for s in &block.statements {
            if let StatementKind::Assign { rvalue, .. } = &s.kind {
                if let Rvalue::Ref { place, .. }
                | Rvalue::RawPtr { place, .. }
                | Rvalue::Discriminant(place)
                | Rvalue::Len(place) = &**rvalue
                {
                    see(place);
                }
            }
        }
    }
    let mut copy = body.clone();
    for_each_operand(&mut copy, |o| {
        if let Operand::Copy(p) | Operand::Move(p) = o {
            see(p);
        }
    });
    out
}

fn registrations(
    bodies: &[Body],
    closure_bodies: &ClosureBodies,
    sources: &Sources<'_>,
    extents: &BTreeMap<String, Extent>,
) -> Vec<Registration> {
    // A generic body with instances registers through them, each with its
    // element types (the program finds the kernel by call site and types).
    let instantiated: BTreeSet<&str> = bodies
        .iter()
        .filter_map(|b| b.instance_of.as_deref())
        .collect();
    // Every closure head of the crate, by file and byte offset.
    let heads: BTreeSet<(FileId, usize)> = bodies
        .iter()
        .filter(|b| b.kind == BodyKind::Closure)
        .filter_map(|b| closure_head(sources, env_type(b)?))
        .collect();
    let mut taken: BTreeSet<(FileId, usize)> = BTreeSet::new();
    let mut out = Vec::new();
    for b in bodies {
        let mut nth: BTreeMap<String, usize> = BTreeMap::new();
        let chains = chain_sites(b, sources, extents);
        for block in &b.blocks {
            let TerminatorKind::Call { callee, args, .. } = &block.terminator.kind else {
                continue;
            };
            let Resolution::Registration { function, provider } = &callee.resolution else {
                continue;
            };
            let Some(spec) = registry::registration(&callee.path) else {
                continue;
            };
            let arg_types: Vec<Ty> = args
                .iter()
                .map(|a| {
                    operand_ty(b, a)
                        .or_else(|| fn_item_ty(a, &callee.generics))
                        .unwrap_or_else(|| Ty::Other(operand_text(a)))
                })
                .collect();
            let callback_arg = match spec.callback {
                registry::CallbackSource::Arg(i) => args.get(i),
                registry::CallbackSource::NaturalOrder
                | registry::CallbackSource::Chain
                | registry::CallbackSource::ByKey { .. } => None,
            };
            // A `par_iter` chain or a by-key's two closures: the body
            // `chain::synthesize` wrote.
            let chain = matches!(
                spec.callback,
                registry::CallbackSource::Chain | registry::CallbackSource::ByKey { .. }
            );
            let cb_ty = callback_arg
                .and_then(|a| operand_ty(b, a))
                .or_else(|| callee.generics.last().cloned());
            let natural = spec.callback == registry::CallbackSource::NaturalOrder;
            let callback = match (&cb_ty, callback_arg) {
                _ if chain => match &callee.callback_instance {
                    Some(body) => Callback::Closure { body: body.clone() },
                    None => Callback::Other {
                        ty: arg_types
                            .first()
                            .map_or_else(|| "unknown".into(), Ty::to_string),
                    },
                },
                // `sort`: the core model's comparator of the element type,
                // when it has one (else admission says the type has no
                // order the GPU sorts by).
                _ if natural => {
                    match crate::core_model::natural_order_callback(&callee.path, &callee.generics)
                        .filter(|name| bodies.iter().any(|b| b.name == *name))
                    {
                        Some(body) => Callback::FnItem { body },
                        None => Callback::Other {
                            ty: callee
                                .generics
                                .first()
                                .map_or_else(|| "unknown".into(), Ty::to_string),
                        },
                    }
                }
                (Some(Ty::Closure { .. }), _) if callee.callback_instance.is_some() => {
                    Callback::Closure {
                        body: callee.callback_instance.clone().unwrap_or_default(),
                    }
                }
                (Some(t @ Ty::Closure { .. }), _) => {
                    match closure_bodies.get(&t.to_string(), Caller::of(b)) {
                        Some(body) => Callback::Closure { body: body.clone() },
                        None => Callback::Other { ty: t.to_string() },
                    }
                }
                // An instance of a generic fn (`larger::<i32>`) is a body of
                // that name; any other fn item is named without generics.
                (_, Some(Operand::Const(Constant::FnItem(name)))) => Callback::FnItem {
                    body: match bodies.iter().any(|b| b.name == *name) {
                        true => name.clone(),
                        false => crate::parse::split_generics(name).0,
                    },
                },
                (Some(Ty::FnDef { name, .. }), _) => Callback::FnItem { body: name.clone() },
                (Some(t), _) => Callback::Other { ty: t.to_string() },
                (None, _) => Callback::Other {
                    ty: "unknown".into(),
                },
            };
            // A generic function's registration is built through its
            // instances (each with its element types; the program finds the
            // kernel by call site and types); one that no concrete code
            // instantiates stays, and admission reports its type parameters.
            let instantiated_callback = match &callback {
                Callback::Closure { body } | Callback::FnItem { body } => {
                    instantiated.contains(body.as_str())
                }
                Callback::Other { .. } => false,
            };
            // A `sort` of a type parameter, in a generic function that
            // rustc inlined into concrete callers: those copies register.
            let inlined_natural = natural
                && matches!(&callback, Callback::Other { .. })
                && bodies.iter().any(|other| {
                    other
                        .inlined
                        .iter()
                        .any(|name| crate::parse::split_generics(name).0 == b.name)
                });
            if !b.generic_params.is_empty()
                && (instantiated.contains(b.name.as_str())
                    || instantiated_callback
                    || inlined_natural)
            {
                continue;
            }
            // Source location: for a closure, the call that encloses its
            // head, else (a closure bound by `let`, or made by another
            // function) the first call not yet taken that encloses no
            // closure, after the head when the head is in the caller; the
            // calls of functions inlined into the caller count after its
            // own. For a fn item, the n-th such call in the caller.
            let k = nth.entry(function.clone()).or_insert(0);
            // The closure that places the call: the callback, or a
            // by-key's `same` (its first closure), as one.
            let [by_key_same, _] = crate::chain::by_key_closures(b, callee, args);
            let placing = match (&by_key_same, &callback) {
                (Some(t), _) => closure_bodies
                    .get(&t.to_string(), Caller::of(b))
                    .map(|body| (t, body.clone())),
                (None, Callback::Closure { body }) if !chain => {
                    cb_ty.as_ref().map(|t| (t, body.clone()))
                }
                _ => None,
            };
            let head = placing.as_ref().and_then(|(t, _)| closure_head(sources, t));
            let span = match (placing.as_ref().map(|(_, body)| body), head) {
                (Some(closure), Some(head)) => {
                    let own: Vec<Extent> = extents.get(&b.name).copied().into_iter().collect();
                    // A closure handed to a function that rustc inlined
                    // here (`helper(&gpu, |a, b| …)`, where `helper` calls
                    // `gpu.reduce`) registers at that function's call.
                    let through = inlined_callee_enclosing(sources, &own, b, head, extents);
                    let hints = SiteHints {
                        binding: let_binding(sources, head),
                        owner: closure.rsplit_once("::{closure#").map(|(owner, _)| {
                            last_segment(&crate::parse::split_generics(owner).0).to_string()
                        }),
                    };
                    // Instances of one generic function share its calls.
                    let mut shared = BTreeSet::new();
                    let taken = if b.instance_of.is_some() {
                        &mut shared
                    } else {
                        &mut taken
                    };
                    match through {
                        Some(region) => closure_site(
                            sources,
                            &[region],
                            function,
                            head,
                            &heads,
                            &hints,
                            &mut BTreeSet::new(),
                        ),
                        None => closure_site(sources, &own, function, head, &heads, &hints, taken),
                    }
                }
                // A chain: where `chain_sites` placed it.
                _ if spec.callback == registry::CallbackSource::Chain => {
                    chains.get(&block.id).copied().flatten()
                }
                // The k-th call of the function, as the host API's method
                // or as `native`'s free function as the registration is
                // (`gpu.sort(…)` and `native::sort(…)` share a name): in
                // the caller's own text, then in each function rustc
                // inlined into it, once per inlined copy (a generic
                // helper inlined for two element types calls it twice).
                _ => call_sites(b, sources, extents, function, spec, false, args.len())
                    .get(*k)
                    .map(|(_, _, s)| *s),
            };
            *k += 1;
            out.push(Registration {
                caller: b.name.clone(),
                block: block.id,
                mir_line: block.terminator.mir_line,
                span,
                function: function.clone(),
                provider: *provider,
                callback,
                generics: callee.generics.clone(),
                arg_types,
            });
        }
    }
    out
}

/// The occurrences of a registration's `function` that `b` may call, as
/// the host API's method or as `native`'s free function as the
/// registration is (`gpu.sort(…)` and `native::sort(…)` share a name),
/// ending a `par_iter` chain or not as `chain` says, in order: in the
/// caller's own text, then in each function rustc inlined into it, once
/// per inlined copy (a generic helper inlined for two element types calls
/// it twice). Only calls with the registration's `args` arguments count
/// (the receiver is one of them in a method call): `want.sort()`, std's
/// slice method, is not `gpu.sort(&d)`. Each with its text and the offset
/// it reads back to.
fn call_sites<'s>(
    b: &Body,
    sources: &'s Sources<'_>,
    extents: &BTreeMap<String, Extent>,
    function: &str,
    spec: &registry::RegistrationFn,
    chain: bool,
    args: usize,
) -> Vec<(&'s SourceText<'s>, usize, Span)> {
    let mut regions: Vec<Extent> = extents.get(&b.name).copied().into_iter().collect();
    regions.extend(
        b.inlined
            .iter()
            .filter_map(|name| extents.get(&crate::parse::split_generics(name).0).copied()),
    );
    regions
        .into_iter()
        .flat_map(|(file, (lo, hi))| {
            let Some(t) = sources.text(file) else {
                return Vec::new();
            };
            t.find_word((lo, hi), last_segment(function), true)
                .into_iter()
                .filter(|&at| called_as(spec, t.text_before(at)))
                .filter(|&at| chain == chain_call(t.text_before(at)))
                .filter(|&at| {
                    let dot = t.text_before(at).trim_end().ends_with('.');
                    t.call_args(at).is_none_or(|(open, close)| {
                        argument_count(t.slice(open + 1, close - 1)) + usize::from(dot) == args
                    })
                })
                .map(|at| (t, lo, at))
                .collect()
        })
        .collect()
}

/// Where each `par_iter` chain that `b` ends is called, by block id. A
/// chain whose type names closures (its stages', its terminal's) is the
/// innermost call of its terminal that holds them all; the others take
/// the calls left in order, the k-th such chain of a terminal the k-th.
/// Block order is not source order once rustc optimises (a loop's blocks
/// move), so the closures, whose spans are exact, go first.
fn chain_sites(
    b: &Body,
    sources: &Sources<'_>,
    extents: &BTreeMap<String, Extent>,
) -> BTreeMap<BlockId, Option<Span>> {
    let mut calls = Vec::new();
    for block in &b.blocks {
        let TerminatorKind::Call { callee, args, .. } = &block.terminator.kind else {
            continue;
        };
        let Resolution::Registration { function, .. } = &callee.resolution else {
            continue;
        };
        let Some(spec) = registry::registration(&callee.path) else {
            continue;
        };
        if spec.callback != registry::CallbackSource::Chain {
            continue;
        }
        let mut named = mentioned_closures(&callee.text);
        if let Some(t) = args.first().and_then(|a| operand_ty(b, a)) {
            named.extend(mentioned_closures(&t.to_string()));
        }
        let anchors: Vec<(FileId, usize)> = named
            .iter()
            .filter_map(|c| closure_head(sources, c))
            .collect();
        calls.push(Unplaced {
            id: block.id,
            key: function.clone(),
            hits: call_sites(b, sources, extents, function, spec, true, args.len()),
            anchors,
        });
    }
    place(calls).into_iter().collect()
}

/// The arguments of a call's argument list `text` (without its
/// parentheses): its commas outside brackets, a closure's parameter list
/// (`|a, b|`) and a turbofish (`::<A, B>`), a trailing one not counting.
fn argument_count(text: &str) -> usize {
    let toks: Vec<&str> = crate::source::lex(text)
        .into_iter()
        .map(|r| &text[r])
        .collect();
    let mut count = 0;
    let mut depth = 0i32;
    // Whether the argument being read has a token yet.
    let mut started = false;
    let mut i = 0;
    while i < toks.len() {
        let tok = toks[i];
        match tok {
            "," if depth == 0 => {
                count += usize::from(started);
                started = false;
                i += 1;
                continue;
            }
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            // A closure's parameters, where an argument starts (or after
            // `move`): to the `|` that closes them.
            "|" if !started || toks[i - 1] == "move" => {
                let mut inner = 0i32;
                i += 1;
                while i < toks.len() && !(toks[i] == "|" && inner == 0) {
                    match toks[i] {
                        "(" | "[" | "{" => inner += 1,
                        ")" | "]" | "}" => inner -= 1,
                        _ => {}
                    }
                    i += 1;
                }
            }
            // A turbofish: to its closing `>`.
            "<" if i >= 2 && toks[i - 1] == ":" && toks[i - 2] == ":" => {
                let mut angle = 1;
                while angle > 0 && i + 1 < toks.len() {
                    i += 1;
                    match toks[i] {
                        "<" => angle += 1,
                        ">" if toks[i - 1] != "-" => angle -= 1,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        started = true;
        i += 1;
    }
    count + usize::from(started)
}

/// Whether a method call whose text before the method's name is `before`
/// ends a `par_iter` chain written in one expression
/// (`gpu.par_iter(&x).map(f).sum(`), not a `std` iterator's
/// (`v.iter().sum(`): the receiver, read back over balanced brackets to
/// where its expression starts, calls `par_iter`.
fn chain_call(before: &str) -> bool {
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in before.char_indices().rev() {
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' if depth > 0 => depth -= 1,
            '(' | '[' | '{' | ';' | ',' | '=' if depth == 0 => {
                start = i + 1;
                break;
            }
            _ => {}
        }
    }
    before[start..].contains("par_iter")
}

/// Whether a call of a registration's function whose text before the
/// function's name is `before` calls it as the registration is: as the
/// host API's method (`gpu.sort(`, `Gpu::sort(`) or as `native`'s free
/// function (`native::sort(`, `sort(`).
fn called_as(spec: &registry::RegistrationFn, before: &str) -> bool {
    let before = before.trim_end();
    let method = before.ends_with('.')
        || spec.receiver.is_some_and(|ty| {
            before
                .strip_suffix("::")
                .and_then(|p| {
                    p.rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                })
                .is_some_and(|p| p == ty)
        });
    method == spec.receiver.is_some()
}

/// The source extent of the function inlined into `b` whose call, in `b`'s
/// own source, encloses the closure head `head` in its arguments.
fn inlined_callee_enclosing(
    sources: &Sources<'_>,
    own: &[Extent],
    b: &Body,
    head: (FileId, usize),
    extents: &BTreeMap<String, Extent>,
) -> Option<Extent> {
    let &(file, range) = own.first()?;
    let t = sources.text(file)?;
    b.inlined.iter().find_map(|name| {
        let callee = crate::parse::split_generics(name).0;
        let region = *extents.get(&callee)?;
        t.find_word(range, last_segment(&callee), true)
            .into_iter()
            .filter_map(|call| t.call_args(call))
            .any(|(open, close)| head.0 == file && open < head.1 && head.1 < close)
            .then_some(region)
    })
}

/// What names a closure that is not written inside its registration's
/// call: the variable a `let` binds it to, and the function that makes it
/// (the item its body belongs to, `capped` for `capped::{closure#0}`).
struct SiteHints {
    binding: Option<String>,
    owner: Option<String>,
}

/// `op` when the closure head at `head` follows `let op =` (or
/// `let mut op: T =`, `let op = move`) on its line.
fn let_binding(sources: &Sources<'_>, head: (FileId, usize)) -> Option<String> {
    let t = sources.text(head.0)?;
    let before = t.slice(0, head.1);
    let line = before.rsplit('\n').next()?;
    let toks: Vec<&str> = lex(line).into_iter().map(|r| &line[r]).collect();
    let mut k = toks.len();
    if k > 0 && toks[k - 1] == "move" {
        k -= 1;
    }
    if k == 0 || toks[k - 1] != "=" {
        return None;
    }
    let at = toks[..k].iter().rposition(|t| *t == "let")?;
    let name = toks[at + 1..k - 1].iter().find(|t| **t != "mut")?;
    name.chars()
        .all(|c| c.is_alphanumeric() || c == '_')
        .then(|| name.to_string())
}

/// The call of `function` that registers the closure whose head is at
/// `head`, in the first of `regions` that has one: the call whose
/// arguments enclose the head; else one whose arguments name the `let`
/// binding of the closure (after the head) or call the function that makes
/// it; else the first call not yet `taken` whose arguments enclose no
/// closure head, after the head when the head lies in the same region.
fn closure_site(
    sources: &Sources<'_>,
    regions: &[Extent],
    function: &str,
    head: (FileId, usize),
    heads: &BTreeSet<(FileId, usize)>,
    hints: &SiteHints,
    taken: &mut BTreeSet<(FileId, usize)>,
) -> Option<Span> {
    let word = last_segment(function);
    let mut calls = Vec::new();
    for &(file, (lo, hi)) in regions {
        let Some(t) = sources.text(file) else {
            continue;
        };
        for call in t.find_word((lo, hi), word, true) {
            let (Some(at), Some((open, close))) = (t.span_start(call), t.call_args(call)) else {
                continue;
            };
            calls.push((file, at, open, close, call, (lo, hi)));
        }
    }
    let encloses = |file: FileId, open: usize, close: usize, h: (FileId, usize)| {
        h.0 == file && open < h.1 && h.1 < close
    };
    let names = |file: FileId, open: usize, close: usize, name: &str, call: bool| {
        sources
            .text(file)
            .is_some_and(|t| !t.find_word((open, close), name, call).is_empty())
    };
    let inline = calls
        .iter()
        .find(|&&(file, _, open, close, _, _)| encloses(file, open, close, head));
    let bound = || {
        let name = hints.binding.as_deref()?;
        calls.iter().find(|&&(file, at, open, close, _, _)| {
            !taken.contains(&(file, at))
                && (file, at) > head
                && names(file, open, close, name, false)
        })
    };
    let made = || {
        let owner = hints.owner.as_deref()?;
        calls.iter().find(|&&(file, at, open, close, _, _)| {
            !taken.contains(&(file, at)) && names(file, open, close, owner, true)
        })
    };
    let first_free = || {
        calls.iter().find(|&&(file, at, open, close, _, (lo, hi))| {
            let before_head = head.0 == file && lo <= head.1 && head.1 < hi && at < head.1;
            let encloses_any = heads.iter().any(|&h| encloses(file, open, close, h));
            !(taken.contains(&(file, at)) || encloses_any || before_head)
        })
    };
    let found = *inline.or_else(bound).or_else(made).or_else(first_free)?;
    taken.insert((found.0, found.1));
    Some(found.4)
}

/// A fn item passed as the callback whose body the MIR does not hold.
///
/// A pure core function (`i32::wrapping_add`, `core::cmp::max`, `i32::max`)
/// gets one here, `_0 = CALLEE(copy _1, copy _2); return`, named after the
/// fn item's type (`std::cmp::max::<i32>`), so that admission, lowering and
/// the thunk treat it like any local fn item; the call resolves against the
/// same capability table as a call inside a closure. Any other (a function
/// of another crate) becomes a callback of its type, which admission
/// rejects at the call.
fn fn_items_without_bodies(bodies: &mut Vec<Body>, registrations: &mut [Registration]) {
    for r in registrations.iter_mut() {
        let Callback::FnItem { body } = &r.callback else {
            continue;
        };
        if bodies.iter().any(|b| b.name == *body) {
            continue;
        }
        let def = r
            .generics
            .iter()
            .find(|t| matches!(t, Ty::FnDef { name, .. } if crate::parse::split_generics(name).0 == *body))
            .cloned();
        match def.as_ref().and_then(core_forwarding) {
            Some((name, path, resolution, params, ret)) => {
                if !bodies.iter().any(|b| b.name == name) {
                    bodies.push(forwarding_body(&name, &path, resolution, &params, ret, r));
                }
                r.callback = Callback::FnItem { body: name };
            }
            None => {
                let ty = def.map_or_else(|| format!("fn item `{body}`"), |t| t.to_string());
                r.callback = Callback::Other { ty };
            }
        }
    }
}

/// What the forwarding body of a core fn item `def` calls: its name, the
/// callee's core path and resolution, its parameter and return types.
/// `None` for a fn item the capability table does not hold.
fn core_forwarding(def: &Ty) -> Option<(String, String, Resolution, Vec<Ty>, Ty)> {
    let Ty::FnDef { sig, name } = def else {
        return None;
    };
    let (params, ret) = fn_sig(sig)?;
    let path = core_callee_path(name, &params)?;
    let (method, ty) = registry::core_scalar(&path)?;
    Some((
        name.clone(),
        path,
        Resolution::CoreScalar { method, ty },
        params,
        ret,
    ))
}

/// `fn(i32, i32) -> i32` → the parameter types and the return type.
fn fn_sig(sig: &str) -> Option<(Vec<Ty>, Ty)> {
    let rest = sig.strip_prefix("fn(")?;
    let close = rest.rfind(") -> ")?;
    let params = crate::ty::split_top(&rest[..close], ',')
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(Ty::parse)
        .collect();
    Some((params, Ty::parse(&rest[close + 5..])))
}

/// The core path a fn item names, spelled as the capability table reads
/// it: methods as they are (`core::num::<impl i32>::wrapping_add`,
/// `<i32 as Ord>::max`); `core::cmp::max::<T>` and `min` as `<T as Ord>::…`.
fn core_callee_path(name: &str, params: &[Ty]) -> Option<String> {
    let base = crate::parse::split_generics(name).0;
    if registry::core_scalar(&base).is_some() {
        return Some(base);
    }
    let method = match base.as_str() {
        "core::cmp::max" | "std::cmp::max" => "max",
        "core::cmp::min" | "std::cmp::min" => "min",
        _ => return None,
    };
    let ty = params.first()?.scalar()?;
    Some(format!("<{} as Ord>::{method}", ty.name()))
}

fn forwarding_body(
    name: &str,
    path: &str,
    resolution: Resolution,
    params: &[Ty],
    ret: Ty,
    r: &Registration,
) -> Body {
    use crate::pmir::{Block, BlockId, Callee, LocalDecl, Terminator, UnwindAction};
    let locals = std::iter::once(ret)
        .chain(params.iter().cloned())
        .enumerate()
        .map(|(i, ty)| LocalDecl {
            local: Local(i as u32),
            ty,
            mutable: false,
        })
        .collect();
    let args = (1..=params.len())
        .map(|i| Operand::Copy(Place::local(Local(i as u32))))
        .collect();
    let call = TerminatorKind::Call {
        dest: Place::local(Local(0)),
        callee: Callee {
            text: path.to_string(),
            path: path.to_string(),
            generics: Vec::new(),
            resolution,
            span: r.span,
            callback_instance: None,
        },
        args,
        target: Some(BlockId(1)),
        unwind: UnwindAction::Continue,
    };
    let block = |id: u32, kind: TerminatorKind| Block {
        id: BlockId(id),
        mir_line: r.mir_line,
        statements: Vec::new(),
        terminator: Terminator {
            mir_line: r.mir_line,
            kind,
        },
    };
    Body {
        name: name.to_string(),
        kind: BodyKind::Fn,
        mir_line: r.mir_line,
        span: r.span,
        arg_count: params.len() as u32,
        locals,
        debug_vars: Vec::new(),
        inlined: Vec::new(),
        instance_of: None,
        generic_params: Vec::new(),
        blocks: vec![block(0, call), block(1, TerminatorKind::Return)],
    }
}

/// The type of a fn item operand (`add`), from the call's generic arguments.
fn fn_item_ty(op: &Operand, generics: &[Ty]) -> Option<Ty> {
    let Operand::Const(Constant::FnItem(name)) = op else {
        return None;
    };
    let base = crate::parse::split_generics(name).0;
    generics
        .iter()
        .find(|g| matches!(g, Ty::FnDef { name: n, .. } if *n == base || *n == *name))
        .cloned()
}

/// Text for a type we cannot compute; `Ty::Other` keeps it opaque.
fn operand_text(op: &Operand) -> String {
    match op {
        Operand::Const(Constant::FnItem(n)) => n.clone(),
        Operand::Const(Constant::Other(t)) => t.clone(),
        _ => "{unknown}".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::argument_count;

    #[test]
    fn arguments_are_counted_past_closures_turbofishes_and_brackets() {
        for (text, n) in [
            ("", 0),
            ("  ", 0),
            ("&d", 1),
            ("&d,", 1),
            ("&x, 0, add", 3),
            ("&d, |a, b| b.cmp(a)", 2),
            ("&d, move |a: &(u32, u32), b: &(u32, u32)| a.0.cmp(&b.1)", 2),
            ("&x, || 1", 2),
            ("f(a, b), [1, 2], { let c = (3, 4); c }", 3),
            (
                "std::mem::size_of::<(u32, u32)>(), Vec::<HashMap<u8, u16>>::new()",
                2,
            ),
            ("&d, |a| -> u32 { a | 1 }, 7", 3),
            ("a | b, c", 2),
        ] {
            assert_eq!(argument_count(text), n, "{text}");
        }
    }
}
