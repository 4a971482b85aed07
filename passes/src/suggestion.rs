//! Suggestions: the code change a `help:` proposes, in a form a tool can
//! apply, like rustc's `span_suggestion` (`cargo fix` applies those).
//!
//! Admission reads the `rmir` module, not the Rust text, so a rule states
//! its change in terms of the spans it knows (a closure head, a capture's
//! name, a registration call) as [`Edit`]s. [`Suggestion::resolve`] places
//! them in the text when the diagnostic is rendered, and checks there what a
//! rule cannot: that every use of a capture the change rewrites is rewritten,
//! and that a new `let` changes what no other code of its block reads. A
//! diagnostic may offer alternatives (a borrowed `k` needs `move`, a
//! borrowed `*k` needs `let k = *k;` too, and only the text tells which):
//! the first that resolves is shown. One that does not resolve is left out;
//! the diagnostic's help line stays.

use std::ops::Range;

use frontend::pmir::{FileId, Span, ROOT_FILE};
use frontend::source::{lex, SourceText};
use serde::Serialize;

/// How sure the suggestion is, with rustc's names and meanings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Applicability {
    /// The change compiles and keeps what the program computes: a tool may
    /// apply it unasked.
    MachineApplicable,
    /// The change compiles, but may change what the program computes
    /// (a write that no longer reaches the variable it wrote): a person
    /// decides.
    MaybeIncorrect,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::MachineApplicable => "MachineApplicable",
            Applicability::MaybeIncorrect => "MaybeIncorrect",
        }
    }
}

/// One change, placed relative to what admission knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Edit {
    /// The text at `span`, which must read `from`, replaced by `to`.
    Replace {
        span: Span,
        from: String,
        to: String,
    },
    /// `move ` before the closure whose head is `closure`, unless it has it.
    MakeMove { closure: Span },
    /// `move ` before the closure, so that it captures `place` by value:
    /// only where the body never dereferences `place` (`*kr`), which would
    /// make `place` a reference, and `move` capture the reference.
    MoveCapture { closure: Span, place: String },
    /// A value the callback computes from a capture, computed once on the
    /// host instead (see [`Hoist`]).
    Hoist(Hoist),
    /// The item `static NAME: T = …;` made a `const` item.
    StaticToConst { name: String },
}

impl Edit {
    /// The span the edit is placed by, if any.
    fn span(&self) -> Option<Span> {
        match self {
            Edit::Replace { span, .. } => Some(*span),
            Edit::MakeMove { closure } | Edit::MoveCapture { closure, .. } => Some(*closure),
            Edit::Hoist(h) => Some(h.closure),
            Edit::StaticToConst { .. } => None,
        }
    }
}

/// `let NAME = EXPR;` before the statement that holds the closure, and
/// every `EXPR` in the closure's body replaced by `NAME`; resolves only when
/// that leaves no other use of `place` in the body (the closure then no
/// longer captures it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hoist {
    /// The closure's head (`move |a, b|`).
    pub closure: Span,
    /// The captured place, as the source spells it (`k`, `m.x`, `BIAS`).
    pub place: String,
    /// What the body computes from it (`*k`, `c.get()`, `unsafe { *p }`).
    pub expr: String,
    /// The new local's name; when taken, `NAME_2`, `NAME_3`, … .
    pub name: String,
    /// Whether method calls on the place (`k.count_ones()`) may stay: true
    /// when `NAME` is the place itself, shadowed by the value they
    /// auto-deref to (`*k` of a `&i32` or `Box<i32>`).
    pub keep_method_calls: bool,
}

/// A change a help proposes: one or more edits, all applied together, and
/// the help's text when it is shown with them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    pub message: String,
    pub applicability: Applicability,
    pub edits: Vec<Edit>,
}

/// A suggestion placed in the text: its message (naming the local the
/// edits use, where the preferred name was taken) and its replacements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub message: String,
    pub applicability: Applicability,
    pub edits: Vec<Replacement>,
}

/// An edit placed in the text: `range` (bytes; empty for an insertion)
/// becomes `text`. `span` is the same range in lines and columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub span: Span,
    pub range: Range<usize>,
    pub text: String,
}

impl Suggestion {
    pub fn new(
        message: impl Into<String>,
        applicability: Applicability,
        edits: Vec<Edit>,
    ) -> Suggestion {
        Suggestion {
            message: message.into(),
            applicability,
            edits,
        }
    }

