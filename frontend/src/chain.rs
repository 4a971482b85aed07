//! `par_iter` chains: `gpu.par_iter(&x).map(f).filter(p).sum()` compiled
//! as one callback.
//!
//! The chain's closures are in its type, which the terminal's call prints
//! (`ParIter::<'_, f32, native::gpu::Filter<native::gpu::Map<(), {closure@…},
//! f32>, {closure@…}>>::sum(move _9)`). For each such call this module
//! writes one closure body of its own, in MIR text as rustc prints it, and
//! parses it with the crate's bodies: its environment is the chain object
//! (`native::gpu::Chain { stages, terminal }`, `#[repr(C)]`), whose fields
//! are the chain's closures, captured by value in chain order, and the
//! terminal's closure last; its type is a synthetic closure type
//! (`{closure@rmir-chain:3:1: 3:1}`), and the call names its body
//! (`Callee::callback_instance`), so the registration's callback is this
//! body, admitted and lowered like any closure. Its layout is the
//! `#[repr(C)]` nesting of the closures' measured layouts
//! ([`layout_of`]).
//!
//! The body takes `(mode: bool, x: T, a: R, b: R, out: &mut R) -> bool`
//! and does one of two things (`vocab::Shape::Chain`: the lowering makes
//! one thunk for each, with `mode` constant):
//! - `mode == false`, the stages: `x` through every `map` and `filter` in
//!   order; `false` when a filter drops it, else `true` with the value in
//!   `*out` (for `count`, `1_u64`; for `any`/`all`, the predicate's answer);
//! - `mode == true`, the terminal on two values (`collect` has none): `*out = a + b` (`sum`, with
//!   the build's overflow checks), `a * b`, `op(a, b)`, `a | b` (`any`),
//!   `a & b` (`all`); for a pick (`min*`, `max*`), whether `b`, the later
//!   element's value, wins over `a`: `min_by(c)` is `c(&a, &b) == Greater`,
//!   `max_by(c)` is `c(&a, &b) != Greater`, so ties go as `Iterator`'s.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::pmir::{
    operand_ty, Body, BodyKind, Callback, Callee, Capture, CaptureMode, Closure, ClosureKind,
    LeafLayout, ObjectLayout, Operand, Registration, TerminatorKind,
};
use crate::ty::{Scalar, Ty};

/// The file name of the chains' synthetic closure types.
pub const SYNTHETIC_FILE: &str = "rmir-chain";

/// Whether `ty` is the closure type of a chain's callback.
pub fn is_chain_closure(ty: &Ty) -> bool {
    matches!(ty, Ty::Closure { file, .. } if file == SYNTHETIC_FILE)
}

/// One stage of a chain.
#[derive(Debug, Clone, PartialEq)]
enum Stage {
    /// `map(f)`: the closure and the item type it yields.
    Map { closure: Ty, out: Ty },
    /// `filter(p)`: the closure, which takes `&Item`.
    Filter { closure: Ty },
    /// `enumerate()`: each item with its element's index, `(usize, Item)`.
    /// No closure (and no field of the environment).
    Enumerate,
}

impl Stage {
    /// The stage's closure: a field of the environment, in chain order.
    fn closure(&self) -> Option<&Ty> {
        match self {
            Stage::Map { closure, .. } | Stage::Filter { closure } => Some(closure),
            Stage::Enumerate => None,
        }
    }
}

/// A chain's terminal: what combines the values its stages keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Terminal {
    Sum,
    Product,
    Reduce,
    Count,
    Any,
    All,
    Min,
    Max,
    MinBy,
    MaxBy,
    MinByKey,
    MaxByKey,
    /// `collect`: the kept values, in order; no combine.
    Collect,
}

impl Terminal {
    fn of(function: &str) -> Option<Terminal> {
        Some(match function {
            "sum" => Terminal::Sum,
            "product" => Terminal::Product,
            "reduce" => Terminal::Reduce,
            "count" => Terminal::Count,
            "any" => Terminal::Any,
            "all" => Terminal::All,
            "min" => Terminal::Min,
            "max" => Terminal::Max,
            "min_by" => Terminal::MinBy,
            "max_by" => Terminal::MaxBy,
            "min_by_key" => Terminal::MinByKey,
            "max_by_key" => Terminal::MaxByKey,
            "collect" => Terminal::Collect,
            _ => return None,
        })
    }

    /// The call's argument that is the terminal's closure (`self` is 0).
    fn closure_arg(self) -> Option<usize> {
        match self {
            Terminal::Reduce => Some(2),
            Terminal::Any
            | Terminal::All
            | Terminal::MinBy
            | Terminal::MaxBy
            | Terminal::MinByKey
            | Terminal::MaxByKey => Some(1),
            _ => None,
        }
    }
}

/// The chain a `ParIter` type holds: its element type and its stages in
/// order. `None` for any other type.
fn chain_of(receiver: &Ty) -> Option<(Ty, Vec<Stage>)> {
    let Ty::Adt { path, args } = receiver else {
        return None;
    };
    if !is_api_type(path, "ParIter") {
        return None;
    }
    let types: Vec<&Ty> = args.iter().filter(|t| !is_lifetime(t)).collect();
    let mut out = Vec::new();
    match types.as_slice() {
        // `ParIter<'_, u64>`: no stages (the default, `()`, is not printed).
        [element] => Some(((*element).clone(), out)),
        [element, stages] => {
            stages_of(stages, &mut out)?;
            Some(((*element).clone(), out))
        }
        _ => None,
    }
}

fn stages_of(ty: &Ty, out: &mut Vec<Stage>) -> Option<()> {
    match ty {
        Ty::Tuple(fields) if fields.is_empty() => Some(()),
        Ty::Adt { path, args } if is_api_type(path, "Map") => {
            let [prev, closure, item] = args.as_slice() else {
                return None;
            };
            stages_of(prev, out)?;
            out.push(Stage::Map {
                closure: closure.clone(),
                out: item.clone(),
            });
            Some(())
        }
        Ty::Adt { path, args } if is_api_type(path, "Enumerate") => {
            let [prev] = args.as_slice() else {
                return None;
            };
            stages_of(prev, out)?;
            out.push(Stage::Enumerate);
            Some(())
        }
        Ty::Adt { path, args } if is_api_type(path, "Filter") => {
            let [prev, closure] = args.as_slice() else {
                return None;
            };
            stages_of(prev, out)?;
            out.push(Stage::Filter {
                closure: closure.clone(),
            });
            Some(())
        }
        _ => None,
    }
}

