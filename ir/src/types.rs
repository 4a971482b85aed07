//! Rust types as MLIR types.
//!
//! Every `ty` attribute of the dialect is a `TypeAttr` holding the Rust
//! type of what it describes, so passes read types from the module, never
//! from text:
//!
//! | Rust | MLIR |
//! |---|---|
//! | `i8`…`i128`, `u8`…`u128` | `si8`…`si128`, `ui8`…`ui128` |
//! | `isize`, `usize`, `char` | `!rmir.isize`, `!rmir.usize`, `!rmir.char` |
//! | `f16`…`f128`, `bool` | `f16`…`f128`, `i1` |
//! | `()`, `(A, B)` | `tuple<>`, `tuple<A, B>` |
//! | `!`, `str` | `!rmir.never`, `!rmir.str` |
//! | `[T; N]`, `[T]` | `!rmir.array<T, "N">`, `!rmir.slice<T>` |
//! | `&T`, `&mut T`, `*const T`, `*mut T` | `!rmir.borrow<T>`, `!rmir.borrow_mut<T>`, `!rmir.ptr<T>`, `!rmir.ptr_mut<T>` |
//! | `path<A, B>` | `!rmir.adt<"path", tuple<A, B>>` |
//! | `{closure@file:l:c: l:c}` | `!rmir.closure_ty<"file", l, c, l, c>` |
//! | `fn(i32) -> i32 {name}`, `fn(i32) -> i32` | `!rmir.fn_item<"sig", "name">`, `!rmir.fn_ptr<"sig">` |
//! | anything else (`dyn Fn()`) | `!rmir.other<"text">` |
//!
//! The `rmir` types are declared in IRDL (see [`TYPES`]; their names differ
//! from the ops', with which they share IRDL's symbol table); [`rust_type`]
//! reads a type back into the frontend's [`Ty`]: builtin types through
//! MLIR's type API, `rmir` types from MLIR's own syntax for them (IRDL types
//! have no parameter API in the C bindings), each parameter read back as a
//! type by MLIR's parser.

use frontend::{
    pmir::Span,
    ty::{Scalar, Ty},
};
use melior::{
    ir::{attribute::TypeAttribute, r#type::TypeLike, Attribute, Type},
    Context,
};

/// A parameter of an `rmir` type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    Type,
    Str,
    Int,
}

/// The `rmir` types: name and parameters.
pub const TYPES: &[(&str, &[Param])] = &[
    ("isize", &[]),
    ("usize", &[]),
    ("char", &[]),
    ("never", &[]),
    ("str", &[]),
    ("array", &[Param::Type, Param::Str]),
    ("slice", &[Param::Type]),
    ("borrow", &[Param::Type]),
    ("borrow_mut", &[Param::Type]),
    ("ptr", &[Param::Type]),
    ("ptr_mut", &[Param::Type]),
    ("adt", &[Param::Str, Param::Type]),
    (
        "closure_ty",
        &[Param::Str, Param::Int, Param::Int, Param::Int, Param::Int],
    ),
    ("fn_item", &[Param::Str, Param::Str]),
    ("fn_ptr", &[Param::Str]),
    ("other", &[Param::Str]),
];

/// An MLIR string literal: `"`, `\` and every byte outside printable ASCII
/// as a `\XX` escape, which MLIR's lexer reads back.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for b in s.bytes() {
        if b == b'"' || b == b'\\' || !(0x20..0x7f).contains(&b) {
            out.push_str(&format!("\\{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out.push('"');
    out
}

/// The MLIR spelling of a Rust type (see the module table).
pub fn spelling(ty: &Ty) -> String {
    match ty {
        Ty::Scalar(s) => match s {
            Scalar::I8 => "si8".into(),
            Scalar::I16 => "si16".into(),
            Scalar::I32 => "si32".into(),
            Scalar::I64 => "si64".into(),
            Scalar::I128 => "si128".into(),
            Scalar::U8 => "ui8".into(),
            Scalar::U16 => "ui16".into(),
            Scalar::U32 => "ui32".into(),
            Scalar::U64 => "ui64".into(),
            Scalar::U128 => "ui128".into(),
            Scalar::Isize => "!rmir.isize".into(),
            Scalar::Usize => "!rmir.usize".into(),
            Scalar::Char => "!rmir.char".into(),
            Scalar::F16 => "f16".into(),
            Scalar::F32 => "f32".into(),
            Scalar::F64 => "f64".into(),
            Scalar::F128 => "f128".into(),
            Scalar::Bool => "i1".into(),
        },
        Ty::Str => "!rmir.str".into(),
        Ty::Never => "!rmir.never".into(),
        Ty::Tuple(parts) => format!("tuple<{}>", list(parts)),
        Ty::Array(elem, len) => format!("!rmir.array<{}, {}>", spelling(elem), quote(len)),
        Ty::Slice(elem) => format!("!rmir.slice<{}>", spelling(elem)),
        Ty::Ref { mutable, inner } => format!(
            "!rmir.{}<{}>",
            if *mutable { "borrow_mut" } else { "borrow" },
            spelling(inner)
        ),
        Ty::Ptr { mutable, inner } => format!(
            "!rmir.{}<{}>",
            if *mutable { "ptr_mut" } else { "ptr" },
            spelling(inner)
        ),
        Ty::Adt { path, args } => format!("!rmir.adt<{}, tuple<{}>>", quote(path), list(args)),
        Ty::Closure { file, span } => format!(
            "!rmir.closure_ty<{}, {}, {}, {}, {}>",
            quote(file),
            span.lo_line,
            span.lo_col,
            span.hi_line,
            span.hi_col
        ),
        Ty::FnDef { sig, name } => format!("!rmir.fn_item<{}, {}>", quote(sig), quote(name)),
        Ty::FnPtr(sig) => format!("!rmir.fn_ptr<{}>", quote(sig)),
        Ty::Other(text) => format!("!rmir.other<{}>", quote(text)),
    }
}

fn list(tys: &[Ty]) -> String {
    tys.iter().map(spelling).collect::<Vec<_>>().join(", ")
}

/// The MLIR type of a Rust type, in a context with the `rmir` dialect.
pub fn mlir_type<'c>(context: &'c Context, ty: &Ty) -> Result<Type<'c>, String> {
    let text = spelling(ty);
    Type::parse(context, &text)
        .ok_or_else(|| format!("internal error: the type `{ty}` has no MLIR form (`{text}`)"))
}