    /// The edits placed in `source`, the text of the crate's root file, in
    /// text order, or `None` when one of them cannot be placed or its checks
    /// fail, or nothing is to change.
    pub fn resolve(&self, source: &str) -> Option<Resolved> {
        self.resolve_in(source, ROOT_FILE)
    }

    /// As [`Self::resolve`] in `source`, the text of file `file`: `None`
    /// also when an edit's span lies in another file.
    pub fn resolve_in(&self, source: &str, file: FileId) -> Option<Resolved> {
        let text = Text::new(source, file);
        let mut message = self.message.clone();
        let mut out = Vec::new();
        for e in &self.edits {
            if e.span().is_some_and(|s| s.file != file) {
                return None;
            }
            let placed = match e {
                Edit::Replace { span, from, to } => text.replace(*span, from, to),
                Edit::MakeMove { closure } => text.make_move(*closure),
                Edit::MoveCapture { closure, place } => text.move_capture(*closure, place),
                Edit::Hoist(h) => text.hoist(h).map(|(placed, name)| {
                    if name != h.name {
                        message = message.replace(
                            &format!("`let {} = {};`", h.name, h.expr),
                            &format!("`let {name} = {};`", h.expr),
                        );
                    }
                    placed
                }),
                Edit::StaticToConst { name } => text.static_to_const(name),
            }?;
            out.extend(placed);
        }
        out.sort_by_key(|r| r.range.start);
        out.dedup();
        (!out.is_empty() && disjoint(&out)).then_some(Resolved {
            message,
            applicability: self.applicability,
            edits: out,
        })
    }
}

/// The first of a diagnostic's alternative suggestions that resolves.
/// `source` is the text of file `file`.
pub fn first_resolved(suggestions: &[Suggestion], source: &str, file: FileId) -> Option<Resolved> {
    suggestions.iter().find_map(|s| s.resolve_in(source, file))
}

/// `source` with the replacements of several suggestions applied (each
/// suggestion's resolved edits; the same edit twice, as two suggestions to
/// add one `move`, counts once). Overlapping edits are an error.
pub fn apply(source: &str, suggestions: &[Vec<Replacement>]) -> Result<String, String> {
    let mut all: Vec<&Replacement> = suggestions.iter().flatten().collect();
    all.sort_by_key(|r| r.range.start);
    all.dedup();
    let owned: Vec<Replacement> = all.iter().map(|r| (*r).clone()).collect();
    if !disjoint(&owned) {
        return Err(format!("suggestions overlap: {owned:?}"));
    }
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    for r in &owned {
        out.push_str(source.get(at..r.range.start).ok_or("edit out of range")?);
        out.push_str(&r.text);
        at = r.range.end;
    }
    out.push_str(source.get(at..).ok_or("edit out of range")?);
    Ok(out)
}

/// Sorted replacements that never touch the same bytes (insertions at one
/// point are fine; an insertion inside or at the start of a replaced range
/// is not: its place relative to the new text is ambiguous).
fn disjoint(sorted: &[Replacement]) -> bool {
    sorted.windows(2).all(|w| {
        let (a, b) = (&w[0].range, &w[1].range);
        a.end <= b.start && !(a.start == b.start && a.start != a.end)
    })
}

/// Rust text as tokens, enough to find statements, blocks and expressions:
/// comments and whitespace skipped, string and char literals one token.
struct Text<'a> {
    src: &'a str,
    lines: SourceText<'a>,
    toks: Vec<Range<usize>>,
}

impl<'a> Text<'a> {
    fn new(src: &'a str, file: FileId) -> Text<'a> {
        Text {
            src,
            lines: SourceText::of_file(src, file),
            toks: lex(src),
        }
    }

    fn tok(&self, i: usize) -> &'a str {
        self.toks.get(i).map_or("", |r| &self.src[r.clone()])
    }

    fn offset(&self, line: u32, col: u32) -> Option<usize> {
        self.lines.offset(line, col)
    }

    fn placed(&self, range: Range<usize>, text: impl Into<String>) -> Replacement {
        let (lo_line, lo_col) = self.lines.line_col(range.start);
        let (hi_line, hi_col) = self.lines.line_col(range.end);
        Replacement {
            span: Span {
                lo_line,
                lo_col,
                hi_line,
                hi_col,
                file: self.lines.file(),
            },
            range,
            text: text.into(),
        }
    }

    fn replace(&self, span: Span, from: &str, to: &str) -> Option<Vec<Replacement>> {
        let lo = self.offset(span.lo_line, span.lo_col)?;
        let hi = self.offset(span.hi_line, span.hi_col)?;
        (self.src.get(lo..hi)? == from).then(|| vec![self.placed(lo..hi, to)])
    }

