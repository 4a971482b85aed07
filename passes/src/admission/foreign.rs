//! Rule: every call the callback reaches has a body here (a local helper),
//! is an allowlisted `core` method, or is an `extern "C"` function that
//! exactly one device library given to the link defines, with a
//! scalar-only signature whose widths match the definition's; panics are
//! allowed (they trap).

use super::cuda::reaches_cuda;
use super::facts::{CallFact, CallKind};
use super::libraries::{extern_scalar, param_bytes};
use super::{label, Ctx};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;
use crate::lower::plan::{DeviceAbi, ParamType};

pub fn check(ctx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    for body in ctx.graph.bodies() {
        let Some(b) = ctx.facts.bodies.get(body) else {
            continue;
        };
        for call in &b.calls {
            if reaches_cuda(call, b)
                || !matches!(
                    call.kind,
                    CallKind::Foreign | CallKind::Indirect | CallKind::Extern
                )
                // `format_args!` machinery: the sink it feeds (`println!`,
                // `format!`) is the one cause reported.
                || frontend::registry::is_fmt_machinery(&call.callee)
                // Iteration over an array or a slice: `iteration` reports it.
                || super::iteration::is_iteration(call)
            {
                continue;
            }
            let chain = ctx.graph.chain_text(body, call);
            if call.kind == CallKind::Extern {
                if let Some(d) = check_extern(ctx, call, &chain) {
                    out.push(d);
                }
                continue;
            }
            if call.kind == CallKind::Indirect {
                let mut d = Diagnostic::new(
                    Code::ForeignCall,
                    "callback calls through a function pointer, whose target is chosen at run time",
                    label(call.loc, format!("`{}` is a fn pointer here", call.callee)),
                )
                .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                .with_note(format!("call chain: {chain}"));
                if !b.fn_items.is_empty() {
                    let mut items = b.fn_items.clone();
                    items.dedup();
                    d = d.with_note(format!(
                        "the pointer is made from {}",
                        items
                            .iter()
                            .map(|i| format!("`{i}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                out.push(d.with_help(
                    "call the function directly (`if c { f(a, b) } else { g(a, b) }`): the GPU code is compiled from each callee's body",
                ));
                continue;
            }
            let (message, primary) = {
                (
                    format!(
                        "callback calls `{}`, which has no body to compile for the GPU",
                        call.callee
                    ),
                    format!("`{}` is defined outside this file", call.callee),
                )
            };
            out.push(
                Diagnostic::new(Code::ForeignCall, message, label(call.loc, primary))
                    .with_label(ctx.callback_label("in this callback, which runs on the GPU"))
                    .with_note(format!("call chain: {chain}"))
                    .with_help("call a helper written in Rust in this file, or a `core` or std float method the GPU side runs (`driver explain E0109` lists them)"),
            );
        }
    }
}

/// An `extern "C"` call: a scalar-only signature, exactly one definition
/// among the link inputs, with matching widths where the input says.
fn check_extern(ctx: &Ctx<'_>, call: &CallFact, chain: &str) -> Option<Diagnostic> {
    let libs = ctx.libraries;
    let symbol = &call.callee;
    let in_callback = || ctx.callback_label("in this callback, which runs on the GPU");
    let (params, ret) = call
        .signature
        .clone()
        .unwrap_or((Vec::new(), frontend::ty::Ty::Tuple(Vec::new())));
    let rust_sig = {
        let p: Vec<String> = params.iter().map(|t| t.to_string()).collect();
        match &ret {
            frontend::ty::Ty::Tuple(t) if t.is_empty() => format!("fn({})", p.join(", ")),
            r => format!("fn({}) -> {r}", p.join(", ")),
        }
    };
    let unit = matches!(&ret, frontend::ty::Ty::Tuple(t) if t.is_empty());
    let mut bad: Vec<String> = Vec::new();
    for t in params.iter().chain((!unit).then_some(&ret)) {
        let text = format!("`{t}`");
        if extern_scalar(t).is_none() && !bad.contains(&text) {
            bad.push(text);
        }
    }
    if !bad.is_empty() {
        return Some(
            Diagnostic::new(
                Code::ForeignCall,
                format!("callback calls `{symbol}`, whose signature is not scalar-only"),
                label(call.loc, format!("`{symbol}` is declared as `{rust_sig}`")),
            )
            .with_label(in_callback())
            .with_note(format!(
                "{} cannot cross into CUDA C++: Rust and CUDA pass only 32- and 64-bit integers \
                 and floats the same way",
                bad.join(", ")
            ))
            .with_note(format!("call chain: {chain}"))
            .with_help(
                "declare the function with `i32`, `u32`, `i64`, `u64`, `isize`, `usize`, `f32` \
                 or `f64` parameters and result (widen on both sides)",
            ),
        );
    }
    let mut searched = format!("device libraries searched: {}", libs.searched());
    if !libs.unreadable.is_empty() {
        searched.push_str(&format!(
            "; symbols that could not be read: {}",
            libs.unreadable.join("; ")
        ));
    }
    let defs = libs.functions.get(symbol).map(Vec::as_slice).unwrap_or(&[]);
    match defs {
        [] => {
            let help = if libs.is_empty() {
                "give the device code that defines it to the link: `driver build FILE.rs --link \
                 lib.cu` (or `[package.metadata.rmir] link = [\"lib.cu\"]` in Cargo.toml)"
            } else {
                "define it as `extern \"C\" __device__` in one of these inputs, or give the \
                 input that does with `--link`"
            };
            Some(
                Diagnostic::new(
                    Code::ForeignCall,
                    format!(
                        "callback calls `{symbol}`, which no device library given to the link \
                         defines"
                    ),
                    label(call.loc, declared_here(call, symbol)),
                )
                .with_label(in_callback())
                .with_note(searched)
                .with_note(format!("call chain: {chain}"))
                .with_help(help),
            )
        }
        [one] if one.ltoir_only && libs.ptx_route => Some(
            Diagnostic::new(
                Code::ForeignCall,
                format!(
                    "callback calls `{symbol}`, which `{}` defines only as LTOIR, and this build \
                     takes the PTX route",
                    one.input
                ),
                label(call.loc, format!("`{symbol}` is called from PTX here")),
            )
            .with_label(in_callback())
            .with_note(
                "nvJitLink drops an LTOIR definition that only PTX or cubin code references \
                 (\"Undefined reference\")",
            )
            .with_note(format!("call chain: {chain}"))
            .with_help(
                "build by the LTO route (without `--no-lto`), or link the library as PTX, a \
                 cubin or CUDA source",
            ),
        ),
        [one] => {
            let abi = one.abi.as_ref()?;
            let want: Vec<u32> = params
                .iter()
                .filter_map(extern_scalar)
                .map(param_bytes)
                .collect();
            let want_ret = extern_scalar(&ret).map(param_bytes);
            let got: Vec<Option<u32>> = abi
                .params
                .iter()
                .map(|p| match p {
                    ParamType::Scalar { bytes } => Some(*bytes),
                    ParamType::Aggregate { .. } => None,
                })
                .collect();
            let got_ret = abi.ret.map(|r| match r {
                ParamType::Scalar { bytes } => Some(bytes),
                ParamType::Aggregate { .. } => None,
            });
            let same = got.len() == want.len()
                && got.iter().zip(&want).all(|(g, w)| *g == Some(*w))
                && got_ret == want_ret.map(Some);
            if same {
                return None;
            }
            Some(
                Diagnostic::new(
                    Code::ForeignCall,
                    format!(
                        "the Rust declaration of `{symbol}` does not match its definition in `{}`",
                        one.input
                    ),
                    label(call.loc, format!("`{symbol}` is declared as `{rust_sig}`")),
                )
                .with_label(in_callback())
                .with_note(format!(
                    "`{}` defines `{symbol}` with the PTX parameters {}, the declaration needs {}",
                    one.input,
                    abi.render(),
                    DeviceAbi {
                        params: want
                            .iter()
                            .map(|&bytes| ParamType::Scalar { bytes })
                            .collect(),
                        ret: want_ret.map(|bytes| ParamType::Scalar { bytes }),
                    }
                    .render()
                ))
                .with_note(format!("call chain: {chain}"))
                .with_help("make the `extern \"C\"` declaration match the CUDA C++ definition"),
            )
        }
        many => Some(
            Diagnostic::new(
                Code::ForeignCall,
                format!("callback calls `{symbol}`, which more than one device library defines"),
                label(
                    call.loc,
                    format!("`{symbol}` would link to more than one definition"),
                ),
            )
            .with_label(in_callback())
            .with_note(format!(
                "defined by {}",
                many.iter()
                    .map(|d| format!("`{}`", d.input))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ))
            .with_note(format!("call chain: {chain}"))
            .with_help("give the link only one input that defines it"),
        ),
    }
}

/// `` `mix` is declared in an `extern "C"` block ``, naming the symbol a
/// `#[link_name]` gives it when it differs.
fn declared_here(call: &CallFact, symbol: &str) -> String {
    let name = call.text.rsplit("::").next().unwrap_or(&call.text);
    if name == symbol {
        format!("`{symbol}` is declared in an `extern \"C\"` block")
    } else {
        format!("`{name}` is declared in an `extern \"C\"` block, linked as `{symbol}`")
    }
}