/// `ParIter`, `gpu::ParIter` or `native::gpu::ParIter`, as MIR trims it.
fn is_api_type(path: &str, name: &str) -> bool {
    let api = crate::registry::API_CRATE;
    let module = crate::registry::GPU_MODULE;
    path == name
        || path == format!("{module}::{name}")
        || path == format!("{api}::{module}::{name}")
}

fn is_lifetime(t: &Ty) -> bool {
    matches!(t, Ty::Other(s) if s.starts_with('\''))
}

/// Writes a closure body for every chain terminal's call in `bodies` (see
/// the module's documentation), names it in the call, and appends it.
/// A call whose chain or closures cannot be read is left as it is: its
/// registration then has no body, which admission reports.
pub fn synthesize(bodies: &mut Vec<Body>, overflow_checks: bool) {
    // A generic function's closures are written in its type parameters:
    // a chain of them is not compiled (admission says so).
    let closure_bodies: BTreeMap<String, (String, Vec<Ty>, Ty)> = bodies
        .iter()
        .filter(|b| b.kind == BodyKind::Closure && b.generic_params.is_empty())
        .filter_map(|b| {
            let env = crate::pmir::env_type(b)?;
            let params = b.locals[2..=b.arg_count as usize]
                .iter()
                .map(|l| l.ty.clone())
                .collect();
            Some((
                env.to_string(),
                (b.name.clone(), params, b.locals[0].ty.clone()),
            ))
        })
        .collect();
    let mut made = Vec::new();
    for b in bodies.iter_mut() {
        if !b.generic_params.is_empty() {
            continue;
        }
        // Each chain terminal's call: its block, chain and terminal.
        let mut calls = Vec::new();
        for (i, block) in b.blocks.iter().enumerate() {
            let TerminatorKind::Call { callee, args, .. } = &block.terminator.kind else {
                continue;
            };
            let Some(spec) = crate::registry::registration(&callee.path) else {
                continue;
            };
            if spec.callback != crate::registry::CallbackSource::Chain {
                continue;
            }
            let Some(terminal) = Terminal::of(spec.function) else {
                continue;
            };
            let Some((element, stages)) = args
                .first()
                .and_then(|a| operand_ty(b, a))
                .and_then(|t| chain_of(&t))
            else {
                continue;
            };
            // The closure is the call's last generic argument
            // (`reduce::<{closure@…}>`, `min_by_key::<u16, {closure@…}>`);
            // the argument itself may be a constant whose type MIR does
            // not print.
            let terminal_closure = match terminal.closure_arg() {
                Some(i) => match callee
                    .generics
                    .last()
                    .cloned()
                    .or_else(|| args.get(i).and_then(|a| operand_ty(b, a)))
                {
                    Some(t @ Ty::Closure { .. }) => Some(t),
                    _ => continue,
                },
                None => None,
            };
            calls.push((i, element, stages, terminal, terminal_closure));
        }
        for (i, same, op) in by_key_calls(b) {
            let TerminatorKind::Call { callee, .. } = &mut b.blocks[i].terminator.kind else {
                continue;
            };
            let k = made.len() + 1;
            let Some(body) = by_key_text(k, &same, &op, &closure_bodies).and_then(parse_one) else {
                continue;
            };
            callee.callback_instance = Some(body.name.clone());
            made.push(body);
        }
        for (i, element, stages, terminal, terminal_closure) in calls {
            let TerminatorKind::Call { callee, .. } = &mut b.blocks[i].terminator.kind else {
                continue;
            };
            let k = made.len() + 1;
            let chain = ChainText {
                k,
                element,
                stages,
                terminal,
                terminal_closure,
                overflow_checks,
            };
            let Some(body) = chain.body_text(&closure_bodies).and_then(parse_one) else {
                continue;
            };
            callee.callback_instance = Some(body.name.clone());
            made.push(body);
        }
    }
    bodies.extend(made);
}

/// The one body a synthesized MIR text holds.
fn parse_one(text: String) -> Option<Body> {
    let mut parsed = crate::parse::parse_mir(&text).ok()?;
    (parsed.len() == 1).then(|| parsed.remove(0))
}

/// The calls of `reduce_by_key` and `scan_by_key` in `b`: each one's
/// block and the closure types of its `same` and `op`
/// ([`by_key_closures`]).
fn by_key_calls(b: &Body) -> Vec<(usize, Ty, Ty)> {
    let mut out = Vec::new();
    for (i, block) in b.blocks.iter().enumerate() {
        let TerminatorKind::Call { callee, args, .. } = &block.terminator.kind else {
            continue;
        };
        let [Some(s), Some(o)] = by_key_closures(b, callee, args) else {
            continue;
        };
        out.push((i, s, o));
    }
    out
}

/// The closure types of a by-key call's `same` and `op`, each `None`
/// where it is not a closure (or the call is no by-key's): the argument's
/// type, or where the argument is a constant whose type MIR does not
/// print, the call's generic argument (`same` and `op` are its last two).
pub(crate) fn by_key_closures(b: &Body, callee: &Callee, args: &[Operand]) -> [Option<Ty>; 2] {
    let Some(crate::registry::CallbackSource::ByKey { same, op }) =
        crate::registry::registration(&callee.path).map(|spec| spec.callback)
    else {
        return [None, None];
    };
    let closure_at = |arg: usize, from_end: usize| {
        args.get(arg)
            .and_then(|a| operand_ty(b, a))
            .filter(|t| matches!(t, Ty::Closure { .. }))
            .or_else(|| {
                let n = callee.generics.len();
                callee.generics.get(n.checked_sub(from_end)?).cloned()
            })
            .filter(|t| matches!(t, Ty::Closure { .. }))
    };
    [closure_at(same, 2), closure_at(op, 1)]
}

