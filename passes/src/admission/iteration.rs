//! Rule: the callback does not iterate over an array or a slice
//! (`.iter()`, `for v in array`, `array.into_iter()`). Optimised MIR builds
//! `core`'s slice and array iterators from raw and fat pointers (a borrowed
//! constant coerced to `&[T]`, `NonNull`, `Offset`) and calls their
//! generic methods, none of which the GPU lowering models. One diagnostic
//! names the first such call and shows the loop over indices that is
//! compiled instead; the calls with no body (E0107) and the pointer
//! constructs (E0109) that the same iteration brings are its consequences,
//! and [`super::admit_with`] does not report them again.

use super::facts::CallFact;
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

/// Whether a call (as MIR prints it, generic arguments included) is part
/// of `core`'s iteration over an array or a slice.
pub fn is_iteration(call: &CallFact) -> bool {
    const ITERATORS: [&str; 8] = [
        "slice::Iter<",
        "slice::Iter::<",
        "slice::IterMut<",
        "slice::IterMut::<",
        "array::IntoIter<",
        "array::IntoIter::<",
        "PolymorphicIter<",
        "PolymorphicIter::<",
    ];
    ITERATORS
        .iter()
        .any(|p| call.text.contains(p) || call.callee.contains(p))
}

/// The diagnostic for the first iteration over an array or a slice the
/// callback reaches, if any.
pub fn check(ctx: &Ctx<'_>) -> Option<Diagnostic> {
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
            "callback iterates over an array or a slice, which the GPU lowering does not compile",
            primary,
        )
        .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
        .with_note(format!("call chain: {chain}"))
        .with_note(
            "`core` builds an array's or a slice's iterator from raw pointers, which the GPU \
             side does not model; indexing an array (a `const` table, a captured array) is \
             compiled",
        )
        .with_help(
            "loop over the indices instead: `for i in 0..TABLE.len() { let v = TABLE[i]; … }`, \
             or `(0..TABLE.len()).any(|i| x % TABLE[i] == 0)`",
        ),
    )
}
