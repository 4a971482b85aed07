//! Rule: the callback has type `(i32, i32) -> i32`.

use frontend::ty::{Scalar, Ty};

use super::facts::CallbackRef;
use super::Ctx;
use crate::codes::Code;
use crate::diagnostic::Diagnostic;

pub const PARAMS: [Ty; 2] = [Ty::Scalar(Scalar::I32), Ty::Scalar(Scalar::I32)];
pub const RET: Ty = Ty::Scalar(Scalar::I32);

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    let Some(root) = ctx.root.and_then(|r| ctx.facts.bodies.get(r)) else {
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
                    .with_help("pass the `fn` item itself (`native::reduce(data, 0, add)`), or a closure"),
                );
                return;
            }
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
        return;
    };
    if root.params == PARAMS && root.ret == RET {
        return;
    }
    let params: Vec<String> = root.params.iter().map(Ty::to_string).collect();
    let found = format!("({}) -> {}", params.join(", "), root.ret);
    out.push(
        Diagnostic::new(
            Code::Signature,
            format!(
                "callback has type `{found}`, but provider `{}` needs `(i32, i32) -> i32`",
                ctx.reg.provider
            ),
            ctx.callback_label(format!("this {} has type `{found}`", kind(ctx))),
        )
        .with_label(ctx.registration_label(format!("registered with `{}` here", ctx.reg.function)))
        .with_note(format!(
            "`native::{}` is generic, so rustc accepts this; the GPU provider reduces 32-bit signed integers only",
            ctx.reg.function
        ))
        .with_help("reduce `i32` data with an `(i32, i32) -> i32` callback, or convert on the host first"),
    );
}

fn kind(ctx: &Ctx<'_>) -> &'static str {
    match ctx.reg.callback {
        CallbackRef::Closure(_) => "closure",
        _ => "function",
    }
}
