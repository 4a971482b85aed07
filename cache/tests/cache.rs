//! The cache on a real file system, in temporary directories: round trips,
//! keys, damaged entries, errors, stats and clean, and where the root is.

use cache::{
    resolve_root, Cache, Cleaned, Counters, Error, Key, KeyBuilder, KindStats, Operation, Outcome,
    CACHE_DIR_VAR,
};
use std::convert::Infallible;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

fn key(name: &str) -> Key {
    KeyBuilder::new("test/1")
        .part("name", name.as_bytes())
        .finish()
}

/// Every file under `dir`, relative to it, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_symlink() || !path.is_dir() {
                out.push(path.strip_prefix(base).unwrap().display().to_string());
            } else {
                walk(base, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn op_of(error: &Error) -> Option<Operation> {
    match error {
        Error::Io { op, .. } => Some(*op),
        _ => None,
    }
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(dir.path());
    let k = key("a");
    assert_eq!(cache.get("cubin", &k).unwrap(), None);
    cache.put("cubin", &k, b"\x7fELF cubin bytes").unwrap();
    assert_eq!(
        cache.get("cubin", &k).unwrap().as_deref(),
        Some(&b"\x7fELF cubin bytes"[..])
    );
    // Kinds are separate namespaces.
    assert_eq!(cache.get("provider", &k).unwrap(), None);
    // An empty payload is a payload, not a miss.
    cache.put("provider", &k, b"").unwrap();
    assert_eq!(cache.get("provider", &k).unwrap(), Some(Vec::new()));
    // A put replaces.
    cache.put("cubin", &k, b"other").unwrap();
    assert_eq!(cache.get("cubin", &k).unwrap(), Some(b"other".to_vec()));
    assert_eq!(
        cache.counters(),
        Counters {
            hits: 3,
            misses: 2,
            corrupt: 0,
            errors: 0
        }
    );
    // The documented layout, and no temporary file left behind.
    let hex = k.to_string();
    assert_eq!(
        cache.entry_path("cubin", &k).unwrap(),
        dir.path()
            .join("v1")
            .join("cubin")
            .join(&hex[..2])
            .join(&hex)
    );
    assert_eq!(
        files_under(dir.path()),
        vec![
            format!("v1/cubin/{}/{hex}", &hex[..2]),
            format!("v1/provider/{}/{hex}", &hex[..2]),
        ]
    );
    // The file is the header, then the payload.
    let file = fs::read(cache.entry_path("cubin", &k).unwrap()).unwrap();
    assert_eq!(&file[..8], b"RMIRCACH");
    assert_eq!(&file[8..12], &1u32.to_le_bytes());
    assert_eq!(&file[12..20], &5u64.to_le_bytes());
    assert_eq!(&file[52..], b"other");
}

#[test]
fn a_large_payload_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(dir.path());
    let payload: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    cache.put("cubin", &key("big"), &payload).unwrap();
    assert_eq!(cache.get("cubin", &key("big")).unwrap(), Some(payload));
}

#[test]
fn get_or_insert_with_builds_once() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(dir.path());
    let k = key("built");
    let mut builds = 0;
    let mut build = || -> Result<Vec<u8>, Infallible> {
        builds += 1;
        Ok(b"ptx".to_vec())
    };
    let first = cache.get_or_insert_with("ptx", &k, &mut build).unwrap();
    assert_eq!(
        (first.bytes.as_slice(), first.outcome),
        (&b"ptx"[..], Outcome::Miss)
    );
    assert!(first.warnings.is_empty(), "{:?}", first.warnings);
    let second = cache.get_or_insert_with("ptx", &k, &mut build).unwrap();
    assert_eq!(
        (second.bytes.as_slice(), second.outcome),
        (&b"ptx"[..], Outcome::Hit)
    );
    assert_eq!(builds, 1);
}

#[test]
fn a_failed_build_is_the_callers_error_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(dir.path());
    let k = key("fails");
    let result = cache.get_or_insert_with("ptx", &k, || Err::<Vec<u8>, _>("nvrtc said no"));
    assert_eq!(result.unwrap_err(), "nvrtc said no");
    assert_eq!(cache.get("ptx", &k).unwrap(), None);
}

