//! MIR types as the frontend understands them.
//!
//! [`Ty::parse`] never fails: a type it cannot break down is kept whole as
//! [`Ty::Other`], which later stages treat as opaque (and admission rejects as
//! non-scalar). `Display` prints the MIR spelling back, so
//! `Ty::parse(&t.to_string()) == t` for every `t`.

use std::fmt;

use crate::span::Span;

pub use vocab::Scalar;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    Scalar(Scalar),
    Str,
    /// `!`
    Never,
    /// `()` is the empty tuple.
    Tuple(Vec<Ty>),
    /// `[T; N]`; the length is kept as printed.
    Array(Box<Ty>, String),
    Slice(Box<Ty>),
    Ref {
        mutable: bool,
        inner: Box<Ty>,
    },
    Ptr {
        mutable: bool,
        inner: Box<Ty>,
    },
    /// `{closure@user.rs:5:38: 5:49}`
    Closure {
        file: String,
        span: Span,
    },
    /// `fn(i32, i32) -> i32 {add}`: a function item's zero-sized type.
    FnDef {
        sig: String,
        name: String,
    },
    /// `fn(i32) -> i32`
    FnPtr(String),
    /// `std::vec::Vec<i32>`, `Foo`, `std::option::Option<&i32>`
    Adt {
        path: String,
        args: Vec<Ty>,
    },
    /// Anything not broken down further (`dyn Fn()`, `impl Trait`, …).
    Other(String),
}

impl Ty {
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Ty::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    pub fn is_unit(&self) -> bool {
        matches!(self, Ty::Tuple(v) if v.is_empty())
    }

    /// Strips any number of references: `&&i32` → `i32`.
    pub fn peel_refs(&self) -> &Ty {
        let mut t = self;
        while let Ty::Ref { inner, .. } = t {
            t = inner;
        }
        t
    }

    /// Parses a MIR type. Never fails: what it cannot break down is `Other`,
    /// and so is a type nested deeper than [`MAX_TY_DEPTH`].
    pub fn parse(text: &str) -> Ty {
        parse_at(text, 0)
    }
}

/// The deepest type [`Ty::parse`] breaks down. The parser, `Display` and
/// every later walk over a `Ty` (its MLIR spelling, MLIR's own type parser)
/// recurse once a level: without a bound, 1,000 nested `&` in a MIR text or
/// a `.pmir.json` overflowed a 2 MiB thread stack. Rust code nests types a
/// few dozen levels at most (iterator adaptors over closures); rustc's own
/// recursion limit is 128 by default.
pub const MAX_TY_DEPTH: usize = 128;

fn parse_at(text: &str, depth: usize) -> Ty {
    let text = text.trim();
    let mut p = TyParser {
        s: text,
        pos: 0,
        depth,
    };
    match p.ty() {
        Some(t) if p.pos == text.len() => t,
        _ => Ty::Other(text.to_string()),
    }
}

struct TyParser<'a> {
    s: &'a str,
    pos: usize,
    /// How many types enclose the one being parsed.
    depth: usize,
}

