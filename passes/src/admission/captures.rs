//! Rule: captures are scalars held by value, or tuples, arrays, structs and
//! closures of them, measured (E0101 borrowed, E0102 raw pointer, E0103
//! anything else that is not made of numbers, `bool` and `char`).

use frontend::pmir::Span;
use frontend::ty::{Scalar, Ty};

use super::facts::{CaptureFact, CaptureMode, ClosureFact};
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::{Applicability, Diagnostic, Edit, Hoist, Suggestion};

/// The scalars an environment holds: integers, floats, `bool` and `char`
/// (`Scalar::is_capturable`: not `f16`/`f128`, which have no CUDA C++ type).
pub fn is_numeric_scalar(ty: &Ty) -> bool {
    ty.scalar().is_some_and(Scalar::is_capturable)
}

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    let Some(closure) = ctx.closure else { return };
    let before = out.len();
    if frontend::chain::is_chain_closure(&closure.ty) {
        // A `par_iter` chain holds its closures by value: each of them is
        // checked as a callback, where the user wrote it.
        for cap in &closure.captures {
            match ctx.facts.closures.values().find(|c| c.ty == cap.ty) {
                Some(stage) => check_closure(ctx, stage, out),
                None => check_capture(ctx, closure, cap, out),
            }
        }
    } else {
        check_closure(ctx, closure, out);
    }
    if out.len() == before {
        if let Err(why) = crate::lower::plan::closure_env(closure) {
            out.push(
                Diagnostic::new(
                    Code::UnknownLayout,
                    "rustc's layout of this closure is unknown".to_string(),
                    label(closure.loc, "its captures are read from the closure object"),
                )
                .with_note(why),
            );
        }
    }
}

/// The captures of `closure`, which runs on the GPU.
fn check_closure(ctx: &Ctx<'_>, closure: &ClosureFact, out: &mut Vec<Diagnostic>) {
    for cap in &closure.captures {
        check_capture(ctx, closure, cap, out);
    }
}

fn check_capture(
    ctx: &Ctx<'_>,
    closure: &ClosureFact,
    cap: &CaptureFact,
    out: &mut Vec<Diagnostic>,
) {
    let ty = cap.ty.clone();
    if let Some(d) = borrowed(ctx, closure, cap, &ty)
        .or_else(|| pointer(closure, cap, &ty))
        .or_else(|| non_scalar(ctx, closure, cap, &ty))
    {
        out.push(d);
    }
}

/// A label on `closure`, the callback or a closure of its chain.
fn runs_here(closure: &ClosureFact, text: impl Into<String>) -> crate::diagnostic::Label {
    label(closure.loc, text)
}

fn borrowed(
    ctx: &Ctx<'_>,
    closure: &ClosureFact,
    cap: &CaptureFact,
    ty: &Ty,
) -> Option<Diagnostic> {
    let by_ref = matches!(cap.mode, CaptureMode::ByRef | CaptureMode::ByMutRef);
    if !by_ref && !matches!(ty, Ty::Ref { .. }) {
        return None;
    }
    let name = &cap.name;
    let d = if by_ref {
        let how = if cap.mode == CaptureMode::ByMutRef {
            "mutable reference"
        } else {
            "reference"
        };
        let (help, fix) = borrowed_fix(closure, cap, ty);
        Diagnostic::new(
            Code::BorrowedCapture,
            format!("callback captures `{name}` by {how}"),
            label(cap.loc, format!("`{name}` is borrowed here")),
        )
        .with_label(runs_here(
            closure,
            format!(
                "this closure runs on the GPU, registered with `{}`",
                ctx.reg.function
            ),
        ))
        .with_note(format!(
            "the environment field is `{}`: a host address, meaningless on the device",
            cap.ty
        ))
        .with_suggestions(help, fix)
    } else {
        let (help, fix) = value_fix(closure, name, ty);
        Diagnostic::new(
            Code::BorrowedCapture,
            format!("callback captures the reference `{name}`"),
            label(cap.loc, format!("`{name}` has type `{}`", cap.ty)),
        )
        .with_label(runs_here(
            closure,
            format!(
                "this closure runs on the GPU, registered with `{}`",
                ctx.reg.function
            ),
        ))
        .with_note("a reference holds a host address, meaningless on the device")
        .with_suggestions(help, fix)
    };
    Some(d)
}

fn pointer(closure: &ClosureFact, cap: &CaptureFact, ty: &Ty) -> Option<Diagnostic> {
    if !matches!(ty, Ty::Ptr { .. }) {
        return None;
    }
    let name = &cap.name;
    let (help, fix) = value_fix(closure, name, ty);
    Some(
        Diagnostic::new(
            Code::PointerCapture,
            format!("callback captures the raw pointer `{name}`"),
            label(cap.loc, format!("`{name}` has type `{}`", cap.ty)),
        )
        .with_label(runs_here(closure, "this closure runs on the GPU"))
        .with_note(
            "a pointer captured on the host holds a host address; the GPU cannot dereference it",
        )
        .with_suggestions(help, fix),
    )
}

