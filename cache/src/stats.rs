//! Walking the versioned root: what `stats` counts and `clean` removes.
//!
//! Only files with the names this crate writes, in directories with the
//! names it makes, are ever looked at: `<kind>/<2 hex>/<64 hex>` (an entry)
//! and `<kind>/<2 hex>/.<64 hex>.tmp-…` (a temporary file). Anything else,
//! and every symbolic link, is left alone and not counted.

use crate::error::{Error, Operation};
use crate::key::Key;
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The entries of one kind (or of all).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindStats {
    pub entries: u64,
    /// Their size on disk: headers included.
    pub bytes: u64,
}

/// What the cache holds, from [`Cache::stats`](crate::Cache::stats).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// The versioned root that was walked (`<root>/v1`).
    pub dir: PathBuf,
    /// Every kind with at least one entry.
    pub kinds: BTreeMap<String, KindStats>,
    /// Temporary files of writers that have not renamed them: writers that
    /// crashed, or (rarely) ones still writing.
    pub temp_files: u64,
    pub temp_bytes: u64,
}

impl Stats {
    /// All kinds together (temporary files not included).
    pub fn total(&self) -> KindStats {
        self.kinds
            .values()
            .fold(KindStats::default(), |sum, kind| KindStats {
                entries: sum.entries + kind.entries,
                bytes: sum.bytes + kind.bytes,
            })
    }
}

/// A table, one kind a line, then the total:
///
/// ```text
/// cache /home/me/.cache/rmir/v1
/// cubin      3 entries   80.0 KiB
/// provider  12 entries    1.4 MiB
/// total     15 entries    1.5 MiB
/// stale temporary files: 1 (52 B)
/// ```
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.total();
        let mut rows: Vec<(&str, KindStats)> = self
            .kinds
            .iter()
            .map(|(kind, stats)| (kind.as_str(), *stats))
            .collect();
        rows.push(("total", total));
        let name_width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
        let count_width = total.entries.to_string().len();
        writeln!(f, "cache {}", self.dir.display())?;
        for (name, stats) in rows {
            let noun = if stats.entries == 1 {
                "entry"
            } else {
                "entries"
            };
            writeln!(
                f,
                "{name:<name_width$}  {:>count_width$} {noun:<7}  {:>10}",
                stats.entries,
                human_bytes(stats.bytes)
            )?;
        }
        if self.temp_files > 0 {
            writeln!(
                f,
                "stale temporary files: {} ({})",
                self.temp_files,
                human_bytes(self.temp_bytes)
            )?;
        }
        Ok(())
    }
}

/// What [`Cache::clean`](crate::Cache::clean) removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cleaned {
    pub entries: u64,
    pub temp_files: u64,
    /// Entries and temporary files together.
    pub bytes: u64,
}

impl fmt::Display for Cleaned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "removed {} {} and {} stale temporary {} ({})",
            self.entries,
            if self.entries == 1 {
                "entry"
            } else {
                "entries"
            },
            self.temp_files,
            if self.temp_files == 1 {
                "file"
            } else {
                "files"
            },
            human_bytes(self.bytes)
        )
    }
}

/// What [`Cache::trim`](crate::Cache::trim) removed, and what stays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trimmed {
    pub entries: u64,
    pub bytes: u64,
    /// The entries' bytes left.
    pub kept_bytes: u64,
}

impl fmt::Display for Trimmed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "removed {} least recently used {} ({}); {} kept",
            self.entries,
            if self.entries == 1 {
                "entry"
            } else {
                "entries"
            },
            human_bytes(self.bytes),
            human_bytes(self.kept_bytes)
        )
    }
}

/// `1536` → `"1.5 KiB"`; below 1 KiB, exact bytes.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// One file of ours found by [`walk`].
pub(crate) struct Found<'a> {
    pub kind: &'a str,
    pub path: PathBuf,
    pub is_temp: bool,
    pub len: u64,
    /// Last written or read (a hit refreshes it): the least recently used
    /// entries go first when the cache is trimmed.
    pub modified: std::time::SystemTime,
}