impl<'a> TyParser<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn eat(&mut self, tok: &str) -> bool {
        if self.rest().starts_with(tok) {
            self.pos += tok.len();
            true
        } else {
            false
        }
    }

    fn ws(&mut self) {
        while self.rest().starts_with(' ') {
            self.pos += 1;
        }
    }

    /// Text up to the matching close of `open`, which has just been eaten.
    fn balanced(&mut self, open: char, close: char) -> Option<&'a str> {
        let start = self.pos;
        let mut depth = 1usize;
        for (i, c) in self.rest().char_indices() {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    let inner = &self.s[start..start + i];
                    self.pos = start + i + c.len_utf8();
                    return Some(inner);
                }
            }
        }
        None
    }

    fn ty(&mut self) -> Option<Ty> {
        if self.depth >= MAX_TY_DEPTH {
            return None;
        }
        self.depth += 1;
        let ty = self.ty_here();
        self.depth -= 1;
        ty
    }

    fn ty_here(&mut self) -> Option<Ty> {
        self.ws();
        if self.eat("&raw ") {
            return None;
        }
        if self.eat("&") {
            let mutable = self.eat("mut ");
            let inner = self.ty()?;
            return Some(Ty::Ref {
                mutable,
                inner: Box::new(inner),
            });
        }
        if self.eat("*const ") {
            let inner = self.ty()?;
            return Some(Ty::Ptr {
                mutable: false,
                inner: Box::new(inner),
            });
        }
        if self.eat("*mut ") {
            let inner = self.ty()?;
            return Some(Ty::Ptr {
                mutable: true,
                inner: Box::new(inner),
            });
        }
        if self.eat("!") {
            return Some(Ty::Never);
        }
        if self.eat("(") {
            let inner = self.balanced('(', ')')?;
            let parts = split_top(inner, ',');
            let mut tys = Vec::new();
            for part in &parts {
                let part = part.trim();
                if part.is_empty() {
                    continue;
                }
                tys.push(self.sub(part)?);
            }
            // `(T)` without a trailing comma would be a parenthesised type.
            if tys.len() == 1 && !inner.trim_end().ends_with(',') {
                return None;
            }
            return Some(Ty::Tuple(tys));
        }
        if self.eat("[") {
            let inner = self.balanced('[', ']')?;
            let parts = split_top(inner, ';');
            return match parts.as_slice() {
                [elem] => Some(Ty::Slice(Box::new(self.sub(elem)?))),
                [elem, len] => Some(Ty::Array(Box::new(self.sub(elem)?), len.trim().to_string())),
                _ => None,
            };
        }
        if self.eat("{closure@") {
            let inner = self.balanced('{', '}')?;
            return parse_closure_ref(inner);
        }
        // `for<'a, 'b> fn(&'a u32, &'b u32) -> Ordering {<u32 as Ord>::cmp}`:
        // the binder of a fn item's or pointer's lifetimes.
        if self.rest().starts_with("for<") {
            self.pos += "for<".len();
            self.balanced('<', '>')?;
            self.ws();
            if !(self.rest().starts_with("fn(") || self.rest().starts_with("unsafe fn(")) {
                return None;
            }
        }
        if self.rest().starts_with("fn(") || self.rest().starts_with("unsafe fn(") {
            return self.fn_ty();
        }
        if self.rest().starts_with("dyn ")
            || self.rest().starts_with("impl ")
            || self.rest().starts_with('{')
            || self.rest().starts_with('<')
        {
            return None;
        }
        self.path_ty()
    }

    fn fn_ty(&mut self) -> Option<Ty> {
        // The signature runs to `{name}` (a fn item) or the end of the type.
        let start = self.pos;
        let rest = self.rest();
        let mut depth = 0i32;
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            match c {
                '(' | '[' | '<' => depth += 1,
                ')' | ']' | '>' if !(c == '>' && rest[..i].ends_with('-')) => depth -= 1,
                '{' if depth == 0 => {
                    end = i;
                    break;
                }
                ',' | ';' if depth < 0 => {
                    end = i;
                    break;
                }
                _ => {}
            }
            if depth < 0 {
                end = i;
                break;
            }
        }
        let sig = rest[..end].trim_end().to_string();
        self.pos = start + end;
        if self.rest().starts_with('{') {
            self.pos += 1;
            let name = self.balanced('{', '}')?;
            return Some(Ty::FnDef {
                sig,
                name: name.to_string(),
            });
        }
        // A trailing space before `{` was trimmed from `sig`; restore position.
        Some(Ty::FnPtr(sig))
    }

    /// A type inside the one being parsed, one level deeper.
    fn sub(&self, text: &str) -> Option<Ty> {
        match parse_at(text, self.depth) {
            Ty::Other(_) => None,
            t => Some(t),
        }
    }

    fn path_ty(&mut self) -> Option<Ty> {
        let start = self.pos;
        let rest = self.rest();
        let mut end = 0;
        for (i, c) in rest.char_indices() {
            if c.is_alphanumeric() || c == '_' || c == ':' {
                end = i + c.len_utf8();
            } else {
                break;
            }
        }
        if end == 0 {
            return None;
        }
        let path = &rest[..end];
        self.pos = start + end;
        let args = if self.eat("<") {
            let inner = self.balanced('<', '>')?;
            let mut args = Vec::new();
            for part in split_top(inner, ',') {
                let part = part.trim();
                // A lifetime (`Named<'_>`), kept as written: no layout
                // depends on it.
                if part.starts_with('\'') {
                    args.push(Ty::Other(part.to_string()));
                    continue;
                }
                args.push(self.sub(part)?);
            }
            Some(args)
        } else {
            None
        };
        if args.is_none() {
            if let Some(s) = Scalar::from_name(path) {
                return Some(Ty::Scalar(s));
            }
            if path == "str" {
                return Some(Ty::Str);
            }
        }
        Some(Ty::Adt {
            path: path.to_string(),
            args: args.unwrap_or_default(),
        })
    }
}

