//! A content-addressed on-disk build cache.
//!
//! An artifact (a provider's PTX, a cubin, ...) is stored under a [`Key`]
//! that hashes every byte and option that reaches it ([`KeyBuilder`]), in a
//! namespace called its *kind*. Equal inputs give the same key, so a later
//! build finds the artifact instead of building it again; any change of an
//! input gives another key, so a stale artifact is never found. Entries are
//! therefore never updated in place, only added, and removed by
//! [`Cache::clean`] (or when found damaged).
//!
//! Invariant: this crate depends on nothing of the workspace and on no
//! compiler or GPU library; it reads and writes files under its root only.
//!
//! # Where
//!
//! [`Cache::from_env`] uses `$RMIR_CACHE_DIR` when it is set and not empty,
//! else `$HOME/.cache/rmir` ([`resolve_root`]). [`Cache::at`] takes any
//! directory. Directories are made on the first [`Cache::put`].
//!
//! # On disk
//!
//! ```text
//! <root>/                           may hold other things; they are never touched
//!   v1/                             the layout version
//!     <kind>/                       [a-z0-9-], 1 to 64 characters: "provider", "cubin"
//!       <kk>/                       the key's first two hex digits (256 shards)
//!         <key>                     an entry: the key's 64 lowercase hex digits
//!         .<key>.tmp-<pid>-<seq>-<ns>   a writer's temporary file
//! ```
//!
//! An entry file is a 52-byte header, then the payload:
//!
//! ```text
//! offset  size  field
//!      0     8  magic, b"RMIRCACH"
//!      8     4  format version, u32 little endian: 1
//!     12     8  payload length in bytes, u64 little endian
//!     20    32  SHA-256 of the payload
//!     52     n  payload
//! ```
//!
//! A change to this format or layout gets a new layout directory (`v2`):
//! compilers of either version then keep separate caches instead of
//! deleting each other's entries as damaged.
//!
//! # Why readers never see a torn entry
//!
//! A writer ([`Cache::put`]) writes the header and payload to a temporary
//! file of its own in the entry's directory (created exclusively, named by
//! process id, a per-process sequence number and the time), flushes it to
//! disk (`sync_data`), and renames it to the entry's name. `rename(2)` within
//! one directory is atomic on POSIX: whoever opens the name gets either the
//! file that was there before or the complete new one, never a part. Two
//! writers of one key each write their own temporary file and the last
//! rename wins; as the key names the content, both wrote the same bytes
//! (and were the build not deterministic, each file is still a whole entry).
//!
//! A reader ([`Cache::get`]) reads the whole file and checks magic,
//! version, length and SHA-256 before it returns the payload. That catches
//! what the rename argument does not cover: a power loss that left the name
//! pointing at data that never reached the disk, a truncated copy, a bit
//! flip, a hand edit. A damaged entry is counted, removed (best effort, so
//! the next `put` replaces it) and reported as a miss; it is never returned.
//!
//! Not promised: durability. The directory is not synced after the rename,
//! so a crash may lose an entry that was just put; it is a cache, and the
//! next build puts it again. A reader that removes a damaged entry may, in
//! a narrow race, remove a good one that a writer renamed into place just
//! after the read; that too costs one rebuild, never a wrong result.
//! A crashed writer leaves its temporary file behind: [`Cache::stats`]
//! counts such files apart from entries and [`Cache::clean`] removes them.
//! A `clean` running beside a `put` may make that `put` fail (an error,
//! never a torn entry).
//!
//! # Errors
//!
//! [`Cache::get`] and [`Cache::put`] return every I/O error other than
//! "not found" (which is a miss). [`Cache::get_or_insert_with`] is for
//! builds: a cache that cannot be read or written never fails the build,
//! its errors come back as [`Fetched::warnings`] next to the built bytes.
//! Nothing in this crate panics on bad input or a bad file.

mod entry;
mod error;
mod key;
mod stats;

pub use error::{Error, Operation};
pub use key::{Key, KeyBuilder};
pub use stats::{Cleaned, KindStats, Stats, Trimmed};

use std::ffi::OsStr;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The environment variable that chooses the cache directory.
pub const CACHE_DIR_VAR: &str = "RMIR_CACHE_DIR";

/// The layout version: the one directory under the root this crate owns.
const LAYOUT_DIR: &str = "v1";

/// The longest kind name.
pub const MAX_KIND_LEN: usize = 64;

/// Follows the key in a temporary file's name (`.<key>.tmp-…`).
const TEMP_MARKER: &str = ".tmp-";