#[test]
fn keys_are_injective_on_their_parts() {
    let key_of = |domain: &str, parts: &[(&str, &[u8])]| {
        let mut builder = KeyBuilder::new(domain);
        for (name, bytes) in parts {
            builder.part(name, bytes);
        }
        builder.finish()
    };
    type Parts<'a> = &'a [(&'a str, &'a [u8])];
    let cases: &[(&str, Parts)] = &[
        ("d", &[("ab", b"c")]),
        ("d", &[("a", b"bc")]),
        ("d", &[("x", b"ab"), ("y", b"c")]),
        ("d", &[("x", b"a"), ("y", b"bc")]),
        ("d", &[("x", b"abc")]),
        // Order matters.
        ("d", &[("y", b"c"), ("x", b"ab")]),
        // An empty part is not no part, and not an empty name.
        ("d", &[]),
        ("d", &[("", b"")]),
        ("d", &[("", b""), ("", b"")]),
        ("d", &[("e", b"")]),
        // The domain separates; it does not run into the first part.
        ("dx", &[("", b"")]),
        ("", &[("dx", b"")]),
        ("e", &[("ab", b"c")]),
    ];
    let keys: Vec<Key> = cases.iter().map(|(d, p)| key_of(d, p)).collect();
    for (i, a) in keys.iter().enumerate() {
        for (j, b) in keys.iter().enumerate().skip(i + 1) {
            assert_ne!(a, b, "{:?} and {:?}", cases[i], cases[j]);
        }
    }
    // Deterministic, and the same whether chained or not.
    let mut builder = KeyBuilder::new("d");
    builder.part("ab", b"c");
    assert_eq!(builder.finish(), keys[0]);
    assert_eq!(KeyBuilder::new("d").part("ab", b"c").finish(), keys[0]);
}

#[test]
fn the_key_encoding_is_pinned() {
    // A change of this value changes every key on disk: it needs a new
    // key format tag, and a note in the change.
    let k = KeyBuilder::new("provider-ptx/1")
        .part("source", b"__global__ void k() {}")
        .part("arch", b"sm_90")
        .finish();
    assert_eq!(
        k.to_string(),
        "bb01b0f84af391b92c9f44dc37ae1bc3ccf8f4e8dc7127a5ae98308406155854"
    );
    assert_eq!(Key::from_hex(&k.to_string()), Some(k));
}

/// Puts an entry and damages its file with `damage`, twice: `get` must
/// report a miss, remove the file and count it; `get_or_insert_with` must
/// rebuild it. A put afterwards works again.
fn check_damage(damage: impl Fn(&Path)) {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(dir.path());
    let k = key("damaged");
    let payload = b"a payload of some length".to_vec();
    let path = cache.entry_path("cubin", &k).unwrap();

    cache.put("cubin", &k, &payload).unwrap();
    damage(&path);
    assert_eq!(cache.get("cubin", &k).unwrap(), None);
    assert!(!path.exists(), "the damaged entry is removed");
    assert_eq!(
        cache.counters(),
        Counters {
            hits: 0,
            misses: 0,
            corrupt: 1,
            errors: 0
        }
    );

    cache.put("cubin", &k, &payload).unwrap();
    damage(&path);
    let fetched = cache
        .get_or_insert_with("cubin", &k, || Ok::<_, Infallible>(payload.clone()))
        .unwrap();
    assert_eq!(fetched.outcome, Outcome::Rebuilt);
    assert_eq!(fetched.bytes, payload);
    assert!(fetched.warnings.is_empty(), "{:?}", fetched.warnings);
    assert_eq!(cache.get("cubin", &k).unwrap(), Some(payload));
    assert_eq!(cache.counters().corrupt, 2);
}

#[test]
fn a_flipped_payload_byte_is_a_miss() {
    check_damage(|path| {
        let mut file = fs::read(path).unwrap();
        file[60] ^= 1;
        fs::write(path, file).unwrap();
    });
}

#[test]
fn a_truncated_entry_is_a_miss() {
    check_damage(|path| {
        let file = fs::OpenOptions::new().write(true).open(path).unwrap();
        let len = file.metadata().unwrap().len();
        file.set_len(len - 3).unwrap();
    });
}