/// `user.rs:5:38: 5:49` → file and span.
pub fn parse_closure_ref(inner: &str) -> Option<Ty> {
    let (file, span) = parse_file_span(inner)?;
    Some(Ty::Closure { file, span })
}

/// Parses `file:L:C: L:C`.
pub fn parse_file_span(text: &str) -> Option<(String, Span)> {
    let (head, hi) = text.rsplit_once(": ")?;
    let (hi_line, hi_col) = hi.split_once(':')?;
    let mut it = head.rsplitn(3, ':');
    let lo_col = it.next()?;
    let lo_line = it.next()?;
    let file = it.next()?;
    Some((
        file.to_string(),
        Span::new(
            lo_line.parse().ok()?,
            lo_col.parse().ok()?,
            hi_line.parse().ok()?,
            hi_col.parse().ok()?,
        ),
    ))
}

/// Splits at `sep` outside any brackets and string literals.
pub fn split_top(text: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut in_str = false;
    let mut escaped = false;
    let mut prev = '\0';
    for (i, c) in text.char_indices() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
            prev = c;
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' | '<' => depth += 1,
            '>' if prev == '-' => {}
            ')' | ']' | '}' | '>' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
        prev = c;
    }
    out.push(&text[start..]);
    out
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Scalar(s) => f.write_str(s.name()),
            Ty::Str => f.write_str("str"),
            Ty::Never => f.write_str("!"),
            Ty::Tuple(v) => {
                f.write_str("(")?;
                for (i, t) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if v.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            Ty::Array(t, n) => write!(f, "[{t}; {n}]"),
            Ty::Slice(t) => write!(f, "[{t}]"),
            Ty::Ref { mutable, inner } => {
                write!(f, "&{}{inner}", if *mutable { "mut " } else { "" })
            }
            Ty::Ptr { mutable, inner } => {
                write!(f, "*{} {inner}", if *mutable { "mut" } else { "const" })
            }
            Ty::Closure { file, span } => write!(
                f,
                "{{closure@{file}:{}:{}: {}:{}}}",
                span.lo_line, span.lo_col, span.hi_line, span.hi_col
            ),
            Ty::FnDef { sig, name } => write!(f, "{sig} {{{name}}}"),
            Ty::FnPtr(sig) => f.write_str(sig),
            Ty::Adt { path, args } => {
                f.write_str(path)?;
                if !args.is_empty() {
                    f.write_str("<")?;
                    for (i, t) in args.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{t}")?;
                    }
                    f.write_str(">")?;
                }
                Ok(())
            }
            Ty::Other(s) => f.write_str(s),
        }
    }
}

