//! Source facts recovered from the Rust text.
//!
//! Stable rustc prints no per-statement spans in MIR, only closure spans
//! (`{closure@f.rs:5:38: 5:49}`, which cover the closure's head `move |a, b|`).
//! Diagnostics still want to underline a capture or a call, so this module
//! finds them by token search inside a known range. Every result is a
//! best effort and `None` when not found; nothing here guesses across items.

use std::ops::Range;

use crate::pmir::{FileId, SourceFacts, Span, ROOT_FILE};

/// Every source file of a crate, by [`FileId`]: the texts the spans of a
/// prepared document point into, and which file an item lives in.
pub struct Sources<'a> {
    texts: Vec<Option<SourceText<'a>>>,
    names: Vec<&'a str>,
    /// Each file's module path (`keyed::inner` for `src/keyed/inner.rs`,
    /// empty for the root), when its path is the one `mod NAME;` gives.
    modules: Vec<Option<String>>,
}

impl<'a> Sources<'a> {
    pub fn new(facts: &'a SourceFacts) -> Sources<'a> {
        let root_dir = std::path::Path::new(&facts.file).parent();
        let mut texts = Vec::new();
        let mut names = Vec::new();
        let mut modules = Vec::new();
        for (id, name, text) in facts.files() {
            texts.push(text.map(|t| SourceText::of_file(t, id)));
            names.push(name);
            modules.push(if id == ROOT_FILE {
                Some(String::new())
            } else {
                root_dir.and_then(|d| module_path(d, std::path::Path::new(name)))
            });
        }
        Sources {
            texts,
            names,
            modules,
        }
    }

    /// The text of file `id`, when known.
    pub fn text(&self, id: FileId) -> Option<&SourceText<'a>> {
        self.texts.get(id as usize)?.as_ref()
    }

    /// Whether any text is known.
    pub fn any_text(&self) -> bool {
        self.texts.iter().any(Option::is_some)
    }

    /// The file rustc names `name` (a closure type's `{closure@NAME:…}`);
    /// the root when the crate has one file whatever the name (a document
    /// read from MIR alone names its root after the MIR file).
    pub fn file_id(&self, name: &str) -> Option<FileId> {
        match self.names.iter().position(|n| *n == name) {
            Some(i) => Some(i as FileId),
            None => (self.names.len() == 1).then_some(ROOT_FILE),
        }
    }

