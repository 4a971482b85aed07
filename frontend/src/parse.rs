//! The MIR text parser.
//!
//! Reads what stable `rustc --emit=mir` prints. It never panics: every line it
//! cannot read is a [`MirError`] naming the line, the column and the construct.
//! The grammar is line-based: MIR text puts one item header, declaration,
//! statement or terminator on each line, and a block's terminator is its last
//! line.

use std::fmt;

use crate::pmir::{
    AggregateKind, AssertKind, BinOp, Block, BlockId, Body, BodyKind, Callee, Constant, DebugVar,
    Local, LocalDecl, Operand, Place, Projection, Resolution, Rvalue, Statement, StatementKind,
    Terminator, TerminatorKind, UnOp, UnwindAction,
};
use crate::ty::{split_top, Ty};

/// A located parse error: `line:col: unsupported MIR: construct`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirError {
    pub line: u32,
    pub col: u32,
    /// What was expected or found, e.g. "rvalue `Foo(_1)`".
    pub message: String,
}

impl fmt::Display for MirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: unsupported MIR: {}",
            self.line, self.col, self.message
        )
    }
}

impl std::error::Error for MirError {}

type PResult<T> = Result<T, MirError>;

/// Parses a whole MIR text. Bodies come back in file order, with callee
/// resolution left as [`Resolution::Foreign`]: `prepare` resolves them once
/// every body is known.
pub fn parse_mir(text: &str) -> PResult<Vec<Body>> {
    Ok(parse_mir_items(text)?.0)
}

/// The values of `const` items printed on one line
/// (`const K: i32 = const 7_i32;`), by name.
pub type ConstItems = Vec<(String, Constant)>;

/// Parses a whole MIR text: bodies, and the one-line `const` items.
pub fn parse_mir_items(text: &str) -> PResult<(Vec<Body>, ConstItems)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut p = Parser {
        lines,
        idx: 0,
        consts: Vec::new(),
    };
    let bodies = p.items()?;
    Ok((bodies, p.consts))
}

struct Parser<'a> {
    lines: Vec<&'a str>,
    idx: usize,
    /// One-line `const` items: name and value.
    consts: ConstItems,
}

/// One line with its number and the byte offset of the text being parsed
/// within it, so sub-parsers can report columns.
#[derive(Clone, Copy)]
struct Src<'a> {
    line: u32,
    /// The full line (for column computation).
    full: &'a str,
}

impl<'a> Src<'a> {
    fn col_of(&self, part: &str) -> u32 {
        // `part` is a subslice of `full` whenever it came from slicing it.
        let base = self.full.as_ptr() as usize;
        let p = part.as_ptr() as usize;
        if p >= base && p <= base + self.full.len() {
            (p - base) as u32 + 1
        } else {
            1
        }
    }

    fn err<T>(&self, at: &str, message: impl Into<String>) -> PResult<T> {
        Err(MirError {
            line: self.line,
            col: self.col_of(at),
            message: message.into(),
        })
    }
}

impl<'a> Parser<'a> {
    fn src(&self, idx: usize) -> Src<'a> {
        Src {
            line: idx as u32 + 1,
            full: self.lines[idx],
        }
    }

    fn items(&mut self) -> PResult<Vec<Body>> {
        let mut bodies = Vec::new();
        while self.idx < self.lines.len() {
            let raw = self.lines[self.idx];
            let line = raw.trim();
            let src = self.src(self.idx);
            if line.is_empty() || line.starts_with("//") {
                self.idx += 1;
            } else if line.starts_with("fn ") {
                bodies.push(self.fn_body()?);
            } else if line.starts_with("const ")
                || line.starts_with("static ")
                || line.starts_with("static mut ")
            {
                if line.ends_with('{') {
                    bodies.push(self.const_body()?);
                } else if line.ends_with(';') {
                    // `const K: i32 = const 7_i32;` (also `f::{constant#0}`).
                    if let Some((name, value)) = one_line_const(src, line) {
                        self.consts.push((name, value));
                    }
                    self.idx += 1;
                } else {
                    return src.err(line, "item header: expected `{` or `;` at the end");
                }
            } else if is_anonymous_const(line) {
                // `E::A::{constant#0}: isize = {`: an anonymous constant's
                // body (an enum discriminant `A = 1 + 1`, an array length
                // `[u8; 2 + 1]` in a signature), printed without `const`.
                bodies.push(self.const_body()?);
            } else if line.starts_with("alloc") && line.ends_with("{}") {
                // A zero-size allocation (`""`, `b""`, an empty static):
                // `alloc4 (size: 0, align: 1) {}`, no bytes to skip.
                self.idx += 1;
            } else if line.starts_with("alloc") && line.ends_with('{') {
                // Constant allocation dumps: hex lines up to a closing `}`.
                self.skip_block(src)?;
            } else {
                return src.err(line, format!("item `{}`", first_words(line)));
            }
        }
        Ok(bodies)
    }

    fn skip_block(&mut self, open: Src<'a>) -> PResult<()> {
        self.idx += 1;
        while self.idx < self.lines.len() {
            if self.lines[self.idx].trim_end() == "}" {
                self.idx += 1;
                return Ok(());
            }
            self.idx += 1;
        }
        open.err(open.full.trim_start(), "block is not closed by `}`")
    }

    /// `fn NAME(_1: T, …) -> R {`
    fn fn_body(&mut self) -> PResult<Body> {
        let src = self.src(self.idx);
        let line = src.full.trim();
        let header = line
            .strip_prefix("fn ")
            .and_then(|h| h.strip_suffix(" {"))
            .ok_or_else(|| err_at(src, line, "function header: expected `fn NAME(…) -> T {`"))?;
        let open = find_top(header, '(')
            .ok_or_else(|| err_at(src, header, "function header: expected `(` after the name"))?;
        let name = header[..open].trim();
        let close = matching(header, open).ok_or_else(|| {
            err_at(
                src,
                &header[open..],
                "function header: unbalanced parentheses",
            )
        })?;
        let params_text = &header[open + 1..close];
        let after = header[close + 1..].trim();
        if !after.is_empty() && !after.starts_with("-> ") {
            return src.err(
                after,
                "function header: expected `-> T` after the parameters",
            );
        }
        let mut params = Vec::new();
        if !params_text.trim().is_empty() {
            for part in split_top(params_text, ',') {
                let part = part.trim();
                let (l, t) = part
                    .split_once(": ")
                    .ok_or_else(|| err_at(src, part, "function parameter: expected `_N: T`"))?;
                let local = parse_local(src, l.trim())?;
                params.push((local, Ty::parse(t)));
            }
        }
        for (i, (l, _)) in params.iter().enumerate() {
            if l.0 != i as u32 + 1 {
                return src.err(
                    header,
                    format!("function parameter {i}: expected `_{}`", i + 1),
                );
            }
        }
        let kind = if name.ends_with('}') && name.contains("{closure#") {
            BodyKind::Closure
        } else {
            BodyKind::Fn
        };
        let mut body = Body {
            name: name.to_string(),
            kind,
            mir_line: src.line,
            span: None,
            arg_count: params.len() as u32,
            locals: Vec::new(),
            debug_vars: Vec::new(),
            inlined: Vec::new(),
            instance_of: None,
            generic_params: Vec::new(),
            blocks: Vec::new(),
        };
        for (l, t) in params {
            body.locals.push(LocalDecl {
                local: l,
                ty: t,
                mutable: false,
            });
        }
        self.idx += 1;
        self.body_contents(&mut body, src)?;
        Ok(body)
    }

    /// `const NAME: T = {` … `}`: promoted constants and const items with a body.
    fn const_body(&mut self) -> PResult<Body> {
        let src = self.src(self.idx);
        let line = src.full.trim();
        let header = line
            .strip_suffix(" = {")
            .ok_or_else(|| err_at(src, line, "constant header: expected `const NAME: T = {`"))?;
        let rest = header
            .strip_prefix("const ")
            .or_else(|| header.strip_prefix("static mut "))
            .or_else(|| header.strip_prefix("static "))
            .unwrap_or(header);
        // The name can contain `::`; the type follows the first top-level `: `.
        let (name, _ty) = split_once_top(rest, ": ")
            .ok_or_else(|| err_at(src, rest, "constant header: expected `NAME: T`"))?;
        let mut body = Body {
            name: name.trim().to_string(),
            kind: BodyKind::Const,
            mir_line: src.line,
            span: None,
            arg_count: 0,
            locals: Vec::new(),
            debug_vars: Vec::new(),
            inlined: Vec::new(),
            instance_of: None,
            generic_params: Vec::new(),
            blocks: Vec::new(),
        };
        self.idx += 1;
        self.body_contents(&mut body, src)?;
        Ok(body)
    }

    /// Declarations, scopes and blocks up to the body's closing `}`.
    fn body_contents(&mut self, body: &mut Body, open: Src<'a>) -> PResult<()> {
        let mut depth = 0usize; // open `scope` blocks
        while self.idx < self.lines.len() {
            let src = self.src(self.idx);
            let line = src.full.trim();
            if line.is_empty() || line.starts_with("//") {
                self.idx += 1;
                continue;
            }
            if line == "}" {
                self.idx += 1;
                if depth == 0 {
                    return finish_body(body, open);
                }
                depth -= 1;
                continue;
            }
            if let Some(rest) = line.strip_prefix("debug ") {
                body.debug_vars.push(parse_debug(src, rest)?);
                self.idx += 1;
            } else if let Some(rest) = line.strip_prefix("let ") {
                body.locals.push(parse_let(src, rest)?);
                self.idx += 1;
            } else if line.starts_with("scope ") && line.ends_with('{') {
                if let Some(start) = line.find("(inlined ") {
                    let inner = &line[start + "(inlined ".len()..];
                    let end = inner.rfind(')').ok_or_else(|| {
                        err_at(src, inner, "scope header: unbalanced `(inlined …)`")
                    })?;
                    body.inlined.push(inner[..end].to_string());
                }
                depth += 1;
                self.idx += 1;
            } else if line.starts_with("bb") && line.ends_with(": {") {
                if depth != 0 {
                    return src.err(line, "basic block inside a scope");
                }
                let block = self.block(src)?;
                body.blocks.push(block);
            } else {
                return src.err(line, format!("body item `{}`", first_words(line)));
            }
        }
        open.err(open.full.trim_start(), "body is not closed by `}`")
    }

    /// `bbN: {` (or `bbN (cleanup): {`), statements, one terminator, `}`.
    fn block(&mut self, open: Src<'a>) -> PResult<Block> {
        let line = open.full.trim();
        let label = line.strip_suffix(": {").unwrap_or(line);
        let label = label.strip_suffix(" (cleanup)").unwrap_or(label);
        let id = parse_block_id(open, label)?;
        self.idx += 1;
        let mut lines = Vec::new();
        loop {
            if self.idx >= self.lines.len() {
                return open.err(line, "basic block is not closed by `}`");
            }
            let src = self.src(self.idx);
            let t = src.full.trim();
            self.idx += 1;
            if t == "}" {
                break;
            }
            if t.is_empty() || t.starts_with("//") {
                continue;
            }
            lines.push(src);
        }
        let Some(term) = lines.pop() else {
            return open.err(line, "basic block without a terminator");
        };
        // A statement or terminator outside the supported subset is kept
        // with the reason, not raised: it matters only if a callback reaches
        // this body (admission then rejects it with E0109), so host code the
        // GPU never runs cannot fail the file.
        let mut statements = Vec::new();
        for src in lines {
            let kind = parse_statement(src).unwrap_or_else(|e| StatementKind::Unparsed {
                text: src.full.trim().trim_end_matches(';').to_string(),
                reason: e.message,
            });
            statements.push(Statement {
                mir_line: src.line,
                kind,
            });
        }
        let kind = match parse_terminator(term) {
            Ok(kind) => kind,
            // A registration is never skipped: a call of one that cannot be
            // read stops the import, located at the call.
            Err(e) => match unread_registration(term.full) {
                Some(function) => {
                    return term.err(
                        term.full.trim_start(),
                        format!(
                            "a call of `{function}` that cannot be read ({}); \
                             its callback would be skipped",
                            e.message
                        ),
                    )
                }
                None => TerminatorKind::Unparsed {
                    text: term.full.trim().trim_end_matches(';').to_string(),
                    reason: e.message,
                },
            },
        };
        Ok(Block {
            id,
            mir_line: open.line,
            statements,
            terminator: Terminator {
                mir_line: term.line,
                kind,
            },
        })
    }
}

