//! The lowering plan, read once before the first pass: which bodies are
//! lowered, their C-safe symbols, each admitted registration's thunk, and
//! the environment layout capture reads use. The ABI types it is made of
//! live here too: an admitted callback's ([`CallbackAbi`], its environment
//! from [`closure_env`]) and a device-library function's ([`DeviceAbi`]).

use std::collections::{BTreeMap, BTreeSet};

use manifest::env::EnvLayout;
use melior::ir::{operation::OperationLike, Module};

use frontend::ty::Ty;
use ir::facts::{BodyKind, ClosureFact, ModuleFacts};
use vocab::Scalar;

use super::{Callback, LowerError, Options};
use crate::call_graph::CallGraph;

/// The `func.func` symbols of the module, in order.
fn module_bodies(module: &Module<'_>) -> Vec<String> {
    use melior::ir::block::BlockLike;
    let mut out = Vec::new();
    let mut op = module.body().first_operation();
    while let Some(o) = op {
        if ir::text_of(o.name().as_string_ref()) == "func.func" {
            if let Some(n) = o.attribute("sym_name").ok().and_then(ir::string_attr) {
                out.push(n);
            }
        }
        op = o.next_in_block();
    }
    out
}

/// The admitted callback's ABI: what lowering and the provider agree on.
#[derive(Debug, Clone, PartialEq)]
pub struct CallbackAbi {
    /// The exported thunk: `R NAME(const void *env, A a[, B b])`, C linkage,
    /// in the thunk ABI (`manifest::provider::abi_c_type`).
    pub thunk: String,
    /// The provider and the thunk's type (`vocab::Shape::signature`).
    pub provider: manifest::Provider,
    pub signature: manifest::Signature,
    /// How the thunk calls the body, where their types differ.
    pub adapter: Adapter,
    /// The callback's body symbol.
    pub body: String,
    pub env: EnvLayout,
}

/// How a thunk calls its callback's body where their types differ
/// (`vocab::Shape::signature`): a comparator's and a key's thunks answer
/// "less than" for the merge sort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Adapter {
    /// The body has the thunk's type.
    Direct,
    /// `(&T, &T) -> bool` (`dedup_by`'s `same`) or `(&T) -> bool`
    /// (`partition`'s predicate): operands by reference, the answer as the
    /// body gives it.
    Refs,
    /// `(&T, &T) -> Ordering`: operands by reference, the `Ordering`
    /// through a slot; the thunk answers `compare(&a, &b) == Less`.
    Compare,
    /// `(&T) -> K`, `K` a scalar: each operand by reference; the thunk
    /// answers `key(&a) < key(&b)`, compared as `Ord` compares `K`.
    Key(manifest::Scalar),
    /// `(&T) -> (K1, K2, …)`: as [`Adapter::Key`], the body writing the
    /// tuple to a slot; compared field by field, as `Ord` compares tuples.
    TupleKey(Vec<manifest::Scalar>),
    /// A `par_iter` chain's body, `(mode, x, a, b, out) -> bool`
    /// (`frontend::chain`): two thunks, `SYMBOL_stage` and
    /// `SYMBOL_combine`, each calling it with `mode` constant.
    Chain,
    /// A by-key's body, `(mode, ka: &K, kb: &K, a: V, b: V, out: &mut V) ->
    /// bool` (`frontend::chain`): two thunks, `SYMBOL_same` (mode false,
    /// `same(&ka, &kb)`) and `SYMBOL_op` (mode true, `op(a, b)`).
    ByKey,
}

/// The environment of a closure whose captures are scalars or aggregates
/// of them: rustc's layout of the closure object, as the frontend measured
/// it (`rmir.env_layout`), one field per captured scalar (an aggregate's as
/// `name.i.j`, `frontend::closure_layout::leaf_name`).
pub fn closure_env(c: &ClosureFact) -> Result<EnvLayout, String> {
    let Some(layout) = &c.layout else {
        if c.captures.is_empty() {
            return Ok(EnvLayout::empty());
        }
        if let Some(k) = c.captures.iter().find(|k| k.ty.scalar().is_none()) {
            return Err(format!("the capture `{}` is not a scalar", k.name));
        }
        return Err(
            "the document records no layout for it: import the `.rs` file (or rustc's MIR \
             text) with this rustc, which measures it"
                .to_string(),
        );
    };
    let mut placed: Vec<(String, Scalar, u64)> = Vec::new();
    for (k, (cap, &offset)) in c.captures.iter().zip(&layout.offsets).enumerate() {
        if let Some(scalar) = cap.ty.scalar() {
            placed.push((cap.name.clone(), scalar, offset));
            continue;
        }
        let before = placed.len();
        for leaf in layout.leaves.iter().filter(|l| l.capture as usize == k) {
            let name = frontend::closure_layout::leaf_name(&cap.name, &leaf.path);
            placed.push((name, leaf.scalar, leaf.offset));
        }
        // A closure capturing nothing holds no bytes.
        if placed.len() == before && !matches!(cap.ty, Ty::Closure { .. }) {
            return Err(format!(
                "the capture `{}` is neither a scalar nor an aggregate of scalars",
                cap.name
            ));
        }
    }
    EnvLayout::from_fields(&placed, layout.size, layout.align)
        .map_err(|e| format!("the recorded layout is unusable: {e}"))
}