#[test]
fn a_truncated_header_is_a_miss() {
    check_damage(|path| {
        let file = fs::OpenOptions::new().write(true).open(path).unwrap();
        file.set_len(30).unwrap();
    });
}

#[test]
fn a_wrong_magic_is_a_miss() {
    check_damage(|path| {
        let mut file = fs::read(path).unwrap();
        file[..8].copy_from_slice(b"NOTCACHE");
        fs::write(path, file).unwrap();
    });
}

#[test]
fn an_empty_file_is_a_miss() {
    check_damage(|path| fs::write(path, b"").unwrap());
}

#[test]
fn trailing_bytes_are_a_miss() {
    check_damage(|path| {
        let mut file = fs::read(path).unwrap();
        file.extend_from_slice(b"more");
        fs::write(path, file).unwrap();
    });
}

#[test]
fn an_unreadable_entry_is_an_error_not_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(dir.path());
    let k = key("dir");
    let path = cache.entry_path("cubin", &k).unwrap();
    // A directory where the entry should be: reading it fails, and not
    // with "not found".
    fs::create_dir_all(&path).unwrap();
    fs::write(path.join("in-the-way"), b"").unwrap();
    let error = cache.get("cubin", &k).unwrap_err();
    assert!(
        matches!(&error, Error::Io { op: Operation::Read, path: p, .. } if *p == path),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("cache: cannot read {}: ", path.display())),
        "{message}"
    );
    // Nor can a put rename over it; its temporary file is removed.
    let error = cache.put("cubin", &k, b"x").unwrap_err();
    assert!(
        matches!(
            error,
            Error::Io {
                op: Operation::Rename,
                ..
            }
        ),
        "{error:?}"
    );
    let shard = path.parent().unwrap();
    assert_eq!(
        files_under(shard),
        vec![format!("{}/in-the-way", k)],
        "no temporary file is left"
    );
    assert_eq!(cache.counters().errors, 2);
    // A build through the cache still works, with the errors as warnings.
    let fetched = cache
        .get_or_insert_with("cubin", &k, || Ok::<_, Infallible>(b"built".to_vec()))
        .unwrap();
    assert_eq!(fetched.bytes, b"built");
    assert_eq!(fetched.outcome, Outcome::Miss);
    assert_eq!(
        fetched.warnings.iter().map(op_of).collect::<Vec<_>>(),
        vec![Some(Operation::Read), Some(Operation::Rename)]
    );
}

#[test]
fn a_root_that_is_a_file_fails_puts_but_not_builds() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("file");
    fs::write(&root, b"not a directory").unwrap();
    let cache = Cache::at(&root);
    let k = key("k");
    // The error names the operation and the path, which starts at the root.
    let error = cache.put("cubin", &k, b"x").unwrap_err();
    assert_eq!(op_of(&error), Some(Operation::CreateTemp));
    let message = error.to_string();
    let expected = format!(
        "cache: cannot create temporary file {}/v1/cubin/",
        root.display()
    );
    assert!(message.starts_with(&expected), "{message}");
    assert!(
        message.ends_with("Not a directory (os error 20)"),
        "{message}"
    );
    // Not a directory is not "not found": a get reports it.
    assert_eq!(
        op_of(&cache.get("cubin", &k).unwrap_err()),
        Some(Operation::Read)
    );
    let fetched = cache
        .get_or_insert_with("cubin", &k, || Ok::<_, Infallible>(b"built".to_vec()))
        .unwrap();
    assert_eq!(fetched.bytes, b"built");
    assert_eq!(
        fetched.warnings.iter().map(op_of).collect::<Vec<_>>(),
        vec![Some(Operation::Read), Some(Operation::CreateTemp)]
    );
    assert_eq!(fs::read(&root).unwrap(), b"not a directory");
    assert!(matches!(
        cache.stats(),
        Err(Error::Io {
            op: Operation::ReadDir,
            ..
        })
    ));
}