/// The registration function a terminator's text calls
/// (`_0 = native::reduce::<f64, …>(…) -> …`), by its path.
fn unread_registration(line: &str) -> Option<String> {
    let (_, call) = split_once_top(line.trim(), " = ")?;
    let (path, _) = split_generics(call[..find_top(call, '(')?].trim());
    crate::registry::registration(&path).map(|_| path)
}

/// `const NAME: T = const VALUE;` → the name and the value, when the value
/// is a constant the parser reads (a number, `true`, a char…).
fn one_line_const(src: Src<'_>, line: &str) -> Option<(String, Constant)> {
    let rest = line.strip_prefix("const ")?.strip_suffix(';')?;
    let (head, value) = split_once_top(rest, " = ")?;
    let (name, _ty) = split_once_top(head, ": ")?;
    let value = parse_const(src, value.trim().strip_prefix("const ")?).ok()?;
    match value {
        Constant::Other(_) => None,
        v => Some((name.trim().to_string(), v)),
    }
}

fn finish_body(body: &mut Body, open: Src<'_>) -> PResult<()> {
    // `_0` is declared by a `let`. (The header's return type is printed with
    // trimmed paths, the `let` with full ones, so they are not compared.)
    body.locals.sort_by_key(|l| l.local);
    for (i, l) in body.locals.iter().enumerate() {
        if l.local.0 != i as u32 {
            return open.err(
                open.full.trim_start(),
                format!("body `{}`: local `_{i}` is not declared", body.name),
            );
        }
    }
    if body.locals.is_empty() {
        return open.err(
            open.full.trim_start(),
            format!("body `{}` declares no return place `_0`", body.name),
        );
    }
    // Every closure body takes its environment first; later stages read
    // the parameters after it.
    if body.kind == BodyKind::Closure && body.arg_count == 0 {
        return open.err(
            open.full.trim_start(),
            format!(
                "closure body `{}` has no environment parameter `_1`",
                body.name
            ),
        );
    }
    for (i, b) in body.blocks.iter().enumerate() {
        if b.id.0 != i as u32 {
            return open.err(
                open.full.trim_start(),
                format!(
                    "body `{}`: blocks are not numbered in order at bb{i}",
                    body.name
                ),
            );
        }
    }
    let nblocks = body.blocks.len() as u32;
    let nlocals = body.locals.len() as u32;
    for b in &body.blocks {
        for s in &b.statements {
            check_locals_stmt(&s.kind, nlocals).map_err(|l| MirError {
                line: s.mir_line,
                col: 1,
                message: format!("local `_{l}` is not declared in `{}`", body.name),
            })?;
        }
        check_locals_term(&b.terminator.kind, nlocals).map_err(|l| MirError {
            line: b.terminator.mir_line,
            col: 1,
            message: format!("local `_{l}` is not declared in `{}`", body.name),
        })?;
        for t in successors(&b.terminator.kind) {
            if t.0 >= nblocks {
                return Err(MirError {
                    line: b.terminator.mir_line,
                    col: 1,
                    message: format!("jump to undefined block `bb{}`", t.0),
                });
            }
        }
    }
    Ok(())
}