/// The body of a by-key call's callback, as MIR text: its environment is
/// `native::gpu::ByKey { same, op }` (`#[repr(C)]`, the two closures by
/// value), and it takes `(mode: bool, ka: &K, kb: &K, a: V, b: V, out:
/// &mut V) -> bool`: with `mode == false` it answers `same(ka, kb)`, with
/// `mode == true` it writes `op(a, b)` to `*out` (`vocab::Shape::ByKey`:
/// the lowering makes one thunk of each, with `mode` constant). `None`
/// when the closures' bodies are not `(&K, &K) -> bool` and `(_, _) -> V`.
fn by_key_text(
    k: usize,
    same: &Ty,
    op: &Ty,
    closures: &BTreeMap<String, Signature>,
) -> Option<String> {
    let (_, same_params, same_ret) = closures.get(&same.to_string())?;
    let (_, op_params, value) = closures.get(&op.to_string())?;
    let key = match same_params.as_slice() {
        [Ty::Ref { inner: a, .. }, Ty::Ref { inner: b, .. }] if a == b => a.as_ref().clone(),
        _ => return None,
    };
    // (The types' spellings may differ, a path trimmed in one place and
    // not in another: admission checks `op`'s type on this body.)
    if *same_ret != Ty::Scalar(Scalar::Bool) || op_params.len() != 2 {
        return None;
    }
    let mut w = Writer::new(7);
    let entry = w.block();
    let (same_block, op_block, ret) = (w.block(), w.block(), w.block());
    w.end(ret, "return;");
    w.end(
        entry,
        format!("switchInt(copy _2) -> [0: bb{same_block}, otherwise: bb{op_block}];"),
    );
    let refs = [
        ("copy _3".to_string(), format!("&{key}")),
        ("copy _4".to_string(), format!("&{key}")),
    ];
    let (answer, next) = w.call(same_block, 0, same, &refs, &Ty::Scalar(Scalar::Bool));
    w.stmt(next, format!("_0 = copy {answer};"));
    w.end(next, format!("goto -> bb{ret};"));
    let values = [
        ("copy _5".to_string(), value.to_string()),
        ("copy _6".to_string(), value.to_string()),
    ];
    let (folded, next) = w.call(op_block, 1, op, &values, value);
    w.stmt(next, format!("(*_7) = move {folded};"));
    w.stmt(next, "_0 = const true;");
    w.end(next, format!("goto -> bb{ret};"));
    let ty = format!("{{closure@{SYNTHETIC_FILE}:{k}:1: {k}:1}}");
    let mut s = String::new();
    let _ = writeln!(
        s,
        "fn {SYNTHETIC_FILE}_{k}::{{closure#0}}(_1: &{ty}, _2: bool, _3: &{key}, _4: &{key}, _5: {value}, _6: {value}, _7: &mut {value}) -> bool {{"
    );
    let _ = writeln!(s, "    debug same => ((*_1).0: {same});");
    let _ = writeln!(s, "    debug op => ((*_1).1: {op});");
    let _ = writeln!(s, "    let mut _0: bool;");
    w.render_into(&mut s);
    Some(s)
}

/// One chain call's body, as MIR text.
struct ChainText {
    k: usize,
    element: Ty,
    stages: Vec<Stage>,
    terminal: Terminal,
    terminal_closure: Option<Ty>,
    overflow_checks: bool,
}

/// MIR text under construction: locals and blocks.
struct Writer {
    /// The body's parameters, `_1` … `_params`.
    params: usize,
    locals: Vec<String>,
    blocks: Vec<(Vec<String>, String)>,
}

impl Writer {
    fn new(params: usize) -> Writer {
        Writer {
            params,
            locals: Vec::new(),
            blocks: Vec::new(),
        }
    }

    /// A new temporary of type `ty` (after `_0` and the parameters).
    fn local(&mut self, ty: impl std::fmt::Display) -> String {
        self.locals.push(ty.to_string());
        format!("_{}", self.locals.len() + self.params)
    }

    /// The declarations of the temporaries and the blocks, as MIR text.
    fn render_into(&self, s: &mut String) {
        for (i, t) in self.locals.iter().enumerate() {
            let _ = writeln!(s, "    let mut _{}: {t};", i + self.params + 1);
        }
        for (i, (stmts, term)) in self.blocks.iter().enumerate() {
            let _ = writeln!(s, "\n    bb{i}: {{");
            for st in stmts {
                let _ = writeln!(s, "        {st}");
            }
            let _ = writeln!(s, "        {term}");
            let _ = writeln!(s, "    }}");
        }
        s.push_str("}\n");
    }

    fn block(&mut self) -> usize {
        self.blocks.push((Vec::new(), String::new()));
        self.blocks.len() - 1
    }

    fn stmt(&mut self, b: usize, s: impl Into<String>) {
        self.blocks[b].0.push(s.into());
    }

    fn end(&mut self, b: usize, t: impl Into<String>) {
        self.blocks[b].1 = t.into();
    }

    /// Calls the closure in environment field `field` (of type `closure`)
    /// with `args` (operand text, type) in block `b`: the result's local
    /// and the block that follows the call.
    fn call(
        &mut self,
        b: usize,
        field: usize,
        closure: &Ty,
        args: &[(String, String)],
        ret: &Ty,
    ) -> (String, usize) {
        let env = self.local(format!("&{closure}"));
        self.stmt(b, format!("{env} = &((*_1).{field}: {closure});"));
        let types: Vec<&str> = args.iter().map(|(_, t)| t.as_str()).collect();
        let tuple_ty = match types.as_slice() {
            [one] => format!("({one},)"),
            many => format!("({})", many.join(", ")),
        };
        let tuple = self.local(&tuple_ty);
        let ops: Vec<&str> = args.iter().map(|(o, _)| o.as_str()).collect();
        let value = match ops.as_slice() {
            [one] => format!("({one},)"),
            many => format!("({})", many.join(", ")),
        };
        self.stmt(b, format!("{tuple} = {value};"));
        let result = self.local(ret);
        let next = self.block();
        self.end(
            b,
            format!(
                "{result} = <{closure} as Fn<{tuple_ty}>>::call(move {env}, move {tuple}) -> [return: bb{next}, unwind continue];"
            ),
        );
        (result, next)
    }
}

