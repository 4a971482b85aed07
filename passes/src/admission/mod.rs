//! Admission: decides, per registration, whether its callback can run on the
//! GPU, and says why not with diagnostics. One file per rule; every rule runs
//! and every violation is reported, not just the first.
//!
//! Admitted: callbacks (closures and fn items) of the type their provider
//! takes over its element types (`(T, T) -> T` for reduce, `(T) -> bool`
//! for select, …), whose captures are immutable numeric scalars read by
//! value, and the local helpers they reach, transitively, under the same
//! rules.

pub mod capability;
pub mod captures;
pub mod cuda;
pub mod facts;
pub mod foreign;
pub mod iteration;
pub mod libraries;
pub mod mutable_state;
pub mod recursion;
pub mod signature;
pub mod unsupported;

/// The help of a rejection for code the GPU side cannot compile: what a
/// callback may use instead.
pub(crate) const WHAT_RUNS: &str =
    "use scalars, `Option`, `Result` and `Ordering`, the crate's own \
     structs and enums, loops over ranges, std's float math and calls of local helpers \
     (`driver explain E0109` lists the `core` methods)";

use manifest::env::EnvLayout;
use vocab::{Element, Signature};

pub use libraries::DeviceLibraries;

use crate::call_graph::CallGraph;
use crate::diagnostic::{Diagnostic, Label};
use crate::lower::plan::{closure_env, Adapter, CallbackAbi};
use facts::{CallbackRef, CaptureFact, ClosureFact, Loc, ModuleFacts, RegistrationFact};

/// Everything a rule sees about one registration.
pub struct Ctx<'a> {
    pub facts: &'a ModuleFacts,
    pub reg: &'a RegistrationFact,
    pub closure: Option<&'a ClosureFact>,
    /// The callback's body, when it has one here.
    pub root: Option<&'a str>,
    pub graph: CallGraph,
    /// The device libraries given to the link (for `extern "C"` calls).
    pub libraries: &'a DeviceLibraries,
}

impl Ctx<'_> {
    /// A secondary label on the callback: the closure head or fn item.
    pub fn callback_label(&self, text: impl Into<String>) -> Label {
        label(self.callback_loc(), text)
    }

    /// Where the callback is: the closure head or fn item.
    pub fn callback_loc(&self) -> Loc {
        self.closure
            .map(|c| c.loc)
            .or_else(|| {
                self.root
                    .and_then(|r| self.facts.bodies.get(r))
                    .map(|b| b.loc)
            })
            .unwrap_or(self.reg.loc)
    }

    /// A label on the registration call.
    pub fn registration_label(&self, text: impl Into<String>) -> Label {
        label(self.reg.loc, text)
    }

    pub fn callback_name(&self) -> String {
        match &self.reg.callback {
            CallbackRef::Closure(b) => format!("closure `{b}`"),
            CallbackRef::FnItem(b) => format!("fn item `{b}`"),
            CallbackRef::Other(t) => format!("`{t}`"),
        }
    }
}