/// Makes temporary file names unique among the threads of this process.
static TEMP_SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// The cache directory the environment asks for: `cache_dir` (the value of
/// `$RMIR_CACHE_DIR`) when it is set and not empty, else `home`/.cache/rmir
/// when `home` (`$HOME`) is set and not empty. A relative result is returned
/// as it is; [`Cache::from_env`] makes it absolute.
pub fn resolve_root(cache_dir: Option<&OsStr>, home: Option<&OsStr>) -> Result<PathBuf, Error> {
    if let Some(dir) = cache_dir.filter(|v| !v.is_empty()) {
        Ok(PathBuf::from(dir))
    } else if let Some(home) = home.filter(|v| !v.is_empty()) {
        Ok(Path::new(home).join(".cache").join("rmir"))
    } else {
        Err(Error::NoCacheDir)
    }
}

/// Whether `kind` may name a namespace: 1 to [`MAX_KIND_LEN`] characters of
/// `a-z`, `0-9` and `-`. (So a kind is one path component, never `.` or
/// `..`, and spelled one way only.)
pub fn valid_kind(kind: &str) -> bool {
    (1..=MAX_KIND_LEN).contains(&kind.len())
        && kind
            .bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-'))
}

/// How [`Cache::get_or_insert_with`] got its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// From the cache.
    Hit,
    /// Built: there was no entry (or it could not be read: see the warnings).
    Miss,
    /// Built: the entry was damaged, and was removed.
    Rebuilt,
}

/// The bytes [`Cache::get_or_insert_with`] returns, how it got them, and
/// what went wrong with the cache on the way (which did not stop it).
#[derive(Debug)]
pub struct Fetched {
    pub bytes: Vec<u8>,
    pub outcome: Outcome,
    /// Cache errors: an entry that could not be read, or a built artifact
    /// that could not be stored. Worth a warning; the bytes are right.
    pub warnings: Vec<Error>,
}

/// What this [`Cache`] value has seen since it was made. Each lookup counts
/// once: as a hit, a miss (no entry), damaged, or an error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub hits: u64,
    pub misses: u64,
    /// Damaged entries found (and removed); each was a miss to its caller.
    pub corrupt: u64,
    /// Errors of any operation: returned, or turned into warnings.
    pub errors: u64,
}

#[derive(Debug, Default)]
struct AtomicCounters {
    hits: AtomicU64,
    misses: AtomicU64,
    corrupt: AtomicU64,
    errors: AtomicU64,
}

/// A lookup's result before the public API shapes it.
enum Lookup {
    Hit(Vec<u8>),
    Missing,
    Damaged,
}

/// A cache rooted at one directory. Share it between threads by reference
/// (it is `Sync`); any number of processes may use one root at once.
#[derive(Debug)]
pub struct Cache {
    root: PathBuf,
    /// `root/v1`: everything this crate writes is below it.
    dir: PathBuf,
    counters: AtomicCounters,
}

impl Cache {
    /// A cache at `root`. Nothing is read or made until it is used.
    pub fn at(root: impl Into<PathBuf>) -> Cache {
        let root = root.into();
        Cache {
            dir: root.join(LAYOUT_DIR),
            root,
            counters: AtomicCounters::default(),
        }
    }

    /// The cache at `$RMIR_CACHE_DIR`, else at `$HOME/.cache/rmir`
    /// ([`resolve_root`]). A relative directory is taken from the current
    /// one now, so that it does not move when the process changes directory.
    pub fn from_env() -> Result<Cache, Error> {
        let root = resolve_root(
            std::env::var_os(CACHE_DIR_VAR).as_deref(),
            std::env::var_os("HOME").as_deref(),
        )?;
        let root =
            std::path::absolute(&root).map_err(|e| Error::io(Operation::ResolveDir, &root, e))?;
        Ok(Cache::at(root))
    }

    /// The directory given to [`Cache::at`] (or found by
    /// [`Cache::from_env`]).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the entry of `key` in `kind` lives (whether or not it exists).
    pub fn entry_path(&self, kind: &str, key: &Key) -> Result<PathBuf, Error> {
        if !valid_kind(kind) {
            return Err(Error::InvalidKind {
                kind: kind.to_string(),
            });
        }
        let hex = key.to_string();
        Ok(self.dir.join(kind).join(&hex[..2]).join(hex))
    }