    /// The token that starts at byte `at`.
    fn tok_at(&self, at: usize) -> Option<usize> {
        self.toks.iter().position(|t| t.start == at)
    }

    fn make_move(&self, closure: Span) -> Option<Vec<Replacement>> {
        let lo = self.offset(closure.lo_line, closure.lo_col)?;
        let head = self.tok_at(lo)?;
        match self.tok(head) {
            "move" => Some(Vec::new()),
            "|" => Some(vec![self.placed(lo..lo, "move ")]),
            _ => None,
        }
    }

    fn move_capture(&self, closure: Span, place: &str) -> Option<Vec<Replacement>> {
        let body = self.closure_body(closure)?;
        let place = lex_words(place);
        if place.is_empty() {
            return None;
        }
        let derefs = (body.start..body.end.saturating_sub(place.len() - 1)).any(|k| {
            self.tok(k.wrapping_sub(1)) == "*"
                && self.starts_expression(k.wrapping_sub(1), body.start)
                && (k..k + place.len())
                    .zip(&place)
                    .all(|(j, w)| self.tok(j) == w)
        });
        if derefs {
            return None;
        }
        self.make_move(closure)
    }

    /// The closure body's tokens (after the head) for the closure whose
    /// head is `closure`.
    fn closure_body(&self, closure: Span) -> Option<Range<usize>> {
        let head_hi = self.offset(closure.hi_line, closure.hi_col)?;
        let (_, body_hi) = self.lines.closure_extent(closure)?;
        let lo = self.toks.iter().position(|t| t.start >= head_hi)?;
        let hi = self
            .toks
            .iter()
            .rposition(|t| t.end <= body_hi)
            .map_or(lo, |i| i + 1);
        Some(lo..hi.max(lo))
    }

    fn static_to_const(&self, name: &str) -> Option<Vec<Replacement>> {
        let mut found = (0..self.toks.len()).filter(|&i| {
            self.tok(i) == "static" && self.tok(i + 1) == name && self.tok(i + 2) == ":"
        });
        let i = found.next()?;
        if found.next().is_some() {
            return None;
        }
        // An item with a value (not a declaration in an `extern` block).
        let end = (i..self.toks.len()).find(|&k| self.tok(k) == ";")?;
        (i..end).any(|k| self.tok(k) == "=").then(|| {
            let r = self.toks[i].clone();
            vec![self.placed(r, "const")]
        })
    }

    /// The hoist's replacements, and the local's name.
    fn hoist(&self, h: &Hoist) -> Option<(Vec<Replacement>, String)> {
        let head_lo = self.offset(h.closure.lo_line, h.closure.lo_col)?;
        let head = self.tok_at(head_lo)?;
        let body = self.closure_body(h.closure)?;
        let expr: Vec<String> = lex_words(&h.expr);
        let place: Vec<String> = lex_words(&h.place);
        if expr.is_empty() || place.is_empty() {
            return None;
        }
        let deref = expr[0] == "*";

        // Every `EXPR` in the body, as token ranges.
        let mut matches: Vec<Range<usize>> = Vec::new();
        let mut i = body.start;
        while i + expr.len() <= body.end {
            let end = i + expr.len();
            let same = (i..end).zip(&expr).all(|(k, w)| self.tok(k) == w);
            let next = if end < body.end { self.tok(end) } else { "" };
            if same
                && self.starts_expression(i, body.start)
                && !(deref
                    && (self.tok(i.wrapping_sub(1)) == "*"
                        || matches!(next, "." | "(" | "[" | "?")))
                && !self.continues_path(end)
            {
                matches.push(i..end);
                i = end;
            } else {
                i += 1;
            }
        }
        if matches.is_empty() {
            return None;
        }
        let inside = |k: usize, ms: &[Range<usize>]| ms.iter().any(|m| m.contains(&k));
        // Every use of the place: inside an `EXPR`, or a method call the
        // shadowing local answers the same way.
        let mut kept: Vec<Range<usize>> = Vec::new();
        let mut k = body.start;
        while k + place.len() <= body.end {
            let end = k + place.len();
            let same = (k..end).zip(&place).all(|(j, w)| self.tok(j) == w);
            if !same || !self.starts_expression(k, body.start) || self.continues_path(end) {
                k += 1;
                continue;
            }
            // A struct literal's field name (`S { k: 1 }`) is no use.
            if place.len() == 1 && self.tok(end) == ":" && self.tok(end + 1) != ":" {
                k += 1;
                continue;
            }
            if !inside(k, &matches) {
                let method =
                    self.tok(end) == "." && is_ident(self.tok(end + 1)) && self.tok(end + 2) == "(";
                if !(h.keep_method_calls && method) {
                    return None;
                }
                kept.push(k..end);
            }
            k = end;
        }

        // The statement that holds the closure, and the block around it.
        let stmt = self.statement_start(head)?;
        let block_end = self.block_end(stmt);
        let covered = |k: usize| inside(k, &matches) || inside(k, &kept);
        let name = std::iter::once(h.name.clone())
            .chain((2..10).map(|n| format!("{}_{n}", h.name)))
            .find(|n| {
                !(stmt..block_end)
                    .any(|k| self.tok(k) == n && !covered(k) && self.tok(k.wrapping_sub(1)) != ".")
            })?;

        let at = self.toks[stmt].start;
        let line_start = self.src[..at].rfind('\n').map_or(0, |n| n + 1);
        let indent = &self.src[line_start..at];
        let stmt_text = if indent.trim().is_empty() {
            format!("let {name} = {};\n{indent}", h.expr)
        } else {
            format!("let {name} = {}; ", h.expr)
        };
        let mut out = vec![self.placed(at..at, stmt_text)];
        for m in &matches {
            let r = self.toks[m.start].start..self.toks[m.end - 1].end;
            out.push(self.placed(r, name.clone()));
        }
        Some((out, name))
    }