/// A closure body's parameters (after the environment) and result.
type Signature = (String, Vec<Ty>, Ty);

/// The locals a chain body's parameters are (`mode` is `_2`).
struct Params {
    x: &'static str,
    index: Option<&'static str>,
    a: &'static str,
    b: &'static str,
    out: &'static str,
}

impl ChainText {
    /// The closure type of this chain's callback.
    fn closure_type(&self) -> String {
        format!("{{closure@{SYNTHETIC_FILE}:{k}:1: {k}:1}}", k = self.k)
    }

    /// The type of the values the terminal combines: the items', `u64`
    /// for a count, `bool` for `any` and `all`.
    fn value_type(&self) -> Ty {
        match self.terminal {
            Terminal::Count => Ty::Scalar(Scalar::U64),
            Terminal::Any | Terminal::All => Ty::Scalar(Scalar::Bool),
            _ => self.item_type(),
        }
    }

    fn item_type(&self) -> Ty {
        let mut item = self.element.clone();
        for s in &self.stages {
            match s {
                Stage::Map { out, .. } => item = out.clone(),
                Stage::Filter { .. } => {}
                Stage::Enumerate => item = Ty::Tuple(vec![Ty::Scalar(Scalar::Usize), item]),
            }
        }
        item
    }

    /// Whether the stages read each element's index (an `enumerate`): the
    /// body then takes it after `x`.
    fn indexed(&self) -> bool {
        self.stages.contains(&Stage::Enumerate)
    }

    /// The body's parameters after `mode`: the element, its index (an
    /// indexed chain's), the terminal's two values and where the value goes.
    fn params(&self) -> Params {
        match self.indexed() {
            true => Params {
                x: "_3",
                index: Some("_4"),
                a: "_5",
                b: "_6",
                out: "_7",
            },
            false => Params {
                x: "_3",
                index: None,
                a: "_4",
                b: "_5",
                out: "_6",
            },
        }
    }