    /// The payload stored under `key` in `kind`, or `None` when there is no
    /// entry or it was damaged (then it is removed; see the module docs).
    pub fn get(&self, kind: &str, key: &Key) -> Result<Option<Vec<u8>>, Error> {
        let path = self
            .entry_path(kind, key)
            .map_err(|e| self.count_error(e))?;
        Ok(match self.lookup(&path)? {
            Lookup::Hit(payload) => Some(payload),
            Lookup::Missing | Lookup::Damaged => None,
        })
    }

    /// Stores `payload` under `key` in `kind`, replacing any entry there,
    /// atomically: a reader sees the old entry or the new one, whole.
    pub fn put(&self, kind: &str, key: &Key, payload: &[u8]) -> Result<(), Error> {
        let path = self
            .entry_path(kind, key)
            .map_err(|e| self.count_error(e))?;
        self.store(&path, key, payload)
            .map_err(|e| self.count_error(e))
    }

    /// The payload under `key` in `kind`; when there is none, `build`'s
    /// result, which is then stored. Only `build` can fail this: cache
    /// errors come back in [`Fetched::warnings`].
    pub fn get_or_insert_with<E>(
        &self,
        kind: &str,
        key: &Key,
        build: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<Fetched, E> {
        let path = match self.entry_path(kind, key) {
            Ok(path) => path,
            Err(e) => {
                return Ok(Fetched {
                    bytes: build()?,
                    outcome: Outcome::Miss,
                    warnings: vec![self.count_error(e)],
                })
            }
        };
        let mut warnings = Vec::new();
        let outcome = match self.lookup(&path) {
            Ok(Lookup::Hit(bytes)) => {
                return Ok(Fetched {
                    bytes,
                    outcome: Outcome::Hit,
                    warnings,
                })
            }
            Ok(Lookup::Missing) => Outcome::Miss,
            Ok(Lookup::Damaged) => Outcome::Rebuilt,
            Err(e) => {
                warnings.push(e);
                Outcome::Miss
            }
        };
        let bytes = build()?;
        if let Err(e) = self.store(&path, key, &bytes) {
            warnings.push(self.count_error(e));
        }
        Ok(Fetched {
            bytes,
            outcome,
            warnings,
        })
    }

    /// What this value has seen so far (not other processes, nor other
    /// `Cache` values of the same root).
    pub fn counters(&self) -> Counters {
        let c = &self.counters;
        Counters {
            hits: c.hits.load(Ordering::Relaxed),
            misses: c.misses.load(Ordering::Relaxed),
            corrupt: c.corrupt.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
        }
    }

    /// Entries and bytes per kind, and stale temporary files, found on
    /// disk. Entries are counted by name; their contents are not checked.
    pub fn stats(&self) -> Result<Stats, Error> {
        let mut stats = Stats {
            dir: self.dir.clone(),
            kinds: Default::default(),
            temp_files: 0,
            temp_bytes: 0,
        };
        stats::walk(&self.dir, false, |found| {
            if found.is_temp {
                stats.temp_files += 1;
                stats.temp_bytes += found.len;
            } else {
                let kind = stats.kinds.entry(found.kind.to_string()).or_default();
                kind.entries += 1;
                kind.bytes += found.len;
            }
            Ok(())
        })?;
        Ok(stats)
    }

    /// Removes every entry and temporary file, and the directories they
    /// leave empty. Files the cache did not name (anything a user put
    /// beside them, and everything outside `<root>/v1`) stay.
    pub fn clean(&self) -> Result<Cleaned, Error> {
        let mut cleaned = Cleaned::default();
        stats::walk(&self.dir, true, |found| {
            match fs::remove_file(&found.path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(Error::io(Operation::Remove, found.path, e)),
            }
            if found.is_temp {
                cleaned.temp_files += 1;
            } else {
                cleaned.entries += 1;
            }
            cleaned.bytes += found.len;
            Ok(())
        })?;
        Ok(cleaned)
    }

    /// Removes the least recently used entries (by modification time, which
    /// a hit refreshes) until the entries take at most `max_bytes`.
    /// Temporary files stay: they may be a writer's, in flight. Another
    /// process may use an entry removed here; it then builds it again.
    pub fn trim(&self, max_bytes: u64) -> Result<Trimmed, Error> {
        let mut entries = Vec::new();
        stats::walk(&self.dir, false, |found| {
            if !found.is_temp {
                entries.push((found.modified, found.len, found.path));
            }
            Ok(())
        })?;
        let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
        let mut trimmed = Trimmed::default();
        entries.sort();
        for (_, len, path) in entries {
            if total <= max_bytes {
                break;
            }
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(Operation::Remove, path, e)),
            }
            total -= len;
            trimmed.entries += 1;
            trimmed.bytes += len;
        }
        trimmed.kept_bytes = total;
        Ok(trimmed)
    }

    /// Reads and checks the entry at `path`, counting the result.
    fn lookup(&self, path: &Path) -> Result<Lookup, Error> {
        let mut file = match fs::read(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.counters.misses.fetch_add(1, Ordering::Relaxed);
                return Ok(Lookup::Missing);
            }
            Err(e) => return Err(self.count_error(Error::io(Operation::Read, path, e))),
        };
        if entry::verify(&file).is_err() {
            // Best effort: if it stays, the next put replaces it anyway.
            let _ = fs::remove_file(path);
            self.counters.corrupt.fetch_add(1, Ordering::Relaxed);
            return Ok(Lookup::Damaged);
        }
        self.counters.hits.fetch_add(1, Ordering::Relaxed);
        // Best effort: a hit makes the entry the most recently used.
        if let Ok(f) = fs::File::options().write(true).open(path) {
            let _ = f.set_modified(SystemTime::now());
        }
        file.drain(..entry::HEADER_LEN);
        Ok(Lookup::Hit(file))
    }

    /// Writes an entry for `payload` to a temporary file beside `path` and
    /// renames it to `path`; on failure the temporary file is removed.
    fn store(&self, path: &Path, key: &Key, payload: &[u8]) -> Result<(), Error> {
        let (file, temp) = create_temp(path, key)?;
        let written = write_entry(file, &temp, payload).and_then(|()| {
            fs::rename(&temp, path).map_err(|e| Error::io(Operation::Rename, path, e))
        });
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written
    }

    fn count_error(&self, error: Error) -> Error {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        error
    }
}