/// The blocks reachable from the entry block without unwinding: the code
/// that runs on a GPU, which has no unwinding (cleanup blocks reached only
/// from unwind edges are not among them).
pub fn reachable_without_unwinding(body: &crate::pmir::Body) -> Vec<bool> {
    let index: std::collections::HashMap<u32, usize> = body
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| (b.id.0, i))
        .collect();
    let mut live = vec![false; body.blocks.len()];
    let mut work = vec![0usize];
    while let Some(i) = work.pop() {
        if i >= live.len() || live[i] {
            continue;
        }
        live[i] = true;
        let t = &body.blocks[i].terminator.kind;
        let unwind = match t {
            TerminatorKind::Assert { unwind, .. }
            | TerminatorKind::Call { unwind, .. }
            | TerminatorKind::Drop { unwind, .. } => Some(*unwind),
            _ => None,
        };
        for s in successors(t) {
            if unwind == Some(UnwindAction::Cleanup(s)) && !on_return_path(t, s) {
                continue;
            }
            if let Some(&k) = index.get(&s.0) {
                work.push(k);
            }
        }
    }
    live
}

/// Whether `b` is a non-unwind successor of `t`.
fn on_return_path(t: &TerminatorKind, b: BlockId) -> bool {
    match t {
        TerminatorKind::Assert { target, .. } | TerminatorKind::Drop { target, .. } => *target == b,
        TerminatorKind::Call { target, .. } => *target == Some(b),
        _ => true,
    }
}

/// Successor blocks of a terminator (unwind cleanup blocks included).
pub fn successors(t: &TerminatorKind) -> Vec<BlockId> {
    let mut out = Vec::new();
    let unwind = |u: &UnwindAction, out: &mut Vec<BlockId>| {
        if let UnwindAction::Cleanup(b) = u {
            out.push(*b);
        }
    };
    match t {
        TerminatorKind::Goto(b) => out.push(*b),
        TerminatorKind::SwitchInt {
            targets, otherwise, ..
        } => {
            out.extend(targets.iter().map(|(_, b)| *b));
            out.push(*otherwise);
        }
        TerminatorKind::Return
        | TerminatorKind::Unreachable
        | TerminatorKind::UnwindResume
        | TerminatorKind::Unparsed { .. } => {}
        TerminatorKind::Assert {
            target, unwind: u, ..
        } => {
            out.push(*target);
            unwind(u, &mut out);
        }
        TerminatorKind::Call {
            target, unwind: u, ..
        } => {
            out.extend(target.iter().copied());
            unwind(u, &mut out);
        }
        TerminatorKind::Drop {
            target, unwind: u, ..
        } => {
            out.push(*target);
            unwind(u, &mut out);
        }
    }
    out
}

fn check_place(p: &Place, n: u32) -> Result<(), u32> {
    if p.local.0 >= n {
        return Err(p.local.0);
    }
    for pr in &p.projections {
        if let Projection::Index(l) = pr {
            if l.0 >= n {
                return Err(l.0);
            }
        }
    }
    Ok(())
}

fn check_operand(o: &Operand, n: u32) -> Result<(), u32> {
    match o {
        Operand::Copy(p) | Operand::Move(p) => check_place(p, n),
        Operand::Const(_) => Ok(()),
    }
}

fn check_rvalue(r: &Rvalue, n: u32) -> Result<(), u32> {
    match r {
        Rvalue::Use(o) | Rvalue::UnaryOp { operand: o, .. } | Rvalue::Cast { operand: o, .. } => {
            check_operand(o, n)
        }
        Rvalue::Repeat { operand, .. } => check_operand(operand, n),
        Rvalue::BinaryOp { lhs, rhs, .. } | Rvalue::CheckedBinaryOp { lhs, rhs, .. } => {
            check_operand(lhs, n)?;
            check_operand(rhs, n)
        }
        Rvalue::Ref { place, .. } | Rvalue::RawPtr { place, .. } => check_place(place, n),
        Rvalue::Discriminant(p) | Rvalue::Len(p) => check_place(p, n),
        Rvalue::Aggregate { fields, .. } => {
            fields.iter().try_for_each(|(_, o)| check_operand(o, n))
        }
        Rvalue::Other(_) => Ok(()),
    }
}

fn check_locals_stmt(s: &StatementKind, n: u32) -> Result<(), u32> {
    match s {
        StatementKind::Assign { place, rvalue } => {
            check_place(place, n)?;
            check_rvalue(rvalue, n)
        }
        StatementKind::StorageLive(l) | StatementKind::StorageDead(l) => {
            check_place(&Place::local(*l), n)
        }
        StatementKind::SetDiscriminant { place, .. } => check_place(place, n),
        StatementKind::Nop(_) | StatementKind::Opaque(_) | StatementKind::Unparsed { .. } => Ok(()),
    }
}

fn check_locals_term(t: &TerminatorKind, n: u32) -> Result<(), u32> {
    match t {
        TerminatorKind::SwitchInt { discr, .. } => check_operand(discr, n),
        TerminatorKind::Assert { cond, .. } => check_operand(cond, n),
        TerminatorKind::Call { dest, args, .. } => {
            check_place(dest, n)?;
            args.iter().try_for_each(|a| check_operand(a, n))
        }
        TerminatorKind::Drop { place, .. } => check_place(place, n),
        TerminatorKind::Goto(_)
        | TerminatorKind::Return
        | TerminatorKind::Unreachable
        | TerminatorKind::UnwindResume
        | TerminatorKind::Unparsed { .. } => Ok(()),
    }
}

fn err_at(src: Src<'_>, at: &str, message: impl Into<String>) -> MirError {
    MirError {
        line: src.line,
        col: src.col_of(at),
        message: message.into(),
    }
}

/// `NAME::{constant#N}: T = {`: the header of an anonymous constant's body.
fn is_anonymous_const(line: &str) -> bool {
    line.ends_with(" = {")
        && split_once_top(line, ": ")
            .is_some_and(|(name, _)| name.ends_with('}') && name.contains("::{constant#"))
}

fn first_words(s: &str) -> String {
    let w: String = s.chars().take(120).collect();
    if s.chars().count() > 120 {
        format!("{w}…")
    } else {
        w
    }
}

fn parse_local(src: Src<'_>, s: &str) -> PResult<Local> {
    s.strip_prefix('_')
        .and_then(|n| n.parse::<u32>().ok())
        .map(Local)
        .ok_or_else(|| {
            err_at(
                src,
                s,
                format!("expected a local `_N`, found `{}`", first_words(s)),
            )
        })
}

fn parse_block_id(src: Src<'_>, s: &str) -> PResult<BlockId> {
    s.trim()
        .strip_prefix("bb")
        .and_then(|n| n.parse::<u32>().ok())
        .map(BlockId)
        .ok_or_else(|| {
            err_at(
                src,
                s,
                format!("expected a block `bbN`, found `{}`", first_words(s)),
            )
        })
}

/// `let mut _3: T;` / `let _3: T;`
fn parse_let(src: Src<'_>, rest: &str) -> PResult<LocalDecl> {
    let rest = rest
        .strip_suffix(';')
        .ok_or_else(|| err_at(src, rest, "local declaration: expected `;`"))?;
    let (mutable, rest) = match rest.strip_prefix("mut ") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let (l, t) = rest
        .split_once(": ")
        .ok_or_else(|| err_at(src, rest, "local declaration: expected `_N: T`"))?;
    Ok(LocalDecl {
        local: parse_local(src, l)?,
        ty: Ty::parse(t),
        mutable,
    })
}

/// `debug k => ((*_1).0: i32);`
fn parse_debug(src: Src<'_>, rest: &str) -> PResult<DebugVar> {
    let rest = rest
        .strip_suffix(';')
        .ok_or_else(|| err_at(src, rest, "debug line: expected `;`"))?;
    let (name, place) = rest
        .split_once(" => ")
        .ok_or_else(|| err_at(src, rest, "debug line: expected `NAME => PLACE`"))?;
    // Constant-valued debug info keeps no place: `debug x => const 3_i32`,
    // and a function item in an inlined scope of optimised MIR
    // (`debug compare => <&usize as Ord>::cmp`). A place starts with a
    // local, a parenthesis or a dereference.
    let place = if place.starts_with("const ") || !place.starts_with(['_', '(', '*']) {
        None
    } else {
        Some(parse_place(src, place)?)
    };
    Ok(DebugVar {
        name: name.to_string(),
        place,
        mir_line: src.line,
    })
}