fn non_scalar(
    ctx: &Ctx<'_>,
    closure: &ClosureFact,
    cap: &CaptureFact,
    ty: &Ty,
) -> Option<Diagnostic> {
    if is_numeric_scalar(ty)
        || super::is_measured_aggregate(closure, cap)
        || made_of_scalars(ctx, ty, 0)
    {
        // An aggregate of scalars the frontend did not measure (another
        // capture of the closure stopped it) is E0110's, once the others
        // are fixed.
        return None;
    }
    let name = &cap.name;
    let (help, fix) = value_fix(closure, name, ty);
    Some(
        Diagnostic::new(
            Code::NonScalarCapture,
            format!(
                "callback captures `{name}` of type `{}`, which is not made of numeric scalars",
                cap.ty
            ),
            label(cap.loc, format!("`{name}` is captured here")),
        )
        .with_label(runs_here(closure, "this closure runs on the GPU"))
        .with_note("a callback environment holds integers, floats, `bool` and `char`, and tuples, arrays, structs of the crate and closures made of them, by value: that is its ABI")
        .with_suggestions(help, fix),
    )
}

/// Whether a value of `ty` is made of numeric scalars the environment can
/// hold by value: a scalar, or a tuple, array, non-generic struct of the
/// crate or closure of them (what `frontend::closure_layout::shape_of`
/// measures, read from the module's facts).
fn made_of_scalars(ctx: &Ctx<'_>, ty: &Ty, depth: usize) -> bool {
    let inner = |t: &Ty| made_of_scalars(ctx, t, depth + 1);
    depth <= 8
        && match ty {
            Ty::Scalar(_) => is_numeric_scalar(ty),
            Ty::Tuple(parts) => !parts.is_empty() && parts.iter().all(inner),
            Ty::Array(e, _) => inner(e),
            Ty::Adt { args, .. } if args.is_empty() => ctx
                .facts
                .adts
                .of(ty)
                .filter(|(d, _)| d.params.is_empty())
                .and_then(|_| ctx.facts.adts.struct_fields(ty))
                .is_some_and(|fields| !fields.is_empty() && fields.iter().all(inner)),
            Ty::Closure { .. } => ctx
                .facts
                .closures
                .values()
                .find(|c| &c.ty == ty)
                .is_some_and(|c| {
                    !c.captures.is_empty()
                        && c.captures
                            .iter()
                            .all(|k| k.mode == CaptureMode::ByValue && inner(&k.ty))
                }),
            _ => false,
        }
}

/// A help, and the changes it may propose, in order of preference.
type Fix = (String, Vec<Suggestion>);

/// Whether making the closure `move` keeps the program's meaning (and
/// compiles): everything it borrows is a numeric scalar, which `move`
/// copies; a borrowed `Vec` would be moved into the closure instead.
pub fn move_copies_only(closure: &ClosureFact) -> bool {
    closure
        .captures
        .iter()
        .filter(|c| c.mode != CaptureMode::ByValue)
        .all(|c| matches!(&c.ty, Ty::Ref { inner, .. } if is_numeric_scalar(inner)))
}

/// The fix for a capture by reference (a closure without `move`): the
/// borrowed place's type is the environment field's pointee.
fn borrowed_fix(closure: &ClosureFact, cap: &CaptureFact, field: &Ty) -> Fix {
    let name = &cap.name;
    let var = match field {
        Ty::Ref { inner, .. } => inner.as_ref(),
        other => other,
    };
    let head = Some(closure)
        .filter(|c| move_copies_only(c))
        .and_then(|c| c.loc.span);
    if is_numeric_scalar(var) {
        let mut help = format!("add `move` before the closure to capture `{name}` by value");
        if cap.mode == CaptureMode::ByMutRef {
            // The closure writes the variable: it would write its own copy.
            help.push_str("; its writes then change the closure's own copy");
            let s = head.map(|closure| {
                let edits = vec![Edit::MoveCapture {
                    closure,
                    place: name.clone(),
                }];
                Suggestion::new(help.clone(), Applicability::MaybeIncorrect, edits)
            });
            return (help, s.into_iter().collect());
        }
        // The borrowed place is `k`, or `*k` of a reference `k` (rustc
        // captures the place a closure uses), which only the text tells:
        // `move` for the one, the value read first for the other.
        let mut alternatives = Vec::new();
        if let Some(closure) = head {
            alternatives.push(Suggestion::new(
                help.clone(),
                Applicability::MachineApplicable,
                vec![Edit::MoveCapture {
                    closure,
                    place: name.clone(),
                }],
            ));
            for depth in 1..=2 {
                let expr = format!("{}{name}", "*".repeat(depth));
                let local = local_name(name);
                alternatives.push(Suggestion::new(
                    format!("capture the value instead: `let {local} = {expr};` before the closure, and make the closure `move`"),
                    Applicability::MachineApplicable,
                    vec![hoist(closure, name, expr, true), Edit::MakeMove { closure }],
                ));
            }
        }
        return (help, alternatives);
    }
    // Moving a reference still captures a reference: the value it points
    // to must be read first, and the closure made `move` to capture that.
    let (mut help, mut suggestions) = value_fix(closure, name, var);
    if !help.contains("`move`") {
        help.push_str(", and make the closure `move`");
    }
    match head {
        Some(closure) => {
            for s in &mut suggestions {
                s.message = help.clone();
                s.edits.push(Edit::MakeMove { closure });
            }
        }
        None => suggestions.clear(),
    }
    (help, suggestions)
}

