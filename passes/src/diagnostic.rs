//! Diagnostics rendered like rustc's, by the library rustc itself uses
//! (`annotate-snippets`): a title with a stable code, the source snippet with
//! the primary span underlined and secondary spans labelled, then `note:` and
//! `help:` lines. A help that proposes a code change carries it as a
//! [`Suggestion`], rendered as rustc renders one (the help, then the changed
//! lines). Also one JSON object a line for tools (`--error-format=json`),
//! where a suggestion's edits carry rustc's `suggested_replacement` and
//! `suggestion_applicability`; and rustc's own JSON diagnostics
//! ([`Emitter::rustc_json`]), which cargo reads from its compiler: inside a
//! Cargo build our diagnostics are shown, counted, coloured and passed on
//! (`--message-format=json`) as rustc's are.

use annotate_snippets::{AnnotationKind, Group, Level, Patch, Renderer, Snippet};
use frontend::pmir::{FileId, SourceFacts, Span, ROOT_FILE};
use frontend::source::SourceText;
use serde::Serialize;

use crate::codes::Code;
pub use crate::suggestion::{Applicability, Edit, Hoist, Replacement, Resolved, Suggestion};

/// How diagnostics are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// rustc's human rendering, with colour when `styled`.
    Human { styled: bool },
    /// rustc's `--error-format=json` objects, one a line; `ansi`: their
    /// `rendered` text in colour (`--json=diagnostic-rendered-ansi`).
    RustcJson { ansi: bool },
}