    /// The `fn` item MIR names `path` (its shortest unique path:
    /// `inner::mix`, `mix`): its file, body range and name span. Found by its
    /// last segment in every file; where several files define that name,
    /// the files whose module path (or an inline `mod` in them) matches the
    /// path's module prefix. `None` when not exactly one place is left.
    ///
    /// A free function's path (no prefix, or a module's) leaves out the
    /// methods of `impl` and `trait` blocks with the same name where the
    /// name alone is ambiguous: `apply` is the free `fn apply`, not
    /// `Affine::apply`.
    pub fn fn_extent(&self, path: &str) -> Option<(FileId, (usize, usize), Span)> {
        let name = path.rsplit("::").next().unwrap_or(path);
        let module_prefix = path
            .strip_suffix(name)
            .map(|p| p.trim_end_matches("::"))
            .is_some_and(|p| {
                p.rsplit("::").next().is_none_or(|last| {
                    last.is_empty() || last.starts_with(|c: char| c.is_ascii_lowercase())
                })
            });
        let hits: Vec<(FileId, (usize, usize), Span)> = self
            .texts
            .iter()
            .flatten()
            .filter_map(|t| {
                t.fn_extent(name)
                    .or_else(|| module_prefix.then(|| t.free_fn_extent(name)).flatten())
                    .map(|(lo, hi, span)| (t.file(), (lo, hi), span))
            })
            .collect();
        if hits.len() <= 1 {
            return hits.into_iter().next();
        }
        let prefix = path.strip_suffix(name)?.strip_suffix("::")?;
        if prefix.contains(['<', '{', ' ']) {
            return None;
        }
        let last = prefix.rsplit("::").next().unwrap_or(prefix);
        let matching: Vec<_> = hits
            .into_iter()
            .filter(|(id, _, _)| {
                let by_file = self.modules[*id as usize]
                    .as_deref()
                    .is_some_and(|m| m == prefix || m.ends_with(&format!("::{prefix}")));
                let inline = self.texts[*id as usize].as_ref().is_some_and(|t| {
                    t.text.contains(&format!("mod {last} {{"))
                        || t.text.contains(&format!("mod {last}{{"))
                });
                by_file || inline
            })
            .collect();
        match matching.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// [`SourceText::declares_extern_c`] in file `first`, else in any other file.
    pub fn declares_extern_c(&self, name: &str, first: FileId) -> bool {
        if self.text(first).is_some_and(|t| t.declares_extern_c(name)) {
            return true;
        }
        self.texts
            .iter()
            .flatten()
            .any(|t| t.file() != first && t.declares_extern_c(name))
    }

    /// [`SourceText::link_name`] in file `first`, else in any other file.
    pub fn link_name(&self, name: &str, first: FileId) -> Option<String> {
        if let Some(l) = self.text(first).and_then(|t| t.link_name(name)) {
            return Some(l);
        }
        self.texts
            .iter()
            .flatten()
            .filter(|t| t.file() != first)
            .find_map(|t| t.link_name(name))
    }
}

/// The Rust files of a crate, from the dep-info file rustc writes for it
/// (`--emit=dep-info`): the first rule's prerequisites that end in `.rs`,
/// in rustc's order (the root first), with make's `\ ` escapes undone.
pub fn dep_info_rust_files(dep_info: &str) -> Vec<String> {
    let Some(rule) = dep_info.lines().find(|l| !l.trim().is_empty()) else {
        return Vec::new();
    };
    // The target ends at the first `: ` (a path may hold `:` only escaped).
    let Some((_, deps)) = rule.split_once(": ") else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some(' ') | Some('\\') | Some(':')) => {
                current.extend(chars.next());
            }
            ' ' => {
                if !current.is_empty() {
                    files.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        files.push(current);
    }
    files.retain(|f| f.ends_with(".rs"));
    files
}

/// The module path `mod` items give a file under the crate root's
/// directory: `src/keyed.rs` and `src/keyed/mod.rs` are `keyed`,
/// `src/keyed/inner.rs` is `keyed::inner`. `None` outside that directory.
fn module_path(root_dir: &std::path::Path, file: &std::path::Path) -> Option<String> {
    let rel = file.strip_prefix(root_dir).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    if stem != "mod" {
        parts.push(stem.to_string());
    }
    (!parts.is_empty()).then(|| parts.join("::"))
}

/// The Rust source of one file of the crate, with a line index. The spans it
/// makes name that file.
pub struct SourceText<'a> {
    text: &'a str,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
    file: FileId,
}

impl<'a> SourceText<'a> {
    /// The crate root's text.
    pub fn new(text: &'a str) -> SourceText<'a> {
        SourceText::of_file(text, ROOT_FILE)
    }

    /// The text of file `file` of the crate.
    pub fn of_file(text: &'a str, file: FileId) -> SourceText<'a> {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        SourceText {
            text,
            line_starts,
            file,
        }
    }

    /// The file this text is.
    pub fn file(&self) -> FileId {
        self.file
    }

    /// The text before `span`'s start (empty when it is not in this file).
    pub fn text_before(&self, span: Span) -> &'a str {
        match self.offset(span.lo_line, span.lo_col) {
            Some(at) => &self.text[..at],
            None => "",
        }
    }

    /// Byte offset of a 1-based line and (char) column.
    pub fn offset(&self, line: u32, col: u32) -> Option<usize> {
        let start = *self.line_starts.get(line.checked_sub(1)? as usize)?;
        let line_text = &self.text[start..];
        let mut off = start;
        let mut c = 1;
        for ch in line_text.chars() {
            if c == col {
                return Some(off);
            }
            if ch == '\n' {
                break;
            }
            off += ch.len_utf8();
            c += 1;
        }
        (c == col).then_some(off)
    }

    /// 1-based line and char column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line];
        let col = self.text[start..offset.min(self.text.len())]
            .chars()
            .count();
        (line as u32 + 1, col as u32 + 1)
    }

    fn span_of(&self, lo: usize, hi: usize) -> Span {
        let (lo_line, lo_col) = self.line_col(lo);
        let (hi_line, hi_col) = self.line_col(hi);
        Span {
            lo_line,
            lo_col,
            hi_line,
            hi_col,
            file: self.file,
        }
    }