    fn body_text(&self, closures: &BTreeMap<String, Signature>) -> Option<String> {
        let sig = |ty: &Ty| closures.get(&ty.to_string());
        for c in self.stages.iter().filter_map(Stage::closure) {
            sig(c)?;
        }
        let r = self.value_type();
        let p = self.params();
        let mut w = Writer::new(if p.index.is_some() { 7 } else { 6 });
        let entry = w.block();
        let stages = w.block();
        let combine = w.block();
        let ret = w.block();
        w.end(ret, "return;");
        w.end(
            entry,
            format!("switchInt(copy _2) -> [0: bb{stages}, otherwise: bb{combine}];"),
        );

        // The stages: `x` through each in order. Each closure is the next
        // field of the environment.
        let mut cur = p.x.to_string();
        let mut cur_ty = self.element.clone();
        let mut b = stages;
        let dropped = w.block();
        w.stmt(dropped, "_0 = const false;");
        w.end(dropped, format!("goto -> bb{ret};"));
        let mut field = 0;
        for stage in &self.stages {
            match stage {
                Stage::Enumerate => {
                    let index = p.index?;
                    let pair_ty = Ty::Tuple(vec![Ty::Scalar(Scalar::Usize), cur_ty.clone()]);
                    let pair = w.local(&pair_ty);
                    w.stmt(b, format!("{pair} = (copy {index}, copy {cur});"));
                    cur = pair;
                    cur_ty = pair_ty;
                }
                Stage::Map { closure, out } => {
                    let args = [(format!("copy {cur}"), cur_ty.to_string())];
                    let (v, next) = w.call(b, field, closure, &args, out);
                    cur = v;
                    cur_ty = out.clone();
                    b = next;
                }
                Stage::Filter { closure } => {
                    let r = w.local(format!("&{cur_ty}"));
                    w.stmt(b, format!("{r} = &{cur};"));
                    let args = [(format!("copy {r}"), format!("&{cur_ty}"))];
                    let (keep, next) = w.call(b, field, closure, &args, &Ty::Scalar(Scalar::Bool));
                    let kept = w.block();
                    w.end(
                        next,
                        format!("switchInt(move {keep}) -> [0: bb{dropped}, otherwise: bb{kept}];"),
                    );
                    b = kept;
                }
            }
            field += usize::from(stage.closure().is_some());
        }
        let term_field = field;
        let term = self.terminal_closure.as_ref();
        let value = match self.terminal {
            Terminal::Count => "const 1_u64".to_string(),
            Terminal::Any | Terminal::All => {
                let closure = term?;
                let args = [(format!("copy {cur}"), cur_ty.to_string())];
                let (p, next) = w.call(b, term_field, closure, &args, &Ty::Scalar(Scalar::Bool));
                b = next;
                format!("copy {p}")
            }
            _ => format!("copy {cur}"),
        };
        w.stmt(b, format!("(*{}) = {value};", p.out));
        w.stmt(b, "_0 = const true;");
        w.end(b, format!("goto -> bb{ret};"));

        // The terminal on two values, `a` (earlier) and `b` (later).
        let b = combine;
        let wins = |w: &mut Writer, at: usize, cond: &str| {
            w.stmt(at, format!("_0 = {cond};"));
            w.end(at, format!("goto -> bb{ret};"));
        };
        let (pa, pb) = (p.a, p.b);
        let store = |w: &mut Writer, at: usize, value: &str| {
            w.stmt(at, format!("(*{}) = {value};", p.out));
            w.stmt(at, "_0 = const true;");
            w.end(at, format!("goto -> bb{ret};"));
        };
        let refs = |w: &mut Writer, at: usize| {
            let a = w.local(format!("&{r}"));
            let bb = w.local(format!("&{r}"));
            w.stmt(at, format!("{a} = &{pa};"));
            w.stmt(at, format!("{bb} = &{pb};"));
            (a, bb)
        };
        match self.terminal {
            Terminal::Sum | Terminal::Product => {
                let (op, sign) = match self.terminal {
                    Terminal::Sum => ("Add", "+"),
                    _ => ("Mul", "*"),
                };
                let checked = self.overflow_checks && r.scalar().is_some_and(|s| s.is_int());
                if checked {
                    let pair = w.local(format!("({r}, bool)"));
                    w.stmt(
                        b,
                        format!("{pair} = {op}WithOverflow(copy {pa}, copy {pb});"),
                    );
                    let ok = w.block();
                    w.end(
                        b,
                        format!(
                            "assert(!move ({pair}.1: bool), \"attempt to compute `{{}} {sign} {{}}`, which would overflow\", copy {pa}, copy {pb}) -> [success: bb{ok}, unwind continue];"
                        ),
                    );
                    store(&mut w, ok, &format!("move ({pair}.0: {r})"));
                } else {
                    store(&mut w, b, &format!("{op}(copy {pa}, copy {pb})"));
                }
            }
            // A compaction combines nothing.
            Terminal::Collect => wins(&mut w, b, "const true"),
            Terminal::Count => store(&mut w, b, &format!("Add(copy {pa}, copy {pb})")),
            Terminal::Any => store(&mut w, b, &format!("BitOr(copy {pa}, copy {pb})")),
            Terminal::All => store(&mut w, b, &format!("BitAnd(copy {pa}, copy {pb})")),
            Terminal::Reduce => {
                let closure = term?;
                let args = [
                    (format!("copy {pa}"), r.to_string()),
                    (format!("copy {pb}"), r.to_string()),
                ];
                let (v, next) = w.call(b, term_field, closure, &args, &r);
                store(&mut w, next, &format!("move {v}"));
            }
            Terminal::Min => wins(&mut w, b, &format!("Gt(copy {pa}, copy {pb})")),
            Terminal::Max => wins(&mut w, b, &format!("Le(copy {pa}, copy {pb})")),
            Terminal::MinBy | Terminal::MaxBy => {
                let closure = term?;
                let (ra, rb) = refs(&mut w, b);
                let args = [
                    (format!("copy {ra}"), format!("&{r}")),
                    (format!("copy {rb}"), format!("&{r}")),
                ];
                let ordering = Ty::Adt {
                    path: "std::cmp::Ordering".into(),
                    args: Vec::new(),
                };
                let (o, next) = w.call(b, term_field, closure, &args, &ordering);
                let d = w.local("i8");
                w.stmt(next, format!("{d} = discriminant({o});"));
                let (yes, no) = (w.block(), w.block());
                let (greater, otherwise) = match self.terminal {
                    Terminal::MinBy => (yes, no),
                    _ => (no, yes),
                };
                w.end(
                    next,
                    format!("switchInt(move {d}) -> [1: bb{greater}, otherwise: bb{otherwise}];"),
                );
                wins(&mut w, yes, "const true");
                wins(&mut w, no, "const false");
            }
            Terminal::MinByKey | Terminal::MaxByKey => {
                let closure = term?;
                let key_ty = sig(closure)?.2.clone();
                let (ra, rb) = refs(&mut w, b);
                let (ka, next) = w.call(
                    b,
                    term_field,
                    closure,
                    &[(format!("copy {ra}"), format!("&{r}"))],
                    &key_ty,
                );
                let (kb, last) = w.call(
                    next,
                    term_field,
                    closure,
                    &[(format!("copy {rb}"), format!("&{r}"))],
                    &key_ty,
                );
                let min = self.terminal == Terminal::MinByKey;
                match &key_ty {
                    // `Ord` of a tuple: field by field.
                    Ty::Tuple(fields) if !fields.is_empty() => {
                        let (greater, less) = (w.block(), w.block());
                        wins(&mut w, greater, &format!("const {min}"));
                        wins(&mut w, less, &format!("const {}", !min));
                        let mut at = last;
                        for (i, f) in fields.iter().enumerate() {
                            let (x, y) = (
                                format!("copy ({ka}.{i}: {f})"),
                                format!("copy ({kb}.{i}: {f})"),
                            );
                            let gt = w.local("bool");
                            w.stmt(at, format!("{gt} = Gt({x}, {y});"));
                            let not_gt = w.block();
                            w.end(
                                at,
                                format!("switchInt(move {gt}) -> [0: bb{not_gt}, otherwise: bb{greater}];"),
                            );
                            let lt = w.local("bool");
                            w.stmt(not_gt, format!("{lt} = Lt({x}, {y});"));
                            let next = w.block();
                            w.end(
                                not_gt,
                                format!(
                                    "switchInt(move {lt}) -> [0: bb{next}, otherwise: bb{less}];"
                                ),
                            );
                            at = next;
                        }
                        // Equal keys: the later wins a max only.
                        wins(&mut w, at, &format!("const {}", !min));
                    }
                    _ => {
                        let cmp = if min { "Gt" } else { "Le" };
                        wins(&mut w, last, &format!("{cmp}(copy {ka}, copy {kb})"));
                    }
                }
            }
        }
        if let Some(t) = term {
            sig(t)?;
        }
        Some(self.render(&w, &r))
    }

    fn render(&self, w: &Writer, r: &Ty) -> String {
        let ty = self.closure_type();
        let mut s = String::new();
        let p = self.params();
        let index = match p.index {
            Some(i) => format!(" {i}: usize,"),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "fn {SYNTHETIC_FILE}_{k}::{{closure#0}}(_1: &{ty}, _2: bool, {x}: {t},{index} {a}: {r}, {b}: {r}, {out}: &mut {r}) -> bool {{",
            k = self.k,
            t = self.element,
            x = p.x,
            a = p.a,
            b = p.b,
            out = p.out,
        );
        let stages = self.stages.iter().filter_map(Stage::closure);
        let n = stages.clone().count();
        for (i, c) in stages.chain(self.terminal_closure.as_ref()).enumerate() {
            let _ = writeln!(s, "    debug {} => ((*_1).{i}: {c});", capture_name(i, n));
        }
        let _ = writeln!(s, "    let mut _0: bool;");
        w.render_into(&mut s);
        s
    }
}

