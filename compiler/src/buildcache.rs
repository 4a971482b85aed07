//! The build's use of the content-addressed cache (the `cache` crate):
//! which stages are cached, and what their keys hold.
//!
//! Three stages repeat the same work whenever their inputs repeat, and are
//! cached by a key over every byte and option that reaches their output:
//!
//! | kind | output | key |
//! |---|---|---|
//! | `thunks` | a chunk's thunk object (LTOIR or PTX; and the PTX twin of `--bench`) | the chunk's lowered module text, arch, route, `-g`, `--bench` |
//! | `provider` | the provider's LTOIR or PTX from NVRTC | NVRTC's arguments, the file name, the source |
//! | `cubin` | a chunk's linked cubin | nvJitLink's options, every input's name and bytes |
//!
//! Every key also holds the toolchain ([`backend_nvptx::toolchain_versions`]
//! without paths) and the compiler itself: the size and modification time of
//! the running executable, so a rebuilt compiler never reads what another
//! build of it wrote (its code generation may differ). Outputs are the same
//! bytes whether they came from the cache or not: the cache stores exactly
//! what the stage returned.
//!
//! A cache that cannot be read or written never fails a build: the stage
//! runs, and the problem is printed once as a warning. A build that stored
//! entries then trims the cache to `RMIR_CACHE_MAX_MIB` (default 2048),
//! least recently used entries first (a hit refreshes an entry).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use cache::{Cache, Key, KeyBuilder, Outcome};

use crate::timings::Timings;

/// What every key starts with: the key format, the compiler and the tools.
fn base() -> &'static [u8] {
    static BASE: OnceLock<Vec<u8>> = OnceLock::new();
    BASE.get_or_init(|| {
        let mut b = b"rmir-build/1\0".to_vec();
        if let Ok(exe) = std::env::current_exe() {
            b.extend_from_slice(exe.to_string_lossy().as_bytes());
            if let Ok(m) = std::fs::metadata(&exe) {
                b.extend_from_slice(&m.len().to_le_bytes());
                if let Ok(t) = m.modified() {
                    let since = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                    b.extend_from_slice(&since.as_nanos().to_le_bytes());
                }
            }
        }
        b.push(0);
        if let Ok(v) = backend_nvptx::toolchain_versions() {
            let v = serde_json::to_value(&v).unwrap_or_default();
            if let serde_json::Value::Object(map) = v {
                for (k, v) in map.iter().filter(|(k, _)| !k.contains("path")) {
                    b.extend_from_slice(format!("{k}={v}\0").as_bytes());
                }
            }
        }
        b
    })
}

/// A key of `kind` over the shared base and `parts`, in order.
pub fn key(kind: &str, parts: &[(&str, &[u8])]) -> Key {
    let mut k = KeyBuilder::new(kind);
    k.part("base", base());
    for (name, bytes) in parts {
        k.part(name, bytes);
    }
    k.finish()
}

/// The bytes of `kind` for `key`: from the cache when it has them (timed
/// as `hit_stage`), else built by `build` (which times its own stages) and
/// stored. Without a cache, `build`.
pub fn fetch(
    cache: Option<&Cache>,
    timings: &mut Timings,
    hit_stage: &'static str,
    kind: &str,
    key: impl FnOnce() -> Key,
    build: impl FnOnce(&mut Timings) -> Result<Vec<u8>, String>,
) -> Result<Vec<u8>, String> {
    let Some(c) = cache else {
        return build(timings);
    };
    let key = key();
    let start = std::time::Instant::now();
    let fetched = c.get_or_insert_with(kind, &key, || build(timings))?;
    if fetched.outcome == Outcome::Hit {
        timings.add(hit_stage, start.elapsed());
    }
    if let Some(w) = fetched.warnings.first() {
        warn_once(w);
    }
    Ok(fetched.bytes)
}

/// Several byte strings as one payload (each length-prefixed), and back.
pub fn pack(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        out.extend_from_slice(&(p.len() as u64).to_le_bytes());
        out.extend_from_slice(p);
    }
    out
}

/// The parts of a [`pack`]ed payload; `None` when it is not one.
pub fn unpack(mut bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut parts = Vec::new();
    while !bytes.is_empty() {
        let len = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?) as usize;
        let part = bytes.get(8..8usize.checked_add(len)?)?;
        parts.push(part.to_vec());
        bytes = &bytes[8 + len..];
    }
    Some(parts)
}

fn warn_once(w: &cache::Error) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!("warning: the build cache is not used: {w}");
    }
}

/// The largest the cache may grow, in MiB: `RMIR_CACHE_MAX_MIB`, default
/// 2048.
pub const MAX_MIB_VAR: &str = "RMIR_CACHE_MAX_MIB";
const DEFAULT_MAX_MIB: u64 = 2048;

/// The size limit ([`MAX_MIB_VAR`]) in bytes; a value that is not a whole
/// number is the default, with a warning.
pub fn max_bytes() -> u64 {
    let mib = match std::env::var(MAX_MIB_VAR) {
        Ok(v) => v.trim().parse::<u64>().unwrap_or_else(|_| {
            eprintln!(
                "warning: {MAX_MIB_VAR}={v:?} is not a number of MiB; the cache keeps {DEFAULT_MAX_MIB} MiB"
            );
            DEFAULT_MAX_MIB
        }),
        Err(_) => DEFAULT_MAX_MIB,
    };
    mib.saturating_mul(1024 * 1024)
}

/// After a build that stored entries: the least recently used entries
/// removed until the cache fits `max_bytes` (the edge reads [`max_bytes`]
/// once; a warning if trimming fails).
pub fn trim(cache: &Cache, max_bytes: u64) {
    if let Err(e) = cache.trim(max_bytes) {
        warn_once(&e);
    }
}

/// The cache a build uses: `RMIR_CACHE_DIR` (else `~/.cache/rmir`), none
/// when the process's toolchain has the cache off (`frontend::toolchain`:
/// `--no-cache`, `RMIR_CACHE=off`), and none (with a warning) when no
/// folder can be named.
pub fn open() -> Option<Cache> {
    if !frontend::toolchain::get().cache {
        return None;
    }
    match Cache::from_env() {
        Ok(c) => Some(c),
        Err(e) => {
            warn_once(&e);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_round_trip_and_damage_is_refused() {
        let parts: [&[u8]; 3] = [b"ltoir", b"", b"ptx text"];
        let p = pack(&parts);
        assert_eq!(
            unpack(&p).unwrap(),
            parts.iter().map(|p| p.to_vec()).collect::<Vec<_>>()
        );
        assert_eq!(unpack(&p[..p.len() - 1]), None);
        assert_eq!(unpack(&p[..3]), None);
        assert_eq!(unpack(&[]).unwrap(), Vec::<Vec<u8>>::new());
    }

    #[test]
    fn keys_differ_by_kind_and_part() {
        let a = key("cubin", &[("x", b"1")]);
        assert_eq!(a, key("cubin", &[("x", b"1")]));
        assert_ne!(a, key("provider", &[("x", b"1")]));
        assert_ne!(a, key("cubin", &[("x", b"2")]));
        assert_ne!(a, key("cubin", &[("y", b"1")]));
    }
}
