//! Which definitions a prepared document records ([`collect`]): `core`'s
//! types ([`std_def`]) and the crate's own `struct` and `enum` items, read
//! from its source files ([`source_defs`]). The definitions themselves are
//! plain data (`adt`).

use std::collections::BTreeMap;

use crate::adt::{std_def, struct_constant_type, AdtDef, AdtKind, VariantDef};
use crate::pmir::{PreparedMir, SourceFacts};
use crate::ty::{Scalar, Ty};

/// Records in `doc.adts` the definition of every ADT its bodies' locals
/// name (at any depth: `(Option<i32>, bool)`), found among `core`'s
/// ([`std_def`]) or the crate's own items ([`source_defs`]), and of the
/// ADTs their fields name in turn.
pub fn collect(doc: &mut PreparedMir) {
    let items = crate_items(&doc.source);
    let mut found: BTreeMap<String, AdtDef> = BTreeMap::new();
    let mut work: Vec<Ty> = doc
        .bodies
        .iter()
        .flat_map(|b| b.locals.iter().map(|l| l.ty.clone()))
        .collect();
    // A struct constant names its type, which no local may have.
    for b in &doc.bodies {
        for block in &b.blocks {
            if let crate::pmir::TerminatorKind::Call { args, .. } = &block.terminator.kind {
                for a in args {
                    if let crate::pmir::Operand::Const(crate::pmir::Constant::Other(text)) = a {
                        work.extend(struct_constant_type(text));
                    }
                }
            }
        }
    }
    while let Some(ty) = work.pop() {
        match &ty {
            Ty::Adt { path, args } => {
                work.extend(args.iter().cloned());
                if found.contains_key(path) {
                    continue;
                }
                let Some(d) = std_def(path)
                    .or_else(|| user_def(&items, path))
                    .or_else(|| trimmed_std_def(path))
                else {
                    continue;
                };
                for variant in 0..d.variants.len() {
                    work.extend(d.fields(variant, args).unwrap_or_default());
                }
                found.insert(path.clone(), d);
            }
            Ty::Tuple(parts) => work.extend(parts.iter().cloned()),
            Ty::Array(e, _) | Ty::Slice(e) => work.push((**e).clone()),
            Ty::Ref { inner, .. } | Ty::Ptr { inner, .. } => work.push((**inner).clone()),
            _ => {}
        }
    }
    doc.adts = found.into_values().collect();
}

/// A `core` type MIR names by its last segment alone (`Option<u32>` in a
/// function's header, `ControlFlow<()>`): rustc trims a path where the name
/// is unambiguous, so a crate item of that name (tried first) would have
/// kept it whole.
fn trimmed_std_def(path: &str) -> Option<AdtDef> {
    let full = match path {
        "Option" => "std::option::Option",
        "Result" => "std::result::Result",
        "Ordering" => "std::cmp::Ordering",
        "ControlFlow" => "std::ops::ControlFlow",
        "FpCategory" => "std::num::FpCategory",
        "RangeInclusive" => "std::ops::RangeInclusive",
        "Wrapping" => "std::num::Wrapping",
        "Saturating" => "std::num::Saturating",
        "NonZero" => "std::num::NonZero",
        "PhantomData" => "std::marker::PhantomData",
        "Map" => "std::iter::Map",
        "Filter" => "std::iter::Filter",
        "Enumerate" => "std::iter::Enumerate",
        "Rev" => "std::iter::Rev",
        "StepBy" => "std::iter::StepBy",
        "Zip" => "std::iter::Zip",
        "Copied" => "std::iter::Copied",
        "Take" => "std::iter::Take",
        _ => return None,
    };
    let mut d = std_def(full)?;
    d.path = path.to_string();
    Some(d)
}

/// The crate's item whose name is the last segment of `path`: the one item
/// of that name, or among several the one whose module path MIR printed.
fn user_def(items: &[(Vec<String>, AdtDef)], path: &str) -> Option<AdtDef> {
    let segments: Vec<&str> = path.split("::").collect();
    let (name, prefix) = segments.split_last()?;
    let named: Vec<&(Vec<String>, AdtDef)> =
        items.iter().filter(|(_, d)| d.path == *name).collect();
    let pick = match named.as_slice() {
        [one] => Some(*one),
        many => many.iter().copied().find(|(module, _)| {
            module.len() >= prefix.len()
                && module[module.len() - prefix.len()..]
                    .iter()
                    .zip(prefix.iter())
                    .all(|(a, b)| a == b)
        }),
    }?;
    let mut d = pick.1.clone();
    d.path = path.to_string();
    Some(d)
}