/// The name of a chain callback's capture `i` of a chain with `stages`
/// stages: `stage0`, `stage1`, …, then `terminal`.
fn capture_name(i: usize, stages: usize) -> String {
    if i < stages {
        format!("stage{i}")
    } else {
        "terminal".to_string()
    }
}

/// The closure facts of every chain callback the registrations name (and
/// every by-key callback's): its captures are the chain's closures (the
/// by-key's `same` and `op`), by value, named as its debug lines name them, each located at its own
/// closure; its span is the terminal's call.
pub fn closures(
    bodies: &[Body],
    registrations: &[Registration],
    known: &[Closure],
) -> Vec<Closure> {
    let mut out = Vec::new();
    for r in registrations {
        let Callback::Closure { body } = &r.callback else {
            continue;
        };
        let Some(b) = bodies.iter().find(|b| b.name == *body) else {
            continue;
        };
        let Some(ty) = crate::pmir::env_type(b).filter(|t| is_chain_closure(t)) else {
            continue;
        };
        let captures = b
            .debug_vars
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let field_ty = captured_type(d)?;
                let at = known.iter().find(|c| c.ty == field_ty).map(|c| c.span);
                Some(Capture {
                    name: d.name.clone(),
                    field: i as u32,
                    ty: field_ty,
                    mode: CaptureMode::ByValue,
                    span: at,
                })
            })
            .collect::<Vec<Capture>>();
        // The terminal's call; where the source does not show it, the
        // first closure of the chain (the registration then says it
        // cannot find the call).
        // A by-key's is its `same` closure, where its callbacks begin.
        let same = captures
            .iter()
            .find(|c| c.name == "same")
            .and_then(|c| c.span);
        let Some(span) = same
            .or(r.span)
            .or_else(|| captures.iter().find_map(|c| c.span))
            .or_else(|| known.first().map(|c| c.span))
        else {
            continue;
        };
        out.push(Closure {
            body: b.name.clone(),
            ty: ty.clone(),
            span,
            kind: ClosureKind::Fn,
            params: b.locals[2..=b.arg_count as usize]
                .iter()
                .map(|l| l.ty.clone())
                .collect(),
            ret: b.locals[0].ty.clone(),
            captures,
            layout: None,
        });
    }
    out
}

/// The element types of a synthesized body: a chain's (`(mode, x: T, a:
/// R, b: R, out: &mut R)`, or an indexed one's `(mode, x: T, i: usize, a:
/// R, …)`) items' `T` and values' `R`, a by-key's (`(mode, ka: &K, kb: &K,
/// a: V, b: V, out: &mut V)`) keys' `&K` and values' `V`.
pub fn element_types(c: &Closure) -> Vec<Ty> {
    match c.params.as_slice() {
        [_, k @ Ty::Ref { .. }, _, v, _, _] => vec![k.clone(), v.clone()],
        [_, x, _, r, _, _] => vec![x.clone(), r.clone()],
        params => params.iter().skip(1).take(2).cloned().collect(),
    }
}

/// The type a chain body's debug line gives its capture:
/// `((*_1).0: {closure@…})`.
fn captured_type(d: &crate::pmir::DebugVar) -> Option<Ty> {
    let place = d.place.as_ref()?;
    place.projections.iter().find_map(|p| match p {
        crate::pmir::Projection::Field { ty, .. } => Some(ty.clone()),
        _ => None,
    })
}