    /// Whether token `i` (inside a body starting at `first`) starts an
    /// expression of its own, not a field (`x.k`) or a path segment (`a::k`).
    fn starts_expression(&self, i: usize, first: usize) -> bool {
        let before = |n: usize| self.tok(i.wrapping_sub(n));
        i == first || !(before(1) == "." || (before(1) == ":" && before(2) == ":"))
    }

    /// Whether a path goes on after token `end - 1` (`k::x`).
    fn continues_path(&self, end: usize) -> bool {
        self.tok(end) == ":" && self.tok(end + 1) == ":"
    }

    /// The first token of the statement that holds token `at`: after the
    /// `;` or the unclosed `{` before it, skipping over what brackets close.
    /// `None` inside a match arm or a struct literal, where no statement
    /// can go.
    fn statement_start(&self, at: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut start = 0;
        for k in (0..at).rev() {
            match self.tok(k) {
                ")" | "]" | "}" => depth += 1,
                "(" | "[" => depth = depth.saturating_sub(1),
                "{" if depth > 0 => depth -= 1,
                "{" => {
                    start = k + 1;
                    break;
                }
                ";" if depth == 0 => {
                    start = k + 1;
                    break;
                }
                _ => {}
            }
        }
        let mut depth = 0usize;
        for k in start..at {
            match self.tok(k) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                "=" if depth == 0 && self.tok(k + 1) == ">" => return None,
                _ => {}
            }
        }
        let field = is_ident(self.tok(start))
            && self.tok(start) != "let"
            && self.tok(start + 1) == ":"
            && self.tok(start + 2) != ":";
        (!field).then_some(start)
    }

    /// The token that closes the block holding token `from` (or the end).
    fn block_end(&self, from: usize) -> usize {
        let mut depth = 0usize;
        for k in from..self.toks.len() {
            match self.tok(k) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" if depth == 0 => return k,
                ")" | "]" | "}" => depth -= 1,
                _ => {}
            }
        }
        self.toks.len()
    }
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