/// A `TypeAttr` holding the MLIR type of `ty`.
pub fn type_attr<'c>(context: &'c Context, ty: &Ty) -> Result<Attribute<'c>, String> {
    Ok(TypeAttribute::new(mlir_type(context, ty)?).into())
}

/// The Rust type a `TypeAttr` holds; an error for any other attribute.
pub fn rust_type_of_attr(attr: Attribute<'_>) -> Result<Ty, String> {
    let ty = TypeAttribute::try_from(attr)
        .map_err(|_| format!("`{attr}` is not a type attribute"))?
        .value();
    rust_type(ty)
}

/// The Rust type of an MLIR type made by [`mlir_type`] (or parsed from its
/// printed form); an error for a type outside the table.
pub fn rust_type(ty: Type<'_>) -> Result<Ty, String> {
    let raw = ty.to_raw();
    // SAFETY: queries on a live type.
    unsafe {
        if mlir_sys::mlirTypeIsAInteger(raw) {
            let bits = mlir_sys::mlirIntegerTypeGetWidth(raw);
            let signed = mlir_sys::mlirIntegerTypeIsSigned(raw);
            let unsigned = mlir_sys::mlirIntegerTypeIsUnsigned(raw);
            let s = match (bits, signed, unsigned) {
                (1, false, false) => Scalar::Bool,
                (8, true, _) => Scalar::I8,
                (16, true, _) => Scalar::I16,
                (32, true, _) => Scalar::I32,
                (64, true, _) => Scalar::I64,
                (128, true, _) => Scalar::I128,
                (8, _, true) => Scalar::U8,
                (16, _, true) => Scalar::U16,
                (32, _, true) => Scalar::U32,
                (64, _, true) => Scalar::U64,
                (128, _, true) => Scalar::U128,
                _ => return Err(format!("`{ty}` is not a Rust type")),
            };
            return Ok(Ty::Scalar(s));
        }
        if mlir_sys::mlirTypeIsAF16(raw) {
            return Ok(Ty::Scalar(Scalar::F16));
        }
        if mlir_sys::mlirTypeIsAF32(raw) {
            return Ok(Ty::Scalar(Scalar::F32));
        }
        if mlir_sys::mlirTypeIsAF64(raw) {
            return Ok(Ty::Scalar(Scalar::F64));
        }
        if mlir_sys::mlirTypeIsATuple(raw) {
            let n = mlir_sys::mlirTupleTypeGetNumTypes(raw);
            let parts = (0..n)
                .map(|i| rust_type(Type::from_raw(mlir_sys::mlirTupleTypeGetType(raw, i))))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Ty::Tuple(parts));
        }
    }
    let text = ty.to_string();
    if text == "f128" {
        return Ok(Ty::Scalar(Scalar::F128));
    }
    dialect_type(ty.context(), &text)
}