fn parse_statement(src: Src<'_>) -> PResult<StatementKind> {
    let line = src.full.trim();
    let Some(body) = line.strip_suffix(';') else {
        return src.err(line, "statement: expected `;` at the end");
    };
    for (prefix, live) in [("StorageLive(", true), ("StorageDead(", false)] {
        if let Some(inner) = body.strip_prefix(prefix).and_then(|r| r.strip_suffix(')')) {
            let l = parse_local(src, inner)?;
            return Ok(if live {
                StatementKind::StorageLive(l)
            } else {
                StatementKind::StorageDead(l)
            });
        }
    }
    if body == "nop" {
        return Ok(StatementKind::Nop("nop".into()));
    }
    for nop in [
        "PlaceMention(",
        "FakeRead(",
        "AscribeUserType(",
        "Coverage::",
        "ConstEvalCounter",
        "Retag(",
        "BackwardIncompatibleDropHint(",
        "assume(",
    ] {
        if body.starts_with(nop) {
            return Ok(StatementKind::Nop(body.to_string()));
        }
    }
    for opaque in ["copy_nonoverlapping(", "Deinit("] {
        if body.starts_with(opaque) {
            return Ok(StatementKind::Opaque(body.to_string()));
        }
    }
    if let Some(rest) = body.strip_prefix("discriminant(") {
        // `discriminant(_1) = 2`
        let close = matching(body, "discriminant".len())
            .ok_or_else(|| err_at(src, rest, "set discriminant: unbalanced parentheses"))?;
        let place = parse_place(src, &body["discriminant(".len()..close])?;
        let v = body[close + 1..]
            .trim()
            .strip_prefix("= ")
            .and_then(|v| v.trim().parse::<u32>().ok())
            .ok_or_else(|| err_at(src, &body[close + 1..], "set discriminant: expected `= N`"))?;
        return Ok(StatementKind::SetDiscriminant { place, variant: v });
    }
    let Some((lhs, rhs)) = split_once_top(body, " = ") else {
        return src.err(body, format!("statement `{}`", first_words(body)));
    };
    let place = parse_place(src, lhs)?;
    let rvalue = parse_rvalue(src, rhs)?;
    Ok(StatementKind::Assign {
        place,
        rvalue: Box::new(rvalue),
    })
}

fn binop(name: &str) -> Option<BinOp> {
    Some(match name {
        "Add" => BinOp::Add,
        "Sub" => BinOp::Sub,
        "Mul" => BinOp::Mul,
        "Div" => BinOp::Div,
        "Rem" => BinOp::Rem,
        "BitXor" => BinOp::BitXor,
        "BitAnd" => BinOp::BitAnd,
        "BitOr" => BinOp::BitOr,
        "Shl" => BinOp::Shl,
        "Shr" => BinOp::Shr,
        "Eq" => BinOp::Eq,
        "Lt" => BinOp::Lt,
        "Le" => BinOp::Le,
        "Ne" => BinOp::Ne,
        "Ge" => BinOp::Ge,
        "Gt" => BinOp::Gt,
        "Cmp" => BinOp::Cmp,
        "Offset" => BinOp::Offset,
        "AddUnchecked" => BinOp::AddUnchecked,
        "SubUnchecked" => BinOp::SubUnchecked,
        "MulUnchecked" => BinOp::MulUnchecked,
        "ShlUnchecked" => BinOp::ShlUnchecked,
        "ShrUnchecked" => BinOp::ShrUnchecked,
        _ => return None,
    })
}

fn checked_binop(name: &str) -> Option<BinOp> {
    Some(match name {
        "AddWithOverflow" => BinOp::Add,
        "SubWithOverflow" => BinOp::Sub,
        "MulWithOverflow" => BinOp::Mul,
        _ => return None,
    })
}

/// Rvalues rustc prints as `Name(…)` that we keep as text: later stages
/// cannot lower them, and admission reports them with their MIR line.
const OPAQUE_RVALUES: &[&str] = &[
    "ShallowInitBox",
    "SizeOf",
    "AlignOf",
    "OffsetOf",
    "UbChecks",
    "ContractChecks",
    "NullaryOp",
    "ThreadLocalRef",
    "WrapUnsafeBinder",
];

fn parse_rvalue(src: Src<'_>, s: &str) -> PResult<Rvalue> {
    let s = s.trim();
    if s.starts_with("copy ") || s.starts_with("move ") || s.starts_with("const ") {
        // Could be a cast: `copy _2 as f32 (IntToFloat)`.
        if let Some(cast) = try_cast(src, s)? {
            return Ok(cast);
        }
        return Ok(Rvalue::Use(parse_operand(src, s)?));
    }
    // `&raw const (fake) (*_1)`: a fake borrow for a bounds check; same shape.
    if let Some(rest) = s.strip_prefix("&raw const ") {
        let rest = rest.strip_prefix("(fake) ").unwrap_or(rest);
        return Ok(Rvalue::RawPtr {
            mutable: false,
            place: parse_place(src, rest)?,
        });
    }
    if let Some(rest) = s.strip_prefix("&raw mut ") {
        let rest = rest.strip_prefix("(fake) ").unwrap_or(rest);
        return Ok(Rvalue::RawPtr {
            mutable: true,
            place: parse_place(src, rest)?,
        });
    }
    if let Some(rest) = s.strip_prefix("&mut ") {
        return Ok(Rvalue::Ref {
            mutable: true,
            place: parse_place(src, rest)?,
        });
    }
    if let Some(rest) = s.strip_prefix("&fake ") {
        let place = rest.split_once(' ').map(|(_, p)| p).unwrap_or(rest);
        return Ok(Rvalue::Ref {
            mutable: false,
            place: parse_place(src, place)?,
        });
    }
    if let Some(rest) = s.strip_prefix('&') {
        return Ok(Rvalue::Ref {
            mutable: false,
            place: parse_place(src, rest)?,
        });
    }
    if s.starts_with("{closure@") {
        // `{closure@f.rs:1:2: 1:9} { k: copy _2 }` or a bare closure type.
        let close =
            matching(s, 0).ok_or_else(|| err_at(src, s, "closure aggregate: unbalanced braces"))?;
        let ty = Ty::parse(&s[..=close]);
        let rest = s[close + 1..].trim();
        let fields = if rest.is_empty() {
            Vec::new()
        } else {
            parse_named_fields(src, rest)?
        };
        return Ok(Rvalue::Aggregate {
            kind: AggregateKind::Closure { ty },
            fields,
        });
    }
    if let Some((ty, ops)) = split_once_top(s, " from (") {
        // Raw pointer aggregate `*const [i32] from (copy _1, copy _2)`.
        if ty.starts_with('*') && s.ends_with(')') {
            let inner = &ops[..ops.len() - 1];
            let mut fields = Vec::new();
            for part in split_top(inner, ',') {
                fields.push((None, parse_operand(src, part.trim())?));
            }
            return Ok(Rvalue::Aggregate {
                kind: AggregateKind::RawPtr { ty: Ty::parse(ty) },
                fields,
            });
        }
    }
    if s.starts_with('(') && matching(s, 0) == Some(s.len() - 1) {
        // Tuple aggregate `(copy _1, const 3_i32)`.
        let inner = &s[1..s.len() - 1];
        let mut fields = Vec::new();
        for part in split_top(inner, ',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            fields.push((None, parse_operand(src, part)?));
        }
        return Ok(Rvalue::Aggregate {
            kind: AggregateKind::Tuple,
            fields,
        });
    }
    if s.starts_with('[') && matching(s, 0) == Some(s.len() - 1) {
        let inner = &s[1..s.len() - 1];
        let parts = split_top(inner, ';');
        if let [elem, count] = parts.as_slice() {
            return Ok(Rvalue::Repeat {
                operand: parse_operand(src, elem.trim())?,
                count: count.trim().to_string(),
            });
        }
        let mut fields = Vec::new();
        for part in split_top(inner, ',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            fields.push((None, parse_operand(src, part)?));
        }
        return Ok(Rvalue::Aggregate {
            kind: AggregateKind::Array,
            fields,
        });
    }
    if let Some(open) = find_top(s, '(') {
        if matching(s, open) == Some(s.len() - 1) {
            let name = &s[..open];
            let inner = &s[open + 1..s.len() - 1];
            if let Some(op) = binop(name) {
                let (l, r) = two_operands(src, inner)?;
                return Ok(Rvalue::BinaryOp { op, lhs: l, rhs: r });
            }
            if let Some(op) = checked_binop(name) {
                let (l, r) = two_operands(src, inner)?;
                return Ok(Rvalue::CheckedBinaryOp { op, lhs: l, rhs: r });
            }
            let un = match name {
                "Not" => Some(UnOp::Not),
                "Neg" => Some(UnOp::Neg),
                "PtrMetadata" => Some(UnOp::PtrMetadata),
                _ => None,
            };
            if let Some(op) = un {
                return Ok(Rvalue::UnaryOp {
                    op,
                    operand: parse_operand(src, inner)?,
                });
            }
            match name {
                "discriminant" => return Ok(Rvalue::Discriminant(parse_place(src, inner)?)),
                "Len" => return Ok(Rvalue::Len(parse_place(src, inner)?)),
                "CopyForDeref" => return Ok(Rvalue::Use(Operand::Copy(parse_place(src, inner)?))),
                _ => {}
            }
            if OPAQUE_RVALUES.contains(&name) {
                return Ok(Rvalue::Other(s.to_string()));
            }
            if is_path(name) {
                // A tuple-struct or enum-variant aggregate: `Option::<i32>::Some(copy _1)`.
                let mut fields = Vec::new();
                for part in split_top(inner, ',') {
                    let part = part.trim();
                    if part.is_empty() {
                        continue;
                    }
                    fields.push((None, parse_operand(src, part)?));
                }
                return Ok(Rvalue::Aggregate {
                    kind: AggregateKind::Adt(name.to_string()),
                    fields,
                });
            }
            return src.err(s, format!("rvalue `{}`", first_words(s)));
        }
    }
    // Struct aggregate `P { a: copy _1, b: const 2_i32 }` or a unit struct `P`.
    if let Some(open) = find_top(s, '{') {
        let name = s[..open].trim();
        if is_path(name) && matching(s, open) == Some(s.len() - 1) {
            return Ok(Rvalue::Aggregate {
                kind: AggregateKind::Adt(name.to_string()),
                fields: parse_named_fields(src, &s[open..])?,
            });
        }
    }
    if is_path(s) {
        return Ok(Rvalue::Aggregate {
            kind: AggregateKind::Adt(s.to_string()),
            fields: Vec::new(),
        });
    }
    // A fn item coerced to a fn pointer: `add as fn(i32) -> i32
    // (PointerCoercion(ReifyFnPointer(Safe), Implicit))`.
    if let Some(cast) = try_cast(src, s)? {
        return Ok(cast);
    }
    src.err(s, format!("rvalue `{}`", first_words(s)))
}