#[test]
fn invalid_kinds_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(dir.path());
    let k = key("k");
    for kind in ["", "..", "a/b", "Cubin", "cu bin"] {
        let error = cache.put(kind, &k, b"x").unwrap_err();
        assert!(matches!(&error, Error::InvalidKind { kind: s } if s == kind));
        assert!(matches!(
            cache.get(kind, &k),
            Err(Error::InvalidKind { .. })
        ));
    }
    assert_eq!(
        Error::InvalidKind {
            kind: "a/b".to_string()
        }
        .to_string(),
        "invalid cache kind \"a/b\": a kind is 1 to 64 characters of a-z, 0-9 and '-'"
    );
    let fetched = cache
        .get_or_insert_with("a/b", &k, || Ok::<_, Infallible>(b"built".to_vec()))
        .unwrap();
    assert_eq!(fetched.bytes, b"built");
    assert_eq!(fetched.warnings.len(), 1);
    assert!(files_under(dir.path()).is_empty(), "nothing was written");
}

#[test]
fn stats_and_clean_count_entries_and_stale_temp_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let cache = Cache::at(&root);
    cache.put("provider", &key("p1"), &[1; 100]).unwrap();
    cache.put("provider", &key("p2"), &[2; 2000]).unwrap();
    cache.put("cubin", &key("c1"), &[3; 10]).unwrap();
    // A crashed writer's temporary file.
    let crashed = key("crashed").to_string();
    let stale = root
        .join("v1/cubin")
        .join(&crashed[..2])
        .join(format!(".{crashed}.tmp-4242-0-17"));
    fs::create_dir_all(stale.parent().unwrap()).unwrap();
    fs::write(&stale, [0; 7]).unwrap();
    // What a user put there, which is neither counted nor removed: files
    // beside the layout, names that are not ours, and a link out of the
    // root (whose target has an entry-like file).
    let outside = dir.path().join("outside");
    let shard = &crashed[..2];
    fs::create_dir_all(outside.join(shard)).unwrap();
    fs::write(outside.join(shard).join(&crashed), b"keep").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("v1/linked")).unwrap();
    fs::write(root.join("notes.txt"), b"keep").unwrap();
    fs::write(root.join("v1/README"), b"keep").unwrap();
    fs::write(stale.parent().unwrap().join("notes.txt"), b"keep").unwrap();
    fs::create_dir_all(root.join("v1/Upper/00")).unwrap();
    fs::write(root.join("v1/Upper/00").join("0".repeat(64)), b"keep").unwrap();

    let stats = cache.stats().unwrap();
    let provider = KindStats {
        entries: 2,
        bytes: 2 * 52 + 100 + 2000,
    };
    let cubin = KindStats {
        entries: 1,
        bytes: 52 + 10,
    };
    assert_eq!(
        stats.kinds.clone().into_iter().collect::<Vec<_>>(),
        vec![
            ("cubin".to_string(), cubin),
            ("provider".to_string(), provider)
        ]
    );
    assert_eq!(
        stats.total(),
        KindStats {
            entries: 3,
            bytes: 2266
        }
    );
    assert_eq!((stats.temp_files, stats.temp_bytes), (1, 7));
    assert_eq!(
        stats.to_string(),
        format!(
            "cache {}\n\
             cubin     1 entry          62 B\n\
             provider  2 entries     2.2 KiB\n\
             total     3 entries     2.2 KiB\n\
             stale temporary files: 1 (7 B)\n",
            root.join("v1").display()
        )
    );

    let cleaned = cache.clean().unwrap();
    assert_eq!(
        cleaned,
        Cleaned {
            entries: 3,
            temp_files: 1,
            bytes: 2266 + 7
        }
    );
    assert_eq!(
        cleaned.to_string(),
        "removed 3 entries and 1 stale temporary file (2.2 KiB)"
    );
    let after = cache.stats().unwrap();
    assert!(after.kinds.is_empty());
    assert_eq!(after.total(), KindStats::default());
    assert_eq!(after.temp_files, 0);
    assert_eq!(cache.get("provider", &key("p1")).unwrap(), None);
    // Everything that was not ours is still there; the directories the
    // entries left empty are gone.
    assert_eq!(
        files_under(&root),
        vec![
            "notes.txt".to_string(),
            "v1/README".to_string(),
            format!("v1/Upper/00/{}", "0".repeat(64)),
            format!("v1/cubin/{shard}/notes.txt"),
            "v1/linked".to_string(),
        ]
    );
    assert_eq!(
        fs::read(outside.join(shard).join(&crashed)).unwrap(),
        b"keep"
    );
    // Cleaning again finds nothing; a missing root is empty, not an error.
    assert_eq!(cache.clean().unwrap(), Cleaned::default());
    let missing = Cache::at(dir.path().join("missing"));
    assert_eq!(missing.stats().unwrap().total(), KindStats::default());
    assert_eq!(missing.clean().unwrap(), Cleaned::default());
    assert!(!dir.path().join("missing").exists());
}

