//! `core`'s iterator machinery where optimised MIR keeps it.
//!
//! rustc inlines most of an iterator chain over a range into the callback,
//! but some pieces stay: calls of generic `core` functions
//! (`<Range<u32> as Iterator>::fold::<u32, F>`, `try_fold`, `StepBy::new`,
//! `RangeInclusive`'s `spec_next`) and values of `core`'s own closures
//! (`map_fold`'s, `Sum::sum`'s, `any`'s `check`), built by the inlined code.
//! Stable rustc prints neither kind of body. `core-model/iter.rs` writes
//! each again in plain Rust; this module compiles it to MIR with the user's
//! rustc and overflow checks (once, then from the build cache), and routes
//! the user's MIR to it:
//!
//! - A call of a modelled function becomes a call of the model's function,
//!   with the generic arguments the model takes (`rmir_range_u32::fold::<u32, F>`).
//! - A modelled closure type (printed by its definition path,
//!   `{closure@std::iter::adapters::map::map_fold<u32, …>::{closure#0}}`,
//!   or, where a value is built, by `core`'s source span) becomes one
//!   synthetic closure type per distinct type (`{closure@rmir-core:3:1: 3:1}`),
//!   and [`ClosureInstance`] asks monomorphisation for the model closure's
//!   instance whose environment is that type.
//! - The model's MIR follows the user's, its bodies generic where the model
//!   is, their names (`rmir_…`) its own; [`prune`] drops the ones no
//!   callback reaches.
//!
//! What is not modelled stays as it was, and is reported as before (a call
//! with no body, E0107).

use std::collections::BTreeMap;
use std::process::Command;

use crate::mono::ClosureInstance;
use crate::pmir::{Body, BodyKind, TerminatorKind};
use crate::ty::{Scalar, Ty};

/// The model's source.
pub(crate) const SOURCE: &str = include_str!("../core-model/iter.rs");

/// The file name the model is compiled under: its closures' types name it.
const MODEL_FILE: &str = "rmir_core.rs";

/// The file of the synthetic closure types.
const SYNTHETIC_FILE: &str = "rmir-core";

/// Where a model type stands for a `core` one, the path MIR prints.
const MODEL_TYPES: [(&str, &str); 13] = [
    ("ArrayIntoIterModel", "std::array::IntoIter"),
    ("ManuallyDropModel", "std::mem::ManuallyDrop"),
    ("MaybeDanglingModel", "std::mem::MaybeDangling"),
    (
        "PolymorphicIterModel",
        "std::array::iter::iter_inner::PolymorphicIter",
    ),
    ("IndexRangeModel", "std::ops::index_range::IndexRange"),
    ("RangeInclusiveModel", "std::ops::RangeInclusive"),
    ("SliceIterModel", "std::slice::Iter"),
    ("CopiedModel", "std::iter::Copied"),
    ("TakeModel", "std::iter::Take"),
    ("RevModel", "std::iter::Rev"),
    ("StepByModel", "std::iter::StepBy"),
    ("FilterModel", "std::iter::Filter"),
    ("ZipModel", "std::iter::Zip"),
];

/// The user's MIR routed to the model, the model's MIR after it.
#[derive(Debug)]
pub(crate) struct Routed {
    pub text: String,
    pub closures: Vec<ClosureInstance>,
}

/// Whether a closure type is one of the synthetic types of `core`'s
/// closures (its body is the model's, not in any source file).
pub fn is_model_closure(ty: &Ty) -> bool {
    matches!(ty, Ty::Closure { file, .. } if file == SYNTHETIC_FILE)
}

/// Whether a body's name is one of the model's.
pub(crate) fn is_model_body(name: &str) -> bool {
    name.starts_with("rmir_")
}

/// Routes `mir` to the model; `None` when it uses nothing the model holds.
pub(crate) fn route(mir: &str, overflow_checks: bool) -> Result<Option<Routed>, String> {
    let mut closures = Closures::default();
    let mut lines: Vec<String> = mir
        .lines()
        .map(|l| {
            if l.contains("{closure@") {
                closures.normalize(l)
            } else {
                l.to_string()
            }
        })
        .collect();
    let mut routed_calls = 0;
    let mut decls: BTreeMap<String, String> = BTreeMap::new();
    for line in lines.iter_mut() {
        if line.starts_with("fn ") {
            decls.clear();
        }
        if let Some((local, ty)) = local_decl(line) {
            decls.insert(local, ty);
            continue;
        }
        if let Some(new) = core_aggregate(line, &decls) {
            *line = new;
        }
        if let Some(new) = route_call(line) {
            *line = new;
            routed_calls += 1;
        }
    }
    // An array's by-value iterator: `frontend::slices` routes its `next`
    // once the array's length is known.
    let array_next = mir.contains("PolymorphicIter::<[");
    if routed_calls == 0
        && closures.instances.is_empty()
        && !sorts_by_natural_order(mir)
        && !array_next
    {
        return Ok(None);
    }
    let model = model_mir(overflow_checks)?;
    let mut text = lines.join("\n");
    text.push('\n');
    text.push_str(&model);
    Ok(Some(Routed {
        text,
        closures: closures.instances,
    }))
}

/// The model's comparator that a call of `sort` or `sort_unstable` with
/// these generic arguments takes as its callback, when it is one.
pub(crate) fn natural_order_callback(path: &str, generics: &[Ty]) -> Option<String> {
    let spec = crate::registry::registration(path)?;
    if spec.callback != crate::registry::CallbackSource::NaturalOrder {
        return None;
    }
    crate::registry::natural_order_fn(generics.first()?.scalar()?)
}

