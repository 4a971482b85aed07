//! MLIR diagnostics captured as values, so nothing reaches stderr.

use std::{cell::RefCell, rc::Rc};

use melior::{diagnostic::DiagnosticSeverity, Context};

use crate::loc::Loc;

/// One MLIR diagnostic: severity, location and message (notes appended).
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The location as MLIR prints it (`loc("x.mlir":3:5)`).
    pub location: String,
    /// The location decoded into source and MIR positions, where it has them.
    pub loc: Loc,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
    Remark,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Remark => "remark",
        };
        write!(
            f,
            "{}: {sev}: {}",
            plain_location(&self.location),
            self.message
        )
    }
}

impl Diagnostic {
    /// An error of this project's own, located as MLIR locates its errors.
    pub fn error_at(location: melior::ir::Location<'_>, message: String) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            location: location.to_string(),
            loc: Loc::decode(location),
            message,
        }
    }
}

/// `loc("x.mlir":3:5)` → `x.mlir:3:5`, as compilers print positions; any
/// other location is left as MLIR prints it.
fn plain_location(location: &str) -> String {
    let Some(inner) = location
        .strip_prefix("loc(\"")
        .and_then(|l| l.strip_suffix(')'))
    else {
        return location.to_string();
    };
    match inner.split_once("\":") {
        Some((file, pos))
            if !file.contains('"') && pos.split(':').all(|p| p.parse::<u32>().is_ok()) =>
        {
            format!("{file}:{pos}")
        }
        _ => location.to_string(),
    }
}

/// Runs `f` with a handler that records every diagnostic instead of printing.
pub fn capture_diagnostics<T>(context: &Context, f: impl FnOnce() -> T) -> (T, Vec<Diagnostic>) {
    let sink: Rc<RefCell<Vec<Diagnostic>>> = Rc::default();
    let handler_sink = sink.clone();
    let id = context.attach_diagnostic_handler(move |d| {
        let severity = match d.severity() {
            DiagnosticSeverity::Error => Severity::Error,
            DiagnosticSeverity::Warning => Severity::Warning,
            DiagnosticSeverity::Note => Severity::Note,
            DiagnosticSeverity::Remark => Severity::Remark,
        };
        let mut message = d.to_string();
        for i in 0..d.note_count() {
            if let Ok(note) = d.note(i) {
                let at = plain_location(&note.location().to_string());
                message.push_str(&format!("\n  note: {at}: {note}"));
            }
        }
        let location = d.location();
        handler_sink.borrow_mut().push(Diagnostic {
            severity,
            location: location.to_string(),
            loc: Loc::decode(location),
            message,
        });
        // Handled: MLIR must not print it.
        true
    });
    let out = f();
    context.detach_diagnostic_handler(id);
    let diagnostics = sink.borrow().clone();
    (out, diagnostics)
}