    /// The byte range of a closure expression whose head rustc reports as
    /// `head`: from the head's start to the end of its body (a `{ … }` block,
    /// or an expression ending at a `,`, `)`, `]`, `}` or `;` at depth 0).
    pub fn closure_extent(&self, head: Span) -> Option<(usize, usize)> {
        let lo = self.offset(head.lo_line, head.lo_col)?;
        let body_start = self.offset(head.hi_line, head.hi_col)?;
        let bytes = self.text.as_bytes();
        let mut i = body_start;
        let mut depth = 0i32;
        let mut in_str = false;
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
            match b {
                b'"' => in_str = true,
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    if depth == 0 {
                        return Some((lo, i));
                    }
                    depth -= 1;
                    if depth == 0
                        && b == b'}'
                        && self.text[body_start..i].trim_start().starts_with('{')
                    {
                        return Some((lo, i + 1));
                    }
                }
                b',' | b';' if depth == 0 => return Some((lo, i)),
                _ => {}
            }
            i += 1;
        }
        Some((lo, bytes.len()))
    }

    /// The byte range of a `fn NAME` item's body: from the first `{` after
    /// the name to the brace that closes it, and the span of the name. `None`
    /// when the name is not found or is defined more than once.
    pub fn fn_extent(&self, name: &str) -> Option<(usize, usize, Span)> {
        self.fn_extent_in(name, (0, self.text.len()))
    }

    /// [`Self::fn_extent`] for a free function: the functions of `impl`
    /// and `trait` blocks are left out.
    pub fn free_fn_extent(&self, name: &str) -> Option<(usize, usize, Span)> {
        let blocks = self.impl_and_trait_blocks();
        self.fn_extent_where(name, (0, self.text.len()), |at| {
            !blocks.iter().any(|&(lo, hi)| lo < at && at < hi)
        })
    }

    /// The byte ranges of the `impl` and `trait` items' blocks (an
    /// `impl Trait` in a type is none).
    fn impl_and_trait_blocks(&self) -> Vec<(usize, usize)> {
        let toks = lex(self.text);
        let mut out = Vec::new();
        for (k, r) in toks.iter().enumerate() {
            let word = &self.text[r.clone()];
            if word != "impl" && word != "trait" {
                continue;
            }
            let before = k
                .checked_sub(1)
                .map(|j| &self.text[toks[j].clone()])
                .unwrap_or("");
            if matches!(
                before,
                "(" | "," | ":" | ">" | "<" | "=" | "&" | "mut" | "dyn"
            ) {
                continue;
            }
            if let Some(block) = self.block_from(r.end) {
                out.push(block);
            }
        }
        out
    }

    /// [`Self::fn_extent`] inside a byte range (an `impl` block's).
    pub fn fn_extent_in(&self, name: &str, range: (usize, usize)) -> Option<(usize, usize, Span)> {
        self.fn_extent_where(name, range, |_| true)
    }

    /// [`Self::fn_extent_in`] for the `fn NAME` items at offsets `keep`
    /// accepts.
    fn fn_extent_where(
        &self,
        name: &str,
        range: (usize, usize),
        keep: impl Fn(usize) -> bool,
    ) -> Option<(usize, usize, Span)> {
        let mut found = None;
        let needle = format!("fn {name}");
        let (lo, hi) = (range.0.min(self.text.len()), range.1.min(self.text.len()));
        let mut start = lo;
        while let Some(pos) = self.text[start..hi].find(&needle) {
            let at = start + pos;
            start = at + needle.len();
            let after = self.text[start..].chars().next();
            let before_ok = at == 0 || !is_ident_byte(self.text.as_bytes()[at - 1]);
            if before_ok && matches!(after, Some('(') | Some('<')) && keep(at) {
                if found.is_some() {
                    return None;
                }
                found = Some(at);
            }
        }
        let at = found?;
        let name_lo = at + 3;
        let name_span = self.span_of(name_lo, name_lo + name.len());
        let open = at + self.text[at..].find('{')?;
        let bytes = self.text.as_bytes();
        let mut depth = 0i32;
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((open, i + 1, name_span));
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// The byte range of the block that opens at the first `{` at or after
    /// `from` (an `impl` block), up to its closing brace.
    pub fn block_from(&self, from: usize) -> Option<(usize, usize)> {
        let open = from + self.text.get(from..)?.find('{')?;
        let mut depth = 0i32;
        for (i, &b) in self.text.as_bytes().iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((open, i + 1));
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Whole-word occurrences of `word` in `range`, each as a span; a
    /// following `(` or `::<` is required when `call` is set.
    pub fn find_word(&self, range: (usize, usize), word: &str, call: bool) -> Vec<Span> {
        let mut out = Vec::new();
        if word.is_empty() {
            return out;
        }
        let hi = range.1.min(self.text.len());
        let lo = range.0.min(hi);
        let hay = &self.text[lo..hi];
        let mut start = 0;
        while let Some(pos) = hay[start..].find(word) {
            let at = lo + start + pos;
            let end = at + word.len();
            start += pos + word.len();
            let bytes = self.text.as_bytes();
            if at > 0 && is_ident_byte(bytes[at - 1]) {
                continue;
            }
            if end < bytes.len() && is_ident_byte(bytes[end]) {
                continue;
            }
            if call {
                let rest = self.text[end..].trim_start();
                if !(rest.starts_with('(') || rest.starts_with("::<")) {
                    continue;
                }
            }
            out.push(self.span_of(at, end));
        }
        out
    }

    /// The byte range of a call's argument list, `(` to `)` inclusive, for
    /// the callee word at `callee` (a span from [`Self::find_word`] with
    /// `call`), past a turbofish; tokens are read with [`lex`], so strings
    /// and comments do not count.
    pub fn call_args(&self, callee: Span) -> Option<(usize, usize)> {
        let from = self.offset(callee.hi_line, callee.hi_col)?;
        let rest = &self.text[from..];
        let mut depth = 0i32;
        let mut open = None;
        for r in lex(rest) {
            let tok = &rest[r.clone()];
            match (open, tok) {
                (None, "<") => depth += 1,
                (None, ">") => depth -= 1,
                (None, "(") if depth == 0 => {
                    open = Some(from + r.start);
                    depth = 1;
                }
                (None, _) => {}
                (Some(_), "(") => depth += 1,
                (Some(o), ")") => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((o, from + r.end));
                    }
                }
                (Some(_), _) => {}
            }
        }
        None
    }

    /// The byte range of the whole call expression whose callee word is
    /// `callee` (a span from [`Self::find_word`] with `call`), looking no
    /// further back than `from`: for a method call, its receiver chain
    /// (`gpu.par_iter(&k).map(move |v| v & m)` of `.sum()`), then the
    /// word, then its arguments. The receiver is read back over tokens
    /// ([`lex`]): paths, fields, `?`, turbofishes and bracketed groups,
    /// up to the first token that ends an expression's left side (`=`,
    /// `;`, `,`, an opening bracket, an operator, a keyword).
    pub fn call_extent(&self, callee: Span, from: usize) -> Option<(usize, usize)> {
        let word = self.offset(callee.lo_line, callee.lo_col)?;
        let end = self.call_args(callee)?.1;
        let before = self.text.get(from..word)?;
        let toks: Vec<&str> = lex(before).into_iter().map(|r| &before[r]).collect();
        let starts: Vec<usize> = lex(before).into_iter().map(|r| from + r.start).collect();
        let mut start = word;
        if toks.last() != Some(&".") {
            return Some((start, end));
        }
        let ident = |t: &str| {
            t.bytes()
                .next()
                .is_some_and(|b| b == b'_' || b.is_ascii_alphanumeric())
                && !matches!(
                    t,
                    "let" | "return" | "in" | "if" | "match" | "else" | "move" | "break"
                )
        };
        let mut i = toks.len();
        while i > 0 {
            let t = toks[i - 1];
            let open = match t {
                ")" => Some(("(", ")")),
                "]" => Some(("[", "]")),
                ">" => Some(("<", ">")),
                _ => None,
            };
            if let Some((o, c)) = open {
                // Back to the matching opening token.
                let mut depth = 0usize;
                let mut j = i;
                loop {
                    if j == 0 {
                        return Some((start, end));
                    }
                    j -= 1;
                    if toks[j] == c {
                        depth += 1;
                    } else if toks[j] == o {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                }
                // A turbofish's `<` follows `::`; a comparison's does not.
                if o == "<" && !(j >= 2 && toks[j - 1] == ":" && toks[j - 2] == ":") {
                    break;
                }
                i = j;
            } else if t == "." || t == "?" || t == ":" || ident(t) {
                i -= 1;
            } else {
                break;
            }
            start = starts[i];
        }
        Some((start, end))
    }

    /// Whether an `extern "C"` block (or a bare `extern` block, whose ABI
    /// is C) declares a function `name`: `unsafe extern "C" { fn mix(x:
    /// u32) -> u32; }`. Blocks of another ABI (`extern "system"`), `extern
    /// "C" fn` definitions and `extern crate` do not count. Braces are
    /// matched without regard to strings or comments, which an `extern`
    /// block's declarations do not hold.
    pub fn declares_extern_c(&self, name: &str) -> bool {
        let text = self.text;
        let bytes = text.as_bytes();
        let mut start = 0;
        while let Some(pos) = text[start..].find("extern") {
            let at = start + pos;
            start = at + "extern".len();
            if at > 0 && is_ident_byte(bytes[at - 1])
                || bytes.get(start).is_some_and(|b| is_ident_byte(*b))
            {
                continue;
            }
            let mut rest = text[start..].trim_start();
            if let Some(abi) = rest.strip_prefix('"') {
                let Some(end) = abi.find('"') else { continue };
                if &abi[..end] != "C" {
                    continue;
                }
                rest = abi[end + 1..].trim_start();
            }
            let Some(body) = rest.strip_prefix('{') else {
                continue;
            };
            let mut depth = 1;
            let end = body
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(body.len(), |(i, _)| i);
            let block = &body[..end];
            let mut from = 0;
            while let Some(p) = block[from..].find("fn ") {
                let at = from + p;
                from = at + 3;
                if at > 0 && is_ident_byte(block.as_bytes()[at - 1]) {
                    continue;
                }
                let decl = block[from..].trim_start();
                let ident_end = decl
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(decl.len());
                if &decl[..ident_end] == name && decl[ident_end..].trim_start().starts_with('(') {
                    return true;
                }
            }
        }
        false
    }

    /// The symbol a foreign function `name` links to, when an `extern`
    /// block declares it under another name:
    /// `#[link_name = "cudaDeviceSynchronize"] fn wait();` gives
    /// `cudaDeviceSynchronize` for `wait`. The attribute must be the last
    /// attribute before `fn name` (only whitespace, other attributes and
    /// `pub`/`unsafe`/`safe` between them); `None` when there is none.
    pub fn link_name(&self, name: &str) -> Option<String> {
        const ATTR: &str = "link_name";
        let mut start = 0;
        while let Some(pos) = self.text[start..].find(ATTR) {
            let at = start + pos;
            start = at + ATTR.len();
            let rest = self.text[start..].trim_start();
            let Some(rest) = rest.strip_prefix('=') else {
                continue;
            };
            let Some(rest) = rest.trim_start().strip_prefix('"') else {
                continue;
            };
            let Some(end) = rest.find('"') else { continue };
            let symbol = &rest[..end];
            let mut after = rest[end + 1..].trim_start();
            let Some(a) = after.strip_prefix(']') else {
                continue;
            };
            after = a.trim_start();
            // Further attributes and qualifiers before the `fn`.
            loop {
                if after.starts_with("#[") {
                    match after.find(']') {
                        Some(e) => after = after[e + 1..].trim_start(),
                        None => break,
                    }
                } else if let Some(a) = ["pub ", "unsafe ", "safe "]
                    .iter()
                    .find_map(|q| after.strip_prefix(q))
                {
                    after = a.trim_start();
                } else {
                    break;
                }
            }
            let Some(decl) = after.strip_prefix("fn ") else {
                continue;
            };
            let decl = decl.trim_start();
            let ident_end = decl
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(decl.len());
            if &decl[..ident_end] == name {
                return Some(symbol.to_string());
            }
        }
        None
    }

    /// Uses of any of the macros `names` (`println!`) in `range`, in
    /// source order, each as the span of its name.
    pub fn find_macros(&self, range: (usize, usize), names: &[&str]) -> Vec<Span> {
        let mut hits: Vec<(usize, Span)> = Vec::new();
        for name in names {
            for span in self.find_word(range, name, false) {
                let Some(at) = self.offset(span.hi_line, span.hi_col) else {
                    continue;
                };
                if self.text[at..].starts_with('!') {
                    hits.push((at, span));
                }
            }
        }
        hits.sort_by_key(|(at, _)| *at);
        hits.into_iter().map(|(_, s)| s).collect()
    }

    /// Indexing expressions `name[…]` in `range`, each as the span from the
    /// indexed name to the closing bracket.
    pub fn find_index(&self, range: (usize, usize)) -> Vec<Span> {
        let (lo, hi) = (range.0.min(self.text.len()), range.1.min(self.text.len()));
        let bytes = self.text.as_bytes();
        let mut out = Vec::new();
        for i in lo..hi {
            if bytes[i] != b'[' || i == 0 || !(is_ident_byte(bytes[i - 1]) || bytes[i - 1] == b')')
            {
                continue;
            }
            let mut start = i;
            while start > lo && is_ident_byte(bytes[start - 1]) {
                start -= 1;
            }
            let end = self.text[i..hi].find(']').map_or(i + 1, |e| i + e + 1);
            out.push(self.span_of(start, end));
        }
        out
    }

    /// The text between two byte offsets (empty when out of range).
    pub fn slice(&self, lo: usize, hi: usize) -> &'a str {
        self.text.get(lo..hi).unwrap_or("")
    }

    /// Offset of a span's start, for ordering.
    pub fn span_start(&self, span: Span) -> Option<usize> {
        self.offset(span.lo_line, span.lo_col)
    }
}