/// `OPERAND as TYPE (Kind)` where Kind may itself have parentheses.
fn try_cast(src: Src<'_>, s: &str) -> PResult<Option<Rvalue>> {
    if !s.ends_with(')') {
        return Ok(None);
    }
    let Some(as_pos) = rfind_top(s, " as ") else {
        return Ok(None);
    };
    // The kind is the last top-level parenthesised group.
    let Some(kind_open) = last_group_open(s) else {
        return Ok(None);
    };
    if kind_open <= as_pos {
        return Ok(None);
    }
    let operand = parse_operand(src, &s[..as_pos])?;
    let ty_text = s[as_pos + 4..kind_open].trim();
    let kind = &s[kind_open + 1..s.len() - 1];
    Ok(Some(Rvalue::Cast {
        kind: kind.to_string(),
        operand,
        ty: Ty::parse(ty_text),
    }))
}

fn last_group_open(s: &str) -> Option<usize> {
    last_open(s, b'(', b')')
}

/// The bracket that opens the last top-level `open`…`close` group of `s`.
fn last_open(s: &str, open: u8, close: u8) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut depth = 0i32;
    for i in (0..bytes.len()).rev() {
        if bytes[i] == close {
            depth += 1;
        } else if bytes[i] == open {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

fn two_operands(src: Src<'_>, inner: &str) -> PResult<(Operand, Operand)> {
    let parts = split_top(inner, ',');
    match parts.as_slice() {
        [a, b] => Ok((parse_operand(src, a.trim())?, parse_operand(src, b.trim())?)),
        _ => src.err(inner, "binary operation: expected two operands"),
    }
}

/// `{ k: copy _2, f: move _3 }`
fn parse_named_fields(src: Src<'_>, s: &str) -> PResult<Vec<(Option<String>, Operand)>> {
    let inner = s
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| err_at(src, s, "aggregate: expected `{ field: operand, … }`"))?;
    let mut out = Vec::new();
    for part in split_top(inner, ',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (name, op) = part
            .split_once(": ")
            .ok_or_else(|| err_at(src, part, "aggregate field: expected `name: operand`"))?;
        out.push((Some(name.to_string()), parse_operand(src, op)?));
    }
    Ok(out)
}

/// A path as MIR prints type and value paths: `Foo`, `Option::<i32>::Some`,
/// `Arguments::<'_>`, `<i32 as Ord>::max`. No parentheses or braces.
fn is_path(s: &str) -> bool {
    // Inside generic arguments anything goes but unbalanced brackets: a
    // unit `()`, a closure type `{closure@a.rs:1:2: 1:3}`, `fn(i32) -> i32`.
    let mut depth = 0i32;
    let mut inner = 0i32;
    let mut prev = ' ';
    for c in s.chars() {
        match c {
            '<' if inner == 0 => depth += 1,
            '>' if inner == 0 && prev != '-' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            '(' | '[' | '{' if depth > 0 => inner += 1,
            ')' | ']' | '}' if depth > 0 => {
                inner -= 1;
                if inner < 0 {
                    return false;
                }
            }
            c if c.is_alphanumeric() || matches!(c, '_' | ':' | '\'' | '&' | '*') => {}
            _ if depth > 0 => {}
            _ => return false,
        }
        prev = c;
    }
    depth == 0
        && inner == 0
        && s.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '<')
}

fn parse_operand(src: Src<'_>, s: &str) -> PResult<Operand> {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix("copy ") {
        return Ok(Operand::Copy(parse_place(src, rest)?));
    }
    if let Some(rest) = s.strip_prefix("move ") {
        return Ok(Operand::Move(parse_place(src, rest)?));
    }
    if let Some(rest) = s.strip_prefix("const ") {
        return Ok(Operand::Const(parse_const(src, rest)?));
    }
    if s.starts_with('_') {
        // A bare place (call arguments sometimes print this way).
        if let Ok(p) = parse_place(src, s) {
            return Ok(Operand::Copy(p));
        }
    }
    if is_path(s) {
        // A function item used as a value: `add`, `helper::<i32>`.
        return Ok(Operand::Const(Constant::FnItem(s.to_string())));
    }
    src.err(s, format!("operand `{}`", first_words(s)))
}

