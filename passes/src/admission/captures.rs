//! Rule: captures are numeric scalars held by value (E0101 borrowed,
//! E0102 raw pointer, E0103 anything else that is not a number or `bool`).

use frontend::ty::{Scalar, Ty};

use super::facts::{CaptureFact, CaptureMode};
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

/// Numeric scalars: integers, floats and `bool` (not `char`: not a number).
pub fn is_numeric_scalar(ty: &Ty) -> bool {
    matches!(ty.scalar(), Some(s) if s != Scalar::Char)
}

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    let Some(closure) = ctx.closure else { return };
    for cap in &closure.captures {
        let ty = cap.ty.clone();
        if let Some(d) = borrowed(ctx, cap, &ty)
            .or_else(|| pointer(ctx, cap, &ty))
            .or_else(|| non_scalar(ctx, cap, &ty))
        {
            out.push(d);
        }
    }
}

fn borrowed(ctx: &Ctx<'_>, cap: &CaptureFact, ty: &Ty) -> Option<Diagnostic> {
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
        Diagnostic::new(
            Code::BorrowedCapture,
            format!("callback captures `{name}` by {how}"),
            label(cap.loc, format!("`{name}` is borrowed here")),
        )
        .with_label(ctx.callback_label(format!(
            "this closure runs on the GPU, registered with `{}`",
            ctx.reg.function
        )))
        .with_note(format!(
            "the environment field is `{}`: a host address, meaningless on the device",
            cap.ty
        ))
        .with_help(format!(
            "add `move` before the closure to capture `{name}` by value"
        ))
    } else {
        Diagnostic::new(
            Code::BorrowedCapture,
            format!("callback captures the reference `{name}`"),
            label(cap.loc, format!("`{name}` has type `{}`", cap.ty)),
        )
        .with_label(ctx.callback_label(format!(
            "this closure runs on the GPU, registered with `{}`",
            ctx.reg.function
        )))
        .with_note("a reference holds a host address, meaningless on the device")
        .with_help(deref_help(name, ty))
    };
    Some(d)
}

fn pointer(ctx: &Ctx<'_>, cap: &CaptureFact, ty: &Ty) -> Option<Diagnostic> {
    if !matches!(ty, Ty::Ptr { .. }) {
        return None;
    }
    let name = &cap.name;
    Some(
        Diagnostic::new(
            Code::PointerCapture,
            format!("callback captures the raw pointer `{name}`"),
            label(cap.loc, format!("`{name}` has type `{}`", cap.ty)),
        )
        .with_label(ctx.callback_label("this closure runs on the GPU"))
        .with_note(
            "a pointer captured on the host holds a host address; the GPU cannot dereference it",
        )
        .with_help(format!(
            "read the value on the host and capture it: `let v = unsafe {{ *{name} }};`"
        )),
    )
}

fn non_scalar(ctx: &Ctx<'_>, cap: &CaptureFact, ty: &Ty) -> Option<Diagnostic> {
    if is_numeric_scalar(ty) {
        return None;
    }
    let name = &cap.name;
    let help = match ty {
        Ty::Scalar(Scalar::Char) => format!("capture `{name} as u32` instead"),
        Ty::Adt { path, .. } if path.ends_with("Vec") || path.ends_with("String") => format!(
            "capture the elements you need as scalars, e.g. `let first = {name}[0];` before the closure"
        ),
        Ty::Array(..) | Ty::Tuple(_) => {
            format!("capture the elements you need as scalars, e.g. `let first = {name}[0];`")
        }
        Ty::Adt { path, args } if path.ends_with("Box") && args.first().is_some_and(is_numeric_scalar) => {
            format!("capture the boxed value: `let v = *{name};` before the closure, and use `v`")
        }
        Ty::Closure { .. } => "inline the captured closure's body, or make it a `fn` helper".to_string(),
        Ty::Adt { path, args } if path.ends_with("Cell") && args.first().is_some_and(is_numeric_scalar) => {
            format!("capture the value it holds: `let v = {name}.get();` before the closure, and use `v`")
        }
        _ => "copy the scalar fields you need into locals before the closure, and capture those with `move`".to_string(),
    };
    Some(
        Diagnostic::new(
            Code::NonScalarCapture,
            format!(
                "callback captures `{name}` of type `{}`, which is not a numeric scalar",
                cap.ty
            ),
            label(cap.loc, format!("`{name}` is captured here")),
        )
        .with_label(ctx.callback_label("this closure runs on the GPU"))
        .with_note("a callback environment holds integers, floats and `bool` only, by value: that is its ABI")
        .with_help(help),
    )
}

/// The help for a captured reference: `let k = *k;` compiles only when the
/// pointee is `Copy`, which the numeric scalars are; for anything else the
/// scalar parts must be copied out instead.
fn deref_help(name: &str, ty: &Ty) -> String {
    let short = name.split('.').next_back().unwrap_or(name);
    let pointee = match ty {
        Ty::Ref { inner, .. } => inner.as_ref(),
        other => other,
    };
    if is_numeric_scalar(pointee) {
        format!("capture the value instead: `let {short} = *{name};` before the closure")
    } else {
        format!(
            "copy the scalar values you need out of `{name}` (of type `{pointee}`) into locals before the closure, and capture those with `move`"
        )
    }
}