/// Rust tokens as byte ranges: identifiers and keywords, numbers, string,
/// byte-string, raw-string and char literals, lifetimes, and every other
/// character alone (`::` is two `:`). Comments and whitespace are skipped.
pub fn lex(s: &str) -> Vec<Range<usize>> {
    let b = s.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && at(i + 1) == b'/' {
            i = s[i..].find('\n').map_or(b.len(), |n| i + n);
            continue;
        }
        if c == b'/' && at(i + 1) == b'*' {
            let mut depth = 0;
            while i < b.len() {
                if at(i) == b'/' && at(i + 1) == b'*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == b'*' && at(i + 1) == b'/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            continue;
        }
        // Raw strings: r"…", r#"…"#, br"…".
        let r = if c == b'b' && at(i + 1) == b'r' {
            i + 1
        } else {
            i
        };
        if at(r) == b'r' && (at(r + 1) == b'"' || at(r + 1) == b'#') {
            let hashes = b[r + 1..].iter().take_while(|&&h| h == b'#').count();
            if at(r + 1 + hashes) == b'"' {
                let close = format!("\"{}", "#".repeat(hashes));
                let body = r + 2 + hashes;
                i = s[body..]
                    .find(&close)
                    .map_or(b.len(), |n| body + n + close.len());
                out.push(start..i);
                continue;
            }
        }
        if c == b'"' || (c == b'b' && at(i + 1) == b'"') {
            i += if c == b'b' { 2 } else { 1 };
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push(start..i);
            continue;
        }
        if c == b'\'' {
            // A char literal ('x', '\n', 'é'), else a lifetime or label.
            let next = s[i + 1..].chars().next().map_or(0, char::len_utf8);
            if at(i + 1) == b'\\' {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i = (i + 1).min(b.len());
            } else if at(i + 1 + next) == b'\'' {
                i += next + 2;
            } else {
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
            }
            out.push(start..i);
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or('\0');
        if ch.is_alphabetic() || ch == '_' {
            for (n, ch) in s[i..].char_indices() {
                if !(ch.is_alphanumeric() || ch == '_') {
                    i = start + n;
                    break;
                }
                i = start + n + ch.len_utf8();
            }
            out.push(start..i);
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || b[i] == b'_'
                    || (b[i] == b'.' && at(i + 1).is_ascii_digit()))
            {
                i += 1;
            }
            out.push(start..i);
            continue;
        }
        i += ch.len_utf8().max(1);
        out.push(start..i);
    }
    out
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "fn helper(a: i32) -> i32 { a }\npub fn run(d: &[i32], k: i32) -> i32 {\n    native::reduce(d, 0, move |a, b| a.wrapping_add(b) ^ k)\n}\n";

    #[test]
    fn call_extents_hold_receiver_chains_and_arguments() {
        let src = "fn f() {\n    let hits: u64 = gpu.par_iter(&k).map(move |v| v & m).sum::<u64>()?;\n    \
                   let (lo, hi) = (gpu.par_iter(&k).min()?, x.max(1) < 2);\n    \
                   native::reduce(d, 0, |a, b| a + b);\n}\n";
        let t = SourceText::new(src);
        let extent = |word: &str, nth: usize| {
            let at = t.find_word((0, src.len()), word, true)[nth];
            let (lo, hi) = t.call_extent(at, 0).unwrap();
            &src[lo..hi]
        };
        assert_eq!(
            extent("sum", 0),
            "gpu.par_iter(&k).map(move |v| v & m).sum::<u64>()"
        );
        assert_eq!(extent("min", 0), "gpu.par_iter(&k).min()");
        assert_eq!(extent("max", 0), "x.max(1)");
        assert_eq!(extent("reduce", 0), "reduce(d, 0, |a, b| a + b)");
    }

    #[test]
    fn dep_info_lists_rust_files_in_order() {
        let d = "/t/x.mir: src/lib.rs src/keyed/mod.rs src/a\\ b.rs data.txt\n\nsrc/lib.rs:\n";
        assert_eq!(
            dep_info_rust_files(d),
            vec!["src/lib.rs", "src/keyed/mod.rs", "src/a b.rs"]
        );
        assert!(dep_info_rust_files("").is_empty());
    }

    #[test]
    fn module_paths_follow_mod_files() {
        let root = std::path::Path::new("sums/src");
        let path = |f: &str| module_path(root, std::path::Path::new(f));
        assert_eq!(path("sums/src/keyed.rs").as_deref(), Some("keyed"));
        assert_eq!(path("sums/src/keyed/mod.rs").as_deref(), Some("keyed"));
        assert_eq!(
            path("sums/src/keyed/inner.rs").as_deref(),
            Some("keyed::inner")
        );
        assert_eq!(path("other/x.rs"), None);
    }

    #[test]
    fn fns_are_found_in_their_module_file() {
        let facts = SourceFacts {
            file: "src/lib.rs".into(),
            mir_file: "lib.mir".into(),
            rustc: None,
            opt_level: None,
            overflow_checks: None,
            text: Some("pub mod keyed;\nmod other { pub fn f() {} }\n".into()),
            modules: vec![
                crate::pmir::ModuleFile {
                    file: "src/keyed/mod.rs".into(),
                    text: "pub mod inner;\npub fn mix() { }\n".into(),
                },
                crate::pmir::ModuleFile {
                    file: "src/keyed/inner.rs".into(),
                    text: "\npub fn mix() { }\n".into(),
                },
            ],
        };
        let s = Sources::new(&facts);
        let at = |p: &str| s.fn_extent(p).map(|(f, _, span)| (f, span.lo_line));
        // Shortest unique paths, as MIR prints them.
        assert_eq!(at("inner::mix"), Some((2, 2)));
        assert_eq!(at("keyed::mix"), Some((1, 2)));
        assert_eq!(at("f"), Some((0, 2)));
        assert_eq!(at("mix"), None);
        assert_eq!(s.file_id("src/keyed/inner.rs"), Some(2));
        assert_eq!(s.file_id("src/nowhere.rs"), None);
    }

    #[test]
    fn a_free_fn_is_told_from_methods_of_the_same_name() {
        let text = "struct A;\nimpl A {\n    fn apply(self) {}\n}\n\
                    trait T { fn apply(&self) {} }\n\
                    fn apply<F: Fn(i32) -> i32>(f: F, x: impl T) -> i32 { f(1) }\n";
        let s = SourceText::new(text);
        assert_eq!(s.fn_extent("apply"), None, "three `fn apply`");
        let (_, _, span) = s.free_fn_extent("apply").unwrap();
        assert_eq!(span.lo_line, 6);
        let methods = SourceText::new("impl A { fn m() {} }\nimpl B { fn m() {} }\n");
        assert_eq!(methods.free_fn_extent("m"), None);
    }

    #[test]
    fn closure_extent_and_words() {
        let s = SourceText::new(SRC);
        let head = Span::new(3, 26, 3, 37);
        let (lo, hi) = s.closure_extent(head).unwrap();
        assert_eq!(&SRC[lo..hi], "move |a, b| a.wrapping_add(b) ^ k");
        let k = s.find_word((lo, hi), "k", false);
        assert_eq!(k.len(), 1);
        assert_eq!((k[0].lo_line, k[0].lo_col, k[0].hi_col), (3, 58, 59));
    }

    #[test]
    fn fn_extent_finds_unique_items() {
        let s = SourceText::new(SRC);
        let (lo, hi, name) = s.fn_extent("helper").unwrap();
        assert_eq!(&SRC[lo..hi], "{ a }");
        assert_eq!((name.lo_line, name.lo_col, name.hi_col), (1, 4, 10));
        assert!(s.fn_extent("missing").is_none());
        let calls = s.find_word((0, SRC.len()), "reduce", true);
        assert_eq!(calls.len(), 1);
    }
}
