//! The build cache (crate `cache`) for the frontend's own rustc work that
//! depends only on rustc and a fixed source: the provider API rlib every
//! import compiles against, and the closure layout probe's report. Keys
//! hold `rustc -vV` (its commit hash) and every byte of the source and
//! every flag; a hit replaces a rustc run. Off when the process's
//! toolchain says so ([`crate::toolchain::Toolchain::cache`]: the driver's
//! `--no-cache`, `RMIR_CACHE=off`), or when no cache folder can be named.

use std::sync::OnceLock;

use cache::{Cache, Key, KeyBuilder};

/// The process's cache, when it has one.
pub(crate) fn cache() -> Option<&'static Cache> {
    static CACHE: OnceLock<Option<Cache>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            if !crate::toolchain::get().cache {
                return None;
            }
            Cache::from_env().ok()
        })
        .as_ref()
}

/// A key of `kind` over `parts`, in order.
pub(crate) fn key(kind: &str, parts: &[(&str, &[u8])]) -> Key {
    let mut k = KeyBuilder::new(kind);
    k.part("format", b"rmir-frontend/1");
    for (name, bytes) in parts {
        k.part(name, bytes);
    }
    k.finish()
}

/// The cached bytes of `kind` for `key`, or `None` (no cache, no entry, or
/// an entry that cannot be read: the caller builds).
pub(crate) fn get(kind: &str, key: &Key) -> Option<Vec<u8>> {
    cache()?.get(kind, key).ok().flatten()
}

/// Stores what the caller built (best effort: a cache that cannot be
/// written costs only the next build's time).
pub(crate) fn put(kind: &str, key: &Key, bytes: &[u8]) {
    if let Some(c) = cache() {
        let _ = c.put(kind, key, bytes);
    }
}