fn lex_words(s: &str) -> Vec<String> {
    lex(s).into_iter().map(|r| s[r].to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(src: &str, needle: &str, len: usize) -> Span {
        let t = SourceText::new(src);
        let lo = src.find(needle).unwrap();
        let (lo_line, lo_col) = t.line_col(lo);
        let (hi_line, hi_col) = t.line_col(lo + len);
        Span::new(lo_line, lo_col, hi_line, hi_col)
    }

    fn fix(src: &str, edits: Vec<Edit>) -> Option<String> {
        let s = Suggestion::new("help", Applicability::MachineApplicable, edits);
        let r = s.resolve(src)?;
        Some(apply(src, &[r.edits]).unwrap())
    }

    fn hoist(src: &str, head: &str, place: &str, expr: &str, name: &str) -> Edit {
        Edit::Hoist(Hoist {
            closure: span(src, head, head.len()),
            place: place.into(),
            expr: expr.into(),
            name: name.into(),
            keep_method_calls: expr.starts_with('*'),
        })
    }

    #[test]
    fn lexes_literals_comments_and_lifetimes() {
        let src = "a /* x; { */ \"s;{\" 'c' '\\n' 'a: b'x' r#\"q\"# // c;\n1.5 ::";
        let words: Vec<&str> = lex(src).into_iter().map(|r| &src[r]).collect();
        assert_eq!(
            words,
            ["a", "\"s;{\"", "'c'", "'\\n'", "'a", ":", "b", "'x'", "r#\"q\"#", "1.5", ":", ":"]
        );
    }

    #[test]
    fn hoists_before_the_statement_and_rewrites_every_use() {
        let src = "fn f(d: &[i32], k: &i32) -> i32 {\n    let x = 1; // ;{\n    native::reduce(d, 0, move |a, b| a + *k + (*k))\n}\n";
        let out = fix(src, vec![hoist(src, "move |a, b|", "k", "*k", "k")]).unwrap();
        assert_eq!(
            out,
            "fn f(d: &[i32], k: &i32) -> i32 {\n    let x = 1; // ;{\n    let k = *k;\n    native::reduce(d, 0, move |a, b| a + k + (k))\n}\n"
        );
    }

    #[test]
    fn a_use_left_behind_or_a_later_reader_is_respected() {
        // `&k` is no `*k`: hoisting would change its type.
        let src = "fn f(d: &[i32], k: &i32) -> i32 {\n    native::reduce(d, 0, move |a, b| a + *k + g(&k))\n}\n";
        assert_eq!(
            fix(src, vec![hoist(src, "move |a, b|", "k", "*k", "k")]),
            None
        );
        // `k` is read after the statement: the new local gets another name.
        let src = "fn f(d: &[i32], k: &i32) -> i32 {\n    let s = native::reduce(d, 0, move |a, b| a + *k);\n    s + *k\n}\n";
        let out = fix(src, vec![hoist(src, "move |a, b|", "k", "*k", "k")]).unwrap();
        assert!(
            out.contains(
                "let k_2 = *k;\n    let s = native::reduce(d, 0, move |a, b| a + k_2);\n    s + *k"
            ),
            "{out}"
        );
    }

    #[test]
    fn no_statement_in_a_match_arm() {
        let src = "fn f(d: &[i32], k: &i32, o: bool) -> i32 {\n    match o {\n        true => native::reduce(d, 0, move |a, b| a + *k),\n        false => 0,\n    }\n}\n";
        assert_eq!(
            fix(src, vec![hoist(src, "move |a, b|", "k", "*k", "k")]),
            None
        );
    }

    #[test]
    fn move_captures_only_what_is_not_dereferenced() {
        let src = "fn f(d: &[i32], k: i32, r: &i32) -> i32 {\n    native::reduce(d, 0, |a, b| a + k + *r)\n}\n";
        let head = span(src, "|a, b|", 6);
        let by_value = |place: &str| {
            fix(
                src,
                vec![Edit::MoveCapture {
                    closure: head,
                    place: place.into(),
                }],
            )
        };
        assert!(by_value("k").unwrap().contains("move |a, b|"));
        assert_eq!(by_value("r"), None);
    }

    #[test]
    fn make_move_and_static_to_const() {
        let src =
            "static K: i32 = 1;\nfn f(d: &[i32]) -> i32 { native::reduce(d, 0, |a, b| a + K) }\n";
        let out = fix(
            src,
            vec![
                Edit::MakeMove {
                    closure: span(src, "|a, b|", 6),
                },
                Edit::StaticToConst { name: "K".into() },
            ],
        )
        .unwrap();
        assert_eq!(
            out,
            "const K: i32 = 1;\nfn f(d: &[i32]) -> i32 { native::reduce(d, 0, move |a, b| a + K) }\n"
        );
        let declared = "extern \"C\" { static K: i32; }\n";
        assert_eq!(
            fix(declared, vec![Edit::StaticToConst { name: "K".into() }]),
            None
        );
    }

    #[test]
    fn overlapping_suggestions_are_refused() {
        let r = |range: Range<usize>, text: &str| Replacement {
            span: Span::new(1, 1, 1, 1),
            range,
            text: text.into(),
        };
        assert_eq!(
            apply("abc", &[vec![r(1..1, "x")], vec![r(1..1, "x")]]).unwrap(),
            "axbc"
        );
        assert!(apply("abc", &[vec![r(0..2, "x")], vec![r(1..3, "y")]]).is_err());
    }
}