/// Reads `!rmir.NAME` or `!rmir.NAME<P, …>`.
fn dialect_type(context: melior::ContextRef<'_>, text: &str) -> Result<Ty, String> {
    let bad = || format!("`{text}` is not a Rust type");
    let rest = text.strip_prefix("!rmir.").ok_or_else(bad)?;
    let (name, params) = match rest.split_once('<') {
        None => (rest, Vec::new()),
        Some((name, p)) => (name, split_params(p.strip_suffix('>').ok_or_else(bad)?)),
    };
    let spec = TYPES.iter().find(|(n, _)| *n == name).ok_or_else(bad)?.1;
    if params.len() != spec.len() {
        return Err(bad());
    }
    let ty_at = |i: usize| -> Result<Ty, String> {
        // SAFETY: the context outlives the parsed type, which is only read.
        let ctx = unsafe { context.to_ref() };
        let t = Type::parse(ctx, params[i]).ok_or_else(bad)?;
        rust_type(t)
    };
    let str_at = |i: usize| unquote(params[i]).ok_or_else(bad);
    let int_at = |i: usize| -> Result<u32, String> {
        let digits = params[i].split(':').next().unwrap_or("").trim();
        digits.parse().map_err(|_| bad())
    };
    let boxed = |i: usize| ty_at(i).map(Box::new);
    Ok(match name {
        "isize" => Ty::Scalar(Scalar::Isize),
        "usize" => Ty::Scalar(Scalar::Usize),
        "char" => Ty::Scalar(Scalar::Char),
        "never" => Ty::Never,
        "str" => Ty::Str,
        "array" => Ty::Array(boxed(0)?, str_at(1)?),
        "slice" => Ty::Slice(boxed(0)?),
        "borrow" | "borrow_mut" => Ty::Ref {
            mutable: name == "borrow_mut",
            inner: boxed(0)?,
        },
        "ptr" | "ptr_mut" => Ty::Ptr {
            mutable: name == "ptr_mut",
            inner: boxed(0)?,
        },
        "adt" => Ty::Adt {
            path: str_at(0)?,
            args: match ty_at(1)? {
                Ty::Tuple(args) => args,
                _ => return Err(bad()),
            },
        },
        "closure_ty" => Ty::Closure {
            file: str_at(0)?,
            span: Span::new(int_at(1)?, int_at(2)?, int_at(3)?, int_at(4)?),
        },
        "fn_item" => Ty::FnDef {
            sig: str_at(0)?,
            name: str_at(1)?,
        },
        "fn_ptr" => Ty::FnPtr(str_at(0)?),
        "other" => Ty::Other(str_at(0)?),
        _ => return Err(bad()),
    })
}

/// Splits `a, "x, y", tuple<b, c>` at its top-level commas.
fn split_params(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start, mut in_str, mut escaped) = (0i32, 0usize, false, false);
    for (i, c) in s.char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '<' | '(' | '[' | '{' => depth += 1,
            '>' | ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
    }
    out
}

/// An MLIR string literal's value (`\XX` hex escapes and `\"`, `\\`, `\n`,
/// `\t` as MLIR's lexer reads them).
fn unquote(s: &str) -> Option<String> {
    let inner = s.strip_prefix('"')?.strip_suffix('"')?.as_bytes();
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        if inner[i] != b'\\' {
            out.push(inner[i]);
            i += 1;
            continue;
        }
        let next = *inner.get(i + 1)?;
        match next {
            b'"' | b'\\' => {
                out.push(next);
                i += 2;
            }
            b'n' => {
                out.push(b'\n');
                i += 2;
            }
            b't' => {
                out.push(b'\t');
                i += 2;
            }
            _ => {
                let hex = std::str::from_utf8(inner.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_type_round_trips() {
        let context = crate::context().unwrap();
        let cases = [
            "i32",
            "u8",
            "isize",
            "usize",
            "char",
            "bool",
            "f32",
            "f64",
            "f16",
            "f128",
            "i128",
            "u128",
            "()",
            "(i32, f64)",
            "(i32,)",
            "!",
            "&str",
            "[i32; 4]",
            "[(u8, bool); 3_usize]",
            "&[u8]",
            "&mut i32",
            "*const u64",
            "*mut (i32, i32)",
            "&&i32",
            "std::cell::Cell<i32>",
            "std::vec::Vec<(i32, &str)>",
            "Foo",
            "fn(i32, i32) -> i32",
            "fn(i32, i32) -> i32 {add}",
            "dyn std::ops::Fn(i32) -> i32",
            "{closure@src/a \"b\", c.rs:3:5: 3:16}",
        ];
        let mut checked = 0;
        for text in cases {
            let ty = Ty::parse(text);
            let mlir = mlir_type(&context, &ty).unwrap_or_else(|e| panic!("{text}: {e}"));
            let back = rust_type(mlir).unwrap_or_else(|e| panic!("{text} ({mlir}): {e}"));
            assert_eq!(back, ty, "{text} as {mlir}");
            checked += 1;
        }
        assert_eq!(checked, cases.len());
    }

    #[test]
    fn assert_kinds_agree_with_the_frontend() {
        let names: Vec<&str> = frontend::pmir::AssertKind::ALL
            .iter()
            .map(|k| k.name())
            .collect();
        assert_eq!(names, crate::dialect::ASSERT_KINDS);
    }

    #[test]
    fn other_types_are_errors() {
        let context = crate::context().unwrap();
        for text in ["i32", "index", "!llvm.ptr", "tuple<i32>", "vector<4xf32>"] {
            let t = Type::parse(&context, text).unwrap();
            assert!(rust_type(t).is_err(), "{text} read as a Rust type");
        }
    }
}