fn parse_const(src: Src<'_>, s: &str) -> PResult<Constant> {
    let s = s.trim();
    match s {
        "true" => return Ok(Constant::Bool(true)),
        "false" => return Ok(Constant::Bool(false)),
        "()" => return Ok(Constant::Unit),
        _ => {}
    }
    if let Some(ty) = s.strip_prefix("ZeroSized: ") {
        return Ok(Constant::ZeroSized(Ty::parse(ty)));
    }
    if s.starts_with('\'') && s.ends_with('\'') && s.len() >= 3 {
        let inner = &s[1..s.len() - 1];
        if let Some(c) = unescape_char(inner) {
            return Ok(Constant::Char(c));
        }
        return src.err(s, format!("char constant `{s}`"));
    }
    // Integer: `3_i32`, `-1_i64`, `255_u8`.
    if let Some((num, ty)) = s.rsplit_once('_') {
        if let Some(scalar) = crate::ty::Scalar::from_name(ty) {
            if scalar.is_int() {
                let value = parse_int(num)
                    .ok_or_else(|| err_at(src, s, format!("integer constant `{s}`")))?;
                return Ok(Constant::Int {
                    value,
                    ty: Ty::Scalar(scalar),
                });
            }
        }
    }
    // `i32::MIN`, `core::num::<impl u8>::MAX`.
    for (suffix, is_max) in [("::MIN", false), ("::MAX", true)] {
        if let Some(ty) = s.strip_suffix(suffix) {
            let ty = ty
                .strip_prefix("core::num::<impl ")
                .and_then(|t| t.strip_suffix('>'))
                .unwrap_or(ty);
            if let Some(scalar) = crate::ty::Scalar::from_name(ty) {
                if let Some(bits) = scalar.int_bits() {
                    let value = int_limit(bits, scalar.is_signed(), is_max);
                    return Ok(Constant::Int {
                        value,
                        ty: Ty::Scalar(scalar),
                    });
                }
            }
        }
    }
    // Float: `1.5f32`, `0f64`, `-2.5e10f64`, `NaNf32`, `inff64`; optimised
    // MIR spells the non-finite ones `-Inf_f64`, `+Inf_f32`, `NaN_f64`.
    for (suffix, scalar) in [
        ("f32", crate::ty::Scalar::F32),
        ("f64", crate::ty::Scalar::F64),
    ] {
        if let Some(num) = s.strip_suffix(suffix) {
            if let Some(bits) = parse_float_bits(num, scalar) {
                return Ok(Constant::Float {
                    text: s.to_string(),
                    bits,
                    ty: Ty::Scalar(scalar),
                });
            }
        }
    }
    // Kept as text: paths (`run::promoted[0]`, `<T as X>::ALIGN`, `MASK`),
    // strings, allocations (`{alloc1: &i32}`) and ADT constants.
    let first = s.chars().next();
    if first.is_some_and(|c| {
        c.is_alphabetic() || matches!(c, '_' | '<' | '"' | '{' | '[' | '(' | '&' | '*')
    }) {
        return Ok(Constant::Other(s.to_string()));
    }
    src.err(s, format!("constant `{}`", first_words(s)))
}

fn parse_int(num: &str) -> Option<i128> {
    if let Some(n) = num.strip_prefix('-') {
        // `-170141183460469231731687303715884105728` is `i128::MIN`.
        match n.parse::<u128>().ok()? {
            m if m <= i128::MAX as u128 => Some(-(m as i128)),
            m if m == i128::MIN.unsigned_abs() => Some(i128::MIN),
            _ => None,
        }
    } else {
        // Unsigned values above i128::MAX keep their bits.
        num.parse::<u128>().ok().map(|v| v as i128)
    }
}

fn int_limit(bits: u32, signed: bool, max: bool) -> i128 {
    match (signed, max) {
        (true, true) => i128::MAX >> (128 - bits),
        (true, false) => i128::MIN >> (128 - bits),
        (false, true) => {
            if bits == 128 {
                u128::MAX as i128
            } else {
                (1i128 << bits) - 1
            }
        }
        (false, false) => 0,
    }
}

fn parse_float_bits(num: &str, scalar: crate::ty::Scalar) -> Option<u64> {
    // rustc prints a NaN without its sign or payload: it reads back as the
    // canonical quiet NaN.
    let v: f64 = match num.strip_suffix('_').unwrap_or(num) {
        "NaN" => f64::NAN,
        "inf" | "Inf" | "+inf" | "+Inf" => f64::INFINITY,
        "-inf" | "-Inf" => f64::NEG_INFINITY,
        n => n.parse().ok()?,
    };
    Some(match scalar {
        crate::ty::Scalar::F32 => (v as f32).to_bits() as u64,
        _ => v.to_bits(),
    })
}

fn unescape_char(s: &str) -> Option<char> {
    let mut it = s.chars();
    let c = it.next()?;
    if c != '\\' {
        return if it.next().is_none() { Some(c) } else { None };
    }
    let rest: String = it.collect();
    Some(match rest.as_str() {
        "n" => '\n',
        "t" => '\t',
        "r" => '\r',
        "0" => '\0',
        "\\" => '\\',
        "'" => '\'',
        "\"" => '"',
        r if r.starts_with("u{") && r.ends_with('}') => {
            char::from_u32(u32::from_str_radix(&r[2..r.len() - 1], 16).ok()?)?
        }
        r if r.starts_with('x') && r.len() == 3 => {
            char::from_u32(u32::from_str_radix(&r[1..], 16).ok()?)?
        }
        _ => return None,
    })
}

/// The most projections a place may nest: rustc's MIR splits a deeper
/// chain of derefs into temporaries, and [`parse_place`] recurses once a
/// projection (6,000 nested `(*…)` overflowed a thread's stack).
const MAX_PLACE_DEPTH: usize = 128;

/// Places: `_1`, `(*_1)`, `((*_1).0: i32)`, `(_1 as Some)`, `_2[_3]`, `_2[1 of 4]`.
fn parse_place(src: Src<'_>, s: &str) -> PResult<Place> {
    parse_place_at(src, s, 0)
}

fn parse_place_at(src: Src<'_>, s: &str, depth: usize) -> PResult<Place> {
    if depth > MAX_PLACE_DEPTH {
        return Err(err_at(
            src,
            s,
            format!("place: projections nested deeper than {MAX_PLACE_DEPTH}"),
        ));
    }
    let parse_place = |src, s| parse_place_at(src, s, depth + 1);
    let s = s.trim();
    // Trailing index projections.
    if s.ends_with(']') {
        if let Some(open) = last_bracket_open(s) {
            let base = parse_place(src, &s[..open])?;
            let inner = &s[open + 1..s.len() - 1];
            let proj = if let Some((off, min)) = inner.split_once(" of ") {
                let (from_end, off) = match off.strip_prefix('-') {
                    Some(o) => (true, o),
                    None => (false, off),
                };
                Projection::ConstantIndex {
                    offset: off
                        .parse()
                        .map_err(|_| err_at(src, inner, "constant index: expected a number"))?,
                    min_length: min
                        .parse()
                        .map_err(|_| err_at(src, inner, "constant index: expected a length"))?,
                    from_end,
                }
            } else if inner.contains("..") {
                return src.err(inner, format!("subslice projection `[{inner}]`"));
            } else {
                Projection::Index(parse_local(src, inner)?)
            };
            let mut p = base;
            p.projections.push(proj);
            return Ok(p);
        }
    }
    if let Some(inner) = s.strip_prefix("(*").and_then(|r| r.strip_suffix(')')) {
        if matching(s, 0) == Some(s.len() - 1) {
            let mut p = parse_place(src, inner)?;
            p.projections.push(Projection::Deref);
            return Ok(p);
        }
    }
    if s.starts_with('(') && matching(s, 0) == Some(s.len() - 1) {
        let inner = &s[1..s.len() - 1];
        if let Some(as_pos) = rfind_top(inner, " as ") {
            let mut p = parse_place(src, &inner[..as_pos])?;
            p.projections
                .push(Projection::Downcast(inner[as_pos + 4..].trim().to_string()));
            return Ok(p);
        }
        // `(BASE.N: T)`: the field dot is the last top-level `.` before `: `.
        if let Some(colon) = find_top_str(inner, ": ") {
            let head = &inner[..colon];
            if let Some(dot) = head.rfind('.') {
                let base = &head[..dot];
                let index: u32 = head[dot + 1..].parse().map_err(|_| {
                    err_at(src, &head[dot + 1..], "field projection: expected an index")
                })?;
                let mut p = parse_place(src, base)?;
                p.projections.push(Projection::Field {
                    index,
                    ty: Ty::parse(&inner[colon + 2..]),
                });
                return Ok(p);
            }
        }
        return src.err(s, format!("place `{}`", first_words(s)));
    }
    Ok(Place::local(parse_local(src, s)?))
}