#[test]
fn an_empty_cache_shows_a_zero_total() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(dir.path());
    assert_eq!(
        cache.stats().unwrap().to_string(),
        format!(
            "cache {}\ntotal  0 entries         0 B\n",
            dir.path().join("v1").display()
        )
    );
}

#[test]
fn the_root_comes_from_rmir_cache_dir_then_home() {
    let os = |s: &'static str| Some(OsStr::new(s));
    let resolve = |dir, home| resolve_root(dir, home).map_err(|e| e.to_string());
    assert_eq!(
        resolve(os("/c/rmir"), os("/home/me")),
        Ok(PathBuf::from("/c/rmir"))
    );
    assert_eq!(
        resolve(os(""), os("/home/me")),
        Ok(PathBuf::from("/home/me/.cache/rmir"))
    );
    assert_eq!(
        resolve(None, os("/home/me")),
        Ok(PathBuf::from("/home/me/.cache/rmir"))
    );
    assert_eq!(resolve(os("relative"), None), Ok(PathBuf::from("relative")));
    let none = Err(format!(
        "no cache directory: neither {CACHE_DIR_VAR} nor HOME is set (set {CACHE_DIR_VAR} to choose one)"
    ));
    assert_eq!(resolve(None, None), none);
    assert_eq!(resolve(os(""), os("")), none);
}

#[test]
fn from_env_agrees_with_resolve_root() {
    // Reads this process's environment; never changes it.
    let expected = resolve_root(
        std::env::var_os(CACHE_DIR_VAR).as_deref(),
        std::env::var_os("HOME").as_deref(),
    );
    match (Cache::from_env(), expected) {
        (Ok(cache), Ok(root)) => {
            assert!(cache.root().is_absolute());
            assert!(cache.root().ends_with(&root));
        }
        (Err(Error::NoCacheDir), Err(Error::NoCacheDir)) => {}
        (got, expected) => panic!("{got:?} vs {expected:?}"),
    }
}

#[test]
fn trim_removes_the_least_recently_used_entries_first() {
    use std::time::{Duration, SystemTime};
    let dir = tempfile::tempdir().unwrap();
    let cache = cache::Cache::at(dir.path());
    let key = |n: u8| cache::KeyBuilder::new("trim").part("n", &[n]).finish();
    for n in 0..4u8 {
        cache.put("cubin", &key(n), &vec![n; 1000]).unwrap();
    }
    // Ages: entry 0 is the newest write, 3 the oldest…
    for n in 0..4u8 {
        let path = cache.entry_path("cubin", &key(n)).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(100 * (n as u64 + 1)))
            .unwrap();
    }
    // …but a hit on 3 makes it the most recently used.
    assert_eq!(cache.get("cubin", &key(3)).unwrap(), Some(vec![3; 1000]));
    let entry = cache.stats().unwrap().total().bytes / 4;
    let trimmed = cache.trim(2 * entry).unwrap();
    assert_eq!(
        (trimmed.entries, trimmed.kept_bytes),
        (2, 2 * entry),
        "{trimmed}"
    );
    let present = |n: u8| cache.get("cubin", &key(n)).unwrap().is_some();
    assert_eq!(
        (present(0), present(1), present(2), present(3)),
        (true, false, false, true),
        "1 and 2 were the least recently used"
    );
    // Under the limit: nothing goes.
    assert_eq!(cache.trim(u64::MAX).unwrap().entries, 0);
    assert_eq!(cache.trim(0).unwrap().entries, 2);
    assert_eq!(cache.stats().unwrap().total().entries, 0);
}