/// A device function's parameters and result as PTX declares them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceAbi {
    pub params: Vec<ParamType>,
    /// `None`: returns nothing.
    pub ret: Option<ParamType>,
}

/// A `.param` of a PTX function: a scalar of `bytes` bytes (`.b32`,
/// `.f64`, ...) or an aggregate (`.align 8 .b8 p[16]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    Scalar { bytes: u32 },
    Aggregate { bytes: u32 },
}

impl std::fmt::Display for ParamType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamType::Scalar { bytes } => write!(f, ".b{}", bytes * 8),
            ParamType::Aggregate { bytes } => write!(f, ".b8[{bytes}]"),
        }
    }
}

impl DeviceAbi {
    /// `(.b32, .b64) -> .b32`
    pub fn render(&self) -> String {
        let params: Vec<String> = self.params.iter().map(|p| p.to_string()).collect();
        let ret = self.ret.map_or_else(String::new, |r| format!(" -> {r}"));
        format!("({}){ret}", params.join(", "))
    }
}

/// An admitted registration's exported thunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Thunk {
    /// The registration's index in the module.
    pub registration: usize,
    /// The exported symbol: `R SYMBOL(const void *env, A a[, B b])` in the
    /// thunk ABI (`manifest::provider::abi_c_type`).
    pub symbol: String,
    /// The provider and the thunk's type.
    pub provider: manifest::Provider,
    pub signature: manifest::Signature,
    /// How the thunk calls the body.
    pub adapter: Adapter,
    /// The callback body, as prepared MIR names it (`entry::{closure#0}`).
    pub body: String,
    /// The body's symbol after lowering.
    pub body_symbol: String,
    /// Whether the body takes the environment pointer first (a closure).
    pub takes_env: bool,
    /// The environment ABI: rustc's layout of the closure ([`closure_env`]).
    pub env: EnvLayout,
}

impl Thunk {
    /// The symbols the thunk exports: its `SYMBOL`, or a chain's
    /// `SYMBOL_stage` and `SYMBOL_combine` (`thunks::build_chain`), or a
    /// by-key's `SYMBOL_same` and `SYMBOL_op` (`thunks::build_by_key`).
    pub fn exported(&self) -> Vec<String> {
        exported_as(&self.symbol, &self.adapter)
    }
}

/// The symbols a thunk named `symbol` exports, as [`Thunk::exported`]: a
/// `sort_by_key`'s with a radix-ordered key exports its key thunk,
/// `SYMBOL_key`, too (`thunks::build_key`).
pub fn exported_as(symbol: &str, adapter: &Adapter) -> Vec<String> {
    match adapter {
        Adapter::Chain => vec![format!("{symbol}_stage"), format!("{symbol}_combine")],
        Adapter::ByKey => vec![format!("{symbol}_same"), format!("{symbol}_op")],
        _ if computed_key_fields(adapter).is_some() => {
            vec![symbol.to_string(), format!("{symbol}_key")]
        }
        _ => vec![symbol.to_string()],
    }
}

/// A key function's key fields when a radix sort can rank them
/// (`vocab::computed_key`): then its registration has a key thunk.
pub fn computed_key_fields(adapter: &Adapter) -> Option<Vec<manifest::Scalar>> {
    let fields = adapter.key_fields()?;
    vocab::computed_key(&fields).map(|_| fields)
}

impl Adapter {
    /// A key function's key: its scalar, or its tuple's fields in order.
    pub fn key_fields(&self) -> Option<Vec<manifest::Scalar>> {
        match self {
            Adapter::Key(k) => Some(vec![*k]),
            Adapter::TupleKey(fields) => Some(fields.clone()),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub overflow_checks: bool,
    pub thunks: Vec<Thunk>,
    /// Bodies to lower, as prepared MIR names them, in module order.
    pub kept: Vec<String>,
    /// Body name → its symbol after `select-admitted`.
    pub symbols: BTreeMap<String, String>,
    /// Environment layout of each closure body, by its name and its symbol.
    pub envs: BTreeMap<String, EnvLayout>,
    /// Types of the module's closures that capture nothing (`{closure@…}`):
    /// zero-sized values, so a local holding one has an empty layout.
    pub empty_closures: std::collections::HashSet<Ty>,
    /// The type of each closure body that is not a callback, by its name
    /// and its symbol: its captures are fields of that value
    /// (`frontend::adt`'s struct of a closure), not of an environment.
    pub inner_closures: BTreeMap<String, Ty>,
    /// The structs and enums the module's bodies name (`rmir.adt_def`).
    pub adts: frontend::adt::Adts,
}

fn module_error(module: &Module<'_>, message: String) -> LowerError {
    LowerError {
        pass: "pipeline",
        loc: Box::new(ir::Loc::decode(module.as_operation().location())),
        op: String::new(),
        function: None,
        message,
    }
}

/// What every thunk's symbol starts with, before the registration's
/// number (`rmir_cb3_entry_closure_0`).
pub const THUNK_PREFIX: &str = "rmir_cb";
/// What every lowered body's symbol starts with, before its number in the
/// module (`rmir_fn12_helper`).
pub const BODY_PREFIX: &str = "rmir_fn";

/// `prefix` + the C-safe spelling of `name` (`entry::{closure#0}` →
/// `entry_closure_0`).
pub fn c_symbol(prefix: &str, name: &str) -> String {
    let mut s = prefix.to_string();
    let mut last_us = prefix.ends_with('_');
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c);
            last_us = false;
        } else if !last_us {
            s.push('_');
            last_us = true;
        }
    }
    while s.ends_with('_') {
        s.pop();
    }
    s
}

