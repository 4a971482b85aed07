//! Where in the crate's source a thing lies: a [`Span`] of lines and
//! columns in one of its files ([`FileId`]). Plain data, below the prepared-MIR
//! document (`pmir`, which re-exports it) and the types (`ty`, whose closure
//! types carry the span of their definition).

use serde::{Deserialize, Serialize};

/// Which file of the crate a [`Span`] lies in: `0` is the root
/// (`pmir::SourceFacts::file`), `i ≥ 1` is `pmir::SourceFacts::modules[i - 1]`.
pub type FileId = u32;

/// The root file's [`FileId`].
pub const ROOT_FILE: FileId = 0;

/// A source range, 1-based lines and columns, end inclusive of its last
/// character's column as rustc prints closure spans (`5:38: 5:49`, the end is
/// the column after the last character).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Span {
    pub lo_line: u32,
    pub lo_col: u32,
    pub hi_line: u32,
    pub hi_col: u32,
    /// The file the span lies in (see [`FileId`]); the root's is not written.
    #[serde(default, skip_serializing_if = "is_root")]
    pub file: FileId,
}

fn is_root(id: &FileId) -> bool {
    *id == ROOT_FILE
}

impl Span {
    /// A span of the root file.
    pub fn new(lo_line: u32, lo_col: u32, hi_line: u32, hi_col: u32) -> Span {
        Span {
            lo_line,
            lo_col,
            hi_line,
            hi_col,
            file: ROOT_FILE,
        }
    }

    /// The same span in file `file`.
    pub fn in_file(self, file: FileId) -> Span {
        Span { file, ..self }
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}-{}:{}",
            self.lo_line, self.lo_col, self.hi_line, self.hi_col
        )
    }
}
