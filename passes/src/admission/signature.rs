//! Rule: the callback has the type its provider takes (`(T, T) -> T` for a
//! fold, `(T) -> U` for a map, `(&T, &T) -> Ordering` for a comparator, …;
//! `manifest::Shape`), over element types the providers take
//! (`vocab::ELEMENT_SCALARS`). The signature it gives is the thunk's
//! (`Shape::signature`): a comparator's is `(T, T) -> bool`.

use frontend::ty::{Scalar, Ty};
use vocab::{Element, Field, Layout, Provider, Shape, Signature, ELEMENT_SCALARS};

use super::facts::{CallbackRef, ModuleFacts, RegistrationFact};
use super::Ctx;
use crate::codes::Code;
use crate::diagnostic::Diagnostic;
use crate::lower::plan::Adapter;

/// The element types in words: `` `i8`, `i16`, …, `f64` ``.
fn supported() -> String {
    ELEMENT_SCALARS
        .iter()
        .map(|s| format!("`{}`", s.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The element type a `Ty` is, when it is one `provider` takes: a scalar
/// of [`ELEMENT_SCALARS`], or a tuple or struct of them (nested) with the
/// layout the frontend measured (`rmir.element_layout`), for a provider
/// that takes composites.
fn element(facts: &ModuleFacts, provider: Provider, t: &Ty) -> Option<Element> {
    let e = match t.scalar() {
        Some(s) => Element::Scalar(s),
        None => {
            if !provider.takes_composites() {
                return None;
            }
            composite(facts, t)?
        }
    };
    e.is_provider_element().then_some(e)
}

/// A `par_iter` chain's value type, which may hold `usize` indices
/// besides what an element holds (`enumerate`'s `(usize, T)`):
/// [`Element::is_chain_value`].
fn chain_value(facts: &ModuleFacts, t: &Ty) -> Option<Element> {
    let e = match t.scalar() {
        Some(s) => Element::Scalar(s),
        None => composite(facts, t)?,
    };
    e.is_chain_value().then_some(e)
}

/// A tuple's or struct's measured layout as an element: its scalars
/// flattened in field order, each named by its path (`1.0`).
fn composite(facts: &ModuleFacts, t: &Ty) -> Option<Element> {
    // The measured type may be spelled the other way (`geo::Point` in a
    // chain's `ParIter<'_, geo::Point>`, `Point` in a closure's header).
    let (_, l) = facts.elements.iter().find(|(ty, _)| ty == t).or_else(|| {
        facts
            .elements
            .iter()
            .find(|(ty, _)| canonical(facts, ty) == *t)
    })?;
    let fields = l
        .leaves
        .iter()
        .map(|leaf| Field {
            name: leaf
                .path
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join("."),
            offset: leaf.offset,
            element: Element::Scalar(leaf.scalar),
        })
        .collect();
    Some(Element::Composite(Layout {
        name: t.to_string(),
        size: l.size,
        align: l.align,
        fields,
    }))
}

/// A callback's parameters and result as its thunk passes them, and how
/// the thunk calls the body: a comparator's `(&T, &T) -> Ordering` and a
/// key's `(&T) -> K` are `(T, T) -> bool`, "less than", and a `same`'s
/// `(&T, &T) -> bool` is `(T, T) -> bool` (a partition's `(&T) -> bool`:
/// `(T) -> bool`, a partition_point's `(&T, &Q) -> bool`: `(T, Q) -> bool`); every other shape's are the callback's own. `None` for a comparator, key or `same` that does not
/// take shared references, or returns something else than `Ordering`, a
/// key ([`key`]) or `bool`.
fn thunk_view(shape: Shape, params: &[Ty], ret: &Ty) -> Option<(Vec<Ty>, Ty, Adapter)> {
    let values = || {
        params
            .iter()
            .map(|p| match p {
                Ty::Ref {
                    mutable: false,
                    inner,
                } => Some((**inner).clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
    };
    let less = Ty::Scalar(Scalar::Bool);
    match shape {
        Shape::Compare => {
            let ordering = matches!(ret, Ty::Adt { path, args }
                if args.is_empty() && matches!(path.as_str(), "std::cmp::Ordering" | "core::cmp::Ordering"));
            ordering.then_some((values()?, less, Adapter::Compare))
        }
        Shape::Same | Shape::RefPredicate | Shape::Probe => {
            (*ret == less).then_some((values()?, less.clone(), Adapter::Refs))
        }
        Shape::Key => match (values()?.as_slice(), key(ret)) {
            ([t], Some(adapter)) => Some((vec![t.clone(), t.clone()], less, adapter)),
            _ => None,
        },
        // `(mode: bool, x: T, a: R, b: R, out: &mut R) -> bool`, written
        // by `frontend::chain`: the chain maps `T` to `R`. An indexed
        // chain's (`enumerate`) takes each element's index after `x`.
        Shape::Chain => match params {
            [Ty::Scalar(Scalar::Bool), t, a, b, Ty::Ref {
                mutable: true,
                inner,
            }] if a == b && **inner == *a && *ret == less => {
                Some((vec![t.clone()], a.clone(), Adapter::Chain))
            }
            [Ty::Scalar(Scalar::Bool), t, i @ Ty::Scalar(Scalar::Usize), a, b, Ty::Ref {
                mutable: true,
                inner,
            }] if a == b && **inner == *a && *ret == less => {
                Some((vec![t.clone(), i.clone()], a.clone(), Adapter::Chain))
            }
            _ => None,
        },
        // `(mode: bool, ka: &K, kb: &K, a: V, b: V, out: &mut V) -> bool`,
        // written by `frontend::chain` for a by-key's `same` and `op`.
        Shape::ByKey => match params {
            [Ty::Scalar(Scalar::Bool), Ty::Ref {
                mutable: false,
                inner: ka,
            }, Ty::Ref {
                mutable: false,
                inner: kb,
            }, a, b, Ty::Ref {
                mutable: true,
                inner,
            }] if ka == kb && a == b && **inner == *a && *ret == less => {
                Some((vec![(**ka).clone(), a.clone()], a.clone(), Adapter::ByKey))
            }
            _ => None,
        },
        // A bin is a `usize`, as an index is.
        Shape::Bin => (*ret == Ty::Scalar(Scalar::Usize)).then_some((
            params.to_vec(),
            ret.clone(),
            Adapter::Direct,
        )),
        _ => Some((params.to_vec(), ret.clone(), Adapter::Direct)),
    }
}

/// How the thunk compares the key a key function returns, when it can
/// compare it as `Ord` does: an integer, `bool` or `char`, or a tuple of
/// up to four of them (field by field).
fn key(ret: &Ty) -> Option<Adapter> {
    let ord = |t: &Ty| {
        t.scalar()
            .filter(|s| s.is_int() || matches!(s, Scalar::Bool | Scalar::Char))
    };
    match ret {
        Ty::Tuple(parts) if (1..=4).contains(&parts.len()) => parts
            .iter()
            .map(ord)
            .collect::<Option<_>>()
            .map(Adapter::TupleKey),
        t => ord(t).map(Adapter::Key),
    }
}

/// The shape of the callback a registration takes: its function's
/// (`frontend::registry`), which is its provider's but for an adapted one
/// (`sort_by_key`).
fn shape(reg: &RegistrationFact) -> Shape {
    frontend::registry::shape_of(&reg.function).unwrap_or(reg.provider.shape())
}

/// The thunk's signature over the thunk's view of the callback's
/// parameters and result, whose element types the rule has checked.
fn signature(ctx: &Ctx<'_>, params: &[Ty], ret: &Ty) -> Option<Signature> {
    let bool_ty = Ty::Scalar(Scalar::Bool);
    let scalar = |t: &Ty| {
        if *t == bool_ty {
            Some(Element::Scalar(Scalar::Bool))
        } else if matches!(shape(ctx.reg), Shape::Bin | Shape::Chain)
            && *t == Ty::Scalar(Scalar::Usize)
        {
            // A histogram's bin, or a chain's index, which no element is.
            Some(Element::Scalar(Scalar::Usize))
        } else {
            element(ctx.facts, ctx.reg.provider, t)
        }
    };
    // A chain's value may hold indices (`enumerate`).
    let value = match shape(ctx.reg) {
        Shape::Chain => chain_value(ctx.facts, ret).or_else(|| scalar(ret)),
        _ => scalar(ret),
    };
    Some(Signature {
        params: params.iter().map(scalar).collect::<Option<_>>()?,
        ret: value?,
    })
}

/// Checks the rule; when it holds, the thunk's signature and how the
/// thunk calls the callback.
pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) -> Option<(Signature, Adapter)> {
    let Some(root) = ctx.root.and_then(|r| ctx.facts.bodies.get(r)) else {
        // `sort` of a type with no comparator of the core model's.
        if frontend::registry::is_natural_order(&ctx.reg.function) {
            out.push(unordered_elements(ctx));
            return None;
        }
        // No body: a fn pointer or a callback of an unknown kind.
        if let CallbackRef::Other(t) = &ctx.reg.callback {
            let fn_ptr = match t {
                Ty::FnPtr(_) => true,
                Ty::Other(text) => text.starts_with("extern "),
                _ => false,
            };
            if fn_ptr {
                out.push(
                    Diagnostic::new(
                        Code::Signature,
                        format!("callback is a function pointer (`{t}`): its target is known only at run time"),
                        ctx.registration_label("a fn-pointer value is registered here"),
                    )
                    .with_note("the GPU code is compiled ahead of time from the callback's body; a pointer's target is chosen when the program runs, and a host address cannot be called on the device")
                    .with_help(format!("pass the `fn` item itself (`native::{}(data, …, add)`), or a closure", ctx.reg.function)),
                );
                return None;
            }
        }
        if let CallbackRef::Other(Ty::FnDef { name, .. }) = &ctx.reg.callback {
            out.push(
                Diagnostic::new(
                    Code::Signature,
                    format!("callback `{name}` is a function of another crate: it has no body to compile"),
                    ctx.registration_label("registered here"),
                )
                .with_note("the GPU code is compiled from the MIR of the crate that makes the call, which holds the bodies of its own functions only")
                .with_help(format!("define the function in this crate (a copy of `{name}`), or pass a closure written here")),
            );
            return None;
        }
        if shape(ctx.reg) == Shape::ByKey {
            out.push(
                Diagnostic::new(
                    Code::Signature,
                    format!("`{}`'s `same` and `op` are not two closures of this function", ctx.reg.function),
                    ctx.registration_label(format!("`{}` is called here", ctx.reg.function)),
                )
                .with_note("the two callbacks are compiled as one, from the bodies of two closures written in a non-generic function of this crate: `same` of type `(&K, &K) -> bool`, `op` of type `(V, V) -> V`")
                .with_help("pass two closures at the call, `|a, b| a == b` and `|x, y| x + y`, in a function whose key and value types are concrete"),
            );
            return None;
        }
        if shape(ctx.reg) == Shape::Chain {
            out.push(
                Diagnostic::new(
                    Code::Signature,
                    "this `par_iter` chain's closures belong to a generic function".to_string(),
                    ctx.registration_label(format!("the chain ends with `{}` here", ctx.reg.function)),
                )
                .with_note("a chain is compiled from its closures' bodies for its element types; a generic function's closures are written in its type parameters, and a chain is not compiled for each of the function's instances")
                .with_help("write the chain where its element types are concrete (in the generic function's callers), or make the function non-generic"),
            );
            return None;
        }
        let what = match &ctx.reg.callback {
            CallbackRef::Other(t) => format!("callback of type `{t}` has no body to compile"),
            CallbackRef::Closure(b) | CallbackRef::FnItem(b) => {
                format!("callback `{b}` has no body to compile")
            }
        };
        out.push(
            Diagnostic::new(
                Code::Signature,
                what,
                ctx.registration_label("registered here"),
            )
            .with_note(
                "only closures and fn items defined in this file can be compiled for the GPU",
            )
            .with_help("pass a closure or a `fn` item directly to the registration function"),
        );
        return None;
    };
    let shape = shape(ctx.reg);
    let params: Vec<String> = root.params.iter().map(Ty::to_string).collect();
    let found = format!("({}) -> {}", params.join(", "), root.ret);
    let name = ctx.reg.function.as_str();
    let bool_ty = Ty::Scalar(Scalar::Bool);
    let view = thunk_view(shape, &root.params, &root.ret).map(|(params, ret, adapter)| {
        let params = params
            .iter()
            .map(|t| canonical(ctx.facts, t))
            .collect::<Vec<_>>();
        (params, canonical(ctx.facts, &ret), adapter)
    });
    let Some(elements) = view
        .as_ref()
        .and_then(|(params, ret, _)| shape.elements(params, ret, &bool_ty))
    else {
        if shape == Shape::Key {
            out.push(key_mismatch(ctx, &found));
            return None;
        }
        out.push(
            Diagnostic::new(
                Code::Signature,
                format!(
                    "callback has type `{found}`, but provider `{}` needs `{}`",
                    ctx.reg.provider,
                    shape.describe()
                ),
                ctx.callback_label(format!("this {} has type `{found}`", kind(ctx))),
            )
            .with_label(ctx.registration_label(format!("registered with `{name}` here")))
            .with_note(format!(
                "`native::{name}` is generic, so rustc accepts this; the GPU provider calls the callback as `{}`",
                shape.describe()
            ))
            .with_help(format!("give `{name}` a callback of type `{}`", shape.describe())),
        );
        return None;
    };
    // The first element type the providers do not take, if any.
    // A chain's values may be `bool`s (`any`, `all`).
    let taken = |i: usize, t: &Ty| {
        element(ctx.facts, ctx.reg.provider, t).is_some()
            || (shape == Shape::Chain
                && i == 1
                && (*t == bool_ty || chain_value(ctx.facts, t).is_some()))
    };
    let Some(at) = elements.iter().enumerate().position(|(i, t)| !taken(i, t)) else {
        let (params, ret, adapter) = view?;
        return Some((signature(ctx, &params, &ret)?, adapter));
    };
    let bad = &elements[at];
    // A map's last element type is its result's.
    let result = matches!(shape, vocab::Shape::Map | vocab::Shape::Zip) && at + 1 == elements.len();
    let composite_help = || {
        format!(
            "an element may be a tuple or a `#[derive(Clone, Copy)]` struct (defined in this crate) whose fields are each one of {}, or such a tuple or struct",
            supported()
        )
    };
    let takes_composites = ctx.reg.provider.takes_composites();
    let (what, help) = match bad {
        Ty::Tuple(_) | Ty::Adt { .. } if result && takes_composites => (
            format!(
                "produce `{bad}` as elements: {}",
                composite_fault(ctx.facts, bad)
            ),
            composite_help(),
        ),
        _ if result => (
            format!("produce elements of type `{bad}`"),
            if *bad == bool_ty {
                format!(
                    "return one of {} (`(x > 0) as u8` keeps a flag in a byte)",
                    supported()
                )
            } else {
                format!("return one of {}", supported())
            },
        ),
        Ty::Tuple(_) | Ty::Adt { .. } if takes_composites => (
            format!("take `{bad}` as elements: {}", composite_fault(ctx.facts, bad)),
            composite_help(),
        ),
        Ty::Tuple(_) => (
            format!("tuples as elements (`{bad}`)"),
            format!(
                "{}; or split the tuples into one slice per field (a struct of arrays), each of one of {}",
                composite_providers(),
                supported()
            ),
        ),
        Ty::Ref { .. } | Ty::Ptr { .. } => (
            format!("references as elements (`{bad}`)"),
            format!("pass the values themselves, of one of {}", supported()),
        ),
        Ty::Adt { .. } => (
            format!("structs as elements (`{bad}`)"),
            format!(
                "{}; or split the structs into one slice per field (a struct of arrays), each of one of {}",
                composite_providers(),
                supported()
            ),
        ),
        _ => (
            format!("elements of type `{bad}`"),
            format!(
                "convert the data to one of {} on the host first",
                supported()
            ),
        ),
    };
    out.push(
        Diagnostic::new(
            Code::Signature,
            if result || (takes_composites && matches!(bad, Ty::Tuple(_) | Ty::Adt { .. })) {
                format!("provider `{}` does not {what}", ctx.reg.provider)
            } else {
                format!("provider `{}` does not take {what}", ctx.reg.provider)
            },
            // A chain's callback is the body it was compiled to, whose
            // type says nothing to its author: its items' type does.
            ctx.callback_label(if ctx.reg.provider.shape() == vocab::Shape::Chain {
                format!("this `par_iter` chain reads elements of type `{bad}`")
            } else if shape == Shape::ByKey && at == 0 {
                format!("`same` compares keys of type `{bad}`")
            } else if shape == Shape::ByKey {
                format!("`op` folds values of type `{bad}`")
            } else {
                format!("this {} has type `{found}`", kind(ctx))
            }),
        )
        .with_label(ctx.registration_label(format!("registered with `{name}` here")))
        .with_note(format!(
            "`native::{name}` is generic, so rustc accepts this; the GPU providers take the element types {}{}",
            supported(),
            if takes_composites {
                format!("; `{}` takes tuples and structs of them too", ctx.reg.provider)
            } else {
                String::new()
            }
        ))
        .with_help(help),
    );
    None
}

/// One spelling of a type that MIR prints two ways: rustc trims a path to
/// the bare name where that name is unique (`-> Point` in a closure's
/// header, `let _0: inner::Point` in its body), so a qualified path whose
/// last segment is also a known bare path is that type.
fn canonical(facts: &ModuleFacts, t: &Ty) -> Ty {
    match t {
        Ty::Adt { path, args } => {
            let args: Vec<Ty> = args.iter().map(|a| canonical(facts, a)).collect();
            let bare = path.rsplit("::").next().unwrap_or(path);
            let trimmed = Ty::Adt {
                path: bare.to_string(),
                args: args.clone(),
            };
            if bare != path && facts.adts.of(&trimmed).is_some() {
                trimmed
            } else {
                Ty::Adt {
                    path: path.clone(),
                    args,
                }
            }
        }
        Ty::Tuple(parts) => Ty::Tuple(parts.iter().map(|p| canonical(facts, p)).collect()),
        Ty::Ref { mutable, inner } => Ty::Ref {
            mutable: *mutable,
            inner: Box::new(canonical(facts, inner)),
        },
        t => t.clone(),
    }
}

/// The providers that take tuples and structs as elements, in words.
fn composite_providers() -> String {
    let names: Vec<String> = Provider::ALL
        .iter()
        .filter(|p| p.takes_composites())
        .map(|p| format!("`{p}`"))
        .collect();
    let list = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "no provider".to_string(),
    };
    format!("{list} take tuples and structs as elements")
}

/// Why a tuple or struct is no element: a field that is not a scalar of
/// [`ELEMENT_SCALARS`] (by its path), or one that is no scalar, tuple or
/// struct of them at all (no layout was measured).
fn composite_fault(facts: &ModuleFacts, t: &Ty) -> String {
    let what = if matches!(t, Ty::Tuple(_)) {
        "tuple"
    } else {
        "struct"
    };
    let Some((_, l)) = facts.elements.iter().find(|(ty, _)| ty == t) else {
        return format!(
            "a field of this {what} is not a scalar, a tuple or a struct of them (a reference, an array, an enum, a generic or foreign type)"
        );
    };
    match l
        .leaves
        .iter()
        .find(|leaf| !ELEMENT_SCALARS.contains(&leaf.scalar))
    {
        Some(leaf) => {
            let path: Vec<String> = leaf.path.iter().map(u32::to_string).collect();
            let counted = match t {
                Ty::Tuple(_) => "",
                _ => " (fields counted from 0 in declaration order)",
            };
            format!(
                "its field `.{}`{counted} is a `{}`",
                path.join("."),
                leaf.scalar.name()
            )
        }
        None => format!("this {what}'s layout is not one the providers take"),
    }
}

/// `sort` or `sort_unstable` of elements that are not integers (their
/// callback names the element type: it has no comparator of the core
/// model's).
fn unordered_elements(ctx: &Ctx<'_>) -> Diagnostic {
    let name = ctx.reg.function.as_str();
    let ty = match &ctx.reg.callback {
        CallbackRef::Other(t) => format!("`{t}`"),
        _ => "these".to_string(),
    };
    let ints: Vec<String> = ELEMENT_SCALARS
        .iter()
        .filter(|s| s.is_int())
        .map(|s| format!("`{}`", s.name()))
        .collect();
    Diagnostic::new(
        Code::Signature,
        format!("`{name}` on the GPU does not sort elements of type {ty}"),
        ctx.registration_label(format!("sorts {ty} here")),
    )
    .with_note(format!(
        "`sort` and `sort_unstable` on the GPU take the integer element types {}",
        ints.join(", ")
    ))
    .with_note("in a generic function, `sort` is compiled for each element type the crate calls the function with")
    .with_help("convert the elements to one of these integer types on the host first (`c as u32` for a `char`), or call the generic function with one")
}

/// A callback of a generic function that no code of the crate calls with
/// concrete types: its body is written in the function's type parameters,
/// and the GPU code is made for each instance (`frontend`'s
/// monomorphisation), of which there is none.
pub fn uninstantiated(ctx: &Ctx<'_>) -> Option<Diagnostic> {
    let root = ctx.facts.body(ctx.root?)?;
    if root.generic_params.is_empty() {
        return None;
    }
    let params: Vec<String> = root
        .generic_params
        .iter()
        .map(|p| format!("`{p}`"))
        .collect();
    let owner = ctx.reg.caller.as_str();
    let name = ctx.reg.function.as_str();
    Some(
        Diagnostic::new(
            Code::Signature,
            format!(
                "callback is written in the type parameters of `{owner}` ({}), and no code of this crate calls `{owner}` with concrete types",
                params.join(", ")
            ),
            ctx.callback_label(format!("this {} is compiled once per instance of `{owner}`", kind(ctx))),
        )
        .with_label(ctx.registration_label(format!("registered with `{name}` here")))
        .with_note("the GPU code of a generic function's callback is made for each instance the crate calls (`f::<i32>(…)`), with that instance's element types")
        .with_help(format!(
            "call `{owner}` with concrete element types in this crate (a non-generic wrapper is enough), or write the callback for one element type"
        )),
    )
}

/// A key function whose key the merge sort's thunk cannot compare.
fn key_mismatch(ctx: &Ctx<'_>, found: &str) -> Diagnostic {
    let name = ctx.reg.function.as_str();
    Diagnostic::new(
        Code::Signature,
        format!("callback has type `{found}`, but `{name}` needs `(&T) -> K` with `K` an integer, `bool` or `char`, or a tuple of up to four of them"),
        ctx.callback_label(format!("this {} has type `{found}`", kind(ctx))),
    )
    .with_label(ctx.registration_label(format!("registered with `{name}` here")))
    .with_note("the GPU's merge sort compares two elements' keys field by field, as `Ord` does, and each field must be a scalar it can compare")
    .with_help("for another key, sort with `sort_by` and a comparator: `|a, b| ka(a).cmp(&ka(b)).then(kb(a).total_cmp(&kb(b)))`")
}

fn kind(ctx: &Ctx<'_>) -> &'static str {
    match ctx.reg.callback {
        CallbackRef::Closure(_) => "closure",
        _ => "function",
    }
}