impl Plan {
    pub fn new(
        module: &Module<'_>,
        callbacks: &[Callback],
        options: &Options,
    ) -> Result<Plan, LowerError> {
        let facts = ir::facts(module).map_err(|e| module_error(module, e))?;
        let overflow_checks = options
            .overflow_checks
            .unwrap_or_else(|| rewrite_bool_attr(module, "rmir.overflow_checks").unwrap_or(true));
        // Reachable bodies, through local calls.
        let roots: Vec<&str> = callbacks.iter().map(|c| c.abi.body.as_str()).collect();
        let graph = CallGraph::from_roots(&facts, &roots);
        if let Some(b) = graph.missing(&facts).first() {
            return Err(module_error(
                module,
                format!("the admitted callback reaches `{b}`, which has no body in the module"),
            ));
        }
        // In module order (facts are by name; the module's order is the
        // symbols' numbering, stable across runs).
        let kept: Vec<String> = module_bodies(module)
            .into_iter()
            .filter(|b| graph.nodes.contains_key(b))
            .collect();
        let symbols: BTreeMap<String, String> = kept
            .iter()
            .enumerate()
            .map(|(i, b)| (b.clone(), c_symbol(&format!("{BODY_PREFIX}{i}_"), b)))
            .collect();
        let mut envs = BTreeMap::new();
        let mut thunks = Vec::new();
        for c in callbacks {
            let body = facts.body(&c.abi.body).ok_or_else(|| {
                module_error(module, format!("no body `{}` in the module", c.abi.body))
            })?;
            let takes_env = body.kind == BodyKind::Closure;
            if takes_env {
                check_env(module, &facts, &c.abi.body, &c.abi.env)?;
                envs.insert(c.abi.body.clone(), c.abi.env.clone());
                envs.insert(symbols[&c.abi.body].clone(), c.abi.env.clone());
            }
            thunks.push(Thunk {
                registration: c.registration,
                symbol: c.abi.thunk.clone(),
                provider: c.abi.provider,
                signature: c.abi.signature.clone(),
                adapter: c.abi.adapter.clone(),
                body: c.abi.body.clone(),
                body_symbol: symbols[&c.abi.body].clone(),
                takes_env,
                env: c.abi.env.clone(),
            });
        }
        let mut seen = BTreeSet::new();
        for t in &thunks {
            if !seen.insert(&t.symbol) {
                return Err(module_error(
                    module,
                    format!("two registrations export the thunk `{}`", t.symbol),
                ));
            }
        }
        let empty_closures = facts
            .closures
            .values()
            .filter(|c| c.captures.is_empty())
            .map(|c| c.ty.clone())
            .collect();
        let mut inner_closures = BTreeMap::new();
        for (body, c) in &facts.closures {
            if envs.contains_key(body) || c.captures.is_empty() {
                continue;
            }
            if let Some(symbol) = symbols.get(body) {
                inner_closures.insert(symbol.clone(), c.ty.clone());
                inner_closures.insert(body.clone(), c.ty.clone());
            }
        }
        Ok(Plan {
            overflow_checks,
            inner_closures,
            thunks,
            kept,
            symbols,
            envs,
            empty_closures,
            adts: facts.adts.clone(),
        })
    }
}

/// The layout must hold exactly the closure's captured scalars, in field
/// order: capture reads find their fields by name, and the C++ side by
/// position.
fn check_env(
    module: &Module<'_>,
    facts: &ModuleFacts,
    body: &str,
    env: &EnvLayout,
) -> Result<(), LowerError> {
    let expected = match facts.closure(body) {
        Some(c) => closure_env(c)
            .map_err(|why| module_error(module, format!("closure `{body}`: {why}")))?,
        None => EnvLayout::empty(),
    };
    let spell = |l: &EnvLayout| -> Vec<String> {
        l.fields
            .iter()
            .map(|f| format!("{}: {}", f.name, f.scalar.name()))
            .collect()
    };
    if spell(env) != spell(&expected) {
        return Err(module_error(
            module,
            format!(
                "the environment layout of `{body}` has fields [{}], its captures in field order are [{}]",
                spell(env).join(", "),
                spell(&expected).join(", ")
            ),
        ));
    }
    Ok(())
}

fn rewrite_bool_attr(module: &Module<'_>, name: &str) -> Option<bool> {
    super::rewrite::bool_attr(module.as_operation().to_raw(), name)
}