pub fn label(loc: Loc, text: impl Into<String>) -> Label {
    Label::new(loc.span, loc.mir_line, text)
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Admitted(CallbackAbi),
    Rejected(Vec<Diagnostic>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub registration: RegistrationFact,
    pub verdict: Verdict,
}

/// The thunk symbol for a registration: stable, C-safe, unique per module.
pub fn thunk_name(index: usize, body: &str) -> String {
    use crate::lower::plan::{c_symbol, THUNK_PREFIX};
    c_symbol(&format!("{THUNK_PREFIX}{index}_"), body)
}

/// Runs every rule on every registration (the rules alone: see
/// `pipeline::admit_module` for the verdict every stage uses).
pub fn admit(facts: &ModuleFacts) -> Vec<Outcome> {
    admit_with(facts, &DeviceLibraries::default())
}

/// [`admit`] with the device libraries given to the link.
pub fn admit_with(facts: &ModuleFacts, libraries: &DeviceLibraries) -> Vec<Outcome> {
    facts
        .registrations
        .iter()
        .map(|reg| {
            let (closure, root) = match &reg.callback {
                CallbackRef::Closure(b) => (facts.closures.get(b), Some(b.as_str())),
                CallbackRef::FnItem(b) => (None, Some(b.as_str())),
                CallbackRef::Other(_) => (None, None),
            };
            let root = root.filter(|r| facts.bodies.contains_key(*r));
            let graph = CallGraph::build(facts, root);
            let ctx = Ctx {
                facts,
                reg,
                closure,
                root,
                graph,
                libraries,
            };
            // A generic function's callback that no instance replaced: its
            // types are parameters, and every other rule would repeat that.
            if let Some(d) = signature::uninstantiated(&ctx) {
                return Outcome {
                    registration: reg.clone(),
                    verdict: Verdict::Rejected(vec![d]),
                };
            }
            let mut diags = Vec::new();
            let signature = signature::check(&ctx, &mut diags);
            captures::check(&ctx, &mut diags);
            mutable_state::check(&ctx, &mut diags);
            cuda::check(&ctx, &mut diags);
            foreign::check(&ctx, &mut diags);
            recursion::check(&ctx, &mut diags);
            // Iterating over an array or a slice brings calls with no body
            // (which `foreign` leaves to it) and pointer constructs: one
            // cause, reported once.
            match iteration::check(&ctx) {
                Some(d) => diags.push(d),
                None => unsupported::check(&ctx, &mut diags),
            }
            capability::check(&ctx, &mut diags);
            let verdict = match signature {
                Some((signature, adapter)) if diags.is_empty() => {
                    Verdict::Admitted(abi(&ctx, signature, adapter))
                }
                _ => Verdict::Rejected(diags),
            };
            Outcome {
                registration: reg.clone(),
                verdict,
            }
        })
        .collect()
}

/// An admitted callback's ABI, with the thunk signature and adapter the
/// signature rule gave it.
fn abi(ctx: &Ctx<'_>, signature: Signature, adapter: Adapter) -> CallbackAbi {
    let body = ctx.root.unwrap_or_default().to_string();
    let provider = ctx.reg.provider;
    // The captures rule checked that the layout is usable (E0110 otherwise);
    // a callback with no closure has no environment.
    let env = ctx
        .closure
        .and_then(|c| closure_env(c).ok())
        .unwrap_or_else(EnvLayout::empty);
    CallbackAbi {
        thunk: thunk_name(ctx.reg.index, &body),
        provider,
        signature,
        adapter,
        body,
        env,
    }
}

/// Whether capture `cap` of `c` is an aggregate whose scalars the
/// frontend measured (`rmir.env_layout`'s leaves), or a closure that holds
/// none (a closure capturing nothing, which a measured layout holds only
/// when it captures nothing that is not by value).
pub fn is_measured_aggregate(c: &ClosureFact, cap: &CaptureFact) -> bool {
    let Some(layout) = &c.layout else {
        return false;
    };
    c.captures
        .iter()
        .position(|k| std::ptr::eq(k, cap))
        .is_some_and(|k| {
            layout.leaves.iter().any(|l| l.capture as usize == k)
                || matches!(cap.ty, frontend::ty::Ty::Closure { .. })
        })
}

/// A key function's type and what its thunk answers, for [`abi_summary`].
fn key_summary(t: &Element, k: &str) -> (String, String) {
    (
        format!("(&{t}) -> {k}"),
        format!(" (nonzero: `key(&a) < key(&b)`, as `{k}` orders)"),
    )
}

/// rustc's layout of each tuple or struct the callback takes or returns,
/// once each, a line apiece: the scalars at their offsets.
fn composite_layouts(signature: &vocab::Signature) -> String {
    let mut seen: Vec<&vocab::Layout> = Vec::new();
    for e in signature.params.iter().chain([&signature.ret]) {
        if let Element::Composite(l) = e {
            if !seen.contains(&l) {
                seen.push(l);
            }
        }
    }
    seen.iter()
        .map(|l| {
            let fields: Vec<String> = l
                .fields
                .iter()
                .map(|f| format!(".{} {} at {}", f.name, f.element, f.offset))
                .collect();
            format!(
                "  element `{}`: size {}, align {} (rustc's layout): {}\n",
                l.name,
                l.size,
                l.align,
                fields.join(", ")
            )
        })
        .collect()
}

/// The sort an admitted sorting callback runs (`frontend::order`): a radix
/// sort where its comparator or key is proved to be a lexicographic order
/// on the element's fields, else the merge sort; `None` for a callback of
/// another provider.
pub fn sort_choice(doc: &frontend::PreparedMir, abi: &CallbackAbi) -> Option<vocab::SortChoice> {
    use frontend::order::SortCallback;
    if abi.provider != manifest::Provider::SortBy {
        return None;
    }
    let key = abi.adapter.key_fields();
    let callback = match key {
        Some(_) => SortCallback::Key,
        None => SortCallback::Compare,
    };
    let choice = frontend::order::sort_choice(doc, &abi.body, callback, abi.signature.element());
    // A key that is not the element's own fields is computed, once an
    // element, and sorted with its element (`lower::thunks`' `SYMBOL_key`).
    Some(
        match (choice, key.as_deref().and_then(vocab::computed_key)) {
            (vocab::SortChoice::Merge { reason }, Some((key, keys))) => {
                vocab::SortChoice::ComputedKey { key, keys, reason }
            }
            (choice, _) => choice,
        },
    )
}

/// How an admitted chain's pick (`min`, `max_by`, `min_by_key`, …) keeps
/// one of two values its order holds equal (`vocab::Ties`): identical
/// values where `min`/`max` order an integer by `Ord`, or where
/// `min_by`'s comparator or `min_by_key`'s key is proved
/// (`frontend::order`) to be a lexicographic order on every scalar of the
/// value; else by position. `None` for a callback of another provider.
pub fn pick_ties(
    doc: &frontend::PreparedMir,
    reg: &RegistrationFact,
    abi: &CallbackAbi,
) -> Option<vocab::Ties> {
    use frontend::order::SortCallback;
    if abi.provider != manifest::Provider::ChainPick {
        return None;
    }
    let value = &abi.signature.ret;
    // `ParIter::max_by`: the method's name.
    let method = reg.function.rsplit("::").next().unwrap_or(&reg.function);
    let callback = match method {
        // `Ord` of an integer, `bool` or `char`: equal is identical.
        "min" | "max" => {
            let ord = value.scalar().is_some_and(|s| !s.is_float());
            return Some(match ord {
                true => vocab::Ties::Identical,
                false => vocab::Ties::ByPosition,
            });
        }
        "min_by" | "max_by" => SortCallback::Compare,
        "min_by_key" | "max_by_key" => SortCallback::Key,
        _ => return Some(vocab::Ties::ByPosition),
    };
    // The terminal's closure is the call's last generic argument
    // (`max_by::<{closure@…}>`), as `frontend::chain` reads it.
    let body = reg
        .generics
        .last()
        .and_then(|ty| doc.closures.iter().find(|c| &c.ty == ty))
        .map(|c| c.body.as_str());
    let Some(body) = body else {
        return Some(vocab::Ties::ByPosition);
    };
    Some(
        match frontend::order::sort_choice(doc, body, callback, value) {
            vocab::SortChoice::Radix { keys } => vocab::Ties::of(&keys, value),
            // No radix order, but the key may hold the value whole beside
            // other terms (`|v| (v % 7, *v)`): equal keys, equal values.
            _ if callback == SortCallback::Key => frontend::order::key_fields(doc, body, value)
                .map_or(vocab::Ties::ByPosition, |fields| {
                    vocab::Ties::of(&fields, value)
                }),
            _ => vocab::Ties::ByPosition,
        },
    )
}

/// The readable ABI summary of an admitted callback (for people and
/// snapshots), with the sort a sorting callback runs.
pub fn abi_summary(
    doc: &frontend::PreparedMir,
    reg: &RegistrationFact,
    abi: &CallbackAbi,
) -> String {
    let named = |c: &'static str| match c {
        "int" => "int32_t",
        "unsigned int" => "uint32_t",
        "long long" => "int64_t",
        "unsigned long long" => "uint64_t",
        "signed char" => "int8_t",
        "unsigned char" => "uint8_t",
        "short" => "int16_t",
        "unsigned short" => "uint16_t",
        other => other,
    };
    let stdint = |e: &Element| named(manifest::provider::abi_c_type(e));
    // A composite crosses in memory (`thunks::build_in_memory`).
    let mut params: Vec<String> = abi
        .signature
        .params
        .iter()
        .map(|e| match e {
            Element::Composite(l) => format!("const {} *", l.name),
            e => stdint(e).to_string(),
        })
        .collect();
    if let Element::Composite(l) = &abi.signature.ret {
        params.push(format!("{} *out", l.name));
    }
    // A comparator's thunk answers "less than" for the user's `Ordering`.
    let t = abi.signature.element();
    let (callback, answers) = match &abi.adapter {
        Adapter::Compare => (
            format!("(&{t}, &{t}) -> Ordering"),
            " (nonzero: `compare(&a, &b)` is `Less`)".to_string(),
        ),
        Adapter::Key(k) => key_summary(t, k.name()),
        Adapter::TupleKey(fields) => {
            let names: Vec<&str> = fields.iter().map(|s| s.name()).collect();
            key_summary(t, &format!("({})", names.join(", ")))
        }
        Adapter::Refs if abi.signature.params.len() == 1 => (
            format!("(&{t}) -> bool"),
            " (nonzero: `pred(&a)`)".to_string(),
        ),
        Adapter::Refs if reg.provider == manifest::Provider::PartitionPoint => (
            format!("(&{t}, &{}) -> bool", abi.signature.params[1]),
            " (nonzero: `pred(&a, &b)`, a an element, b a query)".to_string(),
        ),
        Adapter::Refs => (
            format!("(&{t}, &{t}) -> bool"),
            " (nonzero: `same(&a, &b)`, a the later element)".to_string(),
        ),
        Adapter::Direct => (abi.signature.to_string(), String::new()),
        Adapter::Chain => (format!("({t}) -> {}", abi.signature.ret), String::new()),
        Adapter::ByKey => (
            format!(
                "(&{t}, &{t}) -> bool and ({v}, {v}) -> {v}",
                v = abi.signature.ret
            ),
            String::new(),
        ),
    };
    // `sort`'s callback is the compiler's: the element type's own order.
    let body = if frontend::registry::is_natural_order(&reg.function) {
        format!("`{t}`'s own order, `a.cmp(b)`,")
    } else if abi.adapter == Adapter::Chain && abi.signature.is_indexed_chain() {
        format!(
            "the `par_iter` chain `{}` (its stages read each element's index), its values",
            abi.body
        )
    } else if abi.adapter == Adapter::Chain {
        format!("the `par_iter` chain `{}`, its values", abi.body)
    } else if abi.adapter == Adapter::ByKey {
        format!("`same` and `op`, as `{}`,", abi.body)
    } else {
        format!("`{}`", abi.body)
    };
    let r = stdint(&abi.signature.ret);
    let operand = |e: &Element, n: &str| match e {
        Element::Composite(l) => format!("const {} *{n}", l.name),
        e => format!("{} {n}", stdint(e)),
    };
    let thunk = match &abi.adapter {
        // `frontend::chain`'s body: its stages, and its terminal on two values.
        // A composite item or value by pointer (`thunks::build_chain`).
        Adapter::Chain => format!(
            "thunks: uint32_t {th}_stage(const void *env, {x}{i}, {r0} *out) (nonzero: kept, its value in *out)\n          uint32_t {th}_combine(const void *env, {a}, {b}, {r0} *out) ({combine})",
            th = abi.thunk,
            x = operand(abi.signature.element(), "x"),
            // An indexed chain's: the element's index in the input.
            i = match abi.signature.is_indexed_chain() {
                true => ", uint64_t i",
                false => "",
            },
            a = operand(&abi.signature.ret, "a"),
            b = operand(&abi.signature.ret, "b"),
            r0 = match &abi.signature.ret {
                Element::Composite(l) => l.name.clone(),
                e => named(e.c_type().unwrap_or("void")).to_string(),
            },
            combine = match abi.provider {
                manifest::Provider::ChainPick => "nonzero: the later value b wins over a",
                manifest::Provider::ChainCollect => "not called: a compaction combines nothing",
                _ => "*out = the terminal of a and b",
            },
        ),
        // `frontend::chain`'s by-key body: `same` on two keys, `op` on two
        // values (`thunks::build_by_key`).
        Adapter::ByKey => {
            let v = &abi.signature.ret;
            let k = abi.signature.element();
            let (op_ret, op_out) = match v {
                Element::Composite(l) => ("void".to_string(), format!(", {} *out", l.name)),
                e => (stdint(e).to_string(), String::new()),
            };
            format!(
                "thunks: uint32_t {th}_same(const void *env, {ka}, {kb}) (nonzero: `same(&a, &b)`, b the key after a)\n          {op_ret} {th}_op(const void *env, {a}, {b}{op_out})",
                th = abi.thunk,
                ka = operand(k, "a"),
                kb = operand(k, "b"),
                a = operand(v, "a"),
                b = operand(v, "b"),
            )
        }
        _ => format!(
            "thunk: {r} {}(const void *env, {}){answers}",
            abi.thunk,
            params.join(", ")
        ),
    };
    let mut s = format!(
        "admitted: registration #{} `{}` in `{}` (provider {})\n  callback: {body} of type `{callback}`\n  {thunk}\n  environment: size {}, align {}",
        reg.index,
        reg.function,
        reg.caller,
        reg.provider,
        abi.env.size,
        abi.env.align
    );
    if abi.env.fields.is_empty() {
        s.push_str(", no fields (the thunk gets a valid dummy pointer)");
    }
    s.push('\n');
    for f in &abi.env.fields {
        s.push_str(&format!(
            "    {}: {} at offset {} (size {}, align {})\n",
            f.name,
            f.scalar.name(),
            f.offset,
            f.size,
            f.align
        ));
    }
    s.push_str(&composite_layouts(&abi.signature));
    if let Some(ties) = pick_ties(doc, reg, abi) {
        s.push_str(&format!("  pick: {}\n", ties.describe()));
    }
    if let Some(choice) = sort_choice(doc, abi) {
        s.push_str(&format!("  sort: {choice}\n"));
        if let Some(note) = choice.gather_note(abi.signature.element()) {
            s.push_str(&format!("  sort moves: {note}\n"));
        }
    }
    s
}

/// Everything admission says about a document, as `driver admit` prints it
/// (diagnostics plain, then the summary line): the text the snapshots hold.
pub fn report(doc: &frontend::PreparedMir, outcomes: &[Outcome]) -> String {
    let source = &doc.source;
    let emitter = crate::diagnostic::Emitter::new(source, false);
    let mut out = String::new();
    let mut rejected = 0;
    for o in outcomes {
        match &o.verdict {
            Verdict::Admitted(abi) => out.push_str(&abi_summary(doc, &o.registration, abi)),
            Verdict::Rejected(diags) => {
                rejected += 1;
                for d in diags {
                    out.push_str(&emitter.render(d));
                    out.push_str("\n\n");
                }
            }
        }
    }
    out.push_str(&summary_line(&source.file, outcomes.len(), rejected));
    out.push('\n');
    out
}

/// `N admitted, M rejected`, or a clear message when there is nothing.
pub fn summary_line(file: &str, total: usize, rejected: usize) -> String {
    if total == 0 {
        format!("{file}: no registrations found: nothing to admit")
    } else {
        format!("{} admitted, {rejected} rejected", total - rejected)
    }
}