/// Calls `visit` for every entry and temporary file under `dir` (the
/// versioned root). A missing `dir`, or a file or directory that disappears
/// while it is walked (a concurrent `clean`, or a reader removing a damaged
/// entry), is not an error. With `prune`, directories left empty after the
/// visits are removed (best effort: one that is not empty stays).
pub(crate) fn walk(
    dir: &Path,
    prune: bool,
    mut visit: impl FnMut(Found<'_>) -> Result<(), Error>,
) -> Result<(), Error> {
    let Some(kinds) = read_dir(dir)? else {
        return Ok(());
    };
    for kind_entry in kinds {
        let kind_entry = kind_entry.map_err(|e| Error::io(Operation::ReadDir, dir, e))?;
        let name = kind_entry.file_name();
        let Some(kind) = name.to_str().filter(|k| crate::valid_kind(k)) else {
            continue;
        };
        if !is_dir(&kind_entry)? {
            continue;
        }
        let kind_dir = kind_entry.path();
        let Some(shards) = read_dir(&kind_dir)? else {
            continue;
        };
        for shard_entry in shards {
            let shard_entry =
                shard_entry.map_err(|e| Error::io(Operation::ReadDir, &kind_dir, e))?;
            let name = shard_entry.file_name();
            let Some(shard) = name.to_str().filter(|s| is_shard(s)) else {
                continue;
            };
            if !is_dir(&shard_entry)? {
                continue;
            }
            let shard_dir = shard_entry.path();
            let Some(files) = read_dir(&shard_dir)? else {
                continue;
            };
            for file in files {
                let file = file.map_err(|e| Error::io(Operation::ReadDir, &shard_dir, e))?;
                let name = file.file_name();
                let Some(is_temp) = name.to_str().and_then(|n| classify(n, shard)) else {
                    continue;
                };
                let metadata = match file.metadata() {
                    Ok(metadata) => metadata,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(Error::io(Operation::Metadata, file.path(), e)),
                };
                if !metadata.is_file() {
                    continue;
                }
                visit(Found {
                    kind,
                    path: file.path(),
                    is_temp,
                    len: metadata.len(),
                    modified: metadata.modified().unwrap_or(std::time::UNIX_EPOCH),
                })?;
            }
            if prune {
                let _ = fs::remove_dir(&shard_dir);
            }
        }
        if prune {
            let _ = fs::remove_dir(&kind_dir);
        }
    }
    if prune {
        let _ = fs::remove_dir(dir);
    }
    Ok(())
}

/// `None` when `dir` does not exist.
fn read_dir(dir: &Path) -> Result<Option<fs::ReadDir>, Error> {
    match fs::read_dir(dir) {
        Ok(entries) => Ok(Some(entries)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(Operation::ReadDir, dir, e)),
    }
}

/// A real directory: symbolic links are not followed, so a walk (and so
/// `clean`) never leaves the versioned root.
fn is_dir(entry: &fs::DirEntry) -> Result<bool, Error> {
    match entry.file_type() {
        Ok(file_type) => Ok(file_type.is_dir()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(Operation::Metadata, entry.path(), e)),
    }
}

fn is_shard(name: &str) -> bool {
    name.len() == 2 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `Some(false)` for an entry's name, `Some(true)` for a temporary file's
/// (see `crate::temp_name`), `None` for a name that is not ours. Either
/// must belong in `shard`.
fn classify(name: &str, shard: &str) -> Option<bool> {
    let (hex, is_temp) = match name.strip_prefix('.') {
        Some(rest) => {
            let (hex, suffix) = rest.split_at_checked(64)?;
            if !suffix.starts_with(crate::TEMP_MARKER) {
                return None;
            }
            (hex, true)
        }
        None => (name, false),
    };
    Key::from_hex(hex)?;
    hex.starts_with(shard).then_some(is_temp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.0 KiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(1468006), "1.4 MiB");
        assert_eq!(human_bytes(5 << 30), "5.0 GiB");
    }

    #[test]
    fn only_our_names_are_classified() {
        let hex = "ab".repeat(32);
        assert_eq!(classify(&hex, "ab"), Some(false));
        assert_eq!(classify(&format!(".{hex}.tmp-1-2-3"), "ab"), Some(true));
        assert_eq!(classify(&hex, "cd"), None, "wrong shard");
        assert_eq!(classify(&format!(".{hex}"), "ab"), None);
        assert_eq!(classify(&format!("{hex}.bak"), "ab"), None);
        assert_eq!(classify(&hex.to_uppercase(), "ab"), None);
        assert_eq!(classify("notes.txt", "ab"), None);
        assert_eq!(classify(".", "ab"), None);
        assert_eq!(classify("", "ab"), None);
    }
}
