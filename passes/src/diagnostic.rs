//! Diagnostics rendered like rustc's, by the library rustc itself uses
//! (`annotate-snippets`): a title with a stable code, the source snippet with
//! the primary span underlined and secondary spans labelled, then `note:` and
//! `help:` lines. Also one JSON object a line for tools (`--error-format=json`).

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use frontend::pmir::{SourceFacts, Span};
use frontend::source::SourceText;
use serde::Serialize;

use crate::codes::Code;

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
        }
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
}

/// Renders diagnostics against the document's source facts.
pub struct Emitter<'a> {
    source: &'a SourceFacts,
    text: Option<SourceText<'a>>,
    styled: bool,
}

impl<'a> Emitter<'a> {
    pub fn new(source: &'a SourceFacts, styled: bool) -> Emitter<'a> {
        Emitter {
            source,
            text: source.text.as_deref().map(SourceText::new),
            styled,
        }
    }

    fn range(&self, span: Span) -> Option<std::ops::Range<usize>> {
        let t = self.text.as_ref()?;
        let lo = t.offset(span.lo_line, span.lo_col)?;
        let hi = t.offset(span.hi_line, span.hi_col)?;
        (lo <= hi).then_some(lo..hi)
    }

    /// The human rendering, like rustc's `error[E…]: …` block.
    pub fn render(&self, d: &Diagnostic) -> String {
        let title = Level::ERROR.primary_title(&d.message).id(d.code.as_str());
        let mut group = Group::with_title(title);
        let text = self.source.text.as_deref().unwrap_or("");
        let primary = d.primary.span.and_then(|s| self.range(s));
        let mut unlocated: Vec<String> = Vec::new();
        if let Some(range) = primary {
            let mut snippet = Snippet::source(text)
                .path(&self.source.file)
                .fold(true)
                .annotation(AnnotationKind::Primary.span(range).label(&d.primary.text));
            for l in &d.secondary {
                // A label on the primary's own span adds nothing but noise.
                if l.span.is_some() && l.span == d.primary.span {
                    continue;
                }
                match l.span.and_then(|s| self.range(s)) {
                    Some(r) => {
                        snippet = snippet.annotation(AnnotationKind::Context.span(r).label(&l.text))
                    }
                    None => unlocated.push(self.mir_ref(l)),
                }
            }
            group = group.element(snippet);
        } else {
            unlocated.push(self.mir_ref(&d.primary));
            unlocated.extend(d.secondary.iter().map(|l| self.mir_ref(l)));
        }
        for n in unlocated.iter().chain(&d.notes) {
            group = group.element(Level::NOTE.message(n));
        }
        if let Some(h) = &d.help {
            group = group.element(Level::HELP.message(h));
        }
        let renderer = if self.styled {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        renderer.render(&[group])
    }

    fn mir_ref(&self, l: &Label) -> String {
        match l.mir_line {
            Some(line) => format!("{} (at {}:{line})", l.text, self.source.mir_file),
            None => l.text.clone(),
        }
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
        #[derive(Serialize)]
        struct Json<'j> {
            code: &'j str,
            level: &'j str,
            message: &'j str,
            spans: Vec<JsonSpan<'j>>,
            notes: &'j [String],
            help: Option<&'j str>,
            rendered: String,
        }
        let span = |l: &'s Label, is_primary: bool| JsonSpan {
            file: &self.source.file,
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
        let json = Json {
            code: d.code.as_str(),
            level: "error",
            message: &d.message,
            spans,
            notes: &d.notes,
            help: d.help.as_deref(),
            rendered: Emitter::new(self.source, false).render(d),
        };
        serde_json::to_string(&json).expect("diagnostics serialise")
    }
}