/// A chain callback's layout: `native::gpu::Chain { stages, terminal }`
/// with `Map { prev, f, _u }` and `Filter { prev, p }` inside, all
/// `#[repr(C)]`, from the layouts of the closures it holds (`closures`,
/// by type). `None` when one of them has none (a closure that captures
/// something other than scalars by value).
pub fn layout_of(chain: &Closure, closures: &[Closure]) -> Option<ObjectLayout> {
    // Each capture's closure, with its layout.
    let mut held: Vec<&Closure> = Vec::new();
    let mut inner: Vec<ObjectLayout> = Vec::new();
    for c in &chain.captures {
        let closure = closures.iter().find(|k| k.ty == c.ty)?;
        inner.push(match &closure.layout {
            Some(l) => l.clone(),
            None if closure.captures.is_empty() => ObjectLayout {
                size: 0,
                align: 1,
                offsets: Vec::new(),
                leaves: Vec::new(),
            },
            None => return None,
        });
        held.push(closure);
    }
    // A by-key's `op` is laid out as a terminal after `same`, its one
    // stage (`ByKey { same, op }` has `Chain<Map<(), E, _>, F>`'s layout).
    let has_terminal = chain
        .captures
        .iter()
        .any(|c| c.name == "terminal" || c.name == "op");
    let stages = chain.captures.len() - usize::from(has_terminal);
    // `#[repr(C)]`: each field at the next multiple of its alignment; the
    // size a multiple of the largest. `prev` first: `()` (size 0, align 1)
    // for the first stage.
    let field = |(size, align): (u64, u64), l: &ObjectLayout| {
        let at = size.next_multiple_of(l.align);
        (at, (at + l.size, align.max(l.align)))
    };
    let mut offsets = Vec::new();
    let mut acc = (0u64, 1u64);
    for l in &inner[..stages] {
        let (at, after) = field(acc, l);
        offsets.push(at);
        acc = (after.0.next_multiple_of(after.1), after.1);
    }
    // `Chain { stages, terminal }`: the stages' struct, then the terminal's
    // closure (`()` when there is none).
    if has_terminal {
        let (at, after) = field(acc, &inner[stages]);
        offsets.push(at);
        acc = after;
    }
    let (size, align) = (acc.0.next_multiple_of(acc.1), acc.1);
    let mut leaves = Vec::new();
    for (k, (closure, l)) in held.iter().zip(&inner).enumerate() {
        for (j, (cap, off)) in closure.captures.iter().zip(&l.offsets).enumerate() {
            match cap.ty.scalar() {
                Some(_) => leaves.push(LeafLayout {
                    capture: k as u32,
                    path: vec![j as u32],
                    ty: cap.ty.clone(),
                    offset: offsets[k] + off,
                }),
                None => {
                    for leaf in l.leaves.iter().filter(|leaf| leaf.capture as usize == j) {
                        let mut path = vec![j as u32];
                        path.extend(&leaf.path);
                        leaves.push(LeafLayout {
                            capture: k as u32,
                            path,
                            ty: leaf.ty.clone(),
                            offset: offsets[k] + leaf.offset,
                        });
                    }
                }
            }
        }
    }
    Some(ObjectLayout {
        size,
        align,
        offsets,
        leaves,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Span;

    fn closure_ty(line: u32) -> Ty {
        Ty::parse(&format!("{{closure@user.rs:{line}:5: {line}:9}}"))
    }

    fn closure(line: u32, captures: &[(&str, Scalar)], layout: Option<ObjectLayout>) -> Closure {
        Closure {
            body: format!("run::{{closure#{line}}}"),
            ty: closure_ty(line),
            span: Span {
                lo_line: line,
                lo_col: 5,
                hi_line: line,
                hi_col: 9,
                file: crate::pmir::ROOT_FILE,
            },
            kind: ClosureKind::Fn,
            params: Vec::new(),
            ret: Ty::Scalar(Scalar::Bool),
            captures: captures
                .iter()
                .enumerate()
                .map(|(i, (name, s))| Capture {
                    name: name.to_string(),
                    field: i as u32,
                    ty: Ty::Scalar(*s),
                    mode: CaptureMode::ByValue,
                    span: None,
                })
                .collect(),
            layout,
        }
    }

    fn layout(size: u64, align: u64, offsets: &[u64]) -> Option<ObjectLayout> {
        Some(ObjectLayout {
            size,
            align,
            offsets: offsets.to_vec(),
            leaves: Vec::new(),
        })
    }

    fn chain(captures: &[(&str, Ty)]) -> Closure {
        let mut c = closure(99, &[], None);
        c.ty = Ty::parse("{closure@rmir-chain:1:1: 1:1}");
        c.captures = captures
            .iter()
            .enumerate()
            .map(|(i, (name, ty))| Capture {
                name: name.to_string(),
                field: i as u32,
                ty: ty.clone(),
                mode: CaptureMode::ByValue,
                span: None,
            })
            .collect();
        c
    }

    #[test]
    fn a_chain_is_laid_out_as_its_repr_c_structs() {
        // map(|v| v * g) with `g: f64`, filter(|v| *v > t) with `t: u8`,
        // then `reduce`'s op capturing `(k: u16, m: u32)` as rustc orders
        // them (m first).
        let map = closure(1, &[("g", Scalar::F64)], layout(8, 8, &[0]));
        let filter = closure(2, &[("t", Scalar::U8)], layout(1, 1, &[0]));
        let op = closure(
            3,
            &[("k", Scalar::U16), ("m", Scalar::U32)],
            layout(8, 4, &[4, 0]),
        );
        let c = chain(&[
            ("stage0", map.ty.clone()),
            ("stage1", filter.ty.clone()),
            ("terminal", op.ty.clone()),
        ]);
        let l = layout_of(&c, &[map, filter, op]).expect("a layout");
        // Map { prev: (), f: 8 bytes } is 8 bytes; Filter { prev: Map, p at
        // 8 } is 16 (aligned to 8); Chain { stages: 16 bytes, terminal at
        // 16 } is 24.
        assert_eq!(
            (l.size, l.align, l.offsets.clone()),
            (24, 8, vec![0, 8, 16])
        );
        let leaves: Vec<(u32, Vec<u32>, u64)> = l
            .leaves
            .iter()
            .map(|f| (f.capture, f.path.clone(), f.offset))
            .collect();
        assert_eq!(
            leaves,
            vec![
                (0, vec![0], 0),
                (1, vec![0], 8),
                (2, vec![0], 20),
                (2, vec![1], 16)
            ]
        );
    }

    #[test]
    fn a_by_key_is_laid_out_as_its_two_closures() {
        // `same` capturing `width: i64`, `op` capturing `k: u16`:
        // `ByKey { same, op }` is `#[repr(C)]`, op at 8, 16 bytes.
        let same = closure(1, &[("width", Scalar::I64)], layout(8, 8, &[0]));
        let op = closure(2, &[("k", Scalar::U16)], layout(2, 2, &[0]));
        let c = chain(&[("same", same.ty.clone()), ("op", op.ty.clone())]);
        let l = layout_of(&c, &[same, op]).expect("a layout");
        assert_eq!((l.size, l.align, l.offsets.clone()), (16, 8, vec![0, 8]));
        let leaves: Vec<(u32, u64)> = l.leaves.iter().map(|f| (f.capture, f.offset)).collect();
        assert_eq!(leaves, vec![(0, 0), (1, 8)]);
        // A `same` that captures nothing takes no bytes: `op` at 0.
        let same = closure(3, &[], None);
        let op = closure(4, &[("bias", Scalar::U64)], layout(8, 8, &[0]));
        let c = chain(&[("same", same.ty.clone()), ("op", op.ty.clone())]);
        let l = layout_of(&c, &[same, op]).expect("a layout");
        assert_eq!((l.size, l.align, l.offsets.clone()), (8, 8, vec![0, 0]));
    }

    #[test]
    fn a_by_key_body_calls_same_on_keys_and_op_on_values() {
        let sig = |params: &[&str], ret: &str| -> Signature {
            (
                "body".to_string(),
                params.iter().map(|p| Ty::parse(p)).collect(),
                Ty::parse(ret),
            )
        };
        let (same, op) = (closure_ty(7), closure_ty(8));
        let mut closures = BTreeMap::new();
        closures.insert(same.to_string(), sig(&["&u32", "&u32"], "bool"));
        closures.insert(op.to_string(), sig(&["f32", "f32"], "f32"));
        let text = by_key_text(2, &same, &op, &closures).expect("a body");
        let body = parse_one(text.clone()).expect("one body");
        assert_eq!(body.arg_count, 7, "{text}");
        assert!(
            text.contains("_3: &u32, _4: &u32, _5: f32, _6: f32, _7: &mut f32) -> bool"),
            "{text}"
        );
        assert!(
            text.contains("debug same => ((*_1).0: {closure@user.rs:7:5: 7:9});"),
            "{text}"
        );
        assert!(
            text.contains("debug op => ((*_1).1: {closure@user.rs:8:5: 8:9});"),
            "{text}"
        );
        // A `same` that does not take references has no body.
        closures.insert(same.to_string(), sig(&["u32", "u32"], "bool"));
        assert!(by_key_text(2, &same, &op, &closures).is_none());
    }

    #[test]
    fn an_enumerate_pairs_each_item_with_the_index_the_body_takes() {
        let sig = |params: &[&str], ret: &str| -> Signature {
            (
                "body".to_string(),
                params.iter().map(|p| Ty::parse(p)).collect(),
                Ty::parse(ret),
            )
        };
        let (map, key) = (closure_ty(7), closure_ty(8));
        let mut closures = BTreeMap::new();
        closures.insert(map.to_string(), sig(&["f32"], "f64"));
        closures.insert(key.to_string(), sig(&["&(usize, f64)"], "usize"));
        let chain = ChainText {
            k: 3,
            element: Ty::Scalar(Scalar::F32),
            stages: vec![
                Stage::Map {
                    closure: map.clone(),
                    out: Ty::Scalar(Scalar::F64),
                },
                Stage::Enumerate,
            ],
            terminal: Terminal::MinByKey,
            terminal_closure: Some(key.clone()),
            overflow_checks: true,
        };
        assert_eq!(chain.value_type(), Ty::parse("(usize, f64)"));
        let text = chain.body_text(&closures).expect("a body");
        let body = parse_one(text.clone()).expect("one body");
        // `(env, mode, x, i, a, b, out)`: the index after the element.
        assert_eq!(body.arg_count, 7, "{text}");
        assert!(
            text.contains("_2: bool, _3: f32, _4: usize, _5: (usize, f64), _6: (usize, f64), _7: &mut (usize, f64)) -> bool"),
            "{text}"
        );
        // The map is field 0 and the key field 1: the enumerate has none.
        assert!(
            text.contains("debug stage0 => ((*_1).0: {closure@user.rs:7:5: 7:9});"),
            "{text}"
        );
        assert!(
            text.contains("debug terminal => ((*_1).1: {closure@user.rs:8:5: 8:9});"),
            "{text}"
        );
        assert!(text.contains("= (copy _4, copy _"), "{text}");
        // Without an enumerate the body takes no index.
        let plain = ChainText {
            stages: vec![Stage::Map {
                closure: map,
                out: Ty::Scalar(Scalar::F64),
            }],
            terminal: Terminal::Sum,
            terminal_closure: None,
            ..chain
        };
        let text = plain.body_text(&closures).expect("a body");
        assert!(
            text.contains("_3: f32, _4: f64, _5: f64, _6: &mut f64) -> bool"),
            "{text}"
        );
    }

    #[test]
    fn closures_that_capture_nothing_take_no_bytes() {
        let abs = closure(1, &[], None);
        let cmp = closure(2, &[], None);
        let c = chain(&[("stage0", abs.ty.clone()), ("terminal", cmp.ty.clone())]);
        let l = layout_of(&c, &[abs, cmp]).expect("a layout");
        assert_eq!((l.size, l.align, l.offsets.clone()), (0, 1, vec![0, 0]));
        assert!(l.leaves.is_empty());
    }

    #[test]
    fn a_closure_without_a_measured_layout_leaves_the_chain_without_one() {
        let mut borrowed = closure(1, &[("t", Scalar::F32)], None);
        borrowed.captures[0].mode = CaptureMode::ByRef;
        let c = chain(&[("stage0", borrowed.ty.clone())]);
        assert!(layout_of(&c, &[borrowed]).is_none());
    }

    #[test]
    fn the_chain_is_read_from_the_receiver_type() {
        let t = Ty::parse(
            "native::gpu::ParIter<u8, native::gpu::Filter<native::gpu::Map<(), {closure@a.rs:1:1: 1:2}, u32>, {closure@a.rs:2:1: 2:2}>>",
        );
        let (element, stages) = chain_of(&t).expect("a chain");
        assert_eq!(element, Ty::Scalar(Scalar::U8));
        assert_eq!(
            stages,
            vec![
                Stage::Map {
                    closure: Ty::parse("{closure@a.rs:1:1: 1:2}"),
                    out: Ty::Scalar(Scalar::U32),
                },
                Stage::Filter {
                    closure: Ty::parse("{closure@a.rs:2:1: 2:2}"),
                },
            ]
        );
        // No stages: the default `()` is not printed (nor lifetimes, which
        // the MIR reader drops).
        // `enumerate` holds no closure: it is a stage of its own.
        let t = Ty::parse(
            "native::gpu::ParIter<'_, f32, native::gpu::Filter<native::gpu::Enumerate<native::gpu::Map<(), {closure@a.rs:1:1: 1:2}, f64>>, {closure@a.rs:2:1: 2:2}>>",
        );
        let (_, stages) = chain_of(&t).expect("a chain");
        assert_eq!(stages.len(), 3);
        assert_eq!(stages[1], Stage::Enumerate);
        let plain = chain_of(&Ty::parse("ParIter<i64>")).expect("a chain");
        assert_eq!(plain, (Ty::Scalar(Scalar::I64), Vec::new()));
        assert!(chain_of(&Ty::parse("std::vec::Vec<i64>")).is_none());
    }
}