fn last_bracket_open(s: &str) -> Option<usize> {
    last_open(s, b'[', b']')
}

fn parse_terminator(src: Src<'_>) -> PResult<TerminatorKind> {
    let line = src.full.trim();
    let Some(t) = line.strip_suffix(';') else {
        return src.err(line, "terminator: expected `;` at the end");
    };
    match t {
        "return" => return Ok(TerminatorKind::Return),
        "unreachable" => return Ok(TerminatorKind::Unreachable),
        "resume" | "UnwindResume" => return Ok(TerminatorKind::UnwindResume),
        _ => {}
    }
    if let Some(rest) = t.strip_prefix("goto -> ") {
        return Ok(TerminatorKind::Goto(parse_block_id(src, rest)?));
    }
    if t.starts_with("switchInt(") {
        let close = matching(t, "switchInt".len())
            .ok_or_else(|| err_at(src, t, "switchInt: unbalanced parentheses"))?;
        let discr = parse_operand(src, &t["switchInt(".len()..close])?;
        let rest = t[close + 1..]
            .trim()
            .strip_prefix("-> [")
            .and_then(|r| r.strip_suffix(']'))
            .ok_or_else(|| {
                err_at(
                    src,
                    &t[close + 1..],
                    "switchInt: expected `-> [v: bbN, …, otherwise: bbM]`",
                )
            })?;
        let mut targets = Vec::new();
        let mut otherwise = None;
        for arm in split_top(rest, ',') {
            let arm = arm.trim();
            let (v, b) = arm
                .split_once(": ")
                .ok_or_else(|| err_at(src, arm, "switchInt arm: expected `value: bbN`"))?;
            let b = parse_block_id(src, b)?;
            if v == "otherwise" {
                otherwise = Some(b);
            } else {
                let value = parse_int(v)
                    .map(|x| x as u128)
                    .ok_or_else(|| err_at(src, v, "switchInt arm: expected an integer value"))?;
                targets.push((value, b));
            }
        }
        let otherwise =
            otherwise.ok_or_else(|| err_at(src, rest, "switchInt: missing `otherwise` arm"))?;
        return Ok(TerminatorKind::SwitchInt {
            discr,
            targets,
            otherwise,
        });
    }
    if t.starts_with("assert(") {
        let close = matching(t, "assert".len())
            .ok_or_else(|| err_at(src, t, "assert: unbalanced parentheses"))?;
        let args = split_top(&t["assert(".len()..close], ',');
        let (cond_text, msg) = match args.as_slice() {
            [c, m, ..] => (c.trim(), m.trim()),
            _ => return src.err(t, "assert: expected a condition and a message"),
        };
        let (expected, cond_text) = match cond_text.strip_prefix('!') {
            Some(c) => (false, c),
            None => (true, cond_text),
        };
        let cond = parse_operand(src, cond_text)?;
        let message = parse_message(msg);
        let (target, unwind) = parse_edges(src, &t[close + 1..], "success")?;
        let target = target.ok_or_else(|| err_at(src, t, "assert: expected a success target"))?;
        return Ok(TerminatorKind::Assert {
            cond,
            expected,
            kind: AssertKind::from_message(&message),
            message,
            target,
            unwind,
        });
    }
    if t.starts_with("drop(") {
        let close = matching(t, "drop".len())
            .ok_or_else(|| err_at(src, t, "drop: unbalanced parentheses"))?;
        let place = parse_place(src, &t["drop(".len()..close])?;
        let (target, unwind) = parse_edges(src, &t[close + 1..], "return")?;
        let target = target.ok_or_else(|| err_at(src, t, "drop: expected a return target"))?;
        return Ok(TerminatorKind::Drop {
            place,
            target,
            unwind,
        });
    }
    // Call: `PLACE = CALLEE(ARGS) -> EDGES`.
    if let Some((lhs, rhs)) = split_once_top(t, " = ") {
        let dest = parse_place(src, lhs)?;
        let arrow = rfind_top(rhs, " -> ")
            .ok_or_else(|| err_at(src, rhs, "call: expected `-> [return: bbN, …]`"))?;
        let call = &rhs[..arrow];
        let open = call_args_open(call)
            .ok_or_else(|| err_at(src, call, "call: expected `callee(args)`"))?;
        let callee_text = call[..open].trim();
        let mut args = Vec::new();
        for a in split_top(&call[open + 1..call.len() - 1], ',') {
            let a = a.trim();
            if a.is_empty() {
                continue;
            }
            args.push(parse_operand(src, a)?);
        }
        let (target, unwind) = parse_edges(src, &rhs[arrow..], "return")?;
        let (path, generics) = split_generics(callee_text);
        return Ok(TerminatorKind::Call {
            dest,
            callee: Callee {
                text: callee_text.to_string(),
                path,
                generics,
                resolution: Resolution::Foreign {
                    link_name: None,
                    extern_c: false,
                },
                span: None,
                callback_instance: None,
            },
            args,
            target,
            unwind,
        });
    }
    src.err(t, format!("terminator `{}`", first_words(t)))
}

/// The opening parenthesis of a call's argument list: the last top-level `(`
/// whose group runs to the end.
fn call_args_open(call: &str) -> Option<usize> {
    if !call.ends_with(')') {
        return None;
    }
    let open = last_group_open(call)?;
    (open > 0).then_some(open)
}

/// `native::reduce::<i32, {closure@…}>` → (`native::reduce`, [i32, closure]).
pub fn split_generics(text: &str) -> (String, Vec<Ty>) {
    if let Some(stripped) = text.strip_suffix('>') {
        if let Some(pos) = find_last_turbofish(stripped) {
            let inner = &stripped[pos + 3..];
            let generics = split_top(inner, ',')
                .into_iter()
                .map(|g| Ty::parse(g.trim()))
                .collect();
            return (text[..pos].to_string(), generics);
        }
    }
    (text.to_string(), Vec::new())
}

fn find_last_turbofish(s: &str) -> Option<usize> {
    // The `::<` that opens the final generic list (depth 0 at that point).
    let bytes = s.as_bytes();
    let mut depth = 0i32;
    let mut found = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b'>' | b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        if depth == 1 && bytes[i] == b'<' && i >= 2 && &bytes[i - 2..i] == b"::" {
            found = Some(i - 2);
        }
        i += 1;
    }
    found
}

/// `-> bbN`, `-> [return: bbN, unwind continue]`, `-> unwind continue`.
fn parse_edges(
    src: Src<'_>,
    s: &str,
    target_name: &str,
) -> PResult<(Option<BlockId>, UnwindAction)> {
    let s = s.trim();
    let s = s
        .strip_prefix("->")
        .map(str::trim)
        .ok_or_else(|| err_at(src, s, "expected `->` and successors"))?;
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let mut target = None;
        let mut unwind = UnwindAction::Continue;
        for part in split_top(inner, ',') {
            let part = part.trim();
            if let Some(b) = part.strip_prefix(&format!("{target_name}: ")) {
                target = Some(parse_block_id(src, b)?);
            } else if let Some(u) = part
                .strip_prefix("unwind: ")
                .or_else(|| part.strip_prefix("unwind "))
            {
                unwind = parse_unwind(src, u)?;
            } else {
                return src.err(part, format!("successor `{part}`"));
            }
        }
        return Ok((target, unwind));
    }
    if let Some(u) = s.strip_prefix("unwind ") {
        return Ok((None, parse_unwind(src, u)?));
    }
    Ok((Some(parse_block_id(src, s)?), UnwindAction::Continue))
}