/// Every struct and enum item of the crate's files, with its module path
/// (`[]` for the root; a file's modules from its name, `src/keyed/wide.rs`
/// → `keyed::wide`, plus inline `mod` blocks are not tracked).
fn crate_items(source: &SourceFacts) -> Vec<(Vec<String>, AdtDef)> {
    let mut out = Vec::new();
    for (id, name, text) in source.files() {
        let Some(text) = text else { continue };
        let module: Vec<String> = if id == crate::pmir::ROOT_FILE {
            Vec::new()
        } else {
            let stem = name.strip_suffix(".rs").unwrap_or(name);
            let stem = stem.strip_suffix("/mod").unwrap_or(stem);
            stem.split('/')
                .skip_while(|s| *s == "src" || s.is_empty())
                .map(str::to_string)
                .collect()
        };
        for d in source_defs(text) {
            out.push((module.clone(), d));
        }
    }
    out
}

// ----- reading `struct` and `enum` items from Rust source -----

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Lit(String),
    Punct(char),
    Lifetime,
}

/// Rust tokens (`crate::source::lex`: comments dropped, every literal
/// one token), classified for reading items.
fn tokens(text: &str) -> Vec<Tok> {
    crate::source::lex(text)
        .into_iter()
        .map(|r| {
            let t = &text[r];
            let first = t.chars().next().unwrap_or(' ');
            match first {
                '\'' if t.len() > 1 && t.ends_with('\'') => Tok::Lit(String::new()),
                '\'' => Tok::Lifetime,
                '"' => Tok::Lit(String::new()),
                c if c.is_ascii_digit() => Tok::Lit(t.to_string()),
                // `b"…"`, `r"…"`, `br#"…"#` are literals, not words.
                c if c.is_alphabetic() || c == '_' => match t.contains('"') {
                    true => Tok::Lit(String::new()),
                    false => Tok::Ident(t.to_string()),
                },
                c => Tok::Punct(c),
            }
        })
        .collect()
}

/// The `struct` and `enum` items of one Rust file. Left out: unions, items
/// whose definition this reader does not follow, and types with a `Drop`
/// impl in the file (`impl Drop for Name`): their values have drop glue,
/// which the GPU side does not run.
pub fn source_defs(text: &str) -> Vec<AdtDef> {
    let toks = tokens(text);
    let dropped: Vec<&str> = toks
        .windows(3)
        .filter_map(|w| match w {
            [Tok::Ident(d), Tok::Ident(f), Tok::Ident(name)] if d == "Drop" && f == "for" => {
                Some(name.as_str())
            }
            _ => None,
        })
        .collect();
    let mut defs = items(&toks);
    defs.retain(|d| !dropped.contains(&d.path.as_str()));
    defs
}