impl Format {
    /// rustc's choice for its own diagnostics on stderr: colour on a
    /// terminal, none with `NO_COLOR` set (to anything).
    pub fn human_for_stderr() -> Format {
        use std::io::IsTerminal;
        Format::Human {
            styled: std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// Whether what is printed is coloured.
    pub fn styled(self) -> bool {
        match self {
            Format::Human { styled } => styled,
            Format::RustcJson { ansi } => ansi,
        }
    }

    /// A message of the compiler itself (no source to show) at `level`
    /// (`error`, `warning`, `note`), as this format prints one, without a
    /// final newline: `error: MESSAGE`, or rustc's JSON object for it.
    pub fn message(self, level: &str, message: &str) -> String {
        match self {
            Format::Human { .. } => format!("{level}: {message}"),
            Format::RustcJson { ansi } => rustc_json_message(level, message, ansi),
        }
    }
}

/// A diagnostic of the compiler itself (no source to show), as rustc's
/// `--error-format=json` prints one: `error: MESSAGE` and the like.
pub fn rustc_json_message(level: &str, message: &str, ansi: bool) -> String {
    let title = match level {
        "warning" => Level::WARNING,
        "note" => Level::NOTE,
        _ => Level::ERROR,
    }
    .primary_title(message);
    let renderer = if ansi {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let rendered = format!("{}\n\n", renderer.render(&[Group::with_title(title)]));
    serde_json::json!({
        "$message_type": "diagnostic",
        "message": message,
        "code": null,
        "level": level,
        "spans": [],
        "children": [],
        "rendered": rendered,
    })
    .to_string()
}

/// Where a label points: a source span when one is known, else the line of
/// the MIR text the fact came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Label {
    pub span: Option<Span>,
    pub mir_line: Option<u32>,
    pub text: String,
}

impl Label {
    pub fn new(span: Option<Span>, mir_line: Option<u32>, text: impl Into<String>) -> Label {
        Label {
            span,
            mir_line,
            text: text.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub code: Code,
    pub message: String,
    pub primary: Label,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
    /// The code changes the help may propose, in order of preference: the
    /// first that applies to the text is shown, with its own message.
    pub suggestions: Vec<Suggestion>,
    /// A warning made an error (`--deny-warnings`, `-D warnings`).
    pub denied: bool,
}

impl Diagnostic {
    pub fn new(code: Code, message: impl Into<String>, primary: Label) -> Diagnostic {
        Diagnostic {
            code,
            message: message.into(),
            primary,
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
            suggestions: Vec::new(),
            denied: false,
        }
    }

    /// Whether it is printed as an error: an error's code, or a warning
    /// denied.
    pub fn is_error(&self) -> bool {
        !self.code.is_warning() || self.denied
    }

    /// Its level as rustc's JSON names it.
    fn level_name(&self) -> &'static str {
        if self.is_error() {
            "error"
        } else {
            "warning"
        }
    }

    /// A warning made an error, as rustc's `-D warnings` makes one, with a
    /// note saying by what (`by`: the flag).
    pub fn deny(mut self, by: &str) -> Diagnostic {
        if self.code.is_warning() && !self.denied {
            self.denied = true;
            self.notes
                .push(format!("`{by}` makes this warning an error"));
        }
        self
    }

    pub fn with_label(mut self, label: Label) -> Diagnostic {
        self.secondary.push(label);
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// The help, and the changes it may propose (see [`Self::suggestions`]);
    /// the help alone is shown where none applies.
    pub fn with_suggestions(
        mut self,
        help: impl Into<String>,
        suggestions: Vec<Suggestion>,
    ) -> Diagnostic {
        self.help = Some(help.into());
        self.suggestions = suggestions;
        self
    }
}

/// A label placed in a file's text: its byte range and its text.
type Placed<'l> = (std::ops::Range<usize>, &'l str);

/// Renders diagnostics against the document's source facts: a span is
/// shown in the text of its own file (the crate root or a module file).
pub struct Emitter<'a> {
    source: &'a SourceFacts,
    /// Each file's text, by [`frontend::pmir::FileId`].
    texts: Vec<Option<SourceText<'a>>>,
    styled: bool,
}

impl<'a> Emitter<'a> {
    pub fn new(source: &'a SourceFacts, styled: bool) -> Emitter<'a> {
        Emitter {
            source,
            texts: source
                .files()
                .map(|(id, _, text)| text.map(|t| SourceText::of_file(t, id)))
                .collect(),
            styled,
        }
    }

    fn range(&self, span: Span) -> Option<std::ops::Range<usize>> {
        let t = self.texts.get(span.file as usize)?.as_ref()?;
        let lo = t.offset(span.lo_line, span.lo_col)?;
        let hi = t.offset(span.hi_line, span.hi_col)?;
        (lo <= hi).then_some(lo..hi)
    }

    /// The suggestion shown for `d`: the first that the text of its primary
    /// span's file takes.
    pub fn suggestion(&self, d: &Diagnostic) -> Option<Resolved> {
        let file = d.primary.span.map_or(ROOT_FILE, |s| s.file);
        crate::suggestion::first_resolved(&d.suggestions, self.source.text_of(file)?, file)
    }

    /// The human rendering, like rustc's `error[E…]: …` block. Labels in
    /// other files than the primary's get a snippet of their own file.
    pub fn render(&self, d: &Diagnostic) -> String {
        self.render_styled(d, self.styled)
    }

    /// [`Self::render`], coloured or not whatever this emitter's default.
    fn render_styled(&self, d: &Diagnostic, styled: bool) -> String {
        let level = if d.is_error() {
            Level::ERROR
        } else {
            Level::WARNING
        };
        let title = level.primary_title(&d.message).id(d.code.as_str());
        let mut group = Group::with_title(title);
        let primary = d
            .primary
            .span
            .and_then(|s| self.range(s).map(|r| (s.file, r)));
        let mut unlocated: Vec<String> = Vec::new();
        if let Some((file, range)) = primary {
            let text = self.source.text_of(file).unwrap_or("");
            let mut snippet = Snippet::source(text)
                .path(self.source.file_name(file))
                .fold(true)
                .annotation(AnnotationKind::Primary.span(range).label(&d.primary.text));
            // Labels elsewhere, by file, in the order files first appear.
            let mut elsewhere: Vec<(FileId, Vec<Placed<'_>>)> = Vec::new();
            for l in &d.secondary {
                // A label on the primary's own span adds nothing but noise.
                if l.span.is_some() && l.span == d.primary.span {
                    continue;
                }
                match l.span.and_then(|s| self.range(s).map(|r| (s.file, r))) {
                    Some((f, r)) if f == file => {
                        snippet = snippet.annotation(AnnotationKind::Context.span(r).label(&l.text))
                    }
                    Some((f, r)) => match elsewhere.iter_mut().find(|(g, _)| *g == f) {
                        Some((_, labels)) => labels.push((r, &l.text)),
                        None => elsewhere.push((f, vec![(r, &l.text)])),
                    },
                    None => unlocated.push(self.mir_ref(l)),
                }
            }
            group = group.element(snippet);
            for (f, labels) in elsewhere {
                let mut other = Snippet::source(self.source.text_of(f).unwrap_or(""))
                    .path(self.source.file_name(f))
                    .fold(true);
                for (r, label) in labels {
                    other = other.annotation(AnnotationKind::Context.span(r).label(label));
                }
                group = group.element(other);
            }
        } else {
            unlocated.push(self.mir_ref(&d.primary));
            unlocated.extend(d.secondary.iter().map(|l| self.mir_ref(l)));
        }
        for n in unlocated.iter().chain(&d.notes) {
            group = group.element(Level::NOTE.message(n));
        }
        let mut groups = Vec::new();
        let suggestion = self.suggestion(d);
        match (&d.help, &suggestion) {
            // As rustc shows a suggestion: the help, then the lines it changes.
            (_, Some(s)) => {
                let file = d.primary.span.map_or(ROOT_FILE, |s| s.file);
                let patched = Snippet::source(self.source.text_of(file).unwrap_or(""))
                    .path(self.source.file_name(file))
                    .patches(
                        s.edits
                            .iter()
                            .map(|e| Patch::new(e.range.clone(), e.text.as_str())),
                    );
                groups.push(group);
                groups.push(
                    Group::with_title(Level::HELP.secondary_title(&s.message)).element(patched),
                );
            }
            (Some(h), None) => groups.push(group.element(Level::HELP.message(h))),
            (None, None) => groups.push(group),
        }
        let renderer = if styled {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        renderer.render(&groups)
    }

    fn mir_ref(&self, l: &Label) -> String {
        match l.mir_line {
            Some(line) => format!("{} (at {}:{line})", l.text, self.source.mir_file),
            None => l.text.clone(),
        }
    }

    /// `d` as `format` prints it, without a final newline (a human rendering
    /// is followed by a blank line, as rustc's).
    pub fn emit(&self, d: &Diagnostic, format: Format) -> String {
        match format {
            Format::Human { styled } => format!("{}\n", self.render_styled(d, styled)),
            Format::RustcJson { ansi } => self.rustc_json(d, ansi),
        }
    }

    /// One object of rustc's `--error-format=json`: `message`, `code` (with
    /// its explanation), `level`, `spans` with their lines' text,
    /// `children` (the notes, and the help with a suggestion's edits as
    /// `suggested_replacement`s), `rendered`.
    pub fn rustc_json(&self, d: &Diagnostic, ansi: bool) -> String {
        use serde_json::{json, Value};
        let span = |span: Span,
                    label: Option<&str>,
                    is_primary: bool,
                    replacement: Option<(&str, &str)>|
         -> Option<Value> {
            let range = self.range(span)?;
            let text = self.source.text_of(span.file)?;
            let lines: Vec<Value> = text
                .lines()
                .enumerate()
                .skip(span.lo_line.saturating_sub(1) as usize)
                .take((span.hi_line + 1).saturating_sub(span.lo_line) as usize)
                .map(|(i, line)| {
                    let n = i as u32 + 1;
                    let start = if n == span.lo_line { span.lo_col } else { 1 };
                    let end = if n == span.hi_line {
                        span.hi_col
                    } else {
                        line.chars().count() as u32 + 1
                    };
                    json!({"text": line, "highlight_start": start, "highlight_end": end})
                })
                .collect();
            Some(json!({
                "file_name": self.source.file_name(span.file),
                "byte_start": range.start,
                "byte_end": range.end,
                "line_start": span.lo_line,
                "line_end": span.hi_line,
                "column_start": span.lo_col,
                "column_end": span.hi_col,
                "is_primary": is_primary,
                "text": lines,
                "label": label,
                "suggested_replacement": replacement.map(|r| r.0),
                "suggestion_applicability": replacement.map(|r| r.1),
                "expansion": null,
            }))
        };
        let mut spans: Vec<Value> = Vec::new();
        let mut unlocated: Vec<String> = Vec::new();
        for (l, primary) in
            std::iter::once((&d.primary, true)).chain(d.secondary.iter().map(|l| (l, false)))
        {
            if !primary && l.span.is_some() && l.span == d.primary.span {
                continue;
            }
            match l.span.and_then(|s| span(s, Some(&l.text), primary, None)) {
                Some(v) => spans.push(v),
                None => unlocated.push(self.mir_ref(l)),
            }
        }
        let child = |level: &str, message: &str, spans: Vec<Value>| json!({"message": message, "code": null, "level": level, "spans": spans, "children": [], "rendered": null});
        let mut children: Vec<Value> = unlocated
            .iter()
            .chain(&d.notes)
            .map(|n| child("note", n, Vec::new()))
            .collect();
        match (self.suggestion(d), &d.help) {
            (Some(s), _) => {
                let edits = s
                    .edits
                    .iter()
                    .filter_map(|e| {
                        span(
                            e.span,
                            None,
                            true,
                            Some((&e.text, s.applicability.as_str())),
                        )
                    })
                    .collect();
                children.push(child("help", &s.message, edits));
            }
            (None, Some(h)) => children.push(child("help", h, Vec::new())),
            (None, None) => {}
        }
        let mut rendered = self.render_styled(d, ansi);
        rendered.push_str("\n\n");
        let object = json!({
            "$message_type": "diagnostic",
            "message": d.message,
            "code": {"code": d.code.as_str(), "explanation": d.code.explain()},
            "level": d.level_name(),
            "spans": spans,
            "children": children,
            "rendered": rendered,
        });
        object.to_string()
    }

    /// One JSON object, as `--error-format=json` prints a line.
    pub fn json<'s>(&'s self, d: &'s Diagnostic) -> String {
        #[derive(Serialize)]
        struct JsonSpan<'j> {
            file: &'j str,
            line_start: Option<u32>,
            column_start: Option<u32>,
            line_end: Option<u32>,
            column_end: Option<u32>,
            mir_file: &'j str,
            mir_line: Option<u32>,
            is_primary: bool,
            label: &'j str,
        }
        /// An edit of a suggestion, as rustc's JSON gives one: a span of
        /// a `help` child with the text that replaces it.
        #[derive(Serialize)]
        struct JsonEdit<'j> {
            file: &'j str,
            byte_start: usize,
            byte_end: usize,
            line_start: u32,
            column_start: u32,
            line_end: u32,
            column_end: u32,
            is_primary: bool,
            suggested_replacement: String,
            suggestion_applicability: &'j str,
        }
        /// The help, as rustc's `children` hold one (notes stay in `notes`).
        #[derive(Serialize)]
        struct JsonChild<'j> {
            level: &'j str,
            message: &'j str,
            spans: Vec<JsonEdit<'j>>,
        }
        #[derive(Serialize)]
        struct Json<'j> {
            code: &'j str,
            level: &'j str,
            message: &'j str,
            spans: Vec<JsonSpan<'j>>,
            notes: &'j [String],
            help: Option<&'j str>,
            children: Vec<JsonChild<'j>>,
            rendered: String,
        }
        let span = |l: &'s Label, is_primary: bool| JsonSpan {
            file: self.source.file_name(l.span.map_or(ROOT_FILE, |s| s.file)),
            line_start: l.span.map(|s| s.lo_line),
            column_start: l.span.map(|s| s.lo_col),
            line_end: l.span.map(|s| s.hi_line),
            column_end: l.span.map(|s| s.hi_col),
            mir_file: &self.source.mir_file,
            mir_line: l.mir_line,
            is_primary,
            label: &l.text,
        };
        let mut spans = vec![span(&d.primary, true)];
        spans.extend(d.secondary.iter().map(|l| span(l, false)));
        let suggestion = self.suggestion(d);
        let help = suggestion
            .as_ref()
            .map(|s| s.message.as_str())
            .or(d.help.as_deref());
        let applicability = suggestion.as_ref().map_or("", |s| s.applicability.as_str());
        let edits = suggestion.as_ref().map_or(&[][..], |s| &s.edits[..]);
        let children = help
            .iter()
            .map(|h| JsonChild {
                level: "help",
                message: h,
                spans: edits
                    .iter()
                    .map(|e| JsonEdit {
                        file: self.source.file_name(e.span.file),
                        byte_start: e.range.start,
                        byte_end: e.range.end,
                        line_start: e.span.lo_line,
                        column_start: e.span.lo_col,
                        line_end: e.span.hi_line,
                        column_end: e.span.hi_col,
                        is_primary: true,
                        suggested_replacement: e.text.clone(),
                        suggestion_applicability: applicability,
                    })
                    .collect(),
            })
            .collect();
        let json = Json {
            code: d.code.as_str(),
            level: d.level_name(),
            message: &d.message,
            spans,
            notes: &d.notes,
            help,
            children,
            rendered: self.render_styled(d, false),
        };
        serde_json::to_string(&json).expect("diagnostics serialise")
    }
}
