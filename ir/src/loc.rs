//! Locations of rmir ops: where in the Rust source and in the MIR text an op
//! comes from.
//!
//! An op's location is `fused[SOURCE, "mir"(MIR)]`:
//! - SOURCE is a `file:line:col to line:col` range in the Rust source: the
//!   most precise source fact prepared MIR has for the op (see
//!   docs/dialect.md: the call's span for calls and registrations, the
//!   capture's span for capture ops, else the enclosing closure's or fn's span);
//! - MIR is `mir_file:line:1`, the MIR text line of the statement, terminator,
//!   local or header the op was imported from (prepared MIR keeps lines, not
//!   columns), wrapped in a name location `"mir"` so the two never mix up.
//!
//! Either part is left out when unknown; MLIR collapses a fused location of
//! one part to that part.

use frontend::pmir::Span;
use melior::{
    ir::{Attribute, Location},
    Context,
};

/// The name that tags the MIR part of a fused location.
pub const MIR_TAG: &str = "mir";

/// A position in the Rust source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcePos {
    pub file: String,
    pub span: Span,
}

/// A line in the MIR text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirPos {
    pub file: String,
    pub line: u32,
}

/// A decoded op location.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loc {
    pub source: Option<SourcePos>,
    pub mir: Option<MirPos>,
}

impl Loc {
    /// Reads a location built by [`Loc::build`] (or any MLIR file location:
    /// an untagged file location counts as source).
    pub fn decode(location: Location<'_>) -> Loc {
        let mut loc = Loc::default();
        loc.visit(location);
        loc
    }

    fn visit(&mut self, location: Location<'_>) {
        if location.is_fused() {
            for i in 0..location.fused_num_locations() {
                self.visit(location.fused_location(i));
            }
        } else if location.is_name() {
            let name = location.name_value();
            let child = location.name_child_location();
            if crate::text_of(name.as_string_ref()) == MIR_TAG && child.is_file_line_col_range() {
                self.mir.get_or_insert(MirPos {
                    file: filename(child),
                    line: child.file_line_col_range_start_line() as u32,
                });
            } else {
                self.visit(child);
            }
        } else if location.is_call_site() {
            self.visit(location.call_site_caller());
        } else if location.is_file_line_col_range() {
            self.source.get_or_insert(SourcePos {
                file: filename(location),
                span: Span::new(
                    location.file_line_col_range_start_line() as u32,
                    location.file_line_col_range_start_column() as u32,
                    location.file_line_col_range_end_line() as u32,
                    location.file_line_col_range_end_column() as u32,
                ),
            });
        }
    }

    /// Builds the MLIR location; unknown when both parts are missing.
    pub fn build<'c>(&self, context: &'c Context) -> Location<'c> {
        let mut parts = Vec::new();
        if let Some(s) = &self.source {
            parts.push(Location::file_line_col_range(
                context,
                &s.file,
                s.span.lo_line as usize,
                s.span.lo_col as usize,
                s.span.hi_line as usize,
                s.span.hi_col as usize,
            ));
        }
        if let Some(m) = &self.mir {
            parts.push(Location::name(
                context,
                MIR_TAG,
                Location::new(context, &m.file, m.line as usize, 1),
            ));
        }
        match parts.len() {
            0 => Location::unknown(context),
            1 => parts[0],
            // A null metadata attribute: plain `fused[...]`.
            _ => Location::fused(context, &parts, unsafe {
                Attribute::from_raw(mlir_sys::mlirAttributeGetNull())
            }),
        }
    }

    /// `file:line:col` of the source start, else of the MIR line.
    pub fn short(&self) -> String {
        match (&self.source, &self.mir) {
            (Some(s), _) => format!("{}:{}:{}", s.file, s.span.lo_line, s.span.lo_col),
            (None, Some(m)) => format!("{}:{}:1", m.file, m.line),
            (None, None) => "<unknown>".into(),
        }
    }
}

fn filename(location: Location<'_>) -> String {
    crate::text_of(location.file_line_col_range_filename().as_string_ref())
}