/// Whether `mir` may call `sort` or `sort_unstable` of the provider API,
/// whose callback is the model's comparator of the element type
/// ([`crate::registry::natural_order_fn`]). A false positive costs only
/// the model's (cached) MIR, which [`prune`] then drops.
fn sorts_by_natural_order(mir: &str) -> bool {
    mir.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with('_')
            && t.contains(" -> ")
            && (t.contains("sort::<") || t.contains("sort_unstable::<"))
    })
}

/// The model's MIR, its stand-in types renamed to `core`'s.
fn model_mir(overflow_checks: bool) -> Result<String, String> {
    let rustc = crate::rustc::rustc_version().map_err(|e| e.to_string())?;
    let flags = crate::rustc::mir_codegen_flags(overflow_checks, false);
    let key = crate::cached::key(
        "core-model",
        &[
            ("rustc", rustc.as_bytes()),
            ("flags", flags.join(" ").as_bytes()),
            ("source", SOURCE.as_bytes()),
        ],
    );
    let text = match crate::cached::get("core-model", &key).map(String::from_utf8) {
        Some(Ok(text)) => text,
        _ => {
            let text = compile(&flags)?;
            crate::cached::put("core-model", &key, text.as_bytes());
            text
        }
    };
    let mut renamed = text;
    for (model, core) in MODEL_TYPES {
        renamed = replace_word(&renamed, model, core);
    }
    // The model's MIR trims the paths it can (`panic` is `core`'s only
    // one there); the panic entry points are known by their full path.
    let renamed = crate::slices::text(&renamed);
    Ok(renamed.replace(" = panic(const ", " = core::panicking::panic(const "))
}

fn compile(flags: &[String]) -> Result<String, String> {
    let dir = crate::scratch::Scratch::new("core-model")?;
    let source = dir.join(MODEL_FILE);
    std::fs::write(&source, SOURCE)
        .map_err(|e| format!("cannot write {}: {e}", source.display()))?;
    let out_file = dir.join("rmir_core.mir");
    let out = crate::rustc::run_rustc(
        Command::new(crate::rustc::rustc())
            .current_dir(dir.path())
            .args(["--edition", "2021", "--crate-type", "lib"])
            .args(["--crate-name", "rmir_core_model", "--emit=mir"])
            .args(flags)
            .arg(MODEL_FILE)
            .arg("-o")
            .arg(&out_file),
        "compiling the core iterator model",
        Some(&dir),
    )
    .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "rustc rejected the core iterator model (a fault of frontend/core-model/iter.rs):\n{}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    std::fs::read_to_string(&out_file)
        .map_err(|e| format!("cannot read the core iterator model's MIR: {e}"))
}

