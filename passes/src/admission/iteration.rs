//! Rule: the callback iterates over arrays only where the GPU side compiles
//! it. `frontend::slices` gives a slice borrowed from an array the array's
//! length, and the core model runs `core`'s slice and array iterators'
//! methods (`fold`, `any`, …); what is left is refused here, one cause
//! reported once: a function taking a slice whose length is not known
//! where it is called, and a call of an iterator method the model does not
//! have (`chunks`, `windows`). The calls with no body (E0107) and the
//! pointer constructs (E0109) the same iteration brings are consequences,
//! and [`super::admit_with`] does not report them again.

use frontend::ty::Ty;

use super::facts::CallFact;
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

/// Whether a call (as MIR prints it, generic arguments included) is part
/// of `core`'s iteration over an array or a slice.
pub fn is_iteration(call: &CallFact) -> bool {
    // Each as a type (`Chunks<`) and with a turbofish (`Chunks::<`).
    const ITERATORS: [&str; 8] = [
        "slice::Iter",
        "slice::IterMut",
        "array::IntoIter",
        "PolymorphicIter",
        "Chunks",
        "ChunksExact",
        "RChunks",
        "Windows",
    ];
    call.kind == vocab::CallKind::Foreign
        && ITERATORS.iter().any(|p| {
            [format!("{p}<"), format!("{p}::<")]
                .iter()
                .any(|form| call.text.contains(form) || call.callee.contains(form))
        })
}

/// A slice type whose length the type does not carry (`&[u32]`,
/// `*const [f32]`): its element type.
fn unsized_slice(ty: &Ty) -> Option<&Ty> {
    match ty {
        Ty::Ref { inner, .. } | Ty::Ptr { inner, .. } => match &**inner {
            Ty::Slice(e) => Some(e),
            other => unsized_slice(other),
        },
        _ => None,
    }
}

/// A function the callback reaches that takes a slice whose length is not
/// known where it is called (`frontend::slices` compiles a copy per length
/// where the caller borrows the slice from an array).
fn slice_parameter(ctx: &Ctx<'_>) -> Option<Diagnostic> {
    let (body, b, param, elem) = ctx.graph.bodies().into_iter().find_map(|body| {
        let b = ctx.facts.bodies.get(body)?;
        b.params
            .iter()
            .find_map(|p| Some((p, unsized_slice(p)?)))
            .map(|(p, e)| (body, b, p, e))
    })?;
    let chain = ctx.graph.chain_to(body).join(" → ");
    Some(
        Diagnostic::new(
            Code::UnsupportedMir,
            format!(
                "`{body}` takes a slice (`{param}`) whose length is not known where it is called"
            ),
            label(
                b.loc,
                format!("`{body}` takes `{param}`, and runs on the GPU"),
            ),
        )
        .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
        .with_note(format!("call chain: {chain}"))
        .with_note(
            "a function taking a slice is compiled once per length it is called with, where \
             the caller borrows the slice from an array (a `const` table, a captured or local \
             array); here the length is chosen at run time, or the slice is a `const` of \
             slice type",
        )
        .with_help(format!(
            "borrow one array where the function is called (`&TABLE`, `&k`), or take the \
             array itself: `&[{elem}; N]` in a function generic over `const N: usize`"
        )),
    )
}

/// The diagnostic for the first iteration over an array or a slice the
/// callback reaches, if any.
pub fn check(ctx: &Ctx<'_>) -> Option<Diagnostic> {
    if let Some(d) = slice_parameter(ctx) {
        return Some(d);
    }
    let (body, b, call) = ctx.graph.bodies().into_iter().find_map(|body| {
        let b = ctx.facts.bodies.get(body)?;
        b.calls
            .iter()
            .find(|c| is_iteration(c))
            .map(|c| (body, b, c))
    })?;
    let chain = ctx.graph.chain_to(body).join(" → ");
    // MIR places some of `core`'s inlined calls at the function or
    // closure that holds them.
    let primary = if call.loc.span == ctx.callback_loc().span {
        label(call.loc, "in this callback, which runs on the GPU")
    } else if call.loc.span == b.loc.span {
        label(call.loc, format!("`{body}` iterates, and runs on the GPU"))
    } else {
        label(call.loc, "the iteration is here")
    };
    Some(
        Diagnostic::new(
            Code::UnsupportedMir,
            "callback uses an iterator over an array or a slice that the GPU lowering does not compile",
            primary,
        )
        .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
        .with_note(format!("call chain: {chain}"))
        .with_note(
            "the GPU side compiles `iter()` of an array or of a slice borrowed from one, with \
             `fold`, `sum`, `product`, `any`, `all`, `position`, `find`, `max`, `min`, `zip`, \
             `enumerate`, `map`, `filter`, `count`, `rev`, `take`, and `for` over an array or \
             a reference to one; not this iterator",
        )
        .with_help(
            "use one of those, or loop over the indices: `for i in 0..TABLE.len() { let v = \
             TABLE[i]; … }`",
        ),
    )
}
