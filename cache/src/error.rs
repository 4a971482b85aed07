//! What can go wrong: no place for the cache, a bad kind, or an I/O error
//! (named with its operation and path).

use std::fmt;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no cache directory: neither {} nor HOME is set (set {} to choose one)",
        crate::CACHE_DIR_VAR,
        crate::CACHE_DIR_VAR
    )]
    NoCacheDir,
    #[error(
        "invalid cache kind {kind:?}: a kind is 1 to {} characters of a-z, 0-9 and '-'",
        crate::MAX_KIND_LEN
    )]
    InvalidKind { kind: String },
    #[error("cache: cannot {op} {}: {source}", path.display())]
    Io {
        op: Operation,
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(op: Operation, path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// The file system operation that failed; its `Display` reads as a verb
/// phrase before the path ("cannot create directory /x").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Making a relative cache directory absolute.
    ResolveDir,
    CreateDir,
    /// Creating a temporary file for a new entry.
    CreateTemp,
    Read,
    Write,
    Sync,
    /// Moving a written temporary file to its entry's name.
    Rename,
    Remove,
    ReadDir,
    Metadata,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operation::ResolveDir => "make absolute the cache directory",
            Operation::CreateDir => "create directory",
            Operation::CreateTemp => "create temporary file",
            Operation::Read => "read",
            Operation::Write => "write",
            Operation::Sync => "sync",
            Operation::Rename => "move a new entry into place at",
            Operation::Remove => "remove",
            Operation::ReadDir => "list directory",
            Operation::Metadata => "read metadata of",
        })
    }
}