/// `text` with every whole-word `word` (a `::` path ending in it counts as
/// one word) replaced by `by`.
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(ident) || after.is_some_and(ident) {
            out.push_str(word);
        } else {
            out.push_str(by);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// `let mut _4: TYPE;` → (`_4`, `TYPE`).
fn local_decl(line: &str) -> Option<(String, String)> {
    let t = line.trim_start();
    let t = t.strip_prefix("let ")?;
    let t = t.strip_prefix("mut ").unwrap_or(t);
    let (local, ty) = t.split_once(": ")?;
    if !local.starts_with('_') || !local[1..].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((local.to_string(), ty.strip_suffix(';')?.to_string()))
}

/// `_4 = {closure@/rustc/…/map.rs:88:5: 88:20} { … };`: a value of one of
/// `core`'s closures, named by its source span; the statement is rewritten
/// to name the destination's declared type (the synthetic one).
fn core_aggregate(line: &str, decls: &BTreeMap<String, String>) -> Option<String> {
    let t = line.trim_start();
    let (dest, rest) = t.split_once(" = {closure@/rustc/")?;
    let decl = decls.get(dest)?;
    if !decl.starts_with(&format!("{{closure@{SYNTHETIC_FILE}:")) {
        return None;
    }
    let close = rest.find('}')?;
    let indent = &line[..line.len() - t.len()];
    Some(format!("{indent}{dest} = {decl}{}", &rest[close + 1..]))
}

// ---------------------------------------------------------------------------
// Closures.

/// The synthetic closure types made so far, by the model closure and the
/// canonical text of its arguments.
#[derive(Default)]
struct Closures {
    by_key: BTreeMap<String, String>,
    instances: Vec<ClosureInstance>,
}

impl Closures {
    /// `line` with every modelled `core` closure type replaced by its
    /// synthetic type (innermost first).
    fn normalize(&mut self, line: &str) -> String {
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(at) = rest.find("{closure@") {
            out.push_str(&rest[..at]);
            let Some(len) = crate::parse::matching(&rest[at..], 0).map(|close| close + 1) else {
                out.push_str(&rest[at..]);
                return out;
            };
            let inner = &rest[at + "{closure@".len()..at + len - 1];
            let inner = self.normalize(inner);
            match self.synthetic(&inner) {
                Some(ty) => out.push_str(&ty),
                None => {
                    out.push_str("{closure@");
                    out.push_str(&inner);
                    out.push('}');
                }
            }
            rest = &rest[at + len..];
        }
        out.push_str(rest);
        out
    }

    /// The synthetic type of the `core` closure whose definition path is
    /// `inner`, when the model has it.
    fn synthetic(&mut self, inner: &str) -> Option<String> {
        let head = inner.strip_suffix("::{closure#0}")?;
        let (generic, args) = model_closure(head)?;
        // One `core` closure type is printed by several paths
        // (`std::iter::Iterator::any::check<…>`, `any::check<…>`): the
        // model closure and its arguments name it.
        let key = canonical(&format!("{generic}<{}>", args.join(", ")));
        if let Some(ty) = self.by_key.get(&key) {
            return Some(ty.clone());
        }
        let n = self.by_key.len() + 1;
        let ty = format!("{{closure@{SYNTHETIC_FILE}:{n}:1: {n}:1}}");
        self.by_key.insert(key, ty.clone());
        self.instances.push(ClosureInstance {
            ty: ty.clone(),
            generic: generic.to_string(),
            args,
        });
        Some(ty)
    }
}

/// A type's text with module paths dropped (`std::iter::Map` → `Map`): MIR
/// prints one type with full or trimmed paths depending on where it is.
fn canonical(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if ident(b[i]) && (i == 0 || !ident(b[i - 1])) {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            let word = &text[start..i];
            let module = word.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
                && text[i..].starts_with("::")
                && !text[i + 2..].starts_with('<')
                && !text[i + 2..].starts_with('{');
            if module {
                i += 2;
            } else {
                out.push_str(word);
            }
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// The model function of a `core` closure's definition path (without its
/// `::{closure#0}`), and the model's generic arguments.
fn model_closure(head: &str) -> Option<(&'static str, Vec<String>)> {
    let (prefix, name, args) = last_segment(head)?;
    let parent = prefix.rsplit("::").next().unwrap_or("");
    let qualified_self = || -> Option<String> {
        let inner = prefix.strip_prefix('<')?.strip_suffix('>')?;
        Some(inner.split_once(" as ")?.0.to_string())
    };
    let with_self = |self_ty: String| {
        let mut all = vec![self_ty];
        all.extend(args.iter().cloned());
        all
    };
    let generic = match (parent, name) {
        ("map", "map_fold") => "rmir_map_fold",
        ("filter", "filter_fold") => "rmir_filter_fold",
        ("fold", "enumerate") => "rmir_enumerate",
        ("any", "check") => "rmir_any_check",
        ("all", "check") => "rmir_all_check",
        ("find" | "rfind", "check") => "rmir_find_check",
        ("position", "check") => "rmir_position_check",
        ("copied", "copy_fold") => "rmir_copy_fold",
        ("copied", "copy_try_fold") => "rmir_copy_try_fold",
        ("min_by", "fold") => "rmir_min_by_fold",
        ("max_by", "fold") => "rmir_max_by_fold",
        (_, "sum") if prefix.ends_with(" as std::iter::Sum>") || prefix.ends_with(" as Sum>") => {
            return Some(("rmir_sum", with_self(qualified_self()?)));
        }
        // `<u32 as Sum<&u32>>::sum`: a sum of references.
        (_, "sum") if prefix.contains(" as Sum<&") || prefix.contains(" as std::iter::Sum<&") => {
            return Some(("rmir_sum_ref", with_self(qualified_self()?)));
        }
        (_, "product")
            if prefix.contains(" as Product<&") || prefix.contains(" as std::iter::Product<&") =>
        {
            return Some(("rmir_product_ref", with_self(qualified_self()?)));
        }
        (_, "product")
            if prefix.ends_with(" as std::iter::Product>") || prefix.ends_with(" as Product>") =>
        {
            return Some(("rmir_product", with_self(qualified_self()?)));
        }
        _ => return None,
    };
    Some((generic, args))
}

/// `a::b::name<X, Y>` → (`a::b`, `name`, [`X`, `Y`]), lifetimes dropped;
/// no arguments when the segment has none.
fn last_segment(path: &str) -> Option<(&str, &str, Vec<String>)> {
    let (before, args) = match path.strip_suffix('>') {
        Some(open_to_end) => {
            let open = matching_open(open_to_end)?;
            let list = &open_to_end[open + 1..];
            let args = split_args(list)
                .into_iter()
                .filter(|a| !a.starts_with('\''))
                .map(str::to_string)
                .collect();
            (&path[..open], args)
        }
        None => (path, Vec::new()),
    };
    match before.rsplit_once("::") {
        Some((prefix, name)) => Some((prefix, name, args)),
        None => Some(("", before, args)),
    }
}

/// The index of the `<` that the final `>` of `text + ">"` closes.
fn matching_open(text: &str) -> Option<usize> {
    let mut depth = 1i32;
    let b = text.as_bytes();
    for i in (0..b.len()).rev() {
        match b[i] {
            b'>' if i > 0 && b[i - 1] == b'-' => {}
            b'>' | b')' | b']' | b'}' => depth += 1,
            b'<' | b'(' | b'[' | b'{' => {
                depth -= 1;
                if depth == 0 {
                    return (b[i] == b'<').then_some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A generic argument list split at its top-level commas, each trimmed
/// (`ty::split_top`).
fn split_args(text: &str) -> Vec<&str> {
    crate::ty::split_top(text, ',')
        .into_iter()
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect()
}

// ---------------------------------------------------------------------------
// Calls.

/// A call terminator's line with a modelled callee routed to the model.
fn route_call(line: &str) -> Option<String> {
    let t = line.trim_start();
    if !t.starts_with('_') || !t.contains(" -> ") {
        return None;
    }
    let eq = t.find(" = ")?;
    let callee_start = eq + 3;
    let open = callee_start + call_paren(&t[callee_start..])?;
    let callee = &t[callee_start..open];
    let close = crate::parse::matching(t, open)? + 1;
    let args = &t[open + 1..close - 1];
    let (model, args) = model_call(callee, args)?;
    let indent = &line[..line.len() - t.len()];
    Some(format!(
        "{indent}{}{model}({args}){}",
        &t[..callee_start],
        &t[close..]
    ))
}

/// The offset of the `(` that opens a call's arguments.
fn call_paren(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    let b = text.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'(' if depth == 0 => return Some(i),
            b'>' if i > 0 && b[i - 1] == b'-' => {}
            b'<' | b'[' | b'{' | b'(' => depth += 1,
            b'>' | b']' | b'}' | b')' => depth -= 1,
            b' ' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// A modelled callee's model function with its generic arguments, and the
/// call's arguments (rewritten where the model takes fewer).
fn model_call(callee: &str, args: &str) -> Option<(String, String)> {
    let (path, generics) = crate::parse::split_generics(callee);
    let generics: Vec<String> = generics.iter().map(Ty::to_string).collect();
    if let Some((self_ty, tr, method)) = crate::mono::qualified(&path) {
        let self_ty = Ty::parse(self_ty);
        let tr = tr.rsplit("::").next().unwrap_or(tr);
        // `Iterator::any`/`all`: `try_fold(…) == Break(())`/`Continue(())`.
        if tr == "PartialEq" && method == "eq" && last(&self_ty) == Some("ControlFlow") {
            let parts = split_args(args);
            let [value, constant] = parts.as_slice() else {
                return None;
            };
            let model = if constant.contains("::any::<") && constant.contains("promoted[") {
                "rmir_is_break"
            } else if constant.contains("::all::<") && constant.contains("promoted[") {
                "rmir_is_continue"
            } else {
                return None;
            };
            return Some((model.to_string(), value.trim().to_string()));
        }
        if let Some(model) = slice_call(&self_ty, tr, method, &generics) {
            return Some((model, args.to_string()));
        }
        // `<Range<f32> as RangeBounds<f32>>::contains::<f32>` (optimised
        // MIR's form): over any type, not only the integers a range
        // iterates.
        if tr == "RangeBounds" && method == "contains" {
            let Ty::Adt {
                args: range_args, ..
            } = &self_ty
            else {
                return None;
            };
            let model = contains_model(last(&self_ty)?)?;
            let elem = range_args.first()?.to_string();
            return Some((
                with_generics_after(model, &[elem], &generics),
                args.to_string(),
            ));
        }
        if let Some(model) = array_call(&self_ty, tr, method, &generics) {
            return Some((model, args.to_string()));
        }
        let (kind, elem, _) = range_kind(&self_ty)?;
        let module = format!("rmir_range_{}", elem.name());
        let x = || control_flow_break(generics.get(2)?);
        let (name, model_args): (&str, Vec<String>) = match (kind, tr, method) {
            (Kind::Range, "Iterator", "fold") => ("fold", generics.clone()),
            (Kind::Range, "DoubleEndedIterator", "rfold") => ("rfold", generics.clone()),
            (Kind::Range, "Iterator", "try_fold") => ("try_fold", with_x(&generics, x()?)),
            (Kind::Range, "DoubleEndedIterator", "try_rfold") => {
                ("try_rfold", with_x(&generics, x()?))
            }
            (Kind::Range, "RangeIteratorImpl", "spec_nth") => ("nth", Vec::new()),
            (Kind::Range, "Clone", "clone") => ("clone", Vec::new()),
            (Kind::Inclusive, "Clone", "clone") => ("inclusive_clone", Vec::new()),
            (Kind::Range, "Iterator", "max") => ("max", Vec::new()),
            (Kind::Range, "Iterator", "min") => ("min", Vec::new()),
            (Kind::Range, "Iterator", "zip") => {
                let other = Ty::parse(generics.first()?);
                let (k, e, _) = range_kind(&other)?;
                if k != Kind::Range || e != elem {
                    return None;
                }
                ("zip", Vec::new())
            }
            (Kind::Inclusive, "Iterator", "fold") => ("inclusive_fold", generics.clone()),
            (Kind::Inclusive, "DoubleEndedIterator", "rfold") => {
                ("inclusive_rfold", generics.clone())
            }
            (Kind::Inclusive, "Iterator", "try_fold") => {
                ("inclusive_try_fold", with_x(&generics, x()?))
            }
            (Kind::Inclusive, "DoubleEndedIterator", "try_rfold") => {
                ("inclusive_try_rfold", with_x(&generics, x()?))
            }
            (Kind::Inclusive, "RangeInclusiveIteratorImpl", "spec_try_fold") => {
                ("inclusive_try_fold", with_x(&generics, x()?))
            }
            (Kind::Inclusive, "RangeInclusiveIteratorImpl", "spec_try_rfold") => {
                ("inclusive_try_rfold", with_x(&generics, x()?))
            }
            (Kind::Inclusive, "RangeInclusiveIteratorImpl", "spec_next") => {
                ("inclusive_next", Vec::new())
            }
            (Kind::Inclusive, "RangeInclusiveIteratorImpl", "spec_next_back") => {
                ("inclusive_next_back", Vec::new())
            }
            (Kind::StepBy, "StepByImpl", "spec_next") => ("step_by_next", Vec::new()),
            (Kind::StepBy, "StepByImpl", "spec_fold") => ("step_by_fold", generics.clone()),
            (Kind::StepBy, "StepByImpl", "spec_try_fold") => {
                ("step_by_try_fold", with_x(&generics, x()?))
            }
            (Kind::Zip, "ZipImpl", "fold") => ("zip_fold", generics.clone()),
            (Kind::Filter, "Iterator", "count") => {
                let Ty::Adt { args: parts, .. } = &self_ty else {
                    return None;
                };
                let name = match range_kind(parts.first()?)?.0 {
                    Kind::Range => "filter_count",
                    Kind::Inclusive => "inclusive_filter_count",
                    Kind::RevRange => "rev_filter_count",
                    Kind::RevInclusive => "rev_inclusive_filter_count",
                    Kind::StepBy => "step_by_filter_count",
                    _ => return None,
                };
                (name, vec![parts.get(1)?.to_string()])
            }
            _ => return None,
        };
        return Some((
            with_generics(&format!("{module}::{name}"), &model_args),
            args.to_string(),
        ));
    }
    // `StepBy::<std::ops::Range<u32>>::new`, `Option::<usize>::map_or::<u32, F>`.
    let (ty, method) = path.rsplit_once("::")?;
    let (head, ty_args) = ty.split_once("::<")?;
    let head = head.rsplit("::").next()?;
    if let Some(model) = option_result_method(head, method) {
        let mut all: Vec<String> = split_args(ty_args.strip_suffix('>')?)
            .into_iter()
            .map(str::to_string)
            .collect();
        all.extend(generics);
        return Some((with_generics(model, &all), args.to_string()));
    }
    // `std::ops::Range::<f32>::contains::<f32>` (the inherent method, in
    // unoptimised MIR).
    if method == "contains" {
        let elem = ty_args.strip_suffix('>')?.to_string();
        return Some((
            with_generics_after(contains_model(head)?, &[elem], &generics),
            args.to_string(),
        ));
    }
    if method != "new" || !generics.is_empty() || head != "StepBy" {
        return None;
    }
    let inner = Ty::parse(ty_args.strip_suffix('>')?);
    let (Kind::Range, elem, _) = range_kind(&inner)? else {
        return None;
    };
    Some((
        format!("rmir_range_{}::step_by_new", elem.name()),
        args.to_string(),
    ))
}

/// The model of `Range::contains` or `RangeInclusive::contains`, by the
/// range type's name.
fn contains_model(range: &str) -> Option<&'static str> {
    match range {
        "Range" => Some("rmir_range_contains"),
        "RangeInclusive" => Some("rmir_range_inclusive_contains"),
        _ => None,
    }
}

/// The model of an `Option` or `Result` method that takes a closure; its
/// generic parameters are the type's, then the method's, as `core` orders
/// them.
fn option_result_method(ty: &str, method: &str) -> Option<&'static str> {
    Some(match (ty, method) {
        ("Option", "map") => "rmir_option_map",
        ("Option", "map_or") => "rmir_option_map_or",
        ("Option", "map_or_else") => "rmir_option_map_or_else",
        ("Option", "and_then") => "rmir_option_and_then",
        ("Option", "unwrap_or_else") => "rmir_option_unwrap_or_else",
        ("Option", "is_some_and") => "rmir_option_is_some_and",
        ("Option", "is_none_or") => "rmir_option_is_none_or",
        ("Option", "filter") => "rmir_option_filter",
        ("Option", "or_else") => "rmir_option_or_else",
        ("Option", "ok_or_else") => "rmir_option_ok_or_else",
        ("Result", "map") => "rmir_result_map",
        ("Result", "map_err") => "rmir_result_map_err",
        ("Result", "and_then") => "rmir_result_and_then",
        ("Result", "unwrap_or_else") => "rmir_result_unwrap_or_else",
        ("Result", "map_or") => "rmir_result_map_or",
        ("Result", "is_ok_and") => "rmir_result_is_ok_and",
        _ => return None,
    })
}

fn with_generics(path: &str, args: &[String]) -> String {
    if args.is_empty() {
        path.to_string()
    } else {
        format!("{path}::<{}>", args.join(", "))
    }
}

/// `model::<HEAD…, REST…>`: the element types a model function takes
/// first, then the call's own generic arguments.
fn with_generics_after(model: &str, head: &[String], rest: &[String]) -> String {
    with_generics(model, &[head, rest].concat())
}

/// `[B, F, R]` → `[B, F, X]`, `X` the break type of `R = ControlFlow<X>`.
fn with_x(generics: &[String], x: String) -> Vec<String> {
    let mut out: Vec<String> = generics.iter().take(2).cloned().collect();
    out.push(x);
    out
}

/// `ControlFlow<X>` or `ControlFlow<X, C>` → `X`.
fn control_flow_break(r: &str) -> Option<String> {
    match Ty::parse(r) {
        Ty::Adt { path, args } if path.rsplit("::").next() == Some("ControlFlow") => {
            Some(args.first()?.to_string())
        }
        _ => None,
    }
}

fn last(ty: &Ty) -> Option<&str> {
    match ty {
        Ty::Adt { path, .. } => path.rsplit("::").next(),
        _ => None,
    }
}

/// An iterator over a slice the model has: its kind and the types it
/// iterates over (the element type; `Zip`'s two; `Filter`'s element type
/// and predicate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SliceKind {
    Iter,
    Copied,
    Take,
    Zip,
    Filter,
    CopiedFilter,
}

/// `std::slice::Iter<T>` (its lifetime dropped, `frontend::slices`) and the
/// adapters over it the model has, with `T` never zero-sized (the model
/// steps a pointer, where `core` counts a zero-sized type's elements).
fn slice_kind(ty: &Ty) -> Option<(SliceKind, Vec<Ty>)> {
    let Ty::Adt { path, args } = ty else {
        return None;
    };
    let elem = |t: &Ty| -> Option<Ty> {
        match t {
            Ty::Adt { path, args }
                if path.ends_with("slice::Iter") || path.ends_with("slice::iter::Iter") =>
            {
                let [e] = args.as_slice() else { return None };
                sized_element(e).then(|| e.clone())
            }
            _ => None,
        }
    };
    let last = path.rsplit("::").next()?;
    match (last, args.as_slice()) {
        ("Iter", _) => Some((SliceKind::Iter, vec![elem(ty)?])),
        ("Copied", [i]) => Some((SliceKind::Copied, vec![elem(i)?])),
        ("Take", [i]) => Some((SliceKind::Take, vec![elem(i)?])),
        ("Zip", [a, b]) => Some((SliceKind::Zip, vec![elem(a)?, elem(b)?])),
        ("Filter", [i, p]) => match elem(i) {
            Some(e) => Some((SliceKind::Filter, vec![e, p.clone()])),
            None => match i {
                Ty::Adt { path, args } if path.ends_with("Copied") => {
                    let [inner] = args.as_slice() else {
                        return None;
                    };
                    Some((SliceKind::CopiedFilter, vec![elem(inner)?, p.clone()]))
                }
                _ => None,
            },
        },
        _ => None,
    }
}

/// Whether values of `ty` take space (a zero-sized element type's slice
/// iterator counts instead of stepping).
fn sized_element(ty: &Ty) -> bool {
    match ty {
        Ty::Scalar(_) | Ty::Ref { .. } | Ty::Ptr { .. } | Ty::FnPtr(_) => true,
        Ty::Array(e, len) => {
            len.trim_start_matches('0')
                .starts_with(|c: char| c.is_ascii_digit())
                && sized_element(e)
        }
        Ty::Tuple(parts) => parts.iter().any(sized_element),
        // A struct or enum of the crate (it may have no fields: its layout
        // is not seen here), and anything else: not routed.
        _ => false,
    }
}

/// The model of a slice iterator's method, with its generic arguments.
fn slice_call(self_ty: &Ty, tr: &str, method: &str, generics: &[String]) -> Option<String> {
    let (kind, parts) = slice_kind(self_ty)?;
    let names: Vec<String> = parts.iter().map(Ty::to_string).collect();
    let with = |model: &str, rest: &[String]| with_generics_after(model, &names[..1], rest);
    let x = || control_flow_break(generics.get(2)?);
    Some(match (kind, tr, method) {
        (SliceKind::Iter, "Iterator", "fold") => with("rmir_slice_fold", generics),
        (SliceKind::Iter, "DoubleEndedIterator", "rfold") => with("rmir_slice_rfold", generics),
        (SliceKind::Iter, "Iterator", "try_fold") => {
            with("rmir_slice_try_fold", &with_x(generics, x()?))
        }
        (SliceKind::Iter, "Iterator", "any") => with("rmir_slice_any", generics),
        (SliceKind::Iter, "Iterator", "all") => with("rmir_slice_all", generics),
        (SliceKind::Iter, "Iterator", "position") => with("rmir_slice_position", generics),
        (SliceKind::Iter, "Iterator", "reduce") => with("rmir_slice_reduce", generics),
        (SliceKind::Copied, "Iterator", "reduce") => with("rmir_copied_reduce", generics),
        (SliceKind::Iter, "Iterator", "zip") => {
            let (other, other_parts) = slice_kind(&Ty::parse(generics.first()?))?;
            if other != SliceKind::Iter {
                return None;
            }
            with("rmir_slice_zip", &[other_parts[0].to_string()])
        }
        (SliceKind::Zip, "ZipImpl", "fold") => {
            let mut rest = vec![names[1].clone()];
            rest.extend(generics.iter().cloned());
            with("rmir_slice_zip_fold", &rest)
        }
        (SliceKind::Filter, "Iterator", "count") => with("rmir_slice_filter_count", &names[1..]),
        (SliceKind::CopiedFilter, "Iterator", "count") => {
            with("rmir_copied_filter_count", &names[1..])
        }
        (SliceKind::Take, "SpecTake", "spec_fold") => with("rmir_slice_take_fold", generics),
        _ => return None,
    })
}

/// `std::array::IntoIter<T, N>`: `T` and `N`, `T` never zero-sized.
fn array_into_iter(ty: &Ty) -> Option<[String; 2]> {
    match ty {
        Ty::Adt { path, args } if path.ends_with("array::IntoIter") => {
            let [t, n] = args.as_slice() else { return None };
            let n = n.to_string();
            (sized_element(t) && n.bytes().all(|b| b.is_ascii_digit())).then(|| [t.to_string(), n])
        }
        _ => None,
    }
}

/// The model of an array's by-value iterator's method, with its generic
/// arguments (the array's length among them).
fn array_call(self_ty: &Ty, tr: &str, method: &str, generics: &[String]) -> Option<String> {
    let with =
        |model: &str, head: [String; 2], rest: &[String]| with_generics_after(model, &head, rest);
    if let Some(head) = array_into_iter(self_ty) {
        return Some(match (tr, method) {
            ("Iterator", "fold") => with("rmir_array_fold", head, generics),
            ("DoubleEndedIterator", "rfold") => with("rmir_array_rfold", head, generics),
            _ => return None,
        });
    }
    let Ty::Adt { path, args } = self_ty else {
        return None;
    };
    match (path.rsplit("::").next()?, args.as_slice(), tr, method) {
        ("Filter", [i, p], "Iterator", "count") => Some(with(
            "rmir_array_filter_count",
            array_into_iter(i)?,
            &[p.to_string()],
        )),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Range,
    Inclusive,
    RevRange,
    RevInclusive,
    StepBy,
    Zip,
    Filter,
}

/// The iterator over a range of integers `ty` is: its kind, the integer
/// type, and the other generic arguments (`Filter`'s predicate).
fn range_kind(ty: &Ty) -> Option<(Kind, Scalar, Vec<String>)> {
    let Ty::Adt { args, .. } = ty else {
        return None;
    };
    let int = |t: &Ty| t.scalar().filter(|s| s.is_int() && *s != Scalar::Char);
    let of_range = |t: &Ty| match range_kind(t) {
        Some((Kind::Range, e, _)) => Some(e),
        _ => None,
    };
    match (last(ty)?, args.as_slice()) {
        ("Range", [e]) => Some((Kind::Range, int(e)?, Vec::new())),
        ("RangeInclusive", [e]) => Some((Kind::Inclusive, int(e)?, Vec::new())),
        ("StepBy", [r]) => Some((Kind::StepBy, of_range(r)?, Vec::new())),
        ("Zip", [a, b]) => {
            let e = of_range(a)?;
            (of_range(b)? == e).then_some((Kind::Zip, e, Vec::new()))
        }
        ("Rev", [r]) => match range_kind(r)? {
            (Kind::Range, e, _) => Some((Kind::RevRange, e, Vec::new())),
            (Kind::Inclusive, e, _) => Some((Kind::RevInclusive, e, Vec::new())),
            _ => None,
        },
        ("Filter", [r, p]) => {
            let (k, e, _) = range_kind(r)?;
            matches!(
                k,
                Kind::Range | Kind::Inclusive | Kind::RevRange | Kind::RevInclusive | Kind::StepBy
            )
            .then(|| (Kind::Filter, e, vec![p.to_string()]))
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// After parsing.

/// Gives the model's generic bodies their parameters, read from the
/// model's source (the user's source does not hold them).
pub(crate) fn mark_generics(bodies: &mut [Body]) {
    let text = crate::source::SourceText::new(SOURCE);
    for b in bodies.iter_mut() {
        if b.kind != BodyKind::Fn || !is_model_body(&b.name) {
            continue;
        }
        // A range module's functions are written once, in the macro.
        let name = b.name.rsplit("::").next().unwrap_or(&b.name);
        let Some((open, _, span)) = text.fn_extent(name) else {
            continue;
        };
        let Some(start) = text.span_start(span) else {
            continue;
        };
        if let Some(params) = crate::mono::declared_params(text.slice(start, open)) {
            b.generic_params = params;
        }
    }
}

/// Drops the model's bodies that no other body names (a call, a closure
/// type), repeatedly: what is left is what the callbacks reach.
pub(crate) fn prune(bodies: &mut Vec<Body>) {
    // The comparators of the `sort` calls: their callbacks, which no call
    // names.
    let roots: std::collections::BTreeSet<String> = bodies
        .iter()
        .flat_map(|b| &b.blocks)
        .filter_map(|block| match &block.terminator.kind {
            TerminatorKind::Call { callee, .. } => {
                natural_order_callback(&callee.path, &callee.generics)
            }
            _ => None,
        })
        .collect();
    loop {
        let mut named = roots.clone();
        for b in bodies.iter() {
            for block in &b.blocks {
                if let TerminatorKind::Call { callee, .. } = &block.terminator.kind {
                    named.insert(callee.text.clone());
                    named.insert(callee.path.clone());
                }
            }
            for l in &b.locals {
                named.insert(l.ty.to_string());
            }
        }
        // The model's generic bodies are templates: their instances are
        // what runs.
        let keep = |b: &Body| {
            if !is_model_body(&b.name) {
                return true;
            }
            if !b.generic_params.is_empty() {
                return false;
            }
            if b.kind == BodyKind::Closure {
                let env = crate::pmir::env_type(b).map(Ty::to_string);
                return env.is_some_and(|t| {
                    t.contains(SYNTHETIC_FILE) && named.iter().any(|n| n.contains(&t))
                });
            }
            named.contains(&b.name)
        };
        let before = bodies.len();
        let kept: Vec<Body> = bodies.drain(..).filter(|b| keep(b)).collect();
        *bodies = kept;
        if bodies.len() == before {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_drops_module_paths() {
        assert_eq!(
            canonical("<u32 as std::iter::Sum>::sum<std::iter::Map<std::ops::Range<u32>, {closure@a.rs:1:2: 1:3}>>"),
            "<u32 as Sum>::sum<Map<Range<u32>, {closure@a.rs:1:2: 1:3}>>"
        );
        assert_eq!(
            canonical("iter::adapters::map::map_fold<u32, u32>"),
            "map_fold<u32, u32>"
        );
    }

    #[test]
    fn core_closures_become_synthetic_types_once() {
        let mut c = Closures::default();
        let decl = c.normalize(
            "let mut _4: {closure@std::iter::adapters::map::map_fold<u32, u32, u32, {closure@it.rs:4:42: 4:45}, {closure@<u32 as std::iter::Sum>::sum<std::iter::Map<std::ops::Range<u32>, {closure@it.rs:4:42: 4:45}>>::{closure#0}}>::{closure#0}};",
        );
        assert_eq!(decl, "let mut _4: {closure@rmir-core:2:1: 2:1};");
        let call = c.normalize(
            "_0 = <std::ops::Range<u32> as Iterator>::fold::<u32, {closure@iter::adapters::map::map_fold<u32, u32, u32, {closure@it.rs:4:42: 4:45}, {closure@<u32 as Sum>::sum<Map<std::ops::Range<u32>, {closure@it.rs:4:42: 4:45}>>::{closure#0}}>::{closure#0}}>(x)",
        );
        assert!(
            call.contains("fold::<u32, {closure@rmir-core:2:1: 2:1}>"),
            "{call}"
        );
        assert_eq!(c.instances.len(), 2);
        assert_eq!(c.instances[0].generic, "rmir_sum");
        assert_eq!(
            c.instances[0].args,
            [
                "u32",
                "std::iter::Map<std::ops::Range<u32>, {closure@it.rs:4:42: 4:45}>"
            ]
        );
        assert_eq!(c.instances[1].generic, "rmir_map_fold");
        assert_eq!(c.instances[1].args[4], "{closure@rmir-core:1:1: 1:1}");
        // A user closure and an unknown core closure stay.
        assert_eq!(
            c.normalize("{closure@it.rs:1:2: 1:3}"),
            "{closure@it.rs:1:2: 1:3}"
        );
        let other = "{closure@std::iter::Iterator::partition::extend<u32>::{closure#0}}";
        assert_eq!(c.normalize(other), other);
    }

    #[test]
    fn calls_route_to_the_model() {
        let route = |l: &str| route_call(l).unwrap_or_else(|| panic!("not routed: {l}"));
        assert_eq!(
            route("        _0 = <std::ops::Range<u32> as Iterator>::fold::<u32, {closure@it.rs:2:46: 2:52}>(const std::ops::Range::<u32> {{ start: 0_u32, end: 4_u32 }}, move _1, const ZeroSized: {closure@it.rs:2:46: 2:52}) -> [return: bb1, unwind continue];"),
            "        _0 = rmir_range_u32::fold::<u32, {closure@it.rs:2:46: 2:52}>(const std::ops::Range::<u32> {{ start: 0_u32, end: 4_u32 }}, move _1, const ZeroSized: {closure@it.rs:2:46: 2:52}) -> [return: bb1, unwind continue];"
        );
        assert_eq!(
            route("_9 = <std::ops::Range<i64> as Iterator>::try_fold::<(), {closure@rmir-core:1:1: 1:1}, ControlFlow<usize>>(move _3, const (), move _10) -> [return: bb1, unwind continue];"),
            "_9 = rmir_range_i64::try_fold::<(), {closure@rmir-core:1:1: 1:1}, usize>(move _3, const (), move _10) -> [return: bb1, unwind continue];"
        );
        assert_eq!(
            route("_0 = <ControlFlow<()> as PartialEq>::eq(move _7, const <std::ops::Range<u32> as std::iter::Iterator>::any::<{closure@r.rs:1:45: 1:48}>::promoted[0]) -> [return: bb2, unwind continue];"),
            "_0 = rmir_is_break(move _7) -> [return: bb2, unwind continue];"
        );
        assert_eq!(
            route("_2 = StepBy::<std::ops::Range<u16>>::new(move _3, const 4_usize) -> [return: bb1, unwind continue];"),
            "_2 = rmir_range_u16::step_by_new(move _3, const 4_usize) -> [return: bb1, unwind continue];"
        );
        assert_eq!(
            route("_5 = <std::ops::RangeInclusive<u8> as iter::range::RangeInclusiveIteratorImpl>::spec_next(move _6) -> [return: bb5, unwind continue];"),
            "_5 = rmir_range_u8::inclusive_next(move _6) -> [return: bb5, unwind continue];"
        );
        assert_eq!(
            route("_5 = Option::<usize>::map_or::<u32, {closure@r.rs:3:76: 3:79}>(move _9, const 99_u32, const ZeroSized: {closure@r.rs:3:76: 3:79}) -> [return: bb3, unwind continue];"),
            "_5 = rmir_option_map_or::<usize, u32, {closure@r.rs:3:76: 3:79}>(move _9, const 99_u32, const ZeroSized: {closure@r.rs:3:76: 3:79}) -> [return: bb3, unwind continue];"
        );
        // Not modelled: a range of `char`, a slice iterator.
        assert_eq!(route_call("_0 = <std::ops::Range<char> as Iterator>::fold::<u32, F>(move _1, move _2, move _3) -> [return: bb1, unwind continue];"), None);
        assert_eq!(route_call("_0 = <std::slice::Iter<'_, u32> as Iterator>::any::<F>(move _2, move _5) -> [return: bb1, unwind continue];"), None);
    }
}