fn items(toks: &[Tok]) -> Vec<AdtDef> {
    let mut out = Vec::new();
    let mut repr: Option<Scalar> = None;
    let mut layout: Vec<String> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('#') => {
                // `#[repr(u8)]`, `#[repr(C, u8)]`: the discriminant type.
                let end = group_end(toks, i + 1).unwrap_or(i + 1);
                if let [Tok::Punct('['), Tok::Ident(a), Tok::Punct('('), inner @ ..] =
                    &toks[i + 1..end.min(toks.len())]
                {
                    if a == "repr" {
                        repr = inner.iter().find_map(|t| match t {
                            Tok::Ident(n) => Scalar::from_name(n).filter(|s| s.is_int()),
                            _ => None,
                        });
                        // `inner` ends with the `)` and `]` that close it.
                        let options = &inner[..inner.len().saturating_sub(2)];
                        layout = split_commas(options)
                            .into_iter()
                            .map(spell)
                            .filter(|o| Scalar::from_name(o).is_none_or(|s| !s.is_int()))
                            .collect();
                    }
                }
                i = end;
                continue;
            }
            Tok::Ident(k) if (k == "struct" || k == "enum") => {
                if let Some(Tok::Ident(name)) = toks.get(i + 1) {
                    let kind = if k == "enum" {
                        AdtKind::Enum
                    } else {
                        AdtKind::Struct
                    };
                    if let Some((mut d, next)) = item(toks, i + 2, name, kind, repr) {
                        d.repr = std::mem::take(&mut layout);
                        out.push(d);
                        i = next;
                        repr = None;
                        continue;
                    }
                }
            }
            Tok::Punct(';') | Tok::Punct('}') => {
                repr = None;
                layout.clear();
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The index after the group that opens at `at` (`(`, `[`, `{` or `<`).
fn group_end(toks: &[Tok], at: usize) -> Option<usize> {
    let open = match toks.get(at)? {
        Tok::Punct(c @ ('(' | '[' | '{' | '<')) => *c,
        _ => return None,
    };
    let mut depth = 0i32;
    for (j, t) in toks.iter().enumerate().skip(at) {
        match t {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => depth -= 1,
            // `->` inside generics is not a closing angle.
            Tok::Punct('<') if open == '<' => depth += 1,
            Tok::Punct('>') if open == '<' && !matches!(toks.get(j - 1), Some(Tok::Punct('-'))) => {
                depth -= 1
            }
            _ => {}
        }
        if depth == 0 {
            return Some(j + 1);
        }
    }
    None
}

/// Splits `toks` at top-level commas.
/// Tokens written out without spaces (`align(16)`).
fn spell(toks: &[Tok]) -> String {
    toks.iter()
        .map(|t| match t {
            Tok::Ident(s) | Tok::Lit(s) => s.clone(),
            Tok::Punct(c) => c.to_string(),
            Tok::Lifetime => "'_".to_string(),
        })
        .collect()
}

fn split_commas(toks: &[Tok]) -> Vec<&[Tok]> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (j, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct('(' | '[' | '{' | '<') => depth += 1,
            Tok::Punct(')' | ']' | '}') => depth -= 1,
            Tok::Punct('>') if !matches!(toks.get(j.wrapping_sub(1)), Some(Tok::Punct('-'))) => {
                depth -= 1
            }
            Tok::Punct(',') if depth == 0 => {
                out.push(&toks[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    if start < toks.len() {
        out.push(&toks[start..]);
    }
    out.retain(|p| !p.is_empty());
    out
}

/// A type written in the source, as the MIR type parser reads it.
fn type_text(toks: &[Tok]) -> String {
    let mut s = String::new();
    for (j, t) in toks.iter().enumerate() {
        match t {
            Tok::Ident(n) => {
                if matches!(toks.get(j.wrapping_sub(1)), Some(Tok::Ident(_))) {
                    s.push(' ');
                }
                s.push_str(n);
            }
            Tok::Lit(l) => s.push_str(l),
            Tok::Punct(c) => {
                s.push(*c);
                if matches!(c, ',' | ';') {
                    s.push(' ');
                }
            }
            Tok::Lifetime => {}
        }
    }
    // `crate::a::B`, `self::B`, `super::B` name the crate's own items,
    // which MIR prints by their trimmed paths.
    for prefix in ["crate::", "self::", "super::"] {
        s = s.replace(prefix, "");
    }
    s
}

/// Skips attributes and a visibility at `at`.
fn skip_attrs_vis(toks: &[Tok], mut at: usize) -> usize {
    loop {
        match toks.get(at) {
            Some(Tok::Punct('#')) => at = group_end(toks, at + 1).unwrap_or(at + 1),
            Some(Tok::Ident(p)) if p == "pub" => {
                at += 1;
                if matches!(toks.get(at), Some(Tok::Punct('('))) {
                    at = group_end(toks, at).unwrap_or(at);
                }
            }
            _ => return at,
        }
    }
}

/// Fields of a tuple (`(A, B)`) or record (`{ a: A, b: B }`) body.
fn fields(toks: &[Tok], record: bool) -> Option<Vec<Ty>> {
    split_commas(toks)
        .into_iter()
        .map(|f| {
            let f = &f[skip_attrs_vis(f, 0)..];
            let ty = if record {
                match f {
                    [Tok::Ident(_), Tok::Punct(':'), rest @ ..] => rest,
                    _ => return None,
                }
            } else {
                f
            };
            match Ty::parse(&type_text(ty)) {
                Ty::Other(_) => None,
                t => Some(t),
            }
        })
        .collect()
}

/// An integer literal discriminant: `3`, `-1`, `0x10`, `1_000u16`.
fn literal(toks: &[Tok]) -> Option<i128> {
    let (neg, lit) = match toks {
        [Tok::Punct('-'), Tok::Lit(l)] => (true, l),
        [Tok::Lit(l)] => (false, l),
        _ => return None,
    };
    let l = lit.replace('_', "");
    let l = [
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    ]
    .iter()
    .find_map(|s| l.strip_suffix(s))
    .unwrap_or(&l)
    .to_string();
    let v = if let Some(h) = l.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()?
    } else if let Some(o) = l.strip_prefix("0o") {
        i128::from_str_radix(o, 8).ok()?
    } else if let Some(b) = l.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()?
    } else {
        l.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// One item after its name: generics, an optional `where`, the body.
fn item(
    toks: &[Tok],
    mut at: usize,
    name: &str,
    kind: AdtKind,
    repr: Option<Scalar>,
) -> Option<(AdtDef, usize)> {
    let mut params = Vec::new();
    if matches!(toks.get(at), Some(Tok::Punct('<'))) {
        let end = group_end(toks, at)?;
        for p in split_commas(&toks[at + 1..end - 1]) {
            match p {
                [Tok::Lifetime, ..] => {}
                [Tok::Ident(c), Tok::Ident(n), ..] if c == "const" => params.push(n.clone()),
                [Tok::Ident(n), ..] => params.push(n.clone()),
                _ => return None,
            }
        }
        at = end;
    }
    // A tuple struct's fields come before its `where` clause.
    let mut tuple_fields = None;
    if kind == AdtKind::Struct && matches!(toks.get(at), Some(Tok::Punct('('))) {
        let end = group_end(toks, at)?;
        tuple_fields = Some(fields(&toks[at + 1..end - 1], false)?);
        at = end;
    }
    while at < toks.len() && !matches!(toks[at], Tok::Punct('{' | ';')) {
        at += 1;
    }
    let variant = |name: &str, fields: Vec<Ty>| VariantDef {
        name: name.to_string(),
        discr: 0,
        fields,
    };
    let (variants, next) = match (kind, toks.get(at)?) {
        (AdtKind::Struct, Tok::Punct(';')) => (
            vec![variant(name, tuple_fields.unwrap_or_default())],
            at + 1,
        ),
        (AdtKind::Struct, Tok::Punct('{')) => {
            let end = group_end(toks, at)?;
            (
                vec![variant(name, fields(&toks[at + 1..end - 1], true)?)],
                end,
            )
        }
        (AdtKind::Enum, Tok::Punct('{')) => {
            let end = group_end(toks, at)?;
            let mut variants = Vec::new();
            let mut next_discr = 0i128;
            for v in split_commas(&toks[at + 1..end - 1]) {
                let v = &v[skip_attrs_vis(v, 0)..];
                let [Tok::Ident(vname), rest @ ..] = v else {
                    return None;
                };
                let (fields, rest) = match rest.first() {
                    Some(Tok::Punct(open @ ('(' | '{'))) => {
                        let e = group_end(rest, 0)?;
                        (fields(&rest[1..e - 1], *open == '{')?, &rest[e..])
                    }
                    _ => (Vec::new(), rest),
                };
                let discr = match rest {
                    [] => next_discr,
                    [Tok::Punct('='), value @ ..] => literal(value)?,
                    _ => return None,
                };
                next_discr = discr + 1;
                variants.push(VariantDef {
                    name: vname.clone(),
                    discr,
                    fields,
                });
            }
            (variants, end)
        }
        _ => return None,
    };
    Some((
        AdtDef {
            path: name.to_string(),
            params,
            kind,
            discr: repr.unwrap_or(Scalar::Isize),
            variants,
            repr: Vec::new(),
        },
        next,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_items_of_a_file() {
        let src = r#"
            // enum Commented { A }
            /// Docs: "enum Quoted { B }"
            const C: char = '\n'; const Q: char = '\'';
            #[derive(Clone, Copy)]
            pub enum Shape<T: Copy> where T: Default {
                Circle(T),
                Rect { w: T, h: (f32, u8) },
                Empty = 7,
                Next,
            }
            #[repr(u8)]
            enum Small { A = 0x10, B = -1i8 as u8 }
            #[repr(i16)]
            enum Signed { Low = -3, High }
            pub(crate) struct P(pub f32, [u16; 4]);
            struct Q<'a, const N: usize> { a: &'a i32, b: crate::m::Z }
            struct Unit;
            struct Guard(i32);
            impl Drop for Guard { fn drop(&mut self) {} }
        "#;
        let defs = source_defs(src);
        let names: Vec<&str> = defs.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(names, ["Shape", "Signed", "P", "Q", "Unit"]);
        let shape = &defs[0];
        assert_eq!(shape.params, ["T"]);
        assert_eq!(shape.kind, AdtKind::Enum);
        let discrs: Vec<i128> = shape.variants.iter().map(|v| v.discr).collect();
        assert_eq!(discrs, [0, 1, 7, 8]);
        assert_eq!(
            shape.fields(1, &[Ty::Scalar(Scalar::I16)]).unwrap(),
            [Ty::Scalar(Scalar::I16), Ty::parse("(f32, u8)")]
        );
        let signed = &defs[1];
        assert_eq!(signed.discr, Scalar::I16);
        assert_eq!(signed.variants[0].discr, -3);
        assert_eq!(signed.variants[1].discr, -2);
        assert_eq!(
            defs[2].variants[0].fields,
            [Ty::parse("f32"), Ty::parse("[u16; 4]")]
        );
        assert_eq!(defs[3].params, ["N"]);
        assert_eq!(defs[3].variants[0].fields[1], Ty::parse("m::Z"));
        assert!(defs[4].variants[0].fields.is_empty());
    }
}