/// Creates a new temporary file in `entry`'s directory, making the
/// directory when it is missing (again, should a concurrent `clean` remove
/// it in between).
fn create_temp(entry: &Path, key: &Key) -> Result<(fs::File, PathBuf), Error> {
    let Some(dir) = entry.parent() else {
        // entry_path always has a parent; this only keeps the code total.
        return Err(Error::io(
            Operation::CreateTemp,
            entry,
            io::Error::new(io::ErrorKind::InvalidInput, "entry path has no directory"),
        ));
    };
    let mut attempt = 0;
    loop {
        attempt += 1;
        let temp = dir.join(temp_name(key));
        match fs::File::options().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((file, temp)),
            Err(e) if attempt < 4 && e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(dir).map_err(|e| Error::io(Operation::CreateDir, dir, e))?;
            }
            // A leftover of an earlier process with our pid and sequence
            // number: the next name differs.
            Err(e) if attempt < 4 && e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(Operation::CreateTemp, temp, e)),
        }
    }
}

/// `.<key>.tmp-<pid>-<seq>-<ns>`: hidden, unique among this process's
/// threads (seq), among processes running now (pid), and unlikely to meet a
/// crashed process's leftover with the same pid (ns).
fn temp_name(key: &Key) -> String {
    let seq = TEMP_SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|t| t.subsec_nanos())
        .unwrap_or(0);
    format!(".{key}{TEMP_MARKER}{}-{seq}-{nanos}", std::process::id())
}

fn write_entry(mut file: fs::File, temp: &Path, payload: &[u8]) -> Result<(), Error> {
    file.write_all(&entry::header(payload))
        .and_then(|()| file.write_all(payload))
        .map_err(|e| Error::io(Operation::Write, temp, e))?;
    file.sync_data()
        .map_err(|e| Error::io(Operation::Sync, temp, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_one_plain_path_component() {
        for good in ["provider", "cubin", "ptx-2", "a", &"k".repeat(MAX_KIND_LEN)] {
            assert!(valid_kind(good), "{good}");
        }
        let too_long = "k".repeat(MAX_KIND_LEN + 1);
        for bad in [
            "", ".", "..", "a/b", "Cubin", "cu bin", "cubin\n", "é", "a_b", &too_long,
        ] {
            assert!(!valid_kind(bad), "{bad:?}");
        }
    }

    #[test]
    fn temp_names_are_unique_and_recognised() {
        let key = KeyBuilder::new("t").finish();
        let a = temp_name(&key);
        let b = temp_name(&key);
        assert_ne!(a, b);
        assert!(a.starts_with(&format!(".{key}{TEMP_MARKER}")));
    }
}