/// Serde helpers: a `Ty` is stored as its MIR spelling.
pub mod as_string {
    use super::Ty;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(ty: &Ty, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(ty)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Ty, D::Error> {
        let s = String::deserialize(d)?;
        Ok(Ty::parse(&s))
    }
}

pub mod vec_as_string {
    use super::Ty;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(tys: &[Ty], s: S) -> Result<S::Ok, S::Error> {
        let v: Vec<String> = tys.iter().map(|t| t.to_string()).collect();
        v.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Ty>, D::Error> {
        let v = Vec::<String>::deserialize(d)?;
        Ok(v.iter().map(|s| Ty::parse(s)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expect: &str) {
        let t = Ty::parse(text);
        assert_eq!(format!("{t:?}"), expect, "{text}");
        assert_eq!(t.to_string(), text, "display round trip");
        assert_eq!(Ty::parse(&t.to_string()), t);
    }

    #[test]
    fn scalars_and_refs() {
        check("i32", "Scalar(I32)");
        check(
            "&&i32",
            "Ref { mutable: false, inner: Ref { mutable: false, inner: Scalar(I32) } }",
        );
        check("*const i32", "Ptr { mutable: false, inner: Scalar(I32) }");
        check("&mut i32", "Ref { mutable: true, inner: Scalar(I32) }");
        check("(i32, bool)", "Tuple([Scalar(I32), Scalar(Bool)])");
        check("()", "Tuple([])");
        check("(i32,)", "Tuple([Scalar(I32)])");
        check("[i32; 2]", "Array(Scalar(I32), \"2\")");
        check(
            "&[i64]",
            "Ref { mutable: false, inner: Slice(Scalar(I64)) }",
        );
        check("!", "Never");
        check("&str", "Ref { mutable: false, inner: Str }");
    }

    #[test]
    fn closures_fns_adts() {
        check(
            "{closure@user.rs:5:38: 5:49}",
            "Closure { file: \"user.rs\", span: Span { lo_line: 5, lo_col: 38, hi_line: 5, hi_col: 49, file: 0 } }",
        );
        check(
            "fn(i32, i32) -> i32 {add}",
            "FnDef { sig: \"fn(i32, i32) -> i32\", name: \"add\" }",
        );
        check("fn(i32) -> i32", "FnPtr(\"fn(i32) -> i32\")");
        check(
            "std::boxed::Box<std::mem::MaybeUninit<[i32; 2]>>",
            "Adt { path: \"std::boxed::Box\", args: [Adt { path: \"std::mem::MaybeUninit\", args: [Array(Scalar(I32), \"2\")] }] }",
        );
        check("dyn Fn(i32) -> i32", "Other(\"dyn Fn(i32) -> i32\")");
        // A lifetime argument stays as written: a struct that holds a
        // reference is still an ADT (whose fields say why it is no element).
        check(
            "&Named<'_>",
            "Ref { mutable: false, inner: Adt { path: \"Named\", args: [Other(\"'_\")] } }",
        );
        check(
            "std::slice::Iter<'_, u32>",
            "Adt { path: \"std::slice::Iter\", args: [Other(\"'_\"), Scalar(U32)] }",
        );
        check(
            "&{closure@src/a b.rs:1:2: 3:4}",
            "Ref { mutable: false, inner: Closure { file: \"src/a b.rs\", span: Span { lo_line: 1, lo_col: 2, hi_line: 3, hi_col: 4, file: 0 } } }",
        );
    }

    /// A kind of nesting: its name, and the type nested `n` levels.
    type Nest = (&'static str, fn(usize) -> String);

    /// Types of [`MAX_TY_DEPTH`] levels break down, deeper ones are `Other`;
    /// each kind of nesting, 10,000 deep, is `Other` on a thread with a
    /// 2 MiB stack, as rayon's (before the bound: a stack overflow at 1,000).
    #[test]
    fn nesting_is_bounded() {
        let nests: [Nest; 5] = [
            ("refs", |n| format!("{}i32", "&".repeat(n))),
            ("pointers", |n| format!("{}i32", "*mut ".repeat(n))),
            ("tuples", |n| {
                format!("{}i32{}", "(".repeat(n), ",)".repeat(n))
            }),
            ("slices", |n| {
                format!("{}i32{}", "[".repeat(n), "]".repeat(n))
            }),
            ("generics", |n| {
                format!("{}i32{}", "Vec<".repeat(n), ">".repeat(n))
            }),
        ];
        for (name, nest) in nests {
            let outcome = std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || {
                    let at_limit = Ty::parse(&nest(MAX_TY_DEPTH - 1));
                    let past = Ty::parse(&nest(MAX_TY_DEPTH));
                    let far = Ty::parse(&nest(10_000));
                    (
                        !matches!(at_limit, Ty::Other(_))
                            && at_limit.to_string() == nest(MAX_TY_DEPTH - 1),
                        matches!(past, Ty::Other(_)),
                        matches!(far, Ty::Other(_)),
                    )
                })
                .unwrap()
                .join()
                .unwrap();
            assert_eq!(
                outcome,
                (true, true, true),
                "{name}: at, past and far past the limit"
            );
        }
    }
}

#[cfg(test)]
mod split_tests {
    use super::split_top;

    #[test]
    fn split_respects_brackets_and_strings() {
        assert_eq!(
            split_top(
                r#"!move _3, "compute `{} + {}`, which \"would\" overflow", copy _1"#,
                ','
            ),
            vec![
                "!move _3",
                r#" "compute `{} + {}`, which \"would\" overflow""#,
                " copy _1"
            ]
        );
        assert_eq!(
            split_top("a<b, c>, fn(i32) -> i32, d", ','),
            vec!["a<b, c>", " fn(i32) -> i32", " d"]
        );
    }
}