fn hoist(closure: Span, place: &str, expr: String, keep_method_calls: bool) -> Edit {
    Edit::Hoist(Hoist {
        closure,
        place: place.to_string(),
        expr,
        name: local_name(place),
        keep_method_calls,
    })
}

/// The fix for a capture of type `ty` held by value (or the variable a
/// closure borrows): read on the host what the callback needs, as a number.
fn value_fix(closure: &ClosureFact, name: &str, ty: &Ty) -> Fix {
    let local = local_name(name);
    let head = closure.loc.span;
    // The help, with the hoist of `expr` as its suggestion.
    let hoisted = |help: String, expr: String, keep_method_calls: bool| {
        let s = head.map(|closure| {
            Suggestion::new(
                help.clone(),
                Applicability::MachineApplicable,
                vec![hoist(closure, name, expr, keep_method_calls)],
            )
        });
        (help, s.into_iter().collect())
    };
    let advice = |help: String| (help, Vec::new());
    let adt = |p: &str, want: &str| p == want || p.ends_with(&format!("::{want}"));
    match ty {
        Ty::Ref { .. } if is_numeric_scalar(ty.peel_refs()) => {
            let depth = std::iter::successors(Some(ty), |t| match t {
                Ty::Ref { inner, .. } => Some(inner.as_ref()),
                _ => None,
            })
            .count()
                - 1;
            let expr = format!("{}{name}", "*".repeat(depth));
            hoisted(
                format!("capture the value instead: `let {local} = {expr};` before the closure"),
                expr,
                true,
            )
        }
        Ty::Ref { inner, .. } => advice(format!(
            "copy the scalar values you need out of `{name}` (of type `{inner}`) into locals before the closure, and capture those with `move`"
        )),
        Ty::Ptr { inner, .. } if is_numeric_scalar(inner) => {
            let expr = format!("unsafe {{ *{name} }}");
            hoisted(
                format!("read the value on the host and capture it: `let {local} = {expr};` before the closure"),
                expr,
                false,
            )
        }
        Ty::Ptr { inner, .. } => advice(format!(
            "read the scalar values you need through `{name}` (to `{inner}`) on the host into locals before the closure, and capture those with `move`"
        )),
        Ty::Adt { path, .. } if adt(path, "String") => advice(format!(
            "capture the scalars you need, e.g. `let len = {name}.len();` before the closure"
        )),
        Ty::Adt { path, .. } if adt(path, "Vec") => advice(format!(
            "capture the elements you need as scalars, e.g. `let first = {name}[0];` before the closure"
        )),
        Ty::Array(..) => advice(format!(
            "capture the elements you need as scalars, e.g. `let first = {name}[0];` before the closure"
        )),
        Ty::Tuple(_) => advice(format!(
            "capture the elements you need as scalars, e.g. `let first = {name}.0;` before the closure"
        )),
        Ty::Adt { path, args } if adt(path, "Box") && args.first().is_some_and(is_numeric_scalar) => {
            let expr = format!("*{name}");
            hoisted(
                format!("capture the boxed value: `let {local} = {expr};` before the closure"),
                expr,
                true,
            )
        }
        Ty::Closure { .. } => advice("inline the captured closure's body, or make it a `fn` helper".to_string()),
        Ty::Adt { path, args } if adt(path, "Cell") && args.first().is_some_and(is_numeric_scalar) => {
            let expr = format!("{name}.get()");
            hoisted(
                format!("capture the value it holds: `let {local} = {expr};` before the closure"),
                expr,
                false,
            )
        }
        _ => advice(
            "copy the scalar fields you need into locals before the closure, and capture those with `move`".to_string(),
        ),
    }
}

/// A local's name for a captured place: the variable itself (shadowed), or
/// for a field (`m.x`, `t.0`) its name if it is one, else the path joined.
fn local_name(place: &str) -> String {
    match place.rsplit_once('.') {
        None => place.to_string(),
        Some((_, last)) if last.starts_with(|c: char| c.is_alphabetic() || c == '_') => {
            last.to_string()
        }
        Some(_) => place.replace('.', "_"),
    }
}