fn parse_unwind(src: Src<'_>, s: &str) -> PResult<UnwindAction> {
    Ok(match s.trim() {
        "continue" => UnwindAction::Continue,
        "unreachable" => UnwindAction::Unreachable,
        t if t.starts_with("terminate") => UnwindAction::Terminate,
        t => UnwindAction::Cleanup(parse_block_id(src, t)?),
    })
}

fn parse_message(s: &str) -> String {
    let s = s.trim();
    s.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .map(|m| m.replace("\\\"", "\""))
        .unwrap_or_else(|| s.to_string())
}

/// Index of the bracket that closes the one opened at `open` (any of `([{<`).
pub(crate) fn matching(s: &str, open: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let (o, c) = match bytes.get(open)? {
        b'(' => (b'(', b')'),
        b'[' => (b'[', b']'),
        b'{' => (b'{', b'}'),
        b'<' => (b'<', b'>'),
        _ => return None,
    };
    let mut depth = 0i32;
    let mut in_str = false;
    let mut i = open;
    while i < bytes.len() {
        let b = bytes[i];
        if in_str {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_str = false;
            }
        } else if b == b'"' {
            in_str = true;
        } else if b == o {
            depth += 1;
        } else if b == c {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// First occurrence of `c` at bracket depth 0 (outside strings).
fn find_top(s: &str, c: char) -> Option<usize> {
    scan_top(s, |rest, _| rest.starts_with(c))
}

fn find_top_str(s: &str, pat: &str) -> Option<usize> {
    scan_top(s, |rest, _| rest.starts_with(pat))
}

fn split_once_top<'s>(s: &'s str, pat: &str) -> Option<(&'s str, &'s str)> {
    let i = find_top_str(s, pat)?;
    Some((&s[..i], &s[i + pat.len()..]))
}

/// Last occurrence of `pat` at depth 0.
fn rfind_top(s: &str, pat: &str) -> Option<usize> {
    let mut last = None;
    scan_top(s, |rest, i| {
        if rest.starts_with(pat) {
            last = Some(i);
        }
        false
    });
    last
}

/// Calls `f(rest, index)` at each depth-0 position outside string literals;
/// returns the first index where `f` is true.
fn scan_top(s: &str, mut f: impl FnMut(&str, usize) -> bool) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut depth = 0i32;
    let mut in_str = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_str {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if depth == 0 && s.is_char_boundary(i) && f(&s[i..], i) {
            return Some(i);
        }
        match b {
            b'"' => in_str = true,
            b'(' | b'[' | b'{' => depth += 1,
            // MIR text has no `<` operator (comparisons print as `Lt(…)`),
            // so every `<` outside a string opens generics or a qualified
            // path: `Vec<i32>`, `::<T>`, `{<i32 as Ord>::max}`, `(<T as Tr>::f)`.
            b'<' => depth += 1,
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b'>' if depth > 0 => depth -= 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The Rust file named by the first closure type in a MIR text, if any.
pub fn first_closure_file(mir: &str) -> Option<String> {
    let at = mir.find("{closure@")?;
    let rest = &mir[at + 1..];
    let end = rest.find('}')?;
    match Ty::parse(&mir[at..at + 1 + end + 1]) {
        Ty::Closure { file, .. } => Some(file),
        _ => None,
    }
}

/// rustc's MIR text with the user's source path made safe to parse.
///
/// rustc prints the path it was given verbatim inside closure and impl
/// names (`{closure@PATH:3:5: 3:16}`, `<impl at PATH:2:1: 2:7>`): no
/// escaping, not even of a newline. A folder named `a}b`, `{@`, `"` or
/// `x\ny` would end the type early, open a string or split a line. The
/// bridge knows the exact path it passed to rustc, so every occurrence of
/// it after `@` or `at ` (and before `:LINE`) is replaced by an escaped
/// spelling ([`escape_path`]) before parsing. Line numbers are kept
/// relative to rustc's text: each line of the protected text remembers the
/// line it started on.
pub struct ProtectedMir {
    pub text: String,
    /// `line_of[i]`: the line of rustc's text where protected line `i + 1` starts.
    line_of: Vec<u32>,
}

impl ProtectedMir {
    pub fn new(mir: &str, path: &str) -> ProtectedMir {
        let escaped = escape_path(path);
        if escaped == path || path.is_empty() {
            return ProtectedMir {
                text: mir.to_string(),
                line_of: Vec::new(),
            };
        }
        let mut text = String::with_capacity(mir.len());
        let mut line_of = vec![1u32];
        let mut line = 1u32;
        let mut rest = mir;
        let mut copy = |part: &str, text: &mut String, line: &mut u32| {
            for c in part.chars() {
                text.push(c);
                if c == '\n' {
                    *line += 1;
                    line_of.push(*line);
                }
            }
        };
        while let Some(at) = rest.find(path) {
            let before = &rest[..at];
            let after = &rest[at + path.len()..];
            let named = (before.ends_with('@') || before.ends_with(" at "))
                && after
                    .strip_prefix(':')
                    .is_some_and(|a| a.starts_with(|c: char| c.is_ascii_digit()));
            if named {
                copy(before, &mut text, &mut line);
                text.push_str(&escaped);
                line += path.matches('\n').count() as u32;
                rest = after;
            } else {
                // Not a span's file: copy up to the next possible start.
                let step = rest[at..].chars().next().map_or(1, char::len_utf8);
                copy(&rest[..at + step], &mut text, &mut line);
                rest = &rest[at + step..];
            }
        }
        copy(rest, &mut text, &mut line);
        ProtectedMir { text, line_of }
    }

    /// The line of rustc's text where line `line` of [`ProtectedMir::text`] starts.
    pub fn original_line(&self, line: u32) -> u32 {
        match line.checked_sub(1) {
            Some(i) => self.line_of.get(i as usize).copied().unwrap_or(line),
            None => line,
        }
    }

    /// Rewrites every MIR line a document records to rustc's numbering.
    pub fn restore_lines(&self, doc: &mut crate::pmir::PreparedMir) {
        if self.line_of.is_empty() {
            return;
        }
        let map = |l: &mut u32| *l = self.original_line(*l);
        for b in &mut doc.bodies {
            map(&mut b.mir_line);
            b.debug_vars.iter_mut().for_each(|d| map(&mut d.mir_line));
            for block in &mut b.blocks {
                map(&mut block.mir_line);
                block
                    .statements
                    .iter_mut()
                    .for_each(|s| map(&mut s.mir_line));
                map(&mut block.terminator.mir_line);
            }
        }
        doc.registrations
            .iter_mut()
            .for_each(|r| map(&mut r.mir_line));
    }
}

/// A source path spelled so that the MIR parser reads it as one token:
/// brackets, quotes, separators, `%` and control characters become `%XX`
/// (per UTF-8 byte). Paths without such characters are unchanged, so the
/// closure types of ordinary files read as rustc prints them.
pub fn escape_path(path: &str) -> String {
    let special = |c: char| {
        matches!(
            c,
            '{' | '}' | '(' | ')' | '[' | ']' | '<' | '>' | '"' | ',' | ';' | '\\'
        ) || c.is_control()
    };
    if !path.chars().any(special) {
        return path.to_string();
    }
    let mut out = String::with_capacity(path.len() + 8);
    for c in path.chars() {
        if special(c) || c == '%' {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_limits_and_literals_at_128_bits() {
        assert_eq!(int_limit(128, true, false), i128::MIN);
        assert_eq!(int_limit(128, true, true), i128::MAX);
        assert_eq!(int_limit(128, false, true), u128::MAX as i128);
        assert_eq!(int_limit(8, true, false), -128);
        assert_eq!(int_limit(8, true, true), 127);
        assert_eq!(int_limit(64, false, true), u64::MAX as i128);
        assert_eq!(
            parse_int("-170141183460469231731687303715884105728"),
            Some(i128::MIN)
        );
        assert_eq!(parse_int("-170141183460469231731687303715884105729"), None);
        assert_eq!(parse_int("-5"), Some(-5));
        assert_eq!(parse_int(&u128::MAX.to_string()), Some(-1));
    }
}
